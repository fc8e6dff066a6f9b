"""Exact coverage and width of the deterministic F1 intervals (delta, logit-delta), n <= 1000.

Aims
    The same questions as `studies.suite.coverage_f1`, answered without Monte Carlo error for
    the methods whose intervals are a function of the test sample alone: where do the delta
    and logit-delta intervals (two-sided and LOSCI) reach their nominal coverage, and by how
    much do they fall short elsewhere?
Data-generating mechanisms
    As in `studies.suite.coverage_f1` (both designs; prevalence 3%-50%, F1 0.3-0.95, ``n``
    50-1,000; quick: 54 cells; full: 432 cells), but every possible test sample is enumerated
    with its probability instead of being drawn. SRS: the deterministic methods' intervals
    depend only on ``tp`` and ``e = fp + fn``, a trinomial with ``(n + 1)(n + 2) / 2``
    outcomes. Stratified: two independent binomials, ``(n1 + 1)(n0 + 1)`` outcomes (at most
    251,001). The cells of one (design, ``n``, prevalence) share the enumeration
    (``estimates_depend_on``: the stratified allocation depends on the prevalence).
Estimands
    Population F1.
Methods
    ``delta``, ``logit-delta`` and their LOSCIs from ``estimators.f1_ci``; undefined intervals
    count as not covering (see `studies.suite.coverage_f1`).
Performance measures
    Coverage, mean width and the undefined share, exact (MCSE 0).

References
----------
Bagdouri, M., Webber, W., Lewis, D. D. & Oard, D. W. (2013). Towards minimizing the annotation
cost of certified text classification. CIKM. Appendix A (delta-method variance).
Morris, T. P., White, I. R. & Crowther, M. J. (2019). *Statistics in Medicine* 38, 2074-2102.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from scipy import special

from studies.engine.design import Figure, Grid, Params, Sample, Study
from studies.suite.coverage_f1 import (
    CLAIMS,
    DETERMINISTIC,
    MEASURES,
    allocation,
    cell_proportions,
    coverage_by_n,
    generate,
    methods,
    summary_table,
    truth,
    wrap_method,
)

__all__ = ["STUDY", "enumerate_outcomes"]

IntArray = NDArray[np.int64]


def _trinomial_outcomes(n: int) -> IntArray:
    """Every ``(tp, e, tn)`` with ``tp + e + tn = n``, as rows (``(n + 1)(n + 2) / 2``)."""
    total, tp = np.tril_indices(n + 1)  # total = tp + e runs over 0..n, tp over 0..total
    return np.column_stack([tp, total - tp, n - total]).astype(np.int64)


def enumerate_outcomes(cells: Sequence[Params]) -> Sample:
    """Every test sample of the cells' design, with its probability in each cell.

    SRS: outcomes ``(tp, e, 0, tn)`` (fp carries ``e = fp + fn``) with trinomial
    probabilities, exact for the deterministic methods, whose SRS intervals depend on ``tp``
    and ``e`` only. Stratified: every ``(tp, n1 - tp, fn, n0 - fn)``, two independent
    binomials. Probabilities in log space for the whole (cells x outcomes) matrix.
    """
    if cells[0]["design"] == "stratified":
        return _stratified_outcomes(cells)
    n = int(cells[0]["n"])
    outcomes = _trinomial_outcomes(n)
    props = np.array([cell_proportions(params) for params in cells])
    probs = np.column_stack([props[:, 0], props[:, 1] + props[:, 2], props[:, 3]])
    log_coef = special.gammaln(n + 1) - special.gammaln(outcomes + 1).sum(axis=1)
    log_p = log_coef + sum(special.xlogy(outcomes[:, k], probs[:, k:k + 1]) for k in range(3))
    probability = np.exp(log_p)
    counts = np.column_stack([outcomes[:, 0], outcomes[:, 1], np.zeros_like(outcomes[:, 0]),
                              outcomes[:, 2]])
    return Sample(data=(counts, 0), size=outcomes.shape[0],
                  probability=probability / probability.sum(axis=1, keepdims=True))


def _stratified_outcomes(cells: Sequence[Params]) -> Sample:
    """``tp ~ Bin(n1, precision)`` and ``fn ~ Bin(n0, fn share of the unretrieved)``, all pairs.

    The cells share their allocation ``(n1, n0)`` (their prevalence is a grouping parameter).
    """
    n1, n0 = allocation(cells[0])
    tp, fn = (axis.ravel() for axis in np.meshgrid(np.arange(n1 + 1), np.arange(n0 + 1),
                                                   indexing="ij"))
    props = np.array([cell_proportions(params) for params in cells])
    precision = (props[:, 0] / (props[:, 0] + props[:, 1]))[:, None]
    omission = (props[:, 2] / (props[:, 2] + props[:, 3]))[:, None]
    log_p = (_log_binomial(tp, n1, precision) + _log_binomial(fn, n0, omission))
    probability = np.exp(log_p)
    counts = np.column_stack([tp, n1 - tp, fn, n0 - fn]).astype(np.int64)
    return Sample(data=(counts, 0), size=counts.shape[0],
                  probability=probability / probability.sum(axis=1, keepdims=True))


def _log_binomial(k: IntArray, n: int, p: NDArray[np.float64]) -> NDArray[np.float64]:
    log_choose = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    found: NDArray[np.float64] = log_choose + special.xlogy(k, p) + special.xlog1py(n - k, -p)
    return found



FIGURES = (
    coverage_by_n(
        "Exact coverage under simple random sampling, F1 = 0.7: with fewer than 5 relevant "
        "documents expected (n x prevalence) every interval covers far below 95%; from "
        "about 10 on, logit-delta (two-sided and LOSCI) covers at least 95% while delta "
        "stays below the dashed line, its LOSCI most.", "srs"),
    coverage_by_n(
        "Exact coverage under stratified sampling, F1 = 0.7: the same pattern as under "
        "simple random sampling; from about 10 relevant documents expected on, logit-delta "
        "stays within half a point of the dashed 95% line or above it, while delta falls "
        "up to about 5 points short.", "stratified"),
    Figure("heat_map",
           "The logit-delta LOSCI's exact coverage under simple random sampling, averaged over "
           "F1 (white is the nominal 95%, red below it): the red corner is where few relevant "
           "documents are expected (small n and prevalence).",
           where="design == 'srs'",
           options={"measure": "coverage", "method": "logit-delta-losci", "rows": "prevalence",
                    "columns": "n", "center": 0.95}),
)

STUDY = Study(
    name="coverage_f1_exact",
    version="2",
    grids={
        "quick": Grid({"design": ["srs", "stratified"], "prevalence": [0.03, 0.15, 0.5],
                       "f1": [0.3, 0.7, 0.95], "n": [50, 100, 200],
                       "confidence_level": [0.95]}, n_replicates=2),
        "full": Grid({"design": ["srs", "stratified"],
                      "prevalence": [0.03, 0.05, 0.1, 0.2, 0.3, 0.5],
                      "f1": [0.3, 0.5, 0.7, 0.8, 0.9, 0.95],
                      "n": [50, 100, 200, 300, 500, 1000], "confidence_level": [0.95]},
                     n_replicates=2),
    },
    truth=truth,
    generate=generate,
    methods=methods(DETERMINISTIC),
    measures=MEASURES,
    enumerate_outcomes=enumerate_outcomes,
    # the stratified allocation and population sizes follow the prevalence
    estimates_depend_on=("design", "n", "prevalence", "confidence_level"),
    wrap_method=wrap_method,
    parameter_space=(0.0, 1.0),
    summary=summary_table,
    claims=CLAIMS,
    figures=FIGURES,
)
