"""The simple random sample a stratified plan is compared with, against a reference written here.

A stratified plan (`certification_sample_size(..., design="stratified")`) reports
``srs_test_size``, the least simple random test set of the same collection that certifies
the same measure at the same target, level and power, planned over the same posterior
(independent Jeffreys Beta segments, the retrieved share ``N1 / (N1 + N0)`` known), and
``labels_saved``, its excess over the stratified total.

The reference below computes the power of that simple random test set from scratch with
scipy alone: the test set's retrieved documents ``n1`` among ``n`` are binomial at the
collection's retrieved share (hypergeometric in a finite collection), each segment's counts
are beta-binomial given ``n1`` and ``n0 = n - n1`` (in a small finite collection, the
segments' relevant documents are drawn from the posterior and the sample from them without
replacement, every case enumerated), and the test passes when the one-sided Clopper-Pearson
bound (``scipy.stats.beta.ppf``; on the Jaccard ratio for F1) clears the target. It then
looks for the least ``n`` one size at a time.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from estimators import certification_sample_size
from studies.cli.main import main

LEVEL, GOAL = 0.95, 0.93
SAMPLE = (60, 20, 25, 395)  # the README's matrix
COUNTS = ["--tp", "60", "--fp", "20", "--fn", "25", "--tn", "395"]


def _clopper_pearson_low(x, m):
    """One-sided lower Clopper-Pearson bound at LEVEL of ``x`` successes among ``m``."""
    x, m = np.broadcast_arrays(np.asarray(x), np.asarray(m))
    with np.errstate(invalid="ignore"):
        low = stats.beta.ppf(1.0 - LEVEL, np.maximum(x, 1), m - x + 1)
    return np.where((x > 0) & (x <= m), low, 0.0)


def _passes(measure, theta, most):
    """``ok[x, d]``: the simple random test passes with count ``x`` among ``d`` trials."""
    x, d = np.arange(most + 1)[:, None], np.arange(most + 1)[None, :]
    low = _clopper_pearson_low(np.minimum(x, d), d)
    if measure == "f1":
        low = 2.0 * low / (1.0 + low)  # F1 of the Jaccard ratio's bound
    return (x <= d) & (low > theta)


def _segment_pmf(count, size, a, b, documents):
    """Law of a segment's count among ``size`` sampled documents: beta-binomial, or (with
    ``documents``) the segment's relevant documents ``K ~ BetaBinomial(documents, a, b)`` and
    the sample drawn without replacement, ``hypergeometric(documents, K, size)``, summed."""
    if documents is None:
        return stats.betabinom.pmf(count, size, a, b)
    relevant = np.arange(documents + 1)
    return stats.betabinom.pmf(relevant, documents, a, b) @ stats.hypergeom.pmf(
        count[None, :], documents, relevant[:, None], size)


def srs_power(n, measure, theta, segments, population=None, *, enumerate_segments=False):
    """Probability that a simple random test set of ``n`` documents of the collection passes,
    averaged over the labelled sample's posterior."""
    a1, b1, a0, b0 = np.asarray(SAMPLE) + 0.5
    big1, big0 = segments
    retrieved = np.arange(n + 1)
    weights = (stats.binom.pmf(retrieved, n, big1 / (big1 + big0)) if population is None
               else stats.hypergeom.pmf(retrieved, big1 + big0, big1, n))
    ok = _passes(measure, theta, n)
    finite = population is not None and enumerate_segments
    total = 0.0
    for n1 in np.flatnonzero(weights > 1e-30):
        n0 = n - n1
        tp, fn = np.arange(n1 + 1), np.arange(n0 + 1)
        p_tp = _segment_pmf(tp, n1, a1, b1, big1 if finite else None)
        p_fn = _segment_pmf(fn, n0, a0, b0, big0 if finite else None)
        trials = tp[:, None] + fn[None, :] if measure == "recall" else n1 + fn[None, :]
        total += weights[n1] * (p_tp @ ok[tp[:, None], trials] @ p_fn)
    return total


def least_srs_size(measure, theta, segments, population=None, **options):
    n = 1
    while srs_power(n, measure, theta, segments, population, **options) < GOAL:
        n += 1
        assert n <= 1000, "no size up to 1000"
    return n


def _plan(measure, theta, segments, population=None, cost=None):
    return certification_sample_size(SAMPLE, theta, measure=measure, design="stratified",
                                     segment_sizes=segments, population_size=population,
                                     cost=cost, confidence_level=LEVEL, power=GOAL)


@pytest.mark.parametrize(("measure", "theta", "segments", "population"), [
    ("recall", 0.3, (1600, 8400), None),
    ("recall", 0.4, (300, 700), None),
    ("recall", 0.4, (300, 700), 1000),
    ("recall", 0.4, (60, 140), 200),
    ("f1", 0.4, (1600, 8400), None),
    ("f1", 0.45, (300, 700), None),
    ("f1", 0.45, (300, 700), 1000),
    ("f1", 0.45, (60, 140), 200),
])
def test_stratified_plan_is_compared_with_the_least_simple_random_sample_of_its_collection(
        measure, theta, segments, population):
    plan = _plan(measure, theta, segments, population)
    least = least_srs_size(measure, theta, segments, population,
                           enumerate_segments=population is not None and population <= 200)
    assert plan.srs_test_size == least
    assert plan.labels_saved == least - plan.test_size


