"""The engine: seeding, backends, the run store (resume after SIGKILL), the CLI, user methods."""

from __future__ import annotations

import dataclasses
import functools
import gc
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
import weakref
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from studies.cli.main import main
from studies.engine import HOLDS, NOT_RUN, Claim, evaluate_claims, results_from_store, run
from studies.engine.design import Grid, Sample, Study
from studies.engine.execution import execute
from studies.engine.performance import Estimates, performance
from studies.engine.planning import plan
from studies.engine.seeding import cell_key, cell_seed
from studies.report import write_tables
from studies.suite.registry import claim_false_alarm, get_study, study_names

HERE = Path(__file__).resolve().parent  # on the path of a run of this module's studies
ROOT = HERE.parents[2]
MEAN = get_study("mean_bias")


def _sleeping_generate(seconds, params, n_replicates, *, rng=None):
    time.sleep(seconds)  # makes a kill land mid-run; does not touch the random stream
    sample: Sample = MEAN.generate(params, n_replicates, rng=rng)
    return sample


def slowed_mean(name: str, seconds: float) -> Study:
    """mean_bias with every cell ``seconds`` slower: 12 quick cells, long enough to interrupt.

    Run by name as ``test_engine_run:NAME`` (or from a module importing it) with this directory
    (tests/studies/engine/) on the path; the generator is a partial of a module-level function,
    so workers can unpickle it.
    """
    return Study(
        name=name, version="1",
        grids={"quick": Grid({"distribution": ["normal", "exponential"],
                              "n": [3, 4, 5, 6, 7, 8]}, n_replicates=200),
               "full": Grid({"distribution": ["normal"], "n": [3]}, n_replicates=200)},
        truth=MEAN.truth, generate=functools.partial(_sleeping_generate, seconds),
        methods=MEAN.methods)


# A deliberately slow study for the interruption tests (run as test_engine_run:SLOW).
SLOW = slowed_mean("slow_mean", 0.15)


def _expanded(results):
    return {name: result.expanded() for name, result in results.items()}


def _by_key(results):
    return {(name, c.key): {m: p.to_dict() for m, p in c.performance.items()}
            for name, result in results.items() for c in result.cells}


def test_cell_seed_depends_on_root_and_parameters_only():
    a = cell_seed(7, "s", {"n": 10, "p": 0.5}).generate_state(4)
    assert np.array_equal(a, cell_seed(7, "s", {"p": 0.5, "n": 10}).generate_state(4))
    assert not np.array_equal(a, cell_seed(8, "s", {"n": 10, "p": 0.5}).generate_state(4))
    assert not np.array_equal(a, cell_seed(7, "s", {"n": 11, "p": 0.5}).generate_state(4))
    assert not np.array_equal(a, cell_seed(7, "t", {"n": 10, "p": 0.5}).generate_state(4))
    assert cell_key("s", {"n": 10}) != cell_key("s", {"n": 10.0000001})


def test_same_results_with_one_or_two_workers_in_any_order():
    one = run([BINOMIAL, MEAN], rng=11, workers=1, path="monte-carlo")
    two = run([get_study("mean_bias"), BINOMIAL], rng=11, workers=2, path="monte-carlo")
    reversed_grid = Grid({k: v[::-1] for k, v in MEAN.grids["quick"].parameters.items()},
                         n_replicates=MEAN.grids["quick"].n_replicates)
    shuffled = run([MEAN], grid=reversed_grid, rng=11, workers=1)
    assert _by_key(one) == _by_key(two)
    assert _by_key(shuffled) == {k: v for k, v in _by_key(one).items() if k[0] == "mean_bias"}
    assert _by_key(run([MEAN], rng=12, workers=1)) != _by_key(shuffled)


def test_tasks_of_the_costliest_grids_run_first_with_the_same_results():
    def order(studies):
        seen = []
        run(studies, rng=11, workers=1, path="monte-carlo",
            on_task=lambda name, done, cells: seen.append(name) if done else None)
        return list(dict.fromkeys(seen))

    def hinted(study, seconds):
        quick = dataclasses.replace(study.grids["quick"], task_seconds=seconds)
        return dataclasses.replace(study, grids={**study.grids, "quick": quick})

    costly, cheap = hinted(BINOMIAL, 2.0), hinted(MEAN, 0.5)
    assert order([MEAN, BINOMIAL]) == ["mean_bias", BINOMIAL.name]  # no hints: study order
    assert order([MEAN, costly]) == [BINOMIAL.name, "mean_bias"]
    assert order([cheap, BINOMIAL]) == ["mean_bias", BINOMIAL.name]  # a hint before none
    assert (_by_key(run([MEAN, costly], rng=11, workers=2, path="monte-carlo"))
            == _by_key(run([MEAN, BINOMIAL], rng=11, workers=1, path="monte-carlo")))


