"""The coverage_f1 study's findings, pinned with the engine's statistical assertions."""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
import pytest
from scipy import stats

from estimators import F1_METHODS_BY_DESIGN, f1_ci, f1_estimate
from studies.engine import FAILS, HOLDS, evaluate_claims, run
from studies.engine.assertions import assert_coverage, assert_measure
from studies.engine.design import Grid, Study
from studies.report import write_tables
from studies.suite.coverage_f1 import (
    STUDY,
    summary,
    summary_table,
    undercovering_cells,
    wrap_method,
)
from studies.suite.coverage_f1_exact import STUDY as EXACT_STUDY
from studies.suite.coverage_f1_exact import (
    enumerate_outcomes,
    findings_by_level,
    summary_by_level,
)


def _exact(**parameters) -> dict:
    grid = Grid({"design": ["srs"], "confidence_level": [0.95], **parameters}, n_replicates=2)
    return run([EXACT_STUDY], grid=grid, rng=0, workers=1)["coverage_f1_exact"]


def _only(study: Study, *names: str, **extra) -> Study:
    """``study`` with only the methods ``names`` (and ``extra`` ones): a cheaper run."""
    return dataclasses.replace(study, methods={**{k: study.methods[k] for k in names}, **extra})


@pytest.fixture(scope="module")
def rare_small():
    # rare class, small test set: the regime where the normal approximations break down
    return _exact(prevalence=[0.03], f1=[0.3, 0.7], n=[50, 100])


@pytest.fixture(scope="module")
def moderate():
    # n = 1000, prevalence >= 15%, F1 <= 0.7: the certification regime of seed 000 section 5
    return _exact(prevalence=[0.15, 0.5], f1=[0.5, 0.7], n=[1000])


def test_enumeration_is_a_probability_distribution_of_the_trinomial():
    cells = [{"design": "srs", "prevalence": 0.1, "f1": 0.7, "n": 20, "confidence_level": 0.95}]
    sample = enumerate_outcomes(cells)
    tp, e, fn, tn = sample.data[0].T
    assert sample.size == 21 * 22 // 2 and np.all(fn == 0) and np.all(tp + e + tn == 20)
    # the marginal of tp is Binomial(n, F pi)
    marginal = np.bincount(tp, weights=sample.probability[0], minlength=21)
    np.testing.assert_allclose(marginal, stats.binom.pmf(np.arange(21), 20, 0.07), atol=1e-13)


def test_exact_coverage_agrees_with_monte_carlo():
    cell = {"prevalence": [0.15], "f1": [0.7], "n": [50]}
    exact = _exact(**cell).rows("coverage", method="delta")[0]["value"]
    grid = Grid({"design": ["srs"], **cell, "confidence_level": [0.95], "draws": [10]},
                n_replicates=8192)
    mc = run([_only(STUDY, "delta")], grid=grid, rng=4, workers=1)["coverage_f1"]
    assert_measure(mc, "coverage", exact, method="delta")


def test_undefined_share_is_the_probability_of_an_empty_f1(rare_small):
    # 2 tp + fp + fn = 0 has probability (1 - pi (2 - F))^n: every method's nan share
    for row in rare_small.rows("rejection", method="delta"):
        p = row["params"]
        expected = (1.0 - p["prevalence"] * (2.0 - p["f1"])) ** p["n"]
        assert row["value"] == pytest.approx(expected, rel=1e-9)


def test_delta_undercovers_at_small_n_with_rare_classes(rare_small):
    # Exact: 0.29-0.71 two-sided, 0.59-0.92 one-sided against 0.95 (the Wald-type failure of
    # Brown, Cai & DasGupta 2001 at small n pi: here the expected tp is 0.45-2.1).
    for method in ("delta", "delta-losci"):
        with pytest.raises(AssertionError, match="4 of 4 coverage checks failed"):
            assert_coverage(rare_small, 0.95, method=method, tolerance=0.02,
                            alternative="greater")
    assert max(r["value"] for r in rare_small.rows("coverage", method="delta")) < 0.75
    assert {r["params"]["n"] for r in undercovering_cells(rare_small, method="delta")} == {50, 100}


