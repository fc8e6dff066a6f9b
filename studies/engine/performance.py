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
package simhelpers [JP2024]. At ``K = 3`` (normal estimates) it is ``S / sqrt(2 R)``, where
Morris et al.'s normal-theory formula has ``S / sqrt(2 (R - 1))``; for skewed estimates (an
error rate near its floor, a count) the normal-theory value can be half the real spread, which
would make every comparison of empirical SEs overconfident. ``model_se_error`` takes its
``S`` term from the same formula.

**Where these MCSEs differ from Table 6, and the option that gives Table 6.** Three MCSEs
above are not Table 6's: ``empirical_se`` and ``model_se_error`` (the kurtosis, above) and
every share (Wilson-style ``W``, below, not 0 at a share of 0 or 1). ``mcse="table6"``
(`performance`) gives Table 6 as printed, the values the R package rsimsum reports:
``S / sqrt(2 (R - 1))`` for ``empirical_se``, ``(model_se / S) sqrt(var(se^2) /
(4 R model_se^4) + 1 / (2 (R - 1)))`` for ``model_se_error`` and ``sqrt(c (1 - c) / R)`` for
a share. The other MCSEs are the same under both.

Two paths share these formulas, each measure written once as expectations over the outcomes.
The **Monte Carlo path** weights every replicate equally (or by its frequency, when identical
outcomes are tallied). The **exact path** enumerates the outcome space and weights each outcome
by its probability: the measures are then the estimator's true operating characteristics,
``S`` is its true standard deviation and every MCSE is 0.
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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from estimators._numeric import row_dots

__all__ = ["MAX_RUNS", "MCSE_FORMULAS", "MEASURES", "Estimates", "Measure", "OutcomeLaw",
           "Performance", "exact_cells", "exact_measures", "exact_performance", "performance",
           "share_se"]

Array = NDArray[np.float64]

MEASURES: tuple[str, ...] = (
    "bias", "relative_bias", "empirical_se", "mse", "model_se", "model_se_error",
    "coverage", "be_coverage", "width", "tested", "rejection", "conditional_rejection",
    "mean_size", "median_size", "lower_quartile_size", "upper_quartile_size",
    "correct_share", "mean_saving", "conditional_saving",
)
# The MCSE formulas `performance` offers: this module's, or Morris et al.'s Table 6 as printed.
MCSE_FORMULAS: tuple[str, ...] = ("robust", "table6")
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


# A measure's value: a float for one cell (`_Weights`), an array over cells (`_Cells`).
_Value = Any


class _Expectation(Protocol):
    """Expectations over the outcomes of a cell, as the measures of Table 6 need them.

    Each measure's value is written once, in terms of these expectations; `_Weights` takes
    them over the replicates of one cell (the Monte Carlo path: equal or frequency weights;
    or one cell's outcome probabilities), `_Cells` over the enumerated outcomes of many cells
    at once (the exact path). They differ in arithmetic: how a weighted sum is added up, how
    coverage is summed (by monotone runs on the exact path), and on one cell a count of
    replicates kept an exact multiple of ``1 / R`` and a ratio of shares clipped to [0, 1].
    They differ in one definition: over ``R`` replicates ``S^2`` has the ``R - 1`` divisor of
    Table 6, over probabilities it is the true variance.
    """

    def mean(self, x: NDArray[Any]) -> _Value:
        """The expectation of per-outcome values ``x`` (per outcome, or per cell and outcome)."""

    def per_outcome(self, value: _Value) -> _Value:
        """A per-cell value shaped to combine with per-outcome values."""

    def variance(self, moment: _Value) -> _Value:
        """``S^2`` from the second central moment."""

    def share(self, x: NDArray[Any]) -> _Value:
        """The expectation of an indicator of replicates (a share of them)."""

    def clip_share(self, share: _Value) -> _Value:
        """A ratio of shares as a share."""

    def covering(self, low: Array, high: Array) -> Callable[[_Value], _Value]:
        """The probability that ``low <= centre <= high``, as a function of the centre."""

    def defined_mean(self, x: Array, defined: NDArray[np.bool_]) -> _Value:
        """The expectation of ``x`` given ``defined`` (nan where that has probability 0)."""

    def cells(self, defined: NDArray[np.bool_]) -> Iterable[Array]:
        """Each cell's weights of the outcomes in ``defined``."""

    def gather(self, values: list[float]) -> _Value:
        """Per-cell values (in the order of `cells`) as one value."""


