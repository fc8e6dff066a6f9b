"""Point and interval estimation of F1 from a test sample.

Two sampling designs (Bagdouri, Webber, Lewis & Oard 2013, "Towards minimizing the annotation
cost of certified text classification", CIKM, section 4 and Appendix A):

``design="srs"``
    The test set is a simple random sample of ``n = tp + fp + fn + tn`` documents from a (logically
    infinite) population: the counts are multinomial.
``design="stratified"``
    The retrieved segment (classified relevant, ``n1 = tp + fp`` sampled) and the unretrieved
    segment (``n0 = fn + tn`` sampled) are sampled independently, with the segments' population
    sizes ``(N1, N0)`` known (Appendix A): ``population_sizes=(N1, N0)`` is required, or
    ``population_sizes="sample"``, the explicit choice of the sample's own retrieved share
    ``n1 / n`` for ``N1 / (N1 + N0)``. Optionally the finite-population factor
    ``1 - n_h / N_h`` is applied to each segment's variance.

Notation: ``R1`` is the proportion relevant in the retrieved segment, ``R0`` in the unretrieved
segment, ``q = N1 / (N1 + N0)`` the proportion retrieved. Population F1 is
``F = 2 q R1 / (q R1 + q + (1 - q) R0)`` (Appendix A; with ``q = n1 / n`` it is the sample
``2 tp / (2 tp + fp + fn)``).

Undefined cases follow one rule: where F1 is undefined (``2 tp + fp + fn = 0``; in the
stratified design, a segment with population share > 0 but no sampled document) the estimate
and the approximate methods' bounds are nan. The exact methods are defined there too: their
confidence set is whatever the data do not exclude, ``[0, 1]`` when nothing is observed
(which their coverage guarantee needs). The normal-approximation intervals are degenerate
(zero width) when the estimated variance is 0 (F1 estimate 0 or 1), like the Wald interval for
a proportion; the logit interval is nan there because the logit is infinite.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy import special

from estimators import _validation as check
from estimators._defaults import default_method
from estimators._hypergeometric import hypergeometric_bounds
from estimators._numeric import ratio, upper_normal_quantile
from estimators.interval import Bound, Interval
from estimators.proportion import PROPORTION_METHODS, proportion_ci
from estimators.proportion import _bounds as _proportion_bounds

__all__ = ["F1_DESIGNS", "F1_METHODS", "F1_METHODS_BY_DESIGN", "F1Estimate", "f1_ci",
           "f1_estimate"]

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

# The conditional binomial of the Jaccard ratio J = tp / (tp + fp + fn) (SRS): any binomial
# interval for J maps to an F1 interval (see `_jaccard_bounds`).
_JACCARD = tuple(f"jaccard-{m}" for m in PROPORTION_METHODS)
# Bonferroni combinations of the two segments' exact bounds (stratified design): the segment
# method of each (`_segments_bounds`).
_SEGMENTS = {"segments-clopper-pearson": "clopper-pearson",
             "segments-hypergeometric": "hypergeometric"}
F1_METHODS: tuple[str, ...] = ("delta", "logit-delta", "beta-posterior", "bootstrap",
                               "dirichlet-posterior", *_JACCARD, *_SEGMENTS)
F1_DESIGNS: tuple[str, ...] = ("srs", "stratified")
F1_METHODS_BY_DESIGN: dict[str, tuple[str, ...]] = {
    "srs": tuple(m for m in F1_METHODS if m not in _SEGMENTS),
    "stratified": tuple(m for m in F1_METHODS
                        if m != "dirichlet-posterior" and not m.startswith("jaccard-")),
}
DEFAULT_DRAWS = 10_000
_BELOW_ONE = float(np.nextafter(1.0, 0.0))
_COUNT_NAMES = ("tp", "fp", "fn", "tn")
# `population_sizes` with design="stratified": the segments' sizes (N1, N0) or this marker,
# the sample's own retrieved share standing for theirs (one rule for f1 and recall)
SAMPLE_SHARE: Literal["sample"] = "sample"
Sizes = tuple[IntArray, IntArray] | Literal["sample"] | None
_SIZES_NEEDED = ("`population_sizes` must be the segments' sizes (N1, N0), or 'sample' for "
                 "the sample's retrieved share n1 / (n1 + n0) to stand for N1 / (N1 + N0), "
                 "with design='stratified'; got {}.")
_SIZES_KNOWN = ("`population_sizes` must be the segments' sizes (N1, N0) with {} (the "
                "segments' finite populations); got 'sample'.")


def f1_from_segments(q: Array, r1: Array, r0: Array) -> Array:
    """Population F1 from the retrieved share ``q`` and the segments' relevant proportions.

    ``F = 2 q R1 / (q R1 + q + (1 - q) R0)``: true positives ``q R1``, false positives
    ``q (1 - R1)``, false negatives ``(1 - q) R0`` (Bagdouri et al. 2013, Appendix A).
    """
    return ratio(2.0 * q * r1, q * r1 + q + (1.0 - q) * r0)


def _srs_variance(tp: Array, fp: Array, fn: Array) -> Array:
    """Delta-method variance of sample F1 under multinomial sampling.

    With cell proportions ``a = tp/n, b = fp/n, c = fn/n`` and ``S = 2a + b + c``, the gradient
    of ``F = 2a / S`` is ``(2 (b + c), -2a, -2a) / S^2``; F is homogeneous of degree 0, so the
    multinomial covariance term vanishes and
    ``Var(F) = 4 a (b + c) (a + b + c) / (n S^4) = 4 tp e (tp + e) / (2 tp + e)^4`` with
    ``e = fp + fn`` (propagation of error, Bagdouri et al. 2013, Appendix A eq. 1; Taylor 1997).
    """
    errors = fp + fn
    return ratio(4.0 * tp * errors * (tp + errors), (2.0 * tp + errors) ** 4)


def _stratified_variance(
    q: Array, r1: Array, r0: Array, var_r1: Array, var_r0: Array
) -> Array:
    """Delta-method variance of stratified F1 (Bagdouri et al. 2013, Appendix A, eq. 1-4).

    With ``D = q R1 + q + (1 - q) R0``: ``dF/dR1 = 2 q (q + (1 - q) R0) / D^2`` and
    ``dF/dR0 = -2 q (1 - q) R1 / D^2``; the segments are sampled independently
    (``Cov(R1, R0) = 0``), so
    ``Var(F) = 4 q^2 [(q + (1 - q) R0)^2 Var(R1) + (1 - q)^2 R1^2 Var(R0)] / D^4`` (eq. 4).
    """
    d = q * r1 + q + (1.0 - q) * r0
    numerator = 4.0 * q**2 * ((q + (1.0 - q) * r0) ** 2 * var_r1 + (1.0 - q) ** 2 * r1**2 * var_r0)
    return ratio(numerator, d**4)


def _segment_variance(r: Array, n: Array, population: IntArray | None, fpc: bool) -> Array:
    """Variance of a segment proportion, ``R (1 - R) / n`` times ``1 - n / N`` if ``fpc``.

    Bagdouri et al. (2013) Appendix A use ``R (1 - R) / n`` "ignoring the finite-population
    adjustment of (1 - n1/N1)"; ``fpc=True`` applies it. A segment with no sampled document
    has nan variance (its proportion is undefined); a fully sampled one has zero variance.
    """
    var = ratio(r * (1.0 - r), n)
    if fpc and population is not None:
        var = var * (1.0 - ratio(n, population))
    return var


@dataclass(frozen=True)
class F1Estimate:
    """F1 estimated from a test sample, with what is needed for its intervals.

    Built directly or with :func:`f1_estimate`; the inputs are validated either way.

    Attributes
    ----------
    tp, fp, fn, tn : numpy.ndarray of int
        Test-sample counts (broadcast to one shape).
    design : {"srs", "stratified"}
        Sampling design of the test sample (module docstring).
    population_sizes : tuple of numpy.ndarray, "sample" or None
        Stratified design: ``(N1, N0)``, the population sizes of the retrieved and
        unretrieved segments, or ``"sample"``: the sample's retrieved share ``n1 / n`` stands
        for ``N1 / (N1 + N0)``. ``None`` under simple random sampling.
    finite_population : bool
        Apply the finite-population factor ``1 - n_h / N_h`` (stratified design only).
    """

    tp: IntArray
    fp: IntArray
    fn: IntArray
    tn: IntArray
    design: str = "srs"
    population_sizes: Sizes = None
    finite_population: bool = False

    def __post_init__(self) -> None:
        # built directly or by f1_estimate: either way the counts are checked once, here
        design = check.choice(self.design, "design", F1_DESIGNS)
        finite = self.finite_population
        if not isinstance(finite, bool | np.bool_):
            raise TypeError(f"`finite_population` must be True or False; got {check.show(finite)}.")
        counts = [check.as_counts(getattr(self, name), name) for name in _COUNT_NAMES]
        try:
            counts = list(np.broadcast_arrays(*counts))
        except ValueError:
            shapes = ", ".join(str(np.shape(c)) for c in counts)
            raise ValueError(
                f"`tp`, `fp`, `fn`, `tn` must broadcast together; got shapes {shapes}."
            ) from None
        sizes = _population_sizes(self.population_sizes, design, bool(finite), counts)
        if isinstance(sizes, tuple):
            shape = np.broadcast_shapes(counts[0].shape, sizes[0].shape, sizes[1].shape)
            counts = [np.broadcast_to(c, shape) for c in counts]
            sizes = (np.broadcast_to(sizes[0], shape), np.broadcast_to(sizes[1], shape))
        for name, value in zip(_COUNT_NAMES, counts, strict=True):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "design", design)
        object.__setattr__(self, "population_sizes", sizes)
        object.__setattr__(self, "finite_population", bool(finite))

    @property
    def _scalar(self) -> bool:
        return self.tp.ndim == 0

    def _out(self, value: Array) -> Bound:
        return float(value) if self._scalar else value

    @property
    def retrieved_share(self) -> Array:
        """``q``: ``N1 / (N1 + N0)`` if population sizes are known, else ``n1 / n``."""
        if isinstance(self.population_sizes, tuple):
            n1, n0 = (s.astype(np.float64) for s in self.population_sizes)
        else:
            n1 = (self.tp + self.fp).astype(np.float64)
            n0 = (self.fn + self.tn).astype(np.float64)
        return ratio(n1, n1 + n0)

    def _segments(self) -> tuple[Array, Array, Array]:
        """``q``, ``R1 = tp / n1`` and ``R0 = fn / n0`` (nan for an unsampled segment)."""
        r1 = ratio(self.tp.astype(np.float64), (self.tp + self.fp).astype(np.float64))
        r0 = ratio(self.fn.astype(np.float64), (self.fn + self.tn).astype(np.float64))
        q = self.retrieved_share
        # A segment with no population share does not enter F1; keep it from spreading nan.
        r1 = np.where(q == 0.0, 0.0, r1)
        r0 = np.where(q == 1.0, 0.0, r0)
        return q, r1, r0

    def _point(self) -> Array:
        if self.design == "srs":
            tp = self.tp.astype(np.float64)
            return ratio(2.0 * tp, 2.0 * tp + self.fp + self.fn)
        return f1_from_segments(*self._segments())

    @property
    def estimate(self) -> Bound:
        """Sample F1 (SRS) or the stratified estimate ``2 q R1 / (q R1 + q + (1 - q) R0)``."""
        return self._out(self._point())

    def _variance(self) -> Array:
        if self.design == "srs":
            var = _srs_variance(*(c.astype(np.float64) for c in (self.tp, self.fp, self.fn)))
            return np.where(np.isnan(self._point()), np.nan, var)
        q, r1, r0 = self._segments()
        sizes = self._sizes
        var_r1 = _segment_variance(r1, (self.tp + self.fp).astype(np.float64), sizes[0],
                                   self.finite_population)
        var_r0 = _segment_variance(r0, (self.fn + self.tn).astype(np.float64), sizes[1],
                                   self.finite_population)
        var_r1 = np.where(q == 0.0, 0.0, var_r1)
        var_r0 = np.where(q == 1.0, 0.0, var_r0)
        return _stratified_variance(q, r1, r0, var_r1, var_r0)

    @property
    def _sizes(self) -> tuple[IntArray, IntArray] | tuple[None, None]:
        """``(N1, N0)`` where the segments' sizes are known, else ``(None, None)``."""
        return self.population_sizes if isinstance(self.population_sizes, tuple) else (None,
                                                                                        None)

    @property
    def variance(self) -> Bound:
        """Delta-method (propagation of error) variance of the estimate; see Notes of f1_ci."""
        return self._out(self._variance())

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        *,
        method: str | None = None,
        alternative: str = "two-sided",
        rng: Any = None,
        draws: int = DEFAULT_DRAWS,
    ) -> Interval:
        """Confidence interval for population F1; see :func:`f1_ci` for the methods and the
        default."""
        return self.confidence_intervals(confidence_level, method=method,
                                         alternatives=(alternative,), rng=rng, draws=draws)[0]

    def confidence_intervals(
        self,
        confidence_level: float = 0.95,
        *,
        method: str | None = None,
        alternatives: Sequence[str] = check.ALTERNATIVES,
        rng: Any = None,
        draws: int = DEFAULT_DRAWS,
    ) -> tuple[Interval, ...]:
        """Confidence intervals for population F1, one per alternative, from one set of draws.

        Parameters
        ----------
        confidence_level, method, rng, draws
            As for :meth:`confidence_interval` (see :func:`f1_ci`).
        alternatives : sequence of {"two-sided", "greater", "less"}
            The intervals' alternatives, at least one.

        Returns
        -------
        tuple of Interval
            One per alternative, in their order: each is the interval
            :meth:`confidence_interval` gives for that alternative with ``rng`` in the same
            state. The Monte Carlo methods (``beta-posterior``, ``bootstrap``) draw once and
            read every alternative's quantiles from those draws, at the cost of one interval.

        Examples
        --------
        >>> est = f1_estimate(60, 20, 25, 395)
        >>> both, lower = est.confidence_intervals(method="bootstrap", rng=1, draws=2000,
        ...                                        alternatives=("two-sided", "greater"))
        >>> alone = est.confidence_interval(method="bootstrap", alternative="greater", rng=1,
        ...                                 draws=2000)
        >>> lower == alone
        True
        """
        if method is None:
            method = default_method("f1", self.design, finite=self.finite_population)
        method = check.choice(method, "method", F1_METHODS)
        if isinstance(alternatives, str) or not isinstance(alternatives, Sequence) or not (
                alternatives):
            raise ValueError(f"`alternatives` must be a non-empty sequence of alternatives; got "
                             f"{check.show(alternatives)}.")
        sides = tuple(check.alternative(alternative) for alternative in alternatives)
        level = check.open_unit(confidence_level, "confidence_level")
        # checked for every method (a bad value is a mistake even where it is not used); the
        # memory cap applies where the draws are made
        draws = check.positive_int(draws, "draws")
        if method in _SIMULATED:
            check.draws(draws, self.tp.size)
        generator = check.generator(rng)
        if method in ("bootstrap", "segments-clopper-pearson") and self.finite_population:
            raise ValueError(
                f"`method` must not be {method!r} with `finite_population=True` (it treats "
                f"each segment as sampled with replacement); got {method!r}.")
        if method not in F1_METHODS_BY_DESIGN[self.design]:
            valid = ", ".join(F1_METHODS_BY_DESIGN[self.design])
            raise ValueError(f"`method` must be one of {valid} for design={self.design!r}; got "
                             f"{method!r}.")
        if method == "segments-hypergeometric" and self.population_sizes == SAMPLE_SHARE:
            raise ValueError(_SIZES_KNOWN.format("method='segments-hypergeometric'"))
        tails = [(1.0 - level) / 2.0 if side == "two-sided" else 1.0 - level for side in sides]
        if method in _EXACT:
            bounds = [_EXACT[method](self, level, side) for side in sides]
        elif method in _NORMAL:
            point, var = self._point(), self._variance()
            bounds = [_NORMAL[method](point, var, tail) for tail in tails]
        else:
            replicates = _SIMULATED[method](self, generator, draws)
            # the quantiles at tail (low) and 1 - tail (high) of every alternative, each once
            probabilities = list(dict.fromkeys(p for tail in tails for p in (tail, 1.0 - tail)))
            found = dict(zip(probabilities, _percentile_bounds(replicates, probabilities),
                             strict=True))
            undefined = np.isnan(self._point())  # one rule for every method: nan bounds
            bounds = [(np.where(undefined, np.nan, found[tail]),
                       np.where(undefined, np.nan, found[1.0 - tail])) for tail in tails]
        return tuple(self._interval(method, level, side, low, high, exact=method in _EXACT)
                     for side, (low, high) in zip(sides, bounds, strict=True))

    def _interval(self, method: str, level: float, alternative: str, low: Array, high: Array,
                  *, exact: bool) -> Interval:
        """The `Interval` of the bounds; an approximate one-sided interval's far end is 1 or 0.

        The far end is nan where the bound is (F1 undefined); the exact methods give both ends.
        """
        if not exact and alternative == "greater":
            high = np.where(np.isnan(low), np.nan, 1.0)
        elif not exact and alternative == "less":
            low = np.where(np.isnan(high), np.nan, 0.0)
        return Interval(low=self._out(low), high=self._out(high), method=method,
                        confidence_level=level, alternative=alternative)


