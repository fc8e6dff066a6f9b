"""What each cache on the read path of a packed run saves: the path with and without it.

A stored run of ``coverage_proportion``'s full grid (9,000,000 cells in 1,000 packed groups)
is read back as the report reads it, in one process: the groups loaded from the store
(`studies.engine.results_from_store`), every claim judged (`studies.suite.judge`) and each
group's page tables computed (`studies.report.pages.group_tables`). Each arm runs that in a
fresh process with one cache switched off, and the arms take turns (``--rounds`` times), so
that each ratio compares timings taken in this one run:

* ``as is``: the code as it stands;
* ``no layout cache``: `studies.engine.reading._layout` reads a group's row layout from the
  heads of its arrays at every read of a row (uncached);
* ``no held connection``: every read opens a read-only connection to the store (the
  connection a thread keeps for its next read, `studies.engine.reading._connection`, dropped);
* ``no axes cache``: every group decodes its axes' JSON text (`read_store` decodes each
  distinct text once).

The verdicts of every arm must be the same (checked). Run: ``python
benchmarks/bench_reading.py [--run DIR] [--rounds 3]``; without ``--run`` the full grid is
run first (about 90 s on 2 workers) into a temporary directory. Timings live here, never in
the tests.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ARMS = ("as is", "no layout cache", "no held connection", "no axes cache")


def _switch_off(arm: str) -> None:
    """Replace the cache of ``arm`` with the uncached function it wraps."""
    from studies.engine import reading

    if arm == "no layout cache":
        reading._layout = reading._layout.__wrapped__  # type: ignore[attr-defined]
    elif arm == "no held connection":
        def fresh(path: Path, file: tuple[Path, int, int]) -> object:
            return reading.read_only(path, check_same_thread=False)
        reading._connection = fresh  # type: ignore[assignment]
    elif arm == "no axes cache":
        class _Uncached:
            @staticmethod
            def lru_cache(maxsize: int) -> object:
                return lambda fn: fn
            partial = functools.partial
        reading.functools = _Uncached  # type: ignore[assignment]


def one_arm(run_dir: str, arm: str) -> dict[str, object]:
    """The read path in this process, with ``arm``'s cache switched off: seconds per step."""
    _switch_off(arm)
    from studies.engine.reading import results_from_store
    from studies.report.pages import group_tables
    from studies.suite import get_study, judge

    start = time.perf_counter()
    found = results_from_store(run_dir)
    loaded = time.perf_counter()
    verdicts = judge(found, [get_study("coverage_proportion")], "full")
    judged = time.perf_counter()
    for group in found["coverage_proportion"].groups:
        group_tables(group)
    tabled = time.perf_counter()
    return {"load": loaded - start, "judge": judged - loaded, "tables": tabled - judged,
            "total": tabled - start,
            "verdicts": [v.status for v in verdicts["coverage_proportion"]]}


def measure(run_dir: str, rounds: int) -> dict[str, list[dict[str, object]]]:
    """Every arm ``rounds`` times, the arms in turn, each in a fresh process."""
    found: dict[str, list[dict[str, object]]] = {arm: [] for arm in ARMS}
    for _ in range(rounds):
        for arm in ARMS:
            out = subprocess.run([sys.executable, __file__, "--run", run_dir, "--arm", arm],
                                 check=True, capture_output=True, text=True)
            found[arm].append(json.loads(out.stdout.strip().splitlines()[-1]))
    verdicts = {json.dumps(r["verdicts"]) for rows in found.values() for r in rows}
    if len(verdicts) != 1:
        raise SystemExit(f"the arms' verdicts differ: {sorted(verdicts)}")
    return found


def markdown(found: dict[str, list[dict[str, object]]], rounds: int, load: float) -> str:
    """A table: each arm's median seconds per step and its total against ``as is``."""
    def median(arm: str, step: str) -> float:
        return statistics.median(float(r[step]) for r in found[arm])  # type: ignore[arg-type]

    base = median("as is", "total")
    lines = [f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `python "
             f"benchmarks/bench_reading.py` ({rounds} rounds, the arms in turn, each in a fresh "
             f"process; 1-minute load {load:.2f} as it started).", "",
             "| arm | load (s) | judge (s) | page tables (s) | total (s) | total / as is |",
             "|---|---:|---:|---:|---:|---:|"]
    for arm in ARMS:
        total = median(arm, "total")
        lines.append(f"| {arm} | {median(arm, 'load'):.1f} | {median(arm, 'judge'):.1f} | "
                     f"{median(arm, 'tables'):.1f} | {total:.1f} | {total / base:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", help="a stored run of coverage_proportion's full grid")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--arm", choices=ARMS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.arm is not None:
        print(json.dumps(one_arm(args.run, args.arm)))
        return
    with tempfile.TemporaryDirectory() as scratch:
        run_dir = args.run
        if run_dir is None:
            run_dir = str(Path(scratch) / "run")
            subprocess.run([sys.executable, "-m", "studies.cli", "study", "run",
                            "coverage_proportion", "--grid", "full", "--seed", "20190",
                            "--workers", "2", "--out", run_dir], check=False,
                           capture_output=True)
        load = os.getloadavg()[0]
        print(markdown(measure(run_dir, args.rounds), args.rounds, load))


if __name__ == "__main__":
    main()
