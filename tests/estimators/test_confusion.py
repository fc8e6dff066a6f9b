"""Tests of estimators.confusion against the seeds' worked values and hand computations."""

from __future__ import annotations

import dataclasses
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from estimators.confusion import (
    CLASS_MEASURES,
    KAPPA_KINDS,
    ConfusionMatrix,
    WeightedTotal,
    optimal_threshold,
)
from estimators.proportion import PROPORTION_METHODS, ProportionEstimate

WINE_COUNTS = [[9, 3, 0], [3, 5, 1], [1, 1, 4]]
WINE_LABELS = ("cabernet", "syrah", "pinot")


@pytest.fixture
def wine() -> ConfusionMatrix:
    return ConfusionMatrix(WINE_COUNTS, labels=WINE_LABELS)


@st.composite
def count_matrices(draw: st.DrawFn, max_k: int = 5, max_count: int = 40) -> np.ndarray:
    k = draw(st.integers(2, max_k))
    cells = draw(st.lists(st.integers(0, max_count), min_size=k * k, max_size=k * k))
    return np.array(cells, dtype=np.int64).reshape(k, k)


def expand(counts: np.ndarray) -> tuple[list[int], list[int]]:
    """Item-level (reference, response) lists that the matrix counts."""
    truth: list[int] = []
    predicted: list[int] = []
    for i, row in enumerate(counts.tolist()):
        for j, cell in enumerate(row):
            truth += [i] * cell
            predicted += [j] * cell
    return truth, predicted


def sklearn_style(truth: list[int], predicted: list[int], k: int) -> dict[str, list[float]]:
    """Per-class precision, recall and F1 by counting items, as sklearn.metrics defines them.

    Written independently of the matrix code: it never looks at a confusion matrix.
    Undefined values are nan here (sklearn's ``zero_division=np.nan``).
    """
    scores: dict[str, list[float]] = {"precision": [], "recall": [], "f_measure": []}
    for c in range(k):
        tp = sum(1 for t, p in zip(truth, predicted, strict=True) if t == c and p == c)
        n_pred = sum(1 for p in predicted if p == c)
        n_true = sum(1 for t in truth if t == c)
        precision = tp / n_pred if n_pred else math.nan
        recall = tp / n_true if n_true else math.nan
        if n_pred + n_true == 0:
            f1 = math.nan
        elif tp == 0:
            f1 = 0.0
        else:
            f1 = 2 * precision * recall / (precision + recall)
        scores["precision"].append(precision)
        scores["recall"].append(recall)
        scores["f_measure"].append(f1)
    return scores


# --------------------------------------------------------------------------- wine example


def test_wine_counts(wine: ConfusionMatrix) -> None:
    assert wine.labels == WINE_LABELS
    assert wine.n_classes == 3
    assert wine.total == 27
    assert wine.correct == 18
    assert wine.reference_counts.tolist() == [12, 9, 6]
    assert wine.response_counts.tolist() == [13, 9, 5]


def test_wine_accuracy_and_error_rate(wine: ConfusionMatrix) -> None:
    assert wine.accuracy == ProportionEstimate(18, 27)
    assert wine.accuracy.estimate == 18 / 27
    assert round(float(wine.accuracy), 2) == 0.67
    assert wine.error_rate.estimate == 9 / 27


def test_wine_random_accuracy(wine: ConfusionMatrix) -> None:
    cohen = wine.random_accuracy()
    assert round(cohen, 4) == 0.3663
    assert cohen == (13 * 12 + 9 * 9 + 5 * 6) / 27**2
    siegel = wine.random_accuracy("siegel-castellan")
    assert round(siegel, 4) == 0.3669
    assert siegel == pytest.approx((12.5 / 27) ** 2 + (9 / 27) ** 2 + (5.5 / 27) ** 2, rel=1e-15)


