"""Process faults: local workers do not outlive a coordinator killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_engine_run import slowed_mean

HERE = Path(__file__).resolve().parent  # on the path of a run of this module's studies
ROOT = HERE.parents[2]

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"),
                                 reason="reads the process tree from /proc")]


# 12 cells of 0.4 s on 2 workers, so both are mid-cell when the kill lands (run as
# test_process_faults:SLEEPY, with tests/studies/engine/ on the path).
SLEEPY = slowed_mean("sleepy_mean", 0.4)
# A second study, run after SLEEPY: its cells are still running when SLEEPY's tables are written.
DROWSY = slowed_mean("drowsy_mean", 0.4)


def _study_run(out, *extra, studies=("test_process_faults:SLEEPY",)):
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{HERE}")
    return subprocess.Popen(
        [sys.executable, "-m", "studies.cli", "study", "run", *studies,
         "--grid", "quick", "--seed", "1", "--workers", "2", "--out", str(out), *extra],
        env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _stored_cells(out):
    if not (out / "run.sqlite").exists():
        return 0
    with sqlite3.connect(f"file:{out / 'run.sqlite'}?mode=ro", uri=True) as db:
        try:
            return db.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
        except sqlite3.OperationalError:  # the file exists, its schema not yet
            return 0


def _stat(pid):
    """``(state, ppid, start time)`` of ``pid``, or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text.rpartition(")")[2].split()  # the name, in parentheses, may hold spaces
    return fields[0], int(fields[1]), fields[19]


def _descendants(root):
    """``{pid: start time}`` of every process below ``root``, and how many at each depth."""
    children: dict[int, dict[int, str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            children.setdefault(stat[1], {})[int(entry.name)] = stat[2]
    found: dict[int, str] = {}
    counts, level = [], {root: ""}
    while level := {pid: start for parent in level
                    for pid, start in children.get(parent, {}).items()}:
        found.update(level)
        counts.append(len(level))
    return found, counts


def _alive(processes):
    """Those of ``processes`` (pid: start time) still running: not gone, reused or zombie."""
    alive = {}
    for pid, start in processes.items():
        stat = _stat(pid)
        if stat is not None and stat[2] == start and stat[0] != "Z":
            alive[pid] = start
    return alive


def _tables(out):
    return {p.name: p.read_bytes() for p in sorted(out.glob("*.csv")) + sorted(out.glob("*.txt"))}


def test_workers_exit_when_the_coordinator_is_killed_and_the_run_resumes(tmp_path):
    killed = tmp_path / "killed"
    process = _study_run(killed)
    processes: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 60
        while _stored_cells(killed) < 1:
            assert process.poll() is None, process.stderr.read()
            assert time.monotonic() < deadline, "the run stalled before its first cell"
            time.sleep(0.02)
        processes, counts = _descendants(process.pid)
        # the resource tracker and the forkserver below the coordinator, the workers below that
        assert counts == [2, 2], counts
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert _stored_cells(killed) < 12, "the run finished before the kill landed"
        deadline = time.monotonic() + 10
        while _alive(processes) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(processes), "outlived their killed coordinator"
    finally:  # a failure must not leave them running
        if process.poll() is None:
            process.kill()
            process.wait()
        for pid in _alive(processes):
            os.kill(pid, signal.SIGKILL)
        process.stderr.close()

    resumed = _study_run(killed, "--resume")
    whole = _study_run(tmp_path / "whole")
    for run in (resumed, whole):
        _, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
    assert _stored_cells(killed) == 12
    tables = _tables(killed)
    assert {"sleepy_mean.csv", "sleepy_mean.summary.csv", "results.csv"} <= set(tables)
    assert tables == _tables(tmp_path / "whole")


def test_a_run_killed_after_a_study_was_tabled_mid_run_resumes_to_the_same_tables(tmp_path):
    both = ("test_process_faults:SLEEPY", "test_process_faults:DROWSY")
    killed = tmp_path / "killed"
    process = _study_run(killed, studies=both)
    try:
        deadline = time.monotonic() + 60
        while not (killed / "sleepy_mean.summary.csv").exists():  # written by the run itself
            assert process.poll() is None, process.stderr.read()
            assert time.monotonic() < deadline, "the first study was not tabled mid-run"
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stderr.close()
    assert 12 <= _stored_cells(killed) < 24, "the run finished before the kill landed"
    resumed = _study_run(killed, "--resume", studies=both)
    whole = _study_run(tmp_path / "whole", studies=both)
    for run in (resumed, whole):
        _, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
    tables = _tables(killed)
    assert {"sleepy_mean.csv", "drowsy_mean.csv", "results.csv"} <= set(tables)
    assert tables == _tables(tmp_path / "whole")
