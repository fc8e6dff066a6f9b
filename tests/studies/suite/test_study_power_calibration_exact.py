"""The exact power-calibration study: its enumeration, its pass rates and its Monte Carlo path.

Monte Carlo checks use fixed seeds and a tolerance of k standard errors, k = 3.29 (two-sided
false-alarm rate 1e-3 per check).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from estimators import certification_power, certification_sample_size, proportion_ci
from studies.engine import run
from studies.engine.design import Grid
from studies.suite import power_calibration_exact as pce
from studies.suite.registry import get_study

K = float(stats.norm.isf(0.001 / 2))
STUDY = get_study("power_calibration_exact")
CELL = {"prevalence": 0.15, "f1": 0.85, "certified": "accuracy", "f": 0.95, "r": 60}


def _one_cell(params: dict, replicates: int, path: str) -> dict[str, float]:
    grid = Grid({k: [v] for k, v in params.items()}, n_replicates=replicates)
    result = run([STUDY], grid=grid, rng=11, workers=1, path=path)["power_calibration_exact"]
    (cell,) = result.cells
    measures = cell.performance["clopper-pearson"].measures
    return {name: (measures[name].value, measures[name].mcse)
            for name in ("tested", "conditional_rejection")}


@pytest.mark.parametrize("certified", pce.MEASURES)
def test_enumeration_keeps_all_but_the_dropped_mass(certified):
    params = {**CELL, "certified": certified, "r": 80}
    sample = pce.enumerate_outcomes([params])
    chances = pce._trinomial_probabilities(params)
    assert math.isclose(chances.sum(), 1.0, abs_tol=1e-12)
    # the kept outcomes' probabilities before renormalising, recomputed with scipy
    counts = sample.data
    outcome = np.column_stack([_measure_counts(counts, certified)])
    kept = stats.multinomial.pmf(outcome, 80, chances).sum()
    assert 1.0 - pce.DROPPED <= kept <= 1.0 + 1e-12
    assert math.isclose(sample.probability.sum(), 1.0, abs_tol=1e-12)


def _measure_counts(counts: np.ndarray, certified: str) -> np.ndarray:
    """The trinomial (x, y, rest) of confusion matrices standing for them."""
    parts = {"accuracy": ((0, 3), (1, 2)), "precision": ((0,), (1,)), "recall": ((0,), (2,)),
             "f1": ((0,), (1, 2))}[certified]
    x = counts[:, list(parts[0])].sum(axis=1)
    y = counts[:, list(parts[1])].sum(axis=1)
    return np.column_stack([x, y, counts.sum(axis=1) - x - y])


@pytest.mark.parametrize(("certified", "outcome", "real"), [
    ("recall", (20, 5, 175), (20, 30, 5, 145)),
    ("precision", (20, 6, 174), (20, 6, 14, 160)),
    ("f1", (20, 11, 169), (20, 5, 6, 169)),
    ("accuracy", (170, 30, 0), (20, 10, 20, 150)),
])
def test_a_trinomial_outcome_plans_as_any_sample_with_its_sums(certified, outcome, real):
    # the Dirichlet posterior of the measure and of its trials depend on these sums only
    standing = pce._confusion(np.array([outcome]), certified)[0].tolist()
    theta = 0.55 if certified != "accuracy" else 0.8
    interval = pce._interval("clopper-pearson", certified)
    plans = [certification_sample_size(c, theta, measure=certified, interval=interval,
                                       posterior="dirichlet") for c in (standing, real)]
    assert plans[0].test_size == plans[1].test_size is not None
    assert plans[0].achieved_power == plans[1].achieved_power


def _planner_sizes(counts: np.ndarray, theta: float, measure: str, interval: str) -> np.ndarray:
    """`certification_sample_size`'s test size for each sample (nan: none)."""
    sizes = [certification_sample_size(row.tolist(), theta, measure=measure, interval=interval,
                                       posterior="dirichlet", confidence_level=pce.LEVEL,
                                       power=pce.POWER, max_test_size=pce.MAX_TEST_SIZE
                                       ).test_size for row in counts]
    return np.array([math.nan if size is None else size for size in sizes], dtype=float)


