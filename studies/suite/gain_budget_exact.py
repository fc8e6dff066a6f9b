"""Exact coverage of the gain-budget intervals, hypergeometric and binomial, cell by cell.

Aims
    `studies.suite.gain_budget` measures by Monte Carlo how well the budget questions of
    Klubička et al. (2018, seed 002) can be answered from a labelled test sample: the
    positives a budget of ``B`` items buys (`estimators.BudgetPositives`) and the cumulative
    gain at decile ``k`` (`estimators.CumulativeGainEstimate`). Two of its intervals are
    functions of two counts of the sample, so their coverage can be computed exactly, in every
    cell and with no Monte Carlo error to allow for (on gain_budget's quick grid Monte Carlo
    would need more replicates than that grid can run to decide it cell by cell). Does the
    exact (hypergeometric) interval for the positives, whose coverage is guaranteed given the
    sampled items in the top set, cover at least 95% in every cell? Does the Clopper-Pearson
    (binomial) interval, for the positives and for the gain, which ignores that the sample is
    drawn without replacement? How close to nominal does each come, and where?
Data-generating mechanisms
    gain_budget's fixed population (``N = 20,910`` items, ``P = 4,140`` positive, the rankers
    M1-M3 of `gain_budget.RANKERS`) and its model cells: ``n`` (the test sample, a simple
    random sample without replacement) x ``k`` (the budget: the top ``k`` deciles, ``B =
    floor(k N / 10)`` items) x ``model`` (M1, M2, M3) x ``estimand`` x ``confidence_level``
    (0.95). Quick: ``n`` 100, 500 x ``k`` 1, 2, 5 (36 cells; ``n = 1000`` would take the
    quick suite 15 s more). Full: ``n`` 100, 200, 500,
    1000, 2000 x ``k`` 1, 2, 3, 5 (120 cells). The intervals read the sample through two
    counts (`gain_budget.joint_law`): for the ``positives``, ``n_B ~ Hypergeometric(N, B,
    n)``, the sampled items in the top set, and ``x | n_B ~ Hypergeometric(B, K, n_B)``, the
    positives among them; for the ``gain``, ``m ~ Hypergeometric(N, P, n)``, the sampled
    positives, and ``x | m ~ Hypergeometric(P, K, m)``, those in the top set. **Exact path**:
    every outcome ``(n_B, x)`` or ``(m, x)`` is enumerated with its probability, as
    `gain_budget.exact_coverage` does: the values of ``n_B`` (``m``), then the pairs, of
    probability at most 1e-15 (`gain_budget.NEGLIGIBLE`) are left out, at most 2e-12 of the
    weight in any cell of the full grid (by scipy's hypergeometric laws). The law's log-gamma
    arithmetic leaves the sum of the kept weights within 5.1e-11 of 1; the engine renormalises
    each cell's weights to sum to 1. The three models' cells of one ``(n, k, estimand)`` share
    their outcomes (the union of their kept pairs; a pair left out of a cell weighs 0 there)
    and their intervals, which do not depend on the model (``estimates_depend_on``). Coverage
    therefore has no Monte Carlo error. **Monte Carlo path** (``--path monte-carlo``): the two
    counts drawn from the same two hypergeometric laws, 10,000 replicates a cell.
Estimands
    As in gain_budget's model cells (`gain_budget.truth`): ``positives``, ``K``, the positives
    among the model's top ``B`` items; ``gain``, ``G = K / P``, its cumulative gain at decile
    ``k``.
Methods
    gain_budget's intervals (95%, two-sided), by the same `estimators` calls
    (`gain_budget.outcome_estimator`, `gain_budget.interval`): ``hypergeometric``, for the
    positives only (exact inversion given ``n_B``; `applies` keeps it out of the gain cells),
    and ``binomial``: Clopper-Pearson on ``x`` of ``n_B`` scaled by ``B`` for the positives, on
    ``x`` of ``m`` for the gain. The gain's binomial interval reads ``x`` and ``m`` alone, so
    an outcome leaves the rest of the sample's split unstated. Where ``n_B = 0`` (``m = 0``)
    every interval is ``[0, B]`` (``[0, 1]``), as `estimators` gives it.
Performance measures
    Coverage and mean width, exact (MCSE 0); no bias, since the intervals carry no point
    estimate here (gain_budget measures its point estimators' bias). The findings (`findings`)
    give the lowest coverage of each interval over the run and the cell where it lies.

References
----------
Klubička, F., Salton, G. D. & Kelleher, J. D. (2018). Is it worth it? Budget-related evaluation
metrics for model selection (seed 002): sections 3.1 and 4. Clopper, C. J. & Pearson, E. S.
(1934). *Biometrika* 26, 404-413. Buonaccorsi, J. P. (1987). *The American Statistician* 41,
215-218. Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed., Wiley: section 3.2. Morris,
T. P., White, I. R. & Crowther, M. J. (2019). *Statistics in Medicine* 38, 2074-2102.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from studies.engine import StudyResult
from studies.engine.claims import Claim
from studies.engine.design import Figure, Grid, Method, Params, Sample, Study
from studies.engine.findings import extreme
from studies.engine.performance import Estimates
from studies.suite import gain_budget as gb

__all__ = ["CLAIMS", "FIGURES", "INTERVALS", "METHODS", "STUDY", "Outcomes", "applies",
           "enumerate_outcomes", "findings", "generate"]

IntArray = NDArray[np.int64]

# Which interval runs for which estimand (gain_budget's, without the bootstrap).
INTERVALS: Mapping[str, tuple[str, ...]] = {"positives": ("hypergeometric", "binomial"),
                                            "gain": ("binomial",)}


class Outcomes(NamedTuple):
    """Samples as the intervals read them: ``drawn`` is ``n_B`` (positives) or ``m`` (gain),
    ``hits`` is ``x``; one row per outcome (or replicate)."""

    drawn: IntArray
    hits: IntArray


def _split(params: Params) -> int:
    """The part of the population the first count samples from, which the second count's law
    draws within: the top set (``B`` items) for the positives, the positives (``P``) for the
    gain."""
    return gb.set_size(int(params["k"])) if params["estimand"] == "positives" \
        else gb.N_POSITIVES


def enumerate_outcomes(cells: Sequence[Params]) -> Sample:
    """Every ``(n_B, x)`` or ``(m, x)`` of the cells (one ``n``, ``k`` and estimand; any model)
    with its probability in each cell, from `gain_budget.joint_law`.

    A pair of probability at most `gain_budget.NEGLIGIBLE` in a cell weighs 0 there (as
    `gain_budget.exact_coverage` leaves it out); the outcomes are the pairs kept in some
    cell, ordered by the first count then ``x``. The weights are not renormalised here: the
    engine does it.
    """
    first = cells[0]
    n, k = int(first["n"]), int(first["k"])
    part = _split(first)
    laws = [gb.joint_law(gb.N_ITEMS, part, n, part,
                         gb.model_truth(str(params["model"]), k).positives) for params in cells]
    drawn, hits = laws[0][0], laws[0][1]  # the first count's law is not the model's: shared
    probability = np.stack([outer[:, None] * inner for _, _, outer, inner in laws])
    probability[probability <= gb.NEGLIGIBLE] = 0.0
    rows, columns = np.nonzero(probability.any(axis=0))
    return Sample(data=Outcomes(drawn[rows].astype(np.int64), hits[columns].astype(np.int64)),
                  size=rows.size, probability=probability[:, rows, columns])


def generate(params: Params, n_replicates: int, *, rng: Any = None) -> Sample:
    """Monte Carlo path: the two counts drawn from their hypergeometric laws."""
    gen = np.random.default_rng(rng)
    part = _split(params)
    marked = gb.model_truth(str(params["model"]), int(params["k"])).positives
    drawn = gen.hypergeometric(part, gb.N_ITEMS - part, int(params["n"]), size=n_replicates)
    hits = gen.hypergeometric(marked, part - marked, drawn)
    return Sample(data=Outcomes(drawn.astype(np.int64), hits.astype(np.int64)),
                  size=n_replicates)


def _interval(method: str, data: Outcomes, params: Params) -> Estimates:
    """gain_budget's interval ``method`` at each outcome."""
    est = gb.outcome_estimator(str(params["estimand"]), int(params["n"]), int(params["k"]),
                               data.drawn, data.hits)
    return gb.interval(method, est, params)


