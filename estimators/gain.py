"""Gain, cumulative gain and lift of a ranked list, and the budget questions they answer.

A model's scores rank a test set; an annotator works down the ranking. Gain tables
say how many positives each quantile bin of the ranking holds, and so how much
annotation a budget buys and how much it costs to collect a share of the positives
(Klubička et al. 2018, sections 3 and 4).

From a labelled sample
----------------------
When a model has scored the whole population but only a simple random sample is labelled,
:func:`budget_positives` (:class:`BudgetPositives`) estimates the positives a budget of items
buys, and :func:`cumulative_gain_estimate` (:class:`CumulativeGainEstimate`) the cumulative
gain at a decile, each with confidence intervals (exact hypergeometric, Clopper-Pearson,
percentile bootstrap).

Tie policy
----------
Items with equal scores have no order of their own. Every quantity reported here is
its *expected value* when each tied group is put in a uniformly random order. A tied
group straddling a cut therefore contributes its positives pro rata, and results do
not depend on the order of the input arrays. Without ties the expectation is just the
value for the one ranking.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from estimators._hypergeometric import hypergeometric_lower
from estimators._validation import alternative as check_alternative
from estimators._validation import (
    as_array,
    as_counts,
    as_real_array,
    choice,
    first_offender,
    generator,
    open_unit,
    positive_int,
    real_or_nan,
    real_scalar,
    show,
    whole,
)
from estimators._validation import draws as check_draws
from estimators.interval import Interval
from estimators.proportion import proportion_ci

__all__ = ["BUDGET_POSITIVES_METHODS", "CUMULATIVE_GAIN_METHODS", "BudgetPositives",
           "BudgetYield", "CumulativeGainEstimate", "GainTable", "budget_positives",
           "cumulative_gain_estimate", "gain_table"]

# Quotients such as 16 / 0.04 or 0.07 * 100 land a few ulps off a whole number; counting
# them as that number keeps decimal money amounts and shares from losing or gaining an item.
_REL_TOL = 1e-9

Values = float | NDArray[np.float64]


def _snap(x: float) -> float | None:
    """``x`` as a whole number when it is within ``_REL_TOL`` of one, else ``None``."""
    nearest = round(x)
    return float(nearest) if abs(x - nearest) <= _REL_TOL * max(1.0, abs(x)) else None


def _floor(x: float) -> int:
    snapped = _snap(x)
    return int(snapped) if snapped is not None else math.floor(x)


def _ceil(x: float) -> int:
    snapped = _snap(x)
    return int(snapped) if snapped is not None else math.ceil(x)


def _whole_bins_flag(value: Any) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"`whole_bins` must be True or False; got {show(value)}.")
    return bool(value)


def _positive_real(value: Any, name: str) -> float:
    result = real_scalar(value, name)
    if result <= 0.0:
        raise ValueError(f"`{name}` must be positive; got {show(value)}.")
    return result


def _scores(value: Any) -> NDArray[np.float64]:
    array = as_real_array(value, "scores")
    if array.ndim != 1:
        raise ValueError(f"`scores` must be one-dimensional; got shape {array.shape}.")
    if array.size == 0:
        raise ValueError("`scores` must be non-empty; got an empty array.")
    return array


def _labels(value: Any, n_items: int, matching: str = "scores") -> NDArray[np.int64]:
    """0/1 labels, one per element of the argument named ``matching`` (``n_items`` long)."""
    array = as_array(value, "labels")
    if array.dtype != np.bool_ and not (
        np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)
    ):
        raise TypeError(f"`labels` must be 0/1 numbers or booleans; got {show(value)}.")
    if array.ndim != 1:
        raise ValueError(f"`labels` must be one-dimensional; got shape {array.shape}.")
    if array.shape[0] != n_items:
        raise ValueError(
            f"`labels` must have the same length as `{matching}` ({n_items}); "
            f"got length {array.shape[0]}."
        )
    bad = (array != 0) & (array != 1)
    if bad.any():
        raise ValueError(f"`labels` must be 0 or 1 (or boolean); got {first_offender(array, bad)}.")
    return array.astype(np.int64)


@dataclass(frozen=True)
class BudgetYield:
    """What a fixed annotation budget buys from a ranked list.

    Attributes
    ----------
    items : int
        Items annotated, from the top of the ranking.
    fraction : float
        Share of the list annotated: ``items / n_items``, or ``j / bins`` when only
        whole bins were bought.
    cost : float
        Money spent: ``items * cost_per_item``, or the nominal cost of ``j`` bins,
        ``j * n_items / bins * cost_per_item``, when only whole bins were bought.
    positives : float
        Expected positives among the annotated items (whole unless ties straddle the cut).
    gain : float
        ``positives / n_positives``: the cumulative gain reached; ``nan`` when the list
        holds no positives.

    Examples
    --------
    >>> table = gain_table([0.9, 0.8, 0.7, 0.6, 0.5], [1, 0, 1, 0, 0], bins=5)
    >>> table.budget_yield(3.0, cost_per_item=1.0)
    BudgetYield(items=3, fraction=0.6, cost=3.0, positives=2.0, gain=1.0)
    """

    items: int
    fraction: float
    cost: float
    positives: float
    gain: float

    def __post_init__(self) -> None:
        items = whole(self.items, "items")
        values = {"fraction": real_or_nan(self.fraction, "fraction", 0.0, 1.0),
                  "cost": real_or_nan(self.cost, "cost", 0.0),
                  "positives": real_or_nan(self.positives, "positives", 0.0),
                  "gain": real_or_nan(self.gain, "gain", 0.0, 1.0)}  # nan: no positives
        if math.isnan(values["positives"]) or values["positives"] > items:
            raise ValueError("`positives` must be a number of items, at most `items` = "
                             f"{items}; got {show(self.positives)}.")
        for name, value in values.items():
            object.__setattr__(self, name, value)


@dataclass(frozen=True, eq=False, repr=False)
class GainTable:
    r"""Gain, cumulative gain and lift of a ranked list, split into quantile bins.

    Build it with :func:`gain_table`. The ranking is stored collapsed to its tied score
    groups, which is all the tie policy (see the module docstring) needs.

    Attributes
    ----------
    n_items : int
        Length of the list, ``N``.
    n_positives : int
        Positives in the list, ``P``.
    bins : int
        Number of quantile bins, ``k``.
    group_ends : numpy.ndarray
        Items counted from the top of the ranking to the end of each tied score group,
        highest scores first, with a leading 0 (read-only, ``int64``).
    group_cum_positives : numpy.ndarray
        Positives counted from the top to the end of each tied group, with a leading 0
        (read-only, ``int64``).

    Notes
    -----
    Bin ``i`` (0-based) holds the items ranked ``floor(i N / k)`` to
    ``floor((i + 1) N / k) - 1``. With ``p_i`` positives among its ``n_i`` items,

    .. math::

        \mathrm{gain}_i = p_i / P, \qquad
        \mathrm{CG}_i = \sum_{j \le i} p_j / P, \qquad
        \mathrm{lift}_i = \frac{p_i / P}{n_i / N}, \qquad
        \mathrm{CL}_i = \frac{\mathrm{CG}_i}{\sum_{j \le i} n_j / N}.

    Lift uses each bin's actual share of the list, ``n_i / N``, so a random ranking
    has expected lift 1 even when ``N`` is not a multiple of ``k``. When ``P = 0``,
    gain and lift are ``0 / 0`` and are reported as ``nan``.

    References
    ----------
    Klubička, F., Salton, G. D. and Kelleher, J. D. (2018). Is it worth it?
    Budget-related evaluation metrics for model selection. Section 3 (gain,
    equation 1) and section 3.1 (cumulative gain).

    Examples
    --------
    >>> table = gain_table([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0],
    ...                    [1, 1, 0, 1, 0, 0, 1, 0, 0, 0], bins=5)
    >>> table
    GainTable(n_items=10, n_positives=4, bins=5)
    >>> table.bin_upper_fraction.tolist()
    [0.2, 0.4, 0.6, 0.8, 1.0]
    >>> table.positives.tolist()
    [2.0, 1.0, 0.0, 1.0, 0.0]
    >>> table.cumulative_gain.tolist()
    [0.5, 0.75, 0.75, 1.0, 1.0]
    >>> table.lift.tolist()
    [2.5, 1.25, 0.0, 1.25, 0.0]
    """

    n_items: int
    n_positives: int
    bins: int
    group_ends: NDArray[np.int64]
    group_cum_positives: NDArray[np.int64]

    def __post_init__(self) -> None:
        # gain_table builds a consistent table; one built by hand is checked the same way
        n_items = whole(self.n_items, "n_items", 1)
        n_positives = whole(self.n_positives, "n_positives")
        bins = whole(self.bins, "bins", 1)
        if n_positives > n_items or bins > n_items:
            raise ValueError("`n_positives` and `bins` must be at most `n_items`; got "
                             f"{n_positives} and {bins} with {n_items} items.")
        ends = as_counts(self.group_ends, "group_ends")
        cum = as_counts(self.group_cum_positives, "group_cum_positives")
        if ends.ndim != 1 or ends.shape != cum.shape or ends.size < 2:
            raise ValueError("`group_ends` and `group_cum_positives` must be one-dimensional of "
                             f"one length (at least 2); got shapes {ends.shape} and {cum.shape}.")
        sizes, found = np.diff(ends), np.diff(cum)
        if ends[0] != 0 or ends[-1] != n_items or (sizes <= 0).any():
            raise ValueError("`group_ends` must rise strictly from 0 to `n_items`; got "
                             f"{show(ends)}.")
        if cum[0] != 0 or cum[-1] != n_positives or (found < 0).any() or (found > sizes).any():
            raise ValueError("`group_cum_positives` must rise from 0 to `n_positives` by at most "
                             f"each group's size; got {show(cum)}.")
        for name, array in (("group_ends", ends), ("group_cum_positives", cum)):
            array = array.copy()
            array.setflags(write=False)
            object.__setattr__(self, name, array)

    def __repr__(self) -> str:
        return (
            f"GainTable(n_items={self.n_items}, n_positives={self.n_positives}, bins={self.bins})"
        )

    @property
    def bin_edges(self) -> NDArray[np.int64]:
        """Ranks ``floor(i N / k)``, ``i = 0 .. k``: bin ``i`` runs from edge ``i`` to ``i + 1``."""
        return (np.arange(self.bins + 1, dtype=np.int64) * self.n_items) // self.bins

    @property
    def bin_upper_fraction(self) -> NDArray[np.float64]:
        """Nominal share of the list up to the end of each bin: ``(i + 1) / k``."""
        return np.arange(1, self.bins + 1, dtype=np.float64) / self.bins

    @property
    def items(self) -> NDArray[np.int64]:
        """Items in each bin (``N // k`` or one more)."""
        return np.diff(self.bin_edges)

    @property
    def cumulative_positives(self) -> NDArray[np.float64]:
        """Expected positives from the top of the list to the end of each bin."""
        return self._positives_at(self.bin_edges[1:])

    @property
    def positives(self) -> NDArray[np.float64]:
        """Expected positives in each bin (whole unless a tied group straddles an edge)."""
        return np.diff(self._positives_at(self.bin_edges))

    @property
    def gain(self) -> NDArray[np.float64]:
        """Share of all positives found in each bin; ``nan`` when there are no positives."""
        return self._share_of_positives(self.positives)

    @property
    def cumulative_gain(self) -> NDArray[np.float64]:
        """Share of all positives found up to the end of each bin; ``nan`` without positives."""
        return self._share_of_positives(self.cumulative_positives)

    @property
    def lift(self) -> NDArray[np.float64]:
        """Gain over the bin's share of the list, ``gain_i / (n_i / N)``; ``nan`` if P = 0."""
        return self.gain * (self.n_items / self.items)

    @property
    def cumulative_lift(self) -> NDArray[np.float64]:
        """Cumulative gain over the share of the list so far; ``nan`` if no positives."""
        return self.cumulative_gain * (self.n_items / self.bin_edges[1:])

    def cost_per_bin(self, *, cost_per_item: float) -> float:
        """Nominal cost of annotating one bin, ``N / k * cost_per_item``.

        Parameters
        ----------
        cost_per_item : float
            Cost of annotating one item; positive.

        Returns
        -------
        float
            ``n_items / bins * cost_per_item``.

        Notes
        -----
        This is the paper's convention: a decile costs a tenth of the list even when
        ``N / k`` is not whole. The bins themselves hold whole items (see
        :attr:`items`), which differ from ``N / k`` by less than one item.

        References
        ----------
        Klubička et al. (2018), section 4.1.

        Examples
        --------
        >>> table = gain_table(np.arange(2091.0), np.arange(2091) < 414)
        >>> table.cost_per_bin(cost_per_item=0.04)
        8.364
        """
        cost = _positive_real(cost_per_item, "cost_per_item")
        return self.n_items * cost / self.bins

    def positives_within(self, n_items: Any) -> Values:
        r"""Expected positives among the top ``n_items`` of the ranking.

        Parameters
        ----------
        n_items : int or array_like of int
            Numbers of items taken from the top; each in ``0 .. N``.

        Returns
        -------
        float or numpy.ndarray
            Expected positives, shaped like ``n_items``.

        Notes
        -----
        With tied groups ending at ``e_0 = 0 < e_1 < ... < e_G = N`` holding ``c_g``
        positives up to ``e_g``, a cut at ``m`` inside group ``g`` takes on average
        ``(m - e_{g-1}) / (e_g - e_{g-1})`` of that group's positives, so

        .. math:: E[\text{positives in top } m] = c_{g-1}
                  + (c_g - c_{g-1}) \frac{m - e_{g-1}}{e_g - e_{g-1}},

        the piecewise-linear interpolation of ``(e_g, c_g)``.

        References
        ----------
        Klubička et al. (2018), section 3.1.

        Examples
        --------
        >>> table = gain_table([3, 2, 2, 1], [1, 1, 0, 0], bins=2)
        >>> table.positives_within(2)
        1.5
        >>> table.positives_within([0, 1, 3, 4]).tolist()
        [0.0, 1.0, 2.0, 2.0]
        """
        counts = as_counts(n_items, "n_items")
        bad = counts > self.n_items
        if bad.any():
            raise ValueError(
                f"`n_items` must be at most the list length ({self.n_items}); "
                f"got {first_offender(counts, bad)}."
            )
        result = self._positives_at(counts)
        return float(result) if result.ndim == 0 else result

    def fraction_to_reach(self, share: float = 1.0, *, whole_bins: bool = False) -> float:
        """Share of the list to annotate, from the top, to find ``share`` of the positives.

        Parameters
        ----------
        share : float, default 1.0
            Wanted share of all positives, in ``(0, 1]``. The target is
            ``ceil(share * P)`` positives (products within 1e-9 of a whole number
            count as that number, so ``0.07 * 100`` asks for 7).
        whole_bins : bool, default False
            If False, count items. If True, annotate whole bins and return the nominal
            upper fraction ``(i + 1) / k`` of the bin where the target is reached, as
            the paper does with deciles.

        Returns
        -------
        float
            Expected fraction of the list under the tie policy; ``nan`` when the list
            has no positives.

        Notes
        -----
        Let ``T`` be the target and ``X`` the rank (1-based) of the ``T``-th positive.
        Item resolution returns ``E[X] / N``; bin resolution returns ``E[J + 1] / k``
        with ``J`` the bin holding rank ``X``. If the target is reached inside a tied
        group of ``s`` items and ``p`` positives starting after rank ``a``, needing
        ``r`` of its positives, the positives fall at random places in the group, so
        ``E[X] = a + r (s + 1) / (p + 1)`` and ``P(X > b)`` is the hypergeometric
        probability of fewer than ``r`` positives in the group's first ``b - a``
        items; ``E[J + 1] = sum_i P(X > floor(i N / k))`` over ``i = 0 .. k-1``.
        Without ties, ``X`` is simply the rank of the ``T``-th positive.

        References
        ----------
        Klubička et al. (2018), section 4, Situation 2.

        Examples
        --------
        >>> table = gain_table([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0],
        ...                    [1, 1, 0, 1, 0, 0, 1, 0, 0, 0], bins=5)
        >>> table.fraction_to_reach(0.75)
        0.4
        >>> table.fraction_to_reach(1.0)
        0.7
        >>> table.fraction_to_reach(1.0, whole_bins=True)
        0.8
        """
        whole = _whole_bins_flag(whole_bins)
        target = self._target(share)
        if target == 0:
            return math.nan
        if whole:
            return self._expected_bins_to(target) / self.bins
        return self._expected_items_to(target) / self.n_items

    def cost_to_reach(
        self, share: float = 1.0, *, cost_per_item: float, whole_bins: bool = False
    ) -> float:
        """Cost of annotating the list from the top until ``share`` of the positives are found.

        Parameters
        ----------
        share : float, default 1.0
            Wanted share of all positives, in ``(0, 1]``; see :meth:`fraction_to_reach`.
        cost_per_item : float
            Cost of annotating one item; positive.
        whole_bins : bool, default False
            If True, pay for whole bins at their nominal cost (:meth:`cost_per_bin`).

        Returns
        -------
        float
            ``fraction_to_reach(share, whole_bins=...) * N * cost_per_item``; ``nan``
            when the list has no positives.

        Notes
        -----
        Item resolution: ``E[X] * cost_per_item``. Bin resolution:
        ``E[J + 1] * N / k * cost_per_item`` (see :meth:`fraction_to_reach`).

        References
        ----------
        Klubička et al. (2018), section 4.1 (Table 5).

        Examples
        --------
        A list of 2,091 candidates whose 414 positives all rank first costs
        414 * $0.04 to exhaust, or two deciles when paying by the decile:

        >>> table = gain_table(-np.arange(2091.0), np.arange(2091) < 414)
        >>> round(table.cost_to_reach(cost_per_item=0.04), 2)
        16.56
        >>> round(table.cost_to_reach(cost_per_item=0.04, whole_bins=True), 3)
        16.728
        """
        whole = _whole_bins_flag(whole_bins)
        target = self._target(share)
        cost = _positive_real(cost_per_item, "cost_per_item")
        if target == 0:
            return math.nan
        if whole:
            return self._expected_bins_to(target) * self.n_items * cost / self.bins
        return self._expected_items_to(target) * cost

    def budget_yield(
        self, budget: float, *, cost_per_item: float, whole_bins: bool = False
    ) -> BudgetYield:
        """What a budget buys: items annotated from the top and positives found.

        Parameters
        ----------
        budget : float
            Money available; non-negative.
        cost_per_item : float
            Cost of annotating one item; positive.
        whole_bins : bool, default False
            If False, buy ``floor(budget / cost_per_item)`` items. If True, buy only
            whole bins at their nominal cost (:meth:`cost_per_bin`).

        Returns
        -------
        BudgetYield
            Items, fraction of the list, cost spent, expected positives and gain.

        Notes
        -----
        Item resolution: ``m = min(floor(budget / cost_per_item), N)`` items.
        Bin resolution: ``j = min(floor(budget / (N / k * cost_per_item)), k)`` bins,
        that is ``floor(j N / k)`` items. Quotients within 1e-9 of a whole number count
        as that number, so $16 at $0.04 buys 400 items, not 399. Positives are
        :meth:`positives_within` of the items bought.

        References
        ----------
        Klubička et al. (2018), section 4, Situations 1 and 3, and section 4.1.

        Examples
        --------
        >>> table = gain_table([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0],
        ...                    [1, 1, 0, 1, 0, 0, 1, 0, 0, 0], bins=5)
        >>> table.budget_yield(0.5, cost_per_item=0.1)
        BudgetYield(items=5, fraction=0.5, cost=0.5, positives=3.0, gain=0.75)
        >>> table.budget_yield(0.5, cost_per_item=0.1, whole_bins=True)
        BudgetYield(items=4, fraction=0.4, cost=0.4, positives=3.0, gain=0.75)
        """
        whole = _whole_bins_flag(whole_bins)
        money = real_scalar(budget, "budget")
        if money < 0.0:
            raise ValueError(f"`budget` must be non-negative; got {show(budget)}.")
        cost = _positive_real(cost_per_item, "cost_per_item")
        # a quotient beyond the list (inf included: a huge budget over a tiny cost) buys it all
        if whole:
            n_bins = _floor(min(money * self.bins / (self.n_items * cost), self.bins))
            items = int(self.bin_edges[n_bins])
            fraction = n_bins / self.bins
            spent = n_bins * self.n_items * cost / self.bins
        else:
            items = _floor(min(money / cost, self.n_items))
            fraction = items / self.n_items
            spent = items * cost
        positives = float(self._positives_at(np.asarray(items)))
        gain = positives / self.n_positives if self.n_positives else math.nan
        return BudgetYield(items, fraction, spent, positives, gain)

    def _positives_at(self, n_items: NDArray[np.int64]) -> NDArray[np.float64]:
        return np.asarray(
            np.interp(n_items, self.group_ends, self.group_cum_positives), dtype=np.float64
        )

    def _share_of_positives(self, positives: NDArray[np.float64]) -> NDArray[np.float64]:
        # 0/0 without positives: report nan rather than let numpy warn.
        if self.n_positives == 0:
            return np.full(positives.shape, np.nan)
        return positives / self.n_positives

    def _target(self, share: Any) -> int:
        """Validate ``share`` and return the number of positives it asks for."""
        value = real_scalar(share, "share")
        if not 0.0 < value <= 1.0:
            raise ValueError(f"`share` must be in (0, 1]; got {show(share)}.")
        if self.n_positives == 0:
            return 0
        return min(max(_ceil(value * self.n_positives), 1), self.n_positives)

    def _critical_group(self, target: int) -> tuple[int, int, int, int]:
        """Start rank, size, positives of the tied group holding the target-th positive,
        and how many of its positives the target needs."""
        g = int(np.searchsorted(self.group_cum_positives, target, side="left"))
        start = int(self.group_ends[g - 1])
        before = int(self.group_cum_positives[g - 1])
        size = int(self.group_ends[g]) - start
        positives = int(self.group_cum_positives[g]) - before
        return start, size, positives, target - before

    def _expected_items_to(self, target: int) -> float:
        start, size, positives, needed = self._critical_group(target)
        return start + needed * (size + 1) / (positives + 1)

    def _expected_bins_to(self, target: int) -> float:
        # imported here: scipy.stats takes ~0.3 s to import, which `import estimators` need not pay
        from scipy.stats import hypergeom

        start, size, positives, needed = self._critical_group(target)
        lower_edges = self.bin_edges[:-1]
        # P(X > b) is 1 before the earliest rank X can take and 0 from the latest one on;
        # only edges in between need the hypergeometric law.
        beyond = (lower_edges < start + needed).astype(np.float64)
        between = (lower_edges >= start + needed) & (
            lower_edges < start + needed + size - positives
        )
        beyond[between] = hypergeom.cdf(needed - 1, size, positives, lower_edges[between] - start)
        return float(beyond.sum())


def gain_table(scores: Any, labels: Any, *, bins: int = 10) -> GainTable:
    """Gain table of a ranked list: rank by descending score and split into ``bins`` bins.

    Parameters
    ----------
    scores : array_like of float
        Model scores, one per item; finite. Higher means ranked earlier.
    labels : array_like of {0, 1} or bool
        True labels, same length as ``scores``; 1 marks a positive.
    bins : int, default 10
        Number of quantile bins (10 gives the paper's deciles); ``1 <= bins <= N``.

    Returns
    -------
    GainTable
        Per-bin items, positives, gain, cumulative gain and lift, and the budget
        questions (:meth:`GainTable.fraction_to_reach`, :meth:`GainTable.cost_to_reach`,
        :meth:`GainTable.budget_yield`).

    Notes
    -----
    Items are ranked by descending score; bin ``i`` holds ranks ``floor(i N / k)`` to
    ``floor((i + 1) N / k) - 1`` and ``gain_i = p_i / P``. Ties are resolved in
    expectation over uniformly random orders within each tied group, so the result
    does not depend on input order (see :class:`GainTable`).

    References
    ----------
    Klubička, F., Salton, G. D. and Kelleher, J. D. (2018). Is it worth it?
    Budget-related evaluation metrics for model selection. Section 3, equation 1.

    Examples
    --------
    Two items tie for second place; one of them is positive, so the first half of the
    list holds 1.5 positives on average:

    >>> table = gain_table([0.9, 0.5, 0.5, 0.1], [1, 0, 1, 0], bins=2)
    >>> table.positives.tolist()
    [1.5, 0.5]
    >>> table.cumulative_gain.tolist()
    [0.75, 1.0]
    >>> table.cumulative_lift.tolist()
    [1.5, 1.0]
    """
    score_array = _scores(scores)
    n_items = int(score_array.shape[0])
    label_array = _labels(labels, n_items)
    n_bins = positive_int(bins, "bins")
    if n_bins > n_items:
        raise ValueError(
            f"`bins` must be at most the number of items ({n_items}); got {show(bins)}."
        )
    # Unique values of -score are the tied groups in ranking order (-0.0 == 0.0 tie).
    _, group_of_item, group_sizes = np.unique(-score_array, return_inverse=True, return_counts=True)
    group_positives = np.bincount(group_of_item, weights=label_array, minlength=group_sizes.size)
    group_ends = np.concatenate(([0], np.cumsum(group_sizes))).astype(np.int64)
    cum_positives = np.concatenate(([0], np.cumsum(group_positives))).astype(np.int64)
    return GainTable(
        n_items=n_items,
        n_positives=int(cum_positives[-1]),
        bins=n_bins,
        group_ends=group_ends,
        group_cum_positives=cum_positives,
    )


# ---------------------------------------------------------------------------------------------
# The budget questions from a labelled sample of the ranked population
# ---------------------------------------------------------------------------------------------

BUDGET_POSITIVES_METHODS: tuple[str, ...] = ("hypergeometric", "binomial", "bootstrap")
CUMULATIVE_GAIN_METHODS: tuple[str, ...] = ("binomial", "bootstrap")
DEFAULT_DRAWS = 10_000
# Outcomes times draws resampled at once: bounds the bootstrap's memory (about 80 MB a block).
_BOOTSTRAP_BLOCK = 10**7


def _broadcast_counts(values: dict[str, Any]) -> dict[str, NDArray[np.int64]]:
    """Validate each count and broadcast them together (names in the message)."""
    arrays = {name: as_counts(value, name) for name, value in values.items()}
    try:
        shaped = np.broadcast_arrays(*arrays.values())
    except ValueError:
        shapes = ", ".join(f"`{n}` {np.shape(a)}" for n, a in arrays.items())
        raise ValueError(f"`{next(iter(arrays))}` and the other counts must broadcast to one "
                         f"shape; got {shapes}.") from None
    return dict(zip(arrays, shaped, strict=True))


def _at_most(counts: dict[str, NDArray[np.int64]], small: str, large: str,
             less: tuple[str, str] | None = None) -> None:
    """ValueError naming ``small`` unless ``small <= large`` everywhere, or with ``less``
    ``(a, b)``, unless ``small - a <= large - b``."""
    left, right = counts[small], counts[large]
    said = f"`{small}` must not exceed `{large}`"
    if less is not None:
        left, right = left - counts[less[0]], right - counts[less[1]]
        said = f"`{small}` less `{less[0]}` must not exceed `{large}` less `{less[1]}`"
    bad = left > right
    if bad.any():
        raise ValueError(f"{said}; got {first_offender(left, bad)} above "
                         f"{first_offender(right, bad)}.")


def _check_design(counts: dict[str, NDArray[np.int64]]) -> None:
    """The sample's split across the set must fit the population's (shared by both results)."""
    _at_most(counts, "in_set", "sampled")
    _at_most(counts, "set_size", "population_size")
    _at_most(counts, "in_set", "set_size")
    _at_most(counts, "sampled", "population_size")
    # the sampled items outside the set are among the items outside it
    _at_most(counts, "sampled", "population_size", less=("in_set", "set_size"))


def _output(values: NDArray[np.float64]) -> Values:
    return float(values) if values.ndim == 0 else values


def _percentiles(replicates: NDArray[np.float64], level: float, alternative: str
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Percentile bounds over axis 0 that leave out undefined (nan) replicates.

    numpy's default ("linear", Hyndman & Fan type 7) quantile of each column's defined
    values, computed for every column at once: sort (nan last), then interpolate at
    ``(c - 1) q`` with ``c`` the column's count of defined values. A column without one gives
    nan bounds.
    """
    tail = (1.0 - level) / 2.0 if alternative == "two-sided" else 1.0 - level
    ordered = np.sort(replicates, axis=0)
    count = np.sum(~np.isnan(replicates), axis=0)
    found = []
    for q in (tail, 1.0 - tail):
        position = np.maximum(count - 1, 0) * q
        below = np.floor(position).astype(np.int64)
        above = np.minimum(below + 1, np.maximum(count - 1, 0))
        low_value = np.take_along_axis(ordered, below[None], axis=0)[0]
        high_value = np.take_along_axis(ordered, above[None], axis=0)[0]
        value = low_value + (position - below) * (high_value - low_value)
        found.append(np.where(count > 0, value, np.nan))
    return found[0], found[1]


def _blocks(size: int, draws: int) -> list[slice]:
    """Slices of the flattened outcomes, each resampled ``draws`` times at once."""
    step = max(1, _BOOTSTRAP_BLOCK // draws)
    return [slice(start, min(start + step, size)) for start in range(0, max(size, 1), step)]


def _positives_hypergeometric(est: BudgetPositives, level: float, alternative: str
                              ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Exact interval for the positives ``K`` in the set, given ``n_B`` sampled from it.

    Given the ``n_B`` sampled items that fall in the set, they are a simple random sample
    of its ``B`` items, so the positives among them are ``x ~ Hypergeometric(B, K, n_B)``
    exactly. The lower bound is `estimators._hypergeometric.hypergeometric_lower`; the upper
    bound is ``B`` less the lower bound of the set's negatives, ``B - lower(n_B - x)``. Each
    tail excludes at most ``(1 - level) / 2`` (two-sided; ``1 - level`` one-sided) for every
    ``K`` and every ``n_B``: coverage at least nominal, conditionally on ``n_B`` and hence
    overall.
    """
    tail = (1.0 - level) / 2.0 if alternative == "two-sided" else 1.0 - level
    x, drawn, size = est.arrays()[:3]
    low = hypergeometric_lower(x, drawn, size, tail).astype(np.float64)
    high = (size - hypergeometric_lower(drawn - x, drawn, size, tail)).astype(np.float64)
    return low, high


def _positives_binomial(est: BudgetPositives, level: float, alternative: str
                        ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Clopper-Pearson interval for the set's precision ``K / B``, scaled by ``B``.

    Treats the ``x`` positives among the ``n_B`` sampled set items as ``Binomial(n_B,
    K / B)`` (Clopper & Pearson 1934; `estimators.proportion_ci`), ignoring that the set is
    finite: sampling without replacement makes ``x`` less variable than that, so the
    interval is wider than the hypergeometric one, which it approaches as ``n_B / B`` shrinks.
    The bounds are clipped to the values the sample allows (``x`` to ``B - (n_B - x)``).
    """
    x, drawn, size = est.arrays()[:3]
    ci = proportion_ci(x, drawn, method="clopper-pearson", confidence_level=level,
                       alternative=alternative)
    low = np.maximum(np.asarray(ci.low, dtype=np.float64) * size, x)
    high = np.minimum(np.asarray(ci.high, dtype=np.float64) * size, size - (drawn - x))
    return low, high


def _positives_bootstrap(est: BudgetPositives, level: float, alternative: str,
                         gen: np.random.Generator, draws: int
                         ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Percentile bootstrap of the post-stratified estimate ``B x / n_B``.

    The labelled sample is resampled with replacement (Efron & Tibshirani 1993, ch. 13):
    the resample's items in the set are ``n_B* ~ Binomial(n, n_B / n)`` and its positives
    among them ``x* ~ Binomial(n_B*, x / n_B)`` (the multinomial by conditional binomials).
    Resamples without a set item (``n_B* = 0``) have no estimate and are left out. The
    bounds are clipped to the values the sample allows, as for ``binomial``.
    """
    counts = est.arrays()
    x, drawn, size, sampled = (a.ravel() for a in counts[:4])
    low, high = np.empty(x.size), np.empty(x.size)
    for part in _blocks(x.size, draws):
        share = np.divide(drawn[part], sampled[part], out=np.zeros(drawn[part].shape),
                          where=sampled[part] > 0)
        precision = np.divide(x[part], drawn[part], out=np.zeros(x[part].shape),
                              where=drawn[part] > 0)
        drawn_star = gen.binomial(sampled[part], share, size=(draws, share.size))
        x_star = gen.binomial(drawn_star, precision)
        with np.errstate(divide="ignore", invalid="ignore"):
            estimates = np.where(drawn_star > 0, size[part] * x_star / drawn_star, np.nan)
        low[part], high[part] = _percentiles(estimates, level, alternative)
    x_all, drawn_all, size_all = counts[:3]
    return (np.maximum(low.reshape(x_all.shape), x_all),
            np.minimum(high.reshape(x_all.shape), size_all - (drawn_all - x_all)))


def _gain_binomial(est: CumulativeGainEstimate, level: float, alternative: str
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Clopper-Pearson interval for ``G`` from the ``x`` of ``m`` sampled positives in the set.

    Under simple random sampling the ``m`` sampled positives are a simple random sample of
    the population's ``P`` positives, each in the set with probability ``G = K / P``: ``x``
    is ``Hypergeometric(P, K, m)``, with ``P`` unknown, and ``Binomial(m, G)`` when ``m`` is
    small against ``P`` (Clopper & Pearson 1934; `estimators.proportion_ci`). The binomial is
    the more variable of the two, so the interval errs on the wide side.
    """
    x, positives = est.arrays()[0], est.arrays()[4]
    ci = proportion_ci(x, positives, method="clopper-pearson", confidence_level=level,
                       alternative=alternative)
    return np.asarray(ci.low, dtype=np.float64), np.asarray(ci.high, dtype=np.float64)


def _gain_bootstrap(est: CumulativeGainEstimate, level: float, alternative: str,
                    gen: np.random.Generator, draws: int
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Percentile bootstrap of ``x / m``, the share of the sampled positives in the set.

    The labelled sample is resampled with replacement (Efron & Tibshirani 1993, ch. 13): the
    resample's positives are ``m* ~ Binomial(n, m / n)`` and those in the set ``x* ~
    Binomial(m*, x / m)``. Resamples without a positive are left out.
    """
    arrays = est.arrays()
    shape = arrays[0].shape
    x, sampled, positives = arrays[0].ravel(), arrays[3].ravel(), arrays[4].ravel()
    low, high = np.empty(x.size), np.empty(x.size)
    for part in _blocks(x.size, draws):
        share = np.divide(positives[part], sampled[part], out=np.zeros(x[part].shape),
                          where=sampled[part] > 0)
        inside = np.divide(x[part], positives[part], out=np.zeros(x[part].shape),
                           where=positives[part] > 0)
        positives_star = gen.binomial(sampled[part], share, size=(draws, share.size))
        x_star = gen.binomial(positives_star, inside)
        with np.errstate(divide="ignore", invalid="ignore"):
            estimates = np.where(positives_star > 0, x_star / positives_star, np.nan)
        low[part], high[part] = _percentiles(estimates, level, alternative)
    return low.reshape(shape), high.reshape(shape)


def _interval_options(method: Any, allowed: tuple[str, ...], confidence_level: Any,
                      alternative: Any, rng: Any, draws: Any
                      ) -> tuple[str, float, str, np.random.Generator, int]:
    """Validate the options of an interval, every one whether or not the method uses it."""
    chosen = choice(method, "method", allowed)
    side = check_alternative(alternative)
    level = open_unit(confidence_level, "confidence_level")
    count = positive_int(draws, "draws")
    if chosen == "bootstrap":
        count = check_draws(count, 1, "draws")  # the memory cap: resampled in blocks
    return chosen, level, side, generator(rng), count


def _one_sided(low: NDArray[np.float64], high: NDArray[np.float64], alternative: str,
               top: NDArray[np.float64] | float) -> tuple[NDArray[np.float64],
                                                          NDArray[np.float64]]:
    """The other end of a one-sided interval at the end of the parameter space."""
    if alternative == "greater":
        return low, np.broadcast_to(np.asarray(top, dtype=np.float64), low.shape).copy()
    if alternative == "less":
        return np.zeros(high.shape), high
    return low, high


@dataclass(frozen=True)
class BudgetPositives:
    r"""The positives a budget buys: those in a known set of the ranked population.

    A model scores every one of ``N`` items, so its ranking, and the set of items a budget
    buys (the top ``B``, or the next decile after those already bought), are known; labels
    are known for a simple random sample of ``n`` items only. Build it from scores with
    :func:`budget_positives`, or from the sample's counts directly (the fields may be
    arrays of one broadcast shape: many samples at once).

    Attributes
    ----------
    in_set_positives : int or numpy.ndarray
        ``x``: sampled items in the set that are positive.
    in_set : int or numpy.ndarray
        ``n_B``: sampled items in the set.
    set_size : int or numpy.ndarray
        ``B``: items in the set (the budget, in items).
    sampled : int or numpy.ndarray
        ``n``: items in the labelled sample.
    population_size : int or numpy.ndarray
        ``N``: items ranked.

    Notes
    -----
    The estimand is ``K``, the positives among the set's ``B`` items. Given ``n_B``, the
    sampled set items are a simple random sample of the set, so ``x ~ Hypergeometric(B, K,
    n_B)``. The point estimate is post-stratified on set membership,

    .. math:: \hat K = B \, x / n_B ,

    unbiased given ``n_B`` (for ``n_B > 0``), with variance ``B^2 (1 - n_B / B) s^2 / n_B``
    (``s^2`` the set's variance of the label). The expansion estimate ``N x / n`` ignores the
    known ``B``; it is unbiased too, but its variance adds that of ``n_B``: for ``n`` large,
    ``N B p (1 - B p / N) / n`` against ``N B p (1 - p) / n`` (``p = K / B``), larger
    whenever the set is not the whole list. Undefined cases: with ``n_B = 0`` the sample
    holds no information about the set: ``estimate`` is nan and every method's interval is
    ``[0, B]`` (the values the data allow: the exact method gives it by construction).

    References
    ----------
    Klubička, F., Salton, G. D. and Kelleher, J. D. (2018). Is it worth it? Budget-related
    evaluation metrics for model selection. Section 4, Situations 1 and 3, and section 4.1
    (the positives a budget buys, from a test set). Cochran, W. G. (1977). *Sampling
    Techniques*, 3rd ed., section 5A.9 (post-stratification), section 3.2 (hypergeometric
    sampling of a proportion). Buonaccorsi, J. P. (1987). A note on confidence intervals for
    proportions in finite populations. *The American Statistician* 41, 215-218.

    Examples
    --------
    A budget buys the top 10 of a ranked list; 5 of the labelled sample fall among them, all
    positive. The exact interval: at least 7 of the 10 are positive, since with 6 or fewer
    five positives in five draws has probability at most 6/252.

    >>> bought = BudgetPositives(5, 5, set_size=10, sampled=40, population_size=100)
    >>> bought.estimate
    10.0
    >>> low, high = bought.confidence_interval(method="hypergeometric")
    >>> low, high
    (7.0, 10.0)
    >>> low, high = bought.confidence_interval(method="binomial")
    >>> round(low, 2), high
    (5.0, 10.0)
    """

    in_set_positives: int | NDArray[np.int64]
    in_set: int | NDArray[np.int64]
    set_size: int | NDArray[np.int64]
    sampled: int | NDArray[np.int64]
    population_size: int | NDArray[np.int64]

    def __post_init__(self) -> None:
        counts = _broadcast_counts({name: getattr(self, name) for name in (
            "in_set_positives", "in_set", "set_size", "sampled", "population_size")})
        _at_most(counts, "in_set_positives", "in_set")
        _check_design(counts)

    def arrays(self) -> tuple[NDArray[np.int64], ...]:
        """``(x, n_B, B, n, N)`` as int64 arrays of the broadcast shape."""
        found = np.broadcast_arrays(*(np.asarray(getattr(self, name), dtype=np.int64) for name in (
            "in_set_positives", "in_set", "set_size", "sampled", "population_size")))
        return tuple(found)

    @property
    def estimate(self) -> Values:
        """Post-stratified ``B x / n_B``; nan where ``n_B = 0`` (see Notes)."""
        x, drawn, size = self.arrays()[:3]
        found = np.divide(size * x, drawn, out=np.full(x.shape, np.nan), where=drawn > 0)
        return _output(found)

    @property
    def expansion_estimate(self) -> Values:
        """``N x / n``, which ignores the known set size; nan where ``n = 0``."""
        x, _, _, sampled, total = self.arrays()
        found = np.divide(total * x, sampled, out=np.full(x.shape, np.nan), where=sampled > 0)
        return _output(found)

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        *,
        method: str = "hypergeometric",
        alternative: str = "two-sided",
        rng: Any = None,
        draws: int = DEFAULT_DRAWS,
    ) -> Interval:
        """Confidence interval for ``K``, the positives in the set.

        Parameters
        ----------
        confidence_level : float
            Nominal coverage, strictly between 0 and 1.
        method : {"hypergeometric", "binomial", "bootstrap"}
            ``hypergeometric``: exact, coverage at least nominal given ``n_B`` (the default).
            ``binomial``: Clopper-Pearson for the set's precision, scaled by ``B``.
            ``bootstrap``: percentile bootstrap over the labelled sample (random: ``rng``,
            ``draws``). Each method's reference is in its function's docstring.
        alternative : {"two-sided", "greater", "less"}
            ``"greater"``: one-sided lower bound (``high = B``); ``"less"``: upper bound
            (``low = 0``).
        rng : numpy Generator, SeedSequence, int or None
            Randomness of the bootstrap.
        draws : int
            Bootstrap resamples per interval.

        Returns
        -------
        Interval
            Bounds in items (whole numbers for ``hypergeometric``); ``[0, B]`` where
            ``n_B = 0``.
        """
        drawn, size = self.arrays()[1:3]
        chosen, level, side, gen, count = _interval_options(
            method, BUDGET_POSITIVES_METHODS, confidence_level, alternative, rng, draws)
        if chosen == "hypergeometric":
            low, high = _positives_hypergeometric(self, level, side)
        elif chosen == "binomial":
            low, high = _positives_binomial(self, level, side)
        else:
            low, high = _positives_bootstrap(self, level, side, gen, count)
        low, high = _one_sided(low, high, side, size.astype(np.float64))
        empty = drawn == 0  # no sampled item in the set: every K from 0 to B is possible
        low = np.where(empty, 0.0, low)
        high = np.where(empty, size.astype(np.float64), high)
        return Interval(_output(low), _output(np.maximum(high, low)), chosen, level, side)


@dataclass(frozen=True)
class CumulativeGainEstimate:
    r"""Cumulative gain of a ranked population at a cut, from a labelled sample.

    The share ``G = K / P`` of the population's ``P`` positives that lie in the top ``B``
    items of the ranking (the top ``k`` bins). Build it with :func:`cumulative_gain_estimate`
    or from the sample's counts (arrays of one broadcast shape allowed).

    Attributes
    ----------
    in_set_positives : int or numpy.ndarray
        ``x``: sampled positives in the top set.
    in_set : int or numpy.ndarray
        ``n_B``: sampled items in the top set.
    set_size : int or numpy.ndarray
        ``B``: items in the top set.
    sampled : int or numpy.ndarray
        ``n``: items in the labelled sample.
    sampled_positives : int or numpy.ndarray
        ``m``: positives in the labelled sample.
    population_size : int or numpy.ndarray
        ``N``: items ranked.

    Notes
    -----
    Given ``m``, the sampled positives are a simple random sample of the ``P`` positives,
    so ``x / m`` (``estimate``) is unbiased for ``G`` given ``m > 0``. The post-stratified
    estimate (``stratified_estimate``) uses the known ``B``: with the estimated positives of
    the set, ``B x / n_B``, and of the rest, ``(N - B)(m - x) / (n - n_B)``,

    .. math:: \hat G_{\mathrm{st}} = \frac{B x / n_B}{B x / n_B + (N - B)(m - x) / (n - n_B)} .

    For large samples its variance is that of ``x / m`` times ``1 - p_1 p_2 / \pi`` (``p_1``,
    ``p_2`` the precisions inside and outside the set, ``\pi`` the prevalence; delta
    method): never larger, and smaller the more positives lie outside the set. It is
    undefined (nan) where a non-empty part of the population has no sampled item, or where
    no positive is sampled. Undefined cases: with ``m = 0``, ``estimate`` is nan and every
    method's interval is ``[0, 1]`` (the data exclude no value).

    References
    ----------
    Klubička et al. (2018), section 3.1 (cumulative gain) and Figure 1. Cochran (1977),
    section 5A.9 (post-stratification) and section 6.4 (the variance of a ratio estimate).

    Examples
    --------
    Of 50 sampled positives, 40 fall in the top two deciles of a list of 1,000 items:

    >>> gain = CumulativeGainEstimate(40, 60, set_size=200, sampled=300, sampled_positives=50,
    ...                               population_size=1000)
    >>> gain.estimate
    0.8
    >>> round(gain.stratified_estimate, 4)
    0.8
    >>> low, high = gain.confidence_interval(method="binomial")
    >>> round(low, 4), round(high, 4)
    (0.6628, 0.8997)
    """

    in_set_positives: int | NDArray[np.int64]
    in_set: int | NDArray[np.int64]
    set_size: int | NDArray[np.int64]
    sampled: int | NDArray[np.int64]
    sampled_positives: int | NDArray[np.int64]
    population_size: int | NDArray[np.int64]

    def __post_init__(self) -> None:
        counts = _broadcast_counts({name: getattr(self, name) for name in (
            "in_set_positives", "in_set", "set_size", "sampled", "sampled_positives",
            "population_size")})
        _at_most(counts, "in_set_positives", "in_set")
        _at_most(counts, "in_set_positives", "sampled_positives")
        _at_most(counts, "sampled_positives", "sampled")
        _check_design(counts)
        # the sampled positives outside the set are among the sampled items outside it
        _at_most(counts, "sampled_positives", "sampled", less=("in_set_positives", "in_set"))

    def arrays(self) -> tuple[NDArray[np.int64], ...]:
        """``(x, n_B, B, n, m, N)`` as int64 arrays of the broadcast shape."""
        found = np.broadcast_arrays(*(np.asarray(getattr(self, name), dtype=np.int64) for name in (
            "in_set_positives", "in_set", "set_size", "sampled", "sampled_positives",
            "population_size")))
        return tuple(found)

    @property
    def estimate(self) -> Values:
        """``x / m``; nan where ``m = 0``."""
        x, positives = self.arrays()[0], self.arrays()[4]
        found = np.divide(x, positives, out=np.full(x.shape, np.nan), where=positives > 0)
        return _output(found)

    @property
    def stratified_estimate(self) -> Values:
        """Post-stratified on set membership (Notes); nan where undefined."""
        x, drawn, size, sampled, positives, total = (a.astype(np.float64)
                                                     for a in self.arrays())
        inside = _stratum_total(size, x, drawn)
        outside = _stratum_total(total - size, positives - x, sampled - drawn)
        both = inside + outside
        found = np.divide(inside, both, out=np.full(x.shape, np.nan), where=both > 0)
        return _output(found)

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        *,
        method: str = "binomial",
        alternative: str = "two-sided",
        rng: Any = None,
        draws: int = DEFAULT_DRAWS,
    ) -> Interval:
        """Confidence interval for the cumulative gain ``G``.

        Parameters
        ----------
        confidence_level : float
            Nominal coverage, strictly between 0 and 1.
        method : {"binomial", "bootstrap"}
            ``binomial``: Clopper-Pearson on ``x`` of ``m`` (the default). ``bootstrap``:
            percentile bootstrap of ``x / m`` over the labelled sample (random: ``rng``,
            ``draws``).
        alternative : {"two-sided", "greater", "less"}
            ``"greater"``: one-sided lower bound (``high = 1``); ``"less"``: upper bound.
        rng : numpy Generator, SeedSequence, int or None
            Randomness of the bootstrap.
        draws : int
            Bootstrap resamples per interval.

        Returns
        -------
        Interval
            ``[0, 1]`` where ``m = 0``.
        """
        positives = self.arrays()[4]
        chosen, level, side, gen, count = _interval_options(
            method, CUMULATIVE_GAIN_METHODS, confidence_level, alternative, rng, draws)
        if chosen == "binomial":
            low, high = _gain_binomial(self, level, side)
        else:
            low, high = _gain_bootstrap(self, level, side, gen, count)
        low, high = _one_sided(low, high, side, 1.0)
        empty = positives == 0  # no sampled positive: every share is possible
        low, high = np.where(empty, 0.0, low), np.where(empty, 1.0, high)
        return Interval(_output(low), _output(np.maximum(high, low)), chosen, level, side)


def _stratum_total(size: NDArray[np.float64], positives: NDArray[np.float64],
                   sampled: NDArray[np.float64]) -> NDArray[np.float64]:
    """``size x positives / sampled``: 0 for an empty stratum, nan for an unsampled one."""
    found = np.divide(size * positives, sampled, out=np.full(size.shape, np.nan),
                      where=sampled > 0)
    return np.where(size == 0, 0.0, found)


def _sample_of_ranking(scores: Any, sample: Any, labels: Any
                       ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Validated ranks of the population (0 = highest score), sample indices and labels."""
    score_array = _scores(scores)
    n_items = int(score_array.size)
    indices = as_counts(sample, "sample")
    if indices.ndim != 1:
        raise ValueError(f"`sample` must be one-dimensional; got shape {indices.shape}.")
    beyond = indices >= n_items
    if beyond.any():
        raise ValueError(f"`sample` must hold indices into `scores` (below {n_items}); got "
                         f"{first_offender(indices, beyond)}.")
    if np.unique(indices).size != indices.size:
        raise ValueError("`sample` must hold distinct indices (a simple random sample drawn "
                         f"without replacement); got {show(indices)}.")
    label_array = _labels(labels, int(indices.size), "sample")
    order = np.argsort(-score_array, kind="stable")
    ranks = np.empty(n_items, dtype=np.int64)
    ranks[order] = np.arange(n_items)
    return ranks, indices, label_array


def _check_edges(scores: Any, edges: tuple[int, ...]) -> None:
    """ValueError unless no tied group of scores straddles a rank edge of the set."""
    ordered = np.sort(np.asarray(scores, dtype=np.float64))[::-1]
    for edge in edges:
        if 0 < edge < ordered.size and ordered[edge - 1] == ordered[edge]:
            raise ValueError(f"`scores` must not tie across the set's edge after rank {edge} "
                             f"(score {show(float(ordered[edge]))}): the ranking does not "
                             "decide which of the tied items the budget buys.")


def _sample_counts(ranks: NDArray[np.int64], indices: NDArray[np.int64],
                   labels: NDArray[np.int64], start: int, stop: int) -> tuple[int, int, int]:
    """``(x, n_B, m)``: sampled positives in ranks ``start .. stop - 1``, sampled items there,
    and sampled positives."""
    inside = (ranks[indices] >= start) & (ranks[indices] < stop)
    return int(np.sum(labels[inside])), int(np.sum(inside)), int(np.sum(labels))


def budget_positives(scores: Any, sample: Any, labels: Any, *, items: int,
                     after: int = 0) -> BudgetPositives:
    """The positives a budget of ``items`` buys from a ranked list, from a labelled sample.

    Parameters
    ----------
    scores : array_like of float
        The model's scores of every item of the population; higher ranks first.
    sample : array_like of int
        Indices into ``scores`` of the items labelled: a simple random sample, distinct.
    labels : array_like of {0, 1} or bool
        Their labels, in the order of ``sample``.
    items : int
        ``B``: the items the budget buys (``0 <= after + items <= N``).
    after : int, default 0
        Items already bought from the top: the set is the ranks ``after + 1`` to
        ``after + items`` (say the third decile, after two).

    Returns
    -------
    BudgetPositives
        Its ``estimate`` and ``confidence_interval`` answer "how many positives does the
        budget buy" (Situations 1 and 3 of the paper).

    Raises
    ------
    ValueError
        Besides malformed input: if tied scores straddle an edge of the set (the ranking
        does not decide which tied items are bought; break the ties first).

    References
    ----------
    Klubička et al. (2018), section 4, Situations 1 and 3.

    Examples
    --------
    >>> scores = np.arange(100.0)[::-1]  # item i ranks (i + 1)-th
    >>> bought = budget_positives(scores, [0, 3, 5, 12, 50, 70], [1, 1, 0, 1, 0, 0],
    ...                           items=10)
    >>> bought.in_set_positives, bought.in_set, bought.estimate
    (2, 3, 6.666666666666667)
    >>> bought.confidence_interval().low
    2.0
    """
    ranks, indices, label_array = _sample_of_ranking(scores, sample, labels)
    n_items = int(ranks.size)
    skipped = whole(after, "after")
    size = whole(items, "items")
    if skipped + size > n_items:
        raise ValueError(f"`items` must be at most the list length less `after` "
                         f"({n_items} - {skipped}); got {show(items)}.")
    _check_edges(scores, (skipped, skipped + size))
    x, drawn, _ = _sample_counts(ranks, indices, label_array, skipped, skipped + size)
    return BudgetPositives(x, drawn, set_size=size, sampled=int(indices.size),
                           population_size=n_items)


def cumulative_gain_estimate(scores: Any, sample: Any, labels: Any, *, top_bins: int,
                             bins: int = 10) -> CumulativeGainEstimate:
    """Cumulative gain at the end of bin ``top_bins`` of a ranked list, from a labelled sample.

    Parameters
    ----------
    scores : array_like of float
        The model's scores of every item of the population; higher ranks first.
    sample : array_like of int
        Indices into ``scores`` of the items labelled: a simple random sample, distinct.
    labels : array_like of {0, 1} or bool
        Their labels, in the order of ``sample``.
    top_bins : int
        ``k``, the bins from the top (``1 <= k <= bins``): the top set holds the
        ``floor(k N / bins)`` highest-ranked items, the bin edges of :func:`gain_table`.
    bins : int, default 10
        Quantile bins (10: the paper's deciles).

    Returns
    -------
    CumulativeGainEstimate

    Raises
    ------
    ValueError
        Besides malformed input: if tied scores straddle the set's edge.

    References
    ----------
    Klubička et al. (2018), section 3.1 and Figure 1.

    Examples
    --------
    >>> scores = np.arange(100.0)[::-1]
    >>> gain = cumulative_gain_estimate(scores, [0, 3, 5, 12, 50, 70], [1, 1, 0, 1, 0, 1],
    ...                                 top_bins=2)
    >>> gain.estimate
    0.75
    """
    ranks, indices, label_array = _sample_of_ranking(scores, sample, labels)
    n_items = int(ranks.size)
    n_bins = positive_int(bins, "bins")
    if n_bins > n_items:
        raise ValueError(f"`bins` must be at most the number of items ({n_items}); got "
                         f"{show(bins)}.")
    upto = positive_int(top_bins, "top_bins")
    if upto > n_bins:
        raise ValueError(f"`top_bins` must be at most `bins` ({n_bins}); got {show(top_bins)}.")
    size = upto * n_items // n_bins
    _check_edges(scores, (size,))
    x, drawn, positives = _sample_counts(ranks, indices, label_array, 0, size)
    return CumulativeGainEstimate(x, drawn, set_size=size, sampled=int(indices.size),
                                  sampled_positives=positives, population_size=n_items)
