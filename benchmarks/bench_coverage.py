"""Exact coverage of a binomial interval over an (n, p) grid: three ways, timed in one run.

For one `proportion_ci` method, level and side, the coverage of every cell of the grid
``n = 1..N`` x ``p = (i - 1/2) / P`` (``i = 1..P``) computed

* **dense** (the straightforward reference): the binomial pmf matrix of each ``n``
  (``scipy.stats.binom.pmf``), the mask ``low(x) <= p <= high(x)`` and a sum over all
  ``n + 1`` counts per cell;
* **engine**: what the study engine does (`studies.engine.performance.exact_measures`): the
  pmf matrix in log space, checked and normalised once, the covering counts of each cell as
  runs found by binary search on the bounds, and the coverage as differences of cumulative
  probabilities; the expected width from the same matrix;
* **cdf**: coverage alone, without the pmf: the covering run ``a..b`` of each cell by binary
  search, then ``F(b) - F(a - 1)`` from two ``scipy.special.bdtr`` values (both ends of every
  built-in interval are non-decreasing in ``x``; the engine checks this, this kernel assumes
  it).

The interval bounds are computed once per ``n`` outside the timed kernels. The table gives
cells per second, each speed-up over the dense reference, and the largest difference from it
in any cell. `measure` and `markdown` let another script put the table in
``benchmarks/RESULTS.md``.

Run: ``python benchmarks/bench_coverage.py [--n-max N] [--points P] [--method M]``.
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import special, stats

from estimators import proportion_ci
from studies.engine.performance import Estimates, OutcomeLaw, exact_measures
from studies.suite.binomial_coverage import enumerate_outcomes

__all__ = ["markdown", "measure"]

Bounds = tuple[np.ndarray, np.ndarray]


def _dense(n: int, p: np.ndarray, bounds: Bounds) -> np.ndarray:
    low, high = bounds
    pmf = stats.binom.pmf(np.arange(n + 1), n, p[:, None])
    inside = (low <= p[:, None]) & (p[:, None] <= high)
    covered: np.ndarray = np.sum(pmf * inside, axis=1)
    return covered


def _engine(n: int, p: np.ndarray, bounds: Bounds) -> np.ndarray:
    low, high = bounds
    sample = enumerate_outcomes([{"n": n, "p": q} for q in p.tolist()])
    law = OutcomeLaw(sample.probability)
    found = exact_measures(Estimates(low=low, high=high), p, law,
                           measures=("coverage", "width"))
    return found["coverage"]


def _cdf(n: int, p: np.ndarray, bounds: Bounds) -> np.ndarray:
    low, high = bounds
    last = np.searchsorted(low, p, side="right") - 1  # the largest x with low(x) <= p
    first = np.searchsorted(high, p, side="left")  # the smallest x with high(x) >= p
    below = np.where(first > 0, special.bdtr(np.maximum(first - 1, 0), n, p), 0.0)
    covered: np.ndarray = np.where(last >= first, special.bdtr(last, n, p) - below, 0.0)
    return covered


KERNELS: dict[str, Callable[[int, np.ndarray, Bounds], np.ndarray]] = {
    "dense": _dense, "engine": _engine, "cdf": _cdf}


def measure(n_max: int = 1000, points: int = 1000, method: str = "wilson",
            confidence_level: float = 0.95, alternative: str = "two-sided",
            n_step: int = 1) -> list[dict[str, Any]]:
    """Cells per second of each kernel on the grid, and its largest difference from dense.

    Parameters
    ----------
    n_max, points : int
        The grid: ``n = 1, 1 + n_step, ..., <= n_max`` and ``points`` values of ``p``.
    method, confidence_level, alternative
        The interval (`estimators.proportion_ci`).
    n_step : int
        Step of ``n`` (1: every ``n``).

    Returns
    -------
    list of dict
        One row per kernel: ``kernel``, ``cells``, ``seconds``, ``cells_per_second``,
        ``speedup`` (over dense) and ``max_difference`` (from dense, over every cell).
    """
    p = (np.arange(1, points + 1) - 0.5) / points
    ns = range(1, n_max + 1, n_step)
    bounds = {n: tuple(np.asarray(b, dtype=np.float64) for b in proportion_ci(
        np.arange(n + 1), n, method=method, confidence_level=confidence_level,
        alternative=alternative)) for n in ns}
    seconds = dict.fromkeys(KERNELS, 0.0)
    difference = dict.fromkeys(KERNELS, 0.0)
    for n in ns:
        found = {}
        for name, kernel in KERNELS.items():  # interleaved, so all see the same load
            start = time.perf_counter()
            found[name] = kernel(n, p, bounds[n])  # type: ignore[arg-type]
            seconds[name] += time.perf_counter() - start
        for name in KERNELS:
            difference[name] = max(difference[name],
                                   float(np.max(np.abs(found[name] - found["dense"]))))
    cells = len(ns) * points
    return [{"kernel": name, "cells": cells, "seconds": seconds[name],
             "cells_per_second": cells / seconds[name],
             "speedup": seconds["dense"] / seconds[name],
             "max_difference": difference[name]} for name in KERNELS]


def markdown(rows: list[dict[str, Any]], title: str = "") -> str:
    """The rows as a Markdown table."""
    lines = [title, ""] if title else []
    lines += ["| kernel | cells | seconds | cells/s | speed-up over dense | max difference |",
              "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['kernel']} | {r['cells']:,} | {r['seconds']:.2f} | "
              f"{r['cells_per_second']:,.0f} | {r['speedup']:.1f}x | {r['max_difference']:.1e} |"
              for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-max", type=int, default=1000)
    parser.add_argument("--points", type=int, default=1000)
    parser.add_argument("--n-step", type=int, default=1)
    parser.add_argument("--method", default="wilson")
    args = parser.parse_args()
    rows = measure(args.n_max, args.points, args.method, n_step=args.n_step)
    print(markdown(rows, f"Coverage of {args.method} (95%, two-sided), n = 1..{args.n_max} x "
                         f"{args.points} p; python {platform.python_version()}, "
                         f"numpy {np.__version__}"))


if __name__ == "__main__":
    main()
