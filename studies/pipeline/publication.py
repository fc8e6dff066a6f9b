"""Running studies and publishing a run, each in one call (what ``evalcert study run`` does).

`run_suite` runs studies (`studies.engine.run`); while they run, each packed group's shares of
its study's page tables and summary are computed beside the run as the group finishes
(`studies.report.pages.group_tables`, `studies.engine.GroupSummary`); as each study's last cell
is stored it judges the study's claims (every claim at its share of the suite's false-alarm
budget, `studies.suite.claim_false_alarm`) and writes its tables (`write_tables`), while the
other studies still run; at the end it compares the run with a baseline, if given
(`studies.report.compare`), and writes the report (`write_report`). `publish` does the same for
a run stored earlier: judge, tables, compare, report. Both read the run's store once
(`studies.engine.reading.read_run`; `run_suite` keeps the results `run` returned and reads only
the metadata) and return a `Publication`: the verdicts, the comparison, the report's path and
the exit status the command line gives.

Examples
--------
The same run from Python and from the command line writes the same report, byte for byte
apart from the timing rows (`studies.report.pages.untimed`), since ``run_suite`` records the
command line that reproduces it:

>>> import contextlib, filecmp, tempfile
>>> from pathlib import Path
>>> from studies.cli.main import main
>>> from studies.report.pages import untimed
>>> first, second = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
>>> with contextlib.chdir(first):  # the same relative --out: the command is on the pages
...     published = run_suite(["binomial_coverage"], grid="quick", rng=5, workers=1,
...                           out="run")
>>> published.status, published.index.name
(0, 'index.html')
>>> with contextlib.chdir(second):
...     main(["study", "run", "binomial_coverage", "--grid", "quick", "--seed", "5",
...           "--workers", "1", "--out", "run"])  # doctest: +ELLIPSIS
binomial_coverage: 12 cells -> ...
0
>>> written = sorted(p.name for p in (first / "run").iterdir()
...                  if p.suffix in (".html", ".md", ".csv", ".txt", ".gz"))
>>> [name for name in written if name.endswith((".html", ".md"))]
['binomial_coverage.html', 'binomial_coverage.md', 'index.html', 'index.md', 'summary.md']
>>> tables = [name for name in written if not name.endswith((".html", ".md"))]
>>> filecmp.cmpfiles(first / "run", second / "run", tables, shallow=False)[0] == tables
True
>>> all(untimed((first / "run" / name).read_text()) == untimed((second / "run" / name)
...     .read_text()) for name in written)  # pages: all but the run's start, end, wall time
True
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import os
import pickle
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from studies.engine import (
    FAILS,
    INCONCLUSIVE,
    Grid,
    GroupSummary,
    PackedGroup,
    RunResults,
    Study,
    StudyResult,
    Verdict,
)
from studies.engine.execution import process_pool
from studies.engine.reading import (
    StoredArrays,
    StoredRun,
    read_run,
    release_held_connections,
)
from studies.engine.runner import Progress, StudyDone, stream
from studies.engine.store import settle_store
from studies.report.baseline import Results, load_results
from studies.report.compare import Comparison, compare
from studies.report.figures import SUMMARY_KINDS, method_colours
from studies.report.pages import (
    GroupTables,
    PageTables,
    group_tables,
    page_tables,
    study_figure,
    write_report,
)
from studies.report.tables import summaries as study_summaries
from studies.report.tables import write_tables
from studies.suite import (
    claim_false_alarm,
    get_study,
    judge,
    judge_claim,
    stored_studies,
    study_names,
)

__all__ = ["Publication", "publish", "run_suite"]


@dataclass(frozen=True)
class Publication:
    """A published run: what was judged, compared and written.

    Attributes
    ----------
    run : StoredRun
        The run (directory, metadata, state, results).
    studies : tuple of Study
        The studies judged and reported.
    verdicts : Mapping[str, tuple of Verdict]
        Each study's verdicts, in run order.
    comparison : Comparison or None
        The run against the baseline, when one was given.
    index : Path
        The report's ``index.html``.
    unknown : tuple of str
        Studies of a stored run that are not discovered here: their claims and figures are
        unknown, so they are not judged nor reported.
    """

    run: StoredRun
    studies: tuple[Study, ...]
    verdicts: Mapping[str, tuple[Verdict, ...]]
    comparison: Comparison | None
    index: Path
    unknown: tuple[str, ...] = ()

    @property
    def results(self) -> RunResults:
        """The run's results."""
        return self.run.results

    def failing(self) -> list[tuple[str, Verdict]]:
        """Every claim that fails or is inconclusive, as (study, verdict), in run order."""
        return [(name, v) for name, found in self.verdicts.items() for v in found
                if v.status in (FAILS, INCONCLUSIVE)]

    @property
    def status(self) -> int:
        """The exit status: 1 when a claim fails or is inconclusive, the comparison shows a
        regression or the run is incomplete (its verdicts cover part of the grid), else 0."""
        regressed = self.comparison is not None and self.comparison.status() != 0
        return 1 if self.failing() or regressed or not self.run.state.complete else 0


