"""What ``evalcert f1`` and ``evalcert recall`` share: the sampling design's options, the
certification decision, and the assumptions both rest on.

A certifying bound holds only under the sampling the test set had. Both commands read the
design as ``evalcert sample-size`` plans it, with the same option names: ``--design srs`` (a
simple random test set) or ``--design stratified`` (the retrieved and unretrieved segments
sampled separately, of ``--retrieved N1`` and ``--unretrieved N0`` documents; ``--finite``:
each segment's sample drawn without replacement from exactly those documents, so its counts
are hypergeometric). With ``--target T`` they decide: certified when the lower bound of the
one-sided confidence interval (LOSCI) is at least ``T``. The assumptions are printed in words
with the decision.

Nothing here computes a statistic: the bounds and estimates come from `estimators`, the
default method from `estimators._defaults` (the design's method whose coverage is
guaranteed). Building the parser imports none of them.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import textwrap
from collections.abc import Iterator
from typing import Any

from studies.cli.args import UsageError, closed_unit_interval
from studies.cli.counts import document_count, finite
from studies.cli.names import CERTIFICATION_DESIGNS

__all__ = ["GUARANTEED", "add_design", "assumptions", "certification", "closing_lines",
           "default_method", "percent", "population_sizes", "sample_line", "with_option_names"]

# The methods whose coverage is at least the confidence level for every population and
# sample size (`estimators._defaults`): the exact binomial or hypergeometric bounds.
GUARANTEED = ("clopper-pearson", "jaccard-clopper-pearson", "segments-clopper-pearson",
              "segments-hypergeometric")
_MONTE_CARLO = ("beta-posterior", "bootstrap")


def add_design(parser: argparse.ArgumentParser, measure: str) -> None:
    """Add ``--design``, ``--retrieved``, ``--unretrieved``, ``--finite`` and ``--target``."""
    parser.add_argument("--design", choices=CERTIFICATION_DESIGNS, default="srs",
                        help="how the test sample was drawn. srs: a simple random sample of "
                             "the collection; stratified: the retrieved and unretrieved "
                             "segments sampled separately, each uniformly at random (needs "
                             "--retrieved and --unretrieved)")
    parser.add_argument("--retrieved", type=document_count, default=None, metavar="N1",
                        help="--design stratified: documents of the collection the classifier "
                             "retrieved (the retrieved segment), at least --tp + --fp; with "
                             "--unretrieved")
    parser.add_argument("--unretrieved", type=document_count, default=None, metavar="N0",
                        help="--design stratified: documents of the collection it did not "
                             "retrieve, at least --fn + --tn; with --retrieved")
    parser.add_argument("--finite", action="store_true",
                        help="--design stratified: each segment's sample was drawn without "
                             "replacement from exactly its N1 or N0 documents (hypergeometric "
                             "counts; the default method becomes segments-hypergeometric)")
    parser.add_argument("--target", type=closed_unit_interval, default=None, metavar="T",
                        help=f"the {measure} to certify, in [0, 1]: certified when the lower "
                             "bound of the one-sided interval (LOSCI) is at least T")


def population_sizes(args: argparse.Namespace) -> tuple[int, int] | None:
    """``(N1, N0)`` under ``--design stratified``, None under srs; UsageError naming the
    options when they do not fit the design."""
    given = (args.retrieved is not None, args.unretrieved is not None)
    if given[0] != given[1]:
        have, lack = (("--retrieved", "--unretrieved") if given[0]
                      else ("--unretrieved", "--retrieved"))
        raise UsageError(f"`{have}` must come with `{lack}` (the collection's two segment "
                         f"sizes, N1 and N0); got {have} alone.")
    if args.design == "srs":
        if given[0]:
            raise UsageError("`--retrieved`/`--unretrieved` apply to --design stratified (the "
                             "segments' sizes weigh the segments' samples); got them with "
                             "--design srs.")
        if args.finite:
            raise UsageError("`--finite` applies to --design stratified (each segment's "
                             "sample drawn without replacement from its N1 or N0 documents); "
                             "got it with --design srs.")
        return None
    if not given[0]:
        raise UsageError("`--design stratified` needs the collection's segment sizes, "
                         "`--retrieved N1 --unretrieved N0`; got neither.")
    sizes: tuple[int, int] = (args.retrieved, args.unretrieved)
    return sizes


def default_method(measure: str, args: argparse.Namespace) -> str:
    """The design's guaranteed-coverage method (`estimators._defaults`)."""
    from estimators._defaults import default_method as guaranteed  # deferred: see studies.cli

    return guaranteed(measure, args.design, finite=args.finite)


# The estimators' argument names, as the options that set them (`with_option_names`).
_NAMES = (
    ("`population_sizes[0]`", "`--retrieved`"), ("`population_sizes[1]`", "`--unretrieved`"),
    ("`population_sizes` must not both be 0; got (0, 0)",
     "`--retrieved` and `--unretrieved` must not both be 0; got 0 and 0"),
    ("`finite_population` must be False with", "`--finite` must be left out with"),
    ("`finite_population=True`", "`--finite`"), ("`method`", "`--method`"),
    ("`tp`", "`--tp`"), ("`fp`", "`--fp`"), ("`fn`", "`--fn`"), ("`tn`", "`--tn`"),
)
_KEYWORD = re.compile(r"\b(method|design)='([^']*)'")