@dataclass(frozen=True)
class _Weights:
    """One cell: normalised weights and the replicate count ``R`` (None for probabilities).

    With ``R`` every replicate counts ``1 / R`` (or its frequency over ``R``): shares of
    replicates are exact multiples of ``1 / R``, ``S^2`` has the ``R - 1`` divisor and the
    MCSEs are those of Table 6. With probabilities the measures are exact and every MCSE 0.
    """

    w: Array
    n: int | None
    table6: bool = False

    def mean(self, x: NDArray[Any]) -> float:
        # np.sum, not np.dot: BLAS splits a long dot product over its threads, and the rounding
        # then depends on the thread count (the machine, the backend), breaking reproducibility
        return float(np.sum(self.w * x))

    def per_outcome(self, value: float) -> float:
        return value

    def variance(self, moment: float) -> float:
        """Unbiased (R - 1 divisor) on the MC path, the true variance with probabilities."""
        return moment if self.n is None else moment * self.n / (self.n - 1)

    def share(self, x: NDArray[Any]) -> float:
        share = self.mean(x)
        # a count of replicates: an exact multiple of 1 / R, not a rounded sum
        return share if self.n is None else round(share * self.n) / self.n

    def clip_share(self, share: float) -> float:
        # weighted sums can round a ratio of shares a hair outside [0, 1]
        return min(max(share, 0.0), 1.0)

    def covering(self, low: Array, high: Array) -> Callable[[float], float]:
        return lambda centre: self.mean((low <= centre) & (centre <= high))

    def defined_mean(self, x: Array, defined: NDArray[np.bool_]) -> float:
        return _normalised_mean(self.w[defined], x[defined])

    def cells(self, defined: NDArray[np.bool_]) -> list[Array]:
        return [self.w[defined]]

    def gather(self, values: list[float]) -> float:
        (value,) = values
        return value

    def var(self, x: NDArray[Any]) -> float:
        """``S^2`` of ``x``."""
        centred = x - self.mean(x)
        return self.variance(self.mean(centred * centred))

    def kurtosis(self, x: NDArray[Any]) -> float:
        """``mean c^4 / (mean c^2)^2`` of the centred ``c = x - mean x`` (nan if constant)."""
        centred = x - self.mean(x)
        square = centred * centred
        second = self.mean(square)
        return self.mean(square * square) / second**2 if second > 0 else math.nan

    def se_of_sd(self, x: NDArray[Any]) -> float:
        """The MCSE of ``S``: ``S sqrt((K - 1) / (4 R))`` [JP2024], or Table 6's
        ``S / sqrt(2 (R - 1))`` (0 on the exact path)."""
        if self.n is None:
            return 0.0
        if self.table6:
            return math.sqrt(self.var(x) / (2.0 * (self.n - 1)))
        kurtosis = self.kurtosis(x)
        # K >= 1 always (K = 1 for two equally likely values); rounding can land just below
        return math.sqrt(self.var(x) * max(kurtosis - 1.0, 0.0) / (4.0 * self.n)) \
            if kurtosis == kurtosis else 0.0

    def se_of_mean(self, x: NDArray[Any]) -> float:
        return 0.0 if self.n is None else math.sqrt(self.var(x) / self.n)

    def se_of_proportion(self, share: float, count: float | None = None) -> float:
        """The MCSE of a share of ``count`` replicates (default ``R``): ``W``, or Table 6's
        ``sqrt(c (1 - c) / R)``."""
        if self.n is None:
            return 0.0
        count = self.n if count is None else count
        if self.table6:
            share = min(max(share, 0.0), 1.0)
            return math.sqrt(share * (1.0 - share) / count)
        return share_se(share, count)


