"""The simulated planner's shortcuts give exactly what the public functions give.

The planner (`estimators.power`, `estimators._simulated_plan`) bounds its simulated test sets
with `estimators.fmeasure._srs_lower_bounds` instead of `f1_ci`, bounds each distinct ``(tp,
errors)`` pair once for the costly methods (small pairs once per process), restarts its sampling
generator from a saved state instead of seeding a new one, answers its searches with counts of
bounds instead of sorted bounds, and makes the seeds of its batches one at a time. Each shortcut
is checked here against the plain computation, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from estimators import certification_sample_size, f1_ci
from estimators._simulated_plan import _children
from estimators.fmeasure import _srs_lower_bounds
from estimators.power import _TABLE_SIDE, LOSCI_METHODS, _ThetaStarCurve, confusion_posterior

CONFUSION = (60, 20, 25, 395)


def edge_and_random_counts(seed: int, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(tp, errors, n)``: every corner (no trial, no error, no true positive) and random
    counts from tiny to large samples."""
    gen = np.random.default_rng(seed)
    n = gen.choice([1, 2, 5, 30, 500, 10_000, 10**7], size=size)
    tp = gen.binomial(n, gen.uniform(0, 1, size))
    errors = gen.binomial(n - tp, gen.uniform(0, 1, size))
    corners = np.array([[0, 0, 10], [0, 5, 10], [5, 0, 10], [3, 7, 10], [0, 0, 1], [1, 0, 1],
                        [0, 1, 1]])
    tp, errors, n = (np.concatenate([c, v]) for c, v in zip(corners.T, (tp, errors, n),
                                                            strict=True))
    return tp.astype(np.int64), errors.astype(np.int64), n.astype(np.int64)


@pytest.mark.parametrize("method", LOSCI_METHODS)
@pytest.mark.parametrize("level", [0.95, 0.8, 0.999])
def test_unvalidated_bounds_are_f1_ci_bounds_bit_for_bit(method, level):
    tp, errors, n = edge_and_random_counts(int(level * 1000), 400)
    expected = f1_ci(tp, errors, 0, n - tp - errors, method=method, confidence_level=level,
                     alternative="greater").low
    np.testing.assert_array_equal(_srs_lower_bounds(tp, errors, level, method), expected)


def make_curve(method: str, draws: int = 2000, seed: int = 5) -> _ThetaStarCurve:
    post = confusion_posterior(CONFUSION)
    r1, r0 = post.draw(draws, rng=seed)
    return _ThetaStarCurve(r1=r1, r0=r0, q=post.draw_share(draws),
                           sampling_seed=np.random.SeedSequence(seed + 1), confidence_level=0.95,
                           quantile=0.07, method=method)


def plain_bounds(curve: _ThetaStarCurve, size: int) -> np.ndarray:
    """The bounds from a newly seeded generator and `f1_ci`, undefined F1 counted as 0."""
    rng = np.random.default_rng(curve.sampling_seed)
    p_tp = curve.q * curve.r1
    rest = 1.0 - p_tp
    p_errors = curve.q * (1.0 - curve.r1) + (1.0 - curve.q) * curve.r0
    share = np.divide(p_errors, rest, out=np.zeros_like(rest), where=rest > 0)
    tp = rng.binomial(size, p_tp)
    e = rng.binomial(size - tp, np.minimum(share, 1.0))
    low = f1_ci(tp, e, 0, size - tp - e, method=curve.method, confidence_level=0.95,
                alternative="greater").low
    return np.nan_to_num(low, nan=0.0)


@pytest.mark.parametrize("method", ["delta", "jaccard-clopper-pearson", "dirichlet-posterior",
                                    "jaccard-mid-p", "jaccard-wilson"])