def test_wine_kappas(wine: ConfusionMatrix) -> None:
    a = Fraction(18, 27)
    for kind, e in [
        ("cohen", Fraction(13 * 12 + 9 * 9 + 5 * 6, 27**2)),
        ("siegel-castellan", Fraction(25**2 + 18**2 + 11**2, 4 * 27**2)),
    ]:
        assert wine.kappa(kind) == float((a - e) / (1 - e))
    assert wine.kappa("byrt") == pytest.approx(2 * 18 / 27 - 1, rel=1e-15)
    assert wine.kappa() == pytest.approx((18 / 27 - 0.36625514) / (1 - 0.36625514), rel=1e-7)


def test_wine_normal_approximation_half_widths(wine: ConfusionMatrix) -> None:
    for level, expected in [(0.95, 0.18), (0.99, 0.23)]:
        low, high = wine.accuracy.confidence_interval(level, method="wald")
        assert round((high - low) / 2, 2) == expected


def test_wine_per_class_by_hand(wine: ConfusionMatrix) -> None:
    # Column sums 13/9/5 are the responses, row sums 12/9/6 the references.
    expected = {
        "cabernet": {"precision": 9 / 13, "recall": 9 / 12, "specificity": 11 / 15},
        "syrah": {"precision": 5 / 9, "recall": 5 / 9, "specificity": 14 / 18},
        "pinot": {"precision": 4 / 5, "recall": 4 / 6, "specificity": 20 / 21},
    }
    for label, values in expected.items():
        assert wine.precision(label).estimate == values["precision"]
        assert wine.recall(label).estimate == values["recall"]
        assert wine.specificity(label).estimate == values["specificity"]
    assert wine.prevalence("pinot") == ProportionEstimate(6, 27)
    assert wine.f_measure("cabernet") == pytest.approx(0.72, rel=1e-15)  # 2*9 / (18 + 3 + 4)
    p, r = 4 / 5, 4 / 6
    assert wine.f_measure("pinot", beta=2.0) == pytest.approx(5 * p * r / (4 * p + r))
    assert wine.f1("syrah") == pytest.approx(5 / 9)


def test_wine_one_vs_all(wine: ConfusionMatrix) -> None:
    view = wine.one_vs_all("syrah")
    assert view == ConfusionMatrix([[5, 4], [4, 14]], labels=("positive", "negative"))
    assert view.precision().estimate == wine.precision("syrah").estimate
    assert view.recall().estimate == wine.recall("syrah").estimate


def test_wine_micro_average(wine: ConfusionMatrix) -> None:
    micro = wine.micro_average()
    assert micro.counts.tolist() == [[18, 9], [9, 45]]
    assert micro.total == 3 * 27
    assert micro.precision().estimate == micro.recall().estimate == 18 / 27
    assert micro.f1() == pytest.approx(18 / 27)


def test_wine_macro_average_matches_sklearn_style(wine: ConfusionMatrix) -> None:
    truth, predicted = expand(wine.counts)
    reference = sklearn_style(truth, predicted, 3)
    for measure in ("precision", "recall", "f_measure"):
        np.testing.assert_allclose(wine.per_class(measure), reference[measure], rtol=1e-14)
        assert wine.macro_average(measure) == pytest.approx(np.mean(reference[measure]))
    assert wine.macro_average("precision") == pytest.approx((9 / 13 + 5 / 9 + 4 / 5) / 3)
    assert wine.macro_average("specificity") == pytest.approx((11 / 15 + 14 / 18 + 20 / 21) / 3)


@pytest.mark.parametrize("method", PROPORTION_METHODS)
def test_per_class_intervals_work_with_every_method(wine: ConfusionMatrix, method: str) -> None:
    for estimate in (wine.precision("pinot"), wine.recall("syrah"), wine.accuracy):
        low, high = estimate.confidence_interval(0.9, method=method)
        assert 0.0 <= low <= estimate.estimate <= high <= 1.0
    low, high = wine.recall("cabernet").confidence_interval(method=method, alternative="greater")
    assert high == 1.0
    assert low < 0.75


# -------------------------------------------------------------------------- undefined


