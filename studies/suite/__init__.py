"""The study suite: one module per study, each declaring its ADEMP as a `Study`.

Studies are registered by name in `registry` and imported only when used:

``coverage_proportion``, ``coverage_f1``, ``coverage_f1_exact``
    coverage and width of the binomial and F1 confidence intervals;
``bias_f1``, ``bias_sampling``, ``bias_sequential``, ``bias_error_rate``
    bias of estimators: plug-in F1, sampling estimators of utility, sequential testing,
    error-rate estimators;
``binomial_coverage``, ``mean_bias``
    small examples of the engine's two paths.
"""

from studies.suite.registry import (
    STUDY_MODULES,
    SUITE_FALSE_ALARM,
    claim_false_alarm,
    get_study,
    study_names,
)

__all__ = ["STUDY_MODULES", "SUITE_FALSE_ALARM", "claim_false_alarm", "get_study", "study_names"]