METHODS: Mapping[str, Method] = {name: functools.partial(_interval, name)
                                 for name in ("hypergeometric", "binomial")}


def applies(method: str, params: Params) -> bool:
    """``hypergeometric`` for the positives only; ``binomial`` for both estimands."""
    return method in INTERVALS[str(params["estimand"])]


_POSITIVES = "estimand == 'positives'"

CLAIMS = (
    Claim("hypergeometric-covers",
          "The exact (hypergeometric) interval for the positives a budget buys covers at "
          "least 95% in every cell, exactly: given the sampled items in the top set, its "
          "coverage is guaranteed.",
          ("hypergeometric",), "coverage", "at_least", target="confidence_level",
          where=_POSITIVES, pins=("validity",)),
    Claim("binomial-covers",
          "The Clopper-Pearson intervals, for the positives bought (the set's precision "
          "scaled by B) and for the cumulative gain (x of the m sampled positives), cover at "
          "least 95% in every cell, exactly: sampling without replacement only makes them "
          "wider.",
          ("binomial",), "coverage", "at_least", target="confidence_level", pins=("validity",)),
)


def _by_budget(caption: str, method: str, estimand: str) -> Figure:
    """Exact coverage of one interval against ``n``, a line per budget, a panel per model."""
    return Figure("measure_by", caption, where=f"estimand == '{estimand}'",
                  options={"measure": "coverage", "x": "n", "hue": "k", "panel_by": "model",
                           "methods": (method,), "reference": gb.LEVEL, "log_x": True,
                           "title": f"gain_budget_exact: exact coverage of the {method} "
                                    f"interval for the {estimand}, a line per budget k"})


