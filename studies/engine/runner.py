"""Running studies: plan the unfinished cells, execute them, store each as it finishes.

`run` coordinates a run: it plans the tasks of every study's grid (`studies.engine.planning`),
skipping the cells already in the run store when resuming (a partly stored group computes only
its missing cells); executes them in process, in local worker processes or on a Dask cluster
(`studies.engine.execution`); and commits each finished task's cells to the store in one
transaction as it arrives (`studies.engine.store`), on a thread of its own (`_Writer`). A new
run records its identity (studies and versions, grid, user methods, path), its root seed and
its provenance (`studies.engine.provenance`). Every study's tasks go through one pool, so one
study's tail runs beside the next study's cells, the tasks of the costliest grids first
(`Grid.task_seconds`). `stream` is the run as the events a caller iterates over (`Progress`
after each task, `StudyDone` as soon as a study's last cell is stored, so that its tables can
be written while the other studies run, and `RunDone`); `run` hands the same events to
callbacks.

References
----------
Morris, White & Crowther (2019), *Statistics in Medicine* 38, 2074-2102.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studies.engine import replicates, rounds, seeding
from studies.engine.claims import DEFAULT_FAMILYWISE_ERROR
from studies.engine.design import Grid, Study
from studies.engine.execution import connect_dask, execute
from studies.engine.loading import load_study
from studies.engine.planning import PATHS, plan, task_cells
from studies.engine.provenance import provenance
from studies.engine.reading import group_results, read_store, release_held_connections
from studies.engine.results import CellResult, PackedGroup, RunResults, StudyResult, now
from studies.engine.rounds import Look
from studies.engine.store import RunStore, open_store, settle_store
from studies.engine.tasks import CellTask, Finished, Task, resolve_methods

__all__ = ["Event", "Progress", "RunDone", "StudyDone", "run", "stream"]


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


@dataclass(frozen=True)
class Progress:
    """An event of `stream`: a round's tasks about to run, or one of them finished.

    Attributes
    ----------
    round : int
        1 for the grids as declared, then each later round (`studies.engine.rounds`), whose
        raised cells count as a run of their own.
    studies : Mapping[str, tuple[int, int]]
        Each study's finished cells and cells in this round: every study of the round when
        it starts (``results`` empty), the finished task's study after a task.
    done, total : int
        The round's cells finished (on a resume, counting those from before) and all of them.
    results : tuple
        The finished task's cells and packed groups, their arrays in memory (empty when the
        round starts).
    """

    round: int
    studies: Mapping[str, tuple[int, int]]
    done: int
    total: int
    results: tuple[Finished, ...] = ()

    def tell(self, on_cell: Callable[[int, int], None] | None,
             on_task: Callable[[str, int, int], None] | None) -> None:
        """Hand the event to `run`'s progress callbacks: ``on_task(study, done, cells)`` for
        each study it names, then ``on_cell(done, total)``."""
        if on_task is not None:
            for name, (done, cells) in self.studies.items():
                on_task(name, done, cells)
        if on_cell is not None:
            on_cell(self.done, self.total)


@dataclass(frozen=True)
class StudyDone:
    """An event of `stream`: a study's last cell is stored (its looks taken, in a grid of
    rounds), while other studies' cells may still run. ``results`` holds that study alone."""

    results: RunResults


@dataclass(frozen=True)
class RunDone:
    """The last event of `stream`: every study's results (``results``), the store closed."""

    results: RunResults


