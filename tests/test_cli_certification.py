"""`evalcert f1` and `evalcert sample-size` against the API, their seeds, and every --help."""

from __future__ import annotations

import argparse
import json

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
    assert summary["interval"] == "delta" and summary["relative_precision_reached"] is None
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
