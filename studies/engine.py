"""Running studies: one cell at a time, in process, in local processes or on a Dask cluster.

A Monte Carlo cell runs as a pure function of a picklable `CellTask` (`run_cell`): generate the
data from the cell's own random stream, apply every method, keep the estimates, then summarise
them into performance measures. Because each cell's stream derives from the root seed and the
cell's parameters (`studies.seeding`), results do not depend on the backend, the number of
workers or the order cells finish in.

Exact-path cells run in groups (`GroupTask`, `run_group`): the cells that agree on the study's
``estimates_depend_on`` share their enumerated outcomes and every method's estimates, so these
are computed once per group and each cell's measures come from one vectorized pass over the
group's probability matrix (`studies.performance.exact_performance`). A cell's result does not
depend on which other cells share its group. Exact-path estimates are not stored: they are a
deterministic function of the group's parameters and the study's version (enumerate again to
see them). A study that declares ``pack_groups`` (grids of millions of exact cells) is planned
group by group without building its cells (`PackedTask`, `run_packed`) and each group is
stored as one row of arrays (`PackedGroup`); resume then works group by group.

A grid may select a subset of the study's methods (`studies.design.Grid.methods`).

`run` coordinates: it skips cells already in the run store (``resume``; a partly stored group
computes only its missing cells), commits each finished task's cells in one transaction as it
arrives and writes the summary tables.

References
----------
Morris, White & Crowther (2019), *Statistics in Medicine* 38, 2074-2102 (store the estimates,
then summarise them; report Monte Carlo SEs). R's SimDesign (Chalmers & Adkins 2020) separates
generate / analyse / summarise in the same way.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import io
import itertools
import json
import math
import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing import forkserver
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from studies import seeding
from studies.design import Grid, Method, Sample, Study
from studies.performance import (
    Estimates,
    Performance,
    exact_cells,
    exact_measures,
    exact_performance,
    performance,
)
from studies.registry import get_study, load_object
from studies.store import RunStore, open_store

__all__ = [
    "PATHS",
    "CellResult",
    "CellTask",
    "GroupTask",
    "StudyResult",
    "connect_dask",
    "headline_table",
    "results_from_store",
    "run",
    "run_cell",
    "run_group",
    "run_task",
    "summarise_cell",
    "write_tables",
]

PATHS: tuple[str, ...] = ("auto", "exact", "monte-carlo")
CONNECT_TIMEOUT = "3s"
# Local workers already use every core: a BLAS or OpenMP pool of its own in each worker would
# oversubscribe them (on 2 cores, 2 workers ran 4x slower per cell with OpenBLAS's 2 threads).
WORKER_THREADS: dict[str, str] = {
    "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass(frozen=True)
class CellTask:
    """Everything needed to run one cell anywhere (picklable).

    ``study`` is pickled by reference to its module, ``methods`` are user import paths.
    """

    study: Study
    params: Mapping[str, Any]
    position: int
    n_replicates: int
    root: int
    path: str
    methods: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlannedCell:
    """A cell of a `GroupTask`: grid position, key (`studies.seeding.cell_key`) and params."""

    position: int
    key: str
    params: Mapping[str, Any]


@dataclass(frozen=True)
class GroupTask:
    """Exact-path cells analysed together (picklable).

    The cells agree on the study's ``estimates_depend_on``; ``methods`` are user import paths.
    """

    study: Study
    cells: tuple[PlannedCell, ...]
    methods: tuple[str, ...] = ()


@dataclass(frozen=True)
class PackedTask:
    """A packed group (`Study.pack_groups`): the shared parameter values and the other axes.

    Its cells are ``shared`` combined with the product of ``axes`` (grid order); ``positions``
    are their grid positions.
    """

    study: Study
    key: str
    shared: Mapping[str, Any]
    axes: Mapping[str, Sequence[Any]]
    positions: NDArray[np.int64] = field(repr=False)
    methods: tuple[str, ...] = ()

    def cell_params(self) -> list[dict[str, Any]]:
        """Every cell's parameters, in grid order (keys in the grid's order)."""
        return _cell_params(self.shared, self.axes)


Task = CellTask | GroupTask | PackedTask


def _cell_params(shared: Mapping[str, Any], axes: Mapping[str, Sequence[Any]]
                 ) -> list[dict[str, Any]]:
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
            "seconds": self.seconds, "finished": _now(),
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
        """Scalar parameter ``name`` of every cell (a shared one repeated)."""
        if name in self.shared:
            return np.full(self.size, self.shared[name])
        names = list(self.axes)
        grids = np.meshgrid(*(np.arange(len(v)) for v in self.axes.values()), indexing="ij")
        index = grids[names.index(name)].ravel()
        return np.asarray(self.axes[name])[index]

    def cells(self) -> tuple[CellResult, ...]:
        """The group as `CellResult` objects (small grids: tests, `StudyResult.rows`)."""
        params = _cell_params(self.shared, self.axes)
        perf = {m: exact_cells(found, self.size) for m, found in self.values.items()}
        seconds = self.seconds / max(self.size, 1)
        return tuple(
            CellResult(study=self.study, key=seeding.cell_key(self.study, cell),
                       position=int(position), params=cell, path="exact",
                       performance={m: p[i] for m, p in perf.items()}, errors=self.errors,
                       estimates=b"", seconds=seconds)
            for i, (position, cell) in enumerate(zip(self.positions, params, strict=True)))

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
                "seconds": self.seconds, "finished": _now()}

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
    the groups' arrays.
    """

    study: str
    cells: tuple[CellResult, ...] = ()
    groups: tuple[PackedGroup, ...] = ()

    def expanded(self) -> StudyResult:
        """The same result with every packed group turned into cells (grid order)."""
        if not self.groups:
            return self
        cells = [*self.cells, *(c for g in self.groups for c in g.cells())]
        return StudyResult(self.study, tuple(sorted(cells, key=lambda c: c.position)))

    def rows(self, measure: str, *, method: str | None = None) -> list[dict[str, Any]]:
        """One row per (cell, method) reporting ``measure``: params, method, value, mcse, R."""
        return [
            {"params": dict(cell.params), "method": name, "value": perf[measure].value,
             "mcse": perf[measure].mcse, "n_replicates": perf.n_replicates}
            for cell in self.expanded().cells for name, perf in cell.performance.items()
            if (method is None or name == method) and measure in perf.measures
        ]

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


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _resolve_methods(study: Study, paths: Sequence[str]) -> dict[str, Method]:
    methods = dict(study.methods)
    for path in paths:
        if study.wrap_method is None:
            raise ValueError(f"study {study.name!r} does not accept user methods; got {path!r}.")
        fn = load_object(path, "method")
        if not callable(fn):
            raise ValueError(f"`method` {path!r} must be callable; got {type(fn).__name__}.")
        methods[path] = study.wrap_method(fn)
    return methods


