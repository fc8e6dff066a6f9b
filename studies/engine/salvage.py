"""Salvage: copy every readable row of a damaged run store into a new run directory.

A store damaged on disk (a bad sector, a bad copy, a file written over) still holds pages SQLite
can read. `salvage` reads each table of the old store (``run``, then ``cells``, then ``groups``)
row by row: first in rowid order, stepping over a damaged stretch by seeking further (rowid by
rowid, then doubling the step and halving back to the first rowid that can be sought again),
then every other rowid the table's primary-key index lists (the index lives on pages of its
own). A row SQLite cannot read, or whose values cannot be decoded (a Monte Carlo cell's
estimates archive included, whose checksums see damage inside a blob that SQLite cannot), is
lost. The index, when it can be read, tells how many rows were lost; otherwise the rowids
stepped over estimate it. The rows read are written to a new store with the run's identity,
seed and grids (without which no run could continue from them) and the status ``salvaged``:
``study run ... --resume --out NEWDIR`` then computes the lost cells again, and since each
cell's random stream depends only on the root seed and its parameters, the finished run equals
an uninterrupted one. The damaged store is only read.

References
----------
SQLite, "Recovering data from a corrupt database" (https://sqlite.org/recovery.html): the
same idea (the ``.recover`` command of the ``sqlite3`` shell, which Python's module lacks).
"""

from __future__ import annotations

import io
import itertools
import json
import os
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studies.engine.reading import decoded_row
from studies.engine.results import CellResult, PackedGroup, now
from studies.engine.store import (
    CELL_COLUMNS,
    DB_NAME,
    GROUP_COLUMNS,
    decode_metadata,
    open_store,
    read_only,
)

__all__ = ["Salvaged", "salvage"]

TABLES = ("run", "cells", "groups")
_COLUMNS: dict[str, tuple[str, ...]] = {
    "run": ("key", "value"), "cells": CELL_COLUMNS, "groups": GROUP_COLUMNS}
# The metadata a run cannot continue without.
REQUIRED = ("identity", "seed", "grids")
_BATCH = 64  # rows per transaction of the new store
_LAST_ROWID = 2**63 - 1
_NEAR = 1024  # rowids past a damaged one tried one by one


@dataclass(frozen=True)
class Salvaged:
    """What `salvage` copied.

    Attributes
    ----------
    directory : Path
        The new run directory.
    saved, lost : dict of str to int
        Rows copied and rows lost, per table (``run``, ``cells``, ``groups``).
    estimated : tuple of str
        Tables whose index could not be read either: their ``lost`` counts the rowids stepped
        over, an estimate (rowids are dense, but a damaged stretch at the end goes unseen).
    identity : dict
        The run's identity (its studies, grid and methods: what a resume must give).
    """

    directory: Path
    saved: Mapping[str, int]
    lost: Mapping[str, int]
    estimated: tuple[str, ...]
    identity: Mapping[str, Any]

    def describe(self) -> str:
        """Rows saved and lost per table, in one line."""
        return "; ".join(f"{table}: {self.saved[table]} rows saved, {self._lost(table)} lost"
                         for table in TABLES)

    def _lost(self, table: str) -> str:
        return f"about {self.lost[table]}" if table in self.estimated else str(self.lost[table])


def salvage(directory: str | os.PathLike[str], out: str | os.PathLike[str]) -> Salvaged:
    """Copy every readable row of the run store in ``directory`` into a new store in ``out``.

    Parameters
    ----------
    directory : path
        A run directory whose store is damaged (an intact one is copied whole).
    out : path
        A new or empty directory for the salvaged run.

    Returns
    -------
    Salvaged
        Rows saved and lost per table.

    Raises
    ------
    ValueError
        If ``directory`` holds no run store, SQLite cannot read its schema or the metadata a
        run needs (identity, seed, grids), or ``out`` is not a new or empty directory; nothing
        is written then.
    """
    source, target = Path(directory), Path(out)
    path = source / DB_NAME
    if not path.is_file():
        raise ValueError(f"`directory` must hold an evalcert run ({DB_NAME}); got {source}.")
    if target.exists() and not (target.is_dir() and not any(target.iterdir())):
        raise ValueError(f"`out` must be a new or empty directory; got {target}.")
    db = read_only(path)
    try:
        return _copy(db, path, target)
    finally:
        db.close()


