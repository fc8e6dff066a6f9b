"""Findings of the stratified_vs_pooled study (seed 004, TREC-5), pinned."""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
import pandas as pd
import pytest

from estimators import StratifiedEstimate
from studies.engine import FAILS, HOLDS, StudyResult, evaluate_claims, run
from studies.engine.assertions import assert_coverage, assert_measure
from studies.engine.design import Grid, Study
from studies.engine.findings import estimate, versus_paper
from studies.engine.performance import Estimates
from studies.suite import stratified_vs_pooled as svp

STUDY = svp.STUDY
NAME = STUDY.name
RARE = {"relevant": 40, "submitted": 1000, "separation": 2.0, "run": 3,
        "confidence_level": 0.95}
COMMON = {**RARE, "relevant": 300}
CELLS = Grid({"relevant": [40, 300], "submitted": [1000], "separation": [2.0], "run": [3],
              "confidence_level": [0.95]}, n_replicates=2_000)


def _only(*names: str, **extra) -> Study:
    """The study with only the methods ``names`` (and ``extra`` ones): a cheaper run."""
    return dataclasses.replace(STUDY, methods={**{k: STUDY.methods[k] for k in names},
                                               **extra})


@pytest.fixture(scope="module")
def two_cells():
    methods = ("pooled", "srs", "trec5", "proportional", "neyman", "jeffreys",
               "mover-wilson", "gap-neyman-proportional", "gap-proportional-srs",
               "ratio-neyman-proportional")
    # 9,000 replicates: the coverage claim's mean of one cell pair detects 2 points (2,000 do not)
    return run([_only(*methods)], grid=dataclasses.replace(CELLS, n_replicates=9_000), rng=11,
               workers=1)[NAME]


@pytest.fixture(scope="module")
def evaluation():
    return svp.evaluate(0)


# ------------------------------------------------------------------------- data and methods


def test_generate_is_deterministic_and_consistent():
    first = svp.generate(RARE, 500, rng=np.random.default_rng(3)).data
    second = svp.generate(RARE, 500, rng=np.random.default_rng(3)).data
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    config = svp.configuration(RARE)
    assert np.all(first.trec5 <= config.allocations["trec5"])
    assert np.all(first.trec5 <= config.relevant)
    assert np.all(first.unpooled <= first.trec5)
    assert np.all(first.unpooled <= config.relevant - config.covered)
    assert config.allocations["trec5"].sum() == svp.BUDGET


def test_interval_methods_are_the_package_intervals_per_replicate():
    sample = svp.generate(RARE, 40, rng=np.random.default_rng(4))
    config = svp.configuration(RARE)
    mask = svp.MEMBER[:, 2]
    for method in ("jeffreys", "mover-wilson", "korn-graubard"):
        found = STUDY.methods[method](sample.data, RARE)
        for i in range(0, 40, 7):
            ci = (StratifiedEstimate(config.sizes[mask], config.allocations["trec5"][mask],
                                     sample.data.trec5[i, mask])
                  .utility(u_a=3, u_b=-1).confidence_interval(0.95, method=method))
            assert (found.low[i], found.high[i]) == pytest.approx((ci.low, ci.high), abs=1e-6)


def test_a_set_judged_in_full_is_estimated_exactly_with_a_point_interval():
    full = {**RARE, "relevant": 300, "submitted": 250, "run": 1}
    config = svp.configuration(full)
    mask = svp.MEMBER[:, 0] & (config.sizes > 0)
    assert np.array_equal(config.allocations["trec5"][mask], config.sizes[mask])
    data = svp.generate(full, 50, rng=np.random.default_rng(5)).data
    for name in ("trec5", "jeffreys", "mover-wilson", "korn-graubard"):
        found = STUDY.methods[name](data, full)
        assert np.all(found.low == svp.truth(full)) and np.all(found.high == svp.truth(full))


def test_categorise_follows_table_2():
    # the interval is 10 +- 3.92: 6.08 to 13.92
    pooled = np.array([6.0, 6.1, 10.0, 13.9, 14.0, 5.0])
    estimate = np.full(6, 10.0)
    se = np.array([2.0, 2.0, 2.0, 2.0, 2.0, 0.0])
    assert svp.categorise(pooled, estimate, se).tolist() == [0, 1, 2, 3, 4, 0]


def test_the_normal_interval_is_the_papers():
    data = svp.generate(RARE, 200, rng=np.random.default_rng(6)).data
    found = STUDY.methods["trec5"](data, RARE)
    np.testing.assert_allclose(found.high - found.low, 2 * 1.959964 * found.se, atol=1e-5)
    np.testing.assert_allclose((found.high + found.low) / 2, found.estimate, atol=1e-6)