@pytest.mark.slow
def test_delta_losci_is_near_nominal_at_moderate_n_and_prevalence(moderate):
    # Exact coverage 0.941-0.949: at most 0.015 short of 0.95 (it is short: F1's sampling
    # distribution is left-skewed, so the symmetric lower bound sits too high)
    assert_coverage(moderate, 0.95, method="delta-losci", tolerance=0.015, alternative="greater")
    assert_coverage(moderate, 0.95, method="delta", tolerance=0.01)
    assert all(r["value"] < 0.95 for r in moderate.rows("coverage", method="delta-losci"))


def test_logit_delta_bounds_stay_inside_the_unit_interval():
    sample = enumerate_outcomes([{"design": "srs", "prevalence": 0.3, "f1": 0.7, "n": 60,
                                  "confidence_level": 0.95}])
    tp, fp, fn, tn = sample.data[0].T
    low, high = f1_ci(tp, fp, fn, tn, method="logit-delta")
    point = np.asarray(f1_estimate(tp, fp, fn, tn).estimate)
    interior = (point > 0) & (point < 1)
    assert np.all(np.isnan(low) == ~interior) and np.all(np.isnan(high) == ~interior)
    assert np.all((low[interior] > 0) & (low[interior] < point[interior]))
    assert np.all((high[interior] > point[interior]) & (high[interior] < 1))


def test_beta_posterior_losci_covers_better_than_delta_losci_for_rare_classes():
    grid = Grid({"design": ["srs"], "prevalence": [0.03], "f1": [0.7], "n": [100],
                 "confidence_level": [0.95], "draws": [500]}, n_replicates=1024)
    study = _only(STUDY, "delta-losci", "beta-posterior-losci")
    result = run([study], grid=grid, rng=5, workers=1)["coverage_f1"]
    table = summary(result)
    delta, beta = table["delta-losci"], table["beta-posterior-losci"]
    gap_se = np.hypot(delta["min_coverage_mcse"], beta["min_coverage_mcse"])
    assert beta["min_coverage"] - delta["min_coverage"] > 4 * gap_se
    assert_coverage(result, 0.95, method="beta-posterior-losci", tolerance=0.05,
                    alternative="greater")


def _shrunk_delta(tp, fp, fn, tn, *, confidence_level, alternative, design, population_sizes,
                  rng, draws):
    """The delta interval with its variance shrunk by half: a deliberately broken method."""
    est = f1_estimate(tp, fp, fn, tn, design=design, population_sizes=population_sizes)
    half = stats.norm.ppf(0.5 + confidence_level / 2) * np.sqrt(0.5 * est.variance)
    return np.clip(est.estimate - half, 0, 1), np.clip(est.estimate + half, 0, 1)


def test_delta_passes_and_shrunk_variance_delta_fails_assert_coverage():
    grid = Grid({"design": ["srs", "stratified"], "prevalence": [0.5], "f1": [0.7],
                 "n": [1000], "confidence_level": [0.95], "draws": [10]}, n_replicates=2048)
    study = _only(STUDY, "delta", shrunk=wrap_method(_shrunk_delta))
    result = run([study], grid=grid, rng=6, workers=1)["coverage_f1"]
    assert_coverage(result, 0.95, method="delta")
    with pytest.raises(AssertionError, match="2 of 2 coverage checks failed"):
        assert_coverage(result, 0.95, method="shrunk")


def test_wrapped_f1_ci_is_a_valid_user_method():
    method = wrap_method(functools.partial(f1_ci, method="delta"), "greater")
    counts = np.array([[0, 0, 0, 10], [5, 1, 1, 3]])
    est = method((counts, 0), {"design": "srs", "confidence_level": 0.95})
    # the empty F1 is undefined: [0, 0], flagged; the defined one is a LOSCI [low, 1]
    assert est.reject.tolist() == [True, False]
    assert est.low[0] == est.high[0] == 0.0 and est.high[1] == 1.0


def _same_estimates(got, expected) -> bool:
    return all(a.tobytes() == b.tobytes()
               for a, b in zip(got.arrays().values(), expected.arrays().values(), strict=True))


