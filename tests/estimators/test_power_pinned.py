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
    return _ThetaStarCurve(r1=r1, r0=r0, q=q, sampling_seed=sampling_seed,
                           confidence_level=LEVEL, quantile=1.0 - float(power), method="delta")


def hand_curve(draws: int, power: str) -> _ThetaStarCurve:
    """A curve over hand-chosen populations, spread so that every simulated bound differs."""
    r1 = np.linspace(0.3, 0.95, draws)
    r0 = np.linspace(0.002, 0.08, draws)[::-1].copy()
    np.random.default_rng(7).shuffle(r0)
    q = np.linspace(0.1, 0.4, draws)
    return _ThetaStarCurve(r1=r1, r0=r0, q=q, sampling_seed=np.random.SeedSequence(11),
                           confidence_level=LEVEL, quantile=1.0 - float(power), method="delta")


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
                       draws=draws, rng=SEED, interval="delta")
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
                                              power=float(power), draws=draws, rng=seed,
                                              interval="delta")
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


# Exact pins of whole plans. The data below were produced by the implementation before the
# fast path (which bounded every simulated test set with `f1_ci`, seeded a new generator at
# every size and sorted each size's bounds), by running this module as a script
# (``python tests/estimators/test_power_pinned.py``) on it; the planner must reproduce them bit
# for bit: the same draws, the same sizes simulated, the same plan. ``passing`` counts the draws
# whose simulated bound is above the target at each size of the power curve.

# (name, confusion, target, keyword arguments of certification_sample_size)
PLAN_CASES = [
    ("delta-1000-seed1", CONFUSION, 0.6, dict(draws=1000, rng=1, interval="delta")),
    ("delta-1000-seed2", CONFUSION, 0.6, dict(draws=1000, rng=2, interval="delta")),
    ("delta-1000-seed3-t064", CONFUSION, 0.64, dict(draws=1000, rng=3, interval="delta")),
    ("delta-10000-seed4", CONFUSION, 0.6, dict(draws=10000, rng=4, interval="delta")),
    ("jcp-1000-seed5", CONFUSION, 0.6, dict(draws=1000, rng=5,
                                            interval="jaccard-clopper-pearson")),
    ("jcp-10000-seed6", CONFUSION, 0.6, dict(draws=10000, rng=6,
                                             interval="jaccard-clopper-pearson")),
    ("delta-dirichlet-seed7", CONFUSION, 0.6,
     dict(draws=1000, rng=7, posterior="dirichlet", method="monte-carlo", interval="delta")),
    ("jcp-dirichlet-seed8", CONFUSION, 0.58,
     dict(draws=1000, rng=8, posterior="dirichlet", method="monte-carlo",
          interval="jaccard-clopper-pearson")),
    ("dirichlet-posterior-rare-seed9", (30, 10, 8, 952), 0.65,
     dict(draws=1000, rng=9, interval="dirichlet-posterior")),
    ("jaccard-wilson-common-seed10", (400, 60, 80, 460), 0.8,
     dict(draws=1000, rng=10, interval="jaccard-wilson")),
    ("logit-delta-common-seed11", (400, 60, 80, 460), 0.8,
     dict(draws=1000, rng=11, interval="logit-delta")),
    ("tolerance-seed12", CONFUSION, 0.6,
     dict(draws=1000, rng=12, tolerance=0.005, interval="delta")),
    ("relative-precision-seed13", CONFUSION, 0.6,
     dict(draws=1000, rng=13, relative_precision=0.1, max_draws=8000, interval="delta")),
    ("above-limit-seed14", CONFUSION, 0.68, dict(draws=1000, rng=14, interval="delta")),
    ("max-test-size-seed15", CONFUSION, 0.66,
     dict(draws=1000, rng=15, max_test_size=500, interval="delta")),
    ("above-observed", CONFUSION, 0.75, dict(draws=1000, rng=16, interval="delta")),
    ("power099-draws100-seed17", CONFUSION, 0.55,
     dict(draws=100, rng=17, power=0.99, interval="delta")),
    ("power08-seed18", CONFUSION, 0.62, dict(draws=1000, rng=18, power=0.8, interval="delta")),
    ("share-level-seed19", CONFUSION, 0.6,
     dict(draws=1000, rng=19, retrieved_share=0.2, confidence_level=0.9, interval="delta")),
    ("small-matrix-seed20", (5, 2, 3, 40), 0.4, dict(draws=1000, rng=20, interval="delta")),
    ("jcp-tolerance-seed21", (30, 10, 8, 952), 0.6,
     dict(draws=1000, rng=21, interval="jaccard-clopper-pearson", tolerance=0.01)),
]
# (confusion, test size, keyword arguments of theta_star)
THETA_CASES = [
    (CONFUSION, 1, dict(rng=1, interval="delta")),
    (CONFUSION, 37, dict(rng=1, interval="delta")),
    (CONFUSION, 2000, dict(rng=2, interval="delta")),
    (CONFUSION, 2000, dict(rng=2, interval="jaccard-clopper-pearson")),
    (CONFUSION, 2000, dict(rng=2, interval="jaccard-mid-p", posterior="dirichlet")),
    ((30, 10, 8, 952), 5000, dict(rng=3, draws=10000, interval="delta")),
    ((400, 60, 80, 460), 300, dict(rng=4, interval="dirichlet-posterior", power=0.8)),
]


