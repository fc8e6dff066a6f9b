"""Performance measures and their MCSE: hand computation, brute force, exact vs Monte Carlo."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from estimators import proportion_ci
from studies.engine.performance import (
    MAX_RUNS,
    Estimates,
    OutcomeLaw,
    _monotone_runs,
    exact_measures,
    exact_performance,
    performance,
)
from studies.engine.tasks import CellTask, run_cell
from studies.suite.registry import get_study

MEAN_BIAS = get_study("mean_bias")
BINOMIAL = get_study("binomial_coverage")


def _wilson_se(count, replicates):
    """The MCSE of a share: half the width of statsmodels' Wilson interval at one SE (z = 1)."""
    low, high = proportion_confint(count, replicates, alpha=2 * stats.norm.sf(1.0),
                                   method="wilson")
    return (high - low) / 2


def test_a_share_of_0_or_1_has_an_mcse_above_0():
    # 6 passes in 6 attempts, 0 in 6: the Wilson half-width 1 / (2 (R + 1)), not 0
    for reject in (np.ones(6), np.zeros(6)):
        perf = performance(Estimates(reject=reject), 0.0)
        assert perf["rejection"].mcse == pytest.approx(_wilson_se(int(reject.sum()), 6))
        assert perf["rejection"].mcse == pytest.approx(1 / 14)
        assert perf["conditional_rejection"].mcse == pytest.approx(1 / 14)


def test_measures_match_hand_computation():
    t = np.array([0.8, 1.1, 1.3, 0.9, 1.4])
    se = np.array([0.2, 0.3, 0.25, 0.2, 0.35])
    low, high = t - 0.5, t + 0.5
    perf = performance(Estimates(estimate=t, se=se, low=low, high=high,
                                 reject=np.array([1, 0, 0, 0, 1], bool)), 1.0)
    r, s = 5, np.std(t, ddof=1)
    assert perf["bias"].value == pytest.approx(t.mean() - 1.0)
    assert perf["bias"].mcse == pytest.approx(s / math.sqrt(r))
    c = t - t.mean()
    kurtosis = np.mean(c**4) / np.mean(c**2) ** 2
    assert perf["empirical_se"].mcse == pytest.approx(s * math.sqrt((kurtosis - 1) / (4 * r)))
    e2 = (t - 1.0) ** 2
    mse_mcse = math.sqrt(((e2 - e2.mean()) ** 2).sum() / (r * (r - 1)))
    assert perf["mse"].mcse == pytest.approx(mse_mcse)
    model = math.sqrt(np.mean(se**2))
    assert perf["model_se"].value == pytest.approx(model)
    model_mcse = math.sqrt(np.var(se**2, ddof=1) / (4 * r)) / model
    assert perf["model_se"].mcse == pytest.approx(model_mcse)
    assert perf["coverage"].value == pytest.approx(np.mean((low <= 1) & (1 <= high)))
    assert perf["be_coverage"].value == pytest.approx(
        np.mean((low <= t.mean()) & (t.mean() <= high)))
    assert perf["rejection"].mcse == pytest.approx(_wilson_se(2, 5))


def test_frequency_weights_equal_repeated_rows():
    t = np.array([0.2, 0.5, 0.9])
    counts = np.array([3, 1, 2])
    tallied = performance(Estimates(estimate=t, low=t - 0.3, high=t + 0.3), 0.5, frequency=counts)
    expanded = np.repeat(t, counts)
    direct = performance(Estimates(estimate=expanded, low=expanded - 0.3, high=expanded + 0.3), 0.5)
    for name, measure in direct.measures.items():
        assert tallied[name].value == pytest.approx(measure.value)
        assert tallied[name].mcse == pytest.approx(measure.mcse)


def test_bad_input_messages():
    with pytest.raises(ValueError, match="`measures` must be among"):
        performance(Estimates(estimate=np.ones(3)), 1.0, measures=["power"])
    with pytest.raises(ValueError, match="at least 2"):
        performance(Estimates(estimate=np.ones(1)), 1.0)
    with pytest.raises(ValueError, match="one length"):
        performance(Estimates(estimate=np.ones(3), se=np.ones(2)), 1.0)


def _repeat(study, params, n_replicates, repeats, method):
    """Run one cell `repeats` times with different root seeds: values and reported MCSEs."""
    cells = [run_cell(CellTask(study, params, 0, n_replicates, root, "monte-carlo"))
             for root in range(repeats)]
    names = cells[0].performance[method].measures
    return {m: (np.array([c.performance[method][m].value for c in cells]),
                np.array([c.performance[method][m].mcse for c in cells])) for m in names}