Event = Progress | StudyDone | RunDone


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
    familywise_error: float = DEFAULT_FAMILYWISE_ERROR,
    budget: float | None = None,
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
    familywise_error : float
        The false-alarm rate of a claim that states none, at which the looks between rounds
        judge the claims (`studies.engine.rounds`; a suite's share of its budget).
    budget : float, optional
        Seconds of wall time after which no further round starts (a grid with ``rounds > 1``);
        the claims still open are then judged on the replicates they have. None: no limit.

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
    events = stream(studies, grid=grid, rng=rng, workers=workers, scheduler=scheduler, out=out,
                    resume=resume, methods=methods, path=path, command=command,
                    familywise_error=familywise_error, budget=budget,
                    each_study=on_study is not None)
    with contextlib.closing(events):  # a callback's exception ends the run here, not later
        for event in events:
            if isinstance(event, Progress):
                if on_results is not None and event.results and event.round == 1:
                    on_results(event.results)
                event.tell(on_cell, on_task)
            elif isinstance(event, StudyDone):
                assert on_study is not None
                on_study(event.results)
            else:
                return event.results
    raise AssertionError("a run's events end with RunDone")  # pragma: no cover


def stream(
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
    command: Sequence[str] | None = None,
    familywise_error: float = DEFAULT_FAMILYWISE_ERROR,
    budget: float | None = None,
    each_study: bool = True,
) -> Iterator[Event]:
    """`run` as the events it goes through: what a caller iterates over instead of being
    called back.

    The arguments are `run`'s (checked here, before anything runs); ``each_study``: yield a
    `StudyDone` for each study as soon as it is finished (its results read back from the
    store), else only the final `RunDone`. The run goes on as the events are taken: it yields
    a `Progress` as each round starts and after each finished task, a `StudyDone` per study
    and, last, `RunDone`. Closing the iterator early (``close()``, or leaving a ``with
    contextlib.closing(...)`` block on an exception) stops the run as an interrupted one:
    what finished is stored and ``--resume`` continues it.

    Examples
    --------
    >>> from studies.engine.runner import stream
    >>> events = list(stream(["studies.suite.binomial_coverage:STUDY"], rng=1, workers=1))
    >>> [type(e).__name__ for e in events]
    ['Progress', 'Progress', 'Progress', 'Progress', 'StudyDone', 'RunDone']
    >>> events[0].studies, list(events[-1].results)
    ({'binomial_coverage': (0, 12)}, ['binomial_coverage'])
    """
    if path not in PATHS:
        raise ValueError(f"`path` must be one of {PATHS}; got {path!r}.")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int | float)
                               or not budget > 0):
        raise ValueError(f"`budget` must be a positive number of seconds or None; got "
                         f"{budget!r}.")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ValueError(f"`workers` must be a positive integer; got {workers!r}.")
    loaded = [s if isinstance(s, Study) else load_study(s) for s in studies]
    resolved = list({s.name: s for s in loaded}.values())  # a study named twice runs once
    grids = {s.name: _grid_of(s, grid) for s in resolved}
    # a bad user method or grid fails here, before a run store exists to block the retry; a
    # study's own grids were checked when it was built
    for s in resolved:
        if isinstance(grid, Grid):
            s.check_grid(grid)
        resolve_methods(s.for_grid(grids[s.name]), tuple(methods))
    return _events(_Request(tuple(resolved), grids, grid, rng, workers or os.cpu_count() or 1,
                            scheduler, out, resume, tuple(methods), path, command,
                            familywise_error, budget, each_study))


@dataclass(frozen=True)
class _Request:
    """What `stream` was asked to run, checked once: its arguments, the studies loaded (each
    once) and each study's `Grid`, read from here by every step of the run."""

    studies: tuple[Study, ...]
    grids: Mapping[str, Grid]
    grid: str | Grid
    rng: Any
    workers: int
    scheduler: str | None
    out: str | os.PathLike[str] | None
    resume: bool
    methods: tuple[str, ...]
    path: str
    command: Sequence[str] | None
    familywise_error: float
    budget: float | None
    each_study: bool

    @property
    def identity(self) -> dict[str, Any]:
        """The run's identity as the store records it (`studies.engine.identity`)."""
        return {"studies": {s.name: s.version for s in self.studies},
                "grid": self.grid if isinstance(self.grid, str) else self.grid.to_dict(),
                "methods": list(self.methods), "path": self.path}


