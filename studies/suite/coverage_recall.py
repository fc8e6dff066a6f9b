"""Exact coverage and width of the recall intervals (``recall_ci``), SRS and stratified.

Aims
    e-discovery certifies recall more than any other measure. Which of ``recall_ci``'s
    intervals cover as they promise, two-sided and as a lower one-sided bound (the LOSCI a
    certification uses), at 90%, 95% and 99%? Under simple random sampling recall's interval
    is a binomial one on the relevant documents the sample happens to hold (Webber 2013):
    does Clopper-Pearson's guarantee survive the randomness of their number, and where do the
    approximate intervals fall short? Under stratified sampling (the retrieved and unretrieved
    segments sampled apart) do the Bonferroni bounds of the two segments keep their guarantee,
    at what price in width, and does the finite-population bound (``segments-hypergeometric``)
    give any of it back? Where does the delta interval under-cover?
Data-generating mechanisms
    A population of ``population`` documents, a share ``prevalence`` of them relevant
    (``R``), a classifier of recall ``recall`` and precision ``precision`` (``K1`` relevant
    among the ``N1`` retrieved, ``K0 = R - K1`` among the ``N0`` unretrieved; counts rounded
    to integers). **SRS** (``design = "srs"``): a simple random sample of ``n`` documents from
    an unbounded population with these shares, its counts ``(tp, fn, rest)`` trinomial
    (Bagdouri et al. 2013, section 3; the estimand is ``recall``); the population size and
    precision do not enter, so the SRS methods run at precision 0.9 and a population of 2,000
    only (`SRS_CELLS`: the other SRS cells would repeat them). **Stratified**
    (``design = "stratified"``): half the sample from each segment (``n1 = min(n / 2, N1)``,
    the rest from the unretrieved segment: a retrieved segment smaller than ``n / 2`` is a
    census), ``tp ~ Hypergeometric(N1, K1, n1)`` and ``fn ~ Hypergeometric(N0, K0, n0)``
    independently; the estimand is the population's recall ``K1 / R``. Every outcome is
    enumerated with its probability: ``(n + 1)(n + 2) / 2`` trinomial outcomes (SRS),
    ``(n1 + 1)(n0 + 1)`` pairs (stratified). Quick grid: prevalence 0.05, 0.2, 0.5; recall
    0.5, 0.8, 0.95; precision 0.9; a population of 2,000; ``n`` 40 and 120; levels 0.90,
    0.95, 0.99: 108 cells, among them census retrieved segments (prevalence 0.05) and
    samples without a relevant document. Full grid: prevalence 0.02-0.5, recall 0.5-0.95,
    precision 0.5 and 0.9, populations of 2,000 and 100,000, ``n`` 20-200: 2,400 cells (at
    ``n`` = 500 an SRS cell enumerates 125,751 samples: with it the grid was two-thirds done
    after 34 minutes on one worker beside other runs).
Estimands
    Population recall.
Methods
    ``recall_ci``, each two-sided and as its LOSCI (``<method>-losci``, ``alternative=
    "greater"``). SRS: ``wald``, ``wilson``, ``wilson-cc``, ``agresti-coull``,
    ``clopper-pearson``, ``jeffreys`` and ``mid-p`` (the binomial interval of ``tp`` among
    ``tp + fn``). Stratified, with the segments' sizes ``(N1, N0)``: ``segments-clopper-pearson``
    and ``segments-hypergeometric`` (Bonferroni bounds of the two segments, guaranteed) and
    ``delta`` (Bagdouri et al. 2013, Appendix A). A method runs only in its design's cells
    (`applies`). An undefined interval (no relevant document in an SRS sample; a delta
    variance of 0/0) counts as not covering, and as ``rejection``.
Performance measures
    Coverage, mean width (one-sided: ``1 - low``) and the undefined share, exact (MCSE 0).

References
----------
Webber, W. (2013). Approximate recall confidence intervals. *ACM TOIS* 31(1), article 2.
Bagdouri, M., Webber, W., Lewis, D. D. & Oard, D. W. (2013). Towards minimizing the annotation
cost of certified text classification. *CIKM* (seed 000), section 3 and Appendix A.
Brown, L. D., Cai, T. T. & DasGupta, A. (2001). *Statistical Science* 16, 101-133.
Morris, T. P., White, I. R. & Crowther, M. J. (2019). *Statistics in Medicine* 38, 2074-2102.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special, stats

from estimators import RECALL_METHODS_BY_DESIGN, recall_ci
from studies.engine import StudyResult
from studies.engine.claims import Claim
from studies.engine.design import Figure, Grid, Method, Params, Recommendation, Sample, Study
from studies.engine.findings import extreme
from studies.engine.performance import Estimates

__all__ = ["SRS_CELLS", "SRS_METHODS", "STRATIFIED_METHODS", "STUDY", "Population",
           "enumerate_outcomes", "population"]

IntArray = NDArray[np.int64]
Array = NDArray[np.float64]

SRS_METHODS: tuple[str, ...] = ("wald", "wilson", "wilson-cc", "agresti-coull",
                                "clopper-pearson", "jeffreys", "mid-p")
STRATIFIED_METHODS: tuple[str, ...] = ("segments-clopper-pearson", "segments-hypergeometric",
                                       "delta")
_SIDES = {"": "two-sided", "-losci": "greater"}


@dataclass(frozen=True)
class Population:
    """A cell's population: relevant documents ``R``, segment sizes and relevant counts, and
    the stratified sample's allocation ``(n1, n0)``."""

    relevant: int
    retrieved: int  # N1
    unretrieved: int  # N0
    retrieved_relevant: int  # K1
    n1: int
    n0: int

    @property
    def recall(self) -> float:
        """The population's recall ``K1 / R``."""
        return self.retrieved_relevant / self.relevant


