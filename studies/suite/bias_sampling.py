"""Bias of the SRS, stratified and pooled utility estimators, and of their variance estimators.

Aims
    Show, exactly, that the simple random sample (SRS) and stratified estimators of a set's
    linear utility are unbiased, that their variance estimators (Lewis 1996, eq. 29-30 and
    33-35) are unbiased, and that the pooled estimate (unjudged documents counted nonrelevant,
    section 5.1) is biased low (section 7.1).
Data-generating mechanisms
    A finite set of ``N = sum N_h`` documents in three strata (``sizes``), ``K_h =
    round(prevalence_h N_h)`` of them relevant. Two samples are drawn independently, without
    replacement: an SRS of ``n = sum n_h`` documents from the whole set (``A ~
    Hypergeometric(N, K, n)``) and a stratified sample of ``n_h`` per stratum (``a_h ~
    Hypergeometric(N_h, K_h, n_h)``, independent). The **exact path** enumerates their joint
    outcomes, ``(n + 1) prod (n_h + 1)`` of them, whose probability is the outer product of the
    ``H + 1`` marginal pmfs (each evaluated once per count: scipy's exact ``hypergeom.pmf``
    costs about 0.2 ms a point at ``N = 10^5``, too slow to call per joint outcome). The
    outcomes and estimates depend on ``sizes``, ``sampled`` and ``utility`` only
    (``estimates_depend_on``), so the prevalence profiles of one design are analysed in one
    pass. ``generate`` draws the same samples by Monte Carlo (``path="monte-carlo"``). Quick
    grid: 2 sizes x 2 allocations x 3 prevalence profiles (12 cells, at most 41,261 outcomes).
    Full grid: 3 x 4 x 5 x 2 utilities (120 cells in 24 groups, at most 564,921 outcomes).
Estimands
    The utility ``u = u_a K + u_b (N - K)`` of the set (Lewis 1996, eq. 1), ``utility =
    (u_a, u_b)``.
Methods
    ``srs``: ``((u_a - u_b) A / n + u_b) N`` (eq. 5 with eq. 6) with the MSE estimate eq. 30 as
    model variance. ``stratified``: eq. 5 with eq. 7, MSE eq. 35. ``pooled``: `pooled_estimate` with
    the stratified sample as the judged pool (the pool is exactly the judged documents; no model
    SE). The proportions and variances are `estimators.stratified_proportion`, vectorised over
    outcomes, mapped to utility by eq. 25 and 27 (``tests/studies/suite/test_study_bias.py`` checks
    them against `StratifiedEstimate` and `srs_estimate`). A user method (``--method
    module:callable``) is ``estimator(sizes, sampled, positives) -> (estimate, variance)`` of the
    proportion ``p``, with ``positives`` an int array (outcomes x strata), as
    `estimators.stratified_proportion`; it is applied to the stratified sample.
Performance measures
    Bias, relative bias, empirical SE, MSE, model SE and its relative error. The summary table
    (`efficiency_table`) sets the two designs side by side in each cell: their empirical SEs,
    the ratio stratified / SRS and the relative efficiency Var(SRS) / Var(stratified), so that
    where stratified sampling is the more precise design is read off one column. **Unbiasedness of
    a variance estimator** is read from ``model_se_error``: Morris et al. (2019) define the
    model SE as ``sqrt(mean v_i)`` of the variance estimates ``v_i``, so ``model_se_error =
    sqrt(E[v] / Var[t]) - 1`` is 0 exactly when ``E[v] = Var[t]`` (on the exact path, where
    ``E`` and ``Var`` are the true moments).

References
----------
Lewis, D. D. (1996). The TREC-5 Filtering Track. *TREC-5* (seed 004), sections 5.1-5.2 and
7.1-7.2, eq. 1, 5-7, 25-35. Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed., Wiley,
pp. 51-52 and section 5.10. Morris, White & Crowther (2019), *Statistics in Medicine* 38,
2074-2102, Table 6.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from estimators import pooled_estimate, stratified_proportion
from studies.engine import StudyResult
from studies.engine.claims import Claim
from studies.engine.design import Figure, Grid, Method, Params, Sample, Study
from studies.engine.performance import Estimates

__all__ = ["STUDY", "efficiency_table", "population"]

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]


def population(params: Params) -> tuple[IntArray, IntArray, IntArray]:
    """``(N_h, n_h, K_h)`` of a cell: stratum sizes, sample sizes and relevant documents."""
    sizes = np.asarray(params["sizes"], dtype=np.int64)
    sampled = np.asarray(params["sampled"], dtype=np.int64)
    relevant = np.rint(np.asarray(params["prevalence"]) * sizes).astype(np.int64)
    return sizes, sampled, relevant


def truth(params: Params) -> float:
    """The set's utility ``u_a K + u_b (N - K)`` (Lewis 1996, eq. 1)."""
    sizes, _, relevant = population(params)
    u_a, u_b = params["utility"]
    return float(u_a * relevant.sum() + u_b * (sizes.sum() - relevant.sum()))


