"""F1 intervals with guaranteed coverage: the Jaccard mapping, the Dirichlet posterior, and the
Bonferroni combination of the segments' Clopper-Pearson bounds.

References kept beside each check: scipy's Beta quantiles on the Jaccard ratio (an independent
computation of the Clopper-Pearson and Jeffreys bounds), scipy's ``binomtest`` (Wilson), and
exact enumeration of every test sample for the coverage guarantee.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from estimators import F1_METHODS_BY_DESIGN, f1_ci

LEVELS = (0.8, 0.95, 0.99)


def _grid(max_m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (tp, fp + fn) with m = tp + fp + fn <= max_m (m = 0, tp = 0 and tp = m included)."""
    pairs = [(tp, m - tp) for m in range(max_m + 1) for tp in range(m + 1)]
    tp, errors = (np.array(v) for v in zip(*pairs, strict=True))
    return tp, errors, np.full(tp.shape, 7)


def _f1(j):
    return 2 * j / (1 + j)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_jaccard_clopper_pearson_equals_mapped_beta_quantiles(level, alternative):
    """Reference: Clopper-Pearson bounds of J from scipy.stats.beta.ppf, mapped by 2J/(1+J)."""
    tp, errors, tn = _grid(40)
    m = tp + errors
    tail = (1 - level) / 2 if alternative == "two-sided" else 1 - level
    with np.errstate(invalid="ignore"):
        low = np.where(tp == 0, 0.0, stats.beta.ppf(tail, tp, m - tp + 1))
        high = np.where(tp == m, 1.0, stats.beta.ppf(1 - tail, tp + 1, m - tp))
    low = np.where((m == 0) | (alternative == "less"), 0.0, low)
    high = np.where((m == 0) | (alternative == "greater"), 1.0, high)
    ci = f1_ci(tp, errors, 0, tn, method="jaccard-clopper-pearson", confidence_level=level,
               alternative=alternative)
    np.testing.assert_allclose(ci.low, _f1(low), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ci.high, _f1(high), rtol=0, atol=1e-12)


@pytest.mark.parametrize("level", LEVELS)
def test_jaccard_jeffreys_and_wilson_equal_their_references(level):
    """Jeffreys: Beta(tp + 1/2, m - tp + 1/2) quantiles (0 at tp = 0, 1 at tp = m, as BCD);
    Wilson: scipy.stats.binomtest(...).proportion_ci(method="wilson")."""
    tp, errors, tn = _grid(30)
    m = tp + errors
    tail = (1 - level) / 2
    low = np.where(tp == 0, 0.0, stats.beta.ppf(tail, tp + 0.5, m - tp + 0.5))
    high = np.where(tp == m, 1.0, stats.beta.ppf(1 - tail, tp + 0.5, m - tp + 0.5))
    low, high = np.where(m == 0, 0.0, low), np.where(m == 0, 1.0, high)
    ci = f1_ci(tp, errors, 0, tn, method="jaccard-jeffreys", confidence_level=level)
    np.testing.assert_allclose(ci.low, _f1(low), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ci.high, _f1(high), rtol=0, atol=1e-12)
    wilson = f1_ci(tp, errors, 0, tn, method="jaccard-wilson", confidence_level=level)
    for k in np.flatnonzero(m > 0):
        ref = stats.binomtest(int(tp[k]), int(m[k])).proportion_ci(level, method="wilson")
        assert abs(wilson.low[k] - _f1(ref.low)) < 1e-10
        assert abs(wilson.high[k] - _f1(ref.high)) < 1e-10


# (tp, fp, fn, tn) with false negatives, fp != fn and tn != fn, so that dropping fn, or
# counting tn (or fp twice) in its place, changes m = tp + fp + fn: tp = 0 with errors of one
# kind only or both, tp = m (no errors, many true negatives), and tn = 0.
WITH_FALSE_NEGATIVES = [(0, 0, 3, 40), (0, 2, 5, 11), (3, 1, 6, 50), (7, 4, 2, 9),
                        (12, 0, 5, 200), (20, 9, 3, 0), (5, 0, 0, 30)]


