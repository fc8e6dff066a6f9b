"""Gain tables of a fully labelled ranked list, and the budget questions they answer.

:func:`gain_table` (:class:`GainTable`) splits a ranking into quantile bins and gives each
bin's gain, cumulative gain and lift, the share of the list or the cost needed to find a share
of the positives, and what a budget buys (:class:`BudgetYield`); Klubička et al. (2018),
sections 3 and 4. Ties follow the policy of the :mod:`estimators.gain` docstring. The
validation of scores and labels is shared with the estimates from a labelled sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from estimators._validation import (
    as_array,
    as_counts,
    as_real_array,
    first_offender,
    positive_int,
    real_or_nan,
    real_scalar,
    show,
    whole,
)

__all__ = ["BudgetYield", "GainTable", "Values", "_labels", "_scores", "gain_table"]

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


@dataclass(frozen=True, kw_only=True)
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
    groups, which is all the tie policy (see :mod:`estimators.gain`) needs.

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
        return BudgetYield(items=items, fraction=fraction, cost=spent, positives=positives,
                           gain=gain)

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
