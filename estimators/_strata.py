"""Validation of per-stratum counts, stratum labels and utility weights.

Shared by the stratified estimates, the allocation of a sample to strata, the membership
strata of runs and the pooled estimates (:mod:`estimators.sampling`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from estimators import _validation as check

__all__ = ["MAX_UTILITY", "_design_counts", "_one_dimensional", "_read_only", "_strata_counts",
           "_utility_weights"]

IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


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
