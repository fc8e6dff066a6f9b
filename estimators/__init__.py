"""evalcert estimators: exact, vectorized estimators and intervals for classifier evaluation.

Pure functions and small frozen result objects; no I/O, no study machinery.
"""

from estimators._batched_plan import PlannedSizes, SimulatedTestSets, plan_sizes
from estimators.certification import (
    CERTIFICATION_DESIGNS,
    CERTIFICATION_MEASURES,
    CertificationPlan,
    PowerCurve,
    certification_power,
    certification_sample_size,
)
from estimators.confusion import ConfusionMatrix, WeightedTotal, optimal_threshold
from estimators.fmeasure import (
    F1_DESIGNS,
    F1_METHODS,
    F1_METHODS_BY_DESIGN,
    F1Estimate,
    f1_ci,
    f1_estimate,
)
from estimators.gain import (
    BUDGET_POSITIVES_METHODS,
    CUMULATIVE_GAIN_METHODS,
    BudgetPositives,
    BudgetYield,
    CumulativeGainEstimate,
    GainTable,
    budget_positives,
    cumulative_gain_estimate,
    gain_table,
)
from estimators.interval import Interval
from estimators.power import (
    LOSCI_METHODS,
    POSTERIORS,
    ConfusionPosterior,
    confusion_posterior,
    theta_star,
)
from estimators.proportion import (
    FINITE_PROPORTION_METHODS,
    PROPORTION_METHODS,
    ProportionEstimate,
    proportion_ci,
)
from estimators.recall import (
    RECALL_METHODS_BY_DESIGN,
    recall_ci,
    recall_estimate,
    recall_from_segments,
)
from estimators.sampling import (
    ALLOCATION_METHODS,
    STRATIFIED_METHODS,
    MembershipStrata,
    PooledEstimate,
    StratifiedEstimate,
    StratifiedProportion,
    UtilityEstimate,
    allocate,
    pooled_estimate,
    srs_estimate,
    stratified_proportion,
)

__all__ = [
    "ALLOCATION_METHODS",
    "BUDGET_POSITIVES_METHODS",
    "CERTIFICATION_DESIGNS",
    "CERTIFICATION_MEASURES",
    "CUMULATIVE_GAIN_METHODS",
    "F1_DESIGNS",
    "F1_METHODS",
    "F1_METHODS_BY_DESIGN",
    "FINITE_PROPORTION_METHODS",
    "LOSCI_METHODS",
    "POSTERIORS",
    "PROPORTION_METHODS",
    "RECALL_METHODS_BY_DESIGN",
    "STRATIFIED_METHODS",
    "BudgetPositives",
    "BudgetYield",
    "CertificationPlan",
    "ConfusionMatrix",
    "ConfusionPosterior",
    "CumulativeGainEstimate",
    "F1Estimate",
    "GainTable",
    "Interval",
    "MembershipStrata",
    "PlannedSizes",
    "PooledEstimate",
    "PowerCurve",
    "ProportionEstimate",
    "SimulatedTestSets",
    "StratifiedEstimate",
    "StratifiedProportion",
    "UtilityEstimate",
    "WeightedTotal",
    "allocate",
    "budget_positives",
    "certification_power",
    "certification_sample_size",
    "confusion_posterior",
    "cumulative_gain_estimate",
    "f1_ci",
    "f1_estimate",
    "gain_table",
    "optimal_threshold",
    "plan_sizes",
    "pooled_estimate",
    "proportion_ci",
    "recall_ci",
    "recall_estimate",
    "recall_from_segments",
    "srs_estimate",
    "stratified_proportion",
    "theta_star",
]
