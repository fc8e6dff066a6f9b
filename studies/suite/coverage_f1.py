"""Coverage and width of the F1 confidence intervals, two-sided and one-sided (LOSCI).

Aims
    Measure how well the `estimators.f1_ci` methods cover population F1, as a two-sided
    interval and as the lower one-sided interval ``[low, 1]`` (LOSCI) used for certification
    (Bagdouri, Webber, Lewis & Oard 2013, section 2 and section 5.3: "a 1 - alpha = 95% lower
    one-sided confidence interval"): the approximate methods (delta, logit-delta,
    beta-posterior, bootstrap) under both sampling designs, and the deterministic methods of
    one design each, whose Clopper-Pearson members guarantee the nominal coverage; identify
    where each method under-covers and by how much (`summary`, `undercovering_cells`).

    **Recommendation.** Certify with the Clopper-Pearson-based LOSCI of the design,
    ``jaccard-clopper-pearson-losci`` under simple random sampling and
    ``segments-clopper-pearson-losci`` under stratified sampling: the only LOSCIs whose
    coverage is guaranteed. `studies.suite.coverage_f1_exact` gives their exact coverage and
    width for ``n <= 1000``; this study follows them, with the approximate methods, up to
    ``n = 5000``. The report's findings (`findings`) give the run's numbers: each guaranteed
    interval's coverage, the approximate LOSCIs' shortfall with few and with many relevant
    documents expected, and the width the guarantee costs.
Data-generating mechanisms
    A logically infinite population of documents with prevalence ``pi`` and a classifier whose
    precision equals its recall, both equal to population F1 ``F``; its confusion-matrix
    proportions are ``tp = F pi``, ``fp = fn = pi (1 - F)``, ``tn = 1 - pi (2 - F)`` and its
    retrieved share is ``q = pi``. A test sample of ``n`` documents is drawn

    * ``design="srs"``: simply at random: ``(tp, fp, fn, tn) ~ Multinomial(n, ...)``;
    * ``design="stratified"``: the retrieved and unretrieved segments independently, with
      proportional allocation ``n1 = round(n q)`` (at least 1 in each segment), ``n0 = n - n1``:
      ``tp ~ Bin(n1, F)`` (precision) and ``fn ~ Bin(n0, pi (1 - F) / (1 - pi))``; the
      estimators know ``q`` (population sizes ``(q, 1 - q) * 10^6``).

    Prevalence spans 3%-50% (the 29 RCV1-v2 topics of seed 000, section 5.1, span 3.1%-47.4%),
    F1 0.3-0.95 and ``n`` 50-5,000 (quick: 36 cells of 1,024 replicates; full: 504 cells of
    2,048, where a coverage near 0.95 has an MCSE of 0.0048 and each claim, a mean over 36
    populations, can detect a deviation several times smaller than its resolution; the two
    Monte Carlo methods' draws are nearly all of a cell's cost, about 2 s of CPU, so the
    full grid takes about 8 min on 2 workers). Confidence level 0.95.
Estimands
    Population F1 ``F``.
Methods
    For each ``m`` in ``APPROXIMATE`` and ``ONE_DESIGN``: ``m`` (two-sided) and ``m-losci``
    (``alternative="greater"``), both from ``f1_ci`` at the cell's confidence level.
    ``APPROXIMATE`` (``delta``, ``logit-delta``, ``beta-posterior``, ``bootstrap``) run under
    both designs. ``ONE_DESIGN`` run only in the cells of the design that admits them
    (``F1_METHODS_BY_DESIGN``; `applies`) and have no values elsewhere (neither a miss nor
    an error): under simple random sampling ``jaccard-clopper-pearson`` (guaranteed
    coverage), ``jaccard-wilson``, ``jaccard-jeffreys`` and ``dirichlet-posterior``; under
    stratified sampling ``segments-clopper-pearson`` (guaranteed coverage). The Monte Carlo
    methods use ``draws`` posterior or bootstrap draws per interval (a grid parameter: 250
    on the quick grid, where no claim is about them, 2,000 on the full one); their
    randomness comes from the cell's stream (an entropy drawn in `generate`), the same for
    every method of a cell; a Monte Carlo
    method's two-sided interval and its LOSCI are read from the same draws, made once
    (`estimators.F1Estimate.confidence_intervals`). A user method
    (``--method module:callable``) has ``f1_ci``'s signature without ``method``:
    ``ci(tp, fp, fn, tn, *, confidence_level, alternative, design, population_sizes, rng,
    draws) -> (low, high)`` on int arrays, e.g. ``functools.partial(f1_ci, method="delta")``;
    it is assessed two-sided.

    **Undefined intervals.** Where a method returns nan (F1 undefined, ``2 tp + fp + fn = 0``,
    for the approximate methods; also ``F1 = 0`` or ``1`` for logit-delta; the one-design
    methods always return an interval) the interval counts as **not covering**, the
    conservative choice: it is replaced by ``[0, 0]``, which cannot cover since every
    population F1 here is >= 0.3, and has width 0. The share of undefined
    intervals is reported as the ``rejection`` measure (the mean of a per-replicate boolean,
    with its MCSE); read ``width`` (which averages over all replicates) together with it.
Performance measures
    Coverage, mean width and the undefined share, each with its Monte Carlo SE (Morris et al.
    2019, Table 6). `STUDY` runs on the Monte Carlo path (replicates drawn vectorized:
    one multinomial or two binomial calls per cell; the Monte Carlo methods' draws are made in
    chunks of `CHUNK` replicates). The deterministic methods (``DETERMINISTIC``: delta,
    logit-delta and the one-design methods) are also computed **exactly** for ``n <= 1000``
    by `studies.suite.coverage_f1_exact`; on the cells both studies share, the Monte Carlo
    coverage agrees with the exact one to within its MCSE
    (``tests/studies/suite/test_study_coverage_f1.py``).

References
----------
Bagdouri, M., Webber, W., Lewis, D. D. & Oard, D. W. (2013). Towards minimizing the annotation
cost of certified text classification. CIKM. Section 4.3 (Jeffreys Beta posteriors), section
5.1 (RCV1-v2 prevalences), Table 1 (the LOSCI-based certification test passes at its nominal
rate, the claim this study checks interval by interval), Appendix A (delta-method variance).
Morris, T. P., White, I. R. & Crowther, M. J. (2019). Using simulation studies to evaluate
statistical methods. *Statistics in Medicine* 38, 2074-2102 (ADEMP; MCSE, Table 6).
Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation for a binomial proportion.
*Statistical Science* 16, 101-133 (the Wald-type intervals' erratic coverage at small ``n pi``,
which the delta interval inherits).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from estimators import F1_METHODS, F1_METHODS_BY_DESIGN, f1_ci, f1_estimate
from studies.engine import StudyResult, mean_over_cells
from studies.engine.claims import Claim
from studies.engine.design import Figure, Grid, Method, Params, Recommendation, Sample, Study
from studies.engine.findings import estimate
from studies.engine.performance import Estimates

__all__ = ["APPROXIMATE", "CHUNK", "CLAIMS", "CLOPPER_PEARSON", "DETERMINISTIC", "FEW_RELEVANT",
           "MANY_RELEVANT", "MEASURES", "ONE_DESIGN", "STUDY", "allocation", "applies",
           "cell_proportions", "coverage_by_n", "findings", "generate", "methods",
           "population_sizes", "summary", "summary_table", "truth", "undercovering_cells",
           "wrap_method"]

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

CHUNK = 1_000  # replicates per f1_ci call: bounds the draws x replicates arrays' memory
POPULATION = 10**6  # nominal segment sizes giving the stratified estimators the exact q
# the methods of the paper and the resampling peers, run under both designs
APPROXIMATE = ("delta", "logit-delta", "beta-posterior", "bootstrap")
# deterministic intervals of one design each (`F1_METHODS_BY_DESIGN`), run only in its cells
# (`applies`): the Clopper-Pearson ones guarantee the nominal coverage, the others are their
# Wilson, Jeffreys and Bayesian peers
ONE_DESIGN = ("jaccard-clopper-pearson", "jaccard-wilson", "jaccard-jeffreys",
              "dirichlet-posterior", "segments-clopper-pearson")
# the guaranteed interval of each design: srs, stratified
CLOPPER_PEARSON = ("jaccard-clopper-pearson", "segments-clopper-pearson")
DETERMINISTIC = ("delta", "logit-delta", *ONE_DESIGN)
_MONTE_CARLO = ("beta-posterior", "bootstrap")  # f1_ci's methods that draw (`rng`, `draws`)
_SIDES = ("two-sided", "greater")  # each method's two intervals: two-sided and its LOSCI


def cell_proportions(params: Params) -> NDArray[np.float64]:
    """Population proportions ``(tp, fp, fn, tn)`` of a cell (precision = recall = F1)."""
    prevalence, f1 = float(params["prevalence"]), float(params["f1"])
    if not (0.0 < prevalence <= 0.5 and 0.0 < f1 < 1.0):
        raise ValueError(f"`prevalence` must be in (0, 0.5] and `f1` in (0, 1); got "
                         f"{prevalence!r} and {f1!r}.")
    error = prevalence * (1.0 - f1)
    return np.array([f1 * prevalence, error, error, 1.0 - prevalence * (2.0 - f1)])


def truth(params: Params) -> float:
    """The estimand: population F1 (> 0, so the ``[0, 0]`` stand-in never covers it)."""
    return float(params["f1"])


def allocation(params: Params) -> tuple[int, int]:
    """Proportional allocation ``(n1, n0)`` of the stratified design, >= 1 in each segment."""
    n = int(params["n"])
    n1 = min(max(round(n * float(params["prevalence"])), 1), n - 1)
    return n1, n - n1


def population_sizes(params: Params) -> tuple[int, int] | None:
    """``(N1, N0)`` with ``N1 / (N1 + N0) = q`` for the stratified design; None for SRS."""
    if params["design"] != "stratified":
        return None
    retrieved = round(POPULATION * float(params["prevalence"]))
    return retrieved, POPULATION - retrieved


def generate(params: Params, n_replicates: int, *, rng: Any = None) -> Sample:
    """``n_replicates`` test samples as rows ``(tp, fp, fn, tn)``, and the methods' entropy."""
    gen = np.random.default_rng(rng)
    tp_p, fp_p, fn_p, _ = cell_proportions(params)
    if params["design"] == "srs":
        counts = gen.multinomial(int(params["n"]), cell_proportions(params), size=n_replicates)
    else:
        n1, n0 = allocation(params)
        tp = gen.binomial(n1, tp_p / (tp_p + fp_p), size=n_replicates)
        fn = gen.binomial(n0, fn_p / (1.0 - tp_p - fp_p), size=n_replicates)
        counts = np.column_stack([tp, n1 - tp, fn, n0 - fn])
    entropy = int(gen.integers(2**63))
    return Sample(data=(counts.astype(np.int64), entropy), size=n_replicates)


