"""The budget questions from a labelled sample (`estimators.gain`): references, properties, errors.

References: hand computations; the exact hypergeometric law in rational arithmetic
(`math.comb`, `fractions.Fraction`), inverted by brute force over every ``K``; exact
enumeration of small finite populations; `estimators.proportion_ci`; the exact ("ideal")
bootstrap distribution. Monte Carlo checks use fixed seeds and a tolerance from a stated
false-alarm rate.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from estimators import (
    BUDGET_POSITIVES_METHODS,
    CUMULATIVE_GAIN_METHODS,
    BudgetPositives,
    CumulativeGainEstimate,
    Interval,
    budget_positives,
    cumulative_gain_estimate,
    proportion_ci,
)

# ------------------------------------------------------------------ exact references


def hypergeometric_pmf(x: int, size: int, marked: int, drawn: int) -> Fraction:
    """P(X = x) for X ~ Hypergeometric(size, marked, drawn), exactly."""
    return Fraction(math.comb(marked, x) * math.comb(size - marked, drawn - x),
                    math.comb(size, drawn))


def brute_force_interval(x: int, drawn: int, size: int, level: Fraction,
                         alternative: str = "two-sided") -> tuple[int, int]:
    """Every K whose exact one-sided tests at ``x`` both reach the tail: the (closed) interval."""
    tail = (1 - level) / 2 if alternative == "two-sided" else 1 - level
    kept = []
    for marked in range(size + 1):
        pmf = [hypergeometric_pmf(j, size, marked, drawn) for j in range(drawn + 1)]
        upper_tail, lower_tail = sum(pmf[x:]), sum(pmf[:x + 1])
        keep_low = alternative == "less" or upper_tail >= tail
        keep_high = alternative == "greater" or lower_tail >= tail
        if keep_low and keep_high:
            kept.append(marked)
    return min(kept), max(kept)


def bought(x: int, drawn: int, size: int, sampled: int | None = None,
           total: int | None = None) -> BudgetPositives:
    sampled = drawn if sampled is None else sampled
    return BudgetPositives(x, drawn, set_size=size, sampled=sampled,
                           population_size=size + sampled - drawn if total is None else total)


# ------------------------------------------------------------------ hand computations


def test_hand_computed_exact_intervals():
    # 5 of 5 sampled set items positive, set of 10: P(X >= 5) = C(K, 5) / C(10, 5) = C(K, 5) / 252
    # reaches 0.025 (6.3 / 252) from K = 7 (21 / 252) on; C(6, 5) = 6 does not.
    assert tuple(bought(5, 5, 10).confidence_interval()) == (7.0, 10.0)
    # none of 5 positive: by symmetry at most 3 of the 10
    assert tuple(bought(0, 5, 10).confidence_interval()) == (0.0, 3.0)
    # 1 of 2 sampled from a set of 4: every K from 1 to 3 is compatible at 95%
    assert tuple(bought(1, 2, 4).confidence_interval()) == (1.0, 3.0)
    # one-sided 90%: the lower bound is the smallest K with C(K, 5) / 252 >= 0.1, K = 8 (56)
    assert bought(5, 5, 10).confidence_interval(0.9, alternative="greater").low == 8.0
    assert bought(5, 5, 10).confidence_interval(0.9, alternative="greater").high == 10.0


def test_estimates_by_hand():
    est = BudgetPositives(3, 12, set_size=100, sampled=60, population_size=1000)
    assert est.estimate == 25.0  # 100 * 3 / 12
    assert est.expansion_estimate == 50.0  # 1000 * 3 / 60
    gain = CumulativeGainEstimate(3, 12, set_size=100, sampled=60, sampled_positives=5,
                                  population_size=1000)
    assert gain.estimate == 0.6
    # post-stratified: 25 in the set, 900 * 2 / 48 = 37.5 outside: 25 / 62.5
    assert gain.stratified_estimate == pytest.approx(0.4, abs=1e-15)


def test_no_information_policy():
    empty = BudgetPositives([0, 0], [0, 0], set_size=[7, 30], sampled=[5, 9],
                            population_size=[100, 100])
    assert np.isnan(empty.estimate).all()
    for method in BUDGET_POSITIVES_METHODS:
        ci = empty.confidence_interval(method=method, rng=1, draws=50)
        assert ci.low.tolist() == [0.0, 0.0] and ci.high.tolist() == [7.0, 30.0]
    no_positive = CumulativeGainEstimate(0, 4, set_size=10, sampled=20, sampled_positives=0,
                                         population_size=100)
    assert math.isnan(no_positive.estimate) and math.isnan(no_positive.stratified_estimate)
    for method in CUMULATIVE_GAIN_METHODS:
        assert tuple(no_positive.confidence_interval(method=method, rng=1, draws=50)) == (
            0.0, 1.0)


# ------------------------------------------------------------------ the exact method


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_exact_method_is_the_brute_force_inversion_in_rationals(alternative):
    # Every (x, n_B) of every set of up to 9 items, at two levels.
    for size in range(1, 10):
        for drawn in range(size + 1):
            xs = np.arange(drawn + 1)
            for level in (Fraction(9, 10), Fraction(95, 100)):
                ci = bought(xs, np.full(xs.shape, drawn), size).confidence_interval(
                    float(level), alternative=alternative)
                for x in xs.tolist():
                    low, high = brute_force_interval(x, drawn, size, level, alternative)
                    if drawn == 0:
                        low, high = 0, size
                    assert (ci.low[x], ci.high[x]) == (low, high), (x, drawn, size, level)


@pytest.mark.parametrize(("size", "drawn"), [(200, 30), (1000, 120),
                                             pytest.param(5000, 400, marks=pytest.mark.slow)])
def test_exact_method_matches_a_scan_over_every_k_on_larger_sets(size, drawn):
    # The bisection against scipy.stats.hypergeom evaluated at every K (no bisection).
    xs = np.arange(0, drawn + 1, max(1, drawn // 25))
    marked = np.arange(size + 1)
    ci = bought(xs, np.full(xs.shape, drawn), size).confidence_interval(0.95)
    for i, x in enumerate(xs.tolist()):
        upper_tail = stats.hypergeom.sf(x - 1, size, marked, drawn)
        lower_tail = stats.hypergeom.cdf(x, size, marked, drawn)
        kept = marked[(upper_tail >= 0.025) & (lower_tail >= 0.025)]
        assert (ci.low[i], ci.high[i]) == (kept.min(), kept.max())


def test_exact_method_covers_at_least_nominally_for_every_k():
    # Exact coverage given n_B: sum of P(x) over the x whose interval holds K, in rationals.
    for size, drawn in [(8, 3), (12, 5), (15, 15), (20, 7)]:
        xs = np.arange(drawn + 1)
        ci = bought(xs, np.full(xs.shape, drawn), size).confidence_interval(0.9)
        for marked in range(size + 1):
            covered = sum(hypergeometric_pmf(x, size, marked, drawn) for x in range(drawn + 1)
                          if ci.low[x] <= marked <= ci.high[x])
            assert covered >= Fraction(9, 10), (size, drawn, marked, covered)


def test_post_stratified_estimate_is_conditionally_unbiased_by_enumeration():
    # Population of 12 items, a set of 5 holding 3 positives, 4 positives outside; every
    # sample of 4 items enumerated: E[B x / n_B | n_B] = K for each n_B > 0, E[N x / n] = K.
    labels = [1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 0]  # the set's 5 items, then the 7 others
    in_set = [True] * 5 + [False] * 7
    by_drawn: dict[int, list[Fraction]] = {}
    expansion = []
    for sample in itertools.combinations(range(12), 4):
        x = sum(labels[i] for i in sample if in_set[i])
        drawn = sum(in_set[i] for i in sample)
        est = bought(x, drawn, 5, sampled=4, total=12)
        if drawn:
            by_drawn.setdefault(drawn, []).append(Fraction(5 * x, drawn))
            assert est.estimate == pytest.approx(5 * x / drawn)
        expansion.append(Fraction(12 * x, 4))
    for values in by_drawn.values():
        assert sum(values) / len(values) == 3
    assert sum(expansion) / len(expansion) == 3


# ------------------------------------------------------------------ the approximations


def test_binomial_method_is_clopper_pearson_scaled_and_clipped():
    x = np.array([0, 1, 4, 9, 10, 10])
    drawn = np.array([10, 10, 10, 10, 10, 12])
    size = np.array([50, 50, 50, 50, 11, 12])
    ci = BudgetPositives(x, drawn, set_size=size, sampled=40, population_size=200
                         ).confidence_interval(method="binomial")
    reference = proportion_ci(x, drawn, method="clopper-pearson")
    np.testing.assert_allclose(ci.low, np.maximum(reference.low * size, x), rtol=1e-15)
    np.testing.assert_allclose(ci.high, np.minimum(reference.high * size, size - drawn + x),
                               rtol=1e-15)
    assert ci.low[4] == 10.0 and ci.high[4] == 11.0  # a set of 11 sampled to 10, all positive
    assert ci.low[5] == ci.high[5] == 10.0  # the whole set sampled: K known exactly


def test_gain_binomial_method_is_clopper_pearson_on_the_sampled_positives():
    x, positives = np.array([0, 3, 7, 20]), np.array([5, 8, 7, 31])
    gain = CumulativeGainEstimate(x, x + 2, set_size=300, sampled=80,
                                  sampled_positives=positives, population_size=1000)
    for alternative in ("two-sided", "greater", "less"):
        ours = gain.confidence_interval(0.9, alternative=alternative)
        reference = proportion_ci(x, positives, method="clopper-pearson",
                                  confidence_level=0.9, alternative=alternative)
        np.testing.assert_array_equal(ours.low, reference.low)
        np.testing.assert_array_equal(ours.high, reference.high)


def ideal_bootstrap_quantile(x: int, drawn: int, sampled: int, size: int, q: float) -> float:
    """The q-quantile (inverted CDF) of the exact bootstrap law of B x* / n_B* given n_B* > 0."""
    values: dict[float, float] = {}
    for star in range(1, sampled + 1):
        weight = stats.binom.pmf(star, sampled, drawn / sampled)
        for hits in range(star + 1):
            value = size * hits / star
            values[value] = values.get(value, 0.0) + weight * stats.binom.pmf(hits, star,
                                                                            x / drawn)
    support = np.array(sorted(values))
    cdf = np.cumsum([values[v] for v in support]) / sum(values.values())
    return float(support[np.searchsorted(cdf, q)])


def test_bootstrap_matches_the_ideal_bootstrap_within_monte_carlo_error():
    # The percentile bounds of 40,000 resamples lie between the exact bootstrap law's
    # quantiles at q -/+ 4.4 sqrt(q (1 - q) / D): each side fails with probability about
    # 1e-5 (normal approximation of the empirical CDF; two bounds, two cases).
    draws = 40_000
    for x, drawn, sampled, size in [(3, 7, 30, 100), (12, 15, 40, 400)]:
        ci = bought(x, drawn, size, sampled=sampled, total=10_000).confidence_interval(
            method="bootstrap", rng=np.random.default_rng(5), draws=draws)
        for bound, q in ((ci.low, 0.025), (ci.high, 0.975)):
            slack = 4.4 * math.sqrt(q * (1 - q) / draws)
            lowest, highest = (min(max(ideal_bootstrap_quantile(x, drawn, sampled, size, p), x),
                                   size - drawn + x)  # clipped to what the sample allows
                               for p in (q - slack, q + slack))
            assert lowest <= bound <= highest, (x, q, bound)


def test_bootstrap_is_reproducible_and_vectorized():
    x, drawn = np.array([2, 5, 9]), np.array([10, 10, 12])
    est = BudgetPositives(x, drawn, set_size=100, sampled=60, population_size=1000)
    first = est.confidence_interval(method="bootstrap", rng=7, draws=500)
    again = est.confidence_interval(method="bootstrap", rng=np.random.default_rng(7), draws=500)
    np.testing.assert_array_equal(first.low, again.low)
    np.testing.assert_array_equal(first.high, again.high)
    gain = CumulativeGainEstimate(x, drawn, set_size=100, sampled=60, sampled_positives=12,
                                  population_size=1000)
    ci = gain.confidence_interval(method="bootstrap", rng=3, draws=400)
    assert ci.low.shape == (3,) and np.all((0 <= ci.low) & (ci.low <= ci.high) & (ci.high <= 1))


def test_bootstrap_of_a_sample_all_positive_in_the_set_is_a_point():
    # Every resample's set items are positive: the percentile interval is {B} and misses
    # every K < B, the bootstrap's failure with few or extreme counts.
    ci = bought(6, 6, 50, sampled=40, total=400).confidence_interval(method="bootstrap",
                                                                       rng=1, draws=200)
    assert tuple(ci) == (50.0, 50.0)
    # the exact interval: C(K, 6) / C(50, 6) >= 0.025 (397,267.5 / 15,890,700) from K = 29
    # (C(29, 6) = 475,020; C(28, 6) = 376,740)
    assert tuple(bought(6, 6, 50, sampled=40, total=400).confidence_interval()) == (29.0, 50.0)


# ------------------------------------------------------------------ properties

@st.composite
def designs(draw: st.DrawFn) -> tuple[int, int, int, int, int]:
    """(x, n_B, B, n, N) of a valid sample: n_B of the n sampled items in a set of B."""
    size = draw(st.integers(1, 400))
    drawn = draw(st.integers(0, min(size, 60)))
    x = draw(st.integers(0, drawn))
    outside = draw(st.integers(0, 60))
    total = size + outside + draw(st.integers(0, 500))
    return x, drawn, size, drawn + outside, total


LEVELS = st.floats(0.5, 0.999)


@settings(max_examples=150, deadline=None)
@given(designs(), LEVELS, LEVELS, st.sampled_from(BUDGET_POSITIVES_METHODS),
       st.sampled_from(["two-sided", "greater", "less"]))
def test_budget_intervals_are_ordered_bounded_and_nested(design, a, b, method, alternative):
    x, drawn, size, sampled, total = design
    est = BudgetPositives(x, drawn, set_size=size, sampled=sampled, population_size=total)
    narrow, wide = (est.confidence_interval(level, method=method, alternative=alternative,
                                            rng=11, draws=300) for level in sorted((a, b)))
    for ci in (narrow, wide):
        assert 0 <= ci.low <= ci.high <= size
        if drawn and alternative == "two-sided":
            assert x <= ci.low and ci.high <= size - drawn + x  # the values the sample allows
    assert wide.low <= narrow.low and narrow.high <= wide.high


@settings(max_examples=150, deadline=None)
@given(designs(), st.data(), LEVELS, LEVELS, st.sampled_from(CUMULATIVE_GAIN_METHODS),
       st.sampled_from(["two-sided", "greater", "less"]))
def test_gain_intervals_are_ordered_bounded_and_nested(design, data, a, b, method, alternative):
    x, drawn, size, sampled, total = design
    positives = x + data.draw(st.integers(0, sampled - drawn))
    est = CumulativeGainEstimate(x, drawn, set_size=size, sampled=sampled,
                                 sampled_positives=positives, population_size=total)
    narrow, wide = (est.confidence_interval(level, method=method, alternative=alternative,
                                            rng=11, draws=300) for level in sorted((a, b)))
    for ci in (narrow, wide):
        assert 0.0 <= ci.low <= ci.high <= 1.0
    assert wide.low <= narrow.low and narrow.high <= wide.high
    stratified = est.stratified_estimate
    assert math.isnan(stratified) or 0.0 <= stratified <= 1.0


@settings(max_examples=100, deadline=None)
@given(designs(), st.floats(0.8, 0.99))
def test_one_sided_bound_is_the_two_sided_bound_at_twice_the_tail(design, level):
    x, drawn, size, sampled, total = design
    est = BudgetPositives(x, drawn, set_size=size, sampled=sampled, population_size=total)
    for method in ("hypergeometric", "binomial"):
        two = est.confidence_interval(2 * level - 1, method=method)
        assert est.confidence_interval(level, method=method, alternative="greater").low \
            == two.low
        assert est.confidence_interval(level, method=method, alternative="less").high \
            == two.high


@settings(max_examples=60, deadline=None)
@given(st.lists(designs(), min_size=1, max_size=6))
def test_arrays_give_what_scalars_give(designs_):
    x, drawn, size, sampled, total = (np.array(c) for c in zip(*designs_, strict=True))
    est = BudgetPositives(x, drawn, set_size=size, sampled=sampled, population_size=total)
    for method in ("hypergeometric", "binomial"):
        ci = est.confidence_interval(method=method)
        for i in range(x.size):
            one = BudgetPositives(int(x[i]), int(drawn[i]), set_size=int(size[i]),
                                  sampled=int(sampled[i]), population_size=int(total[i]))
            assert tuple(one.confidence_interval(method=method)) == (ci.low[i], ci.high[i])


# ------------------------------------------------------------------ from scores


def slow_counts(scores, sample, labels, start, stop):
    """Sampled positives and items among ranks start..stop-1, by sorting the sample's ranks."""
    ranked = sorted(range(len(scores)), key=lambda i: -scores[i])
    members = set(ranked[start:stop])
    x = sum(label for item, label in zip(sample, labels, strict=True) if item in members)
    return x, sum(item in members for item in sample)


