"""The `Interval` result object shared by every interval estimator."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from estimators import _validation as check

__all__ = ["Bound", "Interval"]

Bound = float | NDArray[np.float64]


def _bound(value: Any, name: str) -> NDArray[np.float64]:
    """A bound as a float array (nan: undefined; infinite ends allowed)."""
    array = check.as_array(value, name)
    if array.dtype == np.bool_ or not (np.issubdtype(array.dtype, np.integer)
                                       or np.issubdtype(array.dtype, np.floating)):
        raise TypeError(f"`{name}` must be a real number or array of them; got "
                        f"{check.show(value)}.")
    return array.astype(np.float64, copy=False)


@dataclass(frozen=True)
class Interval:
    """A confidence interval (or an array of them), as returned by every estimator.

    Attributes
    ----------
    low, high : float or numpy.ndarray
        Lower and upper bounds. Arrays when the inputs were arrays, floats
        when they were scalars. A one-sided lower bound (``alternative="greater"``)
        has ``high`` equal to the upper end of the parameter space; a one-sided upper
        bound (``"less"``) has ``low`` equal to its lower end.
    method : str
        The interval method that produced the bounds.
    confidence_level : float
        The nominal confidence level.
    alternative : str
        ``"two-sided"``, ``"less"`` (upper bound only) or ``"greater"`` (lower bound only).

    Examples
    --------
    >>> ci = Interval(0.2, 0.6, method="wilson", confidence_level=0.95, alternative="two-sided")
    >>> low, high = ci
    >>> (low, high)
    (0.2, 0.6)
    """

    low: Bound
    high: Bound
    method: str
    confidence_level: float
    alternative: str = "two-sided"

    def __post_init__(self) -> None:
        # the estimators build valid intervals; this guards an Interval built by hand
        if not isinstance(self.method, str) or not self.method:
            raise TypeError(f"`method` must be a method name; got {check.show(self.method)}.")
        check.open_unit(self.confidence_level, "confidence_level")
        check.alternative(self.alternative)
        low = _bound(self.low, "low")
        high = _bound(self.high, "high")
        try:
            low, high = np.broadcast_arrays(low, high)
        except ValueError:
            raise ValueError(f"`low` and `high` must broadcast to one shape; got shapes "
                             f"{np.shape(low)} and {np.shape(high)}.") from None
        bad = low > high  # nan (an undefined interval) compares False
        if bad.any():
            raise ValueError(f"`low` must not exceed `high`; got low "
                             f"{check.first_offender(low, bad)} above high "
                             f"{check.first_offender(high, bad)}.")

    def __iter__(self) -> Iterator[Any]:
        """Unpack as ``low, high`` (like scipy's ``ConfidenceInterval``)."""
        return iter((self.low, self.high))

    @property
    def width(self) -> Bound:
        """``high - low``."""
        return self.high - self.low