@pytest.mark.parametrize("seconds", [0, -1.0, math.inf, math.nan, True, "1"])
def test_task_seconds_must_be_a_positive_number(seconds):
    with pytest.raises(ValueError, match="`task_seconds` must be a positive number"):
        Grid({"n": [1]}, n_replicates=2, task_seconds=seconds)


def test_dask_backend_gives_the_local_results():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  protocol="tcp", host="127.0.0.1", scheduler_port=0,
                                  dashboard_address=None) as cluster:
        remote = run([BINOMIAL, MEAN], rng=5, scheduler=cluster.scheduler_address,
                     path="monte-carlo")
        remote_exact = run([BINOMIAL], rng=5, scheduler=cluster.scheduler_address)
        remote_packed = run([PACKED], rng=5, scheduler=cluster.scheduler_address)
    local = run([BINOMIAL, MEAN], rng=5, workers=1, path="monte-carlo")
    assert _by_key(remote) == _by_key(local)
    local_exact = run([BINOMIAL], rng=5, workers=1)
    assert _by_key(remote_exact) == _by_key(local_exact)
    assert remote_packed["binomial_coverage"].groups
    assert _by_key(_expanded(remote_packed)) == _by_key(local_exact)


def _sleep_longest_first(params, n_replicates, *, rng=None):
    time.sleep(1.5 if (params["distribution"], params["n"]) == ("normal", 3) else 0.05)
    sample: Sample = MEAN.generate(params, n_replicates, rng=rng)
    return sample


UNEVEN = dataclasses.replace(SLOW, name="uneven", generate=_sleep_longest_first)


def test_dask_sends_no_task_to_a_worker_busy_with_a_long_one():
    # Dask's scheduler would queue a second task on each one-thread worker: the cell after
    # the long first one would wait behind it while the other worker ran all the rest
    distributed = pytest.importorskip("distributed")
    tasks = plan(UNEVEN, UNEVEN.grids["quick"], 1, "monte-carlo", (), set())
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        order = [(r.params["distribution"], r.params["n"])
                 for results in execute(tasks, 2, client) for r in results]
    assert len(order) == 12 and order[-1] == ("normal", 3)


def test_local_workers_hold_no_finished_results_while_later_ones_arrive():
    # each task's results, once taken, are the caller's alone: a run stores and drops them,
    # and a packed full grid held to the end of the run would be gigabytes
    tasks = plan(MEAN, MEAN.grids["quick"], 1, "monte-carlo", (), set())
    assert len(tasks) > 2
    alive = []
    for results in execute(tasks, 2, None):
        alive.append(weakref.ref(results[0]))
        del results
        gc.collect()
        assert sum(ref() is not None for ref in alive) <= 1  # the latest, in the loop's future
    assert len(alive) == len(tasks)


@pytest.mark.slow
def test_unreachable_scheduler_fails_fast_and_cleanly(tmp_path, capsys):
    pytest.importorskip("distributed")
    start = time.monotonic()
    status = main(["study", "run", "mean_bias", "--scheduler", "tcp://127.0.0.1:9",
                   "--out", str(tmp_path / "run")])
    assert status == 2 and time.monotonic() - start < 10
    assert "`scheduler` 'tcp://127.0.0.1:9' is unreachable" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_a_scheduler_that_is_not_an_address_is_one_line_even_at_exit(tmp_path):
    # a Dask Client that fails in its constructor printed a traceback when Python exited
    pytest.importorskip("distributed")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "studies.cli", "study", "run", "mean_bias", "--scheduler",
         "not an address", "--out", str(tmp_path / "run")],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr == ("evalcert: error: `scheduler` must be an address such as "
                           "tcp://HOST:PORT; got 'not an address' (missing port number in "
                           "address 'not an address').\n")
    assert not (tmp_path / "run").exists()


def test_scheduler_without_dask_says_to_install_the_extra(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "distributed", None)
    assert main(["study", "run", "mean_bias", "--scheduler", "tcp://127.0.0.1:9",
                 "--out", str(tmp_path / "r")]) == 2
    assert "install the dask extra" in capsys.readouterr().err


def _cells(directory):
    with sqlite3.connect(directory / "run.sqlite") as db:
        try:
            return db.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
        except sqlite3.OperationalError:  # the run has created the file but not its schema yet
            return 0


