"""evalcert estimators: exact, vectorized estimators and intervals for classifier evaluation.

Pure functions and small frozen result objects; no I/O, no study machinery.
"""

from estimators.interval import Interval
from estimators.proportion import PROPORTION_METHODS, ProportionEstimate, proportion_ci

__all__ = [
    "PROPORTION_METHODS",
    "Interval",
    "ProportionEstimate",
    "proportion_ci",
]
