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


_BELOW_ONE = float(np.nextafter(1.0, 0.0))


def upper_normal_quantile(tail: float) -> float:
    """The standard normal quantile ``z`` with ``P(Z > z) = tail``.

    A one-sided tail ``1 - level`` rounds to 1 for a level below 2**-53; the largest float below
    1 keeps ``z`` finite (about -8.2) instead of -inf, which times a zero variance is nan.
    """
    return float(-special.ndtri(min(tail, _BELOW_ONE)))
