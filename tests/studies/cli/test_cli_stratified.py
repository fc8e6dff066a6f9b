"""`evalcert stratified`: output against the API, Lewis (1996) Figure 2, one-line CSV errors.

The tests run the command through ``studies.cli.main.main`` with a parser holding only this
command (so the real one-line error handling is used); ``test_wired_into_evalcert`` checks
that the ``evalcert`` parser has it.
"""

from __future__ import annotations

import json
import math

import pytest

from estimators.sampling import STRATIFIED_METHODS, StratifiedEstimate
from studies.cli import main as cli
from studies.cli.args import Parser
from studies.cli.stratified import add_command

# Lewis (1996), Figure 2: the strata of the R3 set (101 is empty) and of the R2 set.
R3_CSV = "stratum,size,sampled,positives\n001,1000,30,1\n011,200,30,10\n101,0,0,0\n111,40,30,23\n"
R2_CSV = "stratum,size,sampled,positives\n010,10,10,2\n011,200,30,10\n110,0,0,0\n111,40,30,23\n"


def local_parser() -> Parser:
    parser = Parser(prog="evalcert")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    add_command(commands)
    return parser


@pytest.fixture
def evalcert(monkeypatch):
    """``studies.cli.main.main`` with only this command registered."""
    monkeypatch.setattr(cli, "build_parser", local_parser)
    return cli.main


@pytest.fixture
def csv_file(tmp_path):
    def write(text: str, name: str = "strata.csv", encoding: str = "utf-8") -> str:
        path = tmp_path / name
        path.write_bytes(text.encode(encoding))
        return str(path)
    return write


def run_json(evalcert, capsys, argv):
    assert evalcert(argv) == 0
    return json.loads(capsys.readouterr().out,
                      parse_constant=lambda c: pytest.fail(f"invalid JSON constant {c}"))


def test_json_reproduces_figure_2_run_3(evalcert, capsys, csv_file):
    summary = run_json(evalcert, capsys,
                       ["stratified", csv_file(R3_CSV), "--gain", "3", "--loss", "-1", "--json"])
    assert round(summary["proportion"]["estimate"], 4) == 0.1054
    assert round(summary["utility"]["estimate"], 3) == -717.333
    assert round(summary["utility"]["mse"], 1) == 21452.5
    wald = summary["intervals"]["wald"]["utility"]
    assert round((wald["high"] - wald["low"]) / 2, 1) == 287.1
    assert (summary["size"], summary["sample_size"]) == (1240, 90)
    assert [row["stratum"] for row in summary["strata"]] == ["001", "011", "101", "111"]
    assert summary["strata"][2]["estimate"] is None  # the empty stratum has no p_h
    assert summary["boundary_strata"] == [] and summary["unestimable_strata"] == []


def test_json_matches_the_api_for_every_method(evalcert, capsys, csv_file):
    summary = run_json(evalcert, capsys, ["stratified", csv_file(R2_CSV), "--gain", "1",
                                          "--loss", "-1", "--confidence-level", "0.9", "--json"])
    est = StratifiedEstimate([10, 200, 0, 40], [10, 30, 0, 30], [2, 10, 0, 23])
    utility = est.utility(u_a=1, u_b=-1)
    assert list(summary["intervals"]) == list(STRATIFIED_METHODS)
    for method, ci in summary["intervals"].items():
        assert tuple(ci["proportion"].values()) == tuple(est.confidence_interval(0.9,
                                                                                 method=method))
        assert tuple(ci["utility"].values()) == tuple(utility.confidence_interval(0.9,
                                                                                  method=method))
    assert summary["proportion"]["variance"] == est.variance
    assert summary["fully_sampled_strata"] == ["010"]
    assert (summary["u_a"], summary["u_b"], summary["confidence_level"]) == (1.0, -1.0, 0.9)


def test_method_option_selects_and_deduplicates(evalcert, capsys, csv_file):
    summary = run_json(evalcert, capsys,
                       ["stratified", csv_file(R2_CSV), "--gain", "1", "--loss", "-1", "--json",
                        "--method", "wald", "--method", "jeffreys", "--method", "wald"])
    assert list(summary["intervals"]) == ["wald", "jeffreys"]