def test_undefined_ratios_are_nan_without_warnings() -> None:
    # Class 2 never appears as a response nor in the reference.
    m = ConfusionMatrix([[4, 1, 0], [2, 3, 0], [0, 0, 0]])
    assert math.isnan(m.precision(2).estimate)
    assert math.isnan(m.recall(2).estimate)
    assert math.isnan(m.f_measure(2))
    assert m.specificity(2).estimate == 1.0
    low, high = m.precision(2).confidence_interval(method="wilson")
    assert math.isnan(low)
    assert math.isnan(high)
    # nan propagates into the macro average; nanmean gives sklearn's skip behaviour.
    assert math.isnan(m.macro_average("precision"))
    assert math.isnan(m.macro_average("f_measure"))
    assert np.nanmean(m.per_class("precision")) == pytest.approx((4 / 6 + 3 / 4) / 2)
    assert not math.isnan(m.macro_average("specificity"))


def test_f_measure_is_zero_not_nan_when_only_errors() -> None:
    # Never predicted (precision undefined) but present in the reference: F is 0.
    m = ConfusionMatrix.binary(tp=0, fp=0, fn=3, tn=7)
    assert math.isnan(m.precision().estimate)
    assert m.recall().estimate == 0.0
    assert m.f1() == 0.0
    assert math.isnan(m.f_measure(beta=0.0))  # beta = 0 is precision


def test_empty_matrix() -> None:
    m = ConfusionMatrix(np.zeros((2, 2), dtype=int))
    assert m.total == 0
    assert math.isnan(m.accuracy.estimate)
    assert math.isnan(m.error_rate.estimate)
    assert math.isnan(m.random_accuracy())
    for kind in KAPPA_KINDS:
        assert math.isnan(m.kappa(kind))
    assert math.isnan(m.cost([[0, 1], [1, 0]]).average)
    assert m.cost([[0, 1], [1, 0]]).total == 0.0


def test_kappa_nan_when_random_accuracy_is_one() -> None:
    m = ConfusionMatrix([[5, 0], [0, 0]])
    assert m.accuracy.estimate == 1.0
    assert m.random_accuracy() == 1.0
    assert m.random_accuracy("siegel-castellan") == 1.0
    assert math.isnan(m.kappa("cohen"))
    assert math.isnan(m.kappa("siegel-castellan"))
    assert m.kappa("byrt") == 1.0


def test_kappa_extremes() -> None:
    perfect = ConfusionMatrix([[3, 0], [0, 7]])
    assert perfect.kappa() == 1.0
    # a = 0: kappa is -e / (1 - e), the negative odds of a random correct guess.
    wrong = ConfusionMatrix([[0, 3], [7, 0]])
    e = wrong.random_accuracy()
    assert wrong.kappa() == pytest.approx(-e / (1 - e))
    assert wrong.kappa("byrt") == -1.0


# --------------------------------------------------------------------- costs and risks


@pytest.mark.parametrize("correct_split", [(43, 43), (80, 6), (0, 86), (86, 0)])
def test_seed_001_cost_example(correct_split: tuple[int, int]) -> None:
    # Seed 001 gives 106 cases with 14 class-1 and 6 class-2 errors but not the diagonal of
    # its Figure 1, so several splits of the 86 correct cases are checked: none may matter.
    a, b = correct_split
    m = ConfusionMatrix([[a, 14], [6, b]])
    assert m.total == 106
    weighted = m.cost([[0, 1], [2, 0]])
    assert weighted == WeightedTotal(total=26.0, average=26 / 106)
    assert round(weighted.average, 2) == 0.25
    equal = m.cost([[0, 1], [1, 0]])
    assert equal.total == 20.0
    assert round(equal.average, 2) == 0.19
    assert equal.average == m.error_rate.estimate
    # Orientation matters: the transposed cost matrix charges the other errors twice.
    assert m.cost([[0, 2], [1, 0]]).total == 14 * 2 + 6 * 1


def test_cost_allows_a_nonzero_diagonal(wine: ConfusionMatrix) -> None:
    costs = np.full((3, 3), 2.0)
    costs[np.diag_indices(3)] = 0.5
    assert wine.cost(costs).total == 18 * 0.5 + 9 * 2.0


