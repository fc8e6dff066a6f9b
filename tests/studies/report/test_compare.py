"""The regression gate: study compare and study bless, against deliberately broken methods."""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import estimators.fmeasure
import studies.suite.bias_sampling
from estimators import proportion_ci
from studies.cli.main import main
from studies.engine import run
from studies.report.baseline import COLUMNS, MANIFEST, Results, bless, load_results
from studies.report.compare import IMPROVEMENT, REGRESSION, compare
from studies.report.digest import job_summary
from studies.suite import get_study
from studies.suite.binomial_coverage import wrap_method

# Fast studies of the quick suite: three exact (binomial proportion, exact F1 coverage,
# stratified sampling) and one Monte Carlo (the mean), so that each fixture breaks one.
STUDIES = ("binomial_coverage", "coverage_f1_exact", "bias_sampling", "mean_bias")
SEED = 20190


def _run(out: Path, *, seed: int = SEED, studies=None) -> Path:
    run(studies or [get_study(name) for name in STUDIES], rng=seed, workers=1, out=out,
        command=["evalcert", "study", "run", *STUDIES])
    return out


@pytest.fixture(scope="module")
def baseline(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("gate")
    bless(_run(root / "run"), root / "baseline", reason="the first baseline")
    return root / "baseline"


def _gate(baseline: Path, current: Path, capsys, *extra: str) -> tuple[int, str]:
    status = main(["study", "compare", str(baseline), str(current), *extra])
    return status, capsys.readouterr().out


def test_an_unchanged_rerun_passes_with_every_z_zero(baseline, tmp_path, capsys):
    status, out = _gate(baseline, _run(tmp_path / "again"), capsys)
    assert status == 0, out
    assert out.splitlines()[-1].startswith("compare: no regression: 0 regressions, 0 "
                                           "improvements, 0 values missing, 0 added, over ")
    manifest = json.loads((baseline / MANIFEST).read_text())
    assert manifest["reason"] == "the first baseline" and manifest["run"]["seed"] == str(SEED)
    assert set(manifest["studies"]) == set(STUDIES) and "git_commit" in manifest["commit"]


def test_another_seed_passes_and_its_largest_z_stays_below_k(baseline, tmp_path, capsys):
    status, out = _gate(baseline, _run(tmp_path / "seed", seed=7), capsys, "--json")
    found = json.loads(out)
    assert status == 0 and found["status"] == 0, found["summary"]
    assert any("root seeds differ" in note for note in found["notes"])
    comparison = compare(load_results(baseline), load_results(tmp_path / "seed"))
    assert comparison.monte_carlo > 0 and comparison.changes.empty
    assert 0 < comparison.largest_z < comparison.k


def _shrunk_wilson(successes, trials, *, confidence_level, alternative="two-sided"):
    """Wilson with its half-width shrunk by 10%: a deliberately broken method."""
    low, high = proportion_ci(successes, trials, method="wilson",
                              confidence_level=confidence_level, alternative=alternative)
    middle, half = (low + high) / 2, 0.9 * (high - low) / 2
    return middle - half, middle + half


def test_a_wilson_half_width_shrunk_by_10_percent_fails_the_gate(baseline, tmp_path, capsys):
    study = get_study("binomial_coverage")
    broken = dataclasses.replace(study, methods={**study.methods,
                                                 "wilson": wrap_method(_shrunk_wilson)})
    _run(tmp_path / "broken", studies=[broken, *(get_study(n) for n in STUDIES[1:])])
    status, out = _gate(baseline, tmp_path / "broken", capsys)
    assert status == 1, out
    comparison = compare(load_results(baseline), load_results(tmp_path / "broken"))
    changed = comparison.changes
    assert set(changed["method"]) == {"wilson"} and set(changed["study"]) == {
        "binomial_coverage"}
    assert {"coverage", "width"} <= set(changed["measure"])
    assert (changed["change"] == REGRESSION).any()
    assert "wilson" in out and "n=10, p=" in out and "REGRESSION" in out.splitlines()[-1]
    # the CI job summary shows the gate's verdict and the regressions
    digest = job_summary({}, grid="quick", seed=SEED, budget=0.01, comparison=comparison)
    assert f"Regression gate: {comparison.summary()}." in digest
    assert "| regression | binomial_coverage | wilson |" in digest


def test_a_stratified_f1_delta_variance_shrunk_by_10_percent_fails_the_gate(
        baseline, tmp_path, capsys, monkeypatch):
    real = estimators.fmeasure._stratified_variance
    monkeypatch.setattr(estimators.fmeasure, "_stratified_variance",
                        lambda *args: 0.9 * real(*args))
    status, out = _gate(baseline, _run(tmp_path / "broken"), capsys)
    assert status == 1, out
    changed = compare(load_results(baseline), load_results(tmp_path / "broken")).changes
    assert set(changed["study"]) == {"coverage_f1_exact"}
    assert set(changed["method"]) <= {"delta", "delta-losci", "logit-delta",
                                      "logit-delta-losci"}
    assert changed["cell"].str.contains("design=stratified").all()
    assert "delta" in out and "design=stratified" in out


def test_a_bias_added_to_the_stratified_estimator_fails_the_gate(baseline, tmp_path, capsys,
                                                                 monkeypatch):
    real = studies.suite.bias_sampling.stratified_proportion

    def biased(*args, **kwargs):
        estimate, variance = real(*args, **kwargs)
        return np.asarray(estimate) + 0.01, variance

    monkeypatch.setattr(studies.suite.bias_sampling, "stratified_proportion", biased)
    status, out = _gate(baseline, _run(tmp_path / "broken"), capsys)
    assert status == 1, out
    changed = compare(load_results(baseline), load_results(tmp_path / "broken")).changes
    # the simple-random-sampling estimator is the one-stratum case of the same function
    assert set(changed["study"]) == {"bias_sampling"} and set(changed["method"]) == {
        "srs", "stratified"}
    bias = changed[(changed["measure"] == "bias") & (changed["method"] == "stratified")]
    assert len(bias) and (bias["change"] == REGRESSION).all()
    assert "stratified" in out and "bias_sampling" in out


def _results(values, mcse, *, replicates=1000, measure="bias", seed="1"):
    size = len(values)
    rows = pd.DataFrame({"study": "s", "position": range(size), "cell": [f"n={i}" for i in
                                                                          range(size)],
                         "confidence_level": np.nan, "method": "m", "measure": measure,
                         "value": values, "mcse": mcse, "path": "monte-carlo",
                         "n_replicates": pd.array([replicates] * size, dtype="Int64")})
    return Results(Path(seed), "baseline", rows[list(COLUMNS)],
                   pd.DataFrame(columns=["study", "claim", "status"]), {"s": "1"},
                   {"s": {"parameters": {"n": list(range(size))}, "n_replicates": replicates}},
                   seed, {}, True)


@pytest.mark.slow
def test_the_false_alarm_rate_is_the_stated_one_and_a_real_shift_is_caught():
    # 400 pairs of independent runs of 30 Monte Carlo values with MCSE 0.01: an unchanged
    # method is flagged in at most 10% of pairs (the stated rate; tolerance 4 binomial SEs of
    # the rate); a bias of 6 SEs of the difference in one value is flagged in at least 90%.
    gen = np.random.default_rng(11)
    se = 0.01 * math.sqrt(2)
    k = stats.norm.isf(0.10 / 60)
    alarms = caught = 0
    for _ in range(400):
        a = _results(gen.normal(0.0, 0.01, 30), 0.01)
        values = gen.normal(0.0, 0.01, 30)
        alarms += compare(a, _results(values, 0.01, seed="2"), familywise_error=0.10).status()
        values[3] += (k + stats.norm.isf(0.10)) * se * 1.2
        caught += compare(a, _results(values, 0.01, seed="2"), familywise_error=0.10).status()
    assert alarms / 400 <= 0.10 + 4 * math.sqrt(0.10 * 0.90 / 400)
    assert caught / 400 >= 0.90


def test_shares_use_the_binomial_se_and_directions_name_improvements():
    # coverage 1.0 (MCSE 0) against 0.99 over 1,000 replicates: the binomial SE at the pooled
    # share (0.0032) gives z = 3.2, not infinity
    a, b = _results([1.0], 0.0, measure="coverage"), _results([0.99], 0.003, measure="coverage")
    found = compare(a, b, k=3.0).changes
    assert found["z"].iloc[0] == pytest.approx(-0.01 / math.sqrt(0.995 * 0.005 * 2 / 1000))
    # toward nominal (0.95): an improvement; away from it: a regression
    better = compare(_results([0.90], 0.001, measure="coverage"),
                     _results([0.94], 0.001, measure="coverage"))
    assert better.changes["change"].tolist() == [IMPROVEMENT] and better.status() == 0
    assert better.status(strict=True) == 1
    worse = compare(_results([0.94], 0.001, measure="width"),
                    _results([0.90], 0.001, measure="width"))
    assert worse.changes["change"].tolist() == [REGRESSION] and worse.status() == 1


@pytest.mark.parametrize("direction", [-1.0, +1.0])
def test_the_largest_z_is_the_size_of_a_lone_shift_either_way(direction):
    # three Monte Carlo bias values with MCSE 0.01 on each side (SE of a difference 0.01414);
    # only the middle one moves, by 5 SEs of the difference: past k = 3 either way
    se = 0.01 * math.sqrt(2)
    a = _results([0.0, 0.0, 0.0], 0.01)
    b = _results([0.0, direction * 5 * se, 0.0], 0.01, seed="2")
    found = compare(a, b, k=3.0)
    assert found.status() == 1 and found.changes["z"].tolist() == [
        pytest.approx(direction * 5)]
    assert found.largest_z == pytest.approx(5.0)
    assert "largest |z| 5.000, k = 3.000" in found.summary()
    report = found.to_dict()
    assert report["status"] == 1 and report["largest_z"] == pytest.approx(5.0)
    # below k, no change is flagged and the largest |z| is still the shift's size
    small = compare(a, _results([0.0, direction * 2 * se, 0.0], 0.01, seed="2"), k=3.0)
    assert small.status() == 0 and small.largest_z == pytest.approx(2.0)


def test_missing_cells_and_methods_are_regressions_added_ones_are_reported():
    a = _results([0.0, 0.0, 0.0], 0.01)
    b = Results(Path("b"), "run", a.rows.iloc[:2], a.verdicts, a.studies, a.grids, "1", {}, False)
    found = compare(a, b)
    assert found.counts()["missing"] == 1 and found.status() == 1
    assert found.summary().startswith("compare: REGRESSION (fails on 1 values missing): 0 "
                                      "regressions, 0 improvements, 1 values missing, 0 added")
    assert any("incomplete" in note for note in found.notes)
    assert compare(b, a).counts()["added"] == 1 and compare(b, a).status() == 0
    assert compare(b, a).status(strict=True) == 1


def test_a_run_of_some_studies_compares_those_unless_all_studies_are_asked_for(
        baseline, tmp_path, capsys):
    one = _run(tmp_path / "one", studies=[get_study(STUDIES[0])])
    status, out = _gate(baseline, one, capsys)
    assert status == 0, out
    others = ", ".join(sorted(STUDIES[1:]))
    assert "missing:" not in out
    assert f"not compared: 3 baseline studies the current run lacks (--all-studies counts " \
           f"them as missing): {others}" in out.splitlines()
    assert out.splitlines()[-1].startswith(
        "compare: no regression: 0 regressions, 0 improvements, 0 values missing, 0 added "
        "(3 baseline studies not compared), over ")
    lacking = sum(len(load_results(baseline).rows.query("study == @name"))
                  for name in STUDIES[1:])
    for option in ("--all-studies", "--strict"):  # --strict implies --all-studies
        status, out = _gate(baseline, one, capsys, option)
        assert status == 1 and "not compared" not in out
        assert out.splitlines()[-1].startswith(
            f"compare: REGRESSION (fails on {lacking} values missing): 0 regressions, 0 "
            f"improvements, {lacking} values missing, 0 added, over ")
    found = json.loads(_gate(baseline, one, capsys, "--json")[1])
    assert found["status"] == 0 and found["not_compared"] == sorted(STUDIES[1:])
    assert compare(load_results(baseline), load_results(one)).status() == 1  # the API: all


def test_bad_inputs_exit_2_in_one_line_and_never_touch_the_baseline(baseline, tmp_path, capsys):
    kept = {p.name: p.read_bytes() for p in baseline.iterdir()}
    cases = [["study", "compare", str(tmp_path / "none"), str(baseline)],
             ["study", "compare", str(baseline), str(tmp_path)],
             ["study", "compare", str(baseline), str(baseline), "--k", "-1"],
             ["study", "bless", str(tmp_path / "none"), "--reason", "x", "--out", str(baseline)],
             ["study", "bless", str(baseline), "--reason", "x", "--out", str(baseline)],
             ["study", "bless", str(tmp_path), "--reason", " ", "--out", str(baseline)]]
    for words in cases:
        assert main(words) == 2, words
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    # an incomplete run is not blessed
    partial = _run(tmp_path / "partial")
    import sqlite3

    with sqlite3.connect(partial / "run.sqlite") as db:
        db.execute("DELETE FROM cells WHERE position > 3")
    assert main(["study", "bless", str(partial), "--reason", "x", "--out", str(baseline)]) == 2
    assert "must be a finished run" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in baseline.iterdir()} == kept