def _intervals(ci: Callable[..., Any], alternative: str, data: tuple[IntArray, int],
               params: Params) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    counts, entropy = data
    gen = np.random.default_rng(entropy)
    kwargs = {"confidence_level": float(params["confidence_level"]), "alternative": alternative,
              "design": params["design"], "population_sizes": population_sizes(params),
              "rng": gen, "draws": int(params.get("draws", CHUNK))}
    lows, highs = [], []
    for start in range(0, counts.shape[0], CHUNK):
        block = counts[start:start + CHUNK]
        low, high = ci(block[:, 0], block[:, 1], block[:, 2], block[:, 3], **kwargs)
        lows.append(np.asarray(low, dtype=np.float64))
        highs.append(np.asarray(high, dtype=np.float64))
    return np.concatenate(lows), np.concatenate(highs)


def _sides_from_one_draw(method: str, data: tuple[IntArray, int], params: Params
                         ) -> dict[str, tuple[FloatArray, FloatArray]]:
    """A Monte Carlo method's two-sided intervals and LOSCIs, both sides from the same draws.

    Those of `_intervals` with ``f1_ci`` for either side, bit for bit: the chunks are bounded
    with the same generator in the same order, and each chunk's draws serve both sides.
    """
    counts, entropy = data
    gen = np.random.default_rng(entropy)
    level, draws = float(params["confidence_level"]), int(params.get("draws", CHUNK))
    bounds: dict[str, tuple[list[FloatArray], list[FloatArray]]] = {
        side: ([], []) for side in _SIDES}
    for start in range(0, counts.shape[0], CHUNK):
        block = counts[start:start + CHUNK]
        est = f1_estimate(block[:, 0], block[:, 1], block[:, 2], block[:, 3],
                          design=params["design"], population_sizes=population_sizes(params))
        for side, ci in zip(_SIDES, est.confidence_intervals(
                level, method=method, alternatives=_SIDES, rng=gen, draws=draws), strict=True):
            bounds[side][0].append(np.asarray(ci.low, dtype=np.float64))
            bounds[side][1].append(np.asarray(ci.high, dtype=np.float64))
    return {side: (np.concatenate(lows), np.concatenate(highs))
            for side, (lows, highs) in bounds.items()}


