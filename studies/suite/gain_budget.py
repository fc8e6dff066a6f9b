"""Budget questions from a test sample: which ranker buys the most positives, and how sure is it?

Aims
    Klubička et al. (2018, seed 002) argue that a model chosen to pre-filter items for
    annotation on a budget should be chosen by its cumulative gain, not its F1: the model with
    the best F1 at its threshold need not put the most positives at the top of its ranking
    (section 4, Figure 1, Situations 1-3, Tables 4-5). Their numbers come from one test set of
    2,091 items, without any statement of uncertainty. This study (1) builds three simulated
    rankers that reproduce the paper's situations, (2) asks how well the budget questions can
    be answered from a labelled test sample: the coverage and width of the intervals of
    `estimators.BudgetPositives` (the positives a budget of ``B`` items buys) and
    `estimators.CumulativeGainEstimate` (cumulative gain at decile ``k``), and (3) how often
    the model chosen on the sample (the most estimated positives within the budget) is truly
    the best under that budget, against the model chosen by its test-sample F1.
Data-generating mechanisms
    **Population**: ``N = 20,910`` items of which ``P = 4,140`` are positive (the paper's 2,091
    and 414, ten times over). Each ranker scores every item: negatives ``N(0, 1)``; positives a
    two-part mixture, a share ``w`` in a "sure" part ``N(a, 0.6^2)`` near the top and the rest
    in a "bulk" part ``N(b, s^2)``, both truncated below at a floor ``l`` (no positive scores
    below it: the paper's models find every positive within 2, 4 and 5 deciles, which a normal
    tail cannot do). Parameters ``(w, a, b, s, l)`` (`RANKERS`): M1 (0.80, 3.0, 0.80, 0.15,
    0.70), M2 (0.55, 2.7, 1.35, 0.55, 0.55), M3 (0.15, 2.5, 1.80, 0.50, 0.10). Each ranker
    labels an item positive when its score exceeds 1.0 (the F1 of its threshold). The population
    is fixed, not drawn: a ranker's positives score its mixture's quantiles at ``(i - 1/2) /
    P``, its negatives the normal quantiles at ``(j - 1/2) / (N - P)``, assigned to the items by
    a fixed permutation per ranker (so that, given its class, an item's scores under two rankers
    are unrelated). Every true value is then an exact count. M1 puts 80% of its positives at the
    very top but the rest just below its threshold; M3 separates the bulk of its positives best,
    and so has the best F1, but ranks fewer of them first. **Samples**: a simple random sample
    of ``n`` items without replacement, labelled; its composition over the 128 profiles (label x
    each ranker's membership of its top set x each ranker's prediction) is multivariate
    hypergeometric (drawn for all replicates at once). **Grid**: ``n`` (test sample), ``k`` (the
    budget: the top ``k`` deciles, ``B = floor(k N / 10)`` items), ``model`` (M1, M2, M3, or
    ``selected``: the cells of the selection methods), ``estimand``, ``bootstrap_draws``
    (resamples per bootstrap interval). Quick: ``n`` 100, 1000 x ``k`` 1, 2, 5 (48 cells, 600
    replicates, 500 resamples). Full: ``n`` 100, 200, 500, 1000, 2000 x ``k`` 1, 2, 3, 5 (160
    cells, 10,000 replicates, 1,000 resamples).
Estimands
    ``positives``: ``K``, the positives among the model's top ``B`` items (what the budget
    buys). ``gain``: ``G = K / P``, its cumulative gain at decile ``k``. In ``selected``
    cells: the largest of the three models' values (the best model under the budget).
Methods
    Intervals (95%, two-sided): for ``positives``, ``hypergeometric`` (exact inversion given
    the ``n_B`` sampled items in the top set), ``binomial`` (Clopper-Pearson on the set's
    precision, scaled by ``B``) and ``bootstrap`` (percentile, over the labelled sample); for
    ``gain``, ``binomial`` (Clopper-Pearson on ``x`` of the ``m`` sampled positives) and
    ``bootstrap``. Point estimates: ``post-stratified`` (``B x / n_B``, and for ``gain`` its
    post-stratified ratio) against ``expansion`` (``N x / n``) and ``ratio`` (``x / m``).
    A study estimator must give a number in every replicate: where the post-stratified
    estimate is undefined it falls back on the simpler one (``N x / n``, which is 0 when no
    sampled item is in the set; ``x / m``), and ``x / m`` without a sampled positive on
    ``B / N``, a random ranking's gain. Selection (``selected`` cells):
    ``select-by-estimate`` picks the model with the most estimated positives within the
    budget (post-stratified for ``positives``; ``x / m``, so the most sampled positives in the
    top set, for ``gain``); ``select-by-f1`` the model with the best test-sample F1 at its
    threshold (the support-weighted F of Table 4, `estimators.ConfusionMatrix.weighted_average`);
    ``best-f1`` always the model with the best population F1 (M3), what the paper warns
    against. Ties are broken at random. A selection's estimate is the true value of the model
    it picks.
Performance measures
    Coverage and width of the intervals (Monte Carlo; the summary adds the exact coverage of
    ``hypergeometric`` and ``binomial`` by enumerating ``(n_B, x)`` or ``(m, x)``, and their
    exact width for ``binomial``; `studies.suite.gain_budget_exact` claims that exact coverage
    cell by cell); bias, empirical SE and MSE of the point estimates; for the
    selections, ``correct_share`` (the probability of picking a truly best model) and bias
    (minus the expected shortfall against the best model). MCSEs as in Morris et al. (2019).
    The report's findings (`findings`) read every number from the run and its summary: the
    paper's published numbers beside ours, the intervals' coverage, the estimators' variances
    and the selections' correct shares.

References
----------
Klubička, F., Salton, G. D. & Kelleher, J. D. (2018). Is it worth it? Budget-related evaluation
metrics for model selection (seed 002): sections 2-4, Figure 1, Tables 1-5. Cochran, W. G.
(1977). *Sampling Techniques*, 3rd ed., Wiley: sections 3.2, 5A.9. Clopper, C. J. & Pearson,
E. S. (1934). *Biometrika* 26, 404-413. Efron, B. & Tibshirani, R. J. (1993). *An
Introduction to the Bootstrap*, ch. 13. Morris, T. P., White, I. R. & Crowther, M. J. (2019).
*Statistics in Medicine* 38, 2074-2102.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import special, stats

from estimators import (
    BudgetPositives,
    ConfusionMatrix,
    CumulativeGainEstimate,
    cumulative_gain_estimate,
    gain_table,
)
from studies.engine import StudyResult
from studies.engine.claims import Claim
from studies.engine.design import Figure, Grid, Params, Sample, Study
from studies.engine.findings import estimate, versus_paper
from studies.engine.performance import Estimates

__all__ = ["CLAIMS", "FIGURES", "METHODS", "MODELS", "NEGLIGIBLE", "N_ITEMS", "N_POSITIVES",
           "PAPER", "RANKERS", "STUDY", "Ranker", "Truth", "exact_coverage", "findings",
           "generate", "interval", "joint_law", "outcome_estimator", "population",
           "summary_table", "truth"]

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

N_ITEMS, N_POSITIVES = 20_910, 4_140  # the paper's 2,091 candidates and 414 VNICs, x 10
BINS = 10  # deciles
MODELS: tuple[str, ...] = ("M1", "M2", "M3")
SELECTED = "selected"
LEVEL = 0.95
COST_PER_ITEM = 0.04  # section 4.1
PAPER_ITEMS, PAPER_POSITIVES = 2_091, 414
POPULATION_SEED = 20_180_718  # the permutations of the fixed population (not the run's seed)
SAMPLE_CURVE_SIZE = 500  # the test sample of the gain-curve figure
SAMPLE_CURVE_SEED = 2018


@dataclass(frozen=True)
class Ranker:
    """A simulated ranker: its positives' score distribution and its threshold.

    Positives score from a mixture of ``N(top_mean, top_sd^2)`` (share ``top_share``) and
    ``N(bulk_mean, bulk_sd^2)``, each part truncated below at ``floor``; negatives from
    ``N(0, 1)``. Items scoring above ``threshold`` are labelled positive.
    """

    name: str
    top_share: float
    top_mean: float
    bulk_mean: float
    bulk_sd: float
    floor: float
    top_sd: float = 0.6
    threshold: float = 1.0

    def positive_survival(self, score: Array) -> Array:
        """``P(S > score)`` for a positive's score ``S``."""
        found = np.zeros(np.shape(score))
        for share, mean, sd in ((self.top_share, self.top_mean, self.top_sd),
                                (1.0 - self.top_share, self.bulk_mean, self.bulk_sd)):
            mass = special.ndtr((mean - self.floor) / sd)  # above the floor
            above = special.ndtr((mean - np.maximum(score, self.floor)) / sd)
            found += share * above / mass
        return found

    def positive_quantiles(self, count: int) -> Array:
        """Scores ``s_i`` with ``P(S > s_i) = (i + 1/2) / count``, highest first (bisection)."""
        target = (np.arange(count) + 0.5) / count
        low, high = np.full(count, self.floor), np.full(count, self.top_mean + 12 * self.top_sd)
        for _ in range(100):  # the bracket halves each time: far below float resolution
            middle = (low + high) / 2.0
            above = self.positive_survival(middle) > target
            low, high = np.where(above, middle, low), np.where(above, high, middle)
        return (low + high) / 2.0


