"""Sample sizes per stratum: the TREC-5 rule, proportional and Neyman allocation.

Lewis (1996), section 5.3; Cochran (1977), *Sampling Techniques*, sections 5.3, 5.5, 5.8 and
5.10.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from estimators import _validation as check
from estimators._strata import _one_dimensional

__all__ = ["ALLOCATION_METHODS", "allocate"]

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

ALLOCATION_METHODS: tuple[str, ...] = ("trec5", "proportional", "neyman")
# Allocation shares within this of a whole number count as that number (bisection noise).
_SNAP = 1e-9


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