def _baseline(baseline: str | os.PathLike[str] | Results | None) -> Results | None:
    if baseline is None or isinstance(baseline, Results):
        return baseline
    try:
        return load_results(baseline)
    except ValueError as error:
        raise ValueError(f"`baseline`: {error}") from None


class _SideWork:
    """A finished study's claims, page tables and figures, computed in local worker
    processes while this one writes the study's summary (and the run goes on).

    Each of them reads every cell: on a full grid of packed groups they are most of a
    report's cost. Sent to ``workers`` processes beside this one, a task each (a claim
    each), they share the cores instead of following one another. Packed groups go as
    references to their run store (`StoredArrays`), read where they are used; a study whose
    groups are held in memory, or that has plain cells only, is judged and drawn in this
    process, since sending it would copy it. Verdicts, tables and SVG text are the same in
    any process.

    While a run goes on, the processes also take each packed group as it finishes
    (`stream`) and compute its shares of the page tables and of a `GroupSummary`: on one
    worker they use the core the run leaves idle, and what is left when the last group is
    stored is putting the shares together, the claims and the figures.
    """

    def __init__(self, workers: int) -> None:
        self._workers = workers
        self._pool: cf.ProcessPoolExecutor | None = None
        self._verdicts: dict[str, list[cf.Future[Verdict]]] = {}
        self._tables: dict[str, cf.Future[PageTables]] = {}
        self._drawn: dict[str, list[cf.Future[str]]] = {}
        # each streamed packed group's share of its page tables, by study and group key
        self._pieces: dict[str, dict[str, cf.Future[tuple[GroupTables, Any]]]] = {}
        self._folded: dict[str, tuple[Study, StudyResult]] = {}
        self._unstreamed = False

    def _sent(self, study: Study, result: StudyResult) -> cf.ProcessPoolExecutor | None:
        """The pool to send ``study``'s ``result`` to (None: it stays in this process, as does
        a study that cannot be pickled: one holding a local function, run in process)."""
        if self._workers <= 1 or not result.groups or any(
                not isinstance(group.values, StoredArrays) for group in result.groups):
            return None
        try:
            pickle.dumps(study)
        except Exception:  # pickling fails with many exception types
            return None
        if self._pool is None:
            self._pool = process_pool(self._workers)
        return self._pool

    def warm(self, packed: bool) -> None:
        """Start the processes now, in the background, when there are packed groups to
        judge (``packed``), and make them ready (`_ready`): starting one and importing what
        the report needs takes about two seconds, which would otherwise come after a run's
        last cell, or before a stored run's first claim."""
        if self._workers <= 1 or not packed:
            return
        self._pool = pool = self._pool or process_pool(self._workers)
        threading.Thread(target=_spawn, args=(pool, self._workers), daemon=True,
                         name="start-side-work").start()

    def stream(self, results: Sequence[Any], studies: Mapping[str, Study]) -> None:
        """Compute each finished packed group's shares of its study's page tables
        (`group_tables`) and summary (when a `GroupSummary`) in the pool while the run goes
        on, when the pool is started."""
        if self._pool is None or self._unstreamed:
            return
        for found in results:
            if isinstance(found, PackedGroup) and isinstance(found.values, dict):
                summary = studies[found.study].summary
                part = summary.part if isinstance(summary, GroupSummary) else None
                try:
                    piece = self._pool.submit(_shares, found, part)
                except RuntimeError:  # the pool broke: the run goes on, its tables come later
                    self._unstreamed = True
                    self._pieces.clear()
                    return
                self._pieces.setdefault(found.study, {})[found.key] = piece

    def summary_shares(self) -> dict[str, dict[str, Any]]:
        """The streamed groups' shares of their studies' summaries (waiting for them)."""
        found = {}
        for name, pieces in self._pieces.items():
            shares = {key: future.result()[1] for key, future in pieces.items()}
            if all(share is not None for share in shares.values()):
                found[name] = shares
        return found

    def start(self, study: Study, result: StudyResult, grid: str | None) -> None:
        """Compute the study's page tables and judge its claims in the pool, if it goes: each
        claim a task of its own, so that they share the processes. Page tables whose groups
        were streamed are put together from their shares instead (`tables`)."""
        pool = self._sent(study, result)
        if pool is None:
            return
        if study.name in self._pieces:
            self._folded[study.name] = (study, result)
        else:
            self._tables[study.name] = pool.submit(page_tables, study, result)
        self._verdicts[study.name] = [pool.submit(judge_claim, study, index, result, grid)
                                      for index in range(len(study.claims))]

    def draw(self, study: Study, result: StudyResult, run_dir: Path,
             summary: Sequence[Mapping[str, Any]] | None) -> None:
        """Draw the study's figures in the pool, if it goes."""
        pool = self._sent(study, result) if study.figures else None
        if pool is None:
            return
        # an absolute path: the pool's processes keep the directory they started in
        self._drawn[study.name] = [
            pool.submit(study_figure, study, result, index, run_dir=run_dir.resolve(),
                        summary=None if summary is None else list(summary))
            for index in range(1, len(study.figures) + 1)]

    def verdicts(self, results: Mapping[str, StudyResult], studies: Sequence[Study],
                 grid: str | None) -> dict[str, tuple[Verdict, ...]]:
        """Each study's verdicts: from the pool (waiting for them), or judged here."""
        found = {name: tuple(future.result() for future in self._verdicts[name])
                 for name in results if name in self._verdicts}
        here = {name: result for name, result in results.items() if name not in found}
        return {**found, **judge(here, studies, grid)} if here else found

    def tables(self) -> dict[str, PageTables]:
        """Every sent study's page tables (waiting for them; a group not streamed, stored
        before a resume, is read here)."""
        folded = {name: page_tables(study, result, {
            key: future.result()[0] for key, future in self._pieces[name].items()})
            for name, (study, result) in self._folded.items()}
        return {**{name: future.result() for name, future in self._tables.items()}, **folded}

    def figures(self) -> dict[str, list[str]]:
        """Every sent study's figures (waiting for them)."""
        return {name: [future.result() for future in futures]
                for name, futures in self._drawn.items()}

    @property
    def pool(self) -> cf.ProcessPoolExecutor | None:
        """The processes, when work was sent to them (None: none were started)."""
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _shares(group: PackedGroup, part: Callable[[PackedGroup], Any] | None
            ) -> tuple[GroupTables, Any]:
    """A packed group's share of its study's page tables, and of its summary (``part``, a
    `GroupSummary`'s; None: the summary is not computed a group at a time)."""
    return group_tables(group), part(group) if part is not None else None