def population(params: Params) -> Population:
    """The cell's population in counts (module docstring), checked to be one."""
    size, n = int(params["population"]), int(params["n"])
    relevant = round(float(params["prevalence"]) * size)
    found = round(float(params["recall"]) * relevant)
    retrieved = round(found / float(params["precision"]))
    unretrieved = size - retrieved
    if not (0 < found < relevant and relevant - found <= unretrieved
            and retrieved - found <= size - relevant and n <= size):
        raise ValueError(f"the cell {dict(params)} must describe a population with relevant "
                         f"documents in both segments and at least n documents; got "
                         f"R={relevant}, K1={found}, N1={retrieved}, N={size}.")
    n1 = min(n // 2, retrieved)
    n0 = min(n - n1, unretrieved)
    return Population(relevant, retrieved, unretrieved, found, n1, n0)


def truth(params: Params) -> float:
    """Recall: the sampled shares' (SRS) or the finite population's (stratified)."""
    if params["design"] == "srs":
        return float(params["recall"])
    return population(params).recall


def _trinomial(n: int, chances: Array) -> tuple[IntArray, Array]:
    """Every ``(x, y, n - x - y)`` and its probability under ``chances`` (rows: cells)."""
    total, x = np.tril_indices(n + 1)
    outcomes = np.column_stack([x, total - x, n - total]).astype(np.int64)
    log_p = special.gammaln(n + 1) - special.gammaln(outcomes + 1).sum(axis=1)
    log_p = log_p + sum(special.xlogy(outcomes[:, k], chances[:, k:k + 1]) for k in range(3))
    return outcomes, np.exp(log_p)


def enumerate_outcomes(cells: Sequence[Params]) -> Sample:
    """Every test sample of the cells' design with its probability in each cell.

    Outcomes are confusion matrices ``(tp, fp, fn, tn)``. SRS: ``(tp, 0, fn, rest)`` (an SRS
    recall interval reads ``tp`` and ``fn`` only); stratified: ``(tp, n1 - tp, fn, n0 -
    fn)``, the cells sharing their population (`estimates_depend_on`).
    """
    first = cells[0]
    n = int(first["n"])
    if first["design"] == "srs":
        chances = np.array([[float(c["prevalence"]) * float(c["recall"]),
                             float(c["prevalence"]) * (1.0 - float(c["recall"])),
                             1.0 - float(c["prevalence"])] for c in cells])
        outcomes, probability = _trinomial(n, chances)
        counts = np.column_stack([outcomes[:, 0], np.zeros_like(outcomes[:, 0]),
                                  outcomes[:, 1], outcomes[:, 2]])
    else:
        pop = population(first)
        tp, fn = (axis.ravel() for axis in np.meshgrid(np.arange(pop.n1 + 1),
                                                       np.arange(pop.n0 + 1), indexing="ij"))
        probability = (stats.hypergeom.pmf(tp, pop.retrieved, pop.retrieved_relevant, pop.n1)
                       * stats.hypergeom.pmf(fn, pop.unretrieved,
                                             pop.relevant - pop.retrieved_relevant, pop.n0))
        counts = np.column_stack([tp, pop.n1 - tp, fn, pop.n0 - fn])
        probability = np.broadcast_to(probability, (len(cells), probability.size))
    return Sample(data=counts.astype(np.int64), size=len(counts),
                  probability=probability / probability.sum(axis=1, keepdims=True))


def generate(params: Params, n_replicates: int, *, rng: Any = None) -> Sample:
    """Drawn test samples, as `enumerate_outcomes` lays them out (the Monte Carlo path)."""
    gen = np.random.default_rng(rng)
    n = int(params["n"])
    if params["design"] == "srs":
        prevalence, recall = float(params["prevalence"]), float(params["recall"])
        drawn = gen.multinomial(n, [prevalence * recall, prevalence * (1.0 - recall),
                                    1.0 - prevalence], size=n_replicates)
        counts = np.column_stack([drawn[:, 0], np.zeros(n_replicates, dtype=np.int64),
                                  drawn[:, 1], drawn[:, 2]])
    else:
        pop = population(params)
        tp = gen.hypergeometric(pop.retrieved_relevant, pop.retrieved - pop.retrieved_relevant,
                                pop.n1, size=n_replicates) if pop.n1 else np.zeros(
            n_replicates, dtype=np.int64)
        fn = gen.hypergeometric(pop.relevant - pop.retrieved_relevant,
                                pop.unretrieved - pop.relevant + pop.retrieved_relevant,
                                pop.n0, size=n_replicates)
        counts = np.column_stack([tp, pop.n1 - tp, fn, pop.n0 - fn])
    return Sample(data=counts.astype(np.int64), size=n_replicates)


def _analyse(method: str, alternative: str, counts: IntArray, params: Params) -> Estimates:
    """``recall_ci`` on every outcome; an undefined interval is ``[0, 0]`` (a miss) and
    counted in ``reject``."""
    keywords: dict[str, Any] = {}
    if params["design"] == "stratified":
        pop = population(params)
        keywords = {"design": "stratified",
                    "population_sizes": (pop.retrieved, pop.unretrieved)}
    ci = recall_ci(*counts.T, method=method, confidence_level=float(params["confidence_level"]),
                   alternative=alternative, **keywords)
    low, high = (np.asarray(bound, dtype=np.float64) for bound in (ci.low, ci.high))
    undefined = np.isnan(low) | np.isnan(high)
    return Estimates(low=np.where(undefined, 0.0, low), high=np.where(undefined, 0.0, high),
                     reject=undefined)


def _methods() -> dict[str, Method]:
    return {f"{name}{suffix}": functools.partial(_analyse, name, alternative)
            for name in (*SRS_METHODS, *STRATIFIED_METHODS)
            for suffix, alternative in _SIDES.items()}


# An SRS sample's law depends on neither the classifier's precision nor the population's size:
# its methods run at these only, where the other cells would repeat them.
SRS_CELLS = {"precision": 0.9, "population": 2000}


def applies(method: str, params: Params) -> bool:
    """Whether ``method`` (a ``recall_ci`` method or its LOSCI) runs in the cell: the cell's
    design must admit it, and an SRS method runs in the `SRS_CELLS` only."""
    design = str(params["design"])
    if method.removesuffix("-losci") not in RECALL_METHODS_BY_DESIGN[design]:
        return False
    return design != "srs" or all(params[k] == v for k, v in SRS_CELLS.items())


def _both(*names: str) -> tuple[str, ...]:
    return tuple(f"{name}{suffix}" for name in names for suffix in _SIDES)


# P(no relevant document in an SRS sample) = (1 - prevalence)^n <= exp(-n prevalence): below
# 5e-5 where n prevalence >= 10, the most an SRS interval's coverage can lose to it.
_SRS_DEFINED = "design == 'srs' and n * prevalence >= 10"
_MANY_RELEVANT = "n * prevalence >= 40"
# The relevant documents the unretrieved segment's sample expects (its half of the sample).
_UNRETRIEVED_RELEVANT = "n / 2 * prevalence * (1 - recall) / (1 - prevalence * recall / precision)"

CLAIMS = (
    Claim("srs-clopper-pearson-never-below-nominal",
          "Under simple random sampling, with at least 10 relevant documents expected in the "
          "sample, Clopper-Pearson's recall interval, two-sided and LOSCI, covers at least "
          "the nominal level in every cell up to 5e-5 (the chance of a sample without a "
          "relevant document, which has no interval): given the relevant documents drawn, "
          "recall's count among them is binomial, and the guarantee holds for every count.",
          _both("clopper-pearson"), "coverage", "at_least", target="confidence_level",
          margin=5e-5, where=_SRS_DEFINED, pins=("validity",)),
    Claim("segments-never-below-nominal",
          "Under stratified sampling the segments-clopper-pearson and segments-hypergeometric "
          "intervals, two-sided and LOSCI, cover at least the nominal level in every cell, "
          "census retrieved segments included (Bonferroni over the two segments' exact "
          "bounds).",
          _both("segments-clopper-pearson", "segments-hypergeometric"), "coverage",
          "at_least", target="confidence_level", pins=("validity",)),
    *(Claim(f"segments-hypergeometric{suffix}-no-wider-than-clopper-pearson",
            f"The segments-hypergeometric {what} is no wider than segments-clopper-pearson's "
            f"in any cell: a segment's finite-population bound lies within its binomial one "
            f"(the sample of a finite segment tells more about it).",
            (f"segments-hypergeometric{suffix}",), "width", "at_most", target=0.0,
            reference=f"segments-clopper-pearson{suffix}", resolution=1e-6,
            pins=("efficiency",))
      for suffix, what in (("", "interval"), ("-losci", "LOSCI"))),
    Claim("segments-bonferroni-price-at-90-percent",
          "Averaged over prevalence and recall at each n, the two-sided 90% "
          "segments-clopper-pearson and segments-hypergeometric intervals cover between 97.5% "
          "and 99.8%: the price of bounding the two segments apart, each at half the miss "
          "rate, is to miss a quarter as often as nominal or less, and no more than that price "
          "is paid (full grid: 98.7% to 99.75%, the most where the retrieved segment is "
          "large, at precision 0.5).",
          ("segments-clopper-pearson", "segments-hypergeometric"), "coverage", "within",
          target=0.9865, margin=0.0115,
          where="design == 'stratified' and confidence_level == 0.9",
          mean_over=("prevalence", "recall"), pins=("efficiency",)),
    Claim("delta-near-nominal-with-many-relevant-unretrieved",
          "Where the unretrieved segment's sample expects at least 15 relevant documents, "
          "averaged over prevalence and recall at each n and level, the stratified delta "
          "interval, two-sided and LOSCI, covers within 4 points of the nominal level (full "
          "grid: 3.8 points above at 90% where a tenth of a population of 2,000 is sampled, "
          "its variance having no finite-population correction; 2.0 points below at "
          "100,000). With fewer it falls far short (a segment sample without a relevant "
          "document gives it no width).",
          _both("delta"), "coverage", "within", target="confidence_level", margin=0.04,
          where=f"design == 'stratified' and {_UNRETRIEVED_RELEVANT} >= 15",
          mean_over=("prevalence", "recall"), pins=("validity", "efficiency")),
    Claim("srs-approximate-intervals-near-nominal-with-many-relevant",
          "Under simple random sampling, with at least 40 relevant documents expected, "
          "averaged over prevalence and recall at each n and level, the Wilson, Jeffreys and "
          "mid-p intervals, two-sided and LOSCI, cover within 1.5 points of the nominal "
          "level, as they do for a binomial proportion (Brown, Cai & DasGupta 2001).",
          _both("wilson", "jeffreys", "mid-p"), "coverage", "within",
          target="confidence_level", margin=0.015,
          where=f"design == 'srs' and {_MANY_RELEVANT}", mean_over=("prevalence", "recall"),
          pins=("validity", "efficiency")),
)

_SHOWN = "recall == 0.8 and confidence_level == 0.95"

FIGURES = (
    Figure("measure_by",
           "Coverage of the recall LOSCIs under stratified sampling, recall 0.8, 95%, against "
           "n, a panel per prevalence: segments-clopper-pearson and segments-hypergeometric "
           "(guaranteed) beside delta. The dashed line is the nominal 95%.",
           where=f"design == 'stratified' and {_SHOWN}",
           options={"measure": "coverage", "x": "n", "panel_by": "prevalence",
                    "reference": 0.95, "log_x": True,
                    "methods": tuple(f"{m}-losci" for m in STRATIFIED_METHODS)}),
    Figure("measure_by",
           "The price of the guarantee: mean width of the same LOSCIs (1 minus the mean lower "
           "bound) against n.",
           where=f"design == 'stratified' and {_SHOWN}",
           options={"measure": "width", "x": "n", "panel_by": "prevalence", "log_x": True,
                    "methods": tuple(f"{m}-losci" for m in STRATIFIED_METHODS)}),
    Figure("measure_by",
           "Coverage of the recall LOSCIs under simple random sampling, recall 0.8, 95%, "
           "against n, a panel per prevalence (an interval is undefined when the sample "
           "holds no relevant document).",
           where=f"design == 'srs' and {_SHOWN}",
           options={"measure": "coverage", "x": "n", "panel_by": "prevalence",
                    "reference": 0.95, "log_x": True,
                    "methods": ("wald-losci", "wilson-losci", "clopper-pearson-losci",
                                "jeffreys-losci")}),
)


def findings(result: StudyResult, summary: Sequence[Mapping[str, Any]]) -> list[str]:
    """The lowest coverage of the delta interval and of Clopper-Pearson's, and where."""
    return [f"Lowest coverage of the {name} interval: {extreme(result, name, 'coverage')}."
            for name in ("delta", "delta-losci", "clopper-pearson", "wald")]


STUDY = Study(
    name="coverage_recall",
    ademp=__doc__,
    version="1",
    grids={
        "quick": Grid({"design": ["srs", "stratified"], "prevalence": [0.05, 0.2, 0.5],
                       "recall": [0.5, 0.8, 0.95], "precision": [0.9], "population": [2000],
                       "n": [40, 120], "confidence_level": [0.90, 0.95, 0.99]},
                      n_replicates=2, task_seconds=0.05),
        "full": Grid({"design": ["srs", "stratified"],
                      "prevalence": [0.02, 0.05, 0.1, 0.2, 0.5],
                      "recall": [0.5, 0.7, 0.8, 0.9, 0.95], "precision": [0.5, 0.9],
                      "population": [2000, 100_000], "n": [20, 50, 100, 200],
                      "confidence_level": [0.90, 0.95, 0.99]},
                     n_replicates=2, task_seconds=0.2),
    },
    truth=truth,
    generate=generate,
    methods=_methods(),
    measures=("coverage", "width", "rejection"),
    enumerate_outcomes=enumerate_outcomes,
    # a stratified sample's outcomes depend on its population; an SRS sample's on n only
    estimates_depend_on=("design", "prevalence", "recall", "precision", "population", "n",
                         "confidence_level"),
    applies=applies,
    parameter_space=(0.0, 1.0),
    claims=CLAIMS,
    estimator_methods={**{f"{name}{suffix}": f"proportion_ci:{name}"
                          for name in SRS_METHODS for suffix in _SIDES},
                       **{f"{name}{suffix}": f"recall_ci:stratified-{name}"
                          for name in STRATIFIED_METHODS for suffix in _SIDES}},
    recommendations=(
        Recommendation(
            "Certify recall from a simple random sample with clopper-pearson on the relevant "
            "documents, and from a stratified sample with the segments' bounds (segments-"
            "hypergeometric when the segments' sizes are known): never below nominal.",
            ("srs-clopper-pearson-never-below-nominal", "segments-never-below-nominal")),
    ),
    figures=FIGURES,
    findings=findings,
)
