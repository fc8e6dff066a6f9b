"""``evalcert study``: list, write, run and inspect simulation studies.

``study run`` is `studies.run_suite`: it stores every finished cell in
``OUT/run.sqlite`` as it finishes, judges each study's claims and writes its tables beside
the store (`studies.report.write_tables`), then writes the report. It
exits 0 when every claim judged holds and 1 when one fails or is inconclusive (one line per
such claim: a claim without the power to decide on its grid is no pass); ``study check OUT``
judges a stored run again, and also exits 1 (a line ``INCOMPLETE``) when the run
did not finish every cell, since its verdicts then cover part of the grid. Ctrl-C stops the
run keeping the finished cells and writing their tables (exit status 130); ``--resume``
continues it. ``study salvage DIR --out NEWDIR`` copies the readable cells of a damaged run
store into a new run directory, where ``--resume`` finishes the run (`studies.engine.salvage`).

``study report RUN_DIR`` is `studies.report.publish`. ``study new NAME`` writes a
runnable study module from the template (`studies.suite.template`).

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
import json
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from studies.cli.progress import Progress
from studies.cli.template import render
from studies.engine import FAILS, INCONCLUSIVE, Study, Verdict, results_from_store
from studies.engine.claims import tally
from studies.engine.reading import StoredRun, read_head, read_run
from studies.engine.salvage import salvage
from studies.engine.store import DB_NAME
from studies.pipeline.publication import publish, run_suite
from studies.report import write_tables
from studies.report.baseline import Results, bless, load_results
from studies.report.compare import Comparison, compare
from studies.report.reference import record
from studies.suite import get_study, judge, stored_studies, study_names, study_sources

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
    """``all`` stands for every discovered study (the CI suites run them all)."""
    expanded = [n for name in names for n in (study_names() if name == "all" else (name,))]
    return list(dict.fromkeys(expanded))


def _list(args: argparse.Namespace) -> int:
    for name, source in study_sources().items():
        study = get_study(name)
        lines = study.ademp.strip().splitlines()
        path = "exact" if study.enumerate_outcomes is not None else "monte-carlo"
        grids = ", ".join(f"{g}: {study.grids[g].n_cells} cells" for g in study.grids)
        print(f"{name} (v{study.version}, {path}): {lines[0] if lines else ''}")
        print(f"    grids: {grids}; methods: {', '.join(study.methods)}; from {source}")
    return 0


def _new(args: argparse.Namespace) -> int:
    import studies.suite

    directory = (args.directory if args.directory is not None
                 else Path(studies.suite.__file__).parent)
    if args.directory is None and args.name in study_names():
        raise ValueError(f"`name` must be new; study {args.name!r} exists "
                         f"({study_sources()[args.name]}).")
    target = directory / f"{args.name}.py"
    if target.exists():
        raise ValueError(f"`name` must be new; {target} exists.")
    directory.mkdir(parents=True, exist_ok=True)
    target.write_text(render(args.name, args.kind))
    print(f"wrote {target} ({args.kind} study); run it with")
    if args.directory is None:
        print(f"  evalcert study run {args.name} --grid quick --out reports/{args.name}")
    else:
        print(f"  evalcert study run {args.name}:STUDY --grid quick --out reports/{args.name}"
              f"  (with {directory} on PYTHONPATH)")
    return 0


def _run(args: argparse.Namespace) -> int:
    out = args.out
    if out is None:
        out = Path("reports") / "runs" / datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    names = _expand(args.names)
    studies = [get_study(name) for name in names]
    baseline = _loaded(args.baseline, "--baseline") if args.baseline is not None else None
    progress = Progress(sys.stderr)
    try:
        published = run_suite(
            studies, grid=args.grid, out=out, rng=args.seed, workers=args.workers,
            scheduler=args.scheduler, baseline=baseline, resume=args.resume,
            methods=args.method, on_cell=progress, on_task=progress.task,
            command=args.command_line, budget=args.budget)
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
    finally:
        progress.close()  # a failed run leaves no thread redrawing over its error
    for name, result in published.results.items():
        cells = len(result.cells) + sum(g.size for g in result.groups)
        table = f"{name}.summary.csv" if result.groups else f"{name}.csv"
        print(f"{name}: {cells} cells -> {out / table}; {_tally(published.verdicts[name])}")
        for method, (params, message) in result.first_errors().items():
            print(f"  method {method} failed (first failing cell {dict(params)}): {message}")
    _failing(published.verdicts)
    if published.comparison is not None:
        _print_comparison(published.comparison, limit=20)
    print(f"report: {published.index}")
    return published.status


def _tally(verdicts: Sequence[Verdict]) -> str:
    return f"claims: {tally(verdicts)}" if verdicts else "no claims"


def _failing(verdicts: Mapping[str, Sequence[Verdict]]) -> int:
    """One line per failing (worst value) or inconclusive (reason) claim; the exit status
    the verdicts alone give."""
    failed = [(name, v) for name, found in verdicts.items() for v in found
              if v.status in (FAILS, INCONCLUSIVE)]
    for name, verdict in failed:
        if verdict.status == FAILS:
            print(f"FAILS {name} {verdict.claim.name}: {verdict.worst()} "
                  f"({len(verdict.failures)} of {verdict.compared} values)")
        else:
            print(f"INCONCLUSIVE {name} {verdict.claim.name}: {verdict.reason}")
    return EXIT_CLAIM_FAILS if failed else 0


def _stored(directory: Path) -> tuple[StoredRun, list[Study]]:
    """A stored run, read once, and its discovered studies (others are named on stderr)."""
    stored = read_run(directory)
    studies, unknown = stored_studies(stored)
    _unknown(unknown)
    return stored, studies


def _unknown(names: Sequence[str]) -> None:
    for name in names:
        print(f"{name}: not a discovered study; its claims and figures are unknown",
              file=sys.stderr)


def _incomplete(stored: StoredRun) -> int:
    """A line naming an incomplete run (its verdicts are partial); the exit status."""
    if stored.state.complete:
        return 0
    print(f"INCOMPLETE {stored.directory}: {stored.state.describe()}; continue it with study "
          f"run ... --resume --out {stored.directory}")
    return EXIT_CLAIM_FAILS


def _check(args: argparse.Namespace) -> int:
    stored, studies = _stored(args.directory)
    verdicts = judge(stored.results, studies, stored.identity.grid)
    for name, found in verdicts.items():
        print(f"{name}: {_tally(found)}")
    return max(_failing(verdicts), _incomplete(stored))


def _report(args: argparse.Namespace) -> int:
    published = publish(args.directory, out=args.out)
    _unknown(published.unknown)
    print(f"report: {published.index}")
    return max(_failing(published.verdicts), _incomplete(published.run))


def _compare(args: argparse.Namespace) -> int:
    comparison = compare(_loaded(args.baseline, "BASELINE"), _loaded(args.current, "CURRENT"),
                         k=args.k, familywise_error=args.familywise_error,
                         all_studies=args.all_studies or args.strict)
    if args.json:
        print(json.dumps(comparison.to_dict(strict=args.strict), indent=2, allow_nan=False))
    else:
        _print_comparison(comparison, strict=args.strict)
    return comparison.status(strict=args.strict)


def _print_comparison(comparison: Comparison, *, strict: bool = False,
                      limit: int | None = None) -> None:
    """The changes worst first (at most ``limit``), claims, missing and added, the studies
    not compared, the summary (last: it names what the gate fails on)."""
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
    if comparison.not_compared:
        print(f"not compared: {len(comparison.not_compared)} baseline studies the current run "
              f"lacks (--all-studies counts them as missing): "
              f"{', '.join(comparison.not_compared)}")
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
    stored, studies = _stored(args.directory)
    recorded = record(args.directory, args.out,
                      judge(stored.results, studies, stored.identity.grid),
                      results=stored.results)
    print(f"recorded the verdicts of {', '.join(recorded)} in {args.out} "
          f"({args.out / 'index.md'})")
    return 0


def _status(args: argparse.Namespace) -> int:
    head = read_head(args.directory)
    identity, run = head.identity, head.provenance
    print(f"run {args.directory}: {run.status}, seed {identity.seed}, grid "
          f"{identity.grid_name}")
    dirty = {True: " (modified tree)", False: "", None: " (tree state unknown)"}
    print(f"started {run.started}, ended {run.ended or '-'}, "
          f"git {run.commit or '-'}{dirty[run.dirty]}")
    if run.command is not None:
        print(f"command: {run.command}")
        print(f"python {run.python} on {run.platform}; "
              + ", ".join(f"{k} {v}" for k, v in (run.packages or {}).items()))
    for resume in run.resumes:
        print(f"resumed {resume.get('started')}: git {resume.get('git_commit') or '-'}"
              f"{dirty.get(resume.get('git_dirty'), '')}: {resume.get('command')}")
    if run.salvaged is not None:
        found = run.salvaged
        print(f"salvaged from {found.get('from')} at {found.get('at')}: rows saved "
              f"{found.get('saved')}, lost {found.get('lost')}")
    for name, version in identity.studies.items():
        total = identity.grids[name].n_cells
        done = head.state.finished.get(name, 0)
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


def _pins(args: argparse.Namespace) -> int:
    from studies.engine.pins import pin_markdown, pin_table

    table = pin_table([get_study(name) for name in study_names()])
    text = pin_markdown(table)
    if args.out is None:
        print(text, end="")
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(f"pins: {args.out}")
    return 0 if (table["missing"] == "").all() else EXIT_CLAIM_FAILS


def _audit(args: argparse.Namespace) -> int:
    from studies.audit import (
        SHIPPED_FAULTS,
        AuditSettings,
        describe,
        load_faults,
        run_audit,
        write_audit,
    )

    faults = load_faults(args.faults or SHIPPED_FAULTS)
    if args.only:
        unknown = sorted(set(args.only) - {f.name for f in faults})
        if unknown:
            raise ValueError(f"--only must name faults of the file; got {unknown}.")
        faults = [f for f in faults if f.name in args.only]
    if args.check:
        for fault in faults:
            print(f"{fault.name}{' (harmless)' if fault.harmless else ''}: {fault.target}: "
                  f"{fault.what}")
        print(f"{len(faults)} faults apply to the source")
        return 0
    names = _expand(args.studies)
    for name in names:
        get_study(name)  # an unknown name fails here, not once per fault
    baseline = None
    if not args.no_baseline:
        _loaded(args.baseline, "--baseline")
        baseline = str(args.baseline.resolve())
    settings = AuditSettings(tuple(names), args.grid, args.seed, baseline, args.workers,
                             args.timeout)
    result = run_audit(faults, args.out, settings, resume=args.resume,
                       on_outcome=lambda *found: print(describe(*found), flush=True))
    page = write_audit(result, args.out)
    rates = result.rates()
    harmless = (f"{rates['quiet']} of {rates['harmless']} harmless rewrites quiet"
                if rates["harmless"] else "no harmless rewrites")
    print(f"audit: claims caught {rates['caught']} of {rates['faults']} faults, CI turned red "
          f"for {rates['faults'] - rates['missed']}; {harmless}; page: {page}")
    return 0


def handle(args: argparse.Namespace) -> int:
    """Run the action ``args.action`` of ``evalcert study``; the exit status."""
    return ACTIONS[args.action](args)


# Each action of the parser (`studies.cli.parsers.study`) and the function that runs it.
ACTIONS: dict[str, Callable[[argparse.Namespace], int]] = {
    "list": _list, "new": _new, "run": _run, "check": _check, "report": _report,
    "compare": _compare, "bless": _bless, "reference": _reference, "status": _status,
    "salvage": _salvage, "pins": _pins, "audit": _audit,
}