@pytest.mark.parametrize("relevant", [40, 300, 2000])
def test_exact_variances_order_neyman_proportional_srs_for_the_union(relevant):
    # run 3's set is the union of the nested sets: the population the allocations target
    variances = svp.design_variances({**RARE, "relevant": relevant})
    # Neyman 5-18% below proportional in these cells, proportional 4-13% below SRS
    assert variances["neyman"] < 0.97 * variances["proportional"]
    assert variances["proportional"] < 0.97 * variances["srs-proportional"]


def test_the_variance_orderings_hold_on_average_and_fail_where_the_claims_say():
    # Every full-grid cell, exactly: the cells where each ordering fails (the findings count
    # them), and the run means the claims judge (the ratio helpers carry the same ratios).
    cells = pd.DataFrame(STUDY.grids["full"].cells())
    ratios = pd.DataFrame([{
        "neyman": svp.variance_ratio("neyman", "proportional", c),
        "proportional": svp.variance_ratio("proportional", "srs-proportional", c)}
        for c in STUDY.grids["full"].cells()])
    assert ((ratios["neyman"] > 1 + 1e-9).sum(), (ratios["proportional"] > 1 + 1e-9).sum()) \
        == (24, 53)
    means = ratios.groupby(cells["run"]).mean()
    assert (means["neyman"] <= 0.9).all() and (means["proportional"] <= 1 + 1e-9).all()
    helper = STUDY.methods["ratio-neyman-proportional"](svp.generate(RARE, 3, rng=1).data, RARE)
    np.testing.assert_allclose(helper.estimate - svp.truth(RARE),
                               svp.variance_ratio("neyman", "proportional", RARE) - 1.0)


# ---------------------------------------------------------------- Monte Carlo, fixed seeds


def test_pooled_is_never_above_the_truth_and_biased_low(two_cells):
    for row in two_cells.rows("rejection", method="pooled"):
        assert row["value"] == 0.0
    assert all(row["value"] + 3 * row["mcse"] < 0 for row in two_cells.rows("bias",
                                                                             method="pooled"))


def test_stratified_and_srs_are_unbiased(two_cells):
    for method in ("trec5", "proportional", "neyman", "srs"):
        assert_measure(two_cells, "bias", 0.0, method=method)


def test_variance_estimators_are_unbiased(two_cells):
    # eq. 30 and 35: sqrt(E[v]) equals the empirical SE (Morris et al.'s model SE)
    for method in ("trec5", "proportional", "neyman", "srs"):
        assert_measure(two_cells, "model_se_error", 0.0, method=method)


def test_empirical_se_matches_the_exact_design_variance(two_cells):
    for cell in two_cells.cells:
        exact = svp.design_variances(cell.params)
        for method, design in (("trec5", "trec5"), ("neyman", "neyman"), ("srs", "srs-trec5")):
            measure = cell.performance[method].measures["empirical_se"]
            assert abs(measure.value - math.sqrt(exact[design])) <= 4 * measure.mcse, method


def test_the_normal_interval_undercovers_where_relevant_documents_are_rare(two_cells):
    (row,) = [r for r in two_cells.rows("coverage", method="trec5")
              if r["params"]["relevant"] == 40]
    assert row["value"] + 4 * row["mcse"] < 0.90  # 0.65 (MCSE 0.011) in the pinned run
    # Jeffreys repairs most of it: within 2 points of nominal in both cells (0.940, MCSE
    # 0.0025, at relevant = 40 with 9,000 replicates: not all of it); MOVER-Wilson most of it
    assert_coverage(two_cells, 0.93, method="jeffreys", alternative="greater")
    assert_coverage(two_cells, 0.90, method="mover-wilson", alternative="greater")
    with pytest.raises(AssertionError, match=r"trec5 at \{'relevant': 40"):
        assert_coverage(two_cells, 0.95, method="trec5", alternative="greater")


def test_claims_that_hold_in_these_cells(two_cells):
    verdicts = evaluate_claims(STUDY.claims, two_cells)
    status = {v.claim.name: v.status for v in verdicts}
    for name in ("pooled-never-above-truth", "stratified-and-srs-unbiased",
                 "normal-interval-undercovers-when-rare"):
        assert status[name] == HOLDS, name


