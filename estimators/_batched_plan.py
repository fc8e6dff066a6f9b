"""Algorithm 2 for many labelled samples at once: the simulated plans, searched side by side.

Bagdouri, Webber, Lewis & Oard (2013), sections 4.1-4.2: Algorithm 1 (theta_star at a test
size) inside Algorithm 2's search (doubling, then bisection), for each row of an array of
labelled samples, with the posterior draws, simulated test sets and search of
`estimators.certification_sample_size(..., method="monte-carlo")`, so that every row's size
is the one that call plans with the row's seed. The searches of all the rows run in step: each
step simulates every open search's next size and bounds their test sets in one array, and
draws only as many of a size's test sets as it takes to tell whether theta_star there
reaches the target (most sizes a search visits are far below its plan).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from estimators import _validation as check
from estimators._simulated_plan import _point_f1
from estimators.fmeasure import _srs_lower_bounds
from estimators.power import (
    _PAIR_BASE,
    _SHARED_BOUNDS,
    LOSCI_METHODS,
    POSTERIORS,
    _check_common,
    _curve,
    _PairBounds,
    _ThetaStarCurve,
    confusion_posterior,
)

__all__ = ["PlannedSizes", "SimulatedTestSets", "plan_sizes"]

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]
# `certification_sample_size`'s cap on the search (its default).
_MAX_TEST_SIZE = 10_000_000
# The LOSCI methods whose bound from a test set without a true positive is 0 (its F1 is 0 or
# undefined): such a draw is below any target, whatever its errors (tests check it).
_NO_TP_IS_ZERO = frozenset(LOSCI_METHODS) - {"dirichlet-posterior"}
# A size's theta_star is often told from the first 1 / _FIRST of the draws alone (`_Stream`).
_FIRST = 8
# A row's key among kept test sets: (seed, counts, posterior, draws).
_Row = tuple[int, tuple[int, ...], str, int]


class _Stream:
    """One row's simulated test sets at one size, drawn in stages from the row's sampling
    stream (`estimators.power._ThetaStarCurve`), as far as a search has needed them.

    The stages, in stream order: the true positives of the first ``split`` draws, those of
    the rest, then the errors of the first ``split`` draws, then those of the rest. Drawn in
    this order the counts are those of the whole test sets (`_ThetaStarCurve.true_positives`).
    A kept stream also keeps the generator's state after its last stage, so that a later
    search, on another curve of the same row, goes on from there.
    """

    __slots__ = ("chunks", "state")

    def __init__(self) -> None:
        self.chunks: list[IntArray] = []
        self.state: Any = None

    def stage(self, curve: _ThetaStarCurve, size: int, stage: int, split: int, draws: int,
              keep: bool) -> IntArray:
        """The counts of ``stage`` (0 to 3), drawing the stages up to it not drawn yet.

        Unkept, the curve's generator must not have drawn anything else since this stream's
        last stage (a search draws a curve's stages in order, one size at a time).
        """
        chunks = self.chunks
        if len(chunks) <= stage:
            if not chunks:
                curve.restart()
            elif keep:
                curve.resume(self.state)
            while len(chunks) <= stage:
                drawn = len(chunks)
                start, stop = (0, split) if drawn % 2 == 0 else (split, draws)
                if drawn < 2:
                    chunks.append(curve.true_positives(size, start, stop))
                else:  # the errors of the draws of the true positives of stage drawn - 2
                    chunks.append(curve.errors(size, chunks[drawn - 2], start, stop))
            if keep:
                self.state = curve.stream_state
        return chunks[stage]


class SimulatedTestSets:
    """Simulated test sets kept between calls of :func:`plan_sizes` on the same samples.

    A row's simulated test sets depend on its labelled sample, seed, posterior and number of draws,
    not on the interval, level, power, target or cap: plans of the same samples with another
    interval (or target) visit many of the same sizes and read them from here instead of drawing
    them again (drawing on where a search needs more of them than were drawn). It grows with
    every size simulated (up to two 64-bit counts per draw): keep one for a batch of related
    calls, then drop it.

    Examples
    --------
    >>> kept = SimulatedTestSets()
    >>> rows, seeds = [(60, 20, 25, 395), (30, 10, 12, 200)], [3, 4]
    >>> delta = plan_sizes(rows, 0.6, seeds=seeds, test_sets=kept)
    >>> len(kept) > 0
    True
    """

    def __init__(self) -> None:
        self._kept: dict[tuple[_Row, int], _Stream] = {}

    def __len__(self) -> int:
        """The number of (row, size) test sets kept, whole or in part."""
        return len(self._kept)

    def _stream(self, row: _Row, size: int) -> _Stream:
        """The stream of ``row`` at ``size``, kept (new if none is)."""
        found = self._kept.get((row, size))
        if found is None:
            found = self._kept[row, size] = _Stream()
        return found


@dataclass(frozen=True, eq=False)
class PlannedSizes:
    """Algorithm 2's plans of several labelled samples (:func:`plan_sizes`), row by row.

    Attributes
    ----------
    test_size : numpy.ndarray of float, shape (n,)
        The planned certification test size; nan where there is no plan: the sample's F1
        is not above the target (or is undefined: no relevant and no retrieved document),
        the target is at or above the limit of theta_star, or no size up to the row's
        ``max_test_size`` reaches it (`certification_sample_size`'s ``test_size=None``).
    theta_star : numpy.ndarray of float, shape (n,)
        theta_star at the planned size (nan where there is no plan).
    limit : numpy.ndarray of float, shape (n,)
        The limit of theta_star as the test size grows (the ``1 - power`` order statistic of
        the posterior draws' population F1); nan where the sample's F1 is not above the
        target (nothing is simulated there).
    point_f1 : numpy.ndarray of float, shape (n,)
        The sample's F1 (nan where undefined).
    """

    test_size: Array
    theta_star: Array
    limit: Array
    point_f1: Array

    def __post_init__(self) -> None:
        for name in ("test_size", "theta_star", "limit", "point_f1"):
            array = np.array(getattr(self, name), dtype=np.float64)
            array.setflags(write=False)
            object.__setattr__(self, name, array)

    @property
    def planned(self) -> NDArray[np.bool_]:
        """Whether each row has a plan."""
        found: NDArray[np.bool_] = ~np.isnan(self.test_size)
        return found


def plan_sizes(
    confusions: Any,
    target: float,
    *,
    seeds: Any,
    interval: str = "jaccard-clopper-pearson",
    posterior: str = "known-share",
    confidence_level: float = 0.95,
    power: float = 0.93,
    draws: int = 1000,
    max_test_size: Any = _MAX_TEST_SIZE,
    test_sets: SimulatedTestSets | None = None,
) -> PlannedSizes:
    """Algorithm 2 (Bagdouri et al. 2013, sections 4.1-4.2) for each row of labelled samples.

    Row ``i``'s plan is exactly ``certification_sample_size(confusions[i], target,
    interval=interval, posterior=posterior, confidence_level=confidence_level, power=power,
    draws=draws, max_test_size=max_test_size[i], rng=int(seeds[i]),
    method="monte-carlo")``'s: the same posterior draws (Algorithm 1's population confusion
    matrices), the same simulated test sets at each candidate size (common random numbers
    from the row's seed) and the same search, the least size whose theta_star (the
    ``1 - power`` order statistic of the simulated LOSCI lower bounds, an undefined bound
    counting as 0) is at least the target, found by doubling from 1 and then bisecting. The
    searches of all the rows run side by side; a row's plan is its own, whichever rows are
    planned with it. The plan's Monte Carlo interval, power curve, Algorithm 2's
    ``tolerance`` stop and ``relative_precision`` refinement are not computed (use
    :func:`estimators.certification_sample_size` for them).

    Parameters
    ----------
    confusions : array_like of int, shape (n, 4)
        The labelled samples ``(tp, fp, fn, tn)``, one per row.
    target : float
        ``theta`` in (0, 1): certify F1 at least ``theta``.
    seeds : array_like of int, shape (n,)
        Each row's planner seed, a non-negative integer (the ``rng`` of its
        `certification_sample_size` call).
    interval : str
        The certification LOSCI, one of `LOSCI_METHODS` (default
        ``"jaccard-clopper-pearson"``, whose coverage is guaranteed; ``"delta"`` is the
        paper's).
    posterior : {"known-share", "dirichlet"}
        The posterior over population confusion matrices (:func:`confusion_posterior`; the
        known share is the sample's).
    confidence_level, power : float
        Level of the LOSCI and the wanted probability of passing, in (0, 1).
    draws : int
        Monte Carlo draws (at least 100).
    max_test_size : int or array_like of int, broadcastable to (n,)
        Cap on each row's search (positive, at most 2**53).
    test_sets : SimulatedTestSets, optional
        Simulated test sets to read and extend (:class:`SimulatedTestSets`): plans of the same
        samples and seeds under another interval or target reuse them. The plans are the same
        with or without it.

    Returns
    -------
    PlannedSizes
        Row by row; ``test_size`` is nan where there is no plan.

    Raises
    ------
    ValueError, TypeError
        A bad argument, named.

    Examples
    --------
    >>> found = plan_sizes([(60, 20, 25, 395), (60, 20, 25, 395), (10, 20, 25, 445)], 0.6,
    ...                    seeds=[7, 8, 9])
    >>> found.planned.tolist()
    [True, True, False]
    >>> from estimators import certification_sample_size
    >>> int(found.test_size[0]) == certification_sample_size(
    ...     (60, 20, 25, 395), 0.6, rng=7, method="monte-carlo").test_size
    True
    """
    level, goal, n_draws, method = _check_common(confidence_level, power, draws, interval)
    theta = check.open_unit(target, "target")
    model = check.choice(posterior, "posterior", POSTERIORS)
    counts = _confusions(confusions)
    n = counts.shape[0]
    row_seeds = _seeds(seeds, n)
    caps = _caps(max_test_size, n)
    if test_sets is not None and not isinstance(test_sets, SimulatedTestSets):
        raise TypeError(f"`test_sets` must be a SimulatedTestSets or None; got "
                        f"{check.show(test_sets)}.")
    rows = counts.tolist()
    point = np.array([_point_f1(tuple(row)) for row in rows], dtype=np.float64)
    limit = np.full(n, np.nan)
    curves: list[_ThetaStarCurve] = []
    keys: list[_Row] = []
    searched: list[int] = []
    rank = 0
    for i in np.flatnonzero(point > theta).tolist():
        # `certification_sample_size(rng=seed)` simulates from the first child of
        # SeedSequence(seed) (its first batch of draws)
        curve = _curve(confusion_posterior(rows[i], posterior=model), confidence_level=level,
                       power=goal, draws=n_draws,
                       seed=np.random.SeedSequence(row_seeds[i], spawn_key=(0,)), method=method)
        rank = curve.rank
        limit[i] = curve.limit(rank)
        if theta < limit[i]:
            curves.append(curve)
            keys.append((row_seeds[i], tuple(rows[i]), model, n_draws))
            searched.append(i)
    size = np.full(n, np.nan)
    at_size = np.full(n, np.nan)
    if searched:
        where = np.asarray(searched, dtype=np.int64)
        found, theta_at = _search(curves, keys, caps[where], theta, rank, level, method,
                                  test_sets)
        size[where] = np.where(found > 0, found, np.nan)
        at_size[where] = theta_at
    return PlannedSizes(test_size=size, theta_star=at_size, limit=limit, point_f1=point)


def _search(curves: list[_ThetaStarCurve], keys: list[_Row], caps: IntArray, theta: float,
            rank: int, level: float, method: str, kept: SimulatedTestSets | None
            ) -> tuple[IntArray, Array]:
    """Algorithm 2's search (section 4.2, lines 4-9) of each curve, all in step.

    `estimators.power._first_size_at_least` for each row at once: ``upper`` doubles from 1
    (capped at the row's cap) until theta_star there reaches ``theta``, then ``[upper / 2 +
    1, upper]`` is bisected to its least size that reaches it. Returns each row's size (0: no
    size up to its cap reaches ``theta``) and theta_star there (nan where there is none).
    """
    count = len(curves)
    upper = np.ones(count, dtype=np.int64)
    low = np.zeros(count, dtype=np.int64)
    high = np.zeros(count, dtype=np.int64)
    doubling = np.ones(count, dtype=bool)
    found = np.full(count, -1, dtype=np.int64)  # -1: searching; 0: no size reaches
    theta_at = np.full(count, np.nan)
    # each distinct (tp, e) pair is bounded once per call where the bound is a quantile
    pairs = _PairBounds(level, method) if method in _SHARED_BOUNDS else None
    while (open_ := np.flatnonzero(found < 0)).size:
        ask = np.where(doubling[open_], upper[open_], (low[open_] + high[open_]) // 2)
        reaches, at_ask = _reach([curves[j] for j in open_.tolist()],
                                 [keys[j] for j in open_.tolist()], ask.tolist(), theta, rank,
                                 level, method,
                                 pairs if int(ask.max()) < _PAIR_BASE // 2 else None, kept)
        theta_at[open_[reaches]] = at_ask[reaches]
        bracketed = doubling[open_] & reaches
        short = doubling[open_] & ~reaches
        halving = ~doubling[open_]
        at = open_[bracketed]
        doubling[at], low[at], high[at] = False, ask[bracketed] // 2 + 1, ask[bracketed]
        capped = ask >= caps[open_]
        found[open_[short & capped]] = 0
        grow = short & ~capped
        upper[open_[grow]] = np.minimum(2 * ask[grow], caps[open_[grow]])
        high[open_[halving & reaches]] = ask[halving & reaches]
        low[open_[halving & ~reaches]] = ask[halving & ~reaches] + 1
        done = open_[~doubling[open_] & (low[open_] >= high[open_])]
        found[done] = high[done]
    theta_at[found <= 0] = np.nan
    return found, theta_at


def _reach(curves: list[_ThetaStarCurve], keys: list[_Row], sizes: list[int], theta: float,
           rank: int, level: float, method: str, pairs: _PairBounds | None,
           kept: SimulatedTestSets | None) -> tuple[NDArray[np.bool_], Array]:
    """Whether theta_star of each curve at its size reaches ``theta`` (Algorithm 1, section
    4.1), and theta_star where it does (nan elsewhere).

    The ``rank``-th smallest bound reaches ``theta`` exactly when fewer than ``rank`` bounds
    are below it. A curve's test sets are drawn in stages (`_Stream`, read from and kept in
    ``kept`` when given), and a curve stops once ``rank`` of its bounds are known to be below
    ``theta`` (most sizes a search visits are far below its plan): a draw without a true
    positive is below any target, for the methods of `_NO_TP_IS_ZERO`, whatever its errors;
    the others need their errors. A curve that reaches has all its bounds.
    """
    count = len(curves)
    draws = curves[0].draws
    split = max(1, draws // _FIRST)
    keep = kept is not None
    streams = [_Stream() if kept is None else kept._stream(key, size)
               for key, size in zip(keys, sizes, strict=True)]

    def stage(which: int, rows: list[int]) -> list[IntArray]:
        return [streams[j].stage(curves[j], sizes[j], which, split, draws, keep) for j in rows]

    def without_tp(tps: list[IntArray]) -> IntArray:
        """How many draws of each have no true positive (their bound is 0), when known."""
        if method not in _NO_TP_IS_ZERO:
            return np.zeros(len(tps), dtype=np.int64)
        return np.array([np.count_nonzero(tp == 0) for tp in tps], dtype=np.int64)

    def still(values: list[IntArray], going: NDArray[np.bool_]) -> list[IntArray]:
        return [value for value, on in zip(values, going.tolist(), strict=True) if on]

    live = np.arange(count)
    tp_first = stage(0, live.tolist())
    known = without_tp(tp_first)  # draws known to be below theta
    going = known < rank
    live, tp_first, known = live[going], still(tp_first, going), known[going]
    tp_rest = stage(1, live.tolist())
    later = without_tp(tp_rest)
    going = known + later < rank
    live, tp_first, tp_rest, later = (live[going], still(tp_first, going),
                                      still(tp_rest, going), later[going])
    first = _bounds(list(zip(tp_first, stage(2, live.tolist()), strict=True)), level, method,
                    pairs)
    going = np.count_nonzero(first < theta, axis=1) + later < rank
    live, tp_rest = live[going], still(tp_rest, going)
    rest = _bounds(list(zip(tp_rest, stage(3, live.tolist()), strict=True)), level, method,
                   pairs)
    whole = np.concatenate([first[going], rest], axis=1)
    found = np.count_nonzero(whole < theta, axis=1) < rank
    whole, live = whole[found], live[found]
    reaches = np.zeros(count, dtype=bool)
    reaches[live] = True
    at_size = np.full(count, np.nan)
    if live.size:
        at_size[live] = np.partition(whole, rank - 1, axis=1)[:, rank - 1]
    return reaches, at_size


def _bounds(tests: list[tuple[NDArray[np.integer[Any]], NDArray[np.integer[Any]]]],
            level: float, method: str, pairs: _PairBounds | None) -> Array:
    """The LOSCI lower bounds of each row's simulated test sets ``(tp, e)``, shape (rows,
    draws), 0 where undefined (`estimators.power._ThetaStarCurve.lower_bounds`)."""
    if not tests:
        return np.empty((0, 0))
    tp = np.concatenate([t[0] for t in tests]).astype(np.int64, copy=False)
    e = np.concatenate([t[1] for t in tests]).astype(np.int64, copy=False)
    bounds = pairs(tp, e) if pairs is not None else _srs_lower_bounds(tp, e, level, method)
    np.copyto(bounds, 0.0, where=np.isnan(bounds))
    shaped: Array = bounds.reshape(len(tests), -1)
    return shaped


def _confusions(value: Any) -> IntArray:
    """The labelled samples as an int64 array of shape (n, 4), or an error naming them."""
    counts = check.as_counts(value, "confusions")
    if counts.ndim != 2 or counts.shape[1] != 4:
        raise ValueError(f"`confusions` must have shape (n, 4), a row (tp, fp, fn, tn) per "
                         f"sample; got shape {counts.shape}.")
    return counts


def _seeds(value: Any, n: int) -> list[int]:
    """One non-negative integer seed per row, as Python ints."""
    array = check.as_array(value, "seeds")
    if array.size == 0:  # no seed: no dtype to check ([] is read as float)
        array = array.astype(np.int64)
    if array.dtype == np.bool_ or not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"`seeds` must be an array of non-negative integers; got "
                        f"{check.show(value)}.")
    if array.shape != (n,):
        raise ValueError(f"`seeds` must have shape ({n},), a seed per row of `confusions`; got "
                         f"shape {array.shape}.")
    bad = array < 0
    if bad.any():
        raise ValueError(f"`seeds` must be non-negative; got {check.first_offender(array, bad)}.")
    return [int(seed) for seed in array.tolist()]


def _caps(value: Any, n: int) -> IntArray:
    """Each row's cap on the search: positive, at most 2**53, broadcast to (n,)."""
    caps = check.as_counts(value, "max_test_size")
    bad = caps < 1
    if bad.any():
        raise ValueError(f"`max_test_size` must hold positive integers; got "
                         f"{check.first_offender(caps, bad)}.")
    try:
        return np.broadcast_to(caps, (n,))
    except ValueError:
        raise ValueError(f"`max_test_size` must be one cap or one per row of `confusions` "
                         f"(shape ({n},)); got shape {caps.shape}.") from None
