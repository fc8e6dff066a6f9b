"""Tests of `estimators.proportion_ci` against peer libraries, direct formulas and invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats

from estimators import PROPORTION_METHODS, Interval, ProportionEstimate, f1_ci, proportion_ci

statsmodels_proportion = pytest.importorskip("statsmodels.stats.proportion")

ALTERNATIVES = ("two-sided", "greater", "less")
# Our method name -> statsmodels proportion_confint method name.
STATSMODELS_NAMES = {
    "wald": "normal",
    "wilson": "wilson",
    "agresti-coull": "agresti_coull",
    "clopper-pearson": "beta",
    "jeffreys": "jeffreys",
}
# Our method name -> scipy BinomTestResult.proportion_ci method name.
SCIPY_NAMES = {"clopper-pearson": "exact", "wilson": "wilson", "wilson-cc": "wilsoncc"}
# statsmodels names one-sided intervals the other way round from scipy: its "smaller" returns
# (lower bound, 1), i.e. scipy's and our "greater" (checked on statsmodels 0.15).
SM_ALTERNATIVE = {"two-sided": "two-sided", "greater": "smaller", "less": "larger"}


def full_grid(n_max: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (x, n) with 1 <= n <= n_max and 0 <= x <= n (about n_max^2 / 2 pairs)."""
    n = np.repeat(np.arange(1, n_max + 1), np.arange(2, n_max + 2))
    x = np.concatenate([np.arange(k + 1) for k in range(1, n_max + 1)])
    return x, n


