"""The whole full suite: each study's full grid on 1 and 2 local workers and on a Dask cluster.

For each study, in one run of this script: its full-grid cells; the wall time of
``evalcert study run NAME --grid full`` on 1 and on 2 local workers (the command as a user
runs it: the run, its claims judged, its tables and report written) and how much of it came
after its last cell was stored (the run's judging and reporting, from the store's record of
when each result was stored); the peak memory of that command (the resident memory of the
command and its worker processes, summed, sampled every 0.2 s); and, apart, the wall time and
peak memory of judging and reporting alone (``evalcert study report`` on the finished run,
which reads the run back from its store). The last row totals them. With ``--dask``, the
whole suite then runs once more as one command on a loopback Dask cluster started as the
docs' Dask page (docs/guide/dask.md) says (a ``dask scheduler`` process and a ``dask worker``
process with 2 single-threaded workers, configured by that page's YAML), and every table it
writes (CSV and text) is compared byte for byte with the 2-local-worker runs.

With ``--together``, the studies instead run as ONE command (``evalcert study run NAME ...
--workers 2``: one pool, the costliest tasks first), as the whole suite is run in one sitting:
its wall time and peak memory, and for each study from the run's store its cells, the
seconds its tasks took on the workers (summed) and when its last task finished; then
``evalcert study report`` on the run. ``--reference DIR`` then records the run's verdicts
there (``evalcert study reference``). That table replaces the section "Full suite in one
run".

The table replaces the section "Full suite" of ``benchmarks/RESULTS.md`` (``--out``); timings
live here, never in the tests.

Run: ``python benchmarks/bench_suite.py [--studies NAME ...] [--workers 1 2] [--dask]
[--grid full] [--keep DIR]`` or ``python benchmarks/bench_suite.py --together [--workers 2]
[--budget 50m] [--reference reports/reference]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil

SEED = 20190
SECTION = "## Full suite"
TOGETHER = "## Full suite in one run"
DASK_CONFIG = """\
distributed:
  nanny:
    pre-spawn-environ:
      MALLOC_TRIM_THRESHOLD_: null
"""


class _PeakMemory:
    """Peak resident memory of a process and all its descendants, summed, sampled in a thread."""

    def __init__(self, pid: int, interval: float = 0.2) -> None:
        self.peak = 0
        self._root = psutil.Process(pid)
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            try:
                tree = [self._root, *self._root.children(recursive=True)]
            except psutil.NoSuchProcess:
                return
            total = 0
            for process in tree:
                try:
                    total += process.memory_info().rss
                except psutil.NoSuchProcess:  # ended between the listing and the reading
                    pass
            self.peak = max(self.peak, total)
            self._stop.wait(self._interval)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def _timed(argv: Sequence[str], env: dict[str, str] | None = None) -> tuple[float, int, int]:
    """Run ``evalcert ARGV`` as a user would; its wall time, peak memory and exit status."""
    command = [sys.executable, "-m", "studies.cli", *argv]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, env=env)
    memory = _PeakMemory(process.pid)
    _, stderr = process.communicate()
    seconds = time.perf_counter() - start
    peak = memory.stop()
    if process.returncode not in (0, 1):  # 1: a claim failed or is inconclusive, a finding
        raise SystemExit(f"evalcert {' '.join(argv)} exited {process.returncode}:\n{stderr}")
    return seconds, peak, process.returncode


def _cells(name: str, grid: str) -> int:
    from studies.suite import get_study

    chosen = get_study(name).grids[grid]
    count = 1
    for values in chosen.parameters.values():
        count *= len(values)
    return count


def _verdicts(run_dir: Path, name: str) -> str:
    report = json.loads((run_dir / "report.json").read_text())
    found = [row["status"] for row in report["verdicts"].get(name, [])]
    return ", ".join(f"{found.count(s)} {s.lower()}" for s in dict.fromkeys(found)) or "none"


def _last_stored(run_dir: Path) -> float:
    """When the run's last cell or group was stored (Unix time; the store records whole
    seconds, so the time after it is overstated by less than a second)."""
    with contextlib.closing(sqlite3.connect(f"file:{run_dir / 'run.sqlite'}?mode=ro",
                                            uri=True)) as db:
        found = db.execute("SELECT max(finished) FROM (SELECT finished FROM cells "
                           "UNION ALL SELECT finished FROM groups)").fetchone()[0]
    return datetime.fromisoformat(found).timestamp()


def _tables(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())
            if p.suffix in (".csv", ".txt") and p.name != "results.csv"}


def measure_study(name: str, workers: Sequence[int], grid: str, scratch: Path
                  ) -> dict[str, Any]:
    """One study's row: its cells, and for each worker count the run's and the report's cost."""
    row: dict[str, Any] = {"study": name, "cells": _cells(name, grid),
                           "load": os.getloadavg()[0]}
    for count in workers:
        out = scratch / f"{name}-{count}"
        shutil.rmtree(out, ignore_errors=True)
        started = time.time()
        seconds, peak, status = _timed(["study", "run", name, "--grid", grid, "--seed",
                                        str(SEED), "--workers", str(count), "--out", str(out)])
        row[f"run_s_{count}"], row[f"run_mb_{count}"] = seconds, peak / 2**20
        row[f"tail_s_{count}"] = started + seconds - _last_stored(out)
        row["verdicts"] = _verdicts(out, name)
        print(f"{name}: {count} worker(s) {seconds:.1f} s, {peak / 2**20:.0f} MB "
              f"(exit {status})", flush=True)
    judged = scratch / f"{name}-report"
    shutil.rmtree(judged, ignore_errors=True)
    seconds, peak, _ = _timed(["study", "report", str(scratch / f"{name}-{workers[-1]}"),
                               "--out", str(judged)])
    row["report_s"], row["report_mb"] = seconds, peak / 2**20
    return row