def _study_process(out, *extra):
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{HERE}")
    # SIGINT as a terminal gives it: a shell's background job (a CI runner's, nohup's)
    # inherits it ignored, and the Ctrl-C test would then send a signal nobody hears
    return subprocess.Popen(
        [sys.executable, "-m", "studies.cli", "study", "run", "test_engine_run:SLOW",
         "--seed", "3", "--workers", "1", "--out", str(out), *extra],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _wait_for_cells(out, at_least, process):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        if (out / "run.sqlite").exists() and _cells(out) >= at_least:
            return
        time.sleep(0.02)
    raise AssertionError("the run finished or stalled before it could be interrupted")


@pytest.mark.slow
def test_resume_after_sigkill_matches_an_uninterrupted_run(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))
    killed = tmp_path / "killed"
    process = _study_process(killed)
    _wait_for_cells(killed, 3, process)
    process.send_signal(signal.SIGKILL)
    process.wait()
    kept = _cells(killed)
    assert 3 <= kept < 12
    assert main(["study", "run", "test_engine_run:SLOW", "--workers", "1", "--resume",
                 "--out", str(killed)]) == 0
    whole = tmp_path / "whole"
    assert main(["study", "run", "test_engine_run:SLOW", "--seed", "3", "--workers", "1",
                 "--out", str(whole)]) == 0
    assert _by_key(results_from_store(killed)) == _by_key(results_from_store(whole))
    assert len(results_from_store(killed)["slow_mean"].cells) == 12


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_keeping_finished_cells(tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    process = _study_process(out)
    _wait_for_cells(out, 2, process)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert "interrupted; finished cells are kept" in err and "Traceback" not in err
    assert _cells(out) >= 2
    assert (out / "slow_mean.csv").exists()
    # its verdicts cover part of the grid: check and report say so and do not pass
    monkeypatch.syspath_prepend(str(HERE))
    assert main(["study", "check", str(out)]) == 1
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.startswith(f"INCOMPLETE {out}: incomplete: ") and "of 12 cells" in line
    assert "status interrupted" in line


def test_run_writes_store_tables_and_status(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["study", "run", "binomial_coverage", "mean_bias", "--seed", "4",
                 "--workers", "1", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "mean_bias: 9 cells" in captured.out
    assert "21/21 cells" in captured.err  # plain progress lines when not a terminal
    header = (out / "binomial_coverage.csv").read_text().splitlines()[0].split(",")
    assert header[:6] == ["n", "p", "confidence_level", "method", "path", "n_replicates"]
    assert "coverage_mcse" in header
    _check_headline(out / "mean_bias.csv", out / "mean_bias.summary.csv")
    with sqlite3.connect(out / "run.sqlite") as db:  # settled: the one file holds the run
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        meta = {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM run")}
    assert meta["seed"] == "4" and meta["status"] == "complete"
    assert meta["identity"]["studies"] == {"binomial_coverage": "1", "mean_bias": "1"}
    assert {"numpy", "scipy"} <= set(meta["packages"]) and meta["started"] <= meta["ended"]
    assert main(["study", "status", str(out)]) == 0
    assert "mean_bias v1: 9/9 cells" in capsys.readouterr().out


def _check_headline(cells_csv, summary_csv):
    """The headline table is each measure's range over the per-cell table, per method."""
    import csv

    cells = list(csv.DictReader(cells_csv.open()))
    summary = list(csv.DictReader(summary_csv.open()))
    assert {r["measure"] for r in summary} >= {"bias", "coverage"}
    for row in summary:
        values = [float(c[row["measure"]]) for c in cells if c["method"] == row["method"]]
        mcse = [float(c[row["measure"] + "_mcse"]) for c in cells if c["method"] == row["method"]]
        assert int(row["cells"]) == len(values) > 0
        # the tables print 6 significant digits
        assert float(row["min"]) == pytest.approx(min(values), rel=1e-5, abs=1e-9)
        assert float(row["max"]) == pytest.approx(max(values), rel=1e-5, abs=1e-9)
        assert float(row["mean"]) == pytest.approx(np.mean(values), rel=1e-5, abs=1e-9)
        assert float(row["max_mcse"]) == pytest.approx(max(mcse), rel=1e-5)


def test_study_list_names_every_study(capsys):
    assert main(["study", "list"]) == 0
    out = capsys.readouterr().out
    assert "binomial_coverage (v1, exact)" in out and "mean_bias (v1, monte-carlo)" in out


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("done") / "run"
    assert main(["study", "run", "mean_bias", "--seed", "1", "--workers", "1",
                 "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("argv,fragment", [
    (["study", "run", "nosuch"], f"`study` must be one of {', '.join(study_names())}; got"),
    (["study", "run", "mean_bias", "--grid", "huge"], "invalid choice: 'huge'"),
    (["study", "run", "mean_bias", "--workers", "0"], "must be a positive integer"),
    (["study", "run", "mean_bias", "--method", "nomodule_xyz:f"], "cannot be imported"),
    (["study", "run", "mean_bias", "--method", "numpy"], "must be an import path"),
    (["study", "status", "/nonexistent/dir"], "must hold an evalcert run"),
])
def test_bad_input_is_one_line_exit_2(argv, fragment, capsys, tmp_path):
    if argv[1] == "run":
        argv = [*argv, "--out", str(tmp_path / "r")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1 and "Traceback" not in err


def _unchanged(path):
    # SQLite's own -wal/-shm sidecars may appear on a read-only open, and the writer lock
    # (run.sqlite.lock) records the pid of the last run that took it; the data may not change
    return {p: p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file() and not p.name.endswith(("-wal", "-shm", ".lock"))}


@pytest.mark.parametrize("argv,fragment", [
    (["mean_bias"], "already holds a run; pass --resume"),
    (["mean_bias", "binomial_coverage", "--resume"], "holds a different run (differs in studies)"),
    (["mean_bias", "--resume", "--seed", "2"], "`seed` must match the run being resumed"),
])
def test_out_holding_another_run_is_refused_untouched(finished_run, argv, fragment, capsys):
    before = _unchanged(finished_run)
    assert main(["study", "run", *argv, "--workers", "1", "--out", str(finished_run)]) == 2
    assert fragment in capsys.readouterr().err
    assert _unchanged(finished_run) == before


def test_corrupt_database_and_foreign_directory_are_refused_untouched(tmp_path, capsys):
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "run.sqlite").write_bytes(b"not a database at all" * 100)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    for directory, fragment in ((corrupt, "is not a readable evalcert run store"),
                                (foreign, "is not empty and holds no evalcert run")):
        before = _unchanged(directory)
        for extra in ([], ["--resume"]):
            assert main(["study", "run", "mean_bias", "--out", str(directory), *extra]) == 2
            err = capsys.readouterr().err
            assert "Traceback" not in err and err.count("\n") == 1
        assert fragment in err or "holds no run to resume" in err
        assert _unchanged(directory) == before


BYOM = '''
import numpy as np
from estimators import proportion_ci

def agresti(successes, trials, *, confidence_level):
    return proportion_ci(successes, trials, method="agresti-coull",
                         confidence_level=confidence_level)

def raises(successes, trials, *, confidence_level):
    if trials > 20:
        raise RuntimeError("cannot handle n > 20")
    return agresti(successes, trials, confidence_level=confidence_level)

def scalar(successes, trials, *, confidence_level):
    return 0.1, 0.9

def outside(successes, trials, *, confidence_level):
    p = successes / trials
    return p - 0.5, p + 0.5
'''


def test_user_methods_are_evaluated_and_failures_reported_per_method(tmp_path, monkeypatch,
                                                                       capsys):
    (tmp_path / "thirdparty_ci.py").write_text(BYOM)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "run"
    argv = ["study", "run", "binomial_coverage", "--workers", "1", "--out", str(out)]
    for name in ("agresti", "raises", "scalar", "outside"):
        argv += ["--method", f"thirdparty_ci:{name}"]
    assert main(argv) == 0
    stdout = capsys.readouterr().out
    assert ("method thirdparty_ci:raises failed (first failing cell {'n': 30, 'p': 0.05, "
            "'confidence_level': 0.95}): RuntimeError: cannot handle n > 20") in stdout
    assert "thirdparty_ci:scalar failed (first failing cell {'n': 10, 'p': 0.05" in stdout
    assert "returned `low` of shape (), expected (11,)" in stdout
    assert "thirdparty_ci:outside failed" in stdout and "outside [0, 1]" in stdout
    result = results_from_store(out)["binomial_coverage"]
    agresti = result.rows("coverage", method="thirdparty_ci:agresti")
    assert len(agresti) == 12 and all(r["mcse"] == 0 for r in agresti)
    assert len(result.rows("coverage", method="thirdparty_ci:raises")) == 4  # the n = 10 cells
    assert "FAILED (first failing cell" in (out / "binomial_coverage.txt").read_text()


def test_mean_bias_rejects_user_methods_of_another_kind(tmp_path):
    with pytest.raises(ValueError, match="does not accept user methods"):
        run([SLOW], methods=["numpy:mean"], rng=1, workers=1)


BINOMIAL = get_study("binomial_coverage")


def _calls_counted(study, counter):
    def counted(method):
        def call(data, params):
            counter.append(params["n"])
            return method(data, params)
        return call
    return dataclasses.replace(study, methods={m: counted(f) for m, f in study.methods.items()})


def test_exact_path_analyses_each_n_once_and_matches_the_unbatched_path():
    calls: list[int] = []
    batched = run([_calls_counted(BINOMIAL, calls)], grid="full", rng=1, workers=1)
    grid = BINOMIAL.grids["full"]
    n_values = grid.parameters["n"]
    assert sorted(calls) == sorted(list(n_values) * 2)  # each method once per n, not per p
    alone = run([dataclasses.replace(BINOMIAL, estimates_depend_on=None)], grid="full", rng=1,
                workers=1)
    cells = batched["binomial_coverage"].cells
    assert len(cells) == len(alone["binomial_coverage"].cells) == len(grid.cells())
    for cell, single in zip(cells, alone["binomial_coverage"].cells, strict=True):
        assert cell.key == single.key and cell.params == single.params
        for method, perf in cell.performance.items():
            for name, measure in perf.measures.items():
                assert measure.value == pytest.approx(
                    single.performance[method][name].value, abs=1e-12)


def test_exact_path_matches_scipy_binomial_probabilities_on_the_full_grid():
    result = run([BINOMIAL], grid="full", rng=1, workers=2)["binomial_coverage"]
    for cell in result.cells[::7]:
        n, p = cell.params["n"], cell.params["p"]
        x = np.arange(n + 1)
        for method, perf in cell.performance.items():
            reference = performance(BINOMIAL.methods[method](x, cell.params), p,
                                    probability=stats.binom.pmf(x, n, p),
                                    measures=BINOMIAL.measures)
            for name, measure in reference.measures.items():
                assert perf[name].value == pytest.approx(measure.value, abs=1e-12), (cell, name)


def test_resume_recomputes_only_the_missing_cells_of_a_partly_stored_group(tmp_path):
    out = tmp_path / "run"
    whole = run([BINOMIAL], rng=1, workers=1, out=out)
    rows = "SELECT rowid, key FROM cells"
    with sqlite3.connect(out / "run.sqlite") as db:
        assert {row[0] for row in db.execute("SELECT length(estimates) FROM cells")} == {0}
        db.execute("DELETE FROM cells WHERE json_extract(params, '$.n') = 30 "
                   "AND json_extract(params, '$.p') > 0.08")
        kept = set(db.execute(rows))
    progress: list[tuple[int, int]] = []
    resumed = run([BINOMIAL], rng=1, workers=1, out=out, resume=True,
                  on_cell=lambda done, total: progress.append((done, total)))
    # before the first task: 9 cells stored; then one task, the missing cells of n = 30
    assert progress == [(9, 12), (12, 12)]
    with sqlite3.connect(out / "run.sqlite") as db:
        assert kept < set(db.execute(rows))  # stored rows, n = 30 p = 0.05 too, not rewritten
    assert _by_key(resumed) == _by_key(whole)


def test_estimates_depend_on_must_name_grid_parameters():
    with pytest.raises(ValueError, match=r"must name parameters of its quick grid; got \['m'\]"):
        dataclasses.replace(BINOMIAL, estimates_depend_on=("n", "m"))
    with pytest.raises(ValueError, match="needs `enumerate_outcomes`"):
        dataclasses.replace(MEAN, estimates_depend_on=("n",))
    lacking = Grid({"n": [10], "p": [0.5]}, n_replicates=10)
    with pytest.raises(ValueError, match="parameters of its given grid; got \\['confidence_level"):
        run([BINOMIAL], grid=lacking, rng=1, workers=1)


def test_a_grid_given_to_a_run_is_checked_once_before_a_store_exists_on_either_path(tmp_path):
    # a parameter named like a column of the tidy tables would be overwritten there: refused
    # on the Monte Carlo path too, where no group is planned, and before the store is made
    clash = Grid({"distribution": ["normal"], "n": [5], "method": [1]}, n_replicates=10)
    out = tmp_path / "run"
    with pytest.raises(ValueError, match=r"must not be named .*; got \['method'\]"):
        run([MEAN], grid=clash, rng=1, workers=1, out=out)
    assert not out.exists()


def test_a_grid_with_a_condition_runs_only_the_cells_it_keeps_with_their_own_values(tmp_path):
    whole = Grid({"distribution": ["normal", "lognormal"], "n": [5, 20]}, n_replicates=50)
    kept = dataclasses.replace(whole, where="distribution == 'normal' or n == 20")
    assert kept.cells() == [c for c in whole.cells()
                            if c["distribution"] == "normal" or c["n"] == 20]
    assert kept.n_cells == 3 and Grid.from_dict(kept.to_dict()) == kept
    assert "where" not in whole.to_dict()  # a whole product is recorded as before
    everything = run([MEAN], grid=whole, rng=1, workers=1)["mean_bias"]
    part = run([MEAN], grid=kept, rng=1, workers=2, out=tmp_path / "run")["mean_bias"]
    # each kept cell has its own stream: the values of the same cell of the whole product
    same = {c.key: c.performance for c in everything.cells}
    assert [(c.key, c.performance) for c in part.cells] == [(c.key, same[c.key])
                                                           for c in part.cells]
    assert len(part.cells) == 3
    stored = results_from_store(tmp_path / "run")["mean_bias"]
    assert [c.params for c in stored.cells] == kept.cells()


@pytest.mark.parametrize(("where", "error", "fragment"), [
    ("m > 1", ValueError, r"`where` must be a query over the parameters of the grid \(n, p\)"),
    ("n > 100", ValueError, "`where` must keep at least one cell of the grid; got 'n > 100'"),
    (3, TypeError, "`where` must be a str"),
])
def test_a_grid_condition_must_keep_cells_of_its_product(where, error, fragment):
    with pytest.raises(error, match=fragment):
        Grid({"n": [10, 20], "p": [0.5]}, n_replicates=10, where=where)


def test_a_packed_study_refuses_a_grid_with_a_condition():
    # its groups' cells are placed by the product's shape
    grid = dataclasses.replace(BINOMIAL.grids["quick"], where="n > 10")
    with pytest.raises(ValueError, match="a study with `pack_groups` runs whole products"):
        run([PACKED], grid=grid, rng=1, workers=1)


def _zero(params):
    return 0.0


def _blas_threads(samples, params):
    """Estimate: the OpenBLAS thread count the worker was started with."""
    return Estimates(estimate=np.full(len(samples), float(os.environ["OPENBLAS_NUM_THREADS"])))


THREADS = dataclasses.replace(MEAN, name="threads", truth=_zero, measures=("bias",),
                              methods={"threads": _blas_threads})


def test_local_workers_start_with_single_threaded_blas(monkeypatch):
    # 2 workers on 2 cores, each with its own BLAS threads, oversubscribe the machine
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    result = run([THREADS], rng=1, workers=2)["threads"]
    assert not result.first_errors()
    assert [row["value"] for row in result.rows("bias")] == pytest.approx([1.0] * 9)
    assert "OPENBLAS_NUM_THREADS" not in os.environ  # the coordinator's setting is restored


PACKED = dataclasses.replace(BINOMIAL, pack_groups=True)


def test_packed_groups_equal_the_cells_of_the_unpacked_run(tmp_path):
    grid = dataclasses.replace(BINOMIAL.grids["full"], parameters={
        **BINOMIAL.grids["full"].parameters, "confidence_level": [0.9, 0.95]})
    cells = run([BINOMIAL], grid=grid, rng=1, workers=1)["binomial_coverage"]
    packed = run([PACKED], grid=grid, rng=1, workers=2, out=tmp_path / "run")
    result = packed["binomial_coverage"]
    assert not result.cells and len(result.groups) == 8 * 2  # one per (n, level)
    assert sum(g.size for g in result.groups) == grid.n_cells
    stored = results_from_store(tmp_path / "run")["binomial_coverage"]
    for found in (result, stored):
        expanded = found.expanded().cells
        assert [(c.position, c.key, c.params) for c in expanded] == [
            (c.position, c.key, dict(c.params)) for c in cells.cells]
        assert [c.performance for c in expanded] == [c.performance for c in cells.cells]
    write_tables(packed, tmp_path / "run", [PACKED])
    assert (tmp_path / "run" / "binomial_coverage.summary.csv").exists()
    assert not (tmp_path / "run" / "binomial_coverage.csv").exists()  # cells stay in the store


def test_packed_groups_resume_by_group_and_status_counts_their_cells(tmp_path, capsys):
    out = tmp_path / "run"
    whole = run([PACKED], rng=1, workers=1, out=out)
    with sqlite3.connect(out / "run.sqlite") as db:
        db.execute("DELETE FROM groups WHERE json_extract(shared, '$.n') = 30")
        assert db.execute("SELECT COUNT(*) FROM cells").fetchone() == (0,)
    progress: list[tuple[int, int]] = []
    resumed = run([PACKED], rng=1, workers=1, out=out, resume=True,
                  on_cell=lambda done, total: progress.append((done, total)))
    assert progress == [(8, 12), (12, 12)]  # 8 cells stored; one task: the n = 30 group
    assert _by_key(_expanded(resumed)) == _by_key(_expanded(whole))
    assert main(["study", "status", str(out)]) == 0
    assert "binomial_coverage v1: 12/12 cells" in capsys.readouterr().out


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("stored", [True, False])
def test_on_study_hands_over_each_study_once_its_last_cell_is_stored(tmp_path, workers,
                                                                      stored):
    out = tmp_path / "run" if stored else None
    handed: dict[str, object] = {}

    def finished(results):
        [(name, result)] = results.items()
        assert name not in handed
        handed[name] = result
        if out is not None:  # every cell of the study is in the store already
            assert _by_key({name: results_from_store(out)[name]}) == _by_key(results)

    results = run([PACKED, MEAN], rng=2, workers=workers, out=out, on_study=finished)
    assert sorted(handed) == ["binomial_coverage", "mean_bias"]
    assert list(results) == ["binomial_coverage", "mean_bias"]  # the order given
    if out is not None:  # what was handed over is returned, as the store holds it
        assert _by_key(_expanded(results)) == _by_key(_expanded(results_from_store(out)))
    assert _by_key(_expanded(handed)) == _by_key(_expanded(results))
    assert handed["mean_bias"] == results["mean_bias"]


def test_on_study_on_a_resume_hands_over_the_studies_that_were_already_finished(tmp_path):
    out = tmp_path / "run"
    whole = run([BINOMIAL, MEAN], rng=3, workers=1, out=out)
    with sqlite3.connect(out / "run.sqlite") as db:
        db.execute("DELETE FROM cells WHERE study = 'mean_bias' AND position >= 6")
    order: list[str] = []
    handed = {}

    def finished(results):
        order.extend(results)
        handed.update(results)

    resumed = run([BINOMIAL, MEAN], rng=3, workers=2, out=out, resume=True, on_study=finished)
    assert order == ["mean_bias", "binomial_coverage"]  # the finished one after the last task
    assert _by_key(handed) == _by_key(resumed) == _by_key(whole)


def test_an_error_in_on_study_stops_the_run_keeping_its_cells_for_a_resume(tmp_path):
    out = tmp_path / "run"

    def failing(results):
        raise OSError(f"no room for the tables of {', '.join(results)}")

    with pytest.raises(OSError, match="no room"):
        run([MEAN, BINOMIAL], rng=4, workers=2, out=out, on_study=failing)
    with sqlite3.connect(out / "run.sqlite") as db:
        status = json.loads(db.execute("SELECT value FROM run WHERE key = 'status'").fetchone()[0])
    assert status == "interrupted" and _cells(out) >= 9
    resumed = run([MEAN, BINOMIAL], rng=4, workers=2, out=out, resume=True)
    assert _by_key(resumed) == _by_key(run([MEAN, BINOMIAL], rng=4, workers=1))


def test_cli_tables_written_during_the_run_equal_those_written_after_it(tmp_path):
    out = tmp_path / "run"
    assert main(["study", "run", "binomial_coverage", "mean_bias", "--seed", "5",
                 "--workers", "2", "--out", str(out)]) == 0
    again = tmp_path / "again"
    again.mkdir()
    results = results_from_store(out)
    studies = [get_study("binomial_coverage"), get_study("mean_bias")]
    write_tables(results, again, studies, {
        s.name: evaluate_claims(s.claims, results[s.name], grid="quick",
                                familywise_error=claim_false_alarm()) for s in studies})
    written = sorted(p.name for p in again.iterdir())
    assert written and all((out / name).read_bytes() == (again / name).read_bytes()
                           for name in written)


def test_pack_groups_needs_estimates_depend_on():
    with pytest.raises(ValueError, match="`pack_groups` needs `estimates_depend_on`"):
        dataclasses.replace(BINOMIAL, estimates_depend_on=None, pack_groups=True)


def test_a_grid_runs_only_the_methods_it_selects():
    grid = Grid({"n": [10], "p": [0.3], "confidence_level": [0.95]}, n_replicates=2,
                methods=("wilson",))
    result = run([BINOMIAL], grid=grid, rng=1, workers=1)["binomial_coverage"]
    assert [list(c.performance) for c in result.cells] == [["wilson"]]
    with pytest.raises(ValueError, match=r"among the methods of study 'binomial_coverage' "
                                         r"\(wald, wilson\); got \['agresti'\]"):
        run([BINOMIAL], grid=dataclasses.replace(grid, methods=("agresti",)), rng=1, workers=1)
    with pytest.raises(ValueError, match="at least one method"):
        dataclasses.replace(grid, methods=())


def _wald_below_30(method, params):
    """Wald defined for n < 30 only (it reads n, a grouping parameter of the exact path)."""
    return method != "wald" or params["n"] < 30


def _median_for_normal_data(method, params):
    return method != "median" or params["distribution"] == "normal"


def test_a_method_runs_only_in_the_cells_it_applies_to(tmp_path, monkeypatch):
    (tmp_path / "thirdparty_ci.py").write_text(BYOM)
    monkeypatch.syspath_prepend(str(tmp_path))
    study = dataclasses.replace(BINOMIAL, applies=_wald_below_30)
    user = "thirdparty_ci:agresti"
    grouped = run([study], rng=1, workers=1, methods=[user])["binomial_coverage"]
    packed = run([dataclasses.replace(study, pack_groups=True)], rng=1, workers=1,
                 methods=[user])["binomial_coverage"]
    for result in (grouped, packed.expanded()):
        for cell in result.cells:
            expected = ["wald", "wilson", user] if cell.params["n"] < 30 else ["wilson", user]
            assert list(cell.performance) == expected and not cell.errors
        frame = result.to_frame()
        assert set(frame.loc[frame["method"] == "wald", "n"]) == {10}
        assert frame["method"].value_counts()[user] == 12 * 3  # user methods run everywhere
    # a claim is judged where its methods apply; nowhere in its region: NOT RUN, not FAILS
    claim = Claim("wald-low", "", ("wald",), "coverage", "at_most", 0.95)
    found = evaluate_claims([claim, dataclasses.replace(claim, where="n >= 30")], grouped)
    assert [(v.status, v.compared) for v in found] == [(HOLDS, 4), (NOT_RUN, 0)]
    mean = dataclasses.replace(MEAN, applies=_median_for_normal_data)
    cells = run([mean], rng=1, workers=1)["mean_bias"].cells
    assert {c.params["distribution"] for c in cells if "median" in c.performance} == {"normal"}
    assert all("mean" in c.performance and not c.errors for c in cells)


def test_out_that_cannot_hold_a_run_is_one_line_exit_2(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out, fragment in ((afile, "must be a directory"),
                          (afile / "sub", "argument --out: must be a directory")):
        assert main(["study", "run", "mean_bias", "--workers", "1", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and fragment in err and "Traceback" not in err


def test_ctrl_c_before_the_store_exists_exits_130(tmp_path, capsys, monkeypatch):
    from studies.pipeline import publication

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(publication, "stream", interrupted)
    assert main(["study", "run", "mean_bias", "--out", str(tmp_path / "run")]) == 130
    assert "interrupted before any cell was stored" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_a_run_that_fails_before_its_first_cell_leaves_no_store_to_block_its_retry(
        tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["study", "run", "mean_bias", "--method", "nosuch:thing", "--workers", "1",
                 "--out", str(out)]) == 2
    assert "`method` 'nosuch:thing' cannot be imported" in capsys.readouterr().err
    assert not out.exists()
    assert main(["study", "run", "mean_bias", "--workers", "1", "--seed", "1",
                 "--out", str(out)]) == 0


def test_a_store_failing_mid_run_stops_it_with_the_error_and_keeps_what_was_stored(
        tmp_path, monkeypatch):
    """Tasks are committed on a thread of their own: what storing raises reaches the run,
    nothing after it is stored, and the run resumes to the uninterrupted results."""
    from studies.engine import runner
    from studies.engine.store import RunStore

    attempts: list[int] = []
    given: list[int] = []
    original, put = RunStore.put_cells, runner._Writer.put

    def failing(self, rows):
        attempts.append(len(rows))
        if len(attempts) == 3:
            deadline = time.monotonic() + 30
            while len(given) < 5 and time.monotonic() < deadline:  # two tasks queued behind
                time.sleep(0.01)
            raise ValueError("`out` run: its run store could not be written (disk full).")
        return original(self, rows)

    def counted(self, results):
        given.append(len(results))
        return put(self, results)

    out = tmp_path / "run"
    monkeypatch.setattr(RunStore, "put_cells", failing)
    monkeypatch.setattr(runner._Writer, "put", counted)
    with pytest.raises(ValueError, match="disk full"):
        run([MEAN], rng=1, workers=1, out=out)
    assert len(attempts) == 3  # the tasks queued behind the failure were not stored
    stored = len(results_from_store(out)["mean_bias"].cells)
    assert 0 < stored < MEAN.grids["quick"].n_cells
    monkeypatch.setattr(RunStore, "put_cells", original)
    resumed = run([MEAN], rng=1, workers=1, out=out, resume=True)
    assert _by_key(resumed) == _by_key(run([MEAN], rng=1, workers=1))


def test_each_finished_task_is_handed_over_once_as_it_arrives(tmp_path):
    given: list[tuple] = []
    results = run([BINOMIAL], rng=1, workers=2, out=tmp_path / "run", on_results=given.append)
    assert all(len({r.study for r in task}) == 1 for task in given)
    handed = sorted(r.key for task in given for r in task)
    assert handed == sorted([*(c.key for c in results[BINOMIAL.name].cells),
                             *(g.key for g in results[BINOMIAL.name].groups)])


def _broken_law(enumerate_outcomes, cells):
    """The study's outcomes with every probability doubled where n = 10: not a law."""
    sample = enumerate_outcomes(cells)
    if cells[0]["n"] != 10:
        return sample
    return dataclasses.replace(sample, probability=2.0 * sample.probability)


def _broken_generate(generate, params, n_replicates, *, rng=None):
    if params["n"] == 10:
        raise ZeroDivisionError("no data at n = 10")
    return generate(params, n_replicates, rng=rng)


@pytest.mark.parametrize("path", ["exact", "monte-carlo", "packed"])
def test_a_cell_whose_data_fail_breaks_the_claims_there_and_the_run_goes_on(path):
    # a broken data-generating mechanism is a finding on the claims, not an ended run
    study = get_study("coverage_proportion" if path == "packed" else "binomial_coverage")
    if path == "monte-carlo":
        broken = dataclasses.replace(
            study, enumerate_outcomes=None, estimates_depend_on=None,
            generate=functools.partial(_broken_generate, study.generate))
    else:
        broken = dataclasses.replace(
            study, enumerate_outcomes=functools.partial(_broken_law, study.enumerate_outcomes))
    grid = Grid({"n": [10, 30], "p": [0.1, 0.5], "confidence_level": [0.95],
                 **({"alternative": ["two-sided"]} if path == "packed" else {})},
                n_replicates=200, methods=("wilson", "wald"))
    result = run([broken], grid=grid, rng=3, workers=1)[study.name]
    errors = result.errors_frame(["wilson", "wald"])
    assert sorted(set(errors["n"])) == [10] and set(errors["method"]) == {"wilson", "wald"}
    assert errors["error"].str.startswith("data: ").all()
    claim = Claim("c", "", ("wilson",), "coverage", "at_least", 0.0)
    found = evaluate_claims([claim], result)[0]
    assert found.status == "FAILS" and found.worst().startswith("wilson at n=10")
    assert "raised data: " in found.worst()
    elsewhere = evaluate_claims([dataclasses.replace(claim, where="n == 30")], result)[0]
    assert elsewhere.status != "FAILS" and elsewhere.compared == 2
