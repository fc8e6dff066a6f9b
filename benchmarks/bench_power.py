"""Throughput of Algorithm 1 (theta_star) and Algorithm 2 (certification_sample_size).

Measures, in one run: posterior draws per second of the vectorized `theta_star`, beside two
straightforward per-draw Python-loop references (one calling `scipy.stats` per draw, one with
scalar numpy draws), which must give the same answer within Monte Carlo error; the wall
time of the simulated plan, `certification_sample_size((60, 20, 25, 395), 0.6)` with 1,000
and 10,000 draws, beside a straightforward vectorized plain-numpy reference of Algorithm 2
(`reference_plan`) timed on the same seeds in the same run, whose plans must agree with
ours within Monte Carlo error (the two use different random streams); and the batched
planner `plan_sizes` on many labelled samples beside `certification_sample_size` called once
per sample, whose sizes it must give exactly.

Run: ``python benchmarks/bench_power.py [--draws N] [--loop-draws M] [--plans K]
[--samples S]``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy import stats

from estimators import certification_sample_size, plan_sizes, theta_star

CONFUSION = (60, 20, 25, 395)
TEST_SIZE = 2000
PLAN_TARGET = 0.6
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


def timed(func, *args, repeat=1, clock=time.perf_counter, **kwargs):
    """(value, best time over ``repeat`` calls), wall time unless another ``clock``."""
    best = math.inf
    for _ in range(repeat):
        start = clock()
        value = func(*args, **kwargs)
        best = min(best, clock() - start)
    return value, best


def rank_interval(bounds: list[float]) -> tuple[float, float]:
    """Distribution-free 95% interval of the 7% quantile of ``bounds`` (order statistics)."""
    ordered = np.sort(bounds)
    n = len(ordered)
    low = int(stats.binom.ppf(0.025, n, 0.07))
    high = int(stats.binom.ppf(0.975, n, 0.07)) + 1
    return float(ordered[max(low, 1) - 1]), float(ordered[min(high, n) - 1])


def reference_plan(confusion: tuple[int, int, int, int], target: float, *, draws: int,
                   seed: int, level: float = 0.95, power: float = 0.93,
                   multinomial: bool = False) -> dict[str, float | int]:
    """Algorithm 2 with its Monte Carlo interval, written plainly with numpy.

    Posterior draws of the population cells (the paper's Jeffreys Beta segments, the retrieved
    share known); for each candidate size, one simulated test set per draw, all at once
    (common random numbers: each size restarts the same sampling stream), the delta LOSCI
    lower bounds in closed form, sorted; the (1 - power) quantile; doubling then bisection for
    the smallest size whose quantile reaches the target, and the same search on the two order
    statistics of the quantile's 95% distribution-free interval. ``multinomial=True`` draws
    each test set with numpy's multinomial instead of two conditional binomials.
    """
    tp0, fp0, fn0, _ = confusion
    q = (tp0 + fp0) / sum(confusion)
    rng = np.random.default_rng(seed)
    r1 = rng.beta(0.5 + tp0, 0.5 + fp0, size=draws)
    r0 = rng.beta(0.5 + fn0, 0.5 + sum(confusion) - tp0 - fp0 - fn0, size=draws)
    cells = np.stack([q * r1, q * (1 - r1), (1 - q) * r0, (1 - q) * (1 - r0)], axis=1)
    sampling = int(rng.integers(2**63))
    z = float(stats.norm.ppf(level))
    beta = 1.0 - power
    ranks = (math.ceil(beta * draws - 1e-9), int(stats.binom.ppf(0.025, draws, beta)),
             int(stats.binom.ppf(0.975, draws, beta)) + 1)
    simulated: dict[int, np.ndarray] = {}

    def sorted_bounds(size: int) -> np.ndarray:
        if size not in simulated:
            gen = np.random.default_rng(sampling)
            if multinomial:
                tp, fp, fn, _ = gen.multinomial(size, cells).T
                e = fp + fn
            else:
                tp = gen.binomial(size, cells[:, 0])
                e = gen.binomial(size - tp, (cells[:, 1] + cells[:, 2]) / (1 - cells[:, 0]))
            with np.errstate(invalid="ignore", divide="ignore"):
                f = 2 * tp / (2 * tp + e)
                var = 4 * tp * e * (tp + e) / (2.0 * tp + e) ** 4
            simulated[size] = np.sort(np.nan_to_num(np.clip(f - z * np.sqrt(var), 0, 1)))
        return simulated[size]

    def first_size(rank: int) -> int:
        upper = 1
        while sorted_bounds(upper)[rank - 1] < target:
            upper *= 2
        low, high = upper // 2 + 1, upper
        while low < high:
            middle = (low + high) // 2
            if sorted_bounds(middle)[rank - 1] < target:
                low = middle + 1
            else:
                high = middle
        return high

    size, low, high = first_size(ranks[0]), first_size(ranks[2]), first_size(ranks[1])
    return {"test_size": size, "low": low, "high": high, "evaluated": len(simulated)}


def compare_plans(draws: int, seeds: range) -> None:
    """Ours and the references on the same seeds, interleaved; one table row.

    Times are CPU seconds of this process (single-threaded work), which other processes on a
    shared machine disturb less than wall time.
    """
    ours_seconds = reference_seconds = multinomial_seconds = 0.0
    agree = evaluated_ours = evaluated_reference = 0
    sizes_ours, sizes_reference = [], []
    for seed in seeds:
        plan, seconds = timed(certification_sample_size, CONFUSION, PLAN_TARGET, draws=draws,
                              rng=seed, clock=time.process_time)
        ours_seconds += seconds
        reference, seconds = timed(reference_plan, CONFUSION, PLAN_TARGET, draws=draws,
                                   seed=seed, clock=time.process_time)
        reference_seconds += seconds
        multinomial_seconds += timed(reference_plan, CONFUSION, PLAN_TARGET, draws=draws,
                                     seed=seed, multinomial=True, clock=time.process_time)[1]
        spread = plan.test_size_interval
        # within Monte Carlo error: each size inside the other's 95% order-statistic interval
        agree += (spread.low <= reference["test_size"] <= spread.high
                  and reference["low"] <= plan.test_size <= reference["high"])
        evaluated_ours += plan.curve.sizes.size
        evaluated_reference += int(reference["evaluated"])
        sizes_ours.append(plan.test_size)
        sizes_reference.append(int(reference["test_size"]))
    runs = len(seeds)
    per_size = (ours_seconds / evaluated_ours) / (reference_seconds / evaluated_reference)
    print(f"| {draws:,} | {runs} | {ours_seconds / runs * 1e3:.1f} | "
          f"{reference_seconds / runs * 1e3:.1f} | {ours_seconds / reference_seconds:.2f} | "
          f"{per_size:.2f} | "
          f"{multinomial_seconds / runs * 1e3:.1f} | "
          f"{ours_seconds / multinomial_seconds:.2f} | "
          f"{evaluated_ours / runs:.1f} / {evaluated_reference / runs:.1f} | "
          f"{np.mean(sizes_ours):.0f} / {np.mean(sizes_reference):.0f} | "
          f"{difference_in_se(sizes_ours, sizes_reference):+.2f} | {agree} of {runs} |")


def compare_batched(samples: int, interval: str, capped: bool) -> None:
    """`plan_sizes` on ``samples`` labelled samples beside a loop of
    `certification_sample_size`, one call per sample, on the same seeds; one table row.

    The samples (500 documents each, of the population of `CONFUSION`'s proportions) sit
    around the target: some are not attempted, some are unreachable. ``capped``: every other
    sample's search is capped at 256 documents (as a budget caps it). CPU seconds.
    """
    gen = np.random.default_rng(samples)
    counts = gen.multinomial(500, np.array(CONFUSION) / sum(CONFUSION), size=samples)
    seeds = gen.integers(2**63, size=samples, dtype=np.int64)
    caps = np.where(np.arange(samples) % 2 == 1, 256, 10_000_000) if capped else \
        np.full(samples, 10_000_000)
    found, batched = timed(plan_sizes, counts, PLAN_TARGET, seeds=seeds, interval=interval,
                           max_test_size=caps, clock=time.process_time)
    plans, looped = timed(lambda: [
        certification_sample_size(row.tolist(), PLAN_TARGET, interval=interval, rng=int(seed),
                                  max_test_size=int(cap), method="monte-carlo").test_size
        for row, seed, cap in zip(counts, seeds, caps, strict=True)], clock=time.process_time)
    expected = np.array([math.nan if size is None else size for size in plans])
    same = np.array_equal(found.test_size, expected, equal_nan=True)
    print(f"| {interval} | {samples} | {'every other at 256' if capped else 'none'} | "
          f"{int(found.planned.sum())} | {looped:.2f} | {batched:.2f} | {looped / batched:.2f} | "
          f"{'yes' if same else 'NO'} |")


def difference_in_se(ours: list[int], theirs: list[int]) -> float:
    """Difference of the mean planned sizes over its standard error (independent streams)."""
    se = math.sqrt(np.var(ours, ddof=1) / len(ours) + np.var(theirs, ddof=1) / len(theirs))
    return float((np.mean(ours) - np.mean(theirs)) / se)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1_000_000)
    parser.add_argument("--loop-draws", type=int, default=20_000)
    parser.add_argument("--plans", type=int, default=10,
                        help="seeds per draws setting in the plan comparison")
    parser.add_argument("--samples", type=int, default=200,
                        help="labelled samples in the batched planner's comparison")
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

    print(f"\n# certification_sample_size({CONFUSION}, {PLAN_TARGET}) beside reference_plan "
          "(plain numpy Algorithm 2 and its Monte Carlo interval), same seeds, interleaved; "
          "mean CPU ms per plan; ratio = ours / reference; the multinomial reference draws each "
          "test set with numpy's multinomial; difference / SE = difference of the mean sizes "
          "over its Monte Carlo standard error (seed to seed); agree = plans whose sizes each "
          "lie inside the other's 95% Monte Carlo interval")
    print("| draws | seeds | ours (ms) | reference (ms) | ratio | ratio per size simulated | "
          "multinomial ref. (ms) | ratio | sizes simulated (ours / ref.) | "
          "mean size (ours / ref.) | difference / SE | agree |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---|")
    # first calls outside the timings: lazy imports and kept interval ranks
    certification_sample_size(CONFUSION, PLAN_TARGET, draws=1_000, rng=0)
    reference_plan(CONFUSION, PLAN_TARGET, draws=1_000, seed=0)
    for draws, runs in ((1_000, 4 * args.plans), (10_000, args.plans)):
        compare_plans(draws, range(runs))

    print(f"\n# plan_sizes on labelled samples of {CONFUSION}'s proportions (500 documents "
          f"each), target {PLAN_TARGET}, 1,000 draws, beside certification_sample_size once "
          "per sample on the same seeds; CPU seconds; ratio = loop / batched; same = identical "
          "sizes, sample by sample")
    print("| interval | samples | cap | planned | loop (s) | batched (s) | ratio | same |")
    print("|---|---:|---|---:|---:|---:|---:|---|")
    for interval in ("delta", "jaccard-clopper-pearson"):
        for capped in (False, True):
            compare_batched(args.samples, interval, capped)


if __name__ == "__main__":
    main()