def _outcome_grid(sampled: IntArray) -> tuple[IntArray, IntArray]:
    """Every ``(A, a_1, ..., a_H)``: SRS positives and stratum positives (row-major)."""
    ranges = [np.arange(int(sampled.sum()) + 1), *(np.arange(int(m) + 1) for m in sampled)]
    mesh = np.meshgrid(*ranges, indexing="ij")
    flat = [axis.ravel() for axis in mesh]
    return flat[0], np.stack(flat[1:], axis=1)


def _pmf(size: int, relevant: int, sampled: int) -> Array:
    """``P(A = a)`` for ``a = 0 .. sampled``: Hypergeometric(size, relevant, sampled)."""
    pmf: Array = stats.hypergeom.pmf(np.arange(sampled + 1), size, relevant, sampled)
    return pmf


def _joint_probability(params: Params) -> Array:
    """Probability of each outcome of `_outcome_grid`, in its (row-major) order.

    The SRS and the strata are drawn independently, so it is the outer product of the
    marginal pmfs.
    """
    sizes, sampled, relevant = population(params)
    marginals = [_pmf(int(sizes.sum()), int(relevant.sum()), int(sampled.sum())),
                 *map(_pmf, sizes.tolist(), relevant.tolist(), sampled.tolist())]
    joint: Array = functools.reduce(np.multiply.outer, marginals).ravel()
    return joint


def enumerate_outcomes(cells: Sequence[Params]) -> Sample:
    """The joint outcomes of one design, with their probability in each cell."""
    _, sampled, _ = population(cells[0])
    srs, strata = _outcome_grid(sampled)
    probability = np.stack([_joint_probability(c) for c in cells])
    return Sample(data=(srs, strata), size=srs.size,
                  probability=probability / probability.sum(axis=1, keepdims=True))


def generate(params: Params, n_replicates: int, *, rng: Any = None) -> Sample:
    """Monte Carlo: ``n_replicates`` independent SRS and stratified samples."""
    gen = np.random.default_rng(rng)
    sizes, sampled, relevant = population(params)
    srs = gen.hypergeometric(int(relevant.sum()), int((sizes - relevant).sum()),
                             int(sampled.sum()), size=n_replicates)
    strata = gen.hypergeometric(relevant, sizes - relevant, sampled, size=(n_replicates,
                                                                            sizes.size))
    return Sample(data=(srs, strata), size=n_replicates)


def _as_utility(estimate: Array, variance: Array, size: int, params: Params) -> Estimates:
    """``u^ = ((u_a - u_b) p^ + u_b) N`` (eq. 25) and ``sqrt((u_a - u_b)^2 N^2 Var^)`` (eq. 27)."""
    u_a, u_b = params["utility"]
    return Estimates(estimate=((u_a - u_b) * estimate + u_b) * size,
                     se=np.sqrt((u_a - u_b) ** 2 * size * size * variance))


def _srs(data: tuple[IntArray, IntArray], params: Params) -> Estimates:
    sizes, sampled, _ = population(params)
    total = int(sizes.sum())
    estimate, variance = stratified_proportion([total], [sampled.sum()], data[0][:, None])
    return _as_utility(np.asarray(estimate), np.asarray(variance), total, params)


def _stratified(data: tuple[IntArray, IntArray], params: Params) -> Estimates:
    sizes, sampled, _ = population(params)
    estimate, variance = stratified_proportion(sizes, sampled, data[1])
    return _as_utility(np.asarray(estimate), np.asarray(variance), int(sizes.sum()), params)


def _pooled(data: tuple[IntArray, IntArray], params: Params) -> Estimates:
    sizes, sampled, _ = population(params)
    u_a, u_b = params["utility"]
    pooled = pooled_estimate(int(sizes.sum()), int(sampled.sum()), data[1].sum(axis=1),
                             u_a=u_a, u_b=u_b)
    return Estimates(estimate=np.asarray(pooled.estimate, dtype=np.float64))


def _user(estimator: Callable[..., Any], data: tuple[IntArray, IntArray], params: Params
          ) -> Estimates:
    sizes, sampled, _ = population(params)
    estimate, variance = estimator(sizes, sampled, data[1])
    return _as_utility(np.asarray(estimate, dtype=np.float64),
                       np.asarray(variance, dtype=np.float64), int(sizes.sum()), params)


def wrap_method(estimator: Callable[..., Any]) -> Method:
    """A `Method` from ``estimator(sizes, sampled, positives) -> (p estimate, variance)``."""
    return functools.partial(_user, estimator)