def test_a_truncated_edited_or_different_baseline_exits_2(baseline, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(baseline, copy)
    data = (copy / "results.csv.gz").read_bytes()
    (copy / "results.csv.gz").write_bytes(data[: len(data) // 2])
    assert main(["study", "compare", str(copy), str(baseline)]) == 2
    assert "truncated or edited" in capsys.readouterr().err
    shutil.rmtree(copy)
    shutil.copytree(baseline, copy)
    manifest = json.loads((copy / MANIFEST).read_text())
    manifest["studies"]["mean_bias"] = "0"
    (copy / MANIFEST).write_text(json.dumps(manifest))
    assert main(["study", "compare", str(copy), str(baseline)]) == 2
    assert "version of study mean_bias" in capsys.readouterr().err
    manifest["studies"]["mean_bias"] = json.loads((baseline / MANIFEST).read_text())[
        "studies"]["mean_bias"]
    manifest["grids"]["mean_bias"]["n_replicates"] = 7
    (copy / MANIFEST).write_text(json.dumps(manifest))
    assert main(["study", "compare", str(copy), str(baseline)]) == 2
    assert "on the baseline's grid" in capsys.readouterr().err
    # the same product with a condition keeping part of it is another grid
    manifest["grids"]["mean_bias"] = {**json.loads((baseline / MANIFEST).read_text())[
        "grids"]["mean_bias"], "where": "n > 5"}
    (copy / MANIFEST).write_text(json.dumps(manifest))
    assert main(["study", "compare", str(copy), str(baseline)]) == 2
    assert "the cells where n > 5" in capsys.readouterr().err


def test_blessing_twice_gives_byte_identical_tables(baseline, tmp_path):
    again = tmp_path / "again"
    bless(_run(tmp_path / "run"), again, reason="the same")
    for name in ("results.csv.gz", "claims.csv"):
        assert (again / name).read_bytes() == (baseline / name).read_bytes(), name
    with gzip.open(again / "results.csv.gz", "rt") as handle:
        assert handle.readline().strip() == ",".join(COLUMNS)


@pytest.mark.slow
def test_a_run_with_a_baseline_shows_the_comparison_in_its_report(baseline, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["study", "run", *STUDIES, "--seed", str(SEED), "--workers", "1", "--out",
                 str(out), "--baseline", str(baseline)]) == 0
    assert "compare: no regression" in capsys.readouterr().out
    index = (out / "index.html").read_text()
    assert '<h2 id="comparison">Comparison with the baseline</h2>' in index
    assert "compare: no regression" in index
    assert json.loads((out / "report.json").read_text())["comparison"]["status"] == 0
    digest = (out / "summary.md").read_text()
    assert "**All " in digest and "Regression gate: compare: no regression" in digest


def test_claim_changes_new_claims_and_values_without_an_se():
    a = _results([0.0], 0.01)
    verdicts = pd.DataFrame({"study": ["s", "s"], "claim": ["kept", "new"],
                             "status": ["FAILS", "HOLDS"]})
    b = dataclasses.replace(a, verdicts=verdicts)
    found = compare(dataclasses.replace(a, verdicts=verdicts.iloc[:0]), b).claims
    assert found[["claim", "change"]].values.tolist() == [["kept", REGRESSION],
                                                           ["new", "added"]]
    # no SE: compared as an exact value (a rounding move is no change, a real one is)
    nan_se = _results([-1.0], math.nan)
    assert compare(nan_se, _results([-1.0 + 1e-12], math.nan)).changes.empty
    moved = compare(nan_se, _results([-0.5], math.nan)).changes
    assert moved["z"].tolist() == [math.inf]
    down = compare(_results([0.5], 0.0), _results([0.4], 0.0)).changes
    assert down["z"].tolist() == [-math.inf]


def test_a_failed_replacement_keeps_the_old_baseline(baseline, tmp_path, monkeypatch):
    copy = tmp_path / "baseline"
    shutil.copytree(baseline, copy)
    kept = {p.name: p.read_bytes() for p in copy.iterdir()}
    real = Path.rename

    def failing(self, target):
        if Path(target) == copy and self.name.startswith(".baseline-") and not \
                self.name.endswith("-old"):
            raise OSError("disk full")
        return real(self, target)

    monkeypatch.setattr(Path, "rename", failing)
    with pytest.raises(ValueError, match=r"could not be replaced .*the old baseline is kept"):
        bless(_run(tmp_path / "run"), copy, reason="x")
    assert {p.name: p.read_bytes() for p in copy.iterdir()} == kept


@pytest.mark.slow
def test_a_report_directory_compares_like_its_run(baseline, tmp_path, capsys):
    run_dir = _run(tmp_path / "run")
    assert main(["study", "report", str(run_dir), "--out", str(tmp_path / "report")]) == 0
    capsys.readouterr()
    report = load_results(tmp_path / "report")
    assert report.kind == "report" and set(report.studies) == set(STUDIES)
    status, out = _gate(baseline, tmp_path / "report", capsys)
    assert status == 0, out
    assert "0 regressions, 0 improvements, 0 values missing, 0 added" in out
    assert len(report.rows) == len(load_results(baseline).rows)


def _exact(values, *, seed="1"):
    """`_results` on the exact path: every outcome enumerated, MCSE 0, no replicate count."""
    found = _results(values, 0.0, measure="width", seed=seed)
    rows = found.rows.assign(path="exact", n_replicates=pd.array([pd.NA] * len(values),
                                                                 dtype="Int64"))
    return dataclasses.replace(found, rows=rows, grids={"s": {**found.grids["s"],
                                                              "n_replicates": None}})


def test_an_exact_value_moved_by_1e_7_is_a_regression_and_by_1e_12_is_not():
    # An exact value has changed when |current - baseline| > 1e-9 (1 + |baseline|): at 0.5
    # the allowance is 1.5e-9, at 0 it is 1e-9. A tolerance loosened to 1e-6 misses the
    # 1e-7 moves, one tightened to 0 or 1e-15 flags the 1e-12 ones, one without its
    # relative part flags 1.4e-9 at 0.5, and ">=" flags a move of exactly 1e-9 at 0.
    base = _exact([0.5, 0.5, 0.0, 0.0, 0.5, 0.0])
    moved = compare(base, _exact([0.5 + 1e-7, 0.5 - 1e-7, 1.1e-9, -1.1e-9, 0.5 + 1.6e-9, 0.0],
                                 seed="2"))
    assert moved.exact_tolerance == 1e-9 and moved.monte_carlo == 0
    assert moved.changes["cell"].tolist() == ["n=0", "n=1", "n=2", "n=3", "n=4"]
    assert moved.changes["change"].tolist() == [REGRESSION] * 5
    assert moved.changes["z"].abs().tolist() == [math.inf] * 5
    assert moved.status() == 1
    kept = compare(base, _exact([0.5 + 1e-12, 0.5 - 1e-12, 0.9e-9, -0.9e-9, 0.5 + 1.4e-9, 1e-9],
                                seed="2"))
    assert kept.changes.empty and kept.compared == 6 and kept.status(strict=True) == 0
