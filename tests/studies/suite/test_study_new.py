"""A study in one file: ``study new`` writes it, discovery finds it, the whole harness runs it.

The suite's own directory is stood in for by a temporary one (``studies.suite.__path__``), so a
new study is written, listed, run, reported and gated without touching the source tree; a
study of an installed package is found through its entry point (a ``.dist-info`` on
``sys.path``, as pip installs one).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

import studies.suite
from studies.cli.main import main
from studies.cli.study import _expand
from studies.suite import claim_false_alarm, get_study, study_names, study_sources
from studies.suite.registry import ENTRY_POINT_GROUP


def _forget(*modules: str) -> None:
    """The suite's share of the false-alarm budget and the imported modules, as before the
    test."""
    for module in modules:
        sys.modules.pop(module, None)
    claim_false_alarm.cache_clear()


@pytest.fixture
def suite_dir(tmp_path, monkeypatch):
    """A second directory of the `studies.suite` package, where ``study new`` writes."""
    directory = tmp_path / "suite"
    directory.mkdir()
    monkeypatch.setattr(studies.suite, "__path__", [*studies.suite.__path__, str(directory)])
    monkeypatch.setattr(studies.suite, "__file__", str(directory / "__init__.py"))
    yield directory
    _forget("studies.suite.ratio_demo", "studies.suite.exact_demo")


@pytest.mark.slow
@pytest.mark.parametrize("kind, name", [("--monte-carlo", "ratio_demo"),
                                         ("--exact", "exact_demo")])
def test_a_new_study_is_listed_run_reported_and_gated_with_no_other_file_changed(
        suite_dir, tmp_path, monkeypatch, capsys, kind, name):
    monkeypatch.chdir(tmp_path)
    assert main(["study", "new", name, kind]) == 0
    assert sorted(p.name for p in suite_dir.iterdir()) == [f"{name}.py"]
    assert f"evalcert study run {name} --grid quick" in capsys.readouterr().out

    assert main(["study", "list"]) == 0
    listed = capsys.readouterr().out
    assert f"{name} (v1, {kind[2:]})" in listed
    assert f"from studies.suite.{name}:STUDY" in listed
    assert name in _expand(["all"])  # the gate runs `study run all`

    assert main(["study", "run", name, "--grid", "quick", "--seed", "3", "--workers", "1",
                 "--out", "run"]) == 0
    out = capsys.readouterr().out
    assert f"{name}: " in out and "claims: 1 hold, 0 inconclusive, 0 fail" in out
    index = (tmp_path / "run" / "index.html").read_text()
    assert f'<a href="{name}.html">{name}</a>' in index
    page = (tmp_path / "run" / f"{name}.html").read_text()
    assert "<h3>Aims</h3>" in page and "<svg" in page  # the ADEMP the study holds, its figure

    # the gate: a baseline without the study, then a run with it: reported as added values
    assert main(["study", "run", "mean_bias", "--grid", "quick", "--seed", "3",
                 "--workers", "1", "--out", "before"]) == 0
    assert main(["study", "bless", "before", "--out", "baseline", "--reason", "test"]) == 0
    capsys.readouterr()
    assert main(["study", "run", "mean_bias", name, "--grid", "quick", "--seed", "3",
                 "--workers", "1", "--out", "after", "--baseline", "baseline"]) == 0
    gate = capsys.readouterr().out
    assert f"added: {name} " in gate and "compare: no regression: 0 regressions" in gate


def test_a_new_name_must_be_free_and_an_identifier(suite_dir, tmp_path, capsys):
    assert main(["study", "new", "mean_bias"]) == 2
    assert "`name` must be new; study 'mean_bias' exists" in capsys.readouterr().err
    assert main(["study", "new", "Ratio-Demo"]) == 2
    assert "must be a lowercase Python identifier" in capsys.readouterr().err
    assert not any(suite_dir.iterdir())


@pytest.mark.slow
def test_a_broken_new_study_fails_its_claim(suite_dir, tmp_path, monkeypatch, capsys):
    """The template's claim can fail: its t quantile replaced by the normal one at n = 5."""
    monkeypatch.chdir(tmp_path)
    assert main(["study", "new", "ratio_demo"]) == 0
    module = suite_dir / "ratio_demo.py"
    text = module.read_text()
    broken = text.replace('"t": t_interval', '"t": z_interval')
    assert broken != text
    module.write_text(broken)
    assert main(["study", "run", "ratio_demo", "--grid", "quick", "--seed", "3",
                 "--workers", "1", "--out", "run"]) == 1
    assert "FAILS ratio_demo t-covers-at-nominal" in capsys.readouterr().out


def test_a_study_of_an_installed_package_is_discovered_by_its_entry_point(
        tmp_path, monkeypatch, capsys):
    site = tmp_path / "site"
    package = site / "thirdparty_studies"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.chdir(tmp_path)
    assert main(["study", "new", "party_coverage", "--exact", "--directory", str(package)]) == 0
    info = site / "thirdparty_studies-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: thirdparty-studies\n"
                                   "Version: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nparty_coverage = thirdparty_studies.party_coverage:STUDY\n")
    try:
        assert study_sources()["party_coverage"] == "thirdparty_studies.party_coverage:STUDY"
        assert "party_coverage" in study_names()
        assert get_study("party_coverage").name == "party_coverage"
        capsys.readouterr()
        assert main(["study", "list"]) == 0
        assert "from thirdparty_studies.party_coverage:STUDY" in capsys.readouterr().out
        assert main(["study", "run", "party_coverage", "--grid", "quick", "--seed", "1",
                     "--workers", "1", "--out", "run"]) == 0
        claims = pd.read_csv(tmp_path / "run" / "party_coverage.claims.csv")
        assert claims["status"].tolist() == ["HOLDS"]
        # an installed package's claims do not change the suite's per-claim budget
        assert claim_false_alarm() == pytest.approx(
            0.01 / sum(not c.identity for n in study_names() if n != "party_coverage"
                       for c in get_study(n).claims))
    finally:
        _forget("thirdparty_studies", "thirdparty_studies.party_coverage")


def test_an_entry_point_may_not_take_a_suite_name(tmp_path, monkeypatch):
    info = tmp_path / "clash-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: clash\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nmean_bias = clash:STUDY\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match="must not reuse the name of the suite's study"):
        study_sources()


def test_discovery_finds_every_suite_module_that_binds_a_study():
    modules = sorted(p.stem for p in Path(studies.suite.__file__).parent.glob("*.py")
                     if not p.stem.startswith("_") and p.stem != "registry")
    binding = [m for m in modules if "\nSTUDY = Study(" in
               (Path(studies.suite.__file__).parent / f"{m}.py").read_text()]
    assert list(study_names()) == binding
    assert "text_learner" in modules and "text_learner" not in binding