RANKERS: Mapping[str, Ranker] = {
    "M1": Ranker("M1", top_share=0.80, top_mean=3.0, bulk_mean=0.80, bulk_sd=0.15, floor=0.70),
    "M2": Ranker("M2", top_share=0.55, top_mean=2.7, bulk_mean=1.35, bulk_sd=0.55, floor=0.55),
    "M3": Ranker("M3", top_share=0.15, top_mean=2.5, bulk_mean=1.80, bulk_sd=0.50, floor=0.10),
}

# The paper's numbers (Klubička et al. 2018): Table 4 (weighted averages on a balanced test
# set), Table 5 (cost of all 414 VNICs, whole deciles), Situation 1 (VNICs within two
# deciles), Situation 3 (VNICs the third and fourth deciles add), Situation 2 (deciles to
# reach every VNIC).
PAPER: Mapping[str, Mapping[str, float]] = {
    "precision": {"M1": 0.82, "M2": 0.83, "M3": 0.83},
    "recall": {"M1": 0.73, "M2": 0.75, "M3": 0.78},
    "f1": {"M1": 0.70, "M2": 0.74, "M3": 0.77},
    "cost of all positives ($)": {"M1": 16.73, "M2": 33.46, "M3": 41.82},
    "deciles to all positives": {"M1": 2, "M2": 4, "M3": 5},
    "positives within 2 deciles (of 414)": {"M1": 414, "M2": 410, "M3": 394},
    "positives the 3rd decile adds (of 414)": {"M1": 0, "M2": 0, "M3": 8},
    "positives the 4th decile adds (of 414)": {"M1": 0, "M2": 4, "M3": 4},
}


# ------------------------------------------------------------------------------ population


class Population(NamedTuple):
    """The fixed population: every ranker's scores and the labels (positives first)."""

    scores: Mapping[str, Array]
    labels: IntArray


@functools.lru_cache(maxsize=1)
def population() -> Population:
    """The study's population (module docstring): exact quantiles, fixed permutations.

    Built once per process: it takes about 25 ms and the quick grid reads it 30 times
    (`benchmarks/bench_study_caches.py`: 0.7 s of the grid's 23 s)."""
    negatives = stats.norm.isf((np.arange(N_ITEMS - N_POSITIVES) + 0.5)
                               / (N_ITEMS - N_POSITIVES))
    scores = {}
    for index, name in enumerate(MODELS):
        gen = np.random.default_rng(np.random.SeedSequence(POPULATION_SEED, spawn_key=(index,)))
        positives = RANKERS[name].positive_quantiles(N_POSITIVES)
        scores[name] = np.concatenate([gen.permutation(positives), gen.permutation(negatives)])
    labels = (np.arange(N_ITEMS) < N_POSITIVES).astype(np.int64)
    return Population(scores, labels)


def set_size(k: int) -> int:
    """``B``: the items in the top ``k`` deciles (the bin edges of `estimators.gain_table`)."""
    return k * N_ITEMS // BINS


def _top_set(model: str, k: int) -> BoolArray:
    """Whether each item is among the model's top ``B`` (continuous scores: no ties)."""
    scores = population().scores[model]
    found = np.zeros(N_ITEMS, dtype=np.bool_)
    found[np.argsort(-scores, kind="stable")[:set_size(k)]] = True
    return found


class Truth(NamedTuple):
    """A model's true budget values at ``k``: positives bought ``K`` and gain ``K / P``."""

    positives: int
    gain: float


def model_truth(model: str, k: int) -> Truth:
    """``K`` and ``G`` of one model at ``k`` (exact counts)."""
    positives = int(population().labels[_top_set(model, k)].sum())
    return Truth(positives, positives / N_POSITIVES)


def _best(k: int, estimand: str) -> float:
    return max(getattr(model_truth(m, k), estimand) for m in MODELS)


def truth(params: Params) -> float:
    """The cell's estimand: one model's ``K`` or ``G``, or the best model's (``selected``)."""
    k, estimand, model = int(params["k"]), str(params["estimand"]), str(params["model"])
    if model == SELECTED:
        return float(_best(k, estimand))
    return float(getattr(model_truth(model, k), estimand))


# ------------------------------------------------------------------------------ samples

# An item's profile: bit i (i = 0, 1, 2) its membership of model i's top set, bit 3 + i model
# i's prediction (score above its threshold), bit 6 its label.
_PROFILES = 128
_CODES = np.arange(_PROFILES)
_LABEL = (_CODES >> 6) & 1 == 1
_IN_TOP = [(_CODES >> i) & 1 == 1 for i in range(3)]
_PREDICTED = [(_CODES >> (3 + i)) & 1 == 1 for i in range(3)]


