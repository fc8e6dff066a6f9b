"""`evalcert recall` and `evalcert f1 --design stratified`: the certifying bound of a labelled
sample, against the API and against bounds computed here from scipy.stats alone.

Each stratified case is checked three ways: the JSON equals `recall_ci` / `f1_ci` exactly and
the text shows the same numbers to its four decimals; the bounds equal the segments' exact
bounds combined by hand (Clopper-Pearson from `scipy.stats.beta`, or the hypergeometric bounds
found by enumerating every count of relevant documents a segment can hold with
`scipy.stats.hypergeom`), Bonferroni-split; and a search over a fine grid of the segments'
confidence box finds no value of the measure below the lower bound or above the upper one.
The decision flips where the target passes the bound; bad input exits 2 with one line.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from estimators import f1_ci, f1_estimate, recall_ci, recall_estimate
from studies.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
PREFIX = "evalcert: error: "


@dataclass(frozen=True)
class Case:
    """A labelled stratified sample: the counts of each segment's sample and the sizes."""

    counts: tuple[int, int, int, int]
    sizes: tuple[int, int]
    level: float
    finite: bool = False

    def argv(self) -> list[str]:
        tp, fp, fn, tn = self.counts
        return ["--tp", str(tp), "--fp", str(fp), "--fn", str(fn), "--tn", str(tn),
                "--design", "stratified", "--retrieved", str(self.sizes[0]),
                "--unretrieved", str(self.sizes[1]), "--confidence-level", str(self.level),
                *(["--finite"] if self.finite else [])]

    def options(self) -> dict[str, object]:
        return {"design": "stratified", "population_sizes": self.sizes,
                "finite_population": self.finite, "confidence_level": self.level}


CASES = {
    # the README's sample, its segments 800 and 9200 documents
    "binomial": Case((60, 20, 25, 395), (800, 9200), 0.95),
    # every sampled retrieved document relevant, no relevant unretrieved one: R1's upper
    # bound and R0's lower bound are the ends of [0, 1]
    "boundary": Case((40, 0, 0, 150), (400, 20_000), 0.90),
    # small finite segments sampled without replacement: hypergeometric bounds
    "finite": Case((30, 10, 4, 96), (60, 500), 0.95, finite=True),
}


# --- the bounds from scipy.stats alone ---------------------------------------------------------

def clopper_pearson(x: int, n: int, tail: float) -> tuple[float, float]:
    """The binomial share's bounds, each at ``tail``: ``Beta(x, n - x + 1)`` and
    ``Beta(x + 1, n - x)`` quantiles (Clopper & Pearson 1934); 0 and 1 at the ends."""
    low = 0.0 if x == 0 else float(stats.beta.ppf(tail, x, n - x + 1))
    high = 1.0 if x == n else float(stats.beta.ppf(1.0 - tail, x + 1, n - x))
    return low, high


def hypergeometric(x: int, n: int, size: int, tail: float) -> tuple[float, float]:
    """The finite segment's share bounds, each at ``tail``, by enumerating every number ``K``
    of relevant documents it can hold: the least ``K`` with ``P(X >= x) >= tail`` and the
    largest with ``P(X <= x) >= tail``, ``X ~ Hypergeometric(size, K, n)``."""
    k = np.arange(x, size - (n - x) + 1)
    kept_low = stats.hypergeom.sf(x - 1, size, k, n) >= tail * (1 - 1e-10)
    kept_high = stats.hypergeom.cdf(x, size, k, n) >= tail * (1 - 1e-10)
    return int(k[kept_low].min()) / size, int(k[kept_high].max()) / size


def recall_of(q: float, r1: np.ndarray, r0: np.ndarray) -> np.ndarray:
    return q * r1 / (q * r1 + (1 - q) * r0)


def f1_of(q: float, r1: np.ndarray, r0: np.ndarray) -> np.ndarray:
    return 2 * q * r1 / (q * r1 + q + (1 - q) * r0)


def boxes(case: Case) -> dict[str, tuple[tuple[float, float], tuple[float, float]]]:
    """Each segment's Bonferroni bounds: tail a / 4 for the two-sided interval, a / 2 for the
    LOSCI (``a = 1 - level``)."""
    tp, fp, fn, tn = case.counts
    alpha = 1 - case.level
    found = {}
    for side, tail in (("two-sided", alpha / 4), ("greater", alpha / 2)):
        if case.finite:
            found[side] = (hypergeometric(tp, tp + fp, case.sizes[0], tail),
                           hypergeometric(fn, fn + tn, case.sizes[1], tail))
        else:
            found[side] = (clopper_pearson(tp, tp + fp, tail), clopper_pearson(fn, fn + tn, tail))
    return found