def efficiency_table(result: StudyResult) -> list[dict[str, Any]]:
    """Per cell: the empirical SE of the SRS and stratified estimators and their ratio.

    ``se_ratio`` is stratified SE / SRS SE (below 1: stratified sampling is more precise);
    ``relative_efficiency`` is its inverse square, Var(SRS) / Var(stratified) (Cochran 1977,
    section 5.10); ``more_precise`` names the smaller SE. The MCSEs are 0 on the exact path.
    """
    rows = []
    for cell in result.expanded().cells:
        found = {m: cell.performance[m].measures["empirical_se"]
                 for m in ("srs", "stratified") if m in cell.performance}
        if len(found) < 2:
            continue
        srs, stratified = found["srs"], found["stratified"]
        ratio = stratified.value / srs.value
        rows.append({**{k: str(v) for k, v in cell.params.items()},
                     "srs_se": srs.value, "srs_se_mcse": srs.mcse,
                     "stratified_se": stratified.value, "stratified_se_mcse": stratified.mcse,
                     "se_ratio": ratio, "relative_efficiency": ratio ** -2,
                     "more_precise": "stratified" if ratio < 1 else "srs"})
    return rows


# Prevalence profiles per stratum: rising with the stratum's rank (as for strata by score),
# flat, and one with a rare first stratum.
_PROFILES = [[0.02, 0.2, 0.6], [0.1, 0.3, 0.9], [0.3, 0.3, 0.3], [0.01, 0.05, 0.5],
             [0.05, 0.5, 0.95]]

CLAIMS = (
    Claim("srs-stratified-unbiased",
          "The simple random sampling and stratified estimators of utility are unbiased "
          "(Lewis 1996, eq. 25 and 35).",
          ("srs", "stratified"), "relative_bias", "within", target=0.0, pins=("validity",)),
    Claim("variance-estimators-unbiased",
          "Their variance estimators are unbiased: the model SE matches the empirical SE.",
          ("srs", "stratified"), "model_se_error", "within", target=0.0, pins=("validity",)),
    Claim("pooled-biased-low",
          "The pooled estimator is biased low: relevant documents outside the pool go unjudged "
          "(Lewis 1996, section 8).",
          ("pooled",), "bias", "at_most", target=0.0, resolution=1.0, effect=True),
)

_SMALL_SET = ("sizes == '[200, 50, 20]' and sampled in ['[5, 5, 5]', '[10, 10, 10]'] "
              "and utility == '[3, -1]'")

FIGURES = (
    Figure("measure_by",
           "The SRS and stratified estimators of utility (overlapping) lie on the dashed zero "
           "line, while the pooled estimate is biased low by u_a - u_b = 4 times the expected "
           "number of relevant documents left unjudged.",
           where=_SMALL_SET,
           options={"measure": "bias", "x": "sampled", "panel_by": "prevalence",
                    "reference": 0.0}),
    Figure("measure_by",
           "With the same n_h in strata of 200, 50 and 20 documents, stratified sampling has a "
           "smaller empirical SE than SRS when relevant documents concentrate in the small "
           "strata ([0.02, 0.2, 0.6]) but a larger one for the flat profile [0.3, 0.3, 0.3], "
           "where equal allocation over-samples the small strata.",
           where=_SMALL_SET,
           options={"measure": "empirical_se", "x": "sampled", "panel_by": "prevalence",
                    "methods": ("srs", "stratified")}),
)

STUDY = Study(
    name="bias_sampling",
    ademp=__doc__,
    version="1",
    grids={
        "quick": Grid({"sizes": [[200, 50, 20], [1000, 200, 40]],
                       "sampled": [[5, 5, 5], [10, 10, 10]],
                       "prevalence": _PROFILES[:3], "utility": [[3, -1]]},
                      n_replicates=20_000),
        "full": Grid({"sizes": [[200, 50, 20], [1000, 200, 40], [100_000, 1000, 100]],
                      "sampled": [[5, 5, 5], [10, 10, 10], [20, 20, 20], [30, 10, 5]],
                      "prevalence": _PROFILES, "utility": [[3, -1], [1, -1]]},
                     n_replicates=100_000),
    },
    truth=truth,
    generate=generate,
    methods={"srs": _srs, "stratified": _stratified, "pooled": _pooled},
    measures=("bias", "relative_bias", "empirical_se", "mse", "model_se", "model_se_error"),
    enumerate_outcomes=enumerate_outcomes,
    estimates_depend_on=("sizes", "sampled", "utility"),
    wrap_method=wrap_method,
    claims=CLAIMS,
    estimator_methods={"srs": "srs_estimate:utility", "pooled": "pooled_estimate:utility"},
    figures=FIGURES,
    summary=efficiency_table,
)
