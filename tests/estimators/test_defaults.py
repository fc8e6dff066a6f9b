"""One rule for every default method: the one whose coverage is guaranteed (`estimators._defaults`).

Every public function or result method of `estimators` with a ``method`` or ``interval``
keyword is listed here with what its default gives; a new one fails the first test until it
is added (and follows the rule, or is named as the documented exception).
"""

from __future__ import annotations

import inspect

import pytest

import estimators
from estimators import (
    ProportionEstimate,
    certification_power,
    certification_sample_size,
    f1_ci,
    f1_estimate,
    proportion_ci,
    recall_ci,
)
from estimators._defaults import default_method

SAMPLE = (34, 8, 4, 154)
SEGMENTS = (400, 1600)

# (function, keyword) -> a call that leaves the keyword out and what it used, per design
RESOLVED = {
    ("proportion_ci", "method"): lambda: [
        (proportion_ci(3, 10).method, "clopper-pearson"),
        (proportion_ci(3, 10, population_size=40).method, "hypergeometric")],
    ("ProportionEstimate.confidence_interval", "method"): lambda: [
        (ProportionEstimate(3, 10).confidence_interval().method, "clopper-pearson")],
    ("recall_ci", "method"): lambda: [
        (recall_ci(*SAMPLE).method, "clopper-pearson"),
        (recall_ci(*SAMPLE, design="stratified", population_sizes=SEGMENTS).method,
         "segments-clopper-pearson"),
        (recall_ci(*SAMPLE, design="stratified", population_sizes=SEGMENTS,
                   finite_population=True).method, "segments-hypergeometric")],
    ("f1_ci", "method"): lambda: [
        (f1_ci(*SAMPLE).method, "jaccard-clopper-pearson"),
        (f1_ci(*SAMPLE, design="stratified", population_sizes=SEGMENTS).method,
         "segments-clopper-pearson"),
        (f1_ci(*SAMPLE, design="stratified", population_sizes=SEGMENTS,
               finite_population=True).method, "segments-hypergeometric")],
    ("F1Estimate.confidence_interval", "method"): lambda: [
        (f1_estimate(*SAMPLE).confidence_interval().method, "jaccard-clopper-pearson")],
    ("F1Estimate.confidence_intervals", "method"): lambda: [
        (f1_estimate(*SAMPLE).confidence_intervals()[0].method, "jaccard-clopper-pearson")],
    ("certification_sample_size", "interval"): lambda: [
        (certification_sample_size(SAMPLE, 0.6, rng=1, draws=200).interval,
         "jaccard-clopper-pearson"),
        (certification_sample_size(SAMPLE, 0.7, measure="recall").interval, "clopper-pearson"),
        (certification_sample_size(SAMPLE, 0.6, measure="recall", design="stratified",
                                   segment_sizes=(4000, 16000)).interval,
         "segments-clopper-pearson"),
        (certification_sample_size(SAMPLE, 0.7, measure="accuracy",
                                   population_size=2000).interval, "hypergeometric")],
    ("certification_power", "interval"): lambda: [
        (certification_power("f1", 300, 0.6, confusion=SAMPLE),
         certification_power("f1", 300, 0.6, confusion=SAMPLE,
                             interval="jaccard-clopper-pearson")),
        (certification_power("recall", (60, 200), 0.6, confusion=SAMPLE, design="stratified",
                             segment_sizes=(4000, 16000)),
         certification_power("recall", (60, 200), 0.6, confusion=SAMPLE, design="stratified",
                             segment_sizes=(4000, 16000), interval="segments-clopper-pearson"))],
    ("plan_sizes", "interval"): lambda: [
        (inspect.signature(estimators.plan_sizes).parameters["interval"].default,
         default_method("f1"))],
    ("theta_star", "interval"): lambda: [
        (inspect.signature(estimators.theta_star).parameters["interval"].default,
         default_method("f1"))],
    # exact intervals of a finite population's positives and of a gain: guaranteed already
    ("BudgetPositives.confidence_interval", "method"): lambda: [
        (inspect.signature(estimators.BudgetPositives.confidence_interval)
         .parameters["method"].default, "hypergeometric")],
    ("CumulativeGainEstimate.confidence_interval", "method"): lambda: [
        (inspect.signature(estimators.CumulativeGainEstimate.confidence_interval)
         .parameters["method"].default, "binomial")],
    # the documented exception: no stratified method here guarantees coverage
    ("StratifiedEstimate.confidence_interval", "method"): lambda: [
        (inspect.signature(estimators.StratifiedEstimate.confidence_interval)
         .parameters["method"].default, "jeffreys")],
    ("UtilityEstimate.confidence_interval", "method"): lambda: [
        (inspect.signature(estimators.UtilityEstimate.confidence_interval)
         .parameters["method"].default, "jeffreys")],
}
# keywords named ``method`` that choose no interval: an allocation, an exact or simulated
# computation of the same plan
NOT_AN_INTERVAL = {("allocate", "method"), ("MembershipStrata.allocate", "method"),
                   ("certification_sample_size", "method")}


def _public_keywords() -> set[tuple[str, str]]:
    found = set()
    for name in estimators.__all__:
        obj = getattr(estimators, name)
        members = [(name, obj)] if inspect.isfunction(obj) else [
            (f"{name}.{attr}", member) for attr, member in
            inspect.getmembers(obj, inspect.isfunction) if not attr.startswith("_")
        ] if inspect.isclass(obj) else []
        for label, function in members:
            parameters = inspect.signature(function).parameters
            found |= {(label, key) for key in ("method", "interval") if key in parameters}
    return found


def test_every_public_method_keyword_is_listed_with_its_default():
    found = _public_keywords()
    unlisted = sorted(found - set(RESOLVED) - NOT_AN_INTERVAL)
    gone = sorted((set(RESOLVED) | NOT_AN_INTERVAL) - found)
    assert not unlisted, f"public method keywords without a stated default: {unlisted}"
    assert not gone, f"listed here but no longer public: {gone}"


@pytest.mark.parametrize("where", sorted(RESOLVED), ids=lambda w: ".".join(w))
def test_each_default_is_the_guaranteed_method_of_its_design(where):
    for used, expected in RESOLVED[where]():
        assert used == expected, where


def test_the_rule_names_a_guaranteed_method_for_each_measure_and_design():
    assert default_method("proportion") == "clopper-pearson"
    assert default_method("proportion", finite=True) == "hypergeometric"
    assert default_method("recall", "srs", finite=True) == "clopper-pearson"  # no exact one
    assert default_method("f1", "stratified", finite=True) == "segments-hypergeometric"
    with pytest.raises(KeyError):
        default_method("accuracy")