def brute_force(case: Case, measure) -> dict[str, float]:
    """The measure's least and greatest values over each confidence box, by the corners the
    measure's monotonicity names and by a 401 x 401 grid of the box (which must agree)."""
    q = case.sizes[0] / sum(case.sizes)
    out = {}
    for side, ((r1_low, r1_high), (r0_low, r0_high)) in boxes(case).items():
        grid = measure(q, *np.meshgrid(np.linspace(r1_low, r1_high, 401),
                                       np.linspace(r0_low, r0_high, 401)))
        low = float(measure(q, np.array(r1_low), np.array(r0_high)))
        high = float(measure(q, np.array(r1_high), np.array(r0_low)))
        assert np.nanmin(grid) == pytest.approx(low, rel=1e-12)
        assert np.nanmax(grid) == pytest.approx(high, rel=1e-12)
        out[side] = low
        if side == "two-sided":
            out["high"] = high
    return out


def _json(capsys, argv: list[str]) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _text(capsys, argv: list[str]) -> str:
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


# --- recall ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", CASES)
def test_recall_stratified_agrees_with_recall_ci_and_with_scipy(capsys, name):
    case = CASES[name]
    summary = _json(capsys, ["recall", *case.argv()])
    two = recall_ci(*case.counts, **case.options())
    losci = recall_ci(*case.counts, alternative="greater", **case.options())
    method = "segments-hypergeometric" if case.finite else "segments-clopper-pearson"
    assert (summary["method"], two.method, summary["guaranteed"]) == (method, method, True)
    assert summary["interval"] == {"low": two.low, "high": two.high}
    assert summary["losci"] == {"low": losci.low, "high": losci.high}
    assert summary["recall"] == recall_estimate(*case.counts, design="stratified",
                                                population_sizes=case.sizes)
    assert summary["segments"] == {"retrieved": case.sizes[0], "unretrieved": case.sizes[1]}
    expected = brute_force(case, recall_of)
    assert summary["interval"]["low"] == pytest.approx(expected["two-sided"], rel=1e-9)
    assert summary["interval"]["high"] == pytest.approx(expected["high"], rel=1e-9)
    assert summary["losci"]["low"] == pytest.approx(expected["greater"], rel=1e-9)
    out = _text(capsys, ["recall", *case.argv()])
    assert f"two-sided interval  {two.low:.4f} to {two.high:.4f}" in out
    assert f"LOSCI               {losci.low:.4f} to 1.0000" in out
    assert out.startswith(f"recall = {summary['recall']:.4f}  (stratified sample: ")


def test_the_three_recall_cases_are_the_numbers_reported():
    found = {name: tuple(round(v, 4) for v in (
        recall_ci(*c.counts, **c.options()).low, recall_ci(*c.counts, **c.options()).high,
        recall_ci(*c.counts, alternative="greater", **c.options()).low))
        for name, c in CASES.items()}
    assert found == {"binomial": (0.3747, 0.6698, 0.3914),
                     "boundary": (0.4288, 1.0, 0.4841),
                     "finite": (0.4382, 0.8909, 0.4651)}


def test_recall_srs_is_the_clopper_pearson_interval_of_tp_in_tp_plus_fn(capsys):
    summary = _json(capsys, ["recall", "--tp", "60", "--fp", "20", "--fn", "25", "--tn", "395"])
    assert (summary["design"], summary["method"], summary["segments"]) == (
        "srs", "clopper-pearson", None)
    assert summary["recall"] == 60 / 85
    low, high = clopper_pearson(60, 85, 0.025)
    assert summary["interval"]["low"] == pytest.approx(low, rel=1e-12)
    assert summary["interval"]["high"] == pytest.approx(high, rel=1e-12)
    assert summary["losci"]["low"] == pytest.approx(clopper_pearson(60, 85, 0.05)[0], rel=1e-12)
    assert summary["losci"]["low"] == recall_ci(60, 20, 25, 395, alternative="greater").low


