"""TREC-5's two estimators of utility: stratified samples against the judged pool.

Aims
    Reproduce, on a simulator calibrated to the TREC-5 filtering track, the comparison of
    Lewis (1996, seed 004) sections 5-9 between the **pooled** estimate of a submitted set's
    utility (unjudged documents counted nonrelevant, section 5.1) and the **stratified**
    estimate from at most 100 judgments per system and topic (sections 5.2.1-5.3, eq. 7-10,
    25, 35), with its normal 95% interval (section 8). Measure: the bias, variance and MSE of
    each estimator; the design effect of TREC-5's allocation and of proportional and Neyman
    allocation against a simple random sample (SRS) of the same size (section 7.2, eq. 30
    against 35); the coverage and width of the paper's normal interval and of the
    non-degenerate intervals of `estimators.STRATIFIED_METHODS`, and how often the normal
    interval degenerates to a point (section 9.3); Table 2's breakdown of the pooled estimate
    against the stratified interval, beside the paper's; Table 1's mean ranks of the systems
    under the two estimators; and section 9.3's other tail, the pooled estimate's bias growing
    with the number of relevant documents.
Data-generating mechanisms
    **The simulator** (`simulate_topic`, `Simulator`): a topic has ``R`` relevant documents
    and 20,000 nonrelevant candidates (the part of the collection any system might accept).
    System ``s`` scores document ``d`` as ``mu_s rel_d + sqrt(0.5) z_d + sqrt(0.5) e_sd``
    (``z_d`` a difficulty shared by the systems, so their sets and pools overlap) and accepts
    it for run ``r`` when the score reaches ``c + sigma_c g_st + o_r``: ``g_st`` a standard
    normal per system and topic (systems trained on other data set thresholds that are too
    loose on some topics and too tight on others, section 9.1), ``o_r`` the run's offset
    (thresholds 0.75, 0.5, 0.25 on the probability of relevance, section 4.5). Ten systems:
    separations ``mu`` 2.8 down to 1.4; two of them perturb their score per run (sd 0.3), so
    their sets are not nested (Figure 1, Figure 2's anomaly) and take no part in routing (as
    Intext); one submits the top 10, 30 and 150 documents whatever the topic (as U Illinois,
    section 9.1). A topic's ``R`` is ``floor(exp(N(log 65, 1.7^2)))``, 0 with probability
    0.08 (section 9: skewed, topics without relevant documents kept). Each system's union of
    sets is split into the 7 membership strata (Figure 1) and judged by 100 documents
    allocated by `estimators.allocate` (``"trec5"``: equal shares, leftovers redistributed,
    section 5.3); the judged pool is every system's sample and the top 100 of each routing
    system's ranking (section 4.3, 5.1). **Calibration**: ``mu``, ``c = 3.9``, ``sigma_c =
    1.1``, the offsets ``o = (0.55, -0.2, -0.5)`` and the distribution of ``R`` were set by
    hand, a few rounds over 6 simulated evaluations, to Table 3's medians over all runs
    (submitted set 10, relevant in the set by pooling 2, relevant in the pool 42) and to
    Table 2's share of pooled = stratified (79%, 447/364/344 by run); `calibration_table`
    reports how close they came. The tails of Table 2 and 3 were not targeted.

    **Cells** are fixed stratum configurations, so that their truth is fixed: a topic with
    ``relevant`` relevant documents (seeded by ``relevant`` alone, so every cell of one topic
    shares it and its pool) judged as above, and one more system under study with separation
    ``separation`` that submits the top ``submitted`` documents of its ranking for run 3 and
    the documents scoring 0.3 and 1.05 higher for runs 2 and 1 (the offsets above), nested.
    Its run ``run`` is the set estimated. The rest of the pool (routing top 100s, the other
    systems' samples, its own top 100) is held fixed; the **replicates** are this system's own
    random samples (hypergeometric per stratum, vectorized): 100 judgments allocated by the
    TREC-5 rule, by ``proportional`` and by ``neyman`` allocation (independent samples), and
    SRSs of the run's set of the TREC-5 size and of the proportional size. Neyman allocation
    uses the stratum proportions ``(K_h + 1/2) / (N_h + 1)`` as priors: an oracle, the best a
    100-judgment allocation can do, against which TREC-5's rule is measured. Quick grid:
    ``relevant`` 5, 40, 300, 2000 x ``submitted`` 250, 1000, 4000 x ``separation`` 2 x 3 runs
    (36 cells, 1,500 replicates). Full grid: 11 values of ``relevant`` from 2 to 2500 x
    ``submitted`` 50, 250, 1000, 4000 x ``separation`` 1.5, 2, 2.5 x 3 runs (396 cells,
    10,000 replicates).
Estimands
    The utility ``u = u_a A + u_b B`` of the system's set for the run (eq. 1; ``(u_a, u_b)`` =
    (1, -3), (1, -1), (3, -1) for runs 1-3, section 4.4).
Methods
    ``pooled``: ``u_a A_p + u_b (N - A_p)`` with ``A_p`` the set's documents judged relevant
    anywhere in the pool (`estimators.pooled_estimate`, section 5.1). ``trec5``,
    ``proportional``, ``neyman``: the stratified estimate eq. 8-10 and 25 with the model SE of
    eq. 35 (`estimators.stratified_proportion`), from each allocation's sample; ``trec5`` also
    carries the paper's normal interval ``u^ +- 1.96 sqrt(MSE^)`` (section 8; unclipped, as in
    Table 2). ``srs``: eq. 6 and 30 from an SRS of the set of the TREC-5 sample's size, with
    its normal interval. ``jeffreys``, ``mover-wilson``, ``korn-graubard``, ``wald``: the
    intervals of `estimators.StratifiedEstimate` (mapped to utility) from the TREC-5 sample,
    computed once per distinct sample outcome (``wald`` is the paper's normal interval cut to
    the utilities the judged documents leave possible). Checks written apart from the
    estimators: ``srs-mse-ratio`` returns ``u + (e^2 / V - 1)`` per replicate (``e`` the SRS
    estimate's error, ``V`` its design variance from scipy.stats' hypergeometric law), so that
    its bias is the MSE over the design variance less 1; ``pooled-plus-unjudged`` adds back
    ``u_a - u_b`` for each of the set's relevant documents outside the pool, which gives ``u``
    in every replicate when the pooled estimate loses exactly those. Helpers that carry one
    per-replicate indicator as ``reject``:
    ``table2-below``, ``table2-inside-below``, ``table2-equal``, ``table2-inside-above``,
    ``table2-above`` (where the pooled estimate lies against the ``trec5`` interval: Table 2's
    rows) and ``table2-above-degenerate`` (above a zero-width interval). Paired helpers for
    the variance ordering: ``gap-neyman-proportional`` returns ``u + (e_N^2 - e_P^2)`` and
    ``gap-proportional-srs`` returns ``u + (e_P^2 - e_S^2)`` (``e`` the errors of the Neyman,
    proportional and equal-size SRS estimates of one replicate), so that their ``bias`` is
    the MSE difference with its MCSE (a Monte Carlo cross-check, too imprecise to decide the
    ordering). The ordering itself is judged exactly: ``ratio-neyman-proportional`` and
    ``ratio-proportional-srs`` return ``u + (V_1 / V_2 - 1)`` in every replicate, ``V`` the
    designs' exact variances (`design_variances`), so that their ``bias`` is the ratio less 1
    with no Monte Carlo error; ``ratio-trec5-proportional`` likewise for the TREC-5
    allocation against proportional. ``scipy-ratio-neyman-proportional`` and
    ``scipy-ratio-proportional-srs`` return the same ratios from scipy.stats' hypergeometric
    variances (`oracle_variance_ratio`), computed apart, to check them.
Performance measures
    Bias, empirical SE, MSE, model SE and its relative error, coverage and width, and
    ``rejection``, which here is the share of replicates with the method's event: a
    zero-width interval (``trec5``, ``srs``, the interval methods), a pooled estimate above
    the truth (``pooled``), or the helper's Table 2 row. MCSEs as in Morris et al. (2019),
    Table 6. The summary (`summary_table`) adds, from 10 simulated TREC-5 evaluations (49
    topics x 10 systems x 3 runs each, fixed seeds): Table 2 ours (mean and sd over the
    evaluations) beside the paper's, Table 3's medians (`calibration_table`), Table 1's mean
    ranks with rank correlations and top-system changes (`rank_table`, `rank_agreement`), the
    pooled bias by number of relevant documents, and each cell's exact design effects
    (`design_effects`: the allocation's stratified variance over the SRS variance at the same
    sample size, Cochran 1977 eq. 5.30 and 3.6).

Policies
    An empty set has utility 0, estimated exactly (estimate 0, SE 0, interval [0, 0]).
    Utility estimates and bounds are rounded to 1e-6 (`DIGITS`), so that a set judged in full
    is estimated exactly and its point interval covers its (integer) utility. The
    pooled and stratified estimates are "equal" within ``1e-9`` relative. A design effect is
    undefined (nan) when the SRS variance is 0 (no relevant or no nonrelevant document in the
    set, or the set judged in full).

References
----------
Lewis, D. D. (1996). The TREC-5 Filtering Track. *TREC-5* (seed 004), sections 4.4-4.5, 5-9,
eq. 1-10, 25-35, Figure 1, Tables 1-3. Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed.,
Wiley, sections 3.2, 5.5-5.6. Morris, T. P., White, I. R. & Crowther, M. J. (2019).
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
from scipy import stats

from estimators import StratifiedEstimate, allocate, pooled_estimate, stratified_proportion
from studies.engine import StudyResult
from studies.engine.claims import Claim
from studies.engine.design import Figure, Grid, Params, Sample, Study
from studies.engine.findings import REPRODUCED_WITHIN, estimate, extreme, versus_paper
from studies.engine.performance import Estimates
from studies.engine.regions import region_mask

__all__ = ["CATEGORIES", "CLAIMS", "FIGURES", "METHODS", "PAPER_TABLE1", "PAPER_TABLE2",
           "PAPER_TABLE3", "STUDY", "Configuration", "Draws", "Simulator",
           "Topic", "calibration_table", "categorise", "configuration", "design_effects",
           "design_variances", "evaluate",
           "rank_agreement", "rank_table", "simulate_topic", "summary_table", "table2"]

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

RUNS = (1, 2, 3)
UTILITY = {1: (1.0, -3.0), 2: (1.0, -1.0), 3: (3.0, -1.0)}  # (u_a, u_b), section 4.4
BUDGET = 100  # judgments per system and topic (section 5.3)
ROUTING_DEPTH = 100  # documents a routing run contributes to the pool (section 4.3)
Z95 = float(stats.norm.isf(0.025))
DIGITS = 6  # utilities are rounded to 1e-6 (see `_rounded`)
# Stratum k's digits (R1, R2, R3): the membership of Figure 1, label format(k, "03b").
MEMBER: BoolArray = ((np.arange(8)[:, None] >> np.array([2, 1, 0])) & 1).astype(np.bool_)
SIMULATOR_SEED = 20_190_004  # the simulated topics and evaluations (not the run's seed)
N_EVALUATIONS = 10  # simulated TREC-5 evaluations behind the summary

CATEGORIES = ("below", "inside-below", "equal", "inside-above", "above")
# Lewis (1996), Table 2: count (degenerate intervals) by row and run.
PAPER_TABLE2 = pd.DataFrame(
    {1: [11, 17, 447, 13, 2], 2: [20, 49, 364, 33, 24], 3: [31, 56, 344, 37, 22]},
    index=pd.Index(CATEGORIES, name="row"))
PAPER_DEGENERATE = pd.DataFrame(
    {1: [0, 0, 447, 0, 2], 2: [0, 0, 364, 0, 16], 3: [0, 0, 344, 0, 14]},
    index=pd.Index(CATEGORIES, name="row"))
# Lewis (1996), Table 3: medians (submitted set, relevant in it by pooling, relevant in pool).
PAPER_TABLE3 = pd.DataFrame(
    {"submitted": [562.0, 10.0, 256.0], "relevant_in_set": [282.5, 2.0, 6.5],
     "relevant_in_pool": [808.0, 42.0, 20.0]},
    index=pd.Index(["below", "all", "above"], name="row"))
# Lewis (1996), Table 1: mean rank (pooled, stratified) per run, systems in the paper's order.
PAPER_TABLE1 = pd.DataFrame(
    [[3.61, 3.49, 3.55, 3.31, 2.71, 2.84], [3.71, 3.53, 3.02, 3.08, 3.16, 3.35],
     [3.76, 3.59, 3.55, 3.61, 4.35, 4.39], [4.10, 4.12, 3.24, 3.33, 3.88, 4.02],
     [4.14, 4.10, 3.59, 3.71, 4.12, 4.29], [5.14, 5.14, 4.78, 4.92, 5.02, 5.16],
     [6.37, 6.45, 6.82, 6.86, 7.14, 6.65], [6.53, 6.59, 6.92, 6.92, 6.80, 6.65],
     [7.55, 7.69, 8.61, 8.37, 7.67, 7.43], [8.88, 9.10, 9.45, 9.45, 9.24, 9.35]],
    index=pd.Index(["INR3", "city96f", "xerox.f1", "pircs96f", "xerox.f2", "xerox.f3",
                    "iti96f", "INTXA", "INTXM", "ispF"], name="system"),
    columns=pd.MultiIndex.from_product([RUNS, ["pooled", "stratified"]],
                                       names=["run", "estimator"]))


# ------------------------------------------------------------------------------ simulator


@dataclass(frozen=True)
class Simulator:
    """Parameters of the TREC-5-like simulator (module docstring; calibrated values).

    Attributes
    ----------
    n_topics : int
        Topics per evaluation (49 in TREC-5, section 4.2).
    median_relevant, spread_relevant : float
        ``R = floor(exp(N(log median, spread^2)))``.
    share_no_relevant : float
        Probability that a topic has no relevant document.
    nonrelevant : int
        Nonrelevant candidate documents per topic.
    shared : float
        Share of a score's noise variance common to all systems.
    separation : tuple of float
        ``mu_s``, one per system.
    cutoff, cutoff_spread : float
        ``c`` and ``sigma_c`` of the thresholds.
    run_offsets : tuple of float
        ``o_r`` for runs 1-3.
    run_jitter : tuple of float
        Per system, the sd of a per-run perturbation of its scores (non-nested sets).
    fixed_sizes : tuple of (int, (int, int, int))
        Systems (0-based) that submit a fixed number of top documents for runs 1-3.
    routing : tuple of bool
        Per system, whether its top 100 joins the pool.
    """

    n_topics: int = 49
    median_relevant: float = 65.0
    spread_relevant: float = 1.7
    share_no_relevant: float = 0.08
    nonrelevant: int = 20_000
    shared: float = 0.5
    separation: tuple[float, ...] = (2.8, 2.7, 2.5, 2.4, 2.3, 2.1, 1.9, 1.7, 1.7, 1.4)
    cutoff: float = 3.9
    cutoff_spread: float = 1.1
    run_offsets: tuple[float, float, float] = (0.55, -0.2, -0.5)
    run_jitter: tuple[float, ...] = (0.0,) * 7 + (0.3, 0.3, 0.0)
    fixed_sizes: tuple[tuple[int, tuple[int, int, int]], ...] = ((9, (10, 30, 150)),)
    routing: tuple[bool, ...] = (True,) * 7 + (False, False, True)

    def __post_init__(self) -> None:
        if self.n_topics < 1:
            raise ValueError(f"`n_topics` must be a positive integer; got {self.n_topics!r}.")
        systems = len(self.separation)
        if len(self.run_jitter) != systems or len(self.routing) != systems:
            raise ValueError(f"`run_jitter` and `routing` must have one entry per system "
                             f"({systems}); got {len(self.run_jitter)} and {len(self.routing)}.")

    @property
    def n_systems(self) -> int:
        """Systems per evaluation."""
        return len(self.separation)


SIMULATOR = Simulator()


@dataclass(frozen=True)
class Topic:
    """One simulated topic: relevance, scores and submitted sets of every system.

    Attributes
    ----------
    relevant : numpy.ndarray of bool, shape (D,)
        Whether each document is relevant.
    difficulty : numpy.ndarray, shape (D,)
        ``z_d``, the score noise shared by the systems.
    scores : numpy.ndarray, shape (S, D)
        Each system's routing score.
    sets : numpy.ndarray of bool, shape (S, 3, D)
        Each system's submitted set for runs 1-3.
    """

    relevant: BoolArray
    difficulty: Array
    scores: Array
    sets: BoolArray


def simulate_topic(relevant: int, rng: np.random.Generator,
                   simulator: Simulator = SIMULATOR) -> Topic:
    """A topic with ``relevant`` relevant documents and every system's three sets.

    Parameters
    ----------
    relevant : int
        ``R``, at least 0.
    rng : numpy.random.Generator
        The topic's random stream.
    simulator : Simulator
        The simulator's parameters.

    Returns
    -------
    Topic
        The relevant documents are the first ``R``.
    """
    if isinstance(relevant, bool) or not isinstance(relevant, int | np.integer) or relevant < 0:
        raise ValueError(f"`relevant` must be a non-negative integer; got {relevant!r}.")
    sim = simulator
    relevant = int(relevant)
    size = relevant + sim.nonrelevant
    is_relevant = np.arange(size) < relevant
    difficulty = rng.standard_normal(size)
    # the score mu_s rel_d + sqrt(shared) z_d + sqrt(1 - shared) e_sd, built in place: a
    # nonrelevant document's first term is 0, so adding sqrt(shared) z_d alone is exact
    scores = rng.standard_normal((sim.n_systems, size))
    scores *= np.sqrt(1.0 - sim.shared)
    shared = np.sqrt(sim.shared) * difficulty
    scores[:, relevant:] += shared[relevant:]
    scores[:, :relevant] += np.asarray(sim.separation)[:, None] + shared[:relevant]
    cutoffs = sim.cutoff + sim.cutoff_spread * rng.standard_normal((sim.n_systems, 1, 1))
    thresholds = cutoffs + np.asarray(sim.run_offsets)[None, :, None]
    sets = scores[:, None, :] >= thresholds
    for system in np.flatnonzero(sim.run_jitter):  # only these systems' sets can be unnested
        jittered = rng.standard_normal((3, size))
        jittered *= sim.run_jitter[system]
        jittered += scores[system]
        sets[system] = jittered >= thresholds[system]
    for system, counts in sim.fixed_sizes:
        sets[system] = _leading(scores[system], counts)
    return Topic(is_relevant, difficulty, scores, sets)


def _top(scores: Array, depth: int) -> BoolArray:
    """The ``depth`` highest scores of each row (last axis), ties at the cut to the lower index.

    The first ``depth`` documents of a stable sort by decreasing score, found by partitioning
    at the ``depth``-th highest score (a linear pass, not a sort).
    """
    size = scores.shape[-1]
    if depth >= size:
        return np.ones(scores.shape, dtype=np.bool_)
    if depth <= 0:
        return np.zeros(scores.shape, dtype=np.bool_)
    cut = np.partition(scores, size - depth, axis=-1)[..., size - depth, None]
    chosen: BoolArray = scores >= cut
    extra = chosen.sum(axis=-1, keepdims=True) - depth
    if extra.any():  # documents tied at the cut beyond depth: the last ones drop out
        tied = scores == cut
        chosen &= ~(tied & (np.cumsum(tied[..., ::-1], axis=-1)[..., ::-1] <= extra))
    return chosen


def _leading(scores: Array, counts: Sequence[int]) -> BoolArray:
    """One row per count: the top ``count`` documents of the ranking (ties to the lower index)."""
    deepest = np.flatnonzero(_top(scores, max(counts)))
    ranked = deepest[np.argsort(-scores[deepest], kind="stable")]
    found = np.zeros((len(counts), scores.size), dtype=np.bool_)
    for row, count in enumerate(counts):
        found[row, ranked[:count]] = True
    return found


def _strata(sets: BoolArray) -> IntArray:
    """Stratum index ``4 R1 + 2 R2 + R3`` of each document, from one system's (3, D) sets."""
    code: IntArray = 4 * sets[0] + 2 * sets[1] + sets[2].astype(np.int64)
    return code


