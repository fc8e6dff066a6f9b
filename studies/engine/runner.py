"""Running studies: plan the unfinished cells, execute them, store each as it finishes.

`run` coordinates a run: it plans the tasks of every study's grid (`studies.engine.planning`),
skipping the cells already in the run store when resuming (a partly stored group computes only
its missing cells); executes them in process, in local worker processes or on a Dask cluster
(`studies.engine.execution`); and commits each finished task's cells to the store in one
transaction as it arrives (`studies.engine.store`), on a thread of its own (`_Writer`). A new
run records its identity (studies and versions, grid, user methods, path), its root seed and
its provenance (`studies.engine.provenance`). Every study's tasks go through one pool, so one
study's tail runs beside the next study's cells, the tasks of the costliest grids first
(`Grid.task_seconds`); ``on_study`` hands each study's results over as soon as its last cell
is stored, so its tables can be written while the other studies run.

References
----------
Morris, White & Crowther (2019), *Statistics in Medicine* 38, 2074-2102.
"""

from __future__ import annotations

import os
import queue
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from studies.engine import seeding
from studies.engine.design import Grid, Study
from studies.engine.execution import connect_dask, execute
from studies.engine.loading import load_study
from studies.engine.planning import PATHS, plan, task_cells
from studies.engine.provenance import provenance
from studies.engine.reading import group_results, read_store, release_held_connections
from studies.engine.results import CellResult, PackedGroup, RunResults, StudyResult, now
from studies.engine.store import RunStore, open_store, settle_store
from studies.engine.tasks import Finished, resolve_methods

__all__ = ["run"]


class _Writer:
    """Commits finished tasks to a run store on a thread of its own.

    On one worker the tasks run in this process, and committing a packed group (about 10 ms
    for its megabyte of arrays) would hold up the next: SQLite lets go of the GIL while it
    writes, so the commit runs beside the computing. At most `_QUEUED` tasks wait; `flush`
    returns once every task given is stored, and `put` and `flush` raise what storing
    raised (after which nothing more is stored).
    """

    def __init__(self, store: RunStore) -> None:
        self._store = store
        self._waiting: queue.Queue[tuple[Finished, ...] | None] = queue.Queue(_QUEUED)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._write, daemon=True, name="store-writer")
        self._thread.start()

    def _write(self) -> None:
        while True:
            results = self._waiting.get()
            try:
                if results is None:
                    return
                if self._error is None:
                    self._store.put_cells([r.to_row() for r in results
                                           if isinstance(r, CellResult)])
                    self._store.put_groups([r.to_row() for r in results
                                            if isinstance(r, PackedGroup)])
            except BaseException as error:  # raised in the caller, whatever it is
                self._error = error
            finally:
                self._waiting.task_done()

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error

    def put(self, results: tuple[Finished, ...]) -> None:
        """Store a finished task's results (raising what storing an earlier one raised)."""
        self._raise()
        self._waiting.put(results)

    def flush(self) -> None:
        """Wait until every task given is stored."""
        self._waiting.join()
        self._raise()

    def close(self) -> None:
        """Store what waits, then end the thread (what storing raised is left to `flush`)."""
        self._waiting.put(None)
        self._thread.join()


_QUEUED = 2  # finished tasks waiting to be stored: a packed group holds a megabyte or more


def _grid_of(study: Study, grid: str | Grid) -> Grid:
    return grid if isinstance(grid, Grid) else study.grid(grid)


