"""F1's Monte Carlo draws in place give exactly what the plain expressions give.

`estimators.fmeasure` computes the F1 of its posterior and bootstrap draws in place, into an
array whose draws axis is contiguous (`_f1_of_segment_draws`, `_drawn_shares`,
`_ratio_into`), instead of with `f1_from_segments` and `estimators._numeric.ratio` on new
arrays. Each is checked here against the plain computation, bit for bit, on counts with
every undefined case (no sample, no relevant document, a segment without population share).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from estimators._numeric import ratio
from estimators.fmeasure import (
    _beta_posterior_draws,
    _bootstrap_draws,
    _f1_of_segment_draws,
    f1_estimate,
    f1_from_segments,
)

DRAWS = 64
# columns: an ordinary sample, a segment without a sample, no relevant document, nothing
# observed, a one-document sample
COUNTS = ([60, 0, 0, 0, 1], [20, 0, 7, 0, 0], [25, 3, 0, 0, 0], [395, 40, 9, 0, 0])
# population sizes with a segment of no population share in the last two columns
SIZES = ([800, 0, 70, 0, 5], [9200, 50, 900, 10, 0])


def _plain_beta_posterior(est, rng, draws):
    """`_beta_posterior_draws` as the plain expressions (Bagdouri et al. 2013, section 4.3)."""
    shape = (draws, *est.tp.shape)
    r1 = rng.beta(0.5 + est.tp, 0.5 + est.fp, size=shape)
    r0 = rng.beta(0.5 + est.fn, 0.5 + est.tn, size=shape)
    if est.finite_population:
        big1, big0 = est.population_sizes
        n1, n0 = est.tp + est.fp, est.fn + est.tn
        r1 = ratio(est.tp + rng.binomial(big1 - n1, r1), big1.astype(np.float64))
        r0 = ratio(est.fn + rng.binomial(big0 - n0, r0), big0.astype(np.float64))
    return f1_from_segments(est.retrieved_share, r1, r0)


def _plain_bootstrap(est, rng, draws):
    """`_bootstrap_draws` as the plain expressions (conditional binomials per design)."""
    shape = (draws, *est.tp.shape)
    if est.design == "srs":
        n = est.tp + est.fp + est.fn + est.tn
        tp = rng.binomial(n, np.nan_to_num(ratio(est.tp, n)), size=shape)
        rest = n - est.tp
        share = np.where(rest > 0, ratio((est.fp + est.fn).astype(np.float64),
                                         rest.astype(np.float64)), 0)
        e = rng.binomial(n - tp, share, size=shape)
        return ratio(2.0 * tp, 2.0 * tp + e)
    q, r1, r0 = est._segments()
    n1, n0 = est.tp + est.fp, est.fn + est.tn
    tp = rng.binomial(n1, np.nan_to_num(r1), size=shape)
    fn = rng.binomial(n0, np.nan_to_num(r0), size=shape)
    r1_star = np.where(q == 0.0, 0.0, ratio(tp.astype(np.float64), n1.astype(np.float64)))
    r0_star = np.where(q == 1.0, 0.0, ratio(fn.astype(np.float64), n0.astype(np.float64)))
    return f1_from_segments(q, r1_star, r0_star)


def _same(got, expected):
    assert got.shape == expected.shape
    # the same bits: nan where the plain path's are, +0.0 and -0.0 told apart
    assert np.ascontiguousarray(got).tobytes() == expected.tobytes(), (got, expected)


_shares = st.one_of(st.just(0.0), st.just(1.0), st.just(np.nan),
                    st.floats(0.0, 1.0, allow_subnormal=True))


@example(q=np.array([0.0, 1.0, 0.3]),
         r1=np.array([[0.0, 0.0, np.nan], [1.0, 0.5, 0.0]]),
         r0=np.array([[0.0, 0.2, 0.0], [np.nan, 0.0, 0.0]]))
@given(q=hnp.arrays(np.float64, st.integers(1, 6), elements=_shares),
       r1=hnp.arrays(np.float64, (3, 6), elements=_shares),
       r0=hnp.arrays(np.float64, (3, 6), elements=_shares))
@settings(max_examples=300)
def test_f1_of_segment_draws_is_f1_from_segments_bit_for_bit(q, r1, r0):
    r1, r0 = r1[:, :q.size], r0[:, :q.size]
    expected = f1_from_segments(q, r1, r0)
    _same(_f1_of_segment_draws(q, r1.copy(), r0.copy()), expected)


@pytest.mark.parametrize(("design", "sizes", "finite"), [
    ("srs", None, False), ("stratified", "sample", False), ("stratified", SIZES, False),
    ("stratified", SIZES, True)])
@pytest.mark.parametrize("scalar", [False, True])
def test_beta_posterior_draws_are_the_plain_expressions(design, sizes, finite, scalar):
    counts, sizes = _pick(COUNTS, sizes, scalar)
    est = f1_estimate(*counts, design=design, population_sizes=sizes, finite_population=finite)
    got = _beta_posterior_draws(est, np.random.default_rng(5), DRAWS)
    _same(got, _plain_beta_posterior(est, np.random.default_rng(5), DRAWS))


@pytest.mark.parametrize(("design", "sizes"), [
    ("srs", None), ("stratified", "sample"), ("stratified", SIZES)])
@pytest.mark.parametrize("scalar", [False, True])
def test_bootstrap_draws_are_the_plain_expressions(design, sizes, scalar):
    counts, sizes = _pick(COUNTS, sizes, scalar)
    est = f1_estimate(*counts, design=design, population_sizes=sizes)
    got = _bootstrap_draws(est, np.random.default_rng(6), DRAWS)
    _same(got, _plain_bootstrap(est, np.random.default_rng(6), DRAWS))


def _pick(counts, sizes, scalar):
    """The counts (and sizes) of every column, or of the first column alone as scalars."""
    if not scalar:
        return counts, sizes
    return [c[0] for c in counts], sizes if not isinstance(sizes, tuple) else tuple(
        s[0] for s in sizes)
