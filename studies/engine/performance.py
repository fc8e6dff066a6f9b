"""Performance measures of a simulation study, each with its Monte Carlo standard error.

The measures and their Monte Carlo standard errors (MCSE) are those of Morris, White & Crowther
(2019), Table 6, with ``R`` replicates, estimates ``t_i`` of the true value ``theta``, their mean
``t_bar`` and variance ``S^2 = sum (t_i - t_bar)^2 / (R - 1)``:

====================  =================================  =========================================
measure               estimate                           MCSE
====================  =================================  =========================================
``bias``              ``t_bar - theta``                  ``sqrt(S^2 / R)``
``relative_bias``     ``(t_bar - theta) / theta``        ``sqrt(S^2 / R) / |theta|``
``empirical_se``      ``S``                              ``S sqrt((K - 1) / (4 R))``
``mse``               ``mean (t_i - theta)^2``           ``sqrt(sum (e_i - mse)^2 / (R (R - 1)))``
``model_se``          ``sqrt(mean se_i^2)``              ``sqrt(var(se^2) / (4 R model_se^2))``
``model_se_error``    ``model_se / S - 1``               ``(model_se / S) sqrt(var(se^2) /
                                                         (4 R model_se^4) + (K - 1) / (4 R))``
``coverage``          ``mean 1(low <= theta <= high)``   ``W(c, R)``
``be_coverage``       ``mean 1(low <= t_bar <= high)``   ``W(c, R)``
``width``             ``mean (high - low)``              ``sqrt(var(width) / R)``
``rejection``         ``mean 1(reject)``                 ``W(r, R)``
====================  =================================  =========================================

Procedures that decide whether to test at all (a certification attempted only when the
estimate clears the target) mark a replicate without a test by a nan ``reject``, and may
report the sample size they planned or used (``size``, nan where none). For them:

=========================  ===================================  ================================
measure                    estimate                             MCSE
=========================  ===================================  ================================
``tested``                 ``t = mean 1(a test was made)``      ``W(t, R)``
``rejection``              as above; no test: not rejected      ``W(r, R)``
``conditional_rejection``  ``c``: share of the ``T = t R``      ``W(c, T)``
                           tests that rejected
``mean_size``              mean ``size`` where defined          ``sqrt(var(size) / T_s)``
``median_size``,           the 1/2, 1/4, 3/4 quantiles of       ``(x_hi - x_lo) / (2 z)``
``lower_quartile_size``,   ``size`` where defined (inverted
``upper_quartile_size``    CDF)
=========================  ===================================  ================================

Procedures that decide (choose a model, stop and open the box) may report whether the decision
was right (``correct``) and the share of a cost they saved against a reference procedure in the
same replicate (``saving``, nan where undefined):

=========================  ===================================  ================================
measure                    estimate                             MCSE
=========================  ===================================  ================================
``correct_share``          ``c = mean 1(correct)``              ``W(c, R)``
``mean_saving``            mean ``saving`` where defined        ``sqrt(var(saving) / T_v)``
``conditional_saving``     mean ``saving`` where defined and    ``sqrt(var(saving) / T_c)``
                           a test was made
=========================  ===================================  ================================

``T_s`` is the number of replicates with a size, ``T_v`` (``T_c``) the number with a saving
(and a test). With fewer than 2 tests (sizes, savings) the MCSEs of ``conditional_rejection``
(of the size and saving measures) are undefined (nan). A quantile's MCSE
is distribution-free:
``x_lo``, ``x_hi`` are the quantiles at ``q -/+ z sqrt(q (1 - q) / T_s)``, ``z = 1.96`` (the
order-statistic confidence interval of a quantile, Hahn & Meeker 1991, section 5.2, divided
by its width in standard errors).

The MCSE of a share ``c`` of ``R`` replicates, ``W(c, R) = sqrt(c (1 - c) / R + 1 / (4 R^2)) /
(1 + 1 / R)``, is the half-width of its Wilson score interval at one standard error: Morris et
al.'s ``sqrt(c (1 - c) / R)`` to within ``1 / R``, and ``1 / (2 (R + 1))`` rather than 0 at a
share of 0 or 1 (6 passes in 6 attempts do not make a pass rate certain).
``e_i = (t_i - theta)^2``. ``model_se_error`` is a proportion (Morris et al. report it in percent).
``K = mean (t_i - t_bar)^4 / (mean (t_i - t_bar)^2)^2`` is the estimates' sample kurtosis: the
MCSE of ``S`` by the delta method on ``S^2`` without assuming normal estimates, as in the R
package simhelpers [JP2024]. Morris et al.'s ``S / sqrt(2 (R - 1))`` is its value at ``K = 3``
(normal estimates); for skewed estimates (an error rate near its floor, a count) it can be
half the real spread, which would make every comparison of empirical SEs overconfident.

Two paths share these formulas. The **Monte Carlo path** weights every replicate equally (or by
its frequency, when identical outcomes are tallied). The **exact path** enumerates the outcome
space and weights each outcome by its probability: the measures are then the estimator's true
operating characteristics, ``S`` is its true standard deviation and every MCSE is 0.
`exact_performance` computes the exact path for many cells at once when they share their
outcomes and estimates and differ only in the outcome probabilities and the true value (e.g.
binomial cells of one ``n`` and several ``p``): each measure is then a probability matrix
(cells x outcomes) applied to per-outcome values. Coverage needs no pass over that matrix when
the outcomes are ordered so that both interval ends are non-decreasing along them (a count
``x = 0..n`` and any interval whose ends grow with ``x``): the outcomes whose interval holds
``theta`` are then one run ``a..b`` of them, found by binary search on the bounds, and the
coverage is ``F(b) - F(a - 1)`` from the cells' cumulative probabilities (`OutcomeLaw`). This
is checked, never assumed, for every method: the outcomes are split into the maximal runs
along which both ends are non-decreasing, each run adds one such difference, and a method
whose ends change direction more often than `MAX_RUNS` times is summed outcome by outcome.

References
----------
.. [MWC2019] Morris, T. P., White, I. R. & Crowther, M. J. (2019). Using simulation studies to
   evaluate statistical methods. *Statistics in Medicine* 38, 2074-2102. Table 6.
.. [JP2024] Joshi, M. & Pustejovsky, J. E. simhelpers: Helper functions for simulation
   studies (R package), vignette "Simulation performance criteria and MCSE" (the MCSE of the
   variance and of the standard deviation, adjusted by the sample kurtosis).
.. [G2018] Gasparini, A. (2018). rsimsum: Summarise results from Monte Carlo simulation
   studies. *Journal of Open Source Software* 3(26), 739 (the R package users know).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from estimators._numeric import row_dots

__all__ = ["MAX_RUNS", "MEASURES", "Estimates", "Measure", "OutcomeLaw", "Performance",
           "exact_cells", "exact_measures", "exact_performance", "performance", "share_se"]

Array = NDArray[np.float64]

MEASURES: tuple[str, ...] = (
    "bias", "relative_bias", "empirical_se", "mse", "model_se", "model_se_error",
    "coverage", "be_coverage", "width", "tested", "rejection", "conditional_rejection",
    "mean_size", "median_size", "lower_quartile_size", "upper_quartile_size",
    "correct_share", "mean_saving", "conditional_saving",
)
# Which fields of `Estimates` each measure needs.
_NEEDS: dict[str, tuple[str, ...]] = {
    "bias": ("estimate",),
    "relative_bias": ("estimate",),
    "empirical_se": ("estimate",),
    "mse": ("estimate",),
    "model_se": ("se",),
    "model_se_error": ("estimate", "se"),
    "coverage": ("low", "high"),
    "be_coverage": ("estimate", "low", "high"),
    "width": ("low", "high"),
    "tested": ("reject",),
    "rejection": ("reject",),
    "conditional_rejection": ("reject",),
    "mean_size": ("size",),
    "median_size": ("size",),
    "lower_quartile_size": ("size",),
    "upper_quartile_size": ("size",),
    "correct_share": ("correct",),
    "mean_saving": ("saving",),
    "conditional_saving": ("saving", "reject"),
}
FIELDS: tuple[str, ...] = ("estimate", "se", "low", "high", "reject", "size", "correct",
                           "saving")
# The quantile of each quantile measure of ``size``.
_SIZE_QUANTILES: dict[str, float] = {"lower_quartile_size": 0.25, "median_size": 0.5,
                                     "upper_quartile_size": 0.75}
_Z95 = 1.959963984540054
# Above this many monotone runs of an interval's ends, coverage is summed outcome by outcome:
# each run costs a binary search per cell in Python, the dense sum one pass over the matrix.
MAX_RUNS = 64


@dataclass(frozen=True)
class Estimates:
    """What one method returned for every replicate (or every enumerated outcome) of a cell.

    Any field may be None when the method does not produce it; measures that need a missing
    field are skipped.

    Attributes
    ----------
    estimate : numpy.ndarray or None
        Point estimates ``t_i``.
    se : numpy.ndarray or None
        Model-based standard errors.
    low, high : numpy.ndarray or None
        Interval bounds.
    reject : numpy.ndarray of bool or float, or None
        Whether the method's test rejected its null hypothesis (1 or True), or not (0); nan
        where the method made no test.
    size : numpy.ndarray or None
        The sample size the method's procedure planned or used; nan where it planned none.
    correct : numpy.ndarray of bool or float, or None
        Whether the method's decision was the right one (a selection picked the truly best
        option): 1 or 0; nan (no decision) counts as not right.
    saving : numpy.ndarray or None
        The share of a cost the method saved against a reference procedure in the same
        replicate (``1 - cost / reference cost``); nan where undefined.
    """

    estimate: Array | None = None
    se: Array | None = None
    low: Array | None = None
    high: Array | None = None
    reject: NDArray[Any] | None = None
    size: Array | None = None
    correct: NDArray[Any] | None = None
    saving: Array | None = None

    def arrays(self) -> dict[str, NDArray[Any]]:
        """The fields that are present, by name."""
        return {name: value for name in FIELDS if (value := getattr(self, name)) is not None}


@dataclass(frozen=True)
class Measure:
    """One performance measure and its Monte Carlo standard error (0 on the exact path)."""

    value: float
    mcse: float


@dataclass(frozen=True)
class Performance:
    """The performance measures of one method in one cell.

    Attributes
    ----------
    measures : Mapping[str, Measure]
        By measure name, in the order of `MEASURES`.
    n_replicates : int or None
        ``R``; None on the exact path.
    """

    measures: Mapping[str, Measure]
    n_replicates: int | None

    def __getitem__(self, name: str) -> Measure:
        return self.measures[name]

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready; nan stays nan)."""
        return {
            "n_replicates": self.n_replicates,
            "measures": {k: [m.value, m.mcse] for k, m in self.measures.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Performance:
        """Inverse of `to_dict`."""
        measures = {k: Measure(float(v), float(m)) for k, (v, m) in data["measures"].items()}
        return cls(measures=measures, n_replicates=data["n_replicates"])


@dataclass(frozen=True)
class _Weights:
    """Normalised weights and the replicate count ``R`` (None on the exact path)."""

    w: Array
    n: int | None

    def mean(self, x: NDArray[Any]) -> float:
        # np.sum, not np.dot: BLAS splits a long dot product over its threads, and the rounding
        # then depends on the thread count (the machine, the backend), breaking reproducibility
        return float(np.sum(self.w * x))

    def var(self, x: NDArray[Any]) -> float:
        """``S^2``: unbiased (R - 1 divisor) on the MC path, the true variance when exact."""
        centred = x - self.mean(x)
        moment = self.mean(centred * centred)
        return moment if self.n is None else moment * self.n / (self.n - 1)

    def kurtosis(self, x: NDArray[Any]) -> float:
        """``mean c^4 / (mean c^2)^2`` of the centred ``c = x - mean x`` (nan if constant)."""
        centred = x - self.mean(x)
        square = centred * centred
        second = self.mean(square)
        return self.mean(square * square) / second**2 if second > 0 else math.nan

    def se_of_sd(self, x: NDArray[Any]) -> float:
        """The MCSE of ``S``: ``S sqrt((K - 1) / (4 R))`` (0 on the exact path) [JP2024]."""
        if self.n is None:
            return 0.0
        kurtosis = self.kurtosis(x)
        # K >= 1 always (K = 1 for two equally likely values); rounding can land just below
        return math.sqrt(self.var(x) * max(kurtosis - 1.0, 0.0) / (4.0 * self.n)) \
            if kurtosis == kurtosis else 0.0

    def se_of_mean(self, x: NDArray[Any]) -> float:
        return 0.0 if self.n is None else math.sqrt(self.var(x) / self.n)

    def se_of_proportion(self, share: float) -> float:
        return 0.0 if self.n is None else share_se(share, self.n)


def share_se(share: float, count: float) -> float:
    """The MCSE of a share of ``count`` replicates: the half-width of its Wilson score interval
    at one standard error, ``sqrt(c (1 - c) / R + 1 / (4 R^2)) / (1 + 1 / R)``.

    It is ``sqrt(c (1 - c) / R)`` to within ``1 / R`` inside (0, 1), and ``1 / (2 (R + 1))``,
    not 0, at a share of 0 or 1, where ``sqrt(c (1 - c) / R)`` would claim a certainty that
    ``R`` replicates cannot give (Wilson 1927; Brown, Cai & DasGupta 2001, eq. 4, at z = 1).
    """
    # Weighted sums can land a rounding error outside [0, 1] (e.g. 1 + 4e-16).
    share = min(max(share, 0.0), 1.0)
    return math.sqrt(share * (1.0 - share) / count + 0.25 / count**2) / (1.0 + 1.0 / count)


def _weights(size: int, frequency: Any, probability: Any) -> _Weights:
    if frequency is not None and probability is not None:
        raise ValueError("`frequency` and `probability` must not both be given; got both.")
    if probability is not None:
        p = np.asarray(probability, dtype=np.float64)
        if p.shape != (size,) or (p < 0).any() or not math.isclose(p.sum(), 1.0, abs_tol=1e-9):
            raise ValueError(
                f"`probability` must be {size} non-negative numbers summing to 1; "
                f"got shape {p.shape}, sum {p.sum()!r}.")
        return _Weights(p / p.sum(), None)
    f = np.ones(size) if frequency is None else np.asarray(frequency, dtype=np.float64)
    if f.shape != (size,) or (f < 0).any() or (f != np.floor(f)).any():
        raise ValueError(f"`frequency` must be {size} non-negative integer counts; got {f!r}.")
    total = int(f.sum())
    if total < 2:
        raise ValueError(f"the number of replicates must be at least 2; got {total}.")
    return _Weights(f / total, total)


def _estimate_measures(t: Array, theta: float, wt: _Weights) -> dict[str, Measure]:
    t_bar = wt.mean(t)
    s2 = wt.var(t)
    bias_se = wt.se_of_mean(t)
    err2 = (t - theta) ** 2
    mse = wt.mean(err2)
    rel = (t_bar - theta) / theta if theta != 0 else math.nan
    rel_se = bias_se / abs(theta) if theta != 0 else math.nan
    return {
        "bias": Measure(t_bar - theta, bias_se),
        "relative_bias": Measure(rel, rel_se),
        "empirical_se": Measure(math.sqrt(s2), wt.se_of_sd(t)),
        "mse": Measure(mse, wt.se_of_mean(err2)),
    }


def _model_se_measures(est: Estimates, wt: _Weights) -> dict[str, Measure]:
    assert est.se is not None  # guaranteed by _NEEDS
    v = est.se * est.se
    model_se = math.sqrt(wt.mean(v))
    var_v = wt.var(v)
    usable = wt.n is not None and model_se > 0
    spread = math.sqrt(var_v / (4 * wt.n)) / model_se if usable else 0.0
    out = {"model_se": Measure(model_se, spread)}
    if est.estimate is not None:
        emp = math.sqrt(wt.var(est.estimate))
        ratio = model_se / emp if emp > 0 else math.nan
        mcse = 0.0
        if wt.n is not None:
            # delta method on the ratio of two roughly independent MC estimates [MWC2019]
            relative = wt.se_of_sd(est.estimate) / emp if emp > 0 else math.nan
            mcse = ratio * math.sqrt(spread**2 / model_se**2 + relative**2) \
                if usable else math.nan
        out["model_se_error"] = Measure(ratio - 1.0, mcse)
    return out


def _interval_measures(est: Estimates, theta: float, wt: _Weights) -> dict[str, Measure]:
    assert est.low is not None and est.high is not None  # guaranteed by _NEEDS
    cover = wt.mean((est.low <= theta) & (theta <= est.high))
    width = est.high - est.low
    out = {
        "coverage": Measure(cover, wt.se_of_proportion(cover)),
        "width": Measure(wt.mean(width), wt.se_of_mean(width)),
    }
    if est.estimate is not None:
        t_bar = wt.mean(est.estimate)
        be = wt.mean((est.low <= t_bar) & (t_bar <= est.high))
        out["be_coverage"] = Measure(be, wt.se_of_proportion(be))
    return out


def _test_measures(reject: Array, wt: _Weights) -> dict[str, Measure]:
    """``tested``, ``rejection`` and ``conditional_rejection`` (nan: no test made)."""
    made = ~np.isnan(reject)
    tested, share = wt.mean(made), wt.mean(np.where(made, reject, 0.0))
    if wt.n is not None:  # counts of replicates: exact multiples of 1 / R, not rounded sums
        tested, share = round(tested * wt.n) / wt.n, round(share * wt.n) / wt.n
    out = {"tested": Measure(tested, wt.se_of_proportion(tested)),
           "rejection": Measure(share, wt.se_of_proportion(share))}
    if tested > 0:
        conditional = min(max(share / tested, 0.0), 1.0)
        tests = None if wt.n is None else tested * wt.n
        # one test cannot estimate its own spread: undefined, not 0
        spread = 0.0 if tests is None else math.nan if tests < 2 else share_se(
            conditional, tests)
        out["conditional_rejection"] = Measure(conditional, spread)
    else:
        out["conditional_rejection"] = Measure(math.nan, math.nan)
    return out


def _weighted_quantile(sorted_x: Array, cumulative: Array, q: float) -> float:
    """Inverted-CDF quantile: the smallest x whose cumulative weight reaches ``q``."""
    position = int(np.searchsorted(cumulative, min(max(q, 0.0), 1.0) - 1e-12))
    return float(sorted_x[min(position, sorted_x.size - 1)])


def _size_measures(size: Array, wt: _Weights) -> dict[str, Measure]:
    """The mean and quartiles of ``size`` over the replicates that have one."""
    defined = ~np.isnan(size)
    weight = wt.w[defined]
    if weight.sum() <= 0:
        return {name: Measure(math.nan, math.nan)
                for name in ("mean_size", *_SIZE_QUANTILES)}
    x = size[defined]
    share = weight / weight.sum()
    count = None if wt.n is None else float(wt.n * weight.sum())
    # a single size cannot estimate its own spread: its MCSEs are undefined, not 0
    single = count is not None and count < 2
    out = {"mean_size": _defined_mean(size, defined, wt)}
    order = np.argsort(x, kind="stable")
    sorted_x, cumulative = x[order], np.cumsum(share[order])
    for name, q in _SIZE_QUANTILES.items():
        value = _weighted_quantile(sorted_x, cumulative, q)
        spread = math.nan if single else 0.0
        if count is not None and not single:
            half = _Z95 * math.sqrt(q * (1.0 - q) / count)
            spread = (_weighted_quantile(sorted_x, cumulative, q + half)
                      - _weighted_quantile(sorted_x, cumulative, q - half)) / (2.0 * _Z95)
        out[name] = Measure(value, spread)
    return out


def _defined_mean(x: Array, defined: NDArray[np.bool_], wt: _Weights) -> Measure:
    """Mean of ``x`` over the replicates in ``defined``, MCSE ``sqrt(S^2 / T)`` over those
    ``T`` (nan when ``T < 2``: one value cannot estimate its own spread; nan when ``T = 0``)."""
    weight = wt.w[defined]
    if weight.sum() <= 0:
        return Measure(math.nan, math.nan)
    share = weight / weight.sum()
    values = x[defined]
    mean = float(np.sum(share * values))
    if wt.n is None:
        return Measure(mean, 0.0)
    count = float(wt.n * weight.sum())
    variance = float(np.sum(share * (values - mean) ** 2))
    return Measure(mean, math.nan if count < 2 else math.sqrt(variance / (count - 1)))


def _decision_measures(est: Estimates, wt: _Weights) -> dict[str, Measure]:
    """``correct_share``, ``mean_saving`` and ``conditional_saving``."""
    out: dict[str, Measure] = {}
    if est.correct is not None:
        right = wt.mean(np.nan_to_num(np.asarray(est.correct, dtype=np.float64)) == 1.0)
        if wt.n is not None:  # a count of replicates: an exact multiple of 1 / R
            right = round(right * wt.n) / wt.n
        out["correct_share"] = Measure(right, wt.se_of_proportion(right))
    if est.saving is not None:
        saving = np.asarray(est.saving, dtype=np.float64)
        defined = ~np.isnan(saving)
        out["mean_saving"] = _defined_mean(saving, defined, wt)
        if est.reject is not None:
            tested = ~np.isnan(np.asarray(est.reject, dtype=np.float64))
            out["conditional_saving"] = _defined_mean(saving, defined & tested, wt)
    return out


def _checked(measures: Iterable[str], estimates: Estimates
             ) -> tuple[tuple[str, ...], dict[str, NDArray[Any]]]:
    """Validate the measure names and the estimate arrays (1-d, one length)."""
    wanted = tuple(measures)
    for name in wanted:
        if name not in _NEEDS:
            raise ValueError(f"`measures` must be among {MEASURES}; got {name!r}.")
    arrays = {k: np.asarray(v) for k, v in estimates.arrays().items()}
    sizes = {v.shape for v in arrays.values()}
    if len(sizes) != 1 or len(next(iter(sizes))) != 1:
        raise ValueError(f"`estimates` must hold 1-d arrays of one length; got shapes {sizes}.")
    return wanted, arrays


def performance(
    estimates: Estimates,
    true_value: float,
    *,
    frequency: Any = None,
    probability: Any = None,
    measures: Iterable[str] = MEASURES,
) -> Performance:
    """Performance measures of one method in one cell, with their MCSE ([MWC2019] Table 6).

    Parameters
    ----------
    estimates : Estimates
        The method's output for every replicate (Monte Carlo path) or every enumerated outcome
        (exact path); all present fields have the same length ``k``.
    true_value : float
        The estimand ``theta`` in this cell.
    frequency : array_like of int, optional
        How many replicates each row stands for (identical outcomes tallied once); default 1
        each. ``R = sum(frequency)``.
    probability : array_like of float, optional
        Exact path: the probability of each enumerated outcome (summing to 1). Every MCSE is
        then 0 and ``n_replicates`` is None.
    measures : iterable of str
        Which measures to compute (those whose inputs are missing are skipped).

    Returns
    -------
    Performance

    Raises
    ------
    ValueError
        If a measure name is unknown, the arrays disagree in length, both ``frequency`` and
        ``probability`` are given, or there are fewer than 2 replicates.

    References
    ----------
    Morris, White & Crowther (2019), Statistics in Medicine 38:2074-2102, Table 6; the R
    package rsimsum (Gasparini 2018) reports the same measures.

    Examples
    --------
    >>> import numpy as np
    >>> est = Estimates(estimate=np.array([0.9, 1.1, 1.0, 1.2]))
    >>> perf = performance(est, 1.0, measures=["bias"])
    >>> round(perf["bias"].value, 3), round(perf["bias"].mcse, 4)
    (0.05, 0.0645)
    """
    wanted, arrays = _checked(measures, estimates)
    size = next(iter(arrays.values())).shape[0]
    wt = _weights(size, frequency, probability)
    est = Estimates(**arrays)
    theta = float(true_value)
    found: dict[str, Measure] = {}
    if est.estimate is not None:
        found |= _estimate_measures(est.estimate, theta, wt)
    if est.se is not None:
        found |= _model_se_measures(est, wt)
    if est.low is not None and est.high is not None:
        found |= _interval_measures(est, theta, wt)
    if est.reject is not None:
        found |= _test_measures(np.asarray(est.reject, dtype=np.float64), wt)
    if est.size is not None:
        found |= _size_measures(np.asarray(est.size, dtype=np.float64), wt)
    found |= _decision_measures(est, wt)
    ordered = {name: found[name] for name in MEASURES if name in wanted and name in found}
    return Performance(measures=ordered, n_replicates=wt.n)


def _row_means(probability: Array, x: NDArray[Any]) -> Array:
    """Each cell's expectation of ``x`` (per outcome, or per cell and outcome).

    Per outcome: `estimators._numeric.row_dots`, so a cell's value depends neither on which
    other cells share the matrix nor on the number of BLAS threads. Per cell and outcome: an
    elementwise product summed along rows.
    """
    if np.ndim(x) != 1:
        summed: Array = np.sum(probability * x, axis=1)
        return summed
    return row_dots(probability, x)


def _exact_estimate_values(t: Array, t_bar: Array, theta: Array, prob: Array
                           ) -> dict[str, Array]:
    centred = t - t_bar[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.where(theta != 0, (t_bar - theta) / theta, math.nan)
    return {
        "bias": t_bar - theta,
        "relative_bias": relative,
        "empirical_se": np.sqrt(_row_means(prob, centred * centred)),
        "mse": _row_means(prob, (t - theta[:, None]) ** 2),
    }


def _exact_values(est: Estimates, theta: Array, law: OutcomeLaw) -> dict[str, Array]:
    """Every measure the present fields allow, per cell (the exact-path formulas of Table 6)."""
    found: dict[str, Array] = {}
    prob = law.matrix
    t_bar = None
    if est.estimate is not None:
        t_bar = _row_means(prob, est.estimate)
        found |= _exact_estimate_values(est.estimate, t_bar, theta, prob)
    if est.se is not None:
        found["model_se"] = np.sqrt(_row_means(prob, est.se * est.se))
        if est.estimate is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(found["empirical_se"] > 0,
                                 found["model_se"] / found["empirical_se"], math.nan)
            found["model_se_error"] = ratio - 1.0
    if est.low is not None and est.high is not None:
        low = np.asarray(est.low, dtype=np.float64)
        high = np.asarray(est.high, dtype=np.float64)
        runs = _monotone_runs(low, high)
        found["coverage"] = _coverage(low, high, theta, law, runs)
        found["width"] = _row_means(prob, high - low)
        if t_bar is not None:
            found["be_coverage"] = _coverage(low, high, t_bar, law, runs)
    if est.reject is not None:
        reject = np.asarray(est.reject, dtype=np.float64)
        made = ~np.isnan(reject)
        found["tested"] = _row_means(prob, made)
        found["rejection"] = _row_means(prob, np.where(made, reject, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            found["conditional_rejection"] = np.where(
                found["tested"] > 0, found["rejection"] / found["tested"], math.nan)
    if est.size is not None:
        found |= _exact_size_values(np.asarray(est.size, dtype=np.float64), prob)
    if est.correct is not None:
        found["correct_share"] = _row_means(
            prob, np.nan_to_num(np.asarray(est.correct, dtype=np.float64)) == 1.0)
    if est.saving is not None:
        saving = np.asarray(est.saving, dtype=np.float64)
        defined = ~np.isnan(saving)
        found["mean_saving"] = _exact_defined_mean(saving, defined, prob)
        if est.reject is not None:
            tested = ~np.isnan(np.asarray(est.reject, dtype=np.float64))
            found["conditional_saving"] = _exact_defined_mean(saving, defined & tested, prob)
    return found


def _exact_defined_mean(x: Array, defined: NDArray[np.bool_], prob: Array) -> Array:
    """Each cell's expectation of ``x`` given ``defined`` (nan where that has probability 0)."""
    mass = _row_means(prob, defined)
    total = _row_means(prob, np.where(defined, x, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        mean: Array = np.where(mass > 0, total / mass, math.nan)
    return mean


def _exact_size_values(size: Array, prob: Array) -> dict[str, Array]:
    """Each cell's mean and quartiles of ``size`` where it is defined."""
    defined = ~np.isnan(size)
    x = size[defined]
    order = np.argsort(x, kind="stable")
    found: dict[str, list[float]] = {name: [] for name in ("mean_size", *_SIZE_QUANTILES)}
    for row in prob[:, defined]:
        total = row.sum()
        if total <= 0:
            for values in found.values():
                values.append(math.nan)
            continue
        share = row / total
        found["mean_size"].append(float(np.sum(share * x)))
        cumulative = np.cumsum(share[order])
        for name, q in _SIZE_QUANTILES.items():
            found[name].append(_weighted_quantile(x[order], cumulative, q))
    return {name: np.asarray(values, dtype=np.float64) for name, values in found.items()}


class OutcomeLaw:
    """The outcome probabilities of cells that share their outcomes, checked once.

    Every method of a group of cells is measured against the same matrix: it is validated and
    normalised once, and its cumulative sums (for coverage by runs) are computed on first use
    and shared.

    Parameters
    ----------
    probability : array_like of float, shape (cells, outcomes)
        Row ``i``: the probability of each outcome in cell ``i`` (non-negative, summing to 1
        within 1e-9; rescaled to sum to 1).

    Raises
    ------
    ValueError
        If ``probability`` is not a non-negative matrix whose rows sum to 1.
    """

    def __init__(self, probability: Any) -> None:
        p = np.asarray(probability, dtype=np.float64)
        if p.ndim != 2 or (p < 0).any():
            raise ValueError(f"`probability` must be a non-negative matrix (cells x outcomes); "
                             f"got shape {p.shape}.")
        sums = p.sum(axis=1)
        if not np.allclose(sums, 1.0, rtol=0.0, atol=1e-9):
            raise ValueError(f"`probability` rows must sum to 1; got sums from {sums.min()!r} "
                             f"to {sums.max()!r}.")
        self.matrix: Array = p / sums[:, None]

    @property
    def shape(self) -> tuple[int, int]:
        """``(cells, outcomes)``."""
        rows, columns = self.matrix.shape
        return rows, columns

    @functools.cached_property
    def cumulative(self) -> Array:
        """``(cells, outcomes + 1)``: column ``j`` is the probability of outcomes ``0..j-1``."""
        found = np.zeros((self.matrix.shape[0], self.matrix.shape[1] + 1))
        np.cumsum(self.matrix, axis=1, out=found[:, 1:])
        return found


def _law(probability: Any, cells: int, size: int) -> OutcomeLaw:
    law = probability if isinstance(probability, OutcomeLaw) else OutcomeLaw(probability)
    if law.shape != (cells, size):
        raise ValueError(f"`probability` must be a non-negative ({cells}, {size}) matrix; got "
                         f"shape {law.shape}.")
    return law


def _monotone_runs(low: Array, high: Array) -> list[tuple[int, int]] | None:
    """The maximal runs ``[start, stop)`` of outcomes along which both ends are non-decreasing.

    Outcomes with an undefined end (nan: never covering) belong to no run. None when there
    are more than `MAX_RUNS` runs: coverage is then summed outcome by outcome.
    """
    defined = ~(np.isnan(low) | np.isnan(high))
    rising = (low[1:] >= low[:-1]) & (high[1:] >= high[:-1])  # False next to a nan
    starts = np.flatnonzero(defined & np.concatenate([[True], ~rising]))
    if starts.size > MAX_RUNS:
        return None
    stops = np.flatnonzero(defined & np.concatenate([~rising, [True]])) + 1
    return list(zip(starts.tolist(), stops.tolist(), strict=True))


def _coverage(low: Array, high: Array, theta: Array, law: OutcomeLaw,
              runs: list[tuple[int, int]] | None) -> Array:
    """Each cell's probability that ``low <= theta <= high`` (cell ``i``: ``theta[i]``).

    Along a run where both ends are non-decreasing, ``low(x) <= theta`` holds for the
    outcomes up to some ``b`` and ``theta <= high(x)`` from some ``a`` on, so the covering
    outcomes are ``a..b`` and their probability is a difference of cumulative sums: two
    binary searches and two look-ups per cell and run instead of a pass over every outcome.
    A bound equal to ``theta`` covers, as in the sum outcome by outcome.
    """
    if runs is None:
        inside = (low <= theta[:, None]) & (theta[:, None] <= high)
        return _row_means(law.matrix, inside)
    cumulative = law.cumulative
    rows = np.arange(theta.size)
    total = np.zeros(theta.size)
    for start, stop in runs:
        last = start + np.searchsorted(low[start:stop], theta, side="right")  # low <= theta
        first = start + np.searchsorted(high[start:stop], theta, side="left")  # high >= theta
        first = np.minimum(first, last)
        total += cumulative[rows, last] - cumulative[rows, first]
    return total


def exact_performance(
    estimates: Estimates,
    true_values: Any,
    probability: Any,
    *,
    measures: Iterable[str] = MEASURES,
) -> list[Performance]:
    """Exact-path performance of one method in many cells that share its estimates.

    The cells have the same enumerated outcomes, so the method's estimates are computed once;
    they differ in the probability of each outcome and in the true value. Cell ``i`` gets what
    ``performance(estimates, true_values[i], probability=probability[i])`` gives, up to
    rounding (about 1e-15), in one vectorized pass.

    Parameters
    ----------
    estimates : Estimates
        The method's output for every enumerated outcome (``k`` rows).
    true_values : array_like of float, shape (cells,)
        The estimand in each cell.
    probability : array_like of float, shape (cells, k), or OutcomeLaw
        Row ``i``: the probability of each outcome in cell ``i`` (summing to 1); an
        `OutcomeLaw` when several methods share it (checked and summed once).
    measures : iterable of str
        Which measures to compute (those whose inputs are missing are skipped).

    Returns
    -------
    list of Performance
        One per cell; every MCSE is 0 and ``n_replicates`` is None.

    Raises
    ------
    ValueError
        If a measure name is unknown or the shapes disagree, or a row of ``probability`` is
        negative or does not sum to 1.

    References
    ----------
    Morris, White & Crowther (2019), Statistics in Medicine 38:2074-2102, Table 6 (the
    measures; with outcome probabilities as weights they are the true operating
    characteristics and have no Monte Carlo error).

    Examples
    --------
    >>> import numpy as np
    >>> est = Estimates(estimate=np.array([0.0, 0.5, 1.0]))
    >>> perfs = exact_performance(est, [0.5, 0.25], [[0.25, 0.5, 0.25], [0.5, 0.5, 0.0]],
    ...                           measures=["bias"])
    >>> [p["bias"].value for p in perfs]
    [0.0, 0.0]
    """
    found = exact_measures(estimates, true_values, probability, measures=measures)
    return exact_cells(found, int(np.size(true_values)))


def exact_cells(found: Mapping[str, NDArray[np.float64]], cells: int) -> list[Performance]:
    """One `Performance` per cell from `exact_measures`' arrays (every MCSE 0)."""
    columns = {name: values.tolist() for name, values in found.items()}
    return [Performance(measures={name: Measure(column[i], 0.0)
                                  for name, column in columns.items()},
                        n_replicates=None)
            for i in range(cells)]


def exact_measures(
    estimates: Estimates,
    true_values: Any,
    probability: Any,
    *,
    measures: Iterable[str] = MEASURES,
) -> dict[str, NDArray[np.float64]]:
    """`exact_performance` as arrays: each measure's value in every cell (MCSE 0).

    What the engine stores for a packed group of cells (`studies.engine.design.Study.pack_groups`):
    a million cells as a few arrays instead of a million `Performance` objects.

    Returns
    -------
    dict of str to numpy.ndarray
        Measure name (in `MEASURES` order; those whose inputs are missing are skipped) to an
        array of shape ``(cells,)``.

    Examples
    --------
    >>> import numpy as np
    >>> est = Estimates(estimate=np.array([0.0, 0.5, 1.0]))
    >>> exact_measures(est, [0.5, 0.25], [[0.25, 0.5, 0.25], [0.5, 0.5, 0.0]],
    ...                measures=["bias", "mse"])["mse"].tolist()
    [0.125, 0.0625]
    """
    wanted, arrays = _checked(measures, estimates)
    theta = np.asarray(true_values, dtype=np.float64)
    if theta.ndim != 1:
        raise ValueError(f"`true_values` must be 1-d; got shape {theta.shape}.")
    law = _law(probability, theta.size, next(iter(arrays.values())).shape[0])
    found = _exact_values(Estimates(**arrays), theta, law)
    return {name: found[name] for name in MEASURES if name in wanted and name in found}