@contextlib.contextmanager
def with_option_names() -> Iterator[None]:
    """Turn an estimator's ValueError into a UsageError that names the options."""
    try:
        yield
    except ValueError as error:
        message = str(error)
        for name, option in _NAMES:
            message = message.replace(name, option)
        message = _KEYWORD.sub(lambda m: f"--{m.group(1)} {m.group(2)}", message)
        raise UsageError(message.replace("; got True.", ".")) from None


def certification(low: float, target: float | None, method: str) -> dict[str, Any] | None:
    """The decision against ``target`` from the LOSCI's lower bound ``low`` (None: no target).

    Certified when ``low >= target``; an undefined bound (nan) certifies nothing.
    """
    if target is None:
        return None
    return {"target": target, "method": method, "bound": finite(low),
            "certified": bool(low >= target)}  # nan >= target is False


def certification_lines(decision: dict[str, Any] | None, level: float) -> list[str]:
    """The decision as a line of text (none without a target)."""
    if decision is None:
        return []
    target, low = decision["target"], decision["bound"]
    losci = f"the {percent(level)} LOSCI lower bound of {decision['method']}"
    if low is None:
        return [f"not certified: {losci} is undefined (target {target!r})"]
    shown = _against(low, target)
    if decision["certified"]:
        return [f"certified: {losci}, {shown}, is at least the target {target!r}"]
    return [f"not certified: {losci}, {shown}, is below the target {target!r}"]


def _against(value: float, target: float) -> str:
    """``value`` to 4 decimals, or to as many more as it takes for the shown number to stand
    on the same side of ``target`` as ``value`` (in full where they are equal)."""
    if value == target:
        return repr(value)
    for digits in range(4, 18):
        shown = f"{value:.{digits}f}"
        if float(shown) != target and (float(shown) > target) == (value > target):
            return shown
    return repr(value)


def percent(level: float) -> str:
    """``0.95`` as ``95%``, ``0.999`` as ``99.9%``."""
    return f"{level * 100:.10g}%"


def sample_line(summary: dict[str, Any]) -> str:
    """The counts, said as the design reads them."""
    c, sizes = summary["counts"], summary["segments"]
    if sizes is None:
        return f"simple random sample: tp={c['tp']} fp={c['fp']} fn={c['fn']} tn={c['tn']}"
    return (f"stratified sample: tp={c['tp']} fp={c['fp']} of the {sizes['retrieved']} "
            f"retrieved, fn={c['fn']} tn={c['tn']} of the {sizes['unretrieved']} "
            "unretrieved" + (", without replacement" if summary["finite"] else ""))


def closing_lines(summary: dict[str, Any]) -> list[str]:
    """The decision and the certifying bound's assumptions, as the last lines of the text."""
    decision = summary["certification"]
    lines = certification_lines(decision, summary["confidence_level"])
    method = summary["method"] if decision is None else decision["method"]
    lines.append(f"assumptions of the certifying bound ({method}):")
    for item in summary["assumptions"]:
        lines.append(textwrap.fill(item, width=100, initial_indent="  - ",
                                   subsequent_indent="    ", break_on_hyphens=False))
    return lines


def assumptions(measure: str, method: str, args: argparse.Namespace,
                sizes: tuple[int, int] | None) -> list[str]:
    """What the bound of ``method`` takes for granted, in words, one item a line."""
    said = []
    if sizes is None:
        said.append("the test sample is a simple random sample of the collection: every "
                    "document equally likely, drawn independently (with replacement, or from "
                    "a collection much larger than the sample)")
    else:
        said.append(f"the collection holds N1 = {sizes[0]} retrieved and N0 = {sizes[1]} "
                    "unretrieved documents, and each segment's sample was drawn uniformly at "
                    "random from it, independently of the other's")
    said.append("every label (relevant or not) is correct")
    level = args.confidence_level
    if method.startswith("segments-"):
        if method == "segments-hypergeometric":
            said.append("each segment's sample was drawn without replacement from exactly its "
                        "documents: its count of relevant documents is hypergeometric, and "
                        "its bounds are the exact hypergeometric ones")
        else:
            said.append("each segment's count of relevant documents is binomial (sampled with "
                        "replacement, or a segment much larger than its sample), and its "
                        "bounds are the exact Clopper-Pearson ones")
        said.append(f"the {percent(1 - level)} error is split between the two segments "
                    f"(Bonferroni): each segment's bound at tail {percent((1 - level) / 4)} "
                    f"for the two-sided interval and {percent((1 - level) / 2)} for the "
                    f"LOSCI, so each interval's coverage of {measure} is at least "
                    f"{percent(level)}")
    elif method == "clopper-pearson":
        said.append("given the sample's relevant documents (tp + fn), the retrieved ones (tp) "
                    "are binomial in recall: the exact Clopper-Pearson interval's coverage of "
                    f"recall is at least {percent(level)}")
    elif method == "jaccard-clopper-pearson":
        said.append("given tp + fp + fn, tp is binomial in the Jaccard ratio "
                    "J = tp / (tp + fp + fn) of the collection, and F1 = 2 J / (1 + J): the "
                    "exact Clopper-Pearson interval on J, mapped to F1, has coverage of F1 at "
                    f"least {percent(level)}")
    else:
        kind = "Monte Carlo (--draws, --seed), " if method in _MONTE_CARLO else ""
        said.append(f"{method} is approximate ({kind}no coverage guarantee): its coverage may "
                    f"fall below {percent(level)}, most where relevant documents are few")
    if args.finite and method == "delta":
        said.append("each segment's variance carries the finite-population factor "
                    "1 - n_h / N_h")
    return said

