"""Findings of the bias study (F1, sampling and sequential testing), pinned."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats

from estimators import StratifiedEstimate, srs_estimate, stratified_proportion
from studies.engine import run
from studies.engine.assertions import assert_coverage, assert_measure
from studies.engine.design import Grid
from studies.suite import bias_sampling as sampling
from studies.suite.registry import get_study

F1 = get_study("studies.suite.bias_f1:STUDY")
SAMPLING = get_study("studies.suite.bias_sampling:STUDY")
SEQUENTIAL = get_study("studies.suite.bias_sequential:STUDY")
# Exact-path tolerance: rounding only (utilities are in the hundreds, so 1e-9 relative).
ROUNDING = 1e-9
SMALL_SAMPLING = Grid({"sizes": [[200, 50, 20]], "sampled": [[5, 5, 5]],
                       "prevalence": [[0.02, 0.2, 0.6], [0.3, 0.3, 0.3]],
                       "utility": [[3, -1]]}, n_replicates=20_000)


@pytest.fixture(scope="module")
def f1_bias():
    return run([F1], rng=1, workers=1)["bias_f1"]


@pytest.fixture(scope="module")
def utility_bias():
    return run([SAMPLING], rng=1, workers=1)["bias_sampling"]


@pytest.fixture(scope="module")
def sequential():
    grid = Grid({"n": [200], "prevalence": [0.2], "rho": [0.0, 0.9], "theta": [0.75],
                 "n_cert": [1000]}, n_replicates=4_000)
    return run([SEQUENTIAL], grid=grid, rng=5, workers=1)["bias_sequential"]


# ------------------------------------------------------------------------------ plug-in F1


def test_plug_in_f1_is_biased_low_at_small_n(f1_bias):
    rows = f1_bias.rows("bias")
    assert all(row["mcse"] == 0.0 and row["value"] < 0.0 for row in rows)
    with pytest.raises(AssertionError, match=r"plug-in at \{'n': 10, 'prevalence': 0.05"):
        assert_measure(f1_bias, "bias", 0.0, tolerance=0.01)
    worst = min(row["value"] for row in rows if row["params"]["n"] == 10)
    assert worst < -0.1


def test_plug_in_f1_bias_shrinks_with_n(f1_bias):
    by_cell: dict[tuple[float, float], list[tuple[int, float]]] = {}
    for row in f1_bias.rows("bias"):
        p = row["params"]
        by_cell.setdefault((p["prevalence"], p["f1"]), []).append((p["n"], row["value"]))
    for series in by_cell.values():
        biases = [bias for _, bias in sorted(series)]
        assert np.all(np.diff(np.abs(biases)) < 0), series
    large = Grid({"n": [300], "prevalence": [0.2, 0.5], "f1": [0.5, 0.8]}, n_replicates=2)
    assert_measure(run([F1], grid=large, workers=1)["bias_f1"], "bias", 0.0, tolerance=0.0025)


def test_f1_monte_carlo_path_agrees_with_exact_path():
    grid = Grid({"n": [30], "prevalence": [0.2], "f1": [0.5]}, n_replicates=20_000)
    exact = run([F1], grid=grid, workers=1)["bias_f1"].rows("bias")[0]["value"]
    mc = run([F1], grid=grid, rng=3, workers=1, path="monte-carlo")["bias_f1"]
    assert_measure(mc, "bias", exact)


# ------------------------------------------------------------------ SRS, stratified, pooled


def test_srs_and_stratified_utility_estimators_are_exactly_unbiased(utility_bias):
    for method in ("srs", "stratified"):
        assert_measure(utility_bias, "relative_bias", 0.0, method=method, tolerance=ROUNDING)


def test_their_variance_estimators_are_exactly_unbiased(utility_bias):
    for method in ("srs", "stratified"):
        assert_measure(utility_bias, "model_se_error", 0.0, method=method, tolerance=ROUNDING)


def test_pooled_estimator_is_biased_low_in_every_cell(utility_bias):
    rows = utility_bias.rows("bias", method="pooled")
    assert len(rows) == 12
    assert all(row["value"] < 0.0 for row in rows)  # strictly: relevant documents go unjudged


def _design_se(sizes, sampled, relevant):
    """Var of the SRS and stratified proportion estimators (Cochran 1977, eq. 3.2 and 5.3)."""
    size, n = sizes.sum(), sampled.sum()
    p, p_h, weight = relevant.sum() / size, relevant / sizes, sizes / size
    srs = (size - n) / (size - 1) * p * (1 - p) / n
    stratified = np.sum(weight**2 * (sizes - sampled) / (sizes - 1) * p_h * (1 - p_h) / sampled)
    return np.sqrt(srs), np.sqrt(stratified)


def test_efficiency_table_matches_the_design_variances_and_names_the_precise_design(
        utility_bias):
    rows = sampling.efficiency_table(utility_bias)
    assert len(rows) == 12
    for row, cell in zip(rows, utility_bias.cells, strict=True):
        srs, stratified = _design_se(*sampling.population(cell.params))
        assert row["se_ratio"] == pytest.approx(stratified / srs, rel=ROUNDING)
        assert row["more_precise"] == ("stratified" if stratified < srs else "srs")
    # stratified is the more precise design only for the profile rising toward small strata
    assert sum(r["more_precise"] == "stratified" for r in rows) == 4
    assert {r["prevalence"] for r in rows if r["more_precise"] == "stratified"} == {
        "[0.02, 0.2, 0.6]"}


def test_srs_and_stratified_bias_within_mcse_on_the_monte_carlo_path():
    result = run([SAMPLING], grid=SMALL_SAMPLING, rng=7, workers=1,
                 path="monte-carlo")["bias_sampling"]
    for method in ("srs", "stratified"):
        assert_measure(result, "bias", 0.0, method=method)
        assert_measure(result, "model_se_error", 0.0, method=method)
    assert all(row["value"] + 3 * row["mcse"] < 0 for row in result.rows("bias", method="pooled"))


def _shrunk(sizes, sampled, positives):
    """The stratified estimator with its variance shrunk by 0.7: deliberately broken."""
    estimate, variance = stratified_proportion(sizes, sampled, positives)
    return estimate, 0.7 * variance


def _unweighted(sizes, sampled, positives):
    """``sum a_h / sum n_h``, ignoring the strata's weights: deliberately biased."""
    _, variance = stratified_proportion(sizes, sampled, positives)
    return positives.sum(axis=1) / sampled.sum(), variance


