"""``evalcert demo``: a certification-style summary of a binary confusion matrix."""

from __future__ import annotations

import argparse
import json
from typing import Any

from studies.cli.args import unit_interval
from studies.cli.counts import document_count, json_safe, shown, total_counts
from studies.cli.names import PROPORTION_METHODS

# The sample matrix of the demo: (tp, fp, fn, tn) = (60, 20, 25, 395), an F1 certification
# setting as in Bagdouri et al. (2013).
SAMPLE = {"tp": 60, "fp": 20, "fn": 25, "tn": 395}
# TREC-5 filtering runs (Lewis 1996, section 4.4): (u_a, u_b) per run.
TREC5_RUNS = {"R1": (1.0, -3.0), "R2": (1.0, -1.0), "R3": (3.0, -1.0)}


def add_command(commands: Any) -> None:
    """Add the ``demo`` subcommand."""
    demo = commands.add_parser(
        "demo", help="certification-style summary of a binary confusion matrix")
    for name in ("tp", "fp", "fn", "tn"):
        demo.add_argument(f"--{name}", type=document_count, default=SAMPLE[name],
                          help=f"{name} count of the confusion matrix")
    demo.add_argument("--confidence-level", type=unit_interval, default=0.95,
                      help="confidence level of every interval")
    demo.add_argument("--method", default="clopper-pearson", choices=PROPORTION_METHODS,
                      help="proportion_ci method for the intervals")
    demo.add_argument("--target-recall", type=unit_interval, default=None,
                      help="certify recall >= this with a one-sided lower bound")
    demo.add_argument("--target-precision", type=unit_interval, default=None,
                      help="certify precision >= this with a one-sided lower bound")
    demo.add_argument("--json", action="store_true", help="print JSON instead of a table")
    demo.set_defaults(handler=_demo)


def _proportion_row(estimate: Any, level: float, method: str) -> dict[str, float]:
    two = estimate.confidence_interval(level, method=method)
    lower = estimate.confidence_interval(level, method=method, alternative="greater")
    return {
        "estimate": float(estimate.estimate),
        "low": float(two.low),
        "high": float(two.high),
        "lower_bound": float(lower.low),
    }


def demo_summary(args: argparse.Namespace) -> dict[str, Any]:
    """Everything the demo reports, as plain data (shared by the table and JSON outputs)."""
    from estimators import ConfusionMatrix, optimal_threshold  # deferred: see studies.cli

    tp, fp, fn, tn = total_counts(args)
    cm = ConfusionMatrix.binary(tp=tp, fp=fp, fn=fn, tn=tn)
    level, method = args.confidence_level, args.method
    measures = {
        "accuracy": cm.accuracy,
        "precision": cm.precision(),
        "recall": cm.recall(),
        "specificity": cm.specificity(),
        "prevalence": cm.prevalence(),
    }
    summary: dict[str, Any] = {
        "counts": {"tp": args.tp, "fp": args.fp, "fn": args.fn, "tn": args.tn, "total": cm.total},
        "confidence_level": level,
        "method": method,
        "proportions": {k: _proportion_row(v, level, method) for k, v in measures.items()},
        "f1": cm.f1(),
        "kappa": {kind: cm.kappa(kind) for kind in ("cohen", "siegel-castellan", "byrt")},
        "trec5_utility": {
            run: {"u_a": ua, "u_b": ub, "utility": cm.linear_utility(u_a=ua, u_b=ub),
                  "optimal_threshold": optimal_threshold(ua, ub)}
            for run, (ua, ub) in TREC5_RUNS.items()
        },
        "verdicts": [],
    }
    for name, target in (("recall", args.target_recall), ("precision", args.target_precision)):
        if target is not None:
            bound = summary["proportions"][name]["lower_bound"]
            summary["verdicts"].append(
                {"measure": name, "target": target, "lower_bound": bound,
                 "certified": bool(bound >= target)})
    return summary


def _format_table(summary: dict[str, Any]) -> str:
    c = summary["counts"]
    pct = f"{summary['confidence_level']:.0%}"
    lines = [
        "evalcert demo: certification-style summary of a binary confusion matrix",
        f"counts: tp={c['tp']} fp={c['fp']} fn={c['fn']} tn={c['tn']} (n={c['total']})",
        f"intervals: {summary['method']}, {pct} two-sided and {pct} one-sided lower bound",
        "",
        f"{'measure':<13}{'estimate':>10}{'low':>10}{'high':>10}{'lower bd':>10}",
    ]
    for name, row in summary["proportions"].items():
        lines.append(f"{name:<13}" + "".join(f"{shown(row[k]):>10}" for k in
                                             ("estimate", "low", "high", "lower_bound")))
    kappa = summary["kappa"]
    lines += [
        "",
        f"F1 = {shown(summary['f1'])}; kappa: Cohen {shown(kappa['cohen'])}, "
        f"Siegel-Castellan {shown(kappa['siegel-castellan'])}, Byrt {shown(kappa['byrt'])}",
        "TREC-5 linear utility of the retrieved set (u = u_a*A + u_b*B):",
    ]
    for run, row in summary["trec5_utility"].items():
        lines.append(f"  {run}: u_a={row['u_a']:g} u_b={row['u_b']:g}  u = {row['utility']:g}"
                     f"  (optimal probability threshold {row['optimal_threshold']:.2f})")
    for verdict in summary["verdicts"]:
        word = "CERTIFIED" if verdict["certified"] else "NOT CERTIFIED"
        lines.append(f"{word}: {verdict['measure']} >= {verdict['target']:g} "
                     f"({pct} lower bound {shown(verdict['lower_bound'])})")
    return "\n".join(lines)


def _demo(args: argparse.Namespace) -> int:
    summary = demo_summary(args)
    print(json.dumps(json_safe(summary), indent=2, allow_nan=False) if args.json
          else _format_table(summary))
    return 0
