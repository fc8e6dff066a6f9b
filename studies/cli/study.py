"""``evalcert study``: list, run and inspect simulation studies.

``study run`` stores every finished cell in ``OUT/run.sqlite`` as it finishes, then judges
each study's claims and writes its tables beside the store (`studies.report.write_tables`). It
exits 0 when every claim judged holds and 1 when one fails or is inconclusive (one line per
such claim: a claim without the power to decide on its grid is no pass); ``study check OUT``
judges a stored run again, and also exits 1 (a line ``INCOMPLETE``) when the run
did not finish every cell, since its verdicts then cover part of the grid. Ctrl-C stops the
run keeping the finished cells and writing their tables (exit status 130); ``--resume``
continues it. ``study salvage DIR --out NEWDIR`` copies the readable cells of a damaged run
store into a new run directory, where ``--resume`` finishes the run (`studies.engine.salvage`).

``study reference RUN_DIR`` judges a finished run (the full grids') with the current claims
and records the verdicts in ``reports/reference/`` (`studies.report.reference`).

``study compare BASELINE CURRENT`` is the regression gate (`studies.report.compare`): every
value of a run against a blessed baseline within its Monte Carlo error, exit 1 on a regression;
``study bless RUN_DIR --reason ...`` makes a finished run the baseline
(`studies.report.baseline`); ``study run --baseline DIR`` does both the run and the compare,
and its report shows the comparison.

This module runs the actions (`handle`); their parser is `studies.cli.parsers.study`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import shlex
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from studies.cli.progress import Progress
from studies.engine import (
    FAILS,
    INCONCLUSIVE,
    RunResults,
    Study,
    Verdict,
    evaluate_claims,
    results_from_store,
    run,
    run_state,
)
from studies.engine.claims import tally
from studies.engine.salvage import salvage
from studies.engine.store import DB_NAME, existing_store
from studies.report import write_report, write_tables
from studies.report.baseline import Results, bless, load_results
from studies.report.compare import Comparison, compare
from studies.report.reference import record
from studies.suite import STUDY_MODULES, claim_false_alarm, get_study, study_names

EXIT_CLAIM_FAILS = 1
EXIT_INTERRUPTED = 130


def _loaded(directory: Path, name: str) -> Results:
    """`load_results`, its error naming the argument that gave the directory."""
    try:
        return load_results(directory)
    except ValueError as error:
        raise ValueError(f"argument {name}: {error}") from None
    except OSError as error:  # a name too long to look up
        raise ValueError(f"argument {name}: cannot read {directory}: {error.strerror}") from None


def _expand(names: list[str]) -> list[str]:
    """``all`` stands for every registered study (the CI suites run them all)."""
    expanded = [n for name in names for n in (study_names() if name == "all" else (name,))]
    return list(dict.fromkeys(expanded))


def _list(args: argparse.Namespace) -> int:
    for name in study_names():
        study = get_study(name)
        module = STUDY_MODULES[name]
        doc = (importlib.import_module(module).__doc__ or "").strip()
        path = "exact" if study.enumerate_outcomes is not None else "monte-carlo"
        grids = ", ".join(f"{g}: {study.grids[g].n_cells} cells" for g in study.grids)
        print(f"{name} (v{study.version}, {path}): {doc.splitlines()[0] if doc else ''}")
        print(f"    grids: {grids}; methods: {', '.join(study.methods)}")
    return 0


def _run(args: argparse.Namespace) -> int:
    out = args.out
    if out is None:
        out = Path("reports") / "runs" / datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    studies = [get_study(name) for name in _expand(args.names)]
    baseline = _loaded(args.baseline, "--baseline") if args.baseline is not None else None
    progress = Progress(sys.stderr)
    verdicts: dict[str, list[Verdict]] = {}
    summaries: dict[str, list[dict[str, object]]] = {}

    def finished(study: RunResults) -> None:
        # judged and tabled while the other studies run: the run's tail then overlaps them
        found = _judge(study, studies, args.grid)
        verdicts.update(found)
        summaries.update(write_tables(study, out, studies, found))

    try:
        results = run(
            studies, grid=args.grid, rng=args.seed, workers=args.workers,
            scheduler=args.scheduler, out=out, resume=args.resume, methods=args.method,
            on_cell=progress, on_study=finished, command=args.command_line)
    except KeyboardInterrupt:
        progress.close()
        if not (Path(out) / DB_NAME).is_file():
            print("\nevalcert: interrupted before any cell was stored", file=sys.stderr)
            return EXIT_INTERRUPTED
        try:
            write_tables(results_from_store(out), out, studies)
        except KeyboardInterrupt:
            pass  # a second Ctrl-C: the cells are safe in the store, the tables can wait
        print(f"\nevalcert: interrupted; finished cells are kept in {out}; continue with "
              f"--resume --out {out}", file=sys.stderr)
        return EXIT_INTERRUPTED
    verdicts = {name: verdicts[name] for name in results if name in verdicts}  # run order
    for name, result in results.items():
        cells = len(result.cells) + sum(g.size for g in result.groups)
        table = f"{name}.summary.csv" if result.groups else f"{name}.csv"
        print(f"{name}: {cells} cells -> {out / table}; {_tally(verdicts[name])}")
        for method, (params, message) in result.first_errors().items():
            print(f"  method {method} failed (first failing cell {dict(params)}): {message}")
    status = _failing(verdicts)  # the verdicts are printed before the report is drawn
    comparison = None
    if baseline is not None:
        comparison = compare(baseline, load_results(out))
        _print_comparison(comparison, limit=20)
        status = max(status, comparison.status())
    index = write_report(out, studies, results, verdicts, summaries=summaries,
                         comparison=comparison)
    print(f"report: {index}")
    return status


def _judge(results: RunResults, studies: list[Study], grid: str | None
           ) -> dict[str, list[Verdict]]:
    """Each study's verdicts, every claim at its share of the suite's false-alarm budget."""
    by_name = {study.name: study for study in studies}
    return {name: evaluate_claims(by_name[name].claims, result, grid=grid,
                                  familywise_error=claim_false_alarm())
            for name, result in results.items() if name in by_name}


def _grid_name(directory: Path) -> str | None:
    """The named grid a stored run used (None for a grid given as an object)."""
    store = existing_store(directory)
    try:
        grid = store.metadata()["identity"]["grid"]
    finally:
        store.close()
    return grid if isinstance(grid, str) else None


def _tally(verdicts: list[Verdict]) -> str:
    return f"claims: {tally(verdicts)}" if verdicts else "no claims"


def _failing(verdicts: dict[str, list[Verdict]]) -> int:
    """One line per failing (worst value) or inconclusive (reason) claim; the exit status."""
    failed = [(name, v) for name, found in verdicts.items() for v in found
              if v.status in (FAILS, INCONCLUSIVE)]
    for name, verdict in failed:
        if verdict.status == FAILS:
            print(f"FAILS {name} {verdict.claim.name}: {verdict.worst()} "
                  f"({len(verdict.failures)} of {verdict.compared} values)")
        else:
            print(f"INCONCLUSIVE {name} {verdict.claim.name}: {verdict.reason}")
    return EXIT_CLAIM_FAILS if failed else 0


def _stored(directory: Path) -> tuple[RunResults, list[Study]]:
    """A stored run's results and its registered studies (others are named on stderr)."""
    results = results_from_store(directory)
    studies = []
    for name in results:
        # only a registered name: a stored one is data, and get_study would import a
        # module:ATTRIBUTE name, running code that nobody named on this command line
        if name in STUDY_MODULES:
            studies.append(get_study(name))
        else:
            print(f"{name}: not a registered study; its claims and figures are unknown",
                  file=sys.stderr)
    return results, studies