@pytest.mark.slow
def test_the_findings_read_their_numbers_from_the_run(two_cells):
    sentences = STUDY.findings(two_cells, svp.summary_table(two_cells))
    # Table 2's total of equal pairs: the mean of the evaluations beside the paper's 1155
    equal = [svp.table2(f).loc["equal", ("count", "total")] for f in svp._evaluations()]
    assert versus_paper(np.mean(equal), np.std(equal, ddof=1) / math.sqrt(len(equal)), 1155,
                        digits=1) in sentences[0]
    # the variance orderings, counted from the cells' exact variances
    above = sum(svp.variance_ratio("neyman", "proportional", c.params) > 1 + 1e-6
                for c in two_cells.cells)
    (variance,) = [s for s in sentences if s.startswith("Neyman allocation's")]
    assert f"above 1 in {above} of 2 cells" in variance
    (rare,) = [r for r in two_cells.rows("coverage", method="jeffreys")
               if r["params"]["relevant"] == 40]
    (coverage,) = [s for s in sentences if s.startswith("Where relevant documents are rare")]
    assert f"jeffreys {estimate(rare['value'], rare['mcse'])}" in coverage
    # another run's numbers, another sentence: without the rare cell, no coverage sentence
    common = StudyResult(NAME, tuple(c for c in two_cells.cells if c.params["relevant"] == 300))
    assert not any(s.startswith("Where relevant documents are rare")
                   for s in STUDY.findings(common, svp.summary_table(common)))


# ------------------------------------------------ deliberately broken methods must fail


def _unweighted(data, params):
    """``sum a_h / sum n_h``, ignoring the strata's weights N_h / N: biased."""
    config = svp.configuration(params)
    mask = svp.MEMBER[:, int(params["run"]) - 1]
    size = config.sizes[mask].sum()
    share = data.trec5[:, mask].sum(axis=1) / config.allocations["trec5"][mask].sum()
    return Estimates(estimate=(4 * share - 1) * size)


def _narrow(data, params):
    """The paper's interval with its SE shrunk by 0.6: under-covers everywhere."""
    found = STUDY.methods["trec5"](data, params)
    return Estimates(low=found.estimate - 0.6 * svp.Z95 * found.se,
                     high=found.estimate + 0.6 * svp.Z95 * found.se)


def _optimistic_pool(data, params):
    """The pooled estimate plus the unjudged relevant documents the sample implies: can
    exceed the truth."""
    stratified = STUDY.methods["trec5"](data, params).estimate
    estimate = np.maximum(STUDY.methods["pooled"](data, params).estimate, stratified)
    return Estimates(estimate=estimate, reject=estimate > svp.truth(params))


# claims Neyman's MSE is at least proportional's: false where Neyman allocation helps
_swapped = functools.partial(svp._gap, ("stratified", "proportional"), ("stratified", "neyman"))


def test_broken_methods_fail_the_matching_assertions():
    broken = _only("trec5", "pooled", unweighted=_unweighted, narrow=_narrow,
                   optimistic=_optimistic_pool, swapped=_swapped)
    grid = dataclasses.replace(CELLS, n_replicates=4_000)  # cheap methods only
    result = run([broken], grid=grid, rng=12, workers=1)[NAME]
    assert_measure(result, "bias", 0.0, method="trec5")
    with pytest.raises(AssertionError, match="2 of 2 bias checks failed"):
        assert_measure(result, "bias", 0.0, method="unweighted")
    with pytest.raises(AssertionError, match="coverage checks failed"):
        assert_coverage(result, 0.95, method="narrow", alternative="greater")
    claims = [dataclasses.replace(c, methods=(new,)) for c, new in (
        (STUDY.claims[0], "optimistic"), (STUDY.claims[2], "swapped"))]
    assert [v.status for v in evaluate_claims(claims, result)] == [FAILS, FAILS]


def _wide_wald(data, params):
    """The paper's interval with its SE widened by a fifth (a quantile for the wrong tail)."""
    found = STUDY.methods["trec5"](data, params)
    return Estimates(low=found.estimate - 1.2 * svp.Z95 * found.se,
                     high=found.estimate + 1.2 * svp.Z95 * found.se)


def _half_sample_ratio(data, params):
    """`_srs_mse_ratio` of an SRS estimate that uses half the sample: twice the variance."""
    found = svp._srs_mse_ratio(data, params)
    true = svp.truth(params)
    return Estimates(estimate=true + 2.0 * (found.estimate - true + 1.0) - 1.0)


def _pool_one_short(data, params):
    """`_pooled_plus_unjudged` of a pooled estimate that also drops one judged relevant
    document."""
    found = svp._pooled_plus_unjudged(data, params)
    u_a, u_b = svp.UTILITY[int(params["run"])]
    return Estimates(estimate=found.estimate - (u_a - u_b))


