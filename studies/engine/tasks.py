"""Tasks, the units of work a worker runs, and running them.

A Monte Carlo cell runs as a pure function of a picklable `CellTask` (`run_cell`): generate the
data from the cell's own random stream (`studies.engine.seeding`), apply every method, keep the
estimates, then summarise them into performance measures. Results therefore do not depend on
the backend, the number of workers or the order in which cells finish.

Exact-path cells run in groups (`GroupTask`, `run_group`): the cells that agree on the study's
``estimates_depend_on`` share their enumerated outcomes and every method's estimates, so these
are computed once per group and each cell's measures come from one vectorized pass over the
group's probability matrix (`studies.engine.performance.exact_performance`). A cell's result
does not depend on which other cells share its group. Exact-path estimates are not stored: they
are a deterministic function of the group's parameters and the study's version. A study that
declares ``pack_groups`` runs each group as a `PackedTask` (`run_packed`), finishing as one
`PackedGroup` of arrays. A Monte Carlo cell's estimates are kept as
`studies.engine.replicates` packs them.

A method that raises or returns malformed estimates is recorded with its error; the other
methods still run. A study's method runs only in the cells it applies to (`Study.applies`).
A cell whose data cannot be made (the study's ``generate``, ``enumerate_outcomes`` or
``truth`` raises, or its outcomes' probabilities are not a law) has no estimates: the error is
recorded against every method that applies there, as ``data: ...``, so the claims about them
fail in that cell with the reason, and the other cells and studies still run and report.

References
----------
Morris, White & Crowther (2019), *Statistics in Medicine* 38, 2074-2102 (store the estimates,
then summarise them). R's SimDesign (Chalmers & Adkins 2020) separates generate / analyse /
summarise in the same way.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from studies.engine import replicates, seeding
from studies.engine.design import Method, Sample, Study
from studies.engine.loading import load_object
from studies.engine.performance import (
    Estimates,
    OutcomeLaw,
    exact_measures,
    exact_performance,
)
from studies.engine.results import CellResult, PackedGroup, cell_params

__all__ = ["CellTask", "Finished", "GroupTask", "PackedTask", "PlannedCell", "Task",
           "resolve_methods", "run_cell", "run_group", "run_packed", "run_task"]



@dataclass(frozen=True)
class CellTask:
    """Everything needed to run one cell anywhere (picklable).

    ``study`` is pickled by reference to its module, ``methods`` are user import paths. A
    task of a later round (`studies.engine.rounds`) raises the cell to ``level`` of its
    grid's schedule: it draws ``n_replicates`` more, in parts of at most ``chunk`` (0: at
    once), each from the stream of the level and the part, and adds them to the cell as stored
    so far, ``earlier``.
    """

    study: Study
    params: Mapping[str, Any]
    position: int
    n_replicates: int
    root: int
    path: str
    methods: tuple[str, ...] = ()
    level: int = 1
    earlier: CellResult | None = None
    chunk: int = 0


@dataclass(frozen=True)
class PlannedCell:
    """A cell of a `GroupTask`: grid position, key (`seeding.cell_key`) and params."""

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
        return cell_params(self.shared, self.axes)


Task = CellTask | GroupTask | PackedTask


def resolve_methods(study: Study, paths: Sequence[str]) -> dict[str, Method]:
    """The study's methods and the user methods at import ``paths`` (wrapped by the study)."""
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


def _data_failed(study: Study, paths: Sequence[str], params: Mapping[str, Any],
                 error: Exception) -> dict[str, str]:
    """The error of a cell whose data could not be made, for every method that applies."""
    message = f"data: {type(error).__name__}: {error}"
    return {name: message for name in resolve_methods(study, paths)
            if study.applies is None or name not in study.methods
            or study.applies(name, params)}


def _analyse(study: Study, paths: Sequence[str], sample: Sample, params: Mapping[str, Any]
             ) -> tuple[dict[str, Estimates], dict[str, str]]:
    """Every method's estimates, and the error of each method that raised or returned junk.

    A failing method is recorded and skipped; the other methods still run. A study's method
    that does not apply to the cell (`Study.applies`) is not run and has neither.
    """
    estimates: dict[str, Estimates] = {}
    errors: dict[str, str] = {}
    for name, method in resolve_methods(study, paths).items():
        if study.applies is not None and name in study.methods and not study.applies(
                name, params):
            continue
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
    study, earlier = task.study, task.earlier
    packed = earlier.estimates if earlier is not None else b""
    errors: dict[str, str] = dict(earlier.errors) if earlier is not None else {}
    # a later round draws its replicates in parts of at most the grid's declared number (the
    # memory of round 1's tasks), each from its own stream
    size = task.chunk or task.n_replicates
    try:
        truth = study.truth(task.params)
        for part, first in enumerate(range(0, task.n_replicates, size)):
            stream = seeding.cell_seed(task.root, study.name, task.params, task.level, part)
            sample = study.generate(task.params, min(size, task.n_replicates - first),
                                    rng=np.random.default_rng(stream))
            estimates, failed = _analyse(study, task.methods, sample, task.params)
            errors = {**failed, **errors}  # a method's first error is kept
            added = replicates.pack(estimates, sample.frequency)
            packed = replicates.extend(packed, added) if packed else added
    except Exception as error:  # a study's data may fail in any way; report, go on
        return CellResult(
            study=study.name, key=seeding.cell_key(study.name, task.params),
            position=task.position, params=dict(task.params), path=task.path,
            performance={}, errors=_data_failed(study, task.methods, task.params, error),
            estimates=replicates.pack({}, None), seconds=time.perf_counter() - start)
    perf = replicates.measure(packed, truth, measures=study.measures)
    seconds = earlier.seconds if earlier is not None else 0.0
    return CellResult(
        study=study.name, key=seeding.cell_key(study.name, task.params),
        position=task.position, params=dict(task.params), path=task.path,
        performance={m: p for m, p in perf.items() if m not in errors}, errors=errors,
        estimates=packed, seconds=seconds + time.perf_counter() - start)


