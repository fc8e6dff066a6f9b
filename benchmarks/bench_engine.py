"""Timings of the study engine (issue 5 acceptance figures).

Measures, in one run: the per-cell overhead of the engine in process (a trivial study), the
throughput of 1 and 2 local worker processes on a CPU-bound study, the Monte Carlo path of the
binomial coverage example beside the random-number floor (drawing its binomial samples only),
and the exact path beside the Monte Carlo path at 10^5 replicates per cell on the same grid.

Run: ``python benchmarks/bench_engine.py``.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from studies.design import Grid, Sample, Study
from studies.engine import CellTask, run, run_cell
from studies.performance import Estimates
from studies.registry import get_study


def _trivial_generate(params, n_replicates, *, rng=None):
    return Sample(data=np.random.default_rng(rng).random(n_replicates), size=n_replicates)


def _identity(data, params):
    return Estimates(estimate=data)


TRIVIAL = Study(name="trivial", version="1",
                grids={"quick": Grid({"i": list(range(400))}, n_replicates=10),
                       "full": Grid({"i": [0]}, n_replicates=10)},
                truth=lambda params: 0.5, generate=_trivial_generate,
                methods={"identity": _identity}, measures=("bias", "empirical_se", "mse"))


def per_cell_overhead() -> float:
    start = time.perf_counter()
    run([TRIVIAL], rng=1, workers=1)
    return (time.perf_counter() - start) / 400


def worker_speedup() -> tuple[float, float]:
    cpu = Grid({"distribution": ["normal", "exponential", "lognormal"], "n": [50, 100, 200, 400]},
               n_replicates=20_000)
    times = []
    for workers in (1, 2):
        start = time.perf_counter()
        run(["mean_bias"], grid=cpu, rng=1, workers=workers)
        times.append(time.perf_counter() - start)
    return times[0], times[1]


def mc_vs_floor(grid: Grid) -> tuple[float, float]:
    study = get_study("binomial_coverage")
    cells = grid.cells()
    start = time.perf_counter()
    for i, params in enumerate(cells):
        run_cell(CellTask(study, params, i, grid.n_replicates, 1, "monte-carlo"))
    mc = time.perf_counter() - start
    rng = np.random.default_rng(1)
    start = time.perf_counter()
    for params in cells:
        rng.binomial(params["n"], params["p"], size=grid.n_replicates)
    return mc, time.perf_counter() - start


def exact_time(grid: Grid) -> float:
    study = get_study("binomial_coverage")
    start = time.perf_counter()
    for i, params in enumerate(grid.cells()):
        run_cell(CellTask(study, params, i, grid.n_replicates, 1, "exact"))
    return time.perf_counter() - start


def main() -> None:
    overhead = per_cell_overhead()
    print(f"per-cell overhead in process: {overhead * 1e3:.2f} ms (target < 5 ms)")
    one, two = worker_speedup()
    print(f"CPU-bound mean_bias, 12 cells x 20,000 replicates: 1 worker {one:.2f} s, "
          f"2 workers {two:.2f} s, speed-up {one / two:.2f}x (target >= 1.7x)")
    grid = dataclasses.replace(get_study("binomial_coverage").grids["quick"],
                               n_replicates=100_000)
    mc, floor = mc_vs_floor(grid)
    print(f"binomial coverage MC path, 12 cells x 10^5: {mc:.3f} s; drawing only {floor:.3f} s; "
          f"MC speed / floor speed = {floor / mc:.2f} (target >= 0.5)")
    exact = exact_time(grid)
    print(f"exact path on the same grid: {exact * 1e3:.1f} ms; {mc / exact:.0f}x faster than "
          "MC at 10^5 replicates (target >= 100x)")


if __name__ == "__main__":
    main()
