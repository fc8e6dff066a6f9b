"""Exact checks of stratified certification plans: the assurance they promise, at the least size.

Aims
    ``estimators.certification_sample_size(..., design="stratified")`` plans how many retrieved
    (``n1``) and unretrieved (``n0``) documents to label so that a certification test of recall
    or F1 with Bonferroni-combined Clopper-Pearson segment bounds (``segments-clopper-pearson``,
    the design's default) passes with probability 0.93 over the posterior of the
    practitioner's labelled sample (Bagdouri et al. 2013, section 7 and Appendix A: Jeffreys
    Beta segments, the retrieved share known). Does each plan deliver that assurance, by a
    computation written apart from the planner; is it the least, no allocation of a few
    documents fewer reaching it; does `estimators.certification_power` report the same
    assurance; and how often does such a plan pass at the population the sample came from?
Data-generating mechanisms
    A population as in `studies.suite.power_calibration_exact`: prevalence ``pi``, a classifier
    with precision = recall = ``F`` (cells ``(pi F, pi (1 - F), pi (1 - F), 1 - pi (2 - F))``,
    so ``pi`` of the documents are retrieved), in a collection of `COLLECTION` documents split
    ``(pi, 1 - pi)`` between the segments (the share the plan needs; far larger than any plan,
    so the segments' laws are binomial). The threshold ``theta = f F``. The practitioner's
    labelled samples are the ``samples`` most likely outcomes of a simple random sample of
    ``r`` documents (``Multinomial(r, cells)``), weighted by their probability renormalised
    among them: the plans a practitioner is most likely to make, each checked exactly.
    Quick grid: ``pi`` 0.3, ``F`` 0.85, recall and F1, ``f`` 0.8, ``r`` 200, the most likely
    sample (2 cells, 2 plans: a plan takes the planner about 3 s). Full grid: ``pi`` 0.3, 0.5
    x ``F`` 0.85 x both measures x ``f`` 0.75, 0.8, the 3 most likely samples (8 cells, 24
    plans). Plans are a few
    hundred documents there; nearer the posterior's limit (``f = 0.9``: 3,500 for F1 and 9,700
    for recall at ``pi`` 0.3) one plan takes the planner 30-40 s and the oracle's search of
    every split far longer, so the grid stops short of them.
Estimands
    The nominal assurance 0.93: each plan's exact assurance is compared with it.
Methods
    One plan per labelled sample (`estimators.certification_sample_size`, cost equal per
    document), read four ways: ``assured`` (the plan's assurance by `oracle_power`, and whether
    it reaches 0.93), ``least`` (how much larger the plan is than the least total some split
    reaches 0.93 with, by `least_total`: every split of every total from `WINDOW` = 10% fewer
    documents up; estimate ``0.93 +`` that excess, and whether it is at most `EXCESS` = 4%),
    ``public-assurance`` (`estimators.certification_power` at the plan) and
    ``stratified-plan`` (the plan's total size, and the exact chance that its test passes at
    the population itself). ``srs-plan`` is the size of the simple random test set the planner
    reports for the same sample (`CertificationPlan.srs_test_size`), for comparison.
    **The oracle** (`oracle_power`) is written here from scipy.stats alone: the segment counts
    are beta-binomial over the posterior (``X1 ~ BetaBinomial(n1, tp + 1/2, fp + 1/2)``, ``X0 ~
    BetaBinomial(n0, fn + 1/2, tn + 1/2)``) or binomial at the population; each segment's
    Clopper-Pearson bound at its Bonferroni tail ``(1 - level) / 2`` comes from scipy's Beta
    quantiles; the bound passes when the unretrieved segment's upper bound is below the cut
    the retrieved segment's lower bound sets (recall ``q r1 (1 - theta) / (theta (1 - q))``,
    F1 ``(2 q r1 / theta - q - q r1) / (1 - q)``, ``q`` the retrieved share: both measures
    rise with ``r1`` and fall with ``r0``), so the power is one sum over ``x1`` of the
    unretrieved count's distribution function at the cut.
Performance measures
    ``correct_share`` (the probability-weighted share of samples whose plan the oracle
    confirms: reaching the assurance for ``assured``, the least for ``least``), ``bias`` (the
    assurance less 0.93; for ``least``, the plan's excess over the least), ``rejection``
    (``stratified-plan``: the pass probability at the population), the planned sizes
    (``mean_size``, ``median_size``). All exact (MCSE 0).

References
----------
Bagdouri, M., Webber, W., Lewis, D. D. & Oard, D. W. (2013). Towards minimizing the annotation
cost of certified text classification. *CIKM* (seed 000), sections 4.3 and 7, Appendix A.
Clopper, C. J. & Pearson, E. S. (1934). *Biometrika* 26, 404-413. Morris, White & Crowther
(2019), *Statistics in Medicine* 38, 2074-2102 (ADEMP).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from estimators import CertificationPlan, certification_power, certification_sample_size
from studies.engine.claims import Claim
from studies.engine.design import Figure, Grid, Params, Recommendation, Sample, Study
from studies.engine.performance import Estimates

__all__ = ["COLLECTION", "EXCESS", "STUDY", "WINDOW", "enumerate_outcomes",
           "least_total", "oracle_power", "plan"]

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

LEVEL, POWER = 0.95, 0.93
# Documents in the collection: the segments' sizes give the retrieved share; no plan nears it.
COLLECTION = 1_000_000
# How far below a plan's total the oracle looks for a smaller allocation reaching the power
# (every split of every total from 10% fewer documents up), and how much larger than the least
# it finds a plan may be: the planner searches the split on a grid of shares, so its plans are
# not always the least (the full grid: up to 3.4%, 6 documents, more).
WINDOW, EXCESS = 0.10, 0.04
# An oracle's assurance this close to the power decides nothing (the planner's exact sums and
# scipy's laws differ by rounding only).
_TIE = 1e-9


def population(params: Params) -> Array:
    """Cell proportions ``(tp, fp, fn, tn)`` of a classifier with precision = recall = F."""
    prevalence, f1 = float(params["prevalence"]), float(params["f1"])
    tp, error = prevalence * f1, prevalence * (1.0 - f1)
    return np.array([tp, error, error, 1.0 - tp - 2.0 * error])


def threshold(params: Params) -> float:
    """``theta = f F``."""
    return float(params["f"]) * float(params["f1"])


def _segments(params: Params) -> tuple[int, int]:
    retrieved = round(float(params["prevalence"]) * COLLECTION)
    return retrieved, COLLECTION - retrieved


def truth(params: Params) -> float:
    """The nominal assurance every plan promises."""
    return POWER


def enumerate_outcomes(cells: Sequence[Params]) -> Sample:
    """The ``samples`` most likely labelled samples ``(tp, fp, fn, tn)`` of each cell, with
    their multinomial probabilities renormalised among them (one cell per group)."""
    params = cells[0]
    r = int(params["r"])
    chance = population(params)
    mode = np.floor((r + 2) * chance).astype(np.int64)  # near the multinomial's mode
    span = np.arange(-3, 4)
    grid = np.stack(np.meshgrid(*(np.clip(m + span, 0, r) for m in mode[:3]),
                                indexing="ij"), axis=-1).reshape(-1, 3)
    grid = np.unique(grid[grid.sum(axis=1) <= r], axis=0)
    counts = np.column_stack([grid, r - grid.sum(axis=1)])
    log_p = stats.multinomial.logpmf(counts, r, chance)
    top = np.argsort(-log_p, kind="stable")[:int(params["samples"])]
    weight = np.exp(log_p[top] - log_p[top].max())
    return Sample(data=counts[top], size=len(top),
                  probability=(weight / weight.sum())[None, :])


def generate(params: Params, n_replicates: int, *, rng: Any = None) -> Sample:
    """Drawn labelled samples (the Monte Carlo path: each plan checked alike)."""
    counts = np.random.default_rng(rng).multinomial(int(params["r"]), population(params),
                                                    size=n_replicates)
    return Sample(data=counts.astype(np.int64), size=n_replicates)


@functools.lru_cache(maxsize=256)
def plan(counts: tuple[int, int, int, int], measure: str, theta: float,
         segments: tuple[int, int]) -> CertificationPlan:
    """The planner's stratified plan for one labelled sample (kept: the methods share it;
    the quick grid takes 4.2 s with it, 15.0 s without, `benchmarks/bench_study_caches.py`)."""
    return certification_sample_size(counts, theta, measure=measure, design="stratified",
                                     segment_sizes=segments, confidence_level=LEVEL,
                                     power=POWER)


# ------------------------------------------------------------------------------ the oracle

@functools.lru_cache(maxsize=4096)
def _lower(n: int) -> Array:
    """Clopper-Pearson lower bounds at tail (1 - LEVEL) / 2 for x = 0..n (0 at x = 0).

    Kept by ``n``, as are `_upper` and `_beta_binomial`: the oracle asks for the same sizes
    about 50 times each, and each cache saves about 2.8 s of the quick grid's 4.2 s
    (`benchmarks/bench_study_caches.py`)."""
    x = np.arange(n + 1, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        low = stats.beta.ppf((1.0 - LEVEL) / 2.0, x, n - x + 1.0)
    low[0] = 0.0
    return low


@functools.lru_cache(maxsize=4096)
def _upper(n: int) -> Array:
    """Clopper-Pearson upper bounds at tail (1 - LEVEL) / 2 for x = 0..n (1 at x = n)."""
    x = np.arange(n + 1, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        high = stats.beta.ppf(1.0 - (1.0 - LEVEL) / 2.0, x + 1.0, n - x)
    high[n] = 1.0
    return high


def _cut(measure: str, share: float, theta: float, r1: Array) -> Array:
    """The unretrieved segment's share below which the bound at ``(r1, r0)`` exceeds
    ``theta``: recall ``q r1 / (q r1 + (1 - q) r0)`` and F1 ``2 q r1 / (q + q r1 + (1 - q)
    r0)`` both fall as ``r0`` grows."""
    if measure == "recall":
        return share * r1 * (1.0 - theta) / (theta * (1.0 - share))
    return (2.0 * share * r1 / theta - share - share * r1) / (1.0 - share)


Law = Callable[[int], Array]


def oracle_power(measure: str, n1: int, n0: int, theta: float, share: float,
                 law1: Law, law0: Law) -> float:
    """The chance that a stratified test of ``(n1, n0)`` documents passes: ``sum_x1 P(X1 =
    x1) P(X0 < k(x1))``, ``k(x1)`` the unretrieved counts whose upper bound is below the cut
    of ``x1``'s lower bound; ``law1(n)``, ``law0(n)`` give each count's probabilities."""
    cut = _cut(measure, share, theta, _lower(n1))
    below = np.searchsorted(_upper(n0), cut, side="left")
    below_cdf = np.concatenate([[0.0], np.cumsum(law0(n0))])
    return float(law1(n1) @ below_cdf[below])


@functools.lru_cache(maxsize=8192)
def _beta_binomial(n: int, a: float, b: float) -> Array:
    pmf: Array = stats.betabinom.pmf(np.arange(n + 1), n, a, b)
    return pmf


def _binomial(n: int, p: float) -> Array:
    pmf: Array = stats.binom.pmf(np.arange(n + 1), n, p)
    return pmf


def _posterior_laws(counts: Sequence[int]) -> tuple[Law, Law]:
    """The segments' beta-binomial laws over the sample's Jeffreys Beta posteriors."""
    tp, fp, fn, tn = (float(c) + 0.5 for c in counts)
    return (functools.partial(_beta_binomial, a=tp, b=fp),
            functools.partial(_beta_binomial, a=fn, b=tn))


def _population_laws(params: Params) -> tuple[Law, Law]:
    """The segments' binomial laws at the population."""
    tp, fp, fn, tn = (float(c) for c in population(params))
    return (functools.partial(_binomial, p=tp / (tp + fp)),
            functools.partial(_binomial, p=fn / (fn + tn)))