@pytest.mark.parametrize("design", ["srs", "stratified"])
@pytest.mark.parametrize("method", ["beta-posterior", "bootstrap"])
def test_monte_carlo_method_and_its_losci_drawn_once_are_f1_ci_bit_for_bit(method, design):
    # two chunks, the second partial; with n x prevalence = 1.5 many samples have no F1
    params = {"design": design, "prevalence": 0.03, "f1": 0.7, "n": 50,
              "confidence_level": 0.95, "draws": 200}
    other_level = {**params, "confidence_level": 0.8}
    samples = [STUDY.generate(params, 1_500, rng=seed) for seed in (3, 4)]
    ci = functools.partial(f1_ci, method=method)
    sides = {method: "two-sided", f"{method}-losci": "greater"}

    def expected(sample, cell):
        return {name: wrap_method(ci, side)(sample.data, cell) for name, side in sides.items()}

    first, second = expected(samples[0], params), expected(samples[1], params)
    assert not _same_estimates(first[method], second[method])  # the samples differ
    losci = f"{method}-losci"
    # either order; then another sample's, or another level's, interval after a kept one
    for name in (method, losci, losci, method):
        assert _same_estimates(STUDY.methods[name](samples[0].data, params), first[name])
    STUDY.methods[method](samples[0].data, params)
    assert _same_estimates(STUDY.methods[losci](samples[1].data, params), second[losci])
    STUDY.methods[method](samples[0].data, params)
    assert _same_estimates(STUDY.methods[losci](samples[0].data, other_level),
                           expected(samples[0], other_level)[losci])


def test_summary_table_has_a_row_per_design_and_method(rare_small, tmp_path):
    rows = summary_table(rare_small)
    assert [(r["design"], r["method"]) for r in rows] == [
        ("srs", m) for m in EXACT_STUDY.methods if not m.startswith("segments-")]
    delta = summary(rare_small)["delta"]
    assert rows[0]["mean_coverage"] == delta["mean_coverage"]
    assert rows[0]["worst"] == "{prevalence}/{f1}/{n}".format(**delta["worst_cell"])
    grid = Grid({"design": ["srs"], "prevalence": [0.03], "f1": [0.7], "n": [50],
                 "confidence_level": [0.95]}, n_replicates=2)
    result = run([EXACT_STUDY], grid=grid, rng=0, workers=1, out=tmp_path / "run")
    write_tables(result, tmp_path / "run", [EXACT_STUDY])
    header = (tmp_path / "run" / "coverage_f1_exact.summary.csv").read_text().splitlines()[0]
    assert header.startswith("design,confidence_level,method,cells,mean_coverage")


LEVELS = (0.9, 0.95, 0.99)


