"""The study suite: one module per study, each declaring its ADEMP as a `Study`.

Each module here that binds a `Study` to ``STUDY`` is a study of that name, found by
`registry` (as are installed packages' studies, entry-point group ``evalcert.studies``) and
imported only when used; ``evalcert study new NAME`` writes a new one
(`studies.cli.template`). The suite's studies:

``coverage_proportion``, ``coverage_f1``, ``coverage_f1_exact``, ``coverage_recall``,
``coverage_finite``
    coverage and width of the binomial, F1, recall and finite-population intervals;
``bias_f1``, ``bias_sampling``, ``bias_sequential``, ``bias_error_rate``
    bias of estimators: plug-in F1, sampling estimators of utility, sequential testing,
    error-rate estimators;
``power_calibration``, ``power_calibration_exact``, ``planning_stratified``
    whether a certification test set sized by Algorithm 2, or planned exactly (by simple
    random or stratified sampling), delivers its power;
``stopping_policies``
    when to stop training and certify under an annotation budget (``text_learner`` gives its
    real-learner runs);
``stratified_vs_pooled``, ``gain_budget``, ``gain_budget_exact``
    stratified, pooled and sampled estimates of utility and gain, and choosing a model under a
    budget (the exact coverage of its hypergeometric and binomial intervals);
``binomial_coverage``, ``mean_bias``
    small examples of the engine's two paths.
"""

from studies.suite.registry import (
    ENTRY_POINT_GROUP,
    SUITE_FALSE_ALARM,
    claim_false_alarm,
    get_study,
    judge,
    judge_claim,
    stored_studies,
    study_names,
    study_sources,
    suite_study_names,
)

__all__ = ["ENTRY_POINT_GROUP", "SUITE_FALSE_ALARM", "claim_false_alarm", "get_study", "judge",
           "judge_claim", "stored_studies", "study_names", "study_sources", "suite_study_names"]
