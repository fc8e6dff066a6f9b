"""The study modules ``evalcert study new NAME`` writes: complete, runnable, one claim each.

Two kinds: a Monte Carlo study (draws replicates; MCSE on every value) and an exact one
(enumerates every outcome with its probability; no Monte Carlo error). Each passes
``evalcert study run NAME --grid quick`` as written, and is meant to be edited into the
study its author has in mind: the ADEMP docstring first, then the grid, truth, data, methods,
measures, claims and figures, in that order.
"""

from __future__ import annotations

import string

__all__ = ["KINDS", "render"]

_MONTE_CARLO = '''"""Coverage of the t and z intervals for the mean of a normal sample.

Aims
    Show by Monte Carlo that the t interval covers the mean at its nominal level at every
    sample size, while the z interval (the normal quantile with the sample SD) falls short
    for small ``n``.
Data-generating mechanisms
    ``n`` i.i.d. draws from Normal(``mu``, 1), ``mu`` = 1 (quick: 3 values of ``n``, 10,000
    replicates per cell; full: 6 values, 50,000 replicates).
Estimands
    The mean ``mu``.
Methods
    ``t``: the sample mean with the 95% t interval; ``z``: the same with the normal
    quantile 1.96.
Performance measures
    Bias, coverage and mean width, with their Monte Carlo SEs (Morris, White & Crowther
    2019, Table 6).

References
----------
Morris, T. P., White, I. R. & Crowther, M. J. (2019). Using simulation studies to evaluate
statistical methods. *Statistics in Medicine* 38, 2074-2102.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from studies.engine import Claim, Estimates, Figure, Grid, Params, Sample, Study

__all__ = ["STUDY"]


def truth(params: Params) -> float:
    """The estimand: the mean of the distribution drawn from."""
    return float(params["mu"])


def generate(params: Params, n_replicates: int, *, rng: Any = None) -> Sample:
    """Every replicate at once: an (n_replicates, n) array of normal draws."""
    draws = np.random.default_rng(rng).normal(params["mu"], 1.0,
                                              size=(n_replicates, params["n"]))
    return Sample(data=draws, size=n_replicates)


def _interval(draws: Any, quantile: float) -> Estimates:
    mean = draws.mean(axis=1)
    se = draws.std(axis=1, ddof=1) / np.sqrt(draws.shape[1])
    return Estimates(estimate=mean, se=se, low=mean - quantile * se, high=mean + quantile * se)


def t_interval(draws: Any, params: Params) -> Estimates:
    """The sample mean and its t interval, one per replicate (row)."""
    level = params["confidence_level"]
    return _interval(draws, float(stats.t.ppf((1 + level) / 2, draws.shape[1] - 1)))


def z_interval(draws: Any, params: Params) -> Estimates:
    """The sample mean and the interval with the normal quantile."""
    return _interval(draws, float(stats.norm.ppf((1 + params["confidence_level"]) / 2)))


CLAIMS = (
    Claim("t-covers-at-nominal",
          "The t interval covers within 2 points of the nominal level at every n.",
          ("t",), "coverage", "within", target="confidence_level", margin=0.02),
)

FIGURES = (
    Figure("coverage_against",
           "Coverage of the t and z intervals against the sample size, beside the nominal "
           "level.",
           options={"x": "n"}),
)

STUDY = Study(
    name="$name",
    ademp=__doc__,
    version="1",
    grids={
        "quick": Grid({"n": [5, 20, 80], "mu": [1.0], "confidence_level": [0.95]},
                      n_replicates=10_000),
        "full": Grid({"n": [3, 5, 10, 20, 40, 80], "mu": [1.0], "confidence_level": [0.95]},
                     n_replicates=50_000),
    },
    truth=truth,
    generate=generate,
    methods={"t": t_interval, "z": z_interval},
    measures=("bias", "coverage", "width"),
    claims=CLAIMS,
    figures=FIGURES,
)
'''