def test_broken_methods_fail_the_matching_assertions():
    methods = {**SAMPLING.methods, "shrunk": SAMPLING.wrap_method(_shrunk),
               "unweighted": SAMPLING.wrap_method(_unweighted)}
    broken = dataclasses.replace(SAMPLING, methods=methods)
    result = run([broken], grid=SMALL_SAMPLING, rng=8, workers=1,
                 path="monte-carlo")["bias_sampling"]
    assert_measure(result, "model_se_error", 0.0, method="stratified")
    with pytest.raises(AssertionError, match="2 of 2 model_se_error checks failed"):
        assert_measure(result, "model_se_error", 0.0, method="shrunk")
    assert_measure(result, "bias", 0.0, method="stratified")
    # biased where prevalence differs between strata (unbiased when it is flat)
    with pytest.raises(AssertionError, match=r"1 of 2 bias checks failed:\nunweighted at "
                                             r".*'prevalence': \[0.02, 0.2, 0.6\]"):
        assert_measure(result, "bias", 0.0, method="unweighted")


def test_vectorised_estimators_match_estimators_sampling():
    params = SMALL_SAMPLING.cells()[0]
    sizes, sampled, _ = sampling.population(params)
    rng = np.random.default_rng(0)
    data = SAMPLING.generate(params, 20, rng=rng).data
    strat = SAMPLING.methods["stratified"](data, params)
    simple = SAMPLING.methods["srs"](data, params)
    for i in range(20):
        ref = StratifiedEstimate(sizes, sampled, data[1][i]).utility(u_a=3, u_b=-1)
        assert strat.estimate[i] == pytest.approx(ref.estimate, rel=1e-12)
        assert strat.se[i] ** 2 == pytest.approx(ref.mse, rel=1e-12, abs=1e-12)
        one = srs_estimate(int(sizes.sum()), int(sampled.sum()), int(data[0][i]))
        assert simple.estimate[i] == pytest.approx(one.utility(u_a=3, u_b=-1).estimate)
        assert simple.se[i] ** 2 == pytest.approx(one.utility(u_a=3, u_b=-1).mse, rel=1e-12,
                                                  abs=1e-12)


