"""The run store: one SQLite database (WAL mode) per run directory.

Table ``run`` holds the run's metadata as JSON values (identity: studies and versions, grid,
user methods, path; root seed, grids, package versions, git commit, start and end times,
status). Table ``cells`` holds one row per finished cell, committed as the cell (or the group of
exact-path cells analysed together) finishes, so a run killed at any moment loses at most the
cells in flight. Exact-path rows have empty ``estimates`` (see `studies.engine.tasks`). Table
``groups`` holds one row per finished packed group (`studies.engine.design.Study.pack_groups`): its
shared parameter values, the other axes, and every cell's measures as packed arrays.

Only the coordinating process writes, holding an exclusive advisory lock (``flock``) on
``run.sqlite.lock`` beside the store for the whole run (`lock_run`); the lock file records its
pid. A second writer is refused at once, and a killed run's lock goes with its process, so the
run can be resumed straight away; a run that ends removes the lock file. Readers
(`existing_store`) take no lock. When a run and its report are done (or stopped),
`settle_store` copies the write-ahead log into ``run.sqlite`` and leaves the store in SQLite's
rollback-journal mode, so that the file alone is the whole run (a copy of the directory without
its ``-wal`` file loses nothing) and readers leave no log behind. A store that recorded
no finished cell (a run that failed or was stopped before its first cell) is replaced by the
next run on its directory, whatever that run's studies and methods. Every store is checked
(``PRAGMA quick_check``) when opened; a damaged one, unreadable metadata or an undecodable row is
a `ValueError` naming the store, never a SQLite or JSON error (`studies.engine.salvage` copies
the readable rows of a damaged store into a new run directory).

References
----------
SQLite, "Write-Ahead Logging" (https://sqlite.org/wal.html): with ``synchronous=NORMAL`` a
committed transaction survives an application crash (not necessarily a power loss).
SQLite, "PRAGMA quick_check" (https://sqlite.org/pragma.html#pragma_quick_check).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["DB_NAME", "LOCK_NAME", "Metadata", "RunLock", "RunStore", "damaged",
           "decode_metadata", "existing_store", "lock_run", "open_store", "read_only",
           "settle_store"]

DB_NAME = "run.sqlite"
LOCK_NAME = "run.sqlite.lock"
_SIDECARS = ("-wal", "-shm")
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS run (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS cells (
    study TEXT NOT NULL, key TEXT NOT NULL, position INTEGER NOT NULL, params TEXT NOT NULL,
    path TEXT NOT NULL, performance TEXT NOT NULL, errors TEXT NOT NULL,
    estimates BLOB NOT NULL, seconds REAL NOT NULL, finished TEXT NOT NULL,
    PRIMARY KEY (study, key)
)""",
    # a group's arrays come last: its other columns are read without walking the arrays'
    # overflow pages (stores written before hold them before ``errors``; read by name alike)
    """CREATE TABLE IF NOT EXISTS groups (
    study TEXT NOT NULL, key TEXT NOT NULL, position INTEGER NOT NULL, cells INTEGER NOT NULL,
    shared TEXT NOT NULL, axes TEXT NOT NULL, errors TEXT NOT NULL, seconds REAL NOT NULL,
    finished TEXT NOT NULL, "values" BLOB NOT NULL,
    PRIMARY KEY (study, key)
)""",
    # a study's looks at its claims (`studies.engine.rounds`): after each round, the claims'
    # statuses and the cells raised next (stored before they run, so a resume runs the same)
    """CREATE TABLE IF NOT EXISTS rounds (
    study TEXT NOT NULL, round INTEGER NOT NULL, statuses TEXT NOT NULL, raised TEXT NOT NULL,
    finished TEXT NOT NULL, PRIMARY KEY (study, round)
)""",
)
CELL_COLUMNS = ("study", "key", "position", "params", "path", "performance", "errors",
                "estimates", "seconds", "finished")
GROUP_COLUMNS = ("study", "key", "position", "cells", "shared", "axes", "values", "errors",
                 "seconds", "finished")


def damaged(name: str, directory: Path, detail: object) -> ValueError:
    """The error for a damaged store: what is wrong, and how to keep its finished cells."""
    return ValueError(
        f"`{name}` {directory} holds a damaged run store ({Path(directory) / DB_NAME}: "
        f"{detail}); copy its readable cells into a new directory with `evalcert study "
        f"salvage {directory} --out NEWDIR` and continue the run there with --resume.")


