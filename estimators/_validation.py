"""Validation at the public boundary.

Every public function validates its arguments once, here, and raises
``TypeError``/``ValueError`` messages shaped "`name` must be ...; got VALUE."
Internal kernels trust their inputs.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray

ALTERNATIVES = ("two-sided", "less", "greater")


def show(value: Any) -> str:
    """A short one-line repr of an offending value for an error message."""
    text = " ".join(repr(value).split())  # an array's repr spans lines
    return text if len(text) <= 80 else text[:77] + "..."


def as_array(value: Any, name: str) -> NDArray[Any]:
    """``numpy.asarray(value)``, or a ValueError naming ``name`` for a ragged nesting."""
    try:
        return np.asarray(value)
    except (ValueError, TypeError, OverflowError):
        raise ValueError(f"`{name}` must be a number or a rectangular array of numbers; got "
                         f"{show(value)}.") from None


def first_index(bad: NDArray[np.bool_]) -> tuple[int, ...]:
    """Index of the first True element of ``bad`` (``()`` for a 0-d array)."""
    return tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()


def at_index(index: tuple[int, ...]) -> str:
    """`` at index i`` (or ``(i, j)``) for messages; empty for scalars."""
    if not index:
        return ""
    return f" at index {index[0] if len(index) == 1 else index}"


def first_offender(array: NDArray[Any], bad: NDArray[np.bool_]) -> str:
    """Describe the first element flagged in ``bad``, with its index when not a scalar."""
    index = first_index(bad)
    return show(array[index].item()) + at_index(index)


# The largest count accepted: whole numbers above it are not exact in float64 (where every
# estimator computes), and a few of them summed would wrap around in int64.
MAX_COUNT = 2**53


def iterable(value: Any) -> bool:
    """Whether ``value`` can be iterated over (a 0-d array claims it can but cannot)."""
    return isinstance(value, Iterable) and not (isinstance(value, np.ndarray) and value.ndim == 0)


def as_counts(value: Any, name: str) -> NDArray[np.int64]:
    """Return ``value`` as an int64 array of non-negative whole numbers up to `MAX_COUNT`.

    Integral floats (``3.0``) are accepted because counts are often computed;
    booleans, strings and fractional values are rejected, and so are counts too large to
    compute with (an unsigned 2**63 would otherwise wrap around to a negative int64).
    """
    array = as_array(value, name)
    if array.dtype == np.bool_ or not (
        np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)
    ):
        raise TypeError(
            f"`{name}` must be an integer count or array of counts; got {show(value)}."
        )
    if np.issubdtype(array.dtype, np.floating):
        bad = ~np.isfinite(array) | (array != np.floor(array))
        if bad.any():
            raise ValueError(
                f"`{name}` must hold whole numbers (counts); got {first_offender(array, bad)}."
            )
    bad = array < 0
    if bad.any():
        raise ValueError(f"`{name}` must be non-negative; got {first_offender(array, bad)}.")
    bad = array > MAX_COUNT
    if bad.any():
        raise ValueError(f"`{name}` must be at most 2**53 = {MAX_COUNT}; got "
                         f"{first_offender(array, bad)}.")
    return array.astype(np.int64, copy=False)


def as_real_array(value: Any, name: str) -> NDArray[np.float64]:
    """Return ``value`` as a finite float64 array."""
    array = as_array(value, name)
    if array.dtype == np.bool_ or not (
        np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)
    ):
        raise TypeError(
            f"`{name}` must be a real number or array of real numbers; got {show(value)}."
        )
    array = array.astype(np.float64, copy=False)
    bad = ~np.isfinite(array)
    if bad.any():
        raise ValueError(f"`{name}` must be finite; got {first_offender(array, bad)}.")
    return array


def real_scalar(value: Any, name: str) -> float:
    """Return ``value`` as a finite Python float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number; got {show(value)}.")
    result = float(value)
    if not math.isfinite(result):
        raise ValueError(f"`{name}` must be finite; got {show(value)}.")
    return result


def whole(value: Any, name: str, minimum: int = 0) -> int:
    """Return ``value`` as a Python int of at least ``minimum`` (``numbers.Integral``, not bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer; got {show(value)}.")
    if value < minimum:
        raise ValueError(f"`{name}` must be at least {minimum}; got {show(value)}.")
    return int(value)


def real_or_nan(value: Any, name: str, low: float = -math.inf, high: float = math.inf) -> float:
    """Return ``value`` as a float in ``[low, high]``, or nan (a result that is undefined)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number; got {show(value)}.")
    result = float(value)
    if not (math.isnan(result) or low <= result <= high) or math.isinf(result):
        where = f"in [{low:g}, {high:g}]" if math.isfinite(low) or math.isfinite(high) else "finite"
        raise ValueError(f"`{name}` must be {where} or nan; got {show(value)}.")
    return result


def open_unit(value: Any, name: str) -> float:
    """Return ``value`` as a float strictly inside (0, 1)."""
    result = real_scalar(value, name)
    if not 0.0 < result < 1.0:
        raise ValueError(f"`{name}` must be strictly between 0 and 1; got {show(value)}.")
    return result


def positive_int(value: Any, name: str) -> int:
    """Return ``value`` as a positive Python int (``numbers.Integral``, not bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be a positive integer; got {show(value)}.")
    if value < 1:
        raise ValueError(f"`{name}` must be a positive integer; got {show(value)}.")
    return int(value)


# Monte Carlo values held in memory at once by one call (draws x intervals): about 0.8 GB per
# float64 array, so a request far beyond the machine fails here rather than inside numpy.
MAX_DRAWN_VALUES = 10**8


def draws(value: Any, intervals: int = 1, name: str = "draws") -> int:
    """Return ``value`` as a positive int with ``value * intervals`` at most `MAX_DRAWN_VALUES`."""
    result = positive_int(value, name)
    limit = MAX_DRAWN_VALUES // max(intervals, 1)
    if result > limit:
        per = f" for {intervals:,} intervals" if intervals > 1 else ""
        raise ValueError(f"`{name}` must be at most {limit:,}{per} (at most "
                         f"{MAX_DRAWN_VALUES:,} draws held in memory); got {show(value)}.")
    return result


def choice(value: Any, name: str, allowed: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``allowed``; otherwise list the valid options."""
    options = tuple(allowed)
    if not isinstance(value, str) or value not in options:
        valid = ", ".join(repr(o) for o in options)
        raise ValueError(f"`{name}` must be one of {valid}; got {show(value)}.")
    return value


def alternative(value: Any) -> str:
    """Validate the scipy-style ``alternative`` keyword."""
    return choice(value, "alternative", ALTERNATIVES)


def generator(rng: Any) -> np.random.Generator:
    """``numpy.random.default_rng(rng)`` for the values it is meant for, else a TypeError.

    Accepted: None, a non-negative int, a SeedSequence, a BitGenerator or a Generator
    (numpy's own message for anything else does not name the argument).
    """
    accepted = (np.random.SeedSequence, np.random.BitGenerator, np.random.Generator)
    whole = isinstance(rng, int | np.integer) and not isinstance(rng, bool) and int(rng) >= 0
    if rng is not None and not whole and not isinstance(rng, accepted):
        raise TypeError("`rng` must be a numpy Generator, SeedSequence, BitGenerator, "
                        f"non-negative int or None; got {show(rng)}.")
    return np.random.default_rng(rng)
