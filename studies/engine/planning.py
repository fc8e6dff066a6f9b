"""Planning a run: the tasks that compute a study's unfinished cells on a grid.

Monte Carlo cells are one task each. Exact-path cells that agree on the study's
``estimates_depend_on`` form one group task (enumerated and analysed once). A study that
declares ``pack_groups`` is planned group by group without building its cells (grids of
millions of cells), each group a `PackedTask` whose key is the cell key of its shared values.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from studies.engine import seeding
from studies.engine.design import Grid, Study
from studies.engine.tasks import (
    CellTask,
    GroupTask,
    PackedTask,
    PlannedCell,
    Task,
)

__all__ = ["PATHS", "plan", "plan_packed", "task_cells"]

PATHS: tuple[str, ...] = ("auto", "exact", "monte-carlo")


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


def plan(study: Study, grid: Grid, root: int, path: str, methods: tuple[str, ...],
          done: set[tuple[str, str]]) -> list[Task]:
    """Tasks for the cells of ``grid`` not in ``done`` (``(study, cell key)`` pairs).

    ``path`` is one of `PATHS`: ``"auto"`` takes the exact path where the study can enumerate
    its outcomes. Raises ValueError on an exact path the study cannot take. The grid
    (`Study.check_grid`) and the user ``methods`` are checked once, by `stream`, before a run
    store exists.
    """
    chosen = path
    if path == "auto":
        chosen = "exact" if study.enumerate_outcomes is not None else "monte-carlo"
    elif path == "exact" and study.enumerate_outcomes is None:
        raise ValueError(f"`path` 'exact' needs an enumerable study; {study.name!r} is not.")
    if chosen == "exact" and study.pack_groups:
        return plan_packed(study, grid, methods, done)
    planned = (PlannedCell(i, seeding.cell_key(study.name, params), params)
               for i, params in enumerate(grid.cells()))
    pending = [cell for cell in planned if (study.name, cell.key) not in done]
    if chosen == "monte-carlo":
        return [CellTask(study, cell.params, cell.position, grid.n_replicates, root, chosen,
                         methods) for cell in pending]
    return [GroupTask(study, cells, methods) for cells in _groups(study, pending)]


def plan_packed(study: Study, grid: Grid, methods: tuple[str, ...],
                 done: set[tuple[str, str]]) -> list[Task]:
    """One task per group not in ``done``, without building the cells (millions of them).

    A group's key is `studies.engine.seeding.cell_key` of its shared values; its cells' grid
    positions follow from the product structure of the grid.
    """
    shared_names = list(study.packed_by)
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


def task_cells(task: Task) -> int:
    """Number of cells a task computes."""
    if isinstance(task, PackedTask):
        return int(task.positions.size)
    return len(task.cells) if isinstance(task, GroupTask) else 1
