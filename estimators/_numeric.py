"""Small numeric kernels shared by the estimator modules."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special


def ratio(numerator: ArrayLike, denominator: ArrayLike) -> NDArray[np.float64]:
    """Elementwise ``numerator / denominator``, nan where the denominator is 0 (no warning).

    The project's one rule for undefined ratios (empty denominators).
    """
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    out: NDArray[np.float64] = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def upper_normal_quantile(tail: float) -> float:
    """The standard normal quantile ``z`` with ``P(Z > z) = tail``."""
    return float(-special.ndtri(tail))
