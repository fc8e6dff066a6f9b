"""How many documents to label: :func:`certification_sample_size`.

Validates a planning request and answers it exactly (the size searches over the exact power)
or by the paper's simulation, as described in the :mod:`estimators.certification` docstring.
"""

from __future__ import annotations

import math
from typing import Any

from estimators import _validation as check
from estimators._exact_power import _jeffreys, _problem, _simple_random_problem
from estimators._planning_request import (
    _CELLS,
    _SEGMENT,
    _assumptions,
    _refuse_logit_delta,
    _Request,
    _request,
)
from estimators._plans import CertificationPlan
from estimators._simulated_plan import _monte_carlo, _point_f1
from estimators._size_search import (
    _allocation_search,
    _beyond,
    _delta_least_sizes,
    _doubling,
    _Found,
    _limit,
    _single_search,
)
from estimators.assurance import Conditional, Segments
from estimators.interval import Interval
from estimators.power import _NO_SIZE, MC_INTERVAL_LEVEL, _counts, _test_size

__all__ = ["certification_sample_size"]


_SRS_COUNTERPART = {("recall", "segments-clopper-pearson"): "clopper-pearson",
                    ("recall", "segments-hypergeometric"): "clopper-pearson",
                    ("recall", "delta"): "wald",
                    ("f1", "segments-clopper-pearson"): "jaccard-clopper-pearson",
                    ("f1", "segments-hypergeometric"): "jaccard-clopper-pearson",
                    ("f1", "delta"): "delta"}