def _events(request: _Request) -> Iterator[Event]:
    """`stream`'s run, its arguments checked."""
    resolved, grids, methods = request.studies, request.grids, request.methods
    deadline = None if request.budget is None else time.monotonic() + request.budget
    # connect first: an unreachable scheduler must not leave a half-made run directory
    client = connect_dask(request.scheduler) if request.scheduler is not None else None
    store: RunStore | None = None
    collected: list[Finished] = []
    # each study's results as a `StudyDone` gave them, returned as they are: a full grid is
    # not read back twice
    read_back: dict[str, StudyResult] = {}
    writer: _Writer | None = None

    def finished_study(name: str) -> StudyDone:
        if writer is not None:
            writer.flush()
        found = _study_results(name, store, collected, grids[name])
        read_back[name] = found[name]
        return StudyDone(found)

    status = "interrupted"
    try:  # whatever fails from here on, the client is closed and the store (and lock) too
        if request.out is not None:
            grid_meta = {name: g.to_dict() for name, g in grids.items()}
            store = _open(Path(request.out), request.identity, request.rng, request.resume,
                          grid_meta, provenance(request.command))
            root = int(store.metadata()["seed"])
        else:
            root = seeding.root_entropy(request.rng)
        done_keys = store.finished_keys() if store is not None else set()
        tasks = [t for s in resolved
                 for t in plan(s.for_grid(grids[s.name]), grids[s.name], root, request.path,
                               methods, done_keys)]
        # longest first (`Grid.task_seconds`); stable, so hint-less tasks keep study order
        tasks.sort(key=lambda t: -(grids[t.study.name].task_seconds or 0.0))
        total = sum(grids[s.name].n_cells for s in resolved)
        done = total - sum(task_cells(t) for t in tasks)
        pending = Counter(t.study.name for t in tasks)
        cells = {s.name: grids[s.name].n_cells for s in resolved}
        study_done = {name: n - sum(task_cells(t) for t in tasks if t.study.name == name)
                      for name, n in cells.items()}
        yield Progress(1, {name: (study_done[name], n) for name, n in cells.items()}, done,
                       total)
        writer = _Writer(store) if store is not None else None
        for results in execute(tasks, request.workers, client):
            if writer is not None:
                writer.put(results)
            else:  # with a store, results are read back from it (Monte Carlo blobs stay on disk)
                collected.extend(results)
            name = results[0].study  # a task computes cells of one study
            finished = sum(r.size if isinstance(r, PackedGroup) else 1 for r in results)
            done += finished
            study_done[name] += finished
            yield Progress(1, {name: (study_done[name], cells[name])}, done, total, results)
            pending[name] -= 1
            if request.each_study and not pending[name] and grids[name].rounds == 1:
                yield finished_study(name)
        stepping = [s for s in resolved if grids[s.name].rounds > 1]
        if stepping:
            if writer is not None:
                writer.flush()
            yield from _later_rounds(
                stepping, grids, request.grid if isinstance(request.grid, str) else None, root,
                methods, store, collected, writer,
                lambda tasks: execute(tasks, request.workers, client),
                request.familywise_error, deadline)
        if request.each_study:
            for name in [s.name for s in resolved
                         if s.name not in pending or grids[s.name].rounds > 1]:
                yield finished_study(name)
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
    if len(read_back) == len(resolved):  # each study already read back for its StudyDone
        yield RunDone(RunResults(((s.name, read_back[s.name]) for s in resolved),
                                 directory=request.out))
        return
    yield RunDone(group_results(collected, resolved,
                                {name: list(g.parameters) for name, g in grids.items()},
                                directory=request.out,
                                looks={name: g.rounds for name, g in grids.items()}))


