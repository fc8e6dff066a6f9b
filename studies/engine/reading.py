"""Reading results back: from finished tasks, or from a run directory's store.

`read_run` opens a run's store once for everything the tables, claims and report of the run
need (`StoredRun`: metadata, progress, results); `results_from_store` and `run_state` read
the one thing each names.
"""

from __future__ import annotations

import functools
import json
import math
import os
import sqlite3
import threading
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from studies.engine.design import Study
from studies.engine.identity import RunIdentity, RunProvenance
from studies.engine.results import (
    CellResult,
    PackedGroup,
    RunResults,
    StudyResult,
    read_npy,
    unpack_arrays,
)
from studies.engine.rounds import Look
from studies.engine.store import RunStore, damaged, existing_store, read_only

__all__ = ["RunHead", "RunState", "StoredArrays", "StoredRun", "decoded_row", "group_results",
           "read_head", "read_run",
           "read_store", "release_held_connections", "results_from_store", "run_state"]

T = TypeVar("T")


def read_store(store: RunStore, *, study: str | None = None, with_estimates: bool = False
               ) -> list[CellResult | PackedGroup]:
    """Every finished cell and packed group in an open run store (``study``: its only).

    A packed group's arrays stay in the store and are read when used (`StoredArrays`); a
    cell's estimates are read only ``with_estimates`` (a later round extends them).

    Raises
    ------
    ValueError
        When a row cannot be decoded (the store is damaged; `studies.engine.store.damaged`).
    """
    # the groups of a grid share their axes: each distinct text is decoded once, and its
    # groups share the one (read-only) mapping (coverage_proportion's full grid: 1,000 groups
    # of one 8 KB text, 33 KB each decoded; benchmarks/bench_reading.py: 1.04x without)
    axes = functools.lru_cache(maxsize=64)(json.loads)
    return [*(decoded_row(CellResult.from_row, r, "cells", store)
              for r in store.cells(study=study, with_estimates=with_estimates)),
            *(decoded_row(functools.partial(_stored_group, store, axes), r, "groups", store)
              for r in store.groups(study=study, values=False))]


def _stored_group(store: RunStore, axes: Callable[[str], Any], row: Mapping[str, Any]
                  ) -> PackedGroup:
    with store.group_arrays(row["rowid"]) as blob:
        positions, _ = unpack_arrays(blob, values=False)
    return PackedGroup(study=row["study"], key=row["key"], shared=json.loads(row["shared"]),
                       axes=axes(row["axes"]), positions=positions,
                       values=StoredArrays(store.path, row["study"], row["key"]),
                       errors=json.loads(row["errors"]), seconds=row["seconds"])


class StoredArrays(Mapping[str, Mapping[str, NDArray[np.float64]]]):
    """A stored packed group's ``values[method][measure]``, read from its store when used.

    A grid of millions of packed cells (1.9 GB of arrays for ``coverage_proportion``'s full
    grid) is not held in memory: a reader reads each group's arrays as it comes to it, and
    only the rows of the methods and measures it asks for (a claim about one method of
    twelve reads a twenty-fourth of the grid). The rows of the group read last are kept, so
    readers taking one group in turn read each row once.
    """

    def __init__(self, path: Path, study: str, key: str) -> None:
        # absolute: read from another directory or process all the same
        self._ident = (Path(path).absolute(), study, key)
        self._file = _file(self._ident[0])

    def _checked(self) -> tuple[Path, tuple[Path, int, int], str, str]:
        path, study, key = self._ident
        try:
            now = _file(path)
        except OSError:
            now = None
        if now != self._file:  # a store written again at the same path holds other results
            raise ValueError(f"the run store {path} that study {study!r}'s results were read "
                             "from no longer exists; read them again from where it is now.")
        return path, self._file, study, key

    def _read(self, what: Callable[[], T]) -> T:
        try:
            return what()
        except (sqlite3.Error, ValueError, OSError) as error:
            path, study, key = self._ident
            raise damaged("directory", path.parent, f"the arrays of study {study!r}'s group "
                          f"{key!r} cannot be read: {type(error).__name__}: {error}") from None

    def _layout(self, checked: tuple[Path, tuple[Path, int, int], str, str] | None = None
                ) -> _Layout:
        checked = checked or self._checked()  # a store moved away is not a damaged one
        return self._read(lambda: _layout(*checked))

    def row(self, method: str, measure: str) -> NDArray[np.float64]:
        """The values of ``method``'s ``measure`` in every cell (read-only)."""
        held = _last_rows.get((self._file, *self._ident[1:]))
        if held is not None and (method, measure) in held:  # read from this very file
            return held[method, measure]
        ident = self._checked()
        layout = self._layout(ident)
        if held is None:
            _last_rows.clear()
            held = _last_rows.setdefault(ident[1:], {})
        held[method, measure] = self._read(lambda: _read_row(ident, layout, method, measure))
        return held[method, measure]

    def load(self) -> dict[str, dict[str, NDArray[np.float64]]]:
        """Every row at once (one read of the group's blob), kept as the group read last."""
        ident = self._checked()
        found = self._read(lambda: _read_all(ident, self._layout(ident)))
        _last_rows.clear()
        _last_rows[ident[1:]] = {(m, k): v for m, rows in found.items() for k, v in rows.items()}
        return found

    def __getitem__(self, method: str) -> Mapping[str, NDArray[np.float64]]:
        return _StoredRows(self, method, tuple(self._layout().rows[method]))

    def __iter__(self) -> Iterator[str]:
        return iter(self._layout().rows)

    def __len__(self) -> int:
        return len(self._layout().rows)


