"""Pooled estimates of a set's utility: unjudged documents counted as nonrelevant.

Lewis (1996), sections 5.1 and 7.1: a lower bound on the utility, not an unbiased estimate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from estimators import _validation as check
from estimators._strata import _utility_weights
from estimators.interval import Bound

__all__ = ["PooledEstimate", "pooled_estimate"]

IntArray = NDArray[np.int64]


@dataclass(frozen=True, kw_only=True)
class PooledEstimate:
    """Pooled estimate of a set's utility: unjudged documents counted as nonrelevant.

    Attributes
    ----------
    size, judged, relevant : int or numpy.ndarray of int
        Documents in the set, how many of them are in the judged pool, and how many of those
        were judged relevant.
    u_a, u_b : float
        Value of a relevant and of a nonrelevant document; ``u_a > u_b``.

    Notes
    -----
    ``estimate = u_a R + u_b (N - R)``, eq. 1 with ``A = R`` and ``B = N - R``. The true
    ``A`` is at least ``R`` (a relevant document outside the pool is still relevant) and
    ``u = u_a A + u_b (N - A)`` increases with ``A`` when ``u_a > u_b``, so the estimate never
    exceeds the true utility: it is a lower bound, not an unbiased estimate, and carries no
    sampling variance or interval (the pool is not a random sample; Lewis 1996, section 7.1).
    """

    size: int | IntArray
    judged: int | IntArray
    relevant: int | IntArray
    u_a: float
    u_b: float

    def __post_init__(self) -> None:
        # built directly or by pooled_estimate: either way the inputs are checked here
        a, b = _utility_weights(self.u_a, self.u_b)
        counts = [check.as_counts(getattr(self, name), name)
                  for name in ("size", "judged", "relevant")]
        try:
            n, j, r = np.broadcast_arrays(*counts)
        except ValueError:
            raise ValueError("`size`, `judged` and `relevant` must broadcast together; got "
                             f"shapes {[np.shape(c) for c in counts]}.") from None
        for small, big, small_name, big_name in ((j, n, "judged", "size"),
                                                 (r, j, "relevant", "judged")):
            over = small > big
            if over.any():
                index = check.first_index(over)
                raise ValueError(f"`{small_name}` must not exceed `{big_name}`; got "
                                 f"{small_name}={small[index]} > {big_name}={big[index]}"
                                 f"{check.at_index(index)}.")
        for name, array in (("size", n), ("judged", j), ("relevant", r)):
            object.__setattr__(self, name, int(array) if array.ndim == 0 else array.copy())
        object.__setattr__(self, "u_a", a)
        object.__setattr__(self, "u_b", b)

    @property
    def unjudged(self) -> int | IntArray:
        """``size - judged``: documents the pooling assumption calls nonrelevant unseen."""
        return self.size - self.judged

    @property
    def estimate(self) -> Bound:
        """``u_a R + u_b (N - R)``, a lower bound on the true utility."""
        value = np.asarray(self.u_a * np.asarray(self.relevant)
                           + self.u_b * (np.asarray(self.size) - np.asarray(self.relevant)),
                           dtype=np.float64)
        return float(value) if value.ndim == 0 else value


def pooled_estimate(size: Any, judged: Any, relevant: Any, *, u_a: float, u_b: float
                    ) -> PooledEstimate:
    """The pooled utility estimate of Lewis (1996), section 5.1, a lower bound (section 7.1).

    Parameters
    ----------
    size : int or array_like of int
        ``N``, documents in the submitted set.
    judged : int or array_like of int
        Documents of the set in the judged pool, ``judged <= size``.
    relevant : int or array_like of int
        Documents of the set judged relevant, ``relevant <= judged``.
    u_a, u_b : float
        Value of a relevant and of a nonrelevant document; ``u_a > u_b``.

    Returns
    -------
    PooledEstimate
        Counts broadcast together; ``estimate`` is a float for scalars, an array otherwise.

    References
    ----------
    Lewis (1996), sections 5.1 and 7.1.

    Examples
    --------
    A set of 250 documents, 120 of them judged, 90 judged relevant, under ``u = A - B``: the
    true utility is at least 90 - 160 = -70.

    >>> pooled_estimate(250, 120, 90, u_a=1, u_b=-1).estimate
    -70.0
    """
    return PooledEstimate(size=size, judged=judged, relevant=relevant, u_a=u_a, u_b=u_b)