def least_total(measure: str, total: int, theta: float, share: float,
                laws: tuple[Law, Law]) -> int:
    """The least total of documents, at least ``ceil((1 - WINDOW) total)``, that some split
    between the segments makes reach the power by `oracle_power` (``total`` itself when
    none of fewer does)."""
    for smaller in range(math.ceil((1.0 - WINDOW) * total), total):
        if any(oracle_power(measure, m1, smaller - m1, theta, share, *laws) >= POWER + _TIE
               for m1 in range(smaller + 1)):
            return smaller
    return total


# ------------------------------------------------------------------------------ methods

def _read(kind: str, data: IntArray, params: Params) -> Estimates:
    """One plan per labelled sample, read as ``kind`` (module docstring, Methods)."""
    measure, theta, segments = str(params["certified"]), threshold(params), _segments(params)
    share = segments[0] / COLLECTION
    rows = [tuple(int(c) for c in row) for row in np.asarray(data)]
    plans = [plan(row, measure, theta, segments) for row in rows]  # type: ignore[arg-type]
    size = np.array([p.test_size if p.reachable else math.nan for p in plans], dtype=float)
    if kind == "srs-plan":
        return Estimates(size=np.array([math.nan if p.srs_test_size is None
                                        else p.srs_test_size for p in plans], dtype=float))
    reached = [p for p in plans if p.reachable]
    if len(reached) < len(plans):
        missing = rows[[p.reachable for p in plans].index(False)]
        raise ValueError(f"labelled sample {missing} gives no plan: {plans[0].reason}")
    allocations = [(int(p.retrieved_size or 0), int(p.unretrieved_size or 0)) for p in plans]
    if kind == "public-assurance":
        return Estimates(estimate=np.array([
            certification_power(measure, allocation, theta, confusion=row, design="stratified",
                                segment_sizes=segments, confidence_level=LEVEL)
            for row, allocation in zip(rows, allocations, strict=True)]))
    if kind == "stratified-plan":
        laws = _population_laws(params)
        return Estimates(size=size, reject=np.array([
            oracle_power(measure, n1, n0, theta, share, *laws) for n1, n0 in allocations]))
    posterior = [_posterior_laws(row) for row in rows]
    if kind == "assured":
        value = np.array([oracle_power(measure, n1, n0, theta, share, *laws)
                          for (n1, n0), laws in zip(allocations, posterior, strict=True)])
        return Estimates(estimate=value, correct=(value >= POWER - _TIE).astype(float),
                         size=size)
    excess = np.array([n1 + n0 for n1, n0 in allocations]) / np.array([
        least_total(measure, n1 + n0, theta, share, laws)
        for (n1, n0), laws in zip(allocations, posterior, strict=True)]) - 1.0
    return Estimates(estimate=POWER + excess, size=size,
                     correct=(excess <= EXCESS + 1e-12).astype(float))


