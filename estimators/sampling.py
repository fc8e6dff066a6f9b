"""Sampling estimates of a proportion and of TREC-5 linear utility, with their variances.

Lewis (1996), *The TREC-5 Filtering Track*, sections 5-8 (seed 004), estimates the share ``p``
of relevant documents in a submitted set of ``N`` documents from a judged random sample, and
from it the set's linear utility ``u = u_a A + u_b B = ((u_a - u_b) p + u_b) N`` (eq. 1):

* :func:`srs_estimate`: a simple random sample (eq. 6, 28-30);
* :func:`stratified_proportion`: eq. 6-7 and 29/34 for many samples of one design at once,
  vectorized (simulation studies);
* :class:`StratifiedEstimate`: a stratified random sample (eq. 7, 31-35), with
  :meth:`~StratifiedEstimate.utility` giving :class:`UtilityEstimate` (eq. 25-27, 35);
* :class:`MembershipStrata`: the strata of section 5.2.1 (Figure 1), one per pattern of
  membership in the runs' submitted sets, and every run's estimate from one sample;
* :func:`allocate`: sample sizes per stratum (the TREC-5 rule of section 5.3, proportional,
  Neyman);
* :func:`pooled_estimate`: the pooled estimate of section 5.1, a lower bound on the utility.

Interval methods (``confidence_interval(method=...)``)
------------------------------------------------------

=================  =====================================================  ====================
method             construction                                           strata showing 0 or
                                                                          all positives
=================  =====================================================  ====================
``jeffreys``       exact equal-tailed posterior interval of the           keep their
(default)          finite-population proportion: independent Jeffreys     uncertainty
                   Beta(1/2, 1/2) priors per stratum, beta-binomial
                   predictive for each stratum's unsampled documents,
                   convolved exactly ([E1969]; [BCD2001] section 4.1.2)
``mover-wilson``   Zou-Donner MOVER for ``sum W_h p_h`` from per-stratum  keep their
                   Wilson score intervals with the hypergeometric         uncertainty
                   (finite-population) variance ([ZD2008]; [ZHZ2009])
``korn-graubard``  Clopper-Pearson at the effective sample size           never a point, but
                   ``p (1 - p) / Var`` ([KG1998]); the design's size      too short when only
                   under a common ``p`` when ``Var`` is 0                 some strata show 0
``wald``           the paper's normal interval ``p +- z sqrt(Var)``       contribute no width;
                   (Lewis 1996, section 8)                                a point if all do
=================  =====================================================  ====================

``wald`` is Lewis's interval; section 9.3 reports that it degenerated to a point in 32 of the 48
cases where the pooled estimate lay above it, because no relevant document was sampled. Exact
coverage (summed over the hypergeometric sampling distribution, ``tests/test_sampling.py``) of
the nominal 95% intervals in that worst case, 256 documents with 6 relevant in two strata of
200 and 56 sampled 50 + 50: ``jeffreys`` 0.960, ``mover-wilson`` 0.960, ``korn-graubard`` 0.686,
``wald`` 0.687; a simple random sample of 30 from 500 documents with 5 relevant: 0.969, 0.969,
0.998, 0.267. ``jeffreys`` is the default: deterministic, free of the variance estimate, and
near the nominal level in these cases and in the Figure 2 populations (0.993, 0.948, 0.963 for
R1-R3, where ``wald`` gives 0.950, 0.942, 0.862).

Policies
--------
* Sampling is without replacement within each stratum, independently across strata.
* **Empty stratum** (``N_h = 0``): allowed, weight 0; ``sampled`` and ``positives`` must be 0.
* **Unsampled non-empty stratum** (``n_h = 0 < N_h``): no information about its ``p_h``, so
  ``p`` is undefined: nan estimate, variance and bounds (the package's one policy for no
  information; listed in ``unsampled_strata``). No unbiased estimate of ``p`` exists without
  a sample from every stratum.
* **Fully sampled stratum** (``n_h = N_h``): known exactly, contributes no variance (eq. 33
  has the factor ``N_h - n_h``); listed in ``fully_sampled_strata``. If every stratum is fully
  sampled, every interval is the point ``p``.
* **One sampled document** (``n_h = 1 < N_h``): eq. 33 divides by ``n_h - 1 = 0``, so the
  variance cannot be estimated. ``variance`` (and the utility's ``mse``) are nan, the stratum
  is listed in ``unestimable_strata``, and ``wald``/``korn-graubard`` give nan bounds;
  ``jeffreys`` and ``mover-wilson`` do not use the variance estimate and stay defined.
* **Empty population** (every ``N_h = 0``, e.g. a run that submitted nothing): ``p`` is
  undefined (nan estimate, variance and bounds), as for ``ProportionEstimate(0, 0)``; the
  utility of an empty set is exactly 0 with MSE 0.
* **Certain range**: whatever the method, the true ``p`` lies in
  ``[sum a_h / N, (sum a_h + sum (N_h - n_h)) / N]`` (the unsampled documents are the only
  unknowns). Every interval is clipped to it, which can only raise coverage; a one-sided bound's
  other end is that range's end. The paper's Figure 2 R1 interval, 2.672 +- 12.3, is clipped
  this way above at u = 12 (33 relevant, 7 nonrelevant at best).
* Utility needs ``u_a > u_b`` (a relevant document worth more than a nonrelevant one), as for
  :func:`~estimators.confusion.optimal_threshold`; the utility interval is the proportion
  interval mapped through eq. 25.

References
----------
.. [L1996] Lewis, D. D. (1996). The TREC-5 Filtering Track. *TREC-5*, sections 5-9 (seed 004).
.. [C1977] Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed. Wiley: pp. 51-52 (simple
   random sampling of proportions), ch. 5 (stratified sampling: 5.5 optimum allocation,
   5.8 allocation requiring more than 100 percent sampling, 5.10 proportions).
.. [KG1998] Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with
   small expected number of positive counts estimated from survey data. *Survey Methodology*
   24, 193-201.
.. [ZD2008] Zou, G. Y. & Donner, A. (2008). Construction of confidence limits about effect
   measures: a general approach. *Statistics in Medicine* 27, 1693-1702.
.. [ZHZ2009] Zou, G. Y., Huang, W. & Zhang, X. (2009). A note on confidence interval estimation
   for a linear function of binomial proportions. *Computational Statistics & Data Analysis*
   53, 1080-1085.
.. [BCD2001] Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation for a
   binomial proportion. *Statistical Science* 16, 101-133.
.. [E1969] Ericson, W. A. (1969). Subjective Bayesian models in sampling finite populations.
   *Journal of the Royal Statistical Society B* 31, 195-233.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, NamedTuple, Self

import numpy as np
from numpy.typing import NDArray
from scipy import special

from estimators import _validation as check
from estimators._numeric import upper_normal_quantile
from estimators.interval import Bound, Interval

__all__ = [
    "ALLOCATION_METHODS",
    "STRATIFIED_METHODS",
    "MembershipStrata",
    "PooledEstimate",
    "StratifiedEstimate",
    "StratifiedProportion",
    "UtilityEstimate",
    "allocate",
    "pooled_estimate",
    "srs_estimate",
    "stratified_proportion",
]

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

STRATIFIED_METHODS: tuple[str, ...] = ("jeffreys", "mover-wilson", "korn-graubard", "wald")
ALLOCATION_METHODS: tuple[str, ...] = ("trec5", "proportional", "neyman")
# 2**16 membership patterns is already far more strata than any judging budget can sample.
_MAX_RUNS = 16
# Allocation shares within this of a whole number count as that number (bisection noise).
_SNAP = 1e-9
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


# ----------------------------------------------------------------------------- validation


def _one_dimensional(value: Any, name: str) -> IntArray:
    counts = check.as_counts(value, name)
    if counts.ndim != 1:
        raise ValueError(
            f"`{name}` must be one-dimensional (one entry per stratum); got shape {counts.shape}."
        )
    return counts


def _stratum_labels(labels: Any, n_strata: int) -> tuple[str, ...]:
    """Validate ``n_strata`` distinct string labels (``"0" .. "H-1"`` when None)."""
    if labels is None:
        return tuple(str(index) for index in range(n_strata))
    if isinstance(labels, str) or not check.iterable(labels):
        raise TypeError(f"`labels` must be a sequence of strings; got {check.show(labels)}.")
    result = tuple(labels)
    if len(result) != n_strata:
        raise ValueError(f"`labels` must hold one label per stratum ({n_strata}); "
                         f"got {len(result)}.")
    for index, label in enumerate(result):
        if not isinstance(label, str):
            raise TypeError(f"`labels` must be strings; got {check.show(label)} at index {index}.")
        if result.index(label) != index:
            raise ValueError(f"`labels` must be distinct; got {check.show(label)} at indices "
                             f"{result.index(label)} and {index}.")
    return result


def _where(labels: tuple[str, ...], bad: BoolArray) -> str:
    index = check.first_index(bad)[0]
    return f" in stratum {labels[index]!r} (index {index})"


def _design_counts(
    sizes: Any, sampled: Any, labels: Any
) -> tuple[IntArray, IntArray, tuple[str, ...]]:
    """Validate a design's ``N_h`` and ``n_h`` (``n_h = 0`` only in an empty stratum or an
    unsampled one, whose proportion is then undefined)."""
    sizes_ = _one_dimensional(sizes, "sizes")
    if sizes_.size == 0:
        raise ValueError("`sizes` must hold at least one stratum; got an empty array.")
    sampled_ = _per_stratum(sampled, "sampled", sizes_.size)
    names = _stratum_labels(labels, sizes_.size)
    empty_sampled = (sizes_ == 0) & (sampled_ > 0)
    if empty_sampled.any():
        index = check.first_index(empty_sampled)
        raise ValueError(f"`sampled` must be 0 in an empty stratum (`sizes` entry 0); got "
                         f"{sampled_[index]}{_where(names, empty_sampled)}.")
    over = sampled_ > sizes_
    if over.any():
        index = check.first_index(over)
        raise ValueError(f"`sampled` must not exceed `sizes`; got sampled={sampled_[index]} > "
                         f"size={sizes_[index]}{_where(names, over)}.")
    return sizes_, sampled_, names


def _per_stratum(values: Any, name: str, strata: int) -> IntArray:
    """One-dimensional counts, one per stratum."""
    counts = _one_dimensional(values, name)
    if counts.size != strata:
        raise ValueError(f"`{name}` must have one entry per stratum of `sizes` ({strata}); "
                         f"got length {counts.size}.")
    return counts


def _strata_counts(
    sizes: Any, sampled: Any, positives: Any, labels: Any
) -> tuple[IntArray, IntArray, IntArray, tuple[str, ...]]:
    """Validate one sample's per-stratum counts (`_design_counts`, then ``a_h``)."""
    sizes_, sampled_, names = _design_counts(sizes, sampled, labels)
    positives_ = _per_stratum(positives, "positives", sizes_.size)
    over = positives_ > sampled_
    if over.any():
        index = check.first_index(over)
        raise ValueError(f"`positives` must not exceed `sampled`; got positives="
                         f"{positives_[index]} > sampled={sampled_[index]}{_where(names, over)}.")
    return sizes_, sampled_, positives_, names


