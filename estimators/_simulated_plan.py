"""The paper's simulated certification plan: Algorithm 2 on Algorithm 1's theta_star.

Bagdouri, Webber, Lewis & Oard (2013), section 4: F1 under simple random sampling with the
known-share posterior, planned by simulation (`estimators.power`) and returned as a
:class:`~estimators.certification.CertificationPlan`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from estimators import _validation as check
from estimators._planning_request import _assumptions, _Request
from estimators._plans import CertificationPlan, PowerCurve
from estimators.interval import Interval
from estimators.power import (
    _NO_SIZE,
    LOSCI_METHODS,
    _curve,
    _plan_once,
    _root_seed,
    _ThetaStarCurve,
    confusion_posterior,
)

__all__ = ["_monte_carlo", "_point_f1"]

# Batches of draws a plan may simulate (the first, then doubled draws for relative_precision).
_BATCHES = 64


def _point_f1(counts: tuple[int, int, int, int]) -> float:
    tp, fp, fn, _ = counts
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else math.nan


def _monte_carlo(counts: tuple[int, int, int, int], req: _Request, goal: float, *, draws: Any,
                 tolerance: Any, rng: Any, retrieved_share: Any, relative_precision: Any,
                 max_draws: Any, max_test_size: int) -> CertificationPlan:
    """Algorithm 2 of Bagdouri et al. (2013) on Algorithm 1's simulated theta_star."""
    if req.interval not in LOSCI_METHODS:
        raise ValueError(f"`interval` must be one of {', '.join(LOSCI_METHODS)}; got "
                         f"{check.show(req.interval)}.")
    n_draws = check.draws(draws)
    if n_draws < 100:
        raise ValueError(f"`draws` must be at least 100; got {draws}.")
    eps = None if tolerance is None else check.real_scalar(tolerance, "tolerance")
    if eps is not None and eps < 0:
        raise ValueError(f"`tolerance` must be non-negative; got {check.show(tolerance)}.")
    if relative_precision is not None and not 0.0 < check.real_scalar(
            relative_precision, "relative_precision") <= 1.0:
        raise ValueError("`relative_precision` must be in (0, 1] (a share of the size); got "
                         f"{check.show(relative_precision)}.")
    max_draws = check.draws(max_draws, name="max_draws")
    if n_draws > max_draws:  # the cap the doubling of `relative_precision` keeps, kept here too
        raise ValueError(f"`draws` must be at most `max_draws` ({max_draws}); got {draws}.")
    root = _root_seed(rng)
    seed = int(root.entropy)  # type: ignore[arg-type]
    theta = req.theta
    # checked before the early return, so a bad request fails whatever the counts
    confusion_posterior((1, 0, 0, 1), retrieved_share=retrieved_share, posterior=req.posterior)
    observed = _point_f1(counts)

    def plan(size: int | None, theta_at: float, limit: float, spread: Interval, reason: str,
             used: int, curve: PowerCurve | None = None) -> CertificationPlan:
        achieved = curve.at(size) if curve is not None and size is not None else math.nan
        return CertificationPlan(
            test_size=size, theta_star=theta_at, target=theta, confidence_level=req.level,
            power=goal, draws=used, seed=seed, reachable=size is not None, reason=reason,
            limit=limit, point_f1=observed, test_size_interval=spread, interval=req.interval,
            posterior=req.posterior, measure="f1", design="srs", method="monte-carlo",
            achieved_power=achieved, curve=curve, point_estimate=observed,
            assumptions=_assumptions(req))

    if not observed > theta:  # no information (F1 undefined) cannot certify either
        shown = "undefined: no relevant and no retrieved document" if math.isnan(observed) \
            else f"{observed:.4f}"
        reason = (f"the observed F1 ({shown}) is not above the target "
                  f"{theta:g} (Algorithm 2's check)")
        return plan(None, math.nan, math.nan, _NO_SIZE, reason, n_draws)
    model = confusion_posterior(counts, retrieved_share=retrieved_share,
                                posterior=req.posterior)
    used = n_draws
    # A SeedSequence passed as `rng` is the caller's: spawning from it advances its count of
    # children, as a later call expects. A root made here is private, and spawning its 64
    # children at once costs about a millisecond, more than a plan's other set-up.
    batch_seeds = (iter(root.spawn(_BATCHES)) if isinstance(rng, np.random.SeedSequence)
                   else _children(root, _BATCHES))

    def once(count: int) -> tuple[Any, ...]:
        curve = _curve(model, confidence_level=req.level, power=goal, draws=count,
                       seed=next(batch_seeds), method=req.interval)
        return (*_plan_once(curve, theta, tolerance=eps, max_test_size=max_test_size),
                _simulated_curve(curve, theta))

    result = once(used)
    while relative_precision is not None and result[0] is not None and used * 2 <= max_draws:
        spread = result[3]
        if spread.high - spread.low <= relative_precision * result[0]:
            break
        used *= 2
        result = once(used)
    size, theta_at, limit, spread, reason, curve = result
    return plan(size, theta_at, limit, spread, reason, used, curve)


def _children(root: np.random.SeedSequence, count: int) -> Iterator[np.random.SeedSequence]:
    """``root.spawn(count)``'s children, each made when asked for; ``root`` is left as is."""
    for index in range(root.n_children_spawned, root.n_children_spawned + count):
        yield np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, index),
                                     pool_size=root.pool_size)


def _simulated_curve(curve: _ThetaStarCurve, theta: float) -> PowerCurve:
    """Share of simulated test sets passing (bound above ``theta``) at each size evaluated."""
    sizes = sorted(curve.evaluated())
    shares = [curve.passing(s, theta) / curve.draws for s in sizes]
    return PowerCurve(np.asarray(sizes, dtype=np.int64), np.asarray(shares))