def _check_estimates(est: Any, size: int, space: tuple[float, float]) -> Estimates:
    """The method's output, or ValueError saying what is wrong with it."""
    if not isinstance(est, Estimates):
        raise TypeError(f"returned {type(est).__name__}, expected Estimates")
    for name, value in est.arrays().items():
        if np.shape(value) != (size,):
            raise ValueError(f"returned `{name}` of shape {np.shape(value)}, expected ({size},)")
    if est.low is not None and est.high is not None:
        lo, hi = space
        bad = ~((lo <= est.low) & (est.low <= est.high) & (est.high <= hi))
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(
                f"returned bounds outside [{lo:g}, {hi:g}] or reversed: low={est.low[i]!r}, "
                f"high={est.high[i]!r} at row {i}")
    return est


def _pack(sample: Sample, estimates: Mapping[str, Estimates]) -> bytes:
    """A Monte Carlo cell's estimates (and tallies), as `summarise_cell` reads them."""
    arrays: dict[str, Any] = {f"{m}/{k}": v for m, e in estimates.items()
                              for k, v in e.arrays().items()}
    if sample.frequency is not None:
        arrays["frequency"] = sample.frequency
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def summarise_cell(estimates: bytes, true_value: float, *, measures: Iterable[str]
                   ) -> dict[str, Performance]:
    """Performance per method from a cell's stored estimates (as `run_cell` packs them).

    Blobs of exact-path cells stored before grouping (with ``probability``) are read too.
    """
    with np.load(io.BytesIO(estimates)) as data:
        arrays = {k: data[k] for k in data.files}
    weights = {k: arrays.pop(k, None) for k in ("frequency", "probability")}
    by_method: dict[str, dict[str, Any]] = {}
    for name, value in arrays.items():
        method, _, kind = name.rpartition("/")
        by_method.setdefault(method, {})[kind] = value
    wanted = tuple(measures)
    return {m: performance(Estimates(**fields), true_value, measures=wanted, **weights)
            for m, fields in by_method.items()}