def _stratum_sizes(code: IntArray) -> IntArray:
    """``N_h`` of the 8 strata, stratum 000 (no set) emptied: it is never sampled."""
    sizes = np.bincount(code, minlength=8)
    sizes[0] = 0
    return sizes


def _allocation(sizes: IntArray, method: str = "trec5", prior: Array | None = None) -> IntArray:
    """``n_h`` for 100 judgments (all strata empty: none)."""
    if not sizes.any():
        return np.zeros(8, dtype=np.int64)
    return allocate(sizes, BUDGET, method=method, proportions=prior)


# `estimators.allocate`'s tolerance: a share this close to a whole number is that number.
_SNAP = 1e-9


def _trec5_allocations(sizes: IntArray) -> IntArray:
    """``n_h`` of TREC-5's rule for 100 judgments, one row of (P, 8) stratum sizes each.

    Lewis (1996), section 5.3: equal shares over the non-empty strata, a stratum too small
    for its share judged whole and the leftover shared among the others (at least 2 each).
    The computation of `estimators.allocate` (``method="trec5"``, ``minimum=2``), run on all
    rows at once: shares ``clip(lam, min(2, N_h), N_h)`` with ``lam`` bisected to the last
    bit until they sum to ``min(100, N)`` (each row stops where `allocate` stops), then whole
    documents by largest remainders, ties to the larger stratum and then the lower index. A
    row of empty strata gets none.
    """
    rows = sizes.shape[0]
    high = sizes.astype(np.float64)
    target = np.minimum(BUDGET, sizes.sum(axis=1))
    low = np.minimum(2, sizes)
    weights = (sizes > 0).astype(np.float64)
    active = low.sum(axis=1) < target  # otherwise the minimums use up the budget
    lam_low, lam_high = np.zeros(rows), high.max(axis=1)
    while active.any():
        middle = 0.5 * (lam_low + lam_high)
        active &= (middle != lam_low) & (middle != lam_high)
        below = np.sum(np.clip(middle[:, None] * weights, low, high), axis=1) < target
        lam_low = np.where(active & below, middle, lam_low)
        lam_high = np.where(active & ~below, middle, lam_high)
    shares = np.clip(lam_high[:, None] * weights, low, high)
    nearest = np.round(shares)
    snapped = np.where(np.abs(shares - nearest) <= _SNAP * np.maximum(1.0, shares), nearest,
                       shares)
    base = np.floor(snapped).astype(np.int64)
    remainder = np.round(snapped - base, 9)
    stratum = np.tile(np.arange(8), rows)
    row = np.repeat(np.arange(rows), 8)
    order = np.lexsort((stratum, -sizes.ravel(), -remainder.ravel(), row))
    deficit = target - base.sum(axis=1)
    flat = base.ravel()
    flat[order[stratum < deficit[row]]] += 1  # order is row by row: stratum counts 0..7 there
    return np.where((low.sum(axis=1) < target)[:, None], base, low)


