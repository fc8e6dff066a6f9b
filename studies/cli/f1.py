"""``evalcert f1``: F1 of a test sample with its two-sided and one-sided confidence intervals.

F1 is undefined when the sample holds no relevant and no retrieved document
(``tp = fp = fn = 0``): as everywhere in evalcert, no information is not an error; the estimate
and every bound show as ``undefined`` in the table (null in JSON), and a note says why.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from estimators import F1_METHODS_BY_DESIGN, f1_ci, f1_estimate
from studies.cli.args import count, draws, unit_interval
from studies.cli.counts import add_counts, finite, shown, total_counts

__all__ = ["add_command"]

# The command takes a simple random test sample.
SRS_METHODS = F1_METHODS_BY_DESIGN["srs"]
# The methods whose intervals are random (posterior or bootstrap draws).
MONTE_CARLO = ("beta-posterior", "bootstrap")


def add_command(commands: Any) -> None:
    """Add the ``f1`` subcommand."""
    f1 = commands.add_parser(
        "f1", help="F1 of a test sample with its confidence intervals",
        description="F1 of a simple random test sample with a two-sided interval and the "
                    "lower one-sided interval (LOSCI) used for certification, by each method "
                    "of estimators.f1_ci.")
    add_counts(f1, "test sample")
    f1.add_argument("--method", choices=SRS_METHODS, action="append",
                    help="interval method; repeat for several (default: all of "
                         f"{', '.join(SRS_METHODS)})")
    f1.add_argument("--confidence-level", type=unit_interval, default=0.95,
                    help="confidence level of both intervals")
    f1.add_argument("--draws", type=draws, default=10_000,
                    help="posterior or bootstrap draws per interval (beta-posterior, "
                         "bootstrap)")
    f1.add_argument("--seed", type=count, default=0,
                    help="seed of the Monte Carlo methods (beta-posterior, bootstrap)")
    f1.add_argument("--json", action="store_true", help="print JSON instead of a table")
    f1.set_defaults(handler=_f1)


def _f1(args: argparse.Namespace) -> int:
    counts = total_counts(args)
    estimate = f1_estimate(*counts)
    methods = args.method or list(SRS_METHODS)
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
    lines = [f"F1 = {shown(float(estimate.estimate))}  (tp={args.tp} fp={args.fp} fn={args.fn} "
             f"tn={args.tn})",
             f"{'method':<16}{level + ' low':>10}{level + ' high':>10}{'LOSCI low':>11}"]
    for row in rows:
        cells = "".join(f"{shown(v):>10}" for v in (row["low"], row["high"]))
        losci = shown(row["losci_low"])
        lines.append(f"{row['method']:<16}{cells}{losci:>11}")
    if random:
        lines.append(f"{', '.join(random)}: {args.draws} draws, seed {args.seed} "
                     f"(--seed changes them)")
    if args.tp + args.fp + args.fn == 0:
        lines.append("note: F1 is undefined when the sample holds no relevant and no "
                     "retrieved document (tp = fp = fn = 0), and so is every interval.")
    print("\n".join(lines))
    return 0