# A Monte Carlo method's intervals of the cell last analysed, both sides, until the other side
# takes them: the engine runs the method and its LOSCI on the same data, one after the other,
# and the draws are most of a cell's cost.
_DRAWN: dict[str, tuple[tuple[IntArray, int], dict[str, Any],
                        dict[str, tuple[FloatArray, FloatArray]]]] = {}


def _analyse_drawn(method: str, alternative: str, data: tuple[IntArray, int],
                   params: Params) -> Estimates:
    """`_analyse` of ``f1_ci`` with a Monte Carlo ``method``, drawing once for both sides."""
    kept = _DRAWN.pop(method, None)
    # the very data object (and params) of the kept intervals: the same cell's, not a copy's
    if kept is not None and kept[0] is data and kept[1] == params:
        sides = kept[2]
    else:
        sides = _sides_from_one_draw(method, data, params)
        _DRAWN[method] = (data, dict(params), sides)
    return _estimates(*sides[alternative])


def _estimates(low: FloatArray, high: FloatArray) -> Estimates:
    undefined = np.isnan(low) | np.isnan(high)
    # an undefined interval counts as not covering: [0, 0] misses every F1 > 0
    return Estimates(low=np.where(undefined, 0.0, low), high=np.where(undefined, 0.0, high),
                     reject=undefined)


