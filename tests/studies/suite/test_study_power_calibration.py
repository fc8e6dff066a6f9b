"""The power-calibration study (Bagdouri et al. 2013, section 4.3, Table 1): its pieces, pinned.

Monte Carlo checks use fixed seeds and a tolerance of k standard errors, k = 3.29 (two-sided
false-alarm rate 1e-3 per check).
"""

from __future__ import annotations

import dataclasses
import io
import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from estimators import SimulatedTestSets, certification_sample_size, f1_ci
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
from studies.engine.seeding import cell_seed
from studies.engine.tasks import CellTask, run_cell
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
    # 10 passes in 10: the MCSE is the Wilson half-width 1 / (2 (10 + 1)), not 0
    assert (found.attempt_rate, found.pass_rate) == (1.0, 1.0)
    assert found.pass_rate_mcse == pytest.approx(1 / 22)
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


@pytest.mark.parametrize("posterior", ["known-share", "dirichlet"])
def test_plans_are_the_planners_sample_by_sample(posterior):
    # The cell's plans, all searched at once and sharing simulated test sets between the
    # intervals, must be certification_sample_size's own, sample by sample: samples whose F1
    # is not above theta, unreachable targets (rare class, theta near F1) and sizes from tens
    # to thousands.
    gen = np.random.default_rng(8)
    for prevalence, f1, f, r in ((0.15, 0.85, 0.8, 500), (0.031, 0.5, 0.9, 200),
                                 (0.474, 0.5, 0.95, 1000)):
        cells, theta = pc.population(prevalence, f1), f * f1
        counts = gen.multinomial(r, cells, size=12)
        seeds = gen.integers(2**63, size=12, dtype=np.int64)
        kept = SimulatedTestSets()
        for interval in pc.INTERVALS:
            found = pc._plan_sizes(counts, seeds, theta, interval=interval, posterior=posterior,
                                   confidence_level=0.95, power=0.93, draws=200, test_sets=kept)
            planner = [certification_sample_size(
                row.tolist(), theta, confidence_level=0.95, power=0.93, draws=200,
                interval=interval, posterior=posterior, rng=int(seed), method="monte-carlo"
            ).test_size for row, seed in zip(counts, seeds, strict=True)]
            expected = np.array([math.nan if s is None else s for s in planner])
            np.testing.assert_array_equal(found, expected, err_msg=f"{interval} {theta}")
        assert len(kept)  # the second interval's searches read the first one's test sets


def test_sample_sources_shift_the_samples_f1_as_declared():
    # pessimistic: F1 lower by 0.05 on average (up to the ratio estimator's O(1/r) bias);
    # optimistic: the best of 5, above the unbiased mean.
    cells = {"prevalence": 0.3, "f1": 0.7, "f": 0.9, "r": 2000}
    means = {}
    for source in pc.SOURCES:
        sample = pc.generate({**cells, "source": source}, 4000, rng=6)
        f1 = pc._sample_f1(sample.data[0])
        means[source] = (f1.mean(), f1.std(ddof=1) / math.sqrt(f1.size))
    unbiased, pessimistic, optimistic = (means[s] for s in pc.SOURCES)
    assert abs(unbiased[0] - 0.7) <= K * unbiased[1] + 1e-3
    assert abs(pessimistic[0] - (0.7 - pc.PESSIMISM)) <= K * pessimistic[1] + 1e-3
    assert optimistic[0] > unbiased[0] + K * math.hypot(optimistic[1], unbiased[1])


