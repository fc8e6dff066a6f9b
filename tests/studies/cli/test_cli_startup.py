"""What the ``evalcert`` command imports: building the parser alone imports nothing slow.

Not a timing test (times depend on the machine; ``benchmarks/bench_startup.py`` measures
them): each command line runs in a fresh interpreter that reports the modules it imported.
The estimators bring in numpy and scipy, the engine, suite and report pandas and matplotlib:
most of a second, which ``evalcert --help`` need not pay, and ``evalcert f1`` needs only the
estimators' part of. The choices the parsers show are copies (`studies.cli.names`), checked
here against their sources.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

import estimators
from studies.cli import names, study
from studies.cli.main import build_parser
from studies.report.compare import FAMILYWISE_ERROR

ROOT = Path(__file__).resolve().parents[3]

# Runs ``main(argv)`` with its output discarded, then prints its exit status and the modules
# imported by then.
PROBE = """
import contextlib, io, json, sys
from studies.cli.main import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        status = main(sys.argv[1:])
    except SystemExit as done:  # --help exits from inside the parser
        status = done.code
print(json.dumps({"status": status, "modules": sorted(sys.modules)}))
"""

# Neither the parser nor any command's --help may import these (each takes a tenth of a
# second or more; scipy.stats and matplotlib about a third).
NOT_FOR_THE_PARSER = ("numpy", "scipy", "scipy.stats", "pandas", "matplotlib", "estimators",
                      "studies.engine", "studies.suite", "studies.report")
# `evalcert f1` needs numpy, scipy.special and scipy.optimize (the mid-p bound), no more.
NOT_FOR_F1 = ("scipy.stats", "scipy.integrate", "scipy.signal", "pandas", "matplotlib",
              "studies.engine", "studies.suite", "studies.report")


def imported(argv: list[str]) -> set[str]:
    """The modules a fresh interpreter has imported after ``evalcert ARGV`` exits 0."""
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=ROOT, capture_output=True,
                          text=True, check=True, timeout=120)
    report = json.loads(done.stdout)
    assert report["status"] == 0, (argv, report["status"])
    return set(report["modules"])


def slow(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    """Which of ``packages`` (or their submodules) are among ``modules``."""
    return [p for p in packages if any(m == p or m.startswith(p + ".") for m in modules)]


def command_lines(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
                  ) -> list[tuple[str, ...]]:
    """Every command and subcommand of ``parser``, as the words that name it."""
    found = [words]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += command_lines(sub, (*words, name))
    return found


def test_building_the_parser_imports_nothing_slow():
    code = ("import json, sys\nfrom studies.cli.main import build_parser\nbuild_parser()\n"
            "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, check=True, timeout=120)
    assert slow(set(json.loads(done.stdout)), NOT_FOR_THE_PARSER) == []


@pytest.mark.parametrize("words", command_lines(build_parser()), ids=" ".join)
def test_the_help_of_every_command_imports_nothing_slow(words):
    assert slow(imported([*words, "--help"]), NOT_FOR_THE_PARSER) == []


def test_f1_imports_only_the_estimators_it_needs():
    modules = imported(["f1", "--tp", "60", "--fp", "20", "--fn", "25", "--tn", "395"])
    assert "estimators.fmeasure" in modules  # it did run
    assert slow(modules, NOT_FOR_F1) == []


def test_the_names_the_parsers_show_equal_their_sources():
    sources = {
        "F1_SRS_METHODS": estimators.F1_METHODS_BY_DESIGN["srs"],
        "F1_STRATIFIED_METHODS": estimators.F1_METHODS_BY_DESIGN["stratified"],
        "RECALL_STRATIFIED_METHODS": estimators.RECALL_METHODS_BY_DESIGN["stratified"],
        "PROPORTION_METHODS": estimators.PROPORTION_METHODS,
        "CERTIFICATION_MEASURES": estimators.CERTIFICATION_MEASURES,
        "CERTIFICATION_DESIGNS": estimators.CERTIFICATION_DESIGNS,
        "LOSCI_METHODS": estimators.LOSCI_METHODS,
        "POSTERIORS": estimators.POSTERIORS,
        "STRATIFIED_METHODS": estimators.STRATIFIED_METHODS,
        "FAMILYWISE_ERROR": FAMILYWISE_ERROR,
    }
    assert sorted(sources) == sorted(names.__all__)  # every copy is checked
    for name, source in sources.items():
        assert getattr(names, name) == source, name


def test_every_study_action_of_the_parser_has_its_function():
    actions = {words[1] for words in command_lines(build_parser())
               if len(words) == 2 and words[0] == "study"}
    assert actions == set(study.ACTIONS)