@pytest.mark.parametrize("certified", ["accuracy", "recall", pytest.param(
    "precision", marks=pytest.mark.slow), pytest.param("f1", marks=pytest.mark.slow)])
def test_plans_are_the_planners_sample_by_sample(certified, monkeypatch):
    # Searched together, the samples sharing the law of the test set's trials sharing its
    # urn, and read along the exact power curve only up to the size the search found, the
    # plans must be the planner's own for every enumerated sample and both bounds.
    monkeypatch.setattr(pce, "_PLANNED", {})
    params = {**CELL, "certified": certified, "f": 0.9, "r": 40}
    counts, theta = pce.enumerate_outcomes([params]).data, pce.threshold(params)
    for method in pce.METHODS:
        interval = pce._interval(method, certified)
        found = pce._plans(counts, theta, certified, interval)
        expected = _planner_sizes(counts, theta, certified, interval)
        assert 0 < np.isnan(expected).sum() < len(expected)  # reachable and unreachable
        np.testing.assert_array_equal(found, expected, err_msg=method)


def test_a_curve_reaching_the_power_only_past_the_search_is_left_to_the_planner(monkeypatch):
    # Curves that never reach the power up to the found size (here: all, by a stand-in for
    # both the bound-and-read and the planner's curves) are planned by
    # certification_sample_size itself; planned once, a sample's size is kept for the next
    # cell with the same target.
    monkeypatch.setattr(pce, "_PLANNED", {})
    monkeypatch.setattr(pce, "_first_reach", lambda problem, found: None)
    monkeypatch.setattr(pce, "_curves", lambda members: [
        np.zeros(found + 1) for _, found in members])
    params = {**CELL, "certified": "recall", "f": 0.9, "r": 40}
    counts, theta = pce.enumerate_outcomes([params]).data, pce.threshold(params)
    found = pce._plans(counts, theta, "recall", "clopper-pearson")
    np.testing.assert_array_equal(found, _planner_sizes(counts, theta, "recall",
                                                         "clopper-pearson"))
    monkeypatch.setattr(pce, "_search", lambda rows, *args: [math.nan] * len(rows))
    np.testing.assert_array_equal(pce._plans(counts, theta, "recall", "clopper-pearson"), found)


def test_plans_decided_by_the_exact_powers_alone_are_the_same(monkeypatch):
    # With margins wider than any power, every question the search asks and every curve is
    # answered by the exact powers and the planner's curves: the plans must not move, and
    # without that the bound-and-read path decides most of them.
    params = {**CELL, "certified": "recall", "f": 0.9, "r": 40}
    counts, theta = pce.enumerate_outcomes([params]).data, pce.threshold(params)
    read: list[int] = []
    real_curves = pce._curves

    def counted(members):
        read.extend(found for _, found in members)
        return real_curves(members)

    monkeypatch.setattr(pce, "_curves", counted)
    fast = {}
    for method in pce.METHODS:
        monkeypatch.setattr(pce, "_PLANNED", {})
        fast[method] = pce._plans(counts, theta, "recall", pce._interval(method, "recall"))
    decided = np.unique(counts, axis=0).shape[0] * len(pce.METHODS)
    assert len(read) < 0.2 * np.isfinite(np.concatenate(list(fast.values()))).sum() < decided
    monkeypatch.setattr(pce, "_MARGIN", 2.0)
    monkeypatch.setattr(pce, "_CURVE_MARGIN", 2.0)
    for method in pce.METHODS:
        monkeypatch.setattr(pce, "_PLANNED", {})
        slow = pce._plans(counts, theta, "recall", pce._interval(method, "recall"))
        np.testing.assert_array_equal(slow, fast[method], err_msg=method)


def _recall_problem(row: tuple[int, int, int, int], interval: str, theta: float = 0.765):
    """The study's power computation of a labelled sample (the quick cell's theta)."""
    req = pce._request("recall", "srs", theta, pce.LEVEL, interval, "dirichlet", None, None)
    return pce._problem(req, None, pce._jeffreys(row))


