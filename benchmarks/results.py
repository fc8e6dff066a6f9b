"""Every benchmark in one run, written as one table of results: ``benchmarks/RESULTS.md``.

Sections, each measured in this run (ratios are between timings of the same run):

* **Kernels beside their peers**: `proportion_ci` per method beside statsmodels'
  vectorized ``proportion_confint``, a per-pair statsmodels loop and, for the beta-quantile
  methods, the bare ``betaincinv`` calls (`bench_proportion`);
* **Exact coverage**: the coverage of one interval over the (n, p) grid of
  ``coverage_proportion`` by a dense pmf sum (the straightforward reference), by the study
  engine, and by two binomial CDF values per cell (`bench_coverage`);
* **Start-up** of the ``evalcert`` command (`bench_startup`);
* **Certification power curves**: the exact power at every test size for each outer law
  of the trials, beside the whole urn it replaced (`bench_certification.table_curve`);
* **Parallel runs**: the quick suite and one Monte Carlo full grid on 1 and 2 local workers
  and on a 2-worker Dask cluster (`bench_parallel`; ``--no-parallel`` leaves it out);
* **Full grids** named with ``--full`` (say ``coverage_proportion``), on 1 and 2 workers.

Run: ``python benchmarks/results.py [--out FILE] [--small] [--no-parallel] [--full NAME ...]``
(``tox -e bench``). Timings live here, never in the tests.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_certification
import bench_coverage
import bench_parallel
import bench_proportion
import bench_startup


def _header(started: float) -> str:
    import numpy
    import scipy

    return "\n".join([
        "# Benchmark results",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `python benchmarks/results.py` "
        f"({time.perf_counter() - started:.0f} s) on {platform.machine()}, "
        f"{os.cpu_count()} cores ({platform.processor() or 'processor not reported'}), "
        f"{platform.system()} {platform.release()}; Python {platform.python_version()}, "
        f"numpy {numpy.__version__}, scipy {scipy.__version__}. Each ratio compares "
        "timings taken in this one run; the machine may have been shared (the parallel "
        "table shows the load other processes put on it).",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("RESULTS.md"))
    parser.add_argument("--small", action="store_true",
                        help="smaller inputs (10^5 pairs, every 10th n, 3 start-up runs)")
    parser.add_argument("--no-parallel", action="store_true",
                        help="leave out the parallel runs (about 25 minutes)")
    parser.add_argument("--full", nargs="*", default=[], metavar="NAME",
                        help="studies whose full grid is timed on 1 and 2 workers")
    args = parser.parse_args()
    started = time.perf_counter()
    sections = []

    pairs = 100_000 if args.small else 1_000_000
    rows = bench_proportion.measure(pairs=pairs, clock="cpu")
    sections.append(f"## `proportion_ci` beside statsmodels\n\n{pairs:,} random (x, n) pairs, "
                    "n uniform on 1..1000; intervals per second (CPU time, best of 3).\n\n"
                    + bench_proportion.markdown(rows))

    step = 10 if args.small else 1
    rows = bench_coverage.measure(n_step=step)
    sections.append(bench_coverage.markdown(
        rows, f"## Exact coverage over the (n, p) grid\n\nWilson, 95% two-sided, "
              f"n = 1..1000 (step {step}) x 1000 values of p: the dense pmf sum, the study "
              "engine (coverage and width) and two binomial CDF values per cell (coverage "
              "only)."))

    rows = bench_startup.measure(runs=3 if args.small else 10)
    sections.append("## Start-up of `evalcert`\n\n" + bench_startup.markdown(rows))

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        bench_certification.table_curve()
    sections.append("## Certification power curves\n\n`Conditional.curve` (the exact power "
                    "of a certification test at every size up to 2,000 and 20,000; the trials "
                    "D follow the outer law, successes among them Binomial(D, 0.85), pass when "
                    "the Clopper-Pearson lower bound exceeds 0.8) beside the whole urn it "
                    "replaced (a new array over every count each size); best of 3 at 2,000 "
                    "sizes, one run at 20,000.\n\n" + printed.getvalue().strip())

    if not args.no_parallel:
        rows = bench_parallel.measure()
        sections.append("## Parallel runs\n\n" + bench_parallel.markdown(rows))
    for name in args.full:
        rows = bench_parallel.measure(quick=(), mc=name, mc_grid="full",
                                      backends=("1 worker", "2 workers"))
        sections.append(f"## Full grid of `{name}`\n\n" + bench_parallel.markdown(rows))

    text = "\n\n".join([_header(started), *sections]) + "\n"
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