def _start_cluster(scratch: Path) -> tuple[str, list[subprocess.Popen[bytes]], dict[str, str]]:
    """A loopback cluster as docs/guide/dask.md starts one: a scheduler and 2 single-threaded
    workers."""
    from distributed import Client

    (scratch / "dask").mkdir(exist_ok=True)
    (scratch / "dask" / "dask.yaml").write_text(DASK_CONFIG)
    env = {**os.environ, "DASK_CONFIG": str(scratch / "dask")}
    dask = str(Path(sys.executable).with_name("dask"))
    scheduler_file = scratch / "dask" / "scheduler.json"
    scheduler_file.unlink(missing_ok=True)
    log = open(scratch / "dask" / "cluster.log", "w")  # held open by the cluster processes
    processes = [subprocess.Popen(
        [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
         "--scheduler-file", str(scheduler_file)], stdout=log, stderr=log, env=env)]
    while not scheduler_file.exists():
        time.sleep(0.2)
    processes.append(subprocess.Popen(
        [dask, "worker", "--scheduler-file", str(scheduler_file), "--nworkers", "2",
         "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"],
        stdout=log, stderr=log, env=env))
    address = json.loads(scheduler_file.read_text())["address"]
    with Client(address, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=120)
    return address, processes, env


def measure_dask(names: Sequence[str], grid: str, scratch: Path, workers: int
                 ) -> dict[str, Any]:
    """The whole suite as one command on a loopback Dask cluster, its tables against the
    local runs' (``workers`` local workers)."""
    address, processes, env = _start_cluster(scratch)
    out = scratch / "dask-suite"
    shutil.rmtree(out, ignore_errors=True)
    try:
        seconds, peak, _ = _timed(["study", "run", *names, "--grid", grid, "--seed", str(SEED),
                                   "--scheduler", address, "--out", str(out)], env=env)
    finally:
        for process in processes[::-1]:
            process.terminate()
            process.wait(timeout=60)
    remote = _tables(out)
    local: dict[str, bytes] = {}
    for name in names:
        local.update(_tables(scratch / f"{name}-{workers}"))
    differing = sorted(n for n in local if remote.get(n) != local[n])
    return {"seconds": seconds, "mb": peak / 2**20, "tables": len(local),
            "differing": differing, "missing": sorted(set(local) - set(remote))}


