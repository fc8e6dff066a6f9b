"""The run store: one SQLite database (WAL mode) per run directory.

Table ``run`` holds the run's metadata as JSON values (identity: studies and versions, grid,
root seed, user methods, path; package versions, git commit, start and end times, status).
Table ``cells`` holds one row per finished cell, committed as the cell (or the group of
exact-path cells analysed together) finishes, so a run killed at any moment loses at most the
cells in flight. Exact-path rows have empty ``estimates`` (see `studies.engine.tasks`). Table
``groups`` holds one row per finished packed group (`studies.engine.design.Study.pack_groups`): its
shared parameter values, the other axes, and every cell's measures as packed arrays. Only the
coordinating process writes.

References
----------
SQLite, "Write-Ahead Logging" (https://sqlite.org/wal.html): with ``synchronous=NORMAL`` a
committed transaction survives an application crash (not necessarily a power loss).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["DB_NAME", "RunStore", "existing_store", "open_store"]

DB_NAME = "run.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS run (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cells (
    study TEXT NOT NULL, key TEXT NOT NULL, position INTEGER NOT NULL, params TEXT NOT NULL,
    path TEXT NOT NULL, performance TEXT NOT NULL, errors TEXT NOT NULL,
    estimates BLOB NOT NULL, seconds REAL NOT NULL, finished TEXT NOT NULL,
    PRIMARY KEY (study, key)
);
CREATE TABLE IF NOT EXISTS groups (
    study TEXT NOT NULL, key TEXT NOT NULL, position INTEGER NOT NULL, cells INTEGER NOT NULL,
    shared TEXT NOT NULL, axes TEXT NOT NULL, "values" BLOB NOT NULL, errors TEXT NOT NULL,
    seconds REAL NOT NULL, finished TEXT NOT NULL,
    PRIMARY KEY (study, key)
);
"""


