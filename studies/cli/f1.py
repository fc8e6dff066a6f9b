"""``evalcert f1``: F1 of a test sample with its two-sided and one-sided confidence intervals.

F1 is undefined when the sample holds no relevant and no retrieved document
(``tp = fp = fn = 0``): as everywhere in evalcert, no information is not an error; the estimate
shows as ``undefined`` in the table (null in JSON), and a note says why. Some methods'
intervals are undefined too, while others (``dirichlet-posterior``, the ``jaccard-*`` methods)
still give one, wide since the sample says next to nothing about F1: the note names the
methods of each kind.

This module runs the command (`handle`); its parser is `studies.cli.parsers.f1`.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from typing import Any

from estimators import f1_ci, f1_estimate
from studies.cli.counts import finite, shown, total_counts
from studies.cli.names import F1_SRS_METHODS

__all__ = ["handle"]

# The methods whose intervals are random (posterior or bootstrap draws).
MONTE_CARLO = ("beta-posterior", "bootstrap")


def handle(args: argparse.Namespace) -> int:
    """Run ``evalcert f1`` (its parser: `studies.cli.parsers.f1`); the exit status."""
    counts = total_counts(args)
    estimate = f1_estimate(*counts)
    methods = args.method or list(F1_SRS_METHODS)
    rows = []
    for method in methods:
        options = {"method": method, "confidence_level": args.confidence_level,
                   "rng": args.seed, "draws": args.draws}
        two = f1_ci(*counts, **options)
        losci = f1_ci(*counts, alternative="greater", **options)
        rows.append({"method": method, "low": finite(float(two.low)),
                     "high": finite(float(two.high)), "losci_low": finite(float(losci.low))})
    random = [m for m in methods if m in MONTE_CARLO]
    if args.json:
        print(json.dumps({"f1": finite(float(estimate.estimate)),
                          "counts": {"tp": args.tp, "fp": args.fp, "fn": args.fn,
                                     "tn": args.tn},
                          "confidence_level": args.confidence_level, "intervals": rows,
                          "seed": args.seed, "draws": args.draws,
                          "monte_carlo_methods": random}, indent=2))
        return 0
    level = f"{args.confidence_level:.0%}"
    width = max(len("method"), *(len(m) for m in methods)) + 2
    lines = [f"F1 = {shown(float(estimate.estimate))}  (tp={args.tp} fp={args.fp} fn={args.fn} "
             f"tn={args.tn})",
             f"{'method':<{width}}{level + ' low':>10}{level + ' high':>10}{'LOSCI low':>11}"]
    for row in rows:
        cells = "".join(f"{shown(v):>10}" for v in (row["low"], row["high"]))
        losci = shown(row["losci_low"])
        lines.append(f"{row['method']:<{width}}{cells}{losci:>11}")
    if random:
        lines.append(f"{', '.join(random)}: {args.draws} draws, seed {args.seed} "
                     f"(--seed changes them)")
    if args.tp + args.fp + args.fn == 0:
        lines.append(textwrap.fill(_undefined_note(rows), width=100, subsequent_indent="  ",
                                   break_on_hyphens=False))
    print("\n".join(lines))
    return 0


def _undefined_note(rows: list[dict[str, Any]]) -> str:
    """The note under a table of ``tp = fp = fn = 0``: which methods give an interval."""
    undefined = [r["method"] for r in rows if r["low"] is None or r["high"] is None]
    defined = [r["method"] for r in rows if r["method"] not in undefined]
    said = ("note: F1 is undefined when the sample holds no relevant and no retrieved "
            "document (tp=fp=fn=0)")
    if not defined:
        return f"{said}, and so is every interval."
    if not undefined:
        return f"{said}; every method shown still gives an interval: {', '.join(defined)}."
    return (f"{said}; so are the intervals of {', '.join(undefined)}; "
            f"{', '.join(defined)} still give one, wide since the sample says next to nothing "
            "about F1.")