def _srs_coverage(prevalence: float, f1: float, n: int, level: float) -> dict[str, float]:
    """Exact coverage under simple random sampling from scipy.stats alone.

    ``m = tp + fp + fn ~ Bin(n, pi (2 - F))`` and, given ``m``, ``tp ~ Bin(m, J)`` with
    ``J = F / (2 - F)``; every (m, tp) with its probability. Intervals from their formulas:
    Clopper-Pearson for J mapped by ``2 J / (1 + J)`` ([0, 1] at m = 0), and the delta and
    logit-delta intervals with ``Var = 4 tp e (tp + e) / (2 tp + e)^4``, ``e = m - tp``
    (undefined, so not covering, at m = 0; logit-delta also at F = 0 or 1).
    """
    m, tp = (a.ravel() for a in np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij"))
    keep = tp <= m
    m, tp = m[keep], tp[keep]
    prob = (stats.binom.pmf(m, n, prevalence * (2 - f1))
            * stats.binom.pmf(tp, m, f1 / (2 - f1)))
    e = m - tp
    alpha = 1 - level
    j = {"two-sided": (np.where(tp == 0, 0.0, stats.beta.ppf(alpha / 2, tp, e + 1)),
                       np.where(e == 0, 1.0, stats.beta.ppf(1 - alpha / 2, tp + 1, e))),
         "greater": (np.where(tp == 0, 0.0, stats.beta.ppf(alpha, tp, e + 1)), 1.0)}
    with np.errstate(divide="ignore", invalid="ignore"):
        point = 2 * tp / (2 * tp + e)
        sd = np.sqrt(4 * tp * e * (tp + e)) / (2 * tp + e) ** 2
        logit_sd = sd / (point * (1 - point))
    defined, inner = m > 0, (tp > 0) & (e > 0)
    z = {"two-sided": stats.norm.ppf(1 - alpha / 2), "greater": stats.norm.ppf(1 - alpha)}
    covers = {}
    for side, suffix in (("two-sided", ""), ("greater", "-losci")):
        low, high = (2 * b / (1 + b) for b in j[side])
        covers[f"jaccard-clopper-pearson{suffix}"] = (low <= f1) & (f1 <= high)
        low, high = point - z[side] * sd, point + z[side] * sd
        covers[f"delta{suffix}"] = defined & (low <= f1) & ((f1 <= high) | (side == "greater"))
        centre = stats.logistic.ppf(np.where(inner, point, 0.5))
        low = stats.logistic.cdf(centre - z[side] * logit_sd)
        high = stats.logistic.cdf(centre + z[side] * logit_sd)
        covers[f"logit-delta{suffix}"] = inner & (low <= f1) & (
            (f1 <= high) | (side == "greater"))
    return {name: float(prob[c].sum()) for name, c in covers.items()}


def _segments_coverage(prevalence: float, f1: float, n: int, level: float
                       ) -> dict[str, float]:
    """Exact coverage of segments-clopper-pearson under stratified sampling, scipy.stats alone.

    Proportional allocation ``n1 = round(n pi)``; ``tp ~ Bin(n1, F)`` (precision) and
    ``fn ~ Bin(n0, pi (1 - F) / (1 - pi))``. Each segment's Clopper-Pearson bounds at tail
    ``a / 4`` (two-sided) or ``a / 2`` (LOSCI), combined in ``F1 = 2 q R1 / (q R1 + q +
    (1 - q) R0)`` with ``q = pi``: the lower bound at (R1 low, R0 high), the upper one at
    (R1 high, R0 low).
    """
    n1 = round(n * prevalence)
    n0 = n - n1
    tp, fn = (a.ravel() for a in np.meshgrid(np.arange(n1 + 1), np.arange(n0 + 1),
                                             indexing="ij"))
    prob = (stats.binom.pmf(tp, n1, f1)
            * stats.binom.pmf(fn, n0, prevalence * (1 - f1) / (1 - prevalence)))

    def bounds(k, trials, tail):
        return (np.where(k == 0, 0.0, stats.beta.ppf(tail, k, trials - k + 1)),
                np.where(k == trials, 1.0, stats.beta.ppf(1 - tail, k + 1, trials - k)))

    def f1_of(r1, r0):
        return 2 * prevalence * r1 / (prevalence * r1 + prevalence + (1 - prevalence) * r0)

    covers = {}
    for suffix, tail in (("", (1 - level) / 4), ("-losci", (1 - level) / 2)):
        (r1_low, r1_high), (r0_low, r0_high) = bounds(tp, n1, tail), bounds(fn, n0, tail)
        low = f1_of(r1_low, r0_high)
        high = f1_of(r1_high, r0_low) if not suffix else 1.0
        covers[f"segments-clopper-pearson{suffix}"] = float(prob[(low <= f1) & (f1 <= high)].sum())
    return covers


@pytest.mark.parametrize("level", LEVELS)
def test_exact_coverage_at_each_level_is_that_of_an_enumeration_from_scipy(level):
    # an independent enumeration (other outcomes: (m, tp) and (tp, fn); other code: scipy's
    # binomial and beta distributions) of a few cells at each level; exact sums agree to
    # rounding
    cells = [("srs", 0.15, 0.7, 60), ("srs", 0.5, 0.3, 40), ("srs", 0.03, 0.95, 100),
             ("stratified", 0.15, 0.7, 80), ("stratified", 0.5, 0.95, 30)]
    for design, prevalence, f1, n in cells:
        grid = Grid({"design": [design], "prevalence": [prevalence], "f1": [f1], "n": [n],
                     "confidence_level": [level]}, n_replicates=2)
        result = run([EXACT_STUDY], grid=grid, rng=0, workers=1)["coverage_f1_exact"]
        expected = (_srs_coverage if design == "srs" else _segments_coverage)(
            prevalence, f1, n, level)
        for method, value in expected.items():
            (row,) = result.rows("coverage", method=method)
            assert row["value"] == pytest.approx(value, abs=1e-9), (design, prevalence, f1, n,
                                                                    method)


def test_the_exact_summary_and_findings_are_given_level_by_level():
    grid = Grid({"design": ["srs", "stratified"], "prevalence": [0.15, 0.5], "f1": [0.7],
                 "n": [50], "confidence_level": [0.9, 0.99]}, n_replicates=2)
    result = run([EXACT_STUDY], grid=grid, rng=0, workers=1)["coverage_f1_exact"]
    rows = summary_by_level(result)
    assert {(r["design"], r["confidence_level"]) for r in rows} == {
        (d, level) for d in ("srs", "stratified") for level in (0.9, 0.99)}
    sentences = findings_by_level(result, rows)
    for row in rows:
        # each row a mean over its own level's 2 cells, never over both levels
        values = [r["value"] for r in result.rows("coverage", method=row["method"])
                  if r["params"]["design"] == row["design"]
                  and r["params"]["confidence_level"] == row["confidence_level"]]
        assert row["cells"] == len(values) == 2
        assert row["mean_coverage"] == pytest.approx(np.mean(values), abs=1e-12)
        if row["method"] in ("jaccard-clopper-pearson-losci", "segments-clopper-pearson-losci"):
            label = {"srs": "Simple random sampling", "stratified": "Stratified sampling"}
            (sentence,) = [s for s in sentences if s.startswith(
                f"At {row['confidence_level'] * 100:g}%, **{label[row['design']]}**: the "
                f"guaranteed")]
            assert (f"{row['method']} {row['mean_coverage']:.3f} (exact) on average"
                    in sentence)


def test_stratified_enumeration_is_two_independent_binomials():
    cell = {"design": "stratified", "prevalence": 0.15, "f1": 0.7, "n": 40,
            "confidence_level": 0.95}
    sample = enumerate_outcomes([cell])
    counts, _ = sample.data
    n1, n0 = counts[0, 0] + counts[0, 1], counts[0, 2] + counts[0, 3]
    assert (n1, n0) == (6, 34) and sample.size == 7 * 35
    precision, omission = 0.7, 0.15 * 0.3 / (1 - 0.15 * 0.7 - 0.15 * 0.3)
    direct = stats.binom.pmf(counts[:, 0], n1, precision) * stats.binom.pmf(counts[:, 2], n0,
                                                                            omission)
    np.testing.assert_allclose(sample.probability[0], direct, rtol=1e-12, atol=1e-300)


def test_monte_carlo_coverage_agrees_with_the_exact_path_in_both_designs():
    # the same cells on both paths: MC coverage within 4 SE of the exact value, the binomial SE
    # at that value (an MCSE estimated from the sample is 0 when every replicate covers);
    # false-alarm rate 12 x P(|Z| > 4) = 8e-4 over the 12 checks
    grid = Grid({"design": ["srs", "stratified"], "prevalence": [0.1, 0.5], "f1": [0.7],
                 "n": [200], "confidence_level": [0.95], "draws": [10]}, n_replicates=4096)
    # the trinomial enumeration (tp, fp + fn, tn) is exact for the Jaccard intervals too
    names = ("delta", "logit-delta-losci", "jaccard-clopper-pearson-losci",
             "segments-clopper-pearson")
    mc = run([_only(STUDY, *names)], grid=grid, rng=11, workers=1)["coverage_f1"]
    exact = run([_only(EXACT_STUDY, *names)], grid=grid, rng=11,
                workers=1)["coverage_f1_exact"]
    truth = {(str(r["params"]), r["method"]): r["value"] for r in exact.rows("coverage")}
    rows = mc.rows("coverage")
    assert len(rows) == len(truth) == 4 * 2 + 2 + 2  # each one-design method in its 2 cells
    for row in rows:
        expected = truth[str(row["params"]), row["method"]]
        se = math.sqrt(expected * (1.0 - expected) / 4096)
        assert abs(row["value"] - expected) <= 4 * se, (row, expected)


ONE_DESIGN = {"srs": {"jaccard-clopper-pearson", "jaccard-wilson", "jaccard-jeffreys",
                      "dirichlet-posterior"},
              "stratified": {"segments-clopper-pearson"}}


@pytest.fixture(scope="module")
def both_designs():
    grid = Grid({"design": ["srs", "stratified"], "prevalence": [0.03, 0.5], "f1": [0.3, 0.95],
                 "n": [50, 200], "confidence_level": [0.95]}, n_replicates=2)
    return run([EXACT_STUDY], grid=grid, rng=0, workers=1)["coverage_f1_exact"]


@pytest.mark.parametrize("study", [STUDY, EXACT_STUDY], ids=["monte-carlo", "exact"])
def test_each_design_runs_only_the_methods_it_admits(study):
    grid = Grid({"design": ["srs", "stratified"], "prevalence": [0.15], "f1": [0.7],
                 "n": [50], "confidence_level": [0.95], "draws": [10]}, n_replicates=64)
    result = run([study], grid=grid, rng=3, workers=1)[study.name]
    for cell in result.cells:
        design = cell.params["design"]
        other = set(F1_METHODS_BY_DESIGN["stratified" if design == "srs" else "srs"]) - set(
            F1_METHODS_BY_DESIGN[design])
        expected = [m for m in study.methods if m.removesuffix("-losci") not in other]
        # not run elsewhere: neither a value (a miss would be coverage 0) nor an error
        assert list(cell.performance) == expected and not cell.errors
        assert {m.removesuffix("-losci") for m in cell.performance} >= ONE_DESIGN[design]


def test_summary_lists_each_one_design_method_under_its_design_only(both_designs):
    rows = summary_table(both_designs)
    found = {(r["design"], r["method"].removesuffix("-losci")) for r in rows}
    assert all(r["cells"] == 8 for r in rows)
    for design, other in (("srs", "stratified"), ("stratified", "srs")):
        assert {(design, m) for m in ONE_DESIGN[design]} <= found
        assert not {(other, m) for m in ONE_DESIGN[design]} & found


def test_clopper_pearson_claim_is_judged_on_both_designs(both_designs):
    claim = next(c for c in EXACT_STUDY.claims
                 if c.name == "clopper-pearson-never-below-nominal")
    verdict = evaluate_claims([claim], both_designs)[0]
    # 8 cells per design, two-sided and LOSCI: jaccard in the srs ones, segments in the others
    assert verdict.status == HOLDS and verdict.compared == 2 * 8 + 2 * 8
    # a stratified interval that under-covers breaks it there (delta under the CP name)
    broken = _only(EXACT_STUDY, "jaccard-clopper-pearson", "jaccard-clopper-pearson-losci",
                   **{"segments-clopper-pearson": EXACT_STUDY.methods["delta"],
                      "segments-clopper-pearson-losci": EXACT_STUDY.methods["delta-losci"]})
    grid = Grid({"design": ["srs", "stratified"], "prevalence": [0.03], "f1": [0.7],
                 "n": [50], "confidence_level": [0.95]}, n_replicates=2)
    found = evaluate_claims([claim], run([broken], grid=grid, rng=0, workers=1)[
        "coverage_f1_exact"])[0]
    assert found.status == FAILS and found.compared == 4
    assert set(found.failures["design"]) == {"stratified"}
    assert set(found.failures["method"]) == {"segments-clopper-pearson",
                                             "segments-clopper-pearson-losci"}


def test_clopper_pearson_intervals_never_cover_below_nominal_and_cost_width(both_designs):
    # exact: the guaranteed intervals cover at least 95% in every cell, and are wider than
    # delta's on average (the price of the guarantee)
    table = {(r["design"], r["method"]): r for r in summary_table(both_designs)}
    for design, name in (("srs", "jaccard-clopper-pearson"),
                         ("stratified", "segments-clopper-pearson")):
        for method in (name, f"{name}-losci"):
            row = table[design, method]
            assert row["min_coverage"] >= 0.95 - 1e-9 and row["share_under"] == 0
            delta = table[design, method.replace(name, "delta")]
            assert row["mean_width"] > delta["mean_width"]


def _at_level(method, level: float):
    """``method`` computed at ``level`` and presented as the cell's confidence level."""
    return lambda data, params: method(data, {**params, "confidence_level": level})


# Monte Carlo claim -> the methods broken for it: each replaced by an interval that covers less
BROKEN_FOR = {
    "clopper-pearson-nominal-on-average": {
        name: _at_level(EXACT_STUDY.methods[name], 0.85)
        for name in ("jaccard-clopper-pearson", "jaccard-clopper-pearson-losci")},
    # delta's interval in the conservative one's place: it covers about nominally
    "segments-clopper-pearson-conservative": {
        "segments-clopper-pearson": EXACT_STUDY.methods["delta"],
        "segments-clopper-pearson-losci": EXACT_STUDY.methods["delta-losci"]},
    "logit-delta-near-nominal-on-average-with-many-relevant": {
        name: _at_level(EXACT_STUDY.methods[name], 0.85)
        for name in ("logit-delta", "logit-delta-losci")},
}


@pytest.fixture(scope="module")
def many_relevant():
    # n x prevalence >= 50 in every cell, both designs, exact: the Monte Carlo claims' means
    # are exact here, so a claim holds or fails without Monte Carlo noise
    grid = Grid({"design": ["srs", "stratified"], "prevalence": [0.15, 0.5], "f1": [0.5, 0.9],
                 "n": [400], "confidence_level": [0.95]}, n_replicates=2)
    return grid, run([EXACT_STUDY], grid=grid, rng=0, workers=1)["coverage_f1_exact"]


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BROKEN_FOR))
def test_each_monte_carlo_claim_holds_exactly_and_fails_on_a_broken_method(name,
                                                                            many_relevant):
    assert {c.name for c in STUDY.claims} == set(BROKEN_FOR) | {DRAWN_CLAIM}
    claim = next(c for c in STUDY.claims if c.name == name)
    grid, good = many_relevant
    assert evaluate_claims([claim], good)[0].status == HOLDS
    broken = dataclasses.replace(EXACT_STUDY, methods={**EXACT_STUDY.methods,
                                                       **BROKEN_FOR[name]})
    found = evaluate_claims([claim], run([broken], grid=grid, rng=0, workers=1)[
        "coverage_f1_exact"])[0]
    assert found.status == FAILS and set(found.failures["method"]) <= set(BROKEN_FOR[name])


