"""Claims and verdicts: the comparison rules, the false-alarm rate, and broken methods caught."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from estimators import proportion_ci
from studies.cli.main import main
from studies.engine import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_RUN,
    CellResult,
    Claim,
    Estimates,
    Grid,
    Measure,
    Performance,
    StudyResult,
    evaluate_claims,
    run,
)
from studies.engine.claims import _Judge
from studies.suite import SUITE_FALSE_ALARM, claim_false_alarm, get_study, study_names
from studies.suite.coverage_proportion import wrap_method

MEAN = get_study("mean_bias")
BINOMIAL = get_study("binomial_coverage")


def _result(values, mcse=0.0, n_replicates=None, method="m", measure="coverage"):
    """A study result of one cell per value (parameter ``n`` = 0, 1, ...)."""
    cells = tuple(
        CellResult("s", str(i), i, {"n": i}, "exact" if n_replicates is None else "monte-carlo",
                   {method: Performance({measure: Measure(v, mcse)}, n_replicates)}, {}, b"")
        for i, v in enumerate(values))
    return StudyResult("s", cells)


def _verdict(claim, values, **kwargs):
    return evaluate_claims([claim], _result(values, **kwargs))[0]


def test_exact_values_are_compared_up_to_the_exact_tolerance():
    at_least = Claim("c", "", ("m",), "coverage", "at_least", 0.95)
    assert _verdict(at_least, [0.95, 0.96, 0.95 - 1e-10]).status == HOLDS
    found = _verdict(at_least, [0.96, 0.93, 0.94])
    assert found.status == FAILS and found.k is None and found.detectable == 1e-9
    assert found.failures["n"].tolist() == [1, 2]  # worst first
    assert found.failures["excess"].iloc[0] == pytest.approx(0.02 - 1e-9)
    within = Claim("w", "", ("m",), "coverage", "within", 0.95, margin=0.01)
    assert _verdict(within, [0.94, 0.959]).status == HOLDS
    assert _verdict(within, [0.939, 0.95]).status == FAILS
    below = Claim("b", "", ("m",), "coverage", "at_most", 0.95, margin=-0.05)
    assert _verdict(below, [0.5, 0.9]).status == HOLDS
    assert _verdict(below, [0.5, 0.91]).status == FAILS
    assert below.condition == "coverage <= 0.95 - 0.05"
    # a measure that a helper method carries for another quantity is named for what it is
    ratio = Claim("r", "", ("ratio",), "bias", "at_most", 0.0, resolution=0.02,
                  quantity="variance ratio less 1")
    assert ratio.condition == "variance ratio less 1 <= 0.0" and ratio.label != ratio.measure


def test_an_undefined_value_breaks_a_claim_and_an_empty_region_is_not_run():
    claim = Claim("c", "", ("m",), "coverage", "at_least", 0.0)
    found = _verdict(claim, [0.5, math.nan])
    assert found.status == FAILS and found.failures["n"].tolist() == [1]
    assert _verdict(dataclasses.replace(claim, where="n > 5"), [0.5]).status == NOT_RUN
    assert _verdict(dataclasses.replace(claim, methods=("other",)), [0.5]).status == NOT_RUN


def test_monte_carlo_allowance_is_bonferroni_k_times_mcse():
    claim = Claim("c", "", ("m",), "bias", "within", 0.0, resolution=1.0, familywise_error=0.01)
    found = _verdict(claim, [0.0] * 5, mcse=0.1, n_replicates=100, measure="bias")
    k = stats.norm.isf(0.01 / (2 * 5))
    assert found.k == pytest.approx(k)
    assert found.detectable == pytest.approx(0.1 * (k + stats.norm.isf(0.05)))
    assert _verdict(claim, [0.99 * 0.1 * k, 0, 0, 0, 0], mcse=0.1, n_replicates=100,
                    measure="bias").status == HOLDS
    assert _verdict(claim, [0, 0, -1.01 * 0.1 * k, 0, 0], mcse=0.1, n_replicates=100,
                    measure="bias").status == FAILS
    one_sided = dataclasses.replace(claim, comparison="at_least")
    assert _verdict(one_sided, [0.0] * 5, mcse=0.1, n_replicates=100,
                    measure="bias").k == pytest.approx(stats.norm.isf(0.01 / 5))


def test_mean_over_a_parameter_has_the_mcse_of_a_mean():
    cells = tuple(
        CellResult("s", f"{n}-{p}", i, {"n": n, "p": p}, "monte-carlo",
                   {"m": Performance({"coverage": Measure(v, 0.01)}, 400)}, {}, b"")
        for i, (n, p, v) in enumerate([(10, 0.1, 0.90), (10, 0.5, 0.98), (20, 0.1, 0.5),
                                       (20, 0.5, 0.6)]))
    claim = Claim("c", "", ("m",), "coverage", "within", 0.95, margin=0.02, mean_over=("p",))
    found = evaluate_claims([claim], StudyResult("s", cells))[0]
    assert found.status == FAILS and found.compared == 2
    assert found.failures[["n", "value"]].to_dict("records") == [{"n": 20, "value": 0.55}]
    assert found.failures["mcse"].iloc[0] == pytest.approx(math.sqrt(2) * 0.01 / 2)


def test_a_method_that_raised_in_a_cell_breaks_the_claim_there():
    cells = list(_result([0.96, 0.97]).cells)
    cells.append(CellResult("s", "2", 2, {"n": 2}, "exact", {}, {"m": "ZeroDivisionError"}, b""))
    claim = Claim("c", "", ("m",), "coverage", "at_least", 0.95)
    found = evaluate_claims([claim], StudyResult("s", tuple(cells)))[0]
    assert found.status == FAILS and found.compared == 3
    assert found.worst() == "m at n=2: raised ZeroDivisionError"
    mean = dataclasses.replace(claim, mean_over=("n",))
    assert evaluate_claims([mean], StudyResult("s", tuple(cells)))[0].status == FAILS
    other = dataclasses.replace(claim, methods=("other",))
    assert evaluate_claims([other], StudyResult("s", tuple(cells)))[0].status == NOT_RUN


def test_a_list_valued_parameter_is_compared_as_its_text():
    cells = tuple(
        CellResult("s", str(i), i, {"sizes": sizes}, "exact",
                   {"m": Performance({"bias": Measure(v, 0.0)}, None)}, {}, b"")
        for i, (sizes, v) in enumerate([([20, 5], 0.0), ([40, 10], 0.3)]))
    claim = Claim("c", "", ("m",), "bias", "within", 0.0, where="sizes == '[20, 5]'",
                  resolution=0.01)
    found = evaluate_claims([claim], StudyResult("s", cells))[0]
    assert found.status == HOLDS and found.compared == 1
    mean = dataclasses.replace(claim, where="", mean_over=("sizes",))
    assert evaluate_claims([mean], StudyResult("s", cells))[0].compared == 1


def test_packed_groups_are_judged_as_their_cells():
    # the verdicts read packed groups piece by piece; read as cells they must be the same
    study = get_study("coverage_proportion")
    grid = Grid({"n": [5, 10, 40], "p": [0.01, 0.1, 0.3, 0.5, 0.9], "confidence_level": [0.95],
                 "alternative": ["two-sided", "greater"]}, n_replicates=2,
                methods=("clopper-pearson", "wilson", "wald"))
    result = run([study], grid=grid, rng=1, workers=1)["coverage_proportion"]
    assert result.groups and not result.cells
    claims = [*study.claims,
              Claim("wald-nominal", "", ("wald", "wilson"), "coverage", "at_least",
                    "confidence_level"),
              Claim("wilson-mean", "", ("wilson",), "coverage", "within", "confidence_level",
                    margin=0.001, mean_over=("p",))]
    packed = evaluate_claims(claims, result)
    cells = evaluate_claims(claims, result.expanded())
    assert [v.status for v in packed] == [v.status for v in cells]
    assert FAILS in [v.status for v in packed]
    for a, b in zip(packed, cells, strict=True):
        assert (a.compared, a.k, a.detectable) == (b.compared, b.k, b.detectable)
        assert a.nearest == b.nearest
        pd.testing.assert_frame_equal(a.failures, b.failures, check_dtype=False)


def _judged(claim, rows):
    """The verdict on tidy rows of cells with one parameter ``n`` (many runs, quickly)."""
    judge = _Judge(claim, ["n"])
    judge.add(rows.assign(error=""))
    return judge.verdict(1e-3)


@pytest.mark.slow
def test_false_alarm_rate_of_a_true_claim_is_at_most_its_familywise_error():
    # A claim true at its bound, seen through Monte Carlo noise of known MCSE: over 2,000
    # simulated runs of 20 values it must fail in at most 5% of runs (Bonferroni), and a
    # method 5 MCSE short must fail in almost every run. Tolerance: 4 binomial SEs of the rate.
    gen = np.random.default_rng(20261123)
    claim = Claim("c", "", ("m",), "bias", "at_least", 0.95, resolution=0.1,
                  familywise_error=0.05)
    rows = pd.DataFrame({"position": range(20), "n": range(20), "method": "m",
                         "measure": "bias", "mcse": 0.005, "n_replicates": 2000})
    def rate(shift):
        fails = 0
        for _ in range(2000):
            values = 0.95 + shift + gen.normal(0.0, 0.005, size=20)
            fails += _judged(claim, rows.assign(value=values)).status == FAILS
        return fails / 2000

    assert rate(0.0) <= 0.05 + 4 * math.sqrt(0.05 * 0.95 / 2000)
    assert rate(-5 * 0.005) >= 0.9


def test_claims_of_a_study_have_distinct_names():
    twice = (Claim("x", "", ("wald",), "bias", "within", resolution=0.01),) * 2
    with pytest.raises(ValueError, match=r"must have distinct names; got \['x'\] more"):
        dataclasses.replace(BINOMIAL, claims=twice)
    with pytest.raises(ValueError, match="`comparison` must be one of"):
        Claim("x", "", ("mean",), "bias", "equal", resolution=0.01)


@pytest.mark.parametrize("name", study_names())
def test_every_claim_judged_on_the_quick_grid_holds_with_power(quick_run, name, capsys):
    # Nothing INCONCLUSIVE on the quick suite: every claim judged there holds and could have
    # detected a deviation of its resolution; the others are NOT RUN, judged on the full grid.
    study = get_study(name)
    assert study.claims, f"{name} states no claims"
    text = (quick_run / f"{name}.claims.csv").read_text()
    table = pd.read_csv(quick_run / f"{name}.claims.csv", keep_default_na=False)
    assert table["claim"].tolist() == [c.name for c in study.claims], text
    judged = [not c.grids or "quick" in c.grids for c in study.claims]
    assert (table.loc[judged, "status"] == HOLDS).all(), text
    assert (table.loc[judged, "detectable"].astype(float)
            <= table.loc[judged, "resolution"].astype(float)).all(), text
    assert (table.loc[judged, "compared"] > 0).all()
    skipped = table.loc[[not j for j in judged]]
    assert (skipped["status"] == NOT_RUN).all(), text
    assert (skipped["reason"] == "judged on the full grid only").all(), text


@pytest.mark.parametrize("name", study_names())
def test_every_verdict_sentence_says_what_it_was_judged_with(quick_run, name):
    # the Findings sentence of each claim judged on the quick grid gives the value beyond
    # which it would have failed and the deviation it detects, or that it was judged exactly
    page = (quick_run / f"{name}.md").read_text()
    for claim in get_study(name).claims:
        if claim.grids and "quick" not in claim.grids:
            continue
        (line,) = [t for t in page.splitlines() if t.startswith(f"- {claim.name} HOLDS:")]
        assert ("Judged on exact values" in line or (
            "MCSE allowed" in line and "there would have failed it" in line
            and "is detected with probability 0.95" in line)), line


def test_study_check_rejudges_a_stored_run(quick_run, capsys):
    assert main(["study", "check", str(quick_run)]) == 0
    out = capsys.readouterr().out
    claims = len(get_study("coverage_proportion").claims)
    assert f"coverage_proportion: claims: {claims} hold, 0 inconclusive, 0 fail, 0 not run" in out


def _shrunk_t(samples, params):
    """The t interval with its half-width shrunk by 10%: a deliberately broken method."""
    est = MEAN.methods["mean"](samples, params)
    half = 0.9 * (est.high - est.low) / 2
    return Estimates(estimate=est.estimate, se=est.se, low=est.estimate - half,
                     high=est.estimate + half)


def _shrunk_level(successes, trials, *, confidence_level, alternative):
    """Clopper-Pearson at a level 5 points lower: a deliberately broken method."""
    return proportion_ci(successes, trials, method="clopper-pearson", alternative=alternative,
                         confidence_level=confidence_level - 0.05)


BROKEN_MEAN = dataclasses.replace(MEAN, methods={**MEAN.methods, "mean": _shrunk_t})


def test_shrinking_the_t_interval_by_10_percent_fails_its_claim(tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    grid = Grid({"distribution": ["normal"], "n": [20, 100]}, n_replicates=4000)
    for study, expected in ((MEAN, HOLDS), (BROKEN_MEAN, FAILS)):
        result = run([study], grid=grid, rng=3, workers=1)["mean_bias"]
        verdicts = {v.claim.name: v for v in evaluate_claims(study.claims, result)}
        assert verdicts["t-interval-nominal-for-normal-data"].status == expected
        assert verdicts["mean-unbiased"].status == HOLDS
    out = tmp_path / "run"
    assert main(["study", "run", "test_claims:BROKEN_MEAN", "--workers", "1",
                 "--seed", "3", "--out", str(out)]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("FAILS")]
    assert len(lines) == 1 and lines[0].startswith(
        "FAILS mean_bias t-interval-nominal-for-normal-data: mean at distribution=normal")
    assert main(["study", "check", str(out)]) == 1  # the stored values are still short


def test_a_clopper_pearson_at_a_lower_level_fails_the_conservative_claim():
    study = get_study("coverage_proportion")
    broken = dataclasses.replace(study, methods={
        **study.methods, "clopper-pearson": wrap_method(_shrunk_level)})
    grid = Grid({"n": [10, 50], "p": [0.1, 0.3, 0.5], "confidence_level": [0.95],
                 "alternative": ["two-sided"]}, n_replicates=2,
                methods=("clopper-pearson", "wilson", "jeffreys", "wald"))
    for candidate, expected in ((study, HOLDS), (broken, FAILS)):
        result = run([candidate], grid=grid, rng=1, workers=1)["coverage_proportion"]
        verdict = evaluate_claims(candidate.claims, result)[0]
        assert verdict.claim.name == "clopper-pearson-conservative"
        assert verdict.status == expected
    assert "clopper-pearson at n=" in verdict.worst()


def _share_rows(cells, replicates):
    return pd.DataFrame({"position": range(cells), "n": range(cells), "method": "m",
                         "measure": "coverage", "n_replicates": replicates})


def _false_alarm_rate(claim, truth, cells, replicates, seed, runs=2000):
    """The share of ``runs`` simulated runs of binomial coverage at ``truth`` failing ``claim``."""
    gen = np.random.default_rng(seed)
    rows = _share_rows(cells, replicates)
    fails = 0
    for _ in range(runs):
        share = gen.binomial(replicates, truth, size=cells) / replicates
        mcse = np.sqrt(share * (1 - share) / replicates)
        fails += _judged(claim, rows.assign(value=share, mcse=mcse)).status == FAILS
    return fails / runs


@pytest.mark.slow
def test_a_share_near_one_is_judged_with_the_se_at_the_bound():
    # Coverage estimated from R = 1024 replicates when the truth is exactly at the bound 0.97:
    # the SE at the estimate shrinks near 1 and would fail a true claim far more often than
    # stated; the SE at the bound keeps the rate near 5% (4 binomial SEs of the rate).
    claim = Claim("c", "", ("m",), "coverage", "at_most", 0.97, familywise_error=0.05)
    rate = _false_alarm_rate(claim, 0.97, cells=8, replicates=1024, seed=7)
    assert rate <= 0.05 + 4 * math.sqrt(0.05 * 0.95 / 2000)
    one = _judged(claim, _share_rows(8, 1024).assign(value=1.0, mcse=0.0))  # a share of 1
    assert one.k is not None and one.status == FAILS  # judged as Monte Carlo, not exact


@pytest.mark.slow
def test_a_within_claim_on_a_share_takes_the_se_at_its_far_edge():
    # coverage within 0.04 of 0.95 when the truth sits on the edge 0.91 (R = 1000): the SE at
    # the edge nearer 0.5 keeps the false-alarm rate at the stated 5% (4 binomial SEs of it)
    claim = Claim("c", "", ("m",), "coverage", "within", 0.95, margin=0.04,
                  familywise_error=0.05)
    rate = _false_alarm_rate(claim, 0.91, cells=10, replicates=1000, seed=3)
    assert rate <= 0.05 + 4 * math.sqrt(0.05 * 0.95 / 2000)


def test_a_monte_carlo_value_without_an_se_gets_no_allowance():
    # a method reporting SE 0 has model_se_error -1 with an undefined MCSE: it must break the
    # claim, alone and inside a mean
    cells = tuple(
        CellResult("s", str(i), i, {"n": i}, "monte-carlo",
                   {"m": Performance({"model_se_error": Measure(v, e)}, 1000)}, {}, b"")
        for i, (v, e) in enumerate([(-1.0, math.nan), (0.0, 0.01)]))
    claim = Claim("c", "", ("m",), "model_se_error", "within", 0.0)
    found = evaluate_claims([claim], StudyResult("s", cells))[0]
    assert found.status == FAILS and found.failures["n"].tolist() == [0]
    mean = evaluate_claims([dataclasses.replace(claim, mean_over=("n",))],
                           StudyResult("s", cells))[0]
    assert mean.status == FAILS and math.isnan(mean.failures["mcse"].iloc[0])


def test_claims_name_parameters_of_every_grid_and_parameters_keep_clear_of_column_names():
    typo = Claim("c", "", ("wald",), "coverage", "within", 0.95, mean_over=("pp",))
    with pytest.raises(ValueError, match=r"must name parameters of the binomial_coverage quick "
                                         r"grid \(n, p, confidence_level\); got \['pp'\]"):
        dataclasses.replace(BINOMIAL, claims=(typo,))
    with pytest.raises(ValueError, match="`mean_over` of claim 'c' must be a tuple"):
        Claim("c", "", ("wald",), "coverage", "within", 0.95, mean_over="p")
    clash = Grid({"n": [10], "target": [1]}, n_replicates=2)
    with pytest.raises(ValueError, match=r"must not be named .*; got \['target'\]"):
        dataclasses.replace(BINOMIAL, grids={**BINOMIAL.grids, "quick": clash})


def test_a_share_among_tests_made_takes_its_se_from_the_tests_not_the_replicates():
    # 1,000 replicates; 100 tests made in cell 0, passing 0.90 of them, and 900 in cell 1,
    # passing 0.889. Against "at least 0.93" at 5e-4 per value (1e-3 over 2): the misses of
    # 100 tests may reach Binomial(100, 0.07)'s critical 17, and 10 do not fail; those of 900
    # may reach 90, and 100 fail. A cell without a test (tested 0) has no pass rate and is
    # not compared.
    def cell(i, tested, passed):
        share = passed / tested if tested else math.nan
        measures = {"tested": Measure(tested / 1000, math.sqrt(tested * (1000 - tested))
                                      / 1000 ** 1.5),
                    "conditional_rejection": Measure(
                        share, math.sqrt(share * (1 - share) / tested) if tested else math.nan)}
        return CellResult("s", str(i), i, {"n": i}, "monte-carlo",
                          {"m": Performance(measures, 1000)}, {}, b"")

    claim = Claim("c", "", ("m",), "conditional_rejection", "at_least", 0.93)
    found = evaluate_claims([claim], StudyResult("s", (cell(0, 100, 90), cell(1, 900, 800),
                                                       cell(2, 0, 0))))[0]
    assert found.compared == 2 and found.k == pytest.approx(stats.norm.isf(1e-3 / 2))
    assert found.status == FAILS and found.failures["n"].tolist() == [1]
    critical = stats.binom.isf(1e-3 / 2, 900, 0.07)
    assert critical == 90
    assert found.failures["allowance"].iloc[0] == pytest.approx(critical / 900 - 0.07)


def test_a_mean_saving_among_tests_made_skips_cells_without_a_test():
    # Two cells open the box in some runs and save 0.40 (MCSE 0.02) and 0.35 (0.03); a third
    # never opens, so its saving among the tests made is undefined and not compared. Against
    # "at least 0.3" the mean over the cells is 0.375 and holds; a cell that opened without a
    # saving (nan) still breaks it.
    def cell(i, tested, saving, mcse):
        measures = {"tested": Measure(tested, 0.01),
                    "conditional_saving": Measure(saving, mcse)}
        return CellResult("s", str(i), i, {"n": i}, "monte-carlo",
                          {"m": Performance(measures, 100)}, {}, b"")

    claim = Claim("c", "", ("m",), "conditional_saving", "at_least", 0.3, mean_over=("n",),
                  resolution=0.2)
    cells = (cell(0, 0.5, 0.40, 0.02), cell(1, 0.8, 0.35, 0.03), cell(2, 0.0, math.nan, math.nan))
    found = evaluate_claims([claim], StudyResult("s", cells))[0]
    assert found.status == HOLDS
    broken = (*cells[:2], cell(2, 0.1, math.nan, math.nan))
    assert evaluate_claims([claim], StudyResult("s", broken))[0].status == FAILS


@pytest.mark.parametrize("comparison,margin,value,expected", [
    # value >= 0.95 - margin
    ("at_least", 0.02, 0.94, HOLDS), ("at_least", -0.02, 0.94, FAILS),
    ("at_least", -0.02, 0.97, HOLDS), ("at_least", 0.01, 0.94, HOLDS),  # at the bound
    ("at_least", 0.0, 0.94, FAILS), ("at_least", -0.0, 0.94, FAILS),
    ("at_least", -0.0, 0.95, HOLDS),
    # value <= 0.95 + margin
    ("at_most", 0.02, 0.96, HOLDS), ("at_most", -0.02, 0.96, FAILS),
    ("at_most", -0.02, 0.93, HOLDS), ("at_most", 0.01, 0.96, HOLDS),  # at the bound
    ("at_most", 0.0, 0.96, FAILS), ("at_most", -0.0, 0.96, FAILS),
    ("at_most", -0.0, 0.95, HOLDS),
    # |value - 0.95| <= margin: a negative margin can never hold
    ("within", 0.02, 0.94, HOLDS), ("within", -0.02, 0.94, FAILS),
    ("within", 0.02, 0.96, HOLDS), ("within", -0.02, 0.96, FAILS),
    ("within", 0.01, 0.94, HOLDS), ("within", -0.02, 0.95, FAILS),  # at the bound; at target
    ("within", 0.0, 0.94, FAILS), ("within", -0.0, 0.94, FAILS),
    ("within", -0.0, 0.95, HOLDS),
])
def test_the_sign_of_a_nonzero_margin_decides_an_exact_claim(comparison, margin, value,
                                                             expected):
    # Exact values (MCSE 0): the verdict is value against 0.95 and the margin, up to 1e-9.
    claim = Claim("c", "", ("m",), "coverage", comparison, 0.95, margin=margin)
    assert _verdict(claim, [value]).status == expected


def _share_claim(comparison="at_least", bound=0.95, **kwargs):
    return Claim("c", "", ("m",), "coverage", comparison, bound, familywise_error=0.01, **kwargs)


def _break_probability(claim, truth, replicates):
    """P(the claim breaks on one cell of ``replicates``) at a true share ``truth``: the binomial
    pmf summed over the counts whose verdict is FAILS (every count judged once)."""
    counts = np.arange(replicates + 1)
    rows = _share_rows(replicates + 1, replicates).assign(value=counts / replicates, mcse=0.0)
    broken = set()
    for i in counts:  # one cell at a time: k is that of a single value
        verdict = _judged(claim, rows.iloc[[i]])
        if verdict.status == FAILS:
            broken.add(int(i))
    return float(stats.binom.pmf(sorted(broken), replicates, truth).sum())


@pytest.mark.slow
@pytest.mark.parametrize("comparison,bound,replicates", [
    ("at_least", 0.95, 400), ("at_most", 0.88, 150), ("at_most", 0.0, 60),
    ("at_least", 1.0, 60), ("within", 0.5, 200)])
def test_a_share_is_broken_with_probability_095_at_its_detectable_deviation(
        comparison, bound, replicates):
    # Exact: at bound -/+ detectable the binomial count breaks the claim with probability
    # >= 0.95; a tenth closer to the bound, with less. At a bound of 0 or 1 too (where the
    # SE at the bound is 0 and a normal approximation would say 0).
    claim = _share_claim(comparison, bound, margin=0.03 if comparison == "within" else 0.0)
    one = _judged(claim, _share_rows(1, replicates).assign(value=bound, mcse=0.0))
    d = one.detectable
    assert 0 < d < 0.5
    far = bound + 0.03 + d if comparison == "within" else (
        bound - d if comparison == "at_least" else bound + d)
    near = bound + 0.03 + 0.9 * d if comparison == "within" else (
        bound - 0.9 * d if comparison == "at_least" else bound + 0.9 * d)
    assert _break_probability(claim, far, replicates) >= 0.95 - 1e-9
    assert _break_probability(claim, near, replicates) < 0.95


def test_a_claim_without_the_power_to_fail_is_inconclusive_and_says_what_would_decide_it():
    # Coverage 0.97 in 5 cells of R replicates against "at least 0.95" (resolution 0.02): at
    # R = 100 nothing breaks it, but a 2-point shortfall would go unseen; with the replicates
    # the reason names it holds.
    claim = _share_claim()
    rows = _share_rows(5, 100).assign(value=0.97, mcse=0.0)
    weak = _judged(claim, rows)
    assert weak.status == INCONCLUSIVE and weak.failures.empty
    assert weak.detectable > claim.resolution and weak.scale > 1
    assert "times the replicates would decide it" in weak.reason
    enough = math.ceil(weak.scale * 100)
    strong = _judged(claim, _share_rows(5, enough).assign(value=0.97, mcse=0.0))
    assert strong.status == HOLDS and strong.detectable <= claim.resolution
    assert strong.scale == 1.0 and strong.reason == ""
    # fewer replicates than the scale says stay inconclusive
    assert _judged(claim, _share_rows(5, enough // 2).assign(
        value=0.97, mcse=0.0)).status == INCONCLUSIVE


def test_an_effect_holds_only_where_the_estimates_show_it():
    # "at least 5 points below 0.93" (an effect), R = 20,000 (decisive at 0.01): 0.87 holds,
    # 0.881 is on the wrong side within the allowance (INCONCLUSIVE), 0.90 is decisively
    # beyond (FAILS). The same values against the bound "at most 0.88" hold at 0.881.
    effect = _share_claim("at_most", 0.93, margin=-0.05)
    assert effect.effect
    rows = _share_rows(1, 20_000)
    assert _judged(effect, rows.assign(value=0.87, mcse=0.0)).status == HOLDS
    wrong = _judged(effect, rows.assign(value=0.881, mcse=0.0))
    assert wrong.status == INCONCLUSIVE and wrong.wrong_side == 1
    assert "wrong side" in wrong.reason
    assert _judged(effect, rows.assign(value=0.90, mcse=0.0)).status == FAILS
    bound = _share_claim("at_most", 0.88)
    assert not bound.effect
    assert _judged(bound, rows.assign(value=0.881, mcse=0.0)).status == HOLDS


def test_exact_values_are_judged_exactly_whatever_the_resolution():
    # an exact value has no Monte Carlo allowance: beyond the rounding tolerance it fails, and
    # an exact claim never lacks power (its detectable deviation is the tolerance)
    claim = _share_claim(resolution=0.001)
    assert _verdict(claim, [0.95 - 2e-9]).status == FAILS
    held = _verdict(claim, [0.95 - 5e-10])
    assert held.status == HOLDS and held.detectable == claim.exact_tolerance


def test_a_claim_judged_on_other_grids_is_not_run_with_its_reason():
    claim = _share_claim(grids=("full",))
    result = _result([0.97], n_replicates=100)
    skipped = evaluate_claims([claim], result, grid="quick")[0]
    assert skipped.status == NOT_RUN and skipped.reason == "judged on the full grid only"
    assert evaluate_claims([claim], result, grid="full")[0].status == INCONCLUSIVE
    with pytest.raises(ValueError, match=r"`grids` of claim 'd' must name grids of study"):
        dataclasses.replace(MEAN, claims=(claim, dataclasses.replace(claim, name="d",
                                                                     grids=("huge",))))


def test_a_claim_states_its_resolution_where_its_measure_has_no_default():
    with pytest.raises(ValueError, match="`resolution` of claim 'b' must be given for measure"):
        Claim("b", "", ("m",), "bias", "within")
    with pytest.raises(ValueError, match="must be finite and above its exact tolerance"):
        Claim("b", "", ("m",), "bias", "within", resolution=1e-12)
    with pytest.raises(ValueError, match="`effect` of claim 'b' must be False"):
        Claim("b", "", ("m",), "coverage", "within", effect=True)
    assert Claim("c", "", ("m",), "coverage", "at_least").resolution == 0.02


def test_the_suite_splits_its_false_alarm_budget_over_its_claims_but_identities():
    claims = [c for name in study_names() for c in get_study(name).claims]
    identities = sum(c.identity for c in claims)
    assert identities >= 1
    assert claim_false_alarm() == pytest.approx(SUITE_FALSE_ALARM / (len(claims) - identities))
    claim = _share_claim()
    claim = dataclasses.replace(claim, familywise_error=None)
    found = evaluate_claims([claim], _result([0.97] * 4, n_replicates=5000),
                            familywise_error=claim_false_alarm())[0]
    assert found.familywise_error == claim_false_alarm()
    assert found.k == pytest.approx(stats.norm.isf(claim_false_alarm() / 4))


def test_a_resolution_in_units_of_the_empirical_se_is_judged_cell_by_cell():
    # Bias claims on estimands of any scale: "detect a bias of a fifth of the estimator's SE".
    # With R replicates the bias's MCSE is S / sqrt(R), so the detectable bias in SE units is
    # (k + 1.645) / sqrt(R) in every cell, whatever S: 600 replicates cannot reach 0.2, 1,600
    # can.
    def result(replicates, scale):
        cells = tuple(
            CellResult("s", str(i), i, {"n": i}, "monte-carlo", {"m": Performance(
                {"bias": Measure(0.0, s / math.sqrt(replicates)),
                 "empirical_se": Measure(s, 0.0)}, replicates)}, {}, b"")
            for i, s in enumerate(scale))
        return StudyResult("s", cells)

    claim = Claim("c", "", ("m",), "bias", "within", 0.0, resolution=0.2,
                  resolution_unit="empirical_se", familywise_error=0.001)
    k = stats.norm.isf(0.001 / (2 * 3))
    for replicates, status in ((600, INCONCLUSIVE), (1600, HOLDS)):
        found = evaluate_claims([claim], result(replicates, [1.0, 300.0, 5e4]))[0]
        assert found.status == status
        assert found.detectable == pytest.approx((k + stats.norm.isf(0.05))
                                                 / math.sqrt(replicates))
    assert "x empirical_se" in evaluate_claims([claim], result(600, [1.0]))[0].reason
    with pytest.raises(ValueError, match="`resolution_unit` of claim 'c' must be empty"):
        dataclasses.replace(claim, measure="coverage")


def test_a_monte_carlo_value_without_an_se_within_its_bound_cannot_hold():
    # a mean over topics where one topic had a single replicate has no MCSE: lying within its
    # bound by a hair must not count as a decided HOLDS
    cells = tuple(
        CellResult("s", str(i), i, {"topic": i}, "monte-carlo",
                   {"m": Performance({"mean_saving": Measure(v, e)}, 20)}, {}, b"")
        for i, (v, e) in enumerate([(0.1003, math.nan), (0.30, 0.01)]))
    claim = Claim("c", "", ("m",), "mean_saving", "at_least", 0.1)
    found = evaluate_claims([claim], StudyResult("s", cells))[0]
    assert found.status == INCONCLUSIVE and found.detectable == math.inf
    assert found.reason.startswith("1 of 2 Monte Carlo values have no MCSE")
    mean = evaluate_claims([dataclasses.replace(claim, mean_over=("topic",))],
                           StudyResult("s", cells))[0]
    assert mean.status == INCONCLUSIVE and "1 of 1 Monte Carlo values have no MCSE" in \
        mean.reason


@pytest.mark.parametrize("errors", [
    pd.Series([None] * 6, dtype=object), pd.Series([np.nan] * 6),
    pd.Series([np.nan] * 6, dtype="str"), pd.Series([None, "boom", None, None, "a", None]),
    pd.Series(["b", "a", "c", None, "a", "z"], dtype="str"),
])
def test_sums_of_a_claim_are_pandas_aggregation_whether_or_not_a_method_raised(errors):
    from studies.engine.claims import _SUMS, _summed

    rows = pd.DataFrame({"method": list("aabbab"), "n": [1, 2, 1, 2, 1, 1],
                         "error": errors.to_numpy(), "n_replicates": [np.nan] * 6,
                         **{k: np.arange(6.0) for k in _SUMS if k not in ("error",
                                                                          "n_replicates")}})
    rows["error"] = rows["error"].astype(errors.dtype)
    plain = rows.groupby(["method", "n"], sort=False, dropna=False).agg(_SUMS)
    pd.testing.assert_frame_equal(_summed(rows, ["method", "n"]), plain)
    indexed = plain.assign(error=rows["error"].iloc[:len(plain)].to_numpy())
    pd.testing.assert_frame_equal(
        _summed(indexed, [0, 1]),
        indexed.groupby(level=[0, 1], sort=False, dropna=False).agg(_SUMS))
    pd.testing.assert_frame_equal(_summed(rows.iloc[:0], ["method", "n"]), plain.iloc[:0])


def _paired(values, reference, mcse=0.0, n_replicates=None, measure="width"):
    """Cells ``n`` = 0, 1, ... holding method ``m`` and a reference method ``r``."""
    kind = "exact" if n_replicates is None else "monte-carlo"
    cells = tuple(
        CellResult("s", str(i), i, {"n": i}, kind,
                   {"m": Performance({measure: Measure(v, mcse)}, n_replicates),
                    "r": Performance({measure: Measure(w, mcse)}, n_replicates)}, {}, b"")
        for i, (v, w) in enumerate(zip(values, reference, strict=True)))
    return StudyResult("s", cells)


def test_a_claim_against_a_reference_method_compares_the_difference_in_each_cell():
    claim = Claim("same", "", ("m",), "width", "within", 0.0, resolution=0.01, reference="r")
    assert claim.condition == "|(width - r's) - 0.0| <= 0"
    agree = evaluate_claims([claim], _paired([0.3, 0.5, 0.7], [0.3, 0.5, 0.7]))[0]
    assert agree.status == HOLDS and agree.compared == 3
    # the values alone would hold any claim on them; their difference breaks it in one cell
    found = evaluate_claims([claim], _paired([0.3, 0.5, 0.7], [0.3, 0.49, 0.7]))[0]
    assert found.status == FAILS and found.failures["n"].tolist() == [1]
    assert found.failures["value"].iloc[0] == pytest.approx(0.01)
    wider = Claim("at-most", "", ("m",), "width", "at_most", 0.05, resolution=0.01,
                  reference="r")
    assert evaluate_claims([wider], _paired([0.3, 0.55], [0.3, 0.49]))[0].status == FAILS
    assert evaluate_claims([wider], _paired([0.3, 0.54], [0.3, 0.49]))[0].status == HOLDS
    with pytest.raises(ValueError, match="`reference` of claim 'x' must be"):
        Claim("x", "", ("m",), "width", "within", 0.0, resolution=0.01, reference="m")


def test_a_reference_claim_on_monte_carlo_values_takes_the_sum_of_the_two_mcses():
    # a share's difference is a measure of estimates: allowance k x (MCSE + MCSE), not binomial
    claim = Claim("c", "", ("m",), "coverage", "within", 0.0, margin=0.0, resolution=0.1,
                  reference="r", familywise_error=0.01)
    k = stats.norm.isf(0.01 / 2)
    holds = evaluate_claims([claim], _paired([0.95 + 0.019 * k], [0.95], mcse=0.01,
                                             n_replicates=400, measure="coverage"))[0]
    assert holds.status == HOLDS and holds.k == pytest.approx(k)
    assert holds.detectable == pytest.approx(0.02 * (k + stats.norm.isf(0.05)))
    fails = evaluate_claims([claim], _paired([0.95 + 0.021 * k], [0.95], mcse=0.01,
                                             n_replicates=400, measure="coverage"))[0]
    assert fails.status == FAILS


def test_a_reference_that_raised_or_is_missing_in_a_cell():
    cells = list(_paired([0.3, 0.5], [0.3, 0.5]).cells)
    cells.append(CellResult("s", "2", 2, {"n": 2}, "exact",
                            {"m": Performance({"width": Measure(0.4, 0.0)}, None)},
                            {"r": "ZeroDivisionError"}, b""))
    claim = Claim("c", "", ("m",), "width", "within", 0.0, resolution=0.01, reference="r")
    found = evaluate_claims([claim], StudyResult("s", tuple(cells)))[0]
    assert found.status == FAILS and found.worst() == "r at n=2: raised ZeroDivisionError"
    absent = dataclasses.replace(claim, reference="q")
    assert evaluate_claims([absent], StudyResult("s", tuple(cells)))[0].status == NOT_RUN


def test_reference_claims_on_packed_groups_are_judged_as_their_cells():
    study = get_study("coverage_proportion")
    grid = Grid({"n": [5, 10, 40], "p": [0.01, 0.1, 0.3, 0.5, 0.9], "confidence_level": [0.95],
                 "alternative": ["two-sided", "greater"]}, n_replicates=2,
                methods=("clopper-pearson", "wilson", "wilson-cc", "scipy:exact"))
    result = run([study], grid=grid, rng=1, workers=1)["coverage_proportion"]
    assert result.groups and not result.cells
    claims = [Claim("peer", "", ("scipy:exact",), "width", "within", 0.0, resolution=1e-3,
                    reference="clopper-pearson"),
              Claim("cc-wider", "", ("wilson-cc",), "width", "at_most", 0.0, resolution=1e-3,
                    reference="wilson"),
              Claim("cc-mean", "", ("wilson-cc",), "coverage", "at_least", 0.0,
                    mean_over=("p",), reference="wilson")]
    packed = evaluate_claims(claims, result)
    cells = evaluate_claims(claims, result.expanded())
    assert [v.status for v in packed] == [v.status for v in cells] == [HOLDS, FAILS, HOLDS]
    for a, b in zip(packed, cells, strict=True):
        assert (a.compared, a.k, a.detectable) == (b.compared, b.k, b.detectable)
        assert a.nearest == b.nearest
        pd.testing.assert_frame_equal(a.failures, b.failures, check_dtype=False)


def test_a_relative_claim_compares_the_ratio_less_one_with_the_delta_method_mcse():
    claim = Claim("at-most-half-again", "", ("m",), "width", "at_most", 0.5, resolution=0.1,
                  reference="r", relative=True)
    assert claim.condition == "(width / r's - 1) <= 0.5"
    assert evaluate_claims([claim], _paired([1.4, 3.0, 0.0], [1.0, 2.0, 0.0]))[0].status \
        == HOLDS
    found = evaluate_claims([claim], _paired([1.6, 3.0, 0.2], [1.0, 2.0, 0.0]))[0]
    assert found.status == FAILS and found.failures["n"].tolist() == [2, 0]  # inf first
    noisy = Claim("c", "", ("m",), "width", "at_most", 0.5, resolution=1.0, reference="r",
                  relative=True, familywise_error=0.01)
    k = stats.norm.isf(0.01)
    se = (0.1 + 1.5 * 0.1) / 2.0  # (se_a + |a / b| se_b) / |b| at a = 3, b = 2
    assert evaluate_claims([noisy], _paired([3.0 + 1.99 * se * k], [2.0], mcse=0.1,
                                            n_replicates=100))[0].status != FAILS
    assert evaluate_claims([noisy], _paired([3.0 + 2.4 * se * k], [2.0], mcse=0.1,
                                            n_replicates=100))[0].status == FAILS
    with pytest.raises(ValueError, match="`relative` of claim 'x' needs a `reference`"):
        Claim("x", "", ("m",), "width", "at_most", 0.5, resolution=0.1, relative=True)


def test_an_identity_is_judged_exactly_on_monte_carlo_values():
    # a value that is the same in every replicate by construction: no allowance, no power
    claim = Claim("c", "", ("m",), "bias", "within", 0.0, resolution=0.05, identity=True)
    assert _verdict(claim, [0.0, 0.0], mcse=0.0, n_replicates=3, measure="bias").status \
        == HOLDS
    found = _verdict(claim, [0.0, -0.3], mcse=0.4, n_replicates=3, measure="bias")
    assert found.status == FAILS and found.k is None
    plain = dataclasses.replace(claim, identity=False)
    assert _verdict(plain, [0.0, -0.3], mcse=0.4, n_replicates=3,
                    measure="bias").status == INCONCLUSIVE


def test_infinite_values_that_agree_with_their_reference_differ_by_nothing():
    claim = Claim("same", "", ("m",), "bias", "within", 0.0, resolution=0.01, reference="r")
    found = evaluate_claims([claim], _paired([math.inf, 0.5], [math.inf, 0.5], mcse=math.nan,
                                             n_replicates=10, measure="bias"))[0]
    assert found.status != FAILS and not found.failures.size
    assert evaluate_claims([claim], _paired([math.inf], [0.5], measure="bias"))[0].status \
        == FAILS
