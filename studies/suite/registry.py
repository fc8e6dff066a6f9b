"""The registry of studies: name -> module, imported only when used.

A study is also accepted by import path ``package.module:ATTRIBUTE`` (a `Study` object), so a
project can run its own studies through the engine without registering them here.
"""

from __future__ import annotations

import functools

from studies.engine.design import Study
from studies.engine.loading import load_study

__all__ = ["STUDY_MODULES", "SUITE_FALSE_ALARM", "claim_false_alarm", "get_study", "study_names"]

# The probability that a run of the registered suite shows a FAILS verdict on Monte Carlo noise
# alone when every claim is true, split equally over the suite's claims.
SUITE_FALSE_ALARM = 0.01

# Registered studies: name -> the module defining it as STUDY. Keep sorted.
STUDY_MODULES: dict[str, str] = {
    "bias_error_rate": "studies.suite.bias_error_rate",
    "bias_f1": "studies.suite.bias_f1",
    "bias_sampling": "studies.suite.bias_sampling",
    "bias_sequential": "studies.suite.bias_sequential",
    "binomial_coverage": "studies.suite.binomial_coverage",
    "coverage_f1": "studies.suite.coverage_f1",
    "coverage_f1_exact": "studies.suite.coverage_f1_exact",
    "coverage_proportion": "studies.suite.coverage_proportion",
    "gain_budget": "studies.suite.gain_budget",
    "mean_bias": "studies.suite.mean_bias",
    "power_calibration": "studies.suite.power_calibration",
    "power_calibration_exact": "studies.suite.power_calibration_exact",
    "stopping_policies": "studies.suite.stopping_policies",
    "stratified_vs_pooled": "studies.suite.stratified_vs_pooled",
}


def study_names() -> tuple[str, ...]:
    """Names of the registered studies."""
    return tuple(sorted(STUDY_MODULES))


def get_study(name: str) -> Study:
    """The study registered as ``name`` (or at import path ``module:ATTRIBUTE``).

    Raises
    ------
    ValueError
        If the name is unknown (the message lists the registered ones).
    """
    if ":" in name:
        return load_study(name)
    if name not in STUDY_MODULES:
        raise ValueError(
            f"`study` must be one of {', '.join(study_names())}; got {name!r}.")
    return load_study(f"{STUDY_MODULES[name]}:STUDY")


@functools.cache
def claim_false_alarm() -> float:
    """Each claim's share of the suite's false-alarm budget: ``SUITE_FALSE_ALARM`` over the
    number of claims of the registered studies (Bonferroni), the rate `evaluate_claims`
    judges a claim at when it states none."""
    count = sum(len(get_study(name).claims) for name in STUDY_MODULES)
    return SUITE_FALSE_ALARM / max(count, 1)