def run(
    studies: Sequence[Study | str],
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
    on_task: Callable[[str, int, int], None] | None = None,
    on_study: Callable[[RunResults], None] | None = None,
    on_results: Callable[[tuple[Finished, ...]], None] | None = None,
    command: Sequence[str] | None = None,
) -> RunResults:
    """Run studies cell by cell, storing each finished cell; return every study's results.

    Parameters
    ----------
    studies : sequence of Study or str
        `Study` objects or import paths ``module:ATTRIBUTE`` of them (the discovered studies
        are `studies.suite.get_study`'s).
    grid : str or Grid
        Grid name (``"quick"``, ``"full"``) or an explicit `Grid` (used for every study).
    rng : int or None
        Root seed (a non-negative integer); None draws fresh entropy, recorded in the store.
    workers : int, optional
        Local worker processes; default the number of cores. 1 runs in process.
    scheduler : str, optional
        Address of a Dask scheduler (``tcp://HOST:PORT``); overrides ``workers``.
    out : path, optional
        Run directory for the SQLite run store; None keeps results in memory. The tables a
        person reads are written from the store by `studies.report.write_tables`.
    resume : bool
        Continue the run in ``out``, skipping finished cells (the root seed is taken from it).
    methods : sequence of str
        User methods as import paths ``module:callable``, added to every study's methods.
    path : {"auto", "exact", "monte-carlo"}
        ``"auto"``: exact where the study can enumerate its outcomes.
    on_cell : callable, optional
        Called as ``on_cell(done, total)`` (cells) once before the first task (``done`` counts
        the cells finished before a resume) and after each task: a Monte Carlo cell or a group
        of exact-path cells (progress display).
    on_task : callable, optional
        Called as ``on_task(study, done, cells)`` (the cells of that study) for every study
        once before the first task and for a task's study after it, before ``on_cell``: a
        progress display can then name the studies running and time each one's cells.
    on_study : callable, optional
        Called as ``on_study(results)`` once per study, with a `RunResults` of that study
        alone, as soon as its last cell is stored, while other studies' cells may still run
        (a study with nothing left to run on a resume: after the last task). An exception it
        raises stops the run, as an interrupted one.
    on_results : callable, optional
        Called as ``on_results(results)`` with each finished task's cells and packed groups
        (their arrays in memory) as they arrive, to work on them while the run goes on. An
        exception it raises stops the run, as an interrupted one.
    command : sequence of str, optional
        The command line recorded in the run's provenance (default ``sys.argv``).

    Returns
    -------
    RunResults
        Study name to `StudyResult`: every finished cell (including those from before a
        resume); ``.to_frame()`` is the tidy table.

    Raises
    ------
    ValueError
        On a study that is not a `Study` or its import path, an unknown grid, a bad seed,
        worker count, path or method import path, an unreachable scheduler, or a run directory
        that cannot be used: another run is writing it, it holds another run, or its store is
        damaged (see `studies.engine.store.open_store`).

    References
    ----------
    Morris, White & Crowther (2019), Statistics in Medicine 38:2074-2102.
    """
    if path not in PATHS:
        raise ValueError(f"`path` must be one of {PATHS}; got {path!r}.")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ValueError(f"`workers` must be a positive integer; got {workers!r}.")
    loaded = [s if isinstance(s, Study) else load_study(s) for s in studies]
    resolved = list({s.name: s for s in loaded}.values())  # a study named twice runs once
    grids = {s.name: _grid_of(s, grid) for s in resolved}
    identity = {
        "studies": {s.name: s.version for s in resolved},
        "grid": grid if isinstance(grid, str) else grid.to_dict(),
        "methods": list(methods),
        "path": path,
    }
    # a bad user method or grid fails here, before a run store exists to block the retry
    for s in resolved:
        resolve_methods(s.for_grid(grids[s.name]), tuple(methods))
    # connect first: an unreachable scheduler must not leave a half-made run directory
    client = connect_dask(scheduler) if scheduler is not None else None
    store: RunStore | None = None
    collected: list[Finished] = []
    # what `on_study` was given, returned as it is: a full grid is not read back twice
    read_back: dict[str, StudyResult] = {}

    writer: _Writer | None = None

    def announce(name: str) -> None:
        assert on_study is not None
        if writer is not None:
            writer.flush()
        found = _study_results(name, store, collected, parameters[name])
        read_back[name] = found[name]
        on_study(found)

    status = "interrupted"
    try:  # whatever fails from here on, the client is closed and the store (and lock) too
        if out is not None:
            grid_meta = {name: g.to_dict() for name, g in grids.items()}
            store = _open(Path(out), identity, rng, resume, grid_meta, provenance(command))
            root = int(store.metadata()["seed"])
        else:
            root = seeding.root_entropy(rng)
        done_keys = store.finished_keys() if store is not None else set()
        tasks = [t for s in resolved
                 for t in plan(s.for_grid(grids[s.name]), grids[s.name], root, path,
                               tuple(methods), done_keys)]
        # longest first (`Grid.task_seconds`); stable, so hint-less tasks keep study order
        tasks.sort(key=lambda t: -(grids[t.study.name].task_seconds or 0.0))
        total = sum(grids[s.name].n_cells for s in resolved)
        done = total - sum(task_cells(t) for t in tasks)
        pending = Counter(t.study.name for t in tasks)
        parameters = {name: list(g.parameters) for name, g in grids.items()}
        cells = {s.name: grids[s.name].n_cells for s in resolved}
        study_done = {name: n - sum(task_cells(t) for t in tasks if t.study.name == name)
                      for name, n in cells.items()}
        if on_task is not None:
            for name, n in cells.items():
                on_task(name, study_done[name], n)
        if on_cell is not None:
            on_cell(done, total)
        writer = _Writer(store) if store is not None else None
        for results in execute(tasks, workers or os.cpu_count() or 1, client):
            if writer is not None:
                writer.put(results)
            else:  # with a store, results are read back from it (Monte Carlo blobs stay on disk)
                collected.extend(results)
            if on_results is not None:
                on_results(results)
            name = results[0].study  # a task computes cells of one study
            finished = sum(r.size if isinstance(r, PackedGroup) else 1 for r in results)
            done += finished
            study_done[name] += finished
            if on_task is not None:
                on_task(name, study_done[name], cells[name])
            if on_cell is not None:
                on_cell(done, total)
            pending[name] -= 1
            if on_study is not None and not pending[name]:
                announce(name)
        if on_study is not None:
            for name in [s.name for s in resolved if s.name not in pending]:
                announce(name)
        if writer is not None:
            writer.flush()
        status = "complete"
    finally:
        if client is not None:
            client.close()
        if store is not None:
            try:
                if writer is not None:
                    writer.close()  # what finished is stored, even on Ctrl-C
                store.set_metadata(ended=now(), status=status)
                if len(read_back) < len(resolved):
                    collected = read_store(store)
            finally:
                store.close()
                # run.sqlite alone holds the run from here (unless a reader elsewhere still
                # has it open: then whoever runs this last settles it)
                release_held_connections()
                settle_store(store.directory)
    if len(read_back) == len(resolved):  # each study already read back for `on_study`
        return RunResults(((s.name, read_back[s.name]) for s in resolved), directory=out)
    return group_results(collected, resolved,
                         {name: list(g.parameters) for name, g in grids.items()}, directory=out)


