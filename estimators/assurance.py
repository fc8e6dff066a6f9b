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

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy import special

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


def _betabinom_pmf(x: IntArray, n: IntArray | np.int64, a: float, b: float) -> Array:
    """``scipy.stats.betabinom.pmf(x, n, a, b)`` for whole ``x`` and ``n >= 0``, ``a, b > 0``.

    scipy's own expression, ``exp(-log(n + 1) - B(n - x + 1, x + 1) + B(x + a, n - x + b)
    - B(a, b))`` with ``B`` the log beta function, clipped to ``[0, 1]`` (0 outside
    ``0..n``), so the values are scipy's to the bit; without scipy's checks and broadcasting
    of its arguments, which cost more than the sum itself in the many short calls of
    `CountLaw.survival`.
    """
    count, trials = np.broadcast_arrays(np.asarray(x), np.asarray(n))
    found = np.zeros(count.shape)
    inside = (count >= 0) & (count <= trials)
    k = count[inside].astype(np.float64)
    m = trials[inside].astype(np.float64)
    combination = -np.log(m + 1) - special.betaln(m - k + 1, k + 1)
    found[inside] = np.clip(np.exp(combination + special.betaln(k + a, m - k + b)
                                   - special.betaln(a, b)), 0.0, 1.0)
    return found


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
            found = _betabinom_pmf(x, np.int64(d), self.first, self.second)
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
        found, _ = self._survival_from(k, 0, 0.0)
        return found

    def _survival_from(self, k: IntArray, first: int, carried: float) -> tuple[Array, float]:
        """``survival(k)[first:]`` given the values before ``first``, and the new ``carried``.

        ``carried``: for the beta-binomial, the sum of the steps along the path of
        thresholds up to ``d = first - 1`` (0 when ``first <= 1``); returned updated to the
        last ``d``. The sums are continued in order, so the values are `survival`'s to the
        bit; `Conditional._extend` grows its survival probabilities with it, each computed
        once. The other laws' values do not depend on the earlier ones.
        """
        # imported here: scipy.stats takes ~0.3 s to import, which `import estimators` need not pay
        from scipy import stats

        d = np.arange(first, k.size)
        if self.kind == "binomial":
            found: Array = stats.binom.sf(k[first:] - 1, d, self.first)
            return found, carried
        if self.kind == "hypergeometric":
            found = stats.hypergeom.sf(k[first:] - 1, int(self.first), int(self.second), d)
            return found, carried
        a, b = self.first, self.second
        start = 1.0 if k[0] <= 0 else 0.0
        begin = max(first - 1, 0)  # the steps from d = begin to d + 1 = first..len(k) - 1
        here, step, there = k[begin:-1], np.arange(begin, k.size - 1), k[begin + 1:]
        gained = np.where(here >= 1,
                          _betabinom_pmf(here - 1, step, a, b) * (a + here - 1)
                          / (a + b + step), 0.0)
        jump = there - here
        moved = np.zeros(step.size)
        up, down = jump == 1, jump == -1
        moved[up] = -_betabinom_pmf(here[up], step[up] + 1, a, b)
        moved[down] = _betabinom_pmf(there[down], step[down] + 1, a, b)
        for i in np.flatnonzero(np.abs(jump) > 1):  # rare: a threshold moving by several
            low, high = sorted((int(here[i]), int(there[i])))
            mass = _betabinom_pmf(np.arange(low, high), step[i] + 1, a, b).sum()
            moved[i] = -mass if jump[i] > 0 else mass
        sums = np.cumsum(np.concatenate([[carried], gained + moved]))
        found = np.clip(start + sums[1:], 0.0, 1.0)
        return (np.concatenate([[start], found]) if first == 0 else found), float(sums[-1])


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
    _carried: float = field(default=0.0, repr=False)  # `CountLaw._survival_from`'s

    def _extend(self, size: int) -> None:
        """Thresholds and survival for every number of trials up to ``size`` (at least).

        ``most_trials``: a finite population's trials never exceed it; beyond it nothing is
        computed (the outer law gives those counts no probability). ``key``: requests with
        the same pass rule share their thresholds (`_shared_thresholds`). The survival
        probabilities computed before are kept, the new ones continuing them
        (`CountLaw._survival_from`): each is computed once, however the sizes grow.
        """
        if self._k.size > size:
            return
        upto = max(size, 2 * self._k.size, 64)
        trials = np.arange(upto + 1)
        possible = trials if self.most_trials is None else trials[:self.most_trials + 1]
        k = trials + 1
        k[:possible.size] = _shared_thresholds(self.passes, self.key, possible.size - 1)
        known = min(self._k.size, possible.size)  # survival computed before, kept
        tail = np.zeros(upto + 1)
        tail[:known] = self._tail[:known]
        tail[known:possible.size], self._carried = self.inner._survival_from(
            k[:possible.size], known, self._carried)
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
        is ``sum_D w_s[D] tail[D]``, where ``w_s`` is the law of ``D`` at test size ``s``,
        grown by Polya's urn (or binomial, or without replacement) one size at a time: see
        `curves`, which computes this curve (``Conditional.curves([self], [largest])``).
        """
        return Conditional.curves([self], [largest])[0]

    @staticmethod
    def curves(problems: Sequence[Conditional], largest: Sequence[int], *,
               read: Sequence[int] | None = None,
               start: tuple[int, int, Array] | None = None) -> list[Array]:
        """The power curves of tests whose trials follow one law, by one pass of its urn.

        ``curves(problems, largest)[i]`` is ``problems[i].curve(largest[i])``, bit for bit;
        with ``read``, only its values at test sizes ``0..read[i]``, and the urn runs only
        as far as those need.

        Parameters
        ----------
        problems : sequence of Conditional
            Tests sharing the law of their trials (equal ``outer``): for instance the plans
            of labelled samples with the same posterior of the trials' share, whatever their
            posteriors of the measure and their pass rules.
        largest : sequence of int
            The largest test size of each curve, as `curve`'s ``largest``. It sets where the
            curve's last block of sizes ends, and so the bits of the values read in it.
        read : sequence of int, optional
            The largest test size read of each curve, in ``0..largest[i]`` (default:
            ``largest``).
        start : (int, int, ndarray), optional
            ``(size, low, weights)``: the law of the trials at test size ``size``
            (``weights[j]`` the probability of ``low + j`` trials), for the urn to start
            from instead of the empty test set's ``(0, 0, [1])``; for instance a law
            computed in closed form, which saves the steps up to ``size``. The curves then
            hold the sizes ``size..read[i]`` (``read[i] >= size``), and are exact as far as
            that law is.

        Returns
        -------
        list of ndarray
            ``P(pass)`` of each test at test sizes ``0..read[i]`` (``size..read[i]`` from a
            ``start``).

        Raises
        ------
        ValueError
            When the tests' laws of the trials differ, a ``read`` is outside
            ``0..largest`` (``size..largest``), or a ``start`` is given without an outer
            count.

        Notes
        -----
        Without an outer count the power at ``s`` is the survival at ``D = s``. With one it
        is ``sum_D w_s[D] tail[D]``, where ``w_s``, the law of ``D`` at test size ``s``, grows
        from ``w_0 = [1]`` by one step of the urn per size (binomial, Polya or without
        replacement; ``c(s, D)`` = `CountLaw.chances`):
        ``w_{s+1}[D] = w_s[D] (1 - c(s, D)) + w_s[D - 1] c(s, D - 1)``.

        The steps are taken ``URN_BLOCK`` at a time, each in place in a buffer holding a row
        per size (three array operations a step): a block's chances are one expression and
        each test's powers one dot product per size (`row_dots`: the same bits on every
        backend, and a row's bits do not depend on the other rows). Only a window of counts
        is kept: after each block the leading and the trailing counts whose total mass is
        below ``URN_NEGLIGIBLE`` are dropped. The window grows like ``sqrt(s)`` for binomial
        and hypergeometric laws (like ``s`` for the beta-binomial, whose spread is the
        posterior's), and a step costs the window's width. The weights depend on the outer
        law only, so the tests share the steps, which are most of the work; each test's dot
        products take the rows and counts of the block its own curve would have (up to its
        ``largest``), so its values are its own curve's.

        Error bound: the urn carries the kept mass on and never brings the dropped mass back,
        so the powers after ``j`` blocks are below the exact sums by at most
        ``2 j URN_NEGLIGIBLE``, less than ``largest x 2 x URN_NEGLIGIBLE`` (4e-16 at 20,000
        sizes), besides rounding (each step is a convex combination of the weights, so an
        error in a ``start`` law is carried on, never grown, in total absolute mass).

        Examples
        --------
        Two labelled samples' assurance of a recall test (``x > 0.7 d`` relevant documents
        found among ``d``) whose relevant documents follow the same posterior share:

        >>> share = CountLaw("beta-binomial", 30.5, 170.5)
        >>> def passes(x, d):
        ...     return 10 * x > 7 * d
        >>> tests = [Conditional(CountLaw("beta-binomial", tp + 0.5, fn + 0.5), passes, share)
        ...          for tp, fn in ((24, 6), (27, 3))]
        >>> first, second = Conditional.curves(tests, [400, 400], read=[100, 400])
        >>> first.size, second.size
        (101, 401)
        >>> bool((first == tests[0].curve(400)[:101]).all())
        True
        >>> round(float(second[400]), 3)
        0.986

        From the trials' law at 300 documents, only the sizes 300..400 are stepped through:

        >>> from scipy import stats
        >>> law = stats.betabinom.pmf(np.arange(301), 300, 30.5, 170.5)
        >>> (later,) = Conditional.curves(tests[1:], [400], start=(300, 0, law))
        >>> later.size, round(float(later[-1]), 3)
        (101, 0.986)
        """
        ends = list(largest)
        reads = ends if read is None else list(read)
        first, low, law = (0, 0, np.ones(1)) if start is None else start
        if len(ends) != len(problems) or len(reads) != len(problems):
            raise ValueError(f"`largest` and `read` must give one size per problem "
                             f"({len(problems)}); got {len(ends)} and {len(reads)}.")
        if any(not first <= upto <= end for upto, end in zip(reads, ends, strict=True)):
            raise ValueError(f"each `read` must lie in {first}..largest; got read {reads} and "
                             f"largest {ends}.")
        if len({problem.outer for problem in problems}) > 1:
            raise ValueError("the problems' trials must follow one law (equal `outer`); got "
                             f"{sorted({repr(problem.outer) for problem in problems})}.")
        if not problems:
            return []
        outer = problems[0].outer
        if outer is None:  # the trials are the test set: the power is the survival itself
            if start is not None:
                raise ValueError("`start` is the law of an outer count; these problems have "
                                 "none (their trials are the test set).")
            for problem, upto in zip(problems, reads, strict=True):
                problem._extend(upto)
            return [problem._tail[:upto + 1].copy()
                    for problem, upto in zip(problems, reads, strict=True)]
        kept = law.size
        found = [np.empty(upto - first + 1) for upto in reads]
        for curve, problem in zip(found, problems, strict=True):
            problem._extend(low + kept - 1)
            curve[0] = law @ problem._tail[low:low + kept]
        # to the end of the block holding the last size read, or of a shorter curve
        run = max(min(end, first - (first - upto) // URN_BLOCK * URN_BLOCK)
                  for end, upto in zip(ends, reads, strict=True))
        # row 0: the weights of counts low..low + kept - 1 at the block's first size, then
        # zeros; row j: j sizes later. Widened, to twice what is needed, when the window
        # outgrows it.
        rows = np.zeros((URN_BLOCK + 1, max(64, 2 * kept)))
        moved = np.empty(rows.shape[1])
        rows[0, :kept] = law
        for size in range(first, run, URN_BLOCK):
            steps = min(URN_BLOCK, run - size)
            width = kept + steps  # a step reaches one count further
            if width > rows.shape[1]:
                wider = np.zeros((URN_BLOCK + 1, 2 * width))
                wider[0, :kept] = rows[0, :kept]
                rows, moved = wider, np.empty(2 * width)
            block = rows[:steps + 1, :width]
            block[0, kept:] = 0.0  # left from an earlier, wider window
            chance = outer.chances(size + np.arange(steps)[:, None],
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
            for curve, problem, end, upto in zip(found, problems, ends, reads, strict=True):
                if size < upto:
                    own = min(URN_BLOCK, end - size)  # the rows of the curve's own block
                    problem._extend(low + kept + own - 1)
                    dots = row_dots(block[1:own + 1, :kept + own],
                                    problem._tail[low:low + kept + own])
                    take = min(own, upto - size)
                    curve[size - first + 1:size - first + take + 1] = dots[:take]
            last = block[-1]
            cut = int(np.searchsorted(np.cumsum(last), URN_NEGLIGIBLE))
            stop = width - int(np.searchsorted(np.cumsum(last[::-1]), URN_NEGLIGIBLE))
            rows[0, :stop - cut] = last[cut:stop]
            low, kept = low + cut, stop - cut
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
