"""Reference verdicts: a finished run's claims tables recorded with their provenance."""

from __future__ import annotations

import dataclasses
import json

import pandas as pd
import pytest

from studies.cli.main import main
from studies.engine import evaluate_claims, results_from_store
from studies.report.reference import REFERENCE_COLUMNS, record
from studies.suite import claim_false_alarm, get_study


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("reference")
    for names, out in ((["binomial_coverage"], "one"), (["mean_bias"], "two")):
        assert main(["study", "run", *names, "--seed", "3", "--workers", "1",
                     "--out", str(base / out)]) == 0
    return base


def test_a_run_is_recorded_with_its_verdicts_and_provenance(two_runs, capsys):
    out = two_runs / "reference"
    assert main(["study", "reference", str(two_runs / "one"), "--out", str(out)]) == 0
    assert "recorded the verdicts of binomial_coverage" in capsys.readouterr().out
    table = pd.read_csv(out / "binomial_coverage.claims.csv", keep_default_na=False)
    assert tuple(table.columns) == REFERENCE_COLUMNS
    written = pd.read_csv(two_runs / "one" / "binomial_coverage.claims.csv",
                          keep_default_na=False)
    assert table["status"].tolist() == written["status"].tolist() == ["HOLDS"] * 3
    assert table["detectable"].tolist() == written["detectable"].tolist()
    info = json.loads((out / "binomial_coverage.json").read_text())
    assert info["grid"] == "quick" and info["seed"] == "3" and info["version"] == "1"
    assert info["tree"] in ("clean", "uncommitted changes", "unknown")
    assert info["claims_tree"] in ("clean", "uncommitted changes", "unknown")
    assert info["wall_seconds_of_the_run"] >= 0
    # a second run's studies join the record; the first's stay
    study = get_study("mean_bias")
    verdicts = evaluate_claims(study.claims, results_from_store(two_runs / "two")["mean_bias"],
                               grid="quick", familywise_error=claim_false_alarm())
    record(two_runs / "two", out, {"mean_bias": verdicts})
    assert {p.name for p in out.glob("*.claims.csv")} == {
        "binomial_coverage.claims.csv", "mean_bias.claims.csv"}
    index = (out / "index.md").read_text()
    assert "## binomial_coverage (version 1, quick grid)" in index
    assert "| mean-unbiased | HOLDS |" in index
    assert "Not recorded yet: bias_error_rate, bias_f1," in index


def test_claims_restated_after_the_run_are_judged_on_its_stored_values(two_runs, tmp_path,
                                                                       monkeypatch):
    # the reference judges with the code's claims, not the tables the run wrote
    study = get_study("binomial_coverage")
    stricter = dataclasses.replace(study.claims[1], margin=-0.5)  # Wald 50 points short
    restated = dataclasses.replace(study, claims=(study.claims[0], stricter))
    monkeypatch.setattr("studies.cli.study.stored_studies", lambda run: ([restated], []))
    out = tmp_path / "reference"
    assert main(["study", "reference", str(two_runs / "one"), "--out", str(out)]) == 0
    table = pd.read_csv(out / "binomial_coverage.claims.csv", keep_default_na=False)
    assert table["status"].tolist() == ["HOLDS", "FAILS"]
    written = pd.read_csv(two_runs / "one" / "binomial_coverage.claims.csv",
                          keep_default_na=False)
    assert written["status"].tolist() == ["HOLDS"] * 3


def test_a_claim_still_open_is_recorded_with_what_deciding_it_would_take(two_runs, tmp_path,
                                                                         monkeypatch):
    study = get_study("mean_bias")
    # the same claim told to 0.001: beyond the run's power
    fine = dataclasses.replace(study.claims[0], name="finely", resolution=0.001)
    monkeypatch.setattr("studies.cli.study.stored_studies", lambda run: (
        [dataclasses.replace(study, claims=(study.claims[0], fine))], []))
    out = tmp_path / "reference"
    assert main(["study", "reference", str(two_runs / "two"), "--out", str(out)]) == 0
    held, row = pd.read_csv(out / "mean_bias.claims.csv").itertuples()
    assert held.status == "HOLDS" and pd.isna(held.more_replicates)  # nothing to decide
    assert row.status == "INCONCLUSIVE" and row.more_replicates > 0
    assert row.more_core_seconds > 0
    assert f"deciding it: about {int(row.more_replicates):,} more replicates" in (
        out / "index.md").read_text()


def test_a_directory_without_a_run_or_with_other_studies_is_refused(two_runs, tmp_path,
                                                                     capsys):
    verdicts = evaluate_claims(get_study("mean_bias").claims,
                               results_from_store(two_runs / "two")["mean_bias"])
    with pytest.raises(ValueError, match=r"`verdicts` must be of studies of the run "
                                         r"\(binomial_coverage\); got \['mean_bias'\]"):
        record(two_runs / "one", tmp_path / "reference", {"mean_bias": verdicts})
    assert not (tmp_path / "reference").exists()
    assert main(["study", "reference", str(tmp_path / "nowhere")]) == 2
    assert "`run_dir` must be a run directory holding run.sqlite" in capsys.readouterr().err


@pytest.mark.parametrize("run_dirty, judged_dirty", [(False, True), (True, False)])
def test_the_tree_of_the_run_and_of_the_judging_claims_are_recorded_apart(
        tmp_path, monkeypatch, run_dirty, judged_dirty):
    # the run records its own tree; `claims_tree` is the tree of the code that judged it
    import studies.engine.provenance
    import studies.report.reference

    def state(commit, dirty):
        return lambda: {"git_commit": commit, "git_dirty": dirty}

    monkeypatch.setattr(studies.engine.provenance, "git_state", state("a" * 40, run_dirty))
    assert main(["study", "run", "binomial_coverage", "--seed", "3", "--workers", "1",
                 "--out", str(tmp_path / "run")]) == 0
    monkeypatch.setattr(studies.report.reference, "git_state", state("b" * 40, judged_dirty))
    verdicts = evaluate_claims(get_study("binomial_coverage").claims,
                               results_from_store(tmp_path / "run")["binomial_coverage"],
                               grid="quick", familywise_error=claim_false_alarm())
    record(tmp_path / "run", tmp_path / "reference", {"binomial_coverage": verdicts})
    info = json.loads((tmp_path / "reference" / "binomial_coverage.json").read_text())
    words = {True: "uncommitted changes", False: "clean"}
    assert (info["commit"], info["tree"]) == ("a" * 40, words[run_dirty])
    assert (info["claims_judged_at"], info["claims_tree"]) == ("b" * 40, words[judged_dirty])
    index = (tmp_path / "reference" / "index.md").read_text()
    assert (f"commit {'a' * 40} ({words[run_dirty]})" in index
            and f"Claims judged at commit {'b' * 40} ({words[judged_dirty]})." in index)