def _analyse(study: Study, paths: Sequence[str], sample: Sample, params: Mapping[str, Any]
             ) -> tuple[dict[str, Estimates], dict[str, str]]:
    """Every method's estimates, and the error of each method that raised or returned junk.

    A failing method is recorded and skipped; the other methods still run.
    """
    estimates: dict[str, Estimates] = {}
    errors: dict[str, str] = {}
    for name, method in _resolve_methods(study, paths).items():
        try:
            estimates[name] = _check_estimates(
                method(sample.data, params), sample.size, study.parameter_space)
        except Exception as error:  # a user's method may fail in any way; report, go on
            errors[name] = f"{type(error).__name__}: {error}"
    return estimates, errors


def run_cell(task: CellTask) -> CellResult:
    """Run one cell: data, every method's estimates (kept), then their performance.

    An exact-path cell runs as a group of one (`run_group`).
    """
    if task.path == "exact":
        cell = PlannedCell(task.position, seeding.cell_key(task.study.name, task.params),
                           task.params)
        return run_group(GroupTask(task.study, (cell,), task.methods))[0]
    start = time.perf_counter()
    stream = seeding.cell_seed(task.root, task.study.name, task.params)
    sample = task.study.generate(task.params, task.n_replicates,
                                 rng=np.random.default_rng(stream))
    estimates, errors = _analyse(task.study, task.methods, sample, task.params)
    packed = _pack(sample, estimates)
    perf = summarise_cell(packed, task.study.truth(task.params), measures=task.study.measures)
    return CellResult(
        study=task.study.name, key=seeding.cell_key(task.study.name, task.params),
        position=task.position, params=dict(task.params), path=task.path,
        performance={m: perf[m] for m in estimates}, errors=errors, estimates=packed,
        seconds=time.perf_counter() - start)


def run_group(task: GroupTask) -> tuple[CellResult, ...]:
    """Run exact-path cells that share outcomes and estimates: analyse once, measure each.

    Each method is called once, with the first cell's params (the study declares that its
    methods read only ``estimates_depend_on``); a method's failure is reported in every cell.
    """
    start = time.perf_counter()
    study = task.study
    cells = [cell.params for cell in task.cells]
    assert study.enumerate_outcomes is not None  # checked when the run is planned
    sample = study.enumerate_outcomes(cells)
    estimates, errors = _analyse(study, task.methods, sample, cells[0])
    truths = [study.truth(params) for params in cells]
    perf = {name: exact_performance(est, truths, sample.probability, measures=study.measures)
            for name, est in estimates.items()}
    seconds = (time.perf_counter() - start) / len(cells)
    return tuple(
        CellResult(study=study.name, key=cell.key, position=cell.position,
                   params=dict(cell.params), path="exact",
                   performance={name: perf[name][i] for name in estimates}, errors=errors,
                   estimates=b"", seconds=seconds)
        for i, cell in enumerate(task.cells))


def run_packed(task: PackedTask) -> PackedGroup:
    """Run a packed group: like `run_group`, keeping each measure as an array over cells."""
    start = time.perf_counter()
    study = task.study
    cells = task.cell_params()
    assert study.enumerate_outcomes is not None  # checked when the run is planned
    sample = study.enumerate_outcomes(cells)
    estimates, errors = _analyse(study, task.methods, sample, cells[0])
    truths = [study.truth(params) for params in cells]
    values = {name: exact_measures(est, truths, sample.probability, measures=study.measures)
              for name, est in estimates.items()}
    return PackedGroup(study=study.name, key=task.key, shared=dict(task.shared),
                       axes={k: list(v) for k, v in task.axes.items()},
                       positions=task.positions, values=values, errors=errors,
                       seconds=time.perf_counter() - start)


Finished = CellResult | PackedGroup


def run_task(task: Task) -> tuple[Finished, ...]:
    """Run a planned task: a Monte Carlo cell, a group of exact-path cells or a packed group."""
    if isinstance(task, PackedTask):
        return (run_packed(task),)
    return run_group(task) if isinstance(task, GroupTask) else (run_cell(task),)