def measure_together(names: Sequence[str], grid: str, scratch: Path, workers: int,
                     reference: Path | None, budget: str | None = None) -> dict[str, Any]:
    """The studies as one command on ``workers`` local workers (``--budget`` passed on when
    given); each study's share of it."""
    out = scratch / "together"
    shutil.rmtree(out, ignore_errors=True)
    load = os.getloadavg()[0]
    seconds, peak, _ = _timed(["study", "run", *names, "--grid", grid, "--seed", str(SEED),
                               "--workers", str(workers), "--out", str(out),
                               *(["--budget", budget] if budget else [])])
    print(f"together: {seconds:.1f} s, {peak / 2**20:.0f} MB", flush=True)
    db = sqlite3.connect(f"file:{out / 'run.sqlite'}?mode=ro", uri=True)
    try:
        started = json.loads(db.execute("SELECT value FROM run WHERE key = 'started'")
                             .fetchone()[0])
        found = db.execute(
            "SELECT study, SUM(n), SUM(seconds), MAX(finished) FROM ("
            " SELECT study, 1 AS n, seconds, finished FROM cells UNION ALL"
            " SELECT study, cells AS n, seconds, finished FROM groups) GROUP BY study"
        ).fetchall()
    finally:
        db.close()
    start = datetime.fromisoformat(started)
    rows = {study: {"study": study, "cells": int(n), "task_s": float(task),
                    "last_s": (datetime.fromisoformat(last) - start).total_seconds(),
                    "verdicts": _verdicts(out, study)}
            for study, n, task, last in found}
    judged = scratch / "together-report"
    shutil.rmtree(judged, ignore_errors=True)
    report_s, report_peak, _ = _timed(["study", "report", str(out), "--out", str(judged)])
    if reference is not None:
        _timed(["study", "reference", str(out), "--out", str(reference)])
    return {"seconds": seconds, "mb": peak / 2**20, "load": load, "workers": workers,
            "budget": budget,
            "rows": [rows[name] for name in names if name in rows], "report_s": report_s,
            "report_mb": report_peak / 2**20}


def together_markdown(found: dict[str, Any], grid: str) -> str:
    lines = ["| study | cells | task seconds (summed over workers) | last task done after |"
             " verdicts |", "| --- | ---: | ---: | ---: | --- |"]
    for row in sorted(found["rows"], key=lambda r: -r["task_s"]):
        lines.append(f"| `{row['study']}` | {row['cells']:,} | {_minutes(row['task_s'])} | "
                     f"{_minutes(row['last_s'])} | {row['verdicts']} |")
    task = sum(r["task_s"] for r in found["rows"])
    lines.append(f"| **total** | {sum(r['cells'] for r in found['rows']):,} | "
                 f"**{_minutes(task)}** ({task / 3600:.2f} worker-hours) | "
                 f"**{_minutes(found['seconds'])}** (the command) |  |")
    return (f"{TOGETHER}\n\nMeasured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `python "
            f"benchmarks/bench_suite.py --together` on {platform.machine()}, "
            f"{os.cpu_count()} cores, Python {platform.python_version()} (1-minute load "
            f"{found['load']:.2f} as it started): every study's `{grid}` grid, seed {SEED}, "
            f"as one `evalcert study run` command on {found['workers']} local workers"
            + (f" with `--budget {found['budget']}`" if found["budget"] else "")
            + " (run, claims, tables and report): "
            f"{_minutes(found['seconds'])}, peak resident memory of the command and its "
            f"workers {found['mb']:,.0f} MB. Judging and reporting the finished run again "
            f"(`evalcert study report`): {_minutes(found['report_s'])} at "
            f"{found['report_mb']:,.0f} MB.\n\n" + "\n".join(lines))


def _minutes(seconds: float) -> str:
    return f"{seconds:,.0f} s" if seconds < 600 else f"{seconds / 60:,.1f} min"