def _corrupt(error: sqlite3.Error) -> bool:
    name = getattr(error, "sqlite_errorname", "")
    return name.startswith("SQLITE_CORRUPT") or name == "SQLITE_NOTADB"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _is_grid(value: Any) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("parameters"), dict)
            and all(isinstance(v, list) for v in value["parameters"].values()))


# What the readers rely on in each metadata value, and how to say it.
_SHAPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "identity": (lambda v: isinstance(v, dict) and isinstance(v.get("studies"), dict)
                 and "grid" in v, "an object naming the run's `studies` and `grid`"),
    "seed": (lambda v: (isinstance(v, str) and v.isdecimal())
             or (isinstance(v, int) and not isinstance(v, bool) and v >= 0),
             "a non-negative integer"),
    "grids": (lambda v: isinstance(v, dict) and all(_is_grid(g) for g in v.values()),
              "an object holding each study's grid and its parameter lists"),
    "status": (lambda v: isinstance(v, str), "text"),
    "resumes": (lambda v: isinstance(v, list) and all(isinstance(r, dict) for r in v),
                "a list of objects"),
    "packages": (lambda v: isinstance(v, dict), "an object of package versions"),
    "git_dirty": (lambda v: v is None or isinstance(v, bool), "true, false or null"),
    "salvaged": (lambda v: isinstance(v, dict), "an object"),
    "budget_cut": (lambda v: isinstance(v, dict) and all(
        isinstance(r, int) and not isinstance(r, bool) for r in v.values()),
        "an object of study names and rounds"),
}


class Metadata(dict[str, Any]):
    """A store's decoded metadata; a missing key is a ValueError naming the store and key."""

    def __init__(self, values: Mapping[str, Any], path: Path) -> None:
        super().__init__(values)
        self.path = path

    def __missing__(self, key: str) -> Any:
        raise ValueError(f"run store {self.path}: metadata `{key}` is missing.")


def decode_metadata(rows: Iterable[tuple[Any, Any]], path: Path) -> Metadata:
    """The ``run`` table's ``(key, value)`` rows decoded and checked.

    Raises
    ------
    ValueError
        Naming the store and the key, when a value is not valid JSON or not of the shape the
        readers rely on (`_SHAPES`), or ``grids`` lacks a study of ``identity``.
    """
    found: dict[str, Any] = {}
    for key, text in rows:
        try:
            value = json.loads(text)
        except (TypeError, ValueError) as error:
            raise ValueError(f"run store {path}: metadata `{key}` is not valid JSON "
                             f"({error}).") from None
        check, what = _SHAPES.get(key, (lambda v: True, ""))
        if not check(value):
            raise ValueError(f"run store {path}: metadata `{key}` must be {what}; got "
                             f"{_short(value)}.")
        found[str(key)] = value
    if "identity" in found and "grids" in found:
        missing = sorted(set(found["identity"]["studies"]) - set(found["grids"]))
        if missing:
            raise ValueError(f"run store {path}: metadata `grids` must hold a grid for every "
                             f"study of the run; got none for {', '.join(missing)}.")
    return Metadata(found, path)


class RunLock:
    """An exclusive advisory lock on a run directory (`lock_run`), held until `release`."""

    def __init__(self, descriptor: int, path: Path) -> None:
        self._descriptor: int | None = descriptor
        self.path = path

    def release(self) -> None:
        """Remove the lock file and release the lock (closing the file releases ``flock``); a
        second call does nothing. The file goes while the lock is held: a process that opened
        it just before finds, once it holds the lock, that it no longer names the lock file
        (`lock_run`)."""
        if self._descriptor is not None:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            os.close(self._descriptor)
            self._descriptor = None

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_run(directory: str | os.PathLike[str], *, name: str = "out") -> RunLock:
    """Take the run directory's writer lock (``run.sqlite.lock``) without waiting.

    The directory must exist. The lock is ``flock(LOCK_EX | LOCK_NB)`` on the lock file, which
    then holds this process's pid; the kernel releases it when the process dies, however.

    Raises
    ------
    ValueError
        When another process holds the lock (naming its pid), or the lock file cannot be
        created or locked.
    """
    directory = Path(directory)
    path = directory / LOCK_NAME
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise ValueError(f"`{name}` {directory} cannot hold a run store: "
                         f"{error.strerror or error}.") from None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(descriptor, 32, 0).decode(errors="replace").strip()
        os.close(descriptor)
        raise ValueError(
            f"`{name}` {directory} is being written by another run (pid "
            f"{holder if holder.isdecimal() else 'unknown'}); wait for "
            "it to end, or choose another directory.") from None
    except OSError as error:  # a file system without flock
        os.close(descriptor)
        raise ValueError(f"`{name}` {directory} cannot be locked for writing: "
                         f"{error.strerror or error}.") from None
    try:
        current = os.stat(path).st_ino
    except FileNotFoundError:
        current = -1
    if current != os.fstat(descriptor).st_ino:  # its holder ended and removed it meanwhile
        os.close(descriptor)
        return lock_run(directory, name=name)
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)
    return RunLock(descriptor, path)