def _spawn(pool: cf.ProcessPoolExecutor, count: int) -> None:
    """Start ``count`` processes of ``pool`` and make each ready (one task each: the first
    process is still importing when the second task comes)."""
    try:
        for _ in range(count):
            pool.submit(_ready)
    except RuntimeError:  # closed first: the run failed at once
        pass


def _ready() -> None:
    """Import what judging and drawing import, in a side-work process: this module (and so
    the report's), every discovered study and matplotlib's SVG writer (`method_colours`)."""
    method_colours()


def _finish(run: StoredRun, studies: Sequence[Study], verdicts: Mapping[str, Sequence[Verdict]],
            summaries: Mapping[str, Sequence[Mapping[str, Any]]], baseline: Results | None,
            out: Path | None, unknown: Sequence[str], side: _SideWork) -> Publication:
    """Compare with the baseline and write the report: what both entry points end with."""
    ordered = {name: tuple(verdicts[name]) for name in run.results if name in verdicts}
    comparison = (compare(baseline, load_results(run, verdicts=ordered))
                  if baseline is not None else None)
    index = write_report(run, studies, run.results, ordered, out=out, summaries=summaries,
                         comparison=comparison, figures=side.figures(), tables=side.tables(),
                         pool=side.pool)
    return Publication(run, tuple(studies), ordered, comparison, index, tuple(unknown))


