"""Findings sentences: a run's value beside a paper's number, judged on both sides of it.

`versus_paper` decides what a report calls "reproduced". The values below are binary
fractions, so that a value exactly `REPRODUCED_WITHIN` MCSE from the paper's is that many
MCSE away in floating point too, and the boundary is tested where it lies.
"""

from __future__ import annotations

import math

import pytest

from studies.engine.claims import POWER_Z
from studies.engine.findings import REPRODUCED_WITHIN, versus_paper

PAPER = 0.5
MCSE = 2.0 ** -7  # 0.0078125: precise enough for a 5-point resolution (needs <= 0.0108)
STEP = 2.0 ** -20  # a hair beyond the boundary, still a binary fraction


@pytest.mark.parametrize("sign, side", [(+1, "above"), (-1, "below")])
def test_a_value_on_either_side_of_the_paper_is_judged_by_its_distance(sign, side):
    near = PAPER + sign * 1.5 * MCSE
    assert versus_paper(near, MCSE, PAPER, percent=True).endswith(
        f"1.5 MCSE {side} it, reproduced")
    far = PAPER + sign * 4.9 * MCSE
    assert versus_paper(far, MCSE, PAPER, percent=True).endswith(
        f"4.9 MCSE {side} it, not reproduced")


def test_the_issue_example_below_the_paper_is_not_reproduced():
    # 0.28 with MCSE 0.003 is 4.9 MCSE below 0.2948: a signed z would call it reproduced
    text = versus_paper(0.28, 0.003, 0.2948, percent=True, digits=1)
    assert text == ("28.0% (MCSE 0.3 points) against the paper's 29.5%: 4.9 MCSE below it, "
                    "not reproduced")


@pytest.mark.parametrize("sign", [+1, -1])
def test_the_boundary_is_reproduced_and_a_hair_beyond_it_is_not(sign):
    at = PAPER + sign * REPRODUCED_WITHIN * MCSE
    assert abs(at - PAPER) / MCSE == REPRODUCED_WITHIN  # exactly on the boundary
    assert versus_paper(at, MCSE, PAPER, percent=True).endswith(", reproduced")
    beyond = at + sign * STEP
    assert versus_paper(beyond, MCSE, PAPER, percent=True).endswith(", not reproduced")


@pytest.mark.parametrize("sign", [+1, -1])
def test_an_imprecise_run_within_the_allowance_is_too_imprecise_to_tell(sign):
    # MCSE 0.02 > 0.05 / (3 + 1.645) = 0.0108: a 5-point difference could have gone unseen
    text = versus_paper(PAPER + sign * 0.01, 0.02, PAPER, percent=True, digits=1)
    side = "above" if sign > 0 else "below"
    assert text.endswith(f"0.5 MCSE {side} it, too imprecise to tell (an MCSE of at most "
                         "1.1 points would)")
    # the precision needed is the resolution over the allowance plus the 95% power quantile
    assert POWER_Z == pytest.approx(1.6448536269514722, abs=1e-15)
    needed = 0.05 / (REPRODUCED_WITHIN + POWER_Z)
    assert versus_paper(PAPER, needed, PAPER, percent=True).endswith(", reproduced")
    assert "too imprecise" in versus_paper(PAPER, needed * (1 + 1e-9), PAPER, percent=True)
    # imprecise and far away is still "not reproduced", on either side
    assert versus_paper(PAPER + sign * 0.07, 0.02, PAPER, percent=True).endswith(
        ", not reproduced")


def test_exact_values_reproduce_only_an_equal_value():
    assert versus_paper(0.25, 0.0, 0.25).endswith(": reproduced")
    assert versus_paper(0.25 - 1e-6, 0.0, 0.25).endswith(": not reproduced")
    assert versus_paper(math.nan, 0.01, 0.25).endswith(": not reproduced")