def _jaccard_reference(method, tp, m, tail, alternative):
    """The J interval from scipy's Beta and normal quantiles (tp successes of m trials).

    Clopper-Pearson: Beta(tp, m - tp + 1) and Beta(tp + 1, m - tp) quantiles; Jeffreys:
    Beta(tp + 1/2, m - tp + 1/2); Wilson: the score interval in closed form with
    z = norm.isf(tail). Each has low exactly 0 at tp = 0 and high exactly 1 at tp = m (the
    boundary conventions of estimators.proportion); one-sided: the other end is 0 or 1.
    """
    if method == "clopper-pearson":
        low = stats.beta.ppf(tail, tp, m - tp + 1) if tp > 0 else 0.0
        high = stats.beta.ppf(1 - tail, tp + 1, m - tp) if tp < m else 1.0
    elif method == "jeffreys":
        low = stats.beta.ppf(tail, tp + 0.5, m - tp + 0.5) if tp > 0 else 0.0
        high = stats.beta.ppf(1 - tail, tp + 0.5, m - tp + 0.5) if tp < m else 1.0
    else:
        z, p = stats.norm.isf(tail), tp / m
        centre = (p + z * z / (2 * m)) / (1 + z * z / m)
        half = z * np.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / (1 + z * z / m)
        low = centre - half if tp > 0 else 0.0
        high = centre + half if tp < m else 1.0
    if alternative == "greater":
        high = 1.0
    elif alternative == "less":
        low = 0.0
    return low, high


@pytest.mark.parametrize("method", ["clopper-pearson", "jeffreys", "wilson"])
@pytest.mark.parametrize(("level", "alternative"),
                         [(0.9, "two-sided"), (0.95, "greater"), (0.8, "less")])
def test_jaccard_intervals_with_false_negatives_match_beta_quantiles_of_the_jaccard_count(
        method, level, alternative):
    """tp successes of m = tp + fp + fn: fn counts as a trial exactly as fp does, tn not at
    all. The reference bounds on J are mapped by F1 = 2J / (1 + J)."""
    tail = (1 - level) / 2 if alternative == "two-sided" else 1 - level
    tp, fp, fn, tn = (np.array(column) for column in zip(*WITH_FALSE_NEGATIVES, strict=True))
    ci = f1_ci(tp, fp, fn, tn, method=f"jaccard-{method}", confidence_level=level,
               alternative=alternative)
    for k, (tp_k, fp_k, fn_k, tn_k) in enumerate(WITH_FALSE_NEGATIVES):
        low, high = _jaccard_reference(method, tp_k, tp_k + fp_k + fn_k, tail, alternative)
        case = (tp_k, fp_k, fn_k, tn_k)
        assert abs(ci.low[k] - _f1(low)) < 1e-12, case
        assert abs(ci.high[k] - _f1(high)) < 1e-12, case
        one = f1_ci(tp_k, fp_k, fn_k, tn_k, method=f"jaccard-{method}",
                    confidence_level=level, alternative=alternative)  # scalars alike
        assert (one.low, one.high) == (ci.low[k], ci.high[k]), case


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_dirichlet_posterior_equals_mapped_beta_quantiles(alternative):
    """Reference: J ~ Beta(tp + 1/2, fp + fn + 1) under a Jeffreys Dirichlet prior (scipy)."""
    tp, errors, tn = _grid(25)
    tail = 0.025 if alternative == "two-sided" else 0.05
    low = stats.beta.ppf(tail, tp + 0.5, errors + 1.0)
    high = stats.beta.ppf(1 - tail, tp + 0.5, errors + 1.0)
    low = np.zeros_like(low) if alternative == "less" else low
    high = np.ones_like(high) if alternative == "greater" else high
    ci = f1_ci(tp, errors, 0, tn, method="dirichlet-posterior", alternative=alternative)
    np.testing.assert_allclose(ci.low, _f1(low), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ci.high, _f1(high), rtol=0, atol=1e-12)
    again = f1_ci(tp, errors, 0, tn, method="dirichlet-posterior", alternative=alternative)
    np.testing.assert_array_equal(ci.low, again.low)  # deterministic: no seed


# --- the coverage guarantee, by exact enumeration ---------------------------------------------

POPULATIONS = [  # (p_tp, p_fp, p_fn): prevalence 3% to 50%, F1 0.3 to 0.95
    (0.0285, 0.0015, 0.0015), (0.02, 0.03, 0.01), (0.009, 0.02, 0.021), (0.1, 0.05, 0.05),
    (0.3, 0.05, 0.2), (0.45, 0.02, 0.05), (0.15, 0.35, 0.35), (0.05, 0.001, 0.45),
]


def _srs_coverage(method, n, population, level, alternative):
    """Exact coverage: every (tp, e, tn) with its trinomial probability."""
    p_tp, p_fp, p_fn = population
    truth = 2 * p_tp / (2 * p_tp + p_fp + p_fn)
    outcomes = np.array([(tp, e) for total in range(n + 1) for tp in range(total + 1)
                         for e in [total - tp]])
    tp, e = outcomes[:, 0], outcomes[:, 1]
    probability = stats.multinomial.pmf(np.column_stack([tp, e, n - tp - e]), n,
                                        [p_tp, p_fp + p_fn, 1 - p_tp - p_fp - p_fn])
    ci = f1_ci(tp, e, 0, n - tp - e, method=method, confidence_level=level,
               alternative=alternative)
    covered = (ci.low <= truth) & (truth <= ci.high)
    return float(probability[covered].sum())