def _ignore_sigint() -> None:
    # Ctrl-C is the coordinator's to handle; workers must not die mid-cell with a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def _single_threaded_libraries() -> Iterator[None]:
    """Set `WORKER_THREADS` (unless the user set them) while processes start, then restore."""
    saved = {name: os.environ.get(name) for name in WORKER_THREADS}
    for name, value in WORKER_THREADS.items():
        os.environ.setdefault(name, value)
    try:
        yield
    finally:
        for name, before in saved.items():
            if before is None:
                os.environ.pop(name, None)


def _local(tasks: Sequence[Task], workers: int) -> Iterator[tuple[Finished, ...]]:
    # forkserver, not fork: the coordinator may hold threads (a Dask client, a test runner's)
    # and forking a threaded process can deadlock. Preloading makes each worker start warm.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["studies.engine", "scipy.stats"])
    with _single_threaded_libraries():
        # the server (and so the workers it forks) reads them when it loads numpy's BLAS; a
        # forkserver already running keeps the settings it started with
        forkserver.ensure_running()
    pool = cf.ProcessPoolExecutor(workers, mp_context=context, initializer=_ignore_sigint)
    try:
        futures = [pool.submit(run_task, task) for task in tasks]
        for future in cf.as_completed(futures):
            yield future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def connect_dask(address: str) -> Any:
    """A Dask ``Client`` for ``address``, or ValueError within `CONNECT_TIMEOUT`."""
    try:
        from distributed import Client
    except ImportError:
        raise ValueError(
            "`scheduler` needs Dask; install the dask extra: pip install 'evalcert[dask]'."
        ) from None
    try:
        return Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as error:
        raise ValueError(
            f"`scheduler` {address!r} is unreachable ({type(error).__name__}: {error})."
        ) from None


def _dask(tasks: Sequence[Task], client: Any) -> Iterator[tuple[Finished, ...]]:
    from distributed import as_completed

    futures = client.map(run_task, list(tasks), pure=False)
    try:
        # loop given: as_completed otherwise looks for a default client, and ours is not one
        for future in as_completed(futures, loop=client.loop):
            yield future.result()
    finally:
        client.cancel(futures)


def _execute(tasks: Sequence[Task], workers: int, client: Any
             ) -> Iterator[tuple[Finished, ...]]:
    if client is not None:
        return _dask(tasks, client)
    if workers <= 1 or len(tasks) <= 1:
        return (run_task(task) for task in tasks)
    return _local(tasks, workers)


def _groups(study: Study, cells: Sequence[PlannedCell]) -> list[tuple[PlannedCell, ...]]:
    """Cells grouped by their values of ``estimates_depend_on`` (grid order; one each if None)."""
    if study.estimates_depend_on is None:
        return [(cell,) for cell in cells]
    groups: dict[str, list[PlannedCell]] = {}
    for cell in cells:
        # repr, not hash: parameter values may be lists; it is 5x faster than canonical JSON
        shared = repr([cell.params[k] for k in study.estimates_depend_on])
        groups.setdefault(shared, []).append(cell)
    return [tuple(group) for group in groups.values()]


def _plan(study: Study, grid: Grid, root: int, path: str, methods: tuple[str, ...],
          done: set[tuple[str, str]]) -> list[Task]:
    """Tasks for the cells of ``grid`` not in ``done`` (``(study, cell key)`` pairs)."""
    chosen = path
    if path == "auto":
        chosen = "exact" if study.enumerate_outcomes is not None else "monte-carlo"
    elif path == "exact" and study.enumerate_outcomes is None:
        raise ValueError(f"`path` 'exact' needs an enumerable study; {study.name!r} is not.")
    _resolve_methods(study, methods)  # fail early, in the caller, on a bad import path
    if chosen == "exact" and study.pack_groups:
        study.check_grid(grid)
        return _plan_packed(study, grid, methods, done)
    planned = (PlannedCell(i, seeding.cell_key(study.name, params), params)
               for i, params in enumerate(grid.cells()))
    pending = [cell for cell in planned if (study.name, cell.key) not in done]
    if chosen == "monte-carlo":
        return [CellTask(study, cell.params, cell.position, grid.n_replicates, root, chosen,
                         methods) for cell in pending]
    study.check_grid(grid)
    return [GroupTask(study, cells, methods) for cells in _groups(study, pending)]


