"""Parallel scaling of study runs: 1 and 2 local workers and a 2-worker Dask LocalCluster.

Measures, in one run, the wall time of ``evalcert study run`` on the quick suite (every
registered study's quick grid) and on one Monte Carlo full grid (default ``gain_budget``: 160
cells x 10,000 replicates, a few minutes on one worker), each on 1 local worker, 2 local
workers and a Dask ``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)``: the
run itself (`studies.engine.run`: plan, execute, store, read back) and the whole command
(start-up, run, claims, tables, report), with the speed-ups over 1 worker and the serial share
of the command (what is not the run, so an Amdahl bound on its speed-up). Each measurement is
a fresh Python process, as a user's command is (a Dask cluster's start is timed apart).

The machine is shared: CPU used by other processes during a measurement is sampled and shown
(``foreign``, mean cores). Linux's autogroup scheduler gives each session, not each process,
an equal share of the CPU, so while another session keeps one core busy a run gets one core
however many workers it has: a speed-up is only meaningful where ``foreign`` is near 0.
Dask's nanny starts its workers with ``MALLOC_TRIM_THRESHOLD_=65536`` (its default
``distributed.nanny.pre-spawn-environ``). Setting any of glibc's malloc thresholds turns off
its adaptive mmap threshold, so every array above 128 KiB is mapped afresh and its pages
faulted in on first touch: allocation-heavy cells ran up to 2.3x slower there than in a local
worker (a power_calibration_exact cell: 55 s of CPU against 24 s). The "Dask 2 workers"
cluster is started without it (`WORKER_CONFIG`, as docs/guide/dask.md advises for clusters that run
studies); "Dask 2 workers, default nanny" keeps Dask's default, to show the cost.

Run: ``python benchmarks/bench_parallel.py`` (about 25 minutes on an idle 2-core machine);
``--help`` for a smaller selection. Another script can call `measure` and `markdown`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

BACKENDS = ("1 worker", "2 workers", "Dask 2 workers", "Dask 2 workers, default nanny")
# Workers of a cluster started for studies: glibc keeps its own, adaptive memory settings.
WORKER_CONFIG = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
SEED = 20190


def _command(names: Sequence[str], grid: str, out: Path) -> list[str]:
    return ["study", "run", *names, "--grid", grid, "--seed", str(SEED), "--out", str(out)]


def _one(spec: Mapping[str, Any]) -> dict[str, float]:
    """Run one ``evalcert study run`` in this process; its run and command wall times.

    The command's time counts from before its imports; a Dask cluster's start is apart.
    """
    start = time.perf_counter()
    import studies.engine
    from studies.engine import runner

    timed: dict[str, float] = {}
    plain_run = runner.run

    def run(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        timed["tables_s"] = 0.0
        if kwargs.get("on_study") is not None:  # the tables the command writes mid-run
            tabulate = kwargs["on_study"]

            def on_study(results: Any) -> None:
                started = time.perf_counter()
                tabulate(results)
                timed["tables_s"] += time.perf_counter() - started

            kwargs["on_study"] = on_study
        try:
            return plain_run(*args, **kwargs)
        finally:
            timed["run_s"] = time.perf_counter() - began

    # the command as a user runs it, with its run timed: set before the CLI imports `run`
    studies.engine.run = runner.run = run
    from studies.cli.main import main

    argv = _command(spec["names"], spec["grid"], Path(spec["out"]))
    cluster = None
    if spec["backend"].startswith("Dask"):
        import dask
        from distributed import LocalCluster

        began = time.perf_counter()
        settings = {} if spec["backend"].endswith("default nanny") else WORKER_CONFIG
        with dask.config.set(settings):  # read by the nannies as they start their workers
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
        timed["cluster_s"] = time.perf_counter() - began
        argv += ["--scheduler", cluster.scheduler_address]
    else:
        argv += ["--workers", spec["backend"].split()[0]]
    try:
        status = main(argv)
    finally:
        if cluster is not None:
            cluster.close()
    if status != 0:
        raise SystemExit(f"evalcert {' '.join(argv)} exited {status}")
    timed["total_s"] = time.perf_counter() - start - timed.get("cluster_s", 0.0)
    return timed


class _ForeignLoad:
    """CPU time of the processes outside this one's tree, sampled every ``interval`` s."""

    def __init__(self, interval: float = 1.0) -> None:
        self.interval = interval
        self.seconds = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _times(self) -> dict[tuple[int, float], float]:
        me = os.getpid()
        parents: dict[int, int] = {}
        used: dict[tuple[int, float], float] = {}
        for process in psutil.process_iter(["ppid", "create_time", "cpu_times"]):
            info = process.info
            if info["cpu_times"] is None:  # gone while listed, or not ours to read
                continue
            parents[process.pid] = info["ppid"]
            times = info["cpu_times"]
            used[(process.pid, info["create_time"])] = times.user + times.system

        def ours(pid: int) -> bool:
            seen = set()
            while pid and pid not in seen:
                if pid == me:
                    return True
                seen.add(pid)
                pid = parents.get(pid, 0)
            return False

        return {key: value for key, value in used.items() if not ours(key[0])}

    def _sample(self) -> None:
        before = self._times()
        while not self._stop.wait(self.interval):
            now = self._times()
            # a process started since the last sample counts whole; one that ended, until then
            self.seconds += sum(value - before.get(key, 0.0) for key, value in now.items())
            before = now

    @contextmanager
    def measuring(self) -> Iterator[_ForeignLoad]:
        self._thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            self._thread.join()