def test_expected_gain_by_hand(wine: ConfusionMatrix) -> None:
    # Gain 2 per correct wine, loss 1 per error, loss 3 for calling a pinot a cabernet.
    risk = [[2, -1, -1], [-1, 2, -1], [-3, -1, 2]]
    by_hand = 2 * 18 - (3 + 0 + 3 + 1 + 1) - 3 * 1
    result = wine.expected_gain(risk)
    assert result.total == by_hand
    assert result.average == by_hand / 27
    # Negative entries are fine here; as costs they are rejected.
    with pytest.raises(ValueError, match="`cost_matrix` must be non-negative"):
        wine.cost(risk)


# ------------------------------------------------------------------------ TREC-5 utility


@pytest.mark.parametrize(("u_a", "u_b", "threshold"), [(1, -3, 0.75), (1, -1, 0.5), (3, -1, 0.25)])
def test_trec5_thresholds(u_a: int, u_b: int, threshold: float) -> None:
    assert optimal_threshold(u_a, u_b) == threshold


def test_threshold_outside_the_usual_domain() -> None:
    zero = optimal_threshold(2, 0)
    assert zero == 0.0
    assert math.copysign(1.0, zero) == 1.0
    assert optimal_threshold(2, 1) < 0  # every document is worth accepting
    assert optimal_threshold(-1, -3) > 1  # none is


@given(
    u_a=st.floats(-100, 100, allow_nan=False),
    u_b=st.floats(-100, 100, allow_nan=False),
    p=st.floats(0, 1),
)
def test_accepting_is_utility_positive_iff_above_threshold(
    u_a: float, u_b: float, p: float
) -> None:
    assume(u_a - u_b > 1e-6)
    t = optimal_threshold(u_a, u_b)
    assume(abs(p - t) > 1e-9)  # exactly at the threshold the expected utility is 0
    assert (p > t) == (p * u_a + (1 - p) * u_b > 0)


def test_linear_utility() -> None:
    run = ConfusionMatrix.binary(tp=10, fp=4, fn=5, tn=81)
    assert run.linear_utility(u_a=1, u_b=-3) == 10 - 12
    assert run.linear_utility(u_a=1, u_b=-1) == 10 - 4
    assert run.linear_utility(u_a=3, u_b=-1) == 30 - 4


def test_linear_utility_of_a_class(wine: ConfusionMatrix) -> None:
    # Retrieved as pinot: 4 pinots (A) and 1 syrah (B).
    assert wine.linear_utility(u_a=3, u_b=-1, label="pinot") == 11.0


# ---------------------------------------------------------------------------- properties


@given(count_matrices())
def test_kappa_at_most_one(counts: np.ndarray) -> None:
    m = ConfusionMatrix(counts)
    for kind in KAPPA_KINDS:
        kappa = m.kappa(kind)
        assert math.isnan(kappa) or kappa <= 1.0


@given(count_matrices())
def test_cohen_kappa_symmetric_under_transposition(counts: np.ndarray) -> None:
    m, t = ConfusionMatrix(counts), ConfusionMatrix(counts.T)
    assert m.random_accuracy() == t.random_accuracy() or m.total == 0
    assert m.kappa() == t.kappa() or (math.isnan(m.kappa()) and math.isnan(t.kappa()))


@given(count_matrices())
def test_siegel_castellan_chance_at_least_cohen(counts: np.ndarray) -> None:
    m = ConfusionMatrix(counts)
    assume(m.total > 0)
    cohen, siegel = m.random_accuracy(), m.random_accuracy("siegel-castellan")
    assert siegel >= cohen
    same_marginals = np.array_equal(m.reference_counts, m.response_counts)
    assert (siegel == cohen) == same_marginals


@given(count_matrices())
def test_micro_precision_equals_recall_equals_accuracy(counts: np.ndarray) -> None:
    m = ConfusionMatrix(counts)
    assume(m.total > 0)
    micro = m.micro_average()
    assert micro.total == m.n_classes * m.total
    assert micro.precision() == micro.recall() == ProportionEstimate(m.correct, m.total)
    summed = sum(m.one_vs_all(label).counts for label in m.labels)
    assert np.array_equal(micro.counts, summed)


