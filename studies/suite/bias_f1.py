"""Bias of the plug-in F1 estimator by test size.

Aims
    Measure, without Monte Carlo error, the bias, empirical SE and MSE of the plug-in estimator
    ``F^ = 2 tp / (2 tp + fp + fn)`` of population F1 from a simple random test sample of size
    ``n``. It is a ratio estimator: biased at small ``n``, with a bias that shrinks roughly as
    ``1 / n`` (Bagdouri et al. 2013, Appendix A, whose delta-method variance is the first term
    of the same expansion). The model SE of the delta-method variance is reported beside it.
Data-generating mechanisms
    Test counts ``(tp, fp, fn, tn) ~ Multinomial(n; pi F, pi (1 - F), pi (1 - F), 1 - pi (2 - F))``:
    prevalence ``pi`` and a classifier with precision = recall = ``F``, so population F1 is
    ``F``. ``F^`` depends on ``(tp, e = fp + fn)`` only, so the **exact path** enumerates the
    trinomial ``(tp, e, tn)`` (``(n + 1)(n + 2) / 2`` outcomes). The outcomes and estimates
    depend on ``n`` alone (``estimates_depend_on``); every ``(pi, F)`` cell at one ``n`` is
    analysed in one pass. Quick grid: ``n`` in 10, 30, 100, 300 x ``pi`` in 0.05, 0.2, 0.5 x
    ``F`` in 0.5, 0.8 (24 cells). Full grid: ``n`` in 10-1,000 (8 values) x ``pi`` in 0.03-0.5
    (the RCV1-v2 topic range of seed 000, 3.1%-47.4%) x ``F`` in 0.3-0.95 (240 cells).
Estimands
    Population F1, ``F``.
Methods
    ``plug-in``: ``f1_estimate(..., design="srs")``, its estimate and the square root of its
    delta-method variance as model SE. F1 is undefined (``2 tp + e = 0``) with probability
    ``(1 - pi (2 - F))^n``; the measures are **conditional on F1 being defined** (those
    outcomes are dropped and the probabilities renormalised), since no report gives a number
    then. A user method (``--method module:callable``) is ``estimator(tp, errors, n) ->
    estimates``, with ``tp`` and ``errors = fp + fn`` int arrays.
Performance measures
    Bias, relative bias, empirical SE, MSE, model SE and its relative error (Morris et al.
    2019, Table 6); exact, so every MCSE is 0.

References
----------
Bagdouri, M., Webber, W., Lewis, D. D. & Oard, D. W. (2013). Towards minimizing the annotation
cost of certified text classification. *CIKM* (seed 000), Appendix A. Morris, T. P., White,
I. R. & Crowther, M. J. (2019). Using simulation studies to evaluate statistical methods.
*Statistics in Medicine* 38, 2074-2102.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

from estimators import f1_estimate
from studies.engine import StudyResult
from studies.engine.claims import Claim
from studies.engine.design import Figure, Grid, Method, Params, Sample, Study
from studies.engine.findings import extreme
from studies.engine.performance import Estimates

__all__ = ["STUDY", "cell_probabilities"]

Array = NDArray[np.float64]


def truth(params: Params) -> float:
    """The estimand: population F1 ``F``."""
    return float(params["f1"])


def cell_probabilities(prevalence: float, f1: float) -> tuple[float, float, float]:
    """Probabilities of a true positive, an error (fp or fn) and a true negative.

    Precision = recall = ``F`` gives ``P(tp) = pi F`` and ``P(fp) = P(fn) = pi (1 - F)``.
    """
    tp = prevalence * f1
    errors = 2.0 * prevalence * (1.0 - f1)
    return tp, errors, 1.0 - tp - errors


def _defined_outcomes(n: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Every ``(tp, e)`` with ``tp + e <= n`` except ``(0, 0)`` (F1 undefined)."""
    tp, e = np.triu_indices(n + 1)
    e = e - tp  # (i, j) with i <= j -> (tp = i, e = j - i): tp + e <= n
    keep = (tp + e) > 0
    return tp[keep], e[keep]


def _trinomial(n: int, tp: NDArray[np.int64], e: NDArray[np.int64], probs: Array) -> Array:
    """Trinomial pmf of ``(tp, e, n - tp - e)``, one row per cell, in log space."""
    tn = n - tp - e
    log_coef = (special.gammaln(n + 1) - special.gammaln(tp + 1) - special.gammaln(e + 1)
                - special.gammaln(tn + 1))
    log_p = (log_coef + special.xlogy(tp, probs[:, :1]) + special.xlogy(e, probs[:, 1:2])
             + special.xlogy(tn, probs[:, 2:]))
    return np.exp(log_p)