@pytest.mark.parametrize("a, b", [(1.0, 201.0), (31.0, 171.0), (51.0, 151.0), (120.0, 82.0)])
def test_trials_law_is_the_beta_binomial(a, b):
    # Recall's relevant documents: the posterior of the relevant share, a = tp + fn + 1.
    # scipy's pmf errs by up to ~2e-10 at 20,000 documents, the law here by less: within
    # 1e-9 of scipy's in total, a tenth of the margin `_reaches` leaves.
    for size in (0, 1, 2, 64, 999, 8192, 20_000):
        low, law = pce._trials_law(a, b, size)
        exact = stats.betabinom.pmf(np.arange(size + 1), size, a, b)
        assert exact[:low].sum() <= pce._TRIALS_DROPPED
        assert exact[low + law.size:].sum() <= pce._TRIALS_DROPPED
        assert np.abs(law - exact[low:low + law.size]).sum() <= pce._MARGIN / 10
        assert not law.flags.writeable


@pytest.mark.parametrize("row", [(21, 177, 2, 0), (43, 150, 7, 0)])
def test_approximate_powers_are_within_a_tenth_of_the_margins(row):
    # the two assumptions of the margins: `_approximate_power` is within a tenth of _MARGIN
    # of Conditional.power (the planner's search), and a curve read from `_trials_law`'s
    # law within a tenth of _CURVE_MARGIN of the planner's curve
    problem = _recall_problem(row, "clopper-pearson")
    for size in (1, 64, 1000, 6000, 20_000):
        exact = problem.power(size)
        assert abs(pce._approximate_power(problem, size) - exact) <= pce._MARGIN / 10
    outer = problem.outer
    (planner,) = pce.Conditional.curves([problem], [6000], read=[3000])
    (read,) = pce.Conditional.curves([problem], [6000], read=[3000], start=(
        2000, *pce._trials_law(outer.first, outer.second, 2000)))
    assert np.abs(read - planner[2000:]).max() <= pce._CURVE_MARGIN / 10


@pytest.mark.parametrize(("row", "theta"), [((60, 2, 3, 1), 0.85), ((300, 50, 20, 30), 0.85),
                                            ((2000, 10, 100, 10), 0.765)])
@pytest.mark.parametrize("interval", ["clopper-pearson", "wilson"])
def test_the_envelopes_power_bounds_the_curve_up_to_its_size(row, theta, interval):
    # what lets `_first_reach` skip sizes: at every size s, the power with the running
    # maximum of the survival probabilities is at least the curve at every size up to s,
    # here where the curve is saw-toothed (the relevant share's posterior narrow)
    problem = _recall_problem(row, interval, theta=theta)
    (curve,) = pce.Conditional.curves([problem], [800])
    highest = np.maximum.accumulate(curve)
    bound = [pce._approximate_power(problem, size, envelope=True) for size in range(801)]
    assert (np.diff(curve) < -1e-3).any()  # a saw-tooth: the curve falls back at places
    assert (highest <= np.array(bound) + pce._CURVE_MARGIN / 10).all()


@pytest.mark.parametrize("row", [(21, 177, 2, 0), (50, 142, 8, 0), pytest.param(
    (43, 150, 7, 0), marks=pytest.mark.slow)])
def test_plans_thousands_of_documents_long_are_the_planners(row, monkeypatch):
    # samples near the posterior limit (plans of 5,000 to 20,000 documents in the quick
    # cell), where the curve is read from its bound on only its last few percent of sizes
    monkeypatch.setattr(pce, "_PLANNED", {})
    theta = 0.765
    for method in pce.METHODS:
        interval = pce._interval(method, "recall")
        found = pce._plans(np.array([row]), theta, "recall", interval)
        np.testing.assert_array_equal(found, _planner_sizes(np.array([row]), theta, "recall",
                                                             interval), err_msg=method)
        assert found[0] > 4000


