"""Regions of a grid: the cells a pandas query over the grid parameters selects.

Claims and figures name the cells they are about with a query string (``"n * p >= 5 and
alternative == 'two-sided'"``). Every reader runs it the same way, on one row of parameters
per cell: a parameter holding a list (say stratum sizes ``[200, 50, 20]``) is compared as its
text, as the report prints it (``"sizes == '[200, 50, 20]'"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

__all__ = ["as_text", "region_mask"]


def _listed(value: Any) -> bool:
    return isinstance(value, list | tuple | dict | np.ndarray)


def _plain(value: Any) -> Any:
    """Lists, tuples and arrays as plain lists of Python numbers (the text a run stores)."""
    if isinstance(value, list | tuple | np.ndarray):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value.item() if isinstance(value, np.generic) else value


def as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every list-valued column (object dtype) replaced by its text.

    The text is the same whether a value is a list, a tuple or a numpy array, of Python or
    numpy numbers: ``[200, 50]``, as a run read back from its store holds it.

    Examples
    --------
    >>> as_text(pd.DataFrame({"sizes": [[200, 50]], "n": [3]}))["sizes"].tolist()
    ['[200, 50]']
    >>> as_text(pd.DataFrame({"sizes": [(np.int64(200), 50)]}))["sizes"].tolist()
    ['[200, 50]']
    """
    listed = [c for c in frame.columns
              if frame[c].dtype == object and frame[c].map(_listed).any()]
    if not listed:
        return frame
    return frame.assign(**{c: frame[c].map(lambda v: str(_plain(v))) for c in listed})


def region_mask(params: pd.DataFrame, where: str) -> NDArray[np.bool_]:
    """Which rows of ``params`` (one per cell) the query ``where`` selects (empty: all).

    Raises whatever pandas raises for a query that does not fit the parameters.

    Examples
    --------
    >>> region_mask(pd.DataFrame({"n": [5, 50], "p": [0.5, 0.5]}), "n * p >= 5").tolist()
    [False, True]
    """
    if not where:
        return np.ones(len(params), dtype=bool)
    frame = as_text(params).reset_index(drop=True)
    selected = frame.query(where).index.to_numpy()
    mask = np.zeros(len(frame), dtype=bool)
    mask[selected] = True
    return mask
