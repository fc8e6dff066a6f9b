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

import io
import itertools
import json
import os
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from studies.engine import replicates, seeding
from studies.engine.performance import Performance, exact_cells

__all__ = ["FRAME_COLUMNS", "CellResult", "PackedGroup", "RunResults", "StudyResult",
           "cell_params", "now"]

# The columns of a tidy frame besides the cell's parameters (which come after ``position``).
FRAME_COLUMNS: tuple[str, ...] = (
    "study", "position", "method", "measure", "value", "mcse", "path", "n_replicates")


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
        """Number of cells."""
        return int(self.positions.size)

    def column(self, name: str) -> NDArray[Any]:
        """Parameter ``name`` of every cell (a shared one repeated), one entry per cell.

        A parameter holding lists gives an object array of those lists.
        """
        if name in self.shared:
            return _levels([self.shared[name]])[np.zeros(self.size, dtype=np.intp)]
        names = list(self.axes)
        grids = np.meshgrid(*(np.arange(len(v)) for v in self.axes.values()), indexing="ij")
        index = grids[names.index(name)].ravel()
        return _levels(self.axes[name])[index]

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
                 measures: Collection[str] | None = None) -> pd.DataFrame:
        """The group's tidy rows (`StudyResult.to_frame`), built from its arrays.

        Only the rows of ``methods`` and ``measures``, when given.
        """
        pieces = [(method, measure, values) for method, found in self.values.items()
                  if methods is None or method in methods
                  for measure, values in found.items() if measures is None or measure in measures]
        k = len(pieces)
        columns: dict[str, Any] = {"study": self.study,
                                   "position": np.repeat(self.positions, k)}
        for name in [*self.shared, *self.axes]:
            columns[name] = np.repeat(self.column(name), k)
        columns["method"] = np.tile(np.array([p[0] for p in pieces], dtype=object), self.size)
        columns["measure"] = np.tile(np.array([p[1] for p in pieces], dtype=object), self.size)
        columns["value"] = (np.stack([p[2] for p in pieces], axis=1).ravel() if pieces
                            else np.empty(0))
        columns["mcse"] = 0.0
        columns["path"] = "exact"
        columns["n_replicates"] = pd.arrays.IntegerArray(  # missing: the exact path
            np.zeros(self.size * k, dtype=np.int64), np.ones(self.size * k, dtype=bool))
        return pd.DataFrame(columns)

    def to_row(self) -> dict[str, Any]:
        """The run-store row (table ``groups``)."""
        arrays: dict[str, Any] = {
            f"{m}/{k}": v for m, found in self.values.items() for k, v in found.items()}
        buffer = io.BytesIO()
        np.savez(buffer, positions=self.positions, **arrays)
        return {"study": self.study, "key": self.key, "position": int(self.positions[0]),
                "cells": self.size, "shared": json.dumps(dict(self.shared)),
                "axes": json.dumps({k: list(v) for k, v in self.axes.items()}),
                "values": buffer.getvalue(), "errors": json.dumps(dict(self.errors)),
                "seconds": self.seconds, "finished": now()}

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> PackedGroup:
        """Inverse of `to_row`."""
        values: dict[str, dict[str, NDArray[np.float64]]] = {}
        with np.load(io.BytesIO(row["values"])) as data:
            positions = data["positions"]
            for name in data.files:
                if name != "positions":
                    method, _, measure = name.rpartition("/")
                    values.setdefault(method, {})[measure] = data[name]
        return cls(study=row["study"], key=row["key"], shared=json.loads(row["shared"]),
                   axes=json.loads(row["axes"]), positions=positions, values=values,
                   errors=json.loads(row["errors"]), seconds=row["seconds"])


@dataclass(frozen=True)
class StudyResult:
    """The finished cells of one study, in grid order (what the assertions take).

    A packed study (`Study.pack_groups`) has its cells in ``groups``; `rows`, `first_errors`
    and `expanded` read them as cells, which suits quick grids; summaries of full grids read
    the groups' arrays. ``parameters`` names the grid's parameters in grid order (the column
    order of `to_frame`; empty: the cells' own order).
    """

    study: str
    cells: tuple[CellResult, ...] = ()
    groups: tuple[PackedGroup, ...] = ()
    parameters: tuple[str, ...] = ()

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
               measures: Collection[str] | None = None, batch_rows: int = 0
               ) -> Iterator[pd.DataFrame]:
        """The tidy frame of `to_frame` in pieces: the plain cells, then the packed groups.

        Reads a grid of millions of packed cells a few groups at a time (a group of
        ``coverage_proportion``'s full grid is 1,000 cells, about 50,000 rows).

        Parameters
        ----------
        methods, measures : collection of str, optional
            Only the rows of these methods and measures (built from the groups' arrays
            without the others).
        batch_rows : int
            Join consecutive groups into pieces of at least this many rows (0: one piece
            per group), so that a reader pays its per-piece cost fewer times.
        """
        if self.cells:
            frame = _cells_frame(self.study, self.cells, methods, measures)
            if len(frame):
                yield _standard(frame, self.parameters)
        batch: list[pd.DataFrame] = []
        size = 0
        for group in self.groups:
            frame = group.to_frame(methods=methods, measures=measures)
            if not len(frame):
                continue
            batch.append(frame)
            size += len(frame)
            if size >= batch_rows:
                yield _standard(_joined(batch), self.parameters)
                batch, size = [], 0
        if batch:
            yield _standard(_joined(batch), self.parameters)

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
    if not any(isinstance(v, list | tuple | dict | np.ndarray) for v in values):
        return np.asarray(values)
    found = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        found[i] = value
    return found


def _joined(frames: list[pd.DataFrame]) -> pd.DataFrame:
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


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