@given(count_matrices())
def test_one_vs_all_counts_sum_to_total(counts: np.ndarray) -> None:
    m = ConfusionMatrix(counts)
    for k, label in enumerate(m.labels):
        view = m.one_vs_all(label)
        assert view.total == m.total
        assert view.counts[0, 0] == m.counts[k, k]
        assert view.reference_counts[0] == m.reference_counts[k]
        assert view.response_counts[0] == m.response_counts[k]


@given(count_matrices(), st.floats(0, 10))
def test_f_beta_between_precision_and_recall(counts: np.ndarray, beta: float) -> None:
    m = ConfusionMatrix(counts)
    for label in m.labels:
        p, r = m.precision(label).estimate, m.recall(label).estimate
        if math.isnan(p) or math.isnan(r):
            continue
        f = m.f_measure(label, beta=beta)
        assert min(p, r) - 1e-12 <= f <= max(p, r) + 1e-12


@given(count_matrices())
def test_macro_average_matches_sklearn_style(counts: np.ndarray) -> None:
    m = ConfusionMatrix(counts)
    reference = sklearn_style(*expand(counts), m.n_classes)
    for measure, values in reference.items():
        np.testing.assert_allclose(m.per_class(measure), values, rtol=1e-12)
        expected = float(np.mean(values))
        assert m.macro_average(measure) == pytest.approx(expected, nan_ok=True)


@given(*(st.integers(0, 10**6) for _ in range(4)))
def test_binary_round_trip(tp: int, fp: int, fn: int, tn: int) -> None:
    m = ConfusionMatrix.binary(tp=tp, fp=fp, fn=fn, tn=tn)
    assert m.labels == ("positive", "negative")
    assert m.counts.tolist() == [[tp, fn], [fp, tn]]
    assert m.one_vs_all("positive") == m
    assert m.precision() == ProportionEstimate(tp, tp + fp)
    assert m.recall() == ProportionEstimate(tp, tp + fn)
    assert m.specificity() == ProportionEstimate(tn, tn + fp)


@given(count_matrices(), st.lists(st.floats(0, 5), min_size=25, max_size=25))
def test_unit_costs_give_the_error_rate(counts: np.ndarray, extra: list[float]) -> None:
    m = ConfusionMatrix(counts)
    k = m.n_classes
    unit = 1.0 - np.eye(k)
    assume(m.total > 0)
    assert m.cost(unit).average == pytest.approx(m.error_rate.estimate)
    # Both weight the same counts: gain(R + C) == gain(R) + cost(C) for costs C >= 0.
    risk = np.array(extra[: k * k]).reshape(k, k)
    assert m.expected_gain(risk).total - m.expected_gain(risk + unit).total == pytest.approx(
        -m.cost(unit).total
    )


# -------------------------------------------------------------------- immutability, eq


def test_counts_are_a_read_only_copy() -> None:
    source = np.array(WINE_COUNTS)
    m = ConfusionMatrix(source)
    source[0, 0] = 100
    assert m.counts[0, 0] == 9
    assert m.counts.dtype == np.int64
    with pytest.raises(ValueError, match="read-only"):
        m.counts[0, 0] = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.labels = ("a", "b", "c")  # type: ignore[misc]


def test_equality_and_hash() -> None:
    a = ConfusionMatrix(WINE_COUNTS, labels=WINE_LABELS)
    b = ConfusionMatrix(np.array(WINE_COUNTS, dtype=float), labels=list(WINE_LABELS))
    assert a == b
    assert hash(a) == hash(b)
    assert a != ConfusionMatrix(WINE_COUNTS)
    assert a != ConfusionMatrix([[9, 3, 0], [3, 5, 1], [1, 2, 4]], labels=WINE_LABELS)
    assert a != WINE_COUNTS


def test_default_labels() -> None:
    assert ConfusionMatrix(np.eye(4, dtype=int)).labels == (0, 1, 2, 3)