class _Cells:
    """Many cells that share their outcomes, each weighting them by its probabilities.

    Sums go through `_row_means` and coverage through `_coverage` (by monotone runs), so a
    cell's value does not depend on the other cells; a ratio of shares is left as computed.
    """

    def __init__(self, law: OutcomeLaw) -> None:
        self.law = law

    def mean(self, x: NDArray[Any]) -> Array:
        return _row_means(self.law.matrix, x)

    def per_outcome(self, value: Array) -> Array:
        return value[:, None]

    def variance(self, moment: Array) -> Array:
        return moment

    def share(self, x: NDArray[Any]) -> Array:
        return self.mean(x)

    def clip_share(self, share: Array) -> Array:
        return share

    def covering(self, low: Array, high: Array) -> Callable[[Array], Array]:
        return functools.partial(_coverage, low, high, law=self.law,
                                 runs=_monotone_runs(low, high))

    def defined_mean(self, x: Array, defined: NDArray[np.bool_]) -> Array:
        mass = self.mean(defined)
        total: Array = _ratio(self.mean(np.where(defined, x, 0.0)), mass, mass > 0)
        return total

    def cells(self, defined: NDArray[np.bool_]) -> Array:
        return self.law.matrix[:, defined]

    def gather(self, values: list[float]) -> Array:
        return np.asarray(values, dtype=np.float64)


