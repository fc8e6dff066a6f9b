"""The example studies' findings, pinned with the engine's statistical assertions."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from studies.engine import run
from studies.engine.assertions import assert_coverage, assert_measure
from studies.engine.design import Grid
from studies.engine.performance import Estimates
from studies.suite.registry import get_study

NORMAL = Grid({"distribution": ["normal"], "n": [5, 20, 100]}, n_replicates=4000)


@pytest.fixture(scope="module")
def binomial():
    return run([get_study("binomial_coverage")], rng=1, workers=1)["binomial_coverage"]


@pytest.fixture(scope="module")
def means():
    return run([get_study("mean_bias")], rng=2, workers=1)["mean_bias"]


def test_wilson_stays_near_nominal_on_the_exact_quick_grid(binomial):
    assert all(row["mcse"] == 0.0 for row in binomial.rows("coverage"))
    assert_coverage(binomial, 0.95, method="wilson", tolerance=0.04)


def test_wald_undercovers_for_small_np(binomial):
    # Brown, Cai & DasGupta (2001), Figure 1: Wald coverage far below nominal at small n p.
    with pytest.raises(AssertionError, match=r"wald at \{'n': 10, 'p': 0.05"):
        assert_coverage(binomial, 0.95, method="wald", tolerance=0.04)
    small = [r["value"] for r in binomial.rows("coverage", method="wald")
             if r["params"]["n"] * r["params"]["p"] < 2]
    assert max(small) < 0.85


def test_exact_cells_need_an_explicit_tolerance(binomial):
    with pytest.raises(ValueError, match="`tolerance` must be given for exact-path cells"):
        assert_coverage(binomial, 0.95, method="wilson")


def test_sample_mean_is_unbiased_and_median_is_not_for_skewed_data(means):
    assert_measure(means, "bias", 0.0, method="mean")
    with pytest.raises(AssertionError, match=r"median at \{'distribution': 'exponential'"):
        assert_measure(means, "bias", 0.0, method="median")


def _shrunk_t(samples, params):
    """The t interval with its variance shrunk by 0.7: a deliberately broken method."""
    n = samples.shape[1]
    estimate = samples.mean(axis=1)
    se = samples.std(axis=1, ddof=1) * math.sqrt(0.7 / n)
    half = 2.0 * se  # roughly the t quantile, but too narrow anyway
    return Estimates(estimate=estimate, se=se, low=estimate - half, high=estimate + half)


def test_t_interval_passes_and_shrunk_variance_interval_fails_assert_coverage():
    study = get_study("mean_bias")
    broken = dataclasses.replace(study, methods={"mean": study.methods["mean"],
                                                 "shrunk": _shrunk_t})
    result = run([broken], grid=NORMAL, rng=3, workers=1)["mean_bias"]
    assert_coverage(result, 0.95, method="mean")
    with pytest.raises(AssertionError, match="3 of 3 coverage checks failed"):
        assert_coverage(result, 0.95, method="shrunk")


def test_assertion_tolerance_follows_bonferroni(means):
    rows = means.rows("coverage", method="mean")
    with pytest.raises(AssertionError) as caught:
        assert_coverage(means, 0.95, method="mean", familywise_error=0.05)
    # z at 0.05 / (2 * 9) times the SE of a share of R at 0.95: the Wilson half-width at z = 1
    r = rows[0]["n_replicates"]
    se = math.sqrt(0.95 * 0.05 / r + 0.25 / r**2) / (1 + 1 / r)
    assert f"+-{2.772 * se:.3g}" in str(caught.value)


@pytest.mark.parametrize("kwargs,message", [
    ({"familywise_error": 1.5}, "`familywise_error` must be strictly between 0 and 1"),
    ({"alternative": "less"}, "`alternative` must be"),
    ({"method": "nonexistent"}, "no coverage reported"),
])
def test_assertion_bad_arguments(means, kwargs, message):
    with pytest.raises(ValueError, match=message):
        assert_coverage(means, 0.95, **kwargs)


def test_mean_bias_study_generates_rows_per_replicate():
    sample = get_study("mean_bias").generate({"distribution": "lognormal", "n": 7}, 50, rng=1)
    assert sample.data.shape == (50, 7) and sample.size == 50
    assert np.all(sample.data > 0)