def test_curve_bounds_are_the_plain_bounds_at_every_size_in_any_order(method):
    curve = make_curve(method)
    # 2**31 + 5: too large to key a pair, bounded without keeping its pairs
    for size in (1, 3000, 7, 3000, 100_000, 64, 2**31 + 5, 1, 2999):
        np.testing.assert_array_equal(curve.lower_bounds(size), plain_bounds(curve, size))


def test_kept_pair_bounds_are_sorted_distinct_and_the_pairs_own():
    curve = make_curve("jaccard-clopper-pearson", draws=500)
    # pairs of small sizes go to the process's table, those of 60,000 (tp above 2**12) are
    # kept sorted by the curve
    for size in (50, 52, 51, 400, 60_000, 50):
        curve.lower_bounds(size)
    kept = curve._pair_bounds
    assert kept.keys.size > 0 and np.all(np.diff(kept.keys) > 0)
    tp, errors = np.divmod(kept.keys, 2**32)
    assert np.all((tp >= _TABLE_SIDE) | (errors >= _TABLE_SIDE))
    np.testing.assert_array_equal(
        kept.values, _srs_lower_bounds(tp, errors, 0.95, "jaccard-clopper-pearson"))
    table = kept.table.values
    tp, errors = np.nonzero(~np.isnan(table))
    assert tp.size >= 500
    np.testing.assert_array_equal(
        table[tp, errors], _srs_lower_bounds(tp, errors, 0.95, "jaccard-clopper-pearson"))


def test_the_pair_table_is_shared_by_the_curves_of_a_level_and_method():
    made = [make_curve(method, draws=300, seed=seed)
            for method, seed in [("jaccard-clopper-pearson", 7), ("jaccard-clopper-pearson", 8),
                                 ("jaccard-jeffreys", 7)]]
    assert made[0]._pair_bounds.table is made[1]._pair_bounds.table
    assert made[0]._pair_bounds.table is not made[2]._pair_bounds.table
    for curve in made:
        np.testing.assert_array_equal(curve.lower_bounds(120), plain_bounds(curve, 120))
    none = np.empty(0, dtype=np.int64)
    assert made[0]._pair_bounds(none, none).shape == (0,)


def test_counts_answer_the_order_statistic_questions_exactly():
    curve = make_curve("delta", draws=500)
    for size in (5, 40, 700, 5000):
        ordered = np.sort(plain_bounds(curve, size))
        thresholds = [*ordered[[0, 34, 35, 36, 250, 499]], 0.0, 0.6, 1.0]
        for threshold in thresholds:
            for rank in (1, 35, 36, 500):
                assert curve.reaches(size, rank, threshold) == (ordered[rank - 1] >= threshold)
                assert curve.at_most(size, rank, threshold) == (ordered[rank - 1] <= threshold)
            assert curve.passing(size, threshold) == np.count_nonzero(ordered > threshold)
        assert [curve.order_statistic(size, k) for k in (1, 35, 500)] == ordered[
            [0, 34, 499]].tolist()


def test_children_are_the_spawned_children_and_leave_the_root_alone():
    root = np.random.SeedSequence(20130, spawn_key=(3,))
    root.spawn(2)
    made = list(_children(root, 5))
    assert root.n_children_spawned == 2
    spawned = root.spawn(5)
    for ours, theirs in zip(made, spawned, strict=True):
        assert ours.spawn_key == theirs.spawn_key
        np.testing.assert_array_equal(ours.generate_state(8), theirs.generate_state(8))


def test_a_callers_seed_sequence_still_gives_up_64_children_per_plan():
    seeds = np.random.SeedSequence(99)
    first = certification_sample_size(CONFUSION, 0.6, draws=200, rng=seeds)
    assert seeds.n_children_spawned == 64
    again = certification_sample_size(CONFUSION, 0.6, draws=200, rng=99)
    assert (first.test_size, first.theta_star) == (again.test_size, again.theta_star)
    later = certification_sample_size(CONFUSION, 0.6, draws=200, rng=seeds)
    assert seeds.n_children_spawned == 128
    assert later.theta_star != first.theta_star