def markdown(rows: Sequence[dict[str, Any]], workers: Sequence[int],
             dask: dict[str, Any] | None, grid: str) -> str:
    head = ["study", "cells"]
    for count in workers:
        head += [f"{count} worker{'s' if count > 1 else ''}", f"peak memory ({count})",
                 f"judging + report in the run ({count})"]
    head += ["judging + report (from the store)", "its peak memory", "load before",
             "verdicts"]
    lines = ["| " + " | ".join(head) + " |",
             "| --- | " + " | ".join("---:" for _ in head[1:-1]) + " | --- |"]
    for row in rows:
        cells = [f"`{row['study']}`", f"{row['cells']:,}"]
        for count in workers:
            tail = row[f"tail_s_{count}"]
            cells += [_minutes(row[f"run_s_{count}"]), f"{row[f'run_mb_{count}']:,.0f} MB",
                      f"{tail:.0f} s ({tail / row[f'run_s_{count}']:.0%})"]
        cells += [_minutes(row["report_s"]), f"{row['report_mb']:,.0f} MB",
                  f"{row['load']:.2f}", row["verdicts"]]
        lines.append("| " + " | ".join(cells) + " |")
    total = ["**total**", f"{sum(r['cells'] for r in rows):,}"]
    for count in workers:
        total += [f"**{_minutes(sum(r[f'run_s_{count}'] for r in rows))}**",
                  f"{max(r[f'run_mb_{count}'] for r in rows):,.0f} MB (largest)",
                  f"{sum(r[f'tail_s_{count}'] for r in rows):.0f} s"]
    total += [_minutes(sum(r["report_s"] for r in rows)),
              f"{max(r['report_mb'] for r in rows):,.0f} MB (largest)", "", ""]
    lines.append("| " + " | ".join(total) + " |")
    text = "\n".join(lines)
    if dask is not None:
        same = not dask["differing"] and not dask["missing"]
        text += (f"\n\nThe same studies as one command on a loopback Dask cluster (2 workers, "
                 f"`dask scheduler` and `dask worker` as docs/guide/dask.md starts them): "
                 f"{_minutes(dask['seconds'])}, peak memory of the command "
                 f"{dask['mb']:,.0f} MB; {dask['tables']} tables compared with the "
                 f"{workers[-1]}-worker runs: "
                 + ("all byte-identical." if same else
                    f"DIFFERENT: {', '.join(dask['differing'] + dask['missing'])}."))
    worker_hours = sum(r[f"run_s_{workers[0]}"] for r in rows) / 3600 * workers[0]
    return (f"{SECTION}\n\nMeasured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `python "
            f"benchmarks/bench_suite.py` on {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}: every study's `{grid}` grid, seed {SEED}, "
            "each study as its own `evalcert study run` command (run, claims, tables and "
            "report; wall time and the peak resident memory of the command and its workers, "
            "summed; \"judging + report in the run\": from its last stored cell to its end, "
            "and its share of the run), then `evalcert study report` on the finished run "
            "(judging and reporting read back from the store). \"Load before\" is the "
            "machine's 1-minute load average as the study started (above 0.1: other "
            "processes were running and the times are high). The whole suite takes about "
            f"{worker_hours:.2f} worker-hours ({workers[0]} worker"
            f"{'s' if workers[0] > 1 else ''}).\n\n" + text)


def replace_section(path: Path, section: str, title: str = SECTION) -> None:
    """Put ``section`` in ``path`` in place of its ``title`` section (or at its end)."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    start = text.find(title + "\n")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    else:
        end = text.find("\n## ", start + len(title))
        text = text[:start] + section + ("\n" + text[end:] if end >= 0 else "\n")
    path.write_text(text, encoding="utf-8")


def main() -> None:
    from studies.suite import study_names

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", nargs="*", default=None, metavar="NAME")
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--grid", default="full", choices=("quick", "full"))
    parser.add_argument("--dask", action="store_true",
                        help="run the suite again on a loopback 2-worker Dask cluster")
    parser.add_argument("--keep", type=Path, default=None,
                        help="directory for the runs (default: a temporary one, removed)")
    parser.add_argument("--together", action="store_true",
                        help="run the studies as one command instead (on the last --workers)")
    parser.add_argument("--budget", default=None,
                        help="with --together: the run's time budget (as `study run --budget`)")
    parser.add_argument("--reference", type=Path, default=None,
                        help="with --together: record the run's verdicts in this directory")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("RESULTS.md"))
    args = parser.parse_args()
    names = args.studies or list(study_names())
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="evalcert-suite-"))
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        if args.together:
            found = measure_together(names, args.grid, scratch, args.workers[-1],
                                     args.reference, args.budget)
            section = together_markdown(found, args.grid)
            replace_section(args.out, section, TOGETHER)
            print(section)
            return
        rows = [measure_study(name, args.workers, args.grid, scratch) for name in names]
        dask = measure_dask(names, args.grid, scratch, args.workers[-1]) if args.dask else None
        section = markdown(rows, args.workers, dask, args.grid)
        replace_section(args.out, section)
        print(section)
    finally:
        if args.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