def _analyse(ci: Callable[..., Any], alternative: str, data: tuple[IntArray, int],
             params: Params) -> Estimates:
    return _estimates(*_intervals(ci, alternative, data, params))


def wrap_method(ci: Callable[..., Any], alternative: str = "two-sided") -> Method:
    """A `Method` from ``ci(tp, fp, fn, tn, **f1_ci keywords but method) -> (low, high)``."""
    return functools.partial(_analyse, ci, alternative)


def methods(names: Sequence[str]) -> dict[str, Method]:
    """Each ``f1_ci`` method in ``names``, two-sided and as its LOSCI (``name-losci``).

    The Monte Carlo methods (``beta-posterior``, ``bootstrap``) draw once per cell for both
    (`_analyse_drawn`); their intervals are those of ``f1_ci`` called for each.
    """
    methods: dict[str, Method] = {}
    for name in names:
        if name in _MONTE_CARLO:
            methods[name] = functools.partial(_analyse_drawn, name, "two-sided")
            methods[f"{name}-losci"] = functools.partial(_analyse_drawn, name, "greater")
            continue
        ci = functools.partial(f1_ci, method=name)
        methods[name] = wrap_method(ci)
        methods[f"{name}-losci"] = wrap_method(ci, "greater")
    return methods


def applies(method: str, params: Params) -> bool:
    """Whether the cell's design admits ``method`` (an ``f1_ci`` method or its LOSCI).

    Methods other than ``f1_ci``'s (a copy of the study may add its own) run in every cell.
    """
    name = method.removesuffix("-losci")
    return name not in F1_METHODS or name in F1_METHODS_BY_DESIGN[params["design"]]


