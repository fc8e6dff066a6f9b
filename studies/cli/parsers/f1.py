"""The parser of ``evalcert f1``; the command runs in `studies.cli.f1`."""

from __future__ import annotations

import argparse
from typing import Any

from studies.cli.args import count, draws, unit_interval
from studies.cli.counts import add_counts
from studies.cli.names import F1_SRS_METHODS

__all__ = ["add_command"]


def add_command(commands: Any) -> None:
    """Add the ``f1`` subcommand."""
    f1 = commands.add_parser(
        "f1", help="F1 of a test sample with its confidence intervals",
        description="F1 of a simple random test sample with a two-sided interval and the "
                    "lower one-sided interval (LOSCI) used for certification, by each method "
                    "of estimators.f1_ci.")
    add_counts(f1, "test sample")
    f1.add_argument("--method", choices=F1_SRS_METHODS, action="append",
                    help="interval method; repeat for several (default: all of "
                         f"{', '.join(F1_SRS_METHODS)})")
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