def test_undefined_variance_is_null_in_json_and_reported(evalcert, capsys, csv_file):
    path = csv_file("stratum,size,sampled,positives\nbig,100,30,3\nsmall,50,1,0\n")
    summary = run_json(evalcert, capsys,
                       ["stratified", path, "--gain", "1", "--loss", "-1", "--json"])
    assert summary["unestimable_strata"] == ["small"]
    assert summary["proportion"]["variance"] is None and summary["utility"]["mse"] is None
    assert summary["intervals"]["wald"]["utility"] == {"low": None, "high": None}
    assert summary["intervals"]["jeffreys"]["proportion"]["low"] is not None


def test_an_unsampled_stratum_is_undefined_not_an_error(evalcert, capsys, csv_file):
    """No information about one stratum: every estimate and bound null in JSON, undefined in
    the table, exit 0 (the package's one policy)."""
    path = csv_file("stratum,size,sampled,positives\nbig,100,30,3\nmissed,50,0,0\n")
    summary = run_json(evalcert, capsys,
                       ["stratified", path, "--gain", "1", "--loss", "-1", "--json"])
    assert summary["proportion"]["estimate"] is None and summary["utility"]["estimate"] is None
    assert all(v["proportion"] == {"low": None, "high": None}
               for v in summary["intervals"].values())
    assert evalcert(["stratified", path, "--gain", "1", "--loss", "-1"]) == 0
    out = capsys.readouterr().out
    assert "u (utility)        = undefined" in out and "nan" not in out


def test_table_prints_estimates_intervals_and_notes(evalcert, capsys, csv_file):
    path = csv_file("stratum,size,sampled,positives\nall,10,10,2\nnone,500,30,0\n")
    assert evalcert(["stratified", path, "--gain", "1", "--loss", "-3"]) == 0
    out = capsys.readouterr().out
    est = StratifiedEstimate([10, 500], [10, 30], [2, 0])
    assert f"{est.estimate:.6f}" in out
    assert f"{est.utility(u_a=1, u_b=-3).estimate:.3f}" in out
    for method in STRATIFIED_METHODS:
        assert method in out
    assert "95% two-sided intervals" in out
    assert "judged in full, so known exactly (no sampling error): all" in out
    assert "and wald understates the uncertainty (Lewis 1996, section 9.3): none" in out


def test_table_of_figure_2_run_3(evalcert, capsys, csv_file):
    assert evalcert(["stratified", csv_file(R3_CSV), "--gain", "3", "--loss", "-1",
                     "--method", "wald"]) == 0
    out = capsys.readouterr().out
    assert "N = 1240 documents, n = 90 judged" in out
    assert "0.105376" in out and "-717.333" in out and "MSE 21452.5" in out
    assert "notes:" not in out


def test_header_may_reorder_columns_with_spaces_and_a_bom(evalcert, capsys, csv_file):
    path = csv_file("\ufeffpositives, size ,stratum,sampled\n23,40,111,30\n\n")
    summary = run_json(evalcert, capsys,
                       ["stratified", path, "--gain", "1", "--loss", "-3", "--json"])
    assert summary["strata"] == [{"stratum": "111", "size": 40, "sampled": 30, "positives": 23,
                                  "estimate": 23 / 30}]
    assert round(summary["utility"]["mse"], 1) == 39.5