class _StoredRows(Mapping[str, NDArray[np.float64]]):
    """One method's measures of a stored group, each read when used."""

    def __init__(self, arrays: StoredArrays, method: str, measures: tuple[str, ...]) -> None:
        self._arrays, self._method, self._measures = arrays, method, measures

    def __getitem__(self, measure: str) -> NDArray[np.float64]:
        if measure not in self._measures:
            raise KeyError(measure)
        return self._arrays.row(self._method, measure)

    def __iter__(self) -> Iterator[str]:
        return iter(self._measures)

    def __len__(self) -> int:
        return len(self._measures)


@dataclass(frozen=True)
class _Layout:
    """Where a stored group's rows of values lie in its blob (`pack_arrays`)."""

    rowid: int
    rows: Mapping[str, Mapping[str, int]]  # method -> measure -> row
    offset: int  # of the first row; -1: an .npz archive, read whole
    cells: int
    dtype: np.dtype[Any]


def _file(path: Path) -> tuple[Path, int, int]:
    """Which file ``path`` is: a store removed and written again there is another."""
    found = os.stat(path)
    return path, found.st_dev, found.st_ino


@functools.lru_cache(maxsize=4096)
def _layout(path: Path, file: tuple[Path, int, int], study: str, key: str) -> _Layout:
    """The layout of a stored group's values, read from the heads of its arrays.

    Kept per group: every row read needs it, and judging reads a group's rows many times
    (`benchmarks/bench_reading.py`, coverage_proportion's full grid read back and judged in
    one process: 62 s as is, 109 s reading the heads at every row).
    """
    db = _connection(path, file)
    row = db.execute("SELECT rowid FROM groups WHERE study = ? AND key = ?",
                     (study, key)).fetchone()
    if row is None:
        raise ValueError("the group is not in the store")
    with db.blobopen("groups", "values", row[0], readonly=True) as blob:
        if blob.read(2) == b"PK":  # written before the arrays were laid out in a row
            blob.seek(0)
            found = unpack_arrays(blob)[1]
            return _Layout(row[0], {m: {k: i for i, k in enumerate(v)} for m, v in found.items()},
                           -1, 0, np.dtype(np.float64))
        blob.seek(0)
        shape, dtype = _npy_head(blob)
        blob.seek(math.prod(shape) * dtype.itemsize, os.SEEK_CUR)
        names = read_npy(blob).tolist()
        shape, dtype = _npy_head(blob)
        offset = blob.tell()
    rows: dict[str, dict[str, int]] = {}
    for i, name in enumerate(names):
        method, _, measure = name.rpartition("/")
        rows.setdefault(method, {})[measure] = i
    return _Layout(row[0], rows, offset, int(shape[1]) if len(shape) == 2 else 0, dtype)


def _npy_head(source: Any) -> tuple[tuple[int, ...], np.dtype[Any]]:
    version = np.lib.format.read_magic(source)
    header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
              else np.lib.format.read_array_header_2_0)
    shape, fortran, dtype = header(source)
    if fortran or dtype.hasobject:
        raise ValueError("a stored group's values are a C-ordered array of numbers")
    return shape, dtype


def _read_all(ident: tuple[Path, tuple[Path, int, int], str, str], layout: _Layout
              ) -> dict[str, dict[str, NDArray[np.float64]]]:
    with _connection(ident[0], ident[1]).blobopen("groups", "values", layout.rowid,
                                                  readonly=True) as blob:
        return unpack_arrays(blob)[1]


