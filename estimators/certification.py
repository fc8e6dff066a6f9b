"""Certification planning: how many documents to label so that the test passes with a power.

A certification test labels a test set, computes a one-sided confidence bound on a measure and
passes when the bound clears the target ``theta``. Its *power* is the probability of passing;
planned from the practitioner's labelled sample it is averaged over the sample's posterior
(the *assurance*; Bagdouri, Webber, Lewis & Oard 2013, section 4.3). This module answers
"how many documents?" for every measure and design:

========= ============================================ =====================================
measure   the bound is a count among trials            simple random sample (``design="srs"``)
========= ============================================ =====================================
accuracy  ``tp + tn`` among the ``s`` documents          ``s`` fixed
precision ``tp`` among the retrieved ``n1``              ``n1 | s`` binomial
recall    ``tp`` among the relevant ``m``                ``m | s`` binomial
elusion   ``fn`` among the unretrieved ``n0`` (upper)    ``n0 | s`` binomial
f1        ``tp`` among ``m = tp + fp + fn`` (Jaccard)    ``m | s`` binomial
========= ============================================ =====================================

Given its trials the count is binomial, so the power is a finite sum over the counts
(`estimators.assurance`): exact, no simulation and no seed. Under the Jeffreys Dirichlet
posterior of the four cells (``posterior="dirichlet"``) every one of these measures is a Beta
variable independent of the share of trials (the aggregation and neutrality properties of the
Dirichlet), so the assurance is the same sum with beta-binomial weights. The paper's
posterior, with the retrieved share known (``posterior="known-share"``), keeps Algorithms
1-2's simulation (F1 only, `estimators.power`).

``design="stratified"`` samples the retrieved and unretrieved segments separately (seed 000,
Appendix A; section 7 names stratified test sampling as the next saving): ``tp`` among ``n1``
and ``fn`` among ``n0`` are independent, the bound on recall or F1 increases with ``tp`` and
(for the Bonferroni bounds) decreases with ``fn``, and the power is a sum over ``fn`` of a
tail in ``tp``; the allocation ``(n1, n0)`` of least labelling cost is searched for. A
finite collection (``population_size``) is sampled without replacement: hypergeometric
counts, exact
hypergeometric bounds, and a test set never larger than its population (seed 000 section 7:
"each example annotated is an example to which the classifier need not be applied").

Power of an exact test is not monotone in the size (the saw-tooth of Chernick & Liu 2002):
a plan reports both the smallest size reaching the power and the smallest size beyond which
the power never falls below it, up to a stated search limit, with the whole power curve.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import optimize, special

from estimators import _validation as check
from estimators.assurance import Conditional, CountLaw, Segments
from estimators.fmeasure import _segment_bounds, _segment_level, f1_ci, f1_from_segments
from estimators.interval import Interval
from estimators.power import (
    LOSCI_METHODS,
    MC_INTERVAL_LEVEL,
    POSTERIORS,
    _counts,
    _curve,
    _plan_once,
    _root_seed,
    _test_size,
    confusion_posterior,
)
from estimators.proportion import PROPORTION_METHODS, proportion_ci
from estimators.recall import recall_ci, recall_from_segments

__all__ = ["CERTIFICATION_DESIGNS", "CERTIFICATION_MEASURES", "CertificationPlan",
           "PowerCurve", "certification_sample_size", "power"]

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

CERTIFICATION_MEASURES: tuple[str, ...] = ("f1", "recall", "precision", "accuracy", "elusion")
CERTIFICATION_DESIGNS: tuple[str, ...] = ("srs", "stratified")
# Cells (tp, fp, fn, tn) = (0, 1, 2, 3) of each measure's count and of its trials under simple
# random sampling. Elusion is certified from above, so its count is its complement's, tn
# among the unretrieved documents: the test passes when enough of them are not relevant.
_CELLS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "accuracy": ((0, 3), (0, 1, 2, 3)),
    "precision": ((0,), (0, 1)),
    "recall": ((0,), (0, 2)),
    "elusion": ((3,), (2, 3)),
    "f1": ((0,), (0, 1, 2)),
}
# The segment whose documents a single-segment measure samples (stratified design).
_SEGMENT = {"precision": 0, "elusion": 1}
_SEGMENT_METHODS = ("segments-clopper-pearson", "delta")
_FINITE_SEGMENT_METHODS = ("segments-hypergeometric", "delta")
# The largest test (or segment sample) whose power `power` computes: its sums hold an entry
# per count.
MAX_POWER_SIZE = 1_000_000
_NO_SEED = Interval(math.inf, math.inf, "order-statistic", MC_INTERVAL_LEVEL)


@dataclass(frozen=True, eq=False)
class PowerCurve:
    """Power of the certification test at each test size of a plan.

    Attributes
    ----------
    sizes : numpy.ndarray of int
        Total test sizes (``n1 + n0`` along the plan's allocation in the stratified design).
    power : numpy.ndarray of float
        The probability that the test passes at each size (exact; or the Monte Carlo share
        of simulated test sets that pass, on the paper's simulated path).
    """

    sizes: IntArray
    power: Array

    def __post_init__(self) -> None:
        sizes = np.array(check.as_counts(self.sizes, "sizes"), dtype=np.int64).ravel()
        chance = np.array(check.as_real_array(self.power, "power"), dtype=np.float64).ravel()
        if sizes.shape != chance.shape:
            raise ValueError(f"`power` must have one value per size; got {chance.size} values "
                             f"for {sizes.size} sizes.")
        if ((chance < 0) | (chance > 1)).any():
            raise ValueError(f"`power` must hold probabilities in [0, 1]; got "
                             f"{check.first_offender(chance, (chance < 0) | (chance > 1))}.")
        sizes.setflags(write=False)
        chance.setflags(write=False)
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "power", chance)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, PowerCurve) and np.array_equal(self.sizes, other.sizes)
                and np.array_equal(self.power, other.power))

    __hash__ = None  # type: ignore[assignment]

    def at(self, size: int) -> float:
        """Power at ``size`` (nan if the curve does not hold it)."""
        where = np.flatnonzero(self.sizes == size)
        return float(self.power[where[0]]) if where.size else math.nan


@dataclass(frozen=True)
class CertificationPlan:
    """The answer of :func:`certification_sample_size`.

    Attributes
    ----------
    test_size : int or None
        Planned test size (the total ``n1 + n0`` in the stratified design); ``None`` when no
        size reaches the power. Exact single-sample plans: the smallest size whose power
        reaches ``power``. Stratified plans: the allocation's total, its least total found
        by bisection. Simulated plans: the size Algorithm 2's doubling and bisection find on
        theta_star (the simulated curve is not monotone, so a smaller size may reach too).
    theta_star : float
        Simulated path: theta_star at ``test_size`` (Algorithm 1); nan on the exact path and
        when no size is found.
    target, confidence_level, power : float
        The request: certify ``measure >= target`` (``<=`` for elusion) with a one-sided
        bound at ``confidence_level``, passing with probability ``power``.
    draws : int
        Posterior draws of the simulated path; 0 on the exact path.
    seed : int
        Root seed of the simulated path (``rng=seed`` reproduces it); 0 on the exact path.
    reachable : bool
        Whether some test size reaches the power.
    reason : str
        Why not: empty exactly when reachable (free text; the searches word it).
    limit : float
        The ``1 - power`` quantile of the measure's posterior (``power`` quantile for
        elusion): the target the power reaches as the test size grows without bound; nan
        where the population is finite, or on a simulated plan stopped before its posterior
        was drawn (observed F1 not above the target).
    point_f1 : float
        F1 of the labelled sample (nan if undefined; defined on reachable simulated plans).
    test_size_interval : Interval
        Simulated path: the 95% Monte Carlo interval of ``test_size``; on the exact path
        ``[test_size, test_size]`` (no Monte Carlo error), ``[inf, inf]`` when unreachable.
    interval, posterior : str
        The certification bound (an `estimators.proportion_ci`, `estimators.f1_ci` or
        `estimators.recall_ci` method that :func:`certification_sample_size` accepts for the
        plan's measure, design and population) and the planning posterior.
    measure, design : str
        One of `CERTIFICATION_MEASURES` and `CERTIFICATION_DESIGNS`.
    method : {"exact", "monte-carlo"}
        How the power was computed.
    retrieved_size, unretrieved_size : int or None
        Stratified design: the allocation ``(n1, n0)``.
    stable_size : int or None
        Exact single-sample plans: the smallest size from which the power stays at or
        above ``power`` for every size up to ``search_limit`` (the saw-tooth's end).
    search_limit : int or None
        The largest size whose power the exact search computed.
    achieved_power : float
        Power at ``test_size`` (exact, or the simulated share); nan when unreachable.
    curve : PowerCurve or None
        The power curve the search computed.
    population_size : int or None
        Size of the finite collection sampled without replacement (None: infinite).
    segment_sizes : tuple of int or None
        ``(N1, N0)``, the collection's retrieved and unretrieved documents, when known.
    cost : tuple of float or None
        Stratified design: the labelling cost of a document of each segment.
    total_cost : float
        ``c1 n1 + c0 n0`` (stratified) or the test size; nan when unreachable.
    srs_test_size : int or None
        Stratified design: the simple random test size planned for the same measure from
        the same sample with the interval's simple-random-sampling counterpart (Dirichlet
        posterior): its excess over ``test_size`` is the labels stratification saves.
    point_estimate : float
        The measure on the labelled sample (nan if undefined).
    assumptions : tuple of str
        The model behind the numbers, in words.
    """

    test_size: int | None
    theta_star: float
    target: float
    confidence_level: float
    power: float
    draws: int
    seed: int
    reachable: bool
    reason: str
    limit: float
    point_f1: float
    test_size_interval: Interval
    interval: str = "delta"
    posterior: str = "known-share"
    measure: str = "f1"
    design: str = "srs"
    method: str = "monte-carlo"
    retrieved_size: int | None = None
    unretrieved_size: int | None = None
    stable_size: int | None = None
    search_limit: int | None = None
    achieved_power: float = math.nan
    curve: PowerCurve | None = None
    population_size: int | None = None
    segment_sizes: tuple[int, int] | None = None
    cost: tuple[float, float] | None = None
    total_cost: float = math.nan
    srs_test_size: int | None = None
    point_estimate: float = math.nan
    assumptions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # certification_sample_size builds consistent plans; one built by hand is checked
        if self.test_size is not None:
            _test_size(self.test_size, "test_size")
        if not isinstance(self.reachable, bool) or self.reachable != (self.test_size is not None):
            raise ValueError("`reachable` must be True exactly when `test_size` is given; got "
                             f"reachable={check.show(self.reachable)} with test_size="
                             f"{check.show(self.test_size)}.")
        for name in ("target", "confidence_level", "power"):
            check.open_unit(getattr(self, name), name)
        for name in ("theta_star", "limit", "point_f1", "achieved_power", "point_estimate"):
            check.real_or_nan(getattr(self, name), name, 0.0, 1.0)
        check.whole(self.draws, "draws", 0)
        check.whole(self.seed, "seed")
        if not isinstance(self.reason, str):
            raise TypeError(f"`reason` must be a string; got {check.show(self.reason)}.")
        check.choice(self.posterior, "posterior", POSTERIORS)
        check.choice(self.measure, "measure", CERTIFICATION_MEASURES)
        check.choice(self.design, "design", CERTIFICATION_DESIGNS)
        check.choice(self.method, "method", ("exact", "monte-carlo"))
        if not isinstance(self.interval, str) or not self.interval:
            raise TypeError(f"`interval` must be a method name; got {check.show(self.interval)}.")
        if not isinstance(self.test_size_interval, Interval):
            raise TypeError("`test_size_interval` must be an Interval; got "
                            f"{check.show(self.test_size_interval)}.")
        if self.curve is not None and not isinstance(self.curve, PowerCurve):
            raise TypeError(f"`curve` must be a PowerCurve or None; got {check.show(self.curve)}.")
        for name in ("retrieved_size", "unretrieved_size", "stable_size", "search_limit",
                     "population_size", "srs_test_size"):
            if getattr(self, name) is not None:
                check.whole(getattr(self, name), name)
        if not isinstance(self.assumptions, tuple) or not all(
                isinstance(a, str) for a in self.assumptions):
            raise TypeError("`assumptions` must be a tuple of strings; got "
                            f"{check.show(self.assumptions)}.")
        # after the sizes: the methods allowed depend on whether the population is finite
        check.choice(self.interval, "interval",
                     _interval_choices(self.measure, self.design,
                                       self.population_size is not None)[0])
        self._check_undefined()

    def _check_undefined(self) -> None:
        """nan and an empty reason only where `certification_sample_size` gives them."""
        simulated = self.method == "monte-carlo"
        if self.reachable == bool(self.reason):
            wanted = "empty when a test size reaches the power" if self.reachable \
                else "why no test size reaches the power (not empty)"
            raise ValueError(f"`reason` must be {wanted}; got {check.show(self.reason)} with "
                             f"reachable={self.reachable}.")
        if math.isnan(self.theta_star) == (simulated and self.reachable):
            wanted = "a number (theta_star at test_size)" if simulated and self.reachable \
                else "nan on the exact path and on unreachable simulated plans"
            raise ValueError(f"`theta_star` must be {wanted}; got {check.show(self.theta_star)} "
                             f"with method={self.method!r}, reachable={self.reachable}.")
        if math.isnan(self.limit) and self.population_size is None and not (
                simulated and not self.reachable):
            raise ValueError("`limit` must be a number unless the population is finite or a "
                             "simulated plan stopped before its posterior; got nan with "
                             f"method={self.method!r}, reachable={self.reachable}.")
        if math.isnan(self.point_f1) and simulated and self.reachable:
            raise ValueError("`point_f1` must be a number on a reachable simulated plan "
                             "(Algorithm 2 plans only when the observed F1 is above the "
                             "target); got nan.")

    @property
    def labels_saved(self) -> int | None:
        """Stratified design: ``srs_test_size - test_size`` (None when either is missing)."""
        if self.srs_test_size is None or self.test_size is None:
            return None
        return self.srs_test_size - self.test_size


# --- the request -------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Request:
    """A validated planning request: what is certified, how the test is drawn and bounded."""

    measure: str
    design: str
    theta: float
    level: float
    interval: str
    posterior: str
    population_size: int | None
    segment_sizes: tuple[int, int] | None

    @property
    def finite(self) -> bool:
        return self.population_size is not None

    @property
    def exact(self) -> bool:
        return not (self.design == "srs" and self.posterior == "known-share")

    def largest(self, max_test_size: int) -> tuple[int, int]:
        """The most documents each segment (or the one sample) can give: a segment's
        documents even when the population is treated as infinite."""
        if self.design == "stratified":
            n1, n0 = self.segment_sizes  # type: ignore[misc]
            return min(n1, max_test_size), min(n0, max_test_size)
        if self.population_size is None:
            return max_test_size, 0
        return min(self.population_size, max_test_size), 0


def _interval_choices(measure: str, design: str, finite: bool) -> tuple[tuple[str, ...], str]:
    """The certification bounds allowed for a measure and design, and the default one."""
    if design == "stratified" and measure in ("recall", "f1"):
        allowed = _FINITE_SEGMENT_METHODS if finite else _SEGMENT_METHODS
        return allowed, allowed[0]
    if measure == "f1":
        return LOSCI_METHODS, "delta"
    if finite:
        return ("hypergeometric", *PROPORTION_METHODS), "hypergeometric"
    return PROPORTION_METHODS, "clopper-pearson"


def _segment_sizes(value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise ValueError(f"`segment_sizes` must be a pair (N1, N0) of document counts; got "
                         f"{check.show(value)}.")
    sizes = (check.whole(value[0], "segment_sizes[0]"), check.whole(value[1], "segment_sizes[1]"))
    if sizes[0] + sizes[1] == 0:
        raise ValueError(f"`segment_sizes` must not both be 0; got {check.show(value)}.")
    return sizes


def _request(measure: Any, design: Any, target: Any, confidence_level: Any, interval: Any,
             posterior: Any, population_size: Any, segment_sizes: Any,
             target_name: str = "target") -> _Request:
    measure = check.choice(measure, "measure", CERTIFICATION_MEASURES)
    design = check.choice(design, "design", CERTIFICATION_DESIGNS)
    theta = check.open_unit(target, target_name)
    level = check.open_unit(confidence_level, "confidence_level")
    sizes = _segment_sizes(segment_sizes)
    total = None if population_size is None else check.positive_int(population_size,
                                                                     "population_size")
    if design == "stratified":
        if measure == "accuracy":
            raise ValueError("`measure` must be one of 'f1', 'recall', 'precision', 'elusion' "
                             "with design='stratified' (accuracy is planned on a simple "
                             "random sample); got 'accuracy'.")
        if sizes is None:
            raise ValueError("`segment_sizes` must be given with design='stratified' (the "
                             "collection's retrieved and unretrieved documents, N1 and N0); "
                             "got None.")
    elif total is not None and measure in ("recall", "f1"):
        raise ValueError(f"`population_size` applies to measure={measure!r} only with "
                         "design='stratified' (the relevant documents' number is unknown, so "
                         "no exact finite-population bound exists for a simple random "
                         f"sample); got {check.show(population_size)}.")
    elif total is not None and measure != "accuracy" and sizes is None:
        raise ValueError(f"`segment_sizes` must be given with population_size for "
                         f"measure={measure!r} (the segment's size is the bound's "
                         "population); got None.")
    elif total is None and sizes is not None:
        raise ValueError("`segment_sizes` applies to design='stratified' or a finite "
                         "population; got it with design='srs' and population_size=None.")
    if total is not None and sizes is not None and sum(sizes) != total:
        raise ValueError(f"`population_size` must equal the documents of `segment_sizes`, "
                         f"{sizes[0]} + {sizes[1]} = {sum(sizes)}; got {total}.")
    allowed, default = _interval_choices(measure, design, total is not None)
    method = default if interval is None else check.choice(interval, "interval", allowed)
    if posterior is None:
        model = "known-share" if (measure == "f1" and design == "srs") or design == "stratified" \
            else "dirichlet"
    else:
        model = check.choice(posterior, "posterior", POSTERIORS)
    if design == "stratified" and model != "known-share":
        raise ValueError("`posterior` must be 'known-share' with design='stratified' (the "
                         "segment sizes fix the retrieved share); got 'dirichlet'.")
    if design == "srs" and model == "known-share" and measure != "f1":
        raise ValueError(f"`posterior` must be 'dirichlet' for measure={measure!r} under "
                         "design='srs' (its exact assurance; the simulated known-share path "
                         "plans F1 only); got 'known-share'.")
    if design == "srs" and model == "known-share" and total is not None:
        raise ValueError("`population_size` must be None on the simulated known-share path "
                         "(F1 under design='srs'); got "
                         f"{check.show(population_size)}.")
    return _Request(measure, design, theta, level, method, model, total, sizes)


def _refuse_logit_delta(req: _Request) -> None:
    if req.interval == "logit-delta":
        raise ValueError("`interval` must not be 'logit-delta' on the exact path "
                         "(posterior='dirichlet'): its bound is undefined when every "
                         "relevant or retrieved document is a true positive, so passing counts "
                         "are not all those above a threshold; got 'logit-delta'.")


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


def _split(values: Array, cells: tuple[int, ...], within: tuple[int, ...]) -> tuple[float, float]:
    inside = float(sum(values[i] for i in cells))
    return inside, float(sum(values[i] for i in within)) - inside


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


def _jeffreys(counts: tuple[int, int, int, int]) -> Array:
    return np.asarray(counts, dtype=np.float64) + 0.5


# --- power of a given plan ---------------------------------------------------------------------

def power(
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

    >>> round(power("accuracy", 200, 0.9, truth=(0.5, 0.025, 0.025, 0.45)), 4)
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


# --- the plan ----------------------------------------------------------------------------------

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


def _assumptions(req: _Request) -> tuple[str, ...]:
    said = []
    if req.design == "srs":
        said.append("the test set is a simple random sample of the collection")
    else:
        said.append("the retrieved and unretrieved segments are sampled separately, at "
                    "random within each")
    if req.finite:
        said.append(f"drawn without replacement from {req.population_size} documents "
                    "(hypergeometric counts)")
    else:
        said.append("the collection is large enough to treat as infinite (binomial counts)")
    if req.posterior == "dirichlet":
        said.append("planned over the Jeffreys Dirichlet posterior of the labelled sample's "
                    "four cells")
    elif req.design == "stratified":
        said.append("planned over Jeffreys Beta posteriors of each segment's relevant share, "
                    "the retrieved share known from the segment sizes")
    else:
        said.append("planned over the paper's posterior: Jeffreys Beta segments, the "
                    "retrieved share known (Bagdouri et al. 2013, section 4.3)")
    said.append("the labelled sample comes from the same population as the test set")
    return tuple(said)


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
        population). F1 under ``design="srs"``: one of `LOSCI_METHODS` (default ``"delta"``,
        the paper's). Recall and F1 under ``design="stratified"``:
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
        is at most that share of the size.
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
    spread = _NO_SEED if found.size is None else Interval(float(found.size),
                                                          float(found.size), "exact",
                                                          MC_INTERVAL_LEVEL)
    return CertificationPlan(
        found.size, math.nan, req.theta, req.level, goal, 0, 0, found.size is not None,
        found.reason, limit, _point_f1(counts), spread, req.interval, req.posterior,
        req.measure, req.design, "exact", found.retrieved, found.unretrieved, found.stable,
        found.limit, found.achieved, found.curve, req.population_size, req.segment_sizes,
        costs if req.design == "stratified" else None, total_cost, srs,
        _point_estimate(counts, req.measure), _assumptions(req))


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
    """The simple random plan of the same measure with the interval's SRS counterpart."""
    interval = _SRS_COUNTERPART.get((req.measure, req.interval), "clopper-pearson")
    srs = _request(req.measure, "srs", req.theta, req.level, interval, "dirichlet", None, None)
    alpha = _jeffreys(counts)
    if _beyond(srs, _limit(srs, alpha, goal)):
        return None
    problem = _problem(srs, None, alpha)
    assert isinstance(problem, Conditional)
    return _single_search(problem, goal, max_test_size).size


def _point_f1(counts: tuple[int, int, int, int]) -> float:
    tp, fp, fn, _ = counts
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else math.nan


def _point_estimate(counts: tuple[int, int, int, int], measure: str) -> float:
    if measure == "f1":
        return _point_f1(counts)
    count_cells, trial_cells = _CELLS[measure]
    trials = sum(counts[i] for i in trial_cells)
    if not trials:
        return math.nan
    share = sum(counts[i] for i in count_cells) / trials
    return 1.0 - share if measure == "elusion" else share


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
            size, theta_at, theta, req.level, goal, used, seed, size is not None, reason,
            limit, observed, spread, req.interval, req.posterior, "f1", "srs", "monte-carlo",
            achieved_power=achieved, curve=curve, point_estimate=observed,
            assumptions=_assumptions(req))

    if not observed > theta:  # no information (F1 undefined) cannot certify either
        shown = "undefined: no relevant and no retrieved document" if math.isnan(observed) \
            else f"{observed:.4f}"
        reason = (f"the observed F1 ({shown}) is not above the target "
                  f"{theta:g} (Algorithm 2's check)")
        return plan(None, math.nan, math.nan, _NO_SEED, reason, n_draws)
    model = confusion_posterior(counts, retrieved_share=retrieved_share,
                                posterior=req.posterior)
    used = n_draws
    batch_seeds = iter(root.spawn(64))

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


def _simulated_curve(curve: Any, theta: float) -> PowerCurve:
    """Share of simulated test sets passing (bound above ``theta``) at each size evaluated."""
    sizes = sorted(curve.evaluated())
    shares = [float(np.mean(curve.sorted_bounds(s) > theta)) for s in sizes]
    return PowerCurve(np.asarray(sizes, dtype=np.int64), np.asarray(shares))