def _profile_counts(k: int) -> IntArray:
    """Items of the population in each profile, at budget ``k``."""
    pop = population()
    code = pop.labels << 6
    for i, model in enumerate(MODELS):
        code = code | (_top_set(model, k).astype(np.int64) << i)
        code = code | ((pop.scores[model] > RANKERS[model].threshold).astype(np.int64)
                       << (3 + i))
    return np.bincount(code, minlength=_PROFILES).astype(np.int64)


class Draws(NamedTuple):
    """A cell's replicates: profile counts of each sample, tie-break keys, a bootstrap seed."""

    counts: IntArray  # (R, 128)
    tiebreak: Array  # (R, 3)
    seed: IntArray  # (R,); the cell's bootstrap resamples use the first


def generate(params: Params, n_replicates: int, *, rng: Any = None) -> Sample:
    """Simple random samples of ``n`` items: multivariate hypergeometric profile counts."""
    gen = np.random.default_rng(rng)
    counts = gen.multivariate_hypergeometric(_profile_counts(int(params["k"])),
                                             int(params["n"]), size=n_replicates,
                                             method="marginals").astype(np.int64)
    tiebreak = gen.random((n_replicates, 3))
    seed = gen.integers(2**63, size=n_replicates, dtype=np.int64)
    return Sample(data=Draws(counts, tiebreak, seed), size=n_replicates)


class Counts(NamedTuple):
    """One model's sample counts per replicate: the 2 x 2 of set membership and label, and
    the confusion counts of its threshold."""

    x: IntArray  # sampled positives in the top set
    in_set: IntArray  # sampled items in the top set
    positives: IntArray  # sampled positives
    sampled: IntArray  # n
    tp: IntArray
    fp: IntArray
    fn: IntArray
    tn: IntArray


def _counts(draws: Draws, model: str) -> Counts:
    i = MODELS.index(model)
    c = draws.counts

    def total(mask: BoolArray) -> IntArray:
        found: IntArray = c[:, mask].sum(axis=1)
        return found

    label, top, predicted = _LABEL, _IN_TOP[i], _PREDICTED[i]
    return Counts(total(label & top), total(top), total(label), c.sum(axis=1),
                  total(label & predicted), total(~label & predicted), total(label & ~predicted),
                  total(~label & ~predicted))


def _budget(draws: Draws, params: Params) -> BudgetPositives:
    c = _counts(draws, str(params["model"]))
    return BudgetPositives(c.x, c.in_set, set_size=set_size(int(params["k"])),
                           sampled=c.sampled, population_size=N_ITEMS)


def _gain(draws: Draws, params: Params) -> CumulativeGainEstimate:
    c = _counts(draws, str(params["model"]))
    return CumulativeGainEstimate(c.x, c.in_set, set_size=set_size(int(params["k"])),
                                  sampled=c.sampled, sampled_positives=c.positives,
                                  population_size=N_ITEMS)


# ------------------------------------------------------------------------------ methods

BOOTSTRAP_DRAWS = {"quick": 500, "full": 1_000}


def _draws_for(params: Params) -> int:
    """Bootstrap resamples per interval: the cell's ``bootstrap_draws`` (the full grid's
    1,000 for a cell without it)."""
    return int(params.get("bootstrap_draws", BOOTSTRAP_DRAWS["full"]))


def interval(method: str, est: BudgetPositives | CumulativeGainEstimate, params: Params,
             seed: int | None = None) -> Estimates:
    """``est``'s interval by ``method`` at the cell's confidence level (a bootstrap's resamples
    seeded by ``seed``): the intervals of this study and of `studies.suite.gain_budget_exact`."""
    ci = est.confidence_interval(float(params["confidence_level"]), method=method, rng=seed,
                                 draws=_draws_for(params))
    return Estimates(low=np.asarray(ci.low, dtype=np.float64),
                     high=np.asarray(ci.high, dtype=np.float64))


def _interval(method: str, draws: Draws, params: Params) -> Estimates:
    """The estimand's interval from `estimators` (bootstrap seeded by the cell's first seed)."""
    est = _budget(draws, params) if params["estimand"] == "positives" else _gain(draws, params)
    return interval(method, est, params, int(draws.seed[0]))


def _post_stratified(draws: Draws, params: Params) -> Array:
    """Post-stratified estimates, where undefined the simpler one, where that is undefined
    too the value of a random ranking.

    ``positives``: ``B x / n_B``, else (no sampled item in the set) ``N x / n`` (0 then).
    ``gain``: the post-stratified ratio, else ``x / m``, else ``B / N`` (no sampled
    positive: a random ranking's expected gain).
    """
    if params["estimand"] == "positives":
        est = _budget(draws, params)
        return np.where(est.in_set > 0, est.estimate, est.expansion_estimate)
    gain = _gain(draws, params)
    fallback = np.where(gain.sampled_positives > 0, gain.estimate,
                        set_size(int(params["k"])) / N_ITEMS)
    stratified = np.asarray(gain.stratified_estimate)
    return np.where(np.isnan(stratified), fallback, stratified)


def _post_stratified_method(draws: Draws, params: Params) -> Estimates:
    return Estimates(estimate=_post_stratified(draws, params))


def _expansion(draws: Draws, params: Params) -> Estimates:
    """``N x / n``: the positives in the set, ignoring its known size."""
    return Estimates(estimate=np.asarray(_budget(draws, params).expansion_estimate))


def _ratio(draws: Draws, params: Params) -> Estimates:
    """``x / m`` (``B / N`` where no positive is sampled)."""
    gain = _gain(draws, params)
    return Estimates(estimate=np.where(gain.sampled_positives > 0, gain.estimate,
                                       set_size(int(params["k"])) / N_ITEMS))


def weighted_f1(c: Counts) -> Array:
    """Support-weighted F1 of the positive and negative classes (Table 4's measure), per
    replicate; the vectorized `estimators.ConfusionMatrix.weighted_average("f_measure")`."""
    with np.errstate(divide="ignore", invalid="ignore"):
        f_positive = np.where(2 * c.tp + c.fp + c.fn > 0,
                              2 * c.tp / (2 * c.tp + c.fp + c.fn), np.nan)
        f_negative = np.where(2 * c.tn + c.fn + c.fp > 0,
                              2 * c.tn / (2 * c.tn + c.fn + c.fp), np.nan)
    positives, negatives = c.tp + c.fn, c.fp + c.tn
    # a class without support weighs nothing (the estimator's policy)
    found: Array = (np.where(positives > 0, positives * f_positive, 0.0)
                    + np.where(negatives > 0, negatives * f_negative, 0.0)) / (
        positives + negatives)
    return found


def _choose(scores: Array, tiebreak: Array) -> IntArray:
    """The index of the highest score per row, ties broken by ``tiebreak`` (nan: never)."""
    filled = np.nan_to_num(scores, nan=-np.inf)
    top = filled == filled.max(axis=1, keepdims=True)
    chosen: IntArray = np.argmax(np.where(top, tiebreak, -1.0), axis=1)
    return chosen


