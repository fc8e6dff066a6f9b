"""Bias and interval coverage of the sample mean and median (example Monte Carlo study).

Aims
    Estimate by Monte Carlo the bias, precision and t-interval coverage of the sample mean of
    i.i.d. data, beside the sample median (biased for the mean of a skewed distribution).
Data-generating mechanisms
    ``n`` i.i.d. draws from Normal(1, 1), Exponential(1) or LogNormal(0, 1), ``n`` in 5, 20,
    100 (quick: 8,000 replicates per cell; full: ``n`` up to 200 and 50,000 replicates).
Estimands
    The population mean: 1, 1 and ``exp(1/2)``.
Methods
    ``mean``: the sample mean, its standard error ``s / sqrt(n)``, the 95% t interval and the
    t test of the true mean at 5% (type I error). ``median``: the sample median (point
    estimate only). A user method (``--method module:callable``) is ``estimator(samples)``
    with ``samples`` an array of shape (replicates, n), returning one estimate per row.
Performance measures
    Bias, relative bias, empirical SE, MSE, model SE and its relative error, coverage,
    bias-eliminated coverage, mean width, rejection rate, each with its Monte Carlo SE
    (Morris et al. 2019, Table 6).

References
----------
Morris, White & Crowther (2019), *Statistics in Medicine* 38, 2074-2102.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from studies.engine.claims import Claim
from studies.engine.design import Figure, Grid, Method, Params, Sample, Study
from studies.engine.performance import MEASURES, Estimates

__all__ = ["STUDY"]

_MEANS = {"normal": 1.0, "exponential": 1.0, "lognormal": math.exp(0.5)}


def truth(params: Params) -> float:
    """The population mean of the cell's distribution."""
    return _MEANS[params["distribution"]]


def generate(params: Params, n_replicates: int, *, rng: Any = None) -> Sample:
    """An array of shape (n_replicates, n): one sample per row."""
    gen = np.random.default_rng(rng)
    shape = (n_replicates, int(params["n"]))
    kind = params["distribution"]
    if kind == "normal":
        data = gen.normal(1.0, 1.0, size=shape)
    elif kind == "exponential":
        data = gen.exponential(1.0, size=shape)
    else:
        data = gen.lognormal(0.0, 1.0, size=shape)
    return Sample(data=data, size=n_replicates)


def _mean_t(samples: Any, params: Params) -> Estimates:
    n = samples.shape[1]
    estimate = samples.mean(axis=1)
    se = samples.std(axis=1, ddof=1) / math.sqrt(n)
    half = stats.t.ppf(0.975, n - 1) * se
    reject = np.abs(estimate - truth(params)) > half
    return Estimates(estimate=estimate, se=se, low=estimate - half, high=estimate + half,
                     reject=reject)


def _point(estimator: Callable[[Any], Any], samples: Any, params: Params) -> Estimates:
    return Estimates(estimate=np.asarray(estimator(samples), dtype=np.float64))


def wrap_method(estimator: Callable[[Any], Any]) -> Method:
    """A `Method` from ``estimator(samples) -> estimates`` (one per row of ``samples``)."""
    return functools.partial(_point, estimator)


CLAIMS = (
    Claim("mean-unbiased", "The sample mean is an unbiased estimator of the mean.",
          ("mean",), "bias", "within", target=0.0, resolution=0.1),
    Claim("t-interval-nominal-for-normal-data",
          "The t interval covers at its nominal 95% for normal data.",
          ("mean",), "coverage", "within", target=0.95, where="distribution == 'normal'"),
    Claim("median-biased-for-skewed-data",
          "The sample median estimates the median, not the mean, of a right-skewed "
          "distribution: biased low by more than 0.1.",
          ("median",), "bias", "at_most", target=0.0, margin=-0.1, resolution=0.05,
          where="distribution != 'normal'"),
)

FIGURES = (
    Figure("measure_by",
           "The sample mean is unbiased for every distribution, while the median is biased "
           "low for the skewed exponential and lognormal data, increasingly so as n grows "
           "towards the gap between their median and mean (-0.31 and -0.65).",
           options={"measure": "bias", "x": "n", "panel_by": "distribution", "reference": 0.0}),
    Figure("measure_by",
           "The 95% t interval covers at its nominal level for normal data but under-covers for "
           "skewed data, worst for lognormal data at small n, and approaches 95% only slowly "
           "as n grows.",
           options={"measure": "coverage", "x": "n", "hue": "distribution", "methods": ("mean",),
                    "reference": 0.95}),
    Figure("zip_plot",
           "Zip plot of the t interval for lognormal data at n = 20 (the first 2,000 "
           "replicates): nearly all misses (vermillion) are intervals lying below the true "
           "mean, and the coverage band (dotted) lies well below the dashed 95% line.",
           where="distribution == 'lognormal' and n == 20",
           options={"method": "mean", "nominal": 0.95, "replicates": 2_000}),
)

STUDY = Study(
    name="mean_bias",
    ademp=__doc__,
    version="1",
    grids={
        "quick": Grid({"distribution": list(_MEANS), "n": [5, 20, 100]}, n_replicates=8_000),
        "full": Grid({"distribution": list(_MEANS), "n": [5, 10, 20, 50, 100, 200]},
                     n_replicates=50_000),
    },
    truth=truth,
    generate=generate,
    methods={"mean": _mean_t,
             "median": wrap_method(functools.partial(np.median, axis=1))},
    measures=MEASURES,
    wrap_method=wrap_method,
    claims=CLAIMS,
    figures=FIGURES,
)