def _later_rounds(stepping: Sequence[Study], grids: Mapping[str, Grid], grid_name: str | None,
                  root: int, methods: tuple[str, ...], store: RunStore | None,
                  collected: list[Finished], writer: _Writer | None,
                  run_tasks: Callable[[list[Task]], Any], familywise_error: float,
                  deadline: float | None) -> Iterator[Progress]:
    """The rounds after the first (`studies.engine.rounds`), for the studies in ``stepping``.

    Each round looks at every study's claims (the look stored before the cells it raises
    run), then runs the raised cells together, as a run of their own (`Progress` of round 2
    on: each raised cell counts once). A look already stored (a resumed run) is taken as it
    is, and a raised cell already at its level is not run again, so a run resumed mid-round
    finishes as it would have. No new look is taken once ``deadline`` has passed: the store
    records, as ``budget_cut``, each study whose rounds the deadline ended and the round it
    would have taken next (none on a run, or a resume, whose rounds ran to their end).
    """
    cut: dict[str, int] = {}
    if store is not None:
        store.set_metadata(budget_cut=cut)
    looks: dict[str, list[Look]] = {}
    for row in store.rounds() if store is not None else ():
        found = Look.from_row(row)
        looks.setdefault(found.study, []).append(found)
    for round_ in range(1, max(grids[s.name].rounds for s in stepping) + 1):
        tasks: list[Task] = []
        for study in stepping:
            taken = looks.setdefault(study.name, [])
            looked = len(taken) >= round_  # a resumed run's look, stored before it stopped
            if looked and not taken[round_ - 1].raised:
                continue
            if not looked and (len(taken) < round_ - 1 or (taken and not taken[-1].raised)):
                continue  # its rounds ended earlier
            if not looked and deadline is not None and time.monotonic() > deadline:
                cut[study.name] = round_ + 1  # the time is spent with its claims open
                continue
            # read once, with the estimates a raised cell extends
            finished = _finished(study.name, store, collected, with_estimates=True)
            if not looked:
                current = _grouped(study.name, finished, grids[study.name])[study.name]
                found, _ = rounds.look(study, grids[study.name], grid_name, current, round_,
                                       familywise_error=familywise_error)
                if store is not None:
                    store.put_round(found.to_row())
                taken.append(found)
            tasks += _raise_tasks(study.for_grid(grids[study.name]), grids[study.name],
                                  taken[round_ - 1], root, methods, finished)
        if cut and store is not None:
            store.set_metadata(budget_cut=cut)
        if not tasks:
            return
        # longest first, as in round 1 (stable: hint-less tasks keep study order)
        tasks.sort(key=lambda t: -_raise_seconds(t, grids[t.study.name]))
        per_study = Counter(t.study.name for t in tasks)
        here: Counter[str] = Counter()
        yield Progress(round_ + 1, {name: (0, n) for name, n in per_study.items()}, 0,
                       len(tasks))
        for results in run_tasks(tasks):
            if writer is not None:
                writer.put(results)
            else:
                replaced = {(r.study, r.key) for r in results}
                collected[:] = [r for r in collected if (r.study, r.key) not in replaced]
                collected.extend(results)
            name = results[0].study
            here[name] += 1
            yield Progress(round_ + 1, {name: (here[name], per_study[name])},
                           sum(here.values()), len(tasks), results)
        if writer is not None:
            writer.flush()


def _raise_seconds(task: Task, grid: Grid) -> float:
    """About how long a task raising a cell takes on one core: the grid's `Grid.task_seconds`
    (for its declared replicates) scaled by the replicates the task draws; 0 without a hint.

    On the quick suite a raised cell of 4,500 replicates (about 17 s) otherwise started after
    35 short ones of another study and ran alone on one core at the round's end: started
    first, it takes round 2 from about 27 s to 19 s.
    """
    if not isinstance(task, CellTask):
        return 0.0
    return (grid.task_seconds or 0.0) * task.n_replicates / grid.n_replicates


def _raise_tasks(study: Study, grid: Grid, planned: Look, root: int, methods: tuple[str, ...],
                 finished: Sequence[Finished]) -> list[Task]:
    """The tasks raising the cells a look names to their levels (those not there yet);
    ``finished``: the study's cells, with their estimates."""
    schedule = grid.schedule
    tasks: list[Task] = []
    for cell in finished:
        level = planned.raised.get(cell.key)
        if level is None or not isinstance(cell, CellResult):
            continue
        held = replicates.count(cell.estimates)
        if held >= schedule[level - 1]:
            continue  # raised before the run was interrupted
        tasks.append(CellTask(study, cell.params, cell.position, schedule[level - 1] - held,
                              root, cell.path, methods, level=level, earlier=cell,
                              chunk=grid.n_replicates))
    return tasks


def _study_results(name: str, store: RunStore | None, collected: Sequence[Finished],
                   grid: Grid) -> RunResults:
    """One study's finished cells and groups: read from ``store``, else from ``collected``."""
    return _grouped(name, _finished(name, store, collected), grid)


def _finished(name: str, store: RunStore | None, collected: Sequence[Finished], *,
              with_estimates: bool = False) -> list[Finished]:
    """One study's finished cells and groups, from ``store`` (its cells' estimates read only
    ``with_estimates``), else from ``collected``."""
    if store is None:
        return [r for r in collected if r.study == name]
    return read_store(store, study=name, with_estimates=with_estimates)


def _grouped(name: str, finished: Sequence[Finished], grid: Grid) -> RunResults:
    return group_results(list(finished), [name], {name: list(grid.parameters)},
                         looks={name: grid.rounds})


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