@pytest.mark.parametrize("measure", ["bias", "empirical_se", "mse", "model_se", "model_se_error",
                                     "coverage", "width", "rejection"])
def test_mcse_matches_brute_force_spread_of_mean_study(measure, mean_repeats):
    # 500 repeats: the SD of 500 values has relative SE 1/sqrt(998) = 3.2%, so 15% is > 4 SE.
    values, mcse = mean_repeats[measure]
    assert np.std(values, ddof=1) == pytest.approx(np.mean(mcse), rel=0.15)


@pytest.fixture(scope="module")
def mean_repeats():
    return _repeat(MEAN_BIAS, {"distribution": "normal", "n": 10}, 300, 500, "mean")


def test_the_mcse_of_the_empirical_se_holds_for_skewed_estimates():
    # exponential estimates (kurtosis 9): the SD of 500 empirical SEs over R = 2000 matches
    # their mean MCSE within 15% (> 4 SEs of an SD of 500 values); the normal-theory
    # S / sqrt(2 (R - 1)) is half of it
    gen = np.random.default_rng(5)
    found = [performance(Estimates(estimate=gen.exponential(1.0, 2000)), 1.0,
                         measures=["empirical_se"])["empirical_se"] for _ in range(500)]
    values, mcse = np.array([f.value for f in found]), np.array([f.mcse for f in found])
    assert np.std(values, ddof=1) == pytest.approx(np.mean(mcse), rel=0.15)
    assert np.mean(values / math.sqrt(2 * 1999)) < 0.6 * np.std(values, ddof=1)


@pytest.mark.parametrize("method", ["wald", "wilson"])
def test_mcse_matches_brute_force_spread_of_binomial_coverage(method):
    values, mcse = _repeat(BINOMIAL, {"n": 30, "p": 0.2, "confidence_level": 0.95}, 400, 500,
                           method)["coverage"]
    assert np.std(values, ddof=1) == pytest.approx(np.mean(mcse), rel=0.15)


def test_exact_path_matches_enumeration_by_hand():
    params = {"n": 30, "p": 0.2, "confidence_level": 0.95}
    cell = run_cell(CellTask(BINOMIAL, params, 0, 2, 0, "exact"))
    x = np.arange(31)
    for method in ("wald", "wilson"):
        low, high = proportion_ci(x, 30, method=method)
        expected = stats.binom.pmf(x, 30, 0.2)[(low <= 0.2) & (0.2 <= high)].sum()
        assert cell.performance[method]["coverage"].value == pytest.approx(expected, abs=1e-12)
        assert cell.performance[method]["coverage"].mcse == 0.0
        assert cell.performance[method].n_replicates is None


def test_exact_path_agrees_with_a_large_monte_carlo_run():
    params = {"n": 30, "p": 0.2, "confidence_level": 0.95}
    exact = run_cell(CellTask(BINOMIAL, params, 0, 2, 0, "exact")).performance
    mc = run_cell(CellTask(BINOMIAL, params, 0, 1_000_000, 7, "monte-carlo")).performance
    for method in ("wald", "wilson"):
        for measure in ("coverage", "width", "bias"):
            gap = abs(mc[method][measure].value - exact[method][measure].value)
            assert gap <= 4 * mc[method][measure].mcse + 1e-12, (method, measure)


def _random_estimates(rng, k):
    t = rng.normal(0.4, 0.3, k)
    half = rng.uniform(0.05, 0.5, k)
    return Estimates(estimate=t, se=half / 2, low=t - half, high=t + half,
                     reject=rng.random(k) < 0.3)


def test_exact_performance_matches_performance_cell_by_cell():
    rng = np.random.default_rng(5)
    est = _random_estimates(rng, 40)
    probability = rng.dirichlet(np.full(40, 0.5), size=6)
    truths = np.array([0.0, 0.1, 0.4, 0.45, -0.2, 1.0])  # 0: relative bias is nan
    batched = exact_performance(est, truths, probability)
    for row, theta, perf in zip(probability, truths, batched, strict=True):
        alone = performance(est, theta, probability=row)
        assert list(perf.measures) == list(alone.measures) and perf.n_replicates is None
        for name, measure in alone.measures.items():
            assert perf[name].value == pytest.approx(measure.value, abs=1e-12, nan_ok=True)
            assert perf[name].mcse == 0.0