def sparse_grid() -> tuple[np.ndarray, np.ndarray]:
    """All pairs up to n = 40, then x in {0, 1, 2, n/3, n/2, n-2, n-1, n} up to n = 1000."""
    x_small, n_small = full_grid(40)
    ns = np.unique(np.r_[np.arange(41, 100, 7), np.geomspace(100, 1000, 15).astype(int), 1000])
    xs = [np.unique([0, 1, 2, k // 3, k // 2, k - 2, k - 1, k]) for k in ns]
    n_big = np.concatenate([np.full(len(v), k) for v, k in zip(xs, ns, strict=True)])
    return np.r_[x_small, np.concatenate(xs)], np.r_[n_small, n_big]


# --- peer libraries ---------------------------------------------------------------------------


@pytest.mark.parametrize("alternative", ALTERNATIVES)
# 0.95 in the fast tier, the other levels in the slow one
@pytest.mark.parametrize("level", [pytest.param(0.9, marks=pytest.mark.slow), 0.95,
                                   pytest.param(0.99, marks=pytest.mark.slow)])
@pytest.mark.parametrize("method", sorted(STATSMODELS_NAMES))
def test_agrees_with_statsmodels_on_full_grid(method, level, alternative):
    x, n = full_grid(1000)
    ours = proportion_ci(x, n, method=method, confidence_level=level, alternative=alternative)
    low, high = statsmodels_proportion.proportion_confint(
        x, n, alpha=1 - level, method=STATSMODELS_NAMES[method],
        alternative=SM_ALTERNATIVE[alternative],
    )
    if method == "jeffreys":
        # Documented convention difference: like Brown, Cai & DasGupta (2001, section 4.1.2) we
        # set the lower bound to 0 at x = 0 and the upper bound to 1 at x = n; statsmodels
        # reports the raw Beta(x + 1/2, n - x + 1/2) quantiles there.
        low = np.where(x == 0, 0.0, low)
        high = np.where(x == n, 1.0, high)
    np.testing.assert_allclose(ours.low, low, rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours.high, high, rtol=0, atol=1e-10)


def test_jeffreys_boundary_convention_is_the_only_difference_from_statsmodels():
    x, n = full_grid(200)
    ours = proportion_ci(x, n, method="jeffreys")
    low, high = statsmodels_proportion.proportion_confint(x, n, method="jeffreys")
    differs = (np.abs(ours.low - low) > 1e-10) | (np.abs(ours.high - high) > 1e-10)
    assert np.array_equal(differs, (x == 0) | (x == n))


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("method", sorted(SCIPY_NAMES))
def test_agrees_with_scipy_binomtest(method, alternative):
    x, n = sparse_grid()
    ours = proportion_ci(x, n, method=method, alternative=alternative)
    peer = np.array([
        tuple(stats.binomtest(int(k), int(m), alternative=alternative)
              .proportion_ci(confidence_level=0.95, method=SCIPY_NAMES[method]))
        for k, m in zip(x, n, strict=True)
    ])
    np.testing.assert_allclose(ours.low, peer[:, 0], rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours.high, peer[:, 1], rtol=0, atol=1e-10)


# --- direct formulas for the methods no peer has ----------------------------------------------


def score_root(x: int, n: int, z: float, correction: float, side: str) -> float:
    """Solve (x -+ c - n p)^2 = z^2 n p (1 - p) for the lower or upper bound by brentq.

    Inverting the (continuity-corrected, c = 1/2) score test is the definition of the Wilson
    (c = 0) and Newcombe method-4 (c = 1/2) bounds; this root-finder never uses their closed form.
    """
    if side == "lower":
        if x == 0:
            return 0.0
        target = x - correction

        def f(p):
            return (target - n * p) - z * math.sqrt(n * p * (1 - p))

        # p = 1 is a spurious root when x = n and c = 0, so stop the bracket just below it.
        return optimize.brentq(f, 1e-300, min(target / n, 1 - 1e-13), xtol=1e-15, rtol=1e-15)
    return 1.0 - score_root(n - x, n, z, correction, "lower")


@pytest.mark.parametrize("method,correction", [("wilson", 0.0), ("wilson-cc", 0.5)])
def test_score_methods_invert_the_score_test(method, correction):
    x, n = full_grid(60)
    z = stats.norm.ppf(0.975)
    ours = proportion_ci(x, n, method=method)
    low = [score_root(k, m, z, correction, "lower") for k, m in zip(x, n, strict=True)]
    high = [score_root(k, m, z, correction, "upper") for k, m in zip(x, n, strict=True)]
    np.testing.assert_allclose(ours.low, low, rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours.high, high, rtol=0, atol=1e-10)


def mid_p_by_summation(x: int, n: int, tail: float) -> tuple[float, float]:
    """Mid-p bounds from the binomial pmf summed term by term and brentq (scalar reference)."""

    def upper_tail(p):  # P(X > x) + P(X = x) / 2
        pmf = stats.binom.pmf(np.arange(n + 1), n, p)
        return pmf[x + 1:].sum() + 0.5 * pmf[x]

    low = 0.0 if x == 0 else optimize.brentq(
        lambda p: upper_tail(p) - tail, 1e-12, 1 - 1e-12, xtol=1e-14)
    high = 1.0 if x == n else optimize.brentq(
        lambda p: (1 - upper_tail(p)) - tail, 1e-12, 1 - 1e-12, xtol=1e-14)
    return low, high


@pytest.mark.parametrize("n", [1, 2, 5, 13, 50, 200])
def test_mid_p_matches_direct_summation(n):
    x = np.arange(n + 1)
    ours = proportion_ci(x, n, method="mid-p", confidence_level=0.95)
    ref = np.array([mid_p_by_summation(int(k), n, 0.025) for k in x])
    np.testing.assert_allclose(ours.low, ref[:, 0], rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours.high, ref[:, 1], rtol=0, atol=1e-10)


def test_mid_p_closed_form_at_the_boundary():
    # At x = 0 the upper bound solves (1 - p)^n / 2 = a/2, i.e. p = 1 - a^(1/n).
    n = np.arange(1, 1001)
    ours = proportion_ci(0, n, method="mid-p", confidence_level=0.95)
    np.testing.assert_allclose(ours.high, 1 - 0.05 ** (1 / n), rtol=0, atol=1e-12)


def test_mid_p_lies_inside_clopper_pearson():
    x, n = full_grid(300)
    mid = proportion_ci(x, n, method="mid-p")
    cp = proportion_ci(x, n, method="clopper-pearson")
    assert np.all(mid.low >= cp.low - 1e-15)
    assert np.all(mid.high <= cp.high + 1e-15)


def test_wald_formula_and_clipping():
    x, n = full_grid(100)
    p = x / n
    half = stats.norm.ppf(0.995) * np.sqrt(p * (1 - p) / n)
    ours = proportion_ci(x, n, method="wald", confidence_level=0.99)
    np.testing.assert_allclose(ours.low, np.clip(p - half, 0, 1), atol=1e-15)
    np.testing.assert_allclose(ours.high, np.clip(p + half, 0, 1), atol=1e-15)


# --- worked examples ---------------------------------------------------------------------------


def test_lingpipe_wine_accuracy_half_widths():
    # LingPipe, Classifiers and Evaluation, "Accuracy Confidence Intervals": 18/27 correct,
    # "the 95% interval is approximately plus or minus 0.18 and the 99% interval
    # approximately plus or minus 0.23".
    for level, half_width in [(0.95, 0.18), (0.99, 0.23)]:
        low, high = proportion_ci(18, 27, method="wald", confidence_level=level)
        assert round((high - low) / 2, 2) == half_width
        assert math.isclose((low + high) / 2, 18 / 27)


def test_boundary_conventions():
    for method in PROPORTION_METHODS:
        at_zero = proportion_ci(0, 17, method=method)
        at_n = proportion_ci(17, 17, method=method)
        assert at_zero.low == 0.0 and at_n.high == 1.0, method
        if method == "wald":  # the documented degenerate case
            assert at_zero.high == 0.0 and at_n.low == 1.0
        else:
            assert at_zero.high > 0.0 and at_n.low < 1.0, method


# --- result object and broadcasting -------------------------------------------------------------


def test_scalars_give_floats_and_arrays_give_arrays():
    ci = proportion_ci(3, 10)
    assert isinstance(ci, Interval) and type(ci.low) is float and type(ci.high) is float
    low, high = ci
    assert (low, high) == (ci.low, ci.high)
    arr = proportion_ci([[1], [2]], [10, 20, 30])
    assert arr.low.shape == (2, 3) and arr.high.shape == (2, 3)
    assert arr.low[1, 2] == proportion_ci(2, 30).low
    # the default is the method whose coverage is guaranteed (estimators._defaults)
    assert (ci.method, ci.confidence_level, ci.alternative) == ("clopper-pearson", 0.95,
                                                                 "two-sided")
    assert proportion_ci(3, 10, population_size=40).method == "hypergeometric"


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16])
@pytest.mark.parametrize("method", ["wilson", "clopper-pearson"])
def test_counts_of_every_integer_dtype_give_the_bounds_of_float_counts(dtype, method):
    # signed integer arrays are validated by a shorter path than floats and unsigned integers
    x, n = full_grid(30)
    reference = proportion_ci(x.astype(float), n.astype(float), method=method)
    ours = proportion_ci(x.astype(dtype), n.astype(dtype), method=method)
    np.testing.assert_array_equal(ours.low, reference.low)
    np.testing.assert_array_equal(ours.high, reference.high)
    column = proportion_ci(np.array([[0], [3]], dtype=dtype), np.arange(3, 6, dtype=dtype))
    assert column.low.shape == (2, 3) and column.high[1, 2] == proportion_ci(3.0, 5.0).high
    assert proportion_ci(np.int8(3), np.int16(10)).low == proportion_ci(3.0, 10.0).low


@pytest.mark.parametrize(("successes", "trials", "pattern"), [
    ([0, 1], [1, -1], r"`trials` must be non-negative; got -1 at index 1"),
    ([-2, 1], [1, 1], r"`successes` must be non-negative; got -2 at index 0"),
    ([1, 2], [1, 2**53 + 1], r"`trials` must be at most 2\*\*53 = 9007199254740992; got "
                              r"9007199254740993 at index 1"),
    ([[1], [4]], [3, 5], r"got successes=4 > trials=3 at index \(1, 0\)"),
])
def test_invalid_integer_arrays_are_named_as_any_invalid_counts(successes, trials, pattern):
    with pytest.raises(ValueError, match=pattern):
        proportion_ci(np.array(successes), np.array(trials))


def test_interval_is_frozen():
    ci = proportion_ci(3, 10)
    with pytest.raises(AttributeError):
        ci.low = 0.0  # type: ignore[misc]


def test_proportion_estimate_undefined_is_nan():
    est = ProportionEstimate(np.array([3, 0]), np.array([10, 0]))
    np.testing.assert_array_equal(np.isnan(est.estimate), [False, True])
    ci = est.confidence_interval(0.9, method="jeffreys")
    assert ci.low[0] == proportion_ci(3, 10, method="jeffreys", confidence_level=0.9).low
    assert np.isnan(ci.low[1]) and np.isnan(ci.high[1])


# --- hypothesis properties ---------------------------------------------------------------------

counts = st.integers(1, 2000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))
levels = st.floats(0.5, 0.999)
methods = st.sampled_from(PROPORTION_METHODS)