class RunStore:
    """An open run database; rows are plain dicts (the engine turns them into results).

    ``name`` is the argument the store came from (``directory`` for a reader, ``out`` for a
    run), used in error messages; ``created`` tells a store `open_store` made new (or that
    replaced one without finished cells) from one it reopened to resume.
    """

    def __init__(self, connection: sqlite3.Connection, directory: Path, *,
                 name: str = "directory", lock: RunLock | None = None,
                 created: bool = False) -> None:
        self._db = connection
        self.directory = directory
        self.name = name
        self.created = created
        self._lock = lock

    @property
    def path(self) -> Path:
        """The database file."""
        return self.directory / DB_NAME

    def _guarded(self, doing: str) -> contextlib.AbstractContextManager[None]:
        return _sqlite_errors(self.name, self.directory, doing)

    def metadata(self) -> Metadata:
        """All metadata, decoded and checked (`decode_metadata`)."""
        with self._guarded("read"):
            rows = self._db.execute("SELECT key, value FROM run").fetchall()
        return decode_metadata(rows, self.path)

    def set_metadata(self, **values: Any) -> None:
        """Insert or replace metadata entries, in one transaction."""
        with self._guarded("written"), self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO run (key, value) VALUES (?, ?)",
                [(k, json.dumps(v)) for k, v in values.items()])

    def finished_keys(self) -> set[tuple[str, str]]:
        """``(study, key)`` of every finished cell and packed group."""
        with self._guarded("read"):
            keys = set(self._db.execute("SELECT study, key FROM cells"))
            if self._has_groups():
                keys |= set(self._db.execute("SELECT study, key FROM groups"))
        return keys

    def _has_groups(self) -> bool:
        # a run stored before packed groups existed (read-only) has no such table
        query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'groups'"
        return self._db.execute(query).fetchone() is not None

    def put_cells(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Commit finished cells in one transaction (a task's cells are stored together)."""
        with self._guarded("written"), self._db:
            self._db.executemany(
                f"INSERT OR REPLACE INTO cells ({', '.join(_quoted(CELL_COLUMNS))}) VALUES "
                f"({', '.join(':' + c for c in CELL_COLUMNS)})",
                [dict(row) for row in rows])

    def put_groups(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Commit finished packed groups in one transaction."""
        if not rows:
            return
        with self._guarded("written"), self._db:
            self._db.executemany(
                f"INSERT OR REPLACE INTO groups ({', '.join(_quoted(GROUP_COLUMNS))}) VALUES "
                f"({', '.join(':' + c for c in GROUP_COLUMNS)})",
                [dict(row) for row in rows])

    def groups(self, *, study: str | None = None, values: bool = True
               ) -> list[dict[str, Any]]:
        """Every finished packed group, by study and grid position of its first cell.

        ``study``: that study's groups only. ``values=False``: each row has the ``rowid``
        of its arrays (`group_arrays`) instead of the arrays themselves.
        """
        where, args = _of_study(study)
        columns = [c if values or c != "values" else "rowid" for c in GROUP_COLUMNS]
        with self._guarded("read"):
            if not self._has_groups():
                return []
            cursor = self._db.execute(f"SELECT {', '.join(_quoted(columns))} FROM groups"
                                      f"{where} ORDER BY study, position", args)
            return [dict(zip(columns, row, strict=True)) for row in cursor]

    def group_arrays(self, rowid: int) -> sqlite3.Blob:
        """The stored arrays of one packed group, as a read-only file (read them in a
        ``with`` block)."""
        with self._guarded("read"):
            return self._db.blobopen("groups", "values", rowid, readonly=True)

    def finished_cells(self) -> dict[str, int]:
        """Number of finished cells per study (a packed group counts its cells)."""
        found: dict[str, int] = {}
        query = "SELECT study, COUNT(*) FROM cells GROUP BY study"
        with self._guarded("read"):
            if self._has_groups():
                query += " UNION ALL SELECT study, SUM(cells) FROM groups GROUP BY study"
            for study, count in self._db.execute(query):
                found[study] = found.get(study, 0) + int(count)
        return found

    def cells(self, *, with_estimates: bool = False, study: str | None = None
              ) -> list[dict[str, Any]]:
        """Every finished cell, by study and grid position; ``study``: that study's only."""
        columns = [c for c in CELL_COLUMNS if with_estimates or c != "estimates"]
        where, args = _of_study(study)
        with self._guarded("read"):
            cursor = self._db.execute(
                f"SELECT {', '.join(_quoted(columns))} FROM cells{where} ORDER BY study, "
                "position", args)
            return [dict(zip(columns, row, strict=True)) for row in cursor]

    def put_round(self, row: Mapping[str, Any]) -> None:
        """Commit one study's look after a round (`studies.engine.rounds.Look.to_row`)."""
        with self._guarded("written"), self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO rounds (study, round, statuses, raised, finished) "
                "VALUES (:study, :round, :statuses, :raised, :finished)", dict(row))

    def rounds(self, *, study: str | None = None) -> list[dict[str, Any]]:
        """Every stored look, by study and round (none in a store made before rounds)."""
        where, args = _of_study(study)
        columns = ("study", "round", "statuses", "raised", "finished")
        with self._guarded("read"):
            exists = self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                      "name = 'rounds'").fetchone()
            if exists is None:
                return []
            cursor = self._db.execute(f"SELECT {', '.join(columns)} FROM rounds{where} "
                                      "ORDER BY study, round", args)
            return [dict(zip(columns, row, strict=True)) for row in cursor]

    def cell_estimates(self, study: str, key: str) -> bytes | None:
        """The stored estimates of one cell (None: no such cell; empty: an exact cell)."""
        with self._guarded("read"):
            row = self._db.execute("SELECT estimates FROM cells WHERE study = ? AND key = ?",
                                   (study, key)).fetchone()
        return None if row is None else bytes(row[0])

    def close(self) -> None:
        """Close the connection (WAL is checkpointed by SQLite), then release the lock."""
        try:
            self._db.close()
        finally:
            if self._lock is not None:
                self._lock.release()


@contextlib.contextmanager
def _sqlite_errors(name: str, directory: Path, doing: str) -> Iterator[None]:
    """SQLite errors as one ValueError naming the store (damage: how to salvage it)."""
    try:
        yield
    except sqlite3.DatabaseError as error:
        if _corrupt(error):
            raise damaged(name, directory, error) from None
        raise ValueError(f"`{name}` {directory}: its run store {directory / DB_NAME} could "
                         f"not be {doing} ({error}).") from None


def _of_study(study: str | None) -> tuple[str, tuple[str, ...]]:
    """The WHERE clause and its arguments selecting one study's rows (all rows for None)."""
    return ("", ()) if study is None else (" WHERE study = ?", (study,))


def _quoted(columns: Iterable[str]) -> list[str]:
    return [f'"{c}"' for c in columns]


def _connect(path: Path) -> sqlite3.Connection:
    # a run commits from a thread of its own (`studies.engine.runner`), one thread at a time
    db = sqlite3.connect(path, timeout=30.0, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    # the log is copied into the database (and synced) every 64 MB rather than every 4 MB:
    # a run storing a packed group of a megabyte per task spends 9 ms a commit, not 15 ms
    db.execute("PRAGMA wal_autocheckpoint=16384")
    return db


def settle_store(directory: str | os.PathLike[str]) -> bool:
    """Copy the store's write-ahead log into ``run.sqlite`` and switch it to rollback-journal
    mode (its ``-wal`` and ``-shm`` files go), so that the database file alone holds the run.

    Call it once the run's writer and readers are closed: while another connection still has
    the store open the log is copied as far as it can be and kept. Returns whether the store
    was settled (False also for a directory without a store). A resumed run switches the store
    back to WAL mode (`open_store`).
    """
    path = Path(directory) / DB_NAME
    if not path.is_file():
        return False
    try:  # no waiting: a store still being read is left as it is, at once
        db = sqlite3.connect(path, timeout=0.0)
    except sqlite3.Error:
        return False
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        mode = db.execute("PRAGMA journal_mode=DELETE").fetchone()
        return bool(mode) and str(mode[0]).lower() == "delete"
    except sqlite3.Error:
        return False
    finally:
        db.close()


def read_only(path: Path, *, check_same_thread: bool = True) -> sqlite3.Connection:
    """A read-only connection to the database ``path`` (any characters in its name);
    ``check_same_thread=False``: one that another thread may close."""
    return sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True,
                           check_same_thread=check_same_thread)


def _checked(directory: Path, name: str) -> tuple[sqlite3.Connection, set[str]]:
    """A read-only connection to a store that passed ``quick_check``, and its table names.

    Raises
    ------
    ValueError
        If the file is not a SQLite database, or is damaged.
    """
    path = directory / DB_NAME
    db = read_only(path)
    try:
        problems = [str(row[0]) for row in db.execute("PRAGMA quick_check")]
        tables = {str(row[0]) for row in
                  db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as error:
        db.close()
        if getattr(error, "sqlite_errorname", "") == "SQLITE_NOTADB":
            raise ValueError(f"`{name}` {path} is not a readable evalcert run store "
                             f"({error}); nothing was changed.") from None
        raise damaged(name, directory, error) from None
    if problems != ["ok"]:
        db.close()
        # each row may hold several lines under a "*** in database main ***" heading
        lines = [line for row in problems for line in row.splitlines()
                 if line.strip() and not line.startswith("***")] or problems
        more = f", and {len(lines) - 1} more problems" if len(lines) > 1 else ""
        raise damaged(name, directory, f"quick_check: {lines[0]}{more}")
    return db, tables


def _foreign(name: str, directory: Path, tables: set[str]) -> ValueError:
    return ValueError(f"`{name}` {directory / DB_NAME} is not an evalcert run store (it has "
                      f"no {' or '.join(sorted({'run', 'cells'} - tables))} table); nothing "
                      "was changed.")


def existing_store(directory: str | os.PathLike[str], *, name: str = "directory") -> RunStore:
    """Open the run in ``directory`` for reading (``study status``, ``check``, ``report``).

    Takes no lock: a run may be writing it (WAL readers see its last commit).

    Raises
    ------
    ValueError
        If the directory holds no run store, the file is not a run store or is damaged, or
        its identity is missing or unreadable; one sentence naming ``name`` and the store.
    """
    directory = Path(directory)
    if not (directory / DB_NAME).is_file():
        raise ValueError(f"`{name}` must hold an evalcert run ({DB_NAME}); got {directory}.")
    db, tables = _checked(directory, name)
    if not {"run", "cells"} <= tables:
        db.close()
        raise _foreign(name, directory, tables)
    store = RunStore(db, directory, name=name)
    try:
        store.metadata()["identity"]  # a store without its identity is no run
    except BaseException:
        store.close()
        raise
    return store


def open_store(directory: str | os.PathLike[str], identity: Mapping[str, Any], *,
               resume: bool, start: Mapping[str, Any] | None = None,
               keep_seed: bool = False, seed: int | None = None) -> RunStore:
    """Create the run store in ``directory``, or reopen it with ``resume``; lock it.

    The returned store holds the directory's writer lock (`lock_run`) until it is closed. A
    store that holds no finished cell is replaced, with or without ``resume``, whatever its
    identity: nothing of it is lost, and a run that failed before its first cell must not block
    its retry.

    Parameters
    ----------
    directory : path
        The run directory (created if missing).
    identity : mapping
        What a resumed run must match (studies and versions, grid, methods, path).
    resume : bool
        Continue the run in ``directory`` (its identity must match).
    start : mapping, optional
        Metadata a new store records with its identity, in the same transaction (the root
        seed, grids, provenance): no store exists without them.
    keep_seed : bool
        When replacing a store without finished cells, keep its ``seed`` (a resume that gave
        no seed continues with the seed the run was started with).
    seed : int, optional
        The root seed a resumed run must have been started with.

    Raises
    ------
    ValueError
        If ``directory`` is a file or a non-empty directory without a run, another run is
        writing it, it holds finished cells and ``resume`` is false, holds a different run or
        one started from another ``seed``, holds a damaged or foreign database, or cannot be
        created; nothing is written then.
    """
    directory = Path(directory)
    path = directory / DB_NAME
    if directory.exists() and not directory.is_dir():
        raise ValueError(f"`out` must be a directory; got {directory}, which is a file.")
    if not path.exists():
        if resume:
            raise ValueError(f"`out` {directory} holds no run to resume.")
        if directory.exists() and any(p.name != LOCK_NAME for p in directory.iterdir()):
            raise ValueError(f"`out` {directory} is not empty and holds no evalcert run; "
                             "choose another directory.")
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ValueError(f"`out` {directory} cannot hold a run store: "
                             f"{error.strerror or error}.") from None
    lock = lock_run(directory, name="out")
    try:
        return _open_locked(directory, identity, resume, dict(start or {}), keep_seed, lock,
                            seed)
    except BaseException:
        lock.release()
        raise


def _open_locked(directory: Path, identity: Mapping[str, Any], resume: bool,
                 start: dict[str, Any], keep_seed: bool, lock: RunLock,
                 seed: int | None) -> RunStore:
    """`open_store` once the writer lock is held (no one else changes the store now)."""
    path = directory / DB_NAME
    if not path.exists():
        if resume:
            raise ValueError(f"`out` {directory} holds no run to resume.")
        return _create(directory, {"identity": dict(identity), **start}, lock)
    reader, tables = _checked(directory, "out")
    try:
        if tables and not {"run", "cells"} <= tables:
            raise _foreign("out", directory, tables)
        with _sqlite_errors("out", directory, "read"):
            finished = bool(tables) and reader.execute(
                "SELECT EXISTS (SELECT 1 FROM cells)"
                + (" OR EXISTS (SELECT 1 FROM groups)" if "groups" in tables else "")
            ).fetchone()[0]
            rows = reader.execute("SELECT key, value FROM run WHERE key IN ('identity', "
                                  "'seed')").fetchall() if tables else []
    finally:
        reader.close()
    if not finished:  # nothing to lose: this run takes the directory over
        if keep_seed:
            with contextlib.suppress(ValueError):  # an unreadable seed: the new one stands
                seed = decode_metadata([r for r in rows if r[0] == "seed"], path)
                start["seed"] = seed.get("seed", start.get("seed"))
        for suffix in ("", *_SIDECARS):
            try:
                path.with_name(DB_NAME + suffix).unlink(missing_ok=True)
            except OSError as error:
                raise ValueError(f"`out` {directory}: its run store without finished cells "
                                 f"cannot be replaced ({error.strerror or error}).") from None
        return _create(directory, {"identity": dict(identity), **start}, lock)
    if not resume:
        raise ValueError(
            f"`out` {directory} already holds a run; pass --resume to continue it or "
            "choose another directory.")
    stored = decode_metadata([r for r in rows if r[0] == "identity"], path)["identity"]
    wanted = json.loads(json.dumps(identity))
    if stored != wanted:
        differs = sorted(k for k in set(stored) | set(wanted) if stored.get(k) != wanted.get(k))
        raise ValueError(
            f"`out` {directory} holds a different run (differs in {', '.join(differs)}); "
            "nothing was changed.")
    stored_seed = decode_metadata([r for r in rows if r[0] == "seed"], path).get("seed")
    if seed is not None and stored_seed is not None and int(stored_seed) != seed:
        raise ValueError(f"`seed` must match the run being resumed ({stored_seed}); got "
                         f"{seed}.")
    db: sqlite3.Connection | None = None
    try:
        with _sqlite_errors("out", directory, "opened for writing"):
            db = _connect(path)
            with db:  # a store made before the groups table existed gains it
                for statement in _SCHEMA:
                    db.execute(statement)
    except BaseException:
        if db is not None:
            db.close()
        raise
    return RunStore(db, directory, name="out", lock=lock)


def _create(directory: Path, metadata: Mapping[str, Any], lock: RunLock) -> RunStore:
    """A new store holding ``metadata``: schema and metadata in one transaction."""
    path = directory / DB_NAME
    db: sqlite3.Connection | None = None
    try:
        db = _connect(path)
        with db:
            db.execute("BEGIN")
            for statement in _SCHEMA:
                db.execute(statement)
            db.executemany("INSERT INTO run (key, value) VALUES (?, ?)",
                           [(k, json.dumps(v)) for k, v in metadata.items()])
    except (OSError, sqlite3.Error) as error:
        if db is not None:
            db.close()
        reason = getattr(error, "strerror", None) or error
        raise ValueError(f"`out` {directory} cannot hold a run store: {reason}.") from None
    return RunStore(db, directory, name="out", lock=lock, created=True)
