"""Bad input to every public name of `estimators`: a clear error naming the argument, or a result.

Each public function, result class and method is called once with valid arguments, and then by
hypothesis with one argument replaced by a value drawn from a pool of bad values (negative,
fractional, huge and wrapping integers, nan and infinities, strings, None, booleans, complex
numbers, ragged and empty lists, arrays of the wrong shape, foreign objects). The outcome must
be either

* a ``ValueError`` or ``TypeError`` raised by evalcert whose message names the argument in
  backticks (`` `name` ``), or
* a valid result: no exception, and the result passes the checks its kind admits (interval
  bounds ordered and inside the parameter space, or undefined as nan).

Anything else (another exception type, a message not naming the argument, a negative F1, a
bound above 1) fails. With ``EVALCERT_BAD_INPUT_TALLY=PATH`` the number of bad inputs tried per
public name and their outcomes are written to PATH as JSON.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import estimators as E

# --- the pool of bad values -------------------------------------------------------------------

_FIXED_BAD: list[Any] = [
    -1, -0.5, 0.5, 2.5, 0, 1, 2**53, 2**53 + 1, 2**63, 2**64 - 1, 2**64, 10**20, -(2**63) - 1,
    math.nan, math.inf, -math.inf, "abc", "", "3", None, True, False, 1 + 2j, [], [[]],
    [[1, 2], [3]], [1, [2, 3]], {"a": 1}, object(), b"x", np.array([1, -1]),
    np.array([2**63], dtype=np.uint64), np.array([1.5]), np.array([[1, 2], [3, 4]]),
    np.float64("nan"), np.int8(-3), np.uint64(2**64 - 1), (1, 2, 3), [1, 2], range(3),
    np.array("text"), np.zeros((0,)), np.array([1, 2, 3, 4, 5, 6, 7]),
]

BAD = st.one_of(
    st.sampled_from(_FIXED_BAD),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.lists(st.integers(min_value=-5, max_value=10**20), max_size=4),
)

TALLY: dict[str, Counter[str]] = defaultdict(Counter)


@pytest.fixture(scope="module", autouse=True)
def _write_tally() -> Iterator[None]:
    """Write the tally of bad inputs tried per public name when asked (closing notes)."""
    yield
    path = os.environ.get("EVALCERT_BAD_INPUT_TALLY")
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({k: dict(v) for k, v in sorted(TALLY.items())}, handle, indent=1)


# --- what a valid result must satisfy ----------------------------------------------------------

def _check_interval(ci: E.Interval, low_end: float = 0.0, high_end: float = 1.0) -> None:
    low = np.asarray(ci.low, dtype=float)
    high = np.asarray(ci.high, dtype=float)
    defined = ~np.isnan(low) & ~np.isnan(high)
    assert np.all(np.isnan(low) == np.isnan(high)), "one bound nan, the other not"
    assert np.all(low[defined] <= high[defined])
    assert np.all(low[defined] >= low_end - 1e-12) and np.all(high[defined] <= high_end + 1e-12)


def _check_unit(value: Any) -> None:
    array = np.asarray(value, dtype=float)
    defined = array[~np.isnan(array)]
    assert np.all((defined >= -1e-12) & (defined <= 1 + 1e-12)), f"outside [0, 1]: {value}"


_TEXT_FIELDS = {"method", "alternative", "design", "reason", "interval", "model", "posterior",
                "measure"}
_OPTIONAL_FIELDS = {"test_size", "population_sizes", "labels", "retrieved_size",
                    "unretrieved_size", "stable_size", "search_limit", "curve",
                    "population_size", "segment_sizes", "cost", "srs_test_size"}


def _check_fields(result: Any) -> None:
    """A result object holds numbers where it holds numbers: no text, None or objects slipped in."""
    for item in dataclasses.fields(result):
        value = getattr(result, item.name)
        if item.name in _TEXT_FIELDS:
            assert isinstance(value, str), f"{item.name} = {value!r}"
        elif value is None:
            assert item.name in _OPTIONAL_FIELDS, f"{item.name} is None"
        elif not isinstance(value, E.Interval | E.StratifiedEstimate | E.PowerCurve | tuple
                            | int):
            array = np.asarray(value)
            assert array.dtype != object and (np.issubdtype(array.dtype, np.number)
                                              or array.dtype == np.bool_), (
                f"{type(result).__name__}.{item.name} = {value!r}")
            if np.issubdtype(array.dtype, np.floating):
                assert not np.isinf(array).any() or item.name in ("low", "high"), (
                    f"{type(result).__name__}.{item.name} = {value!r}")


def _check_result(result: Any, bounded: bool = True) -> None:
    """Checks that hold for every valid result of its kind (``bounded``: a proportion's)."""
    if dataclasses.is_dataclass(result):
        _check_fields(result)
    if isinstance(result, E.Interval):
        if bounded:
            _check_interval(result)
    elif isinstance(result, E.ProportionEstimate):
        _check_unit(result.estimate)
        _check_interval(result.confidence_interval())
    elif isinstance(result, E.F1Estimate):
        _check_unit(result.estimate)
        variance = np.asarray(result.variance, dtype=float)
        assert np.all(variance[~np.isnan(variance)] >= 0), "negative variance"
    elif isinstance(result, E.StratifiedEstimate):
        _check_unit(result.estimate)
    elif isinstance(result, E.CertificationPlan):
        assert result.test_size is None or result.test_size >= 1
        _check_unit(result.theta_star)
    elif isinstance(result, float):
        assert not math.isinf(result)


# --- the targets -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Target:
    """A public callable, its valid keyword arguments, and the argument names to break."""

    name: str
    call: Callable[..., Any]
    valid: Mapping[str, Any]
    fuzz: tuple[str, ...] = ()
    bounded: bool = True  # intervals for a proportion (F1, a share), not a utility

    def arguments(self) -> tuple[str, ...]:
        return self.fuzz or tuple(self.valid)


def _posterior() -> E.ConfusionPosterior:
    return E.confusion_posterior((60, 20, 25, 395))


def _gain() -> E.GainTable:
    return E.gain_table([0.9, 0.8, 0.7, 0.6, 0.5], [1, 0, 1, 0, 0], bins=5)


_SCORES = list(np.arange(20.0)[::-1])  # item i ranks (i + 1)-th


def _bought() -> E.BudgetPositives:
    return E.budget_positives(_SCORES, [0, 3, 5, 12, 15], [1, 1, 0, 1, 0], items=6)


def _cumulative_gain() -> E.CumulativeGainEstimate:
    return E.cumulative_gain_estimate(_SCORES, [0, 3, 5, 12, 15], [1, 1, 0, 1, 1],
                                      top_bins=3)


def _strata() -> E.MembershipStrata:
    return E.MembershipStrata(["R1", "R2"], [100, 10, 20, 5])


def _stratified() -> E.StratifiedEstimate:
    return E.StratifiedEstimate([1000, 200, 40], [30, 30, 30], [1, 10, 23])


def _confusion() -> E.ConfusionMatrix:
    return E.ConfusionMatrix.binary(tp=60, fp=20, fn=25, tn=395)


def _method(factory: Callable[[], Any], name: str) -> Callable[..., Any]:
    def call(**kwargs: Any) -> Any:
        return getattr(factory(), name)(**kwargs)
    return call


def _positional(function: Callable[..., Any], *names: str) -> Callable[..., Any]:
    """Call ``function`` with ``names`` positionally (as their users write them)."""
    def call(**kwargs: Any) -> Any:
        args = [kwargs.pop(n) for n in names]
        return function(*args, **kwargs)
    return call


_COUNTS4 = {"tp": 60, "fp": 20, "fn": 25, "tn": 395}
# A reachable simulated plan, as certification_sample_size builds one.
_PLAN = {"test_size": 600, "theta_star": 0.61, "target": 0.6, "confidence_level": 0.95,
         "power": 0.93, "draws": 1000, "seed": 7, "reachable": True, "reason": "",
         "limit": 0.66, "point_f1": 0.73,
         "test_size_interval": E.Interval(500, 700, "order statistics", 0.95),
         "interval": "jaccard-clopper-pearson"}

TARGETS: list[Target] = [
    Target("proportion_ci", _positional(E.proportion_ci, "successes", "trials"),
           {"successes": 7, "trials": 20, "method": "wilson", "confidence_level": 0.95,
            "alternative": "two-sided"}),
    Target("ProportionEstimate", E.ProportionEstimate, {"successes": 7, "trials": 20}),
    Target("ProportionEstimate.confidence_interval",
           _method(lambda: E.ProportionEstimate(7, 20), "confidence_interval"),
           {"confidence_level": 0.95, "method": "wilson", "alternative": "two-sided"}),
    Target("Interval", E.Interval, {"low": 0.2, "high": 0.6, "method": "wilson",
                                    "confidence_level": 0.95, "alternative": "two-sided"},
           bounded=False),
    Target("f1_ci", _positional(E.f1_ci, "tp", "fp", "fn", "tn"),
           {**_COUNTS4, "method": "delta", "confidence_level": 0.95,
            "alternative": "two-sided", "design": "srs", "population_sizes": None,
            "finite_population": False, "rng": 1, "draws": 200}),
    Target("recall_ci", _positional(E.recall_ci, "tp", "fp", "fn", "tn"),
           {**_COUNTS4, "method": "clopper-pearson", "confidence_level": 0.95,
            "alternative": "two-sided", "design": "srs", "population_sizes": None,
            "finite_population": False}),
    Target("recall_ci[stratified]", _positional(E.recall_ci, "tp", "fp", "fn", "tn"),
           {**_COUNTS4, "method": "segments-hypergeometric", "design": "stratified",
            "population_sizes": (800, 9200)}),
    Target("certification_power",
           _positional(E.certification_power, "measure", "size", "threshold"),
           {"measure": "recall", "size": 300, "threshold": 0.6, "truth": None,
            "confusion": (60, 20, 25, 395), "design": "srs", "interval": None,
            "confidence_level": 0.95, "population_size": None, "segment_sizes": None},
           # sizes up to MAX_POWER_SIZE are valid and slow: the fixed pool tries the bad ones
           fuzz=("measure", "threshold", "truth", "confusion", "design", "interval",
                 "confidence_level", "population_size", "segment_sizes")),
    Target("certification_power[stratified]",
           _positional(E.certification_power, "measure", "size", "threshold"),
           {"measure": "recall", "size": (40, 60), "threshold": 0.5,
            "truth": (800, 200, 300, 8700), "design": "stratified", "interval": None,
            "confidence_level": 0.95, "population_size": 10_000,
            "segment_sizes": (1000, 9000)},
           fuzz=("measure", "threshold", "truth", "design", "interval", "confidence_level",
                 "population_size", "segment_sizes")),
    Target("certification_sample_size[recall]",
           _positional(E.certification_sample_size, "confusion", "target"),
           {"confusion": (60, 20, 25, 395), "target": 0.5, "measure": "recall",
            "design": "srs", "population_size": None, "segment_sizes": None,
            "interval": "clopper-pearson", "confidence_level": 0.95, "power": 0.8,
            "posterior": "dirichlet", "max_test_size": 2_000}),
    Target("f1_ci[stratified]", _positional(E.f1_ci, "tp", "fp", "fn", "tn"),
           {**_COUNTS4, "method": "delta", "design": "stratified",
            "population_sizes": (800, 9200), "finite_population": True},
           fuzz=("population_sizes", "finite_population", "tp", "tn")),
    Target("f1_ci[bootstrap]", _positional(E.f1_ci, "tp", "fp", "fn", "tn"),
           {**_COUNTS4, "method": "bootstrap", "rng": 1, "draws": 200},
           fuzz=("rng", "draws")),
    Target("f1_ci[beta-posterior]", _positional(E.f1_ci, "tp", "fp", "fn", "tn"),
           {**_COUNTS4, "method": "beta-posterior", "rng": 1, "draws": 200},
           fuzz=("rng", "draws")),
    Target("f1_estimate", _positional(E.f1_estimate, "tp", "fp", "fn", "tn"),
           {**_COUNTS4, "design": "srs", "population_sizes": None,
            "finite_population": False}),
    Target("F1Estimate", E.F1Estimate, {**_COUNTS4, "design": "srs"}),
    Target("F1Estimate.confidence_interval",
           _method(lambda: E.f1_estimate(60, 20, 25, 395), "confidence_interval"),
           {"confidence_level": 0.95, "method": "delta", "alternative": "two-sided",
            "rng": 1, "draws": 200}),
    Target("ConfusionMatrix", E.ConfusionMatrix,
           {"counts": [[60, 25], [20, 395]], "labels": ["positive", "negative"]}),
    Target("ConfusionMatrix.binary", E.ConfusionMatrix.binary, dict(_COUNTS4)),
    Target("ConfusionMatrix.precision", _method(_confusion, "precision"),
           {"label": "positive"}),
    Target("ConfusionMatrix.f_measure", _method(_confusion, "f_measure"),
           {"label": "positive", "beta": 1.0}),
    Target("ConfusionMatrix.per_class", _method(_confusion, "per_class"),
           {"measure": "recall", "beta": 1.0}),
    Target("ConfusionMatrix.macro_average", _method(_confusion, "macro_average"),
           {"measure": "f_measure", "beta": 2.0}),
    Target("ConfusionMatrix.kappa", _method(_confusion, "kappa"), {"kind": "cohen"}),
    Target("ConfusionMatrix.one_vs_all", _method(_confusion, "one_vs_all"),
           {"label": "positive"}),
    Target("ConfusionMatrix.cost", _method(_confusion, "cost"),
           {"cost_matrix": [[0, 1], [5, 0]]}),
    Target("ConfusionMatrix.expected_gain", _method(_confusion, "expected_gain"),
           {"risk_matrix": [[1, -1], [-1, 0]]}),
    Target("ConfusionMatrix.linear_utility", _method(_confusion, "linear_utility"),
           {"u_a": 3.0, "u_b": -1.0, "label": "positive"}),
    Target("ConfusionMatrix.weighted_average", _method(_confusion, "weighted_average"),
           {"measure": "f_measure", "beta": 2.0}),
    Target("optimal_threshold", E.optimal_threshold, {"u_a": 3.0, "u_b": -1.0}),
    Target("budget_positives", _positional(E.budget_positives, "scores", "sample", "labels"),
           {"scores": _SCORES, "sample": [0, 3, 5, 12, 15], "labels": [1, 1, 0, 1, 0],
            "items": 6, "after": 2}),
    Target("BudgetPositives.confidence_interval", _method(_bought, "confidence_interval"),
           {"confidence_level": 0.95, "method": "bootstrap", "alternative": "two-sided",
            "rng": 1, "draws": 200}, bounded=False),
    Target("cumulative_gain_estimate",
           _positional(E.cumulative_gain_estimate, "scores", "sample", "labels"),
           {"scores": _SCORES, "sample": [0, 3, 5, 12, 15], "labels": [1, 1, 0, 1, 1],
            "top_bins": 3, "bins": 10}),
    Target("CumulativeGainEstimate.confidence_interval",
           _method(_cumulative_gain, "confidence_interval"),
           {"confidence_level": 0.95, "method": "binomial", "alternative": "two-sided",
            "rng": None, "draws": 200}),
    Target("gain_table", _positional(E.gain_table, "scores", "labels"),
           {"scores": [0.9, 0.8, 0.7, 0.6, 0.5], "labels": [1, 0, 1, 0, 0], "bins": 5}),
    Target("GainTable.budget_yield", _method(_gain, "budget_yield"),
           {"budget": 3.0, "cost_per_item": 1.0, "whole_bins": False}),
    Target("GainTable.cost_per_bin", _method(_gain, "cost_per_bin"), {"cost_per_item": 1.0}),
    Target("GainTable.cost_to_reach", _method(_gain, "cost_to_reach"),
           {"share": 0.5, "cost_per_item": 1.0, "whole_bins": False}),
    Target("GainTable.fraction_to_reach", _method(_gain, "fraction_to_reach"),
           {"share": 0.5, "whole_bins": True}),
    Target("GainTable.positives_within", _method(_gain, "positives_within"), {"n_items": 2}),
    Target("confusion_posterior", _positional(E.confusion_posterior, "confusion"),
           {"confusion": (60, 20, 25, 395), "retrieved_share": None,
            "posterior": "known-share"}),
    Target("ConfusionPosterior", E.ConfusionPosterior,
           {**_COUNTS4, "retrieved_share": 0.16, "model": "dirichlet"}),
    Target("ConfusionPosterior.draw_share", _method(_posterior, "draw_share"),
           {"draws": 10, "rng": 1}),
    Target("ConfusionPosterior.draw", _method(_posterior, "draw"), {"draws": 10, "rng": 1}),
    Target("ConfusionPosterior.f1", _method(_posterior, "f1"),
           {"r1": 0.7, "r0": 0.06, "q": None}),
    Target("ConfusionPosterior.f1[draws]", _method(_posterior, "f1"),
           {"r1": [0.7, 0.65], "r0": [0.06, 0.07], "q": [0.2, 0.15]}),
    Target("ConfusionPosterior.cell_probabilities", _method(_posterior, "cell_probabilities"),
           {"r1": 0.7, "r0": 0.06, "q": 0.2}),
    Target("theta_star", _positional(E.theta_star, "confusion", "test_size"),
           {"confusion": (60, 20, 25, 395), "test_size": 200, "confidence_level": 0.95,
            "power": 0.93, "draws": 100, "rng": 1, "interval": "delta",
            "retrieved_share": None, "posterior": "dirichlet"}),
    Target("certification_sample_size",
           _positional(E.certification_sample_size, "confusion", "target"),
           {"confusion": (60, 20, 25, 395), "target": 0.5, "confidence_level": 0.95,
            "power": 0.93, "draws": 100, "tolerance": None, "rng": 1, "interval": "delta",
            "retrieved_share": None, "posterior": "dirichlet", "relative_precision": None,
            "max_draws": 400,
            "max_test_size": 100_000, "method": "monte-carlo"}),
    Target("StratifiedEstimate", _positional(E.StratifiedEstimate, "sizes", "sampled",
                                             "positives"),
           {"sizes": [1000, 200, 40], "sampled": [30, 30, 30], "positives": [1, 10, 23],
            "labels": None}),
    Target("StratifiedEstimate.confidence_interval", _method(_stratified, "confidence_interval"),
           {"confidence_level": 0.95, "method": "jeffreys", "alternative": "two-sided"}),
    Target("StratifiedEstimate.utility", _method(_stratified, "utility"),
           {"u_a": 3.0, "u_b": -1.0}),
    Target("UtilityEstimate.confidence_interval",
           _method(lambda: _stratified().utility(u_a=3, u_b=-1), "confidence_interval"),
           {"confidence_level": 0.95, "method": "wald", "alternative": "two-sided"},
           bounded=False),
    Target("UtilityEstimate", E.UtilityEstimate,
           {"proportion": _stratified(), "u_a": 3.0, "u_b": -1.0}),
    Target("srs_estimate", _positional(E.srs_estimate, "size", "sampled", "positives"),
           {"size": 500, "sampled": 20, "positives": 3}),
    Target("stratified_proportion",
           _positional(E.stratified_proportion, "sizes", "sampled", "positives"),
           {"sizes": [1000, 200], "sampled": [30, 30], "positives": [1, 10]}),
    Target("StratifiedProportion", E.StratifiedProportion,
           {"estimate": 0.2, "variance": 0.001}),
    Target("pooled_estimate", _positional(E.pooled_estimate, "size", "judged", "relevant"),
           {"size": 250, "judged": 120, "relevant": 90, "u_a": 1.0, "u_b": -1.0}),
    Target("PooledEstimate", E.PooledEstimate,
           {"size": 250, "judged": 120, "relevant": 90, "u_a": 1.0, "u_b": -1.0}),
    Target("allocate", _positional(E.allocate, "sizes"),
           {"sizes": [1000, 10, 200, 40], "total": 100, "method": "trec5", "minimum": 2,
            "proportions": None}),
    Target("allocate[neyman]", _positional(E.allocate, "sizes"),
           {"sizes": [1000, 10, 200, 40], "total": 100, "method": "neyman", "minimum": 2,
            "proportions": [0.02, 0.2, 0.4, 0.75]}, fuzz=("proportions", "total")),
    Target("MembershipStrata", _positional(E.MembershipStrata, "runs", "sizes"),
           {"runs": ["R1", "R2"], "sizes": [100, 10, 20, 5]}),
    Target("MembershipStrata.allocate", _method(_strata, "allocate"),
           {"total": 40, "method": "trec5", "minimum": 2, "proportions": None}),
    Target("MembershipStrata.estimates", _method(_strata, "estimates"),
           {"sampled": [10, 10, 10, 5], "positives": [1, 2, 3, 4]}),
    Target("MembershipStrata.from_documents", E.MembershipStrata.from_documents,
           {"submitted": [{"R1"}, {"R1", "R2"}, set()], "runs": ["R1", "R2"]}),
    Target("MembershipStrata.stratum_of", _method(_strata, "stratum_of"),
           {"submitted": [{"R2"}, {"R1", "R2"}]}),
    Target("WeightedTotal", E.WeightedTotal, {"total": 5.0, "average": 0.5}),
    Target("GainTable", E.GainTable,
           {"n_items": 5, "n_positives": 2, "bins": 5,
            "group_ends": np.array([0, 1, 2, 3, 4, 5]),
            "group_cum_positives": np.array([0, 1, 1, 2, 2, 2])}),
    Target("CertificationPlan", E.CertificationPlan, _PLAN),
    Target("BudgetYield", E.BudgetYield,
           {"items": 3, "fraction": 0.6, "cost": 3.0, "positives": 2.0, "gain": 1.0}),
]

# labels may be any hashable: a bad label is an unknown one, always a ValueError naming it
_NO_FUZZ = {"label"}


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_valid_call_succeeds(target: Target) -> None:
    """The baseline of every target: its valid arguments give a valid result."""
    _check_result(target.call(**target.valid), target.bounded)


def _outcome(target: Target, argument: str, value: Any) -> str:
    kwargs = dict(target.valid)
    kwargs[argument] = value
    try:
        result = target.call(**kwargs)
    except (ValueError, TypeError) as error:
        message = str(error)
        # `name`, or a part of it: `name[0]`, `confusion.tp`
        assert any(f"`{argument}{end}" in message for end in "`[."), (
            f"{target.name}({argument}={value!r}) raised {type(error).__name__} not naming "
            f"`{argument}`: {message}")
        assert "\n" not in message, f"multi-line message: {message!r}"
        return type(error).__name__
    _check_result(result, target.bounded)
    return "valid result"


_CASES = [(t, a) for t in TARGETS for a in t.arguments() if a not in _NO_FUZZ]


@pytest.mark.parametrize(("target", "argument"), _CASES,
                         ids=[f"{t.name}-{a}" for t, a in _CASES])
@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(value=BAD)
def test_bad_argument_is_named_or_harmless(target: Target, argument: str, value: Any) -> None:
    """One bad argument: a ValueError/TypeError naming it, or a result that passes its checks."""
    TALLY[target.name][_outcome(target, argument, value)] += 1


@pytest.mark.parametrize(("target", "argument"), _CASES,
                         ids=[f"{t.name}-{a}" for t, a in _CASES])
def test_every_fixed_bad_value(target: Target, argument: str) -> None:
    """Every value of the fixed pool, deterministically (hypothesis may not draw them all)."""
    for value in _FIXED_BAD:
        TALLY[target.name][_outcome(target, argument, value)] += 1


# --- bad input that numpy or a hand-built result would otherwise accept or word -----------------

@pytest.mark.parametrize(("r1", "r0", "q", "message"), [
    ([0.7, 0.6, 0.5], [0.1, 0.2], None,
     r"^`r1`, `r0` and `q` must broadcast to one shape; got shapes \(3,\), \(2,\) and \(\)\.$"),
    ([0.7, 0.6], [0.1, 0.2], [0.2, 0.3, 0.4],
     r"^`r1`, `r0` and `q` must broadcast to one shape; got shapes \(2,\), \(2,\) and "
     r"\(3,\)\.$"),
    ([[0.7, 0.6, 0.5]] * 2, [0.1, 0.2], None,
     r"^`r1`, `r0` and `q` must broadcast to one shape; got shapes \(2, 3\), \(2,\) and \(\)\.$"),
    ([], [0.1, 0.2], None, r"^`r1` must hold at least one draw; got an empty array\.$"),
    ([], 0.1, None, r"^`r1` must hold at least one draw; got an empty array\.$"),
    (0.7, np.zeros((0,)), None, r"^`r0` must hold at least one draw; got an empty array\.$"),
    (0.7, 0.1, [], r"^`q` must hold at least one draw; got an empty array\.$"),
])
def test_confusion_posterior_f1_names_draws_of_the_wrong_length_or_empty(r1, r0, q, message):
    """Draws that do not pair up, or no draws: an error naming them, not numpy's."""
    with pytest.raises(ValueError, match=message):
        _posterior().f1(r1, r0, q)
    # the same draws paired up are valid: one F1 per draw
    assert _posterior().f1([0.7, 0.6], [0.1, 0.2], [0.2, 0.3]).shape == (2,)


_UNREACHABLE = {"test_size": None, "reachable": False, "theta_star": math.nan,
                "test_size_interval": E.Interval(math.inf, math.inf, "order-statistic", 0.95)}
_EXACT = {"method": "exact", "theta_star": math.nan, "draws": 0, "seed": 0}


@pytest.mark.parametrize(("changes", "message"), [
    # valid: each nan, None and empty reason that some path of certification_sample_size gives
    ({**_EXACT}, None),
    ({**_EXACT, "measure": "recall", "interval": "clopper-pearson", "posterior": "dirichlet",
      "point_f1": math.nan}, None),
    ({**_EXACT, "measure": "accuracy", "interval": "hypergeometric", "posterior": "dirichlet",
      "population_size": 5000, "limit": math.nan}, None),
    ({**_EXACT, **_UNREACHABLE, "reason": "no test size up to 99 reaches power 0.93"}, None),
    ({**_UNREACHABLE, "limit": math.nan, "point_f1": math.nan,
      "reason": "the observed F1 (undefined) is not above the target 0.6"}, None),
    ({**_UNREACHABLE, "reason": "target 0.7 is at or above the limit of theta_star"}, None),
    # nan where no path leaves a number undefined
    ({"theta_star": math.nan}, r"^`theta_star` must be a number \(theta_star at test_size\); "
                               r"got nan with method='monte-carlo', reachable=True\.$"),
    ({**_EXACT, "theta_star": 0.61}, r"^`theta_star` must be nan on the exact path and on "
                                     r"unreachable simulated plans; got 0\.61"),
    ({"limit": math.nan}, r"^`limit` must be a number unless the population is finite or a "
                          r"simulated plan stopped before its posterior; got nan"),
    ({**_EXACT, **_UNREACHABLE, "reason": "no size", "limit": math.nan},
     r"^`limit` must be a number unless"),
    ({"point_f1": math.nan}, r"^`point_f1` must be a number on a reachable simulated plan"),
    # text: a method the plan's measure and design do not certify with, a reason out of place
    ({"interval": "free text"}, r"^`interval` must be one of 'delta', .*; got 'free text'\.$"),
    ({"interval": "clopper-pearson"}, r"^`interval` must be one of .*; got 'clopper-pearson'"),
    ({**_EXACT, "measure": "recall", "interval": "jaccard-wilson", "posterior": "dirichlet"},
     r"^`interval` must be one of 'wald', .*; got 'jaccard-wilson'\.$"),
    ({"reason": "free text"}, r"^`reason` must be empty when a test size reaches the power; "
                              r"got 'free text' with reachable=True\.$"),
    ({**_UNREACHABLE}, r"^`reason` must be why no test size reaches the power \(not empty\); "
                       r"got '' with reachable=False\.$"),
])
def test_certification_plan_built_by_hand_takes_nan_and_text_only_where_a_path_gives_them(
        changes, message):
    """nan theta_star, limit and point_f1, the interval's name and the reason: as
    certification_sample_size builds them, or an error naming the field."""
    if message is None:
        _check_result(E.CertificationPlan(**{**_PLAN, **changes}))
    else:
        with pytest.raises(ValueError, match=message):
            E.CertificationPlan(**{**_PLAN, **changes})


@settings(max_examples=60, deadline=None, derandomize=True)
@given(level=st.one_of(st.sampled_from([5e-324, 1e-17, 2**-53, 0.5, 1 - 2**-53]),
                       st.floats(min_value=0, max_value=1, exclude_min=True, exclude_max=True)),
       alternative=st.sampled_from(["two-sided", "less", "greater"]))
def test_every_level_strictly_inside_0_1_gives_a_valid_interval(level, alternative):
    """Extreme levels are valid: a one-sided tail that rounds to 1 or a z below 0 included."""
    for method in E.PROPORTION_METHODS:
        _check_interval(E.proportion_ci([0, 1, 3, 9, 10], 10, method=method,
                                        confidence_level=level, alternative=alternative))
    for method in ("delta", "logit-delta"):
        _check_interval(E.f1_ci([0, 3, 10], [1, 2, 0], [0, 4, 0], [5, 5, 5], method=method,
                                confidence_level=level, alternative=alternative))
    estimate = E.StratifiedEstimate([100, 50], [10, 10], [3, 0])
    for method in E.STRATIFIED_METHODS:
        _check_interval(estimate.confidence_interval(level, method=method,
                                                     alternative=alternative))