def _sampling_frame(topic: Topic, rng: np.random.Generator) -> tuple[IntArray, IntArray,
                                                                      Array]:
    """Every (system, document) with the document in one of the system's sets, by system and
    then document: its stratum group ``8 system + h``, the document and a uniform sort key.

    The keys are drawn in that order, one per document of each system's union of sets in
    turn, as one draw per system would.
    """
    sets = topic.sets
    # flatnonzero on the flat union: far cheaper than nonzero on a 2-D array
    systems, documents = np.divmod(np.flatnonzero(sets.any(axis=1)), sets.shape[-1])
    member = sets[systems, :, documents].astype(np.int64)
    groups: IntArray = 8 * systems + 4 * member[:, 0] + 2 * member[:, 1] + member[:, 2]
    return groups, documents, rng.random(documents.size)


def _judged(groups: IntArray, keys: Array, sampled: IntArray) -> BoolArray:
    """A stratified random sample: in group ``g``, the ``sampled.flat[g]`` lowest keys.

    Ordering a stratum by independent uniform keys makes its first ``n_h`` documents a simple
    random sample without replacement (Lewis 1996, section 5.2.1); equal keys keep the
    entries' order. The order by group and then key: a sort by key, then a stable sort by
    group (a radix sort for small group numbers).
    """
    judged = np.zeros(groups.size, dtype=np.bool_)
    if not groups.size:
        return judged
    by_key = np.argsort(keys)
    if np.any(np.diff(keys[by_key]) == 0.0):  # equal keys: their entries' order, stably
        by_key = np.argsort(keys, kind="stable")
    ranked = groups[by_key]
    order = by_key[np.argsort(ranked.astype(np.min_scalar_type(int(ranked.max()))),
                              kind="stable")]
    ordered = groups[order]
    first = np.searchsorted(ordered, ordered)  # where each group starts
    judged[order] = np.arange(groups.size) - first < sampled.ravel()[ordered]
    return judged


def _routed(topic: Topic, simulator: Simulator) -> BoolArray:
    """The documents the routing systems' top 100s put in the pool (section 4.3)."""
    found = np.zeros(topic.relevant.size, dtype=np.bool_)
    for system in np.flatnonzero(simulator.routing):  # row by row: small temporaries
        found |= _top(topic.scores[system], ROUTING_DEPTH)
    return found


def _judge(topic: Topic, rng: np.random.Generator, simulator: Simulator) -> BoolArray:
    """The judged pool: each system's 100-judgment stratified sample and the routing top 100s."""
    groups, documents, keys = _sampling_frame(topic, rng)
    sizes = np.bincount(groups, minlength=8 * simulator.n_systems).reshape(-1, 8)
    pool = _routed(topic, simulator)
    pool[documents[_judged(groups, keys, _trec5_allocations(sizes))]] = True
    return pool


def _utility_estimate(sizes: IntArray, sampled: IntArray, positives: IntArray, run: int
                      ) -> tuple[Array, Array]:
    """Stratified utility estimate (eq. 25) and its SE (eq. 35) of a run, per sample row.

    ``positives`` is (..., 8); an empty set is estimated exactly: 0 and SE 0.
    """
    mask = MEMBER[:, run - 1] & (sizes > 0)
    u_a, u_b = UTILITY[run]
    shape = np.shape(positives)[:-1]
    size = int(sizes[mask].sum())
    if size == 0:
        return np.zeros(shape), np.zeros(shape)
    proportion, variance = stratified_proportion(sizes[mask], sampled[mask],
                                                 positives[..., mask])
    return (_rounded(((u_a - u_b) * np.asarray(proportion) + u_b) * size),
            np.abs(u_a - u_b) * size * np.sqrt(np.asarray(variance)))


def _utility_estimates(sizes: IntArray, sampled: IntArray, positives: IntArray, run: int
                       ) -> tuple[Array, Array]:
    """`_utility_estimate` for many designs: one (stratum sizes, sample sizes, relevant
    found) per row of the (P, 8) arrays.

    ``p^ = sum_h (N_h / N) a_h / n_h`` (Lewis 1996, eq. 7), its variance estimate
    ``(1 / N^2) sum_h N_h (N_h - n_h) a_h (n_h - a_h) / (n_h^2 (n_h - 1))`` (eq. 34, nan where
    ``n_h = 1 < N_h``), the utility ``((u_a - u_b) p^ + u_b) N`` (eq. 25, rounded to 1e-6)
    and its SE ``|u_a - u_b| N sqrt(Var)`` (eq. 35), over the run's non-empty strata. The
    operations and the order of the sums are those of `estimators.stratified_proportion`, so
    the values are its values to the last bit; an empty set gets 0 and SE 0.
    """
    member = MEMBER[:, run - 1]
    size_h = sizes[:, member].astype(np.float64)
    sampled_h = sampled[:, member].astype(np.float64)
    found_h = positives[:, member].astype(np.float64)
    filled = size_h > 0
    size = size_h.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        # an empty stratum adds exactly 0 to the sums (a non-empty unsampled one: nan)
        share = np.where(filled, found_h / sampled_h, 0.0)
        proportion = np.sum(size_h * share, axis=1) / size
        spread = ((size_h - sampled_h) * found_h * (sampled_h - found_h)
                  / (sampled_h * sampled_h * (sampled_h - 1.0) * size_h))
        unestimable = ((sampled_h == 1.0) & (size_h > 1.0)) | ((sampled_h == 0.0) & filled)
        spread = np.where(unestimable, np.nan, np.where(filled & (sampled_h > 1.0), spread,
                                                        0.0))
        weight = size_h / size[:, None]
        variance = np.sum(weight * weight * spread, axis=1)
    u_a, u_b = UTILITY[run]
    empty = size == 0
    estimate = _rounded(np.where(empty, 0.0, ((u_a - u_b) * proportion + u_b) * size))
    se = np.where(empty, 0.0, np.abs(u_a - u_b) * size * np.sqrt(variance))
    return estimate, se


def _rounded(values: Any) -> Array:
    """Utilities rounded to 1e-6: a set judged in full then estimates its integer utility
    exactly (eq. 7's float sums are off by ~1e-13, enough for a point interval to miss)."""
    found: Array = np.round(np.asarray(values, dtype=np.float64), DIGITS)
    return found


def categorise(pooled: Array, estimate: Array, se: Array) -> IntArray:
    """Table 2's row (index into `CATEGORIES`) of each pooled estimate against the interval."""
    low, high = estimate - Z95 * se, estimate + Z95 * se
    equal = np.abs(pooled - estimate) <= 1e-9 * np.maximum(1.0, np.abs(estimate))
    found: IntArray = np.select([equal, pooled < low, pooled < estimate, pooled <= high],
                                [2, 0, 1, 3], 4)
    return found


def evaluate(seed: int, simulator: Simulator = SIMULATOR) -> pd.DataFrame:
    """One simulated TREC-5 evaluation: every (topic, system, run) pair and its estimates.

    Parameters
    ----------
    seed : int
        The evaluation's seed (topics, sets and judging samples).
    simulator : Simulator
        The simulator's parameters.

    Returns
    -------
    pandas.DataFrame
        One row per pair: ``topic``, ``topic_relevant`` (``R``), ``system`` (1-based),
        ``run``, ``submitted`` (``N``), ``relevant_in_set`` (true ``A``), ``pooled_relevant``
        (``A_p``), ``relevant_in_pool``, ``truth``, ``pooled``, ``stratified``, ``se``,
        ``category`` (Table 2's row) and ``degenerate`` (a zero-width interval).

    Notes
    -----
    The topics are drawn one after another (each topic's judging keys follow its sets in the
    stream); the allocations, samples, pool and estimates of all topics are then computed
    at once, over arrays of (topic, system) pairs.
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"`seed` must be a non-negative integer; got {seed!r}.")
    rng = np.random.default_rng(np.random.SeedSequence(SIMULATOR_SEED, spawn_key=(1, seed)))
    sim = simulator
    counts = np.floor(np.exp(rng.normal(np.log(sim.median_relevant), sim.spread_relevant,
                                        size=sim.n_topics))).astype(np.int64)
    counts[rng.random(sim.n_topics) < sim.share_no_relevant] = 0
    # per topic: its (system, document) pairs' groups 8 (S t + s) + h, sort keys, the
    # relevant documents' ids over all topics (-1: nonrelevant), and which relevant documents
    # the routing top 100s pool
    offsets = np.concatenate(([0], np.cumsum(counts)))
    groups, keys, relevant_ids, routed = [], [], [], []
    for index, count in enumerate(counts.tolist()):
        topic = simulate_topic(count, rng, sim)
        group, documents, key = _sampling_frame(topic, rng)
        groups.append(group + 8 * sim.n_systems * index)
        keys.append(key)
        relevant_ids.append(np.where(documents < count, documents + offsets[index], -1))
        routed.append(_routed(topic, sim)[:count])  # the relevant documents come first
    group, key, relevant_id = (np.concatenate(x) for x in (groups, keys, relevant_ids))
    pairs = sim.n_topics * sim.n_systems
    sizes = np.bincount(group, minlength=8 * pairs).reshape(pairs, 8)
    sampled = _trec5_allocations(sizes)
    judged = _judged(group, key, sampled)
    relevant = relevant_id >= 0
    positives = np.bincount(group[judged & relevant], minlength=8 * pairs).reshape(pairs, 8)
    pool = np.concatenate(routed)  # per relevant document of every topic: in the pool
    pool[relevant_id[judged & relevant]] = True
    in_pool = np.bincount(np.repeat(np.arange(sim.n_topics), counts)[pool],
                          minlength=sim.n_topics)
    pooled_h = np.bincount(group[relevant][pool[relevant_id[relevant]]], minlength=8 * pairs)
    relevant_h = np.bincount(group[relevant], minlength=8 * pairs)
    member = MEMBER.astype(np.int64)
    size, true_a, judged_a = (np.reshape(x, (pairs, 8)) @ member
                              for x in (sizes, relevant_h, pooled_h))
    u_a, u_b = (np.array([UTILITY[run][i] for run in RUNS]) for i in (0, 1))
    estimates = [_utility_estimates(sizes, sampled, positives, run) for run in RUNS]
    pooled = [pooled_estimate(size[:, j], judged_a[:, j], judged_a[:, j], u_a=UTILITY[run][0],
                              u_b=UTILITY[run][1]).estimate for j, run in enumerate(RUNS)]
    frame = pd.DataFrame({
        "topic": np.repeat(np.arange(1, sim.n_topics + 1), 3 * sim.n_systems),
        "topic_relevant": np.repeat(counts, 3 * sim.n_systems),
        "system": np.tile(np.repeat(np.arange(1, sim.n_systems + 1), 3), sim.n_topics),
        "run": np.tile(np.array(RUNS), pairs),
        "submitted": size.ravel(), "relevant_in_set": true_a.ravel(),
        "pooled_relevant": judged_a.ravel(),
        "relevant_in_pool": np.repeat(in_pool, 3 * sim.n_systems),
        "truth": (u_a * true_a + u_b * (size - true_a)).ravel(),
        "stratified": np.stack([estimate for estimate, _ in estimates], axis=1).ravel(),
        "se": np.stack([se for _, se in estimates], axis=1).ravel(),
        "pooled": np.stack(pooled, axis=1).ravel(),
    })
    frame["category"] = categorise(frame["pooled"].to_numpy(), frame["stratified"].to_numpy(),
                                   frame["se"].to_numpy())
    frame["degenerate"] = frame["se"] == 0.0
    return frame


@functools.lru_cache(maxsize=1)
def _evaluations(count: int = N_EVALUATIONS) -> tuple[pd.DataFrame, ...]:
    """The summary's simulated evaluations (seeds 0 .. count - 1), computed once per process.

    They take about 6 s; a run's summary reads them once, and the test that checks the
    findings against them reads them again (`benchmarks/bench_study_caches.py`: the cache
    saves nothing in a run)."""
    return tuple(evaluate(seed) for seed in range(count))


# -------------------------------------------------------------------- evaluation tables


def table2(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 2 of one evaluation: counts by row and run (and total), with degenerate counts.

    Returns
    -------
    pandas.DataFrame
        Index `CATEGORIES`; columns ``(kind, run)`` with ``kind`` in ``count``,
        ``degenerate`` and ``run`` in 1, 2, 3, ``"total"``.
    """
    # a pair counts when its row and run are among the categories (codes -1 otherwise)
    row = pd.Categorical(frame["category"], categories=range(5)).codes.astype(np.int64)
    run = pd.Categorical(frame["run"], categories=RUNS).codes.astype(np.int64)
    cell = np.where((row >= 0) & (run >= 0), row * len(RUNS) + run, -1)
    found = {}
    for kind, rows in (("count", cell), ("degenerate", cell[frame["degenerate"].to_numpy()])):
        counts = np.bincount(rows[rows >= 0], minlength=5 * len(RUNS)).reshape(5, len(RUNS))
        table = pd.DataFrame(counts, index=pd.Index(CATEGORIES, name="row"), columns=list(RUNS))
        table["total"] = table.sum(axis=1)
        found[kind] = table
    return pd.concat(found, axis=1)


