"""The exact power of a certification test of a given size, at a population or over a posterior.

Each measure's one-sided certification bound, the laws of its count (binomial,
hypergeometric, beta-binomial), and :func:`certification_power`, a finite sum over the
counts (`estimators.assurance`); Chernick & Liu (2002) for exact power.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from estimators import _validation as check
from estimators._planning_request import (
    _CELLS,
    _SEGMENT,
    _refuse_logit_delta,
    _Request,
    _request,
    _split,
)
from estimators.assurance import (
    Conditional,
    CountLaw,
    Segments,
    _shared_thresholds,
    _support,
)
from estimators.fmeasure import _segment_bounds, _segment_level, f1_ci, f1_from_segments
from estimators.interval import Interval
from estimators.power import _counts
from estimators.proportion import proportion_ci
from estimators.recall import recall_ci, recall_from_segments

__all__ = ["MAX_POWER_SIZE", "Unstratified", "_jeffreys", "_problem", "_simple_random_problem",
           "certification_power"]

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

# The largest test (or segment sample) whose power `certification_power` computes: its sums
# hold an entry per count.
MAX_POWER_SIZE = 1_000_000


# --- the certification bound of each measure -----------------------------------------------------

def _lower(interval: Interval) -> Array:
    return np.asarray(interval.low, dtype=np.float64)


def _srs_passes(req: _Request) -> Callable[[IntArray, IntArray], BoolArray]:
    """``passes(x, d)`` of a simple random test set (``x`` the measure's count, ``d`` trials)."""
    theta, level, method = req.theta, req.level, req.interval
    finite = {}
    if method == "hypergeometric":
        finite["population_size"] = _trial_population(req)
    if req.measure == "f1":
        def passes(x: IntArray, d: IntArray) -> BoolArray:
            bound = _lower(f1_ci(x, d - x, 0, 0, method=method, confidence_level=level,
                                 alternative="greater"))
            return np.asarray(bound > theta)
    elif req.measure == "elusion":
        def passes(x: IntArray, d: IntArray) -> BoolArray:
            high = np.asarray(proportion_ci(d - x, d, method=method, confidence_level=level,
                                            alternative="less", **finite).high,
                              dtype=np.float64)
            return np.asarray(high < theta)
    else:
        def passes(x: IntArray, d: IntArray) -> BoolArray:
            bound = _lower(proportion_ci(x, d, method=method, confidence_level=level,
                                         alternative="greater", **finite))
            return np.asarray(bound > theta)
    return passes


def _trial_population(req: _Request) -> int:
    """The finite population the measure's trials are drawn from."""
    if req.measure == "accuracy":
        assert req.population_size is not None
        return req.population_size
    assert req.segment_sizes is not None
    return req.segment_sizes[_SEGMENT[req.measure]]


def _segments_passes(req: _Request) -> Callable[[IntArray, IntArray, int, int], BoolArray]:
    """``passes(tp, fn, n1, n0)`` of a stratified test of recall or F1.

    The delta bound is the public `estimators.recall_ci` / `estimators.f1_ci` itself. The
    Bonferroni bounds are separable: the lower bound is the measure at ``(R1_lo(tp),
    R0_hi(fn))``, each segment's exact bound depending on its own count only, so each
    segment's bounds are computed once per sample size (the same values the public
    functions compute, which the tests check) and the search only recombines them.
    """
    assert req.segment_sizes is not None
    if req.interval == "delta":
        options: dict[str, Any] = {
            "method": "delta", "confidence_level": req.level, "alternative": "greater",
            "design": "stratified", "population_sizes": req.segment_sizes,
            "finite_population": req.finite}
        bound = recall_ci if req.measure == "recall" else f1_ci

        def delta_passes(tp: IntArray, fn: IntArray, n1: int, n0: int) -> BoolArray:
            low = _lower(bound(tp, n1 - tp, fn, n0 - fn, **options))
            return np.asarray(np.nan_to_num(low, nan=0.0) > req.theta)
        return delta_passes
    big1, big0 = req.segment_sizes
    q = big1 / (big1 + big0)
    method = "hypergeometric" if req.interval == "segments-hypergeometric" else \
        "clopper-pearson"
    level = _segment_level(req.level, "greater")

    def retrieved_bound(counts: IntArray, n1: int) -> Array:
        low, _ = _segment_bounds(counts, np.full(counts.size, n1), np.full(counts.size, big1),
                                 level, method, low=True, high=False)
        return np.where(q == 0.0, 0.0, low)

    def unretrieved_bound(counts: IntArray, n0: int) -> Array:
        _, high = _segment_bounds(counts, np.full(counts.size, n0), np.full(counts.size, big0),
                                  level, method, low=False, high=True)
        return np.where(q == 1.0, 0.0, high)

    retrieved_low, unretrieved_high = _Lazy(retrieved_bound), _Lazy(unretrieved_bound)

    def passes(tp: IntArray, fn: IntArray, n1: int, n0: int) -> BoolArray:
        r1, r0 = retrieved_low(tp, n1), unretrieved_high(fn, n0)
        if req.measure == "recall":
            corner = recall_from_segments(q, r1, r0)
            # no relevant document at the corner: every defined point of the box has recall
            # 1 (recall_ci's policy)
            low = np.where(np.isnan(corner), 1.0 if q > 0 else 0.0, corner)
        else:
            low = np.nan_to_num(f1_from_segments(np.full(r1.shape, q), r1, r0), nan=0.0)
        return np.asarray(low > req.theta)
    return passes


class _Lazy:
    """A segment's bound for each count at each sample size, computed only where asked for
    and kept (the searches ask for the same sample sizes and counts again and again)."""

    def __init__(self, compute: Callable[[IntArray, int], Array]) -> None:
        self._compute = compute
        self._known: dict[int, Array] = {}

    def __call__(self, counts: IntArray, size: int) -> Array:
        known = self._known.get(size)
        if known is None:
            if len(self._known) >= 4096:  # a long search: forget the oldest sizes
                self._known.pop(next(iter(self._known)))
            known = self._known[size] = np.full(size + 1, np.nan)
        missing = np.unique(counts[np.isnan(known[counts])])
        if missing.size:
            known[missing] = self._compute(missing, size)
        return known[counts]


# --- the laws of the counts --------------------------------------------------------------------

def _truth(value: Any, req: _Request) -> Array:
    """The population: cell proportions (infinite) or cell counts (finite), checked."""
    name = "truth"
    if req.finite:
        counts = check.as_counts(value, name)
        if counts.shape != (4,):
            raise ValueError(f"`{name}` must hold the population's 4 cell counts (tp, fp, fn, "
                             f"tn) with population_size; got {check.show(value)}.")
        if int(counts.sum()) != req.population_size:
            raise ValueError(f"`{name}` must add up to population_size "
                             f"({req.population_size}); got {int(counts.sum())}.")
        if req.segment_sizes is not None and (int(counts[0] + counts[1]),
                                              int(counts[2] + counts[3])) != req.segment_sizes:
            raise ValueError(f"`{name}` must have segment_sizes {req.segment_sizes} as its "
                             f"retrieved and unretrieved documents; got "
                             f"({int(counts[0] + counts[1])}, {int(counts[2] + counts[3])}).")
        return counts.astype(np.float64)
    cells = check.as_real_array(value, name)
    if cells.shape != (4,) or (cells < 0).any() or not math.isclose(float(cells.sum()), 1.0,
                                                                    abs_tol=1e-9):
        raise ValueError(f"`{name}` must be 4 non-negative cell proportions (tp, fp, fn, tn) "
                         f"summing to 1 (cell counts go with `population_size`); got "
                         f"{check.show(value)}.")
    if req.segment_sizes is not None:
        share = req.segment_sizes[0] / sum(req.segment_sizes)
        if not math.isclose(float(cells[0] + cells[1]), share, abs_tol=1e-6):
            raise ValueError(f"`{name}` must retrieve the share N1 / (N1 + N0) = {share:.6g} "
                             f"of segment_sizes; got {float(cells[0] + cells[1]):.6g}.")
    found: Array = cells / cells.sum()
    return found


def _srs_laws(req: _Request, truth: Array | None, alpha: Array | None
              ) -> tuple[CountLaw, CountLaw | None]:
    """``(inner, outer)`` of a simple random test set: count | trials, trials | size."""
    count_cells, trial_cells = _CELLS[req.measure]
    everything = (0, 1, 2, 3)
    if alpha is not None:  # the Dirichlet posterior: Beta marginals, independent
        a, b = _split(alpha, count_cells, trial_cells)
        inner = CountLaw("beta-binomial", a, b)
        a_d, b_d = _split(alpha, trial_cells, everything)
        outer = CountLaw("beta-binomial", a_d, b_d)
        if req.finite and req.measure != "accuracy":
            assert req.population_size is not None
            outer = CountLaw("hypergeometric", req.population_size,
                             _trial_population(req))
    else:
        assert truth is not None
        inside, rest = _split(truth, count_cells, trial_cells)
        trials, _ = _split(truth, trial_cells, everything)
        if req.finite:
            inner = CountLaw("hypergeometric", inside + rest, inside)
            outer = CountLaw("hypergeometric", float(truth.sum()), trials)
        else:
            inner = CountLaw("binomial", inside / trials if trials > 0 else 0.0)
            outer = CountLaw("binomial", trials)
    return inner, (None if req.measure == "accuracy" else outer)


def _segment_law(req: _Request, truth: Array | None, alpha: Array | None, count: int,
                 other: int) -> CountLaw:
    """Law of the cell ``count`` among a segment's documents (``count`` and ``other``)."""
    if alpha is not None:
        return CountLaw("beta-binomial", float(alpha[count]), float(alpha[other]))
    assert truth is not None
    segment = float(truth[count] + truth[other])
    if req.finite:
        return CountLaw("hypergeometric", segment, float(truth[count]))
    return CountLaw("binomial", truth[count] / segment if segment else 0.0)


def _problem(req: _Request, truth: Array | None, alpha: Array | None
             ) -> Conditional | Segments:
    """The power computation of a request at a known population or over a posterior."""
    if req.design == "stratified" and req.measure in ("recall", "f1"):
        return Segments(_segment_law(req, truth, alpha, 0, 1),
                        _segment_law(req, truth, alpha, 2, 3), _segments_passes(req))
    most = _trial_population(req) if req.finite else None
    if req.design == "stratified":
        cells = (0, 1) if req.measure == "precision" else (3, 2)  # elusion: tn among n0
        return Conditional(_segment_law(req, truth, alpha, *cells), _srs_passes(req),
                           most_trials=most, key=req)
    inner, outer = _srs_laws(req, truth, alpha)
    return Conditional(inner, _srs_passes(req), outer, most_trials=most, key=req)


@dataclass(frozen=True)
class Unstratified:
    """Power of a simple random test set of recall or F1 from a collection of two segments.

    The test set's retrieved documents ``n1`` among its ``s`` follow ``share`` (binomial at
    the retrieved share ``N1 / (N1 + N0)``, or hypergeometric in a finite collection); given
    ``n1`` and ``n0 = s - n1``, ``tp`` and ``fn`` follow the segments' laws, as in
    `estimators.assurance.Segments`. The test is the simple random sample's: ``passes(x,
    d)`` on ``x = tp`` among ``d`` trials, ``d = tp + fn`` (recall) or ``n1 + fn`` (F1, the
    ``tp + fp + fn`` documents). So

    ``P(pass | s) = sum_n1 P(n1 | s) sum_fn P(fn | n0) P(tp >= t(fn) | n1)``,

    with ``n1`` outside the tails of mass below `estimators.assurance.NEGLIGIBLE` left out
    (the power moves by at most ``2 NEGLIGIBLE`` more than the segments' own sums). Over the
    known-share posterior (Bagdouri et al. 2013, section 4.3, the segments of Appendix A) the
    segments' laws are beta-binomial, as the stratified plan's are.
    """

    share: CountLaw
    retrieved: CountLaw
    unretrieved: CountLaw
    passes: Callable[[IntArray, IntArray], BoolArray]
    measure: str
    key: Hashable = None

    def power(self, size: int) -> float:
        """``P(pass)`` at test size ``size``."""
        least = _shared_thresholds(self.passes, self.key, size)  # the least x of each d
        recall = self.measure == "recall"

        def passes(tp: IntArray, fn: IntArray, n1: int, n0: int) -> BoolArray:
            return np.asarray(tp >= least[tp + fn if recall else n1 + fn])

        segments = Segments(self.retrieved, self.unretrieved, passes)
        weights = self.share.pmf(size)
        low, high = _support(weights)
        found = sum(float(weights[n1]) * segments.power(n1, size - n1)
                    for n1 in range(low, high))
        return min(max(found, 0.0), 1.0)


def _simple_random_problem(req: _Request, alpha: Array, interval: str
                           ) -> Conditional | Unstratified:
    """The power of a simple random test set from a stratified request's collection.

    The same collection (segments ``N1`` and ``N0``, finite or not), measure, target, level
    and posterior (independent Jeffreys Beta segments, the retrieved share known): the test
    set's documents of each segment are binomial at the segment's share of the collection
    (hypergeometric in a finite one), and given them each segment's counts are as in the
    stratified design. ``interval`` is the simple random test's bound.
    """
    assert req.segment_sizes is not None
    sizes = req.segment_sizes
    collection = sum(sizes)

    def share(segment: int) -> CountLaw:
        if req.finite:
            return CountLaw("hypergeometric", collection, sizes[segment])
        return CountLaw("binomial", sizes[segment] / collection)

    if req.measure in ("recall", "f1"):
        # the collection's size bounds no simple random recall or F1 interval: the number of
        # relevant documents is unknown
        srs = _request(req.measure, "srs", req.theta, req.level, interval, "dirichlet", None,
                       None)
        return Unstratified(share(0), _segment_law(req, None, alpha, 0, 1),
                            _segment_law(req, None, alpha, 2, 3), _srs_passes(srs),
                            req.measure, key=srs)
    srs = _request(req.measure, "srs", req.theta, req.level, interval, "dirichlet",
                   req.population_size, sizes if req.finite else None)
    segment = _SEGMENT[req.measure]
    cells = (0, 1) if req.measure == "precision" else (3, 2)  # elusion: tn among n0
    return Conditional(_segment_law(req, None, alpha, *cells), _srs_passes(srs), share(segment),
                       most_trials=sizes[segment] if req.finite else None, key=srs)


def _jeffreys(counts: tuple[int, int, int, int]) -> Array:
    return np.asarray(counts, dtype=np.float64) + 0.5


# --- power of a given plan ---------------------------------------------------------------------

def certification_power(
    measure: str,
    size: Any,
    threshold: float,
    *,
    truth: Any = None,
    confusion: Any = None,
    design: str = "srs",
    interval: str | None = None,
    confidence_level: float = 0.95,
    population_size: int | None = None,
    segment_sizes: tuple[int, int] | None = None,
) -> float:
    """Exact probability that a certification test of ``size`` documents passes.

    At a known population (``truth``) it is the power of the test, the way R's exact power
    functions give it (MESS ``power_binom_test``); from a labelled sample (``confusion``) it
    is the assurance, the power averaged over the sample's Jeffreys posterior (Dirichlet on
    the four cells under simple random sampling; independent Beta segments, the share known
    from ``segment_sizes``, in the stratified design).

    Parameters
    ----------
    measure : {"f1", "recall", "precision", "accuracy", "elusion"}
        What is certified: ``measure >= threshold`` (``elusion <= threshold``).
    size : int or (int, int)
        The test size ``s`` (``design="srs"``), or ``(n1, n0)`` sampled from the retrieved
        and unretrieved segments (``design="stratified"``).
    threshold : float
        ``theta`` in (0, 1).
    truth : sequence of 4 numbers, optional
        The population's cells ``(tp, fp, fn, tn)``: proportions summing to 1, or counts
        summing to ``population_size`` for a finite one.
    confusion : ConfusionMatrix or mapping or sequence, optional
        The labelled sample ``(tp, fp, fn, tn)`` whose posterior the power is averaged over.
        Exactly one of ``truth`` and ``confusion``.
    design : {"srs", "stratified"}
        A simple random test set, or the two segments sampled separately.
    interval : str, optional
        The certification bound (see :func:`certification_sample_size`).
    confidence_level : float
        Level of the one-sided bound.
    population_size, segment_sizes
        As for :func:`certification_sample_size`.

    Returns
    -------
    float

    Notes
    -----
    ``P(pass | s) = sum_d P(D = d | s) P(X >= k(d) | d)`` with ``k(d)`` the least count whose
    bound clears ``threshold`` (`estimators.assurance`); binomial laws at a known infinite
    population, hypergeometric at a finite one, beta-binomial over the posterior.

    References
    ----------
    Chernick, M. R. & Liu, C. Y. (2002). The saw-toothed behavior of power versus sample size
    and software solutions: single binomial proportion using exact methods. *The American
    Statistician* 56(2), 149-155.

    Examples
    --------
    Accuracy 0.95 against 0.9 with a 95% Clopper-Pearson bound on 200 documents: the test
    passes when at least 188 are correct (``binom.sf(187, 200, 0.95)``).

    >>> round(certification_power("accuracy", 200, 0.9, truth=(0.5, 0.025, 0.025, 0.45)), 4)
    0.7965
    """
    req = _request(measure, design, threshold, confidence_level, interval, None,
                   population_size, segment_sizes, "threshold")
    if (truth is None) == (confusion is None):
        raise ValueError("exactly one of `truth` and `confusion` must be given; got "
                         f"{'both' if truth is not None else 'neither'}.")
    if req.measure == "f1" and req.design == "srs" and confusion is not None:
        req = _request(measure, design, threshold, confidence_level, interval, "dirichlet",
                       population_size, segment_sizes, "threshold")
    _refuse_logit_delta(req)
    population = None if truth is None else _truth(truth, req)
    alpha = None if confusion is None else _jeffreys(_counts(confusion))
    sizes = _sizes(size, req)
    problem = _problem(req, population, alpha)
    if isinstance(problem, Segments):
        return problem.power(*sizes)
    return problem.power(sizes[0] if req.design == "srs" or req.measure != "elusion"
                         else sizes[1])


def _sizes(size: Any, req: _Request) -> tuple[int, int]:
    """``(s, 0)`` or ``(n1, n0)``, checked against what the collection holds."""
    if req.design == "srs":
        s = check.whole(size, "size")
        most = req.population_size
        if most is not None and s > most:
            raise ValueError(f"`size` must be at most population_size ({most}); got {s}.")
        if s > MAX_POWER_SIZE:
            raise ValueError(f"`size` must be at most {MAX_POWER_SIZE:,} (the power sums over "
                             f"every count); got {s}.")
        return s, 0
    if not isinstance(size, tuple | list) or len(size) != 2:
        raise ValueError(f"`size` must be a pair (n1, n0) with design='stratified'; got "
                         f"{check.show(size)}.")
    n1, n0 = check.whole(size[0], "size[0]"), check.whole(size[1], "size[1]")
    for name, n in (("size[0]", n1), ("size[1]", n0)):
        if n > MAX_POWER_SIZE:
            raise ValueError(f"`{name}` must be at most {MAX_POWER_SIZE:,} (the power sums "
                             f"over every count); got {n}.")
    if req.finite:
        assert req.segment_sizes is not None
        for name, n, big in (("size[0]", n1, req.segment_sizes[0]),
                             ("size[1]", n0, req.segment_sizes[1])):
            if n > big:
                raise ValueError(f"`{name}` must be at most its segment's {big} documents; "
                                 f"got {n}.")
    return n1, n0