def _delta_bounds(f: Array, var: Array, tail: float) -> tuple[Array, Array]:
    """Normal interval ``F +- z sqrt(Var)`` clipped to [0, 1] (Appendix A, final equation)."""
    half = upper_normal_quantile(tail) * np.sqrt(var)
    return np.clip(f - half, 0.0, 1.0), np.clip(f + half, 0.0, 1.0)


def _logit_delta_bounds(f: Array, var: Array, tail: float) -> tuple[Array, Array]:
    """Normal interval on the logit scale, back-transformed.

    ``logit(F) +- z sqrt(Var) / (F (1 - F))`` (delta method for ``logit``), mapped back with
    the logistic function, so the bounds stay inside (0, 1). Undefined (nan) at F = 0 or 1.
    """
    inside = (f > 0.0) & (f < 1.0)
    safe = np.where(inside, f, 0.5)
    half = upper_normal_quantile(tail) * np.sqrt(np.where(inside, var, 0.0)) / (safe * (1.0 - safe))
    centre = special.logit(safe)
    # expit(logit(F)) can miss F by a rounding: the interval must still hold its own centre
    low = np.where(inside, np.minimum(special.expit(centre - half), safe), np.nan)
    high = np.where(inside, np.maximum(special.expit(centre + half), safe), np.nan)
    return low, high


