"""`evalcert f1` and `evalcert sample-size` against the API, their seeds, and every --help."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import pathlib
from xml.etree import ElementTree

import pytest

from estimators import F1_METHODS_BY_DESIGN, certification_sample_size, f1_ci, f1_estimate
from studies.cli.main import build_parser, main

COUNTS = ["--tp", "60", "--fp", "20", "--fn", "25", "--tn", "395"]


def test_f1_json_matches_the_api_and_carries_seed_and_draws(capsys):
    assert main(["f1", *COUNTS, "--seed", "7", "--draws", "2000", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["f1"] == f1_estimate(60, 20, 25, 395).estimate
    assert (summary["seed"], summary["draws"]) == (7, 2000)
    assert summary["monte_carlo_methods"] == ["beta-posterior", "bootstrap"]
    for row, method in zip(summary["intervals"], F1_METHODS_BY_DESIGN["srs"], strict=True):
        two = f1_ci(60, 20, 25, 395, method=method, rng=7, draws=2000)
        losci = f1_ci(60, 20, 25, 395, method=method, rng=7, draws=2000, alternative="greater")
        assert (row["method"], row["low"], row["high"], row["losci_low"]) == (
            method, two.low, two.high, losci.low)


def test_f1_table_says_which_seed_its_monte_carlo_methods_used(capsys):
    assert main(["f1", *COUNTS, "--method", "delta", "--method", "bootstrap",
                 "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "bootstrap: 10000 draws, seed 3" in out
    assert main(["f1", *COUNTS, "--method", "delta"]) == 0
    assert "seed" not in capsys.readouterr().out  # nothing random was drawn


def test_no_information_is_undefined_not_an_error_in_every_command(capsys):
    """One policy: no information is nan in the API, `undefined` in tables, null in JSON, exit 0."""
    zeros = ["--tp", "0", "--fp", "0", "--fn", "0", "--tn", "50"]
    assert main(["f1", *zeros]) == 0
    out = capsys.readouterr().out
    assert out.startswith("F1 = undefined") and "note: F1 is undefined" in out
    assert "nan" not in out
    assert main(["f1", *zeros, "--json", "--method", "delta"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["f1"] is None and data["intervals"][0]["low"] is None
    assert main(["demo", *zeros, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)  # valid JSON: no NaN
    assert data["f1"] is None and data["proportions"]["precision"]["low"] is None
    assert main(["sample-size", *zeros[:6], "--tn", "0", "--target", "0.5", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["reachable"] is False and "undefined" in data["reason"]
    assert main(["f1", "--tp", "0", "--fp", "3", "--fn", "0", "--tn", "50", "--json",
                 "--method", "delta"]) == 0  # F1 = 0 is defined
    assert json.loads(capsys.readouterr().out)["f1"] == 0.0


def test_sample_size_json_matches_the_api(capsys):
    assert main(["sample-size", *COUNTS, "--target", "0.6", "--seed", "11", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    plan = certification_sample_size((60, 20, 25, 395), 0.6, rng=11)
    assert (summary["test_size"], summary["draws"], summary["seed"]) == (
        plan.test_size, plan.draws, 11)
    # the default bound is the one whose coverage is guaranteed, and the text says so
    assert summary["interval"] == "jaccard-clopper-pearson"
    assert summary["relative_precision_reached"] is None
    assert main(["sample-size", *COUNTS, "--target", "0.6", "--seed", "11"]) == 0
    assert ("interval: jaccard-clopper-pearson, the default: its coverage is guaranteed"
            in capsys.readouterr().out)
    assert main(["sample-size", *COUNTS, "--target", "0.6", "--seed", "11",
                 "--interval", "delta"]) == 0
    assert "the default" not in capsys.readouterr().out
    assert main(["sample-size", *COUNTS, "--target", "0.6", "--seed", "11", "--json",
                 "--interval", "logit-delta"]) == 0
    logit = certification_sample_size((60, 20, 25, 395), 0.6, rng=11, interval="logit-delta")
    assert json.loads(capsys.readouterr().out)["test_size"] == logit.test_size
    assert main(["sample-size", *COUNTS, "--target", "0.6", "--seed", "11", "--json",
                 "--posterior", "dirichlet"]) == 0
    dirichlet = certification_sample_size((60, 20, 25, 395), 0.6, rng=11, posterior="dirichlet")
    found = json.loads(capsys.readouterr().out)
    assert (found["test_size"], found["posterior"]) == (dirichlet.test_size, "dirichlet")


def test_sample_size_unreachable_target_is_explained(capsys):
    assert main(["sample-size", *COUNTS, "--target", "0.7", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "UNREACHABLE" in out and "limit of theta* as the test size grows" in out


def test_sample_size_says_when_the_draw_cap_stops_the_refinement(capsys):
    argv = ["sample-size", *COUNTS, "--target", "0.6", "--seed", "1", "--draws", "100",
            "--json"]
    assert main([*argv, "--relative-precision", "0.001", "--max-draws", "400"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["draws"] == 400 and summary["relative_precision_reached"] is False
    assert "stopped at 400 draws (--max-draws 400)" in captured.err
    assert main([*argv, "--relative-precision", "1"]) == 0  # already narrow enough
    captured = capsys.readouterr()
    assert json.loads(captured.out)["relative_precision_reached"] is True
    assert captured.err == ""


def _commands(parser: argparse.ArgumentParser):
    """Every (name, parser) of the command line, subcommands of subcommands included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield name, sub
                yield from _commands(sub)