def _copy(db: sqlite3.Connection, path: Path, target: Path) -> Salvaged:
    """`salvage` from the open damaged store ``db`` (at ``path``)."""
    try:
        tables = {str(r[0]) for r in db.execute("SELECT name FROM sqlite_master WHERE "
                                                 "type = 'table'")}
    except sqlite3.DatabaseError as error:
        raise ValueError(f"`directory` {path.parent} cannot be salvaged: SQLite cannot read "
                         f"the schema of {path} ({error}); nothing was written.") from None
    present = [table for table in TABLES if table in tables]
    listed = {table: _listed(db, table) for table in present}
    saved = dict.fromkeys(TABLES, 0)
    failed = dict.fromkeys(TABLES, 0)  # rows not read, or read but not decoded
    kept: dict[str, set[int]] = {table: set() for table in TABLES}

    metadata: dict[str, Any] = {}
    for rowid, row in _rows(db, "run", listed.get("run"), failed) if "run" in tables else ():
        try:
            metadata.update(decode_metadata([(row["key"], row["value"])], path))
        except ValueError:
            failed["run"] += 1
            continue
        kept["run"].add(rowid)
    missing = [key for key in REQUIRED if key not in metadata]
    if missing:
        raise ValueError(
            f"`directory` {path.parent} cannot be salvaged: its metadata "
            f"{', '.join(f'`{k}`' for k in missing)} cannot be read, and no run can continue "
            "from its cells without them; nothing was written.")
    # read together, the grids must cover the identity's studies
    decode_metadata([(k, json.dumps(v)) for k, v in metadata.items()], path)
    saved["run"] = len(kept["run"])
    start = {k: v for k, v in metadata.items() if k != "identity"}
    store = open_store(target, metadata["identity"], resume=False,
                       start={**start, "status": "salvaging"})
    try:
        for table, decode, put in (("cells", _whole_cell, store.put_cells),
                                   ("groups", PackedGroup.from_row, store.put_groups)):
            if table not in tables:
                continue
            batch: list[dict[str, Any]] = []
            for rowid, row in _rows(db, table, listed[table], failed):
                try:
                    decoded_row(decode, row, table, store)
                except ValueError:
                    failed[table] += 1
                    continue
                batch.append(row)
                kept[table].add(rowid)
                if len(batch) == _BATCH:
                    put(batch)
                    batch = []
            put(batch)
            saved[table] = len(kept[table])
        lost = {table: len(found - kept[table]) if (found := listed.get(table)) is not None
                else failed[table] for table in TABLES}
        estimated = tuple(t for t in present if listed[t] is None)
        store.set_metadata(status="salvaged", salvaged={
            "from": str(path.parent), "at": now(), "saved": saved, "lost": lost,
            "estimated": list(estimated)})
    finally:
        store.close()
    return Salvaged(target, saved, lost, estimated, dict(metadata["identity"]))


def _whole_cell(row: Mapping[str, Any]) -> CellResult:
    """A cells row decoded, its estimates read whole (the archive's checksums checked).

    SQLite cannot see damage inside a blob; a cell whose estimates are damaged is left to be
    computed again.
    """
    cell = CellResult.from_row(row)
    if cell.estimates:
        with np.load(io.BytesIO(cell.estimates)) as data:
            for name in data.files:
                data[name]
    return cell


def _rows(db: sqlite3.Connection, table: str, listed: set[int] | None,
          failed: dict[str, int]) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(rowid, row)`` of every row of ``table`` SQLite can read.

    The rows the table's own pages lead to (`_rowids`), then those only its index lists
    (``listed``: the table may be damaged where the index is not). A row whose values cannot
    be read counts in ``failed``.
    """
    columns = _COLUMNS[table]
    quoted = ", ".join(f'"{c}"' for c in columns)
    select = f"SELECT {quoted} FROM {table} WHERE rowid = ?"
    seen: set[int] = set()
    for rowid, skipped in itertools.chain(_rowids(db, table),
                                          ((r, 0) for r in sorted(listed or ()))):
        failed[table] += skipped  # rowids stepped over: rows lost, as rowids are dense
        if rowid in seen:
            continue
        seen.add(rowid)
        try:
            values = db.execute(select, (rowid,)).fetchone()
        except sqlite3.DatabaseError:
            values = None
        if values is None:
            failed[table] += 1
        else:
            yield rowid, dict(zip(columns, values, strict=True))


def _rowids(db: sqlite3.Connection, table: str) -> Iterator[tuple[int, int]]:
    """The rowids SQLite can seek to, in order, stepping over damaged stretches.

    Each comes with the number of rowids stepped over to reach it (0 but after damage).
    """
    after = 0  # SQLite numbers rows from 1 (the store never sets a rowid)
    while True:
        ok, rowid = _probe(db, table, after + 1)
        if not ok:
            rowid = _next_readable(db, table, after)
        if rowid is None or rowid <= after:  # the end (or a page that lies about its order)
            return
        yield rowid, 0 if ok else rowid - after - 1
        after = rowid


def _probe(db: sqlite3.Connection, table: str, at: int) -> tuple[bool, int | None]:
    """Whether SQLite can seek to ``at`` in ``table``, and the first rowid there if so."""
    try:
        found = db.execute(f"SELECT rowid FROM {table} WHERE rowid >= ? ORDER BY rowid LIMIT 1",
                           (at,)).fetchone()
    except sqlite3.DatabaseError:
        return False, None
    return True, None if found is None else int(found[0])


def _next_readable(db: sqlite3.Connection, table: str, after: int) -> int | None:
    """The first rowid past ``after`` that can be sought again, beyond a damaged stretch.

    Rowids are dense (a run appends its rows), so the next `_NEAR` rowids are tried one by
    one; then the step doubles until a seek lands beyond the damage, and halves back.
    """
    for at in range(after + 1, min(after + _NEAR, _LAST_ROWID) + 1):
        ok, first = _probe(db, table, at)
        if ok:
            return first
    low, step = after + _NEAR, _NEAR
    while True:
        high = min(low + step, _LAST_ROWID)
        ok, first = _probe(db, table, high)
        if ok:
            break
        if high == _LAST_ROWID:
            return None
        low, step = high, step * 2
    while high - low > 1:
        middle = (low + high) // 2
        ok, found = _probe(db, table, middle)
        if ok:
            high, first = middle, found
        else:
            low = middle
    return first


def _listed(db: sqlite3.Connection, table: str) -> set[int] | None:
    """The rowids the table's primary-key index lists (None: it cannot be read either)."""
    try:
        return {int(r[0]) for r in db.execute(
            f"SELECT rowid FROM {table} INDEXED BY sqlite_autoindex_{table}_1")}
    except sqlite3.DatabaseError:
        return None