def _percentile_bounds(replicates: Array, probabilities: Sequence[float]) -> list[Array]:
    """Quantiles over axis 0 at each of ``probabilities``, ignoring undefined (nan) replicates.

    ``np.nanquantile(replicates, p, axis=0)`` with ``method="linear"`` (Hyndman & Fan 1996,
    definition 7) bit for bit, and nan where a column has no defined replicate, from one sort
    of every column at once (numpy's nanquantile loops over the columns in Python). A column
    with ``k`` defined values has the virtual index ``(k - 1) p`` between its sorted values
    ``a`` and ``b`` at its ``floor`` and ``floor + 1`` (at most ``k - 1``), and the quantile
    is numpy's interpolation ``a + (b - a) t``, or ``b - (b - a) (1 - t)`` for ``t >= 1/2``,
    with ``t`` the virtual index's fractional part.
    """
    ordered = np.sort(replicates, axis=0)  # nan sorts last: each column's defined values first
    defined = np.count_nonzero(~np.isnan(replicates), axis=0)
    last = np.maximum(defined - 1, 0)
    quantiles = []
    for p in probabilities:
        position = last * p
        below = np.floor(position).astype(np.intp)
        above = np.minimum(below + 1, last)
        a = np.take_along_axis(ordered, below[np.newaxis], axis=0)[0]
        b = np.take_along_axis(ordered, above[np.newaxis], axis=0)[0]
        t = position - below
        diff = b - a
        value = np.where(t >= 0.5, b - diff * (1.0 - t), a + diff * t)
        quantiles.append(np.where(defined > 0, value, np.nan))
    return quantiles