def certification_sample_size(
    confusion: Any,
    target: float,
    *,
    measure: str = "f1",
    design: str = "srs",
    population_size: int | None = None,
    segment_sizes: tuple[int, int] | None = None,
    interval: str | None = None,
    cost: tuple[float, float] | None = None,
    confidence_level: float = 0.95,
    power: float = 0.93,
    posterior: str | None = None,
    draws: int = 1000,
    tolerance: float | None = None,
    rng: Any = None,
    retrieved_share: float | None = None,
    relative_precision: float | None = None,
    max_draws: int = 256_000,
    max_test_size: int = 10_000_000,
    method: str | None = None,
) -> CertificationPlan:
    """How many documents to label so that the certification test passes with ``power``.

    Parameters
    ----------
    confusion : ConfusionMatrix or mapping or sequence
        The practitioner's labelled sample ``(tp, fp, fn, tn)`` (e.g. from cross-validation),
        see :func:`estimators.confusion_posterior`.
    target : float
        ``theta`` in (0, 1): certify ``measure >= theta`` (``elusion <= theta``).
    measure : {"f1", "recall", "precision", "accuracy", "elusion"}
        The measure certified.
    design : {"srs", "stratified"}
        A simple random test set, or the retrieved and unretrieved segments sampled
        separately (``segment_sizes`` required; not for accuracy).
    population_size : int, optional
        Size of the collection, sampled without replacement: hypergeometric counts and exact
        hypergeometric bounds, and no test larger than the collection. ``None`` (default):
        the paper's infinite population. Under ``design="srs"`` finite plans are made for
        accuracy, and for precision and elusion with ``segment_sizes``.
    segment_sizes : (int, int), optional
        ``(N1, N0)``: the collection's retrieved and unretrieved documents (adding up to
        ``population_size`` when both are given).
    interval : str, optional
        The one-sided bound the test uses. Accuracy, precision, recall and elusion under
        ``design="srs"``: an `estimators.proportion_ci` method on the measure's count
        (default ``"clopper-pearson"``; ``"hypergeometric"``, the default for a finite
        population). F1 under ``design="srs"``: one of `LOSCI_METHODS` (default
        ``"jaccard-clopper-pearson"``, whose coverage is guaranteed; ``"delta"`` is the
        paper's). Recall and F1 under ``design="stratified"``:
        ``"segments-clopper-pearson"`` (default; ``"segments-hypergeometric"`` for a finite
        population), Bonferroni-combined exact segment bounds whose coverage is guaranteed,
        or ``"delta"``.
    cost : (float, float), optional
        Stratified design: the cost of labelling a retrieved and an unretrieved document
        (default equal); the allocation minimises ``c1 n1 + c0 n0``.
    confidence_level, power : float
        Level of the bound, and the wanted probability of passing.
    posterior : {"known-share", "dirichlet"}, optional
        ``"dirichlet"``: the Jeffreys Dirichlet posterior of the four cells, over which the
        power of every measure under simple random sampling is exact (the default except
        for F1). ``"known-share"``: the paper's posterior, Jeffreys Beta segments with the
        retrieved share known; for F1 under ``design="srs"`` (the default there) it keeps
        Algorithms 1-2's simulation, and it is the stratified design's posterior (the share
        fixed by ``segment_sizes``).
    draws, tolerance, rng, retrieved_share, relative_precision, max_draws
        The simulated path only (F1, ``design="srs"``, ``posterior="known-share"``); see
        :func:`estimators.theta_star`. ``tolerance`` applies Algorithm 2's early stop;
        ``relative_precision`` doubles the draws until the size's 95% Monte Carlo interval
        is at most that share of the size; ``max_draws`` caps the draws, given or doubled.
    max_test_size : int
        Cap on the searches.
    method : {"exact", "monte-carlo"}, optional
        ``None`` (default): exact wherever the power is a finite sum (every request but F1
        under ``design="srs"`` with the known-share posterior). ``"monte-carlo"``: the
        paper's simulated Algorithms 1-2, for F1 under ``design="srs"`` with either
        posterior (the way `power_calibration` compares the two posteriors).

    Returns
    -------
    CertificationPlan

    Notes
    -----
    Exact path: the power at size ``s`` is ``sum_d P(D = d | s) P(X >= k(d) | d)``
    (`estimators.assurance`). Under the Dirichlet posterior ``D`` (the measure's trials:
    retrieved, relevant, unretrieved or ``tp + fp + fn`` documents) is beta-binomial with the
    Beta posterior of its share, and ``X | D`` beta-binomial with the measure's own Beta
    posterior (recall ``~ Beta(tp + 1/2, fn + 1/2)``, independent of the share of relevant
    documents: the Dirichlet's neutrality). The target is unreachable when it is at or beyond
    the ``1 - power`` quantile of the measure's posterior (``limit``), where the power tends
    as ``s`` grows. Exact tests have a saw-toothed power curve: ``test_size`` is the least
    size reaching the power, ``stable_size`` the least beyond which it never falls below
    (up to ``search_limit``).

    Simulated path: Algorithm 2 of Bagdouri et al. (2013) over Algorithm 1's theta_star with
    common random numbers (see :func:`estimators.theta_star`); ``test_size_interval`` is
    the 95% Monte Carlo interval of the size.

    References
    ----------
    Bagdouri, Webber, Lewis & Oard (2013), CIKM, section 4 (Algorithms 1-2, the posterior),
    section 7 and Appendix A (stratified segments). Chernick & Liu (2002), *The American
    Statistician* 56(2), 149-155 (the saw-tooth).

    Examples
    --------
    The paper's simulated F1 plan:

    >>> plan = certification_sample_size((60, 20, 25, 395), 0.6, rng=7)
    >>> plan.reachable, plan.test_size > 500, plan.method
    (True, True, 'monte-carlo')
    >>> certification_sample_size((60, 20, 25, 395), 0.7, rng=7).reachable
    False

    Recall 0.6 from the same sample, exact (Clopper-Pearson on the relevant documents):

    >>> plan = certification_sample_size((60, 20, 25, 395), 0.6, measure="recall")
    >>> plan.method, plan.test_size, plan.stable_size, round(plan.achieved_power, 4)
    ('exact', 5819, 5819, 0.93)
    """
    req = _request(measure, design, target, confidence_level, interval, posterior,
                   population_size, segment_sizes)
    goal = check.open_unit(power, "power")
    max_test_size = _test_size(max_test_size, "max_test_size")
    counts = _counts(confusion)
    if req.design != "stratified" and cost is not None:
        raise ValueError(f"`cost` applies to design='stratified'; got {check.show(cost)}.")
    costs = (1.0, 1.0) if cost is None else _costs(cost)
    if method is not None:
        check.choice(method, "method", ("exact", "monte-carlo"))
        if method == "exact" and not req.exact:
            raise ValueError("`method` must not be 'exact' for F1 under design='srs' with the "
                             "known-share posterior (its power is simulated); got 'exact'.")
        if method == "monte-carlo" and not (req.measure == "f1" and req.design == "srs"
                                            and not req.finite):
            raise ValueError("`method` must be 'monte-carlo' only for F1 under design='srs' "
                             "on an infinite population (Algorithms 1-2); got 'monte-carlo'.")
    if not req.exact or method == "monte-carlo":
        return _monte_carlo(counts, req, goal, draws=draws, tolerance=tolerance, rng=rng,
                            retrieved_share=retrieved_share,
                            relative_precision=relative_precision, max_draws=max_draws,
                            max_test_size=max_test_size)
    _refuse_logit_delta(req)
    for name, value in (("retrieved_share", retrieved_share),
                        ("relative_precision", relative_precision), ("tolerance", tolerance)):
        if value is not None:
            raise ValueError(f"`{name}` applies to the simulated known-share F1 plan only; "
                             f"got {check.show(value)}.")
    alpha = _jeffreys(counts)
    problem = _problem(req, None, alpha)
    limit = math.nan if req.finite else _limit(req, alpha, goal)
    found = _Found()
    if not req.finite and _beyond(req, limit):
        side = "below" if req.measure == "elusion" else "above"
        found.reason = (f"target {req.theta:g} is at or {side} the limit {limit:.4f} that the "
                        f"power reaches as the test set grows (the measure's posterior "
                        f"quantile): no test size certifies it with power {goal:g}")
    elif isinstance(problem, Segments):
        found = _allocation_search(problem, goal, costs, req.largest(max_test_size),
                                   _delta_least_sizes(req, counts))
    else:
        caps = req.largest(max_test_size)
        cap = caps[_SEGMENT.get(req.measure, 0)] if req.design == "stratified" else caps[0]
        found = _single_search(problem, goal, cap)
        if req.design == "stratified" and found.size is not None:
            found.retrieved, found.unretrieved = ((found.size, 0) if req.measure == "precision"
                                                  else (0, found.size))
    srs = _srs_counterpart(counts, req, goal, max_test_size) \
        if req.design == "stratified" and found.size is not None else None
    total_cost = math.nan
    if found.size is not None:
        total_cost = (costs[0] * (found.retrieved or 0) + costs[1] * (found.unretrieved or 0)
                      if req.design == "stratified" else float(found.size))
    spread = _NO_SIZE if found.size is None else Interval(
        low=float(found.size), high=float(found.size), method="exact",
        confidence_level=MC_INTERVAL_LEVEL)
    return CertificationPlan(
        test_size=found.size, theta_star=math.nan, target=req.theta,
        confidence_level=req.level, power=goal, draws=0, seed=0,
        reachable=found.size is not None, reason=found.reason, limit=limit,
        point_f1=_point_f1(counts), test_size_interval=spread, interval=req.interval,
        posterior=req.posterior, measure=req.measure, design=req.design, method="exact",
        retrieved_size=found.retrieved, unretrieved_size=found.unretrieved,
        stable_size=found.stable, search_limit=found.limit, achieved_power=found.achieved,
        curve=found.curve, population_size=req.population_size,
        segment_sizes=req.segment_sizes,
        cost=costs if req.design == "stratified" else None, total_cost=total_cost,
        srs_test_size=srs, point_estimate=_point_estimate(counts, req.measure),
        assumptions=_assumptions(req))