# --- F1 --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", CASES)
def test_f1_stratified_agrees_with_f1_ci_and_with_scipy(capsys, name):
    case = CASES[name]
    summary = _json(capsys, ["f1", *case.argv()])
    method = "segments-hypergeometric" if case.finite else "segments-clopper-pearson"
    assert summary["method"] == method and summary["design"] == "stratified"
    assert summary["f1"] == f1_estimate(*case.counts, design="stratified",
                                        population_sizes=case.sizes).estimate
    row = next(r for r in summary["intervals"] if r["method"] == method)
    two = f1_ci(*case.counts, method=method, **case.options())
    losci = f1_ci(*case.counts, method=method, alternative="greater", **case.options())
    assert (row["low"], row["high"], row["losci_low"]) == (two.low, two.high, losci.low)
    expected = brute_force(case, f1_of)
    assert row["low"] == pytest.approx(expected["two-sided"], rel=1e-9)
    assert row["high"] == pytest.approx(expected["high"], rel=1e-9)
    assert row["losci_low"] == pytest.approx(expected["greater"], rel=1e-9)
    out = _text(capsys, ["f1", *case.argv(), "--method", method])
    assert f"{method}  {two.low:>10.4f}{two.high:>10.4f}{losci.low:>11.4f}" in out


def test_f1_stratified_shows_every_method_the_design_allows(capsys):
    case = CASES["binomial"]
    rows = _json(capsys, ["f1", *case.argv(), "--draws", "200"])["intervals"]
    assert [r["method"] for r in rows] == ["delta", "logit-delta", "beta-posterior", "bootstrap",
                                           "segments-clopper-pearson",
                                           "segments-hypergeometric"]
    for row in rows:
        two = f1_ci(*case.counts, method=row["method"], rng=0, draws=200, **case.options())
        assert (row["low"], row["high"]) == (two.low, two.high)
    finite = _json(capsys, ["f1", *case.argv(), "--finite", "--draws", "200"])
    assert [r["method"] for r in finite["intervals"]] == ["delta", "logit-delta",
                                                          "beta-posterior",
                                                          "segments-hypergeometric"]
    assert finite["method"] == "segments-hypergeometric"


def test_f1_srs_output_keeps_its_rows_and_certifies_with_the_jaccard_bound(capsys):
    counts = ["--tp", "60", "--fp", "20", "--fn", "25", "--tn", "395"]
    summary = _json(capsys, ["f1", *counts, "--draws", "200", "--target", "0.65"])
    assert summary["method"] == "jaccard-clopper-pearson" and summary["segments"] is None
    losci = f1_ci(60, 20, 25, 395, alternative="greater").low
    assert summary["certification"] == {"target": 0.65, "method": "jaccard-clopper-pearson",
                                        "bound": losci, "certified": True}
    chosen = _json(capsys, ["f1", *counts, "--method", "delta", "--method",
                            "jaccard-wilson", "--target", "0.65"])
    assert chosen["certification"]["method"] == "delta" and chosen["guaranteed"] is False
    assert chosen["certification"]["bound"] == f1_ci(60, 20, 25, 395, method="delta",
                                                     alternative="greater").low


# --- the decision ----------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["recall", "f1"])
@pytest.mark.parametrize("name", CASES)
def test_the_decision_flips_where_the_target_passes_the_bound(capsys, command, name):
    case = CASES[name]
    argv = [command, *case.argv()]
    bound = _json(capsys, argv)
    low = bound["losci"]["low"] if command == "recall" else next(
        r["losci_low"] for r in bound["intervals"] if r["method"] == bound["method"])
    for target, certified in ((low, True), (math.nextafter(low, 1.0), False),
                              (math.nextafter(low, 0.0), True), (0.0, True)):
        summary = _json(capsys, [*argv, "--target", repr(target)])
        assert summary["certification"] == {"target": target, "method": bound["method"],
                                            "bound": low, "certified": certified}
        out = _text(capsys, [*argv, "--target", repr(target)])
        line = next(x for x in out.splitlines() if "certified: " in x)
        assert line.startswith("certified: " if certified else "not certified: "), line
        shown = line.split(", ")[1]
        # the bound is shown with the digits that put it on its side of the target
        assert (float(shown) >= target) == certified and f"target {target!r}" in line, line