def _study_results(name: str, store: RunStore | None, collected: Sequence[Finished],
                   parameters: Sequence[str]) -> RunResults:
    """One study's finished cells and groups: read from ``store``, else from ``collected``."""
    if store is None:
        finished = [r for r in collected if r.study == name]
    else:
        finished = read_store(store, study=name)
    return group_results(finished, [name], {name: list(parameters)})


def _open(directory: Path, identity: Mapping[str, Any], rng: Any, resume: bool,
          grids: Mapping[str, Any], origin: Mapping[str, Any]) -> RunStore:
    """The run store, locked, its seed checked against ``rng``.

    A new run records its seed, grids and ``origin`` (`studies.engine.provenance`) with its
    identity; each resume adds its own origin to ``resumes``, since it may run from other code.
    """
    root = seeding.root_entropy(rng)  # an explicit seed is checked before anything is written
    start = {"seed": str(root), "started": now(), "grids": dict(grids), **origin}
    # a resumed run's cells were drawn from its seed: a different one is refused untouched
    store = open_store(directory, identity, resume=resume, start=start,
                       keep_seed=resume and rng is None, seed=None if rng is None else root)
    if store.created:
        return store
    try:
        meta = store.metadata()
        _ = meta["seed"], meta["grids"]  # its readers need its seed and grids
        store.set_metadata(resumes=[*meta.get("resumes", []), {"started": now(), **origin}])
    except BaseException:
        store.close()
        settle_store(directory)
        raise
    return store
