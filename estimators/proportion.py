"""Confidence intervals for a binomial proportion.

Seven methods, vectorized over arrays of ``(successes, trials)``:

=================  ==========================================  ==============================
method             reference                                   at x = 0 / x = n; clipping
=================  ==========================================  ==============================
``wald``           textbook normal approximation (LingPipe      degenerate ``[0, 0]`` /
                   *Classifiers and Evaluation*, "Accuracy      ``[1, 1]``; clipped to [0, 1]
                   Confidence Intervals"; BCD 2001 eq. 1)
``wilson``         Wilson (1927); BCD 2001 eq. 4                low exactly 0 / high exactly 1;
                                                                inside [0, 1] by construction
``wilson-cc``      Newcombe (1998) method 4, full continuity    low exactly 0 / high exactly 1;
                   correction (not R ``prop.test``, which       inside [0, 1] by construction
                   shrinks the correction near x = n/2)
``agresti-coull``  Agresti & Coull (1998); BCD 2001 eq. 5       low 0 / high 1 by clipping;
                                                                clipped to [0, 1]
``clopper-pearson`` Clopper & Pearson (1934); BCD 2001 eq. 6    low exactly 0 / high exactly 1
``jeffreys``       Jeffreys Beta(1/2, 1/2) prior, equal-tailed;  low exactly 0 / high exactly 1
                   BCD 2001 section 4.1.2 (with their boundary  (BCD's modification; statsmodels
                   modification)                                does not make it)
``mid-p``          Lancaster (1961) mid-p inversion of the      low exactly 0 / high exactly 1
                   exact binomial test; Agresti & Gottard 2007
=================  ==========================================  ==============================

Conventions shared by every method:

* ``alternative="two-sided"`` puts ``(1 - confidence_level) / 2`` in each tail;
  ``"greater"`` gives the one-sided lower bound at ``confidence_level`` (``high = 1``) and
  ``"less"`` the one-sided upper bound (``low = 0``). Hence the one-sided bound at level
  ``1 - a`` equals the two-sided bound at level ``1 - 2a`` for every method here.
* Every method satisfies the reflection symmetry ``ci(x, n) = 1 - ci(n - x, n)``
  (reversed): exactly for ``wilson-cc``, ``clopper-pearson``, ``jeffreys`` and ``mid-p``,
  whose upper bound is computed as ``1 - lower(n - x, n)``, and to one unit in the last
  place (at most 3.8e-16) for ``wald``, ``wilson`` and ``agresti-coull``, computed as
  centre +- half-width.
* No information, one policy in every estimator of the package: with ``trials = 0`` the
  proportion is undefined, and so are both bounds (nan, never an exception or a warning), so
  that arrays of counts can hold empty cells. Negative or fractional counts and
  ``successes > trials`` raise ``ValueError``.

A finite population, sampled without replacement (`FINITE_PROPORTION_METHODS`):
``method="hypergeometric"`` with ``population_size=M`` is the exact interval for the share
``K / M`` of marked items when the ``trials`` were drawn without replacement from the ``M``
items: ``successes ~ Hypergeometric(M, K, trials)``, and the one-sided exact tests are
inverted as Clopper & Pearson invert the binomial's ([B1987]). Its bounds are multiples of
``1 / M``; it is the exact peer of ``clopper-pearson``, to which it tends as ``M`` grows, and
narrower where the sample is a large share of the population (the population's finiteness is
information: at ``trials = M`` the interval is the observed proportion). The binomial methods
take no ``population_size``.

References
----------
.. [BCD2001] Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation for a
   binomial proportion. *Statistical Science* 16(2), 101-133.
.. [N1998] Newcombe, R. G. (1998). Two-sided confidence intervals for the single proportion:
   comparison of seven methods. *Statistics in Medicine* 17, 857-872.
.. [AC1998] Agresti, A. & Coull, B. A. (1998). Approximate is better than "exact" for
   interval estimation of binomial proportions. *The American Statistician* 52, 119-126.
.. [AG2007] Agresti, A. & Gottard, A. (2007). Nonconservative exact small-sample inference
   for discrete data. *Computational Statistics & Data Analysis* 51, 6447-6458.
.. [PTVF2007] Press, W. H., Teukolsky, S. A., Vetterling, W. T. & Flannery, B. P. (2007).
   *Numerical Recipes*, 3rd ed., Cambridge University Press. Section 9.4 (Newton-Raphson
   with bisection safeguarding).
.. [G1985] Gander, W. (1985). On Halley's iteration method. *The American Mathematical
   Monthly* 92(2), 131-134.
.. [B1987] Buonaccorsi, J. P. (1987). A note on confidence intervals for proportions in
   finite populations. *The American Statistician* 41(3), 215-218.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

from estimators import _validation as check
from estimators._defaults import default_method
from estimators._hypergeometric import hypergeometric_bounds
from estimators._numeric import upper_normal_quantile
from estimators.interval import Bound, Interval

__all__ = ["FINITE_PROPORTION_METHODS", "PROPORTION_METHODS", "ProportionEstimate",
           "proportion_ci"]

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]
# A lower-bound kernel: (successes, trials, tail probability) -> lower bounds; its value at
# x = 0 is ignored (the bound is exactly 0 there for every method).
LowerBound = Callable[[IntArray, IntArray, float], Array]
# A symmetric kernel: (successes, trials, normal quantile) -> (centre - half-width,
# centre + half-width), unclipped.
Symmetric = Callable[[IntArray, IntArray, float], tuple[Array, Array]]
_EPS = float(np.finfo(np.float64).eps)
# Newton from the Jeffreys bound takes 3-5 steps; bisection steps may add some near 0 or 1.
_MID_P_ITERATIONS = 100


# The kernels take the int64 counts as they are: a ufunc converts them to float64 block by
# block (exactly, below 2**53), where a converted copy would be one more array. The symmetric
# kernels work in place on three fresh arrays: at 10^6 intervals, allocating an array (page
# faults) costs more than a pass of arithmetic over it.


def _wald(x: IntArray, n: IntArray, z: float) -> tuple[Array, Array]:
    """Wald interval ``p +- z sqrt(p (1 - p) / n)``.

    [BCD2001] section 2.1, eq. (1). Clipped to [0, 1]; degenerate (zero width) at x = 0 and
    x = n.
    """
    p = x / n
    half = 1.0 - p
    half *= p
    half /= n
    np.sqrt(half, out=half)
    half *= z
    return p - half, np.add(p, half, out=half)


def _wilson(x: IntArray, n: IntArray, z: float) -> tuple[Array, Array]:
    """Wilson score interval, [BCD2001] section 4.1.1, eq. (4).

    ``(x + z^2/2) / (n + z^2) +- z / (n + z^2) * sqrt(x (n - x) / n + z^2 / 4)``, which is BCD's
    ``z sqrt(n) / (n + z^2) sqrt(p q + z^2 / (4 n))`` with fewer operations. Inside [0, 1]
    mathematically; the clip only removes rounding.
    """
    z2 = z * z
    denominator = n + z2
    centre = x + z2 / 2.0
    centre /= denominator
    half = np.subtract(n, x, dtype=np.float64)  # float: divided in place below
    half *= x
    half /= n
    half += z2 / 4.0
    np.sqrt(half, out=half)
    half *= z
    half /= denominator
    return np.subtract(centre, half, out=denominator), np.add(centre, half, out=half)


def _agresti_coull(x: IntArray, n: IntArray, z: float) -> tuple[Array, Array]:
    """Agresti-Coull interval, [BCD2001] section 4.1.3, eq. (5); [AC1998].

    ``p~ +- z sqrt(p~ (1 - p~) / n~)`` with ``n~ = n + z^2`` and ``p~ = (x + z^2/2) / n~``,
    clipped to [0, 1] as statsmodels does.
    """
    n_tilde = n + z * z
    p_tilde = x + z * z / 2.0
    p_tilde /= n_tilde
    half = 1.0 - p_tilde
    half *= p_tilde
    half /= n_tilde
    np.sqrt(half, out=half)
    half *= z
    return np.subtract(p_tilde, half, out=n_tilde), np.add(p_tilde, half, out=half)


def _wilson_cc_lower(x: IntArray, n: IntArray, tail: float) -> Array:
    """Wilson score lower bound with continuity correction, [N1998] method 4.

    ``L = (2 n p + z^2 - 1 - z sqrt(z^2 - 2 - 1/n + 4 p (n q + 1))) / (2 (n + z^2))``
    with ``q = 1 - p``, and ``L = 0`` at x = 0 as Newcombe specifies. For x >= 1 the radicand
    is at least ``z^2 + 2 - 1/n > 0`` and ``L > 0``.
    """
    z = upper_normal_quantile(tail)
    safe = np.maximum(x, 1.0)  # keeps the radicand positive where L is set to 0 anyway
    p = safe / n
    radicand = z * z - 2.0 - 1.0 / n + 4.0 * p * (n * (1.0 - p) + 1.0)
    return (2.0 * x + z * z - 1.0 - z * np.sqrt(radicand)) / (2.0 * (n + z * z))


def _clopper_pearson_lower(x: IntArray, n: IntArray, tail: float) -> Array:
    """Clopper-Pearson lower bound, the ``tail`` quantile of Beta(x, n - x + 1).

    [BCD2001] section 4.2.1, eq. (6). Exactly 0 at x = 0.
    """
    bound: Array = special.betaincinv(x, n - x + 1.0, tail)
    return bound


def _jeffreys_lower(x: IntArray, n: IntArray, tail: float) -> Array:
    """Jeffreys lower bound, the ``tail`` quantile of Beta(x + 1/2, n - x + 1/2).

    [BCD2001] section 4.1.2: the posterior under the Jeffreys prior Beta(1/2, 1/2), with the
    lower bound set to 0 at x = 0 (their boundary modification).
    """
    bound: Array = special.betaincinv(x + 0.5, n - x + 0.5, tail)
    return bound


def _mid_p_excess(p: Array, x: Array, n: Array, log_choose: Array, tail: float
                  ) -> tuple[Array, Array, Array]:
    """``P(X > x) + P(X = x) / 2 - tail`` for X ~ Binomial(n, p), 1 <= x <= n, and its first
    two derivatives in ``p``.

    ``P(X >= x) = I_p(x, n - x + 1)`` and ``P(X > x) = I_p(x + 1, n - x)`` (0 when x = n):
    the excess from two regularized incomplete beta functions, accurate where a mass
    ``f = P(X = x)`` from ``log_choose = log C(n, x)`` would lose digits to the logarithm of
    large ``n``. The derivatives, which only steer the steps, are ``f (a + b) / 2`` and
    ``f ((a - b)(a + b) - a / p + b / (1 - p)) / 2`` with ``a = x / p``, ``b = (n - x) /
    (1 - p)`` (``d I_p / dp`` is the beta density; ``df / dp = f (a - b)``).
    """
    above = np.where(x < n, special.betainc(x + 1.0, np.maximum(n - x, 1.0), p), 0.0)
    excess: Array = 0.5 * (special.betainc(x, n - x + 1.0, p) + above) - tail
    with np.errstate(divide="ignore", invalid="ignore"):  # p = 1 (x = n): 0 log 0 = 0
        mass = 0.5 * np.exp(log_choose + x * np.log(p) + special.xlog1py(n - x, -p))
        a = x / p
        b = np.where(x < n, (n - x) / (1.0 - p), 0.0)
        slope: Array = mass * (a + b)
        curvature: Array = mass * ((a - b) * (a + b) - a / p + b / (1.0 - p))
    return excess, slope, curvature


def _mid_p_lower(x: IntArray, n: IntArray, tail: float) -> Array:
    """Mid-p lower bound: the p solving ``P(X > x) + P(X = x) / 2 = tail``.

    Lancaster's mid-p inversion of the exact test ([AG2007]; [BCD2001] section 4.2).
    The excess ``P(X > x) + P(X = x) / 2 - tail`` rises with p from ``-tail`` at 0 to a
    positive value at 1. Halley's method on it (`_mid_p_excess`; the step is the Newton step
    ``e / e'`` divided by ``1 - e e'' / (2 e'^2)``, cubically convergent, [G1985]), started at the
    Jeffreys bound (close to the mid-p one, [BCD2001] section 4.1.2) and kept inside a
    bracket [0, 1] that shrinks with the sign of each excess by a bisection step whenever it
    would leave it (the safeguard of [PTVF2007] section 9.4), solves all cells at once. A
    cell stops once its step is below 1e-10 of its distance to 0 or 1 (the error after that
    step is far smaller), or its bracket has shrunk to rounding. Exactly 0 at x = 0.
    """
    positive = x > 0
    low = np.zeros(x.shape)
    if not positive.any():
        return low
    xs = x[positive].astype(np.float64)
    ns = n[positive].astype(np.float64)
    left = np.zeros(xs.shape)
    right = np.ones(xs.shape)
    p = special.betaincinv(xs + 0.5, ns - xs + 0.5, tail)
    log_choose = special.gammaln(ns + 1.0) - special.gammaln(xs + 1.0) - special.gammaln(
        ns - xs + 1.0)
    active = np.arange(p.size)
    for _ in range(_MID_P_ITERATIONS):
        if active.size == 0:
            break
        now, k, m = p[active], xs[active], ns[active]
        excess, slope, curvature = _mid_p_excess(now, k, m, log_choose[active], tail)
        below = excess < 0
        left[active] = np.where(below, now, left[active])
        right[active] = np.where(below, right[active], now)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = excess / slope
            step = newton / (1.0 - 0.5 * newton * curvature / slope)
        ahead = now - step
        inside = (ahead >= left[active]) & (ahead <= right[active])  # False for nan
        ahead = np.where(inside, ahead, 0.5 * (left[active] + right[active]))
        p[active] = np.where(excess == 0, now, ahead)
        done = ((inside & (np.abs(step) <= 1e-10 * np.minimum(now, 1.0 - now)))
                | (excess == 0)
                | (right[active] - left[active] <= 2 * _EPS * right[active]))
        active = active[~done]
    low[positive] = p
    return low


# Methods of the form centre +- half-width, computed for both bounds in one pass.
_SYMMETRIC: dict[str, Symmetric] = {
    "wald": _wald,
    "wilson": _wilson,
    "agresti-coull": _agresti_coull,
}
# Methods given by their lower bound; the upper bound is 1 - lower(n - x, n).
_LOWER_BOUNDS: dict[str, LowerBound] = {
    "wilson-cc": _wilson_cc_lower,
    "clopper-pearson": _clopper_pearson_lower,
    "jeffreys": _jeffreys_lower,
    "mid-p": _mid_p_lower,
}

PROPORTION_METHODS: tuple[str, ...] = (
    "wald", "wilson", "wilson-cc", "agresti-coull", "clopper-pearson", "jeffreys", "mid-p",
)
# Methods for a sample drawn without replacement from a finite population (`population_size`);
# kept apart from PROPORTION_METHODS, the binomial methods (the F1 `jaccard-*` methods are made
# from those).
FINITE_PROPORTION_METHODS: tuple[str, ...] = ("hypergeometric",)


def _valid_integer_counts(successes: Any, trials: Any) -> tuple[IntArray, IntArray] | None:
    """``successes`` and ``trials`` as broadcast int64 arrays if they are valid integer counts.

    None when either is not an array of signed integers (or is empty) or fails a check; the
    general path then names the offence. Three reductions replace the boolean array that
    each of its checks allocates, which at 10^6 counts costs more than the test itself.
    """
    try:
        x, n = np.broadcast_arrays(np.asarray(successes), np.asarray(trials))
    except (ValueError, TypeError, OverflowError):
        return None
    if x.dtype.kind != "i" or n.dtype.kind != "i" or x.size == 0:
        return None
    # x >= 0 and x <= n imply n >= 0; n <= MAX_COUNT implies x <= MAX_COUNT
    if x.min() < 0 or n.max() > check.MAX_COUNT or np.greater(x, n).any():
        return None
    return x.astype(np.int64, copy=False), n.astype(np.int64, copy=False)


def _counts_pair(successes: Any, trials: Any) -> tuple[IntArray, IntArray]:
    """Validate and broadcast ``successes`` and ``trials``."""
    valid = _valid_integer_counts(successes, trials)
    if valid is not None:
        return valid
    x = check.as_counts(successes, "successes")
    n = check.as_counts(trials, "trials")
    try:
        x, n = np.broadcast_arrays(x, n)
    except ValueError:
        raise ValueError(
            f"`successes` and `trials` must broadcast together; got shapes {np.shape(x)} "
            f"and {np.shape(n)}."
        ) from None
    over = x > n
    if over.any():
        where = check.first_index(over)
        raise ValueError(
            f"`successes` must not exceed `trials`; got successes={x[where]} > "
            f"trials={n[where]}{check.at_index(where)}."
        )
    return x, n


def _population(population_size: Any, method: str, x: IntArray, n: IntArray
                ) -> tuple[IntArray, IntArray, IntArray] | None:
    """Validate ``population_size`` for ``method``; broadcast it with the counts."""
    if method not in FINITE_PROPORTION_METHODS:
        if population_size is not None:
            raise ValueError(f"`population_size` must be None with method={method!r} (only "
                             "method='hypergeometric' samples a finite population); got "
                             f"{check.show(population_size)}.")
        return None
    if population_size is None:
        raise ValueError(f"`population_size` must be given with method={method!r} (the number "
                         "of items the trials are drawn from, without replacement); got None.")
    size = check.as_counts(population_size, "population_size")
    try:
        x, n, size = np.broadcast_arrays(x, n, size)
    except ValueError:
        raise ValueError(
            f"`population_size` must broadcast with `successes` and `trials`; got shape "
            f"{np.shape(size)} for counts of shape {np.shape(x)}.") from None
    short = size < n
    if short.any():
        where = check.first_index(short)
        raise ValueError(
            f"`population_size` must be at least `trials` (a sample without replacement is "
            f"never larger than its population); got population_size={size[where]} < "
            f"trials={n[where]}{check.at_index(where)}.")
    return x, n, size


def _hypergeometric_bounds(x: IntArray, n: IntArray, size: IntArray, tail: float,
                           alternative: str) -> tuple[Array, Array]:
    """Exact finite-population bounds ``K_L(x) / M`` and ``(M - K_L(n - x)) / M``.

    ``K_L`` is `estimators._hypergeometric.hypergeometric_lower` at ``tail``: the smallest
    number of marked items whose one-sided exact test does not reject ``x``; the upper bound
    is the population less the lower bound of the unmarked items. Only the ends the
    alternative needs are computed (one bisection); the other is its end of [0, 1], 0 or 1
    exactly. Exactly 0 at x = 0 and 1 at x = n.
    """
    whole = np.where(size == 0, 1, size).astype(np.float64)  # M = 0 only with n = 0 (nan)
    low, high = hypergeometric_bounds(x, n, size, tail, lower=alternative != "less",
                                      upper=alternative != "greater")
    return low / whole, high / whole


def _mirrored(x: IntArray, n: IntArray) -> bool:
    """Whether the failure counts ``n - x`` are the counts ``x`` reversed.

    True for one ``n`` and counts symmetric about ``n / 2`` along one axis, such as every
    count ``x = 0..n`` (an exact enumeration); then ``lower(n - x, n)`` is ``lower(x, n)``
    reversed. Two passes over the counts, against a kernel of special functions per count.
    """
    if x.ndim != 1 or x.size == 0 or n[0] != n[-1]:
        return False
    return bool((n == n[0]).all() and np.array_equal(x[::-1], n[0] - x))


def _lower_end(method: str, x: IntArray, n: IntArray, tail: float) -> Array:
    """Lower bounds of a `_LOWER_BOUNDS` method, clipped at 0 and exactly 0 at x = 0."""
    low = _LOWER_BOUNDS[method](x, n, tail)
    np.maximum(low, 0.0, out=low)
    low[x == 0] = 0.0
    return low


def _bounds(method: str, x: IntArray, n: IntArray, tail: float, alternative: str
            ) -> tuple[Array, Array]:
    """Bounds at ``tail`` per side, clipped to [0, 1], exact 0 at x = 0 and 1 at x = n.

    The end a one-sided ``alternative`` leaves out is 0 (``"less"``) or 1 (``"greater"``).
    ``"greater"`` does not run a lower-bound kernel (betaincinv, root finding) for the upper
    end. ``"less"`` computes both: where the two formulas cross (near a one-sided level of
    1/2, or at n in the billions, where betaincinv loses accuracy) the guard below makes the
    upper bound the larger one. A lower-bound kernel runs once for both ends when the failure
    counts are the counts reversed (`_mirrored`, e.g. ``x = 0..n``), twice otherwise; the
    bounds are the same bits either way.
    """
    if method in _SYMMETRIC:
        # both ends share their centre and half-width, so both are computed
        low, high = _SYMMETRIC[method](x, n, upper_normal_quantile(tail))
        # clipped at both ends: a one-sided level below 1/2 has z < 0 (low above the centre)
        np.clip(low, 0.0, 1.0, out=low)
        np.clip(high, 0.0, 1.0, out=high)
        if method != "wald":  # zero width there: Wald's bounds are exactly 0 and 1 already
            low[x == 0] = 0.0
            high[x == n] = 1.0
    else:
        low = _lower_end(method, x, n, tail)
        if alternative == "greater":
            return low, np.ones(x.shape)
        # the upper bound is the lower bound of the failures n - x, reflected; where those are
        # the counts reversed, so are the kernel's values (it is elementwise): no second run
        high = low[::-1].copy() if _mirrored(x, n) else _lower_end(method, n - x, n, tail)
        np.subtract(1.0, high, out=high)  # the reflection: 1 is exact at x = n
    # the two bounds come from separate formulas: as the level nears 0 the interval shrinks to
    # a point, where they can cross by a rounding
    np.maximum(high, low, out=high)
    if alternative == "less":
        low.fill(0.0)
    elif alternative == "greater":
        high.fill(1.0)
    return low, high


def _as_output(bound: Array, scalar: bool) -> Bound:
    return float(bound[0]) if scalar else bound


def proportion_ci(
    successes: Any,
    trials: Any,
    *,
    method: str | None = None,
    confidence_level: float = 0.95,
    alternative: str = "two-sided",
    population_size: Any = None,
) -> Interval:
    """Confidence interval for a binomial proportion, or a finite population's share.

    Parameters
    ----------
    successes : int or array_like of int
        Number of successes ``x``, ``0 <= x <= trials``.
    trials : int or array_like of int
        Number of trials ``n``; broadcast against ``successes``. Where ``n = 0`` the interval
        is undefined (nan bounds).
    method : {"clopper-pearson", "wilson", "wald", "wilson-cc", "agresti-coull", \
"jeffreys", "mid-p", "hypergeometric"}, optional
        Interval method; see the module docstring for each one's reference and its
        conventions at ``x = 0`` and ``x = n``. ``"hypergeometric"``: the exact interval for
        a sample drawn without replacement from ``population_size`` items
        (`FINITE_PROPORTION_METHODS`). Default: the one whose coverage is guaranteed,
        ``"clopper-pearson"`` (``"hypergeometric"`` with ``population_size``); see
        `estimators._defaults` for the rule every function follows.
    confidence_level : float
        Nominal coverage, strictly between 0 and 1.
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: one-sided lower bound (``high = 1``); ``"less"``: one-sided upper bound
        (``low = 0``).
    population_size : int or array_like of int, optional
        ``M``, the number of items the trials were drawn from without replacement; broadcast
        with the counts, at least ``trials``. Required with ``method="hypergeometric"`` and
        refused (``ValueError``) with every other method.

    Returns
    -------
    Interval
        ``low`` and ``high`` are floats when the counts (and ``population_size``) are
        scalars, arrays of the broadcast shape otherwise. It unpacks as ``low, high``.

    Raises
    ------
    TypeError
        If a count is not numeric.
    ValueError
        If a count is negative or fractional, ``successes > trials``, the level is outside
        (0, 1), ``method``/``alternative`` is unknown, or ``population_size`` is missing
        with ``method="hypergeometric"``, given with another method, or below ``trials``.

    Notes
    -----
    With ``p = x / n`` and ``z`` the normal quantile for the tail, the Wilson interval is
    ``(x + z^2/2) / (n + z^2) +- z sqrt(n) / (n + z^2) sqrt(p (1 - p) + z^2 / (4 n))`` and the
    Clopper-Pearson interval is ``[B(a/2; x, n - x + 1), B(1 - a/2; x + 1, n - x)]`` with
    ``B(q; a, b)`` the Beta quantile. Each method's formula is in its kernel's docstring.

    Hypergeometric: with ``X ~ Hypergeometric(M, K, n)`` and ``K_L(x)`` the smallest ``K``
    with ``P(X >= x) >= t`` (``t = a / 2`` two-sided, ``a`` one-sided), the interval is
    ``[K_L(x) / M, (M - K_L(n - x)) / M]`` (the upper bound is the lower bound of the unmarked
    items, reflected). Each end excludes a true ``K`` with probability at most ``t``: the
    coverage is at least nominal for every ``M``, ``K`` and ``n``. The interval is closed (a
    ``K`` whose tail equals ``t`` is kept).

    References
    ----------
    Brown, Cai & DasGupta (2001), Statistical Science 16:101-133; Newcombe (1998),
    Statistics in Medicine 17:857-872; Agresti & Coull (1998); Agresti & Gottard (2007);
    Buonaccorsi (1987), The American Statistician 41:215-218 (finite populations).

    Examples
    --------
    The wine-tasting example of the LingPipe chapter: 18 of 27 correct; the normal
    approximation's 95% half-width is about 0.18.

    >>> low, high = proportion_ci(18, 27, method="wald")
    >>> round((high - low) / 2, 2)
    0.18
    >>> ci = proportion_ci(18, 27, method="wilson", confidence_level=0.99)
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.4219, 0.8457)
    >>> proportion_ci([0, 5], 5, method="clopper-pearson", alternative="greater").low
    array([0.        , 0.54928027])

    A finite population: all 10 items drawn from a population of 10, 7 marked. Nothing is
    left unknown, and the interval is the observed proportion at any level:

    >>> proportion_ci(7, 10, method="hypergeometric", population_size=10)
    Interval(low=0.7, high=0.7, method='hypergeometric', confidence_level=0.95, \
alternative='two-sided')

    4 marked among 10 drawn from 20. The 95% lower bound is the smallest ``K`` with
    ``P(X >= 4) >= 0.05``: ``K = 4`` gives 0.0433 and is excluded, ``K = 5`` gives 0.1517:

    >>> from scipy.stats import hypergeom
    >>> [round(float(hypergeom.sf(3, 20, k, 10)), 4) for k in (4, 5)]
    [0.0433, 0.1517]
    >>> proportion_ci(4, 10, method="hypergeometric", population_size=20,
    ...               alternative="greater").low
    0.25
    >>> round(proportion_ci(4, 10, method="clopper-pearson", alternative="greater").low, 4)
    0.1500
    """
    if method is None:
        method = default_method("proportion", finite=population_size is not None)
    method = check.choice(method, "method", (*PROPORTION_METHODS, *FINITE_PROPORTION_METHODS))
    alternative = check.alternative(alternative)
    level = check.open_unit(confidence_level, "confidence_level")
    x, n = _counts_pair(successes, trials)
    finite = _population(population_size, method, x, n)
    size = None
    if finite is not None:
        x, n, size = finite
    scalar = x.ndim == 0
    x, n = np.atleast_1d(x, n)  # the kernels work in place, which needs arrays
    empty = n == 0
    undefined = bool(empty.any())
    tail = (1.0 - level) / 2.0 if alternative == "two-sided" else 1.0 - level
    if size is not None:
        low, high = _hypergeometric_bounds(x, n, np.atleast_1d(size), tail, alternative)
    else:
        # the kernels divide by n: cells without trials get n = 1, and nan below
        low, high = _bounds(method, x, np.where(empty, 1, n) if undefined else n, tail,
                            alternative)
    if undefined:
        low[empty] = np.nan  # no trials, no information: undefined (the module's policy)
        high[empty] = np.nan
    return Interval(
        low=_as_output(low, scalar),
        high=_as_output(high, scalar),
        method=method,
        confidence_level=level,
        alternative=alternative,
    )


@dataclass(frozen=True)
class ProportionEstimate:
    """A proportion ``successes / trials`` with what is needed to recompute its interval.

    Derived measures (accuracy, precision, recall, ...) return this object. An empty
    denominator (``trials == 0``) means *undefined*: ``estimate`` is nan and so are the interval
    bounds, as in :func:`proportion_ci`. Counts may be arrays of one shape.

    Attributes
    ----------
    successes, trials : int or numpy.ndarray of int
        The counts.

    Examples
    --------
    >>> acc = ProportionEstimate(18, 27)
    >>> round(acc.estimate, 4)
    0.6667
    >>> low, high = acc.confidence_interval(method="wald")
    >>> round(high - acc.estimate, 2)
    0.18
    >>> ProportionEstimate(0, 0).estimate
    nan
    """

    successes: int | IntArray
    trials: int | IntArray

    def __post_init__(self) -> None:
        x = check.as_counts(self.successes, "successes")
        n = check.as_counts(self.trials, "trials")
        try:
            x, n = np.broadcast_arrays(x, n)
        except ValueError:
            raise ValueError(f"`successes` and `trials` must broadcast to one shape; got "
                             f"shapes {np.shape(x)} and {np.shape(n)}.") from None
        bad = x > n
        if bad.any():
            raise ValueError(f"`successes` must not exceed `trials`; got "
                             f"{check.first_offender(x, bad)} successes in "
                             f"{check.first_offender(n, bad)} trials.")

    @property
    def estimate(self) -> Bound:
        """``successes / trials``; nan where ``trials == 0``."""
        x = np.asarray(self.successes, dtype=np.float64)
        n = np.asarray(self.trials, dtype=np.float64)
        ratio = np.divide(x, n, out=np.full(np.broadcast(x, n).shape, np.nan), where=n > 0)
        return float(ratio) if ratio.ndim == 0 else ratio

    def __float__(self) -> float:
        return float(self.estimate)

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        *,
        method: str | None = None,
        alternative: str = "two-sided",
    ) -> Interval:
        """Interval from :func:`proportion_ci` (the same default method); nan bounds where
        ``trials == 0``."""
        return proportion_ci(self.successes, self.trials, method=method,
                             confidence_level=confidence_level, alternative=alternative)