@pytest.mark.slow
def test_a_cell_through_the_engine_reports_table_1s_measures():
    grid = Grid({"prevalence": [0.15], "f1": [0.85], "f": [0.85], "r": [500],
                 "source": ["unbiased"]}, n_replicates=40)
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
    # every method saw the same samples: the same F1(M) - theta
    assert len({cell.performance[m]["bias"] for m in pc.METHODS}) == 1
    rows = pc.summary_table(result)
    assert {(row["method"], row["posterior"]) for row in rows} == {
        *pc.PLANS.values(), *((i, "dirichlet vs known-share") for i in pc.INTERVALS)}
    assert all(0.0 <= row["pass_rate"] <= 1.0 for row in rows if row["posterior"] in
               ("known-share", "dirichlet"))


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
    # breaks every claim but the two bounds at nominal ("at least" where the sample pins the
    # population down, "not above" overall); one passing 85% everywhere holds the unbiased
    # and optimistic ones and breaks the pinned-down and pessimistic ones.
    status = {v.claim.name: v.status for v in evaluate_claims(pc.CLAIMS, _synthetic(0.93))}
    assert status == {"pinned-down-plans-deliver-their-power": HOLDS,
                      "unbiased-sample-not-above-nominal": HOLDS,
                      "unbiased-sample-short-near-the-limit": FAILS,
                      "pessimistic-sample-over-powered-far-from-the-limit": FAILS,
                      "optimistic-sample-under-powered": FAILS,
                      "rare-class-under-sized": FAILS}
    status = {v.claim.name: v.status for v in evaluate_claims(pc.CLAIMS, _synthetic(0.85))}
    assert status == {"pinned-down-plans-deliver-their-power": FAILS,
                      "unbiased-sample-not-above-nominal": HOLDS,
                      "unbiased-sample-short-near-the-limit": HOLDS,
                      "pessimistic-sample-over-powered-far-from-the-limit": FAILS,
                      "optimistic-sample-under-powered": HOLDS,
                      "rare-class-under-sized": HOLDS}


@pytest.mark.slow
def test_findings_read_the_pass_rates_by_prevalence_from_the_run():
    # Every method passes 85% of 160 attempts in every cell: at each f the mean over the
    # populations is 0.85 with MCSE sqrt(0.85 * 0.15 / 160) / sqrt(cells) (24 unbiased cells
    # at each f, 8 at each prevalence and f), far below the nominal 93%.
    result = _synthetic(0.85)
    paper, rarest, commonest = pc.findings(result, pc.summary_table(result))
    se = math.sqrt(0.85 * 0.15 / 160)
    assert paper.count("against the paper's 93.0%") == 4
    assert f"at f = 0.8, 85.0% (MCSE {100 * se / math.sqrt(24):.1f} points)" in paper
    assert "not reproduced" in paper and ", reproduced" not in paper
    assert rarest.startswith("At the rarest prevalence of the run, 3.1%, the same plans pass")
    assert f"85.0% (MCSE {100 * se / math.sqrt(8):.1f} points), " \
           f"{0.08 / (se / math.sqrt(8)):.1f} MCSE below 93% (attempted 80%)" in rarest
    assert rarest.endswith("under-sized (more than 3 MCSE below 93%) at f = 0.8, 0.85, 0.9, "
                           "0.95.")
    assert commonest.startswith("At the commonest prevalence of the run, 47.4%")
    calibrated = _synthetic(0.93)
    paper, rarest, _ = pc.findings(calibrated, pc.summary_table(calibrated))
    assert paper.count("0.0 MCSE above it, reproduced") + paper.count(
        "0.0 MCSE below it, reproduced") == 4
    assert rarest.endswith("under-sized (more than 3 MCSE below 93%) at no f.")


def _losci_low(tests: np.ndarray, interval: str) -> np.ndarray:
    """The one-sided 95% lower bound of F1 on each test set ``(tp, fp, fn, tn)``.

    Clopper-Pearson straight from scipy: ``J = tp / m`` with ``m = tp + fp + fn`` has the
    lower bound ``Beta(0.05; tp, m - tp + 1)`` (0 when tp = 0), mapped by ``2J / (1 + J)``;
    the delta interval from `f1_ci` (undefined bounds count as 0, never passing).
    """
    tp, fp, fn, tn = tests.T
    if interval == "delta":
        low = f1_ci(tp, fp, fn, tn, method="delta", alternative="greater").low
        return np.nan_to_num(np.asarray(low, dtype=np.float64), nan=0.0)
    m = tp + fp + fn
    j = np.zeros(len(tp))
    j[tp > 0] = stats.beta.ppf(0.05, tp[tp > 0], (m - tp + 1)[tp > 0])
    return 2 * j / (1 + j)


