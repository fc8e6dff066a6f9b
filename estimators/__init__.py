"""evalcert estimators: exact, vectorized estimators and intervals for classifier evaluation.

Pure functions and small frozen result objects; no I/O, no study machinery.
"""

from estimators.confusion import ConfusionMatrix, WeightedTotal, optimal_threshold
from estimators.gain import BudgetYield, GainTable, gain_table
from estimators.interval import Interval
from estimators.proportion import PROPORTION_METHODS, ProportionEstimate, proportion_ci

__all__ = [
    "PROPORTION_METHODS",
    "BudgetYield",
    "ConfusionMatrix",
    "GainTable",
    "Interval",
    "ProportionEstimate",
    "WeightedTotal",
    "gain_table",
    "optimal_threshold",
    "proportion_ci",
]
