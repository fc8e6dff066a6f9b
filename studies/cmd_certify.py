"""``evalcert sample-size`` and ``evalcert f1``: plan and state an F1 certification."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from estimators import F1_METHODS, certification_sample_size, f1_ci, f1_estimate
from studies.cli import count, positive_count, unit_interval


def _add_counts(parser: argparse.ArgumentParser) -> None:
    for name in ("tp", "fp", "fn", "tn"):
        parser.add_argument(f"--{name}", type=count, required=True, help=f"{name} count")


def add_command(commands: Any) -> None:
    """Add the ``sample-size`` and ``f1`` subcommands."""
    plan = commands.add_parser(
        "sample-size", help="certification test-set size for a target F1 (Monte Carlo power)")
    _add_counts(plan)
    plan.add_argument("--target", type=unit_interval, required=True, help="target F1 theta")
    plan.add_argument("--confidence-level", type=unit_interval, default=0.95)
    plan.add_argument("--power", type=unit_interval, default=0.93)
    plan.add_argument("--draws", type=positive_count, default=1000)
    plan.add_argument("--seed", type=count, default=None,
                      help="root seed (default: fresh entropy, reported in the output)")
    plan.add_argument("--relative-precision", type=float, default=None,
                      help="raise the draws until the size's 95%% MC interval is this narrow")
    plan.add_argument("--json", action="store_true", help="print JSON instead of a table")
    plan.set_defaults(handler=_sample_size)

    f1 = commands.add_parser("f1", help="F1 of a test sample with its confidence intervals")
    _add_counts(f1)
    f1.add_argument("--method", choices=F1_METHODS, action="append",
                    help="interval method (repeatable; default: all)")
    f1.add_argument("--confidence-level", type=unit_interval, default=0.95)
    f1.add_argument("--draws", type=positive_count, default=10_000)
    f1.add_argument("--seed", type=count, default=0, help="seed of the Monte Carlo methods")
    f1.add_argument("--json", action="store_true", help="print JSON instead of a table")
    f1.set_defaults(handler=_f1)


def _finite(value: float) -> float | None:
    """JSON has no inf/nan: report them as null."""
    return value if math.isfinite(value) else None


def _sample_size(args: argparse.Namespace) -> int:
    plan = certification_sample_size(
        (args.tp, args.fp, args.fn, args.tn), args.target,
        confidence_level=args.confidence_level, power=args.power, draws=args.draws,
        rng=args.seed, relative_precision=args.relative_precision)
    interval = plan.test_size_interval
    summary = {
        "counts": {"tp": args.tp, "fp": args.fp, "fn": args.fn, "tn": args.tn},
        "target": plan.target, "confidence_level": plan.confidence_level, "power": plan.power,
        "reachable": plan.reachable, "reason": plan.reason or None,
        "test_size": plan.test_size, "theta_star": _finite(plan.theta_star),
        "test_size_interval_95": [_finite(interval.low), _finite(interval.high)],
        "limit": _finite(plan.limit), "point_f1": _finite(plan.point_f1),
        "draws": plan.draws, "seed": plan.seed,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    lines = [
        "evalcert sample-size: F1 certification test-set size (Bagdouri et al. 2013, Alg. 2)",
        f"observed: tp={args.tp} fp={args.fp} fn={args.fn} tn={args.tn}  F1={plan.point_f1:.4f}",
        f"request:  F1 >= {plan.target:g} with a {plan.confidence_level:.0%} LOSCI, "
        f"power {plan.power:.0%}",
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


def _f1(args: argparse.Namespace) -> int:
    counts = (args.tp, args.fp, args.fn, args.tn)
    estimate = f1_estimate(*counts)
    rows = []
    for method in args.method or F1_METHODS:
        options = {"method": method, "confidence_level": args.confidence_level,
                   "rng": args.seed, "draws": args.draws}
        two = f1_ci(*counts, **options)
        losci = f1_ci(*counts, alternative="greater", **options)
        rows.append({"method": method, "low": _finite(float(two.low)),
                     "high": _finite(float(two.high)), "losci_low": _finite(float(losci.low))})
    if args.json:
        print(json.dumps({"f1": _finite(float(estimate.estimate)),
                          "confidence_level": args.confidence_level, "intervals": rows},
                         indent=2))
        return 0
    level = f"{args.confidence_level:.0%}"
    lines = [f"F1 = {float(estimate.estimate):.4f}  (tp={args.tp} fp={args.fp} fn={args.fn} "
             f"tn={args.tn})",
             f"{'method':<16}{level + ' low':>10}{level + ' high':>10}{'LOSCI low':>11}"]
    for row in rows:
        cells = "".join(f"{'nan' if v is None else f'{v:.4f}':>10}"
                        for v in (row["low"], row["high"]))
        losci = "nan" if row["losci_low"] is None else f"{row['losci_low']:.4f}"
        lines.append(f"{row['method']:<16}{cells}{losci:>11}")
    print("\n".join(lines))
    return 0
