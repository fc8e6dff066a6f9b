"""Throughput of Algorithm 1 (theta_star) and Algorithm 2 (certification_sample_size).

Measures, in one run: posterior draws per second of the vectorized `theta_star`, beside two
straightforward per-draw Python-loop references (one calling `scipy.stats` per draw, one with
scalar numpy draws), which must give the same answer within Monte Carlo error; and the wall
time of `certification_sample_size` with 10,000 draws.

Run: ``python benchmarks/bench_power.py [--draws N] [--loop-draws M]``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy import stats

from estimators import certification_sample_size, theta_star

CONFUSION = (60, 20, 25, 395)
TEST_SIZE = 2000
Z = float(stats.norm.ppf(0.95))


def losci_lower(tp: int, e: int) -> float:
    """95% LOSCI lower bound, SRS delta method (the same estimator as theta_star's)."""
    if 2 * tp + e == 0:
        return 0.0
    f = 2 * tp / (2 * tp + e)
    var = 4 * tp * e * (tp + e) / (2 * tp + e) ** 4
    return max(0.0, f - Z * math.sqrt(var))


def population(r1: float, r0: float, q: float) -> list[float]:
    return [q * r1, q * (1 - r1), (1 - q) * r0, (1 - q) * (1 - r0)]


def theta_star_scipy_loop(draws: int, seed: int) -> list[float]:
    """Reference 1: one scipy.stats call per random quantity, per draw."""
    tp0, fp0, fn0, tn0 = CONFUSION
    q = (tp0 + fp0) / sum(CONFUSION)
    rng = np.random.default_rng(seed)
    bounds = []
    for _ in range(draws):
        r1 = stats.beta.rvs(0.5 + tp0, 0.5 + fp0, random_state=rng)
        r0 = stats.beta.rvs(0.5 + fn0, 0.5 + tn0, random_state=rng)
        tp, fp, fn, _ = stats.multinomial.rvs(TEST_SIZE, population(r1, r0, q), random_state=rng)
        bounds.append(losci_lower(int(tp), int(fp + fn)))
    return bounds


def theta_star_numpy_loop(draws: int, seed: int) -> list[float]:
    """Reference 2: scalar numpy draws in a Python loop."""
    tp0, fp0, fn0, tn0 = CONFUSION
    q = (tp0 + fp0) / sum(CONFUSION)
    rng = np.random.default_rng(seed)
    bounds = []
    for _ in range(draws):
        r1 = rng.beta(0.5 + tp0, 0.5 + fp0)
        r0 = rng.beta(0.5 + fn0, 0.5 + tn0)
        tp, fp, fn, _ = rng.multinomial(TEST_SIZE, population(r1, r0, q))
        bounds.append(losci_lower(int(tp), int(fp + fn)))
    return bounds


def timed(func, *args, repeat=1, **kwargs):
    """(value, best wall time over ``repeat`` calls)."""
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        value = func(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return value, best


def rank_interval(bounds: list[float]) -> tuple[float, float]:
    """Distribution-free 95% interval of the 7% quantile of ``bounds`` (order statistics)."""
    ordered = np.sort(bounds)
    n = len(ordered)
    low = int(stats.binom.ppf(0.025, n, 0.07))
    high = int(stats.binom.ppf(0.975, n, 0.07)) + 1
    return float(ordered[max(low, 1) - 1]), float(ordered[min(high, n) - 1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1_000_000)
    parser.add_argument("--loop-draws", type=int, default=20_000)
    args = parser.parse_args()

    print(f"# theta_star for {CONFUSION}, test size {TEST_SIZE}, power 0.93, 95% LOSCI (delta)")
    vec, t_vec = timed(theta_star, CONFUSION, TEST_SIZE, draws=args.draws, rng=1, repeat=3)
    sci_bounds, t_sci = timed(theta_star_scipy_loop, args.loop_draws, 2)
    npy_bounds, t_npy = timed(theta_star_numpy_loop, args.loop_draws, 3)
    sci, npy = (float(np.quantile(b, 0.07, method="inverted_cdf"))
                for b in (sci_bounds, npy_bounds))
    rate_vec = args.draws / t_vec
    print(f"{'implementation':<28}{'draws':>10}{'draws/s':>12}{'theta*':>10}{'speedup':>9}")
    for name, value, draws, seconds in (
        ("vectorized theta_star", vec, args.draws, t_vec),
        ("loop, scipy.stats per draw", sci, args.loop_draws, t_sci),
        ("loop, scalar numpy draws", npy, args.loop_draws, t_npy),
    ):
        rate = draws / seconds
        print(f"{name:<28}{draws:>10,}{rate:>12.3g}{value:>10.4f}{rate_vec / rate:>9.0f}")
    for name, bounds in (("scipy loop", sci_bounds), ("numpy loop", npy_bounds)):
        low, high = rank_interval(bounds)
        verdict = "agrees" if low <= vec <= high else "DISAGREES"
        print(f"# {name}: 95% interval of its theta* [{low:.4f}, {high:.4f}]; the vectorized "
              f"theta* {vec:.4f} {verdict}")

    for draws in (1_000, 10_000):
        plan, seconds = timed(certification_sample_size, CONFUSION, 0.65, draws=draws, rng=7,
                              repeat=3)
        print(f"certification_sample_size(target 0.65, draws={draws:,}): {seconds:.3f} s, "
              f"test size {plan.test_size} (95% MC interval {plan.test_size_interval.low:.0f}"
              f"-{plan.test_size_interval.high:.0f})")


if __name__ == "__main__":
    main()