def _read_only(array: IntArray) -> IntArray:
    copy = array.copy()  # the caller's array must not alias our immutable state
    copy.flags.writeable = False
    return copy


# Utilities beyond this magnitude overflow float64 once multiplied by a set's size and squared
# in a variance; no real utility scale comes near it.
MAX_UTILITY = 1e100


def _utility_weights(u_a: Any, u_b: Any) -> tuple[float, float]:
    a = check.real_scalar(u_a, "u_a")
    b = check.real_scalar(u_b, "u_b")
    for name, value in (("u_a", a), ("u_b", b)):
        if abs(value) > MAX_UTILITY:
            raise ValueError(f"`{name}` must be at most 1e100 in magnitude; got {value!r}.")
    if not a > b:
        raise ValueError(f"`u_a` must be greater than `u_b`; got u_a={check.show(u_a)}, "
                         f"u_b={check.show(u_b)}.")
    return a, b


# -------------------------------------------------------------------------- result objects


@dataclass(frozen=True, init=False, eq=False)
class StratifiedEstimate:
    """Stratified estimate of the proportion ``p`` of relevant documents in a set.

    Parameters
    ----------
    sizes : array_like of int, shape (H,)
        ``N_h``, the documents in each stratum (0 for an empty stratum).
    sampled : array_like of int, shape (H,)
        ``n_h``, the documents judged from each stratum by simple random sampling without
        replacement; ``1 <= n_h <= N_h`` for a non-empty stratum, 0 for an empty one.
    positives : array_like of int, shape (H,)
        ``a_h``, the relevant documents found among them; ``0 <= a_h <= n_h``.
    labels : sequence of str, optional
        Distinct stratum names for messages and reports; ``"0" .. "H-1"`` by default.

    Raises
    ------
    TypeError
        If a count is not numeric or a label is not a string.
    ValueError
        If a count is negative or fractional, the arrays are not one-dimensional or differ in
        length, ``sampled > sizes``, ``positives > sampled``, or an empty stratum has a sample;
        the message names the stratum. (A non-empty stratum without a sample is no error: the
        estimate is undefined, nan.)

    Notes
    -----
    ``estimate`` is ``p^ = sum_h (N_h / N) a_h / n_h`` (Lewis 1996, eq. 7), unbiased; its
    ``variance`` is the unbiased eq. 34,
    ``(1 / N^2) sum_h N_h (N_h - n_h) a_h (n_h - a_h) / (n_h^2 (n_h - 1))``. The module
    docstring lists the policies for empty, fully sampled, unsampled and one-document strata
    and the interval methods.

    References
    ----------
    Lewis (1996), sections 5.2.1, 6 and 7.2.2; Cochran (1977), sections 5.3-5.4 and 5.10.

    Examples
    --------
    Figure 2 of Lewis (1996), the R3 set: strata 001, 011, 101 (empty) and 111.

    >>> r3 = StratifiedEstimate([1000, 200, 0, 40], [30, 30, 0, 30], [1, 10, 0, 23],
    ...                         labels=["001", "011", "101", "111"])
    >>> round(r3.estimate, 4)
    0.1054
    >>> u3 = r3.utility(u_a=3, u_b=-1)
    >>> round(u3.estimate, 1), round(u3.mse, 1)
    (-717.3, 21452.5)
    >>> ci = u3.confidence_interval(0.95, method="wald")
    >>> round((ci.high - ci.low) / 2, 1)
    287.1
    """

    sizes: IntArray
    sampled: IntArray
    positives: IntArray
    labels: tuple[str, ...]

    def __init__(
        self, sizes: Any, sampled: Any, positives: Any, *, labels: Sequence[str] | None = None
    ) -> None:
        self._assign(*_strata_counts(sizes, sampled, positives, labels))

    def _assign(
        self, sizes: IntArray, sampled: IntArray, positives: IntArray, labels: tuple[str, ...]
    ) -> None:
        object.__setattr__(self, "sizes", _read_only(sizes))
        object.__setattr__(self, "sampled", _read_only(sampled))
        object.__setattr__(self, "positives", _read_only(positives))
        object.__setattr__(self, "labels", labels)

    @classmethod
    def _trusted(
        cls, sizes: IntArray, sampled: IntArray, positives: IntArray, labels: tuple[str, ...]
    ) -> Self:
        """Build from counts already validated at a public boundary."""
        estimate = cls.__new__(cls)
        estimate._assign(sizes, sampled, positives, labels)
        return estimate

    def _sample(self) -> _Sample | None:
        """The non-empty strata as floats, or None when the population is empty."""
        keep = self.sizes > 0
        if not keep.any():
            return None
        sizes = self.sizes[keep].astype(np.float64)
        sampled = self.sampled[keep].astype(np.float64)
        positives = self.positives[keep].astype(np.float64)
        return _Sample(
            sizes, sampled, positives,
            float(_stratified_proportion(sizes, sampled, positives)),
            float(_stratified_variance(sizes, sampled, positives)),
        )

    def _labels_where(self, mask: BoolArray) -> tuple[str, ...]:
        return tuple(label for label, flag in zip(self.labels, mask, strict=True) if flag)

    @property
    def size(self) -> int:
        """``N = sum_h N_h``, the documents in the set."""
        return int(self.sizes.sum())

    @property
    def sample_size(self) -> int:
        """``n = sum_h n_h``, the documents judged."""
        return int(self.sampled.sum())

    @property
    def estimate(self) -> float:
        """``p^``, eq. 7; nan for an empty population."""
        sample = self._sample()
        return math.nan if sample is None else sample.estimate

    @property
    def variance(self) -> float:
        """Unbiased estimate of ``Var[p^]``, eq. 34; nan if unestimable or empty."""
        sample = self._sample()
        return math.nan if sample is None else sample.variance

    @property
    def standard_error(self) -> float:
        """``sqrt(variance)``."""
        return math.sqrt(self.variance)

    @property
    def stratum_estimates(self) -> Array:
        """``a_h / n_h`` per stratum; nan for empty strata."""
        estimates: Array = np.divide(
            self.positives, self.sampled, out=np.full(self.sizes.shape, np.nan),
            where=self.sampled > 0,
        )
        return estimates

    @property
    def fully_sampled_strata(self) -> tuple[str, ...]:
        """Non-empty strata judged in full (``n_h = N_h``): known exactly, no variance."""
        return self._labels_where((self.sizes > 0) & (self.sampled == self.sizes))

    @property
    def boundary_strata(self) -> tuple[str, ...]:
        """Strata sampled in part whose sample is all nonrelevant or all relevant.

        Eq. 33 estimates their variance as 0 although it is not known to be: the cause of the
        degenerate or too-short ``wald`` intervals of Lewis (1996), section 9.3.
        """
        partial = (self.sampled > 0) & (self.sampled < self.sizes)
        extreme = (self.positives == 0) | (self.positives == self.sampled)
        return self._labels_where(partial & extreme)

    @property
    def unsampled_strata(self) -> tuple[str, ...]:
        """Non-empty strata with no sampled document: ``p`` is undefined (nan) while any exist."""
        return self._labels_where((self.sizes > 0) & (self.sampled == 0))

    @property
    def unestimable_strata(self) -> tuple[str, ...]:
        """Strata with ``n_h = 1 < N_h``, whose variance eq. 33 cannot estimate."""
        return self._labels_where((self.sampled == 1) & (self.sizes > 1))

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        *,
        method: str = "jeffreys",
        alternative: str = "two-sided",
    ) -> Interval:
        """Confidence interval for the proportion ``p``.

        Parameters
        ----------
        confidence_level : float
            Nominal coverage, strictly between 0 and 1.
        method : {"jeffreys", "mover-wilson", "korn-graubard", "wald"}
            See the module docstring; ``"wald"`` is the interval of Lewis (1996), section 8.
        alternative : {"two-sided", "greater", "less"}
            ``"greater"``: one-sided lower bound; ``"less"``: one-sided upper bound. The other
            end is that of the range the sample makes certain.

        Returns
        -------
        Interval
            Float bounds, clipped to the certain range; the point ``p^`` when every stratum
            is fully sampled; nan bounds for an empty population, and for ``"wald"`` and
            ``"korn-graubard"`` when a stratum has ``n_h = 1 < N_h``.

        Examples
        --------
        No relevant document in a sample of 20 from 500: the paper's interval is a point, the
        others are not.

        >>> est = srs_estimate(500, 20, 0)
        >>> est.confidence_interval(method="wald").high
        0.0
        >>> round(est.confidence_interval(method="korn-graubard").high, 4)
        0.1626
        >>> round(est.confidence_interval(method="jeffreys").high, 3)
        0.114
        """
        return _proportion_interval(self._sample(), confidence_level, method, alternative)

    def utility(self, *, u_a: float, u_b: float) -> UtilityEstimate:
        """The linear utility ``u = u_a A + u_b B`` of the set, estimated as eq. 25.

        Parameters
        ----------
        u_a, u_b : float
            Value of a relevant and of a nonrelevant document; ``u_a > u_b``.

        Returns
        -------
        UtilityEstimate

        Examples
        --------
        >>> r1 = StratifiedEstimate([40], [30], [23])
        >>> u1 = r1.utility(u_a=1, u_b=-3)
        >>> round(u1.estimate, 4), round(u1.mse, 1)
        (2.6667, 39.5)
        """
        return UtilityEstimate(self, u_a, u_b)


