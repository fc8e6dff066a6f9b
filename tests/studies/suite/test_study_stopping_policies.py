"""The stopping-policies study (Bagdouri et al. 2013, section 6): its pieces, pinned.

Monte Carlo checks use fixed seeds and a tolerance of k standard errors, k = 3.29 (two-sided
false-alarm rate 1e-3 per check). Each is shown to fail on a deliberately broken input.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats
from test_study_power_calibration import exact_pass_probability

from estimators import certification_sample_size
from studies.engine import CellResult, Measure, Performance, StudyResult
from studies.engine.findings import versus_paper
from studies.suite import stopping_policies as sp
from studies.suite.power_calibration import population

K = float(stats.norm.isf(0.001 / 2))
B = sp.BUDGET


def test_topics_span_the_rcv1_prevalences_and_bad_index():
    first, last = sp.topic(0), sp.topic(sp.TOPICS - 1)
    assert first[0] == pytest.approx(0.031) and last[0] == pytest.approx(0.474)
    assert first[1] == pytest.approx(0.68) and last[1] == pytest.approx(0.93)
    prevalences = [sp.topic(i)[0] for i in range(sp.TOPICS)]
    assert np.all(np.diff(prevalences) > 0)
    with pytest.raises(ValueError, match=r"`index` must be an integer in \[0, 28\]; got 29"):
        sp.topic(29)


def test_learning_curve_rises_steeply_then_levels_off():
    r = np.array([20, 500, 1000, 5000, 10000])
    curve = sp.learning_curve(r, 0.12, 0.8)
    assert np.all(np.diff(curve) > 0) and curve[-1] < 0.8
    # the gain of the first 1,000 documents is many times that of the last 5,000
    assert curve[2] - curve[0] > 5 * (curve[4] - curve[3])
    # closed form at one point: pi r / KAPPA = 12 -> F_inf (1 - 13^-0.6)
    assert sp.learning_curve(500, 0.12, 0.8) == pytest.approx(0.8 * (1 - 13 ** -0.6))


def _gap(runs: sp.Runs, at: int) -> tuple[float, float]:
    """Mean CV F1 - true F1 at training size ``at`` over runs, and its standard error."""
    j = int(np.searchsorted(runs.steps, at))
    gap = runs.cv_f1[:, j] - runs.true_f1[:, j]
    return float(gap.mean()), float(gap.std(ddof=1) / math.sqrt(gap.size))


def test_cross_validation_understates_as_figure_3_shows():
    # Figure 3: understated by about 0.08 at small training sets (here 200 documents of a
    # common topic, whose gap formula gives 0.08 exp(-1/3) = 0.057), unbiased by 3,000.
    runs = sp.simulate_runs(*sp.topic(28), 400, rng=1)
    expected = sp.GAP_MAX * math.exp(-200 / sp.GAP_SCALE)
    mean, se = _gap(runs, 200)
    assert abs(mean + expected) <= K * se + 0.005  # 0.005: rounding of tp to whole counts
    mean, se = _gap(runs, 3000)
    assert abs(mean) <= K * se + 0.002
    # a simulator without the gap fails the first check
    broken = sp.Runs(runs.steps, runs.true_cells,
                     np.asarray(np.rint(runs.true_cells * runs.steps[None, :, None]),
                                dtype=np.int64))
    mean, se = _gap(broken, 200)
    assert not abs(mean + expected) <= K * se + 0.005


def test_runs_are_nested_reproducible_and_whole():
    runs = sp.simulate_runs(*sp.topic(10), 5, rng=3)
    again = sp.simulate_runs(*sp.topic(10), 5, rng=3)
    assert np.array_equal(runs.cv, again.cv) and np.array_equal(runs.true_cells, again.true_cells)
    assert runs.steps[0] == sp.STEP and runs.steps[-1] == B and np.all(np.diff(runs.steps) == 20)
    assert np.array_equal(runs.cv.sum(axis=-1), np.broadcast_to(runs.steps, (5, 500)))
    assert (runs.cv >= 0).all()
    positives = runs.cv[..., 0] + runs.cv[..., 2]
    assert (np.diff(positives, axis=1) >= 0).all() and (np.diff(positives, axis=1) <= 20).all()
    np.testing.assert_allclose(runs.true_cells.sum(axis=-1), 1.0)
    # true F1 wanders around the curve, its deviations correlated over nested steps
    deviation = runs.true_f1 - sp.learning_curve(runs.steps, *sp.topic(10))
    assert np.corrcoef(deviation[:, 100], deviation[:, 101])[0, 1] > 0.9


def test_threshold_is_nine_tenths_of_the_pilot_runs_best():
    prevalence, f_inf = sp.topic(5)
    pilot = sp.simulate_runs(prevalence, f_inf, 1, rng=np.random.SeedSequence([20130, 5]))
    assert sp.threshold({"topic": 5}) == pytest.approx(0.9 * pilot.true_f1.max(), abs=0)


def _data(size: np.ndarray, passed: np.ndarray, split_passed: np.ndarray | None = None):
    steps = np.array([2000, 4000, 6000, 8000])
    if split_passed is None:
        split_passed = np.ones((size.shape[0], len(sp.SPLITS)))
    return steps, size, passed, split_passed


def test_policies_stop_where_their_rules_say():
    nan = math.nan
    # costs: run 0 = 9000, 7000, 8000, 9500 (all within); run 1 = none within budget;
    # run 2 = 10000 (within: at most b), 10500 (over), 7000, 8500
    size = np.array([[7000, 3000, 2000, 1500],
                     [nan, 7000, nan, 2500],
                     [8000, 6500, 1000, 500]], dtype=float)
    passed = np.array([[1, 0, 1, 1], [nan, 1, nan, 0], [0, 1, 1, 0]], dtype=float)
    data = _data(size, passed)
    out = {name: method(data, {}) for name, method in sp.METHODS.items()}
    cost_first = np.array([9000.0, B, 10000.0])
    np.testing.assert_array_equal(out["first"].size, [9000, nan, 10000])
    np.testing.assert_array_equal(out["first"].reject, [1, nan, 0])
    np.testing.assert_array_equal(out["first"].saving, [0, 0, 0])
    np.testing.assert_array_equal(out["blind-oracle"].size, [7000, nan, 7000])
    np.testing.assert_array_equal(out["blind-oracle"].reject, [0, nan, 1])
    np.testing.assert_allclose(out["blind-oracle"].saving, 1 - np.array([7000, B, 7000])
                               / cost_first)
    # the sighted oracle takes the lowest cost that passes
    np.testing.assert_array_equal(out["sighted-oracle"].size, [8000, nan, 7000])
    # wait-1 takes the second within-budget step; wait-2 the third; wait-5 never opens
    np.testing.assert_array_equal(out["wait-1"].size, [7000, nan, 7000])
    np.testing.assert_array_equal(out["wait-2"].size, [8000, nan, 8500])
    np.testing.assert_array_equal(out["wait-5"].reject, [nan, nan, nan])
    np.testing.assert_allclose(out["wait-5"].saving, [1 - B / 9000, 0, 0])
    # a fixed split always opens and spends the budget
    split = out["split-50-50"]
    np.testing.assert_array_equal(split.size, [B, B, B])
    np.testing.assert_allclose(split.saving, 1 - B / cost_first)


def test_a_certification_passes_as_often_as_exact_enumeration_says():
    # 4,000 test sets of 2,000 documents from one population: the pass share against the
    # exact pass probability (the reference of the power-calibration tests)
    cells = population(0.2, 0.85)
    theta, n = 0.8, 4000
    gen = np.random.default_rng(11)
    passed = sp._passes(gen, np.full(n, 2000.0), np.tile(cells, (n, 1)), theta, "delta")
    exact = exact_pass_probability(2000, cells, theta, "delta")
    se = math.sqrt(exact * (1 - exact) / n)
    assert 0.2 < exact < 0.99
    assert abs(passed.mean() - exact) <= K * se
    # test sets drawn from a wrong population (F1 0.84) fail the same check
    wrong = sp._passes(gen, np.full(n, 2000.0), np.tile(population(0.2, 0.84), (n, 1)), theta,
                       "delta")
    assert not abs(wrong.mean() - exact) <= K * se


def _fake_plan(counts, theta, *, max_test_size, rng, **_):
    """A stand-in for Algorithm 2: a noisy size, larger the nearer the F1 of ``counts`` is to
    theta, and None where it exceeds ``max_test_size``."""
    tp, fp, fn, _ = counts
    size = math.ceil(np.random.default_rng(rng).integers(1, 100) ** 2 / 100
                     / (2 * tp / (2 * tp + fp + fn) - theta))
    return SimpleNamespace(test_size=size if size <= max_test_size else None)


def _batched(plan):
    """A stand-in for `estimators.plan_sizes` that plans each row with ``plan``, a stand-in
    for `certification_sample_size` (its ``test_size``, None: no plan)."""
    def plan_sizes(confusions, theta, *, seeds, max_test_size, **options):
        caps = np.broadcast_to(max_test_size, len(seeds))
        found = [plan(row.tolist(), theta, max_test_size=int(cap), rng=int(seed),
                      **options).test_size
                 for row, seed, cap in zip(confusions, seeds, caps, strict=True)]
        return SimpleNamespace(test_size=np.array([math.nan if s is None else s for s in found],
                                                  dtype=float))
    return plan_sizes


def test_steps_no_policy_can_stop_at_are_left_unplanned_and_change_no_policy(monkeypatch):
    # Planning every step above theta (the reference) and planning only the steps a policy may
    # still stop at give every policy the same stop, certification and saving on every run.
    calls = []
    monkeypatch.setattr(sp, "plan_sizes", _batched(
        lambda *a, **k: calls.append(k["rng"]) or _fake_plan(*a, **k)))
    runs = sp.simulate_runs(*sp.topic(14), 40, rng=4)
    theta = sp.threshold({"topic": 14}) + 0.04  # some runs never open
    gen = np.random.default_rng(9)
    seeds, tests = (gen.integers(2**63, size=runs.cv.shape[:2], dtype=np.int64)
                    for _ in range(2))
    size, passed = sp._plan(runs, theta, seeds, tests, "delta")
    candidate = (runs.cv_f1 > theta) & (runs.steps < B)
    everywhere = np.full(size.shape, math.nan)
    for i, j in np.argwhere(candidate):
        found = _fake_plan(runs.cv[i, j].tolist(), theta, max_test_size=int(B - runs.steps[j]),
                           rng=seeds[i, j])
        everywhere[i, j] = math.nan if found.test_size is None else found.test_size
    reference = np.full(size.shape, math.nan)
    sp._certify(np.argwhere(~np.isnan(everywhere)), runs=runs, tests=tests, size=everywhere,
                passed=reference, theta=theta, interval="delta")
    # the pruning is exercised: runs that never open, runs that stop early, and fewer plans
    assert 0 < len(calls) < 0.6 * candidate.sum()
    opened = ~np.isnan(everywhere).all(axis=1)
    assert 0 < opened.sum() < len(opened)
    planned = ~np.isnan(size)
    np.testing.assert_array_equal(size[planned], everywhere[planned])
    assert np.array_equal(planned, ~np.isnan(passed))
    np.testing.assert_array_equal(passed[planned], reference[planned])
    split = np.ones((size.shape[0], len(sp.SPLITS)))
    for name, method in sp.METHODS.items():
        pruned = method((runs.steps, size, passed, split), {})
        full = method((runs.steps, everywhere, reference, split), {})
        for field in ("reject", "size", "saving"):
            np.testing.assert_array_equal(getattr(pruned, field), getattr(full, field),
                                          err_msg=f"{name} {field}")


def test_after_the_last_wait_only_steps_that_can_lower_an_oracles_cost_are_planned(
        monkeypatch):
    # Two runs with the same sizes at steps 1000-9000 (costs 9000, 9500, 8000, none, 7990 and
    # 9500), where the policies' last wait is the second within-budget step (step 2000). Step
    # 3000 passes and lowers the sighted oracle's cost to 8000, so step 7950 (cost 7990) is
    # still planned; step 9000 is not (9001 > 7990). Run 0 passes at 7950, run 1 does not:
    # the blind oracle stops there on both, the sighted one on run 0 only.
    steps = np.array([1000, 2000, 3000, 7000, 7950, 9000])
    sizes = {1000: 8000, 2000: 7500, 3000: 5000, 7000: None, 7950: 40, 9000: 500}
    calls = []

    def plan(counts, theta, *, max_test_size, **_):
        step = 2 * counts[0]  # half of each step's training documents are true positives
        calls.append((step, max_test_size))
        found = sizes[step]
        return SimpleNamespace(test_size=found if found and found <= max_test_size else None)

    monkeypatch.setattr(sp, "plan_sizes", _batched(plan))
    monkeypatch.setattr(sp, "_LAST_WAIT", 1)
    perfect, useless = [0.5, 0.0, 0.0, 0.5], [0.0, 0.5, 0.5, 0.0]  # F1 1 and 0: pass, fail
    cells = np.array([[perfect, useless, perfect, perfect, perfect, perfect],
                      [perfect, useless, perfect, perfect, useless, perfect]])
    cv = np.broadcast_to(np.stack([steps // 2, 0 * steps, 0 * steps, steps // 2], axis=-1),
                         (2, steps.size, 4))
    seeds = np.arange(12, dtype=np.int64).reshape(2, 6)
    size, passed = sp._plan(sp.Runs(steps, cells, cv), 0.5, seeds, seeds + 100, "delta")
    # the later steps search up to the least power of two beyond best - r_j - 1 (at most
    # b - r_j): 5999 -> 8192 (7000), 999 -> 1024, 49 -> 64
    assert sorted(calls) == sorted([(1000, 9000), (2000, 8000), (3000, 7000), (7000, 1024),
                                    (7950, 64)] * 2)
    np.testing.assert_array_equal(size, [[8000, 7500, 5000, math.nan, 40, math.nan]] * 2)
    np.testing.assert_array_equal(passed, [[1, 0, 1, math.nan, 1, math.nan],
                                           [1, 0, 1, math.nan, 0, math.nan]])
    data = (steps, size, passed, np.ones((2, len(sp.SPLITS))))
    np.testing.assert_array_equal(sp.METHODS["blind-oracle"](data, {}).size, [7990, 7990])
    np.testing.assert_array_equal(sp.METHODS["sighted-oracle"](data, {}).size, [7990, 8000])


def test_algorithm_2_capped_at_a_power_of_two_finds_the_same_size_or_none_beyond_it():
    # The doubling search from 1 passes every power of two: capped at 2^k it finds the size
    # of the uncapped plan where that size is at most 2^k, and none where it is larger.
    sizes = []
    for seed in range(4):
        def plan(room, seed=seed):
            return certification_sample_size((300, 40, 60, 1600), 0.75, draws=1000, rng=seed,
                                             max_test_size=room).test_size
        size = plan(8000)
        cap = sp._doubling_cap(size)
        assert cap // 2 < size <= cap and sp._doubling_cap(cap) == cap
        assert plan(cap) == plan(2 * cap) == size and plan(cap // 2) is None
        sizes.append(size)
    assert len(set(sizes)) > 1  # the seeds give different plans
    assert sp._doubling_cap(1) == 1 and sp._doubling_cap(49) == 64


@pytest.mark.slow
def test_generated_plans_are_algorithm_2s():
    sample = sp.generate({"topic": 26, "interval": "delta"}, 2, rng=5)
    steps, size, passed, split_passed = sample.data
    assert size.shape == (2, 500) and split_passed.shape == (2, len(sp.SPLITS))
    planned = np.argwhere(~np.isnan(size))
    assert planned.size and np.array_equal(~np.isnan(size), ~np.isnan(passed))
    assert (steps[planned[:, 1]] + size[tuple(planned.T)] <= B).all()
    # one planned step, re-planned by a direct call with the same sample and seed
    runs = sp.simulate_runs(*sp.topic(26), 2, rng=np.random.default_rng(5))
    gen = np.random.default_rng(5)
    sp.simulate_runs(*sp.topic(26), 2, rng=gen)
    seeds = gen.integers(2**63, size=(2, 500), dtype=np.int64)
    i, j = planned[len(planned) // 2]
    plan = certification_sample_size(runs.cv[i, j].tolist(), sp.threshold({"topic": 26}),
                                     power=0.93, draws=1000, max_test_size=int(B - steps[j]),
                                     rng=int(seeds[i, j]), interval="delta")
    assert plan.test_size == size[i, j]
    again = sp.generate({"topic": 26, "interval": "delta"}, 2, rng=5)
    for first, second in zip(sample.data, again.data, strict=True):
        np.testing.assert_array_equal(first, second)


@pytest.mark.slow
def test_the_real_learner_mode_certifies_real_training_runs():
    # Two runs of a logistic regression on a generated corpus (`studies.suite.text_learner`):
    # the plans fit the budget, the splits open, and theta is 0.9 of the pilot run's best.
    pytest.importorskip("sklearn")
    params = {"topic": 28, "interval": "delta"}
    steps, size, passed, split_passed = sp.generate_learned(params, 2, rng=7).data
    assert np.array_equal(steps, sp.LEARNER_STEPS) and size.shape == (2, steps.size)
    planned = ~np.isnan(size)
    assert planned.any() and np.array_equal(planned, ~np.isnan(passed))
    assert (np.broadcast_to(steps, size.shape)[planned] + size[planned] <= B).all()
    assert not np.isnan(split_passed).any()
    theta = sp.learned_threshold(params)
    assert 0.5 < theta < 0.9
    out = sp.METHODS["first"]((steps, size, passed, split_passed), params)
    assert (out.size[~np.isnan(out.size)] <= B).all()


def _cell(index, tested, success, saving, methods=("first",)):
    """A cell of 20 runs of topic ``index`` where each of ``methods`` has the given values."""
    measures = {"tested": Measure(tested, 0.1), "conditional_rejection": Measure(success, 0.1),
                "rejection": Measure(tested * success, 0.1),
                "conditional_saving": Measure(saving, 0.05),
                "mean_saving": Measure(saving, 0.05), "mean_size": Measure(8000.0, 100.0)}
    return CellResult("stopping_policies", str(index), index,
                      {"topic": index, "interval": "delta"}, "monte-carlo",
                      {m: Performance(measures, 20) for m in methods}, {}, b"")


def test_the_summary_pools_the_runs_that_open_over_the_topics():
    # Two topics of 20 runs: first opens 10 (success 0.6) and 20 (success 0.9): pooled over
    # the 30 runs that open, 0.8; the open rate is the plain mean, 0.75.
    rows = sp.summary_table(StudyResult("stopping_policies",
                                        (_cell(27, 0.5, 0.6, 0.0), _cell(28, 1.0, 0.9, 0.0))))
    policy = next(r for r in rows if r["table"] == "policies")
    assert policy["open_rate"] == pytest.approx(0.75)
    assert policy["success"] == pytest.approx((0.5 * 0.6 + 1.0 * 0.9) / 1.5)
    assert policy["success_mcse"] == pytest.approx(math.sqrt(0.05**2 + 0.1**2) / 1.5)
    paper = {r["quantity"]: r for r in rows if r["table"] == "paper"}
    assert paper["success of first-within-budget"]["delta"] == pytest.approx(0.8)
    assert paper["success of first-within-budget"]["paper"] == 0.7946
    assert paper["runs never within budget"]["delta"] == pytest.approx(0.25)
    topics = [r for r in rows if r["table"] == "topics"]
    assert [r["topic"] for r in topics] == [27, 28]
    assert topics[1]["theta"] == sp.threshold({"topic": 28})
    figure_3 = [r for r in rows if r["table"] == "figure 3"]
    assert figure_3[0]["gap"] < -0.03 and abs(figure_3[-1]["gap"]) < 0.01


def test_a_topic_without_an_mcse_of_its_own_leaves_the_pooled_mcse_undefined():
    # the last topic has no value (no run opened) and takes no part
    topics = [Measure(0.5, 0.1), Measure(1.0, math.nan), Measure(0.8, 0.2),
              Measure(math.nan, 0.3)]
    pooled = sp._pooled(topics, [1.0, 0.05, 1.0, 1.0])
    assert pooled.value == pytest.approx((0.5 + 0.05 + 0.8) / 2.05)
    assert math.isnan(pooled.mcse)
    assert sp._share(pooled.value, pooled.mcse).endswith("(MCSE undefined: a topic where one "
                                                         "run opened)")
    known = sp._pooled([topics[0], topics[2], topics[3]], None)
    assert (known.value, known.mcse) == pytest.approx((0.65, math.sqrt(0.1**2 + 0.2**2) / 2))


def test_the_findings_read_the_run_and_put_the_paper_beside_it():
    # The cells of the summary test, for every policy of the paper's figures: first's success
    # pooled over the runs that open (0.8) beside the paper's 79.46%, the runs never within
    # budget (0.25) beside 29.48%, the rarest and commonest topic's success (0.6 and 0.9).
    methods = ("first", "blind-oracle", "sighted-oracle", "wait-25", "split-50-50")
    result = StudyResult("stopping_policies", (_cell(27, 0.5, 0.6, 0.2, methods),
                                               _cell(28, 1.0, 0.9, 0.3, methods)))
    text = " ".join(sp.findings(result, sp.summary_table(result)))
    mcse = math.sqrt(0.05**2 + 0.1**2) / 1.5
    assert versus_paper(0.8, mcse, 0.7946, percent=True, digits=1) in text
    assert versus_paper(0.25, math.sqrt(0.1**2 + 0.1**2) / 2, 0.2948, percent=True,
                        digits=1) in text
    assert "60.0% (MCSE 10.0 points) on the rarest topic 27" in text
    assert "90.0% (MCSE 10.0 points) on the commonest topic 28" in text
    # wait-25 opens on as many runs as first and certifies as often: nothing rises or grows
    assert "open stays within its Monte Carlo error, from 80.0%" in text
    assert "never open stays within its Monte Carlo error, from 25.0%" in text
    # a direction is named only where the change exceeds 1.96 times its MCSE
    assert sp._direction(0.8, 0.6, 0.05, 0.05, "rises", "falls") == "falls"
    assert sp._direction(0.6, 0.8, 0.05, 0.05, "rises", "falls") == "rises"
    assert sp._direction(0.8, 0.6, 0.1, 0.1, "rises", "falls").startswith("stays")
    assert sp._direction(0.8, 0.6, math.nan, 0.05, "rises", "falls").startswith("stays")