def _selection(chosen: IntArray, params: Params) -> Estimates:
    """The true value of the chosen model, and whether it is a best one."""
    k, estimand = int(params["k"]), str(params["estimand"])
    values = np.array([getattr(model_truth(m, k), estimand) for m in MODELS], dtype=np.float64)
    picked = values[chosen]
    return Estimates(estimate=picked, correct=(picked == values.max()).astype(np.float64))


def _select_by_estimate(draws: Draws, params: Params) -> Estimates:
    """The model with the most estimated positives within the budget (`_post_stratified`)."""
    scores = np.stack([_post_stratified(draws, {**params, "model": m}) for m in MODELS], axis=1)
    return _selection(_choose(scores, draws.tiebreak), params)


def _select_by_f1(draws: Draws, params: Params) -> Estimates:
    """The model with the best test-sample F1 at its threshold (`weighted_f1`)."""
    scores = np.stack([weighted_f1(_counts(draws, m)) for m in MODELS], axis=1)
    return _selection(_choose(scores, draws.tiebreak), params)


def population_f1() -> dict[str, float]:
    """Each model's weighted F1 at its threshold on the whole population."""
    pop = population()
    found = {}
    for model in MODELS:
        predicted = pop.scores[model] > RANKERS[model].threshold
        found[model] = _confusion(pop.labels, predicted).weighted_average("f_measure")
    return found


def _best_f1(draws: Draws, params: Params) -> Estimates:
    """Always the model with the best population F1 (the paper's M3): no sample needed."""
    best = max(MODELS, key=lambda m: population_f1()[m])
    return _selection(np.full(draws.counts.shape[0], MODELS.index(best)), params)


def _confusion(labels: IntArray, predicted: BoolArray) -> ConfusionMatrix:
    positive = labels == 1
    return ConfusionMatrix.binary(tp=int(np.sum(positive & predicted)),
                                  fp=int(np.sum(~positive & predicted)),
                                  fn=int(np.sum(positive & ~predicted)),
                                  tn=int(np.sum(~positive & ~predicted)))


INTERVAL_METHODS: Mapping[str, tuple[str, ...]] = {
    "positives": ("hypergeometric", "binomial", "bootstrap"),
    "gain": ("binomial", "bootstrap")}
POINT_METHODS: Mapping[str, tuple[str, ...]] = {
    "positives": ("post-stratified", "expansion"), "gain": ("post-stratified", "ratio")}
SELECTION_METHODS: tuple[str, ...] = ("select-by-estimate", "select-by-f1", "best-f1")

METHODS: Mapping[str, Any] = {
    **{name: functools.partial(_interval, name) for name in ("hypergeometric", "binomial",
                                                              "bootstrap")},
    "post-stratified": _post_stratified_method,
    "expansion": _expansion,
    "ratio": _ratio,
    "select-by-estimate": _select_by_estimate,
    "select-by-f1": _select_by_f1,
    "best-f1": _best_f1,
}


def applies(method: str, params: Params) -> bool:
    """Selections in ``selected`` cells; intervals and point estimates of the estimand in a
    model's cells."""
    if params["model"] == SELECTED:
        return method in SELECTION_METHODS
    estimand = str(params["estimand"])
    return method in INTERVAL_METHODS[estimand] or method in POINT_METHODS[estimand]


# ------------------------------------------------------------------------------ exact path

# The exact path leaves out the outcomes of probability at most this (`joint_law`).
NEGLIGIBLE = 1e-15


def _log_hypergeom(x: Array, total: float, marked: Array, drawn: Array) -> Array:
    """``log P(X = x)``, ``X ~ Hypergeometric(total, marked, drawn)`` (-inf off the support)."""
    def log_choose(a: Array, b: Array) -> Array:
        found: Array = special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(a - b
                                                                                       + 1)
        return found
    inside = (x >= 0) & (x <= marked) & (drawn - x >= 0) & (drawn - x <= total - marked)
    safe_x = np.where(inside, x, 0.0)
    value = (log_choose(marked, safe_x) + log_choose(total - marked, drawn - safe_x)
             - log_choose(np.full(np.shape(drawn), total), drawn))
    return np.where(inside, value, -np.inf)


def joint_law(total: int, marked_outer: int, n: int, inner_size: int, inner_marked: int
              ) -> tuple[Array, Array, Array, Array]:
    """The law of ``(d, x)``: ``d ~ Hyp(total, marked_outer, n)``, ``x | d ~ Hyp(inner_size,
    inner_marked, d)``: the values ``d`` (those of probability above `NEGLIGIBLE`), ``x`` (0
    to the largest ``d``), ``P(d)`` and the matrix ``P(x | d)`` (rows ``d``)."""
    d = np.arange(n + 1, dtype=np.float64)
    outer = np.exp(_log_hypergeom(d, total, np.full(d.shape, float(marked_outer)),
                                  np.full(d.shape, float(n))))
    keep = outer > NEGLIGIBLE
    d = d[keep]
    x = np.arange(int(d.max()) + 1, dtype=np.float64)
    dd, xx = np.meshgrid(d, x, indexing="ij")
    inner = np.exp(_log_hypergeom(xx, inner_size, np.full(dd.shape, float(inner_marked)), dd))
    return d, x, outer[keep], inner


def outcome_estimator(estimand: str, n: int, k: int, drawn: IntArray, hits: IntArray
                      ) -> BudgetPositives | CumulativeGainEstimate:
    """The estimator at the exact path's outcomes: `BudgetPositives` at ``(n_B, x)`` for the
    ``positives``, `CumulativeGainEstimate` at ``(m, x)`` for the ``gain``, with ``n_B`` set
    to ``x`` (its binomial interval reads ``x`` and ``m`` alone: the split of the rest does
    not enter)."""
    size = set_size(k)
    if estimand == "positives":
        return BudgetPositives(hits, drawn, set_size=size, sampled=n, population_size=N_ITEMS)
    return CumulativeGainEstimate(hits, hits, set_size=size, sampled=n, sampled_positives=drawn,
                                  population_size=N_ITEMS)