@settings(max_examples=300, deadline=None)
@given(counts, methods, levels, st.sampled_from(ALTERNATIVES))
def test_bounds_are_ordered_inside_unit_interval(xn, method, level, alternative):
    x, n = xn
    low, high = proportion_ci(x, n, method=method, confidence_level=level, alternative=alternative)
    assert 0.0 <= low <= high <= 1.0


@settings(max_examples=300, deadline=None)
@given(counts, methods, levels, levels)
def test_interval_widens_with_confidence(xn, method, a, b):
    x, n = xn
    lo_level, hi_level = sorted((a, b))
    narrow = proportion_ci(x, n, method=method, confidence_level=lo_level)
    wide = proportion_ci(x, n, method=method, confidence_level=hi_level)
    assert wide.low <= narrow.low + 1e-12 and wide.high >= narrow.high - 1e-12


@settings(max_examples=300, deadline=None)
@given(counts, methods, levels)
def test_reflection_symmetry(xn, method, level):
    x, n = xn
    ci = proportion_ci(x, n, method=method, confidence_level=level)
    mirrored = proportion_ci(n - x, n, method=method, confidence_level=level)
    assert math.isclose(ci.low, 1 - mirrored.high, abs_tol=1e-12)
    assert math.isclose(ci.high, 1 - mirrored.low, abs_tol=1e-12)


