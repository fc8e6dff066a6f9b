"""What each cache inside a study saves: the study's quick grid with and without it.

A study keeps values it computes more than once (populations, thresholds, pmfs, plans) in
module-level caches. Each arm runs one study's quick grid as the suite does (run, judge,
tables and page: `studies.pipeline.run_suite` on 1 worker, so every call runs in the one
process whose cache is switched off), in a fresh process, with one cache switched off:

* a ``functools`` cache is replaced, in every loaded module that holds it, by the function
  it wraps;
* a dictionary cache (``_PLANNED``, ``_KEPT``) is replaced by one that never finds a key, so
  each value is computed again where it was read from the cache;
* ``a+b`` switches off both (caches that may stand in for each other).

The study's results table and claims of every arm must be byte-identical to those of the
arm with every cache (checked: a cache may save time, never change a value). The arms take
turns (``--rounds`` times); an arm over ``--timeout`` seconds is stopped and shown as at
least that long. Run: ``python benchmarks/bench_study_caches.py [--rounds 1] [--only
STUDY]``. Timings live here, never in the tests.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SEED = 20190
# Each study and the caches of its module (or of the modules it uses) that its runs go
# through; `claim_false_alarm` serves every study's judging. The caches that saved nothing
# here were removed (benchmarks/RESULTS.md, "Caches inside studies").
CACHES: dict[str, tuple[str, ...]] = {
    "gain_budget": ("studies.suite.gain_budget.population",),
    "planning_stratified": tuple(f"studies.suite.planning_stratified.{name}" for name in (
        "plan", "_lower", "_upper", "_beta_binomial")),
    "stratified_vs_pooled": ("studies.suite.stratified_vs_pooled._evaluations",
                             "studies.suite.stratified_vs_pooled._configuration"),
    "power_calibration": ("studies.suite.power_calibration._PLANNED",
                          "studies.suite.power_calibration._KEPT",
                          "studies.suite.power_calibration._PLANNED+"
                          "studies.suite.power_calibration._KEPT"),
    "power_calibration_exact": ("studies.suite.power_calibration_exact._PLANNED",),
    "coverage_proportion": ("studies.suite.coverage_proportion._binomtest",),
    "studies.suite.stopping_policies:LEARNED": (
        "studies.suite.stopping_policies._learned_threshold",),
    "bias_f1": ("studies.suite.registry.claim_false_alarm",),
}
# Studies whose quick grid runs one method, so that caches shared by a cell's methods are
# never read there: their arms run these cells of the full grid instead, in one round.
FULL_CELLS: dict[str, str] = {
    "power_calibration": "prevalence == 0.15 and f1 == 0.85 and r == 1000 "
                         "and source == 'unbiased'"}
AS_IS = "as is"


class _Forgetful(dict):  # type: ignore[type-arg]
    """A dictionary cache switched off: it never holds a key, so every value is recomputed."""

    def __contains__(self, key: object) -> bool:
        return False

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self[key] = default
        return default


def _switch_off(qualified: str) -> None:
    """Replace the cache ``module.name`` wherever a loaded module holds it."""
    module_name, name = qualified.rsplit(".", 1)
    module = importlib.import_module(module_name)
    import studies.suite  # noqa: F401  (every study module loaded, so each holder is found)

    cached = getattr(module, name)
    if isinstance(cached, dict):
        replacement: Any = _Forgetful()
    else:
        replacement = cached.__wrapped__
    for holder in list(sys.modules.values()):
        for attribute, value in list(vars(holder).items()):
            if value is cached:
                setattr(holder, attribute, replacement)


def one_arm(study: str, arm: str) -> dict[str, object]:
    """The study's quick grid (or its `FULL_CELLS`) in this process with ``arm``'s cache
    off: seconds, digest."""
    if arm != AS_IS:
        for cache in arm.split("+"):
            _switch_off(cache)
    from studies.pipeline import run_suite
    from studies.suite import get_study

    grid: Any = "quick"
    if study in FULL_CELLS:
        grid = dataclasses.replace(get_study(study).grid("full"), where=FULL_CELLS[study],
                                   rounds=1)
    with tempfile.TemporaryDirectory() as directory:
        out = Path(directory) / "run"
        start = time.perf_counter()
        run_suite([study], grid=grid, out=out, rng=SEED, workers=1)
        seconds = time.perf_counter() - start
        digest = hashlib.sha256()
        for path in sorted(out.glob("*.csv")):
            digest.update(path.read_bytes())
    return {"seconds": seconds, "digest": digest.hexdigest()}


def _arm(study: str, arm: str, timeout: float) -> dict[str, object]:
    try:
        out = subprocess.run([sys.executable, __file__, "--study", study, "--arm", arm],
                             check=True, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"seconds": timeout, "digest": None, "stopped": True}
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def measure(studies: list[str], rounds: int, timeout: float) -> list[dict[str, Any]]:
    """Each study's arms, in turn, ``rounds`` times: a row per cache."""
    rows = []
    for study in studies:
        found: dict[str, list[dict[str, object]]] = {}
        for _ in range(rounds):
            for arm in (AS_IS, *CACHES[study]):
                found.setdefault(arm, []).append(_arm(study, arm, timeout))
        digests = {r["digest"] for r in found[AS_IS]}
        for arm in CACHES[study]:
            changed = {r["digest"] for r in found[arm] if r["digest"] is not None} - digests
            if changed:
                raise SystemExit(f"{arm} switched off changes {study}'s tables")
            rows.append({
                "study": study, "cache": arm,
                "with": statistics.median(float(r["seconds"]) for r in found[AS_IS]),
                "without": statistics.median(float(r["seconds"]) for r in found[arm]),
                "stopped": any(r.get("stopped") for r in found[arm])})
    return rows


def markdown(rows: list[dict[str, Any]], rounds: int, load: float) -> str:
    """A table: each cache's study time with it and without it."""
    lines = [f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `python "
             f"benchmarks/bench_study_caches.py` ({rounds} round(s), the arms in turn, each "
             f"in a fresh process on 1 worker; 1-minute load {load:.2f} as it started). "
             "Every arm's tables were byte-identical to those with every cache.", "",
             "| study (quick grid, or the full grid's cells named) | cache | with it (s) | "
             "without it (s) | saves (s) |",
             "|---|---|---:|---:|---:|"]
    for row in rows:
        where = f" ({FULL_CELLS[row['study']]})" if row["study"] in FULL_CELLS else ""
        over = ">= " if row["stopped"] else ""
        names = " + ".join(f"`{c.rsplit('.', 1)[-1]}`" for c in row["cache"].split("+"))
        lines.append(f"| {row['study']}{where} | {names} | "
                     f"{row['with']:.1f} | {over}{row['without']:.1f} | "
                     f"{over}{row['without'] - row['with']:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--only", action="append", choices=sorted(CACHES))
    parser.add_argument("--study", help=argparse.SUPPRESS)
    parser.add_argument("--arm", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.arm is not None:
        print(json.dumps(one_arm(args.study, args.arm)))
        return
    load = os.getloadavg()[0]
    print(markdown(measure(args.only or list(CACHES), args.rounds, args.timeout), args.rounds,
                   load))


if __name__ == "__main__":
    main()
