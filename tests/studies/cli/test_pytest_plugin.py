"""The pytest plugin: a suite's claims as test items, reported as CI systems read them."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

pytest_plugins = ("pytester",)

# the plugin by its module whether or not the package's entry point registered it
PLUGIN = ("-p", "no:evalcert", "-p", "studies.cli.pytest_plugin", "-p", "no:cacheprovider")

RESTATED = '''
import dataclasses
from studies.engine import Grid
from studies.suite import get_study

_binomial = get_study("binomial_coverage")
_wald = _binomial.claims[1]
STUDY = dataclasses.replace(_binomial, name="restated", claims=(
    _binomial.claims[0],
    dataclasses.replace(_wald, name="wald-fifty-points-short", margin=-0.5),
    dataclasses.replace(_wald, name="wald-on-the-full-grid", grids=("full",)),
))
_mean = get_study("mean_bias")
FEW = dataclasses.replace(_mean, name="few", claims=_mean.claims[1:2], figures=(), grids={
    **_mean.grids, "quick": Grid({"distribution": ["normal"], "n": [20]}, n_replicates=50)})
'''


@pytest.mark.slow
def test_each_claim_is_a_test_item_with_its_verdict(pytester):
    pytester.makepyfile(restated=RESTATED)
    pytester.makepyfile(test_other="def test_other():\n    pass\n")
    result = pytester.runpytest_subprocess(
        *PLUGIN, "--evalcert-grid", "quick", "--evalcert-study", "restated:STUDY",
        "--evalcert-study", "restated:FEW", "--evalcert-seed", "3", "--evalcert-workers", "1",
        "--evalcert-out", str(pytester.path / "run"), "--junitxml", "junit.xml", "-rA")
    # a claim that holds passes; one that fails or cannot decide fails; NOT RUN is skipped
    result.assert_outcomes(passed=1, failed=2, skipped=1, deselected=1)
    result.stdout.fnmatch_lines([
        "*evalcert: claims judged on the quick grid, seed 3*",
        "*FAILS: The Wald interval covers at least 5 points below nominal*",
        "*worst: wald at n=*: coverage * (bound 0.45, MCSE 0) (* values)",
        "*INCONCLUSIVE: cannot detect a deviation of 0.02*",
        "PASSED evalcert::restated::wilson-mean-near-nominal",
        "SKIPPED*NOT RUN: judged on the full grid only*"])
    cases = {case.get("name"): case for case in ET.parse(pytester.path / "junit.xml").iter(
        "testcase")}
    assert set(cases) == {"wilson-mean-near-nominal", "wald-fifty-points-short",
                          "wald-on-the-full-grid", "t-interval-nominal-for-normal-data"}
    assert cases["wald-fifty-points-short"].get("classname") == "evalcert.restated"
    assert cases["wald-fifty-points-short"].find("failure") is not None
    status = {case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
              ["status"] for case in cases.values()}
    assert status == {"wilson-mean-near-nominal": "HOLDS", "wald-fifty-points-short": "FAILS",
                      "wald-on-the-full-grid": "NOT RUN",
                      "t-interval-nominal-for-normal-data": "INCONCLUSIVE"}
    # the run behind the items wrote its store, tables and report
    assert (pytester.path / "run" / "index.html").is_file()
    assert (pytester.path / "run" / "restated.claims.csv").is_file()


def test_without_the_option_the_plugin_leaves_the_session_alone(pytester):
    pytester.makepyfile(test_other="def test_other():\n    pass\n")
    result = pytester.runpytest_subprocess(*PLUGIN)
    result.assert_outcomes(passed=1)
    assert "evalcert: claims judged" not in result.stdout.str()


def test_an_unknown_study_is_a_usage_error(pytester):
    result = pytester.runpytest_subprocess(*PLUGIN, "--evalcert-grid", "quick",
                                           "--evalcert-study", "no_such_study")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--evalcert-study: `study` must be one of *; got "
                                 "'no_such_study'.*"])
