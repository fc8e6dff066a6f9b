"""Algorithm 1 without simulated test sets: is the planned size more precise per second?

With a deterministic certification interval, the lower bound of a test set of size ``s`` is a
function of its counts, so for a posterior draw (a population) the probability that the bound
clears ``theta`` can be computed instead of simulated. For ``jaccard-clopper-pearson`` it is a
closed form: given ``m = tp + fp + fn ~ Bin(s, pi)``, ``tp ~ Bin(m, J)``, and the Clopper-Pearson
lower bound of J is at least ``j = theta / (2 - theta)`` exactly when
``tp >= t*(m) = binom.isf(alpha, m, j) + 1``, so

    P(bound >= theta) = sum_m Bin(m; s, pi) P(Bin(m, J) >= t*(m)).

theta*(s) is then the largest theta whose power, averaged over the posterior draws, is at least
the requested one: its only noise is the posterior draws'. Today's `theta_star` simulates one
test set per draw instead (noise from both). This script measures, in one run, the wall time of
one theta*(s) by each, the standard deviation of theta*(s) over 20 seeds when both get the same
wall time (the simulation spends it on more draws), and the same for the planned size of
Algorithm 2 (sizes searched on each method's own theta* curve).

Run: ``python benchmarks/bench_theta_star_exact.py [--seeds 20]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from estimators import confusion_posterior, theta_star

CONFUSION = (60, 20, 25, 395)
LEVEL, POWER = 0.95, 0.93
INTERVAL = "jaccard-clopper-pearson"


def exact_theta_star(r1: np.ndarray, r0: np.ndarray, q: float, size: int) -> float:
    """theta*(size) from posterior draws ``(r1, r0)`` with the test-set distribution summed."""
    pi = q + (1.0 - q) * r0  # P(tp, fp or fn) = q r1 + q (1 - r1) + (1 - q) r0
    jaccard = q * r1 / pi
    low = int(stats.binom.ppf(1e-12, size, pi.min()))
    high = int(stats.binom.isf(1e-12, size, pi.max()))
    m = np.arange(low, high + 1)
    weights = np.exp(stats.binom.logpmf(m[None, :], size, pi[:, None]))

    def power(theta: float) -> float:
        t_star = stats.binom.isf(1.0 - LEVEL, m, theta / (2.0 - theta)) + 1.0
        passing = stats.binom.sf(t_star[None, :] - 1.0, m[None, :], jaccard[:, None])
        return float((weights * passing).sum(axis=1).mean())

    below, above = 0.0, 1.0  # power(below) >= POWER > power(above)
    for _ in range(30):  # theta to 1e-9
        middle = (below + above) / 2.0
        below, above = (middle, above) if power(middle) >= POWER else (below, middle)
    return below


def planned_size(theta_at, target: float, max_size: int = 1 << 20) -> int:
    """Algorithm 2's search (double, then bisect) on a theta*(s) curve."""
    upper = 1
    while theta_at(upper) < target:
        upper *= 2
        if upper > max_size:
            raise ValueError("target out of reach")
    low, high = upper // 2 + 1, upper
    while low < high:
        middle = (low + high) // 2
        low, high = (middle + 1, high) if theta_at(middle) < target else (low, middle)
    return high


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--draws", type=int, default=1000, help="posterior draws of the exact")
    parser.add_argument("--size", type=int, default=1000, help="test size of the theta* timing")
    parser.add_argument("--target", type=float, default=0.6)
    args = parser.parse_args()
    posterior = confusion_posterior(CONFUSION)
    q = posterior.retrieved_share

    start = time.perf_counter()
    exact_theta = []
    for seed in range(args.seeds):
        r1, r0 = posterior.draw(args.draws, rng=seed)
        exact_theta.append(exact_theta_star(r1, r0, q, args.size))
    exact_seconds = (time.perf_counter() - start) / args.seeds

    start = time.perf_counter()
    for seed in range(args.seeds):
        theta_star(CONFUSION, args.size, draws=args.draws, rng=seed, interval=INTERVAL)
    simulated_seconds = (time.perf_counter() - start) / args.seeds
    ratio = exact_seconds / simulated_seconds
    matched = int(args.draws * ratio)  # the simulation's draws at the exact's wall time
    simulated_theta = [theta_star(CONFUSION, args.size, draws=matched, rng=seed,
                                  interval=INTERVAL) for seed in range(args.seeds)]
    same_draws = [theta_star(CONFUSION, args.size, draws=args.draws, rng=seed,
                             interval=INTERVAL) for seed in range(args.seeds)]
    print(f"theta*(s = {args.size:,}), {INTERVAL} LOSCI, {args.seeds} seeds")
    print(f"  exact test-set distribution, {args.draws:,} draws: {exact_seconds:.3f} s each, "
          f"mean {np.mean(exact_theta):.5f}, sd {np.std(exact_theta, ddof=1):.5f}")
    print(f"  simulated test sets, {args.draws:,} draws: {simulated_seconds:.4f} s each, "
          f"mean {np.mean(same_draws):.5f}, sd {np.std(same_draws, ddof=1):.5f}")
    print(f"  simulated test sets, {matched:,} draws (equal wall time, {ratio:.0f}x): "
          f"mean {np.mean(simulated_theta):.5f}, sd {np.std(simulated_theta, ddof=1):.5f}")

    sizes_exact, start = [], time.perf_counter()
    for seed in range(args.seeds):
        r1, r0 = posterior.draw(args.draws, rng=seed)
        sizes_exact.append(planned_size(
            lambda s, r1=r1, r0=r0: exact_theta_star(r1, r0, q, s), args.target))
    exact_plan_seconds = (time.perf_counter() - start) / args.seeds
    sizes_simulated, start = [], time.perf_counter()
    for seed in range(args.seeds):
        sizes_simulated.append(planned_size(
            lambda s, seed=seed: theta_star(CONFUSION, s, draws=matched, rng=seed,
                                            interval=INTERVAL), args.target))
    simulated_plan_seconds = (time.perf_counter() - start) / args.seeds
    print(f"planned size for F1 >= {args.target} at power {POWER} ({args.seeds} seeds)")
    print(f"  exact, {args.draws:,} draws: {exact_plan_seconds:.2f} s each, median "
          f"{np.median(sizes_exact):.0f}, sd {np.std(sizes_exact, ddof=1):.1f}")
    print(f"  simulated, {matched:,} draws: {simulated_plan_seconds:.2f} s each, median "
          f"{np.median(sizes_simulated):.0f}, sd {np.std(sizes_simulated, ddof=1):.1f}")


if __name__ == "__main__":
    main()
