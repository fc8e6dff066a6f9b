"""Tests of `estimators.fmeasure` (F1 point and interval estimation).

Every reference value is computed here, independently of the module: exact sampling
distributions by enumeration (multinomial for the SRS design; binomial or hypergeometric per
segment for the stratified design), the Jeffreys-posterior CDF of F1 by quadrature, and exact
rational arithmetic. Monte Carlo comparisons use fixed seeds and a tolerance of 4 Monte Carlo
standard errors (MCSE) computed in the test.

Reference: Bagdouri, Webber, Lewis & Oard (2013), "Towards minimizing the annotation cost of
certified text classification", CIKM, section 4.3 and Appendix A (seed 000).
"""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction
from functools import cache

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import integrate, optimize, special, stats

from estimators import PROPORTION_METHODS
from estimators.confusion import ConfusionMatrix
from estimators.fmeasure import (
    F1_DESIGNS,
    F1_METHODS,
    _bootstrap_draws,
    _percentile_bounds,
    f1_ci,
    f1_estimate,
)

METHODS = ("delta", "logit-delta", "beta-posterior", "bootstrap")
NORMAL_METHODS = ("delta", "logit-delta")
SIMULATED_METHODS = ("beta-posterior", "bootstrap")
ALTERNATIVES = ("two-sided", "greater", "less")
MC_SIGMAS = 4.0  # Monte Carlo tolerance in MCSE: a false alarm about once in 16,000 checks
SMALL_DRAWS = 300  # enough for properties that hold for any replicates


def test_method_and_design_names_are_the_documented_ones():
    exact = {"dirichlet-posterior", "segments-clopper-pearson", "segments-hypergeometric",
             *(f"jaccard-{m}" for m in PROPORTION_METHODS)}  # test_f1_guaranteed.py
    assert set(F1_METHODS) == set(METHODS) | exact
    assert set(F1_DESIGNS) == {"srs", "stratified"}


# --- exact sampling distributions (references) ---------------------------------------------


def _window(mean: float, sd: float, n: int) -> np.ndarray:
    """Integers within mean +- (12 sd + 12), clipped to [0, n].

    The extra 12 counts matter only for small means: a Poisson(0.6) count needs 12 counts to
    leave < 1e-12 in its upper tail, where 12 sd is 9. (Largest mass left out here: 1e-27.)
    """
    half = 12.0 * sd + 12.0
    return np.arange(max(0, math.floor(mean - half)), min(n, math.ceil(mean + half)) + 1)


