"""The exact finite-population interval study (`studies.suite.coverage_finite`)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import estimators._hypergeometric
from studies.engine import FAILS, HOLDS, Grid, evaluate_claims, run
from studies.suite import get_study

STUDY = get_study("coverage_finite")


def _exact_bounds(x, size, n, tail):
    """The hypergeometric interval of count ``x`` by brute force over every ``K``: the least K
    whose upper tail at x reaches ``tail`` and the largest whose lower tail does (closed, as
    Clopper-Pearson's)."""
    ks = np.arange(size + 1)
    upper = stats.hypergeom.sf(x - 1, size, ks, n)  # P(X >= x | K)
    lower = stats.hypergeom.cdf(x, size, ks, n)  # P(X <= x | K)
    return ks[upper >= tail].min() / size, ks[lower >= tail].max() / size


@pytest.mark.parametrize("size, n, share", [(60, 10, 0.3), (60, 30, 0.05), (400, 30, 0.5)])
def test_coverage_is_a_brute_force_enumeration(size, n, share):
    level = 0.95
    positives = round(share * size)
    x = np.arange(n + 1)
    chance = stats.hypergeom.pmf(x, size, positives, n)
    bounds = np.array([_exact_bounds(k, size, n, (1 - level) / 2) for k in x])
    truth = positives / size
    expected = chance @ ((bounds[:, 0] <= truth) & (truth <= bounds[:, 1]))
    grid = Grid({"population": [size], "n": [n], "share": [share],
                 "confidence_level": [level], "alternative": ["two-sided"]}, n_replicates=2)
    frame = run([STUDY], grid=grid, rng=1, workers=1)["coverage_finite"].to_frame()
    found = frame[(frame["measure"] == "coverage") & (frame["method"] == "hypergeometric")]
    assert float(found["value"].iloc[0]) == pytest.approx(expected, abs=1e-12)


def test_the_claims_hold_and_a_one_sided_tail_in_a_two_sided_interval_fails_them(monkeypatch):
    def verdicts():
        result = run([STUDY], grid="quick", rng=1, workers=1)["coverage_finite"]
        return {v.claim.name: v.status for v in evaluate_claims(STUDY.claims, result)}

    assert set(verdicts().values()) == {HOLDS}
    right = estimators._hypergeometric.hypergeometric_lower

    def narrow(x, drawn, size, tail):  # each end at twice its tail
        return right(x, drawn, size, 2 * tail)

    monkeypatch.setattr(estimators._hypergeometric, "hypergeometric_lower", narrow)
    assert verdicts()["hypergeometric-never-below-nominal"] == FAILS