@dataclass(frozen=True)
class UtilityEstimate:
    """Estimate of the linear utility ``u = ((u_a - u_b) p + u_b) N`` of a set.

    Attributes
    ----------
    proportion : StratifiedEstimate
        The estimate of ``p`` it is computed from.
    u_a, u_b : float
        Value of a relevant and of a nonrelevant document; ``u_a > u_b`` (checked).

    Notes
    -----
    ``estimate = ((u_a - u_b) p^ + u_b) N`` (Lewis 1996, eq. 25) is unbiased, so its MSE is its
    variance, ``(u_a - u_b)^2 N^2 Var[p^]`` (eq. 27; eq. 30 for a simple random sample, eq. 35
    for a stratified one). Intervals are the proportion's mapped through eq. 25. An empty set
    has utility exactly 0, MSE 0 and the interval ``[0, 0]``.

    References
    ----------
    Lewis (1996), sections 5.2, 7.2 and 8.

    Examples
    --------
    Figure 2 of Lewis (1996), the R2 set (strata 010, 011, 110, 111):

    >>> r2 = StratifiedEstimate([10, 200, 0, 40], [10, 30, 0, 30], [2, 10, 0, 23])
    >>> u2 = r2.utility(u_a=1, u_b=-1)
    >>> round(u2.estimate, 2), round(u2.mse, 1)
    (-51.33, 1052.0)
    >>> round(1.96 * u2.standard_error, 1)
    63.6
    """

    proportion: StratifiedEstimate
    u_a: float
    u_b: float

    def __post_init__(self) -> None:
        if not isinstance(self.proportion, StratifiedEstimate):
            raise TypeError("`proportion` must be a StratifiedEstimate; got "
                            f"{check.show(self.proportion)}.")
        u_a, u_b = _utility_weights(self.u_a, self.u_b)
        object.__setattr__(self, "u_a", u_a)
        object.__setattr__(self, "u_b", u_b)

    def _map(self, proportion: float) -> float:
        return _utility(proportion, self.proportion.size, self.u_a, self.u_b)

    @property
    def estimate(self) -> float:
        """``u^``, eq. 25; 0 for an empty set."""
        if self.proportion.size == 0:
            return 0.0
        return self._map(self.proportion.estimate)

    @property
    def mse(self) -> float:
        """Estimated MSE (= variance) of ``u^``, eq. 27/35; 0 for an empty set."""
        if self.proportion.size == 0:
            return 0.0
        return _utility_mse(self.proportion.variance, self.proportion.size, self.u_a, self.u_b)

    @property
    def standard_error(self) -> float:
        """``sqrt(mse)``."""
        return math.sqrt(self.mse)

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        *,
        method: str = "jeffreys",
        alternative: str = "two-sided",
    ) -> Interval:
        """Confidence interval for ``u``: the proportion interval mapped through eq. 25.

        Parameters and conventions are those of
        :meth:`StratifiedEstimate.confidence_interval`; ``u_a > u_b`` makes the map
        increasing, so one-sided bounds map to one-sided bounds.
        """
        ci = self.proportion.confidence_interval(
            confidence_level, method=method, alternative=alternative)
        if self.proportion.size == 0:
            return Interval(0.0, 0.0, ci.method, ci.confidence_level, ci.alternative)
        return Interval(self._map(float(ci.low)), self._map(float(ci.high)), ci.method,
                        ci.confidence_level, ci.alternative)


