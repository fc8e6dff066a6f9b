"""The power-calibration studies' quick claims catch a planner broken on purpose.

A planner that sizes test sets 30% too small, or for a power 5 points below the one asked
for, must turn the quick run's exit status to 1: in `power_calibration` through its claim on
the cells where the labelled sample pins the population down (Monte Carlo, with the power to
detect a pass rate 5 points below nominal), in `power_calibration_exact` through its accuracy
claim (exact: the broken plans' pass rates fall below 0.93 without Monte Carlo error). Runs
with one worker run in this process, so the patched planner is the one the methods call.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from typing import Any

import pytest

from studies.cli.main import main

# The claim of each study that a broken planner fails on the quick grid.
CAUGHT_BY = {"power_calibration": "pinned-down-plans-deliver-their-power",
             "power_calibration_exact": "accuracy-plans-deliver-their-power"}


def _sizes_cut(planner: Callable[..., Any]) -> Callable[..., Any]:
    """The planner with every planned test size cut by 30%."""
    def cut(*args: Any, **kwargs: Any) -> Any:
        plan = planner(*args, **kwargs)
        if plan.test_size is None:
            return plan
        return dataclasses.replace(plan, test_size=max(1, round(0.7 * plan.test_size)))
    return cut


def _power_short(planner: Callable[..., Any]) -> Callable[..., Any]:
    """The planner sizing every test set for a power 5 points below the one asked for."""
    def short(*args: Any, **kwargs: Any) -> Any:
        return planner(*args, **{**kwargs, "power": kwargs["power"] - 0.05})
    return short


# One break per study (each quick run costs about 40 s of CPU): the Monte Carlo study with its
# sizes cut, the exact one planned for a power 5 points short.
@pytest.mark.slow
@pytest.mark.parametrize(("name", "breaking"), [("power_calibration", _sizes_cut),
                                                ("power_calibration_exact", _power_short)])
def test_a_planner_broken_on_purpose_fails_the_quick_run(name, breaking, tmp_path, monkeypatch,
                                                         capsys):
    module = importlib.import_module(f"studies.suite.{name}")
    # the verdicts and the exit status come before the tables and the report: skip drawing them
    monkeypatch.setattr("studies.report.publication.write_tables", lambda *args, **kwargs: {})
    monkeypatch.setattr("studies.report.publication.write_report", lambda *args, **kwargs: "")
    monkeypatch.setattr(module, "certification_sample_size",
                        breaking(module.certification_sample_size))
    if hasattr(module, "_PLANNED"):  # plans kept from an unbroken run of the same cells
        monkeypatch.setattr(module, "_PLANNED", {})
    assert main(["study", "run", name, "--grid", "quick", "--seed", "20190", "--workers", "1",
                 "--out", str(tmp_path / "run")]) == 1
    failed = [line for line in capsys.readouterr().out.splitlines()
              if line.startswith("FAILS")]
    assert failed and all(line.startswith(f"FAILS {name} {CAUGHT_BY[name]}:")
                          for line in failed), failed