def test_an_attempt_passes_exactly_when_its_losci_lower_bound_exceeds_theta():
    # The engine runs a cell (f = 0.95: attempts, passes and failures for every
    # method with this seed); its stream is rebuilt by hand from the cell's SeedSequence:
    # 12 samples of 500 from the population, then each replicate's two seeds; an attempt's
    # test set is one multinomial draw of its planned size from its replicate's second seed.
    # Each attempt passes iff its lower bound > theta.
    params = {"prevalence": 0.15, "f1": 0.85, "f": 0.95, "r": 500, "source": "unbiased"}
    root, replicates, theta = 1, 12, 0.95 * 0.85
    cell = run_cell(CellTask(STUDY, params, 0, replicates, root, "monte-carlo"))
    with np.load(io.BytesIO(cell.estimates)) as stored:
        found = {name: stored[name] for name in stored.files}
    tp, error = 0.15 * 0.85, 0.15 * 0.15
    cells = np.array([tp, error, error, 1 - tp - 2 * error])
    gen = np.random.default_rng(cell_seed(root, "power_calibration", params))
    samples = gen.multinomial(500, cells, size=replicates)
    seeds = gen.integers(2**63, size=(replicates, 2), dtype=np.int64)
    sample_f1 = 2 * samples[:, 0] / (2 * samples[:, 0] + samples[:, 1] + samples[:, 2])
    for method, (interval, _) in pc.PLANS.items():
        assert found[f"{method}/estimate"] == pytest.approx(sample_f1, rel=1e-15)
        size, passed = found[f"{method}/size"], found[f"{method}/reject"]
        attempted = ~np.isnan(size)
        assert (np.isnan(passed) == ~attempted).all() and (sample_f1[attempted] > theta).all()
        tests = np.array([np.random.default_rng(int(seeds[i, 1])).multinomial(int(size[i]),
                                                                              cells)
                          for i in np.flatnonzero(attempted)])
        assert (tests.sum(axis=1) == size[attempted]).all()
        low = _losci_low(tests, interval)
        assert passed[attempted].tolist() == (low > theta).astype(float).tolist(), method
        assert 0 < passed[attempted].sum() < attempted.sum() < replicates  # not vacuous


def test_a_losci_lower_bound_equal_to_theta_does_not_pass(monkeypatch):
    # Ties never happen with real bounds, so the certification interval is replaced by one
    # returning theta, the next float above and below it, and nan (no bound): "exceeds"
    # is strict, and an undefined bound fails. The call must ask for the one-sided 95% LOSCI.
    theta = 0.5
    lows = np.array([theta, np.nextafter(theta, 1.0), np.nextafter(theta, 0.0), np.nan])
    calls = []

    def fake_f1_ci(tp, fp, fn, tn, *, method, confidence_level, alternative):
        calls.append((method, confidence_level, alternative, len(tp)))
        return SimpleNamespace(low=lows.copy())

    monkeypatch.setattr(pc, "f1_ci", fake_f1_ci)
    counts = np.tile([60, 20, 25, 395], (4, 1))
    seeds = np.arange(8, dtype=np.int64).reshape(4, 2)
    found = pc._certify(counts, seeds, pc.population(0.5, 0.727), theta, interval="delta",
                        posterior="known-share", confidence_level=0.95, power=0.93, draws=100)
    assert not np.isnan(found.size).any()
    assert calls == [("delta", 0.95, "greater", 4)]
    assert found.passed.tolist() == [0.0, 1.0, 0.0, 0.0]


@pytest.mark.slow
def test_the_posteriors_are_compared_on_common_random_numbers():
    # Both posteriors plan from the same sample and planner seed, and every attempt draws its
    # test set from its replicate's own stream (rebuilt here from the cell's seed), whatever
    # the other replicates did: the paired method's saving is 1 - s_dirichlet / s_known
    # replicate by replicate (nan where either plan does not attempt).
    params = {"prevalence": 0.15, "f1": 0.85, "f": 0.85, "r": 500, "source": "unbiased"}
    cell = run_cell(CellTask(STUDY, params, 0, 30, 3, "monte-carlo"))
    with np.load(io.BytesIO(cell.estimates)) as stored:
        found = {name: stored[name] for name in stored.files}
    seeds = pc.generate(params, 30, rng=cell_seed(3, "power_calibration", params)).data[1]
    cells = pc.population(0.15, 0.85)
    for interval in pc.INTERVALS:
        known, dirichlet = found[f"{interval}/size"], found[f"{interval}-dirichlet/size"]
        saving = found[f"{interval}-dirichlet-vs-known-share/saving"]
        np.testing.assert_array_equal(saving, 1.0 - dirichlet / known)
        assert np.isnan(saving).sum() < 30
        for method, size in ((interval, known), (f"{interval}-dirichlet", dirichlet)):
            for i in np.flatnonzero(~np.isnan(size)):
                test = np.random.default_rng(int(seeds[i, 1])).multinomial(int(size[i]), cells)
                passed = _losci_low(test[None, :], interval)[0] > 0.85 * 0.85
                assert found[f"{method}/reject"][i] == float(passed), (method, i)
