"""Gain, cumulative gain and lift of a ranked list, and the budget questions they answer.

A model's scores rank a test set; an annotator works down the ranking. Gain tables
say how many positives each quantile bin of the ranking holds, and so how much
annotation a budget buys and how much it costs to collect a share of the positives
(Klubička et al. 2018, sections 3 and 4).

From a labelled sample
----------------------
When a model has scored the whole population but only a simple random sample is labelled,
:func:`budget_positives` (:class:`BudgetPositives`) estimates the positives a budget of items
buys, and :func:`cumulative_gain_estimate` (:class:`CumulativeGainEstimate`) the cumulative
gain at a decile, each with confidence intervals (exact hypergeometric, Clopper-Pearson,
percentile bootstrap).

Tie policy
----------
Items with equal scores have no order of their own. Every quantity reported here is
its *expected value* when each tied group is put in a uniformly random order. A tied
group straddling a cut therefore contributes its positives pro rata, and results do
not depend on the order of the input arrays. Without ties the expectation is just the
value for the one ranking.
"""

from estimators._gain_table import BudgetYield, GainTable, gain_table
from estimators._sampled_gain import (
    BUDGET_POSITIVES_METHODS,
    CUMULATIVE_GAIN_METHODS,
    BudgetPositives,
    CumulativeGainEstimate,
    budget_positives,
    cumulative_gain_estimate,
)

__all__ = ["BUDGET_POSITIVES_METHODS", "CUMULATIVE_GAIN_METHODS", "BudgetPositives",
           "BudgetYield", "CumulativeGainEstimate", "GainTable", "budget_positives",
           "cumulative_gain_estimate", "gain_table"]
