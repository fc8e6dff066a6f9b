"""``evalcert sample-size``: how many documents to label to certify a target measure.

Answers "how many test documents must I label so that, with probability ``power``, the
one-sided confidence bound on the measure clears the target?" from the practitioner's
labelled sample (`estimators.certification_sample_size`). The measure is F1 (the default),
recall, precision, accuracy or elusion; the test set is a simple random sample
(``--design srs``) or the retrieved and unretrieved segments sampled separately
(``--design stratified``, with the segment sizes ``--retrieved N1 --unretrieved N0``), from a
large collection or from a finite one (``--population-size``, or ``--finite``: the segments
are the whole collection), sampled without replacement.

The power is exact (a finite sum over the test counts; no simulation, no seed) except for the
paper's own plan, F1 on a simple random sample with the known-share posterior, which keeps
the Monte Carlo power analysis of Bagdouri, Webber, Lewis & Oard (2013, Algorithms 1-2) and
reports its draws, seed and the Monte Carlo interval of the size. Exact power is saw-toothed
in the size: the planned size is the least reaching the power, the stable size the least from
which it never falls below, up to the search limit. ``--plot FILE.svg`` draws the power curve;
``--json`` prints every number as JSON (``--curve`` adds the curve).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import secrets
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from studies.cli.args import (
    UsageError,
    count,
    draws,
    positive_amount,
    positive_fraction,
    unit_interval,
)
from studies.cli.counts import add_counts, document_count, finite, shown, total_counts
from studies.cli.names import (
    CERTIFICATION_DESIGNS,
    CERTIFICATION_MEASURES,
    LOSCI_METHODS,
    POSTERIORS,
    PROPORTION_METHODS,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from estimators import CertificationPlan

    Array = NDArray[np.float64]

__all__ = ["add_command", "plan_summary", "power_figure"]

# Fewer posterior draws cannot place the size (certification_sample_size refuses them).
MIN_DRAWS = 100
# A plotted curve keeps at most this many points (the least and the largest power of each of
# half as many runs of sizes): the saw-tooth's envelope at any screen resolution, in a small
# file, however long the search ran.
MAX_PLOTTED = 2000

_LABELS = {"f1": "F1", "recall": "recall", "precision": "precision", "accuracy": "accuracy",
           "elusion": "elusion"}
# The planner's argument names and the options that set them (its errors name the former).
_OPTIONS = {"segment_sizes": "--retrieved/--unretrieved", "population_size": "--population-size",
            "confidence_level": "--confidence-level",
            "relative_precision": "--relative-precision", "max_draws": "--max-draws",
            "measure": "--measure", "design": "--design", "interval": "--interval",
            "posterior": "--posterior", "target": "--target", "cost": "--cost",
            "power": "--power", "draws": "--draws"}
_INTERVAL_HELP = (
    "the one-sided bound the certification test will use; the choices depend on --measure and "
    "--design; by default the one whose coverage is guaranteed. F1, srs: "
    + ", ".join(LOSCI_METHODS) + " (default jaccard-clopper-pearson; delta is the paper's). "
    "Recall and F1, stratified: segments-clopper-pearson (default; segments-hypergeometric, "
    "the default with a finite population) or delta. Accuracy, precision, recall, elusion, "
    "srs, and precision, elusion, stratified: " + ", ".join(PROPORTION_METHODS)
    + " (default clopper-pearson), or hypergeometric (the default with a finite population)")


def add_command(commands: Any) -> None:
    """Add the ``sample-size`` subcommand."""
    plan = commands.add_parser(
        "sample-size",
        help="certification test-set size for a target F1, recall, precision, accuracy or "
             "elusion (power analysis)",
        description="How many test documents to label so that, with probability POWER, the "
                    "one-sided confidence bound on the measure clears the target, planned "
                    "from the labelled sample's posterior. Exact power (finite sums, no "
                    "seed), except F1 on a simple random sample with the known-share "
                    "posterior: the Monte Carlo power analysis of Bagdouri et al. 2013, "
                    "Algorithms 1-2. The test set is a simple random sample (--design srs) or "
                    "the retrieved and unretrieved segments sampled separately (--design "
                    "stratified), from a large collection or a finite one sampled without "
                    "replacement (--population-size, --finite).")
    add_counts(plan, "labelled sample")
    plan.add_argument("--target", type=unit_interval, required=True,
                      help="target theta in (0, 1) to certify: measure >= theta (elusion <= "
                           "theta)")
    plan.add_argument("--measure", choices=CERTIFICATION_MEASURES, default="f1",
                      help="the measure certified")
    plan.add_argument("--design", choices=CERTIFICATION_DESIGNS, default="srs",
                      help="srs: a simple random test set; stratified: the retrieved and "
                           "unretrieved segments sampled separately, at the least-cost "
                           "allocation (needs --retrieved and --unretrieved; not accuracy)")
    plan.add_argument("--retrieved", type=document_count, default=None, metavar="N1",
                      help="documents of the collection the classifier retrieved (the "
                           "retrieved segment); with --unretrieved")
    plan.add_argument("--unretrieved", type=document_count, default=None, metavar="N0",
                      help="documents of the collection it did not retrieve; with --retrieved")
    plan.add_argument("--population-size", type=_population, default=None, metavar="N",
                      help="documents of the collection when it is finite: the test set is "
                           "drawn without replacement (hypergeometric counts and bounds); "
                           "must equal N1 + N0 when the segments are given (default: a "
                           "collection large enough to treat as infinite)")
    plan.add_argument("--finite", action="store_true",
                      help="treat the segments as the whole, finite collection: "
                           "--population-size N1 + N0")
    plan.add_argument("--cost", type=positive_amount, nargs=2, default=None,
                      metavar=("C1", "C0"),
                      help="stratified design: the cost of labelling a retrieved and an "
                           "unretrieved document; the allocation minimises C1 n1 + C0 n0 "
                           "(default: equal costs)")
    plan.add_argument("--confidence-level", type=unit_interval, default=0.95,
                      help="confidence level of the one-sided bound that must clear the target")
    plan.add_argument("--power", type=unit_interval, default=0.93,
                      help="wanted probability that the certification test passes")
    plan.add_argument("--interval", default=None, metavar="METHOD", help=_INTERVAL_HELP)
    plan.add_argument("--posterior", choices=POSTERIORS, default=None,
                      help="the labelled sample's posterior the power is averaged over. "
                           "known-share: the paper's, Jeffreys Beta segments with the "
                           "retrieved share known (the default for F1 under srs, simulated; "
                           "the only one for the stratified design); dirichlet: a Jeffreys "
                           "Dirichlet on the four cells, the share uncertain (the default "
                           "otherwise; exact for every measure under srs)")
    plan.add_argument("--draws", type=draws, default=1000,
                      help=f"posterior draws of the Monte Carlo path (at least {MIN_DRAWS})")
    plan.add_argument("--seed", type=count, default=None,
                      help="root seed of the Monte Carlo path (default: a fresh one in "
                           "[0, 2**32), reported in the output: --seed with it reproduces the "
                           "plan)")
    plan.add_argument("--relative-precision", type=positive_fraction, default=None, metavar="R",
                      help="Monte Carlo path: double the draws (up to --max-draws) until the "
                           "size's 95%% Monte Carlo interval is at most R times the size")
    plan.add_argument("--max-draws", type=draws, default=256_000,
                      help="cap on the draws when refining with --relative-precision")
    plan.add_argument("--plot", default=None, metavar="FILE.svg",
                      help="write the power curve as an SVG figure: power against test size, "
                           "the wanted power, the planned and stable sizes marked")
    plan.add_argument("--json", action="store_true", help="print JSON instead of a table")
    plan.add_argument("--curve", action="store_true",
                      help="with --json: add the power curve (sizes and power, two lists)")
    plan.set_defaults(handler=_sample_size)


# --- argument types and checks -------------------------------------------------------------------

def _population(text: str) -> int:
    """argparse type: the documents of a finite collection, positive, at most 2**53."""
    value = document_count(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer; got {text}")
    return value


def _svg_path(text: str) -> Path:
    """An SVG file to write, in an existing directory this user can write; UsageError naming
    ``--plot`` otherwise.

    Checked before the plan is computed (a stratified plan takes seconds), so a mistyped path
    costs nothing. (Not an argparse type: the option's text is any file name.)
    """
    if not text or not text.isprintable():
        raise UsageError(f"`--plot` must name a file ending in .svg, of printable UTF-8 text; "
                         f"got {text!r}.")
    if text.endswith(("/", os.sep)):
        raise UsageError(f"`--plot` must name a file, not a directory; got {text!r}.")
    path = Path(text)
    if path.suffix.lower() != ".svg":
        raise UsageError(f"`--plot` must name a file ending in .svg; got {text!r}.")
    folder = path.parent
    try:
        if path.is_dir():
            raise UsageError(f"`--plot` must name a file to write; got {text!r}, which is a "
                             "directory.")
        if not folder.is_dir():
            what = "a file" if folder.exists() else "missing"
            raise UsageError(f"`--plot` must be in an existing directory; got {text!r}, whose "
                             f"directory {str(folder)!r} is {what}.")
        writable = os.access(path, os.W_OK) if path.exists() else os.access(
            folder, os.W_OK | os.X_OK)
    except OSError as error:  # a name too long
        raise UsageError(f"`--plot` must be a usable file path; got {text!r} "
                         f"({error.strerror or error}).") from None
    if not writable:
        raise UsageError(f"`--plot` must be a file this user can write; got {text!r}.")
    return path


def _population_and_segments(args: argparse.Namespace
                             ) -> tuple[int | None, tuple[int, int] | None]:
    """``(population_size, segment_sizes)`` of the request; UsageError naming the options."""
    given = (args.retrieved is not None, args.unretrieved is not None)
    if given[0] != given[1]:
        have, lack = ("--retrieved", "--unretrieved") if given[0] else ("--unretrieved",
                                                                       "--retrieved")
        raise UsageError(f"`{have}` must come with `{lack}` (the collection's two segment "
                         f"sizes, N1 and N0); got {have} alone.")
    segments = (args.retrieved, args.unretrieved) if given[0] else None
    if args.design == "stratified" and segments is None:
        raise UsageError("`--design stratified` needs the collection's segment sizes, "
                         "`--retrieved N1 --unretrieved N0`; got neither.")
    if segments is not None and args.design == "srs" and args.population_size is None \
            and not args.finite:
        raise UsageError("`--retrieved`/`--unretrieved` apply to --design stratified, or to a "
                         "finite collection (--population-size or --finite: precision's and "
                         "elusion's segment is then the bound's population); got them with "
                         "--design srs and an infinite collection.")
    if args.cost is not None and args.design != "stratified":
        raise UsageError(f"`--cost` applies to --design stratified (the cost of a document of "
                         f"each segment); got it with --design {args.design}.")
    population = args.population_size
    if args.finite:
        if segments is None:
            raise UsageError("`--finite` treats the segments --retrieved N1 --unretrieved N0 "
                             "as the whole collection; got no segment sizes.")
        if population is None:
            population = segments[0] + segments[1]
    if segments is not None and population is not None and sum(segments) != population:
        raise UsageError(f"`--retrieved` + `--unretrieved` must add up to --population-size "
                         f"({population}); got {segments[0]} + {segments[1]} = "
                         f"{sum(segments)}.")
    if args.curve and not args.json:
        raise UsageError("`--curve` adds the power curve to the --json output; got it "
                         "without --json (--plot draws it).")
    return population, segments


def _in_option_names(message: str) -> str:
    """A planner's error with its argument names (``population_size``) as the options."""
    for name, option in _OPTIONS.items():
        message = message.replace(f"`{name}`", f"`{option}`")
        if "_" in name:
            message = re.sub(rf"\b{name}\b(?!=)", option, message)
        message = re.sub(rf"\b{name}=(?:'([^']*)'|([\w.]+))",
                         lambda m, o=option: f"{o} {m.group(1) or m.group(2)}", message)
    return message


# --- the command ---------------------------------------------------------------------------------

def _precision_reached(plan: CertificationPlan, wanted: float | None) -> bool | None:
    """Whether the size's Monte Carlo interval is as narrow as asked (None: nothing asked)."""
    if wanted is None or not plan.reachable or plan.test_size is None:
        return None
    width = plan.test_size_interval.high - plan.test_size_interval.low
    return bool(math.isfinite(width) and width <= wanted * plan.test_size)


def _sample_size(args: argparse.Namespace) -> int:
    if args.draws < MIN_DRAWS:
        raise UsageError(f"`--draws` must be at least {MIN_DRAWS}; got {args.draws}.")
    if args.relative_precision is not None and args.max_draws < args.draws:
        raise UsageError(f"`--max-draws` must be at least --draws ({args.draws}) to refine "
                         f"with --relative-precision; got {args.max_draws}.")
    from estimators import certification_sample_size  # deferred: see studies.cli

    population, segments = _population_and_segments(args)
    plot = None if args.plot is None else _svg_path(args.plot)
    try:
        plan = certification_sample_size(
            total_counts(args), args.target, measure=args.measure, design=args.design,
            population_size=population, segment_sizes=segments, interval=args.interval,
            cost=None if args.cost is None else tuple(args.cost),
            confidence_level=args.confidence_level, power=args.power,
            posterior=args.posterior, draws=args.draws,
            rng=secrets.randbelow(2**32) if args.seed is None else args.seed,  # short to retype
            relative_precision=args.relative_precision, max_draws=args.max_draws)
    except ValueError as error:
        raise UsageError(_in_option_names(str(error))) from None
    if plot is not None:
        _write_plot(plan, plot)
    reached = _precision_reached(plan, args.relative_precision)
    if reached is False:
        print(f"evalcert: warning: stopped at {plan.draws} draws (--max-draws "
              f"{args.max_draws}) before the size's 95% Monte Carlo interval narrowed to "
              f"{args.relative_precision:g} of the size: its interval is wider than asked",
              file=sys.stderr)
    summary = plan_summary(plan, (args.tp, args.fp, args.fn, args.tn), curve=args.curve)
    summary["relative_precision"] = args.relative_precision
    summary["relative_precision_reached"] = reached
    summary["plot"] = args.plot
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print("\n".join(_text(plan, args)))
    if plot is not None:
        print(f"wrote the power curve to {plot}")
    return 0


def _number(value: float | None) -> float | None:
    """A plan's number for JSON: None where absent or not finite."""
    return None if value is None else finite(value)


def plan_summary(plan: CertificationPlan, counts: tuple[int, int, int, int], *,
                 curve: bool = False) -> dict[str, Any]:
    """The plan as JSON-ready data: its fields under their names, None where absent.

    ``draws`` and ``seed`` are None on the exact path (nothing was drawn); ``curve`` (the
    sizes and the power, two lists) is added when asked for.
    """
    simulated = plan.method == "monte-carlo"
    spread = plan.test_size_interval
    summary: dict[str, Any] = {
        "counts": dict(zip(("tp", "fp", "fn", "tn"), counts, strict=True)),
        "measure": plan.measure, "design": plan.design, "method": plan.method,
        "target": plan.target, "confidence_level": plan.confidence_level, "power": plan.power,
        "interval": plan.interval, "posterior": plan.posterior,
        "population_size": plan.population_size,
        "segment_sizes": None if plan.segment_sizes is None else list(plan.segment_sizes),
        "cost": None if plan.cost is None else list(plan.cost),
        "reachable": plan.reachable, "reason": plan.reason or None,
        "test_size": plan.test_size, "stable_size": plan.stable_size,
        "search_limit": plan.search_limit, "achieved_power": _number(plan.achieved_power),
        "retrieved_size": plan.retrieved_size, "unretrieved_size": plan.unretrieved_size,
        "total_cost": _number(plan.total_cost), "srs_test_size": plan.srs_test_size,
        "labels_saved": plan.labels_saved,
        "limit": _number(plan.limit), "point_estimate": _number(plan.point_estimate),
        "point_f1": _number(plan.point_f1), "theta_star": _number(plan.theta_star),
        "test_size_interval_95": [finite(spread.low), finite(spread.high)],
        "draws": plan.draws if simulated else None, "seed": plan.seed if simulated else None,
        "assumptions": list(plan.assumptions),
    }
    if curve:
        summary["curve"] = None if plan.curve is None else {
            "sizes": plan.curve.sizes.tolist(), "power": plan.curve.power.tolist()}
    return summary


def _relation(plan: CertificationPlan) -> str:
    """``recall >= 0.6`` (``elusion <= 0.01``)."""
    sign = "<=" if plan.measure == "elusion" else ">="
    return f"{_LABELS[plan.measure]} {sign} {plan.target:g}"


def _collection(plan: CertificationPlan) -> str:
    """The design and collection in words."""
    design = ("simple random sample" if plan.design == "srs"
              else "stratified: retrieved and unretrieved segments sampled separately")
    parts = [design]
    if plan.segment_sizes is not None:
        parts.append(f"segments N1={plan.segment_sizes[0]} N0={plan.segment_sizes[1]}")
    parts.append("infinite collection" if plan.population_size is None
                 else f"finite collection of {plan.population_size} (without replacement)")
    if plan.cost is not None:
        parts.append(f"cost per document c1={plan.cost[0]:g} c0={plan.cost[1]:g}")
    return ", ".join(parts)


def _text(plan: CertificationPlan, args: argparse.Namespace) -> list[str]:
    """The plan as the lines of the text report."""
    label = _LABELS[plan.measure]
    bound = "upper" if plan.measure == "elusion" else "lower"
    observed = f"F1={shown(plan.point_f1)}"
    if plan.measure != "f1":
        observed = f"{label}={shown(plan.point_estimate)}  {observed}"
    simulated = plan.method == "monte-carlo"
    source = "Bagdouri et al. 2013, Alg. 2" if simulated else "exact power"
    lines = [
        f"evalcert sample-size: {label} certification test-set size ({source})",
        f"observed: tp={args.tp} fp={args.fp} fn={args.fn} tn={args.tn}  {observed}",
        f"request:  {_relation(plan)} with a {plan.confidence_level:.0%} {plan.interval} "
        f"{bound} bound, power {plan.power:.0%}, {plan.posterior} posterior",
        *([f"interval: {plan.interval}, the default: its coverage is guaranteed (--interval "
           f"chooses another)"] if args.interval is None else []),
        f"design:   {_collection(plan)}",
    ]
    if plan.reachable:
        lines += _reachable_lines(plan)
    else:
        lines.append(f"UNREACHABLE: {plan.reason}")
    if math.isfinite(plan.limit):
        if simulated:
            lines.append(f"limit of theta* as the test size grows: {plan.limit:.4f}")
        else:
            lines.append(f"posterior limit: {plan.limit:.4f} (the target the power reaches "
                         "as the test set grows; no size certifies beyond it)")
    if simulated:
        lines.append(f"method: Monte Carlo over the posterior (Algorithms 1-2); draws: "
                     f"{plan.draws}, seed: {plan.seed} (rerun with --seed {plan.seed})")
    else:
        lines.append("method: exact (finite sums over the test counts; no simulation, no seed)")
    lines.append("assumptions:")
    lines += [f"  - {said}" for said in plan.assumptions]
    return lines


def _reachable_lines(plan: CertificationPlan) -> list[str]:
    lines = [f"test size: {plan.test_size}  (planned: the least size whose power reaches "
             f"{plan.power:g})"]
    if plan.method == "monte-carlo":
        spread = plan.test_size_interval
        lines += [f"theta* at the test size: {plan.theta_star:.4f}",
                  f"Monte Carlo 95% interval for the size: [{spread.low:.0f}, {spread.high:g}]"]
    elif plan.search_limit is not None:
        stable = (f"{plan.stable_size}  (the power stays at or above {plan.power:g} from here "
                  f"up to the search limit)" if plan.stable_size is not None else
                  f"none: the power falls below {plan.power:g} again before the limit")
        lines += [f"stable size: {stable}", f"search limit: {plan.search_limit}"]
    if plan.design == "stratified" and plan.search_limit is None:
        points = 0 if plan.curve is None else plan.curve.sizes.size
        lines.append(f"stable size: not searched for a two-segment allocation (the power is "
                     f"computed at {points} sizes along it: see --plot)")
    lines.append(f"achieved power: {shown(plan.achieved_power)}"
                 + ("  (share of simulated test sets passing)"
                    if plan.method == "monte-carlo" else ""))
    if plan.design == "stratified":
        lines.append(f"allocation: n1={plan.retrieved_size} retrieved + "
                     f"n0={plan.unretrieved_size} unretrieved documents, total cost "
                     f"{plan.total_cost:g}")
        lines += _comparison_lines(plan)
    return lines


def _comparison_lines(plan: CertificationPlan) -> list[str]:
    """The stratified plan beside the simple random sample of the same collection."""
    assert plan.segment_sizes is not None and plan.cost is not None
    big1, big0 = plan.segment_sizes
    drawn = (f"{big1 + big0} documents, without replacement" if plan.population_size is not None
             else f"{big1 + big0} documents, treated as infinite")
    same = (f"simple random sample of the same collection ({drawn}; same measure, target, "
            f"level, power, posterior): ")
    if plan.srs_test_size is None:
        return [f"{same}no size up to {big1 + big0} reaches the power"]
    lines = [f"{same}{plan.srs_test_size} documents"]
    saved = plan.labels_saved
    assert saved is not None
    if saved >= 0:
        return [*lines, f"stratification saves {saved} labels"]
    c1, c0 = plan.cost
    why = []
    if plan.interval.startswith("segments-"):
        side = 100.0 * (1.0 - (1.0 - plan.confidence_level) / 2.0)
        why.append(f"its bound joins the two segments' {side:g}% bounds (Bonferroni) at their "
                   f"worst corner, wider than the simple random sample's one "
                   f"{100.0 * plan.confidence_level:g}% bound")
    elif plan.interval == "delta":
        why.append("the delta plan samples at least 5 expected documents of each kind in each "
                   "segment, a floor the simple random sample has not")
    if c1 != c0:
        srs_cost = plan.srs_test_size * (c1 * big1 + c0 * big0) / (big1 + big0)
        why.append(f"the allocation minimises the cost ({plan.total_cost:g}, against the "
                   f"simple random sample's {srs_cost:g} on average), not the labels")
    reason = "; ".join(why) if why else "sampling the segments separately does not pay here"
    return [*lines, f"stratification labels {-saved} more documents: {reason}"]


# --- the figure ----------------------------------------------------------------------------------

_RC = {"font.family": "DejaVu Sans", "font.size": 10, "axes.titlesize": 10,
       "axes.labelsize": 10, "xtick.labelsize": 9, "ytick.labelsize": 9, "legend.fontsize": 9,
       "axes.grid": True, "grid.color": "0.9", "svg.fonttype": "none",
       "svg.hashsalt": "evalcert"}


def _thinned(sizes: NDArray[np.int64], power: Array) -> tuple[NDArray[np.int64], Array, bool]:
    """At most `MAX_PLOTTED` points of the curve: each run's least and largest power, in
    order (its envelope); ``True`` when points were dropped."""
    import numpy as np  # deferred: see studies.cli

    if sizes.size <= MAX_PLOTTED:
        return sizes, power, False
    runs = np.array_split(np.arange(sizes.size), MAX_PLOTTED // 2)
    keep = sorted({int(run[np.argmin(power[run])]) for run in runs}
                  | {int(run[np.argmax(power[run])]) for run in runs}
                  | {0, sizes.size - 1})
    return sizes[keep], power[keep], True


def _write_plot(plan: CertificationPlan, path: Path) -> None:
    """Draw the plan's power curve into ``path`` (SVG, the same bytes for the same plan)."""
    if plan.curve is None or plan.curve.sizes.size == 0:
        why = f" ({plan.reason})" if plan.reason else ""
        raise UsageError(f"`--plot` has no power curve to draw: the planner computed none"
                         f"{why}.")
    text = power_figure(plan)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"`--plot` {str(path)!r} cannot be written: "
                         f"{error.strerror or error}.") from None


def power_figure(plan: CertificationPlan) -> str:
    """SVG text of the plan's power curve: power against test size, the wanted power dashed,
    the planned and stable sizes as labelled vertical lines.

    An exact curve of every size up to the search limit gets a second panel around the planned
    and stable sizes, where the saw-tooth between them shows.
    """
    import matplotlib as mpl
    from matplotlib.figure import Figure

    from studies.report.plots import svg

    assert plan.curve is not None
    simulated = plan.method == "monte-carlo"
    every_size = not simulated and plan.search_limit is not None
    zoom = _zoom(plan) if every_size and plan.reachable else None
    with mpl.rc_context(_RC):  # type: ignore[arg-type]
        fig = Figure(figsize=(10.0, 5.0) if zoom else (7.5, 5.0), layout="constrained")
        if zoom:
            whole, near = fig.subplots(1, 2, width_ratios=[1.5, 1])
        else:
            whole, near = fig.subplots(), None
        _panel(whole, plan, None)
        whole.set_ylim(0, 1.02)
        whole.set_ylabel("power (probability the test passes)")
        if near is not None and zoom is not None:
            _panel(near, plan, zoom)
            near.set_title("near the planned size", fontsize=9)
            whole.set_title("the whole search", fontsize=9)
            whole.axvspan(*zoom, color="0.85", alpha=0.5, lw=0,
                          label="the sizes shown on the right")
        if not plan.reachable:
            whole.text(0.02, 0.97, "\n".join(textwrap.wrap(f"unreachable: {plan.reason}", 72)),
                       transform=whole.transAxes, va="top", ha="left", fontsize=9,
                       bbox={"facecolor": "white", "edgecolor": "0.7"})
        whole.set_xlabel(_x_label(plan))
        if near is not None:
            near.set_xlabel("test size")
        design = "simple random sample" if plan.design == "srs" else "stratified design"
        finite = ("" if plan.population_size is None
                  else f", finite collection of {plan.population_size}")
        relation = _relation(plan).replace(">=", "\u2265").replace("<=", "\u2264")
        side = "upper" if plan.measure == "elusion" else "lower"
        fig.suptitle(f"Power to certify {relation} with a {plan.confidence_level:.0%} "
                     f"{plan.interval} {side} bound\n{design}{finite}, {plan.posterior} posterior, "
                     f"{'Monte Carlo' if simulated else 'exact'} power", fontsize=11)
        handles = [h for h in (*whole.get_lines(), *whole.patches)
                   if not h.get_label().startswith("_")]
        fig.legend(handles=handles, loc="outside lower center", ncol=2 if zoom else 1,
                   frameon=False)
        return svg(fig, "power-curve")


def _zoom(plan: CertificationPlan) -> tuple[float, float]:
    """Sizes around the planned and stable sizes (a tenth of the planned size either side)."""
    assert plan.test_size is not None and plan.search_limit is not None
    first = plan.test_size
    last = plan.stable_size if plan.stable_size is not None else plan.test_size
    pad = max(10, round(0.1 * first), (last - first) // 2)
    return max(first - pad, 1) - 0.5, min(last + pad, plan.search_limit) + 0.5


def _panel(ax: Any, plan: CertificationPlan, window: tuple[float, float] | None) -> None:
    """The curve, the wanted power and the marked sizes on ``ax`` (within ``window``)."""
    from studies.report.plots import PALETTE

    assert plan.curve is not None
    sizes, power = plan.curve.sizes, plan.curve.power
    if window is not None:
        inside = (sizes >= window[0]) & (sizes <= window[1])
        sizes, power = sizes[inside], power[inside]
    sizes, power, thinned = _thinned(sizes, power)
    simulated = plan.method == "monte-carlo"
    every_size = not simulated and plan.search_limit is not None
    if simulated:
        ax.plot(sizes, power, color=PALETTE[0], lw=1.2, marker="o", ms=3,
                label="power: share of simulated test sets passing at each size tried")
    elif not every_size:
        ax.plot(sizes, power, color=PALETTE[0], lw=1.2, marker="o", ms=3,
                label="power (exact) at sizes along the allocation")
    else:
        ax.plot(sizes, power, drawstyle="default" if thinned else "steps-mid",
                color=PALETTE[0], lw=0.9 if thinned else 1.2,
                label="power (exact) at each size")
    ax.axhline(plan.power, color="0.35", ls="--", lw=1, label=f"wanted power {plan.power:g}")
    marks = []
    if plan.test_size is not None:
        split = ""
        if plan.design == "stratified" and plan.measure in ("recall", "f1"):
            split = f" (n1={plan.retrieved_size} + n0={plan.unretrieved_size})"
        marks.append((plan.test_size, "planned", PALETTE[1], "-",
                      f"planned size {plan.test_size}{split}: the least reaching the power"))
    if plan.stable_size is not None:
        marks.append((plan.stable_size, "stable", PALETTE[2], ":",
                      f"stable size {plan.stable_size}: never below it again "
                      f"(searched up to {plan.search_limit})"))
    if len(marks) == 2 and marks[0][0] == marks[1][0]:
        size = marks[0][0]
        marks = [(size, "planned = stable", PALETTE[1], "-",
                  f"planned = stable size {size}: the least reaching the power, never "
                  f"below it again (searched up to {plan.search_limit})")]
    spread = plan.test_size_interval
    if simulated and plan.reachable and math.isfinite(spread.high):
        ax.axvspan(spread.low, spread.high, color=PALETTE[5], alpha=0.2, lw=0,
                   label=f"95% Monte Carlo interval of the planned size "
                         f"[{spread.low:.0f}, {spread.high:.0f}]")
    along = ax.get_xaxis_transform()
    for place, (size, name, colour, style, legend) in enumerate(marks):
        ax.axvline(size, color=colour, ls=style, lw=1.4, label=legend)
        ax.text(size, 0.03, f" {name} {size} ", transform=along, rotation=90,
                ha="right" if place == 0 else "left", va="bottom", color=colour, fontsize=9)
    if window is None:
        ax.set_xlim(0, max(int(sizes.max()), plan.test_size or 0) * 1.02)
    else:
        ax.set_xlim(*window)
        low, high = float(power.min()), float(power.max())
        low, high = min(low, plan.power), max(high, plan.power)
        margin = max(high - low, 0.002) * 0.15
        ax.set_ylim(low - margin, high + margin)


def _x_label(plan: CertificationPlan) -> str:
    if plan.design == "srs":
        return "test size (documents labelled)"
    if plan.measure in ("precision", "elusion"):
        segment = "retrieved" if plan.measure == "precision" else "unretrieved"
        return f"test size (documents labelled, all from the {segment} segment)"
    share = ""
    if plan.retrieved_size is not None and plan.test_size:
        share = f", {plan.retrieved_size / plan.test_size:.0%} retrieved"
    return f"total test size n1 + n0 along the planned allocation{share}"