def plan_record(plan):
    """The plan's fields that the search determines, as plain Python values."""
    curve = plan.curve
    sizes = passing = None
    if curve is not None:
        sizes = tuple(int(s) for s in curve.sizes)
        passing = tuple(round(p * plan.draws) for p in curve.power)
        assert plan.method == "monte-carlo"
        assert np.array_equal(np.asarray(passing) / plan.draws, curve.power)
    return dict(test_size=plan.test_size, theta_star=plan.theta_star, limit=plan.limit,
                interval=(plan.test_size_interval.low, plan.test_size_interval.high),
                draws=plan.draws, reason=plan.reason, achieved_power=plan.achieved_power,
                sizes=sizes, passing=passing)

inf, nan = math.inf, math.nan
PINNED_PLANS = {'delta-1000-seed1': {'test_size': 975,
                      'theta_star': 0.6019321296072321,
                      'limit': 0.6660961484879722,
                      'interval': (792.0, 1196.0),
                      'draws': 1000,
                      'reason': '',
                      'achieved_power': 0.934,
                      'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 768, 784, 788, 790, 791,
                                792, 800, 832, 896, 960, 968, 972, 974, 975, 976, 992, 1024, 1152,
                                1184, 1192, 1194, 1195, 1196, 1200, 1216, 1280, 1536, 2048),
                      'passing': (95, 197, 286, 334, 293, 282, 336, 504, 653, 840, 900, 900, 907,
                                  909, 907, 915, 920, 927, 915, 930, 920, 924, 923, 934, 932, 931,
                                  937, 943, 941, 939, 945, 938, 948, 948, 958, 956, 954, 975)},
 'delta-1000-seed2': {'test_size': 859,
                      'theta_star': 0.6001058518157262,
                      'limit': 0.6705325015283916,
                      'interval': (777.0, 1090.0),
                      'draws': 1000,
                      'reason': '',
                      'achieved_power': 0.932,
                      'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 768, 776, 777, 778, 780,
                                784, 800, 832, 848, 856, 858, 859, 860, 864, 896, 1024, 1088,
                                1089, 1090, 1092, 1096, 1104, 1120, 1152, 1280, 1536, 2048),
                      'passing': (131, 228, 317, 361, 330, 326, 367, 538, 708, 823, 908, 910, 915,
                                  917, 916, 916, 917, 915, 926, 925, 924, 932, 936, 932, 937, 940,
                                  942, 944, 956, 955, 949, 952, 950, 947, 955, 976, 973)},
 'delta-1000-seed3-t064': {'test_size': 4856,
                           'theta_star': 0.6403377147252707,
                           'limit': 0.6630874179706392,
                           'interval': (3517.0, 9984.0),
                           'draws': 1000,
                           'reason': '',
                           'achieved_power': 0.931,
                           'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3072,
                                     3328, 3456, 3488, 3504, 3512, 3516, 3517, 3518, 3520, 3584,
                                     4096, 4608, 4736, 4800, 4832, 4848, 4852, 4854, 4855, 4856,
                                     4864, 5120, 6144, 8192, 9216, 9728, 9856, 9920, 9952, 9968,
                                     9976, 9980, 9982, 9983, 9984, 10240, 12288, 16384),
                           'passing': (114, 214, 303, 310, 240, 239, 246, 345, 474, 649, 790, 880,
                                       901, 910, 911, 907, 912, 912, 910, 917, 915, 919, 916, 922,
                                       918, 924, 925, 928, 926, 925, 927, 929, 931, 931, 940, 936,
                                       935, 945, 941, 943, 943, 944, 941, 940, 945, 942, 944, 947,
                                       946, 949, 954)},
 'delta-10000-seed4': {'test_size': 928,
                       'theta_star': 0.6002236630200343,
                       'limit': 0.6671637691374058,
                       'interval': (886.0, 960.0),
                       'draws': 10000,
                       'reason': '',
                       'achieved_power': 0.9304,
                       'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 768, 832, 864, 880, 884,
                                 885, 886, 888, 896, 912, 920, 924, 926, 927, 928, 944, 952, 956,
                                 958, 959, 960, 1024),
                       'passing': (1192, 2050, 3022, 3410, 3178, 3034, 3476, 5091, 6735, 8370,
                                   9070, 9151, 9232, 9210, 9248, 9235, 9251, 9262, 9256, 9256,
                                   9244, 9271, 9269, 9279, 9304, 9291, 9331, 9349, 9325, 9322,
                                   9356, 9394)},
 'jcp-1000-seed5': {'test_size': 1013,
                    'theta_star': 0.6008546493947645,
                    'limit': 0.6678373669767104,
                    'interval': (961.0, 1265.0),
                    'draws': 1000,
                    'reason': '',
                    'achieved_power': 0.932,
                    'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 768, 896, 960, 961, 962, 964,
                              968, 976, 992, 1008, 1012, 1013, 1014, 1016, 1024, 1152, 1216, 1248,
                              1264, 1265, 1266, 1268, 1272, 1280, 1536, 2048),
                    'passing': (0, 0, 0, 7, 28, 82, 182, 365, 594, 800, 882, 904, 911, 915, 928,
                                922, 914, 918, 922, 927, 922, 932, 931, 934, 934, 934, 938, 941,
                                941, 953, 948, 950, 954, 946, 967, 971)},
 'jcp-10000-seed6': {'test_size': 1054,
                     'theta_star': 0.6014862085186169,
                     'limit': 0.6671882012863453,
                     'interval': (1026.0, 1096.0),
                     'draws': 10000,
                     'reason': '',
                     'achieved_power': 0.9333,
                     'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 1025, 1026, 1028,
                               1032, 1040, 1048, 1052, 1053, 1054, 1056, 1088, 1092, 1094, 1095,
                               1096, 1104, 1120, 1152, 1280, 1536, 2048),
                     'passing': (0, 0, 1, 48, 382, 934, 1934, 3690, 5789, 8024, 9240, 9229, 9259,
                                 9285, 9279, 9284, 9286, 9283, 9287, 9333, 9312, 9308, 9333, 9320,
                                 9332, 9364, 9357, 9398, 9382, 9469, 9635, 9742)},
 'delta-dirichlet-seed7': {'test_size': 1072,
                           'theta_star': 0.6017149873063341,
                           'limit': 0.6653792245688279,
                           'interval': (920.0, 1409.0),
                           'draws': 1000,
                           'reason': '',
                           'achieved_power': 0.935,
                           'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 768, 896, 912, 916,
                                     918, 919, 920, 928, 960, 1024, 1056, 1064, 1068, 1070, 1071,
                                     1072, 1088, 1152, 1280, 1408, 1409, 1410, 1412, 1416, 1424,
                                     1440, 1472, 1536, 2048),
                           'passing': (117, 202, 280, 311, 302, 295, 353, 511, 665, 809, 892, 904,
                                       910, 908, 902, 910, 916, 914, 922, 915, 925, 929, 923, 923,
                                       922, 935, 940, 939, 944, 945, 953, 955, 954, 951, 956, 954,
                                       954, 956, 971)},
 'jcp-dirichlet-seed8': {'test_size': 791,
                         'theta_star': 0.5826252026018485,
                         'limit': 0.6602196253927467,
                         'interval': (716.0, 879.0),
                         'draws': 1000,
                         'reason': '',
                         'achieved_power': 0.937,
                         'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 640, 704, 712, 714, 715,
                                   716, 720, 736, 768, 784, 788, 790, 791, 792, 800, 832, 864,
                                   872, 876, 878, 879, 880, 896, 1024),
                         'passing': (0, 0, 0, 11, 48, 110, 251, 450, 670, 839, 898, 898, 913, 910,
                                     912, 921, 926, 920, 930, 927, 929, 930, 937, 932, 933, 941,
                                     945, 944, 935, 939, 946, 948, 955, 964)},
 'dirichlet-posterior-rare-seed9': {'test_size': 10230,
                                    'theta_star': 0.6549093231043696,
                                    'limit': 0.6831594869902861,
                                    'interval': (8633.0, 20999.0),
                                    'draws': 1000,
                                    'reason': '',
                                    'achieved_power': 0.94,
                                    'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048,
                                              4096, 8192, 8448, 8576, 8608, 8624, 8632, 8633,
                                              8634, 8636, 8640, 8704, 9216, 9728, 9984, 10112,
                                              10176, 10208, 10224, 10228, 10229, 10230, 10232,
                                              10240, 12288, 16384, 20480, 20992, 20996, 20998,
                                              20999, 21000, 21008, 21024, 21056, 21120, 21248,
                                              21504, 22528, 24576, 32768),
                                    'passing': (0, 0, 0, 0, 1, 5, 36, 106, 188, 351, 554, 719,
                                                846, 907, 911, 903, 903, 909, 909, 923, 918, 922,
                                                916, 920, 914, 915, 924, 930, 918, 916, 927, 929,
                                                929, 940, 937, 931, 938, 938, 941, 944, 943, 942,
                                                947, 947, 954, 953, 947, 950, 953, 952, 950, 953,
                                                960)},
 'jaccard-wilson-common-seed10': {'test_size': 1011,
                                  'theta_star': 0.800402384038884,
                                  'limit': 0.8333813400853757,
                                  'interval': (961.0, 1016.0),
                                  'draws': 1000,
                                  'reason': '',
                                  'achieved_power': 0.938,
                                  'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 768, 896, 960,
                                            961, 962, 964, 968, 976, 992, 1008, 1010, 1011, 1012,
                                            1014, 1015, 1016, 1024),
                                  'passing': (0, 0, 0, 28, 100, 119, 202, 310, 573, 787, 898, 907,
                                              909, 921, 926, 920, 925, 940, 927, 924, 926, 938,
                                              940, 930, 936, 954, 947)},
 'logit-delta-common-seed11': {'test_size': 926,
                               'theta_star': 0.8000010500224214,
                               'limit': 0.8331655441033724,
                               'interval': (868.0, 1052.0),
                               'draws': 1000,
                               'reason': '',
                               'achieved_power': 0.931,
                               'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 768, 832, 864,
                                         866, 867, 868, 872, 880, 896, 912, 920, 924, 925, 926,
                                         928, 960, 1024, 1040, 1048, 1050, 1051, 1052, 1056, 1088,
                                         1152, 1280, 1536, 2048),
                               'passing': (0, 0, 0, 0, 3, 106, 201, 364, 576, 801, 889, 907, 911,
                                           906, 911, 924, 921, 922, 930, 928, 915, 927, 924, 931,
                                           933, 933, 933, 945, 943, 937, 934, 951, 946, 953, 956,
                                           966, 975, 988)},
 'tolerance-seed12': {'test_size': 1008,
                      'theta_star': 0.6023296814568531,
                      'limit': 0.6692839861132949,
                      'interval': (897.0, 1115.0),
                      'draws': 1000,
                      'reason': '',
                      'achieved_power': 0.933,
                      'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 768, 896, 897, 898, 900,
                                904, 912, 928, 960, 992, 1008, 1024, 1088, 1104, 1112, 1114, 1115,
                                1116, 1120, 1152, 1280, 1536, 2048),
                      'passing': (115, 193, 285, 324, 310, 298, 338, 507, 644, 819, 899, 910, 924,
                                  930, 928, 922, 929, 930, 924, 919, 933, 939, 942, 941, 931, 945,
                                  959, 946, 951, 949, 953, 967, 978)},
 'relative-precision-seed13': {'test_size': 980,
                               'theta_star': 0.6006970411371171,
                               'limit': 0.6672817677905414,
                               'interval': (945.0, 1020.0),
                               'draws': 8000,
                               'reason': '',
                               'achieved_power': 0.931,
                               'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 768, 896, 928,
                                         944, 945, 946, 948, 952, 960, 976, 978, 979, 980, 984,
                                         992, 1008, 1016, 1018, 1019, 1020, 1024),
                               'passing': (988, 1629, 2388, 2762, 2613, 2464, 2833, 4128, 5200,
                                           6642, 7204, 7350, 7377, 7362, 7424, 7423, 7397, 7417,
                                           7425, 7431, 7440, 7438, 7448, 7463, 7483, 7473, 7471,
                                           7459, 7461, 7503, 7492)},
 'above-limit-seed14': {'test_size': None,
                        'theta_star': nan,
                        'limit': 0.6667653178728368,
                        'interval': (inf, inf),
                        'draws': 1000,
                        'reason': 'target 0.68 is at or above the limit of theta_star as the '
                                  'test size grows (0.6668, the 0.07-quantile of the posterior '
                                  'of population F1): no test size certifies it with power 0.93',
                        'achieved_power': nan,
                        'sizes': (),
                        'passing': ()},
 'max-test-size-seed15': {'test_size': None,
                          'theta_star': nan,
                          'limit': 0.6662078689760679,
                          'interval': (inf, inf),
                          'draws': 1000,
                          'reason': 'no test size up to max_test_size=500 reaches the target '
                                    '(limit 0.6662 is barely above it)',
                          'achieved_power': nan,
                          'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 500),
                          'passing': (120, 218, 311, 344, 234, 202, 219, 270, 354, 476)},
 'above-observed': {'test_size': None,
                    'theta_star': nan,
                    'limit': nan,
                    'interval': (inf, inf),
                    'draws': 1000,
                    'reason': 'the observed F1 (0.7273) is not above the target 0.75 (Algorithm '
                              "2's check)",
                    'achieved_power': nan,
                    'sizes': None,
                    'passing': None},
 'power099-draws100-seed17': {'test_size': 935,
                              'theta_star': 0.5502692911684073,
                              'limit': 0.634272872276045,
                              'interval': (585.0, inf),
                              'draws': 100,
                              'reason': '',
                              'achieved_power': 1.0,
                              'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 576, 584, 585, 586,
                                        588, 592, 608, 640, 768, 896, 928, 932, 934, 935, 936,
                                        944, 960, 1024),
                              'passing': (9, 18, 26, 30, 33, 40, 53, 65, 86, 95, 95, 95, 97, 97,
                                          100, 97, 99, 99, 99, 99, 99, 99, 99, 100, 100, 100, 100,
                                          100)},
 'power08-seed18': {'test_size': 691,
                    'theta_star': 0.6202287324293585,
                    'limit': 0.6913019161146123,
                    'interval': (582.0, 801.0),
                    'draws': 1000,
                    'reason': '',
                    'achieved_power': 0.801,
                    'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 576, 580, 581, 582, 584, 592,
                              608, 640, 672, 688, 690, 691, 692, 696, 704, 768, 800, 801, 802,
                              804, 808, 816, 832, 896, 1024),
                    'passing': (124, 208, 310, 353, 312, 272, 307, 418, 598, 758, 768, 766, 766,
                                776, 775, 778, 785, 780, 787, 787, 794, 801, 804, 808, 811, 820,
                                823, 835, 838, 831, 841, 829, 841, 825, 854)},
 'share-level-seed19': {'test_size': 312,
                        'theta_star': 0.6021746041894132,
                        'limit': 0.6988273838599993,
                        'interval': (283.0, 341.0),
                        'draws': 1000,
                        'reason': '',
                        'achieved_power': 0.935,
                        'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 272, 280, 282, 283, 284, 288,
                                  304, 308, 310, 311, 312, 320, 336, 340, 341, 342, 344, 352, 384,
                                  512),
                        'passing': (140, 245, 322, 357, 384, 461, 553, 734, 890, 911, 912, 906,
                                    914, 926, 914, 920, 922, 927, 929, 935, 933, 943, 943, 953,
                                    950, 946, 948, 948, 964)},
 'small-matrix-seed20': {'test_size': 2926,
                         'theta_star': 0.4023783436081772,
                         'limit': 0.4389613730952003,
                         'interval': (1440.0, 14913.0),
                         'draws': 1000,
                         'reason': '',
                         'achieved_power': 0.933,
                         'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 1280, 1408, 1424,
                                   1432, 1436, 1438, 1439, 1440, 1472, 1536, 2048, 2560, 2816,
                                   2880, 2912, 2920, 2924, 2925, 2926, 2928, 2944, 3072, 4096,
                                   8192, 12288, 14336, 14848, 14912, 14913, 14914, 14916, 14920,
                                   14928, 14944, 14976, 15104, 15360, 16384),
                         'passing': (87, 154, 217, 300, 338, 406, 527, 654, 786, 862, 891, 907,
                                     906, 905, 910, 911, 910, 908, 914, 916, 917, 921, 930, 926,
                                     930, 929, 926, 930, 928, 933, 931, 931, 931, 938, 943, 943,
                                     945, 945, 945, 946, 947, 946, 950, 949, 947, 947, 949, 949,
                                     947)},
 'jcp-tolerance-seed21': {'test_size': 3072,
                          'theta_star': 0.6020412308662791,
                          'limit': 0.683899022450622,
                          'interval': (2360.0, 3308.0),
                          'draws': 1000,
                          'reason': '',
                          'achieved_power': 0.935,
                          'sizes': (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 2304, 2336,
                                    2352, 2356, 2358, 2359, 2360, 2368, 2432, 2560, 3072, 3200,
                                    3264, 3296, 3304, 3306, 3307, 3308, 3312, 3328, 3584, 4096),
                          'passing': (0, 0, 0, 0, 0, 11, 56, 130, 275, 509, 739, 891, 898, 909,
                                      911, 905, 912, 910, 914, 918, 919, 920, 935, 938, 944, 945,
                                      935, 941, 939, 955, 948, 954, 963, 965)}}

