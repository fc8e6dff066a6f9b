"""A study run on a Dask cluster started as a user starts one gives the local run's files.

The cluster is the one docs/guide/dask.md describes: a ``dask scheduler`` process and a
``dask worker`` process with two single-threaded workers, on loopback, the workers started with
that page's Dask configuration (Dask's nanny keeps glibc's adaptive mmap threshold). The same
command runs once with ``--scheduler`` and once on two local workers; every table (CSV and
text) must be the same bytes, and every page the same apart from its timing rows and the
command it records.
"""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from studies.report.pages import untimed

pytest.importorskip("distributed")

# an exact study, a packed exact study and a Monte Carlo one: each kind of task crosses the wire
STUDIES = ["binomial_coverage", "bias_sampling", "mean_bias"]
CONFIG = """\
distributed:
  nanny:
    pre-spawn-environ:
      MALLOC_TRIM_THRESHOLD_: null
"""
START_TIMEOUT = 60.0


def _dask(*arguments, log, env):
    """Start ``dask ARGUMENTS`` (the console script beside this Python's), logging to ``log``."""
    found = Path(sys.executable).with_name("dask")
    program = str(found) if found.exists() else shutil.which("dask")
    if program is None:
        pytest.skip("the dask command is not installed beside this Python")
    return subprocess.Popen([program, *arguments], stdout=log, stderr=subprocess.STDOUT, env=env)


def _wait_for_workers(scheduler_file, count, processes):
    from distributed import Client

    deadline = time.monotonic() + START_TIMEOUT
    while not scheduler_file.exists():
        if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
            pytest.fail("the dask scheduler did not start")
        time.sleep(0.2)
    address = json.loads(scheduler_file.read_text())["address"]
    with Client(address, timeout="10s", set_as_default=False) as client:
        client.wait_for_workers(count, timeout=START_TIMEOUT)
    return address


def _evalcert(*arguments):
    found = subprocess.run([sys.executable, "-m", "studies.cli", *arguments],
                           capture_output=True, text=True, timeout=600)
    assert found.returncode == 0, found.stderr
    return found


def _written(directory: Path) -> dict[str, str]:
    """Every table and page of a run directory, pages without their timing rows or command."""
    files = {}
    for path in sorted(directory.iterdir()):
        if path.suffix in (".csv", ".txt"):
            files[path.name] = path.read_text()
        elif path.suffix in (".html", ".md"):
            text = untimed(path.read_text())
            files[path.name] = "\n".join(line for line in text.splitlines()
                                         if "--scheduler" not in line and "--workers" not in line)
    return files


@pytest.mark.slow
def test_loopback_cluster_writes_the_local_runs_files(tmp_path):
    (tmp_path / "dask.yaml").write_text(CONFIG)
    env = {**os.environ, "DASK_CONFIG": str(tmp_path), "PYTHONHASHSEED": "0"}
    scheduler_file = tmp_path / "scheduler.json"
    processes = []
    with open(tmp_path / "cluster.log", "w") as log:
        try:
            processes.append(_dask("scheduler", "--host", "127.0.0.1", "--port", "0",
                                   "--no-dashboard", "--scheduler-file", str(scheduler_file),
                                   log=log, env=env))
            processes.append(_dask("worker", "--scheduler-file", str(scheduler_file),
                                   "--nworkers", "2", "--nthreads", "1", "--host", "127.0.0.1",
                                   "--no-dashboard", "--local-directory", str(tmp_path / "w"),
                                   log=log, env=env))
            address = _wait_for_workers(scheduler_file, 2, processes)
            assert address.startswith("tcp://127.0.0.1:")
            common = ["study", "run", *STUDIES, "--grid", "quick", "--seed", "5"]
            _evalcert(*common, "--scheduler", address, "--out", str(tmp_path / "dask"))
        finally:
            for process in reversed(processes):
                process.terminate()
            for process in reversed(processes):
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
    _evalcert(*common, "--workers", "2", "--out", str(tmp_path / "local"))
    remote, local = _written(tmp_path / "dask"), _written(tmp_path / "local")
    assert sorted(remote) == sorted(local)
    assert len([name for name in local if name.endswith(".csv")]) >= 3 * len(STUDIES)
    for name, text in local.items():
        assert remote[name] == text, name