METHODS = {kind: functools.partial(_read, kind)
           for kind in ("assured", "least", "public-assurance", "stratified-plan",
                         "srs-plan")}

CLAIMS = (
    Claim("plans-reach-their-assurance",
          "Every stratified plan checked reaches its assurance: an oracle written apart from "
          "the planner (scipy's beta-binomial laws and Clopper-Pearson bounds) finds the "
          "chance of passing over the sample's posterior at least 93% at the plan.",
          ("assured",), "correct_share", "at_least", target=1.0, resolution=0.01,
          pins=("validity",)),
    Claim("plans-within-4-percent-of-the-least",
          "Every stratified plan checked is at most 4% larger than the least total that some "
          "split between the segments makes reach 93%, by the same oracle trying every split "
          "of every total from 10% fewer documents up. Not always the least: the planner "
          "searches the split on a grid of shares and the power is saw-toothed (the full "
          "grid: up to 3.4%, or 6 documents, more). A plan much larger wastes labels.",
          ("least",), "correct_share", "at_least", target=1.0, resolution=0.01,
          pins=("efficiency",)),
    Claim("certification-power-agrees-with-the-oracle",
          "estimators.certification_power reports the plan's assurance as the oracle computes "
          "it, to 1e-9, at every plan.",
          ("public-assurance",), "bias", "within", target=0.0, margin=1e-9, reference="assured",
          resolution=1e-6),
)

