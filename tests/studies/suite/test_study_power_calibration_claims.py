"""The power-calibration studies' quick claims catch a planner broken on purpose.

A planner that sizes test sets 30% too small, or for a power 5 points below the one asked
for, must turn the quick run's exit status to 1: in `power_calibration` through its claim on
the cells where the labelled sample pins the population down (Monte Carlo, with the power to
detect a pass rate 5 points below nominal), in `power_calibration_exact` through its accuracy
claim (exact: the broken plans' pass rates fall below 0.93 without Monte Carlo error). Runs
with one worker run in this process, so the patched planner is the one the methods call.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from studies.cli.main import main

# The claim of each study that a broken planner fails on the quick grid.
CAUGHT_BY = {"power_calibration": "pinned-down-plans-deliver-their-power",
             "power_calibration_exact": "accuracy-plans-deliver-their-power"}


def _sizes_cut(planner: Callable[..., Any]) -> Callable[..., Any]:
    """The study's planner with every planned test size cut by 30% (nan: no plan, kept)."""
    def cut(*args: Any, **kwargs: Any) -> Any:
        return np.maximum(1.0, np.round(0.7 * planner(*args, **kwargs)))
    return cut


def _power_short(power: float) -> float:
    """The study's plans sized for a power 5 points below the one asked for."""
    return power - 0.05


# One break per study: the Monte Carlo study with its sizes cut (its planner searches a cell's
# samples at once, `_plan_sizes`), the exact one planned for a power 5 points short (the power
# its searches aim at; the claims keep the nominal 0.93).
@pytest.mark.slow
@pytest.mark.parametrize(("name", "planner", "breaking"), [
    ("power_calibration", "_plan_sizes", _sizes_cut),
    ("power_calibration_exact", "POWER", _power_short)])
def test_a_planner_broken_on_purpose_fails_the_quick_run(name, planner, breaking, tmp_path,
                                                         monkeypatch, capsys):
    module = importlib.import_module(f"studies.suite.{name}")
    # the verdicts and the exit status come before the tables and the report: skip drawing them
    monkeypatch.setattr("studies.pipeline.publication.write_tables",
                        lambda found, *args, **kwargs: {name: [] for name in found})
    monkeypatch.setattr("studies.pipeline.publication.write_report", lambda *args, **kwargs: "")
    monkeypatch.setattr(module, planner, breaking(getattr(module, planner)))
    if hasattr(module, "_PLANNED"):  # plans kept from an unbroken run of the same cells
        monkeypatch.setattr(module, "_PLANNED", {})
    assert main(["study", "run", name, "--grid", "quick", "--seed", "20190", "--workers", "1",
                 "--out", str(tmp_path / "run")]) == 1
    failed = [line for line in capsys.readouterr().out.splitlines()
              if line.startswith("FAILS")]
    assert failed and all(line.startswith(f"FAILS {name} {CAUGHT_BY[name]}:")
                          for line in failed), failed
