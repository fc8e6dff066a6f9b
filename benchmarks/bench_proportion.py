"""Throughput of `proportion_ci` (intervals per second) beside statsmodels, in one run.

For each method: ours vectorized over 10^6 random (x, n) pairs (n uniform on 1..1000), statsmodels'
`proportion_confint` on the same arrays where it has the method, and statsmodels called once per
pair in a Python loop (timed on a subsample and reported as a rate). Ratios are ours / theirs.

Run: ``python benchmarks/bench_proportion.py [--pairs N] [--loop-pairs M] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable

import numpy as np

from estimators import PROPORTION_METHODS, proportion_ci

STATSMODELS_NAMES = {
    "wald": "normal",
    "wilson": "wilson",
    "agresti-coull": "agresti_coull",
    "clopper-pearson": "beta",
    "jeffreys": "jeffreys",
}


def best_time(func: Callable[[], object], repeat: int) -> float:
    """Minimum wall time of ``repeat`` calls (the least disturbed run)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--loop-pairs", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20261121)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    n = rng.integers(1, 1001, size=args.pairs)
    x = rng.integers(0, n + 1)
    try:
        from statsmodels import __version__ as sm_version
        from statsmodels.stats.proportion import proportion_confint
    except ImportError:
        proportion_confint, sm_version = None, "not installed"

    print(f"# proportion_ci throughput, {args.pairs:,} pairs, n ~ U{{1..1000}}; "
          f"python {platform.python_version()}, numpy {np.__version__}, statsmodels {sm_version}")
    columns = ("ours /s", "sm vec /s", "sm loop /s")
    print(f"{'method':<16}" + "".join(f"{c:>14}" for c in columns) + f"{'vs vec':>9}{'vs loop':>9}")
    for method in PROPORTION_METHODS:
        ours = args.pairs / best_time(lambda m=method: proportion_ci(x, n, method=m), args.repeat)
        vec = loop = float("nan")
        sm_name = STATSMODELS_NAMES.get(method)
        if proportion_confint is not None and sm_name is not None:
            vec = args.pairs / best_time(
                lambda s=sm_name: proportion_confint(x, n, method=s), args.repeat)
            head = slice(args.loop_pairs)
            pairs = list(zip(x[head].tolist(), n[head].tolist(), strict=True))

            def per_pair(s: str = sm_name, pairs: list[tuple[int, int]] = pairs) -> None:
                for k, m in pairs:
                    proportion_confint(k, m, method=s)

            loop = args.loop_pairs / best_time(per_pair, 1)
        rates = f"{ours:>14.3g}{vec:>14.3g}{loop:>14.3g}"
        print(f"{method:<16}{rates}{ours / vec:>9.2f}{ours / loop:>9.0f}")


if __name__ == "__main__":
    main()