def _plan_packed(study: Study, grid: Grid, methods: tuple[str, ...],
                 done: set[tuple[str, str]]) -> list[Task]:
    """One task per group not in ``done``, without building the cells (millions of them).

    A group's key is `studies.seeding.cell_key` of its shared values; its cells' grid positions
    follow from the product structure of the grid.
    """
    shared_names = list(study.estimates_depend_on or ())
    names = list(grid.parameters)
    shape = [len(values) for values in grid.parameters.values()]
    axes = {k: list(v) for k, v in grid.parameters.items() if k not in shared_names}
    tasks: list[Task] = []
    for chosen in itertools.product(*(range(len(grid.parameters[k])) for k in shared_names)):
        shared = {k: grid.parameters[k][i] for k, i in zip(shared_names, chosen, strict=True)}
        key = seeding.cell_key(study.name, shared)
        if (study.name, key) in done:
            continue
        fixed = dict(zip(shared_names, chosen, strict=True))
        index = np.meshgrid(*(np.array([fixed[k]]) if k in fixed else np.arange(size)
                              for k, size in zip(names, shape, strict=True)), indexing="ij")
        # the cells are ordered by the non-shared axes in grid order: ravel keeps that order
        positions = np.ravel_multi_index([i.ravel() for i in index], shape).astype(np.int64)
        tasks.append(PackedTask(study, key, shared, axes, positions, methods))
    return tasks