def test_the_wald_srs_and_pooled_pins_hold_and_fail_when_broken():
    names = ("wald-within-5-points-where-relevant-are-many",
             "wald-is-the-papers-interval-cut-to-the-possible",
             "srs-mse-is-the-design-variance", "pooled-loses-only-the-unjudged-relevant")
    claims = [c for c in STUDY.claims if c.name in names]
    # 9,000 replicates: the Wald claim's one cell detects 2 points of coverage (4,000 do not)
    grid = dataclasses.replace(CELLS, n_replicates=9_000)
    result = run([_only("trec5", "wald", "srs-mse-ratio", "pooled-plus-unjudged")], grid=grid,
                 rng=12, workers=1)[NAME]
    assert [v.status for v in evaluate_claims(claims, result)] == [HOLDS] * 4
    broken = _only("trec5", wald=_wide_wald, **{"srs-mse-ratio": _half_sample_ratio,
                                                 "pooled-plus-unjudged": _pool_one_short})
    result = run([broken], grid=grid, rng=12, workers=1)[NAME]
    assert [v.status for v in evaluate_claims(claims[1:], result)] == [FAILS] * 3
    narrow = run([_only("trec5", wald=_narrow)], grid=grid, rng=12, workers=1)[NAME]
    assert evaluate_claims(claims[:1], narrow)[0].status == FAILS


# ------------------------------------------------------------ the simulated evaluation


def test_the_evaluation_is_deterministic_and_the_pool_a_lower_bound(evaluation):
    again = svp.evaluate(0)
    pd.testing.assert_frame_equal(evaluation, again)
    assert len(evaluation) == 49 * 10 * 3
    assert (evaluation["pooled"] <= evaluation["truth"]).all()
    assert (evaluation["pooled_relevant"] <= evaluation["relevant_in_set"]).all()


def test_table2_counts_every_pair_and_equal_means_degenerate(evaluation):
    table = svp.table2(evaluation)
    assert table["count"].sum().tolist() == [490, 490, 490, 1470]
    assert (table.loc["equal", "degenerate"] <= table.loc["equal", "count"]).all()
    # inside the interval and not equal to the estimate: never a zero-width interval
    assert table.loc[["inside-below", "inside-above"], "degenerate"].to_numpy().sum() == 0


def test_calibration_reaches_the_papers_all_runs_medians(evaluation):
    table = svp.calibration_table([evaluation])
    assert 5 <= table.loc["all", "submitted_ours"] <= 20  # paper 10
    assert 1 <= table.loc["all", "relevant_in_set_ours"] <= 4  # paper 2
    assert 25 <= table.loc["all", "relevant_in_pool_ours"] <= 70  # paper 42
    assert 0.70 <= table.loc["all", "equal_share_ours"] <= 0.85  # paper 0.786


def test_rank_table_gives_tied_systems_their_mean_rank():
    rows = [{"topic": t, "system": s, "run": r, "pooled": u, "stratified": u, "truth": u}
            for t, utilities in ((1, [5.0, 0.0, 0.0]), (2, [1.0, 2.0, 3.0]))
            for s, u in enumerate(utilities, start=1) for r in svp.RUNS]
    table = svp.rank_table(pd.DataFrame(rows))
    # topic 1: system 1 first, 2 and 3 tied (2.5 each); topic 2: systems 3, 2, 1
    assert table[(1, "pooled")].sort_index().tolist() == [2.0, 2.25, 1.75]
    assert table.index.tolist() == [3, 1, 2]  # sorted by mean rank
    agreement = svp.rank_agreement(table)
    assert (agreement["spearman"] == 1.0).all() and not agreement["top_changes"].any()


def test_papers_table1_orderings_agree_closely():
    agreement = svp.rank_agreement(svp.PAPER_TABLE1)
    assert agreement["spearman"].round(3).tolist() == [0.988, 0.979, 0.997]
    assert not agreement["top_changes"].any()


def test_rank_agreement_of_a_simulated_evaluation(evaluation):
    agreement = svp.rank_agreement(svp.rank_table(evaluation), evaluation)
    assert len(agreement) == 9
    assert (agreement["spearman"] > 0.8).all()
    assert agreement["topic_top_changes"].between(0, 1).all()