MEASURES = ("coverage", "width", "rejection")
# Replicates are powers of 2: the engine's weights 1/R are then exact, so a share of 1 (every
# LOSCI covering) sums to exactly 1; with R = 1000 it sums to 1 + 4e-16 and the engine's
# MCSE sqrt(c (1 - c) / R) fails with a math domain error.

def _cell_rows(result: StudyResult, method: str | None = None) -> list[dict[str, Any]]:
    """One row per (cell, method): params, coverage, shortfall, width, undefined share, MCSEs."""
    rows = []
    for cell in result.cells:
        for name, perf in cell.performance.items():
            if method is not None and name != method:
                continue
            cover = perf["coverage"]
            rows.append({"params": dict(cell.params), "method": name,
                         "coverage": cover.value, "coverage_mcse": cover.mcse,
                         "shortfall": float(cell.params["confidence_level"]) - cover.value,
                         "width": perf["width"].value, "undefined": perf["rejection"].value,
                         "undefined_mcse": perf["rejection"].mcse})
    return rows


def _under(row: dict[str, Any], margin: float, z: float) -> bool:
    return bool(row["shortfall"] - margin > z * row["coverage_mcse"])


def summary(result: StudyResult, *, margin: float = 0.01, z: float = 1.96
            ) -> dict[str, dict[str, Any]]:
    """Per method: mean and minimum coverage, largest shortfall, share of under-covering cells.

    Parameters
    ----------
    result : StudyResult
        Results of `STUDY` or `EXACT_STUDY`.
    margin : float
        A cell under-covers when its coverage is below ``nominal - margin`` by more than ``z``
        MCSE (exact path, MCSE = 0: simply below ``nominal - margin``).
    z : float
        Normal quantile applied to each cell's MCSE.

    Returns
    -------
    dict of str to dict
        By method: ``cells``; ``mean_coverage`` and ``mean_coverage_mcse`` (cells independent:
        the root sum of squared MCSEs over the number of cells, `studies.engine.mean_over_cells`;
        a cell without a coverage or an MCSE leaves them undefined); ``min_coverage`` and its
        ``min_coverage_mcse``; ``max_shortfall`` (nominal minus the minimum coverage) and
        ``worst_cell`` (its params); ``share_under`` (share of cells under-covering);
        ``mean_width``; ``mean_undefined`` (share of undefined, hence non-covering,
        intervals) and its MCSE.

    References
    ----------
    Morris, White & Crowther (2019), Statistics in Medicine 38:2074-2102, Table 6.
    """
    by_method: dict[str, list[dict[str, Any]]] = {}
    for row in _cell_rows(result):
        by_method.setdefault(row["method"], []).append(row)
    out = {}
    for method, rows in by_method.items():
        k = len(rows)
        worst = min(rows, key=lambda r: r["coverage"])
        coverage, undefined = (
            mean_over_cells([r[name] for r in rows], [r[f"{name}_mcse"] for r in rows])
            for name in ("coverage", "undefined"))
        out[method] = {
            "cells": k,
            "mean_coverage": coverage.value, "mean_coverage_mcse": coverage.mcse,
            "min_coverage": worst["coverage"], "min_coverage_mcse": worst["coverage_mcse"],
            "max_shortfall": worst["shortfall"], "worst_cell": worst["params"],
            "share_under": sum(_under(r, margin, z) for r in rows) / k,
            "mean_width": sum(r["width"] for r in rows) / k,
            "mean_undefined": undefined.value, "mean_undefined_mcse": undefined.mcse,
        }
    return out