def _beta_posterior_draws(est: F1Estimate, rng: np.random.Generator, draws: int) -> Array:
    """Draws of population F1 from Jeffreys Beta posteriors on the two segments.

    ``R1 ~ Beta(1/2 + tp, 1/2 + fp)`` and ``R0 ~ Beta(1/2 + fn, 1/2 + tn)`` with the retrieved
    share ``q`` known (Bagdouri et al. 2013, section 4.3). With ``finite_population=True`` the
    unsampled documents of each segment are drawn from the posterior predictive
    (Beta-binomial), so the draws are of the finite population's F1.
    """
    shape = (draws, *est.tp.shape)
    r1 = rng.beta(0.5 + est.tp, 0.5 + est.fp, size=shape)
    r0 = rng.beta(0.5 + est.fn, 0.5 + est.tn, size=shape)
    if est.finite_population and isinstance(est.population_sizes, tuple):
        big1, big0 = est.population_sizes
        n1, n0 = est.tp + est.fp, est.fn + est.tn
        r1 = ratio(est.tp + rng.binomial(big1 - n1, r1), big1.astype(np.float64))
        r0 = ratio(est.fn + rng.binomial(big0 - n0, r0), big0.astype(np.float64))
    return _f1_of_segment_draws(est.retrieved_share, r1, r0)


def _bootstrap_draws(est: F1Estimate, rng: np.random.Generator, draws: int) -> Array:
    """Percentile-bootstrap replicates of the F1 estimate (Efron & Tibshirani 1993, ch. 13).

    SRS: the sample is resampled with replacement; only ``tp`` and ``e = fp + fn`` matter for
    F1, so each replicate draws ``tp* ~ Bin(n, tp/n)`` and ``e* ~ Bin(n - tp*, e/(n - tp))``
    (the multinomial by conditional binomials). Stratified: each segment is resampled on its
    own, ``tp* ~ Bin(n1, R1)`` and ``fn* ~ Bin(n0, R0)``. Replicates with undefined F1 are
    dropped from the quantiles.
    """
    shape = (draws, *est.tp.shape)
    if est.design == "srs":
        n = est.tp + est.fp + est.fn + est.tn
        errors = est.fp + est.fn
        # An empty sample (n = 0) has no proportion; Bin(0, 0) keeps the draw defined.
        tp = rng.binomial(n, np.nan_to_num(ratio(est.tp, n)), size=shape)
        rest = n - est.tp
        share = np.where(rest > 0, ratio(errors.astype(np.float64), rest.astype(np.float64)), 0)
        e = rng.binomial(n - tp, share, size=shape)
        twice = tp.astype(np.float64)
        twice *= 2.0
        return _ratio_into(_draws_array(shape), twice, twice + e)
    q, r1, r0 = est._segments()
    n1, n0 = est.tp + est.fp, est.fn + est.tn
    tp = rng.binomial(n1, np.nan_to_num(r1), size=shape)
    fn = rng.binomial(n0, np.nan_to_num(r0), size=shape)
    return _f1_of_segment_draws(q, _drawn_shares(tp, n1, q == 0.0), _drawn_shares(fn, n0, q == 1.0))


def _draws_array(shape: tuple[int, ...]) -> Array:
    """An empty float64 array of ``shape = (draws, *counts' shape)``, the draws axis contiguous.

    Each interval's draws then lie together in memory, where `_percentile_bounds` sorts them.
    """
    return np.moveaxis(np.empty((*shape[1:], shape[0])), -1, 0)


