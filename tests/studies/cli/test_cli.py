"""The `evalcert` command line: output and one-line errors with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from estimators import ConfusionMatrix
from studies.cli.main import main


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
        (["demo", "--method", "exact"], "invalid choice: 'exact' (choose from 'wald'"),
        (["nonsense"], "invalid choice"),
        ([], "required"),
        (["f1", "--tp", "5", "--fp", "2", "--fn", "1", "--tm", "3"],
         "unrecognized arguments: --tm (did you mean --tn?)"),
        (["f1", "--tp", "5", "--fp", "2", "--fn", "1", "--tn", "3", "--sed", "1"],
         "unrecognized arguments: --sed (did you mean --seed?)"),
        (["study", "compare", "a", "b", "--strcit"],
         "unrecognized arguments: --strcit (did you mean --strict?)"),
        (["--hepl"], "unrecognized arguments: --hepl (did you mean --help?)"),
        (["f1", "--tp", "5", "--fp", "2", "--fn", "1", "--tn", "3", "--zzz"],
         "unrecognized arguments: --zzz"),
        (["f1", "--tp", "5", "--fp", "2", "--fn", "1"], "required: --tn"),
    ],
)
def test_errors_are_one_line_with_exit_status_2(argv, fragment, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err


def test_a_closed_output_ends_quietly_with_the_status_of_sigpipe():
    import os

    read, write = os.pipe()
    os.close(read)  # as `evalcert f1 ... --json | head -0`: nobody reads the output
    try:
        done = subprocess.run([sys.executable, "-m", "studies.cli", "f1", "--tp", "5", "--fp",
                               "2", "--fn", "1", "--tn", "3", "--json"],
                              stdout=write, stderr=subprocess.PIPE, text=True, check=False)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")  # 128 + SIGPIPE, as `cat` would


def test_module_entry_point_exit_status():
    done = subprocess.run([sys.executable, "-m", "studies.cli", "demo", "--fn", "x"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2 and done.stderr.startswith("evalcert: error:")


def test_progress_in_a_log_counts_only_the_cells_of_this_run(monkeypatch):
    import io

    import tqdm.std

    from studies.cli.progress import Progress

    clock = [100.0]
    monkeypatch.setattr(tqdm.std, "time", lambda: clock[0])
    stream = io.StringIO()  # not a terminal: plain lines
    progress = Progress(stream, refresh=None)
    progress(236, 504)  # a resumed run: 236 cells were finished before it started
    clock[0] = 110.0
    progress(286, 504)  # 50 cells in 10 s: 218 left take 43.6 s
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and "\r" not in stream.getvalue()
    assert lines[0] == " 47% 236/504 cells, elapsed 00:00, ?cell/s, left ?"
    assert lines[1] == " 57% 286/504 cells, elapsed 00:10,  5.00cell/s, left 00:43"
    clock[0] = 150.0  # within the same tenth, but 40 s since the last line
    progress(287, 504)
    clock[0] = 151.0
    progress(288, 504)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3 and lines[2].startswith(" 57% 287/504 cells, elapsed 00:50")


def test_progress_on_a_terminal_is_a_bar():
    import io

    from studies.cli.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    progress = Progress(stream)
    for done in range(0, 11):
        progress(done, 10)
    assert "\r" in stream.getvalue() and "10/10" in stream.getvalue()


def test_a_request_larger_than_memory_is_one_line_with_exit_status_2(monkeypatch, capsys):
    import studies.cli.f1 as command

    def exhausted(*args, **kwargs):
        raise MemoryError("Unable to allocate 74.5 GiB for an array with shape (10000000000,)")

    monkeypatch.setattr(command, "f1_ci", exhausted)
    assert main(["f1", "--tp", "60", "--fp", "20", "--fn", "25", "--tn", "395", "--method",
                 "bootstrap", "--draws", "10000000"]) == 2  # the most --draws allows
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "needs more memory than this machine has (Unable to allocate 74.5 GiB" in err