def _read_row(ident: tuple[Path, tuple[Path, int, int], str, str], layout: _Layout,
              method: str, measure: str) -> NDArray[np.float64]:
    """One row of a stored group's values (an .npz archive is read whole for it)."""
    size = layout.cells * layout.dtype.itemsize
    with _connection(ident[0], ident[1]).blobopen("groups", "values", layout.rowid,
                                                  readonly=True) as blob:
        if layout.offset < 0:
            return unpack_arrays(blob)[1][method][measure]
        blob.seek(layout.offset + layout.rows[method][measure] * size)
        data = blob.read(size)
    if len(data) != size:
        raise ValueError("a stored group's values are cut short")
    return np.frombuffer(data, dtype=layout.dtype)


def _connection(path: Path, file: tuple[Path, int, int]) -> sqlite3.Connection:
    """A read-only connection to ``path`` (the file ``file``), kept for the thread's next read.

    Opening a connection reads the schema again: a reader taking a grid's thousand groups in
    turn would spend more on that than on the arrays (`benchmarks/bench_reading.py`:
    coverage_proportion's full grid read back and judged in 62 s, 72 s with a connection
    opened for each read). A connection outside a statement holds no snapshot, so each read
    sees the store as it is.
    """
    held = getattr(_held, "connection", None)
    current = held is not None and held[2] == _released[0]
    if current and held[0] == file:
        return held[1]
    db = read_only(path, check_same_thread=False)
    with _open_lock:
        if current:
            _open.remove(held[1])
            held[1].close()
        _open.append(db)
        _held.connection = (file, db, _released[0])
    return db


def release_held_connections() -> None:
    """Close the connection every thread of this process keeps for its next read, so that a
    run's store can be settled (`studies.engine.store.settle_store`); a later read opens a
    new one. Call it when no read is under way."""
    with _open_lock:
        _released[0] += 1
        connections = list(_open)
        _open.clear()
    for db in connections:
        db.close()


# the rows of the group read last: (file, study, key) -> (method, measure) -> values
_last_rows: dict[tuple[tuple[Path, int, int], str, str],
                 dict[tuple[str, str], NDArray[np.float64]]] = {}
_held = threading.local()
# every thread's held connection, and how many times they were released (a thread's held
# connection from before the last release is closed)
_open: list[sqlite3.Connection] = []
_open_lock = threading.Lock()
_released = [0]


def decoded_row(decode: Callable[[Mapping[str, Any]], T], row: Mapping[str, Any], table: str,
                store: RunStore) -> T:
    """``decode(row)``; a row it cannot decode is a ValueError saying the store is damaged."""
    try:
        return decode(row)
    except (ValueError, KeyError, TypeError, EOFError, OSError, zipfile.BadZipFile) as error:
        detail = (f"the {table} row of study {row.get('study')!r} at position "
                  f"{row.get('position')!r} cannot be decoded: {type(error).__name__}: {error}")
        raise damaged(store.name, store.directory, detail) from None


def group_results(finished: Iterable[CellResult | PackedGroup],
                  studies: Sequence[Study] | Sequence[str],
                  parameters: Mapping[str, Sequence[str]] | None = None, *,
                  directory: str | os.PathLike[str] | None = None,
                  looks: Mapping[str, int] | None = None) -> RunResults:
    """Finished cells and groups by study (in the order of ``studies``), each in grid order.

    ``parameters``: each study's grid parameters in grid order (`StudyResult.parameters`);
    ``directory``: the run directory they are stored in (`RunResults.directory`); ``looks``:
    each study's grid's rounds (`StudyResult.looks`; default 1).
    """
    names = [s if isinstance(s, str) else s.name for s in studies]
    cells: dict[str, list[CellResult]] = {name: [] for name in names}
    groups: dict[str, list[PackedGroup]] = {name: [] for name in names}
    for result in finished:
        if isinstance(result, PackedGroup):
            groups.setdefault(result.study, []).append(result)
        else:
            cells.setdefault(result.study, []).append(result)
    order = parameters or {}
    return RunResults(
        ((name, StudyResult(name, tuple(sorted(cells[name], key=lambda c: c.position)),
                            tuple(sorted(groups.get(name, ()),
                                         key=lambda g: int(g.positions[0]))),
                            tuple(order.get(name, ())), (looks or {}).get(name, 1)))
         for name in cells), directory=directory)


