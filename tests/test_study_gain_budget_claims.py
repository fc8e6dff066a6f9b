"""The gain_budget study's quick grid catches an interval that covers 5 points short.

The quick suite (``evalcert study run gain_budget --grid quick``) must exit 1 when a method is
broken on purpose; the unbroken quick suite's verdicts are checked by
``tests/test_claims.py::test_every_claim_judged_on_the_quick_grid_holds_with_power``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from studies.cli.main import main
from studies.suite import gain_budget as gb

# The exact interval computed at this level and presented as 95%: over the quick grid's cells
# its mean coverage falls by at most 5 points (`test_the_break_is_a_shortfall_of_at_most_5_points`).
BROKEN_LEVEL = 0.88
HYPERGEOMETRIC = gb.STUDY.methods["hypergeometric"]


def _quick_cells() -> list[tuple[int, int, str]]:
    grid = gb.STUDY.grids["quick"].parameters
    return [(n, k, model) for n in grid["n"] for k in grid["k"] for model in gb.MODELS]


def _mean_exact_coverage(level: float) -> float:
    return float(np.mean([gb.exact_coverage("positives", model, n, k, "hypergeometric", level)[0]
                          for n, k, model in _quick_cells()]))


def _shrunk_hypergeometric(draws, params):
    """The hypergeometric interval at `BROKEN_LEVEL`, presented as the cell's 95%."""
    return HYPERGEOMETRIC(draws, {**params, "confidence_level": BROKEN_LEVEL})


def test_the_break_is_a_shortfall_of_at_most_5_points():
    drop = _mean_exact_coverage(gb.LEVEL) - _mean_exact_coverage(BROKEN_LEVEL)
    assert 0.04 < drop <= 0.05


def test_the_quick_suite_fails_with_an_interval_5_points_short(monkeypatch, tmp_path, capsys):
    # --workers 1 runs every cell in this process (studies.engine.execution.execute), where the
    # study is the patched one: the CLI looks it up by name in the module at run time
    broken = dataclasses.replace(gb.STUDY, methods={**gb.STUDY.methods,
                                                    "hypergeometric": _shrunk_hypergeometric})
    monkeypatch.setattr(gb, "STUDY", broken)
    status = main(["study", "run", "gain_budget", "--grid", "quick", "--seed", "1",
                   "--workers", "1", "--out", str(tmp_path)])
    assert status == 1
    verdicts = [line for line in capsys.readouterr().out.splitlines()
                if line.startswith(("FAILS", "INCONCLUSIVE"))]
    expected = "FAILS gain_budget guaranteed-intervals-cover-on-average: hypergeometric"
    assert verdicts and all(line.startswith(expected) for line in verdicts), verdicts