def run_group(task: GroupTask) -> tuple[CellResult, ...]:
    """Run exact-path cells that share outcomes and estimates: analyse once, measure each.

    Each method is called once, with the first cell's params (the study declares that its
    methods read only ``estimates_depend_on``); a method's failure is reported in every cell.
    """
    start = time.perf_counter()
    study = task.study
    cells = [cell.params for cell in task.cells]
    assert study.enumerate_outcomes is not None  # checked when the run is planned
    try:
        sample = study.enumerate_outcomes(cells)
        truths = [study.truth(params) for params in cells]
        law = OutcomeLaw(sample.probability)
    except Exception as error:  # a study's data may fail in any way; report, go on
        failed = _data_failed(study, task.methods, cells[0], error)
        return tuple(
            CellResult(study=study.name, key=cell.key, position=cell.position,
                       params=dict(cell.params), path="exact", performance={}, errors=failed,
                       estimates=b"", seconds=(time.perf_counter() - start) / len(cells))
            for cell in task.cells)
    estimates, errors = _analyse(study, task.methods, sample, cells[0])
    perf = {name: exact_performance(est, truths, law, measures=study.measures)
            for name, est in estimates.items()}
    seconds = (time.perf_counter() - start) / len(cells)
    return tuple(
        CellResult(study=study.name, key=cell.key, position=cell.position,
                   params=dict(cell.params), path="exact",
                   performance={name: perf[name][i] for name in estimates}, errors=errors,
                   estimates=b"", seconds=seconds)
        for i, cell in enumerate(task.cells))


def run_packed(task: PackedTask) -> PackedGroup:
    """Run a packed group: like `run_group`, keeping each measure as an array over cells.

    With `Study.method_parameters` the group spans every combination of them: the outcomes
    of its distinct data cells are enumerated once, and every method runs once per
    combination against the same `OutcomeLaw`. A method that fails in some combinations has
    nan values there, and its first error is recorded.
    """
    start = time.perf_counter()
    study = task.study
    varied = [k for k in study.method_parameters if k in task.axes]
    data_axes = {k: v for k, v in task.axes.items() if k not in varied}
    cells = cell_params(task.shared, data_axes)
    assert study.enumerate_outcomes is not None  # checked when the run is planned
    try:
        sample = study.enumerate_outcomes(cells)
        truths = [study.truth(params) for params in cells]
        law = OutcomeLaw(sample.probability)
    except Exception as error:  # a study's data may fail in any way; report, go on
        return PackedGroup(study=study.name, key=task.key, shared=dict(task.shared),
                           axes={k: list(v) for k, v in task.axes.items()},
                           positions=task.positions, values={},
                           errors=_data_failed(study, task.methods, cells[0], error),
                           seconds=time.perf_counter() - start)
    # the group's cells (grid order) laid out along its axes
    order = np.arange(task.positions.size).reshape([len(v) for v in task.axes.values()])
    values: dict[str, dict[str, NDArray[np.float64]]] = {}
    errors: dict[str, str] = {}
    for combination in itertools.product(*(range(len(task.axes[k])) for k in varied)):
        at = dict(zip(varied, combination, strict=True))
        # the cells of this combination, in grid order: the data cells' order
        rows = order[tuple(at.get(k, slice(None)) for k in task.axes)].ravel()
        chosen = {k: task.axes[k][i] for k, i in at.items()}
        estimates, failed = _analyse(study, task.methods, sample, {**cells[0], **chosen})
        for name, message in failed.items():
            errors.setdefault(name, message)
        for name, est in estimates.items():
            found = exact_measures(est, truths, law, measures=study.measures)
            target = values.setdefault(name, {})
            for measure, array in found.items():
                target.setdefault(measure, np.full(task.positions.size, np.nan))[rows] = array
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
