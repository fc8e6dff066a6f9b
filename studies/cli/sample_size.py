"""``evalcert sample-size``: how many documents to label to certify a target F1.

Answers "how many test documents must I label so that, with probability ``power``, the
lower one-sided confidence interval (LOSCI) on F1 clears the target?" by Monte Carlo power
analysis from the practitioner's labelled sample (Bagdouri, Webber, Lewis & Oard 2013,
Algorithms 1-2, with the Jeffreys Beta posterior of section 4.3). The test set is a simple
random sample from a large collection, certified with the LOSCI named by ``--interval``: the
delta method of Appendix A (the paper's choice, the default), or another deterministic F1
interval, such as ``jaccard-clopper-pearson``, whose coverage is at least nominal at every size.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from estimators import LOSCI_METHODS, POSTERIORS, certification_sample_size
from studies.cli.args import UsageError, count, draws, positive_fraction, unit_interval
from studies.cli.counts import add_counts, finite, shown, total_counts

__all__ = ["add_command"]

# Fewer posterior draws cannot place the size (certification_sample_size refuses them).
MIN_DRAWS = 100


def add_command(commands: Any) -> None:
    """Add the ``sample-size`` subcommand."""
    plan = commands.add_parser(
        "sample-size",
        help="certification test-set size for a target F1 (Monte Carlo power analysis)",
        description="How many test documents to label so that, with probability POWER, the "
                    "lower one-sided confidence interval on F1 clears the target: Monte Carlo "
                    "power analysis from the labelled sample's Jeffreys posterior (Bagdouri "
                    "et al. 2013, Algorithms 1-2). Assumes a simple random test sample from a "
                    "large collection, certified with the --interval LOSCI.")
    add_counts(plan, "labelled sample")
    plan.add_argument("--target", type=unit_interval, required=True,
                      help="target F1 theta to certify")
    plan.add_argument("--confidence-level", type=unit_interval, default=0.95,
                      help="confidence level of the LOSCI that must clear the target")
    plan.add_argument("--power", type=unit_interval, default=0.93,
                      help="wanted probability that the certification test passes")
    plan.add_argument("--interval", choices=LOSCI_METHODS, default="delta",
                      help="the F1 interval the certification test will use: delta is the "
                           "paper's; jaccard-clopper-pearson never covers below the level")
    plan.add_argument("--posterior", choices=POSTERIORS, default="known-share",
                      help="known-share: the paper's posterior, the population's retrieved "
                           "share taken as the sample's; dirichlet: a Jeffreys Dirichlet "
                           "posterior on the four cells, the share uncertain (larger sets)")
    plan.add_argument("--draws", type=draws, default=1000,
                      help=f"posterior draws of the power analysis (at least {MIN_DRAWS})")
    plan.add_argument("--seed", type=count, default=None,
                      help="root seed (default: fresh entropy, reported in the output)")
    plan.add_argument("--relative-precision", type=positive_fraction, default=None, metavar="R",
                      help="double the draws (up to --max-draws) until the size's 95%% Monte "
                           "Carlo interval is at most R times the size")
    plan.add_argument("--max-draws", type=draws, default=256_000,
                      help="cap on the draws when refining with --relative-precision")
    plan.add_argument("--json", action="store_true", help="print JSON instead of a table")
    plan.set_defaults(handler=_sample_size)


def _precision_reached(plan: Any, wanted: float | None) -> bool | None:
    """Whether the size's Monte Carlo interval is as narrow as asked (None: nothing asked)."""
    if wanted is None or not plan.reachable:
        return None
    width = plan.test_size_interval.high - plan.test_size_interval.low
    return bool(math.isfinite(width) and width <= wanted * plan.test_size)


def _sample_size(args: argparse.Namespace) -> int:
    if args.draws < MIN_DRAWS:
        raise UsageError(f"`--draws` must be at least {MIN_DRAWS}; got {args.draws}.")
    if args.relative_precision is not None and args.max_draws < args.draws:
        raise UsageError(f"`--max-draws` must be at least --draws ({args.draws}) to refine "
                         f"with --relative-precision; got {args.max_draws}.")
    plan = certification_sample_size(
        total_counts(args), args.target,
        confidence_level=args.confidence_level, power=args.power, draws=args.draws,
        rng=args.seed, interval=args.interval, posterior=args.posterior,
        relative_precision=args.relative_precision,
        max_draws=args.max_draws)
    interval = plan.test_size_interval
    reached = _precision_reached(plan, args.relative_precision)
    summary = {
        "counts": {"tp": args.tp, "fp": args.fp, "fn": args.fn, "tn": args.tn},
        "target": plan.target, "confidence_level": plan.confidence_level, "power": plan.power,
        "interval": args.interval, "posterior": args.posterior,
        "reachable": plan.reachable, "reason": plan.reason or None,
        "test_size": plan.test_size, "theta_star": finite(plan.theta_star),
        "test_size_interval_95": [finite(interval.low), finite(interval.high)],
        "limit": finite(plan.limit), "point_f1": finite(plan.point_f1),
        "draws": plan.draws, "seed": plan.seed,
        "relative_precision": args.relative_precision,
        "relative_precision_reached": reached,
    }
    if reached is False:
        print(f"evalcert: warning: stopped at {plan.draws} draws (--max-draws "
              f"{args.max_draws}) before the size's 95% Monte Carlo interval narrowed to "
              f"{args.relative_precision:g} of the size: its interval is wider than asked",
              file=sys.stderr)
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    lines = [
        "evalcert sample-size: F1 certification test-set size (Bagdouri et al. 2013, Alg. 2)",
        f"observed: tp={args.tp} fp={args.fp} fn={args.fn} tn={args.tn}  F1={shown(plan.point_f1)}",
        f"request:  F1 >= {plan.target:g} with a {plan.confidence_level:.0%} {args.interval} "
        f"LOSCI, power {plan.power:.0%}, {args.posterior} posterior",
    ]
    if plan.reachable:
        lines += [
            f"test size: {plan.test_size}  (theta* = {plan.theta_star:.4f})",
            f"Monte Carlo 95% interval for the size: [{interval.low:.0f}, {interval.high:g}]",
        ]
    else:
        lines.append(f"UNREACHABLE: {plan.reason}")
    if math.isfinite(plan.limit):
        lines.append(f"limit of theta* as the test size grows: {plan.limit:.4f}")
    lines.append(f"draws: {plan.draws}, seed: {plan.seed} (rerun with --seed {plan.seed})")
    print("\n".join(lines))
    return 0
