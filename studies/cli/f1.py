"""``evalcert f1``: F1 of a test sample with its two-sided and one-sided confidence intervals.

The test sample is a simple random sample (``--design srs``) or the retrieved and unretrieved
segments sampled separately (``--design stratified --retrieved N1 --unretrieved N0``, as
``evalcert sample-size`` plans it). Each method of the design gives a row (or those chosen
with ``--method``); one of them certifies: the first ``--method``, or by default the design's
method whose coverage is guaranteed. With ``--target`` the command says whether its LOSCI's
lower bound reaches the target, and it lists the assumptions that bound rests on
(`studies.cli.certify`).

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
import math
import textwrap
from typing import Any

from estimators import f1_ci, f1_estimate
from studies.cli.certify import (
    GUARANTEED,
    assumptions,
    certification,
    closing_lines,
    default_method,
    population_sizes,
    sample_line,
    with_option_names,
)
from studies.cli.counts import finite, shown, total_counts
from studies.cli.names import F1_SRS_METHODS, F1_STRATIFIED_METHODS

__all__ = ["handle"]

# The methods whose intervals are random (posterior or bootstrap draws).
MONTE_CARLO = ("beta-posterior", "bootstrap")
# The methods estimators.f1_ci refuses with finite_population=True (they treat each segment
# as sampled with replacement): left out of --finite's default rows.
_WITH_REPLACEMENT = ("bootstrap", "segments-clopper-pearson")


def handle(args: argparse.Namespace) -> int:
    """Run ``evalcert f1`` (its parser: `studies.cli.parsers.f1`); the exit status."""
    counts = total_counts(args)
    sizes = population_sizes(args)
    design = {"design": args.design, "population_sizes": sizes,
              "finite_population": args.finite}
    methods = args.method or _design_methods(args)
    certifying = args.method[0] if args.method else default_method("f1", args)
    rows = []
    with with_option_names():
        estimate = f1_estimate(*counts, **design)
        for method in methods:
            options = {"method": method, "confidence_level": args.confidence_level,
                       "rng": args.seed, "draws": args.draws, **design}
            two = f1_ci(*counts, **options)
            losci = f1_ci(*counts, alternative="greater", **options)
            rows.append({"method": method, "low": finite(float(two.low)),
                         "high": finite(float(two.high)),
                         "losci_low": finite(float(losci.low))})
    random = [m for m in methods if m in MONTE_CARLO]
    bound = next(r["losci_low"] for r in rows if r["method"] == certifying)
    summary = {"f1": finite(float(estimate.estimate)), "design": args.design,
               "counts": {"tp": args.tp, "fp": args.fp, "fn": args.fn, "tn": args.tn},
               "segments": None if sizes is None else {"retrieved": sizes[0],
                                                       "unretrieved": sizes[1]},
               "finite": args.finite, "confidence_level": args.confidence_level,
               "intervals": rows, "seed": args.seed, "draws": args.draws,
               "monte_carlo_methods": random, "method": certifying,
               "guaranteed": certifying in GUARANTEED,
               "certification": certification(math.nan if bound is None else bound,
                                              args.target, certifying),
               "assumptions": assumptions("F1", certifying, args, sizes)}
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    level = f"{args.confidence_level:.0%}"
    width = max(len("method"), *(len(m) for m in methods)) + 2
    lines = [f"F1 = {shown(float(estimate.estimate))}  ({sample_line(summary)})",
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
    print("\n".join([*lines, *closing_lines(summary)]))
    return 0


def _design_methods(args: argparse.Namespace) -> list[str]:
    """The rows shown without ``--method``: every method of the design that applies."""
    if args.design == "srs":
        return list(F1_SRS_METHODS)
    return [m for m in F1_STRATIFIED_METHODS if not (args.finite and m in _WITH_REPLACEMENT)]


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