def summary_table(result: StudyResult) -> list[dict[str, Any]]:
    """The run's headline table: `summary` per design and method, one row each.

    ``worst`` is the cell of lowest coverage as ``prevalence/F1/n``.
    """
    rows = []
    designs = dict.fromkeys(str(c.params["design"]) for c in result.cells)
    for design in designs:
        part = StudyResult(result.study, tuple(
            c for c in result.cells if c.params["design"] == design))
        for method, s in summary(part).items():
            cell = s["worst_cell"]
            rows.append({
                "design": design, "method": method, "cells": s["cells"],
                "mean_coverage": s["mean_coverage"], "mean_coverage_mcse": s["mean_coverage_mcse"],
                "min_coverage": s["min_coverage"], "min_coverage_mcse": s["min_coverage_mcse"],
                "worst": f"{cell['prevalence']}/{cell['f1']}/{cell['n']}",
                "share_under": s["share_under"], "mean_width": s["mean_width"],
                "mean_undefined": s["mean_undefined"]})
    return rows


def undercovering_cells(result: StudyResult, *, margin: float = 0.01, z: float = 1.96,
                        method: str | None = None) -> list[dict[str, Any]]:
    """The (cell, method) rows that under-cover (see `summary`), largest shortfall first.

    Each row has the cell's ``params``, ``method``, ``coverage`` and ``coverage_mcse``,
    ``shortfall`` (nominal minus coverage), ``width``, ``undefined`` and ``undefined_mcse``.
    """
    rows = [r for r in _cell_rows(result, method) if _under(r, margin, z)]
    return sorted(rows, key=lambda r: -r["shortfall"])


# One cell's coverage at the quick grid's 1,024 replicates (or the full grid's 4,096) cannot
# decide a shortfall of 2 points; its mean over the populations (prevalence and F1) at each
# design and n can, on both grids. `studies.suite.coverage_f1_exact` judges the cells one by
# one, exactly (`coverage_f1_exact.CELLWISE_CLAIMS`).
_POPULATIONS = ("prevalence", "f1")
MANY_RELEVANT = "n * prevalence >= 50"  # at least 50 relevant documents expected
FEW_RELEVANT = "n * prevalence < 10"

CLAIMS = (
    Claim("clopper-pearson-nominal-on-average",
          "Averaged over prevalence and F1 at each design and n, the Clopper-Pearson-based "
          "intervals, jaccard-clopper-pearson under simple random sampling and "
          "segments-clopper-pearson under stratified sampling, two-sided and LOSCI, cover at "
          "least the nominal level: each cell's coverage is guaranteed, so their mean is too.",
          tuple(f"{m}{side}" for m in CLOPPER_PEARSON for side in ("", "-losci")), "coverage",
          "at_least", target="confidence_level", mean_over=_POPULATIONS, pins=("validity",)),
    Claim("segments-clopper-pearson-conservative",
          "Under stratified sampling the segments-clopper-pearson intervals, two-sided and "
          "LOSCI, cover at least 3 points above the nominal level (98%) averaged over "
          "prevalence and F1 at each n: the Bonferroni combination of the two segments' "
          "intervals is conservative.",
          ("segments-clopper-pearson", "segments-clopper-pearson-losci"), "coverage",
          "at_least", target="confidence_level", margin=-0.03, where="design == 'stratified'",
          mean_over=_POPULATIONS, pins=("validity",)),
    Claim("logit-delta-near-nominal-on-average-with-many-relevant",
          "With at least 50 expected relevant documents, the logit-delta intervals (two-sided "
          "and LOSCI) cover at least 94% averaged over prevalence and F1 at each design and n.",
          ("logit-delta", "logit-delta-losci"), "coverage", "at_least",
          target="confidence_level", margin=0.01, where=MANY_RELEVANT, mean_over=_POPULATIONS,
          pins=("validity",)),
    Claim("posterior-and-bootstrap-near-nominal-with-many-relevant",
          "With at least 50 expected relevant documents, the beta-posterior and bootstrap "
          "intervals (two-sided and LOSCI) cover within 3 points of the nominal level "
          "averaged over prevalence and F1 at each design and n (full grid: 93.2% at the "
          "least, beta-posterior two-sided at n = 100; 95.8% at the most): their promise is "
          "a large-count one.",
          ("beta-posterior", "beta-posterior-losci", "bootstrap", "bootstrap-losci"),
          "coverage", "within", target="confidence_level", margin=0.03, where=MANY_RELEVANT,
          mean_over=_POPULATIONS, resolution=0.025, pins=("validity", "efficiency")),
)

