"""Tests of estimators.sampling: Lewis (1996) Figure 2, exact expectations, allocation, intervals.

Exact expectations enumerate every without-replacement sample of a tiny population (or sum the
hypergeometric pmf), so they hold to rounding error and need no Monte Carlo tolerance.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats

from estimators.interval import Interval
from estimators.proportion import proportion_ci
from estimators.sampling import (
    ALLOCATION_METHODS,
    STRATIFIED_METHODS,
    MembershipStrata,
    PooledEstimate,
    StratifiedEstimate,
    StratifiedProportion,
    UtilityEstimate,
    allocate,
    pooled_estimate,
    srs_estimate,
    stratified_proportion,
)

Z95 = float(stats.norm.ppf(0.975))

# --- Lewis (1996), Figure 2 -------------------------------------------------------------------
# Strata 000 .. 111 (digit r: submitted by run r + 1). 000 is the rest of the test set.
RUNS = ("R1", "R2", "R3")
SIZES = [100050, 1000, 10, 200, 0, 0, 0, 40]
TRUE_RELEVANT = [50, 20, 2, 80, 0, 0, 0, 30]
SAMPLED = [0, 30, 10, 30, 0, 0, 0, 30]
POSITIVES = [0, 1, 2, 10, 0, 0, 0, 23]
UTILITY = {"R1": (1.0, -3.0), "R2": (1.0, -1.0), "R3": (3.0, -1.0)}  # eq. 2-4
SET_SIZE = {"R1": 40, "R2": 250, "R3": 1240}
PAPER_P = {"R1": 0.7667, "R2": 0.3973, "R3": 0.1054}  # eq. 14-16
PAPER_U = {"R1": 2.672, "R2": -51.35, "R3": -717.2}  # eq. 20-22, from the rounded p above
PAPER_U_DECIMALS = {"R1": 3, "R2": 2, "R3": 1}  # the paper prints 4 significant figures
PAPER_MSE = {"R1": 39.5, "R2": 1052.0, "R3": 21452.5}  # eq. 36-38
PAPER_HALF = {"R1": 12.3, "R2": 63.6, "R3": 287.1}  # section 8, 1.96 sqrt(MSE)
# Our exact fractions: eq. 14-16 and eq. 35 by hand.
EXACT_P = {
    "R1": Fraction(23, 30),
    "R2": Fraction(10, 250) * Fraction(2, 10) + Fraction(200, 250) * Fraction(10, 30)
    + Fraction(40, 250) * Fraction(23, 30),
    "R3": Fraction(1000, 1240) * Fraction(1, 30) + Fraction(200, 1240) * Fraction(10, 30)
    + Fraction(40, 1240) * Fraction(23, 30),
}
TERM_111 = Fraction(64400, 26100)  # N_h (N_h - n_h) a_h (n_h - a_h) / (n_h^2 (n_h - 1))
TERM_011 = Fraction(6800000, 26100)
TERM_001 = Fraction(28130000, 26100)
EXACT_MSE = {"R1": 16 * TERM_111, "R2": 4 * (TERM_011 + TERM_111),
             "R3": 16 * (TERM_001 + TERM_011 + TERM_111)}


@pytest.fixture
def figure2() -> dict[object, StratifiedEstimate]:
    return MembershipStrata(RUNS, SIZES).estimates(SAMPLED, POSITIVES)


def test_trec5_rule_reproduces_the_figure_2_sample_sizes():
    # Section 5.3: 100 documents, equal shares of 25 over the 4 non-empty submitted strata;
    # 010 holds 10, and its 15 leftover go 5 each to the others: exactly Figure 2's sample.
    assert MembershipStrata(RUNS, SIZES).allocate().tolist() == SAMPLED
    assert allocate([1000, 10, 200, 40]).tolist() == [30, 10, 30, 30]


def test_figure_2_strata_of_each_run(figure2):
    # Section 5.2.1: each run's set is the union of four strata.
    assert figure2["R1"].labels == ("100", "101", "110", "111")
    assert figure2["R2"].labels == ("010", "011", "110", "111")
    assert figure2["R3"].labels == ("001", "011", "101", "111")
    assert {run: est.size for run, est in figure2.items()} == SET_SIZE


@pytest.mark.parametrize("run", RUNS)
def test_figure_2_proportions(figure2, run):
    estimate = figure2[run].estimate
    assert estimate == pytest.approx(float(EXACT_P[run]), rel=1e-14)
    assert round(estimate, 4) == PAPER_P[run]


@pytest.mark.parametrize("run", RUNS)
def test_figure_2_utilities_rounded_as_the_paper_and_unrounded(figure2, run):
    u_a, u_b = UTILITY[run]
    utility = figure2[run].utility(u_a=u_a, u_b=u_b)
    n = SET_SIZE[run]
    # We do NOT round p before multiplying: our u is eq. 25 on the exact p.
    assert utility.estimate == pytest.approx(float(((u_a - u_b) * EXACT_P[run] + u_b) * n),
                                             rel=1e-12)
    # The paper rounds p to 4 decimals first (eq. 20-22); doing the same gives its figures.
    paper_way = ((u_a - u_b) * round(figure2[run].estimate, 4) + u_b) * n
    assert round(paper_way, PAPER_U_DECIMALS[run]) == PAPER_U[run]
    assert round(utility.estimate, PAPER_U_DECIMALS[run]) != PAPER_U[run]  # 2.667, -51.33, -717.3
    # The two differ by the rounding of p, at most (u_a - u_b) N 0.00005.
    assert abs(paper_way - utility.estimate) <= (u_a - u_b) * n * 5e-5


def test_figure_2_unrounded_utilities():
    estimates = MembershipStrata(RUNS, SIZES).estimates(SAMPLED, POSITIVES)
    values = [estimates[r].utility(u_a=UTILITY[r][0], u_b=UTILITY[r][1]).estimate for r in RUNS]
    assert [round(v, 3) for v in values] == [2.667, -51.333, -717.333]


@pytest.mark.parametrize("run", RUNS)
def test_figure_2_mse(figure2, run):
    u_a, u_b = UTILITY[run]
    mse = figure2[run].utility(u_a=u_a, u_b=u_b).mse
    assert mse == pytest.approx(float(EXACT_MSE[run]), rel=1e-12)
    assert round(mse, 1) == PAPER_MSE[run]


@pytest.mark.parametrize("run", RUNS)
def test_figure_2_half_widths(figure2, run):
    u_a, u_b = UTILITY[run]
    utility = figure2[run].utility(u_a=u_a, u_b=u_b)
    assert round(1.96 * utility.standard_error, 1) == PAPER_HALF[run]  # the paper's 1.96
    ci = utility.confidence_interval(0.95, method="wald")
    assert utility.estimate - ci.low == pytest.approx(Z95 * utility.standard_error, rel=1e-12)
    assert round(utility.estimate - ci.low, 1) == PAPER_HALF[run]
    if run == "R1":
        # 2.667 + 12.3 exceeds the largest utility the sample allows: 23 relevant and 7
        # nonrelevant were judged, so at best A = 33, B = 7 and u = 33 - 21 = 12.
        assert ci.high == pytest.approx(12.0, abs=1e-12)
    else:
        assert ci.high - utility.estimate == pytest.approx(Z95 * utility.standard_error,
                                                           rel=1e-12)


def test_figure_2_true_values_and_coverage(figure2):
    true_p = {}
    for run, column in zip(RUNS, range(3), strict=True):
        member = MembershipStrata(RUNS, SIZES).membership[:, column]
        true_p[run] = sum(np.array(TRUE_RELEVANT)[member]) / SET_SIZE[run]
    assert [round(true_p[r], 4) for r in RUNS] == [0.75, 0.448, 0.1048]  # eq. 11-13
    true_u = {r: ((UTILITY[r][0] - UTILITY[r][1]) * true_p[r] + UTILITY[r][1]) * SET_SIZE[r]
              for r in RUNS}
    # Eq. 17-19 print 0.0, -26.0, -719.2; u_3 = 3 * 130 - 1110 is -720 (the paper's
    # (4 x .1048 - 1) x 1240 is also -720.2: eq. 19 has an arithmetic slip).
    assert [round(true_u[r], 6) for r in RUNS] == [0.0, -26.0, -720.0]
    for run in RUNS:
        utility = figure2[run].utility(u_a=UTILITY[run][0], u_b=UTILITY[run][1])
        for method in STRATIFIED_METHODS:
            low, high = utility.confidence_interval(0.95, method=method)
            assert low <= true_u[run] <= high, (run, method)


# --- exact expectations over every without-replacement sample --------------------------------


def all_samples(population: list[list[int]], sampled: list[int]):
    """Every stratified sample (equally likely) as per-stratum relevant counts."""
    per_stratum = [
        [sum(chosen) for chosen in itertools.combinations(labels, n)]
        for labels, n in zip(population, sampled, strict=True)
    ]
    return list(itertools.product(*per_stratum))


def enumerate_moments(population, sampled, u_a=1.0, u_b=-1.0):
    sizes = [len(labels) for labels in population]
    outcomes = all_samples(population, sampled)
    estimates = [StratifiedEstimate(sizes, sampled, a) for a in outcomes]
    p = np.array([e.estimate for e in estimates])
    v = np.array([e.variance for e in estimates])
    u = np.array([e.utility(u_a=u_a, u_b=u_b).estimate for e in estimates])
    mse = np.array([e.utility(u_a=u_a, u_b=u_b).mse for e in estimates])
    return p, v, u, mse


# Strata: 6 documents (2 relevant) sampled 3; 4 (3 relevant) sampled 2; 3 (1 relevant) fully
# sampled; an empty stratum. 20 x 6 x 1 = 120 equally likely samples.
TINY = [[1, 1, 0, 0, 0, 0], [1, 1, 1, 0], [0, 1, 0], []]
TINY_SAMPLED = [3, 2, 3, 0]


def test_stratified_estimators_unbiased_by_enumeration():
    p, v, u, mse = enumerate_moments(TINY, TINY_SAMPLED, u_a=3.0, u_b=-1.0)
    assert p.size == 120
    n_total = sum(len(s) for s in TINY)
    true_p = sum(sum(s) for s in TINY) / n_total
    true_u = (4.0 * true_p - 1.0) * n_total
    assert p.mean() == pytest.approx(true_p, rel=1e-13)  # eq. 7 unbiased
    assert v.mean() == pytest.approx(np.mean((p - true_p) ** 2), rel=1e-12)  # eq. 34 unbiased
    assert u.mean() == pytest.approx(true_u, rel=1e-13)
    assert mse.mean() == pytest.approx(np.mean((u - true_u) ** 2), rel=1e-12)  # eq. 35


def test_stratified_variance_matches_cochrans_closed_form():
    # Independent formula: Var = sum W_h^2 S_h^2 (1 - f_h) / n_h, S_h^2 = N_h P_h Q_h / (N_h - 1)
    # (Cochran 1977, sections 5.3 and 5.10), against the enumerated variance.
    p, _, _, _ = enumerate_moments(TINY, TINY_SAMPLED)
    sizes = [len(s) for s in TINY if s]
    n_total = sum(sizes)
    closed = 0.0
    for labels, n in zip(TINY, TINY_SAMPLED, strict=True):
        if not labels:
            continue
        big_n, share = len(labels), sum(labels) / len(labels)
        s2 = big_n * share * (1 - share) / (big_n - 1)
        closed += (big_n / n_total) ** 2 * s2 * (1 - n / big_n) / n
    assert np.var(p) == pytest.approx(closed, rel=1e-12)


def test_srs_estimators_unbiased_by_enumeration():
    population = [[1, 1, 1, 0, 0, 0, 0]]
    p, v, u, mse = enumerate_moments(population, [3], u_a=1.0, u_b=-3.0)
    assert p.size == 35
    assert p.mean() == pytest.approx(3 / 7, rel=1e-13)  # eq. 28
    assert v.mean() == pytest.approx(np.var(p), rel=1e-12)  # eq. 29
    assert u.mean() == pytest.approx((4 * 3 / 7 - 3) * 7, rel=1e-12)
    assert mse.mean() == pytest.approx(np.mean((u - (4 * 3 / 7 - 3) * 7) ** 2), rel=1e-12)
    one = srs_estimate(7, 3, 2)
    assert one.estimate == 2 / 3
    assert one.variance == pytest.approx((7 - 3) * 2 * 1 / (9 * 2 * 7), rel=1e-15)


def test_fully_sampled_stratum_contributes_no_variance():
    est = StratifiedEstimate([5, 8], [5, 4], [2, 1])
    assert est.variance == pytest.approx((8 / 13) ** 2 * srs_estimate(8, 4, 1).variance,
                                         rel=1e-14)
    assert est.fully_sampled_strata == ("0",)


@st.composite
def small_populations(draw):
    strata = draw(st.integers(1, 3))
    sizes, relevant, sampled = [], [], []
    for _ in range(strata):
        size = draw(st.integers(1, 7))
        sizes.append(size)
        relevant.append(draw(st.integers(0, size)))
        # n_h >= 2 (or the whole stratum) keeps eq. 33 defined.
        sampled.append(size if size < 2 else draw(st.integers(2, size)))
    return sizes, relevant, sampled


@settings(max_examples=60)
@given(small_populations())
def test_unbiased_by_exact_hypergeometric_expectation(population):
    sizes, relevant, sampled = population
    supports = [np.arange(n + 1) for n in sampled]
    pmfs = [stats.hypergeom.pmf(k, big_n, r, n)
            for k, big_n, r, n in zip(supports, sizes, relevant, sampled, strict=True)]
    mean_p = mean_v = mean_p2 = 0.0
    for combo in itertools.product(*[range(n + 1) for n in sampled]):
        weight = math.prod(pmf[k] for pmf, k in zip(pmfs, combo, strict=True))
        if weight == 0.0:
            continue
        est = StratifiedEstimate(sizes, sampled, list(combo))
        mean_p += weight * est.estimate
        mean_p2 += weight * est.estimate**2
        mean_v += weight * est.variance
    true_p = sum(relevant) / sum(sizes)
    assert mean_p == pytest.approx(true_p, abs=1e-12)
    assert mean_v == pytest.approx(mean_p2 - true_p**2, abs=1e-12)


# --- pooled estimate ---------------------------------------------------------------------------


@given(
    st.lists(st.tuples(st.booleans(), st.booleans()), max_size=60),
    st.integers(-5, 5), st.integers(1, 6),
)
def test_pooled_estimate_never_exceeds_the_truth(documents, u_b, step):
    u_a = u_b + step  # any u_a > u_b
    relevant = sum(r for r, _ in documents)
    judged = sum(j for _, j in documents)
    judged_relevant = sum(r and j for r, j in documents)
    truth = u_a * relevant + u_b * (len(documents) - relevant)
    pooled = pooled_estimate(len(documents), judged, judged_relevant, u_a=u_a, u_b=u_b)
    assert pooled.estimate <= truth
    if judged == len(documents):
        assert pooled.estimate == truth
    assert pooled.unjudged == len(documents) - judged


def test_pooled_estimate_broadcasts():
    pooled = pooled_estimate([250, 40], [120, 40], [90, 30], u_a=1, u_b=-3)
    assert isinstance(pooled, PooledEstimate)
    np.testing.assert_array_equal(pooled.estimate, [90 - 3 * 160, 30 - 3 * 10])
    np.testing.assert_array_equal(pooled.unjudged, [130, 0])


@pytest.mark.parametrize(
    "args,kwargs,error,fragment",
    [
        ((10, 11, 0), {}, ValueError, "`judged` must not exceed `size`"),
        ((10, 5, 6), {}, ValueError, "`relevant` must not exceed `judged`"),
        ((10, [5, 6], [6, 1]), {}, ValueError, "relevant=6 > judged=5 at index 0"),
        ((10, -1, 0), {}, ValueError, "`judged` must be non-negative"),
        ((10, 5, 1.5), {}, ValueError, "`relevant` must hold whole numbers"),
        (([1, 2], [1, 2, 3], 0), {}, ValueError, "must broadcast together"),
        ((10, 5, 1), {"u_a": -1, "u_b": 1}, ValueError, "`u_a` must be greater than `u_b`"),
    ],
)
def test_pooled_estimate_bad_input(args, kwargs, error, fragment):
    options = {"u_a": 1, "u_b": -1} | kwargs
    with pytest.raises(error, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        pooled_estimate(*args, **options)


# --- vectorized estimates for many samples of one design ---------------------------------------


@pytest.mark.parametrize(
    "sizes,sampled",
    [
        ([1000, 200, 0, 40], [3, 3, 0, 2]),  # Figure 2's R3 strata (011 empty), small samples
        ([6, 0, 4, 1, 5], [3, 0, 1, 1, 5]),  # empty, n_h = 1 < N_h, n_h = N_h = 1, fully sampled
    ],
)
def test_stratified_proportion_agrees_with_stratified_estimate_row_by_row(sizes, sampled):
    rows = np.array(list(itertools.product(*(range(n + 1) for n in sampled))))
    estimate, variance = stratified_proportion(sizes, sampled, rows)
    assert estimate.shape == variance.shape == (len(rows),)
    for i, row in enumerate(rows):
        one = StratifiedEstimate(sizes, sampled, row)
        assert estimate[i] == pytest.approx(one.estimate, rel=1e-15)
        np.testing.assert_allclose(variance[i], one.variance, rtol=1e-15, atol=0.0)


def test_stratified_proportion_of_figure_2_and_of_an_srs():
    estimate, variance = stratified_proportion(SIZES[1:], SAMPLED[1:], POSITIVES[1:])
    assert isinstance(estimate, float) and isinstance(variance, float)
    # the eight strata without 000 are the union of the runs' sets; R3 is 001, 011, 101, 111
    r3 = [1, 3, 5, 7]
    p3, v3 = stratified_proportion(np.take(SIZES, r3), np.take(SAMPLED, r3),
                                   np.take(POSITIVES, r3))
    assert p3 == pytest.approx(float(EXACT_P["R3"]), rel=1e-14)
    assert 16 * 1240**2 * v3 == pytest.approx(float(EXACT_MSE["R3"]), rel=1e-12)
    found = np.arange(31)[:, None]
    p, v = stratified_proportion([40], [30], found)
    for a in range(31):
        one = srs_estimate(40, 30, a)
        assert (p[a], v[a]) == (pytest.approx(one.estimate, rel=1e-15),
                                pytest.approx(one.variance, rel=1e-15, abs=0.0))


def test_stratified_proportion_broadcasts_over_leading_axes():
    positives = np.array([[[1, 10, 0, 23], [0, 0, 0, 0]], [[30, 30, 0, 30], [1, 5, 0, 23]]])
    estimate, variance = stratified_proportion([1000, 200, 0, 40], [30, 30, 0, 30], positives)
    assert estimate.shape == variance.shape == (2, 2)
    assert estimate[0, 0] == pytest.approx(float(EXACT_P["R3"]), rel=1e-14)
    assert (estimate[0, 1], variance[0, 1]) == (0.0, 0.0)
    assert (estimate[1, 0], variance[1, 0]) == (1.0, 0.0)


def test_stratified_proportion_of_an_empty_population_is_nan():
    estimate, variance = stratified_proportion([0, 0], [0, 0], [[0, 0], [0, 0]])
    assert np.isnan(estimate).all() and np.isnan(variance).all()
    assert math.isnan(stratified_proportion([0], [0], [0]).estimate)


@pytest.mark.parametrize(
    "args,error,fragment",
    [
        (([10, 5], [4, 2], [[0, 0], [1, 3]]), ValueError,
         "`positives` must not exceed `sampled`; got positives=3 > sampled=2 at index (1, 1)."),
        (([10, 5], [4, 2], [[0, 0, 0]]), ValueError,
         "`positives` must have one column per stratum (shape (..., 2)); got shape (1, 3)."),
        (([10, 5], [4, 2], 0), ValueError, "`positives` must have one column per stratum"),
        (([10, 5], [4, 2], [[0, -1]]), ValueError,
         "`positives` must be non-negative; got -1 at index (0, 1)."),
        (([10, 5], [4, 2], [[0.5, 1]]), ValueError, "`positives` must hold whole numbers"),
        (([10, 5], [4, 2], [["0", "1"]]), TypeError, "`positives` must be an integer count"),
        (([[10, 5]], [4, 2], [[0, 1]]), ValueError, "`sizes` must be one-dimensional"),
        (([], [], [[]]), ValueError, "`sizes` must hold at least one stratum"),
        (([10, 5], [4], [[0, 1]]), ValueError,
         "`sampled` must have one entry per stratum of `sizes` (2); got length 1."),
        (([10, 5], [11, 2], [[0, 1]]), ValueError,
         "`sampled` must not exceed `sizes`; got sampled=11 > size=10 in stratum '0' (index 0)."),
        (([10, 0], [4, 1], [[0, 0]]), ValueError, "`sampled` must be 0 in an empty stratum"),
    ],
)
def test_stratified_proportion_bad_input(args, error, fragment):
    with pytest.raises(error, match=re.escape(fragment)):
        stratified_proportion(*args)


# --- allocation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sizes,total,expected",
    [
        ([1000, 10, 200, 40], 100, [30, 10, 30, 30]),  # Figure 2
        ([3, 5, 1000, 1000, 0], 100, [3, 5, 46, 46, 0]),  # two strata used up at once
        ([10, 20, 30, 1000], 100, [10, 20, 30, 40]),  # leftovers cascade: 25, then 30, 35, 40
        ([1000, 1000, 1000], 100, [34, 33, 33]),  # remainder: equal sizes, lower index
        ([500, 1000, 800], 100, [33, 34, 33]),  # remainder: the larger stratum
        ([3, 4, 0], 100, [3, 4, 0]),  # fewer documents than the budget: take all
        ([0, 0], 100, [0, 0]),
    ],
)
def test_trec5_allocation(sizes, total, expected):
    assert allocate(sizes, total).tolist() == expected


def test_proportional_and_neyman_allocation_of_figure_2():
    sizes = [1000, 10, 200, 40]
    # Shares 80, 0.8, 16, 3.2: 010 is raised to the minimum of 2 and the rest re-shared.
    assert allocate(sizes, method="proportional").tolist() == [79, 2, 16, 3]
    assert allocate(sizes, method="proportional", minimum=0).tolist() == [80, 1, 16, 3]
    priors = [0.02, 0.2, 0.4, 0.75]
    weights = np.array(sizes) * np.sqrt(np.array(priors) * (1 - np.array(priors)))
    by_hand = 100 * weights / weights.sum()  # 53.99, 1.54, 37.79, 6.68 before the minimum
    got = allocate(sizes, method="neyman", proportions=priors, minimum=0)
    assert np.all(np.abs(got - by_hand) < 1) and got.sum() == 100
    assert allocate(sizes, method="neyman", proportions=priors).tolist() == [54, 2, 37, 7]
    # Equal priors make Neyman allocation proportional.
    np.testing.assert_array_equal(
        allocate(sizes, method="neyman", proportions=[0.3] * 4),
        allocate(sizes, method="proportional"))


@settings(max_examples=200)
@given(
    st.lists(st.integers(0, 300), min_size=1, max_size=8),
    st.integers(1, 400),
    st.sampled_from(ALLOCATION_METHODS),
    st.integers(0, 3),
    st.data(),
)
def test_allocation_invariants(sizes, total, method, minimum, data):
    sizes_ = np.array(sizes)
    floor = np.minimum(minimum, sizes_)
    priors = None
    if method == "neyman":
        priors = data.draw(st.lists(st.floats(0.01, 0.99), min_size=len(sizes),
                                    max_size=len(sizes)))
    if floor.sum() > min(total, sizes_.sum()):
        with pytest.raises(ValueError, match="`total` must be at least"):
            allocate(sizes, total, method=method, minimum=minimum, proportions=priors)
        return
    n = allocate(sizes, total, method=method, minimum=minimum, proportions=priors)
    assert n.sum() == min(total, sizes_.sum())
    assert np.all(n <= sizes_) and np.all(n >= floor)
    # Some lam makes every share clip(lam w_h, floor_h, N_h) round to n_h: a stratum above its
    # floor had lam w_h > n_h - 1, one below its size had lam w_h < n_h + 1.
    if method == "trec5":
        weights = (sizes_ > 0).astype(float)
    elif method == "proportional":
        weights = sizes_.astype(float)
    else:
        weights = sizes_ * np.sqrt(np.array(priors) * (1 - np.array(priors)))
    movable = (weights > 0) & (floor < sizes_)
    above, below = movable & (n > floor), movable & (n < sizes_)
    if above.any() and below.any():
        assert np.max((n[above] - 1) / weights[above]) <= np.min((n[below] + 1) / weights[below])


@pytest.mark.parametrize(
    "kwargs,error,fragment",
    [
        ({"method": "equal"}, ValueError, "`method` must be one of"),
        ({"method": "neyman"}, ValueError, "required by method='neyman'"),
        ({"proportions": [0.1, 0.2]}, ValueError, "used only by method='neyman'"),
        ({"method": "neyman", "proportions": [0.1, 1.0]}, ValueError, "strictly between 0 and 1"),
        ({"method": "neyman", "proportions": [0.1]}, ValueError, "one entry per stratum"),
        ({"total": 0}, ValueError, "`total` must be a positive integer"),
        ({"total": 2.5}, TypeError, "`total` must be a positive integer"),
        ({"minimum": -1}, ValueError, "`minimum` must be a non-negative integer"),
        ({"total": 3}, ValueError, "`total` must be at least 4"),
    ],
)
def test_allocation_bad_input(kwargs, error, fragment):
    with pytest.raises(error, match=fragment):
        allocate([50, 60], **kwargs)


def test_allocation_bad_sizes():
    with pytest.raises(ValueError, match="`sizes` must be non-negative; got -1 at index 1"):
        allocate([5, -1])
    with pytest.raises(ValueError, match="one-dimensional"):
        allocate([[5, 1]])
    with pytest.raises(ValueError, match="at least one stratum"):
        allocate([])


# --- membership strata -------------------------------------------------------------------------


def test_strata_from_documents():
    docs = [{"R1", "R2", "R3"}, ["R3"], ("R2", "R3"), {"R3"}, set(), ["R2", "R2"]]
    strata = MembershipStrata.from_documents(docs, RUNS)
    assert strata.labels == ("000", "001", "010", "011", "100", "101", "110", "111")
    assert strata.sizes.tolist() == [1, 2, 1, 1, 0, 0, 0, 1]
    assert strata.stratum_of(docs).tolist() == [7, 1, 3, 1, 0, 2]
    # Figure 1 / section 5.2.1: the strata making up each run's set.
    member = strata.membership
    assert [strata.labels[k] for k in np.flatnonzero(member[:, 0])] == ["100", "101", "110",
                                                                       "111"]
    assert [strata.labels[k] for k in np.flatnonzero(member[:, 2])] == ["001", "011", "101",
                                                                       "111"]


def test_run_estimates_equal_direct_stratified_estimates(figure2):
    direct = StratifiedEstimate([10, 200, 0, 40], [10, 30, 0, 30], [2, 10, 0, 23])
    assert figure2["R2"].estimate == direct.estimate
    assert figure2["R2"].variance == direct.variance
    assert figure2["R2"].fully_sampled_strata == ("010",)


def test_a_run_that_submitted_nothing_has_utility_zero():
    strata = MembershipStrata(["A", "B"], [5, 0, 20, 0])  # nobody submitted by run B
    runs = strata.estimates([0, 0, 10, 0], [0, 0, 4, 0])
    empty = runs["B"]
    assert empty.size == 0 and math.isnan(empty.estimate) and math.isnan(empty.variance)
    utility = empty.utility(u_a=1, u_b=-1)
    assert (utility.estimate, utility.mse) == (0.0, 0.0)
    assert tuple(utility.confidence_interval()) == (0.0, 0.0)
    low, high = empty.confidence_interval()
    assert math.isnan(low) and math.isnan(high)
    assert runs["A"].estimate == 0.4


@pytest.mark.parametrize(
    "call,error,fragment",
    [
        (lambda: MembershipStrata.from_documents([{"R4"}], RUNS), ValueError,
         "got 'R4' for document 0"),
        (lambda: MembershipStrata.from_documents([{"R1"}, "R2"], RUNS), TypeError,
         "for document 1"),
        (lambda: MembershipStrata(["R1", "R1"], [0] * 4), ValueError, "`runs` must be distinct"),
        (lambda: MembershipStrata("R1", [0, 0]), TypeError, "`runs` must be a sequence"),
        (lambda: MembershipStrata([f"R{i}" for i in range(17)], [0]), ValueError,
         "between 1 and 16 runs"),
        (lambda: MembershipStrata(RUNS, [1, 2, 3]), ValueError, "2^3 = 8"),
        (lambda: MembershipStrata(RUNS, SIZES).estimates(SAMPLED, POSITIVES[:7]), ValueError,
         "`positives` must have one entry per stratum"),
    ],
)
def test_membership_bad_input(call, error, fragment):
    with pytest.raises(error, match=fragment.replace("^", r"\^")):
        call()


# --- undefined cases and degeneracy ------------------------------------------------------------


def test_one_sampled_document_makes_the_variance_unestimable():
    est = StratifiedEstimate([100, 50], [30, 1], [3, 0], labels=["big", "small"])
    assert est.unestimable_strata == ("small",)
    assert math.isnan(est.variance) and math.isnan(est.utility(u_a=1, u_b=-1).mse)
    for method in ("wald", "korn-graubard"):
        low, high = est.confidence_interval(method=method)
        assert math.isnan(low) and math.isnan(high)
    for method in ("jeffreys", "mover-wilson"):
        low, high = est.confidence_interval(method=method)
        assert 0.0 <= low < est.estimate < high <= 1.0


def test_one_document_strata_fully_sampled_are_fine():
    est = StratifiedEstimate([1, 1, 10], [1, 1, 5], [1, 0, 2])
    assert est.unestimable_strata == () and est.fully_sampled_strata == ("0", "1")
    assert est.variance == pytest.approx((10 / 12) ** 2 * srs_estimate(10, 5, 2).variance)


@pytest.mark.parametrize("positives", [[0, 0], [30, 30]])
def test_zero_or_all_positives_do_not_degenerate(positives):
    # Lewis (1996), section 9.3: no relevant document sampled gives a zero variance estimate and
    # a point interval (32 of 48 cases). Only "wald" may degenerate.
    est = StratifiedEstimate([600, 300], [30, 30], positives)
    assert est.variance == 0.0 and est.boundary_strata == ("0", "1")
    for method in STRATIFIED_METHODS:
        ci = est.confidence_interval(method=method)
        if method == "wald":
            assert ci.low == ci.high == est.estimate
        else:
            assert ci.width > 0.02, method
            assert ci.low <= est.estimate <= ci.high


def test_a_fully_sampled_population_is_known_exactly():
    est = StratifiedEstimate([4, 6], [4, 6], [1, 5])
    for method in STRATIFIED_METHODS:
        assert tuple(est.confidence_interval(method=method)) == (0.6, 0.6)
    assert est.variance == 0.0


def exact_coverage(sizes, relevant, sampled, method, level=0.95):
    """Coverage of the true p, summed exactly over the hypergeometric sampling distribution."""
    true_p = sum(relevant) / sum(sizes)
    supports = [np.arange(n + 1) for n in sampled]
    pmfs = [stats.hypergeom.pmf(k, big_n, r, n)
            for k, big_n, r, n in zip(supports, sizes, relevant, sampled, strict=True)]
    covered = 0.0
    for combo in itertools.product(*supports):
        weight = math.prod(pmf[k] for pmf, k in zip(pmfs, combo, strict=True))
        if weight > 0.0:
            low, high = StratifiedEstimate(sizes, sampled, list(combo)).confidence_interval(
                level, method=method)
            covered += weight * (low <= true_p <= high)
    return covered


# Section 9.3's worst case: a large set with few relevant documents (their Table 3: median
# size 256, 6.5 relevant); here 256 documents, 6 relevant, in two strata sampled 50 + 50.
HARD = ([200, 56], [4, 2], [50, 50])
# Measured exact coverages: jeffreys 0.9603, mover-wilson 0.9603, korn-graubard 0.6863,
# wald 0.6868.


@pytest.mark.parametrize("method,low,high", [
    ("jeffreys", 0.95, 1.0), ("mover-wilson", 0.95, 1.0),
    ("korn-graubard", 0.0, 0.75), ("wald", 0.0, 0.75),
])
def test_exact_coverage_in_the_papers_worst_case(method, low, high):
    assert low <= exact_coverage(*HARD, method) <= high


@pytest.mark.parametrize("method", ["jeffreys", "mover-wilson", "korn-graubard"])
def test_exact_coverage_of_srs_with_a_rare_positive(method):
    # N = 500 with 5 relevant, n = 30: most samples show none. Wald covers 0.267 of the time.
    assert exact_coverage([500], [5], [30], method) >= 0.95
    assert exact_coverage([500], [5], [30], "wald") < 0.3


# The Figure 2 populations (true relevant counts) under the TREC-5 allocation: exact coverage of
# the nominal 95% intervals, as quoted in the module docstring.
FIGURE2_POPULATIONS = {
    "R1": ([40], [30], [30]),
    "R2": ([10, 200, 40], [2, 80, 30], [10, 30, 30]),
    "R3": ([1000, 200, 40], [20, 80, 30], [30, 30, 30]),
}


@pytest.mark.parametrize("run,method,expected", [
    ("R1", "jeffreys", 0.99261), ("R1", "mover-wilson", 0.91480),
    ("R1", "korn-graubard", 0.95025), ("R1", "wald", 0.95025),
    ("R2", "jeffreys", 0.94784), ("R2", "mover-wilson", 0.94107),
    ("R2", "korn-graubard", 0.95728), ("R2", "wald", 0.94216),
    pytest.param("R3", "jeffreys", 0.96259, marks=pytest.mark.slow),
    ("R3", "mover-wilson", 0.94495), ("R3", "wald", 0.86220),
])
def test_exact_coverage_in_the_figure_2_populations(run, method, expected):
    assert exact_coverage(*FIGURE2_POPULATIONS[run], method) == pytest.approx(expected, abs=1e-5)


# --- interval methods against independent computations -----------------------------------------


def test_mover_wilson_single_stratum_solves_the_hypergeometric_score_equation():
    big_n, n, a = 200, 30, 10
    est = srs_estimate(big_n, n, a)
    p_hat = a / n
    factor = (big_n - n) / (n * (big_n - 1))

    def score(p):
        return (p_hat - p) ** 2 - Z95**2 * factor * p * (1 - p)

    low = optimize.brentq(score, 1e-9, p_hat)
    high = optimize.brentq(score, p_hat, 1 - 1e-9)
    ci = est.confidence_interval(method="mover-wilson")
    assert (ci.low, ci.high) == pytest.approx((low, high), abs=1e-10)


def test_mover_wilson_tends_to_wilson_for_a_huge_population():
    est = srs_estimate(10**13, 27, 18)
    wilson = proportion_ci(18, 27, method="wilson")
    ci = est.confidence_interval(method="mover-wilson")
    assert (ci.low, ci.high) == pytest.approx((wilson.low, wilson.high), abs=1e-9)


def test_mover_wilson_two_strata_by_hand():
    est = StratifiedEstimate([100, 300], [20, 30], [5, 0])
    bounds = []
    for big_n, n, a in ((100, 20, 5), (300, 30, 0)):
        bounds.append(srs_estimate(big_n, n, a).confidence_interval(method="mover-wilson"))
    w = np.array([0.25, 0.75])
    p_h = np.array([0.25, 0.0])
    low = est.estimate - math.hypot(*(w * (p_h - [b.low for b in bounds])))
    high = est.estimate + math.hypot(*(w * ([b.high for b in bounds] - p_h)))
    ci = est.confidence_interval(method="mover-wilson")
    assert (ci.low, ci.high) == pytest.approx((max(low, 5 / 400), high), abs=1e-12)


def test_korn_graubard_is_clopper_pearson_at_the_effective_size():
    est = StratifiedEstimate([1000, 200], [30, 30], [3, 12])
    p, var = est.estimate, est.variance
    n_eff = p * (1 - p) / var
    low = stats.beta.ppf(0.025, n_eff * p, n_eff * (1 - p) + 1)
    high = stats.beta.ppf(0.975, n_eff * p + 1, n_eff * (1 - p))
    ci = est.confidence_interval(method="korn-graubard")
    assert (ci.low, ci.high) == pytest.approx((low, high), abs=1e-10)


def test_korn_graubard_without_variation_uses_the_design_size():
    # Zero variance estimate: n* is the design's size under a common p; for one stratum,
    # n (N - 1) / (N - n), and with x* = 0 the Clopper-Pearson upper bound 1 - (a/2)^(1/n*).
    n_star = 20 * 499 / 480
    ci = srs_estimate(500, 20, 0).confidence_interval(method="korn-graubard")
    assert ci.high == pytest.approx(1 - 0.025 ** (1 / n_star), rel=1e-12)


def test_jeffreys_single_stratum_is_a_beta_binomial_quantile():
    big_n, n, a = 300, 25, 4
    unseen = stats.betabinom(big_n - n, a + 0.5, n - a + 0.5)
    ci = srs_estimate(big_n, n, a).confidence_interval(0.9, method="jeffreys")
    # Largest L with P(T < L) <= 0.05 and smallest U with P(T > U) <= 0.05.
    low_count = max(k for k in range(big_n - n + 1) if unseen.cdf(k - 1) <= 0.05)
    high_count = min(k for k in range(big_n - n + 1) if unseen.sf(k) <= 0.05)
    assert (ci.low, ci.high) == pytest.approx(((a + low_count) / big_n,
                                               (a + high_count) / big_n), abs=1e-12)


def test_jeffreys_two_strata_by_brute_force_convolution():
    sizes, sampled, positives = [40, 25], [10, 5], [2, 5]
    first = stats.betabinom.pmf(np.arange(31), 30, 2.5, 8.5)
    second = stats.betabinom.pmf(np.arange(21), 20, 5.5, 0.5)
    total = np.zeros(51)
    for i, j in itertools.product(range(31), range(21)):
        total[i + j] += first[i] * second[j]
    cdf = np.cumsum(total)
    low_count = int(np.sum(cdf <= 0.025))
    high_count = int(np.argmax(cdf >= 0.975))
    ci = StratifiedEstimate(sizes, sampled, positives).confidence_interval(method="jeffreys")
    assert (ci.low, ci.high) == pytest.approx(((7 + low_count) / 65, (7 + high_count) / 65),
                                              abs=1e-12)


def _unsampled_positives_by_enumeration(sizes, sampled, positives):
    """Exact posterior pmf of T, the relevant documents among the unsampled ones (fractions).

    Independent of the module (no scipy): each stratum's unsampled documents are drawn one by
    one from a Polya urn that starts with a_h + 1/2 relevant and n_h - a_h + 1/2 nonrelevant
    balls (the Beta(1/2, 1/2)-binomial predictive, Ericson 1969). Every sequence of draws is
    enumerated, and the strata's pmfs are convolved by a direct double sum.
    """
    total = [Fraction(1)]
    half = Fraction(1, 2)
    for size, n, a in zip(sizes, sampled, positives, strict=True):
        unsampled = size - n
        stratum = [Fraction(0)] * (unsampled + 1)
        for sequence in itertools.product((0, 1), repeat=unsampled):
            chance, hits = Fraction(1), 0
            for drawn, relevant in enumerate(sequence):
                balls = n + 1 + drawn  # (a + 1/2) + (n - a + 1/2) + the documents drawn
                chance *= (a + half + hits if relevant else n - a + half + drawn - hits) / balls
                hits += relevant
            stratum[hits] += chance
        convolved = [Fraction(0)] * (len(total) + unsampled)
        for (i, p), (j, r) in itertools.product(enumerate(total), enumerate(stratum)):
            convolved[i + j] += p * r
        total = convolved
    assert sum(total) == 1
    return total


def _tail(level, alternative):
    level = Fraction(level)  # the levels below are dyadic: exact in binary
    return (1 - level) / 2 if alternative == "two-sided" else 1 - level


# (sizes, sampled, positives, level, alternative, the bound worked out by hand). Posterior pmfs
# of T: one stratum N = 2, n = 1, a = 1: (1/4, 3/4); N = 3, n = 1, a = 1: (1/8, 1/4, 5/8);
# a = 0 reverses them; two strata N_h = 2, n_h = 1, a_h = 1: (1/16, 6/16, 9/16). Each level puts
# its tail exactly on a step of the CDF, where only "<=" keeps the step's count.
CDF_STEP_LOWER = [
    ([2], [1], [1], 0.5, "two-sided", Fraction(2, 2)),  # P(T < 1) = 1/4 = tail: L = 1
    ([3], [1], [1], 0.75, "two-sided", Fraction(2, 3)),  # P(T < 1) = 1/8 = tail: L = 1
    ([3], [1], [1], 0.25, "two-sided", Fraction(3, 3)),  # P(T < 2) = 3/8 = tail: L = 2
    ([3], [1], [1], 0.875, "greater", Fraction(2, 3)),  # one-sided tail 1/8: L = 1
    ([2, 2], [1, 1], [1, 1], 0.875, "two-sided", Fraction(3, 4)),  # P(T < 1) = 1/16: L = 1
]
CDF_STEP_UPPER = [  # P(T > U) = tail: U is the step's count
    ([2], [1], [0], 0.5, "two-sided", Fraction(0, 2)),  # P(T > 0) = 1/4: U = 0
    ([3], [1], [0], 0.75, "two-sided", Fraction(1, 3)),  # P(T > 1) = 1/8: U = 1
    ([3], [1], [0], 0.25, "two-sided", Fraction(0, 3)),  # P(T > 0) = 3/8: U = 0
    ([3], [1], [0], 0.875, "less", Fraction(1, 3)),  # one-sided tail 1/8: U = 1
    ([2, 2], [1, 1], [0, 0], 0.9375, "less", Fraction(1, 4)),  # P(T > 1) = 1/16: U = 1
]


@pytest.mark.parametrize(("sizes", "sampled", "positives", "level", "alternative", "by_hand"),
                         CDF_STEP_LOWER)
def test_stratified_jeffreys_quantile_search_at_a_cdf_step_takes_the_largest_bound(
        sizes, sampled, positives, level, alternative, by_hand):
    """The documented rule, "largest L with P(T < L) <= tail", where P(T < L) equals the tail."""
    pmf = _unsampled_positives_by_enumeration(sizes, sampled, positives)
    tail = _tail(level, alternative)
    below = [sum(pmf[:bound], Fraction(0)) for bound in range(len(pmf))]  # P(T < L)
    assert tail in below  # the case is a tie, not a bound strictly inside a step
    largest = max(bound for bound, mass in enumerate(below) if mass <= tail)
    assert Fraction(sum(positives) + largest, sum(sizes)) == by_hand
    ci = StratifiedEstimate(sizes, sampled, positives).confidence_interval(
        level, method="jeffreys", alternative=alternative)
    assert ci.low == float(by_hand)


@pytest.mark.parametrize(("sizes", "sampled", "positives", "level", "alternative", "by_hand"),
                         CDF_STEP_UPPER)
def test_stratified_jeffreys_quantile_search_at_a_cdf_step_takes_the_smallest_upper_bound(
        sizes, sampled, positives, level, alternative, by_hand):
    """The documented rule, "smallest U with P(T > U) <= tail", where P(T > U) equals the tail."""
    pmf = _unsampled_positives_by_enumeration(sizes, sampled, positives)
    tail = _tail(level, alternative)
    above = [sum(pmf[bound + 1:], Fraction(0)) for bound in range(len(pmf))]  # P(T > U)
    assert tail in above
    smallest = min(bound for bound, mass in enumerate(above) if mass <= tail)
    assert Fraction(sum(positives) + smallest, sum(sizes)) == by_hand
    ci = StratifiedEstimate(sizes, sampled, positives).confidence_interval(
        level, method="jeffreys", alternative=alternative)
    assert ci.high == float(by_hand)


@st.composite
def stratified_samples(draw):
    strata = draw(st.integers(1, 4))
    sizes = [draw(st.integers(1, 60)) for _ in range(strata)]
    sampled = [draw(st.integers(min(2, s), s)) for s in sizes]
    positives = [draw(st.integers(0, n)) for n in sampled]
    return StratifiedEstimate(sizes, sampled, positives)


@settings(max_examples=150)
@given(stratified_samples(), st.sampled_from(STRATIFIED_METHODS))
def test_interval_properties(est, method):
    certain_low = est.positives.sum() / est.size
    certain_high = (est.positives.sum() + (est.sizes - est.sampled).sum()) / est.size
    intervals = [est.confidence_interval(level, method=method) for level in (0.8, 0.95, 0.99)]
    for ci in intervals:
        assert certain_low - 1e-12 <= ci.low <= ci.high <= certain_high + 1e-12
        if method != "jeffreys":  # a posterior quantile need not bracket the sample mean
            assert ci.low - 1e-12 <= est.estimate <= ci.high + 1e-12
    for narrow, wide in itertools.pairwise(intervals):
        assert wide.low <= narrow.low + 1e-12 and narrow.high <= wide.high + 1e-12
    # The one-sided bound at level 1 - a is the two-sided bound at level 1 - 2a.
    two = est.confidence_interval(0.9, method=method)
    lower = est.confidence_interval(0.95, method=method, alternative="greater")
    upper = est.confidence_interval(0.95, method=method, alternative="less")
    assert lower.low == pytest.approx(two.low, abs=1e-12)
    assert upper.high == pytest.approx(two.high, abs=1e-12)
    assert lower.high == pytest.approx(certain_high) and upper.low == pytest.approx(certain_low)
    # The utility interval is the proportion interval mapped through eq. 25.
    utility = est.utility(u_a=3, u_b=-1).confidence_interval(0.9, method=method)
    assert utility.low == pytest.approx((4 * two.low - 1) * est.size, abs=1e-9)
    assert utility.high == pytest.approx((4 * two.high - 1) * est.size, abs=1e-9)


def test_interval_metadata_and_defaults():
    est = srs_estimate(100, 10, 3)
    ci = est.confidence_interval()
    assert isinstance(ci, Interval)
    assert (ci.method, ci.confidence_level, ci.alternative) == ("jeffreys", 0.95, "two-sided")
    utility = est.utility(u_a=1, u_b=-1)
    assert isinstance(utility, UtilityEstimate)
    assert utility.confidence_interval(0.9, method="wald", alternative="less").alternative == "less"


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args,error,fragment",
    [
        (([10, 5], [11, 2], [0, 0]), ValueError,
         "`sampled` must not exceed `sizes`; got sampled=11 > size=10 in stratum 'a' (index 0)"),
        (([10, 5], [4, 2], [0, 3]), ValueError,
         "`positives` must not exceed `sampled`; got positives=3 > sampled=2 in stratum 'b'"),
        (([10, 5], [4, -2], [0, 0]), ValueError,
         "`sampled` must be non-negative; got -2 at index 1"),
        (([10, 5.5], [4, 2], [0, 0]), ValueError,
         "`sizes` must hold whole numbers (counts); got 5.5 at index 1"),
        (([10, 5], [4, 2], [0]), ValueError,
         "`positives` must have one entry per stratum of `sizes` (2); got length 1"),
        (([10, 5], [4], [0, 0]), ValueError, "`sampled` must have one entry per stratum"),
        (([10, 0], [4, 3], [0, 0]), ValueError,
         "`sampled` must be 0 in an empty stratum (`sizes` entry 0); got 3 in stratum 'b'"),
        ((["10", "5"], [4, 2], [0, 0]), TypeError, "`sizes` must be an integer count"),
    ],
)
def test_stratified_bad_input(args, error, fragment):
    with pytest.raises(error, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        StratifiedEstimate(*args, labels=["a", "b"])


def test_stratified_bad_shapes():
    with pytest.raises(ValueError, match="at least one stratum"):
        StratifiedEstimate([], [], [])
    with pytest.raises(ValueError, match="`sizes` must be one-dimensional"):
        StratifiedEstimate([[10]], [[4]], [[0]])


@pytest.mark.parametrize(
    "call,error,fragment",
    [
        (lambda: StratifiedEstimate([1, 2], [1, 1], [0, 0], labels=["a"]), ValueError,
         "one label per stratum"),
        (lambda: StratifiedEstimate([1, 2], [1, 1], [0, 0], labels=["a", "a"]), ValueError,
         "`labels` must be distinct"),
        (lambda: StratifiedEstimate([1, 2], [1, 1], [0, 0], labels=["a", 2]), TypeError,
         "`labels` must be strings"),
        (lambda: srs_estimate([5, 6], 2, 1), ValueError, "`size` must be a single count"),
        (lambda: srs_estimate(5, 6, 1), ValueError, "`size` must be at least `sampled`"),
        (lambda: srs_estimate(5, 2, 1).utility(u_a=-3, u_b=1), ValueError,
         "`u_a` must be greater than `u_b`"),
        (lambda: srs_estimate(5, 2, 1).utility(u_a=math.inf, u_b=1), ValueError,
         "`u_a` must be finite"),
        (lambda: srs_estimate(5, 2, 1).confidence_interval(method="normal"), ValueError,
         "`method` must be one of"),
        (lambda: srs_estimate(5, 2, 1).confidence_interval(1.0), ValueError,
         "`confidence_level` must be strictly between 0 and 1"),
        (lambda: srs_estimate(5, 2, 1).confidence_interval(alternative="upper"), ValueError,
         "`alternative` must be one of"),
    ],
)
def test_other_bad_input(call, error, fragment):
    with pytest.raises(error, match=fragment):
        call()


def test_estimate_is_immutable_and_does_not_alias_its_input():
    sizes = np.array([10, 20])
    est = StratifiedEstimate(sizes, [5, 5], [1, 2])
    sizes[0] = 99
    assert est.sizes.tolist() == [10, 20]
    with pytest.raises(ValueError, match="read-only"):
        est.sampled[0] = 3
    with pytest.raises(AttributeError):
        est.labels = ("x", "y")  # type: ignore[misc]


def test_stratified_proportion_result_is_a_frozen_pair():
    found = stratified_proportion([1000, 200, 0, 40], [30, 30, 0, 30], [1, 10, 0, 23])
    assert isinstance(found, StratifiedProportion)
    assert tuple(found) == (found.estimate, found.variance)
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.estimate = 0.0  # type: ignore[misc]


def test_an_unsampled_stratum_leaves_the_estimate_undefined_not_an_error():
    """No information about one stratum: p, its variance, every bound and the utility are nan."""
    estimate = StratifiedEstimate([10, 5, 0], [4, 0, 0], [1, 0, 0], labels=["a", "b", "c"])
    assert estimate.unsampled_strata == ("b",)
    assert math.isnan(estimate.estimate) and math.isnan(estimate.variance)
    for method in STRATIFIED_METHODS:
        for alternative in ("two-sided", "greater", "less"):
            ci = estimate.confidence_interval(method=method, alternative=alternative)
            assert math.isnan(ci.low) and math.isnan(ci.high)
    assert math.isnan(estimate.utility(u_a=1, u_b=-1).estimate)
    proportion = stratified_proportion([10, 5], [4, 0], [[1, 0], [2, 0]])
    assert np.isnan(proportion.estimate).all() and np.isnan(proportion.variance).all()
    runs = MembershipStrata(RUNS, SIZES).estimates([0, 30, 0, 30, 0, 0, 0, 30],
                                                   [0, 1, 0, 10, 0, 0, 0, 23])
    undefined = {run for run, e in runs.items() if math.isnan(e.estimate)}
    assert undefined == {run for run, e in runs.items() if e.unsampled_strata}
    assert undefined and undefined != set(runs)


def test_jeffreys_without_a_positive_starts_at_zero_and_with_only_positives_ends_at_one():
    # Brown, Cai & DasGupta's boundary modification (section 4.1.2) for the whole sample: the
    # section 9.3 pathology at its extreme, 2 relevant of 4,000 in the third stratum. Without
    # it, a sample finding none gets a lower bound of 3 relevant documents and coverage is 0;
    # with it, exactly the samples finding none cover (finding 1 or 2 of 33 drawn from 553
    # lifts the posterior above 2), so coverage is P(none found), 0.884.
    sizes, relevant, sampled = [1461, 1986, 553], [0, 0, 2], [33, 34, 33]
    ci = StratifiedEstimate(sizes, sampled, [0, 0, 0]).confidence_interval(method="jeffreys")
    assert ci.low == 0.0 and ci.high > 0.0
    full = StratifiedEstimate(sizes, sampled, sampled).confidence_interval(method="jeffreys")
    assert full.high == 1.0 and full.low < 1.0
    assert exact_coverage(sizes, relevant, sampled, "jeffreys") == pytest.approx(
        stats.hypergeom(553, 2, 33).pmf(0), abs=1e-12)
