"""The exact lower confidence bound for the marked items of a finite population.

A simple random sample of ``drawn`` items without replacement from ``size`` items of which
``K`` are marked holds ``X ~ Hypergeometric(size, K, drawn)`` marked items. Inverting the
one-sided exact test gives the smallest ``K`` the sample does not exclude; the upper bound is
the population less the lower bound of the unmarked items, ``size - lower(drawn - x)``. Shared
by `estimators.gain` (the positives a budget buys), `estimators.proportion` (the
finite-population proportion), `estimators.fmeasure` and `estimators.recall` (the segments of a
stratified sample).

The tail probabilities are scipy's (`scipy.stats.hypergeom`). Against big-integer arithmetic
their relative error is about 1e-11 at ``size = 10**6``, 1e-9 at ``10**8`` and 1e-7 at
``10**9``: beyond ``10**7`` it exceeds `TIE`, so a tail within that error of the level may be
judged on either side (a bound off by one item, a coverage error of that order). scipy's time
per probability grows with ``size``: fine to about ``10**8``; at ``10**10`` about half a
second a probability, at ``10**12`` about a minute.

References
----------
.. [CP1934] Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits
   illustrated in the case of the binomial. *Biometrika* 26, 404-413.
.. [B1987] Buonaccorsi, J. P. (1987). A note on confidence intervals for proportions in
   finite populations. *The American Statistician* 41(3), 215-218.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["TIE", "hypergeometric_bounds", "hypergeometric_lower"]

# Relative rounding of a hypergeometric tail probability: a tail this close to the test's
# level counts as equal to it (kept in the closed interval).
TIE = 1e-10


def hypergeometric_lower(x: NDArray[np.int64], drawn: NDArray[np.int64],
                         size: NDArray[np.int64], tail: float) -> NDArray[np.int64]:
    """Smallest ``K`` with ``P(X >= x) >= tail`` for ``X ~ Hypergeometric(size, K, drawn)``.

    The exact lower confidence bound for the number ``K`` of marked items among ``size``
    from ``x`` marked items in a simple random sample of ``drawn`` of them: the inversion of
    the one-sided exact test, as Clopper & Pearson (1934) invert the binomial's (Buonaccorsi
    1987, section 2). The interval is closed, as theirs: a ``K`` whose tail equals ``tail``
    is kept (within ``TIE`` relative, so that a tail that is exactly ``tail`` in rational
    arithmetic is kept whatever the rounding). ``P(X >= x)`` increases with ``K``; ``K`` runs
    over the values the sample allows, ``x`` to ``size - (drawn - x)``, whose last one has
    ``P(X >= x) = 1``. A bisection over whole numbers, run once per distinct
    ``(x, drawn, size)``.

    The arrays must have one shape, with ``0 <= x <= drawn <= size`` (not checked: callers
    validate). For every ``K``, ``P(hypergeometric_lower(X) > K) <= tail`` (up to ``TIE``).

    Examples
    --------
    A sample of 10 of 20 items holds 4 marked ones. With ``K = 4`` marked items
    ``P(X >= 4) = P(X = 4) = 1 / C(20, 10)`` times ``C(16, 6)``, about 0.0433, below 0.05; with
    ``K = 5`` it is about 0.1517: the one-sided 95% lower bound is 5 marked items.

    >>> import numpy as np
    >>> hypergeometric_lower(np.array([0, 4, 10]), np.array([10] * 3), np.array([20] * 3), 0.05)
    array([ 0,  5, 17])
    """
    # imported here: scipy.stats takes ~0.3 s to import, which `import estimators` need not pay
    from scipy.stats import hypergeom

    triples, back = np.unique(np.stack([x.ravel(), drawn.ravel(), size.ravel()]), axis=1,
                              return_inverse=True)
    marked, sampled, total = triples
    low, high = marked.copy(), total - (sampled - marked)
    while True:
        active = low < high
        if not active.any():
            break
        middle = (low[active] + high[active]) // 2
        above = (hypergeom.sf(marked[active] - 1, total[active], middle, sampled[active])
                 >= tail * (1.0 - TIE))
        high[active] = np.where(above, middle, high[active])
        low[active] = np.where(above, low[active], middle + 1)
    found: NDArray[np.int64] = low[np.ravel(back)].reshape(x.shape)
    return found


def hypergeometric_bounds(x: NDArray[np.int64], drawn: NDArray[np.int64],
                          size: NDArray[np.int64], tail: float, *, lower: bool = True,
                          upper: bool = True) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Both ends of the exact interval for ``K``, each at ``tail``, in one bisection.

    ``(lower(x), size - lower(drawn - x))`` with ``lower`` = `hypergeometric_lower`: the
    same values as two calls (each distinct ``(x, drawn, size)`` is solved once, so the
    symmetric outcomes ``x`` and ``drawn - x`` of a sample share their work). An end not
    asked for is its end of the parameter space (0 or ``size``). The arrays are broadcast.

    Examples
    --------
    >>> import numpy as np
    >>> low, high = hypergeometric_bounds(np.arange(4), np.array(3), np.array(10), 0.05)
    >>> low.tolist(), high.tolist()
    ([0, 1, 2, 5], [5, 8, 9, 10])
    """
    x, drawn, size = np.broadcast_arrays(x, drawn, size)
    asked = ([x] if lower else []) + ([drawn - x] if upper else [])
    if not asked:
        return np.zeros(x.shape, dtype=np.int64), size.astype(np.int64)
    found = hypergeometric_lower(np.stack(asked), np.stack([drawn] * len(asked)),
                                 np.stack([size] * len(asked)), tail)
    low = found[0] if lower else np.zeros(x.shape, dtype=np.int64)
    high = size - found[-1] if upper else size.astype(np.int64)
    return low, high
