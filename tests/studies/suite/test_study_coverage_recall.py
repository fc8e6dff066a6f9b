"""The exact recall coverage study (`studies.suite.coverage_recall`)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats

import estimators.recall
from studies.engine import FAILS, HOLDS, Grid, evaluate_claims, run
from studies.suite import get_study
from studies.suite.coverage_recall import population

STUDY = get_study("coverage_recall")
SRS_CELL = {"design": "srs", "prevalence": 0.2, "recall": 0.8, "precision": 0.9,
            "population": 2000, "n": 40, "confidence_level": 0.95}
STRATIFIED_CELL = {**SRS_CELL, "design": "stratified", "n": 60}


def _study_coverage(cell, methods):
    grid = Grid({k: [v] for k, v in cell.items()}, n_replicates=2, methods=methods)
    result = run([STUDY], grid=grid, rng=1, workers=1)["coverage_recall"]
    frame = result.to_frame()
    found = frame[frame["measure"] == "coverage"].set_index("method")["value"]
    return {m: float(found[m]) for m in methods}


def _clopper_pearson(x, trials, tail):
    """Both ends at ``tail`` each, from scipy.stats' Beta quantiles (0 and 1 at the edges)."""
    low = np.where(x == 0, 0.0, stats.beta.ppf(tail, x, trials - x + 1))
    high = np.where(x == trials, 1.0, stats.beta.ppf(1 - tail, x + 1, trials - x))
    return low, high


def test_srs_coverage_is_an_enumeration_of_the_relevant_documents_drawn():
    # sum over m relevant in the sample (binomial) and tp among them (binomial); no relevant
    # document: no interval, a miss
    level, rho, n = 0.95, SRS_CELL["recall"], SRS_CELL["n"]
    z = stats.norm.isf((1 - level) / 2)
    expected = {"clopper-pearson": 0.0, "wilson": 0.0}
    for m in range(1, n + 1):
        tp = np.arange(m + 1)
        chance = stats.binom.pmf(m, n, SRS_CELL["prevalence"]) * stats.binom.pmf(tp, m, rho)
        low, high = _clopper_pearson(tp, m, (1 - level) / 2)
        expected["clopper-pearson"] += chance @ ((low <= rho) & (rho <= high))
        p = tp / m
        centre = (p + z * z / (2 * m)) / (1 + z * z / m)
        half = z * np.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / (1 + z * z / m)
        expected["wilson"] += chance @ ((centre - half <= rho) & (rho <= centre + half))
    found = _study_coverage(SRS_CELL, ("clopper-pearson", "wilson"))
    for method, value in expected.items():
        assert found[method] == pytest.approx(value, abs=1e-9), method


def test_stratified_coverage_is_an_enumeration_of_both_segments():
    # each segment hypergeometric in its finite population; segments-clopper-pearson takes
    # each segment's bounds at a / 4 a side, recall at the box's corners; delta is
    # r +- z sqrt(Var) with Var propagated from the two binomial variances
    pop = population(STRATIFIED_CELL)
    level = STRATIFIED_CELL["confidence_level"]
    relevant0 = pop.relevant - pop.retrieved_relevant
    q = pop.retrieved / (pop.retrieved + pop.unretrieved)
    truth = pop.retrieved_relevant / pop.relevant
    x1 = np.arange(pop.n1 + 1)[:, None]
    x0 = np.arange(pop.n0 + 1)[None, :]
    chance = (stats.hypergeom.pmf(x1, pop.retrieved, pop.retrieved_relevant, pop.n1)
              * stats.hypergeom.pmf(x0, pop.unretrieved, relevant0, pop.n0))
    r1_low, r1_high = _clopper_pearson(x1, pop.n1, (1 - level) / 4)
    r0_low, r0_high = _clopper_pearson(x0, pop.n0, (1 - level) / 4)

    def recall(r1, r0):
        with np.errstate(invalid="ignore", divide="ignore"):
            return q * r1 / (q * r1 + (1 - q) * r0)

    low = recall(r1_low, r0_high)
    low = np.where(np.isnan(low), np.where(r1_high > 0, 1.0, 0.0), low)
    high = recall(r1_high, r0_low)
    high = np.where(np.isnan(high), np.where(r0_high > 0, 0.0, 1.0), high)
    segments = float((chance * ((low <= truth) & (truth <= high))).sum())
    r1, r0 = x1 / pop.n1, x0 / pop.n0
    estimate = recall(r1, r0)
    with np.errstate(invalid="ignore", divide="ignore"):
        d2 = (q * r1 + (1 - q) * r0) ** 2
        variance = ((q * (1 - q) * r0 / d2) ** 2 * r1 * (1 - r1) / pop.n1
                    + (q * (1 - q) * r1 / d2) ** 2 * r0 * (1 - r0) / pop.n0)
    half = stats.norm.isf((1 - level) / 2) * np.sqrt(variance)
    covers = (np.clip(estimate - half, 0, 1) <= truth) & (truth <= np.clip(estimate + half, 0, 1))
    delta = float((chance * np.where(np.isnan(estimate), False, covers)).sum())
    found = _study_coverage(STRATIFIED_CELL, ("segments-clopper-pearson", "delta"))
    assert found["segments-clopper-pearson"] == pytest.approx(segments, abs=1e-9)
    assert found["delta"] == pytest.approx(delta, abs=1e-9)


def _stratified_verdicts(monkeypatch=None):
    quick = STUDY.grids["quick"]
    grid = dataclasses.replace(quick, parameters={**quick.parameters, "design": ["stratified"]})
    result = run([STUDY], grid=grid, rng=1, workers=1)["coverage_recall"]
    return {v.claim.name: v.status for v in evaluate_claims(STUDY.claims, result, grid="quick")}


def test_the_stratified_claims_hold_and_fail_with_broken_methods(monkeypatch):
    right = _stratified_verdicts()
    for name in ("segments-never-below-nominal", "segments-bonferroni-price-at-90-percent",
                 "delta-near-nominal-with-many-relevant-unretrieved",
                 "segments-hypergeometric-no-wider-than-clopper-pearson"):
        assert right[name] == HOLDS, name
    # the delta interval's two-sided z taken at the one-sided tail: too narrow
    quantile = estimators.recall.upper_normal_quantile
    with monkeypatch.context() as patched:
        patched.setattr(estimators.recall, "upper_normal_quantile",
                        lambda tail: quantile(np.minimum(2 * tail, 0.5)))
        assert _stratified_verdicts()["delta-near-nominal-with-many-relevant-unretrieved"] \
            == FAILS
    # each segment taken at the full level: the Bonferroni split dropped
    with monkeypatch.context() as patched:
        patched.setattr(estimators.recall, "_segment_level", lambda level, alternative: level)
        assert _stratified_verdicts()["segments-bonferroni-price-at-90-percent"] == FAILS


def test_a_cell_that_describes_no_population_is_refused():
    with pytest.raises(ValueError, match="must describe a population"):
        population({**STRATIFIED_CELL, "recall": 1.0})
