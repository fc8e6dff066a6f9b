"""``evalcert recall``: recall of a labelled test sample, its certifying bound and the decision.

The test sample is a simple random sample of the collection (``--design srs``: recall
``tp / (tp + fn)``) or the retrieved and unretrieved segments sampled separately
(``--design stratified --retrieved N1 --unretrieved N0``, as ``evalcert sample-size`` plans
it: ``tp`` and ``fp`` count the retrieved segment's sample, ``fn`` and ``tn`` the
unretrieved one's; the segments' sizes weigh them). The command prints recall, the
two-sided interval and the lower one-sided interval (LOSCI) of one method of
`estimators.recall_ci` (by default the design's method whose coverage is guaranteed), the
decision against ``--target``, and the assumptions the bound rests on; ``--json`` prints the
same as JSON.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from studies.cli.args import unit_interval
from studies.cli.certify import (
    GUARANTEED,
    add_design,
    assumptions,
    certification,
    closing_lines,
    default_method,
    percent,
    population_sizes,
    sample_line,
    with_option_names,
)
from studies.cli.counts import add_counts, finite, shown, total_counts
from studies.cli.names import PROPORTION_METHODS, RECALL_STRATIFIED_METHODS

__all__ = ["add_command", "recall_summary"]

_METHODS = (*PROPORTION_METHODS, *RECALL_STRATIFIED_METHODS)


def add_command(commands: Any) -> None:
    """Add the ``recall`` subcommand."""
    cmd = commands.add_parser(
        "recall", help="recall of a test sample with its certifying bound and the decision "
                       "against a target",
        description="Recall of a labelled test sample with a two-sided interval and the lower "
                    "one-sided interval (LOSCI) used for certification, by one method of "
                    "estimators.recall_ci; with --target, whether recall is certified (the "
                    "LOSCI's lower bound at least the target), and the assumptions the bound "
                    "rests on. The test sample is a simple random sample (--design srs) or the "
                    "retrieved and unretrieved segments sampled separately (--design "
                    "stratified --retrieved N1 --unretrieved N0; --tp and --fp count the "
                    "retrieved segment's sample, --fn and --tn the unretrieved one's).")
    add_counts(cmd, "test sample", segments=True)
    add_design(cmd, "recall")
    cmd.add_argument("--method", choices=_METHODS, default=None, metavar="METHOD",
                     help="the interval's method, by design. srs: "
                          f"{', '.join(PROPORTION_METHODS)} (default clopper-pearson); "
                          f"stratified: {', '.join(RECALL_STRATIFIED_METHODS)} (default "
                          "segments-clopper-pearson, segments-hypergeometric with --finite). "
                          "The defaults are the methods whose coverage is guaranteed")
    cmd.add_argument("--confidence-level", type=unit_interval, default=0.95,
                     help="confidence level of both intervals")
    cmd.add_argument("--json", action="store_true", help="print JSON instead of text")
    cmd.set_defaults(handler=_recall)


def recall_summary(args: argparse.Namespace) -> dict[str, Any]:
    """Everything the command reports, as plain data (shared by the text and JSON outputs)."""
    from estimators import recall_ci, recall_estimate  # deferred: see studies.cli

    counts = total_counts(args)
    sizes = population_sizes(args)
    method = args.method or default_method("recall", args)
    options = {"method": method, "confidence_level": args.confidence_level,
               "design": args.design, "population_sizes": sizes,
               "finite_population": args.finite}
    with with_option_names():
        two = recall_ci(*counts, **options)
        losci = recall_ci(*counts, alternative="greater", **options)
        estimate = recall_estimate(*counts, design=args.design, population_sizes=sizes)
    return {
        "measure": "recall",
        "design": args.design,
        "counts": {"tp": args.tp, "fp": args.fp, "fn": args.fn, "tn": args.tn},
        "segments": None if sizes is None else {"retrieved": sizes[0],
                                                "unretrieved": sizes[1]},
        "finite": args.finite,
        "recall": finite(float(estimate)),
        "method": method,
        "guaranteed": method in GUARANTEED,
        "confidence_level": args.confidence_level,
        "interval": {"low": finite(float(two.low)), "high": finite(float(two.high))},
        "losci": {"low": finite(float(losci.low)), "high": finite(float(losci.high))},
        "certification": certification(float(losci.low), args.target, method),
        "assumptions": assumptions("recall", method, args, sizes),
    }


def _format(summary: dict[str, Any]) -> str:
    level = percent(summary["confidence_level"])
    guaranteed = "coverage guaranteed" if summary["guaranteed"] else "approximate"
    two, losci = summary["interval"], summary["losci"]
    lines = [f"recall = {shown(summary['recall'])}  ({sample_line(summary)})",
             f"method {summary['method']} ({guaranteed}), confidence level {level}",
             f"  two-sided interval  {shown(two['low'])} to {shown(two['high'])}",
             f"  LOSCI               {shown(losci['low'])} to {shown(losci['high'])}",
             *closing_lines(summary)]
    return "\n".join(lines)


def _recall(args: argparse.Namespace) -> int:
    summary = recall_summary(args)
    print(json.dumps(summary, indent=2, allow_nan=False) if args.json else _format(summary))
    return 0
