"""Finished cells and groups, one study's results, and a run's results as a tidy table.

A Monte Carlo or exact-path cell finishes as a `CellResult`; a packed group of exact cells
(`studies.engine.design.Study.pack_groups`) as a `PackedGroup` holding every cell's measures as
arrays. `StudyResult` holds one study's finished cells and groups in grid order; `RunResults`
maps study names to them. Both export the tidy frame that rsimsum and SimDesign users expect:
one row per (study, cell, method, measure) with the cell's parameters as columns, ``value``,
``mcse``, ``path`` (``exact`` or ``monte-carlo``) and ``n_replicates`` (missing on the exact
path). Packed groups expand into the same rows group by group (`StudyResult.frames`), so a
grid of millions of cells can be read in chunks.
"""

from __future__ import annotations

import ast
import dataclasses
import io
import itertools
import json
import math
import os
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from studies.engine import replicates, seeding
from studies.engine.performance import Performance, exact_cells
from studies.engine.regions import region_mask

__all__ = ["FRAME_COLUMNS", "REGION_GROUPS", "CellResult", "PackedGroup", "RunResults",
           "StudyResult", "cell_params", "group_regions", "now", "pack_arrays", "unpack_arrays"]

# The columns of a tidy frame besides the cell's parameters (which come after ``position``).
FRAME_COLUMNS: tuple[str, ...] = (
    "study", "position", "method", "measure", "value", "mcse", "path", "n_replicates")
REGION_GROUPS = 100  # packed groups whose cells one query selects at once