def _incomplete(directory: Path) -> int:
    """A line naming an incomplete run (its verdicts are partial); the exit status."""
    state = run_state(directory)
    if state.complete:
        return 0
    print(f"INCOMPLETE {directory}: {state.describe()}; continue it with study run ... "
          f"--resume --out {directory}")
    return EXIT_CLAIM_FAILS


def _check(args: argparse.Namespace) -> int:
    results, studies = _stored(args.directory)
    verdicts = _judge(results, studies, _grid_name(args.directory))
    for name, found in verdicts.items():
        print(f"{name}: {_tally(found)}")
    return max(_failing(verdicts), _incomplete(args.directory))


def _report(args: argparse.Namespace) -> int:
    results, studies = _stored(args.directory)
    verdicts = _judge(results, studies, _grid_name(args.directory))
    print(f"report: {write_report(args.directory, studies, results, verdicts, out=args.out)}")
    return max(_failing(verdicts), _incomplete(args.directory))


def _compare(args: argparse.Namespace) -> int:
    comparison = compare(_loaded(args.baseline, "BASELINE"), _loaded(args.current, "CURRENT"),
                         k=args.k, familywise_error=args.familywise_error)
    if args.json:
        print(json.dumps(comparison.to_dict(strict=args.strict), indent=2, allow_nan=False))
    else:
        _print_comparison(comparison, strict=args.strict)
    return comparison.status(strict=args.strict)


