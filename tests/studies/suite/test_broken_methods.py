"""A method broken on purpose turns its study's quick run to exit status 1.

Each case breaks one method of a study of the suite by the size of deviation its claims must
detect (a claim's resolution): an interval shrunk until it under-covers by about 5 points, an
estimator shifted by the bias its claim must detect, a model SE scaled by 30%. The study's quick
run through the command line (in process, ``--workers 1``, so the patched method is the one run;
the quick suite's seed) must then exit 1, naming the claim that catches the break. The same
studies' unbroken quick runs hold (`tests/studies/engine/test_claims.py`, on the same seed).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy import stats
from test_study_coverage_f1_claims import BROKEN as COVERAGE_F1_BROKEN
from test_study_coverage_f1_claims import BROKEN_LEVEL as COVERAGE_F1_LEVEL
from test_study_gain_budget_claims import BROKEN_LEVEL as GAIN_BUDGET_LEVEL

from studies.cli.main import main
from studies.engine.design import Method, Study
from studies.engine.performance import Estimates
from studies.pipeline import publication
from studies.suite import get_study
from studies.suite import stratified_vs_pooled as svp

SEED = "20190"  # the quick suite's seed (tox -e studies-quick and the quick_run fixture)
SHORTFALL = 0.05  # the coverage a broken interval loses


def _shrunk(method: Method, study: Study,
            centre: Callable[[Any, Any], Any] | None = None) -> Method:
    """The interval narrowed about its estimate to nominal minus 5 points, were it normal.

    ``centre(data, params)`` gives the estimate of a method that returns none. A bound on the
    edge of the parameter space (a one-sided interval's open side) stays.
    """
    floor, ceiling = study.parameter_space

    def broken(data: Any, params: Any) -> Estimates:
        found = method(data, params)
        level = float(params["confidence_level"])
        sides = 1 if params.get("alternative", "two-sided") != "two-sided" else 2
        factor = stats.norm.isf((1 - level + SHORTFALL) / sides) / stats.norm.isf(
            (1 - level) / sides)
        low, high = np.asarray(found.low, float), np.asarray(found.high, float)
        if centre is None and found.estimate is None:
            raise ValueError("the method returns no estimate: give its `centre`")
        middle = (np.asarray(found.estimate, float) if centre is None
                  else np.asarray(centre(data, params), float))
        return dataclasses.replace(
            found, low=np.where(low <= floor, low, middle - factor * (middle - low)),
            high=np.where(high >= ceiling, high, middle + factor * (high - middle)))

    return broken


def _shifted(method: Method, shift: Callable[[Any], float]) -> Method:
    """The estimate moved by ``shift(params)``: a bias of that size."""
    def broken(data: Any, params: Any) -> Estimates:
        found = method(data, params)
        return dataclasses.replace(found, estimate=np.asarray(found.estimate) + shift(params))
    return broken


def _scaled(method: Method, field: str, factor: float) -> Method:
    """One field of the estimates scaled (an estimate: a relative bias; an SE: a wrong model)."""
    def broken(data: Any, params: Any) -> Estimates:
        found = method(data, params)
        return dataclasses.replace(found, **{field: np.asarray(getattr(found, field)) * factor})
    return broken


def _at_level(method: Method, level: float) -> Method:
    """The interval computed at ``level`` and presented as the cell's nominal level."""
    def broken(data: Any, params: Any) -> Estimates:
        return method(data, {**params, "confidence_level": level})
    return broken


def _trec5_sd(params: Any) -> float:
    """The SD of the TREC-5 stratified estimate in the cell, exactly."""
    return math.sqrt(svp.design_variances(params)["trec5"])


# (study, method broken, how, the claim that must catch it)
CASES = [
    ("binomial_coverage", "wilson", _shrunk, "wilson-mean-near-nominal"),
    # its methods return bounds only: the estimate is the share of successes
    ("coverage_proportion", "clopper-pearson",
     lambda m, s: _shrunk(m, s, lambda data, params: np.asarray(data) / params["n"]),
     "clopper-pearson-conservative"),
    ("coverage_f1_exact", "jaccard-clopper-pearson", _shrunk,
     "clopper-pearson-never-below-nominal"),
    ("bias_f1", "plug-in", lambda m, s: _shifted(m, lambda p: 0.01), "plug-in-biased-low"),
    ("bias_sampling", "stratified", lambda m, s: _scaled(m, "estimate", 1.05),
     "srs-stratified-unbiased"),
    ("bias_sampling", "stratified", lambda m, s: _scaled(m, "se", 1.3),
     "variance-estimators-unbiased"),
    ("bias_sequential", "fresh-certification-set", lambda m, s: _shifted(m, lambda p: 0.01),
     "fresh-set-not-optimistic"),
    ("mean_bias", "mean", lambda m, s: _shifted(m, lambda p: 0.1), "mean-unbiased"),
    # the helper is leave-one-out less its target: shifting it shifts leave-one-out
    ("bias_error_rate", "loo_vs_n_minus_1", lambda m, s: _shifted(m, lambda p: 0.02),
     "loo-unbiased-for-its-target"),
    ("stratified_vs_pooled", "trec5", lambda m, s: _shifted(m, lambda p: 0.2 * _trec5_sd(p)),
     "stratified-and-srs-unbiased"),
    # levels whose mean coverage over the quick cells falls 4-5 points (exactly: the
    # break-size tests of test_study_coverage_f1_claims.py and test_study_gain_budget_claims.py)
    ("coverage_f1", COVERAGE_F1_BROKEN, lambda m, s: _at_level(m, COVERAGE_F1_LEVEL),
     "clopper-pearson-nominal-on-average"),
    ("gain_budget", "hypergeometric", lambda m, s: _at_level(m, GAIN_BUDGET_LEVEL),
     "guaranteed-intervals-cover-on-average"),
]
IDS = ["binomial_coverage", "coverage_proportion", "coverage_f1_exact", "bias_f1",
       "bias_sampling-bias", "bias_sampling-se", "bias_sequential", "mean_bias",
       "bias_error_rate", "stratified_vs_pooled", "coverage_f1", "gain_budget"]
SLOW = {  # the cases whose quick run takes 5 s or more
    "bias_error_rate", "bias_sequential", "stratified_vs_pooled", "coverage_f1", "gain_budget"}


@pytest.mark.parametrize(("name", "method", "breaks", "claim"), [
    pytest.param(*case, id=case_id, marks=pytest.mark.slow if case_id in SLOW else ())
    for case, case_id in zip(CASES, IDS, strict=True)])
def test_a_broken_method_fails_the_quick_run(name, method, breaks, claim, monkeypatch,
                                             capsys, tmp_path):
    study = get_study(name)
    monkeypatch.setitem(study.methods, method, breaks(study.methods[method], study))
    # the verdicts are what is tested: the tables and the report are not drawn
    monkeypatch.setattr(publication, "write_tables", lambda *args, **kwargs: {})
    monkeypatch.setattr(publication, "write_report", lambda *args, **kwargs: tmp_path)
    status = main(["study", "run", name, "--grid", "quick", "--seed", SEED, "--workers", "1",
                   "--out", str(tmp_path / "run")])
    out = capsys.readouterr().out
    assert status == 1, out
    assert f"FAILS {name} {claim}: {method} at " in out, out
    # and only the broken method fails (a biased estimate may break its SE's claim too): the
    # other methods' claims hold, none is inconclusive
    # (a claim comparing another method with the broken one, its reference, fails too)
    verdicts = [line for line in out.splitlines() if line.startswith(("FAILS", "INCONCLUSIVE"))]
    against = {c.name for c in study.claims if c.reference == method}
    assert all(line.startswith(f"FAILS {name} ") and (
        f": {method} at " in line or line.split()[2].rstrip(":") in against)
        for line in verdicts), out

