"""The whole full suite: each study's full grid on 1 and 2 local workers and on a Dask cluster.

For each study, in one run of this script: its full-grid cells; the wall time of
``evalcert study run NAME --grid full`` on 1 and on 2 local workers (the command as a user
runs it: the run, its claims judged, its tables and report written); the peak memory of that
command (the resident memory of the command and its worker processes, summed, sampled every
0.2 s); and, apart, the wall time and peak memory of judging and reporting alone
(``evalcert study report`` on the finished run, which reads the run back from its store). The
last row totals them. With ``--dask``, the whole suite then runs once more as one command on a
loopback Dask cluster started as README.md says (a ``dask scheduler`` process and a ``dask
worker`` process with 2 single-threaded workers, configured by the README's YAML), and every
table it writes (CSV and text) is compared byte for byte with the 2-local-worker runs.

The table replaces the section "Full suite" of ``benchmarks/RESULTS.md`` (``--out``); timings
live here, never in the tests.

Run: ``python benchmarks/bench_suite.py [--studies NAME ...] [--workers 1 2] [--dask]
[--grid full] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
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
        seconds, peak, status = _timed(["study", "run", name, "--grid", grid, "--seed",
                                        str(SEED), "--workers", str(count), "--out", str(out)])
        row[f"run_s_{count}"], row[f"run_mb_{count}"] = seconds, peak / 2**20
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
    """A loopback cluster as README.md starts one: scheduler and 2 single-threaded workers."""
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


def _minutes(seconds: float) -> str:
    return f"{seconds:,.0f} s" if seconds < 600 else f"{seconds / 60:,.1f} min"


def markdown(rows: Sequence[dict[str, Any]], workers: Sequence[int],
             dask: dict[str, Any] | None, grid: str) -> str:
    head = ["study", "cells"]
    for count in workers:
        head += [f"{count} worker{'s' if count > 1 else ''}", f"peak memory ({count})"]
    head += ["judging + report (from the store)", "its peak memory", "load before",
             "verdicts"]
    lines = ["| " + " | ".join(head) + " |",
             "| --- | " + " | ".join("---:" for _ in head[1:-1]) + " | --- |"]
    for row in rows:
        cells = [f"`{row['study']}`", f"{row['cells']:,}"]
        for count in workers:
            cells += [_minutes(row[f"run_s_{count}"]), f"{row[f'run_mb_{count}']:,.0f} MB"]
        cells += [_minutes(row["report_s"]), f"{row['report_mb']:,.0f} MB",
                  f"{row['load']:.2f}", row["verdicts"]]
        lines.append("| " + " | ".join(cells) + " |")
    total = ["**total**", f"{sum(r['cells'] for r in rows):,}"]
    for count in workers:
        total += [f"**{_minutes(sum(r[f'run_s_{count}'] for r in rows))}**",
                  f"{max(r[f'run_mb_{count}'] for r in rows):,.0f} MB (largest)"]
    total += [_minutes(sum(r["report_s"] for r in rows)),
              f"{max(r['report_mb'] for r in rows):,.0f} MB (largest)", "", ""]
    lines.append("| " + " | ".join(total) + " |")
    text = "\n".join(lines)
    if dask is not None:
        same = not dask["differing"] and not dask["missing"]
        text += (f"\n\nThe same studies as one command on a loopback Dask cluster (2 workers, "
                 f"`dask scheduler` and `dask worker` as README.md starts them): "
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
            "summed), then `evalcert study report` on the finished run (judging and "
            "reporting read back from the store). \"Load before\" is the machine's 1-minute "
            "load average as the study started (above 0.1: other processes were running and "
            "the times are high). The whole suite takes about "
            f"{worker_hours:.2f} worker-hours ({workers[0]} worker"
            f"{'s' if workers[0] > 1 else ''}).\n\n" + text)


def replace_section(path: Path, section: str) -> None:
    """Put ``section`` in ``path`` in place of its "Full suite" section (or at its end)."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    start = text.find(SECTION + "\n")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    else:
        end = text.find("\n## ", start + len(SECTION))
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
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("RESULTS.md"))
    args = parser.parse_args()
    names = args.studies or list(study_names())
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="evalcert-suite-"))
    scratch.mkdir(parents=True, exist_ok=True)
    try:
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
