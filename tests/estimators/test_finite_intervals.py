"""Exact intervals for finite populations: `proportion_ci(method="hypergeometric")`, the
shared bound `estimators._hypergeometric.hypergeometric_lower` and `f1_ci`'s
``segments-hypergeometric``.

References, all computed here independently of the estimators: the hypergeometric law in
rational arithmetic (`math.comb`, `fractions.Fraction`) inverted by brute force over every
``K``; exact coverage by enumerating every sample outcome of small finite populations with
`scipy.stats.hypergeom` (every population ``K``, or ``(K1, K0)``, of sizes up to 30); the
Clopper-Pearson interval (`proportion_ci`) that the exact finite intervals tend to as the
population grows.

Coverage is a finite sum, so it is checked exactly, with no Monte Carlo tolerance: at least
the nominal level less ``1e-9`` (the closed-interval tie rule `TIE` and summation rounding;
a broken tail loses at least 1e-3 in these grids). A bound equal to the truth in exact
arithmetic counts as covering (closed intervals): the comparison allows ``1e-12``.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from estimators import (
    F1_METHODS,
    F1_METHODS_BY_DESIGN,
    FINITE_PROPORTION_METHODS,
    LOSCI_METHODS,
    PROPORTION_METHODS,
    f1_ci,
    proportion_ci,
)
from estimators._hypergeometric import TIE, hypergeometric_lower

LEVELS = (0.8, 0.95)
ALTERNATIVES = ("two-sided", "greater", "less")
SLACK = 1e-9  # coverage: the TIE rule (relative 1e-10 of a tail) and summation rounding
EPS = 1e-12  # a bound equal to the truth in exact arithmetic, computed in floating point


def exact_upper_tail(x: int, size: int, marked: int, drawn: int) -> Fraction:
    """P(X >= x) for X ~ Hypergeometric(size, marked, drawn), exactly."""
    return sum((Fraction(math.comb(marked, j) * math.comb(size - marked, drawn - j),
                         math.comb(size, drawn)) for j in range(x, drawn + 1)), Fraction(0))


def covered_share(low: np.ndarray, high: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Whether each interval (leading axes) holds each truth (trailing axes)."""
    extra = (None,) * truth.ndim
    lo = low[(..., *extra)]
    hi = high[(..., *extra)]
    return (lo <= truth + EPS) & (hi >= truth - EPS)


# --- the shared bound ---------------------------------------------------------------------


@pytest.mark.parametrize("tail", ["0.025", "0.05", "0.1", "0.25"])
def test_hypergeometric_lower_is_the_brute_force_inversion_in_rationals(tail):
    # Every (x, drawn, size) with size <= 14, against the smallest K whose exact tail reaches
    # the decimal level (ties, e.g. P = 1/20 at 0.05, are kept: the closed interval).
    level = Fraction(tail)
    triples = [(x, n, m) for m in range(15) for n in range(m + 1) for x in range(n + 1)]
    x, n, m = (np.array(c, dtype=np.int64) for c in zip(*triples, strict=True))
    found = hypergeometric_lower(x, n, m, float(tail))
    for (xi, ni, mi), k in zip(triples, found.tolist(), strict=True):
        expected = next(K for K in range(mi + 1) if exact_upper_tail(xi, mi, K, ni) >= level)
        assert k == expected, (xi, ni, mi, tail)


def test_hypergeometric_lower_keeps_its_shape_and_the_tie_rule():
    x = np.array([[1, 0], [1, 2]])
    found = hypergeometric_lower(x, np.full(x.shape, 2), np.full(x.shape, 20), 0.05)
    assert found.shape == (2, 2) and found.dtype == np.int64
    # P(X >= 1 | K = 1, drawn 1 of 20) = 1/20 exactly: a tie, kept
    assert int(hypergeometric_lower(np.array(1), np.array(1), np.array(20), 0.05)) == 1
    assert 0 < TIE < 1e-6


# --- proportion_ci(method="hypergeometric") -------------------------------------------------


