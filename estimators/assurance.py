"""Exact power of certification tests whose pass region is a count above a threshold.

A certification test passes when its confidence bound clears the target. For the measures
planned here the bound is a function of a count ``X`` among ``D`` trials: given ``D``, ``X``
is binomial (infinite population), hypergeometric (a finite one) or beta-binomial (averaged
over a Beta posterior, Bagdouri et al. 2013, section 4.3), and the bound increases with
``X``, so the test passes exactly when ``X >= k(D)`` for a threshold ``k(D)`` found once for
every ``D``. ``D`` itself is fixed (accuracy: the test size), or a count of the same kind
among the test size ``s`` (recall: the relevant documents of a simple random sample). The
power is then a finite sum, with no simulation:

``P(pass | s) = sum_D P(D | s) P(X >= k(D) | D)``.

Two segments sampled separately (a stratified test set, seed 000 Appendix A) give two
independent counts, ``tp`` among ``n1`` and ``fn`` among ``n0``; the bound increases with
``tp`` for every ``fn``, so ``P(pass) = sum_fn P(fn) P(tp >= t(fn))``.

This module holds that machinery; `estimators.certification` states the measures, designs
and searches in terms of it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from estimators._numeric import row_dots

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]
# passes(x, d): whether the test passes with x successes among d trials (arrays, broadcast)
Passes = Callable[[IntArray, IntArray], BoolArray]
# A probability mass below this, summed over the dropped tail of a segment's count, is left
# out of the stratified sums (it cannot move a power by more than twice this).
NEGLIGIBLE = 1e-17
# `Conditional.curve` grows the law of the outer count by ``URN_BLOCK`` urn steps at a time,
# then drops the leading and the trailing counts whose mass is below ``URN_NEGLIGIBLE`` at
# each end: far below NEGLIGIBLE, as the curve's many blocks add their dropped masses up.
URN_BLOCK = 64
URN_NEGLIGIBLE = 1e-20

__all__ = ["COUNT_LAWS", "Conditional", "CountLaw", "Segments", "thresholds"]

COUNT_LAWS: tuple[str, ...] = ("binomial", "beta-binomial", "hypergeometric")


@dataclass(frozen=True)
class CountLaw:
    """The law of the number of successes among ``d`` draws, for every ``d``.

    ``binomial``: ``Binomial(d, p)`` with ``p = first`` (an infinite population).
    ``beta-binomial``: ``BetaBinomial(d, a, b)`` with ``a, b = first, second`` (a binomial
    averaged over a ``Beta(a, b)`` posterior; also the law of a simple random sample without
    replacement from a finite population that is itself drawn from the posterior).
    ``hypergeometric``: ``Hypergeometric(M, K, d)`` with ``M, K = first, second`` (``d``
    drawn without replacement from ``M`` items of which ``K`` are successes).
    """

    kind: str
    first: float
    second: float = 0.0

    def pmf(self, d: int) -> Array:
        """``P(X = x)`` for ``x = 0..d``."""
        # imported here: scipy.stats takes ~0.3 s to import, which `import estimators` need not pay
        from scipy import stats

        x = np.arange(d + 1)
        if self.kind == "binomial":
            found: Array = stats.binom.pmf(x, d, self.first)
        elif self.kind == "beta-binomial":
            found = stats.betabinom.pmf(x, d, self.first, self.second)
        else:
            found = stats.hypergeom.pmf(x, int(self.first), int(self.second), d)
        return found

    def chances(self, sizes: IntArray, counts: IntArray) -> Array:
        """``P(draw s + 1 is a success | X_s = x)`` at ``s, x = sizes, counts`` (broadcast).

        One step of the urn: independent draws (binomial), Polya's urn (beta-binomial, a
        ``Beta(a, b)`` mixture of binomials) or draws without replacement (hypergeometric;
        once all ``M`` items are drawn, none is a success).
        """
        x = np.asarray(counts, dtype=np.float64)
        s = np.asarray(sizes, dtype=np.float64)
        if self.kind == "binomial":
            return np.full(np.broadcast_shapes(s.shape, x.shape), self.first)
        if self.kind == "beta-binomial":
            chance: Array = (self.first + x) / (self.first + self.second + s)
            return chance
        left = self.first - s
        with np.errstate(divide="ignore", invalid="ignore"):
            chance = np.clip((self.second - x) / left, 0.0, 1.0)
        return np.where(left > 0, chance, 0.0)

    def survival(self, k: IntArray) -> Array:
        """``P(X_d >= k[d])`` for ``d = 0..len(k) - 1``.

        Binomial and hypergeometric: scipy's survival functions. Beta-binomial: along the
        path of thresholds by Polya's urn, ``P(X_{d+1} >= j) = P(X_d >= j) + P(X_d = j - 1)
        (a + j - 1) / (a + b + d)``, then moved from ``k[d]`` to ``k[d + 1]`` by the masses
        in between, which costs a handful of pmf values per ``d`` instead of a sum over
        every count.
        """
        # imported here: scipy.stats takes ~0.3 s to import, which `import estimators` need not pay
        from scipy import stats

        d = np.arange(k.size)
        if self.kind == "binomial":
            found: Array = stats.binom.sf(k - 1, d, self.first)
            return found
        if self.kind == "hypergeometric":
            found = stats.hypergeom.sf(k - 1, int(self.first), int(self.second), d)
            return found
        a, b = self.first, self.second
        start = 1.0 if k[0] <= 0 else 0.0
        if k.size == 1:
            return np.array([start])
        here, step = k[:-1], d[:-1]
        gained = np.where(here >= 1,
                          stats.betabinom.pmf(here - 1, step, a, b) * (a + here - 1)
                          / (a + b + step), 0.0)
        jump = k[1:] - here
        moved = np.zeros(step.size)
        up, down = jump == 1, jump == -1
        moved[up] = -stats.betabinom.pmf(here[up], step[up] + 1, a, b)
        moved[down] = stats.betabinom.pmf(k[1:][down], step[down] + 1, a, b)
        for i in np.flatnonzero(np.abs(jump) > 1):  # rare: a threshold moving by several
            low, high = sorted((int(here[i]), int(k[i + 1])))
            mass = stats.betabinom.pmf(np.arange(low, high), step[i] + 1, a, b).sum()
            moved[i] = -mass if jump[i] > 0 else mass
        found = np.clip(start + np.cumsum(gained + moved), 0.0, 1.0)
        return np.concatenate([[start], found])


def thresholds(passes: Passes, d: IntArray, *, most: int | None = None) -> IntArray:
    """The least ``x`` in ``0..m + 1`` with ``passes(x, d)`` for each ``d`` (``m + 1``: never).

    ``m`` is ``d`` itself, or ``most`` for every ``d`` when given (the other segment's count
    is then ``d``). A vectorized bisection over whole numbers; it relies on the pass region
    being an upper set in ``x`` (a confidence bound that increases with the count), which the
    tests check by enumeration for every interval planned.
    """
    d = np.asarray(d, dtype=np.int64)
    low = np.zeros(d.shape, dtype=np.int64)
    high = d + 1 if most is None else np.full(d.shape, most + 1, dtype=np.int64)
    while True:
        active = low < high
        if not active.any():
            return low
        middle = (low[active] + high[active]) // 2
        ok = np.asarray(passes(middle, d[active]), dtype=bool)
        high[active] = np.where(ok, middle, high[active])
        low[active] = np.where(ok, low[active], middle + 1)


# Thresholds of recent pass rules, by key: planning many samples against one target (a
# study's cell) asks for the same thresholds again and again.
_THRESHOLDS: dict[Hashable, IntArray] = {}


def _shared_thresholds(passes: Passes, key: Hashable, largest: int) -> IntArray:
    """`thresholds` for ``d = 0..largest``, kept under ``key`` (None: not kept)."""
    known = np.zeros(0, dtype=np.int64) if key is None else _THRESHOLDS.get(
        key, np.zeros(0, dtype=np.int64))
    if known.size > largest:
        return known[:largest + 1]
    # each number of trials has its own threshold: only the new ones are searched for
    found = np.concatenate([known, thresholds(passes, np.arange(known.size, largest + 1))])
    if key is not None:
        if len(_THRESHOLDS) >= 64:
            _THRESHOLDS.pop(next(iter(_THRESHOLDS)))
        _THRESHOLDS[key] = found
    return found


@dataclass
class Conditional:
    """Power of a test that passes when ``X >= k(D)``, ``X | D ~ inner``, ``D | s ~ outer``.

    ``outer=None``: ``D`` is the test size itself. The thresholds and the survival
    probabilities are computed once for every ``D`` up to the largest size asked for (and
    kept), so a search that revisits sizes pays for each only once.
    """

    inner: CountLaw
    passes: Passes
    outer: CountLaw | None = None
    most_trials: int | None = None
    key: Hashable = None
    _k: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False)
    _tail: Array = field(default_factory=lambda: np.zeros(0), repr=False)

    def _extend(self, size: int) -> None:
        """Thresholds and survival for every number of trials up to ``size`` (at least).

        ``most_trials``: a finite population's trials never exceed it; beyond it nothing is
        computed (the outer law gives those counts no probability). ``key``: requests with
        the same pass rule share their thresholds (`_shared_thresholds`).
        """
        if self._k.size > size:
            return
        upto = max(size, 2 * self._k.size, 64)
        trials = np.arange(upto + 1)
        possible = trials if self.most_trials is None else trials[:self.most_trials + 1]
        k = trials + 1
        k[:possible.size] = _shared_thresholds(self.passes, self.key, possible.size - 1)
        tail = np.zeros(upto + 1)
        tail[:possible.size] = self.inner.survival(k[:possible.size])
        self._k, self._tail = k, tail

    def power(self, size: int) -> float:
        """``P(pass)`` at test size ``size``."""
        self._extend(size)
        if self.outer is None:
            return float(self._tail[size])
        return float(self.outer.pmf(size) @ self._tail[:size + 1])

    def curve(self, largest: int) -> Array:
        """``P(pass)`` at every test size ``0..largest``.

        Notes
        -----
        Without an outer count the power at ``s`` is the survival at ``D = s``. With one it
        is ``sum_D w_s[D] tail[D]``, where ``w_s``, the law of ``D`` at test size ``s``, grows
        from ``w_0 = [1]`` by one step of the urn per size (binomial, Polya or without
        replacement; ``c(s, D)`` = `CountLaw.chances`):
        ``w_{s+1}[D] = w_s[D] (1 - c(s, D)) + w_s[D - 1] c(s, D - 1)``.

        The steps are taken ``URN_BLOCK`` at a time, each in place in a buffer holding a row
        per size (three array operations a step): a block's chances are one expression and
        its powers one dot product per size (`row_dots`: the same bits on every backend).
        Only a window of counts is kept: after each block the leading and the trailing
        counts whose total mass is below ``URN_NEGLIGIBLE`` are dropped. The window grows
        like ``sqrt(s)`` for binomial and hypergeometric laws (like ``s`` for the
        beta-binomial, whose spread is the posterior's), and a step costs the window's width.

        Error bound: the urn carries the kept mass on and never brings the dropped mass back,
        so the powers after ``j`` blocks are below the exact sums by at most
        ``2 j URN_NEGLIGIBLE``, less than ``largest x 2 x URN_NEGLIGIBLE`` (4e-16 at 20,000
        sizes), besides rounding (each step is a convex combination of the weights).
        """
        self._extend(largest)
        if self.outer is None:
            return self._tail[:largest + 1].copy()
        found = np.empty(largest + 1)
        found[0] = self._tail[0]
        # row 0: the weights of counts low..low + kept - 1 at the block's first size, then
        # zeros; row j: j sizes later. Widened, to twice what is needed, when the window
        # outgrows it.
        rows = np.zeros((URN_BLOCK + 1, 64))
        moved = np.empty(64)
        rows[0, 0] = 1.0
        low, kept = 0, 1
        for start in range(0, largest, URN_BLOCK):
            steps = min(URN_BLOCK, largest - start)
            width = kept + steps  # a step reaches one count further
            if width > rows.shape[1]:
                wider = np.zeros((URN_BLOCK + 1, 2 * width))
                wider[0, :kept] = rows[0, :kept]
                rows, moved = wider, np.empty(2 * width)
            block = rows[:steps + 1, :width]
            block[0, kept:] = 0.0  # left from an earlier, wider window
            chance = self.outer.chances(start + np.arange(steps)[:, None],
                                        np.arange(low, low + width))
            step, shifted = moved[:width], moved[:width - 1]
            # w c moves up a count: the weights keep their sum to rounding (w (1 - c) + w c
            # would lose ~5e-17 a step). Row j's last column is still empty: the shift loses
            # nothing.
            for here, there, above, c in zip(block[:-1], block[1:], block[1:, 1:], chance,
                                             strict=True):
                np.multiply(here, c, step)
                np.subtract(here, step, there)
                np.add(above, shifted, above)
            found[start + 1:start + steps + 1] = row_dots(block[1:], self._tail[low:low + width])
            last = block[-1]
            cut = int(np.searchsorted(np.cumsum(last), URN_NEGLIGIBLE))
            end = width - int(np.searchsorted(np.cumsum(last[::-1]), URN_NEGLIGIBLE))
            rows[0, :end - cut] = last[cut:end]
            low, kept = low + cut, end - cut
        return found


def _support(pmf: Array) -> tuple[int, int]:
    """The counts ``[low, high)`` outside which the mass is negligible (`NEGLIGIBLE`)."""
    below = np.cumsum(pmf)
    above = np.cumsum(pmf[::-1])[::-1]
    low = int(np.searchsorted(below, NEGLIGIBLE, side="right"))
    high = int(pmf.size - np.searchsorted(above[::-1], NEGLIGIBLE, side="right"))
    return min(low, high - 1), max(high, low + 1)


@dataclass(frozen=True)
class Segments:
    """Power of a stratified test: ``tp | n1 ~ retrieved``, ``fn | n0 ~ unretrieved``.

    ``passes(tp, fn, n1, n0)`` must be an upper set in ``tp`` for every ``fn`` (the lower
    bound on recall or F1 rises with the true positives found in the retrieved segment).
    Counts whose probability is negligible (tails of mass below `NEGLIGIBLE` on each side)
    are left out of the sum, and the thresholds are searched within the rest, so the bound is
    only ever computed where it matters; the power moves by at most ``4 NEGLIGIBLE``.
    """

    retrieved: CountLaw
    unretrieved: CountLaw
    passes: Callable[[IntArray, IntArray, int, int], BoolArray]

    def power(self, retrieved_size: int, unretrieved_size: int) -> float:
        """``P(pass)`` with ``n1`` and ``n0`` documents sampled from the two segments."""
        n1, n0 = retrieved_size, unretrieved_size
        weights = self.unretrieved.pmf(n0)
        low, high = _support(weights)
        fn = np.arange(low, high)
        found = self.retrieved.pmf(n1)
        first, last = _support(found)
        # thresholds within [first, last]: last stands for "none that matters"
        needed = first + thresholds(
            lambda tp, at: self.passes(tp + first, at, n1, n0), fn, most=last - first - 1)
        tail = np.concatenate([np.cumsum(found[::-1])[::-1], [0.0]])
        tail[last:] = 0.0
        return float(np.clip(weights[low:high] @ tail[needed], 0.0, 1.0))
