"""The `Interval` result object shared by every interval estimator."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

Bound = float | NDArray[np.float64]


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

    def __iter__(self) -> Iterator[Any]:
        """Unpack as ``low, high`` (like scipy's ``ConfidenceInterval``)."""
        return iter((self.low, self.high))

    @property
    def width(self) -> Bound:
        """``high - low``."""
        return self.high - self.low