def exact_coverage(estimand: str, model: str, n: int, k: int, method: str,
                   confidence_level: float = LEVEL) -> tuple[float, float]:
    """Exact coverage and mean width of a deterministic interval in a cell.

    ``positives``: ``n_B ~ Hypergeometric(N, B, n)`` and ``x | n_B ~ Hypergeometric(B, K,
    n_B)``. ``hypergeometric`` holds ``K`` exactly when both exact one-sided tests at ``x``
    reach the tail (the set of ``K`` it inverts; the tests check this against the interval
    itself), so its coverage is a sum of the law's cumulative sums; its width is not
    computed (nan). ``binomial``: the interval itself at every ``(n_B, x)`` of probability
    above `NEGLIGIBLE`. ``gain``: ``m ~ Hypergeometric(N, P, n)`` and ``x | m ~ Hypergeometric(P,
    K, m)``, ``binomial`` at every ``(m, x)``. The pairs left out weigh less than 1e-9.
    """
    size, marked = set_size(k), model_truth(model, k).positives
    tail = (1.0 - confidence_level) / 2.0
    outer_marked, inner_size = (size, size) if estimand == "positives" else (N_POSITIVES,
                                                                            N_POSITIVES)
    d, x, outer, inner = joint_law(N_ITEMS, outer_marked, n, inner_size, marked)
    if method == "hypergeometric":
        at_most = np.cumsum(inner, axis=1)
        at_least = np.cumsum(inner[:, ::-1], axis=1)[:, ::-1]
        reach = tail * (1.0 - 1e-10)  # the interval's own tie rule
        inside = (at_least >= reach) & (at_most >= reach)
        return float(np.sum(outer * np.sum(inner * inside, axis=1))), math.nan
    probability = outer[:, None] * inner
    rows, columns = np.nonzero(probability > NEGLIGIBLE)
    drawn, hits = d[rows].astype(np.int64), x[columns].astype(np.int64)
    ci = outcome_estimator(estimand, n, k, drawn, hits).confidence_interval(
        confidence_level, method=method)
    target = float(marked) if estimand == "positives" else marked / N_POSITIVES
    low, high = np.asarray(ci.low), np.asarray(ci.high)
    weight = probability[rows, columns]
    covered = (low <= target) & (target <= high)
    return float(np.sum(weight * covered)), float(np.sum(weight * (high - low)))


# ------------------------------------------------------------------------------ summary


def _row(table: str, **fields: Any) -> dict[str, Any]:
    """A summary row: every row has the same keys (nan or '' where they do not apply)."""
    row: dict[str, Any] = {"table": table, "model": "", "quantity": "", "estimand": "",
                           "method": "", "curve": "", "path": "", "n": math.nan,
                           "k": math.nan, "ours": math.nan, "paper": math.nan,
                           "low": math.nan, "high": math.nan, "mcse": math.nan}
    row.update(fields)
    return row


def population_tables() -> dict[str, dict[str, float]]:
    """The paper's quantities on the simulated population, by quantity and model.

    Table 4 on a balanced test set (the population's positives and as many negatives, at
    the normal quantiles), weighted over the two classes as the paper; the positive class's
    F1 and the weighted F1 on the population; Table 5 and Situations 1-3 from
    `estimators.gain_table`, in positives of 414 (the paper's list) and dollars of a
    2,091-item list at $0.04 an item (ours: the same deciles of our list, scaled by 1/10).
    """
    pop = population()
    balanced_negatives = stats.norm.isf((np.arange(N_POSITIVES) + 0.5) / N_POSITIVES)
    scale = PAPER_POSITIVES / N_POSITIVES
    found: dict[str, dict[str, float]] = {}

    def put(quantity: str, model: str, value: float) -> None:
        found.setdefault(quantity, {})[model] = value

    for model in MODELS:
        ranker, scores = RANKERS[model], pop.scores[model]
        positive_scores = scores[:N_POSITIVES]
        tp = int(np.sum(positive_scores > ranker.threshold))
        fp = int(np.sum(balanced_negatives > ranker.threshold))
        balanced = ConfusionMatrix.binary(tp=tp, fp=fp, fn=N_POSITIVES - tp,
                                          tn=N_POSITIVES - fp)
        put("precision", model, balanced.weighted_average("precision"))
        put("recall", model, balanced.weighted_average("recall"))
        put("f1", model, balanced.weighted_average("f_measure"))
        whole = _confusion(pop.labels, scores > ranker.threshold)
        put("f1 of the positive class (population)", model, whole.f1())
        put("weighted f1 (population)", model, whole.weighted_average("f_measure"))
        table = gain_table(scores, pop.labels, bins=BINS)
        deciles = table.fraction_to_reach(1.0, whole_bins=True) * BINS
        put("deciles to all positives", model, deciles)
        put("cost of all positives ($)", model,
            table.cost_to_reach(1.0, cost_per_item=COST_PER_ITEM, whole_bins=True)
            * PAPER_ITEMS / N_ITEMS)
        within = table.cumulative_positives * scale
        put("positives within 1 decile (of 414)", model, float(within[0]))
        put("positives within 2 deciles (of 414)", model, float(within[1]))
        put("positives the 3rd decile adds (of 414)", model, float(within[2] - within[1]))
        put("positives the 4th decile adds (of 414)", model, float(within[3] - within[2]))
    return found


_TABLES = {"table 4": ("precision", "recall", "f1", "f1 of the positive class (population)",
                       "weighted f1 (population)"),
           "table 5": ("deciles to all positives", "cost of all positives ($)"),
           "situation 1": ("positives within 1 decile (of 414)",
                           "positives within 2 deciles (of 414)"),
           "situation 3": ("positives the 3rd decile adds (of 414)",
                           "positives the 4th decile adds (of 414)")}


def _paper_rows() -> list[dict[str, Any]]:
    tables = population_tables()
    return [_row(table, model=model, quantity=quantity, ours=tables[quantity][model],
                 paper=PAPER.get(quantity, {}).get(model, math.nan))
            for table, quantities in _TABLES.items() for quantity in quantities
            for model in MODELS]


def _curve_rows() -> tuple[dict[str, Any], ...]:
    """Figure 1 ours: each model's true cumulative gain by decile, and its estimate with a 95%
    Clopper-Pearson interval from one test sample of `SAMPLE_CURVE_SIZE` items (fixed seed),
    through `estimators.cumulative_gain_estimate`."""
    pop = population()
    gen = np.random.default_rng(SAMPLE_CURVE_SEED)
    sample = np.sort(gen.choice(N_ITEMS, SAMPLE_CURVE_SIZE, replace=False))
    labels = pop.labels[sample]
    rows = []
    for model in MODELS:
        scores = pop.scores[model]
        true = gain_table(scores, pop.labels, bins=BINS).cumulative_gain
        for k in range(1, BINS + 1):
            rows.append(_row("gain curve", model=model, curve="population", k=k,
                             ours=float(true[k - 1])))
            gain = cumulative_gain_estimate(scores, sample, labels, top_bins=k, bins=BINS)
            low, high = gain.confidence_interval(LEVEL, method="binomial")
            rows.append(_row("gain curve", model=model, curve=f"test sample (n = "
                             f"{SAMPLE_CURVE_SIZE})", k=k, ours=float(gain.estimate),
                             low=float(low), high=float(high), method="binomial"))
    return tuple(rows)


def _z95() -> float:
    return float(stats.norm.isf((1.0 - LEVEL) / 2.0))


