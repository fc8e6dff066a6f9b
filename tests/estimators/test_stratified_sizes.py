"""One rule for the stratified design's segment sizes, in `f1_ci` and `recall_ci` alike.

``design="stratified"`` needs ``population_sizes``: the segments' sizes ``(N1, N0)``, or
``"sample"``, the explicit choice of the sample's own retrieved share for theirs. Without
either the call is refused with the same words by every function; ``"sample"`` gives exactly
what ``f1_ci`` gave before, when it took the sample's share silently.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from estimators import F1Estimate, f1_ci, f1_estimate, recall_ci, recall_estimate

COUNTS = (60, 20, 25, 395)
NEEDED = ("`population_sizes` must be the segments' sizes (N1, N0), or 'sample' for the "
          "sample's retrieved share n1 / (n1 + n0) to stand for N1 / (N1 + N0), with "
          "design='stratified'; got None.")

CALLS = {
    "f1_ci": lambda **kw: f1_ci(*COUNTS, **kw),
    "f1_estimate": lambda **kw: f1_estimate(*COUNTS, **kw),
    "F1Estimate": lambda **kw: F1Estimate(*COUNTS, **kw),
    "recall_ci": lambda **kw: recall_ci(*COUNTS, **kw),
    "recall_estimate": lambda **kw: recall_estimate(*COUNTS, **kw),
}


@pytest.mark.parametrize("name", CALLS)
def test_a_stratified_call_without_the_segments_sizes_is_refused(name):
    with pytest.raises(ValueError) as error:
        CALLS[name](design="stratified")
    assert str(error.value) == NEEDED


@pytest.mark.parametrize("name", CALLS)
@pytest.mark.parametrize("value", ["Sample", "", (2000,), 2000, [1, 2, 3]])
def test_neither_a_pair_nor_the_marker_is_refused_naming_the_value(name, value):
    with pytest.raises(ValueError, match=r"^`population_sizes` must be the segments' sizes "
                                         r"\(N1, N0\), or 'sample' .*; got (.+)\.$") as error:
        CALLS[name](design="stratified", population_sizes=value)
    assert str(error.value).endswith(f"; got {value!r}.")


# f1_ci(60, 20, 25, 395, design="stratified", method=..., alternative=..., rng=3, draws=2000)
# and the estimate as they were when the sample's share stood for the segments' sizes
# unasked: (low, high) by (method, alternative)
BEFORE = {
    ("delta", "two-sided"): (0.655278825270749, 0.7992666292747054),
    ("delta", "greater"): (0.666853540103769, 1.0),
    ("logit-delta", "two-sided"): (0.6497316819949891, 0.7931139108493412),
    ("logit-delta", "greater"): (0.6628935919343192, 1.0),
    ("segments-clopper-pearson", "two-sided"): (0.5949354667517694, 0.8331525407045762),
    ("segments-clopper-pearson", "greater"): (0.6114756774186633, 1.0),
    ("beta-posterior", "two-sided"): (0.6441705320714307, 0.7915495537794477),
    ("beta-posterior", "greater"): (0.6579793168397817, 1.0),
    ("bootstrap", "two-sided"): (0.6543151642208245, 0.802469135802469),
    ("bootstrap", "greater"): (0.6666666666666666, 1.0),
}


@pytest.mark.parametrize(("method", "alternative"), BEFORE)
def test_the_sample_marker_gives_the_values_f1_ci_gave_without_sizes(method, alternative):
    ci = f1_ci(*COUNTS, design="stratified", population_sizes="sample", method=method,
               alternative=alternative, rng=3, draws=2000)
    assert (ci.low, ci.high) == BEFORE[method, alternative]


def test_the_sample_marker_gives_the_estimate_f1_estimate_gave_without_sizes():
    est = f1_estimate(*COUNTS, design="stratified", population_sizes="sample")
    assert (est.estimate, est.variance) == (0.7272727272727272, 0.0013492587497095383)
    assert est.population_sizes == "sample"


def test_the_segments_sizes_move_f1_away_from_the_sample_share():
    """The issue's example: the sample's share 80 / 500 is not the collection's 2000 / 10000."""
    sample = f1_ci(*COUNTS, design="stratified", population_sizes="sample")
    sized = f1_ci(*COUNTS, design="stratified", population_sizes=(2000, 8000))
    assert (round(sample.low, 3), round(sample.high, 3)) == (0.595, 0.833)
    assert (round(sized.low, 3), round(sized.high, 3)) == (0.629, 0.852)


@pytest.mark.parametrize("method", ["segments-clopper-pearson", "delta"])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_recall_with_the_sample_marker_weighs_the_segments_by_the_sample(method, alternative):
    tp, fp, fn, tn = np.array([60, 3, 0, 9]), np.array([20, 1, 5, 0]), 25, np.array([395, 40,
                                                                                       30, 7])
    options = {"design": "stratified", "method": method, "alternative": alternative}
    marked = recall_ci(tp, fp, fn, tn, population_sizes="sample", **options)
    sized = recall_ci(tp, fp, fn, tn, population_sizes=(tp + fp, fn + tn), **options)
    np.testing.assert_array_equal(marked.low, sized.low)
    np.testing.assert_array_equal(marked.high, sized.high)


def test_recall_estimate_with_the_sample_marker_is_the_srs_estimate():
    # q = n1 / n: q R1 / (q R1 + (1 - q) R0) = tp / (tp + fn)
    for counts in [(60, 20, 25, 395), (3, 1, 2, 40), (0, 5, 1, 30)]:
        marked = recall_estimate(*counts, design="stratified", population_sizes="sample")
        assert marked == pytest.approx(recall_estimate(*counts), rel=1e-15)


def test_an_empty_sample_with_the_marker_excludes_nothing_or_is_undefined():
    for alternative in ("two-sided", "greater", "less"):
        ci = recall_ci(0, 0, 0, 0, design="stratified", population_sizes="sample",
                       alternative=alternative)
        assert (ci.low, ci.high) == (0.0, 1.0)
    ci = recall_ci(0, 0, 0, 0, design="stratified", population_sizes="sample", method="delta")
    assert math.isnan(ci.low) and math.isnan(ci.high)
    assert math.isnan(recall_estimate(0, 0, 0, 0, design="stratified",
                                      population_sizes="sample"))


@pytest.mark.parametrize("options", [{"finite_population": True},
                                     {"method": "segments-hypergeometric"}])
def test_the_marker_where_the_sizes_are_needed_is_refused_alike(options):
    texts = []
    for call in (f1_ci, recall_ci):
        with pytest.raises(ValueError, match=r"^`population_sizes` must be the segments' "
                                             r"sizes \(N1, N0\) with .*; got 'sample'\.$") as e:
            call(*COUNTS, design="stratified", population_sizes="sample", **options)
        texts.append(str(e.value))
    assert texts[0] == texts[1]
