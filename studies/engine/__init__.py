"""The study engine: declare a study, plan and run it, store and measure its results.

A study declares its ADEMP as a `Study` (`studies.engine.design`); `run` (or `stream`, which
yields its progress, each finished study and the results as events) plans the cells of
its grid (`planning`), runs them as tasks (`tasks`) in process, in local processes or on a
Dask cluster (`execution`), stores each as it finishes in a SQLite run store (`store`), with
per-cell random streams (`seeding`) and the run's provenance (`provenance`); performance
measures and their Monte Carlo standard errors come from `performance`, their means over
independent cells from `means`; results are read back with `results_from_store` or, all a
report needs at once, `read_run` (`reading`) as `RunResults`, whose ``to_frame()`` is a tidy
pandas frame (`results`) and ``estimates_frame()`` the per-replicate estimates
(`replicates`). `simple` writes a study one replicate at a time. A study's claims,
the findings that must hold, are judged by `evaluate_claims` (`claims`) with stated
false-alarm rates and power; `assertions` holds the pytest helpers with MCSE-derived
tolerances.

The engine knows no particular study: the suite's studies live in `studies.suite`.
"""

from studies.engine.assertions import assert_coverage, assert_measure
from studies.engine.claims import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_RUN,
    RESOLUTIONS,
    STATUSES,
    Claim,
    Verdict,
    evaluate_claims,
)
from studies.engine.design import (
    Figure,
    Grid,
    GroupSummary,
    Method,
    Params,
    Recommendation,
    Sample,
    Study,
)
from studies.engine.identity import RunIdentity, RunProvenance
from studies.engine.means import mean_over_cells, mean_over_cells_frame
from studies.engine.performance import (
    MEASURES,
    Estimates,
    Measure,
    Performance,
    exact_performance,
    performance,
)
from studies.engine.planning import PATHS
from studies.engine.reading import (
    RunHead,
    RunState,
    StoredRun,
    read_head,
    read_run,
    results_from_store,
    run_state,
)
from studies.engine.results import CellResult, PackedGroup, RunResults, StudyResult
from studies.engine.runner import Progress, RunDone, StudyDone, run, stream

__all__ = [
    "FAILS",
    "HOLDS",
    "INCONCLUSIVE",
    "MEASURES",
    "NOT_RUN",
    "PATHS",
    "RESOLUTIONS",
    "STATUSES",
    "CellResult",
    "Claim",
    "Estimates",
    "Figure",
    "Grid",
    "GroupSummary",
    "Measure",
    "Method",
    "PackedGroup",
    "Params",
    "Performance",
    "Progress",
    "Recommendation",
    "RunDone",
    "RunHead",
    "RunIdentity",
    "RunProvenance",
    "RunResults",
    "RunState",
    "Sample",
    "StoredRun",
    "Study",
    "StudyDone",
    "StudyResult",
    "Verdict",
    "assert_coverage",
    "assert_measure",
    "evaluate_claims",
    "exact_performance",
    "mean_over_cells",
    "mean_over_cells_frame",
    "performance",
    "read_head",
    "read_run",
    "results_from_store",
    "run",
    "run_state",
    "stream",
]
