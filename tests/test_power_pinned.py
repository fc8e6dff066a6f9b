"""Exact pins on the Monte Carlo certification planner (`estimators.power`).

The planner's answers are Monte Carlo estimates, so statistical tests of them can only check
them up to noise, and an off-by-one order statistic or a mislabelled confidence level moves
them by less than that noise. These tests therefore fix the random draws, rebuild them here from
the same seeds, and check the planner's arithmetic on them exactly:

* the quantile rank is ``ceil((1 - power) N)``, the inverted-CDF quantile of N draws, also when
  ``(1 - power) N`` is a whole number that floating point would round up;
* theta_star (Algorithm 1) is exactly the rank-th smallest simulated lower bound, not a
  neighbour;
* the Monte Carlo interval of the quantile uses the order statistics whose exact
  distribution-free coverage, computed from Binomial(N, beta), is at least 95%, as labelled,
  while the ranks of a 90% interval are not;
* the planned size is the size Algorithm 2's search (doubling, then bisection) finds on the
  rank-th order statistic: it reaches the target there and not one size below; its theta_star
  and limit are the rank-th order statistics of the same draws; and the ends of its Monte Carlo
  interval are the sizes the same search finds on the interval's upper and lower order
  statistics respectively.

The planner's draws are chosen so that the neighbouring ranks of every rank it uses lead the
search to other sizes: a plan built on the wrong order statistic cannot agree by accident.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import special, stats

from estimators import certification_sample_size
from estimators.power import (
    MC_INTERVAL_LEVEL,
    _curve,
    _root_seed,
    _ThetaStarCurve,
    confusion_posterior,
    theta_star,
)

CONFUSION = (60, 20, 25, 395)
SHARE = 80 / 500
SEED = 20130
LEVEL = 0.95


def exact_rank(draws: int, power: str) -> int:
    """Smallest k with k / N >= 1 - power, in exact rational arithmetic."""
    return max(1, math.ceil(draws * (1 - Fraction(power))))


def binomial_ranks(draws: int, power: str, level: float) -> tuple[int, int]:
    """Ranks (l, u) with P(l <= B < u) >= level for B ~ Binomial(N, 1 - power), equal tails."""
    beta = float(1 - Fraction(power))
    tail = (1 - level) / 2
    low = int(stats.binom.ppf(tail, draws, beta))
    high = int(stats.binom.ppf(1 - tail, draws, beta)) + 1
    return low, high


def coverage(draws: int, power: str, low: int, high: int) -> float:
    """Exact probability that [X_(low), X_(high)] holds the (1 - power)-quantile.

    B, the number of draws below the quantile, is Binomial(N, beta): X_(low) is at or below the
    quantile when B >= low, and X_(high) above it when B < high.
    """
    beta = float(1 - Fraction(power))
    return float(stats.binom.cdf(high - 1, draws, beta) - stats.binom.cdf(low - 1, draws, beta))


def uniform_order_coverage(draws: int, power: str, low: int, high: int) -> float:
    """The same coverage from the Beta(k, N - k + 1) law of the k-th smallest of N uniforms."""
    beta = float(1 - Fraction(power))
    below_low = special.betainc(low, draws - low + 1, beta)
    below_high = special.betainc(high, draws - high + 1, beta)
    return float(below_low - below_high)


def posterior_draws(seed: np.random.SeedSequence, draws: int):
    """The known-share posterior draws of CONFUSION and the sampling seed, from ``seed``."""
    posterior_seed, sampling_seed, _ = seed.spawn(3)
    generator = np.random.default_rng(posterior_seed)
    tp, fp, fn, tn = CONFUSION
    r1 = generator.beta(0.5 + tp, 0.5 + fp, size=draws)
    r0 = generator.beta(0.5 + fn, 0.5 + tn, size=draws)
    return r1, r0, np.full(draws, SHARE), sampling_seed


def rebuilt_curve(seed: np.random.SeedSequence, draws: int, power: str) -> _ThetaStarCurve:
    r1, r0, q, sampling_seed = posterior_draws(seed, draws)
    return _ThetaStarCurve(posterior=confusion_posterior(CONFUSION), r1=r1, r0=r0, q=q,
                           sampling_seed=sampling_seed, confidence_level=LEVEL,
                           quantile=1.0 - float(power), method="delta")


def hand_curve(draws: int, power: str) -> _ThetaStarCurve:
    """A curve over hand-chosen populations, spread so that every simulated bound differs."""
    r1 = np.linspace(0.3, 0.95, draws)
    r0 = np.linspace(0.002, 0.08, draws)[::-1].copy()
    np.random.default_rng(7).shuffle(r0)
    q = np.linspace(0.1, 0.4, draws)
    return _ThetaStarCurve(posterior=confusion_posterior(CONFUSION), r1=r1, r0=r0, q=q,
                           sampling_seed=np.random.SeedSequence(11), confidence_level=LEVEL,
                           quantile=1.0 - float(power), method="delta")


def population_f1(curve: _ThetaStarCurve) -> np.ndarray:
    q, r1, r0 = curve.q, curve.r1, curve.r0
    return 2.0 * q * r1 / (q * r1 + q + (1.0 - q) * r0)


@pytest.mark.parametrize(("draws", "power", "rank"), [
    (1000, "0.93", 70),
    (100, "0.95", 5),
    (100, "0.93", 7),
    (1000, "0.9", 100),
    (1000, "0.8", 200),
    (1000, "0.7", 300),
    (1000, "0.99", 10),
    (256_000, "0.93", 17_920),
    (150, "0.93", 11),
    (333, "0.93", 24),
    (1001, "0.93", 71),
    (100, "0.999", 1),
])
def test_quantile_rank_is_the_inverted_cdf_rank(draws, power, rank):
    assert exact_rank(draws, power) == rank
    curve = _curve(confusion_posterior(CONFUSION), confidence_level=LEVEL, power=float(power),
                   draws=draws, seed=np.random.SeedSequence(0), method="delta")
    assert curve.draws == draws
    assert curve.rank == rank


@pytest.mark.parametrize(("draws", "power"), [(1000, "0.93"), (100, "0.95"), (150, "0.93")])
def test_order_statistic_is_the_rank_th_smallest_bound(draws, power):
    curve = hand_curve(draws, power)
    size = 50_000
    bounds = np.sort(curve.lower_bounds(size))
    assert np.unique(bounds).size == draws
    rank = exact_rank(draws, power)
    assert curve.rank == rank
    assert curve.order_statistic(size, rank) == bounds[rank - 1]
    assert curve.order_statistic(size, rank) != bounds[rank - 2]
    assert curve.order_statistic(size, rank) != bounds[rank]
    assert [curve.order_statistic(size, k) for k in range(1, draws + 1)] == bounds.tolist()


def test_simulated_bounds_reuse_the_same_random_numbers_at_every_call():
    curve = hand_curve(1000, "0.93")
    first = curve.lower_bounds(2000)
    curve.order_statistic(3000, 70)
    np.testing.assert_array_equal(curve.lower_bounds(2000), first)


def test_root_seed_of_an_int_is_the_seed_sequence_of_that_int():
    root = _root_seed(SEED)
    assert isinstance(root, np.random.SeedSequence)
    assert root.entropy == SEED
    expected = np.random.SeedSequence(SEED).generate_state(4)
    np.testing.assert_array_equal(root.generate_state(4), expected)


@pytest.mark.parametrize(("draws", "power", "size"), [
    (1000, "0.93", 2000),
    (100, "0.95", 3000),
    (150, "0.93", 1500),
    (1000, "0.8", 8000),
])
def test_theta_star_is_the_rank_th_smallest_simulated_bound(draws, power, size):
    value = theta_star(CONFUSION, size, confidence_level=LEVEL, power=float(power),
                       draws=draws, rng=SEED)
    curve = rebuilt_curve(np.random.SeedSequence(SEED), draws, power)
    bounds = np.sort(curve.lower_bounds(size))
    rank = exact_rank(draws, power)
    assert bounds[rank - 2] < bounds[rank - 1] < bounds[rank]
    assert value == bounds[rank - 1]


def test_monte_carlo_level_is_95_percent():
    assert MC_INTERVAL_LEVEL == 0.95


REGULAR = [(n, p) for n in (100, 150, 333, 1000, 4000) for p in ("0.8", "0.9", "0.93", "0.95")]
REGULAR += [(1000, "0.99"), (4000, "0.99")]


@pytest.mark.parametrize(("draws", "power"), REGULAR)
def test_rank_interval_has_exact_coverage_of_at_least_95_percent(draws, power):
    curve = hand_curve(draws, power)
    low, high = curve.rank_interval()
    assert (low, high) == binomial_ranks(draws, power, 0.95)
    assert 1 <= low <= exact_rank(draws, power) <= high <= draws
    exact = coverage(draws, power, low, high)
    assert exact == pytest.approx(uniform_order_coverage(draws, power, low, high), abs=1e-12)
    assert exact >= 0.95
    ninety = binomial_ranks(draws, power, 0.90)
    assert ninety != (low, high)
    assert coverage(draws, power, *ninety) < 0.95


@pytest.mark.parametrize(("draws", "power"), [(100, "0.99"), (333, "0.99"), (1000, "0.999")])
def test_rank_interval_keeps_its_coverage_when_few_draws_fall_below_the_quantile(draws, power):
    low, high = hand_curve(draws, power).rank_interval()
    assert coverage(draws, power, low, high) >= 0.95


PLANS = [(0.64, "0.93", 1000, 20132), (0.56, "0.95", 100, SEED), (0.58, "0.93", 150, SEED)]


class Simulated:
    """The plan and the draws it was computed on, rebuilt from the plan's seed."""

    def __init__(self, target, power, draws, seed):
        self.target = target
        self.plan = certification_sample_size(CONFUSION, target, confidence_level=LEVEL,
                                              power=float(power), draws=draws, rng=seed)
        first_batch = np.random.SeedSequence(seed).spawn(1)[0]
        self.curve = rebuilt_curve(first_batch, draws, power)
        self._sorted = {}

    def nth_smallest(self, size, rank):
        if size not in self._sorted:
            self._sorted[size] = np.sort(self.curve.lower_bounds(size))
        return self._sorted[size][rank - 1]

    def first_size(self, rank):
        """Algorithm 2's search: double until the target is reached, then bisect (u/2, u]."""
        upper = 1
        while self.nth_smallest(upper, rank) < self.target:
            upper *= 2
        low, high = upper // 2 + 1, upper
        while low < high:
            middle = (low + high) // 2
            if self.nth_smallest(middle, rank) < self.target:
                low = middle + 1
            else:
                high = middle
        return high

    def assert_first_crossing(self, size, rank):
        assert self.nth_smallest(size, rank) >= self.target
        assert self.nth_smallest(size - 1, rank) < self.target
        assert self.first_size(rank) == size
        assert self.first_size(rank + 1) != size
        if rank > 1:
            assert self.first_size(rank - 1) != size


