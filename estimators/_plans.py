"""The results of certification planning: :class:`CertificationPlan` and :class:`PowerCurve`.

Frozen records of what :func:`estimators.certification_sample_size` found; one built by hand
is checked for consistency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from estimators import _validation as check
from estimators._planning_request import (
    CERTIFICATION_DESIGNS,
    CERTIFICATION_MEASURES,
    _interval_choices,
)
from estimators.interval import Interval
from estimators.power import POSTERIORS, _test_size

__all__ = ["CertificationPlan", "PowerCurve"]

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]



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


@dataclass(frozen=True, kw_only=True)
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
        Stratified design: the least simple random test set of the same collection (its
        segments ``N1`` and ``N0``, finite or not) certifying the same measure at the same
        target, level and power over the same posterior, with the interval's simple random
        counterpart (recall and F1: ``clopper-pearson`` / ``jaccard-clopper-pearson`` for the
        segment bounds, ``wald`` / ``delta`` for delta; precision and elusion: the same
        interval); None when no size up to ``N1 + N0`` reaches the power.
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
    interval: str = "jaccard-clopper-pearson"
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
        """Stratified design: ``srs_test_size - test_size``, the labels stratification saves
        (negative when it labels more; None when either size is missing)."""
        if self.srs_test_size is None or self.test_size is None:
            return None
        return self.srs_test_size - self.test_size