def results_from_store(directory: str | os.PathLike[str]) -> RunResults:
    """Every study's finished cells (and packed groups) from a run directory (read-only).

    Raises
    ------
    ValueError
        If ``directory`` holds no run store or the store is not readable.

    Examples
    --------
    >>> import tempfile
    >>> from studies.engine import run
    >>> out = tempfile.mkdtemp() + "/run"
    >>> _ = run(["studies.suite.binomial_coverage:STUDY"], rng=1, workers=1, out=out)
    >>> frame = results_from_store(out).to_frame()
    >>> frame.query("method == 'wald' and measure == 'coverage'").iloc[0, :9].to_dict()
    {'study': 'binomial_coverage', 'position': 0, 'n': 10, 'p': 0.05, 'confidence_level': 0.95,
     'method': 'wald', 'measure': 'coverage', 'value': 0.40023, 'mcse': 0.0}
    """
    return read_run(directory).results


@dataclass(frozen=True)
class RunState:
    """How far a stored run got: its recorded status and its finished cells per study.

    ``status`` is ``"complete"``, ``"interrupted"`` (stopped by Ctrl-C or an error) or
    ``"running or killed"`` (no end recorded: still running, or killed).
    """

    status: str
    finished: Mapping[str, int]
    total: Mapping[str, int]

    @property
    def complete(self) -> bool:
        """Whether the run ended normally with every cell of every study finished."""
        return self.status == "complete" and all(
            self.finished.get(name, 0) >= count for name, count in self.total.items())

    def describe(self) -> str:
        """One line: ``complete``, or how incomplete (cells finished of the grid's, status)."""
        if self.complete:
            return "complete"
        done, total = sum(self.finished.values()), sum(self.total.values())
        return (f"incomplete: {done:,} of {total:,} cells finished (status {self.status}); "
                "verdicts and tables cover the finished cells only")


def _state(identity: RunIdentity, provenance: RunProvenance, finished: Mapping[str, int]
           ) -> RunState:
    return RunState(provenance.status, finished, identity.cells())


@dataclass(frozen=True)
class RunHead:
    """A run directory's record, read once without its cells: what the run is, where it ran,
    how far it got, and its looks at the claims.

    Attributes
    ----------
    directory : Path
        The run directory.
    identity : RunIdentity
        Studies and versions, grid, each study's grid, root seed, user methods, path.
    provenance : RunProvenance
        Command, Python, packages, git commit, start, end, status, resumes.
    state : RunState
        Its status and finished cells.
    looks : tuple of Look
        Its looks at the claims after each round (`studies.engine.rounds`), by study and
        round; empty for a run whose grids have one round.
    """

    directory: Path
    identity: RunIdentity
    provenance: RunProvenance
    state: RunState
    looks: tuple[Look, ...]


@dataclass(frozen=True)
class StoredRun(RunHead):
    """A run directory as read once: its `RunHead` and its results.

    Attributes
    ----------
    results : RunResults
        Every finished cell and packed group.
    """

    results: RunResults


def read_head(directory: str | os.PathLike[str]) -> RunHead:
    """The record of the run in ``directory`` without its cells (ValueError if it holds no
    run), its store opened once."""
    store = existing_store(Path(directory))
    try:
        return _head(store, Path(directory))
    finally:
        store.close()


def _head(store: RunStore, directory: Path) -> RunHead:
    meta = store.metadata()
    identity, provenance = RunIdentity.from_metadata(meta), RunProvenance.from_metadata(meta)
    looks = tuple(Look.from_row(row) for row in store.rounds())
    return RunHead(directory, identity, provenance,
                   _state(identity, provenance, store.finished_cells()), looks)


def run_state(directory: str | os.PathLike[str]) -> RunState:
    """The `RunState` of the run in ``directory`` (ValueError if it holds no run)."""
    return read_head(directory).state


def read_run(directory: str | os.PathLike[str], *,
             results: Mapping[str, StudyResult] | None = None) -> StoredRun:
    """The run in ``directory``, its store opened once (ValueError if it holds no run).

    ``results``: the run's results already in memory (what `run` returned); then only the
    record and progress are read, not every cell again.
    """
    store = existing_store(Path(directory))
    try:
        head = _head(store, Path(directory))
        rows = read_store(store) if results is None else None
    finally:
        store.close()
    identity = head.identity
    if rows is not None:
        results = group_results(rows, list(identity.studies), identity.parameters(),
                                directory=directory, looks=identity.rounds())
    elif not isinstance(results, RunResults) or results.directory is None:
        results = RunResults(results, directory=directory)
    return StoredRun(head.directory, identity, head.provenance, head.state, head.looks,
                     results)