@settings(max_examples=300, deadline=None)
@given(counts, methods, st.floats(0.001, 0.25))
def test_one_sided_bound_equals_two_sided_bound_at_double_alpha(xn, method, alpha):
    x, n = xn
    lower = proportion_ci(x, n, method=method, confidence_level=1 - alpha, alternative="greater")
    upper = proportion_ci(x, n, method=method, confidence_level=1 - alpha, alternative="less")
    two = proportion_ci(x, n, method=method, confidence_level=1 - 2 * alpha)
    assert lower.high == 1.0 and upper.low == 0.0
    assert math.isclose(lower.low, two.low, abs_tol=1e-9)
    assert math.isclose(upper.high, two.high, abs_tol=1e-9)


@settings(max_examples=200, deadline=None)
@given(counts, methods)
def test_contains_point_estimate_except_degenerate_wald(xn, method):
    x, n = xn
    low, high = proportion_ci(x, n, method=method)
    assert low <= x / n <= high


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs,error,pattern",
    [
        ({"successes": -1, "trials": 5}, ValueError, r"`successes` must be non-negative; got -1"),
        ({"successes": 2.5, "trials": 5}, ValueError, r"`successes` must hold whole numbers.*2\.5"),
        ({"successes": 1, "trials": [5, 0]}, ValueError,
         r"`successes` must not exceed `trials`; got successes=1 > trials=0 at index 1"),
        ({"successes": [1, 6], "trials": 5}, ValueError,
         r"`successes` must not exceed `trials`.*6.*index 1"),
        ({"successes": "3", "trials": 5}, TypeError, r"`successes` must be an integer count"),
        ({"successes": 3, "trials": True}, TypeError, r"`trials` must be an integer count"),
        ({"successes": [1, 2], "trials": [3, 4, 5]}, ValueError, r"must broadcast together"),
        ({"successes": 1, "trials": 5, "method": "exact"}, ValueError,
         r"`method` must be one of 'wald', 'wilson', 'wilson-cc', .*'mid-p', "
         r"'hypergeometric'; got 'exact'"),
        ({"successes": 1, "trials": 5, "alternative": "larger"}, ValueError,
         r"`alternative` must be one of 'two-sided', 'less', 'greater'; got 'larger'"),
        ({"successes": 1, "trials": 5, "confidence_level": 1.0}, ValueError,
         r"`confidence_level` must be strictly between 0 and 1; got 1\.0"),
        ({"successes": 1, "trials": 5, "confidence_level": 95}, ValueError, r"got 95"),
        ({"successes": 1, "trials": 5, "confidence_level": "0.95"}, TypeError,
         r"`confidence_level` must be a real number"),
        ({"successes": np.nan, "trials": 5}, ValueError, r"whole numbers"),
    ],
)
def test_bad_input(kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        proportion_ci(**kwargs)


@pytest.mark.parametrize("method", PROPORTION_METHODS)
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_no_trials_means_no_information_an_undefined_interval(method, alternative):
    """One policy in the package: zero trials give nan bounds, never an error (module doc)."""
    ci = proportion_ci([3, 0], [5, 0], method=method, alternative=alternative)
    assert not np.isnan(ci.low[0]) and not np.isnan(ci.high[0])
    assert np.isnan(ci.low[1]) and np.isnan(ci.high[1])
    scalar = proportion_ci(0, 0, method=method, alternative=alternative)
    assert math.isnan(scalar.low) and math.isnan(scalar.high)
    # the same policy as every other estimator with no information
    assert math.isnan(ProportionEstimate(0, 0).confidence_interval(method=method).low)
    assert math.isnan(f1_ci(0, 0, 0, 0, method="delta", alternative=alternative).low)
    assert math.isnan(f1_ci(0, 0, 0, 7, method="delta", alternative=alternative).high)


@pytest.mark.parametrize(("args", "error", "message"), [
    ((30, 27), ValueError, r"`successes` must not exceed `trials`; got 30 successes in 27"),
    (([1, 5], [2, 4]), ValueError, r"got 5 at index 1 successes in 4 at index 1 trials"),
    ((-1, 3), ValueError, r"`successes` must be non-negative"),
    ((2.5, 3), ValueError, r"`successes` must hold whole numbers"),
    ((1, "3"), TypeError, r"`trials` must be an integer count"),
    (([1, 2, 3], [4, 5]), ValueError, r"must broadcast to one shape"),
])
def test_a_proportion_estimate_built_by_hand_is_validated(args, error, message):
    with pytest.raises(error, match=message):
        ProportionEstimate(*args)


@pytest.mark.parametrize(("args", "error", "message"), [
    ((2, -1, "m", 0.95), ValueError, r"`low` must not exceed `high`; got low 2.0 above high"),
    (([0.1, 0.5], [0.2, 0.4], "m", 0.9), ValueError, r"low 0.5 at index 1 above high 0.4"),
    ((0.1, 0.2, "m", 1.5), ValueError, r"`confidence_level` must be strictly between 0 and 1"),
    ((0.1, 0.2, "m", 0.95, "two_sided"), ValueError, r"`alternative` must be one of"),
    (("a", 1, "m", 0.9), TypeError, r"`low` must be a real number"),
    ((0.1, 0.2, "", 0.9), TypeError, r"`method` must be a method name"),
])
def test_an_interval_built_by_hand_is_validated(args, error, message):
    with pytest.raises(error, match=message):
        Interval(*args)


def test_undefined_and_infinite_bounds_remain_valid_intervals():
    assert math.isnan(Interval(math.nan, math.nan, "m", 0.9).low)
    assert Interval(0.2, math.inf, "m", 0.9, "greater").high == math.inf