@pytest.mark.slow
@pytest.mark.parametrize(("measure", "theta", "segments", "population"), [
    ("f1", 0.5, (10_000, 90_000), None),
    ("f1", 0.5, (500, 4_500), 5_000),
    ("recall", 0.45, (10_000, 90_000), None),
])
def test_readme_matrix_is_compared_with_the_simple_random_sample_of_its_collection(
        measure, theta, segments, population):
    """The README's matrix: the planned size reaches the power and the sizes just below do
    not (the reference's power rises through them)."""
    plan = _plan(measure, theta, segments, population)
    size = plan.srs_test_size
    powers = [srs_power(n, measure, theta, segments, population)
              for n in range(size - 8, size + 1)]
    assert powers[-1] >= GOAL > max(powers[:-1])
    assert np.all(np.diff(powers) > 0)
    assert plan.labels_saved == size - plan.test_size


@pytest.mark.slow
@pytest.mark.parametrize(("measure", "theta"), [("precision", 0.6), ("elusion", 0.1)])
def test_single_segment_plans_are_compared_with_the_simple_random_sample_of_their_collection(
        measure, theta):
    """Precision samples the retrieved segment only, elusion the unretrieved one; a simple
    random sample of the collection finds a binomial share of that segment's documents."""
    segments = (1600, 8400)
    plan = _plan(measure, theta, segments)
    a = np.asarray(SAMPLE) + 0.5
    share, (hit, miss) = ((segments[0], (a[0], a[1])) if measure == "precision"
                          else (segments[1], (a[2], a[3])))

    def passing(d):  # P(pass | d of the segment's documents in the test set)
        count = np.arange(d + 1)
        if measure == "precision":
            ok = _clopper_pearson_low(count, d) > theta
        else:  # elusion: the upper bound on fn among d unretrieved documents
            with np.errstate(invalid="ignore"):
                high = stats.beta.ppf(LEVEL, count + 1, d - count)
            ok = np.where(count < d, high, 1.0) < theta
        return stats.betabinom.pmf(count, d, hit, miss) @ ok

    given = np.array([passing(d) for d in range(3_001)])
    n = 1
    while stats.binom.pmf(np.arange(n + 1), n, share / sum(segments)) @ given[:n + 1] < GOAL:
        n += 1
    assert plan.srs_test_size == n
    assert plan.labels_saved == n - plan.test_size > 0


def _stratified_text(capsys, theta, segments, *extra):
    argv = ["sample-size", *COUNTS, "--target", str(theta), "--measure", "f1",
            "--design", "stratified", "--retrieved", str(segments[0]),
            "--unretrieved", str(segments[1]), *extra]
    assert main(argv) == 0
    return capsys.readouterr().out


@pytest.mark.slow
def test_cli_says_how_many_labels_stratification_saves(capsys):
    out = _stratified_text(capsys, 0.4, (1600, 8400))
    plan = _plan("f1", 0.4, (1600, 8400))
    srs = least_srs_size("f1", 0.4, (1600, 8400))
    assert (f"simple random sample of the same collection (10000 documents, treated as "
            f"infinite; same measure, target, level, power, posterior): {srs} documents") in out
    assert f"stratification saves {srs - plan.test_size} labels" in out
    assert srs > plan.test_size


def test_cli_says_why_stratification_labels_more_at_equal_costs(capsys):
    """Equal costs: the least-cost allocation is the least-labels one, so the cost is not the
    reason; the Bonferroni bound is."""
    out = _stratified_text(capsys, 0.45, (300, 700))
    plan = _plan("f1", 0.45, (300, 700))
    more = plan.test_size - least_srs_size("f1", 0.45, (300, 700))
    assert more > 0
    assert (f"stratification labels {more} more documents: its bound joins the two segments' "
            "97.5% bounds (Bonferroni) at their worst corner, wider than the simple random "
            "sample's one 95% bound\n") in out
    assert "cost" not in out.split("stratification labels")[1].split("\n")[0]


def test_cli_says_what_unequal_costs_do(capsys):
    out = _stratified_text(capsys, 0.45, (300, 700), "--cost", "1", "3")
    plan = _plan("f1", 0.45, (300, 700), cost=(1.0, 3.0))
    srs = least_srs_size("f1", 0.45, (300, 700))
    assert plan.test_size > srs
    expected = srs * (1 * 300 + 3 * 700) / 1000  # n1 ~ Binomial(n, 0.3): mean 0.3 n
    assert (f"stratification labels {plan.test_size - srs} more documents: its bound joins "
            "the two segments' 97.5% bounds (Bonferroni) at their worst corner, wider than "
            "the simple random sample's one 95% bound; the allocation minimises the cost "
            f"({plan.total_cost:g}, against the simple random sample's {expected:g} on "
            "average), not the labels\n") in out


def test_cli_compares_with_the_finite_collection_given(capsys):
    out = _stratified_text(capsys, 0.45, (60, 140), "--population-size", "200")
    srs = least_srs_size("f1", 0.45, (60, 140), 200, enumerate_segments=True)
    assert srs < least_srs_size("f1", 0.45, (60, 140))  # the finite collection matters
    assert (f"simple random sample of the same collection (200 documents, without "
            f"replacement; same measure, target, level, power, posterior): {srs} "
            "documents") in out
    assert "infinite" not in out


@pytest.mark.slow
def test_cli_readme_example_with_a_finite_collection(capsys):
    out = _stratified_text(capsys, 0.5, (500, 4_500), "--population-size", "5000")
    plan = _plan("f1", 0.5, (500, 4_500), 5_000)
    srs = plan.srs_test_size
    assert srs_power(srs, "f1", 0.5, (500, 4_500), 5_000) >= GOAL > srs_power(
        srs - 1, "f1", 0.5, (500, 4_500), 5_000)
    assert (f"simple random sample of the same collection (5000 documents, without "
            f"replacement; same measure, target, level, power, posterior): {srs} "
            f"documents\nstratification saves {srs - plan.test_size} labels\n") in out
