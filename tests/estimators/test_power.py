"""Tests of the certification power analysis (Bagdouri et al. 2013, section 4)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from estimators import (
    LOSCI_METHODS,
    ConfusionMatrix,
    certification_sample_size,
    confusion_posterior,
    f1_ci,
    theta_star,
)
from estimators.power import ConfusionPosterior

EXAMPLE = (60, 20, 25, 395)  # F1 = 0.727, limit about 0.668 at power 0.93
# (observed matrix, target) for the calibration checks: prevalence 17%, 4% and 48%.
CALIBRATION_CASES = [(EXAMPLE, 0.6), ((30, 10, 8, 952), 0.65), ((400, 60, 80, 460), 0.8)]


def pass_rate_at(confusion, size, target, *, populations, rng):
    """Fraction of simulated certification test sets whose 95% LOSCI (delta) clears ``target``.

    Independent of the planner's internals: each test set is a full multinomial draw
    (numpy ``multinomial``, not the planner's conditional binomials) from a population matrix
    given as a (k, 4) array of cell probabilities.
    """
    counts = rng.multinomial(size, populations)
    tp, fp, fn, tn = counts.T
    lower = f1_ci(tp, fp, fn, tn, alternative="greater").low
    return float(np.mean(np.nan_to_num(lower, nan=0.0) >= target))


def test_posterior_draws_have_the_jeffreys_beta_moments():
    post = confusion_posterior(EXAMPLE)
    draws = 200_000
    r1, r0 = post.draw(draws, rng=11)
    for sample, a, b in ((r1, 60.5, 20.5), (r0, 25.5, 395.5)):
        mean, var = stats.beta.stats(a, b, moments="mv")
        assert abs(sample.mean() - mean) < 4 * math.sqrt(var / draws)
    probs = post.cell_probabilities(r1, r0)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    np.testing.assert_allclose(probs[:, :2].sum(axis=1), post.retrieved_share)


def test_dirichlet_posterior_cells_have_numpys_dirichlet_moments():
    # Reference: numpy's own Dirichlet sampler on the four cells. The segment-and-share draws
    # must give each cell probability the same mean and variance (Dirichlet aggregation and
    # neutrality); 8 checks at 4.5 MCSE each: family-wise false alarms below 1e-4.
    post = confusion_posterior(EXAMPLE, posterior="dirichlet")
    draws = 200_000
    r1, r0 = post.draw(draws, rng=12)
    cells = post.cell_probabilities(r1, r0, post.draw_share(draws, rng=13))
    reference = np.random.default_rng(14).dirichlet(np.add(EXAMPLE, 0.5), size=draws)
    for ours, theirs in zip(cells.T, reference.T, strict=True):
        assert abs(ours.mean() - theirs.mean()) < 4.5 * math.sqrt(2 * theirs.var() / draws)
        spread = np.sqrt(2 * np.var((theirs - theirs.mean()) ** 2) / draws)
        assert abs(ours.var() - theirs.var()) < 4.5 * spread
    assert post.retrieved_share == pytest.approx((1 + 80) / (2 + 500))


def test_dirichlet_posterior_keeps_the_segment_draws_and_widens_f1():
    # Same seed: the same segment draws and test sets, the share now uncertain, so the
    # posterior of population F1 is wider and theta_star's limit lower.
    known = certification_sample_size(EXAMPLE, 0.6, rng=7)
    dirichlet = certification_sample_size(EXAMPLE, 0.6, rng=7, posterior="dirichlet")
    assert dirichlet.posterior == "dirichlet" and known.posterior == "known-share"
    assert dirichlet.limit < known.limit
    assert dirichlet.test_size > known.test_size
    r1, r0 = confusion_posterior(EXAMPLE).draw(50, rng=3)
    again = confusion_posterior(EXAMPLE, posterior="dirichlet").draw(50, rng=3)
    np.testing.assert_array_equal(np.stack([r1, r0]), np.stack(again))
    with pytest.raises(ValueError, match=r"`retrieved_share` must be None with posterior="):
        theta_star(EXAMPLE, 100, posterior="dirichlet", retrieved_share=0.2)
    with pytest.raises(ValueError, match=r"`posterior` must be one of"):
        certification_sample_size(EXAMPLE, 0.6, posterior="beta")


def test_retrieved_share_defaults_to_the_sample_and_can_be_given():
    assert confusion_posterior(EXAMPLE).retrieved_share == 80 / 500
    assert confusion_posterior(EXAMPLE, retrieved_share=0.2).retrieved_share == 0.2


def test_confusion_matrix_and_mapping_inputs_agree_with_the_tuple():
    cm = ConfusionMatrix.binary(tp=60, fp=20, fn=25, tn=395)
    mapping = {"tp": 60, "fp": 20, "fn": 25, "tn": 395}
    values = {theta_star(c, 800, rng=5) for c in (EXAMPLE, cm, mapping)}
    assert len(values) == 1


def test_theta_star_increases_with_test_size_under_common_random_numbers():
    sizes = [50, 150, 500, 1500, 5000, 15000, 50000]
    for confusion in (EXAMPLE, (30, 10, 8, 952), (400, 60, 80, 460)):
        curve = [theta_star(confusion, s, draws=2000, rng=3) for s in sizes]
        assert all(a < b for a, b in itertools.pairwise(curve)), curve


def test_theta_star_decreases_as_power_rises():
    values = [theta_star(EXAMPLE, 1000, power=p, rng=8) for p in (0.5, 0.8, 0.93, 0.99)]
    assert all(a > b for a, b in itertools.pairwise(values)), values


def test_theta_star_limit_is_the_posterior_quantile_of_population_f1():
    # As the test size grows each LOSCI bound tends to its draw's population F1, so theta_star
    # tends to the (1 - power) quantile of the posterior of F1: the one-sided beta-posterior
    # bound of f1_ci at level `power` (an independent code path with its own draws).
    draws = 20_000
    far = theta_star(EXAMPLE, 5_000_000, draws=draws, rng=4)
    quantile = f1_ci(*EXAMPLE, method="beta-posterior", alternative="greater",
                     confidence_level=0.93, draws=200_000, rng=5).low
    # MCSE of a 7% sample quantile from `draws` draws, with the density from the same posterior.
    post = confusion_posterior(EXAMPLE)
    f = post.f1(*post.draw(200_000, rng=6))
    density = stats.gaussian_kde(f)(quantile)[0]
    mcse = math.sqrt(0.07 * 0.93 / draws) / density
    # The remaining LOSCI width at s = 5e6 (about 1.645 * 0.0017) biases theta_star low.
    assert quantile - 4 * mcse - 0.004 < far < quantile + 4 * mcse
    assert 0.66 < quantile < 0.675  # "about 0.668"


def test_plan_is_reproducible_from_its_seed():
    first = certification_sample_size(EXAMPLE, 0.6, rng=2024)
    assert first == certification_sample_size(EXAMPLE, 0.6, rng=2024)
    again = certification_sample_size(EXAMPLE, 0.6, rng=first.seed)
    assert again.test_size == first.test_size and again.seed == 2024
    drawn = certification_sample_size(EXAMPLE, 0.6, rng=np.random.default_rng(1))
    assert certification_sample_size(EXAMPLE, 0.6, rng=drawn.seed) == drawn


def test_plan_size_is_monotone_in_target():
    sizes = [certification_sample_size(EXAMPLE, t, draws=2000, rng=9).test_size
             for t in (0.4, 0.5, 0.55, 0.6, 0.63, 0.65)]
    assert all(a <= b for a, b in itertools.pairwise(sizes)), sizes


def test_plan_hits_its_own_definition():
    plan = certification_sample_size(EXAMPLE, 0.6, draws=4000, rng=10)
    assert plan.reachable and plan.reason == ""
    assert plan.theta_star >= 0.6
    # One document fewer must fall short on the same common random numbers (minimal size).
    assert theta_star(EXAMPLE, plan.test_size - 1, draws=4000,
                      rng=np.random.SeedSequence(plan.seed).spawn(64)[0]) < 0.6
    assert plan.test_size_interval.low <= plan.test_size <= plan.test_size_interval.high


def test_paper_tolerance_rule_stops_early_within_the_band():
    exact = certification_sample_size(EXAMPLE, 0.65, draws=2000, rng=12)
    paper = certification_sample_size(EXAMPLE, 0.65, draws=2000, rng=12, tolerance=0.0065)
    assert 0.65 <= paper.theta_star <= 0.65 + 0.0065
    assert paper.test_size >= exact.test_size


@pytest.mark.parametrize("target", [0.7, 0.69])
def test_target_above_the_limit_is_unreachable_although_f1_exceeds_it(target):
    plan = certification_sample_size(EXAMPLE, target, rng=1)
    assert plan.point_f1 > target
    assert not plan.reachable and plan.test_size is None and math.isnan(plan.theta_star)
    assert "limit" in plan.reason and plan.limit < target


def test_target_above_the_point_estimate_is_unreachable():
    plan = certification_sample_size(EXAMPLE, 0.75, rng=1)
    assert not plan.reachable and "observed F1" in plan.reason


def test_no_information_is_a_plan_that_cannot_certify():
    """An empty matrix: F1 undefined, so Algorithm 2 does not attempt (the package's policy)."""
    plan = certification_sample_size((0, 0, 0, 0), 0.6, rng=1)
    assert not plan.reachable and plan.test_size is None
    assert math.isnan(plan.point_f1) and "undefined" in plan.reason


def test_relative_precision_raises_draws_until_the_interval_is_narrow():
    plan = certification_sample_size(EXAMPLE, 0.6, rng=3, relative_precision=0.1)
    width = plan.test_size_interval.high - plan.test_size_interval.low
    assert plan.draws > 1000 and width <= 0.1 * plan.test_size


def test_monte_carlo_interval_covers_a_precise_answer():
    # The size planned with 64x the draws is the reference; the 95% interval of a 1,000-draw
    # plan should contain it (5 seeds: each fails with probability about 5%, all fail never).
    reference = certification_sample_size(EXAMPLE, 0.62, draws=64_000, rng=99).test_size
    covered = []
    for seed in range(5):
        interval = certification_sample_size(EXAMPLE, 0.62, rng=seed).test_size_interval
        covered.append(interval.low <= reference <= interval.high)
    assert sum(covered) >= 4, covered


@pytest.mark.parametrize("confusion,target", CALIBRATION_CASES)
def test_plan_is_calibrated_over_the_posterior(confusion, target):
    # Populations drawn from the posterior, test sets of the planned size: the pass rate is
    # the requested power up to the plan's own Monte Carlo error (its quantile's 95% rank
    # interval, +-1.96 sqrt(b (1 - b) / N) in probability) and this check's MCSE.
    plan_draws, checks = 20_000, 20_000
    plan = certification_sample_size(confusion, target, draws=plan_draws, rng=21)
    post = confusion_posterior(confusion)
    populations = post.cell_probabilities(*post.draw(checks, rng=22))
    rate = pass_rate_at(confusion, plan.test_size, target, populations=populations,
                        rng=np.random.default_rng(23))
    plan_error = 1.96 * math.sqrt(0.07 * 0.93 / plan_draws)
    mcse = math.sqrt(0.93 * 0.07 / checks)
    assert abs(rate - 0.93) <= 2 * plan_error + 4 * mcse, rate


@pytest.mark.parametrize("confusion,target", CALIBRATION_CASES)
def test_plan_passes_at_the_posterior_mean_population(confusion, target):
    # The calibration check: 2,000 test sets of the planned size from the population at the
    # posterior mean; the pass rate is within Monte Carlo error of, or above, the power.
    plan = certification_sample_size(confusion, target, draws=4000, rng=31)
    post = confusion_posterior(confusion)
    tp, fp, fn, tn = confusion
    mean = post.cell_probabilities(np.array([(0.5 + tp) / (1 + tp + fp)]),
                                   np.array([(0.5 + fn) / (1 + fn + tn)]))
    sets = 2000
    rate = pass_rate_at(confusion, plan.test_size, target,
                        populations=np.repeat(mean, sets, axis=0), rng=np.random.default_rng(32))
    assert rate >= 0.93 - 4 * math.sqrt(0.93 * 0.07 / sets), rate


@pytest.mark.parametrize(
    "call,error,pattern",
    [
        (lambda: certification_sample_size((60, -1, 25, 395), 0.6), ValueError,
         r"`confusion.fp` must be non-negative"),
        (lambda: theta_star((0, 0, 0, 0), 100), ValueError,
         r"`retrieved_share` must be given when `confusion` holds no document"),
        (lambda: certification_sample_size(EXAMPLE, 1.2), ValueError,
         r"`target` must be strictly between 0 and 1; got 1\.2"),
        (lambda: certification_sample_size(EXAMPLE, 0.6, power=1.0), ValueError,
         r"`power` must be strictly between 0 and 1"),
        (lambda: certification_sample_size(EXAMPLE, 0.6, confidence_level=0), ValueError,
         r"`confidence_level` must be strictly between 0 and 1"),
        (lambda: certification_sample_size(EXAMPLE, 0.6, draws=99), ValueError,
         r"`draws` must be at least 100; got 99"),
        (lambda: certification_sample_size(EXAMPLE, 0.6, rng="seed"), TypeError, r"`rng` must be"),
        (lambda: certification_sample_size((1, 2, 3), 0.6), ValueError, r"4 counts"),
        (lambda: certification_sample_size({"tp": 1}, 0.6), ValueError, r"missing"),
        (lambda: certification_sample_size(EXAMPLE, 0.6, interval="bootstrap"), ValueError,
         r"`interval` must be one of 'delta', 'logit-delta', 'dirichlet-posterior'"),
        (lambda: theta_star(EXAMPLE, 0), ValueError, r"`test_size` must be a positive integer"),
        (lambda: theta_star(ConfusionMatrix([[1, 2, 3], [4, 5, 6], [7, 8, 9]]), 10), ValueError,
         r"binary"),
    ],
)
def test_bad_input(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call()


@pytest.mark.parametrize(("build", "error", "message"), [
    (lambda p: p.draw(0), ValueError, r"`draws` must be a positive integer; got 0"),
    (lambda p: p.draw(10, rng="abc"), TypeError, r"`rng` must be a numpy Generator"),
    (lambda p: p.f1(-0.5, 0.2), ValueError, r"`r1` must hold proportions in \[0, 1\]; got -0.5"),
    (lambda p: ConfusionPosterior(60, 20, 25, 395, 1.5), ValueError,
     r"`retrieved_share` must be in \[0, 1\]"),
    (lambda p: ConfusionPosterior(-1, 20, 25, 395, 0.1), ValueError, r"`tp` must be non-neg"),
    (lambda p: ConfusionPosterior([1, 2], 20, 25, 395, 0.1), ValueError, r"`tp` must be one"),
])
def test_a_posterior_built_or_used_by_hand_is_validated(build, error, message):
    with pytest.raises(error, match=message):
        build(ConfusionPosterior(60, 20, 25, 395, 0.1))


@pytest.mark.parametrize("interval", LOSCI_METHODS)
def test_every_deterministic_srs_interval_can_certify(interval):
    """theta_star with each certification interval: below the posterior limit, rising in s."""
    small = theta_star(EXAMPLE, 300, draws=200, rng=2, interval=interval)
    large = theta_star(EXAMPLE, 3000, draws=200, rng=2, interval=interval)
    assert 0.0 <= small < large < 0.7


def test_the_guaranteed_interval_needs_a_larger_test_set_than_the_papers():
    """Clopper-Pearson on J is wider than the delta interval at these counts, so certifying the
    same target with it takes more documents (same seed: common random numbers)."""
    delta = certification_sample_size(EXAMPLE, 0.6, rng=5, interval="delta")
    exact = certification_sample_size(EXAMPLE, 0.6, rng=5, interval="jaccard-clopper-pearson")
    assert delta.test_size is not None and exact.test_size is not None
    assert exact.test_size > delta.test_size
    assert (delta.interval, exact.interval) == ("delta", "jaccard-clopper-pearson")