HEADER = "stratum,size,sampled,positives\n"


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("stratum,size,sampled\n001,10,5,1\n", "line 1: missing column 'positives'"),
        ("stratum,size,sampled,positives,notes\n001,10,5,1,x\n", "unknown column 'notes'"),
        ("stratum,size,size,positives\n001,10,5,1\n", "column 'size' appears twice"),
        ("", "empty file"),
        (HEADER, "no strata after the header"),
        (HEADER + "001,10,5\n", "line 2: expected 4 fields"),
        (HEADER + "001,10,5,1\n011,200,3.5,1\n",
         "line 3 (stratum '011'): `sampled` must be a non-negative integer; got '3.5'"),
        (HEADER + "001,-10,5,1\n", "line 2 (stratum '001'): `size` must be a non-negative"),
        (HEADER + "001,10,5,\n", "line 2 (stratum '001'): `positives` must be a non-negative"),
        (HEADER + "001,10,5,+1\n", "`positives` must be a non-negative integer; got '+1'"),
        (HEADER + ",10,5,1\n", "line 2: `stratum` must not be empty"),
        (HEADER + "001,10,5,1\n001,20,5,1\n", "line 3: stratum '001' repeats line 2"),
        (HEADER + "001,10,11,1\n",
         "`sampled` must not exceed `sizes`; got sampled=11 > size=10 in stratum '001'"),
        (HEADER + "001,10,5,6\n", "`positives` must not exceed `sampled`; got positives=6"),
        (HEADER + "001,10,5,1\n101,0,3,0\n",
         "`sampled` must be 0 in an empty stratum (`sizes` entry 0); got 3 in stratum '101'"),
        (HEADER + '"a\nb",10,x,1\n', "(stratum 'a\\nb'): `sampled` must be a non-negative"),
        (HEADER + '001,"10\n', "malformed CSV"),
    ],
)
def test_csv_errors_are_one_line_with_exit_status_2(evalcert, capsys, csv_file, text, fragment):
    path = csv_file(text)
    assert evalcert(["stratified", path, "--gain", "1", "--loss", "-1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"evalcert: error: {path}")
    assert fragment in err


@pytest.mark.parametrize(
    "options,fragment",
    [
        (["--gain", "1", "--loss", "1"], "--gain must be greater than --loss"),
        (["--gain", "nan", "--loss", "-1"], "argument --gain: must be a finite number"),
        (["--gain", "one", "--loss", "-1"], "argument --gain: must be a number"),
        (["--loss", "-1"], "--loss needs --gain: the utility takes both"),
        (["--gain", "1"], "--gain needs --loss: the utility takes both"),
        (["--gain", "1", "--loss", "-1", "--confidence-level", "1.5"], "strictly between 0 and 1"),
        (["--gain", "1", "--loss", "-1", "--method", "normal"], "invalid choice: 'normal'"),
    ],
)
def test_option_errors_are_one_line_with_exit_status_2(evalcert, capsys, csv_file, options,
                                                       fragment):
    assert evalcert(["stratified", csv_file(R3_CSV), *options]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err


def test_unreadable_files(evalcert, capsys, csv_file, tmp_path):
    missing = str(tmp_path / "missing.csv")
    assert evalcert(["stratified", missing, "--gain", "1", "--loss", "-1"]) == 2
    assert capsys.readouterr().err == (f"evalcert: error: cannot read {missing}: "
                                       "No such file or directory\n")
    latin = csv_file(HEADER + "caf\u00e9,10,5,1\n", encoding="latin-1")
    assert evalcert(["stratified", latin, "--gain", "1", "--loss", "-1"]) == 2
    assert capsys.readouterr().err == f"evalcert: error: {latin}: not UTF-8 text\n"


def test_wired_into_evalcert(capsys, csv_file):
    assert cli.main(["stratified", csv_file(R3_CSV), "--gain", "3", "--loss", "-1",
                     "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert math.isclose(summary["utility"]["mse"], 21452.505747126434, rel_tol=1e-12)


@pytest.mark.parametrize("loss", ["-1e3", "-2.5E-1", "-.5", "-1000"])
def test_negative_values_in_any_notation_are_read_as_values(evalcert, capsys, csv_file, loss):
    found = run_json(evalcert, capsys, ["stratified", csv_file(R3_CSV), "--gain", "3",
                                        "--loss", loss, "--json"])
    assert found["u_b"] == float(loss)


def test_the_share_alone_needs_no_gain_or_loss(evalcert, capsys, csv_file):
    path = csv_file(R3_CSV)
    alone = run_json(evalcert, capsys, ["stratified", path, "--json"])
    both = run_json(evalcert, capsys, ["stratified", path, "--gain", "3", "--loss", "-1",
                                       "--json"])
    assert alone["proportion"] == both["proportion"] and alone["strata"] == both["strata"]
    assert alone["utility"] is None and alone["u_a"] is None and alone["u_b"] is None
    for method, ci in alone["intervals"].items():
        assert ci == {"proportion": both["intervals"][method]["proportion"], "utility": None}
    assert evalcert(["stratified", path]) == 0
    out = capsys.readouterr().out
    assert "u (utility): --gain and --loss give it" in out and "u low" not in out
    assert out.splitlines()[1] == "4 strata, N = 1240 documents, n = 90 judged"
    assert f"p (share relevant) = {alone['proportion']['estimate']:.6f}" in out
