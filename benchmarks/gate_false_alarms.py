"""False alarms and power of the regression gate on the quick suite (`study compare`).

Runs the Monte Carlo studies of the quick suite (every Monte Carlo value the gate compares;
the exact studies do not depend on the seed) with ``--seeds`` root seeds other than the
baseline's, compares each run with the blessed baseline as ``tox -e regression`` does, and
prints per seed the largest |z| and whether it crossed ``k``; then the gate's power from the
baseline: per study and measure, the shift of a Monte Carlo value flagged with probability
0.9 by a run with another seed (the median and largest over the study's values).

The gate states a family-wise false-alarm rate of 0.001 per run, so over 20 seeds no crossing
is expected (probability about 0.98).

Run: ``python benchmarks/gate_false_alarms.py [--seeds 20] [--workers 2] [--baseline DIR]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path

from studies.engine import run
from studies.report.baseline import load_results
from studies.report.compare import compare
from studies.suite import get_study

MONTE_CARLO = ("bias_error_rate", "bias_sequential", "coverage_f1", "mean_bias")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--baseline", type=Path, default=Path("reports/baseline"))
    args = parser.parse_args()
    full = load_results(args.baseline)
    rows = full.rows[full.rows["study"].isin(MONTE_CARLO)]
    baseline = dataclasses.replace(
        full, rows=rows, verdicts=full.verdicts[full.verdicts["study"].isin(MONTE_CARLO)],
        studies={k: v for k, v in full.studies.items() if k in MONTE_CARLO})
    studies = [get_study(name) for name in MONTE_CARLO]
    largest = []
    with tempfile.TemporaryDirectory() as scratch:
        for seed in range(1, args.seeds + 1):
            start = time.perf_counter()
            out = Path(scratch) / f"seed-{seed}"
            run(studies, rng=seed, workers=args.workers, out=out)
            comparison = compare(baseline, load_results(out))
            largest.append(comparison.largest_z)
            print(f"seed {seed:2d}: largest |z| {largest[-1]:.3f} of k = {comparison.k:.3f} "
                  f"over {comparison.monte_carlo} Monte Carlo values; status "
                  f"{comparison.status()} ({time.perf_counter() - start:.0f} s)", flush=True)
    crossed = sum(z > comparison.k for z in largest)
    print(f"largest |z| over {args.seeds} seeds: {max(largest):.3f}; seeds crossing k: "
          f"{crossed}")
    print("power: shift flagged with probability 0.9 by a run with another seed")
    print(comparison.power.to_string(index=False, float_format=lambda v: f"{v:.4f}"))


if __name__ == "__main__":
    main()