def _print_comparison(comparison: Comparison, *, strict: bool = False,
                      limit: int | None = None) -> None:
    """The changes worst first (at most ``limit``), claims, missing and added, the summary."""
    changes = comparison.changes
    if len(changes):
        shown = changes if limit is None else changes.head(limit)
        print(shown.drop(columns=["difference", "se"]).to_string(
            index=False, float_format=lambda v: f"{v:.6g}"))
        if len(shown) < len(changes):
            print(f"... and {len(changes) - len(shown)} more changes (study compare lists all)")
    for row in comparison.claims.itertuples():
        print(f"claim {row.study} {row.claim}: {row.baseline} -> {row.current} ({row.change})")
    for title, frame in (("missing", comparison.missing), ("added", comparison.added)):
        for row in frame.itertuples():
            print(f"{title}: {row.study} {row.method}: {row.values} values in {row.cells} cells")
    for note in comparison.notes:
        print(f"note: {note}")
    print(comparison.summary(strict=strict))


def _bless(args: argparse.Namespace) -> int:
    manifest = bless(args.directory, args.out, reason=args.reason)
    print(f"blessed {args.directory} as the baseline: {manifest}")
    return 0


def _reference(args: argparse.Namespace) -> int:
    if not (args.directory / DB_NAME).is_file():  # before the store is read: one line
        raise ValueError(f"`run_dir` must be a run directory holding {DB_NAME}; got "
                         f"{args.directory}.")
    results, studies = _stored(args.directory)
    recorded = record(args.directory, args.out,
                      _judge(results, studies, _grid_name(args.directory)))
    print(f"recorded the verdicts of {', '.join(recorded)} in {args.out} "
          f"({args.out / 'index.md'})")
    return 0


def _status(args: argparse.Namespace) -> int:
    store = existing_store(args.directory)
    try:
        meta = store.metadata()
        finished = store.finished_cells()
    finally:
        store.close()
    # the store checked the shapes of these values; a missing one is a ValueError naming it
    identity, grids = meta["identity"], meta["grids"]
    print(f"run {args.directory}: {meta.get('status', 'running or killed')}, "
          f"seed {meta['seed']}, grid {identity['grid']}")
    dirty = {True: " (modified tree)", False: "", None: " (tree state unknown)"}
    print(f"started {meta.get('started')}, ended {meta.get('ended', '-')}, "
          f"git {meta.get('git_commit') or '-'}{dirty[meta.get('git_dirty')]}")
    if "command" in meta:
        print(f"command: {meta['command']}")
        print(f"python {meta.get('python')} on {meta.get('platform')}; "
              + ", ".join(f"{k} {v}" for k, v in meta.get("packages", {}).items()))
    for resume in meta.get("resumes", []):
        print(f"resumed {resume.get('started')}: git {resume.get('git_commit') or '-'}"
              f"{dirty.get(resume.get('git_dirty'), '')}: {resume.get('command')}")
    if "salvaged" in meta:
        found = meta["salvaged"]
        print(f"salvaged from {found.get('from')} at {found.get('at')}: rows saved "
              f"{found.get('saved')}, lost {found.get('lost')}")
    for name, version in identity["studies"].items():
        total = math.prod(len(v) for v in grids[name]["parameters"].values())
        done = finished.get(name, 0)
        print(f"  {name} v{version}: {done}/{total} cells")
    return 0


def _salvage(args: argparse.Namespace) -> int:
    """Copy a damaged store's readable rows into ``--out``; say how to continue the run."""
    saved = salvage(args.directory, args.out)
    print(f"salvaged {args.directory} into {args.out}: {saved.describe()}")
    grid = saved.identity.get("grid")
    if isinstance(grid, str):
        words = ["evalcert", "study", "run", *saved.identity.get("studies", {}), "--grid", grid,
                 *(w for m in saved.identity.get("methods", []) for w in ("--method", m)),
                 "--resume", "--out", str(args.out)]
        print(f"continue the run with: {shlex.join(words)}")
    else:  # a grid built in Python has no command line
        print(f"continue the run with studies.engine.run(..., resume=True, out={args.out!r})")
    return 0


def handle(args: argparse.Namespace) -> int:
    """Run the action ``args.action`` of ``evalcert study``; the exit status."""
    return ACTIONS[args.action](args)


# Each action of the parser (`studies.cli.parsers.study`) and the function that runs it.
ACTIONS: dict[str, Callable[[argparse.Namespace], int]] = {
    "list": _list, "run": _run, "check": _check, "report": _report, "compare": _compare,
    "bless": _bless, "reference": _reference, "status": _status, "salvage": _salvage,
}