_LOSCI = ("delta-losci", "logit-delta-losci", "beta-posterior-losci", "bootstrap-losci")


def coverage_by_n(caption: str, design: str, methods: Sequence[str] | None = None) -> Figure:
    """The figure of coverage against n, a panel per prevalence, at F1 = 0.7 under a design."""
    options: dict[str, Any] = {"measure": "coverage", "x": "n", "panel_by": "prevalence",
                               "reference": 0.95, "log_x": True}
    if methods is not None:
        options["methods"] = tuple(methods)
    return Figure("measure_by", caption, where=f"design == '{design}' and f1 == 0.7",
                  options=options)


FIGURES = (
    coverage_by_n(
        "Coverage of the LOSCIs against n under simple random sampling, F1 = 0.7, a panel per "
        "prevalence: the four approximate ones, jaccard-clopper-pearson's (guaranteed) and "
        "dirichlet-posterior's. The dashed line is the nominal 95%.", "srs",
        (*_LOSCI, "jaccard-clopper-pearson-losci", "dirichlet-posterior-losci")),
    coverage_by_n(
        "The same under stratified sampling: the four approximate LOSCIs and "
        "segments-clopper-pearson's (guaranteed).", "stratified",
        (*_LOSCI, "segments-clopper-pearson-losci")),
    Figure("zip_plot",
           "Zip plot of the delta LOSCI at n = 50, prevalence 0.5, F1 0.7 (simple random "
           "sampling): the replicates' intervals ranked by their lower bound, the misses "
           "(vermillion) those whose lower bound lies above the true F1, and the coverage "
           "with its band (dotted) against the dashed 95% line.",
           where="design == 'srs' and prevalence == 0.5 and f1 == 0.7 and n == 50",
           options={"method": "delta-losci"}),
)


_DESIGNS = {"srs": "Simple random sampling", "stratified": "Stratified sampling"}


def _frame(result: StudyResult, measure: str) -> pd.DataFrame:
    """The run's values of ``measure``, every method and cell (tidy columns)."""
    return pd.concat(list(result.frames(measures=[measure])), ignore_index=True)


def _lowest(frame: pd.DataFrame, method: str) -> str:
    """A method's lowest value in ``frame``, with its MCSE and cell."""
    rows = frame[frame["method"] == method]
    row = rows.loc[rows["value"].idxmin()]
    return (f"{estimate(float(row['value']), float(row['mcse']))} (prevalence "
            f"{row['prevalence']:g}, F1 {row['f1']:g}, n = {row['n']:g})")


