"""Stratified estimates of a proportion and of a set's TREC-5 linear utility.

:class:`StratifiedEstimate` (one stratified or simple random sample, with intervals),
:class:`UtilityEstimate` (the utility it implies), :func:`srs_estimate` (one stratum), and
:func:`stratified_proportion` / :class:`StratifiedProportion` (many samples of one design at
once). The policies and interval methods are those of the :mod:`estimators.sampling`
docstring.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Self

import numpy as np
from numpy.typing import NDArray

from estimators import _validation as check
from estimators._strata import _design_counts, _read_only, _strata_counts, _utility_weights
from estimators._stratified_intervals import (
    _proportion_interval,
    _Sample,
    _stratified_proportion,
    _stratified_variance,
    _utility,
    _utility_mse,
)
from estimators.interval import Bound, Interval

__all__ = ["StratifiedEstimate", "StratifiedProportion", "UtilityEstimate", "srs_estimate",
           "stratified_proportion"]

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


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
    ``(1 / N^2) sum_h N_h (N_h - n_h) a_h (n_h - a_h) / (n_h^2 (n_h - 1))``. The
    :mod:`estimators.sampling` docstring lists the policies for empty, fully sampled,
    unsampled and one-document strata and the interval methods.

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
            See :mod:`estimators.sampling`; ``"wald"`` is the interval of Lewis (1996),
            section 8.
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
            return replace(ci, low=0.0, high=0.0)
        return replace(ci, low=self._map(float(ci.low)), high=self._map(float(ci.high)))


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