def _package_versions() -> dict[str, str]:
    from importlib import metadata

    found = {}
    for name in ("evalcert", "numpy", "scipy", "dask", "distributed"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def _git_commit() -> str | None:
    """The commit checked out in the source tree, read from ``.git`` (no git process)."""
    for parent in Path(__file__).resolve().parents:
        head = parent / ".git" / "HEAD"
        if head.is_file():
            ref = head.read_text().strip()
            if not ref.startswith("ref: "):
                return ref
            target = parent / ".git" / ref[5:]
            return target.read_text().strip() if target.is_file() else None
    return None


def _grid_of(study: Study, grid: str | Grid) -> Grid:
    return grid if isinstance(grid, Grid) else study.grid(grid)


def run(
    studies: Sequence[str | Study],
    *,
    grid: str | Grid = "quick",
    rng: Any = None,
    workers: int | None = None,
    scheduler: str | None = None,
    out: str | os.PathLike[str] | None = None,
    resume: bool = False,
    methods: Sequence[str] = (),
    path: str = "auto",
    on_cell: Callable[[int, int], None] | None = None,
) -> dict[str, StudyResult]:
    """Run studies cell by cell, storing each finished cell; return every study's results.

    Parameters
    ----------
    studies : sequence of str or Study
        Registered names, import paths ``module:ATTRIBUTE`` or `Study` objects.
    grid : str or Grid
        Grid name (``"quick"``, ``"full"``) or an explicit `Grid` (used for every study).
    rng : int or None
        Root seed (a non-negative integer); None draws fresh entropy, recorded in the store.
    workers : int, optional
        Local worker processes; default the number of cores. 1 runs in process.
    scheduler : str, optional
        Address of a Dask scheduler (``tcp://HOST:PORT``); overrides ``workers``.
    out : path, optional
        Run directory for the SQLite run store and summary tables; None keeps results in memory.
    resume : bool
        Continue the run in ``out``, skipping finished cells (the root seed is taken from it).
    methods : sequence of str
        User methods as import paths ``module:callable``, added to every study's methods.
    path : {"auto", "exact", "monte-carlo"}
        ``"auto"``: exact where the study can enumerate its outcomes.
    on_cell : callable, optional
        Called as ``on_cell(done, total)`` (cells) after each task: a Monte Carlo cell or a
        group of exact-path cells (progress display).

    Returns
    -------
    dict of str to StudyResult
        Every finished cell (including those from before a resume).

    Raises
    ------
    ValueError
        On an unknown study or grid, a bad seed, worker count, path or method import path, an
        unreachable scheduler, or a run directory that cannot be used (see `open_store`).

    References
    ----------
    Morris, White & Crowther (2019), Statistics in Medicine 38:2074-2102.
    """
    if path not in PATHS:
        raise ValueError(f"`path` must be one of {PATHS}; got {path!r}.")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ValueError(f"`workers` must be a positive integer; got {workers!r}.")
    resolved = [s if isinstance(s, Study) else get_study(s) for s in studies]
    grids = {s.name: _grid_of(s, grid) for s in resolved}
    identity = {
        "studies": {s.name: s.version for s in resolved},
        "grid": grid if isinstance(grid, str) else grid.to_dict(),
        "methods": list(methods),
        "path": path,
    }
    # connect first: an unreachable scheduler must not leave a half-made run directory
    client = connect_dask(scheduler) if scheduler is not None else None
    store: RunStore | None = None
    if out is not None:
        grid_meta = {name: g.to_dict() for name, g in grids.items()}
        store = _open(Path(out), identity, rng, resume, grid_meta)
        root = int(store.metadata()["seed"])
    else:
        root = seeding.root_entropy(rng)
    done_keys = store.finished_keys() if store is not None else set()
    tasks = [t for s in resolved for t in _plan(s.for_grid(grids[s.name]), grids[s.name], root,
                                                path, tuple(methods), done_keys)]
    total = sum(grids[s.name].n_cells for s in resolved)
    collected: list[Finished] = []
    status = "interrupted"
    try:
        done = total - sum(_task_cells(t) for t in tasks)
        for results in _execute(tasks, workers or os.cpu_count() or 1, client):
            if store is not None:
                store.put_cells([r.to_row() for r in results if isinstance(r, CellResult)])
                store.put_groups([r.to_row() for r in results if isinstance(r, PackedGroup)])
            else:  # with a store, results are read back from it (Monte Carlo blobs stay on disk)
                collected.extend(results)
            done += sum(r.size if isinstance(r, PackedGroup) else 1 for r in results)
            if on_cell is not None:
                on_cell(done, total)
        status = "complete"
    finally:
        if client is not None:
            client.close()
        if store is not None:
            store.set_metadata(ended=_now(), status=status)
            collected = _read_store(store)
            write_tables(_group(collected, resolved), store.directory, resolved)
            store.close()
    return _group(collected, resolved)


def _task_cells(task: Task) -> int:
    if isinstance(task, PackedTask):
        return int(task.positions.size)
    return len(task.cells) if isinstance(task, GroupTask) else 1


def _read_store(store: RunStore) -> list[Finished]:
    return [*(CellResult.from_row(r) for r in store.cells()),
            *(PackedGroup.from_row(r) for r in store.groups())]


def _open(directory: Path, identity: Mapping[str, Any], rng: Any, resume: bool,
          grids: Mapping[str, Any]) -> RunStore:
    if resume and rng is None:
        store = open_store(directory, identity, resume=True)
    else:
        root = seeding.root_entropy(rng)
        store = open_store(directory, identity, resume=resume)
        stored = store.metadata().get("seed")
        if stored is not None and int(stored) != root:
            store.close()
            raise ValueError(f"`seed` must match the run being resumed ({stored}); got {root}.")
    meta = store.metadata()
    if "seed" not in meta:
        store.set_metadata(
            seed=str(seeding.root_entropy(rng)), started=_now(), packages=_package_versions(),
            git_commit=_git_commit(), grids=dict(grids))
    return store


def _group(finished: Iterable[Finished], studies: Sequence[Study] | Sequence[str]
           ) -> dict[str, StudyResult]:
    names = [s if isinstance(s, str) else s.name for s in studies]
    cells: dict[str, list[CellResult]] = {name: [] for name in names}
    groups: dict[str, list[PackedGroup]] = {name: [] for name in names}
    for result in finished:
        if isinstance(result, PackedGroup):
            groups.setdefault(result.study, []).append(result)
        else:
            cells.setdefault(result.study, []).append(result)
    return {name: StudyResult(
                name, tuple(sorted(cells[name], key=lambda c: c.position)),
                tuple(sorted(groups.get(name, ()), key=lambda g: int(g.positions[0]))))
            for name in cells}


def results_from_store(directory: str | os.PathLike[str]) -> dict[str, StudyResult]:
    """Every study's finished cells (and packed groups) from a run directory (read-only)."""
    from studies.store import existing_store

    store = existing_store(Path(directory))
    try:
        finished = _read_store(store)
        names = list(store.metadata()["identity"]["studies"])
    finally:
        store.close()
    return _group(finished, names)


def _format(value: float) -> str:
    return "nan" if math.isnan(value) else f"{value:.6g}"


def write_tables(results: Mapping[str, StudyResult], directory: Path,
                 studies: Sequence[Study] = ()) -> None:
    """Write ``<study>.csv`` (one row per cell and method) and ``<study>.txt`` per study.

    Every study also gets ``<study>.summary.csv`` and ``.txt``: the ``summary`` of its
    `Study` in ``studies`` (default `headline_table`); a packed study (`Study.pack_groups`)
    gets only those (its cells stay in the run store).
    """
    by_name = {s.name: s for s in studies}
    for name, result in results.items():
        study = by_name.get(name)
        summary = study.summary if study is not None and study.summary else headline_table
        _write_summary(directory, name, list(summary(result)))
        if not result.groups:
            _write_cells(directory, name, result)


def headline_table(result: StudyResult) -> list[dict[str, Any]]:
    """Per method and measure: cells, smallest, mean and largest value, largest MCSE.

    The default summary of a study (`Study.summary`): the range of each measure over the
    grid, with the Monte Carlo error of its least precise cell (0 on the exact path). Cells
    where a measure is undefined (nan) are counted apart (``nan_cells``).

    Examples
    --------
    >>> from studies.performance import Estimates, performance
    >>> import numpy as np
    >>> perf = performance(Estimates(estimate=np.array([0.5, 1.5])), 1.0, measures=["bias"])
    >>> cell = CellResult("s", "k", 0, {"n": 2}, "monte-carlo", {"m": perf}, {}, b"")
    >>> headline_table(StudyResult("s", (cell,)))[0]["mean"]
    0.0
    """
    found: dict[tuple[str, str], list[tuple[NDArray[np.float64], NDArray[np.float64]]]] = {}
    for group in result.groups:
        for method, measures in group.values.items():
            for measure, values in measures.items():
                found.setdefault((method, measure), []).append((values, np.zeros_like(values)))
    for cell in result.cells:
        for method, perf in cell.performance.items():
            for measure, m in perf.measures.items():
                found.setdefault((method, measure), []).append(
                    (np.array([m.value]), np.array([m.mcse])))
    rows = []
    for (method, measure), parts in found.items():
        values = np.concatenate([v for v, _ in parts])
        mcse = np.concatenate([e for _, e in parts])
        defined = ~np.isnan(values)
        if not defined.any():
            continue
        rows.append({"method": method, "measure": measure, "cells": int(values.size),
                     "nan_cells": int(values.size - defined.sum()),
                     "min": float(values[defined].min()), "mean": float(values[defined].mean()),
                     "max": float(values[defined].max()),
                     "max_mcse": float(np.nanmax(mcse[defined]))})
    return rows


def _write_summary(directory: Path, name: str, rows: list[Mapping[str, Any]]) -> None:
    import csv

    header = list(rows[0]) if rows else []
    table = [[_cell_text(row[k]) for k in header] for row in rows]
    with open(directory / f"{name}.summary.csv", "w", newline="") as handle:
        csv.writer(handle).writerows([header, *table])
    lines = [f"study {name}: summary", "", *_aligned(header, table)]
    (directory / f"{name}.summary.txt").write_text("\n".join(lines) + "\n")


def _cell_text(value: Any) -> str:
    return _format(value) if isinstance(value, float) else str(value)


def _write_cells(directory: Path, name: str, result: StudyResult) -> None:
    import csv

    measures = list(dict.fromkeys(
        m for c in result.cells for p in c.performance.values() for m in p.measures))
    params = list(result.cells[0].params) if result.cells else []
    header = [*params, "method", "path", "n_replicates"]
    header += [x for m in measures for x in (m, f"{m}_mcse")]
    rows = []
    for cell in result.cells:
        for method, perf in cell.performance.items():
            row = [*(cell.params[p] for p in params), method, cell.path,
                   perf.n_replicates if perf.n_replicates is not None else ""]
            for m in measures:
                found = perf.measures.get(m)
                row += [_format(found.value), _format(found.mcse)] if found else ["", ""]
            rows.append(row)
    with open(directory / f"{name}.csv", "w", newline="") as handle:
        csv.writer(handle).writerows([header, *rows])
    _write_text(directory / f"{name}.txt", name, result, header, rows)


def _aligned(header: list[str], rows: list[list[Any]]) -> list[str]:
    """Right-aligned text columns, header first."""
    table = [header, *[[str(v) for v in r] for r in rows]]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    return ["  ".join(v.rjust(w) for v, w in zip(r, widths, strict=True)) for r in table]


def _write_text(target: Path, name: str, result: StudyResult, header: list[str],
                rows: list[list[Any]]) -> None:
    lines = [f"study {name}: {len(result.cells)} cells finished", "", *_aligned(header, rows)]
    for method, (params, message) in result.first_errors().items():
        lines.append(f"method {method} FAILED (first failing cell {dict(params)}): {message}")
    target.write_text("\n".join(lines) + "\n")
