"""The breaks coverage_f1's claims must catch.

The size of the break that coverage_f1's quick grid must catch, an interval 5 points short:
`tests/studies/suite/test_broken_methods.py` runs the quick suite with this interval and sees it
exit 1; the unbroken quick suite's verdicts are checked by
``tests/studies/engine/test_claims.py::test_every_claim_judged_on_the_quick_grid_holds_with_power``.
And the claims coverage_f1_exact judges at 90% and 99%: each holds on exact values and fails on a
method broken for it, at the level it is about.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pytest

from studies.engine import FAILS, HOLDS, evaluate_claims, run
from studies.engine.design import Grid, Method, Study
from studies.suite import coverage_f1
from studies.suite.coverage_f1_exact import STUDY as EXACT_STUDY

# The recommended SRS certification interval computed at this level and presented as 95%:
# over the quick grid's cells its mean coverage falls by at most 5 points
# (`test_the_break_is_a_shortfall_of_at_most_5_points`, exactly).
BROKEN = "jaccard-clopper-pearson-losci"
BROKEN_LEVEL = 0.87


def test_the_break_is_a_shortfall_of_at_most_5_points():
    # the quick grid's simple-random-sampling cells, every test sample enumerated
    quick = coverage_f1.STUDY.grids["quick"].parameters
    grid = Grid({**{k: v for k, v in quick.items() if k != "draws"}, "design": ["srs"]},
                n_replicates=2)
    exact = EXACT_STUDY.methods[BROKEN]
    study = dataclasses.replace(
        EXACT_STUDY, methods={"nominal": exact,
                              "broken": lambda data, params: exact(
                                  data, {**params, "confidence_level": BROKEN_LEVEL})},
        claims=(), figures=(), summary=None, findings=None)
    result = run([study], grid=grid, rng=0, workers=1)[EXACT_STUDY.name]
    mean = {m: np.mean([r["value"] for r in result.rows("coverage", method=m)])
            for m in ("nominal", "broken")}
    assert 0.04 < mean["nominal"] - mean["broken"] <= 0.05


def _computed_at(method: Method, level_of: Callable[[float], float]) -> Method:
    """``method`` computed at ``level_of(level)`` and presented as the cell's level."""
    def broken(data, params):
        return method(data, {**params,
                             "confidence_level": level_of(float(params["confidence_level"]))})
    return broken


def _alpha_doubled(level: float) -> float:
    """Each tail at the miss rate ``a`` instead of ``a / 2``: the level ``1 - 2 a``."""
    return 2 * level - 1


def _alpha_halved(level: float) -> float:
    """A bound at the tail ``a / 2`` instead of ``a``: the level ``1 - a / 2``."""
    return (1 + level) / 2


def _level_ignored(level: float) -> float:
    """The default 95% whatever the level asked."""
    return 0.95


_METHODS = EXACT_STUDY.methods
_SEGMENTS = ("segments-clopper-pearson", "segments-hypergeometric")
_JACCARD_CP = ("jaccard-clopper-pearson", "jaccard-clopper-pearson-losci")

# coverage_f1_exact's claim at 90% or 99% -> the methods broken for it
BROKEN_AT_A_LEVEL = {
    "logit-delta-at-most-2.5-points-short-at-90-percent": {
        m: _computed_at(_METHODS[m], _alpha_doubled) for m in ("logit-delta",
                                                               "logit-delta-losci")},
    "jaccard-clopper-pearson-not-needlessly-conservative-at-90-percent": {
        m: _computed_at(_METHODS[m], _alpha_halved) for m in _JACCARD_CP},
    "jaccard-clopper-pearson-not-needlessly-conservative-at-99-percent": {
        m: _computed_at(_METHODS[m], _alpha_halved) for m in _JACCARD_CP},
    "delta-losci-misses-at-most-1.3-times-nominal-at-90-percent": {
        "delta-losci": _computed_at(_METHODS["delta-losci"], _alpha_doubled)},
    # a delta LOSCI that follows F1's skew (the logit scale's) shows no tail shortfall
    "delta-losci-misses-at-least-1.5-times-nominal-at-99-percent": {
        "delta-losci": _METHODS["logit-delta-losci"]},
    "logit-delta-losci-nominal-on-average-at-99-percent": {
        "logit-delta-losci": _computed_at(_METHODS["logit-delta-losci"], _level_ignored)},
    "segments-bonferroni-bound-covers-at-least-97.5-percent-at-90-percent": {
        m: _computed_at(_METHODS[m], _alpha_doubled) for m in _SEGMENTS},
    "segments-bonferroni-bound-covers-at-least-99.8-percent-at-99-percent": {
        m: _computed_at(_METHODS[m], _level_ignored) for m in _SEGMENTS},
}