def test_exact_outcome_probabilities_are_the_product_of_hypergeometric_pmfs():
    cells = SMALL_SAMPLING.cells()
    sample = SAMPLING.enumerate_outcomes(cells)
    srs, strata = sample.data
    assert sample.size == 16 * 6**3
    for row, params in zip(sample.probability, cells, strict=True):
        sizes, sampled, relevant = sampling.population(params)
        direct = stats.hypergeom.pmf(srs, sizes.sum(), relevant.sum(), sampled.sum())
        for h in range(sizes.size):
            direct = direct * stats.hypergeom.pmf(strata[:, h], sizes[h], relevant[h],
                                                  sampled[h])
        np.testing.assert_allclose(row, direct, rtol=1e-12, atol=1e-300)


# ------------------------------------------------------------------------------ sequential


def test_sequential_stopping_on_a_reused_test_set_is_optimistic(sequential):
    # the reported F1 exceeds the stopped classifier's true F1 by more than 0.02 on average
    assert_measure(sequential, "bias", 0.02, method="reused-test-set", alternative="greater")
    shares = [row["value"] for row in sequential.rows("rejection", method="reused-test-set")]
    assert min(shares) > 0.5  # mostly stopped below theta
    with pytest.raises(AssertionError, match="2 of 2 coverage checks failed"):
        assert_coverage(sequential, 0.95, method="reused-test-set")


def test_fresh_certification_set_is_unbiased(sequential):
    assert_measure(sequential, "bias", 0.0, method="fresh-certification-set")
    # the reused set fails the same assertion: it can fail
    with pytest.raises(AssertionError, match="2 of 2 bias checks failed"):
        assert_measure(sequential, "bias", 0.0, method="reused-test-set")
    false_claims = sequential.rows("rejection", method="fresh-certification-set")
    assert all(row["value"] < 0.05 for row in false_claims)


def test_stopping_index_takes_first_crossing_or_last():
    from studies.suite.bias_sequential import N_CLASSIFIERS, stopping_index

    estimates = np.zeros((2, N_CLASSIFIERS))
    estimates[0, [4, 7]] = 0.8
    assert stopping_index(estimates, 0.75).tolist() == [4, N_CLASSIFIERS - 1]


def _rates_at_stop(rho: float, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """Stopped classifiers and their reused-set counts, n = 200, prevalence 0.3."""
    params = {"n": 200, "prevalence": 0.3, "rho": rho, "theta": theta, "n_cert": 100}
    stopped, reused, _ = SEQUENTIAL.generate(params, 4_000, rng=3).data
    return stopped, reused


@pytest.mark.parametrize("rho", [0.0, 0.9])
@pytest.mark.parametrize(("theta", "k"), [(0.0, 0), (1.1, -1)])
def test_sequential_counts_have_each_classifiers_rates(rho, theta, k):
    # theta = 0 stops every replicate at the first classifier, 1.1 at the last: the counts
    # there have that classifier's recall F_k and false-positive rate s_k (4 SE)
    from studies.suite.bias_sequential import N_CLASSIFIERS, true_f1

    stopped, counts = _rates_at_stop(rho, theta)
    assert (stopped == range(N_CLASSIFIERS)[k]).all() and (counts.sum(axis=1) == 200).all()
    tp, fp, fn, tn = counts.sum(axis=0)
    f1 = true_f1()[k]
    for hits, trials, rate in ((tp, tp + fn, f1), (fp, fp + tn, 0.3 * (1 - f1) / 0.7)):
        assert abs(hits / trials - rate) < 4 * np.sqrt(rate * (1 - rate) / trials)


def test_sequential_binomial_counts_match_independent_documents():
    # rho = 0 draws each classifier's counts as binomials; a tiny rho draws every document's
    # flags: the stopped classifier has the same law (chi-square over the stopping index)
    stopped = [_rates_at_stop(rho, 0.75)[0] for rho in (0.0, 1e-9)]
    table = np.array([np.bincount(s, minlength=30) for s in stopped])
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table).pvalue > 1e-3
