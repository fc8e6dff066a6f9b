"""The stopping-policies claim judged on the quick grid catches a policy that stops elsewhere.

``first-is-the-savings-reference`` is the claim the quick grid decides: first-within-budget's
saving against its own rule is exactly 0 and defined in every topic. A `first` that stops one
training step before its rule (where no test fits the budget) fails it, and the quick run then
exits 1; one that stops a within-budget step after its rule no longer holds it either.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from studies.cli.main import main
from studies.engine import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    CellResult,
    StudyResult,
    evaluate_claims,
    performance,
)
from studies.suite import claim_false_alarm
from studies.suite import stopping_policies as sp

CLAIM = "first-is-the-savings-reference"


def _early(cost, passed):
    """First, broken: one training step before the first within-budget step."""
    found = sp._within(cost, passed, 0)
    return np.where(found > 0, found - 1, -1)


def _late(cost, passed):
    """First, broken: one within-budget step after its rule (wait-1's stop)."""
    return sp._within(cost, passed, 1)


def _verdict(rule):
    """The claim's verdict on two cells of synthetic plans, first stopping where ``rule`` says.

    Runs (steps 2,000-8,000, the first without a plan within budget): costs 9500, 8000, 9500;
    none within budget; 10000, 7000, 8500. The second cell: the two runs that reach the budget.
    """
    nan = math.nan
    size = np.array([[nan, 5500, 2000, 1500], [nan] * 4, [nan, 6000, 1000, 500]])
    passed = np.where(np.isnan(size), nan, 1.0)
    data = (np.array([2000, 4000, 6000, 8000]), size, passed, np.ones((3, len(sp.SPLITS))))
    reached = (data[0], size[[0, 2]], passed[[0, 2]], data[3][:2])
    cells = []
    for position, sample in enumerate((data, reached)):
        estimates = functools.partial(sp._policy, rule)(sample, {})
        cells.append(CellResult("stopping_policies", str(position), position,
                                {"topic": position, "interval": "delta"}, "monte-carlo",
                                {"first": performance(estimates, 0.5)}, {}, b""))
    claims = [c for c in sp.CLAIMS if c.name == CLAIM]
    return evaluate_claims(claims, StudyResult("stopping_policies", tuple(cells)), grid="quick",
                           familywise_error=claim_false_alarm())[0]


def test_the_reference_claim_holds_with_power_and_catches_a_first_stopping_elsewhere():
    verdict = _verdict(sp.POLICIES["first"])
    assert verdict.status == HOLDS and verdict.detectable <= verdict.claim.resolution
    # one training step early: where every run reaches the budget, first never certifies
    # within it, so its saving is undefined
    early = _verdict(_early)
    assert early.status == FAILS and math.isnan(early.failures["value"].iloc[0])
    # one within-budget step late: first's saving is off 0 and varies, so the claim no longer
    # holds (inconclusive here, failing with more runs; the quick run exits 1 on either)
    late = _verdict(_late)
    assert late.status in (FAILS, INCONCLUSIVE) and late.detectable > 0


@pytest.mark.slow
def test_the_quick_run_fails_when_first_stops_one_step_early(monkeypatch, tmp_path, capsys):
    # --workers 1 runs in-process, so the broken method in the study's own table is the one run
    monkeypatch.setitem(sp.METHODS, "first", functools.partial(sp._policy, _early))
    assert sp.STUDY.methods["first"].args == (_early,)
    status = main(["study", "run", "stopping_policies", "--grid", "quick", "--seed", "20190",
                   "--workers", "1", "--out", str(tmp_path)])
    assert status == 1
    verdicts = [line for line in capsys.readouterr().out.splitlines()
                if line.startswith(("FAILS", "INCONCLUSIVE"))]
    assert verdicts and all(line.startswith(f"FAILS stopping_policies {CLAIM}")
                            for line in verdicts), verdicts