def test_exact_performance_of_a_cell_does_not_depend_on_the_other_cells():
    # resume may recompute part of a group: its cells must get bit-identical results
    rng = np.random.default_rng(6)
    est = _random_estimates(rng, 300)
    probability = rng.dirichlet(np.ones(300), size=50)
    truths = rng.uniform(0, 1, 50)
    whole = exact_performance(est, truths, probability)
    part = exact_performance(est, truths[7:10], probability[7:10])
    assert [p.to_dict() for p in whole[7:10]] == [p.to_dict() for p in part]


def test_exact_performance_bad_input():
    est = Estimates(estimate=np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"must be a non-negative \(1, 2\) matrix"):
        exact_performance(est, [0.5], [[0.5, 0.5, 0.0]])
    with pytest.raises(ValueError, match="rows must sum to 1"):
        exact_performance(est, [0.5, 0.5], [[0.5, 0.5], [0.5, 0.4]])


def test_two_equally_likely_estimates_have_kurtosis_one_and_a_finite_mcse():
    t = np.tile([0.2, 0.5], 500)  # kurtosis exactly 1 in theory, a hair below in floating point
    found = performance(Estimates(estimate=t), 0.4, measures=["empirical_se"])["empirical_se"]
    assert found.value == pytest.approx(0.15 * math.sqrt(1000 / 999))
    assert 0.0 <= found.mcse < 1e-6


def test_tests_not_made_and_planned_sizes_match_hand_computation():
    # A nan ``reject`` is a replicate without a test; sizes are summarised where defined.
    reject = np.array([1.0, 0.0, np.nan, 1.0, np.nan, 1.0, 1.0, 0.0])
    size = np.array([120.0, 80.0, np.nan, 300.0, np.nan, 150.0, 90.0, 200.0])
    perf = performance(Estimates(reject=reject, size=size), 0.0)
    assert perf["tested"].value == 6 / 8
    assert perf["tested"].mcse == pytest.approx(_wilson_se(6, 8))
    assert perf["rejection"].value == 4 / 8
    assert perf["conditional_rejection"].value == pytest.approx(4 / 6)
    assert perf["conditional_rejection"].mcse == pytest.approx(_wilson_se(4, 6))
    defined = size[~np.isnan(size)]
    assert perf["mean_size"].value == pytest.approx(defined.mean())
    assert perf["mean_size"].mcse == pytest.approx(defined.std(ddof=1) / math.sqrt(6))
    for name, q in (("lower_quartile_size", 0.25), ("median_size", 0.5),
                    ("upper_quartile_size", 0.75)):
        assert perf[name].value == np.quantile(defined, q, method="inverted_cdf")
    # tallied rows give what repeated rows give, and the exact path what the weights say
    tallied = performance(Estimates(reject=reject[:4], size=size[:4]), 0.0,
                          frequency=[2, 1, 3, 2])
    repeated = performance(Estimates(reject=np.repeat(reject[:4], [2, 1, 3, 2]),
                                     size=np.repeat(size[:4], [2, 1, 3, 2])), 0.0)
    for name, measure in repeated.measures.items():
        assert tallied[name].value == pytest.approx(measure.value), name
        assert tallied[name].mcse == pytest.approx(measure.mcse), name
    exact = exact_performance(Estimates(reject=reject[:4], size=size[:4]), [0.0],
                              [[0.25, 0.125, 0.375, 0.25]])[0]
    for name in ("tested", "rejection", "conditional_rejection", "mean_size", "median_size",
                 "lower_quartile_size", "upper_quartile_size"):
        assert exact[name].value == pytest.approx(repeated[name].value), name
        assert exact[name].mcse == 0.0


def test_a_quantile_mcse_matches_the_spread_of_repeated_medians():
    # 400 runs of 500 lognormal sizes: the order-statistic MCSE of the median is within 15%
    # of the standard deviation of the 400 medians (its own relative SE is about 4%).
    rng = np.random.default_rng(41)
    sizes = rng.lognormal(6.0, 0.8, size=(400, 500))
    medians = np.median(sizes, axis=1)
    mcse = np.mean([performance(Estimates(size=row), 0.0)["median_size"].mcse
                    for row in sizes[:50]])
    assert abs(mcse / medians.std(ddof=1) - 1.0) < 0.15