def enumerate_outcomes(cells: Sequence[Params]) -> Sample:
    """Every defined ``(tp, e)`` at the cells' ``n``, with its conditional probability per cell."""
    n = int(cells[0]["n"])
    tp, e = _defined_outcomes(n)
    probs = np.array([cell_probabilities(c["prevalence"], c["f1"]) for c in cells])
    probability = _trinomial(n, tp, e, probs)
    return Sample(data=(tp, e), size=tp.size,
                  probability=probability / probability.sum(axis=1, keepdims=True))


def generate(params: Params, n_replicates: int, *, rng: Any = None) -> Sample:
    """Monte Carlo: ``n_replicates`` trinomial draws, redrawn while F1 is undefined."""
    gen = np.random.default_rng(rng)
    n = int(params["n"])
    probs = np.array(cell_probabilities(params["prevalence"], params["f1"]))
    counts = gen.multinomial(n, probs, size=n_replicates)
    undefined = counts[:, 0] + counts[:, 1] == 0
    while undefined.any():  # conditional on F1 defined, as on the exact path
        counts[undefined] = gen.multinomial(n, probs, size=int(undefined.sum()))
        undefined = counts[:, 0] + counts[:, 1] == 0
    return Sample(data=(counts[:, 0], counts[:, 1]), size=n_replicates)


def _plug_in(data: tuple[Any, Any], params: Params) -> Estimates:
    tp, e = data
    n = int(params["n"])
    # split the errors evenly between fp and fn: F1 and its delta variance use fp + fn only
    est = f1_estimate(tp, e // 2, e - e // 2, n - tp - e)
    return Estimates(estimate=np.asarray(est.estimate, dtype=np.float64),
                     se=np.sqrt(np.asarray(est.variance, dtype=np.float64)))


def _user(estimator: Callable[..., Any], data: tuple[Any, Any], params: Params) -> Estimates:
    tp, e = data
    return Estimates(estimate=np.asarray(estimator(tp, e, int(params["n"])), dtype=np.float64))


def wrap_method(estimator: Callable[..., Any]) -> Method:
    """A `Method` from ``estimator(tp, errors, n) -> estimates`` (int arrays in)."""
    return functools.partial(_user, estimator)


CLAIMS = (
    Claim("plug-in-biased-low",
          "The plug-in F1 estimator is biased low (never above the population F1 on "
          "average) at every test size.",
          ("plug-in",), "bias", "at_most", target=0.0, resolution=0.01, effect=True),
)

FIGURES = (
    Figure("measure_by",
           "The bias of the plug-in F1 of a classifier with F1 = 0.5 against the test size n, "
           "one line per prevalence, beside the dashed zero line.",
           where="f1 == 0.5",
           options={"measure": "bias", "x": "n", "hue": "prevalence", "reference": 0.0}),
    Figure("measure_by",
           "The relative error of the delta-method SE against the plug-in F1's empirical SE "
           "(F1 = 0.5) against n, one line per prevalence; below the dashed zero line it "
           "understates the spread.",
           where="f1 == 0.5",
           options={"measure": "model_se_error", "x": "n", "hue": "prevalence",
                    "reference": 0.0}),
)

def findings(result: StudyResult, summary: Sequence[Mapping[str, Any]]) -> list[str]:
    """Where the plug-in F1 is most biased and its delta SE most wrong, from the run."""
    largest_n = max(int(c.params["n"]) for c in result.expanded().cells)
    at_largest_n = extreme(result, "plug-in", "bias", magnitude=True, largest=True,
                           where=f"n == {largest_n}")
    return [
        f"Largest bias of the plug-in F1 in magnitude: "
        f"{extreme(result, 'plug-in', 'bias', magnitude=True, largest=True)}; at the grid's "
        f"largest n: {at_largest_n}.",
        f"Largest relative error of the delta-method SE against the empirical SE (negative: "
        f"it understates): "
        f"{extreme(result, 'plug-in', 'model_se_error', magnitude=True, largest=True)}.",
    ]


STUDY = Study(
    name="bias_f1",
    ademp=__doc__,
    version="1",
    grids={
        "quick": Grid({"n": [10, 30, 100, 300], "prevalence": [0.05, 0.2, 0.5],
                       "f1": [0.5, 0.8]}, n_replicates=20_000),
        "full": Grid({"n": [10, 20, 50, 100, 200, 300, 500, 1000],
                      "prevalence": [0.03, 0.05, 0.1, 0.2, 0.3, 0.5],
                      "f1": [0.3, 0.5, 0.7, 0.8, 0.95]}, n_replicates=100_000),
    },
    truth=truth,
    generate=generate,
    methods={"plug-in": _plug_in},
    measures=("bias", "relative_bias", "empirical_se", "mse", "model_se", "model_se_error"),
    enumerate_outcomes=enumerate_outcomes,
    estimates_depend_on=("n",),
    wrap_method=wrap_method,
    parameter_space=(0.0, 1.0),
    claims=CLAIMS,
    figures=FIGURES,
    findings=findings,
)