def now() -> str:
    """The current UTC time, as the run store records it."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def cell_params(shared: Mapping[str, Any], axes: Mapping[str, Sequence[Any]]
                ) -> list[dict[str, Any]]:
    """The cells of a packed group: ``shared`` values with the product of ``axes`` (grid order)."""
    names = [*shared, *axes]
    return [dict(zip(names, (*shared.values(), *values), strict=True))
            for values in itertools.product(*axes.values())]


@dataclass(frozen=True)
class CellResult:
    """One finished cell: performance per method, the errors of methods that failed.

    ``estimates`` holds a Monte Carlo cell's packed estimates (empty on the exact path, where
    they follow from the group's parameters); ``seconds`` is an exact cell's share of its
    group's time.
    """

    study: str
    key: str
    position: int
    params: Mapping[str, Any]
    path: str
    performance: Mapping[str, Performance]
    errors: Mapping[str, str]
    estimates: bytes = field(repr=False)
    seconds: float = 0.0

    def to_row(self) -> dict[str, Any]:
        """The run-store row."""
        return {
            "study": self.study, "key": self.key, "position": self.position,
            "params": json.dumps(dict(self.params)), "path": self.path,
            "performance": json.dumps({m: p.to_dict() for m, p in self.performance.items()}),
            "errors": json.dumps(dict(self.errors)), "estimates": self.estimates,
            "seconds": self.seconds, "finished": now(),
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> CellResult:
        """Inverse of `to_row` (estimates only when the row has them)."""
        return cls(
            study=row["study"], key=row["key"], position=row["position"],
            params=json.loads(row["params"]), path=row["path"],
            performance={m: Performance.from_dict(p)
                         for m, p in json.loads(row["performance"]).items()},
            errors=json.loads(row["errors"]), estimates=row.get("estimates", b""),
            seconds=row["seconds"])


@dataclass(frozen=True)
class PackedGroup:
    """A finished packed group: every cell's exact measures as arrays (one stored row).

    ``values[method][measure]`` has one value per cell, in the order of `params` (grid
    order); every MCSE is 0. ``seconds`` is the group's time.
    """

    study: str
    key: str
    shared: Mapping[str, Any]
    axes: Mapping[str, Sequence[Any]]
    positions: NDArray[np.int64] = field(repr=False)
    values: Mapping[str, Mapping[str, NDArray[np.float64]]] = field(repr=False)
    errors: Mapping[str, str]
    seconds: float = 0.0

    @property
    def size(self) -> int:
        """Number of cells (the product of the axes' lengths)."""
        return math.prod(len(v) for v in self.axes.values())

    def column(self, name: str) -> NDArray[Any]:
        """Parameter ``name`` of every cell (a shared one repeated), one entry per cell.

        A parameter holding lists gives an object array of those lists.
        """
        levels, codes = self.coded(name)
        return levels[codes]

    def coded(self, name: str) -> tuple[NDArray[Any], NDArray[np.intp]]:
        """Parameter ``name`` as its distinct values and each cell's index into them."""
        if name in self.shared:
            return _levels([self.shared[name]]), np.zeros(self.size, dtype=np.intp)
        names = list(self.axes)
        shape = [len(v) for v in self.axes.values()]
        axis = names.index(name)
        index = np.arange(shape[axis]).reshape([-1 if i == axis else 1 for i in range(len(shape))])
        return _levels(self.axes[name]), np.broadcast_to(index, shape).ravel()

    def cells(self) -> tuple[CellResult, ...]:
        """The group as `CellResult` objects (small grids: tests, `StudyResult.rows`)."""
        params = cell_params(self.shared, self.axes)
        perf = {m: exact_cells(found, self.size) for m, found in self.values.items()}
        seconds = self.seconds / max(self.size, 1)
        return tuple(
            CellResult(study=self.study, key=seeding.cell_key(self.study, cell),
                       position=int(position), params=cell, path="exact",
                       performance={m: p[i] for m, p in perf.items()}, errors=self.errors,
                       estimates=b"", seconds=seconds)
            for i, (position, cell) in enumerate(zip(self.positions, params, strict=True)))

    def to_frame(self, *, methods: Collection[str] | None = None,
                 measures: Collection[str] | None = None,
                 cells: NDArray[np.intp] | None = None) -> pd.DataFrame:
        """The group's tidy rows (`StudyResult.to_frame`), built from its arrays.

        Only the rows of ``methods`` and ``measures``, and of the cells at the indices
        ``cells`` (in the group's order), when given.
        """
        return _packed_frame([self._columns(methods, measures, cells)])

    def _columns(self, methods: Collection[str] | None, measures: Collection[str] | None,
                 cells: NDArray[np.intp] | None) -> dict[str, Any]:
        """The arrays of `to_frame`'s columns up to ``value``; a parameter, method or
        measure column as its distinct values and each row's index into them."""
        values = self.values
        pieces = [(method, measure, found[measure]) for method, found in values.items()
                  if methods is None or method in methods
                  for measure in found if measures is None or measure in measures]
        chosen = np.arange(self.size) if cells is None else np.asarray(cells, dtype=np.intp)
        k, size = len(pieces), chosen.size
        columns: dict[str, Any] = {"study": (_levels([self.study]), np.zeros(size * k, np.intp)),
                                   "position": np.repeat(self.positions[chosen], k)}
        for name in [*self.shared, *self.axes]:
            levels, codes = self.coded(name)
            columns[name] = (levels, np.repeat(codes[chosen], k))
        tiled = np.tile(np.arange(k), size)
        columns["method"] = (np.array([p[0] for p in pieces], dtype=str), tiled)
        columns["measure"] = (np.array([p[1] for p in pieces], dtype=str), tiled)
        columns["value"] = (np.stack([p[2][chosen] for p in pieces], axis=1).ravel() if pieces
                            else np.empty(0))
        return columns

    def loaded(self) -> PackedGroup:
        """The group with its arrays in memory (itself, unless they are read from a store)."""
        if isinstance(self.values, dict):
            return self
        load = getattr(self.values, "load", None)  # a stored group: read in one piece
        return dataclasses.replace(self, values=load() if load is not None else {
            m: dict(found) for m, found in self.values.items()})

    def __reduce__(self) -> tuple[Any, ...]:
        # a group's cells are consecutive in grid order: sent to another process as their
        # first position and count, not as one integer per cell (72 MB for a full grid)
        positions: Any = self.positions
        if positions.dtype == np.int64 and positions.size and np.array_equal(
                positions, np.arange(positions[0], positions[0] + positions.size)):
            positions = (int(positions[0]), int(positions.size))
        return (_unpickled_group, (self.study, self.key, self.shared, self.axes, positions,
                                   self.values, self.errors, self.seconds))

    def region(self, where: str) -> NDArray[np.bool_]:
        """Which of the group's cells (in its order) the query ``where`` selects (`regions`)."""
        return group_regions([self], where)[0]

    def to_row(self) -> dict[str, Any]:
        """The run-store row (table ``groups``); its arrays as `pack_arrays` writes them."""
        return {"study": self.study, "key": self.key, "position": int(self.positions[0]),
                "cells": self.size, "shared": json.dumps(dict(self.shared)),
                "axes": json.dumps({k: list(v) for k, v in self.axes.items()}),
                "values": pack_arrays(self.positions, self.values),
                "errors": json.dumps(dict(self.errors)), "seconds": self.seconds,
                "finished": now()}

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> PackedGroup:
        """Inverse of `to_row`."""
        positions, values = unpack_arrays(io.BytesIO(row["values"]))
        return cls(study=row["study"], key=row["key"], shared=json.loads(row["shared"]),
                   axes=json.loads(row["axes"]), positions=positions, values=values,
                   errors=json.loads(row["errors"]), seconds=row["seconds"])


def _unpickled_group(study: str, key: str, shared: Mapping[str, Any],
                     axes: Mapping[str, Sequence[Any]], positions: Any,
                     values: Mapping[str, Mapping[str, NDArray[np.float64]]],
                     errors: Mapping[str, str], seconds: float) -> PackedGroup:
    """A `PackedGroup` sent to another process (``positions``: an array, or a range as
    (first, count))."""
    if isinstance(positions, tuple):
        positions = np.arange(positions[0], positions[0] + positions[1], dtype=np.int64)
    return PackedGroup(study, key, shared, axes, positions, values, errors, seconds)


def pack_arrays(positions: NDArray[np.int64],
                values: Mapping[str, Mapping[str, NDArray[np.float64]]]) -> bytes:
    """A packed group's arrays as stored: three ``.npy`` arrays one after the other.

    The cells' grid positions, the names ``method/measure`` and one row of values per name.
    Read in that order, the positions come first without the values (`unpack_arrays`).
    """
    names = [f"{m}/{k}" for m, found in values.items() for k in found]
    rows = [v for found in values.values() for v in found.values()]
    buffer = io.BytesIO()
    for array in (np.asarray(positions, dtype=np.int64), np.array(names, dtype=str),
                  np.stack(rows) if rows else np.empty((0, len(positions)))):
        np.lib.format.write_array(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def unpack_arrays(source: Any, *, values: bool = True
                  ) -> tuple[NDArray[np.int64], dict[str, dict[str, NDArray[np.float64]]]]:
    """The positions and ``values[method][measure]`` of a stored group (`pack_arrays`).

    ``source`` is a readable, seekable binary file (a ``BytesIO`` or an open SQLite blob).
    ``values=False`` reads the positions only (the values are returned empty). A store
    written before this layout holds an ``.npz`` archive, read whole.
    """
    head = source.read(2)
    source.seek(0)
    found: dict[str, dict[str, NDArray[np.float64]]] = {}
    if head == b"PK":
        with np.load(io.BytesIO(source.read())) as data:
            positions = data["positions"]
            for name in data.files if values else ():
                if name != "positions":
                    method, _, measure = name.rpartition("/")
                    found.setdefault(method, {})[measure] = data[name]
        return positions, found
    positions = read_npy(source)
    if values:
        names = read_npy(source)
        rows = read_npy(source)
        for name, row in zip(names.tolist(), rows, strict=True):
            method, _, measure = name.rpartition("/")
            found.setdefault(method, {})[measure] = row
    return positions, found


def read_npy(source: Any) -> NDArray[Any]:
    """The next ``.npy`` array of ``source``, its data read in one piece (read-only).

    `numpy.lib.format.read_array` reads a file object in small pieces and copies each one;
    an SQLite blob is read fastest whole, and the array is a view of those bytes.
    """
    version = np.lib.format.read_magic(source)
    header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
              else np.lib.format.read_array_header_2_0)
    shape, fortran, dtype = header(source)
    if dtype.hasobject:
        raise ValueError("a stored group's arrays hold no Python objects")
    data = source.read(math.prod(shape) * dtype.itemsize)
    return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")


def _text(levels: Sequence[str] | NDArray[Any], codes: NDArray[np.intp]) -> Any:
    """The string column ``levels[codes]`` with the dtype pandas infers for Python strings."""
    return pd.array(np.asarray(levels, dtype=object), dtype="str").take(codes)


def _referenced(where: str, names: Sequence[str]) -> list[str]:
    """The parameters among ``names`` that the query ``where`` reads (all, if unsure)."""
    used = _names(where)
    found = [name for name in names if used is not None and name in used]
    return found or list(names)


def _names(where: str) -> frozenset[str] | None:
    """The names a query reads; None when it is not plain Python (backquotes, @ variables)."""
    try:
        tree = ast.parse(where, mode="eval")
    except SyntaxError:
        return None
    return frozenset(node.id for node in ast.walk(tree) if isinstance(node, ast.Name))


def group_regions(groups: Sequence[PackedGroup], where: str) -> list[NDArray[np.bool_]]:
    """Which cells of each packed group the query ``where`` selects (`regions.region_mask`).

    The query runs once over all the groups, on one row per distinct combination of the
    parameters it reads: a group of 9,000 cells whose query reads only its shared ``n`` and
    two axes of 3 values each is 9 rows. Empty ``where``: every cell.
    """
    if not where:
        return [np.ones(g.size, dtype=bool) for g in groups]
    shapes: list[list[int]] = []
    parts: list[dict[str, Any]] = []
    for group in groups:
        names = _referenced(where, [*group.shared, *group.axes])
        read = [name for name in group.axes if name in names]
        shape = [len(v) for k, v in group.axes.items() if k in read]
        grids = np.meshgrid(*(np.arange(n) for n in shape), indexing="ij")
        count = math.prod(shape)
        coded = [(k, _levels([group.shared[k]]), np.zeros(count, dtype=np.intp))
                 for k in group.shared if k in names]
        coded += [(k, _levels(group.axes[k]), index.ravel())
                  for k, index in zip(read, grids, strict=True)]
        parts.append({k: (levels, codes) for k, levels, codes in coded})
        shapes.append([len(v) if k in read else 1 for k, v in group.axes.items()])
    # one frame for all the groups: a frame per group costs more than its query
    mask = region_mask(_joined(parts), where) if parts else np.zeros(0)
    found, start = [], 0
    for group, shape in zip(groups, shapes, strict=True):
        count = math.prod(shape)
        full = [len(v) for v in group.axes.values()]
        found.append(np.broadcast_to(mask[start:start + count].reshape(shape), full).ravel())
        start += count
    return found


@dataclass(frozen=True)
class StudyResult:
    """The finished cells of one study, in grid order (what the assertions take).

    A packed study (`Study.pack_groups`) has its cells in ``groups``; `rows`, `first_errors`
    and `expanded` read them as cells, which suits quick grids; summaries of full grids read
    the groups' arrays. ``parameters`` names the grid's parameters in grid order (the column
    order of `to_frame`; empty: the cells' own order). ``looks``: the levels of replicates
    the grid's rounds may judge its claims at (`studies.engine.design.Grid.rounds`), over
    which `studies.engine.claims.evaluate_claims` splits each claim's false-alarm rate.
    """

    study: str
    cells: tuple[CellResult, ...] = ()
    groups: tuple[PackedGroup, ...] = ()
    parameters: tuple[str, ...] = ()
    looks: int = 1

    def expanded(self) -> StudyResult:
        """The same result with every packed group turned into cells (grid order)."""
        if not self.groups:
            return self
        cells = [*self.cells, *(c for g in self.groups for c in g.cells())]
        return StudyResult(self.study, tuple(sorted(cells, key=lambda c: c.position)),
                           parameters=self.parameters)

    def rows(self, measure: str, *, method: str | None = None) -> list[dict[str, Any]]:
        """One row per (cell, method) reporting ``measure``: params, method, value, mcse, R."""
        return [
            {"params": dict(cell.params), "method": name, "value": perf[measure].value,
             "mcse": perf[measure].mcse, "n_replicates": perf.n_replicates}
            for cell in self.expanded().cells for name, perf in cell.performance.items()
            if (method is None or name == method) and measure in perf.measures
        ]

    def frames(self, *, methods: Collection[str] | None = None,
               measures: Collection[str] | None = None, where: str = "",
               batch_rows: int = 0,
               cells: Callable[[PackedGroup, NDArray[np.intp]], NDArray[np.intp]] | None = None,
               ) -> Iterator[pd.DataFrame]:
        """The tidy frame of `to_frame` in pieces: the plain cells, then the packed groups.

        Reads a grid of millions of packed cells a few groups at a time (a group of
        ``coverage_proportion``'s full grid is 9,000 cells, 234,000 rows), and builds rows
        only for the cells, methods and measures asked for.

        Parameters
        ----------
        methods, measures : collection of str, optional
            Only the rows of these methods and measures (built from the groups' arrays
            without the others).
        where : str
            Only the rows of the cells this query over the grid parameters selects
            (`studies.engine.regions.region_mask`; empty: every cell). A packed group with
            no such cell is not read.
        batch_rows : int
            Join consecutive groups into pieces of at least this many rows (0: one piece
            per group), so that a reader pays its per-piece cost fewer times.
        cells : callable, optional
            ``cells(group, chosen)``: of a packed group's cells in the region (``chosen``,
            their indices in the group, ascending), those whose rows to build (ascending);
            default all. A reader that needs a few of a grid's rows (the values that break a
            claim) picks them from the group's arrays instead of reading every row.
        """
        if self.cells:
            cells = self.cells
            if where:
                chosen = region_mask(pd.DataFrame([dict(c.params) for c in cells]), where)
                cells = tuple(c for c, keep in zip(cells, chosen, strict=True) if keep)
            frame = _cells_frame(self.study, cells, methods, measures)
            if len(frame):
                yield _standard(frame, self.parameters)
        batch: list[dict[str, Any]] = []
        size = 0
        for start in range(0, len(self.groups), REGION_GROUPS):
            groups = self.groups[start:start + REGION_GROUPS]
            for group, region in zip(groups, group_regions(groups, where), strict=True):
                chosen = np.flatnonzero(region)
                if cells is not None and chosen.size:
                    chosen = cells(group, chosen)
                if not chosen.size:
                    continue
                columns = group._columns(methods, measures,
                                         None if chosen.size == group.size else chosen)
                if not len(columns["value"]):
                    continue
                batch.append(columns)
                size += len(columns["value"])
                if size >= batch_rows:
                    yield _standard(_packed_frame(batch), self.parameters)
                    batch, size = [], 0
        if batch:
            yield _standard(_packed_frame(batch), self.parameters)

    def batches(self, cells: int = 500_000, *, load: bool = True) -> Iterator[StudyResult]:
        """The result in parts of about ``cells`` cells: the plain cells, then packed groups.

        With ``load``, each part holds its groups' arrays in memory (a stored group is read
        once for the part), so several readers of every array can go over one part while
        the grid streams through; without, stored groups stay in the store, for readers of
        a few of their arrays each.
        """
        if self.cells:
            yield StudyResult(self.study, self.cells, parameters=self.parameters)
        part: list[PackedGroup] = []
        size = 0
        for group in self.groups:
            part.append(group.loaded() if load else group)
            size += group.size
            if size >= cells:
                yield StudyResult(self.study, groups=tuple(part), parameters=self.parameters)
                part, size = [], 0
        if part:
            yield StudyResult(self.study, groups=tuple(part), parameters=self.parameters)

    def errors_frame(self, methods: Collection[str] | None = None) -> pd.DataFrame:
        """One row per (cell, method that raised in it): the parameters, method and error.

        A packed group's error stands for every cell of the group.
        """
        rows: list[dict[str, Any]] = [
            {"position": cell.position, **cell.params, "method": method, "error": message}
            for cell in self.cells for method, message in cell.errors.items()
            if methods is None or method in methods]
        for group in self.groups:
            for method, message in group.errors.items():
                if methods is None or method in methods:
                    rows += [{"position": int(position), **cell, "method": method,
                              "error": message} for position, cell in zip(
                                  group.positions, cell_params(group.shared, group.axes),
                                  strict=True)]
        return pd.DataFrame.from_records(rows)

    def to_frame(self) -> pd.DataFrame:
        """One row per (cell, method, measure), in grid order.

        Columns: ``study``, ``position`` (the cell's place in the grid), the cell's
        parameters, ``method``, ``measure``, ``value``, ``mcse`` (0 on the exact path),
        ``path`` (``exact`` or ``monte-carlo``) and ``n_replicates`` (missing on the exact
        path). Integer parameters and ``n_replicates`` are pandas' nullable ``Int64``, so
        that they stay integers beside missing values.

        Examples
        --------
        >>> from studies.engine.performance import Measure, Performance
        >>> perf = Performance({"bias": Measure(0.5, 0.1)}, n_replicates=100)
        >>> cell = CellResult("s", "k", 0, {"n": 10}, "monte-carlo", {"m": perf}, {}, b"")
        >>> StudyResult("s", (cell,)).to_frame().iloc[0].to_dict()  # doctest: +NORMALIZE_WHITESPACE
        {'study': 's', 'position': 0, 'n': 10, 'method': 'm', 'measure': 'bias', 'value': 0.5,
         'mcse': 0.1, 'path': 'monte-carlo', 'n_replicates': 100}
        """
        return _tidy(list(self.frames()), by_position=True)

    def first_errors(self) -> dict[str, tuple[Mapping[str, Any], str]]:
        """Per failing method: the first cell (grid order) where it failed, and the error."""
        found: dict[str, tuple[Mapping[str, Any], str]] = {}
        sources: list[tuple[int, Mapping[str, Any], Mapping[str, str]]] = [
            (c.position, c.params, c.errors) for c in self.cells]
        sources += [(int(g.positions[0]), {**g.shared, **{k: v[0] for k, v in g.axes.items()}},
                     g.errors) for g in self.groups]
        for _, params, errors in sorted(sources, key=lambda s: s[0]):
            for name, message in errors.items():
                found.setdefault(name, (params, message))
        return found



def _levels(values: Sequence[Any]) -> NDArray[Any]:
    """A parameter's values as a 1-D array (object dtype when they are lists)."""
    try:
        found = np.asarray(values)
    except ValueError:  # lists of unequal lengths
        found = np.empty(0, dtype=object)
    if found.ndim == 1 and found.dtype != object:
        return found
    if not any(isinstance(v, list | tuple | dict | np.ndarray) for v in values):
        return found
    found = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        found[i] = value
    return found


def _joined(parts: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One frame of packed groups' columns: each an array, or its distinct values and each
    row's index into them (joined without building the values per group); groups with other
    parameters are missing in each other's columns."""
    names = list(parts[0])
    if any(list(part) != names for part in parts[1:]):  # groups with other parameters
        return pd.concat([_joined([part]) for part in parts], ignore_index=True)
    columns: dict[str, Any] = {}
    for name in names:
        found = [part[name] for part in parts]
        if not isinstance(found[0], tuple):
            columns[name] = found[0] if len(found) == 1 else np.concatenate(found)
            continue
        levels = found[0][0] if len(found) == 1 else np.concatenate([f[0] for f in found])
        offsets = np.cumsum([0, *(len(f[0]) for f in found[:-1])])
        codes = np.concatenate([f[1] + offset for f, offset in zip(found, offsets, strict=True)])
        # strings with the dtype pandas infers from Python strings, built from the few levels
        columns[name] = _text(levels, codes) if levels.dtype.kind == "U" else levels[codes]
    return pd.DataFrame(columns)


def _packed_frame(parts: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The tidy rows of packed groups from their `PackedGroup._columns`, in one frame."""
    frame = _joined(parts)
    rows = len(frame)
    frame["mcse"] = 0.0
    frame["path"] = _text(["exact"], np.zeros(rows, np.intp))
    frame["n_replicates"] = pd.arrays.IntegerArray(  # missing: the exact path
        np.zeros(rows, dtype=np.int64), np.ones(rows, dtype=bool))
    return frame


def _cells_frame(study: str, cells: Sequence[CellResult],
                 methods: Collection[str] | None = None,
                 measures: Collection[str] | None = None) -> pd.DataFrame:
    records = [
        {"study": study, "position": cell.position, **cell.params, "method": method,
         "measure": measure, "value": found.value, "mcse": found.mcse, "path": cell.path,
         "n_replicates": perf.n_replicates}
        for cell in cells for method, perf in cell.performance.items()
        if methods is None or method in methods
        for measure, found in perf.measures.items() if measures is None or measure in measures]
    frame = pd.DataFrame.from_records(records)
    if not records:
        return frame
    frame["n_replicates"] = frame["n_replicates"].astype("Int64")
    return frame


def _standard(frame: pd.DataFrame, parameters: Sequence[str]) -> pd.DataFrame:
    """The standard column order (parameters in grid order) and integer parameters as Int64."""
    params = [c for c in frame.columns if c not in FRAME_COLUMNS]
    params = [*(c for c in parameters if c in params), *(c for c in params if c not in parameters)]
    frame = frame[["study", "position", *params, *FRAME_COLUMNS[2:]]]
    return frame.astype({c: "Int64" for c in params
                         if pd.api.types.is_integer_dtype(frame[c])})


def _tidy(frames: Sequence[pd.DataFrame], *, by_position: bool) -> pd.DataFrame:
    """Concatenate standard frames; a parameter a study does not have is missing in its rows."""
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame(columns=list(FRAME_COLUMNS))
    frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    if len(frames) > 1:
        params = [c for c in frame.columns if c not in FRAME_COLUMNS]
        frame = frame[["study", "position", *params, *FRAME_COLUMNS[2:]]]
        if by_position:
            frame = frame.sort_values("position", kind="stable", ignore_index=True)
    return frame


class RunResults(dict[str, StudyResult]):
    """A run's results: study name to `StudyResult`, in the order the studies were given.

    ``directory`` is the run directory the results were read from or stored in (None: kept
    in memory only); a Monte Carlo cell read back without its estimates is read from there.
    """

    def __init__(self, items: Any = (), *, directory: str | os.PathLike[str] | None = None
                 ) -> None:
        super().__init__(items)
        self.directory = None if directory is None else Path(directory)

    def estimates_frame(self) -> pd.DataFrame:
        """The per-replicate estimates of every Monte Carlo cell, as one tidy frame.

        One row per (study, cell, method, replicate): ``study``, ``position``, the cell's
        parameters, ``method``, ``replicate``, then the fields each method returned
        (``estimate``, ``se``, ``low``, ``high``, ``reject``, ...), as rsimsum takes them
        (`studies.engine.replicates.estimates_frame`). The exact path has no replicates: its
        cells have no rows. `studies.engine.replicates.performance_frame` recomputes the
        performance measures from it.

        Examples
        --------
        >>> from studies.engine import run
        >>> results = run(["studies.suite.mean_bias:STUDY"], rng=1, workers=1)
        >>> frame = results.estimates_frame()
        >>> frame.query("position == 0 and method == 'mean'").shape[0]
        8000
        >>> list(frame.columns)
        ['study', 'position', 'distribution', 'n', 'method', 'replicate', 'estimate', 'se', \
'low', 'high', 'reject']
        """
        return replicates.estimates_frame(self, self.directory)

    def frames(self) -> Iterator[pd.DataFrame]:
        """Every study's `StudyResult.frames`, study by study."""
        for result in self.values():
            yield from result.frames()

    def to_frame(self) -> pd.DataFrame:
        """Every study's tidy rows (`StudyResult.to_frame`) in one frame.

        Parameters that only some studies have are missing in the other studies' rows.
        """
        return _tidy([result.to_frame() for result in self.values()], by_position=False)