def srs_estimate(size: Any, sampled: Any, positives: Any) -> StratifiedEstimate:
    """Estimate of a proportion from a simple random sample without replacement.

    Parameters
    ----------
    size : int
        ``N``, the documents in the set.
    sampled : int
        ``n``, the documents judged, ``1 <= n <= N`` (0 only when ``N = 0``).
    positives : int
        ``a``, the relevant documents among them.

    Returns
    -------
    StratifiedEstimate
        One stratum: ``estimate = a / n`` (Lewis 1996, eq. 6/28) and ``variance`` the unbiased
        ``(N - n) a (n - a) / (n^2 (n - 1) N)`` (eq. 29); ``utility(...).mse`` is eq. 30.

    References
    ----------
    Lewis (1996), sections 5.2 and 7.2.1; Cochran (1977), pp. 51-52.

    Examples
    --------
    The R1 set of Lewis (1996), Figure 2, is a single stratum (111) of 40 documents:

    >>> est = srs_estimate(40, 30, 23)
    >>> round(est.estimate, 4), round(est.variance, 6)
    (0.7667, 0.001542)
    >>> round(est.utility(u_a=1, u_b=-3).mse, 1)
    39.5
    """
    counts = []
    for name, value in (("size", size), ("sampled", sampled), ("positives", positives)):
        count = check.as_counts(value, name)
        if count.ndim:
            raise ValueError(f"`{name}` must be a single count; got shape {count.shape}.")
        counts.append(count.reshape(1))
    size_, sampled_, _ = counts
    if size_[0] < sampled_[0]:
        raise ValueError(f"`size` must be at least `sampled`; got size {size_[0]} with "
                         f"{sampled_[0]} sampled.")
    return StratifiedEstimate(*counts)