# the claim on the methods that draw (no exact counterpart): judged on their own draws
DRAWN_CLAIM = "posterior-and-bootstrap-near-nominal-with-many-relevant"


@pytest.mark.slow
def test_the_drawn_methods_claim_fails_on_an_interval_at_half_its_level():
    claim = next(c for c in STUDY.claims if c.name == DRAWN_CLAIM)
    grid = Grid({"design": ["srs"], "prevalence": [0.5], "f1": [0.7], "n": [200],
                 "confidence_level": [0.95], "draws": [100]}, n_replicates=128,
                methods=("bootstrap", "bootstrap-losci"))
    good = evaluate_claims([claim], run([STUDY], grid=grid, rng=0, workers=1)[
        "coverage_f1"])[0]
    assert good.status != FAILS and good.compared == 2
    broken = dataclasses.replace(STUDY, methods={
        **STUDY.methods, **{m: _at_level(STUDY.methods[m], 0.5) for m in grid.methods}})
    found = evaluate_claims([claim], run([broken], grid=grid, rng=0, workers=1)[
        "coverage_f1"])[0]
    assert found.status == FAILS


def test_the_findings_read_their_numbers_from_the_run(both_designs):
    rows = summary_table(both_designs)
    sentences = STUDY.findings(both_designs, rows)
    srs = next(r for r in rows if r["design"] == "srs"
               and r["method"] == "jaccard-clopper-pearson-losci")
    guaranteed = next(s for s in sentences
                      if s.startswith("**Simple random sampling**: the guaranteed"))
    assert f"jaccard-clopper-pearson-losci {srs['mean_coverage']:.3f} (exact) on average, " \
           f"{srs['min_coverage']:.3f} (exact)" in guaranteed
    # another run, other numbers: a cheaper grid's sentences differ
    grid = Grid({"design": ["srs"], "prevalence": [0.5], "f1": [0.7], "n": [50],
                 "confidence_level": [0.95]}, n_replicates=2)
    other = run([EXACT_STUDY], grid=grid, rng=0, workers=1)["coverage_f1_exact"]
    assert STUDY.findings(other, summary_table(other))[0] != sentences[0]