def _ratio(numerator: _Value, denominator: _Value, defined: _Value) -> _Value:
    """``numerator / denominator`` where ``defined``, else nan (inf where it overflows)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.where(defined, np.divide(numerator, denominator), math.nan)


def _floats(x: NDArray[Any]) -> Array:
    return np.asarray(x, dtype=np.float64)


def _values(est: Estimates, theta: _Value, expect: _Expectation) -> dict[str, _Value]:
    """Every measure the present fields allow: the estimates of Table 6 [MWC2019]."""
    found: dict[str, _Value] = {}
    t_bar = None
    if est.estimate is not None:
        t_bar = expect.mean(est.estimate)
        found |= _estimate_values(est.estimate, t_bar, theta, expect)
    if est.se is not None:
        model_se = np.sqrt(expect.mean(est.se * est.se))
        found["model_se"] = model_se
        if est.estimate is not None:
            empirical = found["empirical_se"]
            found["model_se_error"] = _ratio(model_se, empirical, empirical > 0) - 1.0
    if est.low is not None and est.high is not None:
        low, high = _floats(est.low), _floats(est.high)
        inside = expect.covering(low, high)
        found["coverage"] = inside(theta)
        found["width"] = expect.mean(high - low)
        if t_bar is not None:
            found["be_coverage"] = inside(t_bar)
    if est.reject is not None:
        found |= _test_values(_floats(est.reject), expect)
    if est.size is not None:
        found |= _size_values(_floats(est.size), expect)
    if est.correct is not None:
        found["correct_share"] = expect.share(np.nan_to_num(_floats(est.correct)) == 1.0)
    if est.saving is not None:
        saving = _floats(est.saving)
        defined = ~np.isnan(saving)
        found["mean_saving"] = expect.defined_mean(saving, defined)
        if est.reject is not None:
            tested = ~np.isnan(_floats(est.reject))
            found["conditional_saving"] = expect.defined_mean(saving, defined & tested)
    return found


def _estimate_values(t: Array, t_bar: _Value, theta: _Value, expect: _Expectation
                     ) -> dict[str, _Value]:
    centred = t - expect.per_outcome(t_bar)
    return {
        "bias": t_bar - theta,
        "relative_bias": _ratio(t_bar - theta, theta, theta != 0),
        "empirical_se": np.sqrt(expect.variance(expect.mean(centred * centred))),
        "mse": expect.mean((t - expect.per_outcome(theta)) ** 2),
    }


def _test_values(reject: Array, expect: _Expectation) -> dict[str, _Value]:
    """``tested``, ``rejection`` and ``conditional_rejection`` (nan: no test made)."""
    made = ~np.isnan(reject)
    tested = expect.share(made)
    rejection = expect.share(np.where(made, reject, 0.0))
    return {"tested": tested, "rejection": rejection,
            "conditional_rejection": expect.clip_share(_ratio(rejection, tested, tested > 0))}


def _size_values(size: Array, expect: _Expectation) -> dict[str, _Value]:
    """The mean and quartiles of ``size`` where it is defined."""
    defined = ~np.isnan(size)
    x = size[defined]
    cells = [_size_summary(weight, x) for weight in expect.cells(defined)]
    return {name: expect.gather([cell[name] for cell in cells])
            for name in ("mean_size", *_SIZE_QUANTILES)}


def _size_summary(weight: Array, x: Array) -> dict[str, float]:
    """The mean and quartiles of ``x`` under ``weight`` (nan if ``weight`` is all 0)."""
    if weight.sum() <= 0:
        return dict.fromkeys(("mean_size", *_SIZE_QUANTILES), math.nan)
    sorted_x, cumulative = _ordered(weight, x)
    return {"mean_size": _normalised_mean(weight, x)} | {
        name: _weighted_quantile(sorted_x, cumulative, q) for name, q in _SIZE_QUANTILES.items()}


def _normalised_mean(weight: Array, x: Array) -> float:
    """The mean of ``x`` under ``weight`` rescaled to sum to 1 (nan if it sums to 0)."""
    total = weight.sum()
    return float(np.sum(weight / total * x)) if total > 0 else math.nan


def _ordered(weight: Array, x: Array) -> tuple[Array, Array]:
    """``x`` sorted, and the cumulative weight (rescaled to sum to 1) along it."""
    order = np.argsort(x, kind="stable")
    return x[order], np.cumsum((weight / weight.sum())[order])


def _weighted_quantile(sorted_x: Array, cumulative: Array, q: float) -> float:
    """Inverted-CDF quantile: the smallest x whose cumulative weight reaches ``q``."""
    position = int(np.searchsorted(cumulative, min(max(q, 0.0), 1.0) - 1e-12))
    return float(sorted_x[min(position, sorted_x.size - 1)])


def _mcse(est: Estimates, theta: float, values: Mapping[str, float], wt: _Weights
          ) -> dict[str, float]:
    """The MCSE of every measure in ``values`` (Table 6 [MWC2019]; 0 with probabilities,
    nan where undefined)."""
    found: dict[str, float] = {}
    if est.estimate is not None:
        bias_se = wt.se_of_mean(est.estimate)
        found |= {"bias": bias_se,
                  "relative_bias": bias_se / abs(theta) if theta != 0 else math.nan,
                  "empirical_se": wt.se_of_sd(est.estimate),
                  "mse": wt.se_of_mean((est.estimate - theta) ** 2)}
    if est.se is not None:
        found |= _model_se_mcse(est, values, wt)
    if est.low is not None and est.high is not None:
        found["width"] = wt.se_of_mean(_floats(est.high) - _floats(est.low))
        for name in ("coverage", "be_coverage"):
            if name in values:
                found[name] = wt.se_of_proportion(values[name])
    if est.reject is not None:
        found |= _test_mcse(values, wt)
    if est.size is not None:
        found |= _size_mcse(_floats(est.size), values, wt)
    if est.correct is not None:
        found["correct_share"] = wt.se_of_proportion(values["correct_share"])
    if est.saving is not None:
        saving = _floats(est.saving)
        defined = ~np.isnan(saving)
        found["mean_saving"] = _defined_mean_se(saving, defined, values["mean_saving"], wt)
        if est.reject is not None:
            tested = ~np.isnan(_floats(est.reject))
            found["conditional_saving"] = _defined_mean_se(
                saving, defined & tested, values["conditional_saving"], wt)
    return found


def _model_se_mcse(est: Estimates, values: Mapping[str, float], wt: _Weights
                   ) -> dict[str, float]:
    assert est.se is not None  # guaranteed by _NEEDS
    model_se = values["model_se"]
    usable = model_se > 0
    spread = 0.0 if wt.n is None or not usable else \
        math.sqrt(wt.var(est.se * est.se) / (4 * wt.n)) / model_se
    found = {"model_se": spread}
    if est.estimate is not None:
        emp = values["empirical_se"]
        mcse = 0.0
        if wt.n is not None:
            # delta method on the ratio of two roughly independent MC estimates [MWC2019]
            ratio = model_se / emp if emp > 0 else math.nan
            relative = wt.se_of_sd(est.estimate) / emp if emp > 0 else math.nan
            mcse = ratio * math.sqrt(spread**2 / model_se**2 + relative**2) \
                if usable else math.nan
        found["model_se_error"] = mcse
    return found


def _test_mcse(values: Mapping[str, float], wt: _Weights) -> dict[str, float]:
    tested = values["tested"]
    if not tested > 0:  # no test, no pass rate
        spread = math.nan
    elif wt.n is None:
        spread = 0.0
    elif tested * wt.n < 2:  # one test cannot estimate its own spread: undefined, not 0
        spread = math.nan
    else:
        spread = wt.se_of_proportion(values["conditional_rejection"], tested * wt.n)
    return {"tested": wt.se_of_proportion(tested),
            "rejection": wt.se_of_proportion(values["rejection"]),
            "conditional_rejection": spread}


def _size_mcse(size: Array, values: Mapping[str, float], wt: _Weights) -> dict[str, float]:
    """The MCSEs of the mean and quartiles of ``size`` over the replicates that have one."""
    defined = ~np.isnan(size)
    weight = wt.w[defined]
    if weight.sum() <= 0:
        return dict.fromkeys(("mean_size", *_SIZE_QUANTILES), math.nan)
    count = None if wt.n is None else float(wt.n * weight.sum())
    # a single size cannot estimate its own spread: its MCSEs are undefined, not 0
    single = count is not None and count < 2
    found = {"mean_size": _defined_mean_se(size, defined, values["mean_size"], wt)}
    sorted_x, cumulative = _ordered(weight, size[defined])
    for name, q in _SIZE_QUANTILES.items():
        spread = math.nan if single else 0.0
        if count is not None and not single:
            half = _Z95 * math.sqrt(q * (1.0 - q) / count)
            spread = (_weighted_quantile(sorted_x, cumulative, q + half)
                      - _weighted_quantile(sorted_x, cumulative, q - half)) / (2.0 * _Z95)
        found[name] = spread
    return found


def _defined_mean_se(x: Array, defined: NDArray[np.bool_], mean: float, wt: _Weights
                     ) -> float:
    """The MCSE ``sqrt(S^2 / T)`` of the mean of ``x`` over the ``T`` replicates in
    ``defined`` (nan when ``T < 2``: one value cannot estimate its own spread; nan when
    ``T = 0``)."""
    weight = wt.w[defined]
    if weight.sum() <= 0:
        return math.nan
    if wt.n is None:
        return 0.0
    count = float(wt.n * weight.sum())
    share = weight / weight.sum()
    variance = float(np.sum(share * (x[defined] - mean) ** 2))
    return math.nan if count < 2 else math.sqrt(variance / (count - 1))


def _weights(size: int, frequency: Any, probability: Any, table6: bool = False) -> _Weights:
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
    return _Weights(f / total, total, table6)


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
    mcse: str = "robust",
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
    mcse : {"robust", "table6"}
        ``"robust"`` (default): the MCSEs of the module docstring (the empirical SE's by the
        sample kurtosis, shares' Wilson-style). ``"table6"``: Morris et al.'s Table 6 as
        printed (normal-theory empirical SE, ``sqrt(c (1 - c) / R)`` for a share), as rsimsum
        reports them.

    Returns
    -------
    Performance

    Raises
    ------
    ValueError
        If a measure name is unknown, the arrays disagree in length, both ``frequency`` and
        ``probability`` are given, there are fewer than 2 replicates, or ``mcse`` is unknown.

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
    if mcse not in MCSE_FORMULAS:
        raise ValueError(f"`mcse` must be one of {MCSE_FORMULAS}; got {mcse!r}.")
    wanted, arrays = _checked(measures, estimates)
    size = next(iter(arrays.values())).shape[0]
    wt = _weights(size, frequency, probability, mcse == "table6")
    est = Estimates(**arrays)
    theta = float(true_value)
    values = {name: float(value) for name, value in _values(est, theta, wt).items()}
    errors = _mcse(est, theta, values, wt)
    ordered = {name: Measure(values[name], errors[name])
               for name in MEASURES if name in wanted and name in values}
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
    mcse : {"robust", "table6"}
        ``"robust"`` (default): the MCSEs of the module docstring (the empirical SE's by the
        sample kurtosis, shares' Wilson-style). ``"table6"``: Morris et al.'s Table 6 as
        printed (normal-theory empirical SE, ``sqrt(c (1 - c) / R)`` for a share), as rsimsum
        reports them.

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
    found = _values(Estimates(**arrays), theta, _Cells(law))
    return {name: found[name] for name in MEASURES if name in wanted and name in found}