@dataclass(frozen=True)
class StratifiedProportion:
    """Proportion estimates and their variance estimates for many samples of one design.

    Unpacks as ``estimate, variance`` (like `Interval` as ``low, high``).

    Attributes
    ----------
    estimate : float or numpy.ndarray
        ``p^`` per sample (Lewis 1996, eq. 7).
    variance : float or numpy.ndarray
        Its unbiased variance estimate per sample (eq. 34).
    """

    estimate: Bound
    variance: Bound

    def __post_init__(self) -> None:
        # nan is allowed (an undefined estimate); anything else must be a proportion and a
        # non-negative variance of one shape
        estimate = _record_array(self.estimate, "estimate")
        variance = _record_array(self.variance, "variance")
        if np.shape(estimate) != np.shape(variance):
            raise ValueError(f"`estimate` and `variance` must have one shape; got "
                             f"{np.shape(estimate)} and {np.shape(variance)}.")
        for name, array, bad, what in (
                ("estimate", estimate, (estimate < 0) | (estimate > 1), "in [0, 1]"),
                ("variance", variance, variance < 0, "non-negative")):
            if bad.any():
                raise ValueError(f"`{name}` must be {what} or nan; got "
                                 f"{check.first_offender(array, bad)}.")

    def __iter__(self) -> Iterator[Bound]:
        return iter((self.estimate, self.variance))


def _record_array(value: Any, name: str) -> Array:
    """A result's real values as a float array (nan allowed: undefined; infinities not)."""
    array = check.as_array(value, name)
    if array.dtype == np.bool_ or not (np.issubdtype(array.dtype, np.integer)
                                       or np.issubdtype(array.dtype, np.floating)):
        raise TypeError(f"`{name}` must be a real number or array of them; got "
                        f"{check.show(value)}.")
    array = array.astype(np.float64)
    bad = np.isinf(array)
    if bad.any():
        raise ValueError(f"`{name}` must be finite or nan; got {check.first_offender(array, bad)}.")
    return array


def stratified_proportion(sizes: Any, sampled: Any, positives: Any) -> StratifiedProportion:
    """Stratified estimates of a proportion and their variances for many samples of one design.

    The vectorized counterpart of ``StratifiedEstimate(sizes, sampled, row)``'s ``estimate``
    and ``variance``, for every row of ``positives`` at once (a simulation's outcomes).

    Parameters
    ----------
    sizes : array_like of int, shape (H,)
        ``N_h``, the documents in each stratum (0 for an empty stratum).
    sampled : array_like of int, shape (H,)
        ``n_h``, the documents judged from each stratum; ``1 <= n_h <= N_h`` for a non-empty
        stratum, 0 for an empty one. One stratum is a simple random sample.
    positives : array_like of int, shape (..., H)
        ``a_h``, the relevant documents found, one sample per row (strata on the last axis);
        ``0 <= a_h <= n_h``.

    Returns
    -------
    StratifiedProportion
        ``estimate`` and ``variance``, float or array of shape (...):
        ``p^ = sum_h (N_h / N) a_h / n_h`` (Lewis 1996, eq. 7; eq. 6 for one stratum) and its
        unbiased variance estimate (eq. 34; eq. 29 for one stratum), one per row: floats for a
        one-dimensional ``positives``. The policies of `StratifiedEstimate` hold: the variance
        is nan where a stratum has ``n_h = 1 < N_h``, both are nan for an empty population.

    Raises
    ------
    TypeError
        If a count is not numeric.
    ValueError
        If a count is negative or fractional, ``sizes`` or ``sampled`` is not one-dimensional,
        the lengths disagree, ``sampled > sizes``, ``positives > sampled``, or an empty stratum
        has a sample (a non-empty stratum without one makes the estimate nan).

    See Also
    --------
    StratifiedEstimate : one sample, with intervals and utility.

    References
    ----------
    Lewis (1996), sections 5.2.1 and 7.2.2, eq. 6-7, 29 and 32-34.

    Examples
    --------
    The R3 set of Lewis (1996), Figure 2 (strata 001, 011, 101 empty, 111), as sampled and with
    five fewer relevant documents found in stratum 011. Its MSE under ``u = 3A - B`` is
    ``(u_a - u_b)^2 N^2 Var`` (eq. 35), 21452.5 in the paper:

    >>> estimate, variance = stratified_proportion(
    ...     [1000, 200, 0, 40], [30, 30, 0, 30], [[1, 10, 0, 23], [1, 5, 0, 23]])
    >>> estimate.round(4)
    array([0.1054, 0.0785])
    >>> round(float(4**2 * 1240**2 * variance[0]), 1)
    21452.5
    """
    sizes_, sampled_, _ = _design_counts(sizes, sampled, None)
    positives_ = check.as_counts(positives, "positives")
    if positives_.ndim == 0 or positives_.shape[-1] != sizes_.size:
        raise ValueError(f"`positives` must have one column per stratum (shape (..., "
                         f"{sizes_.size})); got shape {positives_.shape}.")
    over = positives_ > sampled_
    if over.any():
        index = check.first_index(over)
        raise ValueError(f"`positives` must not exceed `sampled`; got positives="
                         f"{positives_[index]} > sampled={sampled_[index[-1]]}"
                         f"{check.at_index(index)}.")
    keep = sizes_ > 0
    if keep.any():
        # empty strata have weight 0 but n_h = 0: leaving them out avoids 0 / 0
        size_f = sizes_[keep].astype(np.float64)
        sampled_f = sampled_[keep].astype(np.float64)
        counts = positives_[..., keep].astype(np.float64)
        estimate = _stratified_proportion(size_f, sampled_f, counts)
        variance = _stratified_variance(size_f, sampled_f, counts)
    else:
        estimate = variance = np.full(positives_.shape[:-1], np.nan)
    if positives_.ndim == 1:
        return StratifiedProportion(float(estimate), float(variance))
    return StratifiedProportion(estimate, variance)


# ------------------------------------------------------------------------------ allocation


def _allocation_weights(method: str, sizes: IntArray, proportions: Array | None) -> Array:
    """Relative sample sizes before caps and minimums.

    ``trec5``: equal for every non-empty stratum (Lewis 1996, section 5.3); ``proportional``:
    ``N_h`` (Cochran 1977, section 5.3); ``neyman``: ``N_h sqrt(p_h (1 - p_h))``, Neyman's
    optimum ``n_h ~ N_h S_h`` (Cochran 1977, section 5.5) for a proportion with prior ``p_h``,
    dropping the factor ``N_h / (N_h - 1)`` of ``S_h^2`` as usual for large strata
    (section 5.10).
    """
    if method == "trec5":
        return (sizes > 0).astype(np.float64)
    if method == "proportional":
        return sizes.astype(np.float64)
    assert proportions is not None  # _priors requires them for neyman
    neyman: Array = sizes.astype(np.float64) * np.sqrt(proportions * (1.0 - proportions))
    return neyman