FIGURES = (
    Figure("measure_by",
           "The stratified plan's total size (mean over the most likely labelled samples) "
           "against theta as a fraction of F, a panel per measure, beside the simple random "
           "test set the planner reports for the same samples (prevalence 0.3).",
           where="prevalence == 0.3",
           options={"measure": "mean_size", "x": "f", "panel_by": "certified",
                    "methods": ("stratified-plan", "srs-plan")}),
    Figure("measure_by",
           "The exact chance that a stratified plan's test passes at the population the "
           "sample came from (mean over the most likely samples) against theta as a fraction "
           "of F, a panel per measure, a line per prevalence; the dashed line is the "
           "assurance promised over the posterior, 0.93.",
           options={"measure": "rejection", "x": "f", "panel_by": "certified",
                    "hue": "prevalence", "methods": ("stratified-plan",), "reference": POWER,
                    "y_label": "chance of passing at the population",
                    "title": "planning_stratified: chance of passing at the population "
                             "against f, a panel per certified measure, a line per "
                             "prevalence"}),
)


def findings(result: Any, summary: Sequence[Mapping[str, Any]]) -> list[str]:
    """The plans' size against the SRS plans', and their pass chance at the population."""
    frame = result.to_frame()
    found = []
    sizes = frame[frame["measure"] == "mean_size"].pivot_table(
        index=[c for c in ("prevalence", "f1", "f", "r") if c in frame] + ["certified"],
        columns="method", values="value")
    if {"stratified-plan", "srs-plan"} <= set(sizes.columns) and len(sizes):
        ratio = sizes["stratified-plan"] / sizes["srs-plan"]
        found.append(f"Stratified plans are {ratio.min():.2f}-{ratio.max():.2f} times the size "
                     f"of the simple random test set for the same samples over the "
                     f"{len(ratio)} cells (mean over the most likely samples).")
    passing = frame[(frame["measure"] == "rejection") & (frame["method"] == "stratified-plan")]
    if len(passing):
        worst = passing.loc[passing["value"].idxmin()]
        found.append(f"At the population itself the plans pass {passing['value'].min():.3f}-"
                     f"{passing['value'].max():.3f} of the time over the cells (the lowest "
                     f"for {worst['certified']} at prevalence {worst['prevalence']:g}, F "
                     f"{worst['f1']:g}, f = {worst['f']:g}); 0.93 is promised over the "
                     f"posterior, not at any one population.")
    return found