@pytest.mark.slow
def test_exact_pass_rate_equals_an_independent_sum_over_the_samples():
    # accuracy: the plan depends on the correct count x ~ Bin(r, accuracy) alone; the test of
    # s documents passes when its Clopper-Pearson bound clears theta, summed here by hand
    params = CELL
    accuracy = 1.0 - 2.0 * params["prevalence"] * (1.0 - params["f1"])
    theta = params["f"] * accuracy
    r = params["r"]
    attempted = passed = 0.0
    for x in range(r + 1):
        weight = stats.binom.pmf(x, r, accuracy)
        plan = certification_sample_size((x, r - x, 0, 0), theta, measure="accuracy",
                                          interval="clopper-pearson", posterior="dirichlet",
                                          max_test_size=pce.MAX_TEST_SIZE)
        if plan.test_size is None:
            continue
        s = plan.test_size
        correct = np.arange(s + 1)
        low = np.asarray(proportion_ci(correct, s, method="clopper-pearson",
                                       alternative="greater").low)
        attempted += weight
        passed += weight * stats.binom.pmf(correct, s, accuracy)[low > theta].sum()
    found = _one_cell(params, 2, "exact")
    assert found["tested"][0] == pytest.approx(attempted, abs=2 * pce.DROPPED)
    assert found["conditional_rejection"][0] == pytest.approx(passed / attempted, abs=1e-6)


def test_monte_carlo_path_agrees_with_the_exact_path():
    exact = _one_cell(CELL, 2, "exact")
    simulated = _one_cell(CELL, 4000, "monte-carlo")
    for name in ("tested", "conditional_rejection"):
        value, mcse = simulated[name]
        assert mcse > 0
        assert abs(value - exact[name][0]) <= K * mcse, name


@pytest.mark.slow
def test_the_summary_lists_the_worst_shortfall_first():
    grid = Grid({"prevalence": [0.15], "f1": [0.85], "certified": ["accuracy"],
                 "f": [0.9, 0.97], "r": [60]}, n_replicates=2)
    result = run([STUDY], grid=grid, rng=3, workers=1)["power_calibration_exact"]
    rows = pce.summary_table(result)
    assert len(rows) == 4
    shortfalls = [row["shortfall"] for row in rows]
    assert shortfalls == sorted(shortfalls, reverse=True)
    assert all(row["shortfall"] == pytest.approx(0.93 - row["pass_rate"]) for row in rows)


def test_trinomial_probabilities_are_the_measures_cells():
    cells = pce.population(0.2, 0.8)
    for certified, expected in (("accuracy", (cells[0] + cells[3], cells[1] + cells[2], 0.0)),
                                ("recall", (cells[0], cells[2], cells[1] + cells[3]))):
        found = pce._trinomial_probabilities({"prevalence": 0.2, "f1": 0.8,
                                              "certified": certified})
        np.testing.assert_allclose(found, expected, atol=1e-15)


def _row(certified, f, method, pass_rate, attempt_rate=0.5, median_size=100.0):
    return {"certified": certified, "prevalence": 0.15, "f1": 0.85, "f": f, "r": 200,
            "method": method, "attempt_rate": attempt_rate, "pass_rate": pass_rate,
            "shortfall": 0.93 - pass_rate, "median_size": median_size}


def test_findings_read_the_pass_rates_from_the_summary():
    rows = [_row("accuracy", 0.9, "clopper-pearson", 0.95, median_size=120.0),
            _row("accuracy", 0.9, "wilson", 0.96, median_size=108.0),
            _row("f1", 0.9, "clopper-pearson", 0.80, attempt_rate=0.25, median_size=400.0),
            _row("f1", 0.9, "wilson", 0.78, median_size=360.0)]
    accuracy, f1, worst, wilson, paper = pce.findings(None, rows)
    assert accuracy == ("Accuracy plans (Clopper-Pearson bound) pass, on average over the "
                        "populations, 0.950 at f = 0.9 of their attempts (exact; nominal 0.93).")
    assert "0.800 at f = 0.9" in f1
    assert worst == ("2 of the 4 cell-bound pairs pass below 0.93; the worst: f1 (wilson) at "
                     "prevalence 0.15, F1 0.85, f = 0.9, passing 0.780 of the 50.0% of samples "
                     "planned from.")
    assert "0.90-0.90 times Clopper-Pearson's" in wilson and "at most 0.020" in wilson
    assert paper.endswith("at f = 0.9, 0.800 (exact) against the paper's 0.930: not "
                          "reproduced.")
    *_, no_f1 = pce.findings(None, rows[:2])
    assert no_f1.startswith("This run certifies no F1")


