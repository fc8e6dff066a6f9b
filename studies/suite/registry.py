"""The registry of studies: name -> module, imported only when used.

A study is also accepted by import path ``package.module:ATTRIBUTE`` (a `Study` object), so a
project can run its own studies through the engine without registering them here.
"""

from __future__ import annotations

from studies.engine.design import Study
from studies.engine.loading import load_study

__all__ = ["STUDY_MODULES", "get_study", "study_names"]

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