STUDY = Study(
    name="planning_stratified",
    ademp=__doc__,
    version="1",
    grids={
        "quick": Grid({"prevalence": [0.3], "f1": [0.85], "certified": ["recall", "f1"],
                       "f": [0.8], "r": [200], "samples": [1]}, n_replicates=2,
                      task_seconds=4.0),
        "full": Grid({"prevalence": [0.3, 0.5], "f1": [0.85], "certified": ["recall", "f1"],
                      "f": [0.75, 0.8], "r": [200], "samples": [3]}, n_replicates=2,
                     task_seconds=30.0),
    },
    truth=truth,
    generate=generate,
    methods=METHODS,
    measures=("bias", "rejection", "mean_size", "median_size", "correct_share"),
    enumerate_outcomes=enumerate_outcomes,
    parameter_space=(0.0, 1.0),
    claims=CLAIMS,
    estimator_methods={"assured": "certification_sample_size:stratified",
                       "least": "certification_sample_size:stratified"},
    recommendations=(
        Recommendation(
            "Plan a stratified certification of recall or F1 with "
            "certification_sample_size(design='stratified'): its plans reach the assurance they"
            " promise, at most 4% above the least.",
            ("plans-reach-their-assurance", "plans-within-4-percent-of-the-least")),
    ),
    figures=FIGURES,
    findings=findings,
)
