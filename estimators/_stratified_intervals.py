"""Point estimates, variances and confidence intervals of a stratified proportion.

The estimators of Lewis (1996), *The TREC-5 Filtering Track* (seed 004): the proportion
``p^ = sum_h (N_h / N) a_h / n_h`` (eq. 6-7), its unbiased variance (eq. 29, 32-34), the
utility and its MSE (eq. 25-27), and the interval methods ``jeffreys``, ``mover-wilson``,
``korn-graubard`` and ``wald`` compared in the :mod:`estimators.sampling` docstring, where the
references are listed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy import special

from estimators import _validation as check
from estimators._numeric import upper_normal_quantile
from estimators.interval import Interval

__all__ = ["STRATIFIED_METHODS", "_Sample", "_proportion_interval", "_stratified_proportion",
           "_stratified_variance", "_utility", "_utility_mse"]

Array = NDArray[np.float64]

STRATIFIED_METHODS: tuple[str, ...] = ("jeffreys", "mover-wilson", "korn-graubard", "wald")
# Posterior tail masses within this relative distance of the tail count as equal to it: the
# summed pmf's rounding (about 1e-15 relative) must not decide a tie (`_jeffreys`).
_TIE = 1e-9


class _Sample(NamedTuple):
    """The non-empty strata of an estimate as floats, with the point and variance estimates."""

    sizes: Array
    sampled: Array
    positives: Array
    estimate: float
    variance: float


# ------------------------------------------------------------------------ point estimates


def _stratum_variances(sizes: Array, sampled: Array, positives: Array) -> Array:
    """Unbiased variance estimate of each stratum's ``p_h = a_h / n_h``.

    Lewis (1996), section 7.2.2, eq. 33 (eq. 29 within one stratum; Cochran 1977, p. 52):
    ``(N_h - n_h) a_h (n_h - a_h) / (n_h^2 (n_h - 1) N_h)``. It is 0 for a fully sampled
    stratum (``n_h = N_h``, including ``n_h = N_h = 1``) and nan for ``n_h = 1 < N_h``, where
    the factor ``n_h - 1`` leaves it undefined.
    """
    numerator = (sizes - sampled) * positives * (sampled - positives)
    # `positives` may hold many samples (rows x strata) of one design: the per-stratum factors
    # must take its shape for `np.divide`'s `out` and `where`.
    denominator = np.broadcast_to(sampled * sampled * (sampled - 1.0) * sizes, numerator.shape)
    # n_h = 1 < N_h leaves eq. 33 undefined; n_h = 0 < N_h leaves p_h itself undefined
    unestimable = np.broadcast_to(((sampled == 1.0) & (sizes > 1.0))
                                  | ((sampled == 0.0) & (sizes > 0.0)), numerator.shape)
    variances: Array = np.divide(
        numerator, denominator, out=np.where(unestimable, np.nan, 0.0), where=denominator > 0
    )
    return variances


def _stratified_proportion(sizes: Array, sampled: Array, positives: Array) -> Array:
    """``sum_h (N_h / N) a_h / n_h``: Lewis (1996), section 5.2.1, eq. 7 (= eq. 31).

    With one stratum it is ``a / n``, eq. 6 (= eq. 28). Strata on the last axis of
    ``positives``; one estimate per sample (row).
    """
    shares = np.divide(positives, sampled, out=np.full(np.shape(positives), np.nan),
                       where=np.broadcast_to(sampled > 0, np.shape(positives)))
    estimate: Array = np.sum(sizes * shares, axis=-1) / np.sum(sizes)  # nan if one is unsampled
    return estimate


def _stratified_variance(sizes: Array, sampled: Array, positives: Array) -> Array:
    """``sum_h (N_h / N)^2 Var[p_h]`` with eq. 33: Lewis (1996), section 7.2.2, eq. 32-34.

    ``(1 / N^2) sum_h N_h (N_h - n_h) a_h (n_h - a_h) / (n_h^2 (n_h - 1))``; with one stratum
    it is eq. 29. nan when a stratum has ``n_h = 1 < N_h``. One value per sample (row).
    """
    weights = sizes / np.sum(sizes)
    variance: Array = np.sum(
        weights * weights * _stratum_variances(sizes, sampled, positives), axis=-1)
    return variance


def _utility(proportion: float, size: float, u_a: float, u_b: float) -> float:
    """``((u_a - u_b) p + u_b) N``: Lewis (1996), section 5.2, eq. 5 (= eq. 25)."""
    return ((u_a - u_b) * proportion + u_b) * size


def _utility_mse(variance: float, size: float, u_a: float, u_b: float) -> float:
    """``(u_a - u_b)^2 N^2 Var[p]``: Lewis (1996), section 7.2, eq. 27 (eq. 30 SRS, 35 strata)."""
    return (u_a - u_b) ** 2 * size * size * variance


def _certain_range(sample: _Sample) -> tuple[float, float]:
    """The range of ``p`` the sample makes certain: each unsampled document may go either way."""
    total = float(np.sum(sample.sizes))
    known = float(np.sum(sample.positives))
    return known / total, (known + float(np.sum(sample.sizes - sample.sampled))) / total


# ------------------------------------------------------------------------------ intervals


def _hypergeometric_factor(sample: _Sample) -> Array:
    """``v_h = (N_h - n_h) / (n_h (N_h - 1))``, so that ``Var[a_h / n_h] = p_h (1 - p_h) v_h``.

    The exact variance of a without-replacement sample proportion (Cochran 1977, p. 51); 0 for
    a fully sampled stratum.
    """
    sizes, sampled = sample.sizes, sample.sampled
    factor: Array = np.divide(
        sizes - sampled, sampled * (sizes - 1.0), out=np.zeros(sizes.shape), where=sizes > sampled
    )
    return factor


def _wald(sample: _Sample, tail: float) -> tuple[float, float]:
    """The paper's normal interval ``p +- z sqrt(Var[p])``.

    Lewis (1996), section 8: ``u +- 1.96 sqrt(Var[u])``, which eq. 25 and 27 turn into this
    interval for ``p``; ``Var`` is eq. 34. nan when the variance cannot be estimated.
    """
    half = upper_normal_quantile(tail) * math.sqrt(sample.variance)
    return sample.estimate - half, sample.estimate + half


def _wilson_strata(sample: _Sample, z: float) -> tuple[Array, Array]:
    """Per-stratum Wilson score bounds with the finite-population (hypergeometric) variance.

    Wilson (1927), [BCD2001] eq. 4, solving ``(p_h^ - p)^2 = z^2 v_h p (1 - p)`` with ``v_h``
    from :func:`_hypergeometric_factor` in place of ``1 / n_h``:
    ``(p_h^ + k / 2 +- sqrt(k p_h^ (1 - p_h^) + k^2 / 4)) / (1 + k)``, ``k = z^2 v_h``. Low is
    exactly 0 at ``a_h = 0`` and high exactly 1 at ``a_h = n_h``; a fully sampled stratum
    (``k = 0``) gives the point ``p_h^``.
    """
    p = sample.positives / sample.sampled
    k = z * z * _hypergeometric_factor(sample)
    centre = (p + k / 2.0) / (1.0 + k)
    half = np.sqrt(k * p * (1.0 - p) + k * k / 4.0) / (1.0 + k)
    low = np.where(sample.positives == 0.0, 0.0, centre - half)
    high = np.where(sample.positives == sample.sampled, 1.0, centre + half)
    return low, high


def _mover_wilson(sample: _Sample, tail: float) -> tuple[float, float]:
    """MOVER interval for ``p = sum_h W_h p_h`` from per-stratum Wilson bounds.

    Zou & Donner (2008) for a linear combination with weights ``W_h = N_h / N >= 0``
    ([ZHZ2009]): ``L = p^ - sqrt(sum_h W_h^2 (p_h^ - l_h)^2)`` and
    ``U = p^ + sqrt(sum_h W_h^2 (u_h - p_h^)^2)``, where ``(l_h, u_h)`` are the
    :func:`_wilson_strata` bounds. A stratum showing 0 (or all) positives still has
    ``u_h > 0`` (``l_h < 1``), so the interval does not degenerate (Lewis 1996, section 9.3).
    """
    low_h, high_h = _wilson_strata(sample, upper_normal_quantile(tail))
    weights = sample.sizes / np.sum(sample.sizes)
    p = sample.positives / sample.sampled
    below = math.sqrt(float(np.sum((weights * (p - low_h)) ** 2)))
    above = math.sqrt(float(np.sum((weights * (high_h - p)) ** 2)))
    return sample.estimate - below, sample.estimate + above


def _design_sample_size(sample: _Sample) -> float:
    """``1 / sum_h W_h^2 v_h``: the stratified design's sample size when every ``p_h`` is equal.

    Under a common ``p`` the stratified variance is ``p (1 - p) sum_h W_h^2 v_h`` (Cochran 1977,
    section 5.10), so this is the effective sample size of the design itself (``n`` over Kish's
    design effect), available even when the sample shows no variation. Infinite if every stratum is
    fully sampled (the caller handles that case).
    """
    weights = sample.sizes / np.sum(sample.sizes)
    return 1.0 / float(np.sum(weights * weights * _hypergeometric_factor(sample)))


def _korn_graubard(sample: _Sample, tail: float) -> tuple[float, float]:
    """Clopper-Pearson bounds at the effective sample size ``n* = p (1 - p) / Var[p]``.

    Korn & Graubard (1998): ``x* = n* p`` "successes" in ``n*`` trials, bounds
    ``B(tail; x*, n* - x* + 1)`` and ``1 - B(tail; n* - x*, x* + 1)`` ([BCD2001] eq. 6 with
    real counts). ``Var`` is eq. 34 of Lewis (1996). Where eq. 34 gives 0 (every stratum shows
    0 or all positives, or is fully sampled), ``n*`` is taken as the design's sample size under
    a common proportion (:func:`_design_sample_size`), generalising Korn & Graubard's rule
    ``n* = n`` for ``p = 0`` to unequal weights. The degrees-of-freedom adjustment of ``n*``
    they propose for complex designs is not applied. nan when the variance cannot be estimated.
    """
    p, variance = sample.estimate, sample.variance
    if math.isnan(variance):
        return math.nan, math.nan
    n_eff = p * (1.0 - p) / variance if variance > 0.0 else _design_sample_size(sample)
    x = p * n_eff
    low = float(special.betaincinv(x, n_eff - x + 1.0, tail)) if x > 0.0 else 0.0
    high = 1.0 - float(special.betaincinv(n_eff - x, x + 1.0, tail)) if x < n_eff else 1.0
    return low, high


def _unsampled_positives_posterior(sample: _Sample) -> Array:
    """Posterior pmf of ``T``, the number of relevant documents among the unsampled ones.

    With independent Jeffreys priors ``p_h ~ Beta(1/2, 1/2)`` on each stratum's superpopulation
    proportion, the ``M_h = N_h - n_h`` unsampled documents of stratum h hold
    ``BetaBinomial(M_h, a_h + 1/2, n_h - a_h + 1/2)`` relevant ones (Ericson 1969; the Jeffreys
    prior as in [BCD2001] section 4.1.2), independently across strata. ``T`` is their sum, whose
    pmf is the exact convolution of the strata's pmfs (``scipy.signal.convolve`` picks direct or
    FFT convolution; the FFT's rounding noise, about 1e-16, is clipped at 0).
    """
    # imported here: scipy.stats and .signal take ~0.4 s, which `import estimators` need not pay
    from scipy import signal, stats

    pmf = np.ones(1)
    for size, sampled, positives in zip(
        sample.sizes, sample.sampled, sample.positives, strict=True
    ):
        unsampled = int(size - sampled)
        if unsampled:
            stratum = stats.betabinom.pmf(
                np.arange(unsampled + 1), unsampled, positives + 0.5, sampled - positives + 0.5
            )
            pmf = np.maximum(signal.convolve(pmf, stratum), 0.0)
    return pmf


def _jeffreys(sample: _Sample, tail: float) -> tuple[float, float]:
    """Equal-tailed posterior interval of the finite-population proportion.

    ``p = (sum_h a_h + T) / N`` with ``T`` from :func:`_unsampled_positives_posterior`. The
    bounds are the largest ``L`` with ``P(T < L) <= tail`` and the smallest ``U`` with
    ``P(T > U) <= tail``, so each tail holds at most ``tail`` posterior mass. A tail mass equal
    to ``tail`` (a level whose tail falls exactly on a step of the posterior CDF, e.g. 1/8 of
    ``T ~ BetaBinomial(2, 3/2, 1/2)`` at level 0.75) satisfies the rule: each tail is summed
    from its own end, and masses within a relative ``1e-9`` of the tail count as equal to it,
    so the pmf's rounding does not decide the tie. Deterministic (no Monte Carlo); the
    convolutions cost about ``O(H N log N)`` (0.7 s at N = 10^6). It needs no variance
    estimate, so strata with 0 or all positives, or with ``n_h = 1``, keep their uncertainty
    (Lewis 1996, section 9.3).

    A sample without a positive has lower bound 0 (no positive beyond those seen), one of
    positives only upper bound 1: Brown, Cai & DasGupta's modification of the binomial
    Jeffreys interval at ``x = 0`` and ``x = n`` ([BCD2001] section 4.1.2). Without it the
    priors' mass puts the lower bound of a set whose sample shows no positive above a true
    count of a few (e.g. 3 of 4,000 where 2 are relevant), so such sets are never covered.
    """
    pmf = _unsampled_positives_posterior(sample)
    pmf /= np.sum(pmf)
    # below[k] = P(T < k) and above[k] = P(T > k), k = 0 .. M (sums of non-negative terms)
    below = np.concatenate(([0.0], np.cumsum(pmf)[:-1]))
    above = np.concatenate((np.cumsum(pmf[::-1])[::-1][1:], [0.0]))
    limit = tail * (1.0 + _TIE)
    low_count = int(np.flatnonzero(below <= limit)[-1])  # below[0] = 0 qualifies
    high_count = int(np.flatnonzero(above <= limit)[0])  # above[M] = 0 qualifies
    total = float(np.sum(sample.sizes))
    known = float(np.sum(sample.positives))
    if known == 0.0:
        low_count = 0
    if known == float(np.sum(sample.sampled)):
        high_count = pmf.size - 1
    return (known + low_count) / total, (known + high_count) / total


_INTERVALS: dict[str, Callable[[_Sample, float], tuple[float, float]]] = {
    "jeffreys": _jeffreys,
    "mover-wilson": _mover_wilson,
    "korn-graubard": _korn_graubard,
    "wald": _wald,
}


def _proportion_interval(
    sample: _Sample | None, confidence_level: Any, method: Any, alternative: Any
) -> Interval:
    """Validate the options and compute a proportion interval (``sample`` None: empty set)."""
    method = check.choice(method, "method", STRATIFIED_METHODS)
    alternative = check.alternative(alternative)
    level = check.open_unit(confidence_level, "confidence_level")
    tail = (1.0 - level) / 2.0 if alternative == "two-sided" else 1.0 - level
    if sample is None or math.isnan(sample.estimate):  # no information: undefined
        low = high = math.nan
    else:
        floor, ceiling = _certain_range(sample)
        if floor == ceiling:  # every stratum fully sampled: p is known (the certain range)
            low = high = floor
        else:
            raw_low, raw_high = _INTERVALS[method](sample, tail)
            # np.maximum/np.minimum keep nan (the builtins would drop it).
            low = float(np.minimum(np.maximum(raw_low, floor), ceiling))
            high = float(np.maximum(np.minimum(raw_high, ceiling), floor))
        if alternative == "greater":
            high = ceiling
        elif alternative == "less":
            low = floor
    return Interval(low=low, high=high, method=method, confidence_level=level,
                    alternative=alternative)
