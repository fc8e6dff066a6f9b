"""What a run records about where it ran: command line, Python, platform, git commit and state."""

from __future__ import annotations

import json
import platform
import shutil
import sqlite3
import subprocess

import pytest

from studies.cli.main import main
from studies.engine import provenance

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(root, *args):
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@needs_git
def test_dirty_flag_follows_the_sources_of_the_tree(tmp_path, monkeypatch):
    (tmp_path / "studies").mkdir()
    (tmp_path / "studies" / "x.py").write_text("A = 1\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "studies")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    monkeypatch.setattr(provenance, "_source_root", lambda: tmp_path)
    clean = provenance.git_state()
    assert clean["git_dirty"] is False and len(clean["git_commit"]) == 40
    (tmp_path / "notes.txt").write_text("a report is not a source")
    assert provenance.git_state()["git_dirty"] is False
    (tmp_path / "studies" / "x.py").write_text("A = 2\n")
    assert provenance.git_state() == {"git_commit": clean["git_commit"], "git_dirty": True}
    _git(tmp_path, "checkout", "-q", "--", "studies")
    (tmp_path / "studies" / "new.py").write_text("B = 1\n")  # an untracked module counts
    assert provenance.git_state()["git_dirty"] is True


@needs_git
def test_a_copy_in_another_repository_is_not_that_repository(tmp_path, monkeypatch):
    (tmp_path / ".gitignore").write_text("vendored/\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".gitignore")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    copy = tmp_path / "vendored" / "studies" / "engine" / "provenance.py"
    copy.parent.mkdir(parents=True)
    copy.write_text("")
    monkeypatch.setattr(provenance, "__file__", str(copy))
    assert provenance._source_root() is None
    assert provenance.git_state() == {"git_commit": None, "git_dirty": None}


def test_outside_a_checkout_the_state_is_unknown(monkeypatch):
    monkeypatch.setattr(provenance, "_source_root", lambda: None)
    assert provenance.git_state() == {"git_commit": None, "git_dirty": None}


def test_a_run_records_its_command_python_platform_and_packages(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["study", "run", "mean_bias", "--seed", "4", "--workers", "1", "--out", str(out)]
    assert main(argv) == 0
    with sqlite3.connect(out / "run.sqlite") as db:
        meta = {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM run")}
    assert meta["command"] == "evalcert " + " ".join(argv)
    assert meta["python"] == platform.python_version()
    assert meta["platform"] == platform.platform()
    assert {"numpy", "scipy", "pandas"} <= set(meta["packages"])
    assert "git_commit" in meta and "git_dirty" in meta
    capsys.readouterr()
    assert main(["study", "status", str(out)]) == 0
    assert f"command: evalcert {' '.join(argv)}" in capsys.readouterr().out
    resume = ["study", "run", "mean_bias", "--workers", "1", "--out", str(out), "--resume"]
    assert main(resume) == 0
    with sqlite3.connect(out / "run.sqlite") as db:
        meta = {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM run")}
    assert meta["command"] == "evalcert " + " ".join(argv)  # the run's own origin is kept
    assert [r["command"] for r in meta["resumes"]] == ["evalcert " + " ".join(resume)]
    capsys.readouterr()
    assert main(["study", "status", str(out)]) == 0
    assert "resumed " in capsys.readouterr().out
