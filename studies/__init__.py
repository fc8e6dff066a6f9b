"""evalcert studies: simulation and exact-enumeration studies of the estimators.

``studies.run_suite(...)`` runs studies and publishes them (claims judged, tables, comparison
with a baseline, report): what ``evalcert study run`` does, from Python
(`studies.pipeline`). ``studies.summarise(frame, estimate=..., true=..., ...)``
measures anyone's simulation results (a tidy frame of estimates, as R's rsimsum takes) with
MCSEs and judges claims on them (`studies.engine.summary`). The rooms below: `engine`
(declare, plan, run, store, measure), `suite` (one module per study), `report` (tables, pages,
plots, compare), `pipeline` (run, judge, compare, report in one call), `cli`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["run_suite", "summarise"]


def __getattr__(name: str) -> Any:
    # imported on first use: `import studies.engine` must not load the report's plotting
    if name == "run_suite":
        from studies.pipeline.publication import run_suite

        return run_suite
    if name == "summarise":
        from studies.engine.summary import summarise

        return summarise
    raise AttributeError(f"module 'studies' has no attribute {name!r}")
