"""The coverage_f1 study's quick grid catches a guaranteed interval that covers 5 points short.

The quick suite (``evalcert study run coverage_f1 --grid quick``) must exit 1 when a method
is broken on purpose; the unbroken quick suite's verdicts are checked by
``tests/test_claims.py::test_every_claim_judged_on_the_quick_grid_holds_with_power``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from studies.cli.main import main
from studies.engine import run
from studies.engine.design import Grid
from studies.suite import coverage_f1
from studies.suite.coverage_f1_exact import STUDY as EXACT_STUDY

# The recommended SRS certification interval computed at this level and presented as 95%:
# over the quick grid's cells its mean coverage falls by at most 5 points
# (`test_the_break_is_a_shortfall_of_at_most_5_points`, exactly).
BROKEN = "jaccard-clopper-pearson-losci"
BROKEN_LEVEL = 0.87
LOSCI = coverage_f1.STUDY.methods[BROKEN]


def _shrunk(data, params):
    """The Jaccard Clopper-Pearson LOSCI at `BROKEN_LEVEL`, presented as the cell's 95%."""
    return LOSCI(data, {**params, "confidence_level": BROKEN_LEVEL})


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


def test_the_quick_suite_fails_with_an_interval_5_points_short(monkeypatch, tmp_path, capsys):
    # --workers 1 runs every cell in this process (studies.engine.execution.execute), where the
    # study is the patched one: the CLI looks it up by name in the module at run time
    broken = dataclasses.replace(coverage_f1.STUDY,
                                 methods={**coverage_f1.STUDY.methods, BROKEN: _shrunk})
    monkeypatch.setattr(coverage_f1, "STUDY", broken)
    status = main(["study", "run", "coverage_f1", "--grid", "quick", "--seed", "1",
                   "--workers", "1", "--out", str(tmp_path)])
    assert status == 1
    verdicts = [line for line in capsys.readouterr().out.splitlines()
                if line.startswith(("FAILS", "INCONCLUSIVE"))]
    expected = f"FAILS coverage_f1 clopper-pearson-nominal-on-average: {BROKEN}"
    assert verdicts and all(line.startswith(expected) for line in verdicts), verdicts