def test_plan_uses_the_first_spawned_seed_for_its_draws():
    sim = Simulated(*PLANS[0])
    own = _curve(confusion_posterior(CONFUSION), confidence_level=LEVEL, power=0.93, draws=1000,
                 seed=_root_seed(PLANS[0][3]).spawn(64)[0], method="delta")
    for name in ("r1", "r0", "q"):
        np.testing.assert_array_equal(getattr(own, name), getattr(sim.curve, name))
    size = sim.plan.test_size
    np.testing.assert_array_equal(own.lower_bounds(size), sim.curve.lower_bounds(size))


@pytest.mark.parametrize(("target", "power", "draws", "seed"), PLANS)
def test_plan_size_is_the_first_size_whose_quantile_bound_reaches_the_target(
        target, power, draws, seed):
    sim = Simulated(target, power, draws, seed)
    plan, rank = sim.plan, exact_rank(draws, power)
    assert plan.reachable and plan.seed == seed and plan.draws == draws
    sim.assert_first_crossing(plan.test_size, rank)
    assert plan.theta_star == sim.nth_smallest(plan.test_size, rank)
    f1 = np.sort(population_f1(sim.curve))
    assert f1[rank - 2] < f1[rank - 1] < f1[rank]
    assert plan.limit == f1[rank - 1]


@pytest.mark.parametrize(("target", "power", "draws", "seed"), PLANS)
def test_plan_interval_ends_are_the_first_sizes_of_the_bracketing_order_statistics(
        target, power, draws, seed):
    sim = Simulated(target, power, draws, seed)
    low_rank, high_rank = binomial_ranks(draws, power, 0.95)
    spread = sim.plan.test_size_interval
    assert spread.method == "order-statistic"
    assert spread.confidence_level == 0.95
    assert spread.low <= sim.plan.test_size <= spread.high
    assert np.sort(population_f1(sim.curve))[low_rank - 1] > target
    assert spread.low == int(spread.low) and spread.high == int(spread.high)
    sim.assert_first_crossing(int(spread.low), high_rank)
    sim.assert_first_crossing(int(spread.high), low_rank)