def _ratio_into(out: Array, numerator: Array, denominator: Array) -> Array:
    """`estimators._numeric.ratio` written into ``out``: the same bits, nan where it has nan.

    Every element is divided, then set to ``np.nan`` where the denominator is 0 (the
    quotient there, 0 / 0 or x / 0, would not be the same nan), which spares `ratio`'s
    nan-filled array and masked division over the draws.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(numerator, denominator, out=out)
    zero = denominator == 0.0
    if zero.any():
        np.copyto(out, np.nan, where=zero)
    return out


def _drawn_shares(count: IntArray, trials: IntArray, absent: NDArray[np.bool_]) -> Array:
    """``np.where(absent, 0, ratio(count, trials))`` over bootstrap draws ``count``.

    A segment's drawn proportion, nan without a sample (no trials, so the count is 0) and 0
    where the segment has no population share (it does not enter F1), in one new array.
    """
    share = count.astype(np.float64)
    _ratio_into(share, share, trials.astype(np.float64))
    if absent.any():
        np.copyto(share, 0.0, where=absent)
    return share


def _f1_of_segment_draws(q: Array, r1: Array, r0: Array) -> Array:
    """`f1_from_segments` of draws of ``R1`` and ``R0``, bit for bit, in place.

    ``F = 2 q R1 / (q R1 + q + (1 - q) R0)`` (Bagdouri et al. 2013, Appendix A) with the same
    operations in the same order, written over ``r1`` and ``r0`` (float64 arrays of the draws'
    full shape ``(draws, *shape)``, in [0, 1] or nan; both overwritten) instead of into new
    arrays; the result has its draws axis contiguous (`_draws_array`).
    """
    denominator = q * r1
    denominator += q
    r0 *= 1.0 - q
    denominator += r0
    r1 *= 2.0 * q
    return _ratio_into(_draws_array(r1.shape), r1, denominator)


def _f1_of_jaccard(j: Array) -> Array:
    """``F = 2 J / (1 + J)``, the Dice-Jaccard identity (increasing in J on [0, 1])."""
    return 2.0 * j / (1.0 + j)


def _jaccard_bounds(est: F1Estimate, level: float, alternative: str, *,
                    proportion_method: str) -> tuple[Array, Array]:
    """F1 interval from a binomial interval for the Jaccard ratio (simple random sampling).

    With multinomial counts, given ``m = tp + fp + fn`` the count ``tp`` is exactly
    ``Binomial(m, J)`` with ``J = p_tp / (p_tp + p_fp + p_fn)``, and population
    ``F1 = 2 J / (1 + J)`` increases with ``J``. A binomial interval ``[j_lo, j_hi]`` for ``J``
    (`estimators.proportion.proportion_ci`, same level and alternative) maps to
    ``[2 j_lo / (1 + j_lo), 2 j_hi / (1 + j_hi)]``. Clopper-Pearson covers ``J`` at least at
    the nominal level for every ``m``, hence the F1 interval does so for every population and
    every ``n`` (exact, conservative). With ``m = 0`` the binomial has no trials and the data
    exclude no ``J``: the interval is ``[0, 1]`` (which the guarantee needs; the estimate is
    nan). Lam, Gopal & Qian (2023), arXiv 2309.14621, compare Clopper-Pearson and Wilson based
    F1 intervals of this kind.
    """
    m = est.tp + est.fp + est.fn
    ci = proportion_ci(est.tp, m, method=proportion_method, confidence_level=level,
                       alternative=alternative)
    empty = m == 0
    low = np.where(empty, 0.0, np.asarray(ci.low, dtype=np.float64))
    high = np.where(empty, 1.0, np.asarray(ci.high, dtype=np.float64))
    return _f1_of_jaccard(low), _f1_of_jaccard(high)


def _dirichlet_posterior_bounds(est: F1Estimate, level: float, alternative: str
                                ) -> tuple[Array, Array]:
    """Equal-tailed posterior interval of F1 under a Jeffreys Dirichlet prior (closed form).

    With a ``Dirichlet(1/2, 1/2, 1/2, 1/2)`` prior on the four cell proportions the posterior
    is ``Dirichlet(tp + 1/2, fp + 1/2, fn + 1/2, tn + 1/2)``; by the aggregation property of
    the Dirichlet, ``J = p_tp / (p_tp + p_fp + p_fn)`` is ``Beta(tp + 1/2, fp + fn + 1)``
    independently of the rest, and ``F1 = 2 J / (1 + J)`` is monotone, so F1's posterior
    quantiles are the mapped Beta quantiles: deterministic, no draws. Unlike
    ``beta-posterior`` (the paper's section 4.3, which takes the retrieved share ``q`` as known)
    it carries the uncertainty in ``q``.
    """
    a = est.tp.astype(np.float64) + 0.5
    b = (est.fp + est.fn).astype(np.float64) + 1.0
    tail = (1.0 - level) / 2.0 if alternative == "two-sided" else 1.0 - level
    low = special.betaincinv(a, b, tail) if alternative != "less" else np.zeros(a.shape)
    high = special.betaincinv(a, b, 1.0 - tail) if alternative != "greater" else np.ones(a.shape)
    return _f1_of_jaccard(low), _f1_of_jaccard(high)


def _segment_level(level: float, alternative: str) -> float:
    """Each segment's two-sided level ``1 - 2 t`` in a Bonferroni pair at tail ``t`` a side.

    ``t = a / 2`` one-sided (the segment's level is the level itself) and ``a / 4``
    two-sided (``(1 + level) / 2``), computed from the level so that nothing cancels: ``1 - 2 t``
    is 0 for a one-sided level below 1e-16. A two-sided level within 2**-53 of 1 gives the
    largest level below 1 (its tails differ from ``a / 4`` by less than 1e-16).
    """
    if alternative != "two-sided":
        return level
    return min((1.0 + level) / 2.0, _BELOW_ONE)


def _segment_bounds(successes: IntArray, trials: IntArray, size: IntArray | None,
                    level: float, method: str, *, low: bool = True, high: bool = True
                    ) -> tuple[Array, Array]:
    """A segment's two-sided exact interval at ``level``; [0, 1] without a sample.

    ``method="clopper-pearson"`` or ``"hypergeometric"`` (`estimators.proportion_ci`'s
    bounds, the latter with ``population_size=size``). For the hypergeometric bounds, the
    costly ones, only the ends asked for are computed (the others are 0 and 1), with
    `estimators._hypergeometric.hypergeometric_bounds` at proportion_ci's own two-sided
    tail, so the values are proportion_ci's.
    """
    if method == "hypergeometric":
        assert size is not None
        tail = (1.0 - level) / 2.0  # as proportion_ci computes a two-sided interval's tail
        k_low, k_high = hypergeometric_bounds(successes, trials, size, tail, lower=low,
                                              upper=high)
        whole = np.where(size == 0, 1, size).astype(np.float64)
        r_low, r_high = k_low / whole, k_high / whole
    else:
        ci = proportion_ci(successes, trials, method=method, confidence_level=level)
        r_low, r_high = (np.asarray(b, dtype=np.float64) for b in ci)
    empty = trials == 0
    return np.where(empty, 0.0, r_low), np.where(empty, 1.0, r_high)


def _segments_bounds(est: F1Estimate, level: float, alternative: str, *,
                     proportion_method: str) -> tuple[Array, Array]:
    """Bonferroni combination of the two segments' exact bounds (stratified design).

    F1 ``= 2 q R1 / (q R1 + q + (1 - q) R0)`` increases with ``R1`` and decreases with ``R0``
    (module docstring), and the segments are sampled independently. The lower bound is F1 at
    (lower bound of ``R1``, upper bound of ``R0``), the upper bound F1 at (upper of ``R1``,
    lower of ``R0``), each segment's bound taken at level ``1 - a / 2`` for a one-sided
    interval at ``1 - a`` (two-sided: each segment's two-sided interval at ``1 - a / 2``).
    F1 leaves the interval only if ``R1`` or ``R0`` leaves its own, so by Bonferroni's
    inequality the coverage is at least ``1 - a`` whenever each segment's interval covers at
    least its own level. ``proportion_method="clopper-pearson"`` (each segment binomial: an
    infinite population, or sampling with replacement) guarantees it for every population and
    sample sizes; ``"hypergeometric"`` (each segment's ``n_h`` drawn without replacement from
    its ``N_h`` documents, `estimators.proportion_ci` with ``population_size=N_h``) for every
    finite population. A segment without a sample gives its whole range [0, 1].
    """
    # each bound of each segment at tail a / 4 (two-sided) or a / 2 (one-sided): both are the
    # ends of the segment's two-sided interval at level 1 - 2 x tail
    segment_level = _segment_level(level, alternative)
    q, _, _ = est._segments()
    sizes: tuple[IntArray | None, IntArray | None] = (None, None)
    if proportion_method == "hypergeometric":
        assert isinstance(est.population_sizes, tuple)  # checked by confidence_interval
        sizes = est.population_sizes
    # F1's lower bound needs R1's lower and R0's upper bound, its upper bound the others
    need_low, need_high = alternative != "less", alternative != "greater"
    r1_low, r1_high = _segment_bounds(est.tp, est.tp + est.fp, sizes[0], segment_level,
                                      proportion_method, low=need_low, high=need_high)
    r0_low, r0_high = _segment_bounds(est.fn, est.fn + est.tn, sizes[1], segment_level,
                                      proportion_method, low=need_high, high=need_low)

    def f1(r1: Array, r0: Array) -> Array:
        # a segment with no population share does not enter F1
        return f1_from_segments(q, np.where(q == 0.0, 0.0, r1), np.where(q == 1.0, 0.0, r0))

    low = f1(r1_low, r0_high) if alternative != "less" else np.zeros(q.shape)
    high = f1(r1_high, r0_low) if alternative != "greater" else np.ones(q.shape)
    return np.nan_to_num(low, nan=0.0), np.nan_to_num(high, nan=1.0)


_NORMAL = {"delta": _delta_bounds, "logit-delta": _logit_delta_bounds}
_EXACT: dict[str, Callable[[F1Estimate, float, str], tuple[Array, Array]]] = {
    "dirichlet-posterior": _dirichlet_posterior_bounds,
    **{name: functools.partial(_segments_bounds, proportion_method=method)
       for name, method in _SEGMENTS.items()},
    **{name: functools.partial(_jaccard_bounds, proportion_method=method)
       for name, method in zip(_JACCARD, PROPORTION_METHODS, strict=True)}}
_SIMULATED = {"beta-posterior": _beta_posterior_draws, "bootstrap": _bootstrap_draws}


def _srs_lower_bounds(tp: IntArray, errors: IntArray, level: float, method: str) -> Array:
    """Lower bounds of the LOSCI on F1 from simple random samples, without validation.

    ``f1_ci(tp, errors, 0, tn, method=method, confidence_level=level,
    alternative="greater").low`` bit for bit (the same kernels and operations), for counts
    that are valid by construction: int64 arrays of one shape with at least one dimension (the
    proportion kernels work in place), ``tp, errors >= 0``; a level in (0, 1); a deterministic
    SRS method (not ``beta-posterior`` or ``bootstrap``). Only ``tp`` and ``errors = fp + fn``
    enter these bounds. It serves the certification planner, which bounds many simulated test
    sets (Bagdouri et al. 2013, section 4.1, Algorithm 1), where `f1_ci`'s checks would cost
    more than the bounds.
    """
    if method == "delta":
        # `_point`, `_srs_variance` and `_delta_bounds`'s lower end with their operations in
        # their order, each computed once: where 2 tp + e = 0 both ratios are 0 / 0 = nan
        tp_f = tp.astype(np.float64)
        e_f = errors.astype(np.float64)
        twice = 2.0 * tp_f
        total = twice + e_f
        with np.errstate(divide="ignore", invalid="ignore"):
            point = twice / total
            var = 4.0 * tp_f * e_f * (tp_f + e_f) / total**4
        lower = point - upper_normal_quantile(1.0 - level) * np.sqrt(var)
        return np.clip(lower, 0.0, 1.0, out=lower)
    if method in _NORMAL:
        tp_f = tp.astype(np.float64)
        point = ratio(2.0 * tp_f, 2.0 * tp_f + errors)
        var = _srs_variance(tp_f, errors.astype(np.float64), np.zeros(tp.shape))
        return _NORMAL[method](point, np.where(np.isnan(point), np.nan, var), 1.0 - level)[0]
    if method == "dirichlet-posterior":
        low: Array = special.betaincinv(tp + 0.5, errors + 1.0, 1.0 - level)
        return _f1_of_jaccard(low)
    # jaccard-<m>: the binomial lower bound of J = tp / m, 0 where m = 0 (`_jaccard_bounds`)
    m = tp + errors
    empty = m == 0
    low, _ = _proportion_bounds(method.removeprefix("jaccard-"), tp, np.where(empty, 1, m),
                                1.0 - level, "greater")
    return _f1_of_jaccard(np.where(empty, 0.0, low))


def f1_estimate(
    tp: Any,
    fp: Any,
    fn: Any,
    tn: Any,
    *,
    design: str = "srs",
    population_sizes: tuple[Any, Any] | Literal["sample"] | None = None,
    finite_population: bool = False,
) -> F1Estimate:
    """Validate test-sample counts and return an :class:`F1Estimate`.

    Parameters
    ----------
    tp, fp, fn, tn : int or array_like of int
        Test-sample counts; broadcast together.
    design : {"srs", "stratified"}
        Sampling design (module docstring).
    population_sizes : (N1, N0) or "sample", optional
        Required with ``design="stratified"``, refused with ``"srs"``. ``(N1, N0)``: the
        population sizes of the retrieved and unretrieved segments, each an int or an array
        broadcast with the counts, at least its segment's sample (``N1 >= tp + fp``,
        ``N0 >= fn + tn``), not both 0; they weigh the segments by the retrieved share
        ``q = N1 / (N1 + N0)``. ``"sample"``: the sample's own retrieved share
        ``n1 / (n1 + n0)`` stands for ``q``, an explicit choice, as when the segments were
        sampled in proportion to their sizes (not with ``finite_population=True`` nor
        ``method="segments-hypergeometric"``, which need the sizes).
    finite_population : bool
        Apply ``1 - n_h / N_h`` to each segment's variance (requires the sizes
        ``(N1, N0)``).

    Returns
    -------
    F1Estimate

    Raises
    ------
    TypeError
        If a count is not numeric or ``finite_population`` not a bool.
    ValueError
        If a count is negative or fractional, the design unknown, or ``population_sizes``
        missing (stratified), given (srs), neither a pair nor ``"sample"``, smaller than its
        segment's sample, or ``"sample"`` with ``finite_population=True``.

    Examples
    --------
    >>> est = f1_estimate(60, 20, 25, 395)
    >>> round(est.estimate, 4), round(est.variance ** 0.5, 4)
    (0.7273, 0.0391)

    Stratified: the segments' sizes weigh them; ``"sample"`` takes the sample's retrieved
    share (here 80 / 500) for theirs, and then gives the simple random sample's F1:

    >>> round(f1_estimate(60, 20, 25, 395, design="stratified",
    ...                   population_sizes=(2000, 8000)).estimate, 4)
    0.7545
    >>> round(f1_estimate(60, 20, 25, 395, design="stratified",
    ...                   population_sizes="sample").estimate, 4)
    0.7273
    """
    return F1Estimate(tp=tp, fp=fp, fn=fn, tn=tn, design=design,
                      population_sizes=population_sizes, finite_population=finite_population)


def _population_sizes(population_sizes: Any, design: str, finite_population: bool,
                      counts: list[IntArray]) -> Sizes:
    """The checked ``population_sizes`` of ``design``: ``None`` under ``"srs"``, the pair
    ``(N1, N0)`` as int arrays or ``"sample"`` under ``"stratified"``.

    One rule for `f1_ci` and `estimators.recall_ci`: a stratified design needs the segments'
    sizes, or the explicit ``"sample"`` for the sample's own retrieved share to stand for
    them (not with ``finite_population=True``, which needs the sizes).
    """
    if design != "stratified":
        if population_sizes is not None or finite_population:
            raise ValueError(
                "`population_sizes` and `finite_population` apply to design='stratified' "
                f"only; got design={check.show(design)}.")
        return None
    if population_sizes is None:
        raise ValueError(_SIZES_NEEDED.format("None"))
    if isinstance(population_sizes, str):
        if population_sizes != SAMPLE_SHARE:
            raise ValueError(_SIZES_NEEDED.format(check.show(population_sizes)))
        if finite_population:
            raise ValueError(_SIZES_KNOWN.format("`finite_population=True`"))
        return SAMPLE_SHARE
    if not isinstance(population_sizes, tuple | list) or len(population_sizes) != 2:
        raise ValueError(_SIZES_NEEDED.format(check.show(population_sizes)))
    big1 = check.as_counts(population_sizes[0], "population_sizes[0]")
    big0 = check.as_counts(population_sizes[1], "population_sizes[1]")
    tp, fp, fn, tn = counts
    try:
        np.broadcast_shapes(tp.shape, big1.shape, big0.shape)
    except ValueError:
        raise ValueError(
            "`population_sizes` must broadcast with the counts; got shapes "
            f"{big1.shape} and {big0.shape} for counts of shape {tp.shape}."
        ) from None
    for big, sampled, name, segment in ((big1, tp + fp, "population_sizes[0]", "`tp` + `fp`"),
                                        (big0, fn + tn, "population_sizes[1]", "`fn` + `tn`")):
        short = np.broadcast_to(big < sampled, np.broadcast(big, sampled).shape)
        if short.any():
            index = check.first_index(short)
            raise ValueError(
                f"`{name}` must be at least the segment's sample size ({segment} = "
                f"{int(np.broadcast_to(sampled, short.shape)[index])}); got "
                f"{check.first_offender(np.broadcast_to(big, short.shape), short)}.")
    if np.any(big1 + big0 == 0):
        raise ValueError("`population_sizes` must not both be 0; got (0, 0).")
    return big1, big0


def f1_ci(
    tp: Any,
    fp: Any,
    fn: Any,
    tn: Any,
    *,
    method: str | None = None,
    confidence_level: float = 0.95,
    alternative: str = "two-sided",
    design: str = "srs",
    population_sizes: tuple[Any, Any] | Literal["sample"] | None = None,
    finite_population: bool = False,
    rng: Any = None,
    draws: int = DEFAULT_DRAWS,
) -> Interval:
    """Confidence interval for population F1 from test-sample counts.

    Parameters
    ----------
    tp, fp, fn, tn : int or array_like of int
        Test-sample counts; broadcast together (arrays in, arrays out).
    method : str, optional
        One of ``F1_METHODS_BY_DESIGN[design]``. Default: the design's method whose coverage
        is guaranteed, ``"jaccard-clopper-pearson"`` under ``"srs"`` and
        ``"segments-clopper-pearson"`` stratified (``"segments-hypergeometric"`` with
        ``finite_population=True``); see `estimators._defaults`. ``"delta"``, the paper's,
        falls far below its level where relevant documents are few (study ``coverage_f1``).

        Approximate, either design: ``delta``: normal approximation with the
        propagation-of-error variance, clipped to [0, 1]. ``logit-delta``: the same variance
        on the logit scale, back-transformed. ``beta-posterior``: Monte Carlo quantiles of F1
        under Jeffreys Beta posteriors on the two segments with the retrieved share ``q``
        known (section 4.3; random, ``rng`` and ``draws``). ``bootstrap``: percentile
        bootstrap of the test sample (random).

        Simple random sampling, deterministic: ``jaccard-<m>`` for every ``proportion_ci``
        method ``m`` (``jaccard-clopper-pearson``, ``jaccard-wilson``, ``jaccard-jeffreys``,
        ...): the binomial interval ``m`` for the Jaccard ratio ``J = tp / (tp + fp + fn)``
        mapped by ``F1 = 2 J / (1 + J)``; ``jaccard-clopper-pearson`` covers at least the
        nominal level for every population and ``n``. ``dirichlet-posterior``: F1's posterior
        quantiles in closed form under a Jeffreys Dirichlet prior on the four cells (``q``
        uncertain, unlike ``beta-posterior``).

        Stratified design, deterministic: ``segments-clopper-pearson``: F1 at the segments'
        Clopper-Pearson bounds, Bonferroni-combined; at least the nominal coverage for every
        population and sample sizes (not with ``finite_population=True``).
        ``segments-hypergeometric``: the same with each segment's exact hypergeometric bounds
        (``n_h`` documents drawn without replacement from the segment's ``N_h``;
        ``population_sizes`` required): at least the nominal coverage of the finite
        population's F1 for every population and sample sizes; it tends to
        ``segments-clopper-pearson`` as the ``N_h`` grow and is much narrower where a
        segment is largely sampled.
    confidence_level : float
        Strictly between 0 and 1.
    alternative : {"two-sided", "greater", "less"}
        ``"greater"`` gives the lower one-sided confidence interval (LOSCI) ``[low, 1]`` used
        for certification.
    design, population_sizes, finite_population
        See :func:`f1_estimate`.
    rng : numpy.random.Generator, SeedSequence, int or None
        Randomness for the Monte Carlo methods (normalised by ``numpy.random.default_rng``).
    draws : int
        Monte Carlo draws for ``beta-posterior`` and ``bootstrap``.

    Returns
    -------
    Interval

    Notes
    -----
    SRS delta variance: ``Var(F) = 4 tp e (tp + e) / (2 tp + e)^4`` with ``e = fp + fn``.
    Stratified (Appendix A, eq. 4): ``Var(F) = 4 q^2 [(q + (1 - q) R0)^2 Var(R1) +
    (1 - q)^2 R1^2 Var(R0)] / (q R1 + q + (1 - q) R0)^4`` with ``Var(R_h) = R_h (1 - R_h) / n_h``
    (times ``1 - n_h / N_h`` with ``finite_population=True``).

    Jaccard methods (simple random sampling): given ``m = tp + fp + fn`` the count ``tp`` is
    ``Binomial(m, J)`` with ``J = p_tp / (p_tp + p_fp + p_fn)``, and population F1 is
    ``2 J / (1 + J)`` (the Dice-Jaccard identity), strictly increasing in ``J``; a binomial
    interval ``[j_lo, j_hi]`` maps to ``[2 j_lo / (1 + j_lo), 2 j_hi / (1 + j_hi)]``. With
    Clopper-Pearson the coverage is at least nominal conditionally on every ``m``, hence
    unconditionally. ``m = 0`` gives ``[0, 1]``: a binomial with no trials excludes no ``J``.
    Dirichlet posterior: ``J ~ Beta(tp + 1/2, fp + fn + 1)`` (aggregation property of the
    Dirichlet), mapped the same way. Segments: F1 increases with ``R1`` and decreases with
    ``R0``, so ``[F(R1_lo, R0_hi), F(R1_hi, R0_lo)]`` with each segment's bounds at tail
    ``a / 4`` (two-sided) or ``a / 2`` (one-sided) misses only when a segment's interval does:
    probability at most ``a`` (Bonferroni). ``segments-hypergeometric`` takes each segment's
    bounds from ``Hypergeometric(N_h, K_h, n_h)`` (`estimators.proportion_ci` with
    ``method="hypergeometric"``): the population F1 ``2 K1 / (K1 + N1 + K0)`` of ``K1``
    relevant among the ``N1`` retrieved and ``K0`` among the ``N0`` unretrieved documents is
    covered at least at the nominal level for every ``(N1, N0, K1, K0, n1, n0)``.

    Operating characteristics (study ``coverage_f1``, full grid, 95%): only ``beta-posterior``
    is near nominal for small ``n`` times prevalence; ``delta``, ``logit-delta`` and
    ``bootstrap`` under-cover badly when few relevant documents are expected (0.11-0.46 at
    prevalence 3%, ``n <= 200``), and the ``delta`` LOSCI stays a little short even at
    ``n = 5000`` (0.943). With ``design="srs"`` the retrieved share ``q`` is the sample's,
    treated as known (section 4.3 takes it from the collection), so ``beta-posterior`` leaves
    out its sampling error: its LOSCI covers 0.93 at prevalence 50%. When the collection's
    ``q`` is known, pass it (``design="stratified"`` with ``population_sizes``).

    References
    ----------
    Bagdouri, M., Webber, W., Lewis, D. D. & Oard, D. W. (2013). Towards minimizing the
    annotation cost of certified text classification. CIKM. Sections 4.3 and Appendix A.
    Clopper, C. J. & Pearson, E. S. (1934). Biometrika 26, 404-413.
    Lam, K. F. Y., Gopal, V. & Qian, J. (2023). Confidence intervals for the F1 score: a
    comparison of four methods. arXiv 2309.14621 (Clopper-Pearson, Wald and Wilson based).

    Examples
    --------
    The default, the guaranteed-coverage interval (J = 60 / 105; Clopper-Pearson on J,
    mapped):

    >>> ci = f1_ci(60, 20, 25, 395)
    >>> ci.method, round(ci.low, 4), round(ci.high, 4)
    ('jaccard-clopper-pearson', 0.6405, 0.8007)
    >>> round(f1_ci(60, 20, 25, 395, alternative="greater").low, 4)
    0.6545

    The paper's delta interval, narrower (and short of its level with few relevant
    documents):

    >>> low, high = f1_ci(60, 20, 25, 395, method="delta")
    >>> round(low, 4), round(high, 4)
    (0.6506, 0.8039)
    >>> round(f1_ci(60, 20, 25, 395, method="delta", alternative="greater").low, 4)
    0.6629
    >>> f1_ci(0, 0, 0, 50, method="jaccard-clopper-pearson").high  # m = 0: [0, 1]
    1.0
    >>> ci = f1_ci(60, 20, 25, 395, method="segments-clopper-pearson", design="stratified",
    ...            population_sizes=(800, 9200))
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.4685, 0.7495)

    The finite population's exact interval. Every one of the 80 retrieved documents is
    labelled, so ``R1 = 60 / 80`` is known, and half the unretrieved ones (420 of 840); the
    binomial segments, which ignore the population's size, give a wider interval:

    >>> ci = f1_ci(60, 20, 25, 395, method="segments-hypergeometric", design="stratified",
    ...            population_sizes=(80, 840))
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.5769, 0.6818)
    >>> ci = f1_ci(60, 20, 25, 395, method="segments-clopper-pearson", design="stratified",
    ...            population_sizes=(80, 840))
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.485, 0.7617)
    """
    estimate = f1_estimate(tp, fp, fn, tn, design=design, population_sizes=population_sizes,
                           finite_population=finite_population)
    return estimate.confidence_interval(confidence_level, method=method, alternative=alternative,
                                        rng=rng, draws=draws)