# Every population of the full grid (and so the quick grid's), each measure and bound, at
# sizes from 1 to planned sizes in the thousands.
_POPULATIONS = [(p, f) for p in (0.05, 0.15, 0.4) for f in (0.7, 0.85)]


@pytest.mark.parametrize("prevalence, f1", _POPULATIONS)
def test_the_oracle_power_is_certification_powers_at_every_population(prevalence, f1):
    cells = pce.population(prevalence, f1)
    truth = tuple(float(c) for c in cells)
    worst = 0.0
    for certified in pce.MEASURES:
        for method in pce.METHODS:
            interval = pce._interval(method, certified)
            for f in (0.8, 0.9, 0.95):
                theta = pce.threshold({"prevalence": prevalence, "f1": f1,
                                       "certified": certified, "f": f})
                for size in (1, 7, 60, 333, 2_500):
                    found = pce.oracle_power(certified, size, theta, cells, interval)
                    power = certification_power(certified, size, theta, truth=truth,
                                                interval=interval)
                    worst = max(worst, abs(found - power))
    assert worst <= 1e-12


def test_the_oracle_bound_is_proportion_cis():
    x, n = np.meshgrid(np.arange(41.0), np.arange(1.0, 41.0))
    keep = x <= n
    for method in ("clopper-pearson", "wilson"):
        low = proportion_ci(x[keep].astype(int), n[keep].astype(int), method=method,
                            alternative="greater").low
        assert np.allclose(pce._oracle_bound(x[keep], n[keep], method), low, rtol=0,
                           atol=1e-12)


def test_a_fault_in_the_planning_machinery_moves_its_power_but_not_the_oracles(monkeypatch):
    # the population's recall read one cell off (fn taken for fp): certification_power, and
    # every plan made with the same machinery, move; the study's measurement does not
    import estimators._exact_power as machinery

    cells = pce.population(0.15, 0.85)
    cells[1], cells[2] = 0.5 * cells[1], 1.5 * cells[2]  # recall below precision
    truth = tuple(float(c) for c in cells)
    theta = 0.7
    before = certification_power("recall", 400, theta, truth=truth)
    oracle = pce.oracle_power("recall", 400, theta, cells, "clopper-pearson")
    assert before == pytest.approx(oracle, abs=1e-12)
    right = machinery._truth
    monkeypatch.setattr(machinery, "_truth", lambda value, req: right(
        (value[0], value[2], value[1], value[3]), req))
    moved = certification_power("recall", 400, theta, truth=truth)
    assert abs(moved - before) > 0.05
    assert pce.oracle_power("recall", 400, theta, cells, "clopper-pearson") == oracle


@pytest.mark.parametrize("certified, row", [
    ("accuracy", (150, 20, 0, 0)), ("recall", (25, 30, 6, 139)), ("precision", (25, 6, 30, 139)),
    ("f1", (25, 3, 4, 168))])
def test_the_oracle_assurance_is_certification_powers_over_the_posterior(certified, row):
    theta = 0.7
    for method in pce.METHODS:
        interval = pce._interval(method, certified)
        cut = theta / (2.0 - theta) if certified == "f1" else theta
        least = pce._oracle_least_passing(700, cut, interval)
        for size in (1, 40, 333, 700):
            found = pce.oracle_assurance(row, size, theta, certified, interval, least)
            expected = certification_power(certified, size, theta, confusion=row,
                                           interval=interval)
            assert found == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("terms", [pce._TAIL_TERMS, 1_000])