def _water_fill(weights: Array, low: Array, high: Array, target: int) -> Array:
    """Real shares ``clip(lam w_h, low_h, high_h)`` summing to ``target``.

    The continuous form of "allocate in proportion, give a stratum that is used up its whole
    size and share the leftover among the others" (Lewis 1996, section 5.3; Cochran 1977,
    section 5.8). The sum is nondecreasing in ``lam``, which bisection finds to machine
    precision; :func:`_round_shares` absorbs the last bits.
    """
    def total(lam: float) -> float:
        return float(np.sum(np.clip(lam * weights, low, high)))

    positive = weights > 0
    lam_low, lam_high = 0.0, float(np.max(high[positive] / weights[positive]))
    for _ in range(2100):  # more than enough halvings to exhaust float64 between the brackets
        middle = 0.5 * (lam_low + lam_high)
        if middle in (lam_low, lam_high):
            break
        if total(middle) < target:
            lam_low = middle
        else:
            lam_high = middle
    shares: Array = np.clip(lam_high * weights, low, high)
    return shares


def _round_shares(shares: Array, sizes: IntArray, target: int) -> IntArray:
    """Whole sample sizes summing to ``target`` by largest remainders (Hamilton's method).

    Floors first, then one more document to the strata with the largest fractional parts;
    ties go to the larger stratum, then to the lower index. A stratum at its cap has no
    fractional part, so caps hold.
    """
    nearest = np.round(shares)
    snapped = np.where(np.abs(shares - nearest) <= _SNAP * np.maximum(1.0, shares), nearest,
                       shares)
    base = np.floor(snapped).astype(np.int64)
    remainder = np.round(snapped - base, 9)
    order = np.lexsort((np.arange(sizes.size), -sizes, -remainder))
    base[order[: target - int(base.sum())]] += 1
    return base


def allocate(
    sizes: Any,
    total: int = 100,
    *,
    method: str = "trec5",
    minimum: int = 2,
    proportions: Any = None,
) -> IntArray:
    """Sample sizes per stratum for a stratified sample of ``total`` documents.

    Parameters
    ----------
    sizes : array_like of int, shape (H,)
        ``N_h`` per stratum; empty strata get 0.
    total : int
        Documents to judge (100 in TREC-5). If the strata hold fewer, all are taken.
    method : {"trec5", "proportional", "neyman"}
        ``"trec5"``: equal sizes over the non-empty strata, a stratum too small for its share
        taken whole and the leftover shared equally among the others (Lewis 1996, section 5.3).
        ``"proportional"``: ``n_h ~ N_h``. ``"neyman"``: ``n_h ~ N_h sqrt(p_h (1 - p_h))`` from
        prior ``proportions``, the allocation minimising the variance for a fixed total.
    minimum : int
        Each non-empty stratum gets at least ``min(minimum, N_h)`` documents. The default 2 is
        the least that lets eq. 33 estimate a stratum's variance; it never binds in the
        TREC-5 rule unless ``total`` is below ``2 x`` the number of non-empty strata.
    proportions : array_like of float, shape (H,), optional
        Prior proportions of relevant documents, strictly between 0 and 1; required by
        ``"neyman"`` and rejected by the other methods.

    Returns
    -------
    numpy.ndarray of int, shape (H,)
        ``n_h`` with ``min(minimum, N_h) <= n_h <= N_h`` on non-empty strata and
        ``sum n_h = min(total, sum N_h)``.

    Raises
    ------
    ValueError
        On bad counts, an unknown method, ``proportions`` missing (neyman), given (otherwise),
        mis-shaped or outside (0, 1), or a ``total`` too small to honour ``minimum``.

    Notes
    -----
    Every method is the same computation: shares ``clip(lam w_h, min(minimum, N_h), N_h)``
    with the ``lam`` that makes them sum to the total (weights ``w_h`` 1, ``N_h`` or
    ``N_h sqrt(p_h (1 - p_h))``), so that a stratum whose share exceeds its size is taken whole
    and the excess re-allocated (Cochran 1977, section 5.8), then rounded to whole documents by
    largest remainders, ties to the larger stratum and then the lower index.

    References
    ----------
    Lewis (1996), section 5.3; Cochran (1977), sections 5.3, 5.5, 5.8 and 5.10.

    Examples
    --------
    The strata of Lewis (1996), Figure 2 (001, 010, 011, 111; 000 is never sampled): equal
    shares of 25, stratum 010 holds only 10, and its 15 leftover go 5 each to the others, which
    is the sample of Figure 2.

    >>> allocate([1000, 10, 200, 40])
    array([30, 10, 30, 30])
    >>> allocate([1000, 10, 200, 40], method="proportional")
    array([79,  2, 16,  3])
    >>> allocate([1000, 10, 200, 40], method="neyman", proportions=[0.02, 0.2, 0.4, 0.75])
    array([54,  2, 37,  7])
    """
    method = check.choice(method, "method", ALLOCATION_METHODS)
    strata = _one_dimensional(sizes, "sizes")
    if strata.size == 0:
        raise ValueError("`sizes` must hold at least one stratum; got an empty array.")
    budget = check.positive_int(total, "total")
    if budget > check.MAX_COUNT:
        raise ValueError(f"`total` must be at most 2**53 = {check.MAX_COUNT}; got "
                         f"{check.show(total)}.")
    if isinstance(minimum, bool) or not isinstance(minimum, int) or minimum < 0:
        raise ValueError(f"`minimum` must be a non-negative integer; got {check.show(minimum)}.")
    priors = _priors(method, proportions, strata)
    target = min(budget, int(strata.sum()))
    # capped at the budget first: a minimum beyond int64 would overflow in numpy
    low = np.minimum(min(minimum, budget + 1), strata)
    if low.sum() > target:
        raise ValueError(
            f"`total` must be at least {int(low.sum())} to give each of the "
            f"{int(np.count_nonzero(strata))} non-empty strata `minimum` = {minimum} documents "
            f"(or its whole size); got {budget}."
        )
    if low.sum() == target:  # the minimums use up the budget (or nothing is left to sample)
        return low
    weights = _allocation_weights(method, strata, priors)
    shares = _water_fill(weights, low.astype(np.float64), strata.astype(np.float64), target)
    return _round_shares(shares, strata, target)