@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
@pytest.mark.parametrize("n", [10, 37, 80])
def test_jaccard_clopper_pearson_never_covers_below_nominal(n, alternative):
    for population, level in itertools.product(POPULATIONS, (0.8, 0.95)):
        coverage = _srs_coverage("jaccard-clopper-pearson", n, population, level, alternative)
        assert coverage >= level - 1e-9, (population, level, coverage)


def test_the_exact_check_catches_an_interval_that_undercovers():
    """The same enumeration shows the delta LOSCI far below nominal at low prevalence."""
    coverage = _srs_coverage("delta", 37, POPULATIONS[0], 0.95, "greater")
    assert coverage < 0.9


def _stratified_coverage(method, n1, n0, share, r1, r0, level, alternative):
    """Exact coverage over the two independent binomial segments (q = N1 / N known)."""
    tp, fn = (a.ravel() for a in np.meshgrid(np.arange(n1 + 1), np.arange(n0 + 1)))
    probability = stats.binom.pmf(tp, n1, r1) * stats.binom.pmf(fn, n0, r0)
    big1 = round(share * 10**6)
    truth = 2 * share * r1 / (share * r1 + share + (1 - share) * r0)
    ci = f1_ci(tp, n1 - tp, fn, n0 - fn, method=method, confidence_level=level,
               alternative=alternative, design="stratified",
               population_sizes=(big1, 10**6 - big1))
    covered = (ci.low <= truth + 1e-12) & (truth - 1e-12 <= ci.high)
    return float(probability[covered].sum())


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_segments_clopper_pearson_never_covers_below_nominal(alternative):
    for (n1, n0), share, r1, r0 in itertools.product(
            [(5, 20), (25, 25), (40, 80)], [0.02, 0.2], [0.05, 0.6, 0.97], [0.001, 0.02, 0.3]):
        coverage = _stratified_coverage("segments-clopper-pearson", n1, n0, share, r1, r0,
                                        0.95, alternative)
        assert coverage >= 0.95 - 1e-9, ((n1, n0), share, r1, r0, coverage)


# --- properties ---------------------------------------------------------------------------

GUARANTEED_SRS = ("jaccard-clopper-pearson", "jaccard-wilson", "jaccard-jeffreys",
                  "dirichlet-posterior")
counts = st.integers(min_value=0, max_value=400)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(tp=counts, fp=counts, fn=counts, tn=counts,
       levels=st.lists(st.floats(0.5, 0.999), min_size=2, max_size=2, unique=True))
def test_intervals_nest_stay_in_0_1_and_two_sided_matches_one_sided(tp, fp, fn, tn, levels):
    """Nested in the level; inside [0, 1]; the two-sided bound at 1 - 2a is the one-sided at
    1 - a (equal tails), for every new method of either design."""
    small, large = sorted(levels)
    cases = [(m, {}) for m in GUARANTEED_SRS]
    cases.append(("segments-clopper-pearson",
                  {"design": "stratified", "population_sizes": (tp + fp + 10, fn + tn + 10)}))
    for method, design in cases:
        narrow = f1_ci(tp, fp, fn, tn, method=method, confidence_level=small, **design)
        wide = f1_ci(tp, fp, fn, tn, method=method, confidence_level=large, **design)
        assert 0.0 <= wide.low <= narrow.low <= narrow.high <= wide.high <= 1.0, method
        one_sided = f1_ci(tp, fp, fn, tn, method=method, alternative="greater",
                          confidence_level=1 - (1 - small) / 2, **design)
        upper = f1_ci(tp, fp, fn, tn, method=method, alternative="less",
                      confidence_level=1 - (1 - small) / 2, **design)
        assert abs(one_sided.low - narrow.low) < 1e-12 and one_sided.high == 1.0, method
        assert abs(upper.high - narrow.high) < 1e-12 and upper.low == 0.0, method


def test_methods_are_offered_for_the_design_they_are_valid_for():
    assert "segments-clopper-pearson" not in F1_METHODS_BY_DESIGN["srs"]
    assert not any(m.startswith("jaccard-") for m in F1_METHODS_BY_DESIGN["stratified"])
    with pytest.raises(ValueError, match=r"`method` must be one of .* for design='stratified'"):
        f1_ci(6, 2, 2, 40, method="jaccard-clopper-pearson", design="stratified",
              population_sizes=(100, 1000))
    with pytest.raises(ValueError, match=r"for design='srs'; got 'segments-clopper-pearson'"):
        f1_ci(6, 2, 2, 40, method="segments-clopper-pearson")
