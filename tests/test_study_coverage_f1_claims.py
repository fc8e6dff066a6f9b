"""The size of the break that coverage_f1's quick grid must catch: an interval 5 points short.

`tests/test_broken_methods.py` runs the quick suite with this interval and sees it exit 1; the
unbroken quick suite's verdicts are checked by
``tests/test_claims.py::test_every_claim_judged_on_the_quick_grid_holds_with_power``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from studies.engine import run
from studies.engine.design import Grid
from studies.suite import coverage_f1
from studies.suite.coverage_f1_exact import STUDY as EXACT_STUDY

# The recommended SRS certification interval computed at this level and presented as 95%:
# over the quick grid's cells its mean coverage falls by at most 5 points
# (`test_the_break_is_a_shortfall_of_at_most_5_points`, exactly).
BROKEN = "jaccard-clopper-pearson-losci"
BROKEN_LEVEL = 0.87


def test_the_break_is_a_shortfall_of_at_most_5_points():
    # the quick grid's simple-random-sampling cells, every test sample enumerated
    quick = coverage_f1.STUDY.grids["quick"].parameters
    grid = Grid({**{k: v for k, v in quick.items() if k != "draws"}, "design": ["srs"]},
                n_replicates=2)
    exact = EXACT_STUDY.methods[BROKEN]
    study = dataclasses.replace(
        EXACT_STUDY, methods={"nominal": exact,
                              "broken": lambda data, params: exact(
                                  data, {**params, "confidence_level": BROKEN_LEVEL})},
        claims=(), figures=(), summary=None, findings=None)
    result = run([study], grid=grid, rng=0, workers=1)[EXACT_STUDY.name]
    mean = {m: np.mean([r["value"] for r in result.rows("coverage", method=m)])
            for m in ("nominal", "broken")}
    assert 0.04 < mean["nominal"] - mean["broken"] <= 0.05