FIGURES = (
    _by_budget("Exact coverage of the hypergeometric interval for the positives a budget buys, "
               "against the test sample's size, a line per budget (k deciles), a panel per "
               "model. The dashed line is the nominal 95%: the guaranteed interval comes "
               "nearest it with large samples and large budgets.", "hypergeometric",
               "positives"),
    _by_budget("The same for the binomial (Clopper-Pearson) interval for the positives, "
               "scaled by B.", "binomial", "positives"),
    _by_budget("The binomial interval for the cumulative gain (x of the m sampled positives). "
               "Where the top set holds every positive (G = 1) it always covers.", "binomial",
               "gain"),
)


def findings(result: StudyResult, summary: Sequence[Mapping[str, Any]]) -> list[str]:
    """The lowest exact coverage of each interval over the run, and where."""
    return [f"Lowest coverage of the {method} interval for the {estimand}: "
            f"{extreme(result, method, 'coverage', where=f'estimand == {estimand!r}', digits=4)}."
            for estimand, methods in INTERVALS.items() for method in methods]


# A task is the three models' cells of one (n, k, estimand): 0.01 s for the gain, 0.1-45 s
# for the positives, whose exact intervals take the longer the larger the budget and n (one
# core: the quick grid's 12 tasks 33 s, the full grid's 40 tasks 160 s).
_GRIDS = {"quick": ({"n": [100, 500], "k": [1, 2, 5]}, 2.8),
          "full": ({"n": [100, 200, 500, 1000, 2000], "k": [1, 2, 3, 5]}, 4.0)}

STUDY = Study(
    name="gain_budget_exact",
    ademp=__doc__,
    version="1",
    grids={name: Grid({**sizes, "model": list(gb.MODELS), "estimand": ["positives", "gain"],
                       "confidence_level": [gb.LEVEL]}, n_replicates=10_000,
                      task_seconds=seconds)
           for name, (sizes, seconds) in _GRIDS.items()},
    truth=gb.truth,
    generate=generate,
    methods=METHODS,
    measures=("coverage", "width"),
    enumerate_outcomes=enumerate_outcomes,
    estimates_depend_on=("n", "k", "estimand", "confidence_level"),
    applies=applies,
    claims=CLAIMS,
    estimator_methods={
        "hypergeometric": "budget_positives:hypergeometric",
        "binomial": ((_POSITIVES, "budget_positives:binomial"),
                     ("estimand == 'gain'", "cumulative_gain_estimate:binomial"))},
    figures=FIGURES,
    findings=findings,
)