_EXACT = '''"""Exact coverage of the Clopper-Pearson and Agresti-Coull intervals for a proportion.

Aims
    Show, without Monte Carlo error, that the Clopper-Pearson interval covers a binomial
    proportion at least at its nominal level everywhere, and how far the Agresti-Coull
    interval's coverage strays from it.
Data-generating mechanisms
    ``X ~ Binomial(n, p)`` over a grid of ``n`` and ``p`` at confidence level 0.95 (quick:
    3 x 5 cells; full: 6 x 49 cells).
Estimands
    ``p``.
Methods
    ``proportion_ci`` with ``method="clopper-pearson"`` and ``method="agresti-coull"``.
Performance measures
    Coverage and mean width, exact: every count ``x = 0..n`` is enumerated with its binomial
    probability. The intervals depend on ``n`` and the level only, so the cells of every
    ``p`` at one ``n`` are analysed once (``estimates_depend_on``).

References
----------
Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation for a binomial
proportion. *Statistical Science* 16, 101-133.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats

from estimators import proportion_ci
from studies.engine import Claim, Estimates, Figure, Grid, Params, Sample, Study

__all__ = ["STUDY"]


def truth(params: Params) -> float:
    """The estimand: the success probability ``p``."""
    return float(params["p"])


def generate(params: Params, n_replicates: int, *, rng: Any = None) -> Sample:
    """Monte Carlo draws of the count (the exact path below is used when it can be)."""
    counts = np.random.default_rng(rng).binomial(params["n"], params["p"], size=n_replicates)
    return Sample(data=counts, size=n_replicates)


def enumerate_outcomes(cells: Sequence[Params]) -> Sample:
    """Every count ``0..n`` with its binomial probability in each cell (cells of one ``n``)."""
    n = int(cells[0]["n"])
    counts = np.arange(n + 1)
    probability = np.array([stats.binom.pmf(counts, n, cell["p"]) for cell in cells])
    return Sample(data=counts, size=n + 1, probability=probability)


def _method(name: str, counts: Any, params: Params) -> Estimates:
    n = int(params["n"])
    interval = proportion_ci(counts, n, confidence_level=params["confidence_level"],
                             method=name)
    return Estimates(estimate=counts / n, low=np.asarray(interval.low, dtype=np.float64),
                     high=np.asarray(interval.high, dtype=np.float64))


def clopper_pearson(counts: Any, params: Params) -> Estimates:
    """The Clopper-Pearson interval of every count."""
    return _method("clopper-pearson", counts, params)


def agresti_coull(counts: Any, params: Params) -> Estimates:
    """The Agresti-Coull interval of every count."""
    return _method("agresti-coull", counts, params)


CLAIMS = (
    Claim("clopper-pearson-never-below-nominal",
          "The Clopper-Pearson interval covers at least at the nominal level in every cell.",
          ("clopper-pearson",), "coverage", "at_least", target="confidence_level"),
)

FIGURES = (
    Figure("coverage_against",
           "Exact coverage of both intervals against p, one panel per n, beside the nominal "
           "level.",
           options={"x": "p", "panel_by": "n"}),
)

STUDY = Study(
    name="$name",
    ademp=__doc__,
    version="1",
    grids={
        "quick": Grid({"n": [10, 30, 100], "p": [0.05, 0.1, 0.3, 0.5, 0.7],
                       "confidence_level": [0.95]}, n_replicates=10_000),
        "full": Grid({"n": [5, 10, 20, 50, 100, 200],
                      "p": [round(0.02 * i, 2) for i in range(1, 50)],
                      "confidence_level": [0.95]}, n_replicates=100_000),
    },
    truth=truth,
    generate=generate,
    methods={"clopper-pearson": clopper_pearson, "agresti-coull": agresti_coull},
    measures=("coverage", "width"),
    enumerate_outcomes=enumerate_outcomes,
    estimates_depend_on=("n", "confidence_level"),
    parameter_space=(0.0, 1.0),
    claims=CLAIMS,
    figures=FIGURES,
)
'''

# The kinds of study ``study new`` writes, and their modules' text.
KINDS: dict[str, str] = {"monte-carlo": _MONTE_CARLO, "exact": _EXACT}


def render(name: str, kind: str) -> str:
    """The module text of a new study called ``name`` of the given kind (`KINDS`)."""
    if kind not in KINDS:
        raise ValueError(f"`kind` must be one of {', '.join(KINDS)}; got {kind!r}.")
    return string.Template(KINDS[kind]).substitute(name=name)