def _sorted_distribution(values: np.ndarray, mass: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(values, kind="stable")
    return values[order], mass[order] / mass.sum()


def srs_f1_distribution(n: int, a: float, e_share: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact distribution of sample F1 ``2 tp / (2 tp + e)`` under multinomial sampling.

    ``(tp, e = fp + fn, tn)`` is trinomial ``(n; a, e_share, rest)``, factored as
    ``tp ~ Bin(n, a)`` and ``e | tp ~ Bin(n - tp, e_share / (1 - a))``. Enumerated on a window
    around the means; the mass left out is summed from binomial tails (``1 - sum`` would lose
    it to rounding) and must be < 1e-12. Returns the sorted F1 values and their probabilities
    conditional on F1 being defined (``tp + e > 0``), as the estimator is.
    """
    share = e_share / (1.0 - a)
    tp = _window(n * a, math.sqrt(n * a * (1.0 - a)), n)[:, None]
    e = _window(n * e_share, math.sqrt(n * e_share * (1.0 - e_share)), n)[None, :]
    p_tp = stats.binom.pmf(tp, n, a)
    mass = p_tp * stats.binom.pmf(e, n - tp, share)
    outside = (stats.binom.cdf(tp[0, 0] - 1, n, a) + stats.binom.sf(tp[-1, 0], n, a)
               + np.sum(p_tp * (stats.binom.cdf(e[0, 0] - 1, n - tp, share)
                                + stats.binom.sf(e[0, -1], n - tp, share))))
    assert outside < 1e-12, f"enumeration window leaves out mass {outside:.1e}"
    tp, e = np.broadcast_arrays(tp, e)
    defined = tp + e > 0
    values = 2 * tp[defined] / (2 * tp[defined] + e[defined])
    return _sorted_distribution(values, mass[defined])


def stratified_f1_distribution(
    q: float, pmf1: np.ndarray, pmf0: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Exact distribution of ``2 q R1 / (q R1 + q + (1 - q) R0)`` (Appendix A), ``R_h = r_h/n_h``.

    ``pmf1[r]`` and ``pmf0[r]`` are the probabilities of ``r`` relevant documents among the
    ``n_h = len(pmf_h) - 1`` sampled in each segment; the segments are sampled independently.
    """
    r1 = (np.arange(len(pmf1)) / (len(pmf1) - 1))[:, None]
    r0 = (np.arange(len(pmf0)) / (len(pmf0) - 1))[None, :]
    values = 2.0 * q * r1 / (q * r1 + q + (1.0 - q) * r0)
    return _sorted_distribution(values.ravel(), (pmf1[:, None] * pmf0[None, :]).ravel())


def moments(values: np.ndarray, probs: np.ndarray) -> tuple[float, float, float, float]:
    """Mean, standard deviation, skewness and kurtosis of a discrete distribution."""
    mean = float(probs @ values)
    sd = math.sqrt(float(probs @ (values - mean) ** 2))
    z = (values - mean) / sd
    return mean, sd, float(probs @ z**3), float(probs @ z**4)


def cdf_below_and_at(values: np.ndarray, probs: np.ndarray, x: float) -> tuple[float, float]:
    """``P(F < x)`` and ``P(F <= x)``, with 1e-12 slack for rounding of the lattice values."""
    cum = np.concatenate([[0.0], np.cumsum(probs)])
    below = cum[np.searchsorted(values, x - 1e-12, side="left")]
    at = cum[np.searchsorted(values, x + 1e-12, side="right")]
    return float(below), float(at)


def assert_sample_quantile(values, probs, p: float, sample_quantile: float, draws: int) -> None:
    """The p-quantile of ``draws`` replicates is consistent with the exact distribution.

    Checked on the probability scale, which needs no density and is valid for a lattice:
    ``P(F < x) <= p <= P(F <= x)`` up to ``4 sqrt(p (1 - p) / draws)`` (the MCSE of the
    empirical CDF) plus ``1 / draws`` for the interpolation between order statistics.
    """
    below, at = cdf_below_and_at(values, probs, sample_quantile)
    tol = MC_SIGMAS * math.sqrt(p * (1.0 - p) / draws) + 1.0 / draws
    assert below - tol <= p <= at + tol, (
        f"quantile {sample_quantile:.6f}: exact P(F<x)={below:.6f}, P(F<=x)={at:.6f}, "
        f"p={p}, tolerance {tol:.2e}"
    )


def population_cells(prevalence: float, precision: float, recall: float) -> tuple[float, ...]:
    """Cell probabilities ``(tp, fp, fn, tn)`` of a population with the given P and R."""
    tp = prevalence * recall
    fp = tp * (1.0 - precision) / precision
    fn = prevalence * (1.0 - recall)
    return tp, fp, fn, 1.0 - tp - fp - fn


def test_exact_srs_reference_matches_full_multinomial_enumeration():
    # The factored, windowed enumeration against brute force over all 4-cell multinomial
    # outcomes (n = 40), so the acceptance reference is itself checked.
    n = 40
    grid = np.array([(i, j, k, n - i - j - k) for i in range(n + 1) for j in range(n + 1 - i)
                     for k in range(n + 1 - i - j)])
    for population in [(0.1, 0.6, 0.6), (0.25, 0.3, 0.9), (0.5, 0.95, 0.95)]:
        cells = population_cells(*population)
        prob = stats.multinomial.pmf(grid, n, cells)
        tp, e = grid[:, 0], grid[:, 1] + grid[:, 2]
        defined = tp + e > 0
        brute = _sorted_distribution(2 * tp[defined] / (2 * tp[defined] + e[defined]),
                                     prob[defined])
        factored = srs_f1_distribution(n, cells[0], cells[1] + cells[2])
        assert moments(*factored)[:2] == pytest.approx(moments(*brute)[:2], rel=1e-9)


# --- 1. SRS delta variance vs the exact variance of sample F1 (acceptance) -----------------

POPULATIONS = [(prevalence, f, f) for prevalence in (0.03, 0.1, 0.25, 0.5)
               for f in (0.3, 0.6, 0.95)] + [(0.1, 0.9, 0.5), (0.25, 0.3, 0.9), (0.03, 0.5, 0.95)]
SAMPLE_SIZES = (200, 1000, 5000)
# Integer counts of this total fix the population proportions to ~1e-9.
POPULATION_SCALE = 10**9


def package_srs_variance_at_population(cells: tuple[float, ...], n: int) -> float:
    """The package's SRS delta variance at population proportions, for sample size ``n``.

    The package takes integer counts, so it gets ``round(1e9 p)``. A delta-method variance is
    (a function of the proportions) / (sample size), so the variance it returns for sample
    size ``total`` is rescaled by ``total / n``; test_srs_delta_variance_scales_as_one_over_n
    checks that the package has this scaling.
    """
    counts = [round(p * POPULATION_SCALE) for p in cells]
    return f1_estimate(*counts).variance * sum(counts) / n


@cache
def srs_relative_errors() -> dict[tuple[tuple[float, float, float], int], float]:
    """``delta variance / exact variance - 1`` for every population and sample size."""
    errors = {}
    for population in POPULATIONS:
        cells = population_cells(*population)
        for n in SAMPLE_SIZES:
            exact = moments(*srs_f1_distribution(n, cells[0], cells[1] + cells[2]))[1] ** 2
            errors[population, n] = package_srs_variance_at_population(cells, n) / exact - 1.0
    return errors


def _population_id(population: tuple[float, float, float]) -> str:
    return "pi={}-P={}-R={}".format(*population)


# About 3 expected errors (n (fp + fn) = 1000 * 0.003): the first-order delta variance is
# 6.6% below the exact one, outside the 5% acceptance. Strict: passes are reported.
DELTA_EXCEEDS_ACCEPTANCE = {((0.03, 0.95, 0.95), 1000)}
ACCEPTANCE_CASES = [
    pytest.param(
        population, n, id=f"{_population_id(population)}-n={n}",
        marks=[pytest.mark.xfail(strict=True, reason="delta variance 6.6% below exact")]
        if (population, n) in DELTA_EXCEEDS_ACCEPTANCE else [],
    )
    for n in (1000, 5000) for population in POPULATIONS
]


@pytest.mark.parametrize(("population", "n"), ACCEPTANCE_CASES)
def test_srs_delta_variance_within_5_percent_of_exact(population, n):
    rel = srs_relative_errors()[population, n]
    worst = max(abs(v) for (_, size), v in srs_relative_errors().items() if size == n)
    assert abs(rel) < 0.05, f"relative error {rel:+.4f} (max |error| at n={n}: {worst:.4f})"


def test_srs_delta_variance_error_shrinks_like_one_over_n():
    # A first-order approximation has relative error c/n + O(1/n^2). Between consecutive sample
    # sizes the error must shrink with n, allowing the coefficient to drift by 50% (the
    # O(1/n^2) terms, large at n = 200 for rare classes) and 1e-4 absolute for populations
    # whose c is ~0. A wrong variance formula leaves an error that does not vanish.
    errors = srs_relative_errors()
    print("\nSRS delta variance / exact variance - 1")
    print("population             " + "".join(f"{f'n={n}':>10}" for n in SAMPLE_SIZES))
    for population in POPULATIONS:
        row = "".join(f"{errors[population, n]:>+10.4f}" for n in SAMPLE_SIZES)
        print(f"{_population_id(population):<23}{row}")
    print("max |error|            " + "".join(
        f"{max(abs(errors[p, n]) for p in POPULATIONS):>10.4f}" for n in SAMPLE_SIZES))
    for population in POPULATIONS:
        for small, large in itertools.pairwise(SAMPLE_SIZES):
            bound = 1.5 * small / large * abs(errors[population, small]) + 1e-4
            assert abs(errors[population, large]) <= bound, (population, small, large)


counts_st = st.tuples(*(st.integers(0, 5000),) * 4)


@given(counts=counts_st, factor=st.sampled_from([3, 1000, 10**5]))
def test_srs_delta_variance_scales_as_one_over_n(counts, factor):
    assume(sum(counts[:3]) > 0)
    small = f1_estimate(*counts).variance
    large = f1_estimate(*(factor * c for c in counts)).variance
    assert large * factor == pytest.approx(small, rel=1e-12, abs=0.0)


def complex_step_gradient(func, x: np.ndarray) -> np.ndarray:
    """Gradient by complex-step differentiation: exact to rounding for rational functions."""
    h = 1e-30
    return np.array([func(x + 1j * h * unit).imag / h for unit in np.eye(len(x))])


@given(counts=counts_st)
def test_srs_delta_variance_is_the_multinomial_delta_method(counts):
    # Independent of the closed form: numerical gradient of F(p) = 2 p_tp / (2 p_tp + p_fp +
    # p_fn) and the multinomial covariance (diag(p) - p p^T) / n.
    assume(2 * counts[0] + counts[1] + counts[2] > 0)
    n = sum(counts)
    p = np.array(counts, dtype=float) / n
    grad = complex_step_gradient(lambda x: 2 * x[0] / (2 * x[0] + x[1] + x[2]), p)
    expected = grad @ ((np.diag(p) - np.outer(p, p)) / n) @ grad
    assert f1_estimate(*counts).variance == pytest.approx(expected, rel=1e-9, abs=1e-15)


@given(tp=st.integers(0, 3000), fp=st.integers(0, 3000), fn=st.integers(0, 3000),
       tn=st.integers(0, 3000), extra1=st.integers(0, 10**5), extra0=st.integers(0, 10**5),
       fpc=st.booleans())
def test_stratified_delta_variance_is_the_two_segment_delta_method(tp, fp, fn, tn, extra1,
                                                                    extra0, fpc):
    # Numerical gradient in (R1, R0) and independent segment variances R(1 - R)/n_h, times
    # 1 - n_h/N_h with the finite-population correction (Appendix A; Thompson 2002, ch. 2).
    n1, n0 = tp + fp, fn + tn
    assume(n1 > 0 and n0 > 0)
    big1, big0 = n1 + extra1, n0 + extra0
    q = big1 / (big1 + big0)
    r = np.array([tp / n1, fn / n0])
    grad = complex_step_gradient(lambda x: 2 * q * x[0] / (q * x[0] + q + (1 - q) * x[1]), r)
    factors = np.array([1 - n1 / big1, 1 - n0 / big0]) if fpc else np.ones(2)
    expected = np.sum(grad**2 * r * (1 - r) / np.array([n1, n0]) * factors)
    est = f1_estimate(tp, fp, fn, tn, design="stratified", population_sizes=(big1, big0),
                      finite_population=fpc)
    assert est.variance == pytest.approx(expected, rel=1e-9, abs=1e-15)


# --- 2. stratified design: exact variance ----------------------------------------------------

# (q, R1, R0, n1, n0): e-discovery-like retrieved shares, precisions and elusion rates, with
# n_h R_h whole so the package's sample equals the population.
STRATIFIED_SETTINGS = [
    (0.1, 0.7, 0.01, 500, 1500),
    (0.05, 0.9, 0.005, 400, 2000),
    (0.3, 0.6, 0.1, 1000, 1000),
    (0.02, 0.5, 0.002, 1000, 5000),
    (0.05, 0.9, 0.005, 200, 1000),
]


@pytest.mark.parametrize(("q", "r1", "r0", "n1", "n0"), STRATIFIED_SETTINGS)
def test_stratified_delta_variance_matches_exact_binomial_variance(q, r1, r0, n1, n0):
    total = 10**7  # population sizes only set q here (no finite-population correction)
    big1 = round(q * total)
    q_exact = big1 / total
    pmf1 = stats.binom.pmf(np.arange(n1 + 1), n1, r1)
    pmf0 = stats.binom.pmf(np.arange(n0 + 1), n0, r0)
    exact = moments(*stratified_f1_distribution(q_exact, pmf1, pmf0))[1] ** 2
    tp, fn = round(n1 * r1), round(n0 * r0)
    assert (tp, fn) == pytest.approx((n1 * r1, n0 * r0), abs=1e-9)
    delta = f1_estimate(tp, n1 - tp, fn, n0 - fn, design="stratified",
                        population_sizes=(big1, total - big1)).variance
    assert abs(delta / exact - 1.0) < 0.05, f"relative error {delta / exact - 1.0:+.4f}"


# (N1, N0, relevant in N1, relevant in N0, n1, n0): sampling fractions of 11% to 50%.
FPC_SETTINGS = [
    (1000, 4000, 600, 40, 500, 2000),
    (400, 3600, 300, 36, 200, 1800),
    (1000, 9000, 700, 90, 500, 1000),
]


@pytest.mark.parametrize(("big1", "big0", "k1", "k0", "n1", "n0"), FPC_SETTINGS)
def test_finite_population_delta_variance_matches_exact_hypergeometric(big1, big0, k1, k0,
                                                                       n1, n0):
    pmf1 = stats.hypergeom.pmf(np.arange(n1 + 1), big1, k1, n1)
    pmf0 = stats.hypergeom.pmf(np.arange(n0 + 1), big0, k0, n0)
    exact = moments(*stratified_f1_distribution(big1 / (big1 + big0), pmf1, pmf0))[1] ** 2
    tp, fn = n1 * k1 // big1, n0 * k0 // big0
    assert (tp * big1, fn * big0) == (n1 * k1, n0 * k0)  # sample at the population proportions
    common = {"design": "stratified", "population_sizes": (big1, big0)}
    fpc = f1_estimate(tp, n1 - tp, fn, n0 - fn, finite_population=True, **common).variance
    plain = f1_estimate(tp, n1 - tp, fn, n0 - fn, **common).variance
    fpc_error, plain_error = abs(fpc / exact - 1.0), abs(plain / exact - 1.0)
    assert fpc_error < 0.05, f"fpc relative error {fpc_error:.4f}"
    assert fpc_error < plain_error / 10, (fpc_error, plain_error)


def test_fully_sampled_population_has_no_uncertainty():
    # N_h = n_h: the finite population's F1 is known exactly.
    options = {"design": "stratified", "population_sizes": (80, 420), "finite_population": True}
    est = f1_estimate(60, 20, 25, 395, **options)
    assert est.variance == 0.0
    for method in ("delta", "beta-posterior"):
        ci = f1_ci(60, 20, 25, 395, method=method, rng=1, draws=1000, **options)
        assert ci.low == ci.high == est.estimate


# --- 3. point estimates ----------------------------------------------------------------------


@given(counts=st.tuples(*(st.integers(0, 10**6),) * 4))
def test_srs_estimate_is_the_sample_f1(counts):
    tp, fp, fn, tn = counts
    got = f1_estimate(*counts).estimate
    matrix_f1 = ConfusionMatrix.binary(tp=tp, fp=fp, fn=fn, tn=tn).f1()
    if 2 * tp + fp + fn == 0:
        assert math.isnan(got) and math.isnan(matrix_f1)
    else:
        # Integer operands are exact in float64 and division is correctly rounded.
        assert got == matrix_f1 == float(Fraction(2 * tp, 2 * tp + fp + fn))


@given(counts=counts_st)
def test_stratified_with_the_sample_share_is_the_srs_estimate(counts):
    # With q = n1/n, 2 q R1 / (q R1 + q + (1 - q) R0) = 2 tp / (tp + n1 + fn).
    srs = f1_estimate(*counts).estimate
    stratified = f1_estimate(*counts, design="stratified", population_sizes="sample").estimate
    if math.isnan(srs):
        assert math.isnan(stratified)
    else:
        assert stratified == pytest.approx(srs, rel=1e-12, abs=0.0)


@given(tp=st.integers(0, 5000), fp=st.integers(0, 5000), fn=st.integers(0, 5000),
       tn=st.integers(0, 5000), extra1=st.integers(0, 10**6), extra0=st.integers(0, 10**6))
def test_stratified_estimate_with_population_sizes(tp, fp, fn, tn, extra1, extra0):
    # F1 of the population table expanded from each segment's sample proportion:
    # TP = N1 R1, FP = N1 (1 - R1), FN = N0 R0, in exact rational arithmetic.
    n1, n0 = tp + fp, fn + tn
    assume(n1 > 0 and n0 > 0)
    big1, big0 = n1 + extra1, n0 + extra0
    expected = Fraction(2 * big1 * tp * n0, big1 * tp * n0 + big1 * n1 * n0 + big0 * fn * n1)
    got = f1_estimate(tp, fp, fn, tn, design="stratified",
                      population_sizes=(big1, big0)).estimate
    assert got == pytest.approx(float(expected), rel=1e-12, abs=0.0)


UNDEFINED_CASES = [
    pytest.param((0, 0, 0, 7), {}, id="srs-no-positive"),
    pytest.param((0, 0, 0, 7), {"design": "stratified", "population_sizes": "sample"},
                 id="stratified-no-positive"),
    pytest.param((0, 0, 3, 50), {"design": "stratified", "population_sizes": (100, 1000)},
                 id="retrieved-segment-unsampled"),
    pytest.param((4, 1, 0, 0), {"design": "stratified", "population_sizes": (100, 1000)},
                 id="unretrieved-segment-unsampled"),
]


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(("counts", "options"), UNDEFINED_CASES)
def test_undefined_f1_gives_nan_estimate_and_bounds(counts, options, method, alternative):
    est = f1_estimate(*counts, **options)
    ci = est.confidence_interval(method=method, alternative=alternative, rng=0,
                                 draws=SMALL_DRAWS)
    assert math.isnan(est.estimate)
    assert math.isnan(ci.low) and math.isnan(ci.high)


@pytest.mark.parametrize("design", F1_DESIGNS)
@pytest.mark.parametrize("method", METHODS)
def test_empty_sample_gives_nan_and_does_not_spread(method, design):
    # An all-zero sample (2 tp + fp + fn = 0) next to a regular one in the same call.
    sizes = "sample" if design == "stratified" else None
    ci = f1_ci([0, 60], [0, 20], [0, 25], [0, 395], method=method, design=design,
               population_sizes=sizes, rng=0, draws=SMALL_DRAWS)
    assert np.isnan(ci.low[0]) and np.isnan(ci.high[0])
    assert 0.0 < ci.low[1] < ci.high[1] < 1.0


@pytest.mark.parametrize("method", METHODS)
def test_undefined_entry_does_not_spread(method):
    ci = f1_ci([0, 60], [0, 20], [0, 25], [7, 395], method=method, rng=0, draws=SMALL_DRAWS)
    assert np.isnan(ci.low[0]) and np.isnan(ci.high[0])
    assert 0.0 < ci.low[1] < ci.high[1] < 1.0
    if method in NORMAL_METHODS:
        expected = tuple(f1_ci(60, 20, 25, 395, method=method))
        assert (ci.low[1], ci.high[1]) == pytest.approx(expected, rel=1e-14)


def test_degenerate_estimates_follow_the_documented_rule():
    # Module docstring: zero-width delta interval at F1 = 0 or 1, nan logit interval.
    assert tuple(f1_ci(0, 3, 4, 10, method="delta")) == (0.0, 0.0)
    assert tuple(f1_ci(5, 0, 0, 10, method="delta")) == (1.0, 1.0)
    for counts in [(0, 3, 4, 10), (5, 0, 0, 10)]:
        low, high = f1_ci(*counts, method="logit-delta")
        assert math.isnan(low) and math.isnan(high)


# --- 4. beta posterior against quadrature ----------------------------------------------------


def beta_posterior_cdf(t: float, q: float, tp: int, fp: int, fn: int, tn: int) -> float:
    """``P(F <= t)`` for ``R1 ~ Beta(1/2 + tp, 1/2 + fp)``, ``R0 ~ Beta(1/2 + fn, 1/2 + tn)``.

    ``F = 2 q R1 / D`` with ``D = q R1 + q + (1 - q) R0`` has ``dF/dR1 = 2 q (q + (1 - q) R0)
    / D^2 > 0``, so for fixed R0, ``F <= t`` iff ``2 q R1 <= t D`` iff
    ``R1 <= t (q + (1 - q) R0) / (q (2 - t))`` (as ``t <= 1 < 2``). The R0 expectation of the
    Beta(R1) CDF at that point is integrated over ``u = CDF_R0(r0)``, where the integrand is
    bounded and smooth instead of a narrow spike.
    """

    def integrand(u: float) -> float:
        r0 = special.betaincinv(0.5 + fn, 0.5 + tn, u)
        return special.betainc(0.5 + tp, 0.5 + fp, min(1.0, t * (q + (1 - q) * r0)
                                                       / (q * (2 - t))))

    return integrate.quad(integrand, 0.0, 1.0, epsabs=1e-11, epsrel=1e-10, limit=200)[0]


BETA_POSTERIOR_CASES = [
    pytest.param((60, 20, 25, 395), None, id="60-20-25-395"),
    pytest.param((6, 2, 3, 40), None, id="6-2-3-40"),
    pytest.param((12, 30, 4, 954), None, id="12-30-4-954"),
    pytest.param((60, 20, 25, 395), (1000, 9000), id="60-20-25-395-q=0.1"),
]


@pytest.mark.parametrize(("counts", "sizes"), BETA_POSTERIOR_CASES)
def test_beta_posterior_bounds_are_exact_posterior_quantiles(counts, sizes):
    draws = 200_000
    tp, fp = counts[:2]
    # Section 4.3: the retrieved share is known; without population sizes it is the sample's.
    q = (tp + fp) / sum(counts) if sizes is None else sizes[0] / sum(sizes)
    design = "srs" if sizes is None else "stratified"
    two_sided = f1_ci(*counts, method="beta-posterior", design=design, population_sizes=sizes,
                      draws=draws, rng=20130101)
    lower = f1_ci(*counts, method="beta-posterior", design=design, population_sizes=sizes,
                  draws=draws, rng=20131027, alternative="greater")
    for p, bound in [(0.025, two_sided.low), (0.975, two_sided.high), (0.05, lower.low)]:
        exact = optimize.brentq(lambda t, p=p: beta_posterior_cdf(t, q, *counts) - p,
                                1e-9, 1.0 - 1e-9, xtol=1e-12)
        h = 1e-4
        density = (beta_posterior_cdf(exact + h, q, *counts)
                   - beta_posterior_cdf(exact - h, q, *counts)) / (2 * h)
        mcse = math.sqrt(p * (1 - p) / draws) / density
        assert abs(bound - exact) <= MC_SIGMAS * mcse, (
            f"p={p}: package {bound:.6f}, exact {exact:.6f}, {abs(bound - exact) / mcse:.1f} MCSE"
        )


def test_finite_population_beta_posterior_is_the_beta_binomial_predictive():
    # Half of each segment sampled. The unsampled relevant counts are Beta-binomial
    # (posterior predictive); the finite population's F1 is 2 TP / (TP + N1 + FN) with
    # TP = tp + Y1 and FN = fn + Y0. Exact discrete distribution by enumeration.
    tp, fp, fn, tn, big1, big0 = 60, 20, 25, 395, 160, 840
    draws = 200_000
    y1 = np.arange(big1 - tp - fp + 1)[:, None]
    y0 = np.arange(big0 - fn - tn + 1)[None, :]
    mass = (stats.betabinom.pmf(y1, big1 - tp - fp, 0.5 + tp, 0.5 + fp)
            * stats.betabinom.pmf(y0, big0 - fn - tn, 0.5 + fn, 0.5 + tn))
    values = 2 * (tp + y1) / (tp + y1 + big1 + fn + y0)
    dist = _sorted_distribution(values.ravel(), mass.ravel())
    ci = f1_ci(tp, fp, fn, tn, method="beta-posterior", design="stratified",
               population_sizes=(big1, big0), finite_population=True, draws=draws, rng=8)
    assert_sample_quantile(*dist, 0.025, ci.low, draws)
    assert_sample_quantile(*dist, 0.975, ci.high, draws)


# --- 5. bootstrap ----------------------------------------------------------------------------

BOOTSTRAP_COUNTS = (600, 200, 250, 3950)
BOOTSTRAP_DRAWS = 100_000
BOOTSTRAP_SIZES = (10**5, 9 * 10**5)  # stratified design: q = 0.1 against a sample share 0.16


def ideal_bootstrap_distribution(design: str) -> tuple[np.ndarray, np.ndarray]:
    """Exact distribution of the bootstrap replicate (infinitely many draws).

    SRS: resampling n with replacement is multinomial at the sample proportions. Stratified:
    each segment is resampled on its own, ``r_h* ~ Bin(n_h, R_h)``, with q known.
    """
    tp, fp, fn, tn = BOOTSTRAP_COUNTS
    if design == "srs":
        n = sum(BOOTSTRAP_COUNTS)
        return srs_f1_distribution(n, tp / n, (fp + fn) / n)
    n1, n0 = tp + fp, fn + tn
    q = BOOTSTRAP_SIZES[0] / sum(BOOTSTRAP_SIZES)
    return stratified_f1_distribution(q, stats.binom.pmf(np.arange(n1 + 1), n1, tp / n1),
                                      stats.binom.pmf(np.arange(n0 + 1), n0, fn / n0))


@pytest.mark.parametrize("design", F1_DESIGNS)
def test_bootstrap_bounds_are_quantiles_of_the_ideal_bootstrap(design):
    options = {} if design == "srs" else {"design": design, "population_sizes": BOOTSTRAP_SIZES}
    dist = ideal_bootstrap_distribution(design)
    ci = f1_ci(*BOOTSTRAP_COUNTS, method="bootstrap", draws=BOOTSTRAP_DRAWS, rng=3, **options)
    assert_sample_quantile(*dist, 0.025, ci.low, BOOTSTRAP_DRAWS)
    assert_sample_quantile(*dist, 0.975, ci.high, BOOTSTRAP_DRAWS)


def test_bootstrap_interval_is_the_delta_interval_up_to_skewness():
    # Cornish-Fisher: the ideal bootstrap p-quantile is mu + sigma (z + gamma (z^2 - 1) / 6)
    # + O(1/n), so it differs from the delta bound F + z sigma_delta by the bias mu - F, the
    # difference of the standard deviations and the skewness term, all computed exactly from
    # the ideal bootstrap distribution. Tolerance: 4 MCSE of the sample quantile plus the
    # size of the next Cornish-Fisher terms.
    dist = ideal_bootstrap_distribution("srs")
    mean, sd, skew, kurt = moments(*dist)
    est = f1_estimate(*BOOTSTRAP_COUNTS)
    boot = f1_ci(*BOOTSTRAP_COUNTS, method="bootstrap", draws=BOOTSTRAP_DRAWS, rng=5)
    delta = f1_ci(*BOOTSTRAP_COUNTS, method="delta")
    for p, got, normal in [(0.025, boot.low, delta.low), (0.975, boot.high, delta.high)]:
        z = stats.norm.ppf(p)
        offset = (mean - est.estimate + z * (sd - math.sqrt(est.variance))
                  + sd * skew * (z * z - 1) / 6)
        next_terms = sd * abs((z**3 - 3 * z) * (kurt - 3) / 24
                              - (2 * z**3 - 5 * z) * skew**2 / 36)
        h = sd / 5  # density from the exact CDF, over a span holding many lattice points
        x = mean + sd * z
        density = (cdf_below_and_at(*dist, x + h)[1] - cdf_below_and_at(*dist, x - h)[1]) / (2 * h)
        mcse = math.sqrt(p * (1 - p) / BOOTSTRAP_DRAWS) / density
        assert abs(got - normal - offset) <= MC_SIGMAS * mcse + next_terms, (
            f"p={p}: bootstrap {got:.6f}, delta {normal:.6f}, predicted offset {offset:+.6f}, "
            f"MCSE {mcse:.1e}"
        )


def test_bootstrap_replicate_spread_matches_exact_and_delta_standard_errors():
    dist = ideal_bootstrap_distribution("srs")
    _, sd, _, kurt = moments(*dist)
    est = f1_estimate(*BOOTSTRAP_COUNTS)
    replicates = _bootstrap_draws(est, np.random.default_rng(11), BOOTSTRAP_DRAWS)
    spread = float(np.std(replicates, ddof=1))
    mcse = sd * math.sqrt((kurt - 1) / (4 * BOOTSTRAP_DRAWS))  # large-sample SE of an SD
    assert abs(spread - sd) <= MC_SIGMAS * mcse, (spread, sd, mcse)
    # Against the delta SE the allowance adds the (exactly known) delta approximation error.
    se = math.sqrt(est.variance)
    assert abs(spread - se) <= abs(sd - se) + MC_SIGMAS * mcse, (spread, se)


@pytest.mark.parametrize("method", SIMULATED_METHODS)
def test_simulated_methods_are_reproducible(method):
    def bounds(rng):
        return tuple(f1_ci(60, 20, 25, 395, method=method, rng=rng, draws=2000))

    reference = bounds(12345)
    # default_rng(int) seeds through SeedSequence(int); a Generator is used as given.
    assert bounds(12345) == reference
    assert bounds(np.random.SeedSequence(12345)) == reference
    assert bounds(np.random.default_rng(12345)) == reference
    assert bounds(54321) != reference  # the seed is actually used
    generator = np.random.default_rng(7)
    assert bounds(generator) != bounds(generator)  # a Generator's state advances


def _nanquantile(replicates, probabilities):
    with warnings.catch_warnings():  # an all-nan column warns (and gives nan)
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanquantile(replicates, probabilities, axis=0, method="linear")


# columns of nan, of one defined value and of repeated values, with probabilities at the ends
@example(replicates=np.array([[np.nan, 0.3, 0.2], [np.nan, np.nan, 0.2], [np.nan, np.nan, 0.7]]),
         probabilities=[0.0, 0.025, 0.5, 0.975, 1.0])
@given(replicates=hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, max_side=40),
                             elements=st.one_of(st.just(np.nan),
                                                st.floats(-1e6, 1e6, allow_subnormal=True))),
       probabilities=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=4))