class RunStore:
    """An open run database; rows are plain dicts (the engine turns them into results)."""

    def __init__(self, connection: sqlite3.Connection, directory: Path) -> None:
        self._db = connection
        self.directory = directory

    def metadata(self) -> dict[str, Any]:
        """All metadata, decoded."""
        return {k: json.loads(v) for k, v in self._db.execute("SELECT key, value FROM run")}

    def set_metadata(self, **values: Any) -> None:
        """Insert or replace metadata entries, in one transaction."""
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO run (key, value) VALUES (?, ?)",
                [(k, json.dumps(v)) for k, v in values.items()])

    def finished_keys(self) -> set[tuple[str, str]]:
        """``(study, key)`` of every finished cell and packed group."""
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
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO cells (study, key, position, params, path, performance,"
                " errors, estimates, seconds, finished) VALUES (:study, :key, :position,"
                " :params, :path, :performance, :errors, :estimates, :seconds, :finished)",
                [dict(row) for row in rows])

    def put_groups(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Commit finished packed groups in one transaction."""
        if not rows:
            return
        with self._db:
            self._db.executemany(
                'INSERT OR REPLACE INTO groups (study, key, position, cells, shared, axes,'
                ' "values", errors, seconds, finished) VALUES (:study, :key, :position,'
                ' :cells, :shared, :axes, :values, :errors, :seconds, :finished)',
                [dict(row) for row in rows])

    def groups(self) -> list[dict[str, Any]]:
        """Every finished packed group, by study and grid position of its first cell."""
        if not self._has_groups():
            return []
        cursor = self._db.execute('SELECT study, key, position, cells, shared, axes, "values",'
                                  " errors, seconds, finished FROM groups"
                                  " ORDER BY study, position")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor]

    def finished_cells(self) -> dict[str, int]:
        """Number of finished cells per study (a packed group counts its cells)."""
        found: dict[str, int] = {}
        query = "SELECT study, COUNT(*) FROM cells GROUP BY study"
        if self._has_groups():
            query += " UNION ALL SELECT study, SUM(cells) FROM groups GROUP BY study"
        for study, count in self._db.execute(query):
            found[study] = found.get(study, 0) + int(count)
        return found

    def cells(self, *, with_estimates: bool = False) -> list[dict[str, Any]]:
        """Every finished cell, by study and grid position."""
        columns = "study, key, position, params, path, performance, errors, seconds, finished"
        if with_estimates:
            columns += ", estimates"
        cursor = self._db.execute(f"SELECT {columns} FROM cells ORDER BY study, position")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor]

    def cell_estimates(self, study: str, key: str) -> bytes | None:
        """The stored estimates of one cell (None: no such cell; empty: an exact cell)."""
        row = self._db.execute("SELECT estimates FROM cells WHERE study = ? AND key = ?",
                               (study, key)).fetchone()
        return None if row is None else bytes(row[0])

    def close(self) -> None:
        """Close the connection (WAL is checkpointed by SQLite)."""
        self._db.close()


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=30.0)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    return db


def _read_identity(path: Path) -> Any:
    """The stored identity, read-only; ValueError if the file is not a run store."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            db.execute("PRAGMA quick_check").fetchall()
            row = db.execute("SELECT value FROM run WHERE key = 'identity'").fetchone()
        finally:
            db.close()
    except sqlite3.DatabaseError as error:
        raise ValueError(
            f"`out` {path} is not a readable evalcert run store ({error}); nothing was "
            "changed.") from None
    if row is None:
        raise ValueError(f"`out` {path} holds no run metadata; nothing was changed.")
    return json.loads(row[0])


def existing_store(directory: Path) -> RunStore:
    """Open the run in ``directory`` for reading (``study status``).

    Raises
    ------
    ValueError
        If the directory holds no run store or the file is not a valid one.
    """
    path = Path(directory) / DB_NAME
    if not path.is_file():
        raise ValueError(f"`directory` must hold an evalcert run ({DB_NAME}); got {directory}.")
    _read_identity(path)
    return RunStore(sqlite3.connect(f"file:{path}?mode=ro", uri=True), Path(directory))


def open_store(directory: Path, identity: Mapping[str, Any], *, resume: bool) -> RunStore:
    """Create the run store in ``directory``, or reopen it with ``resume``.

    Raises
    ------
    ValueError
        If ``directory`` is a file or a non-empty directory without a run, holds a run and
        ``resume`` is false, holds a different run, holds a corrupt database, or cannot be
        created; nothing is written then.
    """
    directory = Path(directory)
    path = directory / DB_NAME
    if path.exists():
        stored = _read_identity(path)
        if not resume:
            raise ValueError(
                f"`out` {directory} already holds a run; pass --resume to continue it or "
                "choose another directory.")
        if stored != json.loads(json.dumps(identity)):
            differs = sorted(k for k in set(stored) | set(identity)
                             if stored.get(k) != json.loads(json.dumps(identity.get(k))))
            raise ValueError(
                f"`out` {directory} holds a different run (differs in {', '.join(differs)}); "
                "nothing was changed.")
        store = RunStore(_connect(path), directory)
        with store._db:  # a run stored before the groups table existed gains it
            store._db.executescript(_SCHEMA)
        return store
    if resume:
        raise ValueError(f"`out` {directory} holds no run to resume.")
    if directory.exists() and not directory.is_dir():
        raise ValueError(f"`out` must be a directory; got {directory}, which is a file.")
    if directory.exists() and any(directory.iterdir()):
        raise ValueError(
            f"`out` {directory} is not empty and holds no evalcert run; choose another "
            "directory.")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        connection = _connect(path)
    except (OSError, sqlite3.Error) as error:
        reason = getattr(error, "strerror", None) or error
        raise ValueError(f"`out` {directory} cannot hold a run store: {reason}.") from None
    store = RunStore(connection, directory)
    with store._db:
        store._db.executescript(_SCHEMA)
    store.set_metadata(identity=dict(identity))
    return store