def _priors(method: str, proportions: Any, sizes: IntArray) -> Array | None:
    if method != "neyman":
        if proportions is not None:
            raise ValueError(f"`proportions` are used only by method='neyman'; got method="
                             f"{method!r} with proportions.")
        return None
    if proportions is None:
        raise ValueError("`proportions` (prior proportions per stratum) are required by "
                         "method='neyman'; got None.")
    priors = check.as_real_array(proportions, "proportions")
    if priors.shape != sizes.shape:
        raise ValueError(f"`proportions` must have one entry per stratum (shape {sizes.shape}); "
                         f"got shape {priors.shape}.")
    bad = (sizes > 0) & ((priors <= 0.0) | (priors >= 1.0))
    if bad.any():
        raise ValueError("`proportions` must be strictly between 0 and 1 in non-empty strata (a "
                         "prior of 0 or 1 would leave the stratum unsampled); got "
                         f"{check.first_offender(priors, bad)}.")
    return priors


# ------------------------------------------------------------------------ membership strata


def _runs(runs: Any) -> tuple[Hashable, ...]:
    if isinstance(runs, str | bytes | Mapping | AbstractSet) or not check.iterable(runs):
        raise TypeError(f"`runs` must be a sequence of distinct run names; got "
                        f"{check.show(runs)}.")
    result = tuple(runs)
    if not 1 <= len(result) <= _MAX_RUNS:
        raise ValueError(f"`runs` must name between 1 and {_MAX_RUNS} runs; got {len(result)}.")
    try:
        distinct = len(set(result)) == len(result)
    except TypeError:
        raise TypeError(f"`runs` must hold hashable names; got {check.show(result)}.") from None
    if not distinct:
        raise ValueError(f"`runs` must be distinct; got {check.show(result)}.")
    return result


@dataclass(frozen=True, init=False, eq=False)
class MembershipStrata:
    """The strata of documents by which runs submitted them (Lewis 1996, section 5.2.1).

    With ``R`` runs there are ``2^R`` strata, one per membership pattern. Stratum ``k`` is
    labelled by ``k`` in ``R`` binary digits, the first digit for ``runs[0]``: for three runs
    ``"000" .. "111"``, ``"011"`` holding the documents submitted by runs 2 and 3 but not run 1
    (Figure 1). Each run's set is the union of the strata with a 1 in its digit, so one
    stratified sample estimates every run (eq. 8-10). Stratum ``"0...0"`` (documents no run
    submitted) belongs to no set and is never sampled.

    Parameters
    ----------
    runs : sequence of hashable
        1 to 16 distinct run names.
    sizes : array_like of int, shape (2^R,)
        Documents per stratum, in label order.

    Examples
    --------
    Lewis (1996), Figure 2: one stratified sample of 100 documents estimates all three runs,
    each with its own utility measure (eq. 2-4).

    >>> strata = MembershipStrata(["R1", "R2", "R3"], [100050, 1000, 10, 200, 0, 0, 0, 40])
    >>> strata.labels[3], int(strata.sizes[3])
    ('011', 200)
    >>> sampled = strata.allocate(100)
    >>> sampled
    array([ 0, 30, 10, 30,  0,  0,  0, 30])
    >>> runs = strata.estimates(sampled, [0, 1, 2, 10, 0, 0, 0, 23])
    >>> [round(runs[r].estimate, 4) for r in ("R1", "R2", "R3")]
    [0.7667, 0.3973, 0.1054]
    >>> runs["R2"].labels
    ('010', '011', '110', '111')
    >>> round(runs["R3"].utility(u_a=3, u_b=-1).mse, 1)
    21452.5
    """

    runs: tuple[Hashable, ...]
    sizes: IntArray

    def __init__(self, runs: Iterable[Hashable], sizes: Any) -> None:
        names = _runs(runs)
        counts = _one_dimensional(sizes, "sizes")
        if counts.size != 2 ** len(names):
            raise ValueError(f"`sizes` must have one entry per membership pattern of the "
                             f"{len(names)} `runs` (2^{len(names)} = {2 ** len(names)}); got "
                             f"length {counts.size}.")
        object.__setattr__(self, "runs", names)
        object.__setattr__(self, "sizes", _read_only(counts))

    @classmethod
    def from_documents(cls, submitted: Iterable[Iterable[Hashable]], runs: Iterable[Hashable]
                       ) -> Self:
        """Count the documents of each stratum.

        Parameters
        ----------
        submitted : iterable of iterables of hashable
            For each document, the runs that submitted it (empty: none did).
        runs : sequence of hashable
            The run names.

        Examples
        --------
        >>> docs = [{"R1", "R2", "R3"}, {"R3"}, {"R2", "R3"}, {"R3"}, set()]
        >>> MembershipStrata.from_documents(docs, ["R1", "R2", "R3"]).sizes
        array([1, 2, 0, 1, 0, 0, 0, 1])
        """
        names = _runs(runs)
        pattern = _stratum_indices(submitted, names)
        return cls(names, np.bincount(pattern, minlength=2 ** len(names)))

    def stratum_of(self, submitted: Iterable[Iterable[Hashable]]) -> IntArray:
        """Stratum index of each document (to draw each stratum's sample from).

        ``submitted`` is as for :meth:`from_documents`.

        Examples
        --------
        >>> strata = MembershipStrata(["R1", "R2"], [0, 1, 1, 1])
        >>> strata.stratum_of([{"R2"}, {"R1", "R2"}, {"R1"}])
        array([1, 3, 2])
        """
        return _stratum_indices(submitted, self.runs)

    @property
    def labels(self) -> tuple[str, ...]:
        """``"0...0" .. "1...1"``: digit ``r`` is 1 when ``runs[r]`` submitted the stratum."""
        width = len(self.runs)
        return tuple(format(k, f"0{width}b") for k in range(2**width))

    @property
    def membership(self) -> BoolArray:
        """Boolean ``(2^R, R)`` array: ``membership[k, r]`` when stratum k is in run r's set."""
        width = len(self.runs)
        shifts = np.arange(width - 1, -1, -1)
        member: BoolArray = ((np.arange(2**width)[:, None] >> shifts) & 1).astype(np.bool_)
        return member

    def allocate(
        self,
        total: int = 100,
        *,
        method: str = "trec5",
        minimum: int = 2,
        proportions: Any = None,
    ) -> IntArray:
        """:func:`allocate` over the submitted strata (all but ``"0...0"``, which gets 0)."""
        submitted = self.sizes.copy()
        submitted[0] = 0
        return allocate(submitted, total, method=method, minimum=minimum,
                        proportions=proportions)

    def estimates(self, sampled: Any, positives: Any) -> dict[Hashable, StratifiedEstimate]:
        """Every run's stratified estimate from one sample (Lewis 1996, eq. 8-10).

        Parameters
        ----------
        sampled, positives : array_like of int, shape (2^R,)
            Documents judged and relevant ones found per stratum, in label order. A run whose
            set has a non-empty stratum without a sample gets an undefined (nan) estimate;
            ``"0...0"`` belongs to no run's set.

        Returns
        -------
        dict
            Run name to :class:`StratifiedEstimate` over the strata of its set (labelled as
            here). A run that submitted nothing gets an empty estimate (see the module
            docstring: nan proportion, utility exactly 0).
        """
        member = self.membership
        sizes, sampled_, positives_, labels = _strata_counts(
            self.sizes, sampled, positives, self.labels)
        estimates: dict[Hashable, StratifiedEstimate] = {}
        for column, run in enumerate(self.runs):
            mask = member[:, column]
            estimates[run] = StratifiedEstimate._trusted(
                sizes[mask], sampled_[mask], positives_[mask],
                tuple(label for label, keep in zip(labels, mask, strict=True) if keep),
            )
        return estimates


