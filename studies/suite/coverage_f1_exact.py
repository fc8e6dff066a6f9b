"""Exact coverage and width of the deterministic F1 intervals, n <= 1000; which one certifies.

Aims
    The same questions as `studies.suite.coverage_f1`, answered without Monte Carlo error for
    the methods whose intervals are a function of the test sample alone, at the confidence
    levels 90%, 95% and 99%: where do the delta and logit-delta intervals (two-sided and LOSCI)
    reach their nominal coverage, and by how much do they fall short elsewhere? Does the delta
    LOSCI's shortfall grow in the tail (99%), where the skew of F1's sampling distribution
    weighs most? Do the Clopper-Pearson-based intervals, whose coverage is guaranteed, indeed
    never cover below nominal at any level, and how much wider are they? Which interval should
    certify?

    **Recommendation.** Certify with the Clopper-Pearson-based LOSCI of the design:
    ``jaccard-clopper-pearson-losci`` under simple random sampling and
    ``segments-clopper-pearson-losci`` under stratified sampling. Their coverage is
    guaranteed for every population, ``n`` and level; their price is width, which the
    report's findings (`findings_by_level`, read from the run) give against the delta LOSCI
    where many relevant documents are expected, beside the lowest coverage of each interval,
    level by level. The Wilson and Jeffreys Jaccard intervals and ``dirichlet-posterior``
    have no guarantee: where they cover nominally here, nothing extends it beyond this grid.
Data-generating mechanisms
    As in `studies.suite.coverage_f1` (both designs; prevalence 3%-50%, F1 0.3-0.95, ``n``
    50-1,000), at the confidence levels 0.90, 0.95 and 0.99 (quick: 54 populations and sizes
    at each level, 162 cells; full: 432 at each, 1,296 cells), but every possible test sample
    is enumerated with its probability instead of being drawn. SRS: every method's interval
    depends only on ``tp`` and ``e = fp + fn`` (the Jaccard and Dirichlet intervals on ``tp``
    and ``tp + fp + fn``), a trinomial with ``(n + 1)(n + 2) / 2`` outcomes. Stratified: two
    independent binomials, ``(n1 + 1)(n0 + 1)`` outcomes (at most 251,001). The cells of one
    (design, ``n``, prevalence, level) share the enumeration and the intervals
    (``estimates_depend_on``: the stratified allocation depends on the prevalence).
Estimands
    Population F1.
Methods
    From ``estimators.f1_ci``, each two-sided and as its LOSCI (``<method>-losci``): under
    both designs ``delta`` and ``logit-delta``; under simple random sampling only
    ``jaccard-clopper-pearson`` (guaranteed coverage), ``jaccard-wilson``,
    ``jaccard-jeffreys``, ``dirichlet-posterior``, ``jaccard-wald``, ``jaccard-wilson-cc``,
    ``jaccard-agresti-coull`` and ``jaccard-mid-p``; under stratified sampling only
    ``segments-clopper-pearson`` and ``segments-hypergeometric`` (guaranteed coverage; the
    latter with the segments' finite sizes). A method runs only in the cells of
    the design that admits it (``F1_METHODS_BY_DESIGN``; `coverage_f1.applies`): elsewhere it
    has no values, neither a miss nor an error. Undefined intervals count as not covering
    (see `studies.suite.coverage_f1`).
Performance measures
    Coverage, mean width and the undefined share, exact (MCSE 0). The summary and the findings
    are given at each level (`summary_by_level`, `findings_by_level`): a mean over levels would
    mix nominal rates. The claims whose numbers are those of one level say which level they
    are judged at.

References
----------
Bagdouri, M., Webber, W., Lewis, D. D. & Oard, D. W. (2013). Towards minimizing the annotation
cost of certified text classification. CIKM. Appendix A (delta-method variance).
Clopper, C. J. & Pearson, E. S. (1934). *Biometrika* 26, 404-413.
Lam, K. F. Y., Gopal, V. & Qian, J. (2023). Confidence intervals for the F1 score: a
comparison of four methods. arXiv 2309.14621 (Clopper-Pearson and Wilson based F1 intervals).
Morris, T. P., White, I. R. & Crowther, M. J. (2019). *Statistics in Medicine* 38, 2074-2102.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

from studies.engine import StudyResult
from studies.engine.claims import Claim
from studies.engine.design import Figure, Grid, Params, Recommendation, Sample, Study
from studies.suite.coverage_f1 import (
    CLAIMS,
    CLOPPER_PEARSON,
    DETERMINISTIC,
    MANY_RELEVANT,
    MEASURES,
    allocation,
    applies,
    cell_proportions,
    coverage_by_n,
    findings,
    generate,
    methods,
    summary_table,
    truth,
    wrap_method,
)

__all__ = ["CELLWISE_CLAIMS", "EXACT_CLAIMS", "EXACT_METHODS", "STUDY", "enumerate_outcomes",
           "findings_by_level", "summary_by_level"]

IntArray = NDArray[np.int64]


def _trinomial_outcomes(n: int) -> IntArray:
    """Every ``(tp, e, tn)`` with ``tp + e + tn = n``, as rows (``(n + 1)(n + 2) / 2``)."""
    total, tp = np.tril_indices(n + 1)  # total = tp + e runs over 0..n, tp over 0..total
    return np.column_stack([tp, total - tp, n - total]).astype(np.int64)


def enumerate_outcomes(cells: Sequence[Params]) -> Sample:
    """Every test sample of the cells' design, with its probability in each cell.

    SRS: outcomes ``(tp, e, 0, tn)`` (fp carries ``e = fp + fn``) with trinomial
    probabilities, exact for the deterministic methods, whose SRS intervals depend on ``tp``
    and ``e`` only. Stratified: every ``(tp, n1 - tp, fn, n0 - fn)``, two independent
    binomials. Probabilities in log space for the whole (cells x outcomes) matrix.
    """
    if cells[0]["design"] == "stratified":
        return _stratified_outcomes(cells)
    n = int(cells[0]["n"])
    outcomes = _trinomial_outcomes(n)
    props = np.array([cell_proportions(params) for params in cells])
    probs = np.column_stack([props[:, 0], props[:, 1] + props[:, 2], props[:, 3]])
    log_coef = special.gammaln(n + 1) - special.gammaln(outcomes + 1).sum(axis=1)
    log_p = log_coef + sum(special.xlogy(outcomes[:, k], probs[:, k:k + 1]) for k in range(3))
    probability = np.exp(log_p)
    counts = np.column_stack([outcomes[:, 0], outcomes[:, 1], np.zeros_like(outcomes[:, 0]),
                              outcomes[:, 2]])
    return Sample(data=(counts, 0), size=outcomes.shape[0],
                  probability=probability / probability.sum(axis=1, keepdims=True))


def _stratified_outcomes(cells: Sequence[Params]) -> Sample:
    """``tp ~ Bin(n1, precision)`` and ``fn ~ Bin(n0, fn share of the unretrieved)``, all pairs.

    The cells share their allocation ``(n1, n0)`` (their prevalence is a grouping parameter).
    """
    n1, n0 = allocation(cells[0])
    tp, fn = (axis.ravel() for axis in np.meshgrid(np.arange(n1 + 1), np.arange(n0 + 1),
                                                   indexing="ij"))
    props = np.array([cell_proportions(params) for params in cells])
    precision = (props[:, 0] / (props[:, 0] + props[:, 1]))[:, None]
    omission = (props[:, 2] / (props[:, 2] + props[:, 3]))[:, None]
    log_p = (_log_binomial(tp, n1, precision) + _log_binomial(fn, n0, omission))
    probability = np.exp(log_p)
    counts = np.column_stack([tp, n1 - tp, fn, n0 - fn]).astype(np.int64)
    return Sample(data=(counts, 0), size=counts.shape[0],
                  probability=probability / probability.sum(axis=1, keepdims=True))


def _log_binomial(k: IntArray, n: int, p: NDArray[np.float64]) -> NDArray[np.float64]:
    log_choose = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    found: NDArray[np.float64] = log_choose + special.xlogy(k, p) + special.xlog1py(n - k, -p)
    return found


_AT_95 = "confidence_level == 0.95"  # a claim whose numbers are those of the 95% level
_FROM_95 = "confidence_level >= 0.95"  # one that fails at 90% (its statement says how)

# Exact values decide a claim about every cell, which the Monte Carlo study can judge only on
# average over the populations (`coverage_f1.CLAIMS`).
CELLWISE_CLAIMS = (
    Claim("logit-delta-nominal-with-many-relevant",
          "At 95% and 99%, with at least 50 expected relevant documents, the logit-delta "
          "intervals (two-sided and LOSCI) cover at most 1 point below the nominal level in "
          "every cell (at least 94% and 98%); at 90% they do not "
          "(logit-delta-at-most-2.5-points-short-at-90-percent).",
          ("logit-delta", "logit-delta-losci"), "coverage", "at_least", target="confidence_level",
          margin=0.01, where=f"{MANY_RELEVANT} and {_FROM_95}", pins=("validity",)),
    Claim("logit-delta-at-most-2.5-points-short-at-90-percent",
          "At 90%, with at least 50 expected relevant documents, the logit-delta intervals "
          "(two-sided and LOSCI) cover at least 87.5% in every cell: they miss at most 1.25 "
          "times as often as nominal, but the LOSCI falls more than the 1 point short that "
          "bounds them at 95% and 99% (full grid: 87.9% under stratified sampling at "
          "prevalence 0.05, F1 0.95 and n = 1000; the worst cell is 0.9 points short at 95% "
          "and 0.7 at 99%).",
          ("logit-delta", "logit-delta-losci"), "coverage", "at_least", target="confidence_level",
          margin=0.025, where=f"{MANY_RELEVANT} and confidence_level == 0.9",
          pins=("validity",)),
    Claim("clopper-pearson-never-below-nominal",
          "The Clopper-Pearson-based intervals, jaccard-clopper-pearson under simple random "
          "sampling and segments-clopper-pearson under stratified sampling, cover at least the "
          "nominal level in every cell at each level (90%, 95% and 99%), two-sided and LOSCI "
          "(their coverage is guaranteed for every population, n and level).",
          tuple(f"{m}{side}" for m in CLOPPER_PEARSON for side in ("", "-losci")), "coverage",
          "at_least", target="confidence_level", pins=("validity",)),
)

# A Jaccard interval that misses less than a fifth as often as nominal, averaged over the
# populations at some n, is taken at a stricter level than it states: its coverage is then above
# 1 - (1 - level) / 5, 98% at 90%, 99% at 95% and 99.8% at 99%.
_JACCARD_CONSERVATIVE = ("jaccard-clopper-pearson", "jaccard-clopper-pearson-losci",
                         "jaccard-wilson-cc", "jaccard-wilson-cc-losci")

EXACT_CLAIMS = (
    *CELLWISE_CLAIMS,
    # its 98% is 3 points above 95%, a bound no interval reaches at 99%
    *(dataclasses.replace(claim, where=f"{claim.where} and {_AT_95}") for claim in CLAIMS
      if claim.name == "segments-clopper-pearson-conservative"),
    Claim("wilson-jeffreys-mean-near-nominal",
          "At 95% and 99%, averaged over the grid (prevalence, F1 and n) under simple random "
          "sampling, the jaccard-wilson and jaccard-jeffreys intervals, two-sided and LOSCI, "
          "cover within 1 point of the nominal level. At 90% they cover more where n is small "
          "(quick grid, n <= 200: up to 91.4%; full grid: 90.0-90.8%).",
          ("jaccard-wilson", "jaccard-wilson-losci", "jaccard-jeffreys", "jaccard-jeffreys-losci"),
          "coverage", "within", target="confidence_level", margin=0.01,
          mean_over=("prevalence", "f1", "n"), where=_FROM_95, pins=("validity", "efficiency")),
    Claim("jaccard-clopper-pearson-not-needlessly-conservative",
          "At 95%, averaged over prevalence and F1 at each n, the jaccard-clopper-pearson and "
          "jaccard-wilson-cc intervals, two-sided and LOSCI, cover at most 99%: they miss at "
          "least a fifth as often as nominal (full grid: 98.5% at n = 50, 96.0% at n = 1000), "
          "so a bound computed at a stricter level than stated is seen.",
          _JACCARD_CONSERVATIVE, "coverage", "at_most",
          target=0.99, where=f"design == 'srs' and {_AT_95}",
          mean_over=("prevalence", "f1"), pins=("efficiency",)),
    *(Claim(f"jaccard-clopper-pearson-not-needlessly-conservative-at-{level * 100:g}-percent",
            f"At {level * 100:g}%, averaged over prevalence and F1 at each n, the "
            f"jaccard-clopper-pearson and jaccard-wilson-cc intervals, two-sided and LOSCI, "
            f"cover at most {bound * 100:g}%: as at 95%, they miss at least a fifth as often "
            f"as nominal (full grid: {seen}).",
            _JACCARD_CONSERVATIVE, "coverage", "at_most", target=bound,
            where=f"design == 'srs' and confidence_level == {level}",
            mean_over=("prevalence", "f1"), pins=("efficiency",))
      for level, bound, seen in (
          (0.9, 0.98, "96.5% at most, at n = 50"),
          (0.99, 0.998, "99.76% at most, at n = 50, 0.24 times nominal's misses"))),
    Claim("jaccard-wilson-cc-conservative-on-average",
          "Averaged over prevalence and F1 at each n, the jaccard-wilson-cc interval, "
          "two-sided and LOSCI, covers at least the nominal level at each level (90%, 95% and "
          "99%; as the continuity-corrected Wilson interval does for a proportion), though "
          "not in every cell.",
          ("jaccard-wilson-cc", "jaccard-wilson-cc-losci"), "coverage", "at_least",
          target="confidence_level", where="design == 'srs'", mean_over=("prevalence", "f1"),
          pins=("validity",)),
    Claim("approximate-intervals-near-nominal-with-many-relevant",
          "At 95% and 99%, with at least 50 expected relevant documents, averaged over "
          "prevalence and F1 at each design and n, the logit-delta, jaccard-agresti-coull and "
          "jaccard-mid-p intervals, two-sided and LOSCI, cover within 1 point of the nominal "
          "level: neither short nor needlessly wide once the counts are large (a 95% LOSCI "
          "taken at the two-sided level would cover about 97.5%). At 90% the two-sided "
          "logit-delta interval covers more where F1 is high and n small (quick grid: 91.2% "
          "at n = 100, where F1 = 0.95 is a third of the mean; full grid: within 1 point).",
          ("logit-delta", "logit-delta-losci", "jaccard-agresti-coull",
           "jaccard-agresti-coull-losci", "jaccard-mid-p", "jaccard-mid-p-losci"), "coverage",
          "within", target="confidence_level", margin=0.01,
          where=f"{MANY_RELEVANT} and {_FROM_95}", mean_over=("prevalence", "f1"),
          pins=("validity", "efficiency")),
    Claim("delta-losci-misses-at-most-1.3-times-nominal-at-90-percent",
          "At 90%, with at least 50 expected relevant documents, averaged over prevalence and "
          "F1 at each design and n, the delta LOSCI covers at least 87%: it misses at most "
          "1.3 times as often as nominal (full grid: 87.6-88.7%, 1.1-1.2 times).",
          ("delta-losci",), "coverage", "at_least", target="confidence_level", margin=0.03,
          where=f"{MANY_RELEVANT} and confidence_level == 0.9", mean_over=("prevalence", "f1")),
    Claim("delta-losci-misses-at-least-1.5-times-nominal-at-99-percent",
          "At 99%, with at least 50 expected relevant documents, averaged over prevalence and "
          "F1 at each design and n, the delta LOSCI covers at most 98.5%: it misses at least "
          "1.5 times as often as nominal (full grid: 97.2-98.2%, 1.8-2.8 times). F1's "
          "sampling distribution is left-skewed, so a symmetric lower bound sits too high, the "
          "more so the further into the tail it reaches: the shortfall relative to nominal "
          "grows with the level, though in points it is no larger than at 90% (full grid: "
          "0.8-1.8 points against 1.3-2.4).",
          ("delta-losci",), "coverage", "at_most", target="confidence_level", margin=-0.005,
          where=f"{MANY_RELEVANT} and confidence_level == 0.99", mean_over=("prevalence", "f1")),
    Claim("logit-delta-losci-nominal-on-average-at-99-percent",
          "At 99%, with at least 50 expected relevant documents, averaged over prevalence and "
          "F1 at each design and n, the logit-delta LOSCI covers at least the nominal level "
          "(full grid: 99.1-99.2%): on the logit scale its bound follows F1's left skew, and "
          "its shortfall does not grow in the tail as the delta LOSCI's does.",
          ("logit-delta-losci",), "coverage", "at_least", target="confidence_level",
          where=f"{MANY_RELEVANT} and confidence_level == 0.99", mean_over=("prevalence", "f1"),
          pins=("validity",)),
    Claim("jaccard-wald-within-3-points-with-many-relevant",
          "With at least 50 expected relevant documents, averaged over prevalence and F1 at "
          "each n, the jaccard-wald interval, two-sided and LOSCI, covers within 3 points of "
          "the nominal level at each level (below it, as the Wald interval of a proportion "
          "does): its promise is a large-count one.",
          ("jaccard-wald", "jaccard-wald-losci"), "coverage", "within",
          target="confidence_level", margin=0.03, where=f"design == 'srs' and {MANY_RELEVANT}",
          mean_over=("prevalence", "f1"), pins=("validity", "efficiency")),
    Claim("segments-hypergeometric-never-below-nominal",
          "The segments-hypergeometric interval (each segment's exact finite-population "
          "bound, Bonferroni-combined), two-sided and LOSCI, covers at least the nominal level "
          "in every cell at each level (90%, 95% and 99%).",
          ("segments-hypergeometric", "segments-hypergeometric-losci"), "coverage", "at_least",
          target="confidence_level", pins=("validity",)),
    *(Claim(f"segments-hypergeometric{side}-no-wider-than-clopper-pearson",
            f"The segments-hypergeometric {what} is no wider than segments-clopper-pearson's "
            f"in any cell: the finite-population bound of a segment lies within the binomial "
            f"one.",
            (f"segments-hypergeometric{side}",), "width", "at_most", target=0.0,
            reference=f"segments-clopper-pearson{side}", resolution=1e-6, pins=("efficiency",))
      for side, what in (("", "interval"), ("-losci", "LOSCI"))),
    Claim("segments-bonferroni-bound-covers-at-least-99-percent",
          "Under stratified sampling, the two-sided 95% segments-clopper-pearson and "
          "segments-hypergeometric intervals cover at least 99% in every cell (full grid: "
          "99.2% at least): the price of bounding the two segments separately and splitting "
          "the miss rate between them (Bonferroni), paid in width. Without the split they "
          "would cover less (98.3% on the quick grid).",
          ("segments-clopper-pearson", "segments-hypergeometric"), "coverage",
          "at_least", target=0.99, where=f"design == 'stratified' and {_AT_95}"),
    Claim("segments-bonferroni-bound-covers-at-least-97.5-percent-at-90-percent",
          "At 90%, under stratified sampling, the two-sided segments-clopper-pearson and "
          "segments-hypergeometric intervals cover at least 97.5% in every cell: they miss at "
          "most a quarter as often as nominal, though not always a fifth as at 95% and 99% "
          "(full grid: 97.98% at least).",
          ("segments-clopper-pearson", "segments-hypergeometric"), "coverage",
          "at_least", target=0.975, where="design == 'stratified' and confidence_level == 0.9"),
    Claim("segments-bonferroni-bound-covers-at-least-99.8-percent-at-99-percent",
          "At 99%, under stratified sampling, the two-sided segments-clopper-pearson and "
          "segments-hypergeometric intervals cover at least 99.8% in every cell: as at 95%, "
          "they miss at most a fifth as often as nominal (full grid: 99.90% at least), so a "
          "segment bound taken at a laxer level than asked is seen.",
          ("segments-clopper-pearson", "segments-hypergeometric"), "coverage",
          "at_least", target=0.998, where="design == 'stratified' and confidence_level == 0.99"),
    Claim("segments-bonferroni-bound-not-beyond-its-price",
          "Averaged over prevalence and F1 at each n, the 95% segments-clopper-pearson and "
          "segments-hypergeometric intervals, two-sided and LOSCI, cover at most 99.95%: they "
          "miss at least a hundredth as often as nominal (full grid: 99.94% at most, at "
          "n = 50), so a segment bound taken at a stricter level than the Bonferroni split "
          "asks is seen.",
          ("segments-clopper-pearson", "segments-clopper-pearson-losci",
           "segments-hypergeometric", "segments-hypergeometric-losci"), "coverage", "at_most",
          target=0.9995, where=f"design == 'stratified' and {_AT_95}",
          mean_over=("prevalence", "f1"), pins=("efficiency",)),
    Claim("dirichlet-posterior-mean-near-nominal",
          "At 95% and 99%, averaged over prevalence and F1 at each n, the two-sided "
          "dirichlet-posterior interval covers within 1 point of the nominal level (full "
          "grid: 95.0-95.2% and 99.0% at n = 50-1000). At 90% it falls short where few "
          "relevant documents are expected (quick grid: 88.2% at n = 50, where prevalence 3% "
          "is a third of the mean).",
          ("dirichlet-posterior",), "coverage", "within", target="confidence_level",
          margin=0.01, mean_over=("prevalence", "f1"), where=_FROM_95,
          pins=("validity", "efficiency")),
    Claim("dirichlet-posterior-losci-at-most-3-points-conservative",
          "At 95%, averaged over prevalence and F1 at each n, the dirichlet-posterior LOSCI "
          "covers at least the nominal 95% and at most 98% (full grid: 95.7% at n = 1000 to "
          "97.8% at n = 50): a bound taken at the two-sided level (97.5%) would cover more.",
          ("dirichlet-posterior-losci",), "coverage", "within", target=0.965, margin=0.015,
          mean_over=("prevalence", "f1"), where=_AT_95, pins=("validity", "efficiency")),
)

# Beside the Monte Carlo study's deterministic methods, the other binomial intervals of the
# Jaccard ratio and the finite-population segments bound: exact enumeration costs little.
EXACT_METHODS = (*DETERMINISTIC, "jaccard-wald", "jaccard-wilson-cc", "jaccard-agresti-coull",
                 "jaccard-mid-p", "segments-hypergeometric")

_SRS = ("delta", "logit-delta", "jaccard-clopper-pearson", "jaccard-wilson", "jaccard-jeffreys",
        "dirichlet-posterior")
_STRATIFIED = ("delta", "logit-delta", "segments-clopper-pearson")


def _losci(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f"{name}-losci" for name in names)


def _losci_width(caption: str, design: str, names: tuple[str, ...]) -> Figure:
    """Mean LOSCI width (1 minus the mean lower bound) against n, at F1 = 0.7 and 95%."""
    return Figure("measure_by", caption, where=f"design == '{design}' and f1 == 0.7 and {_AT_95}",
                  options={"measure": "width", "x": "n", "panel_by": "prevalence",
                           "log_x": True, "methods": _losci(names)})


def _at_95(figure: Figure) -> Figure:
    """``figure`` of the 95% cells only: its dashed line is the nominal 95%."""
    return dataclasses.replace(figure, where=f"{figure.where} and {_AT_95}")


FIGURES = (
    _at_95(coverage_by_n(
        "Exact two-sided coverage under simple random sampling, F1 = 0.7, 95%, against n, a "
        "panel per prevalence: delta, logit-delta, jaccard-clopper-pearson (guaranteed), "
        "jaccard-wilson, jaccard-jeffreys and dirichlet-posterior. The dashed line is the "
        "nominal 95%.", "srs", _SRS)),
    _at_95(coverage_by_n(
        "The same for the LOSCIs: jaccard-clopper-pearson's is the recommended certification "
        "interval under simple random sampling.", "srs", _losci(_SRS))),
    _at_95(coverage_by_n(
        "Exact 95% coverage under stratified sampling, F1 = 0.7, two-sided and LOSCI: delta, "
        "logit-delta and segments-clopper-pearson (guaranteed; a Bonferroni bound over the "
        "two segments).", "stratified", (*_STRATIFIED, *_losci(_STRATIFIED)))),
    Figure("coverage_against",
           "The LOSCIs at each level under simple random sampling, prevalence 0.5 and F1 = 0.7, "
           "against n, a panel per level (the dashed line is its nominal level): the delta "
           "LOSCI falls short at every level, relative to nominal the more so at 99% (at "
           "n = 50 it misses 1.2 times as often as nominal at 90%, 2.8 times at 99%); the "
           "logit-delta LOSCI and jaccard-clopper-pearson's stay on or above the line.",
           where="design == 'srs' and prevalence == 0.5 and f1 == 0.7",
           options={"x": "n", "panel_by": "confidence_level",
                    "methods": _losci(("delta", "logit-delta", "jaccard-clopper-pearson"))}),
    _losci_width(
        "The price of the guarantee under simple random sampling, F1 = 0.7, 95%: the mean "
        "width of each LOSCI (1 minus its mean lower bound) against n, a panel per "
        "prevalence.", "srs", ("delta", "logit-delta", "jaccard-clopper-pearson",
                               "dirichlet-posterior")),
    _losci_width(
        "The same under stratified sampling: delta, logit-delta and segments-clopper-pearson.",
        "stratified", _STRATIFIED),
    Figure("heat_map",
           "The 95% logit-delta LOSCI's exact coverage under simple random sampling, averaged "
           "over F1, by prevalence (rows) and n (columns): white is the nominal 95%, red below "
           "it.",
           where=f"design == 'srs' and {_AT_95}",
           options={"measure": "coverage", "method": "logit-delta-losci", "rows": "prevalence",
                    "columns": "n", "center": 0.95}),
)


def _levels(result: StudyResult) -> list[float]:
    """The confidence levels of the run's cells, ascending."""
    return sorted({float(cell.params["confidence_level"]) for cell in result.cells})