PINNED_THETA_STARS = [0.0,
 0.1046461039086693,
 0.6198308936904975,
 0.6179187789558765,
 0.6207487295698494,
 0.6243772620048383,
 0.7817922337732378]


@pytest.mark.parametrize(("name", "confusion", "target", "options"), PLAN_CASES,
                         ids=[case[0] for case in PLAN_CASES])
def test_plan_is_the_pinned_plan(name, confusion, target, options):
    plan = certification_sample_size(confusion, target, **options)
    np.testing.assert_equal(plan_record(plan), PINNED_PLANS[name])


@pytest.mark.parametrize(("case", "expected"), list(zip(THETA_CASES, PINNED_THETA_STARS,
                                                        strict=True)))
def test_theta_star_is_the_pinned_value(case, expected):
    confusion, size, options = case
    assert theta_star(confusion, size, **options) == expected


def _print_pins() -> None:
    """Print PINNED_PLANS and PINNED_THETA_STARS as computed by the planner now."""
    import pprint

    plans = {name: plan_record(certification_sample_size(confusion, target, **options))
             for name, confusion, target, options in PLAN_CASES}
    thetas = [theta_star(confusion, size, **options) for confusion, size, options in THETA_CASES]
    print("PINNED_PLANS = " + pprint.pformat(plans, width=98, compact=True, sort_dicts=False))
    print()
    print("PINNED_THETA_STARS = " + pprint.pformat(thetas, width=98))


if __name__ == "__main__":
    _print_pins()


def test_draws_above_max_draws_are_refused_before_any_simulation():
    # 80 million draws once took minutes and 13 GB: `max_draws` caps the draws a caller gives
    # as it caps those `relative_precision` doubles to
    with pytest.raises(ValueError, match=r"`draws` must be at most `max_draws` \(4000\); "
                                         r"got 4001\."):
        certification_sample_size(CONFUSION, 0.6, draws=4001, max_draws=4000, rng=1,
                                  method="monte-carlo")
    plan = certification_sample_size(CONFUSION, 0.6, draws=4000, max_draws=4000, rng=1,
                                     method="monte-carlo")
    assert plan.draws == 4000
