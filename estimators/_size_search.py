"""Exact searches for the least test size, or least-cost allocation, reaching a power.

Doubling and bisection over the exact power, the saw-toothed curve read to its end
(Chernick & Liu 2002), Brent's search over the stratified allocation's share, and the limit
the power reaches as the test grows (the measure's posterior quantile).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import optimize, special

from estimators._planning_request import _CELLS, _Request, _split
from estimators._plans import PowerCurve
from estimators.assurance import Conditional, Segments

__all__ = ["_Found", "_allocation_search", "_beyond", "_delta_least_sizes", "_doubling",
           "_limit", "_single_search"]

Array = NDArray[np.float64]


def _posterior_beta(req: _Request, alpha: Array) -> tuple[float, float]:
    """``(a, b)`` of the Beta posterior of a single-count measure (F1: of Jaccard's ``J``)."""
    count_cells, trial_cells = _CELLS[req.measure]
    return _split(alpha, count_cells, trial_cells)


def _chance_above(req: _Request, alpha: Array, theta: float) -> float:
    """Posterior probability that the measure clears ``theta`` (is below it, for elusion).

    Single-count measures: a Beta tail. Recall and F1 of two segments: recall exceeds
    ``theta`` when ``R1 > c R0`` with ``c = theta N0 / ((1 - theta) N1)``, F1 when
    ``R1 > theta (q + (1 - q) R0) / (q (2 - theta))``; one quadrature over ``R0``.
    """
    if req.design == "stratified" and req.measure in ("recall", "f1"):
        # imported here: only this quadrature needs scipy.integrate (~0.04 s to import)
        from scipy import integrate

        assert req.segment_sizes is not None
        big1, big0 = req.segment_sizes
        q = big1 / (big1 + big0)
        a1, b1, a0, b0 = alpha[0], alpha[1], alpha[2], alpha[3]

        def needed(r0: float) -> float:
            if req.measure == "recall":
                return theta * (1 - q) * r0 / ((1 - theta) * q) if q > 0 else math.inf
            return theta * (q + (1 - q) * r0) / (q * (2 - theta)) if q > 0 else math.inf

        def integrand(r0: float) -> float:
            edge = needed(r0)
            above = 0.0 if edge >= 1 else float(special.betaincc(a1, b1, max(edge, 0.0)))
            return above * math.exp((a0 - 1) * math.log(max(r0, 1e-300))
                                    + (b0 - 1) * math.log(max(1 - r0, 1e-300))
                                    - special.betaln(a0, b0))
        found, _ = integrate.quad(integrand, 0.0, 1.0, limit=200, epsabs=1e-12,
                                  points=[a0 / (a0 + b0)])
        return min(max(float(found), 0.0), 1.0)
    a, b = _posterior_beta(req, alpha)
    if req.measure == "f1":
        theta = theta / (2.0 - theta)  # F1 = 2 J / (1 + J) > theta when J > theta / (2 - theta)
    if req.measure == "elusion":  # a, b: the posterior of 1 - elusion
        return float(special.betaincc(a, b, 1.0 - theta))
    return float(special.betaincc(a, b, theta))


def _limit(req: _Request, alpha: Array, goal: float) -> float:
    """The target the assurance reaches as the test grows: the posterior's ``1 - goal``
    quantile (``goal`` quantile for elusion), on the measure's scale."""
    if req.design == "stratified" and req.measure in ("recall", "f1"):
        def gap(theta: float) -> float:
            return _chance_above(req, alpha, theta) - goal
        if gap(1e-9) <= 0:
            return 0.0
        if gap(1 - 1e-9) >= 0:
            return 1.0
        return float(optimize.brentq(gap, 1e-9, 1 - 1e-9, xtol=1e-12))
    a, b = _posterior_beta(req, alpha)
    if req.measure == "elusion":  # a, b: the posterior of 1 - elusion
        return 1.0 - float(special.betaincinv(a, b, 1.0 - goal))
    value = float(special.betaincinv(a, b, 1.0 - goal))
    return 2.0 * value / (1.0 + value) if req.measure == "f1" else value


def _beyond(req: _Request, limit: float) -> bool:
    """Whether the target is at or beyond the limit the power reaches as the test grows."""
    return req.theta <= limit if req.measure == "elusion" else req.theta >= limit


def _doubling(reaches: Callable[[int], bool], start: int, cap: int,
              guess: int | None = None) -> int | None:
    """The least size in ``[start, cap]`` found reaching, by doubling then bisection.

    With a ``guess`` (a neighbouring search's answer) the bracket is found from there:
    halving while it reaches, doubling while it does not.
    """
    size = start if guess is None else min(max(guess, start), cap)
    low = start
    if guess is not None and reaches(size):
        while size > start:
            lower = max(size // 2, start)
            if not reaches(lower):
                low = lower + 1
                break
            size = lower
        else:
            return size
    else:
        while not reaches(size):
            if size >= cap:
                return None
            low, size = size + 1, min(2 * size, cap)
    high = size
    while low < high:
        middle = (low + high) // 2
        if reaches(middle):
            high = middle
        else:
            low = middle + 1
    return high


@dataclass
class _Found:
    """What an exact search found."""

    size: int | None = None
    retrieved: int | None = None
    unretrieved: int | None = None
    stable: int | None = None
    limit: int | None = None
    achieved: float = math.nan
    curve: PowerCurve | None = None
    reason: str = ""


def _single_search(problem: Conditional, goal: float, cap: int) -> _Found:
    """Exact plan of one sample: the least size reaching ``goal`` and the saw-tooth's end.

    Doubling and bisection locate a size reaching the power; the curve is then computed at
    every size up to ``min(cap, max(2 s, s + 100))`` (the search limit), where the least
    size reaching the power and the least size beyond which it never falls below are read.
    """
    found = _doubling(lambda s: problem.power(s) >= goal, 1, cap)
    if found is None:
        return _Found(reason=f"no test size up to {cap} reaches power {goal:g}")
    limit = min(cap, max(2 * found, found + 100))
    values = np.clip(problem.curve(limit), 0.0, 1.0)
    reach = values >= goal
    reach[0] = False  # an empty test set certifies nothing
    if not reach.any():  # the curve's sums round the found size's power just below the goal
        values[found], reach[found] = max(values[found], problem.power(found)), True
    first = int(np.argmax(reach))
    short = np.flatnonzero(~reach)
    stable = int(short[-1]) + 1 if short[-1] < limit else None
    curve = PowerCurve(np.arange(1, limit + 1), values[1:])
    return _Found(size=first, stable=stable, limit=limit, achieved=float(values[first]),
                  curve=curve)


def _allocation_search(problem: Segments, goal: float, cost: tuple[float, float],
                       caps: tuple[int, int], least_sizes: tuple[int, int]) -> _Found:
    """Least-cost allocation ``(n1, n0)`` reaching ``goal``.

    For a share ``w`` of the documents taken from the retrieved segment, the least total
    ``n`` reaching the power is found by doubling and bisection (``n1 = round(w n)``, within
    the segments' documents ``caps`` and at least ``least_sizes``); the cost
    ``c1 n1 + c0 n0`` is minimised over ``w`` on a logit grid, then by Brent's bounded search
    between the best grid point's neighbours. The power of the allocation found is exact.
    """
    c1, c0 = cost
    m1, m0 = least_sizes

    def split(share: float, total: int) -> tuple[int, int]:
        n1 = round(share * total)
        n1 = min(max(n1, m1, total - caps[1]), caps[0], total - m0)
        return n1, total - n1

    hint: list[int | None] = [None]  # the last share's total starts the next search

    def least(share: float) -> tuple[float, int | None]:
        most = int(min(caps[0] / share, caps[1] / (1.0 - share)))
        start = max(math.ceil(m1 / share), math.ceil(m0 / (1.0 - share)), 2)
        if start > most:
            return math.inf, None
        total = _doubling(lambda n: problem.power(*split(share, n)) >= goal, start, most,
                          guess=hint[0])
        if total is None:
            return math.inf, None
        hint[0] = total
        n1, n0 = split(share, total)
        return c1 * n1 + c0 * n0, total

    grid = special.expit(np.linspace(-6.0, 6.0, 13))
    costs = [least(float(w)) for w in grid]
    best = int(np.argmin([c for c, _ in costs]))
    if not math.isfinite(costs[best][0]):
        return _Found(reason=f"no allocation within the segments' {caps[0]} and {caps[1]} "
                             f"documents reaches power {goal:g}")
    low = float(special.logit(grid[max(best - 1, 0)]))
    high = float(special.logit(grid[min(best + 1, grid.size - 1)]))
    # a share that reaches no power within the segments costs "more than any": a finite
    # stand-in keeps Brent's arithmetic clear of inf - inf
    result = optimize.minimize_scalar(lambda z: min(least(float(special.expit(z)))[0], 1e300),
                                      bounds=(low, high), method="bounded",
                                      options={"xatol": 1e-2, "maxiter": 20})
    share = float(special.expit(result.x))
    refined = least(share)
    if refined[0] > costs[best][0]:
        share, refined = float(grid[best]), costs[best]
    total = refined[1]
    assert total is not None
    n1, n0 = split(share, total)
    most = int(min(caps[0] / share, caps[1] / (1.0 - share)))
    start = max(math.ceil(m1 / share), math.ceil(m0 / (1.0 - share)), 2)
    along = np.unique(np.linspace(start, min(2 * total, most), 41).round().astype(np.int64))
    values = [problem.power(*split(share, int(n))) for n in along]
    curve = PowerCurve(along, np.clip(values, 0.0, 1.0))
    return _Found(size=n1 + n0, retrieved=n1, unretrieved=n0,
                  achieved=problem.power(n1, n0), curve=curve)


def _delta_least_sizes(req: _Request, counts: tuple[int, int, int, int]) -> tuple[int, int]:
    """Least segment samples of a delta-method plan: ``n R >= 5`` and ``n (1 - R) >= 5``.

    The delta interval of a segment sampled too thinly is degenerate: all its documents of
    one kind give a zero variance and a bound at the estimate, which "passes" a test with a
    handful of documents and no coverage. Plans with ``interval="delta"`` therefore keep each
    segment's expected counts of both kinds at 5 or more (the normal approximation's rule of
    thumb; Brown, Cai & DasGupta 2001 show it is lenient), with ``R`` the posterior mean.
    """
    if req.interval != "delta":
        return 1, 1
    tp, fp, fn, tn = counts
    found = []
    for hit, miss in ((tp, fp), (fn, tn)):
        share = (hit + 0.5) / (hit + miss + 1.0)
        found.append(math.ceil(5.0 / min(share, 1.0 - share)))
    return found[0], found[1]