@settings(max_examples=100, deadline=None)
@given(st.integers(10, 80).flatmap(lambda n: st.tuples(
    st.permutations(list(range(n))), st.integers(1, n), st.integers(0, n), st.integers(1, 10),
    st.randoms(use_true_random=False))))
def test_counts_from_scores_match_a_slow_reference(case):
    order, sampled, items, bins, random = case
    n = len(order)
    scores = [float(s) for s in order]  # distinct: no ties
    sample = random.sample(range(n), sampled)
    labels = [random.randint(0, 1) for _ in sample]
    after = random.randint(0, n - items)
    est = budget_positives(scores, sample, labels, items=items, after=after)
    assert (est.in_set_positives, est.in_set) == slow_counts(scores, sample, labels, after,
                                                             after + items)
    assert (est.set_size, est.sampled, est.population_size) == (items, sampled, n)
    top = random.randint(1, min(bins, n))
    gain = cumulative_gain_estimate(scores, sample, labels, top_bins=top, bins=min(bins, n))
    size = top * n // min(bins, n)
    assert (gain.in_set_positives, gain.in_set) == slow_counts(scores, sample, labels, 0, size)
    assert gain.sampled_positives == sum(labels) and gain.set_size == size


def test_ties_inside_the_set_are_fine_across_its_edge_an_error():
    scores = [5.0, 4.0, 4.0, 3.0, 3.0, 1.0]
    est = budget_positives(scores, [0, 2, 5], [1, 0, 1], items=3)
    assert (est.in_set_positives, est.in_set) == (1, 2)
    with pytest.raises(ValueError, match=r"`scores` must not tie across the set's edge after "
                                         r"rank 2 \(score 4.0\)"):
        budget_positives(scores, [0, 2, 5], [1, 0, 1], items=2)
    with pytest.raises(ValueError, match="`scores` must not tie across the set's edge after "
                                         "rank 4"):
        budget_positives(scores, [0, 2, 5], [1, 0, 1], items=1, after=3)


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"in_set_positives": 4, "in_set": 3}, ValueError,
     "`in_set_positives` must not exceed `in_set`; got 4 above 3."),
    ({"in_set": 30}, ValueError, "`in_set` must not exceed `sampled`; got 30 above 20."),
    ({"set_size": 2, "in_set": 3}, ValueError, "`in_set` must not exceed `set_size`"),
    ({"set_size": 200}, ValueError, "`set_size` must not exceed `population_size`"),
    ({"sampled": 120}, ValueError, "`sampled` must not exceed `population_size`"),
    ({"set_size": 95}, ValueError,
     "`sampled` less `in_set` must not exceed `population_size` less `set_size`; got 17 above 5"),
    ({"in_set": -1}, ValueError, "`in_set` must be non-negative; got -1."),
    ({"set_size": 2.5}, ValueError, "`set_size` must hold whole numbers"),
    ({"sampled": "20"}, TypeError, "`sampled` must be an integer count"),
    ({"in_set_positives": [1, 2], "in_set": [3, 3, 3]}, ValueError,
     "`in_set_positives` and the other counts must broadcast to one shape"),
])
def test_budget_positives_rejects_bad_counts(kwargs, error, message):
    valid = {"in_set_positives": 2, "in_set": 3, "set_size": 10, "sampled": 20,
             "population_size": 100}
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        BudgetPositives(**{**valid, **kwargs})


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"sampled_positives": 1}, "`in_set_positives` must not exceed `sampled_positives`"),
    ({"sampled_positives": 25}, "`sampled_positives` must not exceed `sampled`"),
    ({"sampled_positives": 20},
     "`sampled_positives` less `in_set_positives` must not exceed `sampled` less `in_set`; "
     "got 18 above 17"),
])
def test_cumulative_gain_rejects_bad_counts(kwargs, message):
    valid = {"in_set_positives": 2, "in_set": 3, "set_size": 10, "sampled": 20,
             "sampled_positives": 5, "population_size": 100}
    with pytest.raises(ValueError, match=message):
        CumulativeGainEstimate(**{**valid, **kwargs})


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"method": "wilson"}, ValueError,
     "`method` must be one of 'hypergeometric', 'binomial', 'bootstrap'; got 'wilson'."),
    ({"confidence_level": 1.0}, ValueError, "`confidence_level` must be strictly between"),
    ({"alternative": "both"}, ValueError, "`alternative` must be one of"),
    ({"draws": 0}, ValueError, "`draws` must be a positive integer; got 0."),
    ({"method": "bootstrap", "draws": 10**9}, ValueError, "`draws` must be at most"),
    ({"rng": "seed"}, TypeError, "`rng` must be a numpy Generator"),
])
def test_interval_options_are_checked(kwargs, error, message):
    with pytest.raises(error, match=message):
        bought(2, 3, 10).confidence_interval(**kwargs)
    gain = CumulativeGainEstimate(2, 3, set_size=10, sampled=20, sampled_positives=5,
                                  population_size=100)
    if kwargs.get("method") != "wilson":
        with pytest.raises(error, match=message):
            gain.confidence_interval(**kwargs)


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: budget_positives([1.0, 2.0], [0, 2], [1, 0], items=1), ValueError,
     "`sample` must hold indices into `scores` (below 2); got 2 at index 1."),
    (lambda: budget_positives([1.0, 2.0, 3.0], [0, 0], [1, 0], items=1), ValueError,
     "`sample` must hold distinct indices"),
    (lambda: budget_positives([1.0, 2.0, 3.0], [0, 1], [1], items=1), ValueError,
     "`labels` must have the same length as `sample` (2)"),
    (lambda: budget_positives([1.0, 2.0, 3.0], [0, 1], [1, 2], items=1), ValueError,
     "`labels` must be 0 or 1"),
    (lambda: budget_positives([1.0, 2.0, 3.0], [0, 1], [1, 0], items=3, after=1), ValueError,
     "`items` must be at most the list length less `after` (3 - 1); got 3."),
    (lambda: budget_positives([1.0, 2.0, 3.0], [0, 1], [1, 0], items=-1), ValueError,
     "`items` must be at least 0; got -1."),
    (lambda: budget_positives([1.0, 2.0, 3.0], [[0, 1]], [1, 0], items=1), ValueError,
     "`sample` must be one-dimensional"),
    (lambda: budget_positives([1.0, math.nan], [0], [1], items=1), ValueError,
     "`scores` must be finite"),
    (lambda: cumulative_gain_estimate([1.0, 2.0, 3.0], [0, 1], [1, 0], top_bins=4, bins=3),
     ValueError, "`top_bins` must be at most `bins` (3); got 4."),
    (lambda: cumulative_gain_estimate([1.0, 2.0, 3.0], [0, 1], [1, 0], top_bins=1, bins=4),
     ValueError, "`bins` must be at most the number of items (3); got 4."),
    (lambda: cumulative_gain_estimate([1.0, 2.0, 3.0], [0, 1], [1, 0], top_bins=0, bins=3),
     ValueError, "`top_bins` must be a positive integer; got 0."),
])
def test_constructors_from_scores_reject_bad_input(call, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_results_are_frozen_and_intervals_are_intervals():
    est = bought(2, 3, 10)
    with pytest.raises(AttributeError):
        est.in_set = 4  # type: ignore[misc]
    assert isinstance(est.confidence_interval(), Interval)
