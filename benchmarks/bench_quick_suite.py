"""The quick suite as CI runs it, timed: ``evalcert study run all --grid quick --workers 2``.

Each run starts from an empty run directory in a fresh process; the median of the runs' wall
times is the figure the CI budget is held to (120 s on 2 workers), beside the verdicts of the
last run (every run has the same ones: the seed is fixed). With ``--update`` the section
"The quick suite" of ``benchmarks/RESULTS.md`` is replaced (or added) in place; the rest of the
file, measured by ``results.py`` at its own date, is kept.

Run: ``python benchmarks/bench_quick_suite.py [--runs 5] [--update]``. Timings live here, never
in the tests.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

HEADING = "## The quick suite"
RESULTS = Path(__file__).with_name("RESULTS.md")
SEED = 20190


def measure(runs: int = 5, workers: int = 2) -> dict[str, object]:
    """Wall seconds of ``runs`` quick-suite runs and the verdicts of the last."""
    seconds: list[float] = []
    statuses = pd.DataFrame()
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as directory:
            out = Path(directory) / "run"
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "studies.cli", "study", "run", "all",
                            "--grid", "quick", "--seed", str(SEED), "--workers", str(workers),
                            "--out", str(out)], check=False, capture_output=True,
                           env={**os.environ, "TERM": "dumb"})
            seconds.append(time.perf_counter() - start)
            statuses = pd.concat([pd.read_csv(path, usecols=["claim", "status"])
                                  for path in sorted(out.glob("*.claims.csv"))])
    return {"seconds": seconds, "workers": workers,
            "statuses": statuses["status"].value_counts().to_dict(),
            "load": os.getloadavg()[0]}


def markdown(found: dict[str, object]) -> str:
    """The section: the runs' wall times, their median and the verdicts."""
    seconds = list(found["seconds"])  # type: ignore[call-overload]
    counts = dict(found["statuses"])  # type: ignore[call-overload]
    verdicts = ", ".join(f"{counts.get(s, 0)} {s}" for s in
                         ("HOLDS", "INCONCLUSIVE", "FAILS", "NOT RUN"))
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (f"{HEADING}\n\n`evalcert study run all --grid quick --seed {SEED} --workers "
            f"{found['workers']}` from an empty run directory, {len(seconds)} runs one after "
            f"another, measured {when} by `python benchmarks/bench_quick_suite.py` (load "
            f"average {found['load']:.2f} after the last run). CI's budget: 120 s.\n\n"
            f"| runs | median s | fastest s | slowest s | verdicts |\n|---:|---:|---:|---:|---|\n"
            f"| {len(seconds)} | {statistics.median(seconds):.1f} | {min(seconds):.1f} | "
            f"{max(seconds):.1f} | {verdicts} |\n\nEach run, seconds: "
            + ", ".join(f"{s:.1f}" for s in seconds) + ".")


def update(section: str, path: Path = RESULTS) -> None:
    """Replace the section in ``path`` (from its heading to the next ``## ``), or add it."""
    text = path.read_text(encoding="utf-8")
    start = text.find(HEADING + "\n")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    else:
        end = text.find("\n## ", start + len(HEADING))
        rest = text[end + 1:] if end >= 0 else ""
        text = text[:start] + section + "\n" + ("\n" + rest if rest else "")
    path.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--update", action="store_true",
                        help=f"write the section into {RESULTS.name}")
    args = parser.parse_args()
    section = markdown(measure(args.runs, args.workers))
    print(section)
    if args.update:
        update(section)


if __name__ == "__main__":
    main()