def test_one_test_or_one_size_has_an_undefined_mcse():
    # A single attempt: its pass rate and size are known, their Monte Carlo spread is not.
    perf = performance(Estimates(reject=np.array([1.0, np.nan, np.nan, np.nan]),
                                 size=np.array([100.0, np.nan, np.nan, np.nan])), 0.0)
    assert perf["conditional_rejection"].value == 1.0
    for name in ("conditional_rejection", "mean_size", "median_size", "lower_quartile_size",
                 "upper_quartile_size"):
        assert math.isnan(perf[name].mcse), name
    assert perf["median_size"].value == 100.0
    # no test at all: no pass rate and no size
    none = performance(Estimates(reject=np.full(3, np.nan), size=np.full(3, np.nan)), 0.0)
    assert none["tested"].value == 0.0 and math.isnan(none["conditional_rejection"].value)
    assert math.isnan(none["median_size"].value)


def test_decisions_and_savings_match_hand_computation():
    # Eight replicates: a decision right or wrong (nan: none, not right), a saving against a
    # reference (nan: undefined) and whether a test was made.
    correct = np.array([1.0, 0.0, 1.0, np.nan, 1.0, 1.0, 0.0, 1.0])
    saving = np.array([0.4, -0.2, np.nan, 0.1, 0.3, np.nan, 0.0, 0.5])
    reject = np.array([1.0, np.nan, 0.0, 1.0, np.nan, 1.0, 1.0, 0.0])
    perf = performance(Estimates(reject=reject, correct=correct, saving=saving), 0.0)
    assert perf["correct_share"].value == 5 / 8
    assert perf["correct_share"].mcse == pytest.approx(_wilson_se(5, 8))
    defined = saving[~np.isnan(saving)]
    assert perf["mean_saving"].value == pytest.approx(defined.mean())
    assert perf["mean_saving"].mcse == pytest.approx(defined.std(ddof=1) / math.sqrt(6))
    both = saving[~np.isnan(saving) & ~np.isnan(reject)]
    assert both.tolist() == [0.4, 0.1, 0.0, 0.5]
    assert perf["conditional_saving"].value == pytest.approx(both.mean())
    assert perf["conditional_saving"].mcse == pytest.approx(both.std(ddof=1) / 2.0)
    # the exact path weights the same values by their probabilities
    exact = exact_performance(Estimates(reject=reject, correct=correct, saving=saving), [0.0],
                              [np.full(8, 1 / 8)])[0]
    for name in ("correct_share", "mean_saving", "conditional_saving"):
        assert exact[name].value == pytest.approx(perf[name].value, abs=1e-12)
        assert exact[name].mcse == 0.0


def test_a_saving_nowhere_defined_is_nan():
    perf = performance(Estimates(saving=np.full(4, np.nan), reject=np.zeros(4)), 0.0)
    assert math.isnan(perf["mean_saving"].value) and math.isnan(perf["conditional_saving"].value)
    exact = exact_performance(Estimates(saving=np.array([np.nan, 0.5])), [0.0], [[1.0, 0.0]])
    assert math.isnan(exact[0]["mean_saving"].value)


def _hand_coverage(low, high, p, n):
    """Sum of Binomial(n, p) probabilities over the counts whose [low, high] contains p."""
    x = np.arange(n + 1)
    return float(stats.binom.pmf(x, n, p)[(low <= p) & (p <= high)].sum())


def test_exact_coverage_by_binary_search_counts_a_bound_exactly_at_the_true_value():
    # One monotone run, dyadic values so that bounds equal p exactly: [(x - 1) / 8,
    # (x + 1) / 8] clipped to [0, 1], x = 0..8, covers p = 3/8 at x = 2..4 (high = p at
    # x = 2, low = p at x = 4) and p = 5/8 at x = 4..6 (high = p at 4, low = p at 6).
    x = np.arange(9)
    low, high = np.clip((x - 1) / 8, 0, 1), np.clip((x + 1) / 8, 0, 1)
    assert _monotone_runs(low, high) == [(0, 9)]
    ps = [0.375, 0.625]
    law = OutcomeLaw([stats.binom.pmf(x, 8, p) for p in ps])
    found = exact_performance(Estimates(low=low, high=high), ps, law, measures=["coverage"])
    for perf, p, covered in zip(found, ps, ([2, 3, 4], [4, 5, 6]), strict=True):
        expected = float(stats.binom.pmf(covered, 8, p).sum())
        assert expected == pytest.approx(_hand_coverage(low, high, p, 8), abs=1e-15)
        assert perf["coverage"].value == pytest.approx(expected, abs=1e-14)