def _measured(case: str, names: Sequence[str], grid: str, backend: str, scratch: Path
              ) -> dict[str, Any]:
    out = scratch / f"{case.replace(' ', '-')}-{backend.replace(' ', '-')}"
    shutil.rmtree(out, ignore_errors=True)
    result = scratch / "timed.json"
    spec = {"names": list(names), "grid": grid, "backend": backend, "out": str(out)}
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import bench_parallel as b; "
            "open(sys.argv[3], 'w').write(json.dumps(b._one(json.loads(sys.argv[2]))))")
    load_before = os.getloadavg()[0]
    began = time.perf_counter()
    with _ForeignLoad().measuring() as foreign:
        subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent), json.dumps(spec),
                        str(result)], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - began
    timed = json.loads(result.read_text())
    shutil.rmtree(out, ignore_errors=True)
    return {"case": case, "backend": backend, **timed, "foreign": foreign.seconds / wall,
            "loadavg": load_before}


def measure(*, quick: Sequence[str] = ("all",), mc: str = "gain_budget", mc_grid: str = "full",
            backends: Sequence[str] = BACKENDS) -> list[dict[str, Any]]:
    """Wall times of the quick suite and of one Monte Carlo grid on each backend.

    Parameters
    ----------
    quick : sequence of str
        The studies of the quick suite (``all``: every registered study); empty: not measured.
    mc : str
        The Monte Carlo study whose ``mc_grid`` is measured; empty: not measured.
    mc_grid : str
        Its grid, ``full`` or ``quick``.
    backends : sequence of str
        Among `BACKENDS`; the first is the reference of the speed-ups.

    Returns
    -------
    list of dict
        One row per case and backend: ``run_s`` (the wall time of `studies.engine.run`),
        ``tables_s`` (of it, the time the command spent writing finished studies' tables:
        in process on 1 worker, beside the workers otherwise), ``total_s`` (the whole
        command, start-up to report), ``cluster_s`` (Dask: the cluster's start, not
        counted), ``foreign`` (mean cores used by other processes meanwhile) and
        ``loadavg`` (the 1-minute load average before it started).
    """
    cases = [("quick suite", list(quick), "quick"), (f"{mc} {mc_grid}", [mc], mc_grid)]
    cases = [(case, names, grid) for case, names, grid in cases if any(names)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-parallel-") as scratch:
        for case, names, grid in cases:
            for backend in backends:
                rows.append(_measured(case, names, grid, backend, Path(scratch)))
                print(_line(rows[-1]), file=sys.stderr, flush=True)
    return rows


def _line(row: Mapping[str, Any]) -> str:
    return (f"{row['case']}, {row['backend']}: run {row['run_s']:.1f} s (tables "
            f"{row['tables_s']:.1f} s), command {row['total_s']:.1f} s, foreign load "
            f"{row['foreign']:.2f} cores")


def markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """`measure`'s rows as a Markdown table, speed-ups over each case's first backend."""
    lines = ["| case | backend | run (s) | speed-up | of it tables (s) | run + report (s) | "
             "speed-up | outside the run | foreign load (cores) | load avg before |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    reference: dict[str, Mapping[str, Any]] = {}
    for row in rows:
        first = reference.setdefault(row["case"], row)
        lines.append(
            f"| {row['case']} | {row['backend']} | {row['run_s']:.1f} | "
            f"{first['run_s'] / row['run_s']:.2f}x | {row.get('tables_s', 0.0):.1f} | "
            f"{row['total_s']:.1f} | {first['total_s'] / row['total_s']:.2f}x | "
            f"{1 - row['run_s'] / row['total_s']:.1%} | {row['foreign']:.2f} | "
            f"{row['loadavg']:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", nargs="*", default=["all"], metavar="NAME",
                        help="studies of the quick suite (default all; none: skip it)")
    parser.add_argument("--mc", default="gain_budget", help="Monte Carlo study ('': skip it)")
    parser.add_argument("--mc-grid", default="full", choices=("quick", "full"))
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS)
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args()
    rows = measure(quick=args.quick, mc=args.mc, mc_grid=args.mc_grid, backends=args.backends)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    print(markdown(rows))


if __name__ == "__main__":
    main()
