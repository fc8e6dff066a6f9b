"""Reference verdicts: a finished run's claims tables recorded with their provenance."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from studies.cli.main import main
from studies.report.reference import REFERENCE_COLUMNS, record


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
    assert table["status"].tolist() == written["status"].tolist() == ["HOLDS", "HOLDS"]
    assert table["detectable"].tolist() == written["detectable"].tolist()
    info = json.loads((out / "binomial_coverage.json").read_text())
    assert info["grid"] == "quick" and info["seed"] == "3" and info["version"] == "1"
    assert info["tree"] in ("clean", "uncommitted changes", "unknown")
    assert info["wall_seconds_of_the_run"] >= 0
    # a second run's studies join the record; the first's stay
    record(two_runs / "two", out)
    assert {p.name for p in out.glob("*.claims.csv")} == {
        "binomial_coverage.claims.csv", "mean_bias.claims.csv"}
    index = (out / "index.md").read_text()
    assert "## binomial_coverage (version 1, quick grid)" in index
    assert "| mean-unbiased | HOLDS |" in index
    assert "Not recorded yet: bias_error_rate, bias_f1," in index


def test_a_directory_without_a_run_or_a_claims_table_is_refused(two_runs, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(two_runs / "one", copy)
    (copy / "binomial_coverage.claims.csv").unlink()
    with pytest.raises(ValueError, match="must hold the claims table of every study"):
        record(copy, tmp_path / "reference")
    assert not (tmp_path / "reference").exists()
    assert main(["study", "reference", str(tmp_path / "nowhere")]) == 2
    assert "`run_dir` must be a run directory holding run.sqlite" in capsys.readouterr().err