@pytest.mark.parametrize("name", [name for name, _ in _commands(build_parser())])
def test_every_option_has_help_and_shows_its_default(name):
    parser = dict(_commands(build_parser()))[name]
    text = " ".join(parser.format_help().split())
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        assert action.help, (name, action.dest)
        default = action.default
        hidden = action.required or default is None or default is False or default == []
        assert hidden or f"(default: {default})" in text, (name, action.dest)


# --- sample-size: measures, designs, finite collections, the power-curve figure -----------------

SAMPLE = (60, 20, 25, 395)
STRATIFIED = ["--design", "stratified", "--retrieved", "160", "--unretrieved", "840"]


def _json(capsys, argv):
    assert main(["sample-size", *COUNTS, *argv, "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return json.loads(captured.out)


def _same_plan(summary, plan):
    """Every number and name of the JSON equals the plan's (exact path: equal, not close)."""
    for name in ("measure", "design", "method", "interval", "posterior", "target",
                 "confidence_level", "power", "reachable", "test_size", "stable_size",
                 "search_limit", "retrieved_size", "unretrieved_size", "srs_test_size",
                 "labels_saved", "population_size"):
        assert summary[name] == getattr(plan, name), name
    for name in ("achieved_power", "total_cost", "limit", "point_estimate", "point_f1"):
        value = getattr(plan, name)
        assert summary[name] == (value if math.isfinite(value) else None), name
    assert summary["segment_sizes"] == (None if plan.segment_sizes is None
                                        else list(plan.segment_sizes))
    assert summary["cost"] == (None if plan.cost is None else list(plan.cost))
    assert summary["assumptions"] == list(plan.assumptions)
    assert summary["reason"] == (plan.reason or None)


def test_sample_size_recall_json_is_the_exact_plan_and_its_curve(capsys):
    summary = _json(capsys, ["--target", "0.55", "--measure", "recall", "--curve"])
    plan = certification_sample_size(SAMPLE, 0.55, measure="recall")
    _same_plan(summary, plan)
    assert summary["method"] == "exact" and summary["test_size"] == summary["stable_size"]
    assert summary["interval"] == "clopper-pearson" and summary["posterior"] == "dirichlet"
    assert summary["draws"] is None and summary["seed"] is None and summary["theta_star"] is None
    assert summary["curve"] == {"sizes": plan.curve.sizes.tolist(),
                                "power": plan.curve.power.tolist()}
    size = float(plan.test_size)
    assert summary["test_size_interval_95"] == [size, size]


def test_sample_size_recall_plans_what_the_api_documents(capsys):
    """Recall 0.6 from the README's sample: 5819 documents, the planner's doctest."""
    summary = _json(capsys, ["--target", "0.6", "--measure", "recall"])
    assert (summary["test_size"], summary["stable_size"], summary["search_limit"]) == (
        5819, 5819, 11638)
    assert round(summary["achieved_power"], 4) == 0.93


def test_sample_size_json_leaves_the_curve_out_unless_asked(capsys):
    summary = _json(capsys, ["--target", "0.8", "--measure", "accuracy"])
    assert "curve" not in summary and summary["plot"] is None
    _same_plan(summary, certification_sample_size(SAMPLE, 0.8, measure="accuracy"))
    assert (summary["test_size"], summary["stable_size"]) == (112, 124)  # the saw-tooth


def test_sample_size_stratified_recall_json_equals_the_api(capsys):
    summary = _json(capsys, ["--target", "0.5", "--measure", "recall", *STRATIFIED,
                             "--cost", "1", "2"])
    plan = certification_sample_size(SAMPLE, 0.5, measure="recall", design="stratified",
                                     segment_sizes=(160, 840), cost=(1.0, 2.0))
    _same_plan(summary, plan)
    assert summary["retrieved_size"] + summary["unretrieved_size"] == summary["test_size"]
    assert summary["total_cost"] == summary["retrieved_size"] + 2 * summary["unretrieved_size"]
    assert summary["labels_saved"] == summary["srs_test_size"] - summary["test_size"]
    assert summary["interval"] == "segments-clopper-pearson"
    assert summary["posterior"] == "known-share" and summary["population_size"] is None


@pytest.mark.slow
def test_sample_size_finite_is_the_segments_as_population(capsys):
    argv = ["--target", "0.5", "--measure", "recall", *STRATIFIED]
    finite = _json(capsys, [*argv, "--finite"])
    plan = certification_sample_size(SAMPLE, 0.5, measure="recall", design="stratified",
                                     segment_sizes=(160, 840), population_size=1000)
    _same_plan(finite, plan)
    assert finite["interval"] == "segments-hypergeometric" and finite["limit"] is None
    assert _json(capsys, [*argv, "--population-size", "1000"]) == finite


def test_sample_size_accuracy_on_a_finite_collection(capsys):
    summary = _json(capsys, ["--target", "0.5", "--measure", "accuracy",
                             "--population-size", "300"])
    _same_plan(summary, certification_sample_size(SAMPLE, 0.5, measure="accuracy",
                                                  population_size=300))
    assert summary["interval"] == "hypergeometric"


def test_sample_size_text_of_an_exact_plan(capsys):
    assert main(["sample-size", *COUNTS, "--target", "0.8", "--measure", "accuracy"]) == 0
    out = capsys.readouterr().out
    for line in ("request:  accuracy >= 0.8 with a 95% clopper-pearson lower bound",
                 "test size: 112", "stable size: 124", "search limit: 224", "achieved power: ",
                 "posterior limit: ", "method: exact", "assumptions:",
                 "  - the test set is a simple random sample of the collection"):
        assert line in out, line
    assert "draws:" not in out and "Monte Carlo" not in out


def test_sample_size_text_of_a_stratified_plan(capsys):
    assert main(["sample-size", *COUNTS, "--target", "0.5", "--measure", "recall",
                 *STRATIFIED]) == 0
    out = capsys.readouterr().out
    plan = certification_sample_size(SAMPLE, 0.5, measure="recall", design="stratified",
                                     segment_sizes=(160, 840))
    for line in (f"test size: {plan.test_size}",
                 f"allocation: n1={plan.retrieved_size} retrieved + n0={plan.unretrieved_size} "
                 f"unretrieved documents, total cost {plan.total_cost:g}",
                 f"power, posterior): {plan.srs_test_size} documents",
                 # equal costs: the Bonferroni bound, not the cost, makes it label more
                 f"stratification labels {-plan.labels_saved} more documents: its bound joins",
                 "segments N1=160 N0=840", "method: exact",
                 "  - the retrieved and unretrieved segments are sampled separately"):
        assert line in out, line


def test_sample_size_text_of_the_simulated_plan_keeps_its_monte_carlo_lines(capsys):
    assert main(["sample-size", *COUNTS, "--target", "0.6", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    plan = certification_sample_size(SAMPLE, 0.6, rng=5)
    for line in (f"test size: {plan.test_size}", "Monte Carlo 95% interval for the size: [",
                 "limit of theta* as the test size grows: ", "draws: 1000, seed: 5",
                 "method: Monte Carlo", "assumptions:"):
        assert line in out, line
    summary = _json(capsys, ["--target", "0.6", "--seed", "5"])
    assert (summary["method"], summary["draws"], summary["seed"]) == ("monte-carlo", 1000, 5)
    assert summary["achieved_power"] == plan.achieved_power


def _svg_texts(path):
    root = ElementTree.parse(path).getroot()  # valid XML, or this raises
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    texts = " ".join(" ".join(e.itertext()) for e in root.iter("{http://www.w3.org/2000/svg}text"))
    paths = [e.get("d", "") for e in root.iter("{http://www.w3.org/2000/svg}path")]
    return " ".join(texts.split()), paths


def test_sample_size_plot_is_a_deterministic_power_curve(tmp_path, capsys):
    argv = ["sample-size", *COUNTS, "--target", "0.8", "--measure", "accuracy"]
    first, second = tmp_path / "a.svg", tmp_path / "b.svg"
    assert main([*argv, "--plot", str(first)]) == 0
    out = capsys.readouterr().out
    assert "test size: 112" in out
    assert out.splitlines()[-1] == f"wrote the power curve to {first}"
    assert main([*argv, "--plot", str(second), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["plot"] == str(second)
    assert first.read_bytes() == second.read_bytes()
    texts, paths = _svg_texts(first)
    for text in ("Power to certify accuracy \u2265 0.8 with a 95% clopper-pearson lower bound",
                 "simple random sample", "planned 112", "stable 124", "wanted power 0.93",
                 "planned size 112", "stable size 124", "test size (documents labelled)",
                 "power (probability the test passes)", "near the planned size"):
        assert text in texts, text
    # the curve: a step line through the power at each of the 224 sizes searched
    assert max(p.count("L") for p in paths) >= 224
    assert b"<dc:date>" not in first.read_bytes()


def test_sample_size_plot_of_a_stratified_plan(tmp_path, capsys):
    target = tmp_path / "stratified.svg"
    assert main(["sample-size", *COUNTS, "--target", "0.5", "--measure", "recall", *STRATIFIED,
                 "--plot", str(target)]) == 0
    capsys.readouterr()
    plan = certification_sample_size(SAMPLE, 0.5, measure="recall", design="stratified",
                                     segment_sizes=(160, 840))
    texts, _ = _svg_texts(target)
    for text in ("Power to certify recall \u2265 0.5", "stratified design",
                 "total test size n1 + n0 along the planned allocation",
                 f"planned {plan.test_size}",
                 f"(n1={plan.retrieved_size} + n0={plan.unretrieved_size})"):
        assert text in texts, text


def test_sample_size_plot_of_an_unreachable_plan_shows_why():
    """The figure of an unreachable plan that has a curve (drawn directly: the command's
    unreachable plans have none)."""
    from studies.cli.sample_size import power_figure

    plan = certification_sample_size(SAMPLE, 0.8, measure="accuracy")
    lost = dataclasses.replace(plan, test_size=None, reachable=False, stable_size=None,
                               reason="no test size up to 224 reaches power 0.93")
    text = power_figure(lost)
    assert "unreachable: no test size up to 224" in text and "planned" not in text
    assert text == power_figure(lost)


def test_sample_size_plot_without_a_curve_is_a_one_line_error(tmp_path, capsys):
    target = tmp_path / "none.svg"
    assert main(["sample-size", *COUNTS, "--target", "0.75", "--seed", "1", "--plot",
                 str(target)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("evalcert: error: `--plot` has no power curve to draw")
    assert "not above the target" in err and not target.exists()


def test_sample_size_plot_that_cannot_be_written_is_a_one_line_error(tmp_path, capsys,
                                                                    monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(pathlib.Path, "write_text", refuse)
    assert main(["sample-size", *COUNTS, "--target", "0.8", "--measure", "accuracy",
                 "--plot", str(tmp_path / "x.svg")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("evalcert: error: `--plot` ") and "Permission denied" in err


@pytest.mark.parametrize(("argv", "fragment"), [
    (["--target", "1.2"], "argument --target: must be strictly between 0 and 1"),
    (["--target", "0"], "argument --target: must be strictly between 0 and 1"),
    (["--target", "0.5", "--measure", "recall", *STRATIFIED, "--population-size", "900"],
     "`--retrieved` + `--unretrieved` must add up to --population-size (900); got 160 + 840"),
    (["--target", "0.5", "--measure", "recall", "--retrieved", "160"],
     "`--retrieved` must come with `--unretrieved`"),
    (["--target", "0.5", "--measure", "recall", "--unretrieved", "840"],
     "`--unretrieved` must come with `--retrieved`"),
    (["--target", "0.5", "--measure", "recall", "--design", "stratified"],
     "`--design stratified` needs the collection's segment sizes"),
    (["--target", "0.5", "--measure", "recall", "--cost", "1", "2"],
     "`--cost` applies to --design stratified"),
    (["--target", "0.5", "--measure", "recall", *STRATIFIED, "--cost", "0", "1"],
     "argument --cost: must be a positive number; got 0"),
    (["--target", "0.5", "--measure", "recall", *STRATIFIED, "--cost", "1", "-2"],
     "argument --cost: must be a positive number; got -2"),
    (["--target", "0.5", "--measure", "recall", "--finite"],
     "`--finite` treats the segments"),
    (["--target", "0.5", "--measure", "precision", "--retrieved", "80", "--unretrieved", "420"],
     "`--retrieved`/`--unretrieved` apply to --design stratified, or to a finite collection"),
    (["--target", "0.5", "--measure", "recall", "--population-size", "0"],
     "argument --population-size: must be a positive integer"),
    (["--target", "0.5", "--measure", "recall", "--population-size", "500"],
     "`--population-size` applies to --measure recall only with --design stratified"),
    (["--target", "0.5", "--measure", "accuracy", *STRATIFIED],
     "`--measure` must be one of 'f1', 'recall', 'precision', 'elusion' with --design "
     "stratified"),
    (["--target", "0.5", "--measure", "recall", "--interval", "delta"],
     "`--interval` must be one of 'wald', "),
    (["--target", "0.5", "--measure", "recall", *STRATIFIED, "--interval", "wilson"],
     "`--interval` must be one of 'segments-clopper-pearson', 'delta'; got 'wilson'"),
    (["--target", "0.5", "--measure", "recall", *STRATIFIED, "--posterior", "dirichlet"],
     "`--posterior` must be 'known-share' with --design stratified"),
    (["--target", "0.5", "--measure", "recall", "--relative-precision", "0.1"],
     "`--relative-precision` applies to the simulated known-share F1 plan only"),
    (["--target", "0.5", "--curve"], "`--curve` adds the power curve to the --json output"),
    (["--target", "0.5", "--plot", "<tmp>/figure.png"],
     "`--plot` must name a file ending in .svg; got "),
    (["--target", "0.5", "--plot", "<tmp>/figure"], "`--plot` must name a file ending"),
    (["--target", "0.5", "--plot", "<tmp>/file.txt/figure.svg"],
     "`--plot` must be in an existing directory; got "),
    (["--target", "0.5", "--plot", "<tmp>/missing/figure.svg"],
     "`--plot` must be in an existing directory; got "),
    (["--target", "0.5", "--plot", "<tmp>/folder.svg"],
     "`--plot` must name a file to write; got "),
    (["--target", "0.5", "--plot", "<tmp>/figure.svg/"],
     "`--plot` must name a file, not a directory"),
    (["--target", "0.5", "--plot", ""], "`--plot` must name a file ending in .svg"),
    (["--target", "0.5", "--plot", "<tmp>/" + "x" * 300 + ".svg"],
     "`--plot` must be a usable file path"),
])
def test_sample_size_bad_input_is_one_line(tmp_path, capsys, argv, fragment):
    (tmp_path / "file.txt").write_text("not a directory\n")
    (tmp_path / "folder.svg").mkdir()
    argv = [w.replace("<tmp>", str(tmp_path)) for w in argv]
    assert main(["sample-size", *COUNTS, *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("evalcert: error: ") and fragment in err, err
    assert not any(p.suffix == ".svg" and p.is_file() for p in tmp_path.iterdir())


def test_f1_table_columns_align_whatever_the_method_names(capsys):
    assert main(["f1", *COUNTS, "--draws", "200"]) == 0
    lines = capsys.readouterr().out.splitlines()
    table = lines[1:2 + len(F1_METHODS_BY_DESIGN["srs"])]  # header and one row per method
    assert lines[len(table) + 1].startswith("beta-posterior, bootstrap: 200 draws")
    assert len({len(line) for line in table}) == 1, table
    assert table[0].index("95% low") > max(len(m) for m in F1_METHODS_BY_DESIGN["srs"])
    assert main(["f1", *COUNTS, "--method", "delta"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "method     95% low  95% high  LOSCI low"


def test_f1_note_on_no_information_names_what_is_undefined_and_what_is_not(capsys):
    zeros = ["--tp", "0", "--fp", "0", "--fn", "0", "--tn", "5", "--draws", "200"]
    assert main(["f1", *zeros, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["intervals"]
    undefined = [r["method"] for r in rows if r["low"] is None]
    defined = [r["method"] for r in rows if r["low"] is not None]
    assert undefined and defined  # both kinds exist, so the note must tell them apart
    assert main(["f1", *zeros]) == 0
    out = capsys.readouterr().out
    note = " ".join(out[out.index("note: "):out.index("assumptions of")].split())
    assert note == ("note: F1 is undefined when the sample holds no relevant and no retrieved "
                    "document (tp=fp=fn=0); so are the intervals of "
                    f"{', '.join(undefined)}; {', '.join(defined)} still give one, wide since "
                    "the sample says next to nothing about F1.")
    assert main(["f1", *zeros, "--method", undefined[0]]) == 0
    out = capsys.readouterr().out
    assert " ".join(out[:out.index("assumptions of")].split()).endswith(
        ", and so is every interval.")
    assert main(["f1", *zeros, "--method", defined[0]]) == 0
    out = capsys.readouterr().out
    assert " ".join(out[:out.index("assumptions of")].split()).endswith(
        f"every method shown still gives an interval: {defined[0]}.")


def test_sample_size_default_seed_is_short_and_reproduces_the_plan(capsys):
    argv = ["sample-size", *COUNTS, "--target", "0.6", "--draws", "200"]
    assert main([*argv, "--json"]) == 0
    fresh = json.loads(capsys.readouterr().out)
    assert 0 <= fresh["seed"] < 2**32
    assert main([*argv, "--json", "--seed", str(fresh["seed"])]) == 0
    assert json.loads(capsys.readouterr().out) == fresh
    assert main(argv) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("method: "))
    seed = int(line.rsplit("--seed ", 1)[1].rstrip(")"))
    assert 0 <= seed < 2**32 and f"seed: {seed} " in line
