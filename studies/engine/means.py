"""The mean of a performance measure over independent cells, with its Monte Carlo standard error.

A study often reports a measure averaged over cells (over the populations of a row, the
topics of a policy, the values of ``n`` in a band). The cells are run with independent random
streams, so their Monte Carlo errors are independent and the mean of the values ``v_i`` with
weights ``w_i`` and MCSEs ``m_i`` is

``mean = sum w_i v_i / sum w_i``,  ``MCSE = sqrt(sum w_i^2 m_i^2) / sum w_i``

(equal weights by default: ``MCSE = sqrt(sum m_i^2) / k`` over ``k`` cells). On the exact path
every MCSE is 0 and so is the mean's.

Undefined values (nan), by ``nan_policy``:

* ``"propagate"`` (the default): a cell whose value is undefined makes the mean undefined.
* ``"omit"``: the mean is over the cells whose value is defined (a pass rate among attempts,
  undefined in a cell without an attempt, averaged over the cells that had one).

A cell of weight 0 takes no part, whatever its value. A defined value whose MCSE is undefined
(one replicate cannot estimate its own spread) leaves the mean defined but its MCSE undefined:
no other cell's MCSE stands in for it, so a claim on such a mean is inconclusive rather than
judged on a made-up error. Without any cell taking part, the mean and its MCSE are undefined.

`mean_over_cells` averages one list of cells, `mean_over_cells_frame` each group of a frame's
rows. A result read in pieces (a grid of millions of cells) adds up `mean_terms` per piece
(each is a sum, aggregated by `MEAN_SUMS`) and finishes with `means_from_sums`. Every sum is
pandas' grouped (compensated) sum; `mean_over_cells` sums its one group the same way (with
less around it), so the two give the same bits for the same cells.

References
----------
Morris, T. P., White, I. R. & Crowther, M. J. (2019). Using simulation studies to evaluate
statistical methods. *Statistics in Medicine* 38, 2074-2102, Table 6 (each cell's MCSE).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from studies.engine.performance import Measure

__all__ = ["MEAN_SUMS", "NAN_POLICIES", "mean_over_cells", "mean_over_cells_frame",
           "mean_terms", "means_from_sums"]

NAN_POLICIES: tuple[str, ...] = ("propagate", "omit")
# The per-cell terms of a mean; each is summed over the cells (and over the pieces of a
# result read in pieces).
MEAN_SUMS: Mapping[str, str] = {"weight_sum": "sum", "weighted_sum": "sum", "square_sum": "sum",
                                "cells": "sum", "undefined_cells": "sum", "unknown_cells": "sum"}


def mean_terms(value: pd.Series, mcse: pd.Series, weight: pd.Series | None = None, *,
               nan_policy: Literal["propagate", "omit"] = "propagate") -> dict[str, pd.Series]:
    """Per cell, the terms whose sums (`MEAN_SUMS`) make the mean over cells.

    Parameters
    ----------
    value, mcse : pandas.Series
        Each cell's value and MCSE (nan where undefined).
    weight : pandas.Series, optional
        Each cell's weight (non-negative); 1 each by default.
    nan_policy : {"propagate", "omit"}
        Whether a cell with an undefined value makes the mean undefined or is left out.

    Returns
    -------
    dict of str to pandas.Series
        ``weight_sum`` (``w``), ``weighted_sum`` (``w v``), ``square_sum`` (``(w m)^2``),
        ``cells`` (1 where the cell takes part), ``undefined_cells`` and ``unknown_cells``
        (1 where it takes part with an undefined value, an undefined MCSE); on the index of
        ``value``.

    Raises
    ------
    ValueError
        If ``nan_policy`` is unknown or a weight is negative or nan.
    """
    if nan_policy not in NAN_POLICIES:
        raise ValueError(f"`nan_policy` must be one of {', '.join(NAN_POLICIES)}; "
                         f"got {nan_policy!r}.")
    value = value.astype(float)
    mcse = mcse.astype(float)
    w = pd.Series(1.0, index=value.index) if weight is None else weight.astype(float)
    if not (w >= 0).all():
        raise ValueError(f"`weight` must be non-negative numbers; got {w[~(w >= 0)].iloc[0]!r}.")
    if nan_policy == "omit":
        w = w.where(value.notna(), 0.0)
    taking = w > 0
    # a cell that takes no part adds nothing, even where its value or MCSE is nan
    return {"weight_sum": w, "weighted_sum": (w * value).where(taking, 0.0),
            "square_sum": ((w * mcse) ** 2).where(taking, 0.0), "cells": taking.astype(int),
            "undefined_cells": (taking & value.isna()).astype(int),
            "unknown_cells": (taking & mcse.isna()).astype(int)}


def means_from_sums(sums: pd.DataFrame) -> pd.DataFrame:
    """The means and their MCSEs from the summed `mean_terms` (a row per group).

    Returns
    -------
    pandas.DataFrame
        ``value`` (nan where a cell taking part has an undefined value), ``mcse`` (nan where
        one has an undefined MCSE), both nan where no cell takes part, and ``cells`` (how many
        take part); on the index of ``sums``.
    """
    total = sums["weight_sum"].where(sums["weight_sum"] > 0)
    return pd.DataFrame({
        "value": (sums["weighted_sum"] / total).where(sums["undefined_cells"] == 0),
        "mcse": (np.sqrt(sums["square_sum"]) / total).where(sums["unknown_cells"] == 0),
        "cells": sums["cells"]}, index=sums.index)


def mean_over_cells_frame(frame: pd.DataFrame, by: Sequence[str], *, value: str = "value",
                          mcse: str = "mcse", weight: str | None = None,
                          nan_policy: Literal["propagate", "omit"] = "propagate"
                          ) -> pd.DataFrame:
    """The mean of a measure over the cells of each group of ``frame``'s rows, with its MCSE.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per cell.
    by : sequence of str
        The columns whose values make a group (in order of first appearance; nan is a value).
    value, mcse : str
        The columns of each cell's value and MCSE.
    weight : str, optional
        The column of each cell's weight; equal weights by default.
    nan_policy : {"propagate", "omit"}
        Whether a cell with an undefined value makes its group's mean undefined or is left out.

    Returns
    -------
    pandas.DataFrame
        A row per group: the columns ``by``, then ``value``, ``mcse`` and ``cells`` (see
        `means_from_sums`).

    Raises
    ------
    ValueError
        If ``by`` is empty, ``nan_policy`` is unknown or a weight is negative or nan.

    Examples
    --------
    >>> import pandas as pd
    >>> cells = pd.DataFrame({"method": ["a", "a", "b"], "value": [0.9, 0.95, 0.5],
    ...                       "mcse": [0.03, 0.04, 0.1]})
    >>> mean_over_cells_frame(cells, ["method"]).round(4).values.tolist()
    [['a', 0.925, 0.025, 2], ['b', 0.5, 0.1, 1]]
    """
    if not by:
        raise ValueError(f"`by` must name at least one column; got {list(by)!r}.")
    terms = mean_terms(frame[value], frame[mcse], None if weight is None else frame[weight],
                       nan_policy=nan_policy)
    sums = frame[list(by)].assign(**terms).groupby(list(by), sort=False, dropna=False).agg(
        dict(MEAN_SUMS))
    return means_from_sums(sums).reset_index()


def mean_over_cells(values: Sequence[float] | Any, mcses: Sequence[float] | Any,
                    weights: Sequence[float] | Any = None, *,
                    nan_policy: Literal["propagate", "omit"] = "propagate") -> Measure:
    """The mean of a measure over independent cells, with its MCSE (see the module's policy).

    Parameters
    ----------
    values, mcses : array_like of float
        Each cell's value and MCSE (nan where undefined).
    weights : array_like of float, optional
        Each cell's weight (non-negative); equal weights by default.
    nan_policy : {"propagate", "omit"}
        Whether a cell with an undefined value makes the mean undefined or is left out.

    Returns
    -------
    Measure
        ``sum w v / sum w`` and ``sqrt(sum w^2 MCSE^2) / sum w``; nan, nan without cells.

    Raises
    ------
    ValueError
        If the lengths differ, ``nan_policy`` is unknown or a weight is negative or nan.

    Examples
    --------
    >>> m = mean_over_cells([0.9, 0.95], [0.03, 0.04])
    >>> round(m.value, 4), round(m.mcse, 4)
    (0.925, 0.025)
    """
    columns = {"value": values, "mcse": mcses, **({} if weights is None else {"weight": weights})}
    arrays = {name: np.asarray(column, dtype=float).ravel() for name, column in columns.items()}
    sizes = {name: array.size for name, array in arrays.items()}
    if len(set(sizes.values())) != 1:
        raise ValueError(f"`values`, `mcses` and `weights` must have one length; got {sizes}.")
    if nan_policy not in NAN_POLICIES:
        raise ValueError(f"`nan_policy` must be one of {', '.join(NAN_POLICIES)}; "
                         f"got {nan_policy!r}.")
    value, mcse = arrays["value"], arrays["mcse"]
    w = arrays.get("weight", np.ones_like(value))
    if not (w >= 0).all():
        raise ValueError(f"`weight` must be non-negative numbers; got {w[~(w >= 0)][0]!r}.")
    if nan_policy == "omit":
        w = np.where(np.isnan(value), 0.0, w)
    taking = w > 0
    # each column summed as the frame path sums a group's (pandas' compensated grouped sum,
    # column by column): the same bits
    labels = np.zeros(value.size, dtype=np.intp)
    sums = {name: pd.Series(column).groupby(labels).sum() for name, column in (
        ("w", w), ("wv", np.where(taking, w * value, 0.0)),
        ("wm", np.where(taking, (w * mcse) ** 2, 0.0)))}
    if sums["w"].empty or not sums["w"].iloc[0] > 0:
        return Measure(np.nan, np.nan)
    total = float(sums["w"].iloc[0])
    mean = (float(sums["wv"].iloc[0]) / total if not (taking & np.isnan(value)).any()
            else np.nan)
    error = (float(np.sqrt(sums["wm"].iloc[0])) / total if not (taking & np.isnan(mcse)).any()
             else np.nan)
    return Measure(mean, error)