def _run_rows(result: StudyResult) -> list[dict[str, Any]]:
    """Coverage (exact where the interval is deterministic), selection and estimator rows of
    the run's cells."""
    rows = []
    z = _z95()
    for cell in result.expanded().cells:
        p = cell.params
        n, k, model, estimand = int(p["n"]), int(p["k"]), str(p["model"]), str(p["estimand"])
        level = float(p["confidence_level"])
        where = {"n": n, "k": k, "estimand": estimand}
        if model == SELECTED:
            for method, perf in cell.performance.items():
                share = perf.measures.get("correct_share")
                shortfall = perf.measures.get("bias")
                if share is not None:
                    rows.append(_row("selection", quantity="correct share", method=method,
                                     path="monte-carlo", ours=share.value, mcse=share.mcse,
                                     low=share.value - z * share.mcse,
                                     high=share.value + z * share.mcse, **where))
                if shortfall is not None:
                    rows.append(_row("selection", quantity="shortfall", method=method,
                                     path="monte-carlo", ours=-shortfall.value,
                                     mcse=shortfall.mcse, **where))
            continue
        for method in INTERVAL_METHODS[estimand]:
            perf = cell.performance.get(method)
            if perf is None:
                continue
            coverage = perf.measures["coverage"]
            rows.append(_row("coverage", model=model, quantity="coverage", method=method,
                             path="monte-carlo", ours=coverage.value, mcse=coverage.mcse,
                             low=coverage.value - z * coverage.mcse,
                             high=coverage.value + z * coverage.mcse, **where))
            if method != "bootstrap":
                exact, width = exact_coverage(estimand, model, n, k, method, level)
                rows.append(_row("coverage", model=model, quantity="coverage", method=method,
                                 path="exact", ours=exact, low=exact, high=exact, mcse=0.0,
                                 **where))
                if not math.isnan(width):
                    rows.append(_row("width", model=model, quantity="width", method=method,
                                     path="exact", ours=width, mcse=0.0, **where))
            width_mc = perf.measures["width"]
            rows.append(_row("width", model=model, quantity="width", method=method,
                             path="monte-carlo", ours=width_mc.value, mcse=width_mc.mcse,
                             **where))
        simple, stratified = (cell.performance.get(m) for m in (
            POINT_METHODS[estimand][1], "post-stratified"))
        if simple is not None and stratified is not None:
            ratio = (stratified.measures["empirical_se"].value
                     / simple.measures["empirical_se"].value) ** 2 \
                if simple.measures["empirical_se"].value > 0 else math.nan
            rows.append(_row("estimators", model=model, quantity="variance ratio",
                             method=f"post-stratified / {POINT_METHODS[estimand][1]}",
                             path="monte-carlo", ours=ratio, **where))
    return rows


def summary_table(result: StudyResult) -> list[dict[str, Any]]:
    """The paper's numbers beside ours, and the run's coverage, width, selection and estimators.

    Long rows (`_row`): ``table`` is ``table 4``, ``table 5``, ``situation 1``, ``situation 3``
    (`population_tables`, ``paper`` beside ``ours``), ``gain curve`` (`_curve_rows`),
    ``coverage`` (per cell and interval method: Monte Carlo, ``low``/``high`` +-1.96 MCSE,
    and ``path == 'exact'`` for the deterministic ones), ``width``, ``selection`` (the
    correct share and the shortfall, in the estimand's units, of each selection method) and
    ``estimators`` (the post-stratified estimate's variance over the simpler one's).
    """
    return [*_paper_rows(), *_curve_rows(), *_run_rows(result)]


def _models(values: Mapping[str, str]) -> str:
    return ", ".join(f"{model} {values[model]}" for model in MODELS)


def _paper_findings(tables: Mapping[str, Mapping[str, float]]) -> list[str]:
    """The paper's numbers beside ours (exact: our population is fixed)."""
    def beside(quantity: str, digits: int = 3) -> str:
        return _models({m: versus_paper(tables[quantity][m], 0.0, PAPER[quantity][m],
                                        digits=digits) for m in MODELS})

    def order(quantity: str) -> str:
        ours, paper = (sorted(MODELS, key=values.__getitem__)
                       for values in (tables[quantity], PAPER[quantity]))
        return "the same as the paper's" if ours == paper else \
            f"{' < '.join(ours)} against the paper's {' < '.join(paper)}"

    def below(source: Mapping[str, Mapping[str, float]]) -> list[str]:
        return [m for m in MODELS if source["f1"][m] < min(source["precision"][m],
                                                           source["recall"][m])]

    f1, precision, recall = (tables[q] for q in ("f1", "precision", "recall"))
    ours, paper = below(tables), below(PAPER)
    gap = max(min(precision[m], recall[m]) - f1[m] for m in MODELS)
    relation = (f"below both weighted precision and recall for {', '.join(ours) or 'no model'} "
                f"(by at most {gap:.2g}), the paper's for {', '.join(paper) or 'no model'}")
    best = {k: max(MODELS, key=lambda m: model_truth(m, k).positives) for k in (1, 2, 3)}
    return [
        f"**Table 4** (weighted F1 on a balanced test set), ours against the paper's: "
        f"{beside('f1')}; our order of the models, {order('f1')}. Our weighted F1 lies "
        f"{relation}.",
        f"**Situation 1**: positives within two deciles (of 414): "
        f"{beside('positives within 2 deciles (of 414)', 1)}. The model buying the most "
        f"positives is {best[1]} with one decile, {best[2]} with two and {best[3]} with "
        f"three; the best-F1 model is {max(MODELS, key=f1.__getitem__)}.",
        f"**Table 5**: deciles to every positive {beside('deciles to all positives', 0)}, "
        f"and their cost ($) {beside('cost of all positives ($)', 2)}; our order of the "
        f"models, {order('deciles to all positives')}.",
        f"**Situation 3**: positives the third decile adds (of 414): "
        f"{beside('positives the 3rd decile adds (of 414)', 1)}.",
    ]


def _place(row: Mapping[str, Any]) -> str:
    model = f", {row['model']}" if row["model"] else ""
    return f"n = {row['n']:g}, k = {row['k']:g}{model}"


def _extremes(rows: pd.DataFrame, *, percent: bool = False) -> str:
    """The lowest and highest value of summary rows, with their MCSE and cell."""
    low, high = (rows.loc[index] for index in (rows["ours"].idxmin(), rows["ours"].idxmax()))
    shown = [estimate(row["ours"], row["mcse"], percent=percent, digits=1 if percent else 3)
             for row in (low, high)]
    return f"{shown[0]} at lowest ({_place(low)}), {shown[1]} at highest ({_place(high)})"


def _coverage_findings(rows: pd.DataFrame) -> list[str]:
    coverage = rows[rows["table"] == "coverage"]
    exact = coverage[coverage["path"] == "exact"]
    parts = [f"{method} for the {estimand} {_extremes(group)}, {group['ours'].mean():.3f} on "
             f"average" for (estimand, method), group in exact.groupby(["estimand", "method"],
                                                                      sort=False)]
    sentences = [f"**Exact coverage** of the deterministic intervals over the run's cells: "
                 f"{'; '.join(parts)}."] if parts else []
    bootstrap = coverage[coverage["method"] == "bootstrap"]
    sentences += [f"The **percentile bootstrap** for the {estimand} covers {_extremes(group)}."
                  for estimand, group in bootstrap.groupby("estimand", sort=False)]
    return sentences


