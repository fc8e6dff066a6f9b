"""The confusion-matrix counts that ``demo``, ``f1`` and ``sample-size`` take, and JSON-safe
numbers."""

from __future__ import annotations

import argparse
import math
from typing import Any

from studies.cli.args import UsageError

__all__ = ["MAX_DOCUMENTS", "add_counts", "document_count", "finite", "json_safe", "shown",
           "total_counts"]

# Counts are exact in a float64 only up to 2**53, and the estimators refuse larger ones; the
# matrix's total (accuracy's trials) must stay within it too.
MAX_DOCUMENTS = 2**53


def document_count(text: str) -> int:
    """argparse type: a count of documents, a non-negative integer at most `MAX_DOCUMENTS`."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a non-negative integer; got {text!r}") from None
    if not 0 <= value <= MAX_DOCUMENTS:
        raise argparse.ArgumentTypeError(
            f"must be a non-negative integer no larger than 2**53 = {MAX_DOCUMENTS}; "
            f"got {text}")
    return value


def add_counts(parser: argparse.ArgumentParser, what: str, *, segments: bool = False) -> None:
    """Add the required ``--tp --fp --fn --tn`` options (counts of ``what``); ``segments``:
    say which segment's sample each counts under ``--design stratified``."""
    meaning = {"tp": "relevant and retrieved", "fp": "retrieved but not relevant",
               "fn": "relevant but not retrieved", "tn": "neither relevant nor retrieved"}
    for name, words in meaning.items():
        segment = "retrieved" if name in ("tp", "fp") else "unretrieved"
        where = (f" (--design stratified: of the {segment} segment's sample, the "
                 f"{'relevant' if name in ('tp', 'fn') else 'nonrelevant'} ones)"
                 if segments else "")
        parser.add_argument(f"--{name}", type=document_count, required=True,
                            help=f"documents of the {what} that are {words}{where}")


def total_counts(args: argparse.Namespace) -> tuple[int, int, int, int]:
    """``(tp, fp, fn, tn)``; UsageError naming the options when their sum exceeds 2**53."""
    counts: tuple[int, int, int, int] = (args.tp, args.fp, args.fn, args.tn)
    if sum(counts) > MAX_DOCUMENTS:
        raise UsageError(
            f"`--tp` + `--fp` + `--fn` + `--tn` must be at most 2**53 = {MAX_DOCUMENTS} "
            f"documents; got {sum(counts)}.")
    return counts


def finite(value: float) -> float | None:
    """JSON has no inf or nan: report them as null."""
    return value if math.isfinite(value) else None


def json_safe(value: Any) -> Any:
    """``value`` with every inf or nan float, however deeply nested, replaced by None."""
    if isinstance(value, float):
        return finite(value)
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def shown(value: float | None, spec: str = ".4f") -> str:
    """A number for a text table: ``undefined`` where the data determine no value (nan)."""
    return "undefined" if value is None or math.isnan(value) else format(value, spec)