def _median(values: NDArray[Any]) -> float:
    """The median as pandas gives it (nan for no values)."""
    return float(np.median(values)) if values.size else math.nan


def _medians(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 3's medians of one evaluation (`calibration_table`'s rows and columns)."""
    category = frame["category"].to_numpy()
    groups = {"below": category == 0, "all": np.ones(category.size, dtype=np.bool_),
              "above": category == 4}
    columns = {"submitted": "submitted", "relevant_in_set": "pooled_relevant",
               "relevant_in_pool": "relevant_in_pool"}
    found = {name: [_median(frame[column].to_numpy()[rows]) for rows in groups.values()]
             for name, column in columns.items()}
    found["equal_share"] = [float(np.mean(category[rows] == 2)) if rows.any() else math.nan
                            for rows in groups.values()]
    return pd.DataFrame(found, index=pd.Index(list(groups), name="row"))


def _calibration(medians: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """`calibration_table` from each evaluation's `_medians`."""
    ours = sum(medians[1:], medians[0]) / len(medians)
    paper = PAPER_TABLE3.assign(equal_share=[0.0, 1155 / 1470, 0.0])
    return ours.add_suffix("_ours").join(paper.add_suffix("_paper"))


def calibration_table(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Table 3's medians, mean over evaluations, beside the paper's.

    Rows ``below`` and ``above`` are the pairs whose pooled estimate lies below or above the
    stratified interval; ``all`` is every pair. Columns: ``submitted``, ``relevant_in_set``
    (by pooling, as the paper) and ``relevant_in_pool``, each ``_ours`` and ``_paper``, and
    ``equal_share`` (the share of pooled = stratified, the paper's 1155/1470 = 0.786).
    """
    return _calibration([_medians(frame) for frame in frames])


_ESTIMATORS = ("pooled", "stratified", "truth")


def _wide(frame: pd.DataFrame, run: int, estimators: Sequence[str]
          ) -> tuple[pd.Index, dict[str, Array]]:
    """A run's pairs as (topic x system) arrays, one per estimator: `DataFrame.pivot`'s.

    Topics and systems sorted, nan where a pair is missing; duplicate pairs are an error.
    Returns the systems (the columns) and the arrays.
    """
    at = frame["run"].to_numpy() == run
    topics, topic = np.unique(frame["topic"].to_numpy()[at], return_inverse=True)
    systems, system = np.unique(frame["system"].to_numpy()[at], return_inverse=True)
    cell = topic * systems.size + system
    if np.unique(cell).size < cell.size:
        raise ValueError(f"Run {run} has a (topic, system) pair more than once.")
    arrays = {}
    for estimator in estimators:
        values = np.full(topics.size * systems.size, np.nan)
        values[cell] = frame[estimator].to_numpy(dtype=np.float64)[at]
        arrays[estimator] = values.reshape(topics.size, systems.size)
    return pd.Index(systems, name="system"), arrays


def rank_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 1 of one evaluation: each system's mean rank over topics, per run and estimator.

    Per topic the systems are ranked by utility, 1 the highest, ties given their mean rank
    (``scipy.stats.rankdata``, as the paper). Estimators: ``pooled``, ``stratified`` and
    ``truth`` (the true utility, unknown in TREC-5).

    Returns
    -------
    pandas.DataFrame
        Index ``system``; columns ``(run, estimator)``; systems sorted by the mean of the
        pooled and stratified columns, as the paper sorts them.
    """
    columns = {}
    for run in RUNS:
        systems, arrays = _wide(frame, run, _ESTIMATORS)
        for estimator, wide in arrays.items():
            ranks = stats.rankdata(-wide, method="average", axis=1)
            columns[(run, estimator)] = pd.Series(ranks.mean(axis=0), index=systems)
    table = pd.DataFrame(columns)
    table.columns = pd.MultiIndex.from_tuples(table.columns, names=["run", "estimator"])
    order = table.loc[:, (slice(None), ["pooled", "stratified"])].mean(axis=1)
    return table.loc[order.sort_values(kind="stable").index]


def _best(wide: Array) -> IntArray:
    """Column of each row's highest value (the first among ties; nan skipped, as ``idxmax``)."""
    found: IntArray = np.argmax(np.where(np.isnan(wide), -np.inf, wide), axis=1)
    return found


def rank_agreement(table: pd.DataFrame, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """Agreement of the orderings of `rank_table` (or of the paper's Table 1).

    Parameters
    ----------
    table : pandas.DataFrame
        A `rank_table` (or `PAPER_TABLE1`, which has no ``truth`` columns).
    frame : pandas.DataFrame, optional
        The evaluation behind ``table``, for the per-topic changes of the top system.

    Returns
    -------
    pandas.DataFrame
        One row per run and pair of estimators: Spearman's and Kendall's rank correlations
        between the two mean-rank orderings, whether the top system (lowest mean rank)
        changes, and (with ``frame``) the share of topics whose best system (lowest index
        among ties) changes.
    """
    estimators = list(dict.fromkeys(table.columns.get_level_values("estimator")))
    pairs = [(a, b) for i, a in enumerate(estimators) for b in estimators[i + 1:]]
    rows = []
    for run in RUNS:
        best = ({} if frame is None else
                {e: _best(wide) for e, wide in _wide(frame, run, estimators)[1].items()})
        for first, second in pairs:
            x, y = table[(run, first)], table[(run, second)]
            rows.append({"run": run, "first": first, "second": second,
                         "spearman": float(stats.spearmanr(x, y).statistic),
                         "kendall": float(stats.kendalltau(x, y).statistic),
                         "top_changes": bool(x.idxmin() != y.idxmin()),
                         "topic_top_changes": (np.nan if frame is None else
                                               float(np.mean(best[first] != best[second])))})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------- cell configuration


class Configuration(NamedTuple):
    """The studied system's strata in a cell's topic (all arrays over the 8 strata).

    ``sizes`` ``N_h`` (000 emptied), ``relevant`` ``K_h``, ``covered`` the relevant documents
    of the stratum already in the fixed part of the pool, ``allocations`` ``n_h`` by method,
    ``pool_relevant`` the relevant documents in the fixed pool.
    """

    sizes: IntArray
    relevant: IntArray
    covered: IntArray
    allocations: Mapping[str, IntArray]
    pool_relevant: int


def _cell_topic(relevant: int) -> tuple[Topic, BoolArray, Array]:
    """A grid topic (seeded by ``relevant`` alone), its fixed pool and the studied noise."""
    streams = np.random.SeedSequence(SIMULATOR_SEED, spawn_key=(2, relevant)).spawn(3)
    topic = simulate_topic(relevant, np.random.default_rng(streams[0]))
    pool = _judge(topic, np.random.default_rng(streams[1]), SIMULATOR)
    noise = np.random.default_rng(streams[2]).standard_normal(topic.relevant.size)
    return topic, pool, noise


def _check_params(params: Params) -> tuple[int, int, float, int]:
    found = []
    for name, low in (("relevant", 0), ("submitted", 0)):
        value = params[name]
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
            raise ValueError(f"`{name}` must be a non-negative integer; got {value!r}.")
        found.append(int(value))
    separation = params["separation"]
    if isinstance(separation, bool) or not isinstance(separation, int | float) or not (
            np.isfinite(separation)):
        raise ValueError(f"`separation` must be a finite number; got {separation!r}.")
    run = params["run"]
    if run not in RUNS or isinstance(run, bool):
        raise ValueError(f"`run` must be 1, 2 or 3; got {run!r}.")
    return found[0], found[1], float(separation), int(run)


@functools.lru_cache(maxsize=512)
def _configuration(relevant: int, submitted: int, separation: float) -> Configuration:
    """A cell's topic, pool and strata, kept for the grid's three runs and every method of
    the cell (the quick grid takes 10.2 s with it, 13.8 s without,
    `benchmarks/bench_study_caches.py`)."""
    topic, pool, noise = _cell_topic(relevant)
    scores = (separation * topic.relevant + np.sqrt(SIMULATOR.shared) * topic.difficulty
              + np.sqrt(1.0 - SIMULATOR.shared) * noise)
    ranked = np.sort(scores)[::-1]
    offsets = np.asarray(SIMULATOR.run_offsets)
    sets = np.zeros((3, scores.size), dtype=np.bool_)
    if submitted:
        floor = ranked[min(submitted, scores.size) - 1]
        sets = scores[None, :] >= floor + (offsets - offsets[2])[:, None]
    code = _strata(sets)
    sizes = _stratum_sizes(code)
    relevant_h = np.bincount(code[topic.relevant], minlength=8)
    relevant_h[0] = 0
    fixed = pool | _top(scores, ROUTING_DEPTH)
    covered = np.bincount(code[topic.relevant & fixed], minlength=8)
    covered[0] = 0
    prior = np.where(sizes > 0, (relevant_h + 0.5) / (sizes + 1.0), 0.5)
    allocations = {method: _allocation(sizes, method, prior if method == "neyman" else None)
                   for method in ("trec5", "proportional", "neyman")}
    return Configuration(sizes, relevant_h, covered, allocations,
                         int((fixed & topic.relevant).sum()))


def configuration(params: Params) -> Configuration:
    """The cell's stratum configuration (cached per topic and studied system)."""
    relevant, submitted, separation, _ = _check_params(params)
    return _configuration(relevant, submitted, separation)


def _set_counts(config: Configuration, run: int) -> tuple[BoolArray, int, int]:
    """The run's strata mask, set size ``N`` and relevant ``A``."""
    mask = MEMBER[:, run - 1]
    return mask, int(config.sizes[mask].sum()), int(config.relevant[mask].sum())


def truth(params: Params) -> float:
    """The set's utility ``u_a A + u_b (N - A)`` (eq. 1)."""
    config = configuration(params)
    run = int(params["run"])
    _, size, relevant = _set_counts(config, run)
    u_a, u_b = UTILITY[run]
    return u_a * relevant + u_b * (size - relevant)


def _srs_variance(size: int, relevant: int, sampled: int) -> float:
    """``Var[p^]`` of an SRS of ``sampled`` from ``size`` (Cochran 1977, eq. 3.6)."""
    if size <= 1 or sampled == 0:
        return 0.0
    p = relevant / size
    return (size - sampled) / (size - 1) * p * (1 - p) / sampled


def _stratified_variance(config: Configuration, run: int, method: str) -> float:
    """``Var[p^_st]`` of an allocation (Cochran 1977, eq. 5.30 with eq. 3.6 per stratum)."""
    mask = MEMBER[:, run - 1] & (config.sizes > 0)
    sizes, relevant = config.sizes[mask], config.relevant[mask]
    sampled = config.allocations[method][mask]
    total = sizes.sum()
    return float(sum((n_h / total) ** 2 * _srs_variance(int(n_h), int(k), int(m))
                     for n_h, k, m in zip(sizes, relevant, sampled, strict=True)))


def design_variances(params: Params) -> dict[str, float]:
    """Exact variances of a cell's utility estimators, by design.

    ``trec5``, ``proportional``, ``neyman``: the stratified estimate under each allocation
    (eq. 27 with Cochran 1977, eq. 5.30); ``srs-trec5``, ``srs-proportional``, ``srs-neyman``:
    an SRS of the run's set of the size that allocation gives it (eq. 27 with Cochran's
    eq. 3.6).
    """
    config = configuration(params)
    run = int(params["run"])
    mask, size, relevant = _set_counts(config, run)
    u_a, u_b = UTILITY[run]
    scale = (u_a - u_b) ** 2 * size * size
    found = {}
    for method in ("trec5", "proportional", "neyman"):
        found[method] = scale * _stratified_variance(config, run, method)
        found[f"srs-{method}"] = scale * _srs_variance(
            size, relevant, int(config.allocations[method][mask].sum()))
    return found


def design_effects(params: Params) -> dict[str, float]:
    """Exact design effects of the three allocations in a cell.

    The allocation's stratified variance over the variance of an SRS of the run's set with
    the same number of judgments in it (Kish's design effect); nan when that SRS variance is
    0 (module docstring, Policies).
    """
    variances = design_variances(params)
    return {method: (variances[method] / variances[f"srs-{method}"]
                     if variances[f"srs-{method}"] > 0 else float("nan"))
            for method in ("trec5", "proportional", "neyman")}


# ------------------------------------------------------------------------ engine: data


class Draws(NamedTuple):
    """One cell's replicates (rows).

    ``trec5``, ``proportional``, ``neyman``: relevant found per stratum (R, 8); ``unpooled``:
    how many of the TREC-5 sample's relevant documents were not already in the fixed pool
    (R, 8); ``srs`` and ``srs_proportional``: relevant found by an SRS of the run's set of
    the TREC-5 and of the proportional sample's size (R,).
    """

    trec5: IntArray
    unpooled: IntArray
    proportional: IntArray
    neyman: IntArray
    srs: IntArray
    srs_proportional: IntArray


def generate(params: Params, n_replicates: int, *, rng: Any = None) -> Sample:
    """The studied system's random samples, ``n_replicates`` of each design."""
    gen = np.random.default_rng(rng)
    config = configuration(params)
    run = int(params["run"])
    sizes, relevant, covered = config.sizes, config.relevant, config.covered
    shape = (n_replicates, 8)

    def stratified(method: str) -> IntArray:
        found: IntArray = gen.hypergeometric(relevant, sizes - relevant,
                                             config.allocations[method], size=shape)
        return found

    trec5 = stratified("trec5")
    # of the relevant documents found, those outside the fixed pool join it
    unpooled = gen.hypergeometric(relevant - covered, covered, trec5)
    mask, size, set_relevant = _set_counts(config, run)

    def srs(method: str) -> IntArray:
        found: IntArray = gen.hypergeometric(
            set_relevant, size - set_relevant, int(config.allocations[method][mask].sum()),
            size=n_replicates)
        return found

    draws = Draws(trec5, unpooled, stratified("proportional"), stratified("neyman"),
                  srs("trec5"), srs("proportional"))
    return Sample(data=draws, size=n_replicates)


# --------------------------------------------------------------------- engine: methods


def _stratified(method: str, data: Draws, params: Params) -> tuple[Array, Array]:
    config = configuration(params)
    return _utility_estimate(config.sizes, config.allocations[method],
                             getattr(data, method), int(params["run"]))


def _normal(estimate: Array, se: Array) -> Estimates:
    """The paper's interval ``u^ +- 1.96 SE`` (section 8); degenerate when SE is 0."""
    return Estimates(estimate=estimate, se=se, low=_rounded(estimate - Z95 * se),
                     high=_rounded(estimate + Z95 * se), reject=se == 0.0)


def _trec5(data: Draws, params: Params) -> Estimates:
    return _normal(*_stratified("trec5", data, params))


def _allocated(method: str, data: Draws, params: Params) -> Estimates:
    estimate, se = _stratified(method, data, params)
    return Estimates(estimate=estimate, se=se)


def _srs_estimate(data: Draws, params: Params, field: str, method: str) -> tuple[Array, Array]:
    config = configuration(params)
    run = int(params["run"])
    mask, size, _ = _set_counts(config, run)
    positives = getattr(data, field)
    if size == 0:
        return np.zeros(positives.size), np.zeros(positives.size)
    sampled = int(config.allocations[method][mask].sum())
    proportion, variance = stratified_proportion([size], [sampled], positives[:, None])
    u_a, u_b = UTILITY[run]
    return (_rounded(((u_a - u_b) * np.asarray(proportion) + u_b) * size),
            (u_a - u_b) * size * np.sqrt(np.asarray(variance)))


def _srs(data: Draws, params: Params) -> Estimates:
    return _normal(*_srs_estimate(data, params, "srs", "trec5"))


def _pooled_values(data: Draws, params: Params) -> Array:
    config = configuration(params)
    run = int(params["run"])
    mask, size, _ = _set_counts(config, run)
    judged = config.covered[mask].sum() + data.unpooled[:, mask].sum(axis=1)
    u_a, u_b = UTILITY[run]
    found: Array = np.asarray(pooled_estimate(size, judged, judged, u_a=u_a, u_b=u_b).estimate,
                              dtype=np.float64).reshape(-1)
    return np.broadcast_to(found, (data.srs.size,)).copy()


def _pooled(data: Draws, params: Params) -> Estimates:
    estimate = _pooled_values(data, params)
    true = truth(params)
    return Estimates(estimate=estimate,
                     reject=estimate > true + 1e-9 * max(1.0, abs(true)))


def _interval(method: str, data: Draws, params: Params) -> Estimates:
    """An interval of `StratifiedEstimate` from the TREC-5 sample, once per distinct outcome.

    The proportion's bounds are mapped to utility by eq. 25, ``((u_a - u_b) p + u_b) N``, as
    `estimators.UtilityEstimate` maps them (an empty set: ``[0, 0]``), over all outcomes at
    once.
    """
    config = configuration(params)
    run = int(params["run"])
    mask = MEMBER[:, run - 1]
    u_a, u_b = UTILITY[run]
    size = int(config.sizes[mask].sum())
    outcomes, inverse = np.unique(data.trec5[:, mask], axis=0, return_inverse=True)
    if size == 0:
        bounds = np.zeros((outcomes.shape[0], 2))
    else:
        bounds = ((u_a - u_b) * np.array([
            tuple(StratifiedEstimate(config.sizes[mask], config.allocations["trec5"][mask], row)
                  .confidence_interval(float(params["confidence_level"]), method=method))
            for row in outcomes]) + u_b) * size
    low, high = _rounded(bounds[:, 0])[inverse.reshape(-1)], _rounded(bounds[:, 1])[
        inverse.reshape(-1)]
    return Estimates(low=low, high=high, reject=high == low)


def _srs_mse_ratio(data: Draws, params: Params) -> Estimates:
    """``u + (e^2 / V - 1)`` per replicate: ``e`` the SRS estimate's error, ``V`` the design
    variance of an SRS of its size drawn without replacement, from scipy.stats'
    hypergeometric law (`_scipy_variance`, written apart from the estimator). Its bias is the
    MSE over the design variance less 1. A set without variance (judged whole, or all of one
    kind) gives 0 where the estimate is exact."""
    config = configuration(params)
    run = int(params["run"])
    mask, size, relevant = _set_counts(config, run)
    true = truth(params)
    error = _srs_estimate(data, params, "srs", "trec5")[0] - true
    u_a, u_b = UTILITY[run]
    design = (u_a - u_b) ** 2 * size * size * _scipy_variance(
        size, relevant, int(config.allocations["trec5"][mask].sum())) if size else 0.0
    if design == 0.0:
        ratio = np.where(np.abs(error) <= _ROUNDING, 1.0, np.inf)
    else:
        ratio = error**2 / design
    return Estimates(estimate=true + ratio - 1.0)


def _pooled_plus_unjudged(data: Draws, params: Params) -> Estimates:
    """The pooled estimate plus ``u_a - u_b`` for each of the set's relevant documents the
    pool missed: the true utility in every replicate when the pooled estimate loses exactly
    those (section 5.1)."""
    config = configuration(params)
    run = int(params["run"])
    mask, _, relevant = _set_counts(config, run)
    judged = config.covered[mask].sum() + data.unpooled[:, mask].sum(axis=1)
    u_a, u_b = UTILITY[run]
    return Estimates(estimate=_pooled_values(data, params) + (u_a - u_b) * (relevant - judged))


def _category(data: Draws, params: Params) -> tuple[IntArray, BoolArray]:
    estimate, se = _stratified("trec5", data, params)
    return categorise(_pooled_values(data, params), estimate, se), se == 0.0


def _table2(row: int, data: Draws, params: Params) -> Estimates:
    category, _ = _category(data, params)
    return Estimates(reject=category == row)


def _table2_above_degenerate(data: Draws, params: Params) -> Estimates:
    category, degenerate = _category(data, params)
    return Estimates(reject=(category == 4) & degenerate)


def _gap(first: tuple[str, str], second: tuple[str, str], data: Draws, params: Params
         ) -> Estimates:
    """``u + (e_1^2 - e_2^2)``: its bias is the difference of the two designs' MSEs."""
    true = truth(params)
    errors = []
    for kind, method in (first, second):
        if kind == "stratified":
            estimate, _ = _stratified(method, data, params)
        else:
            estimate, _ = _srs_estimate(data, params, "srs_proportional", method)
        errors.append(estimate - true)
    return Estimates(estimate=true + errors[0] ** 2 - errors[1] ** 2)


def variance_ratio(numerator: str, denominator: str, params: Params) -> float:
    """``Var[numerator] / Var[denominator]`` of a cell, exactly (`design_variances`).

    1 when both are 0 (a set judged in full, or without relevant or nonrelevant documents:
    neither design has any variance); infinite when only the denominator is 0.
    """
    found = design_variances(params)
    top, bottom = found[numerator], found[denominator]
    if bottom == 0.0:
        return 1.0 if top == 0.0 else math.inf
    return top / bottom


def _scipy_variance(size: int, relevant: int, sampled: int) -> float:
    """``Var[p^]`` of an SRS of ``sampled`` from ``size`` with ``relevant`` positives, from
    scipy.stats' hypergeometric law: written apart from `_srs_variance`, to check it."""
    if sampled == 0 or size <= 1:  # scipy's law of a single document divides 0 by 0
        return 0.0
    # scipy computes the law's higher moments beside its variance: 0/0 for tiny strata
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = float(stats.hypergeom(size, relevant, sampled).var())
    return variance / sampled ** 2


def oracle_variance_ratio(numerator: str, denominator: str, params: Params) -> float:
    """`variance_ratio` from scipy.stats' hypergeometric variances (`_scipy_variance`):
    ``numerator`` a stratified allocation, ``denominator`` another or ``srs-<allocation>``."""
    config = configuration(params)
    run = int(params["run"])
    mask = MEMBER[:, run - 1] & (config.sizes > 0)
    sizes, relevant = config.sizes[mask], config.relevant[mask]

    def variance(design: str) -> float:
        if design.startswith("srs-"):
            return _scipy_variance(int(sizes.sum()), int(relevant.sum()),
                                   int(config.allocations[design[4:]][mask].sum()))
        sampled = config.allocations[design][mask]
        return sum((int(n_h) / sizes.sum()) ** 2 * _scipy_variance(int(n_h), int(k), int(m))
                   for n_h, k, m in zip(sizes, relevant, sampled, strict=True))

    top, bottom = variance(numerator), variance(denominator)
    if bottom == 0.0:
        return 1.0 if top == 0.0 else math.inf
    return top / bottom


def _oracle_ratio(numerator: str, denominator: str, data: Draws, params: Params
                  ) -> Estimates:
    """`_ratio` from `oracle_variance_ratio`: the exact ratios computed a second way."""
    return Estimates(estimate=np.full(data.trec5.shape[0], truth(params)
                                      + oracle_variance_ratio(numerator, denominator, params)
                                      - 1.0))


def _ratio(numerator: str, denominator: str, data: Draws, params: Params) -> Estimates:
    """``u + (ratio - 1)``, the same in every replicate: its bias is the exact ratio less 1."""
    return Estimates(estimate=np.full(data.trec5.shape[0], truth(params)
                                      + variance_ratio(numerator, denominator, params) - 1.0))


METHODS = {
    "pooled": _pooled,
    "srs": _srs,
    "trec5": _trec5,
    "proportional": functools.partial(_allocated, "proportional"),
    "neyman": functools.partial(_allocated, "neyman"),
    **{name: functools.partial(_interval, name)
       for name in ("jeffreys", "mover-wilson", "korn-graubard", "wald")},
    "srs-mse-ratio": _srs_mse_ratio,
    "pooled-plus-unjudged": _pooled_plus_unjudged,
    **{f"table2-{name}": functools.partial(_table2, row)
       for row, name in enumerate(CATEGORIES)},
    "table2-above-degenerate": _table2_above_degenerate,
    "gap-neyman-proportional": functools.partial(
        _gap, ("stratified", "neyman"), ("stratified", "proportional")),
    "gap-proportional-srs": functools.partial(
        _gap, ("stratified", "proportional"), ("srs", "proportional")),
    "ratio-neyman-proportional": functools.partial(_ratio, "neyman", "proportional"),
    "ratio-proportional-srs": functools.partial(_ratio, "proportional", "srs-proportional"),
    "ratio-trec5-proportional": functools.partial(_ratio, "trec5", "proportional"),
    "scipy-ratio-neyman-proportional": functools.partial(_oracle_ratio, "neyman",
                                                         "proportional"),
    "scipy-ratio-proportional-srs": functools.partial(_oracle_ratio, "proportional",
                                                      "srs-proportional"),
}


# ------------------------------------------------------------------------------ summary


def _long(table: str, frame: pd.DataFrame, *, spread: pd.DataFrame | None = None,
          paper: pd.DataFrame | None = None) -> list[dict[str, Any]]:
    """Rows ``table, row, column, ours, spread, paper`` of a wide frame (nan where absent)."""
    rows = []
    for row in frame.index:
        for column in frame.columns:
            rows.append({
                "table": table, "row": str(row), "column": str(column),
                "ours": float(frame.loc[row, column]),
                "spread": float("nan") if spread is None else float(spread.loc[row, column]),
                "paper": (float(paper.loc[row, column]) if paper is not None
                          and row in paper.index and column in paper.columns
                          else float("nan"))})
    return rows


def _table2_rows(frames: Sequence[pd.DataFrame]) -> list[dict[str, Any]]:
    tables = [table2(frame) for frame in frames]
    stacked = pd.concat(tables, keys=range(len(tables)))
    mean = stacked.groupby(level=1, sort=False).mean()
    sd = stacked.groupby(level=1, sort=False).std()
    rows = []
    for kind, paper in (("count", PAPER_TABLE2), ("degenerate", PAPER_DEGENERATE)):
        paper = paper.assign(total=paper.sum(axis=1))
        rows += _long(f"table2 {kind}", mean[kind], spread=sd[kind], paper=paper)
    return rows


def _rank_rows(frames: Sequence[pd.DataFrame]) -> list[dict[str, Any]]:
    tables = [rank_table(frame) for frame in frames]
    first = tables[0]
    flat = first.copy()
    flat.columns = [f"run {run} {estimator}" for run, estimator in first.columns]
    rows = _long("table1 mean rank (evaluation 0)", flat.rename(index=lambda s: f"system {s}"))
    agreements = pd.concat([rank_agreement(t, f) for t, f in zip(tables, frames, strict=True)])
    measures = ["spearman", "kendall", "top_changes", "topic_top_changes"]
    mean = agreements.groupby(["run", "first", "second"])[measures].mean()
    sd = agreements.groupby(["run", "first", "second"])[measures].std()
    paper = rank_agreement(PAPER_TABLE1).set_index(["run", "first", "second"])
    for key in mean.index:
        label = f"run {key[0]} {key[1]} vs {key[2]}"
        for measure in measures:
            value = paper.loc[key, measure] if key in paper.index else float("nan")
            rows.append({"table": "table1 agreement", "row": label, "column": measure,
                         "ours": float(mean.loc[key, measure]),
                         "spread": float(sd.loc[key, measure]), "paper": float(value)})
    return rows


_BANDS = (0, 1, 21, 101, 501, np.inf)


def _pooled_bias_rows(frames: Sequence[pd.DataFrame]) -> list[dict[str, Any]]:
    """Mean pooled error and the share of relevant documents it misses, by topic ``R``."""
    both = pd.concat(frames)
    band = pd.cut(both["topic_relevant"], _BANDS, right=False,
                  labels=["0", "1-20", "21-100", "101-500", "501+"])
    both = both.assign(band=band, error=both["pooled"] - both["truth"],
                       missed=both["relevant_in_set"] - both["pooled_relevant"])
    grouped = both.groupby(["band", "run"], observed=True)
    rows = []
    for (name, run), part in grouped:
        rows.append({"table": "pooled bias by topic relevant", "row": str(name),
                     "column": f"run {run} mean error", "ours": float(part["error"].mean()),
                     "spread": float(part["error"].std()), "paper": float("nan")})
        rows.append({"table": "pooled bias by topic relevant", "row": str(name),
                     "column": f"run {run} share of relevant unjudged",
                     "ours": float(part["missed"].sum() / max(1, part["relevant_in_set"].sum())),
                     "spread": float("nan"), "paper": float("nan")})
    return rows


def _design_rows(result: StudyResult) -> list[dict[str, Any]]:
    rows = []
    for cell in result.expanded().cells:
        label = ", ".join(f"{k}={v}" for k, v in cell.params.items()
                          if k != "confidence_level")
        exact = design_effects(cell.params)
        found = {m: cell.performance[m].measures.get("empirical_se")
                 for m in ("trec5", "srs") if m in cell.performance}
        measured = float("nan")
        if len(found) == 2 and found["srs"] is not None and found["srs"].value > 0:
            measured = (found["trec5"].value / found["srs"].value) ** 2
        for method, value in exact.items():
            rows.append({"table": "design effect (exact)", "row": label, "column": method,
                         "ours": value, "spread": float("nan"), "paper": float("nan")})
        rows.append({"table": "design effect (Monte Carlo)", "row": label, "column": "trec5",
                     "ours": measured, "spread": float("nan"), "paper": float("nan")})
    return rows


def summary_table(result: StudyResult) -> list[dict[str, Any]]:
    """The headline tables, long: ``table, row, column, ours, spread, paper``.

    Tables 1-3 (seed 004) from `N_EVALUATIONS` simulated evaluations (``ours`` their mean,
    ``spread`` their sd), the pooled bias by topic size, and the run's cells' design effects.
    """
    frames = _evaluations()
    medians = [_medians(frame) for frame in frames]
    calibration = _calibration(medians)
    ours = calibration.filter(like="_ours").rename(columns=lambda c: c[:-5])
    paper = calibration.filter(like="_paper").rename(columns=lambda c: c[:-6])
    spread = pd.concat(medians, keys=range(len(frames))).groupby(level=1, sort=False).std()
    return [*_table2_rows(frames),
            *_long("table3 medians", ours, paper=paper, spread=spread),
            *_rank_rows(frames), *_pooled_bias_rows(frames), *_design_rows(result)]


# ---------------------------------------------------------------------------- the study

# Table 3: the median topic whose pooled estimate lay above the interval had 20 relevant
# documents in the pool, its set 256 documents; topics with fewer than 20 can leave the set
# without relevant documents, where every interval is exact.
# Rare relevant documents: topics with at most 80 (Table 3's median set holds 2 by pooling)
# and sets of 250 or more, which the 100 judgments sample rather than judge in full.
_RARE = "relevant <= 80 and submitted >= 250"
_EVERY_CELL = ("relevant", "submitted", "separation", "run")
_MANY = "relevant >= 300 and submitted >= 1000"
# The engine's mean of a constant estimate (a set judged in full) is off by ~1e-14 with an
# MCSE of ~1e-16: a margin of 1e-6 utility units (squared, for the gaps) absorbs it.
_ROUNDING = 1e-6

CLAIMS = (
    Claim("pooled-never-above-truth",
          "The pooled estimate never exceeds the true utility, in any replicate: it is a lower "
          "bound (Lewis 1996, section 7.1).",
          ("pooled",), "rejection", "at_most", target=0.0, pins=("validity",)),
    Claim("stratified-and-srs-unbiased",
          "The stratified estimate under each allocation and the SRS estimate are unbiased "
          "(section 7.2).",
          ("trec5", "proportional", "neyman", "srs"), "bias", "within", target=0.0,
          margin=_ROUNDING, resolution=0.2, resolution_unit="empirical_se", pins=("validity",)),
    Claim("neyman-variance-below-proportional-on-average",
          "Neyman allocation (oracle priors, computed for the union of the nested sets) has "
          "at least 10% less variance than proportional allocation with the same 100 "
          "judgments, on average over the cells of each run (exact variances, Cochran 1977, "
          "section 5.5). Not in every cell: where the union's optimum starves the strata of a "
          "smaller set it has more (the findings count those cells).",
          ("ratio-neyman-proportional",), "bias", "at_most", target=0.0, margin=-0.1,
          resolution=0.02, quantity="variance ratio less 1",
          mean_over=("relevant", "submitted", "separation"), pins=("efficiency",)),
    Claim("proportional-variance-at-most-srs-on-average",
          "Proportional allocation's variance is at most that of an SRS of the same size on "
          "average over the cells of each run (exact variances, Cochran 1977, section 5.6). "
          "Not in every cell: the 2-judgment minimum per stratum and integer allocations make "
          "it larger in some (the findings count them).",
          ("ratio-proportional-srs",), "bias", "at_most", target=0.0, margin=_ROUNDING,
          resolution=0.02, quantity="variance ratio less 1",
          mean_over=("relevant", "submitted", "separation"), pins=("efficiency",)),
    Claim("trec5-variance-at-most-proportional-on-average",
          "TREC-5's allocation (equal shares per stratum) has no more variance than "
          "proportional allocation with the same 100 judgments on average over the cells "
          "(exact variances; the quick grid: 17% less, the full grid: 19% less): sampling the "
          "small, mixed strata more pays. Not in every cell (the findings count them).",
          ("ratio-trec5-proportional",), "bias", "at_most", target=0.0, margin=_ROUNDING,
          resolution=0.02, mean_over=_EVERY_CELL, pins=("efficiency",),
          quantity="variance ratio less 1"),
    Claim("normal-interval-undercovers-when-rare",
          "Where relevant documents are rare (topics with at most 80, sets of 250 or more), "
          "the paper's normal interval covers at least 15 points below 95% on average over "
          "the cells: it often collapses to a point (section 9.3).",
          ("trec5",), "coverage", "at_most", target="confidence_level", margin=-0.15,
          where=_RARE, mean_over=_EVERY_CELL),
    Claim("non-degenerate-intervals-repair-it-on-average",
          "There the Jeffreys, MOVER-Wilson and Korn-Graubard intervals cover within 1 point "
          "of 95% or more on average over the same cells (not in every cell: see the "
          "findings).",
          ("jeffreys", "mover-wilson", "korn-graubard"), "coverage", "at_least",
          target="confidence_level", margin=0.01, where=_RARE, mean_over=_EVERY_CELL,
          pins=("validity",)),
    *(Claim(f"{name}-agrees-with-scipy",
            f"The exact variance ratio {name[6:]} equals the one computed from scipy.stats' "
            f"hypergeometric variances, written apart, in every cell (up to rounding): the "
            f"ordering claims above rest on it.",
            (f"scipy-{name}",), "bias", "within", target=0.0, margin=1e-9, reference=name,
            resolution=1e-6, quantity="variance ratio less 1")
      for name in ("ratio-neyman-proportional", "ratio-proportional-srs")),
    Claim("wald-within-5-points-where-relevant-are-many",
          "Where relevant documents are many (topics with at least 300, sets of 1000 or "
          "more), the stratified Wald interval covers at least 90% at 95% on average over the "
          "cells (the quick grid: 91.6%; the full grid: 90.3%): short of nominal even there, "
          "as the paper's normal interval is (section 9.3), but by no more than 5 points.",
          ("wald",), "coverage", "at_least", target="confidence_level", margin=0.05,
          where=_MANY, mean_over=_EVERY_CELL, pins=("validity",)),
    Claim("wald-is-the-papers-interval-cut-to-the-possible",
          "The stratified Wald interval is the paper's normal interval u^ +- 1.96 SE "
          "(section 8, computed in this study from the estimate and eq. 35: trec5) cut to the "
          "utilities the judged documents leave possible: never wider in any replicate, so "
          "no wider on average in any cell.",
          ("wald",), "width", "at_most", target=0.0, reference="trec5", margin=_ROUNDING,
          resolution=_ROUNDING, identity=True, pins=("efficiency",)),
    Claim("wald-covers-as-the-papers-interval",
          "It covers exactly as often as the paper's interval in every cell: the cut removes "
          "only utilities the judged documents rule out.",
          ("wald",), "coverage", "within", target=0.0, reference="trec5", resolution=1e-6,
          identity=True),
    Claim("srs-mse-is-the-design-variance",
          "The SRS estimate's mean squared error is the design variance of a simple random "
          "sample of its size drawn without replacement (from scipy.stats' hypergeometric "
          "law, written apart) within 5% on average over the cells of each run: it draws on "
          "every judged document, no less.",
          ("srs-mse-ratio",), "bias", "within", target=0.0, margin=0.05, resolution=0.1,
          quantity="MSE over the design variance, less 1",
          mean_over=("relevant", "submitted", "separation"), pins=("efficiency",)),
    Claim("pooled-loses-only-the-unjudged-relevant",
          "The pooled estimate falls short of the true utility by exactly u_a - u_b for each "
          "of the set's relevant documents outside the pool, in every replicate (section "
          "5.1): with their value added back its squared error is 0. It is the tightest lower "
          "bound the pool allows.",
          ("pooled-plus-unjudged",), "mse", "at_most", target=0.0, margin=1e-9,
          quantity="squared error once the unjudged relevant documents are added back",
          resolution=1e-6, identity=True, pins=("efficiency",)),
    Claim("mover-wilson-and-korn-graubard-at-most-half-again-jeffreys-width",
          "The MOVER-Wilson and Korn-Graubard intervals are at most 50% wider than the "
          "Jeffreys interval in every cell (the quick grid: 38% and 41% at most; the full "
          "grid: 45% at most): with the "
          "same promise, none pays much more width than the others, so a stratum's "
          "finite-population correction or a design effect computed wrongly is seen.",
          ("mover-wilson", "korn-graubard"), "width", "at_most", target=0.5,
          reference="jeffreys", relative=True, resolution=0.15, pins=("efficiency",)),
    Claim("jeffreys-no-wider-than-mover-wilson-on-average",
          "The Jeffreys interval is no wider than MOVER-Wilson's on average over the cells "
          "(the quick grid: 10% narrower; the full grid: 7%).",
          ("jeffreys",), "width", "at_most", target=0.0, reference="mover-wilson",
          relative=True, resolution=0.05, mean_over=_EVERY_CELL, pins=("efficiency",)),
)

_SHOWN = "submitted == 1000 and separation == 2.0"

FIGURES = (
    Figure("measure_by",
           "Coverage of the 95% intervals against the topic's number of relevant documents, "
           "one panel per run (the system's run-3 set holds 1000 documents): the paper's "
           "normal interval (trec5), the SRS normal interval and the non-degenerate intervals "
           "(Jeffreys, MOVER-Wilson, Korn-Graubard); the dashed line is 95%. A normal interval "
           "falls where its sample finds none (or only) relevant documents and collapses to a "
           "point.",
           where=_SHOWN,
           options={"measure": "coverage", "x": "relevant", "panel_by": "run",
                    "reference": 0.95, "log_x": True,
                    "methods": ("trec5", "srs", "jeffreys", "mover-wilson", "korn-graubard")}),
    Figure("measure_by",
           "Table 2 by topic size: the share of replicates whose pooled estimate lies below, "
           "inside (below or above the estimate) or above the stratified 95% interval, or "
           "equals the estimate, and the share above a zero-width interval, one panel per run. "
           "The paper's counts beside ours are in the summary table.",
           where=_SHOWN,
           options={"measure": "rejection", "x": "relevant", "panel_by": "run",
                    "y_label": "share of replicates in the row",
                    "methods": tuple(f"table2-{c}" for c in (*CATEGORIES, "above-degenerate")),
                    "title": "stratified_vs_pooled: Table 2 rows (share of replicates) "
                             "against relevant, a panel per run (cells with submitted = 1000 "
                             "and separation = 2.0)"}),
    Figure("summary_bars",
           f"Table 2 of the paper beside ours: of the 490 topic-system pairs of each run, how "
           f"many have a pooled estimate below the stratified 95% interval, inside it below the "
           f"stratified estimate, equal to it, inside it above, or above it (ours: the mean of "
           f"{N_EVALUATIONS} simulated TREC-5 evaluations, +-1 sd; log scale). The findings "
           f"put each of the paper's totals beside ours.",
           options={"query": "table == 'table2 count'", "x": "row", "bars": ("ours", "paper"),
                    "error": {"ours": "spread"}, "panel_by": "column", "log_y": True,
                    "labels": {"1": "run 1", "2": "run 2", "3": "run 3", "total": "all runs",
                               "ours": f"ours (mean of {N_EVALUATIONS} simulated evaluations)",
                               "paper": "paper (Lewis 1996, Table 2)", "spread": "1 sd",
                               "row": "pooled estimate against the interval"},
                    "y_label": "topic-system pairs",
                    "title": "stratified_vs_pooled: Table 2, ours beside the paper's"}),
    Figure("measure_by",
           "Empirical SE of the utility estimate under TREC-5's equal allocation, proportional "
           "and (oracle) Neyman allocation and an SRS of TREC-5's size: the design effect is "
           "the square of an allocation's SE over the SRS's (exact values in the summary and "
           "the next figure).",
           where=_SHOWN,
           options={"measure": "empirical_se", "x": "relevant", "panel_by": "run",
                    "methods": ("trec5", "proportional", "neyman", "srs")}),
    Figure("summary_lines",
           "The design effect (an allocation's variance over that of a simple random sample "
           "of the set with as many judgments) of TREC-5's equal shares, proportional and "
           "(oracle) Neyman allocation against the topic's number of relevant documents, one "
           "panel per run, the system's run-3 set holding 1000 documents; below the dashed "
           "line at 1 stratifying pays. Run 1's set is a single stratum, so every allocation "
           "is an SRS there. A gap is a set without SRS variance (no relevant or no "
           "nonrelevant document in it).",
           options={"split": "row",
                    "query": f"table == 'design effect (exact)' and {_SHOWN}",
                    "x": "relevant", "y": "ours", "hue": "column", "panel_by": "run",
                    "reference": 1.0,
                    "labels": {"ours": "design effect (variance / SRS variance, same size)",
                               "column": "allocation", "trec5": "TREC-5 (equal shares)",
                               "neyman": "Neyman (oracle)", "relevant": "relevant documents"},
                    "title": "stratified_vs_pooled: design effect of each allocation against "
                             "relevant, a panel per run (cells with submitted = 1000 and "
                             "separation = 2.0)"}),
    Figure("measure_by",
           "Bias of the pooled and the stratified (TREC-5 allocation) estimates against the "
           "topic's number of relevant documents, one panel per run (section 9.3's other "
           "tail: the pool misses more of the relevant documents of a topic that has many).",
           where=_SHOWN,
           options={"measure": "bias", "x": "relevant", "panel_by": "run", "reference": 0.0,
                    "methods": ("pooled", "trec5")}),
    Figure("heat_map",
           "Coverage of the paper's normal interval for run 3 by topic size and set size, "
           "centred on 95%; a system whose sets hold 100 documents or fewer in all is judged "
           "in full (100 judgments), so its interval is exact.",
           where="run == 3 and separation == 2.0",
           options={"measure": "coverage", "method": "trec5", "rows": "relevant",
                    "columns": "submitted", "center": 0.95}),
)


# ---------------------------------------------------------------------------- findings


def _summary_frame(summary: Sequence[Mapping[str, Any]], table: str) -> pd.DataFrame:
    """One table of `summary_table`'s rows, with the MCSE of ``ours`` (a mean of evaluations)."""
    frame = pd.DataFrame.from_records(summary)
    frame = frame[frame["table"] == table]
    return frame.assign(mcse=frame["spread"] / math.sqrt(N_EVALUATIONS))


def _beside(row: pd.Series, *, percent: bool = False, digits: int = 1) -> str:
    """Ours beside the paper's, with one evaluation's sd: the paper's own scale of variation."""
    spread = f"{100 * row['spread']:.1f} points" if percent else f"{row['spread']:.{digits}f}"
    compared = versus_paper(row["ours"], row["mcse"], row["paper"], percent=percent,
                            digits=digits)
    return f"{compared} (one evaluation's sd {spread})"


def _table2_findings(summary: Sequence[Mapping[str, Any]]) -> list[str]:
    counts = _summary_frame(summary, "table2 count").set_index(["row", "column"])
    degenerate = _summary_frame(summary, "table2 degenerate").set_index(["row", "column"])
    totals = "; ".join(f"{row} {_beside(counts.loc[(row, 'total')])}" for row in CATEGORIES)
    by_run = counts.drop(index="total", level="column")
    missed = [f"run {run} {row} {_beside(found)}" for (row, run), found in by_run.iterrows()
              if not abs(found["ours"] - found["paper"]) <= REPRODUCED_WITHIN * found["mcse"]]
    return [
        f"Table 2, all runs, ours the mean of {N_EVALUATIONS} simulated evaluations of "
        f"{int(counts.xs('total', level='column')['paper'].sum())} topic-system pairs (MCSE "
        f"its sd over the root of {N_EVALUATIONS}; the paper's counts are one evaluation, whose "
        f"own spread is about one evaluation's sd): {totals}. Above a zero-width interval: "
        f"{_beside(degenerate.loc[('above', 'total')])}; below one (sampled strata all "
        f"relevant): {_beside(degenerate.loc[('below', 'total')])}.",
        f"By run, {len(missed)} of {len(by_run)} of Table 2's counts are not reproduced"
        + (f": {'; '.join(missed)}." if missed else "."),
    ]


def _table3_findings(summary: Sequence[Mapping[str, Any]]) -> list[str]:
    medians = _summary_frame(summary, "table3 medians").set_index(["row", "column"])
    names = {"submitted": "submitted set", "relevant_in_set": "relevant in the set by pooling",
             "relevant_in_pool": "relevant in the pool"}

    def row(name: str) -> str:
        return "; ".join(f"{label} {_beside(medians.loc[(name, column)])}"
                         for column, label in names.items())

    return [
        f"Table 3's medians over all pairs (the simulator's calibration targets): {row('all')}; "
        f"the share of pooled = stratified "
        f"{_beside(medians.loc[('all', 'equal_share')], percent=True)}.",
        f"Table 3's tails, not targeted by the calibration: pairs whose pooled estimate lies "
        f"below the interval: {row('below')}; above it: {row('above')}.",
    ]


def _rank_findings(summary: Sequence[Mapping[str, Any]]) -> list[str]:
    agreement = _summary_frame(summary, "table1 agreement")
    spearman = agreement[agreement["column"] == "spearman"].set_index("row")
    changes = agreement[agreement["column"] == "topic_top_changes"].set_index("row")
    paired = [f"run {run} {_beside(spearman.loc[f'run {run} pooled vs stratified'], digits=3)}"
              for run in RUNS]

    def span(frame: pd.DataFrame, pair: str, percent: bool = False) -> str:
        values = frame.loc[[f"run {run} {pair}" for run in RUNS], "ours"]
        scale, unit = (100, "%") if percent else (1, "")
        digits = 1 if percent else 3
        low, high = scale * values.min(), scale * values.max()
        return f"{low:.{digits}f}{unit} to {high:.{digits}f}{unit}"

    return [
        f"Table 1: Spearman's correlation between the pooled and the stratified mean-rank "
        f"orderings of the systems: {'; '.join(paired)}.",
        f"Against the true utilities (unknown in TREC-5), the stratified ordering's Spearman "
        f"correlation is {span(spearman, 'stratified vs truth')} by run and the pooled "
        f"ordering's {span(spearman, 'pooled vs truth')}; the best system of a topic differs "
        f"between the pooled and the stratified estimates on "
        f"{span(changes, 'pooled vs stratified', percent=True)} of topics.",
    ]


def _pooled_findings(summary: Sequence[Mapping[str, Any]]) -> list[str]:
    bias = _summary_frame(summary, "pooled bias by topic relevant")
    parts = []
    for band in bias["row"].unique():
        if band == "0":
            continue
        rows = bias[bias["row"] == band]
        missed = rows[rows["column"].str.endswith("share of relevant unjudged")]["ours"]
        error = rows[rows["column"].str.endswith("mean error")]["ours"]
        parts.append(f"{100 * missed.min():.1f}% to {100 * missed.max():.1f}% on topics with "
                     f"{band} relevant (mean error {error.max():.3g} to {error.min():.3g} in "
                     f"utility)")
    return [f"Section 9.3's other tail: by run, the pooled estimate counts as nonrelevant "
            f"this share of the relevant documents of the submitted sets (they lie outside the "
            f"pool): {'; '.join(parts)}."]


def _by_run(flags: pd.Series, runs: pd.Series) -> str:
    """``"2 of 12 in run 1, ..."``: how many cells of each run of the grid are flagged."""
    return ", ".join(f"{int(flags[runs == run].sum())} of {int((runs == run).sum())} in run {run}"
                     for run in sorted(runs.unique()))


def _values(result: StudyResult, methods: Sequence[str], measure: str) -> pd.DataFrame:
    """The run's tidy rows of ``measure`` for ``methods`` (none: an empty frame)."""
    parts = list(result.frames(methods=methods, measures=[measure]))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["position", "method", "value", "mcse", *STUDY.grids["full"].parameters])


def _variance_findings(result: StudyResult) -> list[str]:
    frame = _values(result, ["ratio-neyman-proportional", "ratio-proportional-srs"], "bias")
    sentences = []
    for method, first, second, why in (
            ("ratio-neyman-proportional", "Neyman allocation", "proportional allocation",
             "where the union's optimum starves the strata of a smaller set"),
            ("ratio-proportional-srs", "Proportional allocation", "an equal-size SRS",
             "where the 2-judgment minimum per stratum and integer allocations depart from "
             "proportionality")):
        rows = frame[frame["method"] == method]
        if rows.empty:
            continue
        ratio = rows["value"] + 1.0  # the helper's bias is the exact variance ratio less 1
        above = ratio > 1.0 + _ROUNDING
        means = ratio.groupby(rows["run"]).mean()
        sentences.append(
            f"{first}'s variance over {second}'s (exact) averages "
            f"{', '.join(f'{mean:.3f} in run {run}' for run, mean in means.items())}; it is "
            f"above 1 in {int(above.sum())} of {len(rows)} cells ({_by_run(above, rows['run'])};"
            f" the largest ratio {ratio.max():.4f}), {why}.")
    return sentences


def _coverage_findings(result: StudyResult) -> list[str]:
    methods = ("trec5", "jeffreys", "mover-wilson", "korn-graubard")
    frame = _values(result, methods, "coverage")
    rare = frame[region_mask(frame[["relevant", "submitted"]], _RARE)]
    if rare.empty:
        return []
    parts = []
    for method in methods:
        rows = rare[rare["method"] == method]
        if rows.empty:
            continue
        mean = estimate(float(rows["value"].mean()),
                        float(np.sqrt((rows["mcse"] ** 2).sum()) / len(rows)))
        lowest = extreme(result, method, "coverage", where=_RARE)
        parts.append(f"{method} {mean}, lowest {lowest}")
    return [
        f"Where relevant documents are rare ({_RARE}: {rare['position'].nunique()} cells), mean "
        f"coverage of the 95% intervals: {'; '.join(parts)}. Where a set holds few relevant "
        f"documents, finding one of them lifts the Jeffreys and MOVER-Wilson lower bounds above "
        f"the truth; Korn-Graubard falls where some strata show no relevant document."]


def _design_findings(summary: Sequence[Mapping[str, Any]]) -> list[str]:
    exact = _summary_frame(summary, "design effect (exact)")
    exact = exact.assign(run=exact["row"].str.extract(r"run=(\d)", expand=False).astype(int))
    defined = exact[exact["ours"].notna()]
    trec5 = defined[defined["column"] == "trec5"]
    if trec5.empty:
        return []
    worse = trec5["ours"] > 1.0
    medians = defined.groupby(["column", "run"])["ours"].median()
    shown = "; ".join(
        f"{method} " + ", ".join(f"{value:.2f} in run {run}"
                                 for run, value in medians[method].items())
        for method in ("trec5", "proportional", "neyman"))
    return [
        f"TREC-5's equal allocation has a design effect above 1 (worse than an SRS of the same "
        f"size) in {int(worse.sum())} of the {len(trec5)} cells where it is defined "
        f"({_by_run(worse, trec5['run'])}; at most {trec5['ours'].max():.2f}). Median design "
        f"effects: {shown}."]


def findings(result: StudyResult, summary: Sequence[Mapping[str, Any]]) -> list[str]:
    """Tables 1-3 beside the paper's, the pooled bias, variances, coverage and design effects.

    Read from the run (``result``) and from `summary_table` (``summary``): the paper's
    numbers beside ours, with their difference in MCSE units (`versus_paper`).
    """
    return [*_table2_findings(summary), *_table3_findings(summary),
            *_rank_findings(summary), *_pooled_findings(summary),
            *_variance_findings(result), *_coverage_findings(result),
            *_design_findings(summary)]


STUDY = Study(
    name="stratified_vs_pooled",
    ademp=__doc__,
    version="2",
    grids={
        "quick": Grid({"relevant": [5, 40, 300, 2000], "submitted": [250, 1000, 4000],
                       "separation": [2.0], "run": list(RUNS), "confidence_level": [0.95]},
                      n_replicates=1_500, task_seconds=0.5),
        "full": Grid({"relevant": [2, 5, 10, 20, 40, 80, 150, 300, 600, 1200, 2500],
                      "submitted": [50, 250, 1000, 4000], "separation": [1.5, 2.0, 2.5],
                      "run": list(RUNS), "confidence_level": [0.95]},
                     n_replicates=10_000, task_seconds=0.6),
    },
    truth=truth,
    generate=generate,
    methods=METHODS,
    measures=("bias", "empirical_se", "mse", "model_se", "model_se_error", "coverage", "width",
              "rejection"),
    claims=CLAIMS,
    estimator_methods={"srs": "srs_estimate:utility", "pooled": "pooled_estimate:utility",
                       **{m: f"allocate:{m}" for m in ("trec5", "proportional", "neyman")},
                       "ratio-neyman-proportional": "allocate:neyman",
                       "ratio-proportional-srs": "allocate:proportional",
                       "ratio-trec5-proportional": "allocate:trec5",
                       "srs-mse-ratio": "srs_estimate:utility",
                       "pooled-plus-unjudged": "pooled_estimate:utility",
                       **{m: f"stratified_proportion:{m}"
                          for m in ("jeffreys", "mover-wilson", "korn-graubard", "wald")}},
    figures=FIGURES,
    summary=summary_table,
    findings=findings,
)