def _at_level(result: StudyResult, level: float) -> StudyResult:
    """The run's cells at one confidence level."""
    return StudyResult(result.study, tuple(
        c for c in result.cells if float(c.params["confidence_level"]) == level),
        parameters=result.parameters)


def summary_by_level(result: StudyResult) -> list[dict[str, Any]]:
    """`coverage_f1.summary_table` at each confidence level, its rows led by the level.

    A mean or a minimum over levels would mix nominal rates: each level has its own rows.
    """
    return [{"design": row["design"], "confidence_level": level,
             **{k: v for k, v in row.items() if k != "design"}}
            for level in _levels(result) for row in summary_table(_at_level(result, level))]


def findings_by_level(result: StudyResult, summary: Sequence[Mapping[str, Any]]) -> list[str]:
    """`coverage_f1.findings` at each confidence level, each sentence opening with its level.

    ``summary`` holds `summary_by_level`'s rows; each level's findings read its own.
    """
    return [f"At {level * 100:g}%, {sentence}" for level in _levels(result)
            for sentence in findings(_at_level(result, level), [
                row for row in summary if float(row["confidence_level"]) == level])]


STUDY = Study(
    name="coverage_f1_exact",
    ademp=__doc__,
    version="5",
    grids={
        "quick": Grid({"design": ["srs", "stratified"], "prevalence": [0.03, 0.15, 0.5],
                       "f1": [0.3, 0.7, 0.95], "n": [50, 100, 200],
                       "confidence_level": [0.9, 0.95, 0.99]}, n_replicates=2, task_seconds=0.1),
        "full": Grid({"design": ["srs", "stratified"],
                      "prevalence": [0.03, 0.05, 0.1, 0.2, 0.3, 0.5],
                      "f1": [0.3, 0.5, 0.7, 0.8, 0.9, 0.95],
                      "n": [50, 100, 200, 300, 500, 1000],
                      "confidence_level": [0.9, 0.95, 0.99]},
                     n_replicates=2, task_seconds=0.2),
    },
    truth=truth,
    generate=generate,
    methods=methods(EXACT_METHODS),
    measures=MEASURES,
    enumerate_outcomes=enumerate_outcomes,
    # the stratified allocation and population sizes follow the prevalence
    estimates_depend_on=("design", "n", "prevalence", "confidence_level"),
    wrap_method=wrap_method,
    applies=applies,
    parameter_space=(0.0, 1.0),
    summary=summary_by_level,
    claims=EXACT_CLAIMS,
    estimator_methods={f"{name}{side}": f"f1_ci:{name}" for name in EXACT_METHODS
                       for side in ("", "-losci")},
    recommendations=(
        Recommendation(
            "Certify F1 from a simple random test sample with jaccard-clopper-pearson (its "
            "lower one-sided bound): it never covers below nominal, and it is not needlessly "
            "conservative.",
            ("clopper-pearson-never-below-nominal",
             "jaccard-clopper-pearson-not-needlessly-conservative")),
        Recommendation(
            "Certify F1 from a stratified test sample with segments-clopper-pearson, or "
            "segments-hypergeometric when the segments' sizes are known: neither covers below "
            "nominal.",
            ("segments-clopper-pearson-conservative",
             "segments-hypergeometric-never-below-nominal")),
    ),
    figures=FIGURES,
    findings=findings_by_level,
)
