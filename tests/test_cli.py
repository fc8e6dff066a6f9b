"""The `evalcert` command line: output and one-line errors with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from estimators import ConfusionMatrix
from studies.cli import main


def test_demo_json_matches_the_api(capsys):
    assert main(["demo", "--tp", "60", "--fp", "20", "--fn", "25", "--tn", "395", "--json",
                 "--target-recall", "0.6"]) == 0
    summary = json.loads(capsys.readouterr().out)
    cm = ConfusionMatrix.binary(tp=60, fp=20, fn=25, tn=395)
    recall = cm.recall().confidence_interval(0.95, method="clopper-pearson", alternative="greater")
    assert summary["proportions"]["recall"]["lower_bound"] == recall.low
    assert summary["verdicts"] == [
        {"measure": "recall", "target": 0.6, "lower_bound": recall.low, "certified": True}]
    assert summary["trec5_utility"]["R1"]["optimal_threshold"] == 0.75


def test_demo_table_prints_every_measure(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    for word in ("accuracy", "precision", "recall", "specificity", "prevalence", "kappa", "R3"):
        assert word in out


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["demo", "--tp", "-1"], "--tp: must be a non-negative integer"),
        (["demo", "--confidence-level", "1.5"], "strictly between 0 and 1"),
        (["demo", "--method", "exact"], "`method` must be one of"),
        (["nonsense"], "invalid choice"),
        ([], "required"),
    ],
)
def test_errors_are_one_line_with_exit_status_2(argv, fragment, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err


def test_module_entry_point_exit_status():
    done = subprocess.run([sys.executable, "-m", "studies.cli", "demo", "--fn", "x"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2 and done.stderr.startswith("evalcert: error:")


def test_progress_eta_uses_the_rate_since_the_first_report(monkeypatch):
    import io

    from studies import cmd_study

    clock = iter([100.0, 130.0, 140.0])  # start, first report, second report
    monkeypatch.setattr(cmd_study.time, "monotonic", lambda: next(clock))
    stream = io.StringIO()
    progress = cmd_study.Progress(stream)
    progress(236, 504)  # a resumed run: 236 cells were finished before it started
    progress(286, 504)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "236/504 cells, 30.0 s elapsed, ETA nan s"
    assert lines[1] == "286/504 cells, 40.0 s elapsed, ETA 43.6 s"  # 10 s / 50 cells x 218