@settings(max_examples=300)
def test_percentile_bounds_are_numpy_nanquantile_bit_for_bit(replicates, probabilities):
    expected = _nanquantile(replicates, probabilities)
    got = _percentile_bounds(replicates, probabilities)
    assert len(got) == len(probabilities)
    for p, value, reference in zip(probabilities, got, expected, strict=True):
        # exact: the same floats (+0.0 and -0.0 compare equal), nan where numpy's are
        assert np.array_equal(value, reference, equal_nan=True), (p, value, reference)


@pytest.mark.parametrize("design", F1_DESIGNS)
@pytest.mark.parametrize("method", SIMULATED_METHODS)
def test_intervals_of_several_alternatives_from_one_draw_are_the_separate_calls(method, design):
    options = {} if design == "srs" else {"design": design, "population_sizes": BOOTSTRAP_SIZES}
    counts = ([60, 0, 3, 0], [20, 0, 1, 4], [25, 0, 2, 1], [395, 50, 44, 45])  # one undefined
    est = f1_estimate(*counts, **options)
    sides = ("greater", "two-sided", "less", "greater")
    together = est.confidence_intervals(0.9, method=method, alternatives=sides, rng=8,
                                        draws=SMALL_DRAWS)
    for side, interval in zip(sides, together, strict=True):
        alone = f1_ci(*counts, method=method, alternative=side, confidence_level=0.9, rng=8,
                      draws=SMALL_DRAWS, **options)
        assert interval.alternative == side and interval.method == method
        for got, expected in ((interval.low, alone.low), (interval.high, alone.high)):
            assert got.tobytes() == expected.tobytes(), (side, got, expected)
    # the draws are made once: a generator advances as much as for one interval
    one, several = np.random.default_rng(3), np.random.default_rng(3)
    est.confidence_interval(method=method, rng=one, draws=SMALL_DRAWS)
    est.confidence_intervals(method=method, rng=several, draws=SMALL_DRAWS)
    assert one.random() == several.random()


