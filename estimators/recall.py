"""Interval estimation of recall from a test sample.

Recall is the share of the relevant documents that the classifier retrieves. Two sampling
designs, as for F1 (`estimators.fmeasure`; Bagdouri, Webber, Lewis & Oard 2013, section 4 and
Appendix A):

``design="srs"``
    The test set is a simple random sample from a (logically infinite) population. Given the
    ``m = tp + fn`` relevant documents of the sample, ``tp ~ Binomial(m, recall)`` exactly, so
    every binomial interval (`estimators.PROPORTION_METHODS`) applied to ``(tp, tp + fn)`` is
    an interval for recall, with that method's operating characteristics conditionally on
    ``m``. It is `estimators.proportion_ci` exactly, conventions included (``m = 0``: nan).
``design="stratified"``
    The retrieved segment (``n1 = tp + fp`` of its ``N1`` documents sampled) and the
    unretrieved segment (``n0 = fn + tn`` of ``N0``) are sampled independently; the segment
    sizes ``population_sizes=(N1, N0)`` are required (they weigh the segments), or
    ``population_sizes="sample"``, the explicit choice of the sample's own retrieved share
    ``n1 / (n1 + n0)`` for ``N1 / (N1 + N0)`` (as for F1, `estimators.fmeasure`). With ``R1``
    and ``R0`` the shares relevant in the segments and ``q = N1 / (N1 + N0)``,
    ``recall = q R1 / (q R1 + (1 - q) R0)`` (`recall_from_segments`), which increases with
    ``R1`` and decreases with ``R0``.

Methods of the stratified design (`RECALL_METHODS_BY_DESIGN`):

``segments-clopper-pearson``
    Bonferroni combination of the segments' Clopper-Pearson bounds: ``[r(R1_lo, R0_hi),
    r(R1_hi, R0_lo)]``, each segment's bound at tail ``a / 4`` (two-sided) or ``a / 2``
    (one-sided, level ``1 - a``). Recall leaves the interval only if a segment's share leaves
    its own, so the coverage is at least ``1 - a`` for every population and sample sizes
    when each segment is binomial (an infinite population, or sampling with replacement).
``segments-hypergeometric``
    The same with each segment's exact hypergeometric bounds (`estimators.proportion_ci`,
    ``method="hypergeometric"``, ``population_size=N_h``): at least ``1 - a`` for every finite
    population (``K1`` relevant among the ``N1``, ``K0`` among the ``N0``, recall
    ``K1 / (K1 + K0)``) and every ``(n1, n0)``.
``delta``
    The normal approximation ``r +- z sqrt(Var)``, clipped to [0, 1], with the propagation of
    error variance ``Var = (dr/dR1)^2 V1 + (dr/dR0)^2 V0``, ``dr/dR1 = q (1 - q) R0 / D^2``,
    ``dr/dR0 = -q (1 - q) R1 / D^2``, ``D = q R1 + (1 - q) R0`` and
    ``V_h = R_h (1 - R_h) / n_h``, times ``1 - n_h / N_h`` with ``finite_population=True``
    (Webber 2013; seed 000, Appendix A). No coverage guarantee.

Undefined cases follow `estimators.fmeasure`'s policy. Where recall is undefined (no relevant
document observed, ``tp = fn = 0``, or a segment with a population share but no sampled
document) the delta method's bounds are nan. The exact methods are defined everywhere: their
interval is the range of recall over the segments' confidence box, the values the data do not
exclude (``[0, 1]`` when nothing is observed, which their coverage guarantee needs).

References
----------
.. [BWLO2013] Bagdouri, M., Webber, W., Lewis, D. D. & Oard, D. W. (2013). Towards minimizing
   the annotation cost of certified text classification. *CIKM*. Appendix A (propagation of
   error, stratified sampling).
.. [W2013] Webber, W. (2013). Approximate recall confidence intervals. *ACM Transactions on
   Information Systems* 31(1) (reference [29] of [BWLO2013]).
.. [CP1934] Clopper, C. J. & Pearson, E. S. (1934). *Biometrika* 26, 404-413.
.. [B1987] Buonaccorsi, J. P. (1987). A note on confidence intervals for proportions in
   finite populations. *The American Statistician* 41(3), 215-218.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from estimators import _validation as check
from estimators._defaults import default_method
from estimators._numeric import ratio, upper_normal_quantile
from estimators.fmeasure import (
    _SIZES_KNOWN,
    SAMPLE_SHARE,
    Sizes,
    _population_sizes,
    _segment_bounds,
    _segment_level,
)
from estimators.interval import Bound, Interval
from estimators.proportion import PROPORTION_METHODS, proportion_ci

__all__ = ["RECALL_DESIGNS", "RECALL_METHODS", "RECALL_METHODS_BY_DESIGN", "recall_ci",
           "recall_estimate", "recall_from_segments"]

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

# the Bonferroni combinations of the segments' exact bounds, by the segment bound's method
_SEGMENTS = {"segments-clopper-pearson": "clopper-pearson",
             "segments-hypergeometric": "hypergeometric"}
RECALL_DESIGNS: tuple[str, ...] = ("srs", "stratified")
RECALL_METHODS_BY_DESIGN: dict[str, tuple[str, ...]] = {
    "srs": PROPORTION_METHODS,
    "stratified": (*_SEGMENTS, "delta"),
}
RECALL_METHODS: tuple[str, ...] = tuple(dict.fromkeys(
    m for design in RECALL_DESIGNS for m in RECALL_METHODS_BY_DESIGN[design]))
_COUNT_NAMES = ("tp", "fp", "fn", "tn")


def _recall(q: Array, r1: Array, r0: Array) -> Array:
    """``q R1 / (q R1 + (1 - q) R0)``; nan where no document is relevant (the kernel)."""
    return ratio(q * r1, q * r1 + (1.0 - q) * r0)


def recall_from_segments(q: Any, r1: Any, r0: Any) -> Bound:
    """Population recall from the retrieved share and the segments' relevant shares.

    Parameters
    ----------
    q : float or array_like
        The retrieved share ``N1 / (N1 + N0)``, in [0, 1].
    r1, r0 : float or array_like
        The shares of relevant documents in the retrieved and unretrieved segments, in
        [0, 1]. All three broadcast together.

    Returns
    -------
    float or numpy.ndarray
        ``q R1 / (q R1 + (1 - q) R0)``: the relevant retrieved documents ``q R1`` over all
        relevant ones; nan where there is none (``q R1 + (1 - q) R0 = 0``). A float when the
        three are scalars.

    Raises
    ------
    TypeError
        If a value is not a real number.
    ValueError
        If a value is outside [0, 1] or the three do not broadcast.

    Examples
    --------
    Of 100 documents 20 are retrieved, half of them relevant; 5% of the 80 unretrieved are
    relevant: 10 of the 14 relevant documents are retrieved.

    >>> round(recall_from_segments(0.2, 0.5, 0.05), 4)
    0.7143
    >>> recall_from_segments(0.2, 0.0, 0.0)  # nothing relevant: undefined
    nan
    """
    values = []
    for value, name in ((q, "q"), (r1, "r1"), (r0, "r0")):
        array = check.as_real_array(value, name)
        bad = (array < 0.0) | (array > 1.0)
        if bad.any():
            raise ValueError(f"`{name}` must be in [0, 1]; got {check.first_offender(array, bad)}.")
        values.append(array)
    try:
        shares = np.broadcast_arrays(*values)
    except ValueError:
        raise ValueError(f"`q`, `r1` and `r0` must broadcast together; got shapes "
                         f"{', '.join(str(v.shape) for v in values)}.") from None
    found = _recall(*shares)
    return float(found) if found.ndim == 0 else found


def _segments_bounds(q: Array, counts: list[IntArray], sizes: tuple[IntArray, IntArray],
                     level: float, alternative: str, method: str) -> tuple[Array, Array]:
    """Range of recall over the Bonferroni box of the segments' exact bounds.

    Recall increases with ``R1`` and decreases with ``R0``, so over the box
    ``[R1_lo, R1_hi] x [R0_lo, R0_hi]`` its least value is at ``(R1_lo, R0_hi)`` and its
    greatest at ``(R1_hi, R0_lo)``, where recall is defined there. (A one-sided interval's
    box is open on its other side: ``"greater"`` takes ``R1_hi = 1`` and ``R0_lo = 0``, which
    are not computed.) A corner where recall is undefined (no relevant document) is a limit:
    at ``R1_lo = R0_hi = 0`` every defined point of the box has ``R0 = 0`` and ``R1 > 0``,
    recall 1; at ``R1_hi = R0_lo = 0`` every defined point has ``R1 = 0`` and ``R0 > 0``,
    recall 0. A box without a defined point gives [0, 1], and so does an unknown ``q`` (nan:
    the sample's share standing for it, of an empty sample). A segment with no population
    share does not enter recall.
    """
    # each bound of each segment at tail a / 4 (two-sided) or a / 2 (one-sided): the ends of
    # the segment's two-sided interval at level 1 - a / 2 or 1 - a
    segment_level = _segment_level(level, alternative)
    tp, fp, fn, tn = counts
    need_low, need_high = alternative != "less", alternative != "greater"
    r1_low, r1_high = _segment_bounds(tp, tp + fp, sizes[0], segment_level, _SEGMENTS[method],
                                      low=need_low, high=need_high)
    r0_low, r0_high = _segment_bounds(fn, fn + tn, sizes[1], segment_level, _SEGMENTS[method],
                                      low=need_high, high=need_low)
    r1_low, r1_high = (np.where(q == 0.0, 0.0, r) for r in (r1_low, r1_high))
    r0_low, r0_high = (np.where(q == 1.0, 0.0, r) for r in (r0_low, r0_high))
    low = np.zeros(q.shape)
    high = np.ones(q.shape)
    if alternative != "less":
        corner = _recall(q, r1_low, r0_high)
        low = np.where(np.isnan(corner), np.where(r1_high > 0.0, 1.0, 0.0), corner)
    if alternative != "greater":
        corner = _recall(q, r1_high, r0_low)
        high = np.where(np.isnan(corner), np.where(r0_high > 0.0, 0.0, 1.0), corner)
    unknown = np.isnan(q)
    low, high = np.where(unknown, 0.0, low), np.where(unknown, 1.0, high)
    # the two corners come from separate divisions: keep a rounding from crossing them
    return low, np.maximum(high, low)


def _delta_variance(q: Array, r1: Array, r0: Array, n1: Array, n0: Array,
                    sizes: tuple[IntArray, IntArray], finite_population: bool) -> Array:
    """Propagation-of-error variance of the stratified recall estimate.

    ``Var = (dr/dR1)^2 V1 + (dr/dR0)^2 V0`` with ``dr/dR1 = q (1 - q) R0 / D^2``,
    ``dr/dR0 = -q (1 - q) R1 / D^2``, ``D = q R1 + (1 - q) R0`` (the segments are sampled
    independently: no covariance term) and ``V_h = R_h (1 - R_h) / n_h``, times
    ``1 - n_h / N_h`` if ``finite_population`` ([W2013]; [BWLO2013] Appendix A). A segment
    without population share contributes nothing; nan where recall is undefined.
    """
    d2 = (q * r1 + (1.0 - q) * r0) ** 2
    spread = q * (1.0 - q)
    grad1 = ratio(spread * r0, d2)
    grad0 = ratio(-spread * r1, d2)
    variances = []
    for r, n, size in ((r1, n1, sizes[0]), (r0, n0, sizes[1])):
        var = ratio(r * (1.0 - r), n)
        if finite_population:
            var = var * (1.0 - ratio(n, size.astype(np.float64)))
        variances.append(var)
    var1 = np.where(q == 0.0, 0.0, variances[0])
    var0 = np.where(q == 1.0, 0.0, variances[1])
    return grad1**2 * var1 + grad0**2 * var0


def _stratified_estimate(q: Array, counts: list[IntArray]) -> tuple[Array, Array, Array]:
    """``R1 = tp / n1``, ``R0 = fn / n0`` and the recall estimate ``q R1 / (q R1 + (1 - q) R0)``.

    A segment with no population share does not enter recall (its share may be unsampled);
    nan where recall is undefined.
    """
    tp, fp, fn, tn = (c.astype(np.float64) for c in counts)
    r1 = np.where(q == 0.0, 0.0, ratio(tp, tp + fp))
    r0 = np.where(q == 1.0, 0.0, ratio(fn, fn + tn))
    return r1, r0, _recall(q, r1, r0)


def _delta_bounds(q: Array, counts: list[IntArray], sizes: tuple[IntArray, IntArray],
                  level: float, alternative: str, finite_population: bool
                  ) -> tuple[Array, Array]:
    """``r +- z sqrt(Var)`` clipped to [0, 1]; nan where recall is undefined."""
    r1, r0, estimate = _stratified_estimate(q, counts)
    tp, fp, fn, tn = (c.astype(np.float64) for c in counts)
    n1, n0 = tp + fp, fn + tn
    var = _delta_variance(q, r1, r0, n1, n0, sizes, finite_population)
    var = np.where(np.isnan(estimate), np.nan, var)
    tail = (1.0 - level) / 2.0 if alternative == "two-sided" else 1.0 - level
    half = upper_normal_quantile(tail) * np.sqrt(var)
    low = np.clip(estimate - half, 0.0, 1.0)
    high = np.clip(estimate + half, 0.0, 1.0)
    if alternative == "greater":
        high = np.where(np.isnan(low), np.nan, 1.0)
    elif alternative == "less":
        low = np.where(np.isnan(high), np.nan, 0.0)
    return low, high


def _segments(counts: list[IntArray], sizes: Sizes
              ) -> tuple[Array, list[IntArray], tuple[IntArray, IntArray]]:
    """The retrieved share ``q``, the counts and the segments' sizes, broadcast together.

    ``sizes``: ``(N1, N0)`` as checked by `_population_sizes`, or ``"sample"``, for which the
    sample's segments stand for the population's (``q = n1 / (n1 + n0)``).
    """
    if not isinstance(sizes, tuple):  # "sample"
        sizes = (counts[0] + counts[1], counts[2] + counts[3])
    shape = np.broadcast_shapes(counts[0].shape, sizes[0].shape, sizes[1].shape)
    counts = [np.broadcast_to(c, shape) for c in counts]
    big1, big0 = (np.broadcast_to(size, shape) for size in sizes)
    return ratio(big1, big1 + big0), counts, (big1, big0)


def _counts(values: tuple[Any, Any, Any, Any]) -> list[IntArray]:
    counts = [check.as_counts(value, name) for value, name in zip(values, _COUNT_NAMES,
                                                                  strict=True)]
    try:
        return list(np.broadcast_arrays(*counts))
    except ValueError:
        shapes = ", ".join(str(np.shape(c)) for c in counts)
        raise ValueError(
            f"`tp`, `fp`, `fn`, `tn` must broadcast together; got shapes {shapes}.") from None


def recall_estimate(
    tp: Any,
    fp: Any,
    fn: Any,
    tn: Any,
    *,
    design: str = "srs",
    population_sizes: tuple[Any, Any] | Literal["sample"] | None = None,
) -> Bound:
    """Population recall estimated from test-sample counts.

    Parameters
    ----------
    tp, fp, fn, tn : int or array_like of int
        Test-sample counts; broadcast together (arrays in, arrays out).
    design : {"srs", "stratified"}
        Sampling design of the test sample (module docstring).
    population_sizes : (N1, N0) or "sample", optional
        As for :func:`recall_ci`: required with ``design="stratified"``, refused with
        ``"srs"``.

    Returns
    -------
    float or numpy.ndarray
        ``tp / (tp + fn)`` under ``"srs"``; ``q R1 / (q R1 + (1 - q) R0)`` with
        ``R1 = tp / (tp + fp)``, ``R0 = fn / (fn + tn)`` and ``q = N1 / (N1 + N0)`` (the
        sample's ``n1 / (n1 + n0)`` with ``"sample"``) under ``"stratified"``. nan where recall
        is undefined (no relevant document observed, or a segment with a population share but
        no sampled document). The centre of the ``delta`` interval of :func:`recall_ci`.

    Raises
    ------
    TypeError
        If a count is not numeric.
    ValueError
        If a count is negative or fractional, the design unknown, or ``population_sizes``
        missing (stratified), given (srs), neither a pair nor ``"sample"``, or smaller than its
        segment's sample.

    Examples
    --------
    >>> recall_estimate(60, 20, 25, 395)  # 60 of the 85 relevant documents
    0.7058823529411765
    >>> round(recall_estimate(60, 20, 25, 395, design="stratified",
    ...                       population_sizes=(800, 9200)), 4)
    0.5228
    >>> recall_estimate(0, 20, 0, 395)  # no relevant document: undefined
    nan
    """
    design = check.choice(design, "design", RECALL_DESIGNS)
    counts = _counts((tp, fp, fn, tn))
    sizes = _population_sizes(population_sizes, design, False, counts)
    if design == "srs":
        found = counts[0].astype(np.float64)
        estimate = ratio(found, found + counts[2])
    else:
        q, counts, _ = _segments(counts, sizes)
        estimate = _stratified_estimate(q, counts)[2]
    return float(estimate) if estimate.ndim == 0 else estimate


def recall_ci(
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
) -> Interval:
    """Confidence interval for population recall from test-sample counts.

    Parameters
    ----------
    tp, fp, fn, tn : int or array_like of int
        Test-sample counts; broadcast together (arrays in, arrays out).
    method : str, optional
        One of ``RECALL_METHODS_BY_DESIGN[design]``. ``design="srs"``: a
        `estimators.proportion_ci` method (``"clopper-pearson"``, ``"wilson"``, ...), applied
        to ``(tp, tp + fn)``. ``design="stratified"``: ``"segments-clopper-pearson"``,
        ``"segments-hypergeometric"`` or ``"delta"`` (module docstring). Default: the design's
        method whose coverage is guaranteed, ``"clopper-pearson"`` under ``"srs"``,
        ``"segments-clopper-pearson"`` stratified (``"segments-hypergeometric"`` with
        ``finite_population=True``); see `estimators._defaults`.
    confidence_level : float
        Strictly between 0 and 1.
    alternative : {"two-sided", "greater", "less"}
        ``"greater"`` gives the one-sided lower bound ``[low, 1]`` used for certification;
        ``"less"`` the upper bound ``[0, high]``.
    design : {"srs", "stratified"}
        Sampling design of the test sample (module docstring).
    population_sizes : (N1, N0) or "sample", optional
        Required with ``design="stratified"``, refused with ``"srs"``. ``(N1, N0)``: the
        sizes of the retrieved and unretrieved segments, each an int or an array broadcast
        with the counts, at least its segment's sample (``N1 >= tp + fp``,
        ``N0 >= fn + tn``), not both 0; they weigh the segments by the retrieved share
        ``q = N1 / (N1 + N0)``. ``"sample"``: the sample's own retrieved share
        ``n1 / (n1 + n0)`` stands for ``q``, an explicit choice, as when the segments were
        sampled in proportion to their sizes (not with ``finite_population=True`` nor
        ``method="segments-hypergeometric"``, which need the sizes). The same rule as
        `estimators.f1_ci`'s.
    finite_population : bool
        Apply ``1 - n_h / N_h`` to each segment's variance (``delta``). Accepted with
        ``segments-hypergeometric`` (finite by construction), refused with
        ``segments-clopper-pearson`` (binomial segments) and with ``design="srs"``.

    Returns
    -------
    Interval
        Floats when every input is a scalar, arrays of the broadcast shape otherwise.

    Raises
    ------
    TypeError
        If a count is not numeric or ``finite_population`` not a bool.
    ValueError
        If a count is negative or fractional, the level is outside (0, 1), a name is
        unknown, the method does not belong to the design, ``population_sizes`` is missing
        (stratified), given (srs), neither a pair nor ``"sample"``, smaller than its
        segment's sample, or ``"sample"`` where the sizes are needed, or
        ``finite_population`` does not apply.

    Notes
    -----
    Simple random sampling: the test set's counts are multinomial, and given the
    ``m = tp + fn`` relevant documents ``tp ~ Binomial(m, recall)``, so the interval is
    ``proportion_ci(tp, tp + fn, ...)`` and Clopper-Pearson covers at least the nominal level
    conditionally on every ``m``. No exact finite-population interval exists here: the number
    of relevant documents of the population is unknown.

    Stratified sampling: ``recall = q R1 / (q R1 + (1 - q) R0)`` with ``q = N1 / (N1 + N0)``.
    The segment methods take ``[r(R1_lo, R0_hi), r(R1_hi, R0_lo)]``; each segment's bounds at
    tail ``a / 4`` (two-sided) or ``a / 2`` (one-sided) leave out its true share with
    probability at most ``a / 2``, so the interval misses with probability at most ``a``
    (Bonferroni). The delta method's variance is in the module docstring.

    References
    ----------
    Webber, W. (2013). Approximate recall confidence intervals. ACM TOIS 31(1).
    Bagdouri, M., Webber, W., Lewis, D. D. & Oard, D. W. (2013). Towards minimizing the
    annotation cost of certified text classification. CIKM. Appendix A.
    Clopper, C. J. & Pearson, E. S. (1934). Biometrika 26, 404-413.
    Buonaccorsi, J. P. (1987). The American Statistician 41(3), 215-218.

    Examples
    --------
    A simple random sample holds 85 relevant documents, 60 of them retrieved: recall's
    Clopper-Pearson interval is the binomial one of 60 in 85.

    >>> ci = recall_ci(60, 20, 25, 395)
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.5971, 0.7998)

    Stratified: 80 of the 800 retrieved and 420 of the 9200 unretrieved documents labelled.
    The estimate is ``q R1 / (q R1 + (1 - q) R0)`` with ``q = 800 / 10000``,
    ``R1 = 60 / 80`` and ``R0 = 25 / 420``, about 0.5228:

    >>> round(recall_from_segments(800 / 10000, 60 / 80, 25 / 420), 4)
    0.5228
    >>> for method in ("delta", "segments-clopper-pearson"):
    ...     ci = recall_ci(60, 20, 25, 395, method=method, design="stratified",
    ...                    population_sizes=(800, 9200))
    ...     print(method, round(ci.low, 4), round(ci.high, 4))
    delta 0.4229 0.6228
    segments-clopper-pearson 0.3747 0.6698

    Without the segments' sizes, ``population_sizes="sample"`` says that the sample's
    retrieved share, 80 / 500, stands for theirs (here far from 800 / 10000):

    >>> ci = recall_ci(60, 20, 25, 395, design="stratified", population_sizes="sample")
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.5675, 0.8163)

    A finite population, labelled in full in its retrieved segment (80 of 80) and in half
    its unretrieved one (420 of 840): its 60 relevant retrieved documents are known, and the
    exact upper bound (tail 0.025) of its relevant unretrieved ones is 66, so the one-sided
    95% bound for certification is 60 / 126. The binomial segments know nothing of the
    population's size and give less:

    >>> ci = recall_ci(60, 20, 25, 395, method="segments-hypergeometric",
    ...                design="stratified", population_sizes=(80, 840), alternative="greater")
    >>> round(ci.low, 6), round(60 / 126, 6), ci.high
    (0.47619, 0.47619, 1.0)
    >>> round(recall_ci(60, 20, 25, 395, method="segments-clopper-pearson", design="stratified",
    ...                 population_sizes=(80, 840), alternative="greater").low, 4)
    0.4133
    """
    design = check.choice(design, "design", RECALL_DESIGNS)
    if method is None:
        method = default_method("recall", design, finite=finite_population is True)
    method = check.choice(method, "method", RECALL_METHODS)
    alternative = check.alternative(alternative)
    level = check.open_unit(confidence_level, "confidence_level")
    if not isinstance(finite_population, bool | np.bool_):
        raise TypeError("`finite_population` must be True or False; got "
                        f"{check.show(finite_population)}.")
    counts = _counts((tp, fp, fn, tn))
    if method not in RECALL_METHODS_BY_DESIGN[design]:
        valid = ", ".join(repr(m) for m in RECALL_METHODS_BY_DESIGN[design])
        raise ValueError(f"`method` must be one of {valid} for design={design!r}; got "
                         f"{method!r}.")
    sizes = _population_sizes(population_sizes, design, bool(finite_population), counts)
    if design == "srs":
        found, _, missed, _ = counts
        relevant = found + missed
        big = relevant > check.MAX_COUNT
        if big.any():
            raise ValueError(f"`tp` + `fn` (the relevant documents, recall's trials) must be at "
                             f"most 2**53 = {check.MAX_COUNT}; got "
                             f"{check.first_offender(relevant, big)}.")
        return proportion_ci(found, relevant, method=method, confidence_level=level,
                             alternative=alternative)
    if finite_population and method == "segments-clopper-pearson":
        raise ValueError("`finite_population` must be False with "
                         "method='segments-clopper-pearson' (its segments are binomial; "
                         "'segments-hypergeometric' is the finite population's); got True.")
    if sizes == SAMPLE_SHARE and method == "segments-hypergeometric":
        raise ValueError(_SIZES_KNOWN.format("method='segments-hypergeometric'"))
    q, counts, sizes = _segments(counts, sizes)
    shape = q.shape
    if method in _SEGMENTS:
        low, high = _segments_bounds(q, counts, sizes, level, alternative, method)
    else:
        low, high = _delta_bounds(q, counts, sizes, level, alternative,
                                  bool(finite_population))
    if not shape:
        return Interval(low=float(low), high=float(high), method=method, confidence_level=level,
                        alternative=alternative)
    return Interval(low=low, high=high, method=method, confidence_level=level,
                    alternative=alternative)