# ------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("counts", "error", "match"),
    [
        ([[1, 2, 3], [4, 5, 6]], ValueError, r"`counts` must be a square .* shape \(2, 3\)"),
        ([1, 2, 3, 4], ValueError, r"`counts` must be a square .* shape \(4,\)"),
        ([[1, 2], [3]], ValueError, "`counts` must be a number or a rectangular array"),
        ([[5]], ValueError, r"`counts` must have at least 2 classes; got shape \(1, 1\)"),
        ([[1, -2], [3, 4]], ValueError, r"`counts` must be non-negative; got -2 at index \(0, 1\)"),
        ([[1, 2.5], [3, 4]], ValueError, r"`counts` must hold whole numbers .* 2\.5"),
        ([[1, np.nan], [3, 4]], ValueError, "`counts` must hold whole numbers .* nan"),
        ([["a", "b"], ["c", "d"]], TypeError, "`counts` must be an integer count"),
        ([[True, False], [False, True]], TypeError, "`counts` must be an integer count"),
    ],
)
def test_bad_counts(counts: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        ConfusionMatrix(counts)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("labels", "error", "match"),
    [
        (["a", "b"], ValueError, "`labels` must hold 3 labels, one per class; got 2"),
        (["a", "b", "a"], ValueError, "`labels` must be distinct; got 'a' at indices 0 and 2"),
        ([1, True, 2], ValueError, "`labels` must be distinct; got True at indices 0 and 1"),
        (["a", ["b"], "c"], TypeError, r"`labels` must hold hashable labels; got \['b'\]"),
        ("abc", TypeError, "`labels` must be a sequence of distinct hashables; got 'abc'"),
        ({"a", "b", "c"}, TypeError, "`labels` must be a sequence"),
        (3, TypeError, "`labels` must be a sequence"),
    ],
)
def test_bad_labels(labels: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        ConfusionMatrix(WINE_COUNTS, labels=labels)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"tp": -1, "fp": 0, "fn": 0, "tn": 0}, ValueError, "`tp` must be non-negative; got -1"),
        ({"tp": 1, "fp": 0.5, "fn": 0, "tn": 0}, ValueError, "`fp` must hold whole numbers"),
        ({"tp": 1, "fp": 0, "fn": "2", "tn": 0}, TypeError, "`fn` must be an integer count"),
        ({"tp": 1, "fp": 0, "fn": 0, "tn": [1, 2]}, ValueError, "`tn` must be a single count"),
    ],
)
def test_bad_binary_counts(kwargs: dict[str, object], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        ConfusionMatrix.binary(**kwargs)  # type: ignore[arg-type]


def test_unknown_label(wine: ConfusionMatrix) -> None:
    with pytest.raises(
        ValueError, match="`label` must be one of 'cabernet', 'syrah', 'pinot'; got 'merlot'"
    ):
        wine.recall("merlot")
    # The "positive" default fits binary matrices only.
    with pytest.raises(ValueError, match=r"`label` must be one of .*; got 'positive'"):
        wine.precision()
    with pytest.raises(ValueError, match="`label` must be one of"):
        wine.one_vs_all("merlot")


def test_unknown_kind_and_measure(wine: ConfusionMatrix) -> None:
    with pytest.raises(
        ValueError, match="`kind` must be one of 'cohen', 'siegel-castellan', 'byrt'"
    ):
        wine.kappa("fleiss")
    with pytest.raises(
        ValueError, match="`kind` must be one of 'cohen', 'siegel-castellan'; got 'byrt'"
    ):
        wine.random_accuracy("byrt")
    valid = ", ".join(repr(m) for m in CLASS_MEASURES)
    with pytest.raises(ValueError, match=f"`measure` must be one of {valid}; got 'accuracy'"):
        wine.macro_average("accuracy")
    with pytest.raises(ValueError, match="`measure` must be one of"):
        wine.per_class("prevalence")


@pytest.mark.parametrize("beta", [-1.0, math.inf, "2", True])
def test_bad_beta(wine: ConfusionMatrix, beta: object) -> None:
    with pytest.raises((ValueError, TypeError), match="`beta` must be"):
        wine.f_measure("pinot", beta=beta)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("matrix", "error", "match"),
    [
        (
            [[0, 1], [1, 0]],
            ValueError,
            r"`cost_matrix` must have the shape of `counts` \(3, 3\).*\(2, 2\)",
        ),
        (np.ones((3, 3, 1)), ValueError, r"`cost_matrix` must have the shape .*\(3, 3, 1\)"),
        ([["a"] * 3] * 3, TypeError, "`cost_matrix` must be a real number"),
        (np.full((3, 3), np.inf), ValueError, "`cost_matrix` must be finite"),
        (-np.ones((3, 3)), ValueError, r"`cost_matrix` must be non-negative .* at index \(0, 0\)"),
    ],
)
def test_bad_cost_matrix(
    wine: ConfusionMatrix, matrix: object, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        wine.cost(matrix)  # type: ignore[arg-type]


def test_bad_risk_matrix(wine: ConfusionMatrix) -> None:
    with pytest.raises(ValueError, match="`risk_matrix` must have the shape of `counts`"):
        wine.expected_gain(np.zeros((2, 3)))


@pytest.mark.parametrize(
    ("u_a", "u_b", "error", "match"),
    [
        (1, 1, ValueError, "`u_a` must be greater than `u_b`; got u_a=1, u_b=1"),
        (-3, 1, ValueError, "`u_a` must be greater than `u_b`"),
        ("1", -1, TypeError, "`u_a` must be a real number"),
        (1, math.nan, ValueError, "`u_b` must be finite"),
    ],
)
def test_bad_utilities(u_a: object, u_b: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        optimal_threshold(u_a, u_b)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("u_a", "u_b", "error", "match"),
    [
        ("1", -1, TypeError, "`u_a` must be a real number"),
        (1, None, TypeError, "`u_b` must be a real number"),
        (1, math.nan, ValueError, "`u_b` must be finite"),
    ],
)
def test_bad_linear_utility(u_a: object, u_b: object, error: type[Exception], match: str) -> None:
    run = ConfusionMatrix.binary(tp=1, fp=1, fn=1, tn=1)
    with pytest.raises(error, match=match):
        run.linear_utility(u_a=u_a, u_b=u_b)  # type: ignore[arg-type]


# ----------------------------------------------------- support-weighted average (Table 4)


def test_weighted_average_by_hand() -> None:
    # Rows are the reference: supports 12, 9, 6 of 27 (the wine matrix).
    m = ConfusionMatrix(WINE_COUNTS, labels=WINE_LABELS)
    precision = [Fraction(9, 13), Fraction(5, 9), Fraction(4, 5)]
    recall = [Fraction(9, 12), Fraction(5, 9), Fraction(4, 6)]
    f1 = [2 * p * r / (p + r) for p, r in zip(precision, recall, strict=True)]
    weights = [Fraction(12, 27), Fraction(9, 27), Fraction(6, 27)]
    for measure, values in (("precision", precision), ("recall", recall), ("f_measure", f1)):
        expected = sum(w * v for w, v in zip(weights, values, strict=True))
        assert m.weighted_average(measure) == pytest.approx(float(expected), rel=1e-14)
    # the weighted recall is the accuracy: sum_k (n_k / N) (tp_k / n_k) = sum_k tp_k / N
    assert m.weighted_average("recall") == pytest.approx(18 / 27, rel=1e-14)


def _sklearn_weighted(counts: np.ndarray, beta: float) -> tuple[float, float, float]:
    metrics = pytest.importorskip("sklearn.metrics")
    truth, predicted = expand(counts)
    k = counts.shape[0]
    precision, recall, f, _ = metrics.precision_recall_fscore_support(
        truth, predicted, labels=list(range(k)), average="weighted", beta=beta,
        zero_division=0.0)
    return float(precision), float(recall), float(f)


@pytest.mark.slow
def test_weighted_average_agrees_with_sklearn_on_a_grid() -> None:
    # Every 2 x 2 matrix with cells 0..4 and a grid of 3 x 3 ones (cells 0, 1, 5), wherever
    # every class with support has defined precision and recall (sklearn would put 0 where
    # ours is nan); beta 1 and 2.
    rng = np.random.default_rng(20180718)
    grid = [np.array(c).reshape(2, 2) for c in itertools.product(range(5), repeat=4)]
    grid += [rng.choice([0, 1, 5], size=(3, 3)) for _ in range(300)]
    compared, worst = 0, 0.0
    for counts in grid:
        m = ConfusionMatrix(counts)
        present = m.reference_counts > 0
        if m.total == 0 or np.isnan(m.per_class("precision")[present]).any():
            continue
        for beta in (1.0, 2.0):
            ours = (m.weighted_average("precision"), m.weighted_average("recall"),
                    m.weighted_average("f_measure", beta=beta))
            theirs = _sklearn_weighted(counts, beta)
            worst = max(worst, *(abs(a - b) for a, b in zip(ours, theirs, strict=True)))
            compared += 1
    assert compared > 500
    assert worst < 1e-12


def test_weighted_average_policy_for_undefined_values() -> None:
    # class 1 occurs (support 4) but is never predicted: its precision is undefined -> nan
    never_predicted = ConfusionMatrix([[6, 0], [4, 0]])
    assert math.isnan(never_predicted.weighted_average("precision"))
    assert never_predicted.weighted_average("recall") == pytest.approx(0.6)
    # class 2 never occurs and is never predicted: weight 0, left out though undefined
    absent = ConfusionMatrix([[6, 2, 0], [1, 3, 0], [0, 0, 0]])
    assert math.isnan(absent.per_class("precision")[2])
    assert absent.weighted_average("precision") == pytest.approx(
        8 / 12 * 6 / 7 + 4 / 12 * 3 / 5, rel=1e-14)  # supports 8 and 4
    assert math.isnan(ConfusionMatrix([[0, 0], [0, 0]]).weighted_average("f_measure"))


def test_table4_f_below_precision_and_recall_needs_per_class_f() -> None:
    """Klubička et al. (2018), Table 4: F1 0.70 / 0.74 / 0.77 lies below both the weighted
    precision (0.82 / 0.83 / 0.83) and recall (0.73 / 0.75 / 0.78) of M1, M2, M3.

    The F of the weighted precision and recall is their harmonic mean and lies between them,
    so the table's F must be the weighted mean of the per-class F values. That happens when
    one class is found precisely but rarely and the other the other way round: here the
    positive class (precision 0.91, recall 0.50) and the negative class (0.66, 0.95) of a
    balanced test set.
    """
    table4 = {"M1": (0.82, 0.73, 0.70), "M2": (0.83, 0.75, 0.74), "M3": (0.83, 0.78, 0.77)}
    for precision, recall, f1 in table4.values():
        harmonic = 2 * precision * recall / (precision + recall)
        assert min(precision, recall) <= harmonic <= max(precision, recall)
        assert f1 < min(precision, recall)
    m = ConfusionMatrix([[50, 50], [5, 95]])
    p, r, f = (m.weighted_average(x) for x in ("precision", "recall", "f_measure"))
    assert f < min(p, r)  # 0.710 < 0.725 < 0.782
    assert min(p, r) < 2 * p * r / (p + r) < max(p, r)  # the F of the averages: 0.752


@given(count_matrices(), st.sampled_from(CLASS_MEASURES))
def test_weighted_average_lies_between_the_class_values(counts: np.ndarray,
                                                        measure: str) -> None:
    m = ConfusionMatrix(counts)
    values = m.per_class(measure)[m.reference_counts > 0]
    assume(values.size and not np.isnan(values).any())
    average = m.weighted_average(measure)
    assert values.min() - 1e-12 <= average <= values.max() + 1e-12


def test_weighted_average_rejects_bad_options(wine: ConfusionMatrix) -> None:
    with pytest.raises(ValueError, match="`measure` must be one of"):
        wine.weighted_average("accuracy")
    with pytest.raises(ValueError, match="`beta` must be non-negative; got -1"):
        wine.weighted_average("f_measure", beta=-1)