# Both designs at each level: a rare class (the Jaccard bounds' most conservative cells), and
# at least 50 relevant documents expected at n = 200 and prevalence 0.5.
LEVELS_GRID = Grid({"design": ["srs", "stratified"], "prevalence": [0.03, 0.15, 0.5],
                    "f1": [0.3, 0.7, 0.95], "n": [50, 200],
                    "confidence_level": [0.9, 0.95, 0.99]}, n_replicates=2)


def _claim(name: str):
    return next(c for c in EXACT_STUDY.claims if c.name == name)


def _run_claim(name: str, methods: dict[str, Method]):
    """The claim's verdict on `LEVELS_GRID` with its methods only, ``methods`` replacing some."""
    claim = _claim(name)
    study: Study = dataclasses.replace(EXACT_STUDY, methods={
        m: methods.get(m, _METHODS[m]) for m in claim.methods})
    return evaluate_claims([claim], run([study], grid=LEVELS_GRID, rng=0, workers=1)[
        EXACT_STUDY.name])[0]


@pytest.fixture(scope="module")
def levels_run():
    return run([EXACT_STUDY], grid=LEVELS_GRID, rng=0, workers=1)[EXACT_STUDY.name]


def test_every_claim_of_one_other_level_has_its_break():
    at_one_level = {c.name for c in EXACT_STUDY.claims
                    if c.where.endswith(("confidence_level == 0.9", "confidence_level == 0.99"))}
    assert at_one_level == set(BROKEN_AT_A_LEVEL)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BROKEN_AT_A_LEVEL))
def test_each_claim_at_90_or_99_percent_holds_and_fails_on_its_break(name, levels_run):
    assert evaluate_claims([_claim(name)], levels_run)[0].status == HOLDS
    found = _run_claim(name, BROKEN_AT_A_LEVEL[name])
    assert found.status == FAILS
    assert set(found.failures["method"]) <= set(BROKEN_AT_A_LEVEL[name])


def _broken_at(level: float, method: Method, broken: Method) -> Method:
    """``broken`` in the cells at ``level``, ``method`` in the others."""
    def either(data, params):
        return (broken if float(params["confidence_level"]) == level else method)(data, params)
    return either


@pytest.mark.slow
@pytest.mark.parametrize("level", [0.9, 0.99])
@pytest.mark.parametrize("name", ["clopper-pearson-never-below-nominal",
                                  "segments-hypergeometric-never-below-nominal"])
def test_the_guaranteed_intervals_are_judged_at_each_level(name, level, levels_run):
    # each guaranteed interval replaced by the delta interval of its side in the cells of one
    # level only: the claim fails there, and only there
    claim = _claim(name)
    assert evaluate_claims([claim], levels_run)[0].status == HOLDS
    found = _run_claim(name, {m: _broken_at(level, _METHODS[m], _METHODS[
        "delta-losci" if m.endswith("-losci") else "delta"]) for m in claim.methods})
    assert found.status == FAILS and set(found.failures["confidence_level"]) == {level}


@pytest.mark.slow
def test_a_clopper_pearson_bound_at_95_percent_whatever_the_level_fails_at_99():
    # the level ignored: too wide at 90%, which no claim of validity sees; too narrow at 99%
    found = _run_claim("clopper-pearson-never-below-nominal", {
        m: _computed_at(_METHODS[m], _level_ignored) for m in _JACCARD_CP})
    assert found.status == FAILS and set(found.failures["confidence_level"]) == {0.99}
    assert set(found.failures["method"]) <= set(_JACCARD_CP)