def publish(run_dir: str | os.PathLike[str] | StoredRun, studies: Sequence[Study] | None = None,
            *, out: str | os.PathLike[str] | None = None,
            baseline: str | os.PathLike[str] | Results | None = None) -> Publication:
    """Judge a stored run's claims, write its tables and report, compare it with a baseline.

    Parameters
    ----------
    run_dir : path or StoredRun
        A run directory (its store is read once), or a run already read.
    studies : sequence of Study, optional
        The studies to judge and report; default the discovered studies the run holds
        (`stored_studies`; the others are listed in ``Publication.unknown``).
    out : path, optional
        Where to write the tables and the report; default the run directory.
    baseline : path or Results, optional
        A baseline, run or report directory (`studies.report.baseline.load_results`) to
        compare the run with; the report shows the comparison.

    Returns
    -------
    Publication
    """
    base = _baseline(baseline)
    stored = run_dir if isinstance(run_dir, StoredRun) else read_run(run_dir)
    unknown: list[str] = []
    if studies is None:
        chosen, unknown = stored_studies(stored)
    else:
        chosen = list(studies)
    found = [s for s in chosen if s.name in stored.results]
    target = Path(out) if out is not None else stored.directory
    side = _SideWork(os.cpu_count() or 1)
    try:
        side.warm(any(stored.results[s.name].groups for s in found))
        verdicts, summaries = _judged(stored.results, found, stored.identity.grid, target, side)
        return _finish(stored, chosen, verdicts, summaries, base,
                       Path(out) if out is not None else None, unknown, side)
    finally:
        side.close()


def _judged(results: Mapping[str, StudyResult], studies: Sequence[Study], grid: str | None,
            target: Path, side: _SideWork
            ) -> tuple[dict[str, tuple[Verdict, ...]], dict[str, list[dict[str, Any]]]]:
    """Judge finished studies and write their tables, their figures drawn beside.

    Claims, page tables and the figures that do not draw the summary go to the worker
    processes first; the summaries are computed here meanwhile; the figures that draw the
    summary go once it is written.
    """
    by_name = {s.name: s for s in studies}
    chosen = {name: result for name, result in results.items() if name in by_name}
    later = {name for name in chosen
             if any(f.kind in SUMMARY_KINDS for f in by_name[name].figures)}
    for name, result in chosen.items():
        side.start(by_name[name], result, grid)
    for name, result in chosen.items():
        if name not in later:
            side.draw(by_name[name], result, target, None)
    rows = study_summaries(chosen, studies, shares=side.summary_shares())
    verdicts = side.verdicts(chosen, studies, grid)
    target.mkdir(parents=True, exist_ok=True)
    write_tables(chosen, target, studies, verdicts, rows=rows)
    for name in later:
        side.draw(by_name[name], chosen[name], target, rows.get(name))
    return verdicts, rows


def _command(studies: Sequence[Study | str], grid: str | Grid, rng: Any, out: Path,
             workers: int | None, scheduler: str | None, methods: Sequence[str],
             baseline: Any, resume: bool, budget: float | None) -> list[str] | None:
    """The ``evalcert study run`` command line that does what this call does (None when there
    is none: a study given as an object, or a grid built in Python)."""
    if not isinstance(grid, str) or not all(isinstance(s, str) for s in studies):
        return None
    words = ["evalcert", "study", "run", *(str(s) for s in studies), "--grid", grid]
    if rng is not None:
        words += ["--seed", str(rng)]
    if workers is not None:
        words += ["--workers", str(workers)]
    if scheduler is not None:
        words += ["--scheduler", scheduler]
    words += ["--out", str(out)]
    for method in methods:
        words += ["--method", method]
    if isinstance(baseline, (str, os.PathLike)):
        words += ["--baseline", str(baseline)]
    if resume:
        words += ["--resume"]
    if budget is not None:
        words += ["--budget", f"{budget:g}s"]
    return words