def test_the_evaluation_is_pinned(evaluation):
    # the simulator's stream and every computation after it: Table 2 of evaluation 0 and sums
    table = svp.table2(evaluation)
    assert table["count"].to_numpy().tolist() == [
        [16, 26, 31, 73], [31, 46, 63, 140], [417, 368, 320, 1105], [12, 33, 49, 94],
        [14, 17, 27, 58]]
    assert table["degenerate"].to_numpy()[:, 3].tolist() == [8, 0, 1104, 0, 45]
    assert (evaluation["pooled_relevant"].sum(), evaluation["relevant_in_pool"].sum()) \
        == (40955, 176610)
    assert evaluation["stratified"].sum() == pytest.approx(-152045.740291, abs=1e-6)
    assert evaluation["se"].sum() == pytest.approx(18752.308172740777, rel=1e-12)


def _sizes_rows(rng, rows):
    """Stratum sizes as the evaluation meets them: stratum 000 empty, many strata empty or
    tiny, some sets under 100 documents, some of thousands."""
    scale = rng.choice([3, 30, 300, 3000], size=(rows, 1))
    sizes = rng.integers(0, scale, size=(rows, 8)) * (rng.random((rows, 8)) < 0.6)
    sizes[:, 0] = 0
    sizes[:5] = [[0] * 8, [0, 1, 0, 0, 0, 0, 0, 0], [0, 2, 1, 0, 0, 0, 0, 97],
                 [0, 1000, 10, 200, 0, 0, 0, 40], [0, 34, 33, 33, 0, 0, 0, 0]]
    return sizes


def test_vectorised_allocations_are_allocate_row_by_row():
    sizes = _sizes_rows(np.random.default_rng(7), 3_000)
    found = svp._trec5_allocations(sizes)
    expected = np.array([svp._allocation(row) for row in sizes])
    np.testing.assert_array_equal(found, expected)
    assert found[3].tolist() == [0, 30, 10, 30, 0, 0, 0, 30]  # Lewis (1996), Figure 2


def test_vectorised_utility_estimates_are_stratified_proportion_row_by_row():
    rng = np.random.default_rng(8)
    sizes = _sizes_rows(rng, 2_000)
    sampled = svp._trec5_allocations(sizes)
    relevant = rng.binomial(sizes, rng.random((sizes.shape[0], 1)))
    positives = rng.hypergeometric(relevant, sizes - relevant, sampled)
    for run_ in svp.RUNS:
        estimate, se = svp._utility_estimates(sizes, sampled, positives, run_)
        expected = np.array([svp._utility_estimate(*row, run_)
                             for row in zip(sizes, sampled, positives, strict=True)])
        np.testing.assert_array_equal(estimate, expected[:, 0])  # to the last bit
        np.testing.assert_array_equal(se, expected[:, 1])


def test_top_is_a_stable_sorts_first_documents_ties_included():
    scores = np.array([[3.0, 1.0, 2.0, 2.0, 5.0, 2.0, 0.0], [1.0, 1.0, 1.0, 4.0, 1.0, 0.0, 1.0]])
    for depth in range(8):
        stable = np.argsort(-scores, axis=1, kind="stable")[:, :depth]
        expected = np.zeros(scores.shape, dtype=bool)
        np.put_along_axis(expected, stable, True, axis=1)
        np.testing.assert_array_equal(svp._top(scores, depth), expected)
    assert svp._leading(scores[0], (1, 3, 4)).nonzero()[1].tolist() == [4, 0, 2, 4, 0, 2, 3, 4]


def test_judged_takes_each_groups_lowest_keys_equal_keys_in_order():
    rng = np.random.default_rng(9)
    groups = rng.integers(0, 24, 400)
    keys = rng.integers(0, 40, 400) / 40.0  # many equal keys
    sampled = rng.integers(0, 12, (3, 8))
    found = svp._judged(groups, keys, sampled)
    for group in range(24):
        members = np.flatnonzero(groups == group)
        first = members[np.argsort(keys[members], kind="stable")][:sampled.flat[group]]
        assert set(np.flatnonzero(found & (groups == group))) == set(first)


# ---------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(("call", "message"), [
    (functools.partial(svp.simulate_topic, -1, np.random.default_rng(0)),
     "`relevant` must be a non-negative integer; got -1."),
    (functools.partial(svp.evaluate, 1.5), "`seed` must be a non-negative integer; got 1.5."),
    (functools.partial(svp.configuration, {**RARE, "run": 4}),
     "`run` must be 1, 2 or 3; got 4."),
    (functools.partial(svp.configuration, {**RARE, "submitted": -5}),
     "`submitted` must be a non-negative integer; got -5."),
    (functools.partial(svp.configuration, {**RARE, "separation": math.nan}),
     "`separation` must be a finite number; got nan."),
])
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace(".", r"\.")):
        call()