def test_exact_coverage_count_by_count_counts_a_bound_exactly_at_the_true_value():
    # A zigzag of 100 runs (more than MAX_RUNS: summed outcome by outcome), x = 0..299 at
    # p = 3/8: x % 3 == 0 has low = p, x % 3 == 1 has high = p, x % 3 == 2 lies above p.
    n, p = 299, 0.375
    x = np.arange(n + 1)
    low = np.choose(x % 3, [p, 0.0, 0.9])
    high = np.choose(x % 3, [1.0, p, 1.0])
    assert _monotone_runs(low, high) is None and (n + 1) // 3 > MAX_RUNS
    pmf = stats.binom.pmf(x, n, p)
    found = exact_performance(Estimates(low=low, high=high), [p], OutcomeLaw([pmf]),
                              measures=["coverage"])
    expected = float(pmf[x % 3 != 2].sum())
    assert expected == pytest.approx(_hand_coverage(low, high, p, n), abs=1e-15)
    assert found[0]["coverage"].value == pytest.approx(expected, abs=1e-14)


def _every_field(rng, k):
    """Estimates with every field, undefined (nan) entries where a field allows them."""
    t = rng.normal(0.4, 0.3, k)
    half = rng.uniform(0.05, 0.5, k)
    missing = rng.random((4, k)) < 0.3
    return Estimates(
        estimate=t, se=half / 2, low=t - half, high=t + half,
        reject=np.where(missing[0], np.nan, rng.random(k) < 0.4),
        size=np.where(missing[1], np.nan, rng.integers(10, 200, k).astype(float)),
        correct=np.where(missing[2], np.nan, rng.random(k) < 0.6),
        saving=np.where(missing[3], np.nan, rng.uniform(-0.5, 0.9, k)))


@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 300), theta=st.floats(-1.0, 1.0))
def test_one_cell_and_many_cells_give_the_same_measures(seed, k, theta):
    # performance() on one cell's probabilities and exact_measures() on many cells take the
    # expectations their own way (a sum vs row by row, coverage outcome by outcome vs by
    # monotone runs): every measure agrees to rounding.
    rng = np.random.default_rng(seed)
    est = _every_field(rng, k)
    p = rng.dirichlet(np.full(k, 0.7)) * (rng.random(k) < 0.8)
    p[rng.integers(k)] += 0.1
    p /= p.sum()
    alone = performance(est, theta, probability=p)
    many = exact_measures(est, [theta], [p])
    assert list(many) == list(alone.measures)
    for name, values in many.items():
        assert values.shape == (1,)
        assert values[0] == pytest.approx(alone[name].value, rel=1e-12, abs=1e-12, nan_ok=True), \
            name
        assert alone[name].mcse == 0.0 or math.isnan(alone[name].mcse), name
    # and both are the plain probability-weighted sums
    t, low, high = est.estimate, est.low, est.high
    t_bar = np.sum(p * t)
    plain = {"bias": t_bar - theta, "empirical_se": math.sqrt(np.sum(p * (t - t_bar) ** 2)),
             "coverage": np.sum(p[(low <= theta) & (theta <= high)]),
             "width": np.sum(p * (high - low))}
    for name, value in plain.items():
        assert many[name][0] == pytest.approx(value, rel=1e-12, abs=1e-14), name


@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 300), theta=st.floats(-1.0, 1.0))
def test_equal_weights_give_the_plain_sample_measures(seed, k, theta):
    rng = np.random.default_rng(seed)
    est = _every_field(rng, k)
    perf = performance(est, theta)
    t, low, high = est.estimate, est.low, est.high
    plain = {"bias": t.mean() - theta, "empirical_se": t.std(ddof=1),
             "mse": np.mean((t - theta) ** 2),
             "coverage": np.mean((low <= theta) & (theta <= high)),
             "be_coverage": np.mean((low <= t.mean()) & (t.mean() <= high)),
             "width": np.mean(high - low), "model_se": math.sqrt(np.mean(est.se**2)),
             "tested": np.mean(~np.isnan(est.reject)), "rejection": np.nansum(est.reject) / k,
             "correct_share": np.mean(est.correct == 1.0),
             "mean_saving": np.nanmean(est.saving) if (~np.isnan(est.saving)).any()
             else math.nan}
    for name, value in plain.items():
        assert perf[name].value == pytest.approx(value, rel=1e-12, abs=1e-14, nan_ok=True), name
    assert perf["bias"].mcse == pytest.approx(t.std(ddof=1) / math.sqrt(k), rel=1e-12)
    # a count of replicates over R is an exact multiple of 1 / R
    assert perf["tested"].value == np.sum(~np.isnan(est.reject)) / k