def findings(result: StudyResult, summary: Sequence[Mapping[str, Any]]) -> list[str]:
    """The run's findings, each number read from the run or its summary (`summary_table`).

    Per design: the coverage of each guaranteed (Clopper-Pearson) interval, on average and at
    its lowest; the lowest coverage of the other LOSCIs with few (``n x prevalence < 10``) and
    with many (``>= 50``) relevant documents expected; and the width the guarantee costs there
    against the delta LOSCI.
    """
    coverage, width = _frame(result, "coverage"), _frame(result, "width")
    by_method = {(str(r["design"]), str(r["method"])): r for r in summary}
    sentences = []
    for design in dict.fromkeys(str(r["design"]) for r in summary):
        name = CLOPPER_PEARSON[0] if design == "srs" else CLOPPER_PEARSON[1]
        label = _DESIGNS.get(design, design)
        here = coverage[coverage["design"] == design]
        guaranteed = [f"{method} {estimate(row['mean_coverage'], row['mean_coverage_mcse'])} "
                      f"on average, {_lowest(here, method)} at lowest"
                      for method in (name, f"{name}-losci")
                      if (row := by_method.get((design, method))) is not None]
        if guaranteed:
            sentences.append(f"**{label}**: the guaranteed intervals cover "
                             f"{'; '.join(guaranteed)}.")
        others = [m for m in dict.fromkeys(here["method"]) if m.endswith("-losci")
                  and m != f"{name}-losci"]
        for expected, region in (("fewer than 10", FEW_RELEVANT),
                                 ("at least 50", MANY_RELEVANT)):
            part = here.query(region)
            shown = [f"{method} {_lowest(part, method)}" for method in others
                     if (part["method"] == method).any()]
            if shown:
                sentences.append(f"**{label}**, {expected} relevant documents expected: the "
                                 f"other LOSCIs' lowest coverage: {'; '.join(shown)}.")
        many = width[(width["design"] == design)].query(MANY_RELEVANT)
        means = many.groupby("method")["value"].mean()
        if {f"{name}-losci", "delta-losci"} <= set(means.index):
            sentences.append(
                f"**{label}**, at least 50 relevant documents expected: the {name} LOSCI's "
                f"lower bound sits {means[f'{name}-losci'] - means['delta-losci']:.3f} below "
                f"delta's on average (mean width {means[f'{name}-losci']:.3f} against "
                f"{means['delta-losci']:.3f}).")
    return sentences


STUDY = Study(
    name="coverage_f1",
    ademp=__doc__,
    version="2",
    grids={
        "quick": Grid({"design": ["srs", "stratified"], "prevalence": [0.03, 0.15, 0.5],
                       "f1": [0.3, 0.7, 0.95], "n": [50, 500], "confidence_level": [0.95],
                       "draws": [250]}, n_replicates=1_024, task_seconds=0.5),
        "full": Grid({"design": ["srs", "stratified"],
                      "prevalence": [0.03, 0.05, 0.1, 0.2, 0.3, 0.5],
                      "f1": [0.3, 0.5, 0.7, 0.8, 0.9, 0.95],
                      "n": [50, 100, 200, 500, 1000, 2000, 5000], "confidence_level": [0.95],
                      "draws": [2_000]}, n_replicates=2_048, task_seconds=2.1),
    },
    truth=truth,
    generate=generate,
    methods=methods((*APPROXIMATE, *ONE_DESIGN)),
    measures=MEASURES,
    wrap_method=wrap_method,
    applies=applies,
    parameter_space=(0.0, 1.0),
    summary=summary_table,
    claims=CLAIMS,
    estimator_methods={f"{name}{side}": f"f1_ci:{name}" for name in (*APPROXIMATE, *ONE_DESIGN)
                       for side in ("", "-losci")},
    recommendations=(
        Recommendation(
            "Use the approximate F1 intervals (logit-delta, beta-posterior, bootstrap) only "
            "where the test sample holds many relevant documents: near nominal there on "
            "average, not in every cell, and not for certification.",
            ("logit-delta-near-nominal-on-average-with-many-relevant",
             "posterior-and-bootstrap-near-nominal-with-many-relevant")),
    ),
    figures=FIGURES,
    findings=findings,
)