def _estimator_findings(rows: pd.DataFrame) -> list[str]:
    ratios = rows[rows["table"] == "estimators"]
    parts = []
    for method, group in ratios.groupby("method", sort=False):
        values = group["ours"].dropna()
        if len(values):
            parts.append(f"{method} {values.min():.2f} to {values.max():.2f} (median "
                         f"{values.median():.2f})")
    return [f"**Post-stratifying** on top-set membership: the variance of the post-stratified "
            f"estimate over the simpler one's, across the run's cells: {'; '.join(parts)}."
            ] if parts else []


def _selection_findings(rows: pd.DataFrame) -> list[str]:
    selection = rows[(rows["table"] == "selection") & (rows["k"] <= 2)]
    shares = selection[(selection["quantity"] == "correct share")
                       & (selection["estimand"] == "positives")]
    chosen_by = {"select-by-estimate": "the estimate", "select-by-f1": "test-sample F1"}
    sentences = [f"**Choosing by {chosen_by[method]}** under one or two deciles, the share of "
                 f"samples in which it picks a truly best model is "
                 f"{_extremes(group, percent=True)}."
                 for method, group in shares.groupby("method", sort=False) if method in chosen_by]
    shortfall = selection[(selection["quantity"] == "shortfall") & (selection["estimand"] == "gain")
                          & (selection["method"] == "best-f1")]
    if len(shortfall):
        by_k = shortfall.groupby("k")["ours"].mean()
        sentences.append("The best-F1 model finds " + " and ".join(
            f"{100 * v:.1f} points" for v in by_k) + " less of the positives than the best "
            "one with " + " and ".join(f"{k:g}" for k in by_k.index) + " deciles.")
    return sentences


def findings(result: StudyResult, summary: Sequence[Mapping[str, Any]]) -> list[str]:
    """The run's findings: the paper's numbers beside ours, the intervals' coverage, the
    estimators' variances and the selections, each number read from the run or its summary
    (`summary_table`)."""
    rows = pd.DataFrame.from_records(summary)
    return [*_paper_findings(population_tables()), *_coverage_findings(rows),
            *_estimator_findings(rows), *_selection_findings(rows)]


# ------------------------------------------------------------------------------ the study

_POSITIVES_CELLS = "estimand == 'positives' and model != 'selected'"
# The engine's mean of a constant estimate (x / m = 1 where every positive is in the top set)
# is off by a rounding (2e-16, MCSE 2e-18): a margin of 1e-9 absorbs it.
_ROUNDING = 1e-9
_MODEL_CELLS = "model != 'selected'"
_GAIN_CELLS = "estimand == 'gain' and model != 'selected'"
_SMALL_BUDGET = "model == 'selected' and k <= 2"

# The quick grid decides its claims in rounds, raising the cells a claim still needs up to 8
# times its 600 replicates. The coverage of the hypergeometric and binomial intervals in each
# model's cell is not claimed here: on the quick grid Monte Carlo would need 4.5 to 9.4 times
# the top level's replicates in every cell. `studies.suite.gain_budget_exact` computes it
# exactly in the same cells and claims it on every grid (`hypergeometric-covers`,
# `binomial-covers`); the means over models and budgets
# (`guaranteed-intervals-cover-on-average`) are decided here on every grid.

CLAIMS = (
    Claim("guaranteed-intervals-cover-on-average",
          "Averaged over the models and budgets at each test-sample size, the hypergeometric "
          "and binomial intervals cover at least 95%, for the positives bought and for the "
          "cumulative gain: each cell's coverage is at least nominal (exactly: gain_budget_exact's "
          "hypergeometric-covers and binomial-covers), so their mean is too.",
          ("hypergeometric", "binomial"), "coverage", "at_least", target="confidence_level",
          where=_MODEL_CELLS, mean_over=("k", "model"), pins=("validity",)),
    Claim("bootstrap-undercovers-the-top-decile",
          "The percentile bootstrap for the positives of the top decile (k = 1), where every "
          "model's precision is high, covers at least 10 points below 95% on average over "
          "the three models at n <= 500: a sample whose top-set items are all positive "
          "resamples to a single value.",
          ("bootstrap",), "coverage", "at_most", target="confidence_level", margin=-0.10,
          where=f"{_POSITIVES_CELLS} and k == 1 and n <= 500", mean_over=("model",)),
    Claim("hypergeometric-no-wider-than-binomial",
          "Averaged over the models and budgets at each test-sample size, the exact interval "
          "for the positives bought is no wider than the binomial one (Clopper-Pearson on the "
          "set's sampled items, scaled by B): it uses the set's size, which the binomial "
          "ignores (full grid: narrower in every cell, by 0.25% at least).",
          ("hypergeometric",), "width", "at_most", target=0.0, reference="binomial",
          relative=True, resolution=0.05, where=_POSITIVES_CELLS, mean_over=("k", "model"),
          pins=("efficiency",)),
    Claim("guaranteed-intervals-not-needlessly-conservative",
          "Averaged over the models and budgets at each test-sample size, the hypergeometric "
          "and binomial intervals cover at most 99%, for the positives bought and for the "
          "cumulative gain (full grid: 98.1% at most): their guarantee costs no more than "
          "missing a fifth as often as nominal.",
          ("hypergeometric", "binomial"), "coverage", "at_most", target=0.99,
          where=_MODEL_CELLS, mean_over=("k", "model"), pins=("efficiency",)),
    Claim("bootstrap-near-nominal-where-its-sets-are-mixed",
          "Away from the sets where its resamples degenerate (the top decile's positives, "
          "nearly all positive; a cumulative gain over half the items, nearly all found), the "
          "percentile bootstrap covers within 3 points of 95% on average over the models at "
          "each n and k: for the positives bought at k >= 2 and for the cumulative gain at "
          "k <= 2 (full grid: 92.8% at the least, 96.0% at the most).",
          ("bootstrap",), "coverage", "within", target="confidence_level", margin=0.03,
          resolution=0.05, mean_over=("model",),
          where="model != 'selected' and ((estimand == 'positives' and k >= 2) or "
                "(estimand == 'gain' and k <= 2))", pins=("validity", "efficiency")),
    Claim("gain-bootstrap-no-wider-than-binomial",
          "The percentile bootstrap interval for the cumulative gain is at most 5% wider than "
          "the Clopper-Pearson one (x of the m sampled positives) in every cell (the quick "
          "grid: 3-100% narrower): resampling the sampled positives adds no width of its own, "
          "so a bootstrap that also resamples the denominator is seen.",
          ("bootstrap",), "width", "at_most", target=0.05, reference="binomial",
          relative=True, resolution=0.15, where=_GAIN_CELLS, pins=("efficiency",)),
    Claim("positives-estimates-unbiased",
          "The post-stratified (B x / n_B) and expansion (N x / n) estimates of the positives "
          "bought are unbiased (the fall-back where no sampled item is in the set weighs less "
          "than the Monte Carlo error).",
          ("post-stratified", "expansion"), "bias", "within", target=0.0, margin=_ROUNDING,
          resolution=0.2, resolution_unit="empirical_se", where=_POSITIVES_CELLS),
    Claim("gain-ratio-unbiased",
          "x / m, the share of the sampled positives in the top set, is unbiased for the "
          "cumulative gain (given m, x is hypergeometric with mean m G).",
          ("ratio",), "bias", "within", target=0.0, margin=_ROUNDING, resolution=0.02,
          where="estimand == 'gain' and model != 'selected'"),
    Claim("best-f1-model-falls-short-under-a-small-budget",
          "The model with the best F1 at its threshold (M3) is never the best under a budget "
          "of one or two deciles, and finds at least 4 points less of the positives than the "
          "best one (Situation 1; the same in every cell: no sample involved).",
          ("best-f1",), "bias", "at_most", target=0.0, margin=-0.04, resolution=0.01,
          where=f"{_SMALL_BUDGET} and estimand == 'gain'"),
    Claim("f1-selection-rarely-right-under-a-small-budget",
          "Choosing the model by its test-sample F1 picks the best model under a budget of one "
          "or two deciles in at most 20% of samples at every n (less than a random pick).",
          ("select-by-f1",), "correct_share", "at_most", target=0.2, where=_SMALL_BUDGET,
          effect=True),
    Claim("estimate-selection-right-under-a-small-budget",
          "Choosing it by the estimated positives within the budget picks the best one in at "
          "least 45% of samples at every n, with one or two deciles.",
          ("select-by-estimate",), "correct_share", "at_least", target=0.45,
          where=_SMALL_BUDGET, effect=True),
    Claim("estimate-selection-nearly-always-right-with-1000-labels",
          "From n = 1000 it picks the best model in at least 80% of samples on average over "
          "the budgets of one and two deciles.",
          ("select-by-estimate",), "correct_share", "at_least", target=0.8,
          where=f"{_SMALL_BUDGET} and n >= 1000", mean_over=("k",), effect=True),
)

