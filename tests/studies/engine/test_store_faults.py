"""The run store under faults: damage on disk, broken metadata, failed runs, two writers.

Every entry point that opens a store refuses a damaged one in one line (exit status 2) that
says how to keep its cells; `study salvage` copies the readable rows into a new directory
where `--resume` finishes the run exactly as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import studies.engine.runner
import studies.engine.store
from studies.cli.main import main
from studies.engine import results_from_store, run, run_state
from studies.engine.replicates import cell_estimates
from studies.engine.salvage import salvage
from studies.engine.store import DB_NAME, lock_run
from studies.suite import get_study

ROOT = Path(__file__).resolve().parents[3]
STUDIES = ["binomial_coverage", "mean_bias"]
TABLES = ["binomial_coverage.csv", "mean_bias.csv", "binomial_coverage.summary.csv",
          "mean_bias.summary.csv"]
MEAN = get_study("mean_bias")


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """An uninterrupted run of two small studies (21 cells: 12 exact, 9 Monte Carlo)."""
    out = tmp_path_factory.mktemp("clean") / "run"
    assert main(["study", "run", *STUDIES, "--seed", "7", "--workers", "1",
                 "--out", str(out)]) == 0
    return out


def _pages(path, name):
    """The page size, the leaf pages ``(page, rows)`` and every page of b-tree ``name``."""
    data = path.read_bytes()
    size = struct.unpack(">H", data[16:18])[0]
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?",
                          (name,)).fetchone()[0]
    db.close()
    leaves, every, todo = [], set(), [root]
    while todo:  # interior pages (0x05 table, 0x02 index) point to children; leaves end it
        page = todo.pop()
        every.add(page)
        base = (page - 1) * size
        head = base + (100 if page == 1 else 0)
        kind, count = data[head], struct.unpack(">H", data[head + 3:head + 5])[0]
        if kind in (0x0D, 0x0A):
            leaves.append((page, count))
            continue
        pointers = [struct.unpack(">H", data[head + 12 + 2 * i:head + 14 + 2 * i])[0]
                    for i in range(count)]
        todo += [struct.unpack(">I", data[base + p:base + p + 4])[0] for p in pointers]
        todo.append(struct.unpack(">I", data[head + 8:head + 12])[0])
    return size, sorted(leaves), every


def _damage(source, directory, names=("cells",)):
    """Copy the run store of ``source`` and write garbage over some of its pages.

    ``cells``: two leaf pages of that table, one holding several exact cells, one in the
    middle of the file holding a Monte Carlo cell (SQLite then fails on reading them);
    ``overflow``: two pages in the middle of the file that belong to no b-tree, where the
    Monte Carlo cells' estimates continue (``quick_check`` then reports problems, and only
    reading those cells' estimates fails); ``blob``: the inside of one such page (only the
    estimates archive's checksums see it); another name: every page of that b-tree. Returns
    the number of cell rows on the damaged ``cells`` leaves.
    """
    directory.mkdir(parents=True)
    with sqlite3.connect(source / DB_NAME) as db:  # everything in the main file
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    path = directory / DB_NAME
    shutil.copyfile(source / DB_NAME, path)
    garbage = random.Random(1)
    data = bytearray(path.read_bytes())
    lost = 0
    for name in names:
        if name == "overflow":
            size = _pages(path, "cells")[0]
            btree = set().union(*(_pages(path, tree)[2] for tree in _trees(path)))
            free = [p for p in range(2, len(data) // size + 1) if p not in btree]
            pages = free[len(free) // 2:len(free) // 2 + 2]
        elif name == "blob":  # inside one such page, past its link to the next: SQLite is blind
            size = _pages(path, "cells")[0]
            btree = set().union(*(_pages(path, tree)[2] for tree in _trees(path)))
            free = [p for p in range(2, len(data) // size + 1) if p not in btree]
            start = (free[len(free) // 2] - 1) * size
            data[start + 64:start + size - 64] = garbage.randbytes(size - 128)
            pages = []
        else:
            size, leaves, every = _pages(path, name)
            if name == "cells":
                leaves = [leaves[1], leaves[len(leaves) // 2]]
                lost = sum(rows for _, rows in leaves)
            pages = [page for page, _ in leaves] if name == "cells" else sorted(every)
        for page in pages:
            data[(page - 1) * size:page * size] = garbage.randbytes(size)
    path.write_bytes(data)
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:  # the damage is real: SQLite sees it (but for damage inside a blob)
        intact = db.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    except sqlite3.DatabaseError:
        intact = False
    finally:
        db.close()
    assert intact == (names == ("blob",))
    return lost


def _trees(path):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        trees = [r[0] for r in db.execute("SELECT name FROM sqlite_master")]
    db.close()
    return trees


def _digest(path):
    return hashlib.sha256((path / DB_NAME).read_bytes()).hexdigest()


def _one_line(capsys, *fragments):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err, err
    return err


def _by_key(results):
    return {(name, c.key): {m: p.to_dict() for m, p in c.performance.items()}
            for name, result in results.items() for c in result.cells}


@pytest.fixture(scope="module", params=["cells", "overflow"])
def damaged(clean, tmp_path_factory, request):
    directory = tmp_path_factory.mktemp("damaged") / "run"
    _damage(clean, directory, names=(request.param,))
    return directory


@pytest.mark.parametrize("argv", [
    ["status", "{d}"],
    ["check", "{d}"],
    ["report", "{d}", "--out", "{tmp}/report"],
    ["run", *STUDIES, "--resume", "--workers", "1", "--out", "{d}"],
    ["run", *STUDIES, "--workers", "1", "--out", "{d}"],
    ["compare", "{d}", "{d}"],
    ["bless", "{d}", "--reason", "r", "--out", "{tmp}/baseline"],
])
def test_a_damaged_store_is_one_line_exit_2_from_every_command(damaged, argv, tmp_path, capsys):
    before = _digest(damaged)
    words = [w.format(d=damaged, tmp=tmp_path) for w in argv]
    assert main(["study", *words]) == 2
    _one_line(capsys, f"{damaged} holds a damaged run store ({damaged / DB_NAME}: ",
              f"evalcert study salvage {damaged} --out NEWDIR")
    assert _digest(damaged) == before


def test_a_damaged_store_is_a_value_error_from_the_engine(damaged):
    for read in (results_from_store, run_state):
        with pytest.raises(ValueError, match="holds a damaged run store"):
            read(damaged)


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["cells", "overflow", "blob"])
def test_salvage_keeps_the_readable_cells_and_a_resume_equals_a_clean_run(clean, tmp_path,
                                                                          damage, capsys):
    broken, salvaged = tmp_path / "broken", tmp_path / "salvaged"
    on_leaves = _damage(clean, broken, names=(damage,))
    before = _digest(broken)
    assert main(["study", "salvage", str(broken), "--out", str(salvaged)]) == 0
    out = capsys.readouterr().out
    found = re.search(r"run: 12 rows saved, 0 lost; cells: (\d+) rows saved, (\d+) lost; "
                      r"groups: 0 rows saved, 0 lost", out)
    assert found, out
    saved, lost = map(int, found.groups())
    assert saved + lost == 21 and lost == (on_leaves or lost)
    assert (f"evalcert study run {' '.join(STUDIES)} --grid quick --resume --out {salvaged}"
            in out)
    assert _digest(broken) == before  # the damaged store is only read
    whole = _by_key(results_from_store(clean))
    kept = _by_key(results_from_store(salvaged))
    assert 0 < lost < 21 and len(kept) == 21 - lost
    assert kept == {key: whole[key] for key in kept}
    assert main(["study", "status", str(salvaged)]) == 0
    assert f"run {salvaged}: salvaged, seed 7" in capsys.readouterr().out
    assert main(["study", "run", *STUDIES, "--resume", "--workers", "1",
                 "--out", str(salvaged)]) == 0
    assert _by_key(results_from_store(salvaged)) == whole
    assert run_state(salvaged).complete
    for name in TABLES:
        assert (salvaged / name).read_bytes() == (clean / name).read_bytes(), name


def test_damaged_estimates_are_one_line_when_a_figure_reads_them(clean, tmp_path):
    broken = tmp_path / "broken"
    _damage(clean, broken, names=("blob",))
    salvaged = tmp_path / "salvaged"
    assert salvage(broken, salvaged).lost["cells"] == 1
    (key,) = set(_by_key(results_from_store(broken))) - set(_by_key(results_from_store(salvaged)))
    cell = next(c for c in results_from_store(broken)["mean_bias"].cells if c.key == key[1])
    with pytest.raises(ValueError, match=rf"^`run_dir` {broken} holds a damaged run store "
                                         r"\(.*: the estimates of cell .* cannot be decoded"):
        cell_estimates(broken, "mean_bias", cell.params)


def test_salvage_without_the_index_steps_over_the_damage(clean, tmp_path, capsys):
    broken, salvaged = tmp_path / "broken", tmp_path / "salvaged"
    lost = _damage(clean, broken, names=("sqlite_autoindex_cells_1", "cells"))
    assert main(["study", "salvage", str(broken), "--out", str(salvaged)]) == 0
    assert f"cells: {21 - lost} rows saved, about {lost} lost" in capsys.readouterr().out
    assert len(_by_key(results_from_store(salvaged))) == 21 - lost


def test_salvage_needs_the_run_metadata_and_a_new_directory(clean, tmp_path, capsys):
    broken = tmp_path / "broken"
    _damage(clean, broken, names=("run",))
    assert main(["study", "salvage", str(broken), "--out", str(tmp_path / "new")]) == 2
    _one_line(capsys, f"`directory` {broken} cannot be salvaged: its metadata `identity`, "
                      "`seed`, `grids` cannot be read")
    assert not (tmp_path / "new").exists()
    assert main(["study", "salvage", str(clean), "--out", str(clean)]) == 2
    _one_line(capsys, f"`out` must be a new or empty directory; got {clean}.")


@pytest.mark.parametrize("sql,command,fragment", [
    ("DELETE FROM run WHERE key = 'seed'", "status", "metadata `seed` is missing."),
    ("DELETE FROM run WHERE key = 'grids'", "status", "metadata `grids` is missing."),
    ("DELETE FROM run WHERE key = 'identity'", "check", "metadata `identity` is missing."),
    ("UPDATE run SET value = '{\"mean_bias\": ' WHERE key = 'grids'", "status",
     "metadata `grids` is not valid JSON (Expecting value"),
    ("UPDATE run SET value = '\"-3\"' WHERE key = 'seed'", "status",
     "metadata `seed` must be a non-negative integer; got '-3'."),
    ("UPDATE run SET value = '{\"x\": 1}' WHERE key = 'grids'", "check",
     "metadata `grids` must be an object holding each study's grid"),
    ("UPDATE run SET value = 'yes' WHERE key = 'status'", "report",
     "metadata `status` is not valid JSON"),
    ("DELETE FROM run WHERE key = 'seed'", "resume", "metadata `seed` is missing."),
])
def test_missing_or_malformed_metadata_is_one_line_naming_store_and_key(
        clean, tmp_path, sql, command, fragment, capsys):
    copy = tmp_path / "run"
    copy.mkdir()
    shutil.copyfile(clean / DB_NAME, copy / DB_NAME)
    with sqlite3.connect(copy / DB_NAME) as db:
        db.execute(sql)
    db.close()
    argv = (["run", *STUDIES, "--resume", "--workers", "1", "--out", str(copy)]
            if command == "resume" else [command, str(copy)])
    assert main(["study", *argv]) == 2
    _one_line(capsys, f"run store {copy / DB_NAME}: {fragment}")


def test_a_row_that_cannot_be_decoded_is_one_line(clean, tmp_path, capsys):
    copy = tmp_path / "run"
    copy.mkdir()
    shutil.copyfile(clean / DB_NAME, copy / DB_NAME)
    with sqlite3.connect(copy / DB_NAME) as db:
        db.execute("UPDATE cells SET params = '{' WHERE position = 3 AND study = 'mean_bias'")
    db.close()
    assert main(["study", "check", str(copy)]) == 2
    _one_line(capsys, "holds a damaged run store", "the cells row of study 'mean_bias' at "
                      "position 3 cannot be decoded: JSONDecodeError")


def test_a_foreign_database_is_refused_in_one_line(tmp_path, capsys):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    with sqlite3.connect(foreign / DB_NAME) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
    db.close()
    for argv in (["status", str(foreign)], ["run", "mean_bias", "--out", str(foreign)]):
        assert main(["study", *argv]) == 2
        _one_line(capsys, f"{foreign / DB_NAME} is not an evalcert run store (it has no cells "
                          "or run table)")


def test_a_failed_first_run_does_not_block_its_retry(tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    # a bad user method fails before any store exists
    assert main(["study", "run", "mean_bias", "--method", "nosuchmodule:f", "--workers", "1",
                 "--out", str(out)]) == 2
    _one_line(capsys, "`method` 'nosuchmodule:f' cannot be imported")
    assert not (out / DB_NAME).exists()
    # a run that fails once its store exists, before its first cell, leaves an empty store...
    real = studies.engine.runner.execute

    def failing(*args, **kwargs):
        raise ValueError("`workers` could not start; got none.")

    monkeypatch.setattr(studies.engine.runner, "execute", failing)
    assert main(["study", "run", "mean_bias", "--seed", "5", "--workers", "1",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err  # the progress line, then the error
    assert err.endswith("evalcert: error: `workers` could not start; got none.\n")
    with sqlite3.connect(out / DB_NAME) as db:
        assert db.execute("SELECT COUNT(*) FROM cells").fetchone() == (0,)
    db.close()
    monkeypatch.setattr(studies.engine.runner, "execute", real)
    # ...which a plain retry replaces
    assert main(["study", "run", "mean_bias", "--workers", "1", "--out", str(out)]) == 0
    assert len(results_from_store(out)["mean_bias"].cells) == 9


def test_a_resume_of_a_run_without_cells_starts_it_with_its_seed(tmp_path, monkeypatch,
                                                                 capsys):
    out = tmp_path / "run"
    monkeypatch.setattr(studies.engine.runner, "execute", _interrupted)
    assert main(["study", "run", "mean_bias", "--seed", "5", "--workers", "1",
                 "--out", str(out)]) == 130
    monkeypatch.undo()
    # other studies and methods: the identity of a store without cells binds nothing
    assert main(["study", "run", "binomial_coverage", "--resume", "--workers", "1",
                 "--out", str(out)]) == 0
    assert main(["study", "status", str(out)]) == 0
    assert f"run {out}: complete, seed 5" in capsys.readouterr().out
    assert list(results_from_store(out)) == ["binomial_coverage"]


def _interrupted(*args, **kwargs):
    raise KeyboardInterrupt


def test_early_failures_leave_no_store(tmp_path, monkeypatch):
    out = tmp_path / "run"
    with pytest.raises(ValueError, match="grid"):
        run([MEAN], grid="huge", rng=1, workers=1, out=out)
    with pytest.raises(ValueError, match="`seed` must be a non-negative integer"):
        run([MEAN], rng=-1, workers=1, out=out)
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ValueError, match="install the dask extra"):
        run([MEAN], rng=1, scheduler="tcp://127.0.0.1:9", out=out)
    assert not out.exists()


def test_a_second_writer_is_refused_and_readers_need_no_lock(clean, tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    with lock_run(out):
        with pytest.raises(ValueError, match=rf"^`out` {out} is being written by another run "
                                             rf"\(pid {os.getpid()}\); wait for it to end"):
            run([MEAN], rng=1, workers=1, out=out)
        assert not (out / DB_NAME).exists()
    run([MEAN], rng=1, workers=1, out=out)  # released: the directory is usable
    with lock_run(out):
        assert main(["study", "status", str(out)]) == 0
        assert main(["study", "check", str(out)]) == 0
        assert main(["study", "run", "mean_bias", "--resume", "--out", str(out)]) == 2
        _one_line(capsys, "is being written by another run")


def test_the_lock_of_a_killed_run_is_released_at_once(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom studies.engine.store import lock_run\n"
         "lock = lock_run(sys.argv[1])\nprint('locked', flush=True)\ntime.sleep(60)",
         str(out)],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.PIPE,
        text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        with pytest.raises(ValueError, match=rf"another run \(pid {holder.pid}\)"):
            run([MEAN], rng=1, workers=1, out=out)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        holder.stdout.close()
    run([MEAN], rng=1, workers=1, out=out)
    assert run_state(out).complete


def test_a_finished_run_leaves_its_store_whole_in_one_file(clean, tmp_path):
    # no write-ahead log, shared-memory index or lock left beside run.sqlite
    assert sorted(p.name for p in clean.iterdir() if p.name.startswith(DB_NAME)) == [DB_NAME]
    with sqlite3.connect(f"file:{clean / DB_NAME}?mode=ro", uri=True) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    db.close()
    # run.sqlite copied alone, as an auditor receiving it would: the whole run reads back
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(clean / DB_NAME, alone / DB_NAME)
    assert run_state(alone).describe() == "complete"
    copied = results_from_store(alone)
    original = results_from_store(clean)
    for name in STUDIES:
        assert copied[name].to_frame().equals(original[name].to_frame())
    # the engine's run alone settles its store too; a resumed run writes in WAL mode again
    out = tmp_path / "engine"
    run([MEAN], rng=1, workers=1, out=out)
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(DB_NAME)) == [DB_NAME]
    assert main(["study", "run", "mean_bias", "--resume", "--workers", "1", "--seed", "1",
                 "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(DB_NAME)) == [DB_NAME]


def test_a_released_lock_removes_its_file_and_a_stale_opener_takes_it_again(tmp_path,
                                                                          monkeypatch):
    first = lock_run(tmp_path)
    stale = os.open(tmp_path / "run.sqlite.lock", os.O_RDWR)  # opened as the first run ended
    first.release()
    assert not (tmp_path / "run.sqlite.lock").exists()
    real_open, opened = os.open, []

    def opening(path, flags, mode=0o777):  # the next lock_run gets the stale file first
        opened.append(path)
        return stale if len(opened) == 1 else real_open(path, flags, mode)

    monkeypatch.setattr(studies.engine.store.os, "open", opening)
    with lock_run(tmp_path) as second:
        assert len(opened) == 2  # the removed file was given up, the directory's own taken
        assert os.fstat(second._descriptor).st_ino == os.stat(
            tmp_path / "run.sqlite.lock").st_ino
    assert not (tmp_path / "run.sqlite.lock").exists()
