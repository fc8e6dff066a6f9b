"""The one-kernel path of `estimators.proportion_ci` for counts whose failures are reversed.

A lower-bound method's upper bound is its lower bound at the failure counts ``n - x``,
reflected. When ``n - x`` is ``x`` reversed (one ``n``, counts symmetric about ``n / 2``, such
as the ``x = 0..n`` of an exact enumeration), the kernel runs once and its values are reused
reversed (`estimators.proportion._mirrored`). These tests hold that path to the bits of the
plain one, which runs the kernel a second time on ``n - x``: the same counts with one more
count of another ``n`` appended are not mirrored and take the plain path.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estimators import proportion_ci
from estimators.proportion import _LOWER_BOUNDS, _mirrored

LEVELS = (0.5, 0.9, 0.95, 0.99)
ALTERNATIVES = ("two-sided", "greater", "less")


def _plain(x: np.ndarray, n: int, **options: object) -> tuple[np.ndarray, np.ndarray]:
    """The bounds at ``x`` computed on the plain path: one more count, of another ``n``."""
    counts = np.append(x, 0)
    trials = np.append(np.full(x.size, n), n + 1)
    assert not _mirrored(counts, trials)
    low, high = proportion_ci(counts, trials, **options)
    return low[:-1], high[:-1]


def _same_bits(x: np.ndarray, n: int, **options: object) -> None:
    low, high = proportion_ci(x, n, **options)
    plain_low, plain_high = _plain(x, n, **options)
    np.testing.assert_array_equal(low, plain_low)
    np.testing.assert_array_equal(high, plain_high)


@pytest.mark.parametrize("n", [3, 10, 57, 500, 1000])
@pytest.mark.parametrize("method", sorted(_LOWER_BOUNDS))
def test_every_count_gives_the_bits_of_the_plain_path(n, method):
    x = np.arange(n + 1)
    assert _mirrored(x, np.full(x.size, n))
    for level, alternative in itertools.product(LEVELS, ALTERNATIVES):
        _same_bits(x, n, method=method, confidence_level=level, alternative=alternative)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 400), picks=st.lists(st.integers(0, 400), min_size=1, max_size=12),
       method=st.sampled_from(sorted(_LOWER_BOUNDS)), level=st.sampled_from(LEVELS),
       alternative=st.sampled_from(ALTERNATIVES))
def test_symmetric_counts_give_the_bits_of_the_plain_path(n, picks, method, level,
                                                          alternative):
    half = {p % (n + 1) for p in picks}
    x = np.array(sorted(half | {n - k for k in half}))
    assert _mirrored(x, np.full(x.size, n))
    _same_bits(x, n, method=method, confidence_level=level, alternative=alternative)


@pytest.mark.parametrize(("x", "n", "mirrored"), [
    (np.arange(6), np.full(6, 5), True),
    (np.array([0, 2, 3, 5]), np.full(4, 5), True),
    (np.array([2]), np.array([4]), True),
    (np.array([0, 1, 2, 5]), np.full(4, 5), False),  # 5 - x = [5, 4, 3, 0]
    (np.array([0, 5, 1, 4]), np.full(4, 5), False),  # symmetric as a set, not reversed
    (np.arange(6), np.array([5, 5, 6, 6, 5, 5]), False),  # more than one n
    (np.array([1]), np.array([4]), False),
    (np.arange(6).reshape(2, 3), np.full((2, 3), 5), False),
    (np.array([], dtype=np.int64), np.array([], dtype=np.int64), False),
])
def test_mirrored_counts_are_recognised(x, n, mirrored):
    assert _mirrored(x, n) is mirrored


def test_a_scalar_trials_broadcast_over_the_counts_is_mirrored():
    x, n = np.broadcast_arrays(np.arange(11), np.asarray(10))
    assert _mirrored(x, n)
    _same_bits(np.arange(11), 10, method="mid-p", alternative="less")