# One coverage row per cell and method: the exact one where there is one.
_SHOWN = "table == 'coverage' and (path == 'exact' or method == 'bootstrap')"
_LABELS = {"ours": "coverage", "n": "labelled test sample n",
           "band": "Monte Carlo, +-1.96 MCSE", "method": "interval"}

FIGURES = (
    Figure("summary_lines",
           "Coverage of the 95% intervals for the positives the top decile buys, against the "
           "test sample's size, a panel per model: exact for the hypergeometric and binomial "
           "intervals, Monte Carlo with its +-1.96 MCSE band for the percentile bootstrap. "
           "The dashed line is the nominal 95%.",
           options={"query": f"{_SHOWN} and estimand == 'positives' and k == 1",
                    "x": "n", "y": "ours", "hue": "method", "panel_by": "model",
                    "band": ("low", "high"), "reference": LEVEL, "labels": _LABELS,
                    "bounds": (0.0, 1.0),
                    "log_x": True,
                    "title": "gain_budget: coverage of the positives within one decile"}),
    Figure("summary_lines",
           "The same for the cumulative gain at five deciles: the binomial interval (exact) "
           "and the percentile bootstrap (Monte Carlo), a panel per model.",
           options={"query": f"{_SHOWN} and estimand == 'gain' and k == 5",
                    "x": "n", "y": "ours", "hue": "method", "panel_by": "model",
                    "band": ("low", "high"), "reference": LEVEL, "labels": _LABELS,
                    "bounds": (0.0, 1.0),
                    "log_x": True,
                    "title": "gain_budget: coverage of the cumulative gain at five deciles"}),
    Figure("summary_lines",
           f"Figure 1 ours: the three models' cumulative gain by decile in the population "
           f"(left), and as estimated from one test sample of {SAMPLE_CURVE_SIZE} labelled "
           f"items with its 95% binomial interval (right).",
           options={"query": "table == 'gain curve'", "x": "k", "y": "ours", "hue": "model",
                    "panel_by": "curve", "band": ("low", "high"),
                    "labels": {"ours": "cumulative gain", "k": "deciles annotated",
                               "band": "95% binomial interval",
                               "population": "population (true)",
                               f"test sample (n = {SAMPLE_CURVE_SIZE})":
                                   f"one test sample of {SAMPLE_CURVE_SIZE} (estimated)"},
                    "log_x": False, "bounds": (0.0, 1.0),
                    "title": "gain_budget: cumulative gain chart, population and test sample"}),
    Figure("measure_by",
           "How often the chosen model is truly the best under the budget, against the test "
           "sample's size, a panel per budget (deciles): chosen by the estimated positives "
           "within the budget, by test-sample F1, or always the model with the best "
           "population F1.",
           where="model == 'selected' and estimand == 'positives'",
           options={"measure": "correct_share", "x": "n", "panel_by": "k",
                    "methods": SELECTION_METHODS, "log_x": True}),
    Figure("measure_by",
           "Mean width of the intervals for the positives M2 buys, against the test sample's "
           "size, a panel per budget (deciles).",
           where="model == 'M2' and estimand == 'positives'",
           options={"measure": "width", "x": "n", "panel_by": "k",
                    "methods": INTERVAL_METHODS["positives"], "log_x": True}),
    Figure("summary_bars",
           "Table 4 ours beside the paper's: weighted precision, recall and F1 on a balanced "
           "test set, by model.",
           options={"query": "table == 'table 4' and quantity in ['precision', 'recall', 'f1']",
                    "x": "model", "bars": ("ours", "paper"), "panel_by": "quantity",
                    "title": "gain_budget: Table 4, ours beside the paper's"}),
)

_QUICK = {"n": [100, 1000], "k": [1, 2, 5], "model": [*MODELS, SELECTED],
          "estimand": ["positives", "gain"], "confidence_level": [LEVEL],
          "bootstrap_draws": [BOOTSTRAP_DRAWS["quick"]]}
_FULL = {"n": [100, 200, 500, 1000, 2000], "k": [1, 2, 3, 5], "model": [*MODELS, SELECTED],
         "estimand": ["positives", "gain"], "confidence_level": [LEVEL],
         "bootstrap_draws": [BOOTSTRAP_DRAWS["full"]]}

STUDY = Study(
    name="gain_budget",
    ademp=__doc__,
    version="1",
    grids={"quick": Grid(_QUICK, n_replicates=600, task_seconds=0.3, rounds=4),
           "full": Grid(_FULL, n_replicates=10_000, task_seconds=3.3)},
    truth=truth,
    generate=generate,
    methods=METHODS,
    measures=("bias", "empirical_se", "mse", "coverage", "width", "correct_share"),
    applies=applies,
    claims=CLAIMS,
    estimator_methods={
        "hypergeometric": "budget_positives:hypergeometric",
        **{m: ((_POSITIVES_CELLS, f"budget_positives:{m}"),
               (_GAIN_CELLS, f"cumulative_gain_estimate:{m}"))
           for m in ("binomial", "bootstrap")}},
    figures=FIGURES,
    summary=summary_table,
    findings=findings,
)