def _proportion_cases(largest: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    triples = [(x, n, m) for m in range(1, largest + 1) for n in range(1, m + 1)
               for x in range(n + 1)]
    return tuple(np.array(c, dtype=np.int64) for c in zip(*triples, strict=True))


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("level", LEVELS)
def test_hypergeometric_proportion_covers_every_finite_population(level, alternative):
    # Every population of M <= 30 items, every K marked, every sample size n: the coverage
    # sum over x of P(x; M, K, n) [K/M in the interval of x] is at least the level.
    x, n, m = _proportion_cases(30)
    ci = proportion_ci(x, n, method="hypergeometric", population_size=m,
                       confidence_level=level, alternative=alternative)
    low_k = np.rint(np.asarray(ci.low) * m).astype(np.int64)
    high_k = np.rint(np.asarray(ci.high) * m).astype(np.int64)
    worst = 1.0
    checked = 0
    for size in range(1, 31):
        for drawn in range(1, size + 1):
            rows = (m == size) & (n == drawn)
            xs, lo, hi = x[rows], low_k[rows], high_k[rows]
            marked = np.arange(size + 1)
            pmf = stats.hypergeom.pmf(xs[:, None], size, marked[None, :], drawn)
            inside = (lo[:, None] <= marked[None, :]) & (marked[None, :] <= hi[:, None])
            coverage = (pmf * inside).sum(axis=0)
            worst = min(worst, float(coverage.min()))
            checked += coverage.size
            assert coverage.min() >= level - SLACK, (size, drawn, int(coverage.argmin()))
    assert checked == sum((s + 1) * s for s in range(1, 31))  # every (M, n, K)
    assert worst < level + 0.05  # the grid reaches near the level: the check has teeth


def test_hypergeometric_proportion_bounds_are_whole_counts_over_the_population():
    x, n, m = _proportion_cases(20)
    ci = proportion_ci(x, n, method="hypergeometric", population_size=m)
    for bound in (ci.low, ci.high):
        scaled = np.asarray(bound) * m
        np.testing.assert_allclose(scaled, np.rint(scaled), rtol=0, atol=1e-9)
    # and within what the sample allows: x marked are known, n - x unmarked are known
    assert np.all(np.rint(np.asarray(ci.low) * m) >= x)
    assert np.all(np.rint(np.asarray(ci.high) * m) <= m - (n - x))


def test_hypergeometric_proportion_matches_brute_force_on_both_ends():
    # Each end against the brute-force inversion in rationals (two-sided 90%: tails 1/20).
    level = Fraction(9, 10)
    for size, drawn in [(9, 4), (13, 13), (17, 6)]:
        xs = np.arange(drawn + 1)
        ci = proportion_ci(xs, drawn, method="hypergeometric", population_size=size,
                           confidence_level=0.9)
        tail = (1 - level) / 2
        for x in range(drawn + 1):
            low = next(k for k in range(size + 1) if exact_upper_tail(x, size, k, drawn) >= tail)
            high = max(k for k in range(size + 1)
                       if 1 - exact_upper_tail(x + 1, size, k, drawn) >= tail)
            assert (round(ci.low[x] * size), round(ci.high[x] * size)) == (low, high)


def test_census_gives_the_observed_proportion_and_edges_are_exact():
    ci = proportion_ci(np.arange(11), 10, method="hypergeometric", population_size=10,
                       confidence_level=0.999)
    np.testing.assert_array_equal(ci.low, np.arange(11) / 10)
    np.testing.assert_array_equal(ci.high, np.arange(11) / 10)
    ci = proportion_ci([0, 7], 7, method="hypergeometric", population_size=50)
    assert ci.low[0] == 0.0 and ci.high[1] == 1.0


def test_empty_sample_is_undefined_as_for_every_proportion_method():
    ci = proportion_ci(0, 0, method="hypergeometric", population_size=40)
    assert math.isnan(ci.low) and math.isnan(ci.high)
    ci = proportion_ci([0, 1], [0, 2], method="hypergeometric", population_size=[0, 5])
    assert np.isnan(ci.low[0]) and np.isnan(ci.high[0]) and not np.isnan(ci.low[1])


def test_reflection_symmetry_and_one_sided_ends():
    xs = np.arange(13)
    two = proportion_ci(xs, 12, method="hypergeometric", population_size=31,
                        confidence_level=0.9)
    np.testing.assert_allclose(two.low, 1.0 - two.high[::-1], atol=1e-15)
    greater = proportion_ci(xs, 12, method="hypergeometric", population_size=31,
                            confidence_level=0.95, alternative="greater")
    less = proportion_ci(xs, 12, method="hypergeometric", population_size=31,
                         confidence_level=0.95, alternative="less")
    np.testing.assert_array_equal(greater.low, two.low)  # one-sided 95% = two-sided 90% end
    np.testing.assert_array_equal(less.high, two.high)
    assert np.all(greater.high == 1.0) and np.all(less.low == 0.0)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_hypergeometric_tends_to_clopper_pearson_in_a_large_population(alternative):
    for drawn in (1, 5, 20, 60):
        xs = np.arange(drawn + 1)
        finite = proportion_ci(xs, drawn, method="hypergeometric", population_size=10**7,
                               alternative=alternative)
        binomial = proportion_ci(xs, drawn, method="clopper-pearson", alternative=alternative)
        np.testing.assert_allclose(finite.low, binomial.low, rtol=0, atol=1e-4)
        np.testing.assert_allclose(finite.high, binomial.high, rtol=0, atol=1e-4)


def test_population_size_broadcasts_and_scalars_give_floats():
    ci = proportion_ci(3, 10, method="hypergeometric", population_size=[10, 20, 1000])
    assert ci.low.shape == (3,)
    assert ci.low[0] == ci.high[0] == 0.3
    ci = proportion_ci(3, 10, method="hypergeometric", population_size=100)
    assert isinstance(ci.low, float) and isinstance(ci.high, float)
    assert ci.method == "hypergeometric"


def test_finite_methods_are_kept_apart_from_the_binomial_ones():
    assert FINITE_PROPORTION_METHODS == ("hypergeometric",)
    assert "hypergeometric" not in PROPORTION_METHODS
    assert not any(m == "jaccard-hypergeometric" for m in F1_METHODS)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"method": "hypergeometric"},
     r"^`population_size` must be given with method='hypergeometric' .*; got None\.$"),
    ({"method": "wilson", "population_size": 100},
     r"^`population_size` must be None with method='wilson' .*; got 100\.$"),
    ({"method": "hypergeometric", "population_size": 9},
     r"^`population_size` must be at least `trials` .*; got population_size=9 < "
     r"trials=10\.$"),
    ({"method": "hypergeometric", "population_size": [20, 9]},
     r"^`population_size` must be at least `trials` .*; got population_size=9 < trials=10 "
     r"at index 1\.$"),
    ({"method": "hypergeometric", "population_size": [20, 30, 40]},
     r"^`population_size` must broadcast with `successes` and `trials`"),
    ({"method": "hypergeometric", "population_size": -3},
     r"^`population_size` must be non-negative; got -3\.$"),
    ({"method": "hypergeometric", "population_size": 12.5},
     r"^`population_size` must hold whole numbers"),
    ({"method": "hypergeometrik", "population_size": 20},
     r"^`method` must be one of .*'mid-p', 'hypergeometric'; got 'hypergeometrik'\.$"),
])
def test_bad_population_size_is_named(kwargs, message):
    successes = [3, 4] if isinstance(kwargs.get("population_size"), list) else 3
    with pytest.raises(ValueError, match=message):
        proportion_ci(successes, 10, **kwargs)


