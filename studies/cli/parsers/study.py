"""The parser of ``evalcert study`` and its actions; they run in `studies.cli.study`."""

from __future__ import annotations

import argparse
import keyword
from pathlib import Path
from typing import Any

from studies.cli.args import (
    count,
    duration,
    familywise_error,
    output_directory,
    positive_number,
    workers,
)
from studies.cli.names import FAMILYWISE_ERROR

__all__ = ["add_command"]


def add_command(commands: Any) -> None:
    """Add the ``study`` subcommand and its actions."""
    study = commands.add_parser(
        "study", help="simulation studies: list, new, run, check, report, compare, bless, "
                      "reference, status, salvage, pins, audit")
    study.set_defaults(handler=_handle)  # every action: `studies.cli.study.handle` runs it
    actions = study.add_subparsers(dest="action", required=True, parser_class=type(study))
    actions.add_parser("list", help="the discovered studies, their grids and where they come "
                                    "from")

    new = actions.add_parser(
        "new", help="write a new study module from a template that runs as written")
    new.add_argument("name", metavar="NAME", type=_study_name,
                     help="the study's name, also its module's (a Python identifier)")
    kind = new.add_mutually_exclusive_group()
    kind.add_argument("--monte-carlo", dest="kind", action="store_const", const="monte-carlo",
                      help="a Monte Carlo study: replicates drawn, MCSE on every value "
                           "(default)")
    kind.add_argument("--exact", dest="kind", action="store_const", const="exact",
                      help="an exact study: every outcome enumerated with its probability")
    new.set_defaults(kind="monte-carlo")
    new.add_argument("--directory", type=Path, default=None, metavar="DIR",
                     help="where to write NAME.py (default: the studies.suite package, where "
                          "it is discovered by name)")

    runner = actions.add_parser("run", help="run studies, storing each finished cell")
    runner.add_argument("names", nargs="+", metavar="NAME",
                        help="study name (study list), or 'all', or module:ATTRIBUTE (imports "
                             "that module, running its top-level code)")
    runner.add_argument("--grid", default="quick", choices=("quick", "full"),
                        help="grid of every study: quick (minutes, CI) or full (the study's "
                             "published numbers)")
    runner.add_argument("--seed", type=count, default=None,
                        help="root seed (default: fresh entropy, recorded in the run)")
    runner.add_argument("--workers", type=workers, default=None,
                        help="local worker processes (default: number of cores)")
    runner.add_argument("--scheduler", default=None, metavar="ADDR",
                        help="Dask scheduler address tcp://HOST:PORT (needs the dask extra)")
    runner.add_argument("--out", type=output_directory, default=None,
                        help="run directory (default reports/runs/<UTC time>)")
    runner.add_argument("--resume", action="store_true",
                        help="continue the interrupted run in --out, skipping finished cells")
    runner.add_argument("--budget", type=duration, default=None, metavar="TIME",
                        help="wall time after which no further round of replicates starts "
                             "(90s, 30m, 1.5h; grids with rounds): claims still open are "
                             "judged on the replicates they have")
    runner.add_argument("--method", action="append", default=[], metavar="MODULE:CALLABLE",
                        help="add a user method to every study (repeatable; the study's module "
                             "docstring gives the signature); imports MODULE, running its "
                             "top-level code")
    runner.add_argument("--baseline", type=Path, default=None, metavar="DIR",
                        help="compare the run with this baseline (study compare), show the "
                             "comparison in the report and exit 1 on a regression")

    check = actions.add_parser(
        "check", help="judge the claims of a stored run again (exit 1 if one fails or is "
                       "inconclusive)")
    check.add_argument("directory", type=Path, help="a run directory (holding run.sqlite)")

    report = actions.add_parser(
        "report", help="write the HTML and Markdown report of a stored run (exit 1 if a claim "
                       "fails or is inconclusive)")
    report.add_argument("directory", type=Path, help="a run directory (holding run.sqlite)")
    report.add_argument("--out", type=output_directory, default=None,
                        help="where to write the report (default: the run directory)")

    comparing = actions.add_parser(
        "compare", help="compare a run with a baseline within Monte Carlo error (exit 1 on a "
                        "regression)")
    comparing.add_argument("baseline", type=Path, metavar="BASELINE",
                           help="a baseline, run or report directory")
    comparing.add_argument("current", type=Path, metavar="CURRENT",
                           help="a run or report directory (or another baseline)")
    comparing.add_argument("--k", type=positive_number, default=None,
                           help="SE multiple allowed to a Monte Carlo value (default: from "
                                "--familywise-error)")
    comparing.add_argument("--familywise-error", type=familywise_error,
                           default=FAMILYWISE_ERROR,
                           help="probability that an unchanged run is flagged somewhere")
    comparing.add_argument("--strict", action="store_true",
                           help="fail on any change or addition, improvements included "
                                "(implies --all-studies)")
    comparing.add_argument("--all-studies", action="store_true",
                           help="compare every study of the baseline: one CURRENT lacks counts "
                                "as missing (default: only the studies CURRENT has; the others "
                                "are listed as not compared)")
    comparing.add_argument("--json", action="store_true",
                           help="print the whole comparison as JSON instead of a table")

    blessing = actions.add_parser(
        "bless", help="make a finished run the baseline that compare and CI read")
    blessing.add_argument("directory", type=Path, metavar="RUN_DIR",
                          help="a finished run directory (holding run.sqlite)")
    blessing.add_argument("--reason", required=True,
                          help="why the results changed (recorded in the manifest)")
    blessing.add_argument("--out", type=output_directory, default=Path("reports") / "baseline",
                          help="the baseline directory (replaced as a whole)")

    referencing = actions.add_parser(
        "reference", help="judge a finished run (the full grids') with the current claims and "
                          "record the verdicts")
    referencing.add_argument("directory", type=Path, metavar="RUN_DIR",
                             help="a finished run directory (holding run.sqlite)")
    referencing.add_argument("--out", type=output_directory,
                             default=Path("reports") / "reference",
                             help="the reference directory (other studies' verdicts are kept)")

    status = actions.add_parser("status", help="progress and metadata of a run directory")
    status.add_argument("directory", type=Path, help="a run directory (holding run.sqlite)")

    salvaging = actions.add_parser(
        "salvage", help="copy the readable cells of a damaged run store into a new directory")
    salvaging.add_argument("directory", type=Path, help="a run directory (holding run.sqlite)")
    salvaging.add_argument("--out", type=output_directory, required=True, metavar="NEWDIR",
                           help="a new or empty directory for the salvaged run (continue it "
                                "there with study run ... --resume)")

    pinning = actions.add_parser(
        "pins", help="which claims hold each public estimator method to its validity and its "
                     "efficiency (a Markdown table; exit 1 if a method lacks either)")
    pinning.add_argument("--out", type=Path, default=None, metavar="FILE",
                         help="write the table to FILE instead of printing it")

    auditing = actions.add_parser(
        "audit", help="run studies once per declared fault of the code, as CI runs them, and "
                      "report which claims catch each fault and what the gate flags")
    auditing.add_argument("faults", type=Path, nargs="?", default=None, metavar="FAULTS",
                          help="a TOML file of [[fault]] tables (default: the shipped fault "
                               "set, studies/audit/faults.toml)")
    auditing.add_argument("--studies", nargs="+", default=["all"], metavar="NAME",
                          help="the studies each fault's run runs ('all': the suite)")
    auditing.add_argument("--only", nargs="+", default=None, metavar="FAULT",
                          help="run these faults of the file only")
    auditing.add_argument("--grid", default="quick", choices=("quick", "full"),
                          help="the grid of every run")
    auditing.add_argument("--seed", type=count, default=20190,
                          help="root seed of every run (default: the quick suite's)")
    auditing.add_argument("--baseline", type=Path, default=Path("reports") / "baseline",
                          metavar="DIR", help="the baseline each run is compared with")
    auditing.add_argument("--no-baseline", action="store_true",
                          help="run without the regression gate (claims only)")
    auditing.add_argument("--workers", type=workers, default=2,
                          help="local worker processes of each run")
    auditing.add_argument("--timeout", type=positive_number, default=1800.0, metavar="SECONDS",
                          help="a run still going after this long counts as broken")
    auditing.add_argument("--out", type=output_directory, default=Path("reports") / "audit",
                          help="the audit directory (its page: OUT/index.html)")
    auditing.add_argument("--resume", action="store_true",
                          help="reuse the outcomes of faults already run with the same patch "
                               "and settings on the same source tree")
    auditing.add_argument("--check", action="store_true",
                          help="only check that every fault applies to the source, and list "
                               "them")


def _study_name(text: str) -> str:
    """argparse type of a new study's name: a lowercase identifier, not private."""
    if not (text.isidentifier() and text.islower() and not text.startswith("_")
            and not keyword.iskeyword(text)):
        raise argparse.ArgumentTypeError(
            f"must be a lowercase Python identifier such as ratio_coverage; got {text!r}")
    return text


def _handle(args: argparse.Namespace) -> int:
    from studies.cli import study  # deferred: see studies.cli.parsers

    return study.handle(args)
