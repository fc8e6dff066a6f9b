"""`estimators.assurance`'s batched power curves and its beta-binomial pmf.

`Conditional.curves` runs the urn of the trials' law once for several tests sharing it; each
test's values must be its own `Conditional.curve`'s to the bit (the plans read their first
size reaching a power from them), and equal the direct sum ``Conditional.power`` (scipy's
pmf of the trials times the survival) within rounding. `_betabinom_pmf` must be scipy's
``betabinom.pmf`` to the bit, as the survival probabilities built from it are compared with
the planner's ones bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from estimators.assurance import URN_BLOCK, Conditional, CountLaw, _betabinom_pmf

SHARE = CountLaw("beta-binomial", 30.5, 170.5)  # the relevant share's posterior, r = 200


def _recall_test(tp: int, fn: int, ratio: float, outer: CountLaw | None = SHARE) -> Conditional:
    """Recall certified when ``x > ratio d`` of the ``d`` relevant documents are found."""
    def passes(x, d):
        return x > ratio * d
    return Conditional(CountLaw("beta-binomial", tp + 0.5, fn + 0.5), passes, outer)


def _tests() -> list[Conditional]:
    return [_recall_test(24, 6, 0.7), _recall_test(27, 3, 0.7), _recall_test(27, 3, 0.8),
            _recall_test(15, 15, 0.4)]


@pytest.mark.parametrize("a, b", [(0.5, 0.5), (30.5, 170.5), (1.0, 400.0), (250.0, 2.5)])
def test_betabinom_pmf_is_scipys_to_the_bit(a, b):
    rng = np.random.default_rng(5)
    for n in (0, 1, 2, 63, 700, 20_000):
        x = np.arange(-2, n + 3)
        np.testing.assert_array_equal(_betabinom_pmf(x, np.int64(n), a, b),
                                      stats.betabinom.pmf(x, n, a, b))
        trials = rng.integers(0, n + 1, size=50)
        counts = rng.integers(-1, trials + 2)
        np.testing.assert_array_equal(_betabinom_pmf(counts, trials, a, b),
                                      stats.betabinom.pmf(counts, trials, a, b))


def test_curves_are_each_tests_own_curve_to_the_bit():
    # different largest sizes end the tests' last blocks at different sizes; the values read
    # must still be the ones of each test's own curve, whatever the other tests sharing the
    # urn and however far each is read
    largest = [3 * URN_BLOCK + 5, 700, 130, 1000]
    read = [3 * URN_BLOCK + 5, 333, 64, 0]
    own = [test.curve(end) for test, end in zip(_tests(), largest, strict=True)]
    found = Conditional.curves(_tests(), largest, read=read)
    for curve, values, upto in zip(own, found, read, strict=True):
        assert values.shape == (upto + 1,)
        np.testing.assert_array_equal(values, curve[:upto + 1])
    whole = Conditional.curves(_tests(), largest)
    for curve, values in zip(own, whole, strict=True):
        np.testing.assert_array_equal(values, curve)


def test_curves_equal_the_direct_sums():
    tests = _tests()
    found = Conditional.curves(tests, [600] * len(tests))
    for test, curve in zip(tests, found, strict=True):
        direct = [test.power(size) for size in range(601)]
        # scipy's pmf itself rounds its log-beta functions at their magnitude
        np.testing.assert_allclose(curve, direct, rtol=0, atol=1e-11)


def test_curves_from_a_later_law_continue_the_curve():
    tests = _tests()
    for middle in (1, 250, 599):
        law = stats.betabinom.pmf(np.arange(middle + 1), middle, SHARE.first, SHARE.second)
        found = Conditional.curves(tests, [600] * len(tests), start=(middle, 0, law))
        for test, curve in zip(tests, found, strict=True):
            assert curve.shape == (600 - middle + 1,)
            np.testing.assert_allclose(curve, test.curve(600)[middle:], rtol=0, atol=1e-11)
    # from a window of the law: its counts low..high - 1, the rest negligible
    law = stats.betabinom.pmf(np.arange(2000 + 1), 2000, SHARE.first, SHARE.second)
    low = int(np.searchsorted(np.cumsum(law), 1e-20))
    high = law.size - int(np.searchsorted(np.cumsum(law[::-1]), 1e-20))
    assert 0 < low < high < law.size
    (curve,) = Conditional.curves(tests[:1], [2200], start=(2000, low, law[low:high]))
    np.testing.assert_allclose(curve, tests[0].curve(2200)[2000:], rtol=0, atol=1e-11)


def test_curves_without_an_outer_count_are_the_survival():
    tests = [_recall_test(24, 6, 0.7, outer=None), _recall_test(20, 5, 0.6, outer=None)]
    found = Conditional.curves(tests, [300, 300], read=[50, 300])
    np.testing.assert_array_equal(found[0], tests[0].curve(50))
    np.testing.assert_array_equal(found[1], tests[1].curve(300))
    law = tests[0].inner.survival(np.arange(301))
    assert found[1].shape == law.shape


def test_curves_refuse_tests_whose_trials_differ_and_reads_out_of_range():
    with pytest.raises(ValueError, match="one law"):
        Conditional.curves([_recall_test(24, 6, 0.7), _recall_test(24, 6, 0.7, outer=CountLaw(
            "beta-binomial", 31.5, 170.5))], [100, 100])
    with pytest.raises(ValueError, match="read"):
        Conditional.curves(_tests()[:1], [100], read=[101])
    with pytest.raises(ValueError, match="one size per problem"):
        Conditional.curves(_tests()[:2], [100])
    with pytest.raises(ValueError, match="read"):
        Conditional.curves(_tests()[:1], [100], read=[10], start=(20, 0, np.ones(1)))
    with pytest.raises(ValueError, match="outer count"):
        Conditional.curves([_recall_test(24, 6, 0.7, outer=None)], [100],
                           start=(20, 0, np.ones(1)))
    assert Conditional.curves([], []) == []