def test_population_size_of_the_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match=r"^`population_size` must be an integer count"):
        proportion_ci(3, 10, method="hypergeometric", population_size="20")


@settings(max_examples=200, deadline=None)
@given(data=st.data(), level=st.floats(0.5, 0.999),
       alternative=st.sampled_from(ALTERNATIVES))
def test_hypergeometric_proportion_properties(data, level, alternative):
    size = data.draw(st.integers(1, 400), label="M")
    drawn = data.draw(st.integers(1, size), label="n")
    x = data.draw(st.integers(0, drawn), label="x")
    ci = proportion_ci(x, drawn, method="hypergeometric", population_size=size,
                       confidence_level=level, alternative=alternative)
    assert 0.0 <= ci.low <= ci.high <= 1.0
    # never beyond what the sample allows (a one-sided interval's other end is the end of
    # the parameter space)
    if alternative != "less":
        assert ci.low * size >= x - 1e-9
    if alternative != "greater":
        assert ci.high * size <= size - (drawn - x) + 1e-9
    # the estimate x / n, up to the bounds' resolution 1 / M
    assert ci.low <= x / drawn + 1.0 / size + EPS
    assert ci.high >= x / drawn - 1.0 / size - EPS
    # more successes never lower the lower bound; a higher level never narrows the interval
    if x < drawn:
        more = proportion_ci(x + 1, drawn, method="hypergeometric", population_size=size,
                             confidence_level=level, alternative=alternative)
        assert more.low >= ci.low and more.high >= ci.high
    wider = proportion_ci(x, drawn, method="hypergeometric", population_size=size,
                          confidence_level=min(level + 0.0005, 0.9999), alternative=alternative)
    assert wider.low <= ci.low and wider.high >= ci.high