def test_the_decision_line_and_the_assumptions_in_words(capsys):
    out = _text(capsys, ["recall", *CASES["binomial"].argv(), "--target", "0.35"])
    assert ("certified: the 95% LOSCI lower bound of segments-clopper-pearson, 0.3914, is at "
            "least the target 0.35") in out
    words = " ".join(out[out.index("assumptions of the certifying bound"):].split())
    for said in ("N1 = 800 retrieved and N0 = 9200 unretrieved documents",
                 "drawn uniformly at random", "independently of the other's",
                 "every label (relevant or not) is correct", "binomial",
                 "Bonferroni", "tail 1.25% for the two-sided interval and 2.5% for the LOSCI"):
        assert said in words, said
    out = _text(capsys, ["recall", *CASES["binomial"].argv(), "--target", "0.4"])
    assert "not certified: the 95% LOSCI lower bound of segments-clopper-pearson, 0.3914, is " \
           "below the target 0.4" in out
    words = " ".join(_text(capsys, ["recall", *CASES["finite"].argv()]).split())
    assert "without replacement" in words and "hypergeometric" in words
    assert "certified" not in words  # no target, no decision
    summary = _json(capsys, ["recall", *CASES["finite"].argv()])
    assert summary["certification"] is None and len(summary["assumptions"]) == 4


def test_an_undefined_bound_certifies_nothing(capsys):
    # no relevant document sampled: delta's recall and bounds are undefined
    argv = ["recall", "--tp", "0", "--fp", "10", "--fn", "0", "--tn", "40", "--design",
            "stratified", "--retrieved", "100", "--unretrieved", "400", "--method", "delta",
            "--target", "0"]
    summary = _json(capsys, argv)
    assert summary["recall"] is None and summary["losci"]["low"] is None
    assert summary["certification"]["certified"] is False
    out = _text(capsys, argv)
    assert out.startswith("recall = undefined")
    assert "not certified: the 95% LOSCI lower bound of delta is undefined (target 0.0)" in out


# --- bad input -------------------------------------------------------------------------------

COUNTS = ["--tp", "60", "--fp", "20", "--fn", "25", "--tn", "395"]
SEGMENTS = ["--design", "stratified", "--retrieved", "800", "--unretrieved", "9200"]


def one_line(capsys) -> str:
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith(PREFIX), (out, err)
    assert "Traceback" not in err
    return err


BAD = [
    (["--tp", "-1"], "argument --tp: must be a non-negative integer"),
    (["--tn", "x"], "argument --tn: must be a non-negative integer"),
    (["--design", "stratified"], "`--design stratified` needs the collection's segment sizes, "
                                 "`--retrieved N1 --unretrieved N0`; got neither."),
    (["--design", "stratified", "--retrieved", "800"],
     "`--retrieved` must come with `--unretrieved`"),
    (["--unretrieved", "800"], "`--unretrieved` must come with `--retrieved`"),
    (["--retrieved", "800", "--unretrieved", "9200"],
     "`--retrieved`/`--unretrieved` apply to --design stratified"),
    (["--finite"], "`--finite` applies to --design stratified"),
    ([*SEGMENTS[:3], "79", *SEGMENTS[4:]],
     "`--retrieved` must be at least the segment's sample size (`--tp` + `--fp` = 80); got 79."),
    ([*SEGMENTS[:5], "419"],
     "`--unretrieved` must be at least the segment's sample size (`--fn` + `--tn` = 420); got "
     "419."),
    ([*SEGMENTS, "--method", "nosuch"], "argument --method: invalid choice: 'nosuch'"),
    (["--retrieved", "-5", "--unretrieved", "9200"], "argument --retrieved: "),
    (["--confidence-level", "1"], "argument --confidence-level: must be strictly between 0 and 1"),
    (["--confidence-level", "0"], "argument --confidence-level: "),
    (["--confidence-level", "nan"], "argument --confidence-level: "),
    (["--target", "1.5"], "argument --target: must be in [0, 1]; got 1.5"),
    (["--target", "-0.1"], "argument --target: must be in [0, 1]; got -0.1"),
    (["--target", "nan"], "argument --target: must be in [0, 1]; got nan"),
    (["--target", "high"], "argument --target: must be a number in [0, 1]; got 'high'"),
]
RECALL_BAD = [
    (["--method", "delta"], "`--method` must be one of 'wald', 'wilson', 'wilson-cc', "
                            "'agresti-coull', 'clopper-pearson', 'jeffreys', 'mid-p' for "
                            "--design srs; got 'delta'."),
    ([*SEGMENTS, "--method", "wilson"], "`--method` must be one of 'segments-clopper-pearson', "
                                        "'segments-hypergeometric', 'delta' for --design "
                                        "stratified; got 'wilson'."),
    ([*SEGMENTS, "--finite", "--method", "segments-clopper-pearson"],
     "`--finite` must be left out with --method segments-clopper-pearson"),
    (["--tp", "0", "--fp", "0", "--fn", "0", "--tn", "0", "--design", "stratified",
      "--retrieved", "0", "--unretrieved", "0"],
     "`--retrieved` and `--unretrieved` must not both be 0; got 0 and 0."),
]
F1_BAD = [
    ([*SEGMENTS, "--method", "jaccard-wilson"], "`--method` must be one of delta, logit-delta, "
                                                "beta-posterior, bootstrap, "
                                                "segments-clopper-pearson, "
                                                "segments-hypergeometric for --design "
                                                "stratified; got 'jaccard-wilson'."),
    (["--method", "segments-clopper-pearson"], "for --design srs; got "
                                               "'segments-clopper-pearson'."),
    ([*SEGMENTS, "--finite", "--method", "bootstrap"],
     "`--method` must not be 'bootstrap' with `--finite`"),
]


