"""The parser of ``evalcert f1``; the command runs in `studies.cli.f1`."""

from __future__ import annotations

import argparse
from typing import Any

from studies.cli.args import count, draws, unit_interval
from studies.cli.certify import add_design
from studies.cli.counts import add_counts
from studies.cli.names import F1_SRS_METHODS, F1_STRATIFIED_METHODS

__all__ = ["add_command"]


def add_command(commands: Any) -> None:
    """Add the ``f1`` subcommand."""
    f1 = commands.add_parser(
        "f1", help="F1 of a test sample with its confidence intervals and certifying bound",
        description="F1 of a test sample with a two-sided interval and the lower one-sided "
                    "interval (LOSCI) used for certification, by each method of "
                    "estimators.f1_ci; with --target, whether F1 is certified by the "
                    "certifying bound (the design's method whose coverage is guaranteed, or "
                    "the first --method), and the assumptions that bound rests on. The test "
                    "sample is a simple random sample (--design srs) or the retrieved and "
                    "unretrieved segments sampled separately (--design stratified --retrieved "
                    "N1 --unretrieved N0; --tp and --fp count the retrieved segment's sample, "
                    "--fn and --tn the unretrieved one's).")
    add_counts(f1, "test sample", segments=True)
    add_design(f1, "F1")
    f1.add_argument("--method", choices=tuple(dict.fromkeys(F1_SRS_METHODS
                                                            + F1_STRATIFIED_METHODS)),
                    action="append",
                    help="interval method; repeat for several, the first certifies (default: "
                         "every method of the design, the guaranteed one certifying. srs: "
                         f"{', '.join(F1_SRS_METHODS)}, jaccard-clopper-pearson certifying; "
                         f"stratified: {', '.join(F1_STRATIFIED_METHODS)}, "
                         "segments-clopper-pearson certifying, or with --finite "
                         "segments-hypergeometric, bootstrap and segments-clopper-pearson left "
                         "out)")
    f1.add_argument("--confidence-level", type=unit_interval, default=0.95,
                    help="confidence level of both intervals")
    f1.add_argument("--draws", type=draws, default=10_000,
                    help="posterior or bootstrap draws per interval (beta-posterior, "
                         "bootstrap)")
    f1.add_argument("--seed", type=count, default=0,
                    help="seed of the Monte Carlo methods (beta-posterior, bootstrap)")
    f1.add_argument("--json", action="store_true", help="print JSON instead of a table")
    f1.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from studies.cli import f1  # deferred: see studies.cli.parsers

    return f1.handle(args)