@pytest.mark.parametrize("alternatives", ["greater", (), ["two-sided", "sideways"], None])
def test_several_alternatives_must_be_a_sequence_of_alternatives(alternatives):
    with pytest.raises((ValueError, TypeError), match="alternative"):
        f1_estimate(6, 2, 2, 40).confidence_intervals(alternatives=alternatives)


# --- 6. interval identities and properties ---------------------------------------------------

defined_counts_st = st.tuples(st.integers(1, 5000), st.integers(0, 5000), st.integers(0, 5000),
                              st.integers(0, 5000)).filter(lambda c: c[1] + c[2] > 0)
level_st = st.floats(0.5, 0.999)


@given(counts=defined_counts_st, alpha=st.floats(0.001, 0.25))
def test_one_sided_bound_is_two_sided_bound_at_twice_alpha(counts, alpha):
    for method in NORMAL_METHODS:
        two_sided = f1_ci(*counts, method=method, confidence_level=1 - 2 * alpha)
        greater = f1_ci(*counts, method=method, confidence_level=1 - alpha,
                        alternative="greater")
        less = f1_ci(*counts, method=method, confidence_level=1 - alpha, alternative="less")
        assert greater.low == pytest.approx(two_sided.low, rel=1e-12, abs=1e-15)
        assert less.high == pytest.approx(two_sided.high, rel=1e-12, abs=1e-15)
        assert (greater.high, less.low) == (1.0, 0.0)