@pytest.mark.parametrize(("command", "argv", "fragment"), [
    *(("recall", *bad) for bad in BAD + RECALL_BAD), *(("f1", *bad) for bad in BAD + F1_BAD)])
def test_every_bad_input_exits_2_with_one_line(capsys, command, argv, fragment):
    assert main([command, *COUNTS, *argv]) == 2
    err = one_line(capsys)
    assert fragment in err, err


# One change to a valid stratified call: a result or one line naming the option changed.
OPTIONS = {"--tp": "60", "--fp": "20", "--fn": "25", "--tn": "395", "--design": "stratified",
           "--retrieved": "800", "--unretrieved": "9200", "--confidence-level": "0.95",
           "--target": "0.4", "--method": "delta"}
VALUES = st.one_of(
    st.sampled_from(["-1", "0", "1", "79", "80", "419", "420", "0.5", "1e3", "nan", "inf", "",
                     "x", str(2**53), str(2**53 + 1), "srs", "stratified", "delta",
                     "segments-hypergeometric", "wilson", "clopper-pearson", "\u0663"]),
    st.integers(-(2**64), 2**64).map(str), st.floats().map(repr))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(["recall", "f1"]), option=st.sampled_from(sorted(OPTIONS)),
       change=st.sampled_from(["value", "drop"]), value=VALUES, finite=st.booleans())
def test_one_change_to_a_valid_call_is_a_result_or_one_line_naming_it(capsys, command, option,
                                                                      change, value, finite):
    words = dict(OPTIONS)
    if change == "drop":
        del words[option]
    else:
        words[option] = value
    argv = [w for pair in words.items() for w in pair] + (["--finite"] if finite else [])
    status = main([command, *argv, "--draws", "100"] if command == "f1" else [command, *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    if status == 0:
        assert out.strip() and err == ""
        return
    assert status == 2 and out == "" and err.count("\n") == 1 and err.startswith(PREFIX), err
    named = {option, option.lstrip("-"), option.lstrip("-").replace("-", "_")}
    if option == "--design":  # the sizes or --finite then do not fit the design
        named |= {"--retrieved", "--finite", "--method"}
    if option in ("--retrieved", "--unretrieved") and change == "drop":
        named |= {"--retrieved", "--unretrieved"}
    if finite and option == "--method":
        named.add("--finite")
    assert any(name in err for name in named), (argv, err)


def test_a_real_interpreter_prints_json_and_exits_2_on_one_line():
    base = [sys.executable, "-m", "studies.cli", "recall", *COUNTS]
    done = subprocess.run([*base, *SEGMENTS, "--target", "0.35", "--json"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stderr == ""
    assert json.loads(done.stdout)["certification"]["certified"] is True
    done = subprocess.run([*base, "--design", "stratified"], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"{PREFIX}`--design stratified` needs")


@pytest.mark.parametrize("command", ["recall", "f1"])
@pytest.mark.parametrize("option", ["--retrieved", "--unretrieved", "--target",
                                    "--confidence-level"])
@pytest.mark.parametrize("value", ["-3", "-0.5", "-1e3", "-inf"])
def test_negative_numbers_are_values_of_the_new_options(capsys, command, option, value):
    assert main([command, *COUNTS, *SEGMENTS, option, value]) == 2
    err = one_line(capsys)
    assert err.startswith(f"{PREFIX}argument {option}: "), err
