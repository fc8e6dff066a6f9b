"""The confusion-matrix counts that ``f1`` and ``sample-size`` take, and JSON-safe numbers."""

from __future__ import annotations

import argparse
import math

from studies.cli.args import count

__all__ = ["add_counts", "finite"]


def add_counts(parser: argparse.ArgumentParser, what: str) -> None:
    """Add the required ``--tp --fp --fn --tn`` options (counts of ``what``)."""
    meaning = {"tp": "relevant and retrieved", "fp": "retrieved but not relevant",
               "fn": "relevant but not retrieved", "tn": "neither relevant nor retrieved"}
    for name, words in meaning.items():
        parser.add_argument(f"--{name}", type=count, required=True,
                            help=f"documents of the {what} that are {words}")


def finite(value: float) -> float | None:
    """JSON has no inf or nan: report them as null."""
    return value if math.isfinite(value) else None