@given(counts=defined_counts_st, level=level_st, alternative=st.sampled_from(ALTERNATIVES))
def test_normal_intervals_are_the_documented_formulas(counts, level, alternative):
    # F +- z SE clipped to [0, 1], and expit(logit F +- z SE / (F (1 - F))), with SE from the
    # delta method on the trinomial (tp, fp + fn, tn) computed here and z from scipy.
    tp, fp, fn, tn = counts
    n = sum(counts)
    p = np.array([tp, fp + fn, tn]) / n
    grad = complex_step_gradient(lambda x: 2 * x[0] / (2 * x[0] + x[1]), p)
    se = math.sqrt(grad @ ((np.diag(p) - np.outer(p, p)) / n) @ grad)
    f = 2 * tp / (2 * tp + fp + fn)
    z = stats.norm.ppf(1 - (1 - level) / (2 if alternative == "two-sided" else 1))
    delta = [max(0.0, f - z * se), min(1.0, f + z * se)]
    logit = list(special.expit(special.logit(f) + np.array([-z, z]) * se / (f * (1 - f))))
    for method, (low, high) in [("delta", delta), ("logit-delta", logit)]:
        if alternative == "greater":
            high = 1.0
        elif alternative == "less":
            low = 0.0
        ci = f1_ci(*counts, method=method, confidence_level=level, alternative=alternative)
        assert tuple(ci) == pytest.approx((low, high), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("method", SIMULATED_METHODS)
def test_one_sided_simulated_bound_is_two_sided_bound_at_twice_alpha(method):
    # Same seed, same replicates: the quantiles are taken at the same probability.
    def ci(level, alternative):
        return f1_ci(60, 20, 25, 395, method=method, confidence_level=level,
                     alternative=alternative, rng=99, draws=5000)

    assert ci(0.95, "greater").low == pytest.approx(ci(0.90, "two-sided").low, rel=1e-12)
    assert ci(0.95, "less").high == pytest.approx(ci(0.90, "two-sided").high, rel=1e-12)


stratified_options_st = st.one_of(
    st.just({}),
    st.just({"design": "stratified", "population_sizes": "sample"}),
    st.tuples(st.integers(0, 10**5), st.integers(0, 10**5)).map(
        lambda extra: {"design": "stratified", "extra": extra}),
)


def _options(options: dict, counts: tuple[int, ...]) -> dict:
    """Population sizes from sample sizes plus the drawn extra documents."""
    if "extra" not in options:
        return options
    n1, n0 = counts[0] + counts[1], counts[2] + counts[3]
    sizes = (n1 + options["extra"][0], n0 + options["extra"][1])
    assume(sizes != (0, 0))  # an empty population is an error (tests/estimators/test_bad_input.py)
    return {"design": "stratified", "population_sizes": sizes}


@settings(max_examples=60)
@given(counts=counts_st, level=level_st, options=stratified_options_st)
def test_bounds_are_ordered_and_inside_the_unit_interval(counts, level, options):
    options = _options(options, counts)
    est = f1_estimate(*counts, **options)
    for method in METHODS:
        low, high = est.confidence_interval(level, method=method, rng=0, draws=SMALL_DRAWS)
        if math.isnan(est.estimate) or (method == "logit-delta" and est.estimate in (0.0, 1.0)):
            assert math.isnan(low) and math.isnan(high)
            continue
        assert 0.0 <= low <= high <= 1.0
        if method in NORMAL_METHODS:
            assert low <= est.estimate <= high


@settings(max_examples=60)
@given(counts=counts_st, levels=st.tuples(level_st, level_st), options=stratified_options_st)
def test_intervals_nest_as_the_level_rises(counts, levels, options):
    options = _options(options, counts)
    narrow, wide = sorted(levels)
    for method in METHODS:
        inner = f1_ci(*counts, method=method, confidence_level=narrow, rng=1, draws=SMALL_DRAWS,
                      **options)
        outer = f1_ci(*counts, method=method, confidence_level=wide, rng=1, draws=SMALL_DRAWS,
                      **options)
        if math.isnan(inner.low):
            assert math.isnan(outer.low)
            continue
        assert outer.low <= inner.low and inner.high <= outer.high


@example(counts=(1, 0, 8, 0), level=0.5, stratified=True)  # zero variance: expit(logit(F)) < F
@given(counts=defined_counts_st, level=level_st, stratified=st.booleans())
def test_logit_delta_interval_is_strictly_inside_the_unit_interval(counts, level, stratified):
    # tp > 0 and fp + fn > 0: 0 < F < 1.
    options = {"design": "stratified", "population_sizes": "sample"} if stratified else {}
    est = f1_estimate(*counts, **options)
    low, high = est.confidence_interval(level, method="logit-delta")
    assert 0.0 < low <= est.estimate <= high < 1.0


@pytest.mark.parametrize("method", METHODS)
def test_arrays_broadcast_and_scalars_give_floats(method):
    tp = np.array([[10], [40], [70]])
    fp = np.array([5, 0, 12, 30])
    tn = np.array([[400, 300, 200, 100]])
    est = f1_estimate(tp, fp, 8, tn)
    ci = f1_ci(tp, fp, 8, tn, method=method, rng=0, draws=SMALL_DRAWS)
    for value in (est.estimate, est.variance, ci.low, ci.high):
        assert np.shape(value) == (3, 4)
    assert np.all((ci.low <= ci.high) & (ci.low >= 0.0) & (ci.high <= 1.0))
    if method in NORMAL_METHODS:  # deterministic: each element is the scalar result
        for i, j in np.ndindex(3, 4):
            scalar = f1_ci(int(tp[i, 0]), int(fp[j]), 8, int(tn[0, j]), method=method)
            assert (ci.low[i, j], ci.high[i, j]) == pytest.approx(tuple(scalar), rel=1e-14)
    scalar_est = f1_estimate(60, 20, 25, 395)
    scalar_ci = f1_ci(60, 20, 25, 395, method=method, rng=0, draws=SMALL_DRAWS)
    for value in (scalar_est.estimate, scalar_est.variance, scalar_ci.low, scalar_ci.high):
        assert type(value) is float


@pytest.mark.parametrize("fp", [[20, 30], [[20, 30]] * 3], ids=["counts-1d", "counts-2d"])
def test_population_sizes_broadcast_with_counts(fp):
    sizes = (np.array([[1000], [2000], [3000]]), 10_000)
    est = f1_estimate(60, fp, 25, 395, design="stratified", population_sizes=sizes)
    assert np.shape(est.estimate) == np.shape(est.variance) == (3, 2)
    for i, j in np.ndindex(3, 2):
        scalar = f1_estimate(60, [20, 30][j], 25, 395, design="stratified",
                             population_sizes=(int(sizes[0][i, 0]), 10_000))
        # Array and scalar arithmetic may round differently in the last place (SIMD paths).
        assert (est.estimate[i, j], est.variance[i, j]) == pytest.approx(
            (scalar.estimate, scalar.variance), rel=1e-14)
    ci = f1_ci(60, fp, 25, 395, method="beta-posterior", design="stratified",
               population_sizes=sizes, rng=0, draws=SMALL_DRAWS)
    assert np.shape(ci.low) == np.shape(ci.high) == (3, 2)


# --- 7. bad input ----------------------------------------------------------------------------

VALID_CALL = {"tp": 60, "fp": 20, "fn": 25, "tn": 395}
STRATIFIED = {"design": "stratified"}

BAD_INPUT_CASES = [
    ({"tp": -1}, ValueError, r"`tp` must be non-negative"),
    ({"fn": [3, -2]}, ValueError, r"`fn` must be non-negative; got -2 at index 1"),
    ({"fp": 2.5}, ValueError, r"`fp` must hold whole numbers"),
    # 2**63 as unsigned wrapped to a negative int64 and gave a negative F1
    ({"fp": 2**63}, ValueError, r"`fp` must be at most 2\*\*53 = 9007199254740992; got 9223"),
    ({"fp": np.array([1, 2**63], dtype=np.uint64)}, ValueError,
     r"`fp` must be at most 2\*\*53 .* at index 1"),
    ({"tn": 1e300}, ValueError, r"`tn` must be at most 2\*\*53"),
    ({"tn": True}, TypeError, r"`tn` must be an integer count"),
    ({"tp": "60"}, TypeError, r"`tp` must be an integer count"),
    ({"tp": [1, 2], "fp": [1, 2, 3]}, ValueError, r"`tp`, `fp`, `fn`, `tn` must broadcast"),
    ({"method": "wald"}, ValueError, r"`method` must be one of"),
    ({"design": "cluster"}, ValueError, r"`design` must be one of"),
    ({"alternative": "two_sided"}, ValueError, r"`alternative` must be one of"),
    ({"confidence_level": 0.0}, ValueError, r"`confidence_level` must be strictly between"),
    ({"confidence_level": 1.0}, ValueError, r"`confidence_level` must be strictly between"),
    ({"confidence_level": 95}, ValueError, r"`confidence_level` must be strictly between"),
    ({"confidence_level": math.nan}, ValueError, r"`confidence_level` must be finite"),
    ({"confidence_level": "0.95"}, TypeError, r"`confidence_level` must be a real number"),
    ({"method": "bootstrap", "draws": 0}, ValueError, r"`draws` must be a positive integer"),
    ({"method": "bootstrap", "rng": "abc"}, TypeError, r"`rng` must be a numpy Generator"),
    ({"method": "delta", "rng": "abc"}, TypeError, r"`rng` must be a numpy Generator"),
    ({**STRATIFIED, "population_sizes": 5}, ValueError,
     r"`population_sizes` must be the segments' sizes \(N1, N0\), or 'sample' .*; got 5\.$"),
    ({"method": "beta-posterior", "draws": 10.0}, TypeError, r"`draws` must be a positive"),
    ({**STRATIFIED, "population_sizes": (50, 1000)}, ValueError,
     r"`population_sizes\[0\]` must be at least the segment's sample size "
     r"\(`tp` \+ `fp` = 80\); got 50"),
    ({**STRATIFIED, "population_sizes": (1000, 100)}, ValueError,
     r"`population_sizes\[1\]` must be at least the segment's sample size "
     r"\(`fn` \+ `tn` = 420\); got 100"),
    ({**STRATIFIED, "population_sizes": (-5, 1000)}, ValueError,
     r"`population_sizes\[0\]` must be non-negative"),
    ({**STRATIFIED, "population_sizes": (1000,)}, ValueError,
     r"`population_sizes` must be the segments' sizes .*; got \(1000,\)\.$"),
    ({**STRATIFIED, "population_sizes": "samples"}, ValueError,
     r"`population_sizes` must be the segments' sizes .*; got 'samples'\.$"),
    ({**STRATIFIED, "tp": [60, 61], "population_sizes": ([1000, 2000, 3000], 9000)}, ValueError,
     r"`population_sizes` must broadcast with the counts"),
    ({"population_sizes": (1000, 9000)}, ValueError,
     r"`population_sizes` and `finite_population` apply to design='stratified' only"),
    ({"finite_population": True}, ValueError,
     r"`population_sizes` and `finite_population` apply to design='stratified' only"),
    ({**STRATIFIED, "finite_population": True}, ValueError,
     r"`population_sizes` must be the segments' sizes .*; got None\.$"),
    ({**STRATIFIED, "population_sizes": "sample", "finite_population": True}, ValueError,
     r"`population_sizes` must be the segments' sizes \(N1, N0\) with "
     r"`finite_population=True` .*; got 'sample'\.$"),
    ({**STRATIFIED, "population_sizes": "sample", "method": "segments-hypergeometric"},
     ValueError, r"`population_sizes` must be the segments' sizes \(N1, N0\) with "
                 r"method='segments-hypergeometric' .*; got 'sample'\.$"),
    ({"population_sizes": "sample"}, ValueError,
     r"`population_sizes` and `finite_population` apply to design='stratified' only"),
    ({**STRATIFIED, "finite_population": 1}, TypeError, r"`finite_population` must be True or"),
    ({**STRATIFIED, "population_sizes": (1000, 9000), "finite_population": True,
      "method": "bootstrap"}, ValueError, r"`method` must not be 'bootstrap'"),
]


@pytest.mark.parametrize(("changes", "error", "message"), BAD_INPUT_CASES)
def test_bad_input_is_rejected_naming_the_argument(changes, error, message):
    with pytest.raises(error, match=message):
        f1_ci(**{**VALID_CALL, **changes})


def test_all_zero_population_sizes_are_rejected():
    with pytest.raises(ValueError, match=r"`population_sizes` must not both be 0"):
        f1_ci(0, 0, 0, 0, design="stratified", population_sizes=(0, 0))


@pytest.mark.parametrize(("argument", "valid"), [
    ("method", ("delta", "logit-delta", "beta-posterior", "bootstrap")),
    ("design", ("srs", "stratified")),
    ("alternative", ("two-sided", "greater", "less")),
])
def test_unknown_option_message_lists_the_valid_ones(argument, valid):
    with pytest.raises(ValueError, match=f"`{argument}` must be one of") as excinfo:
        f1_ci(**VALID_CALL, **{argument: "nonsense"})
    assert all(repr(option) in str(excinfo.value) for option in valid)