def _costs(value: Any) -> tuple[float, float]:
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise ValueError(f"`cost` must be a pair (c1, c0) of positive costs; got "
                         f"{check.show(value)}.")
    found = (check.real_scalar(value[0], "cost[0]"), check.real_scalar(value[1], "cost[1]"))
    if min(found) <= 0:
        raise ValueError(f"`cost` must hold positive costs; got {check.show(value)}.")
    return found


def _srs_counterpart(counts: tuple[int, int, int, int], req: _Request, goal: float,
                     max_test_size: int) -> int | None:
    """The least simple random test set of the stratified request's collection that certifies
    the same measure at the same target, level and power (None: none within the collection).

    Drawn from the same collection (its segments, finite or not) and planned over the same
    posterior, with the interval's simple random counterpart (the same interval for precision
    and elusion). Recall and F1: the least size found by doubling and bisection, as the
    stratified total is; precision and elusion: the least size on the exact power curve.
    """
    interval = _SRS_COUNTERPART.get((req.measure, req.interval), req.interval)
    problem = _simple_random_problem(req, _jeffreys(counts), interval)
    assert req.segment_sizes is not None
    cap = min(sum(req.segment_sizes), max_test_size)
    if isinstance(problem, Conditional):
        return _single_search(problem, goal, cap).size
    return _doubling(lambda s: problem.power(s) >= goal, 1, cap)


def _point_estimate(counts: tuple[int, int, int, int], measure: str) -> float:
    if measure == "f1":
        return _point_f1(counts)
    count_cells, trial_cells = _CELLS[measure]
    trials = sum(counts[i] for i in trial_cells)
    if not trials:
        return math.nan
    share = sum(counts[i] for i in count_cells) / trials
    return 1.0 - share if measure == "elusion" else share
