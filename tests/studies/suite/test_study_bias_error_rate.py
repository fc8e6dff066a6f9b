"""Error-rate estimators of seed 001: findings pinned with the engine's statistical assertions."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import special

from studies.engine import StudyResult, run
from studies.engine.assertions import assert_measure
from studies.engine.design import Grid
from studies.engine.findings import estimate
from studies.engine.performance import Estimates
from studies.suite.bias_error_rate import (
    apparent,
    bootstrap_e0,
    cross_validation,
    holdout,
    leave_one_out,
    loo_target,
    true_errors,
    wrap_method,
)
from studies.suite.registry import get_study

NAME = "studies.suite.bias_error_rate:STUDY"
# LOO targets the n - 1 rule (one class one point short), not err_n: within this of err_n on
# the quick grid (its largest gap lies at n = 20, d = 50)
LOO_TOLERANCE = 0.04
SMALL_N_LARGE_D = Grid({"n": [20, 50], "d": [10, 50], "delta": [2.0], "prior": [0.5],
                        "resamples": [20]}, n_replicates=1_000)


@pytest.fixture(scope="module")
def quick() -> StudyResult:
    return run([NAME], grid="quick", rng=20190, workers=1)["bias_error_rate"]


def _cells(result: StudyResult, keep) -> StudyResult:
    return StudyResult(result.study, tuple(c for c in result.cells if keep(c.params)))


def _bias(result: StudyResult, method: str) -> dict[tuple[int, int], float]:
    return {(r["params"]["n"], r["params"]["d"]): r["value"]
            for r in result.rows("bias", method=method)}


def _refit(Xr, y, train):
    m0, m1 = Xr[train & (y == 0)].mean(0), Xr[train & (y == 1)].mean(0)
    return m0, m1


def _wrong(m0, m1, x, label):
    says_one = ((x - m0) ** 2).sum(-1) >= ((x - m1) ** 2).sum(-1)
    return says_one != (label == 1)


def test_closed_forms_match_brute_force_refits():
    data = get_study(NAME).generate(
        {"n": 12, "d": 3, "delta": 2.0, "prior": 0.5, "resamples": 10}, 4, rng=5).data
    X, y = data.X, data.y
    position = np.concatenate([np.arange(6), np.arange(6)])  # rank within class
    for r in range(X.shape[0]):
        everything = np.ones(12, dtype=bool)
        m0, m1 = _refit(X[r], y, everything)
        assert apparent(X, y)[r] == pytest.approx(_wrong(m0, m1, X[r], y).mean())
        loo, target = [], []
        for i in range(12):
            a0, a1 = _refit(X[r], y, np.arange(12) != i)
            loo.append(_wrong(a0, a1, X[r, i], y[i]))
            w, b = a1 - a0, -(a1 @ a1 - a0 @ a0) / 2
            sign = 1.0 if y[i] == 1 else -1.0  # class c's error: Phi(-sign (w.mu_c + b) / |w|)
            target.append(special.ndtr(-sign * (sign * w[0] + b) / np.linalg.norm(w)))
        assert leave_one_out(X, y)[r] == pytest.approx(np.mean(loo))
        assert loo_target(X, y, 2.0)[r] == pytest.approx(np.mean(target))
        folds = [_wrong(*_refit(X[r], y, position % 10 != f), X[r], y)[position % 10 == f]
                 for f in range(10)]
        assert cross_validation(X, y)[r] == pytest.approx(np.concatenate(folds).mean())
        test = position >= 4
        assert holdout(X, y)[r] == pytest.approx(
            _wrong(*_refit(X[r], y, ~test), X[r], y)[test].mean())


def test_order_free_estimates_do_not_depend_on_the_order_of_the_points():
    # generate lays class 0 first; the estimators also take the classes in any order
    data = get_study(NAME).generate(
        {"n": 12, "d": 3, "delta": 2.0, "prior": 0.5, "resamples": 10}, 4, rng=5).data
    order = np.random.default_rng(1).permutation(12)
    X, y = data.X[:, order], data.y[order]
    assert y[0] == 1  # class 1 comes first somewhere: the order matters
    for estimator in (apparent, leave_one_out):
        np.testing.assert_allclose(estimator(X, y), estimator(data.X, data.y), rtol=1e-12)
    np.testing.assert_allclose(loo_target(X, y, 2.0), loo_target(data.X, data.y, 2.0),
                               rtol=1e-12)


def test_e0_matches_a_loop_over_resamples():
    data = get_study(NAME).generate(
        {"n": 12, "d": 2, "delta": 1.0, "prior": 0.5, "resamples": 15}, 3, rng=6).data
    X, y = data.X, data.y
    gen = np.random.default_rng(9)  # the same draws, in the same order, as bootstrap_e0
    # each resample draws 6 points of a class at random, with replacement: w counts them
    w0, w1 = (np.array([np.bincount(picks, minlength=6) for picks in
                        gen.integers(0, 6, size=(45, 6))]).reshape(3, 15, 6) for _ in range(2))
    got = bootstrap_e0(X, y, resamples=15, rng=9)
    for r in range(3):
        wrong = out = 0
        for b in range(15):
            m0, m1 = w0[r, b] @ X[r, :6] / 6, w1[r, b] @ X[r, 6:] / 6
            left = np.concatenate([w0[r, b] == 0, w1[r, b] == 0])
            wrong += (_wrong(m0, m1, X[r], y) & left).sum()
            out += left.sum()
        assert got[r] == pytest.approx(wrong / out)


def test_true_error_formula_agrees_with_fresh_test_points():
    data = get_study(NAME).generate(
        {"n": 20, "d": 4, "delta": 2.0, "prior": 0.3, "resamples": 10}, 2, rng=7).data
    gen = np.random.default_rng(8)
    m = 200_000
    fresh = gen.standard_normal((2, m, 4))
    labels = (gen.random(m) < 0.3).astype(np.int64)
    fresh[:, :, 0] += np.where(labels == 1, 1.0, -1.0)
    for r in range(2):
        m0, m1 = _refit(data.X[r], data.y, np.ones(20, dtype=bool))
        observed = _wrong(m0, m1, fresh[r], labels).mean()
        err = true_errors(data.X, data.y, 2.0, 0.3)[r]
        assert abs(observed - err) < 4 * np.sqrt(err * (1 - err) / m)


@pytest.mark.slow
def test_apparent_error_is_optimistic_at_small_n_and_large_d(quick):
    # Seed 001, "Apparent vs. true error rate": the apparent error is biased optimistically.
    # 'greater' fails a cell only when its bias is below 0 by more than z * MCSE: all 4 fail.
    small = _cells(quick, lambda p: p["n"] <= 50 and p["d"] >= 10)
    with pytest.raises(AssertionError, match="4 of 4 bias checks failed"):
        assert_measure(small, "bias", 0.0, method="apparent", alternative="greater")
    assert _bias(quick, "apparent")[20, 50] < -0.2


@pytest.mark.slow
def test_loo_is_exactly_unbiased_for_its_n_minus_1_target(quick):
    # E[LOO - T] = 0, T the mean true error of the leave-one-out rules: within MCSE everywhere
    assert_measure(quick, "bias", 0.0, method="loo_vs_n_minus_1")


@pytest.mark.slow
def test_loo_is_nearly_unbiased_for_the_full_sample_error(quick):
    assert_measure(quick, "bias", 0.0, method="loo", tolerance=LOO_TOLERANCE)


@pytest.mark.slow
def test_632_lies_between_apparent_and_e0_and_e0_is_pessimistic(quick):
    low, mid, high = (_bias(quick, m) for m in ("apparent", "b632", "e0"))
    assert all(low[c] < mid[c] < high[c] for c in low)
    # e0 trains on about 0.632 n distinct points: pessimistic beyond MCSE once d >= 10
    large_d = _cells(quick, lambda p: p["d"] >= 10)
    assert all(b > 0 for (_, d), b in high.items() if d >= 10)
    with pytest.raises(AssertionError, match="6 of 6 bias checks failed"):
        assert_measure(large_d, "bias", 0.0, method="e0")


@pytest.mark.slow
def test_the_findings_read_their_numbers_from_the_run(quick):
    study = get_study(NAME)
    rows = quick.rows("bias", method="apparent")
    worst = min(rows, key=lambda r: r["value"])
    where = ", ".join(f"{k}={v}" for k, v in worst["params"].items())
    sentences = study.findings(quick, [])
    assert f"most optimistic at {estimate(worst['value'], worst['mcse'])} at {where};" \
        in sentences[0]
    assert f"e0 in {len(rows)} of {len(rows)} cells" in sentences[2]
    # another run's numbers, another sentence: without n = 20 the worst cell moves
    other = _cells(quick, lambda p: p["n"] >= 50)
    assert "at n=50, d=50" in study.findings(other, [])[0]
    assert study.findings(other, [])[0] != sentences[0]


def _forgetful_loo(X, y):
    """Leave-one-out that forgets to leave the point out: the apparent error in disguise."""
    return apparent(X, y)


def _forgetful_vs_target(data, params):
    return Estimates(estimate=_forgetful_loo(data.X, data.y) - loo_target(
        data.X, data.y, data.delta))


def test_forgetful_loo_fails_both_loo_assertions():
    study = get_study(NAME)
    broken = dataclasses.replace(study, methods={
        "loo": study.methods["loo"],
        "loo_vs_n_minus_1": study.methods["loo_vs_n_minus_1"],
        "forgetful_loo": wrap_method(_forgetful_loo),
        "forgetful_vs_n_minus_1": _forgetful_vs_target,
    })
    result = run([broken], grid=SMALL_N_LARGE_D, rng=11, workers=1)["bias_error_rate"]
    assert_measure(result, "bias", 0.0, method="loo", tolerance=LOO_TOLERANCE)
    assert_measure(result, "bias", 0.0, method="loo_vs_n_minus_1")
    with pytest.raises(AssertionError, match=r"forgetful_loo at \{'n': 20, 'd': 10"):
        assert_measure(result, "bias", 0.0, method="forgetful_loo", tolerance=LOO_TOLERANCE)
    with pytest.raises(AssertionError, match="4 of 4 bias checks failed"):
        assert_measure(result, "bias", 0.0, method="forgetful_vs_n_minus_1")


def test_generate_uses_separate_sampling_and_rejects_tiny_classes():
    study = get_study(NAME)
    sample = study.generate({"n": 20, "d": 3, "delta": 2.0, "prior": 0.3, "resamples": 5}, 7,
                            rng=1)
    assert sample.size == 7 and sample.data.X.shape == (7, 20, 3)
    assert sample.data.y.tolist() == [0] * 14 + [1] * 6
    with pytest.raises(ValueError, match="each class needs at least 3 points"):
        study.generate({"n": 20, "d": 3, "delta": 2.0, "prior": 0.1, "resamples": 5}, 7, rng=1)
