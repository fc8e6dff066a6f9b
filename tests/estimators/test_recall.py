"""Tests of `estimators.recall` (recall intervals, simple random and stratified designs).

References, computed here independently of the module: exact coverage by enumerating every
sample outcome, hypergeometric (`scipy.stats.hypergeom`) for every small finite population
``(N1, N0, K1, K0)`` with segments of up to 30 documents, binomial (`scipy.stats.binom`) on a
grid of segment shares ``(R1, R0)``; the propagation-of-error variance from a numerical
(central finite difference) gradient of ``r = q R1 / (q R1 + (1 - q) R0)``; `proportion_ci`
for the simple random design. Coverage is a finite sum: checked exactly, at least the level
less ``1e-9`` (the closed-interval tie rule and summation rounding); a bound equal to the
truth in exact arithmetic counts as covering (``1e-12`` in the comparison).

Reference: Webber (2013), "Approximate recall confidence intervals", ACM TOIS 31(1)
(reference [29] of Bagdouri, Webber, Lewis & Oard 2013, seed 000; propagation of error as
in seed 000 Appendix A).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import estimators
from estimators import (
    PROPORTION_METHODS,
    RECALL_METHODS_BY_DESIGN,
    Interval,
    proportion_ci,
    recall_ci,
    recall_from_segments,
)
from estimators.recall import RECALL_DESIGNS, RECALL_METHODS

ALTERNATIVES = ("two-sided", "greater", "less")
EXACT = ("segments-clopper-pearson", "segments-hypergeometric")
SLACK = 1e-9
EPS = 1e-12


def true_recall(q, r1, r0):
    """``q R1 / (q R1 + (1 - q) R0)`` (nan with nothing relevant), written out here."""
    num = np.asarray(q * r1, dtype=np.float64)
    den = np.asarray(q * r1 + (1.0 - q) * r0, dtype=np.float64)
    num, den = np.broadcast_arrays(num, den)
    return np.divide(num, den, out=np.full(num.shape, np.nan), where=den > 0)


def count_recall(k1, k0):
    """``K1 / (K1 + K0)``: the recall of a finite population (nan with nothing relevant)."""
    return true_recall(0.5, np.asarray(k1, dtype=np.float64), np.asarray(k0, dtype=np.float64))


def covers(low, high, truth):
    """Whether each interval (leading axes) holds each truth (trailing axes), closed."""
    extra = (None,) * np.ndim(truth)
    low = np.asarray(low)[(..., *extra)]
    high = np.asarray(high)[(..., *extra)]
    return (low <= truth + EPS) & (high >= truth - EPS)


def stratified(tp, fp, fn, tn, **options):
    return recall_ci(tp, fp, fn, tn, design="stratified", **options)


# --- names ----------------------------------------------------------------------------------


def test_methods_by_design_are_the_documented_ones():
    assert RECALL_METHODS_BY_DESIGN["srs"] == PROPORTION_METHODS
    assert RECALL_METHODS_BY_DESIGN["stratified"] == ("segments-clopper-pearson",
                                                      "segments-hypergeometric", "delta")
    assert set(RECALL_DESIGNS) == set(RECALL_METHODS_BY_DESIGN)
    assert set(RECALL_METHODS) == {*PROPORTION_METHODS, *EXACT, "delta"}
    for name in ("recall_ci", "recall_from_segments", "RECALL_METHODS_BY_DESIGN",
                 "FINITE_PROPORTION_METHODS"):
        assert name in estimators.__all__


# --- simple random sampling -----------------------------------------------------------------


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("method", PROPORTION_METHODS)
def test_srs_is_proportion_ci_of_the_relevant_documents_exactly(method, alternative):
    tp = np.array([0, 0, 3, 10, 60, 7])
    fp = np.array([5, 0, 1, 40, 20, 0])
    fn = np.array([0, 4, 9, 0, 25, 7])
    tn = np.array([9, 0, 2, 50, 395, 1])
    for level in (0.8, 0.95, 0.999):
        ours = recall_ci(tp, fp, fn, tn, method=method, confidence_level=level,
                         alternative=alternative)
        ref = proportion_ci(tp, tp + fn, method=method, confidence_level=level,
                            alternative=alternative)
        np.testing.assert_array_equal(ours.low, ref.low)  # nan where tp + fn = 0, as ref
        np.testing.assert_array_equal(ours.high, ref.high)
        assert (ours.method, ours.confidence_level, ours.alternative) == (method, level,
                                                                          alternative)


def test_srs_scalars_give_floats_and_the_default_is_clopper_pearson():
    ci = recall_ci(60, 20, 25, 395)
    ref = proportion_ci(60, 85, method="clopper-pearson")
    assert isinstance(ci.low, float) and (ci.low, ci.high) == (ref.low, ref.high)
    assert ci.method == "clopper-pearson"
    # fp and tn do not enter but broadcast: arrays in, arrays out
    ci = recall_ci(60, [20, 30], 25, 395)
    assert ci.low.shape == (2,) and ci.low[0] == ci.low[1] == ref.low


# --- exact coverage: finite populations (segments-hypergeometric) ----------------------------

SEGMENT_SIZES = (1, 2, 3, 5, 8, 13, 20, 30)
EDGE_CASES = [(25, 6, 0, 4), (25, 6, 9, 0), (0, 15, 0, 6), (15, 0, 7, 0), (12, 20, 0, 0),
              (30, 30, 30, 30)]


def _sample_sizes(size: int) -> list[int]:
    return sorted({1, (size + 1) // 2, size})


def segment_pmf(size: int, drawn: int) -> np.ndarray:
    """``P(x; size, K, drawn)`` by K (rows) and x (columns); an empty segment holds 0."""
    if size == 0:
        return np.ones((1, 1))
    return stats.hypergeom.pmf(np.arange(drawn + 1)[None, :], size,
                               np.arange(size + 1)[:, None], drawn)


def finite_coverage(method, case, level, alternative):
    """Coverage of the recall ``K1 / (K1 + K0)`` of each (K1, K0), over every (tp, fn)."""
    big1, big0, n1, n0 = case
    tp = np.arange(n1 + 1)[:, None]
    fn = np.arange(n0 + 1)[None, :]
    ci = stratified(np.broadcast_to(tp, (n1 + 1, n0 + 1)), n1 - tp, fn, n0 - fn,
                    method=method, population_sizes=(big1, big0), confidence_level=level,
                    alternative=alternative)
    truth = count_recall(np.arange(big1 + 1)[:, None], np.arange(big0 + 1)[None, :])
    inside = covers(ci.low, ci.high, truth).astype(np.float64)
    coverage = np.einsum("at,bf,tfab->ab", segment_pmf(big1, n1), segment_pmf(big0, n0), inside)
    return np.where(np.isnan(truth), np.inf, coverage)  # no relevant document: not scored


@pytest.mark.parametrize("sizes", [*itertools.product(SEGMENT_SIZES, SEGMENT_SIZES), "edges"],
                         ids=lambda s: s if isinstance(s, str) else f"N={s[0]},{s[1]}")
def test_segments_hypergeometric_covers_every_finite_population(sizes):
    cases = EDGE_CASES if sizes == "edges" else [
        (*sizes, n1, n0) for n1 in _sample_sizes(sizes[0]) for n0 in _sample_sizes(sizes[1])]
    for case, level, alternative in itertools.product(cases, (0.8, 0.9), ALTERNATIVES):
        coverage = finite_coverage("segments-hypergeometric", case, level, alternative)
        where = np.unravel_index(coverage.argmin(), coverage.shape)
        assert coverage.min() >= level - SLACK, (case, level, alternative, where)


def test_true_recall_of_a_finite_population_is_recall_from_segments():
    for big1, big0, k1, k0 in [(10, 30, 4, 6), (1, 1, 1, 0), (7, 0, 3, 0), (0, 9, 0, 2)]:
        q = big1 / (big1 + big0)
        r1 = k1 / big1 if big1 else 0.0
        r0 = k0 / big0 if big0 else 0.0
        assert recall_from_segments(q, r1, r0) == pytest.approx(k1 / (k1 + k0), abs=1e-15)


# --- exact coverage: binomial segments (segments-clopper-pearson) ----------------------------

SHARES = np.linspace(0.0, 1.0, 26)


def segment_shares(n: int, level: float) -> np.ndarray:
    """A grid of a segment's share with the points where coverage dips (binomial case).

    A binomial interval's coverage jumps at its own endpoints and is least just beyond them,
    so next to the grid each Clopper-Pearson endpoint of the segment (at the tails the
    combinations use: level ``1 - a / 2`` and ``1 - a / 4``, two-sided) is added, 1e-9 to
    either side.
    """
    points = [SHARES]
    if n > 0:
        for segment_level in (1 - (1 - level) / 2, 1 - (1 - level) / 4):
            ci = proportion_ci(np.arange(n + 1), n, method="clopper-pearson",
                               confidence_level=segment_level)
            points += [ci.low - 1e-9, ci.low + 1e-9, ci.high - 1e-9, ci.high + 1e-9]
    return np.unique(np.clip(np.concatenate(points), 0.0, 1.0))


BINOMIAL_CASES = [(0.25, 5, 5), (0.25, 10, 30), (0.6, 30, 10), (0.1, 0, 12), (0.1, 12, 0),
                  (0.5, 25, 25), (0.02, 3, 30)]


@pytest.mark.parametrize(("q", "n1", "n0"), BINOMIAL_CASES)
def test_segments_clopper_pearson_covers_on_a_grid_of_segment_shares(q, n1, n0):
    big = 10**6  # q = N1 / (N1 + N0) exactly; samples far below the segments
    sizes = (round(q * big), big - round(q * big))
    tp = np.arange(n1 + 1)[:, None]
    fn = np.arange(n0 + 1)[None, :]
    for level, alternative in itertools.product((0.8, 0.9, 0.95), ALTERNATIVES):
        r1, r0 = segment_shares(n1, level), segment_shares(n0, level)
        truth = true_recall(q, r1[:, None], r0[None, :])
        pmf1 = stats.binom.pmf(np.arange(n1 + 1)[None, :], n1, r1[:, None])  # (R1, tp)
        pmf0 = stats.binom.pmf(np.arange(n0 + 1)[None, :], n0, r0[:, None])  # (R0, fn)
        ci = stratified(np.broadcast_to(tp, (n1 + 1, n0 + 1)), n1 - tp, fn, n0 - fn,
                        method="segments-clopper-pearson", population_sizes=sizes,
                        confidence_level=level, alternative=alternative)
        inside = covers(ci.low, ci.high, truth).astype(np.float64)
        coverage = np.einsum("at,bf,tfab->ab", pmf1, pmf0, inside)
        coverage = np.where(np.isnan(truth), np.inf, coverage)
        where = np.unravel_index(coverage.argmin(), coverage.shape)
        assert coverage.min() >= level - SLACK, (q, n1, n0, level, alternative,
                                                 r1[where[0]], r0[where[1]])


# --- agreement -------------------------------------------------------------------------------


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_segments_hypergeometric_tends_to_segments_clopper_pearson(alternative):
    tp = np.array([0, 3, 10, 25, 30, 12])
    fn = np.array([0, 1, 5, 2, 40, 0])
    options = {"population_sizes": (2 * 10**6, 8 * 10**6), "alternative": alternative}
    finite = stratified(tp, 30 - tp, fn, 40 - fn, method="segments-hypergeometric", **options)
    binomial = stratified(tp, 30 - tp, fn, 40 - fn, method="segments-clopper-pearson",
                          **options)
    np.testing.assert_allclose(finite.low, binomial.low, rtol=0, atol=1e-4)
    np.testing.assert_allclose(finite.high, binomial.high, rtol=0, atol=1e-4)


def test_census_of_both_segments_gives_the_population_recall():
    tp, fp, fn, tn = 7, 5, 3, 20
    ci = stratified(tp, fp, fn, tn, method="segments-hypergeometric",
                    population_sizes=(tp + fp, fn + tn), confidence_level=0.99)
    assert ci.low == pytest.approx(0.7, abs=1e-15) and ci.high == pytest.approx(0.7, abs=1e-15)


def test_exact_segment_bounds_are_the_proportion_bounds_at_the_bonferroni_tail():
    # two-sided 90%: each segment's two-sided 95% interval; the recall of its corners
    n1, n0, big1, big0 = 20, 50, 100, 900
    for method, segment in (("segments-clopper-pearson", "clopper-pearson"),
                            ("segments-hypergeometric", "hypergeometric")):
        one = proportion_ci(12, n1, method=segment, confidence_level=0.95,
                            population_size=big1 if segment == "hypergeometric" else None)
        zero = proportion_ci(4, n0, method=segment, confidence_level=0.95,
                             population_size=big0 if segment == "hypergeometric" else None)
        ci = stratified(12, n1 - 12, 4, n0 - 4, method=method, population_sizes=(big1, big0),
                        confidence_level=0.9)
        q = big1 / (big1 + big0)
        assert ci.low == pytest.approx(float(true_recall(q, one.low, zero.high)), abs=1e-15)
        assert ci.high == pytest.approx(float(true_recall(q, one.high, zero.low)), abs=1e-15)


# --- the delta method ------------------------------------------------------------------------


def numerical_variance(q, r1, r0, n1, n0, big1=None, big0=None, h=1e-6):
    """``(dr/dR1)^2 V1 + (dr/dR0)^2 V0`` with central finite differences for the gradient."""
    def r(a, b):
        return q * a / (q * a + (1.0 - q) * b)
    g1 = (r(r1 + h, r0) - r(r1 - h, r0)) / (2.0 * h)
    g0 = (r(r1, r0 + h) - r(r1, r0 - h)) / (2.0 * h)
    v1 = r1 * (1.0 - r1) / n1 * (1.0 if big1 is None else 1.0 - n1 / big1)
    v0 = r0 * (1.0 - r0) / n0 * (1.0 if big0 is None else 1.0 - n0 / big0)
    return g1**2 * v1 + g0**2 * v0


@pytest.mark.parametrize("finite", [False, True])
@pytest.mark.parametrize(("tp", "fp", "fn", "tn", "big1", "big0"), [
    (60, 20, 25, 395, 800, 9200), (30, 70, 5, 495, 2000, 98000), (12, 3, 40, 60, 400, 600),
    (45, 45, 10, 290, 90, 3000), (8, 2, 6, 94, 50, 2000)])
def test_delta_variance_matches_a_numerical_gradient(tp, fp, fn, tn, big1, big0, finite):
    n1, n0 = tp + fp, fn + tn
    q = big1 / (big1 + big0)
    r1, r0 = tp / n1, fn / n0
    expected = numerical_variance(q, r1, r0, n1, n0, *((big1, big0) if finite else ()))
    level = 0.9
    ci = stratified(tp, fp, fn, tn, method="delta", population_sizes=(big1, big0),
                    confidence_level=level, finite_population=finite)
    estimate = true_recall(q, r1, r0)
    z = stats.norm.ppf(1 - (1 - level) / 2)
    assert 0.0 < ci.low and ci.high < 1.0  # not clipped: the half-width is z sqrt(Var)
    assert (ci.low + ci.high) / 2 == pytest.approx(float(estimate), rel=1e-12)
    assert ((ci.high - ci.low) / (2 * z)) ** 2 == pytest.approx(expected, rel=1e-6)


def test_delta_one_sided_and_degenerate_cases():
    two = stratified(60, 20, 25, 395, method="delta", population_sizes=(800, 9200),
                     confidence_level=0.9)
    greater = stratified(60, 20, 25, 395, method="delta", population_sizes=(800, 9200),
                         confidence_level=0.95, alternative="greater")
    less = stratified(60, 20, 25, 395, method="delta", population_sizes=(800, 9200),
                      confidence_level=0.95, alternative="less")
    assert greater.low == pytest.approx(two.low, abs=1e-14) and greater.high == 1.0
    assert less.high == pytest.approx(two.high, abs=1e-14) and less.low == 0.0
    # no relevant document sampled: recall undefined, nan bounds (one policy)
    ci = stratified([0, 0, 5], [10, 0, 5], [0, 3, 0], [20, 20, 0], method="delta",
                    population_sizes=(100, 100))
    assert np.isnan(ci.low[0]) and np.isnan(ci.high[0])
    assert np.isnan(ci.low[1])  # retrieved segment has a share but no sample
    assert np.isnan(ci.low[2])  # unretrieved segment has a share but no sample
    # R1 = 0 with relevant unretrieved documents: estimate 0, zero variance (degenerate)
    ci = stratified(0, 10, 3, 17, method="delta", population_sizes=(100, 100))
    assert (ci.low, ci.high) == (0.0, 0.0)
    # a segment without population share does not enter: N0 = 0 gives recall 1
    ci = stratified(4, 6, 0, 0, method="delta", population_sizes=(50, 0))
    assert (ci.low, ci.high) == (1.0, 1.0)


# --- exact methods where recall is undefined: what the data do not exclude ------------------


@pytest.mark.parametrize("method", EXACT)
def test_exact_methods_without_information_give_the_whole_range(method):
    ci = stratified([0, 0], [0, 10], [0, 0], [0, 10], method=method,
                    population_sizes=(1000, 1000))
    np.testing.assert_array_equal(ci.low, [0.0, 0.0])
    np.testing.assert_array_equal(ci.high, [1.0, 1.0])


def test_exact_corners_without_relevant_documents_are_limits():
    # N0 = 0: every relevant document is retrieved, recall is 1 wherever defined
    for method in EXACT:
        ci = stratified(3, 7, 0, 0, method=method, population_sizes=(10, 0))
        assert (ci.low, ci.high) == (1.0, 1.0)
    # N1 = 0: nothing retrieved, recall is 0 wherever defined
    ci = stratified(0, 0, 2, 8, method="segments-hypergeometric", population_sizes=(0, 30))
    assert (ci.low, ci.high) == (0.0, 0.0)
    # the unretrieved segment labelled in full with no relevant document: R0 = 0 is known,
    # so recall is 1 (wherever defined) although R1's lower bound is 0
    ci = stratified(0, 5, 0, 20, method="segments-hypergeometric", population_sizes=(40, 20))
    assert (ci.low, ci.high) == (1.0, 1.0)
    # the retrieved segment in full with no relevant document, the unretrieved one not:
    # recall is 0 wherever defined
    ci = stratified(0, 20, 0, 5, method="segments-hypergeometric", population_sizes=(20, 40))
    assert (ci.low, ci.high) == (0.0, 0.0)
    # both in full, nothing relevant: undefined for sure; the whole range
    ci = stratified(0, 20, 0, 5, method="segments-hypergeometric", population_sizes=(20, 5))
    assert (ci.low, ci.high) == (0.0, 1.0)


# --- shapes ----------------------------------------------------------------------------------


def test_population_sizes_broadcast_and_scalars_give_floats():
    ci = stratified(6, 4, 2, 48, method="segments-hypergeometric",
                    population_sizes=([10, 100, 1000], 500))
    assert ci.low.shape == (3,)
    for i, big1 in enumerate((10, 100, 1000)):
        one = stratified(6, 4, 2, 48, method="segments-hypergeometric",
                         population_sizes=(big1, 500))
        assert (ci.low[i], ci.high[i]) == (one.low, one.high)
    ci = stratified(6, 4, 2, 48, method="delta", population_sizes=(10, 500))
    assert isinstance(ci.low, float) and isinstance(ci.high, float)
    assert isinstance(ci, Interval) and ci.method == "delta"
    ci = stratified(np.array([[6, 7]]), 4, np.array([[2], [3]]), 48,
                    method="segments-clopper-pearson", population_sizes=(100, 1000))
    assert ci.low.shape == (2, 2)


# --- bad input -------------------------------------------------------------------------------

GOOD = {"tp": 6, "fp": 4, "fn": 2, "tn": 48}


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"method": "delta"}, ValueError,
     r"^`method` must be one of 'wald', .*'mid-p' for design='srs'; got 'delta'\.$"),
    ({"method": "wilson", "design": "stratified", "population_sizes": (10, 100)}, ValueError,
     r"^`method` must be one of 'segments-clopper-pearson', 'segments-hypergeometric', "
     r"'delta' for design='stratified'; got 'wilson'\.$"),
    ({"method": "clopper-pearson", "design": "stratified", "population_sizes": (10, 100)},
     ValueError, r"for design='stratified'; got 'clopper-pearson'\.$"),
    ({"method": "segments-hypergeometric", "design": "stratified"}, ValueError,
     r"^`population_sizes` must be the segments' sizes \(N1, N0\), or 'sample' .* with "
     r"design='stratified'; got None\.$"),
    ({"method": "delta", "design": "stratified"}, ValueError,
     r"^`population_sizes` must be the segments' sizes \(N1, N0\), or 'sample'"),
    ({"method": "segments-hypergeometric", "design": "stratified",
      "population_sizes": "sample"}, ValueError,
     r"^`population_sizes` must be the segments' sizes \(N1, N0\) with "
     r"method='segments-hypergeometric' .*; got 'sample'\.$"),
    ({"method": "delta", "design": "stratified", "population_sizes": "sample",
      "finite_population": True}, ValueError,
     r"^`population_sizes` must be the segments' sizes \(N1, N0\) with "
     r"`finite_population=True` .*; got 'sample'\.$"),
    ({"population_sizes": "sample"}, ValueError,
     r"^`population_sizes` and `finite_population` apply to design='stratified' only"),
    ({"method": "delta", "design": "stratified", "population_sizes": (9, 100)}, ValueError,
     r"^`population_sizes\[0\]` must be at least the segment's sample size "
     r"\(`tp` \+ `fp` = 10\); got 9\.$"),
    ({"method": "segments-hypergeometric", "design": "stratified",
      "population_sizes": (10, 49)}, ValueError,
     r"^`population_sizes\[1\]` must be at least the segment's sample size "
     r"\(`fn` \+ `tn` = 50\); got 49\.$"),
    ({"method": "delta", "design": "stratified", "population_sizes": (10,)}, ValueError,
     r"^`population_sizes` must be the segments' sizes \(N1, N0\), or 'sample' .*; "
     r"got \(10,\)\.$"),
    ({"method": "delta", "design": "stratified", "population_sizes": (-1, 100)}, ValueError,
     r"^`population_sizes\[0\]` must be non-negative; got -1\.$"),
    ({"population_sizes": (10, 100)}, ValueError,
     r"^`population_sizes` and `finite_population` apply to design='stratified' only"),
    ({"finite_population": True}, ValueError,
     r"^`population_sizes` and `finite_population` apply to design='stratified' only"),
    ({"method": "segments-clopper-pearson", "design": "stratified",
      "population_sizes": (10, 100), "finite_population": True}, ValueError,
     r"^`finite_population` must be False with method='segments-clopper-pearson'"),
    ({"finite_population": 1}, TypeError, r"^`finite_population` must be True or False"),
    ({"method": "bogus"}, ValueError, r"^`method` must be one of .*; got 'bogus'\.$"),
    ({"design": "cluster"}, ValueError, r"^`design` must be one of 'srs', 'stratified'"),
    ({"confidence_level": 1.0}, ValueError, r"^`confidence_level` must be strictly between"),
    ({"alternative": "upper"}, ValueError, r"^`alternative` must be one of"),
    ({"tp": -1}, ValueError, r"^`tp` must be non-negative; got -1\.$"),
    ({"fn": 2.5}, ValueError, r"^`fn` must hold whole numbers"),
    ({"tn": "7"}, TypeError, r"^`tn` must be an integer count"),
    ({"tp": [1, 2], "fp": [1, 2, 3]}, ValueError, r"^`tp`, `fp`, `fn`, `tn` must broadcast"),
    ({"method": "delta", "design": "stratified", "population_sizes": ([10, 20, 30], 100),
      "tp": [1, 2]}, ValueError, r"^`population_sizes` must broadcast with the counts"),
])
def test_bad_input_is_named(kwargs, error, message):
    arguments = {**GOOD, **kwargs}
    counts = [arguments.pop(name) for name in ("tp", "fp", "fn", "tn")]
    with pytest.raises(error, match=message):
        recall_ci(*counts, **arguments)


@pytest.mark.parametrize(("args", "message"), [
    ((1.5, 0.5, 0.5), r"^`q` must be in \[0, 1\]; got 1\.5\.$"),
    ((0.5, -0.1, 0.5), r"^`r1` must be in \[0, 1\]; got -0\.1\.$"),
    ((0.5, 0.5, [0.1, 2.0]), r"^`r0` must be in \[0, 1\]; got 2\.0 at index 1\.$"),
    ((0.5, [0.1, 0.2], [0.1, 0.2, 0.3]), r"^`q`, `r1` and `r0` must broadcast together"),
    ((0.5, math.nan, 0.5), r"^`r1` must be finite"),
])
def test_recall_from_segments_rejects_bad_shares(args, message):
    with pytest.raises(ValueError, match=message):
        recall_from_segments(*args)


def test_recall_from_segments_shapes():
    assert recall_from_segments(0.2, 0.5, 0.05) == pytest.approx(0.1 / 0.14)
    assert math.isnan(recall_from_segments(0.3, 0.0, 0.0))
    found = recall_from_segments(0.5, [0.2, 0.4], 0.2)
    np.testing.assert_allclose(found, [0.5, 2 / 3])


# --- properties ------------------------------------------------------------------------------


@st.composite
def stratified_samples(draw):
    n1 = draw(st.integers(0, 40), label="n1")
    n0 = draw(st.integers(0, 40), label="n0")
    big1 = n1 + draw(st.integers(0, 300), label="N1 - n1")
    big0 = n0 + draw(st.integers(0 if big1 else 1, 300), label="N0 - n0")
    tp = draw(st.integers(0, n1), label="tp")
    fn = draw(st.integers(0, n0), label="fn")
    return tp, n1 - tp, fn, n0 - fn, big1, big0


@settings(max_examples=300, deadline=None)
@given(sample=stratified_samples(), method=st.sampled_from(RECALL_METHODS_BY_DESIGN[
    "stratified"]), level=st.floats(0.5, 0.999), alternative=st.sampled_from(ALTERNATIVES),
       finite=st.booleans())
def test_stratified_properties(sample, method, level, alternative, finite):
    tp, fp, fn, tn, big1, big0 = sample
    finite = finite and method != "segments-clopper-pearson"
    options = {"method": method, "population_sizes": (big1, big0), "confidence_level": level,
               "alternative": alternative, "finite_population": finite}
    ci = stratified(tp, fp, fn, tn, **options)
    q = big1 / (big1 + big0)
    n1, n0 = tp + fp, fn + tn
    r1 = tp / n1 if n1 else (0.0 if q == 0 else math.nan)
    r0 = fn / n0 if n0 else (0.0 if q == 1 else math.nan)
    estimate = float(true_recall(q, r1, r0)) if not (math.isnan(r1) or math.isnan(r0)) \
        else math.nan
    if method == "delta" and math.isnan(estimate):
        assert math.isnan(ci.low) and math.isnan(ci.high)
        return
    assert 0.0 <= ci.low <= ci.high <= 1.0
    if method != "segments-hypergeometric" and not math.isnan(estimate):
        assert ci.low <= estimate + EPS and estimate <= ci.high + EPS
    if method == "segments-hypergeometric":
        # within what the sample allows: K1 in [tp, N1 - fp], K0 in [fn, N0 - tn]
        least = float(count_recall(tp, big0 - tn))
        most = float(count_recall(big1 - fp, fn))
        if alternative != "less" and not math.isnan(least):
            assert ci.low >= least - EPS
        if alternative != "greater" and not math.isnan(most):
            assert ci.high <= most + EPS
    if method in EXACT and fp > 0:
        # one more relevant retrieved document (same segment sample) never lowers the bound
        more = stratified(tp + 1, fp - 1, fn, tn, **options)
        assert more.low >= ci.low - EPS
    if method in EXACT and tn > 0:
        # one more relevant unretrieved document never raises the upper bound
        more = stratified(tp, fp, fn + 1, tn - 1, **options)
        assert more.high <= ci.high + EPS


@settings(max_examples=200, deadline=None)
@given(tp=st.integers(0, 200), fn=st.integers(0, 200), level=st.floats(0.5, 0.999),
       alternative=st.sampled_from(ALTERNATIVES), method=st.sampled_from(PROPORTION_METHODS))
def test_srs_properties(tp, fn, level, alternative, method):
    ci = recall_ci(tp, 3, fn, 50, method=method, confidence_level=level,
                   alternative=alternative)
    if tp + fn == 0:
        assert math.isnan(ci.low) and math.isnan(ci.high)
        return
    assert 0.0 <= ci.low <= ci.high <= 1.0
    if method in ("clopper-pearson", "wilson"):  # (jeffreys' one-sided 50% bound is a median)
        assert ci.low <= tp / (tp + fn) + EPS <= ci.high + 2 * EPS
    if method == "clopper-pearson":
        more = recall_ci(tp + 1, 3, fn, 50, method=method, confidence_level=level,
                         alternative=alternative)
        assert more.low >= ci.low


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("level", [5e-324, 1e-17, 2**-53, 0.5, 1 - 2**-53])
def test_every_level_strictly_inside_0_1_gives_a_valid_interval(level, alternative):
    # a one-sided level below 1e-16 (1 - 2 x tail cancels to 0) and a two-sided one within
    # 2**-53 of 1 (the segments' level rounds to 1) included
    for method in RECALL_METHODS_BY_DESIGN["stratified"]:
        ci = stratified([0, 6, 8, 0], [8, 2, 0, 0], [0, 2, 0, 0], [40, 38, 40, 0], method=method,
                        population_sizes=(30, 100), confidence_level=level,
                        alternative=alternative)
        defined = ~np.isnan(ci.low)
        assert np.all((0.0 <= ci.low[defined]) & (ci.low[defined] <= ci.high[defined])
                      & (ci.high[defined] <= 1.0))
        assert method == "delta" or defined.all()
    for method in PROPORTION_METHODS:
        ci = recall_ci([0, 6, 8], 2, [3, 2, 0], 40, method=method, confidence_level=level,
                       alternative=alternative)
        assert np.all((0.0 <= ci.low) & (ci.low <= ci.high) & (ci.high <= 1.0))


@pytest.mark.parametrize("method", EXACT)
def test_one_sided_bounds_are_the_two_sided_ends_at_twice_the_error(method):
    # one-sided at 1 - a: each segment at tail a / 2, as the two-sided interval at 1 - 2 a
    tp = np.array([0, 3, 10, 25, 30, 12, 0])
    fn = np.array([0, 1, 5, 2, 40, 0, 3])
    options = {"method": method, "population_sizes": (60, 400)}
    two = stratified(tp, 30 - tp, fn, 40 - fn, confidence_level=0.8, **options)
    greater = stratified(tp, 30 - tp, fn, 40 - fn, confidence_level=0.9,
                         alternative="greater", **options)
    less = stratified(tp, 30 - tp, fn, 40 - fn, confidence_level=0.9, alternative="less",
                      **options)
    np.testing.assert_allclose(greater.low, two.low, rtol=0, atol=1e-12)
    np.testing.assert_allclose(less.high, two.high, rtol=0, atol=1e-12)
    assert np.all(greater.high == 1.0) and np.all(less.low == 0.0)