# --- f1_ci(method="segments-hypergeometric") ------------------------------------------------

# (N1, N0): segments of up to 30 documents; each with samples of one document, about half
# and the whole segment (`_sample_sizes`); and edge cases: empty segments, unsampled ones
SEGMENT_SIZES = (1, 2, 3, 5, 8, 13, 20, 30)
EDGE_CASES = [(25, 6, 0, 4), (25, 6, 9, 0), (0, 15, 0, 6), (15, 0, 7, 0), (12, 20, 0, 0)]


def _sample_sizes(size: int) -> list[int]:
    return sorted({1, (size + 1) // 2, size})


def stratified_cases(big1: int, big0: int) -> list[tuple[int, int, int, int]]:
    return [(big1, big0, n1, n0) for n1 in _sample_sizes(big1) for n0 in _sample_sizes(big0)]


def segment_pmf(size: int, drawn: int) -> np.ndarray:
    """``P(x; size, K, drawn)`` by K (rows) and x (columns); an empty segment holds 0."""
    if size == 0:
        return np.ones((1, 1))
    return stats.hypergeom.pmf(np.arange(drawn + 1)[None, :], size,
                               np.arange(size + 1)[:, None], drawn)


def _stratified_coverage(interval, truth_of, case, level, alternative):
    """Exact coverage of each (K1, K0) by enumerating every (tp, fn) outcome."""
    big1, big0, n1, n0 = case
    tp = np.arange(n1 + 1)[:, None]
    fn = np.arange(n0 + 1)[None, :]
    ci = interval(np.broadcast_to(tp, (n1 + 1, n0 + 1)), n1 - tp, fn, n0 - fn,
                  design="stratified", population_sizes=(big1, big0),
                  confidence_level=level, alternative=alternative)
    k1 = np.arange(big1 + 1)[:, None]
    k0 = np.arange(big0 + 1)[None, :]
    truth = truth_of(k1, k0, big1, big0)
    pmf1, pmf0 = segment_pmf(big1, n1), segment_pmf(big0, n0)
    inside = covered_share(np.asarray(ci.low), np.asarray(ci.high), truth)
    coverage = np.einsum("at,bf,tfab->ab", pmf1, pmf0, inside.astype(np.float64))
    return np.where(np.isnan(truth), np.inf, coverage)  # undefined truths are not scored


def _f1_truth(k1, k0, big1, big0):
    """Population F1 = 2 K1 / (K1 + N1 + K0) (tp = K1, fp = N1 - K1, fn = K0)."""
    num = 2.0 * k1 + 0.0 * k0
    den = k1 + big1 + k0 + 0.0
    return np.divide(num, den, out=np.full(np.broadcast(num, den).shape, np.nan),
                     where=den > 0)


@pytest.mark.parametrize("sizes", [*itertools.product(SEGMENT_SIZES, SEGMENT_SIZES), "edges"],
                         ids=lambda s: s if isinstance(s, str) else f"N={s[0]},{s[1]}")
def test_segments_hypergeometric_f1_covers_every_finite_population(sizes):
    # Every (K1, K0) of the population, every (tp, fn) outcome, two levels, each alternative.
    cases = EDGE_CASES if sizes == "edges" else stratified_cases(*sizes)
    for case, level, alternative in itertools.product(cases, (0.8, 0.9), ALTERNATIVES):
        coverage = _stratified_coverage(
            lambda *a, **k: f1_ci(*a, method="segments-hypergeometric", **k),
            _f1_truth, case, level, alternative)
        assert coverage.min() >= level - SLACK, (case, level, alternative,
                                                 np.unravel_index(coverage.argmin(),
                                                                  coverage.shape))


def test_segments_hypergeometric_f1_census_is_the_population_f1():
    # Both segments labelled in full: F1 is known.
    tp, fp, fn, tn = 7, 5, 3, 20
    ci = f1_ci(tp, fp, fn, tn, method="segments-hypergeometric", design="stratified",
               population_sizes=(tp + fp, fn + tn), confidence_level=0.99)
    assert ci.low == pytest.approx(2 * tp / (2 * tp + fp + fn), abs=1e-15)
    assert ci.high == pytest.approx(ci.low, abs=1e-15)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_segments_hypergeometric_f1_tends_to_segments_clopper_pearson(alternative):
    tp = np.array([0, 3, 10, 25, 30])
    fn = np.array([0, 1, 5, 2, 40])
    options = {"design": "stratified", "population_sizes": (2 * 10**6, 8 * 10**6),
               "alternative": alternative}
    finite = f1_ci(tp, 30 - tp, fn, 40 - fn, method="segments-hypergeometric", **options)
    binomial = f1_ci(tp, 30 - tp, fn, 40 - fn, method="segments-clopper-pearson", **options)
    np.testing.assert_allclose(finite.low, binomial.low, rtol=0, atol=1e-4)
    np.testing.assert_allclose(finite.high, binomial.high, rtol=0, atol=1e-4)


def test_segments_hypergeometric_belongs_to_the_stratified_design_only():
    assert "segments-hypergeometric" in F1_METHODS
    assert "segments-hypergeometric" in F1_METHODS_BY_DESIGN["stratified"]
    assert "segments-hypergeometric" not in F1_METHODS_BY_DESIGN["srs"]
    assert "segments-hypergeometric" not in LOSCI_METHODS
    with pytest.raises(ValueError, match=r"for design='srs'; got 'segments-hypergeometric'\.$"):
        f1_ci(6, 2, 2, 40, method="segments-hypergeometric")


def test_segments_hypergeometric_needs_the_population_sizes():
    with pytest.raises(ValueError, match=r"^`population_sizes` must be the segments' sizes "
                       r"\(N1, N0\) with method='segments-hypergeometric' .*; got 'sample'\.$"):
        f1_ci(6, 2, 2, 40, method="segments-hypergeometric", design="stratified",
              population_sizes="sample")
    with pytest.raises(ValueError, match=r"^`population_sizes\[0\]` must be at least the "
                       r"segment's sample size \(`tp` \+ `fp` = 8\); got 7\.$"):
        f1_ci(6, 2, 2, 40, method="segments-hypergeometric", design="stratified",
              population_sizes=(7, 100))
    # the finite-population flag changes nothing: the bounds are finite by construction
    one = f1_ci(6, 2, 2, 40, method="segments-hypergeometric", design="stratified",
                population_sizes=(30, 100))
    two = f1_ci(6, 2, 2, 40, method="segments-hypergeometric", design="stratified",
                population_sizes=(30, 100), finite_population=True)
    assert (one.low, one.high) == (two.low, two.high)


def test_segments_hypergeometric_f1_without_samples_excludes_nothing():
    ci = f1_ci([0, 0], [0, 0], [0, 0], [0, 0], method="segments-hypergeometric",
               design="stratified", population_sizes=(50, 500))
    np.testing.assert_array_equal(ci.low, [0.0, 0.0])
    np.testing.assert_array_equal(ci.high, [1.0, 1.0])


@settings(max_examples=150, deadline=None)
@given(data=st.data(), level=st.floats(0.5, 0.999),
       alternative=st.sampled_from(ALTERNATIVES))
def test_segments_hypergeometric_f1_properties(data, level, alternative):
    n1, n0 = data.draw(st.integers(0, 40), label="n1"), data.draw(st.integers(0, 40), label="n0")
    big1 = n1 + data.draw(st.integers(0 if n1 else 1, 300), label="N1 - n1")
    big0 = n0 + data.draw(st.integers(0, 300), label="N0 - n0")
    tp = data.draw(st.integers(0, n1), label="tp")
    fn = data.draw(st.integers(0, n0), label="fn")
    options = {"method": "segments-hypergeometric", "design": "stratified",
               "population_sizes": (big1, big0), "confidence_level": level,
               "alternative": alternative}
    ci = f1_ci(tp, n1 - tp, fn, n0 - fn, **options)
    assert 0.0 <= ci.low <= ci.high <= 1.0
    if tp < n1:  # one more relevant retrieved document never lowers the bounds
        more = f1_ci(tp + 1, n1 - tp - 1, fn, n0 - fn, **options)
        assert more.low >= ci.low - EPS and more.high >= ci.high - EPS
    # within what the sample allows: K1 in [tp, N1 - fp], K0 in [fn, N0 - tn]
    least = _f1_truth(np.array(tp), np.array(big0 - (n0 - fn)), big1, big0)
    most = _f1_truth(np.array(big1 - (n1 - tp)), np.array(fn), big1, big0)
    if np.isfinite(least) and alternative != "less":
        assert ci.low >= float(least) - EPS
    if np.isfinite(most) and alternative != "greater":
        assert ci.high <= float(most) + EPS


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("level", [5e-324, 1e-17, 2**-53, 0.5, 1 - 2**-53])
def test_every_level_strictly_inside_0_1_gives_a_valid_interval(level, alternative):
    ci = proportion_ci([0, 1, 3, 9, 10], 10, method="hypergeometric", population_size=25,
                       confidence_level=level, alternative=alternative)
    assert np.all((0.0 <= ci.low) & (ci.low <= ci.high) & (ci.high <= 1.0))
    for method in ("segments-clopper-pearson", "segments-hypergeometric"):
        ci = f1_ci([0, 6, 8, 0], [8, 2, 0, 0], [0, 2, 0, 0], [40, 38, 40, 0], method=method,
                   design="stratified", population_sizes=(30, 100), confidence_level=level,
                   alternative=alternative)
        assert np.all((0.0 <= ci.low) & (ci.low <= ci.high) & (ci.high <= 1.0))


def test_hypergeometric_ends_lie_within_one_step_of_clopper_pearson_or_inside():
    # Checked (not a theorem of the module): each end lies inside the Clopper-Pearson
    # interval or less than one step 1 / M beyond it (the whole-count rounding), and the
    # interval is far narrower where the sample is most of the population.
    for size in (*range(1, 41), 200):
        for drawn in range(1, min(size, 40) + 1):
            xs = np.arange(drawn + 1)
            for level, alternative in itertools.product((0.8, 0.95), ("two-sided", "greater")):
                finite = proportion_ci(xs, drawn, method="hypergeometric",
                                       population_size=size, confidence_level=level,
                                       alternative=alternative)
                binomial = proportion_ci(xs, drawn, method="clopper-pearson",
                                         confidence_level=level, alternative=alternative)
                assert np.all(finite.low > binomial.low - 1.0 / size)
                assert np.all(finite.high < binomial.high + 1.0 / size)
    finite = proportion_ci(30, 36, method="hypergeometric", population_size=40)
    binomial = proportion_ci(30, 36, method="clopper-pearson")
    assert finite.width < binomial.width / 2
