"""The power-calibration study (Bagdouri et al. 2013, section 4.3, Table 1): its pieces, pinned.

Monte Carlo checks use fixed seeds and a tolerance of k standard errors, k = 3.29 (two-sided
false-alarm rate 1e-3 per check).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from estimators import f1_ci
from studies.engine import (
    FAILS,
    HOLDS,
    CellResult,
    Measure,
    Performance,
    StudyResult,
    evaluate_claims,
    run,
)
from studies.engine.design import Grid
from studies.suite import power_calibration as pc
from studies.suite.registry import get_study

K = float(stats.norm.isf(0.001 / 2))
STUDY = get_study("power_calibration")


def exact_pass_probability(size: int, cells: np.ndarray, theta: float, interval: str) -> float:
    """P(LOSCI lower bound > theta) for a test set ~ Multinomial(size, cells), by enumeration.

    Only ``tp`` and ``e = fp + fn`` decide F1 and its interval: ``tp ~ Bin(size, p_tp)`` and
    ``e | tp ~ Bin(size - tp, (p_fp + p_fn) / (1 - p_tp))``; every pair is enumerated.
    """
    p_tp, p_e = cells[0], cells[1] + cells[2]
    tp = _window(size, p_tp)
    tp_grid, e_grid = np.meshgrid(tp, _window(size, p_e), indexing="ij")
    valid = tp_grid + e_grid <= size
    tp_v, e_v = tp_grid[valid], e_grid[valid]
    pmf = stats.binom.pmf(tp_v, size, p_tp) * stats.binom.pmf(e_v, size - tp_v,
                                                              p_e / (1.0 - p_tp))
    assert pmf.sum() > 1.0 - 1e-9  # the windows hold all but a negligible share
    low = f1_ci(tp_v, e_v, 0, size - tp_v - e_v, method=interval,
                alternative="greater").low
    return float(np.sum(pmf[np.nan_to_num(np.asarray(low), nan=0.0) > theta]))


def _window(size: int, p: float) -> np.ndarray:
    """Counts within 12 binomial SDs (plus 30) of ``size p``: the outcomes that matter."""
    half = 12.0 * math.sqrt(size * p * (1.0 - p)) + 30.0
    return np.arange(max(0, math.floor(size * p - half)), min(size, math.ceil(size * p + half))
                     + 1)


def test_population_has_the_stated_prevalence_and_f1():
    cells = pc.population(0.15, 0.7)
    tp, fp, fn, _ = cells
    assert cells.sum() == pytest.approx(1.0)
    assert tp + fn == pytest.approx(0.15)
    assert 2 * tp / (2 * tp + fp + fn) == pytest.approx(0.7)
    assert tp / (tp + fp) == pytest.approx(tp / (tp + fn))  # precision = recall


def test_a_perfect_classifier_always_passes():
    # No errors in the population: every sample clears theta, every plan is reachable and
    # every test set has e = 0, whose delta-method bound is 1.
    found = pc.pass_rate([0.5, 0.0, 0.0, 0.5], sample_size=200, threshold=0.9, repetitions=10,
                         draws=200, rng=3)
    assert (found.attempt_rate, found.pass_rate, found.pass_rate_mcse) == (1.0, 1.0, 0.0)
    assert found.attempts == found.repetitions == 10
    assert found.median_test_size >= 1


def test_a_threshold_far_above_the_population_f1_is_never_attempted():
    found = pc.pass_rate(pc.population(0.3, 0.5), sample_size=500, threshold=0.9,
                         repetitions=20, rng=4)
    assert found.attempt_rate == 0.0 and found.attempts == 0
    assert math.isnan(found.pass_rate) and math.isnan(found.median_test_size)


@pytest.mark.parametrize("interval", ["delta", "jaccard-clopper-pearson"])
def test_passes_match_the_exact_pass_probability_of_each_planned_size(interval):
    # Independent reference: given each attempt's planned size, the probability that its test
    # set passes, by enumerating the test set's outcomes. The realised passes must match
    # their sum within K standard deviations (sum p (1 - p)). Certifying on a test set half
    # the planned size, or drawn from the pessimistic population, fails this check.
    cells = pc.population(0.15, 0.85)
    theta = 0.8 * 0.85
    gen = np.random.default_rng(5)
    counts = gen.multinomial(2000, cells, size=80)
    seeds = gen.integers(2**63, size=(80, 2), dtype=np.int64)
    found = pc._certify(counts, seeds, cells, theta, interval=interval,
                        posterior="known-share", confidence_level=0.95, power=0.93, draws=200)
    attempted = np.flatnonzero(~np.isnan(found.size))
    assert attempted.size > 70
    probability = np.array([exact_pass_probability(int(found.size[i]), cells, theta, interval)
                            for i in attempted])
    passes = found.passed[attempted].sum()
    spread = math.sqrt(np.sum(probability * (1 - probability)))
    assert abs(passes - probability.sum()) <= K * spread, (passes, probability.sum())


def test_sample_sources_shift_the_samples_f1_as_declared():
    # pessimistic: F1 lower by 0.05 on average (up to the ratio estimator's O(1/r) bias);
    # optimistic: the best of 5, above the unbiased mean.
    cells = {"prevalence": 0.3, "f1": 0.7, "f": 0.9, "r": 2000, "posterior": "known-share"}
    means = {}
    for source in pc.SOURCES:
        sample = pc.generate({**cells, "source": source}, 4000, rng=6)
        f1 = pc._sample_f1(sample.data[0])
        means[source] = (f1.mean(), f1.std(ddof=1) / math.sqrt(f1.size))
    unbiased, pessimistic, optimistic = (means[s] for s in pc.SOURCES)
    assert abs(unbiased[0] - 0.7) <= K * unbiased[1] + 1e-3
    assert abs(pessimistic[0] - (0.7 - pc.PESSIMISM)) <= K * pessimistic[1] + 1e-3
    assert optimistic[0] > unbiased[0] + K * math.hypot(optimistic[1], unbiased[1])


def test_the_quick_cell_through_the_engine_reports_table_1s_measures():
    grid = Grid({"prevalence": [0.15], "f1": [0.85], "f": [0.85], "r": [500],
                 "source": ["unbiased"], "posterior": ["known-share"]}, n_replicates=40)
    study = dataclasses.replace(STUDY, grids={**STUDY.grids, "quick": grid})
    result = run([study], rng=7, workers=1)["power_calibration"]
    cell = result.cells[0]
    for method in pc.METHODS:
        perf = cell.performance[method]
        tested = perf["tested"].value
        assert perf["rejection"].value == pytest.approx(tested
                                                        * perf["conditional_rejection"].value)
        assert perf["lower_quartile_size"].value <= perf["median_size"].value \
            <= perf["upper_quartile_size"].value
    # both methods saw the same samples: the same F1(M) - theta
    assert cell.performance["delta"]["bias"] == cell.performance[
        "jaccard-clopper-pearson"]["bias"]
    rows = pc.summary_table(result)
    assert {row["method"] for row in rows} == set(pc.METHODS)
    assert all(0.0 <= row["pass_rate"] <= 1.0 for row in rows)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"population": [0.5, 0.5, 0.1, 0.0]}, r"`population` must be 4 non-negative"),
        ({"population": "abcd"}, r"`population` must be 4 non-negative"),
        ({"sample_size": 0}, r"`sample_size` must be an integer >= 1; got 0"),
        ({"repetitions": 1.5}, r"`repetitions` must be an integer >= 2; got 1.5"),
        ({"threshold": 1.0}, r"`threshold` must be a number in \(0, 1\); got 1.0"),
        ({"interval": "bootstrap"}, r"`interval` must be one of delta"),
        ({"posterior": "flat"}, r"`posterior` must be one of known-share, dirichlet"),
        # checked even when no sample clears the threshold (nothing is planned)
        ({"threshold": 0.95, "power": 2.0}, r"`power` must be"),
        ({"threshold": 0.95, "draws": 10}, r"`draws` must be at least 100"),
    ],
)
def test_bad_input(kwargs, message):
    call = {"population": [0.1, 0.05, 0.05, 0.8], "sample_size": 100, "threshold": 0.5,
            "repetitions": 4} | kwargs
    population = call.pop("population")
    with pytest.raises(ValueError, match=message):
        pc.pass_rate(population, **call)


def _synthetic(pass_rate, tested=0.8, replicates=200):
    """A full-grid result whose every method passes ``pass_rate`` of ``tested * R`` attempts."""
    tests = tested * replicates
    measures = {"tested": Measure(tested, math.sqrt(tested * (1 - tested) / replicates)),
                "conditional_rejection": Measure(
                    pass_rate, math.sqrt(pass_rate * (1 - pass_rate) / tests))}
    cells = tuple(
        CellResult(STUDY.name, str(i), i, params, "monte-carlo",
                   {m: Performance(measures, replicates) for m in pc.METHODS}, {}, b"")
        for i, params in enumerate(STUDY.grids["full"].cells()))
    return StudyResult(STUDY.name, cells)


def test_the_claims_tell_a_calibrated_planner_from_the_findings():
    # A planner passing exactly 93% everywhere, measured as precisely as the full grid,
    # breaks every claim but the first (which says only "not above nominal"); one passing
    # 85% everywhere holds the unbiased and optimistic ones and breaks the pessimistic one.
    status = {v.claim.name: v.status for v in evaluate_claims(pc.CLAIMS, _synthetic(0.93))}
    assert status == {"unbiased-sample-not-above-nominal": HOLDS,
                      "unbiased-sample-short-near-the-limit": FAILS,
                      "pessimistic-sample-over-powered-far-from-the-limit": FAILS,
                      "optimistic-sample-under-powered": FAILS}
    status = {v.claim.name: v.status for v in evaluate_claims(pc.CLAIMS, _synthetic(0.85))}
    assert status == {"unbiased-sample-not-above-nominal": HOLDS,
                      "unbiased-sample-short-near-the-limit": HOLDS,
                      "pessimistic-sample-over-powered-far-from-the-limit": FAILS,
                      "optimistic-sample-under-powered": HOLDS}