def test_the_oracles_beta_binomial_tails_are_scipys_in_parts_of_any_size(terms, monkeypatch):
    monkeypatch.setattr(pce, "_TAIL_TERMS", terms)
    trials = np.arange(0, 3_000)
    least = np.round(0.9 * trials).astype(np.int64) + np.arange(3_000) % 7 - 3
    for a, b in ((3.5, 1.5), (0.5, 0.5), (150.5, 12.5)):
        found = pce._beta_binomial_sf(least, trials, a, b)
        assert found == pytest.approx(stats.betabinom.sf(least - 1, trials, a, b), abs=1e-10)
    # a tail that starts past its trials is empty, one from 0 or below is the whole law
    assert pce._beta_binomial_sf(np.array([5, 0, -1]), np.array([3, 0, 2]), 1.0, 1.0
                                 ).tolist() == pytest.approx([0.0, 1.0, 1.0])


def test_a_planner_with_a_prior_of_one_fails_the_oracle_check(monkeypatch):
    # the exact planner's Jeffreys prior (1/2 per cell) taken as 1: its plans are no longer
    # the least sizes reaching the power under the right posterior, and the check says so
    params = {"prevalence": 0.15, "f1": 0.85, "certified": "accuracy", "f": 0.9, "r": 200}
    sample = pce.enumerate_outcomes([params])
    weights = sample.probability[0]
    right = pce._certified("clopper-pearson", sample.data, params)
    assert weights @ right.correct == pytest.approx(1.0, abs=1e-12)
    monkeypatch.setattr(pce, "_PLANNED", {})
    monkeypatch.setattr(pce, "_jeffreys", lambda counts: np.asarray(counts, float) + 1.0)
    wrong = pce._certified("clopper-pearson", sample.data, params)
    assert weights @ wrong.correct < 0.5
    # the plans moved; the measurement of their power is the oracle's, not the planner's
    moved = ~np.isnan(wrong.size) & (wrong.size != right.size)
    assert moved.any()


def test_a_planner_declaring_reachable_targets_out_of_reach_fails_the_oracle_check(monkeypatch):
    # the planner's posterior limit taken at (1 - power) / 2: samples whose target is within
    # reach are declared beyond it and left unplanned; the oracle's limit (scipy's Beta)
    # says they were not, and the check counts them wrong
    from scipy import special

    from estimators._size_search import _posterior_beta

    def two_sided(req, alpha, goal):  # recall's limit, at the two-sided tail
        a, b = _posterior_beta(req, alpha)
        return float(special.betaincinv(a, b, (1.0 - goal) / 2))

    params = {"prevalence": 0.15, "f1": 0.85, "certified": "recall", "f": 0.9, "r": 200}
    sample = pce.enumerate_outcomes([params])
    weights = sample.probability[0]
    right = pce._certified("clopper-pearson", sample.data, params)
    assert weights @ right.correct == pytest.approx(1.0, abs=1e-12)
    monkeypatch.setattr(pce, "_PLANNED", {})
    monkeypatch.setattr(pce, "_limit", two_sided)
    wrong = pce._certified("clopper-pearson", sample.data, params)
    lost = np.isnan(wrong.size) & ~np.isnan(right.size)
    # every sample it lost is counted wrong (and those it never reached by MAX_TEST_SIZE,
    # now declared beyond a limit they are not beyond)
    assert lost.any() and weights @ wrong.correct <= 1.0 - weights[lost].sum() + 1e-12


def test_a_fault_in_certification_power_fails_its_agreement_claim(monkeypatch):
    # certification_power asked for one document more than the plan (its size read off by
    # one): the plans and the oracle do not move, the public power does, and the claim fails
    import estimators._exact_power as machinery
    from studies.engine import FAILS, HOLDS, evaluate_claims

    (claim,) = [c for c in STUDY.claims if c.name == "certification-power-agrees-with-the-oracle"]
    grid = Grid({"prevalence": [0.15], "f1": [0.85], "certified": ["accuracy"], "f": [0.9],
                 "r": [200]}, n_replicates=2)

    def verdict() -> str:
        result = run([STUDY], grid=grid, rng=1, workers=1)["power_calibration_exact"]
        return evaluate_claims([claim], result)[0].status

    assert verdict() == HOLDS
    right = machinery._sizes
    monkeypatch.setattr(machinery, "_sizes", lambda size, req: (
        right(size + 1, req) if req.design == "srs" else right(size, req)))
    assert verdict() == FAILS