def _stratum_indices(submitted: Iterable[Iterable[Hashable]], runs: tuple[Hashable, ...]
                     ) -> IntArray:
    """Stratum index per document: bit ``R - 1 - r`` set when ``runs[r]`` submitted it."""
    if isinstance(submitted, str | bytes) or not check.iterable(submitted):
        raise TypeError(f"`submitted` must be a sequence of per-document run collections; got "
                        f"{check.show(submitted)}.")
    bit = {run: 1 << (len(runs) - 1 - r) for r, run in enumerate(runs)}
    indices = []
    for document, members in enumerate(submitted):
        if isinstance(members, str | bytes) or not check.iterable(members):
            raise TypeError(f"`submitted` must hold a collection of run names per document; "
                            f"got {check.show(members)} for document {document}.")
        index = 0
        for run in set(members):
            if run not in bit:
                raise ValueError(f"`submitted` must name only runs in `runs`; "
                                 f"got {check.show(run)} for "
                                 f"document {document}.")
            index |= bit[run]
        indices.append(index)
    return np.asarray(indices, dtype=np.int64)


# ---------------------------------------------------------------------------------- pooling


@dataclass(frozen=True)
class PooledEstimate:
    """Pooled estimate of a set's utility: unjudged documents counted as nonrelevant.

    Attributes
    ----------
    size, judged, relevant : int or numpy.ndarray of int
        Documents in the set, how many of them are in the judged pool, and how many of those
        were judged relevant.
    u_a, u_b : float
        Value of a relevant and of a nonrelevant document; ``u_a > u_b``.

    Notes
    -----
    ``estimate = u_a R + u_b (N - R)``, eq. 1 with ``A = R`` and ``B = N - R``. The true
    ``A`` is at least ``R`` (a relevant document outside the pool is still relevant) and
    ``u = u_a A + u_b (N - A)`` increases with ``A`` when ``u_a > u_b``, so the estimate never
    exceeds the true utility: it is a lower bound, not an unbiased estimate, and carries no
    sampling variance or interval (the pool is not a random sample; Lewis 1996, section 7.1).
    """

    size: int | IntArray
    judged: int | IntArray
    relevant: int | IntArray
    u_a: float
    u_b: float

    def __post_init__(self) -> None:
        # built directly or by pooled_estimate: either way the inputs are checked here
        a, b = _utility_weights(self.u_a, self.u_b)
        counts = [check.as_counts(getattr(self, name), name)
                  for name in ("size", "judged", "relevant")]
        try:
            n, j, r = np.broadcast_arrays(*counts)
        except ValueError:
            raise ValueError("`size`, `judged` and `relevant` must broadcast together; got "
                             f"shapes {[np.shape(c) for c in counts]}.") from None
        for small, big, small_name, big_name in ((j, n, "judged", "size"),
                                                 (r, j, "relevant", "judged")):
            over = small > big
            if over.any():
                index = check.first_index(over)
                raise ValueError(f"`{small_name}` must not exceed `{big_name}`; got "
                                 f"{small_name}={small[index]} > {big_name}={big[index]}"
                                 f"{check.at_index(index)}.")
        for name, array in (("size", n), ("judged", j), ("relevant", r)):
            object.__setattr__(self, name, int(array) if array.ndim == 0 else array.copy())
        object.__setattr__(self, "u_a", a)
        object.__setattr__(self, "u_b", b)

    @property
    def unjudged(self) -> int | IntArray:
        """``size - judged``: documents the pooling assumption calls nonrelevant unseen."""
        return self.size - self.judged

    @property
    def estimate(self) -> Bound:
        """``u_a R + u_b (N - R)``, a lower bound on the true utility."""
        value = np.asarray(self.u_a * np.asarray(self.relevant)
                           + self.u_b * (np.asarray(self.size) - np.asarray(self.relevant)),
                           dtype=np.float64)
        return float(value) if value.ndim == 0 else value


def pooled_estimate(size: Any, judged: Any, relevant: Any, *, u_a: float, u_b: float
                    ) -> PooledEstimate:
    """The pooled utility estimate of Lewis (1996), section 5.1, a lower bound (section 7.1).

    Parameters
    ----------
    size : int or array_like of int
        ``N``, documents in the submitted set.
    judged : int or array_like of int
        Documents of the set in the judged pool, ``judged <= size``.
    relevant : int or array_like of int
        Documents of the set judged relevant, ``relevant <= judged``.
    u_a, u_b : float
        Value of a relevant and of a nonrelevant document; ``u_a > u_b``.

    Returns
    -------
    PooledEstimate
        Counts broadcast together; ``estimate`` is a float for scalars, an array otherwise.

    References
    ----------
    Lewis (1996), sections 5.1 and 7.1.

    Examples
    --------
    A set of 250 documents, 120 of them judged, 90 judged relevant, under ``u = A - B``: the
    true utility is at least 90 - 160 = -70.

    >>> pooled_estimate(250, 120, 90, u_a=1, u_b=-1).estimate
    -70.0
    """
    return PooledEstimate(size, judged, relevant, u_a, u_b)
