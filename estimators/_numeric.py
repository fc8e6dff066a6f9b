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


# The longest dot product `row_dots` hands to BLAS at once: OpenBLAS splits a dot product
# over its threads only above 10,000 terms.
DOT_BLOCK = 4096


def row_dots(matrix: NDArray[np.float64], vector: ArrayLike) -> NDArray[np.float64]:
    """``matrix @ vector``, each row's bits independent of the other rows and of threads.

    BLAS dot products along each row over blocks of `DOT_BLOCK` terms, added block by block
    in order. A matrix-vector product would group rows (a row's last bit would depend on
    the rows beside it) and a long dot product is split over threads (it would depend on
    the machine's thread count), so results would move between backends.
    """
    values = np.asarray(vector, dtype=np.float64)
    found: NDArray[np.float64] = np.vecdot(matrix[:, :DOT_BLOCK], values[:DOT_BLOCK])
    for start in range(DOT_BLOCK, values.size, DOT_BLOCK):
        stop = start + DOT_BLOCK
        found += np.vecdot(matrix[:, start:stop], values[start:stop])
    return found