def run_suite(studies: Sequence[Study | str] | str = "all", *, grid: str | Grid = "quick",
              out: str | os.PathLike[str] | None = None, rng: Any = None,
              workers: int | None = None, scheduler: str | None = None,
              baseline: str | os.PathLike[str] | Results | None = None,
              resume: bool = False, methods: Sequence[str] = (),
              on_cell: Callable[[int, int], None] | None = None,
              on_task: Callable[[str, int, int], None] | None = None,
              command: Sequence[str] | None = None, budget: float | None = None
              ) -> Publication:
    """Run studies, judge their claims, write their tables, compare, write the report.

    Parameters
    ----------
    studies : "all" or sequence of Study or str
        ``"all"`` (every discovered study), or studies by name (`studies.suite.get_study`),
        ``module:ATTRIBUTE`` path, or as `Study` objects.
    grid : str or Grid
        ``"quick"`` or ``"full"`` (each study's own), or one `Grid` for every study.
    out : path, optional
        The run directory; default ``reports/runs/<UTC time>``.
    rng : int, optional
        Root seed; None draws fresh entropy (recorded in the run).
    workers, scheduler, resume, methods, on_cell, on_task, budget
        As `studies.engine.run` (whose looks between rounds judge each claim at its share of
        the suite's false-alarm budget, as the report does).
    baseline : path or Results, optional
        Compare the run with it (read before the run starts, so a bad one fails first).
    command : sequence of str, optional
        The command line recorded in the run's provenance; default the equivalent
        ``evalcert study run`` command when there is one (studies by name, a named grid).

    Returns
    -------
    Publication
        ``.status`` is the exit status ``evalcert study run`` gives.
    """
    names = list(study_names()) if studies == "all" else studies
    if isinstance(names, str):
        raise TypeError(f"`studies` must be 'all' or a sequence of studies; got {studies!r}.")
    chosen = [s if isinstance(s, Study) else get_study(s) for s in names]
    by_name = {s.name: s for s in chosen}
    target = (Path(out) if out is not None else
              Path("reports") / "runs" / datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ"))
    base = _baseline(baseline)
    verdicts: dict[str, tuple[Verdict, ...]] = {}
    summaries: dict[str, list[dict[str, Any]]] = {}
    grid_name = grid if isinstance(grid, str) else None

    # claims, tables and figures beside the run in local processes, one per core (the run's
    # own workers are idle once its last study is finished); on a cluster, in this process
    side = _SideWork(0 if scheduler is not None else os.cpu_count() or 1)

    if command is None:
        command = _command(names, grid, rng, target, workers, scheduler, methods, baseline,
                           resume, budget)
    try:
        side.warm(any(s.pack_groups for s in chosen))
        events = stream(chosen, grid=grid, rng=rng, workers=workers, scheduler=scheduler,
                        out=target, resume=resume, methods=methods, command=command,
                        familywise_error=claim_false_alarm(), budget=budget)
        with contextlib.closing(events):  # an error here ends the run as interrupted, now
            for event in events:
                if isinstance(event, Progress):
                    if event.round == 1 and event.results:  # packed groups' shares, as they come
                        side.stream(event.results, by_name)
                    event.tell(on_cell, on_task)
                elif isinstance(event, StudyDone):  # judged and written while others run
                    judged, written = _judged(event.results, chosen, grid_name, target, side)
                    verdicts.update(judged)
                    summaries.update(written)
                else:
                    results = event.results
        return _finish(read_run(target, results=results), chosen, verdicts, summaries, base,
                       None, (), side)
    finally:
        side.close()
        # the side processes read the store while the run wrote it: with them gone it can be
        # settled into run.sqlite alone
        release_held_connections()
        settle_store(target)
