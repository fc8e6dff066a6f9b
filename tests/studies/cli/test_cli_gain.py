"""`evalcert gain`: output against `estimators.gain`, Klubička et al. (2018), one-line errors."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from estimators.gain import gain_table
from studies.cli.main import main

ROOT = Path(__file__).resolve().parents[3]

# Klubička et al. (2018), section 4: 2,091 candidates, 414 VNICs, $0.04 per candidate.
N_PAIRS, N_VNICS, COST = 2091, 414, 0.04
# Positives per decile of the three models, as in tests/estimators/test_gain.py (Situations 1-3).
DECILE_POSITIVES = {
    "M1": [205, 209, 0, 0, 0, 0, 0, 0, 0, 0],
    "M2": [207, 203, 0, 4, 0, 0, 0, 0, 0, 0],
    "M3": [190, 204, 8, 4, 8, 0, 0, 0, 0, 0],
}


@pytest.fixture
def csv_file(tmp_path):
    """Write a CSV file (text, or scores and labels as columns) and return its path."""
    def write(text: str | None = None, *, scores=None, labels=None, name: str = "scores.csv",
              encoding: str = "utf-8") -> str:
        if text is None:
            text = "id,label,score\n" + "".join(
                f"item{i},{int(y)},{float(s)!r}\n"
                for i, (s, y) in enumerate(zip(scores, labels, strict=True)))
        path = tmp_path / name
        path.write_bytes(text.encode(encoding))
        return str(path)
    return write


def run_json(capsys, argv):
    assert main(["gain", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out,
                      parse_constant=lambda c: pytest.fail(f"invalid JSON constant {c}"))


def paper_list(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Scores (descending) and labels whose deciles hold ``DECILE_POSITIVES[name]``."""
    edges = [i * N_PAIRS // 10 for i in range(11)]
    labels: list[int] = []
    for i, positives in enumerate(DECILE_POSITIVES[name]):
        labels += [1] * positives + [0] * (edges[i + 1] - edges[i] - positives)
    return -np.arange(N_PAIRS, dtype=float), np.array(labels)


def null(value: float) -> float | None:
    return None if math.isnan(value) else value


# ---------------------------------------------------------------------------------------
# Output against the estimator
# ---------------------------------------------------------------------------------------


def test_json_table_equals_gain_table(capsys, csv_file):
    rng = np.random.default_rng(7)
    scores = rng.integers(0, 12, size=53) / 4  # many ties
    labels = rng.integers(0, 2, size=53)
    summary = run_json(capsys, [csv_file(scores=scores, labels=labels), "--bins", "7"])
    table = gain_table(scores, labels, bins=7)
    assert (summary["n_items"], summary["n_positives"], summary["bins"]) == (
        53, int(labels.sum()), 7)
    assert summary["whole_bins"] is False and summary["cost_per_item"] is None
    assert summary["budgets"] == []
    assert [row["bin"] for row in summary["table"]] == list(range(1, 8))
    for key, values in [
        ("top_fraction", table.bin_upper_fraction), ("items", table.items),
        ("positives", table.positives), ("cumulative_positives", table.cumulative_positives),
        ("gain", table.gain), ("cumulative_gain", table.cumulative_gain),
        ("lift", table.lift), ("cumulative_lift", table.cumulative_lift),
    ]:
        assert [row[key] for row in summary["table"]] == values.tolist(), key
    assert [row["share"] for row in summary["shares"]] == [0.5, 0.8, 0.9, 1.0]
    for row in summary["shares"]:
        fraction = table.fraction_to_reach(row["share"])
        assert row["fraction"] == fraction
        assert row["items"] == pytest.approx(fraction * 53, rel=1e-12)
        assert row["cost"] is None


@pytest.mark.parametrize("whole_bins", [False, True])
def test_json_budgets_and_shares_equal_the_api(capsys, csv_file, whole_bins):
    rng = np.random.default_rng(11)
    scores = rng.normal(size=40).round(1)
    labels = rng.integers(0, 2, size=40)
    options = ["--bins", "4", "--cost-per-item", "0.25", "--budget", "0", "--budget", "3.3",
               "--budget", "100", "--share", "0.3", "--share", "1"]
    if whole_bins:
        options.append("--whole-bins")
    summary = run_json(capsys, [csv_file(scores=scores, labels=labels), *options])
    table = gain_table(scores, labels, bins=4)
    assert summary["whole_bins"] is whole_bins
    assert summary["cost_per_item"] == 0.25
    assert summary["cost_per_bin"] == table.cost_per_bin(cost_per_item=0.25)
    assert [row["budget"] for row in summary["budgets"]] == [0.0, 3.3, 100.0]
    for row in summary["budgets"]:
        bought = table.budget_yield(row["budget"], cost_per_item=0.25, whole_bins=whole_bins)
        assert row == {"budget": row["budget"], "items": bought.items,
                       "fraction": bought.fraction, "cost": bought.cost,
                       "positives": bought.positives, "gain": bought.gain}
    assert [row["share"] for row in summary["shares"]] == [0.3, 1.0]
    for row in summary["shares"]:
        fraction = table.fraction_to_reach(row["share"], whole_bins=whole_bins)
        assert row["fraction"] == fraction
        assert row["items"] == pytest.approx(fraction * 40, rel=1e-12)
        assert row["cost"] == table.cost_to_reach(row["share"], cost_per_item=0.25,
                                                  whole_bins=whole_bins)


def test_text_table_shows_every_bin(capsys, csv_file):
    scores = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0]
    labels = [1, 1, 0, 1, 0, 0, 1, 0, 0, 0]
    path = csv_file(scores=scores, labels=labels)
    assert main(["gain", path, "--bins", "5", "--cost-per-item", "0.1", "--budget", "0.5"]) == 0
    out = capsys.readouterr().out
    assert f"evalcert gain: {path}" in out
    assert "N = 10 items, P = 4 positives, 5 bins" in out
    table = gain_table(scores, labels, bins=5)
    for i in range(5):
        cells = [f"{table.bin_upper_fraction[i]:.4f}", str(table.items[i]),
                 str(int(table.positives[i])), f"{table.gain[i]:.4f}",
                 f"{table.cumulative_gain[i]:.4f}", f"{table.lift[i]:.4f}",
                 f"{table.cumulative_lift[i]:.4f}"]
        assert [str(i + 1), *cells] in [line.split() for line in out.splitlines()]
    assert "expectation over a random order" in out
    # $0.5 at $0.1 buys 5 items holding 3 positives (the estimator's doctest).
    assert ["0.5000", "5", "0.5000", "0.5000", "3", "0.7500"] in [
        line.split() for line in out.splitlines()]
    assert "nan" not in out


def test_no_positives_gives_undefined_and_a_note(capsys, csv_file):
    path = csv_file("score,label\n3,0\n2,false\n1,FALSE\n0,0.0\n")
    assert main(["gain", path, "--bins", "2"]) == 0
    out = capsys.readouterr().out
    assert "P = 0 positives" in out and "no positives" in out
    assert out.splitlines()[4].split() == ["1", "0.5000", "2", "0", "undefined",
                                           "undefined", "undefined", "undefined"]
    summary = run_json(capsys, [path, "--bins", "2", "--cost-per-item", "1", "--budget", "2"])
    assert all(row[key] is None for row in summary["table"]
               for key in ("gain", "cumulative_gain", "lift", "cumulative_lift"))
    assert summary["budgets"] == [{"budget": 2.0, "items": 2, "fraction": 0.5, "cost": 2.0,
                                   "positives": 0.0, "gain": None}]
    assert all(row["fraction"] is None and row["cost"] is None for row in summary["shares"])


def test_columns_in_any_order_with_extras_bom_and_boolean_labels(capsys, csv_file):
    text = ('\ufeffnote, label ,id,score\n"two\nlines",True,a,0.9\n,false,b,0.5\n\n'
            "x,1,c,1e-3\n")
    summary = run_json(capsys, [csv_file(text), "--bins", "3"])
    table = gain_table([0.9, 0.5, 1e-3], [1, 0, 1], bins=3)
    assert [row["positives"] for row in summary["table"]] == table.positives.tolist()
    assert summary["n_items"] == 3 and summary["n_positives"] == 2


# ---------------------------------------------------------------------------------------
# Klubička et al. (2018), section 4 and 4.1
# ---------------------------------------------------------------------------------------


def test_paper_ideal_list_costs_and_sixteen_dollars(capsys, csv_file):
    # All 414 VNICs ranked first: $16.56 to find them all, $16.728 (two deciles) when paying by
    # the decile; $16 buys 400 candidates, or one decile (209 candidates, $8.364) by the decile.
    path = csv_file(scores=-np.arange(N_PAIRS, dtype=float),
                    labels=np.arange(N_PAIRS) < N_VNICS)
    items = run_json(capsys, [path, "--cost-per-item", "0.04", "--budget", "16", "--share", "1"])
    assert (items["n_items"], items["n_positives"], items["bins"]) == (N_PAIRS, N_VNICS, 10)
    assert round(items["shares"][0]["cost"], 2) == 16.56
    assert items["shares"][0]["items"] == pytest.approx(414)
    assert items["shares"][0]["fraction"] == N_VNICS / N_PAIRS
    assert items["budgets"][0]["items"] == 400 and items["budgets"][0]["positives"] == 400
    assert items["cost_per_bin"] == pytest.approx(8.364, abs=1e-12)

    deciles = run_json(capsys, [path, "--cost-per-item", "0.04", "--budget", "16",
                                "--share", "1", "--whole-bins"])
    assert round(deciles["shares"][0]["cost"], 3) == 16.728
    assert deciles["shares"][0]["fraction"] == pytest.approx(0.2)
    bought = deciles["budgets"][0]
    assert (bought["items"], bought["fraction"], bought["positives"]) == (209, 0.1, 209.0)
    assert bought["cost"] == pytest.approx(8.364)


@pytest.mark.parametrize(("name", "fraction", "printed", "two_deciles"),
                         [("M1", 0.2, 16.73, 414), ("M2", 0.4, 33.46, 410),
                          ("M3", 0.5, 41.82, 394)])
def test_paper_table5_and_situation1(capsys, csv_file, name, fraction, printed, two_deciles):
    scores, labels = paper_list(name)
    path = csv_file(scores=scores, labels=labels)
    summary = run_json(capsys, [path, "--cost-per-item", "0.04", "--whole-bins",
                                "--share", "1", "--budget", "16.728"])
    assert [row["positives"] for row in summary["table"]] == [
        float(p) for p in DECILE_POSITIVES[name]]
    assert summary["shares"][0]["fraction"] == pytest.approx(fraction, abs=1e-12)
    assert round(summary["shares"][0]["cost"], 2) == printed  # Table 5
    assert summary["budgets"][0]["positives"] == two_deciles  # two deciles, Situation 1
    assert summary["table"][1]["cumulative_positives"] == two_deciles


# ---------------------------------------------------------------------------------------
# Ties
# ---------------------------------------------------------------------------------------


def test_tie_straddling_the_median_splits_its_positive(capsys, csv_file):
    # Ranks 2-3 tie and one of them is positive: the first half holds 1.5 positives on average.
    path = csv_file(scores=[0.9, 0.5, 0.5, 0.1], labels=[1, 0, 1, 0])
    summary = run_json(capsys, [path, "--bins", "2", "--share", "1"])
    assert [row["positives"] for row in summary["table"]] == [1.5, 0.5]
    assert [row["cumulative_gain"] for row in summary["table"]] == [0.75, 1.0]
    assert summary["tied_items"] == 2
    assert summary["shares"][0]["items"] == pytest.approx(2.5)
    reversed_path = csv_file(scores=[0.1, 0.5, 0.5, 0.9], labels=[0, 1, 0, 1], name="rev.csv")
    assert run_json(capsys, [reversed_path, "--bins", "2", "--share", "1"])["table"] == (
        summary["table"])
    assert main(["gain", path, "--bins", "2"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[4].split()[3] == "1.5000"
    assert "ties: 2 of 4 items share a score" in out


# ---------------------------------------------------------------------------------------
# Errors: one line on stderr, exit status 2
# ---------------------------------------------------------------------------------------

HEADER = "score,label\n"


def assert_one_line_error(capsys, fragment: str, start: str = "evalcert: error: ") -> None:
    err = capsys.readouterr().err
    assert err.startswith(start), err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert fragment in err, err


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty file; the header must name the columns score and label"),
        ("\n\n", "empty file"),
        (HEADER, "no items after the header"),
        ("score,value\n1,1\n", "line 1: missing column 'label'"),
        ("label\n1\n", "line 1: missing column 'score'"),
        ("score,label,score\n1,1,2\n", "line 1: column 'score' appears twice"),
        (HEADER + "0.5,1\n0.2,0,extra\n", "line 3: expected 2 fields as in the header; got 3"),
        (HEADER + "0.5,1\nhigh,0\n",
         "line 3, column 'score': the score must be a finite number; got 'high'"),
        (HEADER + "0.5,1\n\n0.4,1\nnan,0\n", "line 5, column 'score'"),
        (HEADER + "inf,1\n", "line 2, column 'score': the score must be a finite number"),
        (HEADER + ",1\n", "line 2, column 'score': the score must be a finite number; got ''"),
        (HEADER + "0.5,1\n0.4,2\n",
         "line 3, column 'label': the label must be 0 or 1 (or true/false); got '2'"),
        (HEADER + "0.5,yes\n", "line 2, column 'label'"),
        (HEADER + "0.5,0.5\n", "line 2, column 'label'"),
        (HEADER + "0.5\n", "line 2, column 'label': the label must be 0 or 1 (or true/false); "
                           "got ''"),
        ('text,score,label\n"a\nb",1,1\nc,2,-1\n', "line 4, column 'label'"),
        # a quoted empty field is a record, not a blank line
        (HEADER + '1,1\n""\n2,1\n', "line 3, column 'score': the score must be a finite"),
    ],
)
def test_csv_errors_are_one_line(capsys, csv_file, text, fragment):
    path = csv_file(text)
    assert main(["gain", path, "--bins", "1"]) == 2
    assert_one_line_error(capsys, fragment, start=f"evalcert: error: {path}")


def test_bins_beyond_the_number_of_items(capsys, csv_file):
    path = csv_file(HEADER + "0.5,1\n0.2,0\n0.1,0\n")
    assert main(["gain", path, "--bins", "4"]) == 2
    assert_one_line_error(
        capsys, f"--bins must be at most the number of items in {path} (3); got 4")


def test_a_file_shorter_than_the_default_bins_gets_one_bin_per_item(capsys, csv_file):
    path = csv_file(HEADER + "0.5,1\n0.2,0\n0.1,0\n")
    summary = run_json(capsys, [path])
    assert summary["bins"] == 3 and [row["items"] for row in summary["table"]] == [1, 1, 1]
    assert summary["notes"] == ["the file holds 3 items, fewer than the default 10 bins: "
                                "one bin per item (--bins sets the number)"]
    assert main(["gain", path]) == 0
    assert "note: the file holds 3 items, fewer than the default 10 bins" in (
        capsys.readouterr().out)
    assert run_json(capsys, [csv_file(HEADER + "0.5,1\n" * 10)])["notes"] == []


def test_whole_counts_print_as_integers_and_shared_ones_with_decimals(capsys, csv_file):
    # 64 positives, the 32nd at rank 109: half of them take 0.545 of the list, 109 items,
    # which the product 0.545 * 200 gives as 109.00000000000001. Ranks 180-183 are tied,
    # across the edge of bins 9 and 10, and share their two positives between them.
    labels = np.zeros(200, dtype=int)
    labels[:31] = labels[108] = labels[149:180] = labels[181] = 1
    scores = np.arange(200, 0, -1, dtype=float)
    scores[179:183] = 20.5
    path = csv_file(scores=scores, labels=labels)
    table = gain_table(scores, labels, bins=10)
    assert table.fraction_to_reach(0.5) * 200 != 109  # the product's rounding error
    shares = ["--share", "0.5", "--share", "1"]
    summary = run_json(capsys, [path, *shares])
    assert [row["items"] for row in summary["shares"]] == [
        109.0, pytest.approx(table.fraction_to_reach(1.0) * 200)]
    assert main(["gain", path, *shares]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    bins = [row for row in rows if len(row) == 8 and row[0].isdigit()]
    assert [row[3] for row in bins] == ["20", "11", "0", "0", "0", "1", "0", "11", "19.5000",
                                        "1.5000"]
    assert rows[-2] == ["0.5000", "0.5450", "109"]
    assert rows[-1] == ["1.0000", "0.9117", "182.3333"]


def test_unreadable_files(capsys, csv_file, tmp_path):
    missing = str(tmp_path / "missing.csv")
    assert main(["gain", missing]) == 2
    assert capsys.readouterr().err == (f"evalcert: error: cannot read {missing}: "
                                       "No such file or directory\n")
    assert main(["gain", str(tmp_path)]) == 2
    assert_one_line_error(capsys, f"cannot read {tmp_path}")
    binary = tmp_path / "image.csv"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    assert main(["gain", str(binary)]) == 2
    assert_one_line_error(capsys, f"{binary}: not UTF-8 text")
    latin = csv_file("score,label,note\n0.5,1,caf\u00e9\n", encoding="latin-1")
    assert main(["gain", latin, "--bins", "1"]) == 2
    assert_one_line_error(capsys, f"{latin}: not UTF-8 text")


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        (["--budget", "16"], "--budget needs --cost-per-item"),
        (["--bins", "0"], "argument --bins: must be a positive integer"),
        (["--bins", "2.5"], "argument --bins: must be a positive integer"),
        (["--cost-per-item", "0"], "argument --cost-per-item: must be a positive number"),
        (["--cost-per-item", "nan"], "argument --cost-per-item: must be a finite number"),
        (["--cost-per-item", "1", "--budget", "-1"],
         "argument --budget: must be a non-negative number"),
        (["--cost-per-item", "1", "--budget", "lots"], "argument --budget: must be a number"),
        (["--share", "0"], "argument --share: must be in (0, 1]"),
        (["--share", "1.5"], "argument --share: must be in (0, 1]"),
        (["--share", "half"], "argument --share: must be a number in (0, 1]"),
        (["--whole-bins=yes"], "ignored explicit argument"),
    ],
)
def test_option_errors_are_one_line(capsys, csv_file, options, fragment):
    path = csv_file(HEADER + "0.5,1\n0.2,0\n")
    assert main(["gain", path, "--bins", "2", *options]) == 2
    assert_one_line_error(capsys, fragment)


def test_module_entry_point_prints_no_traceback(csv_file):
    path = csv_file(HEADER + "0.5,1\n0.2,maybe\n")
    done = subprocess.run([sys.executable, "-m", "studies.cli", "gain", path],
                          capture_output=True, text=True, check=False, cwd=ROOT)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr == (f"evalcert: error: {path}, line 3, column 'label': the label must "
                           "be 0 or 1 (or true/false); got 'maybe'\n")


def test_help_mentions_every_option_and_the_default_bins(capsys):
    with pytest.raises(SystemExit) as done:
        main(["gain", "--help"])
    assert done.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    for option in ("SCORES.csv", "--bins K", "--cost-per-item C", "--budget B", "--share S",
                   "--whole-bins", "--json"):
        assert option in out
    assert "(default: 10, deciles, or one bin per item in a file of fewer than 10 items)" in out
    assert "default: 0.5, 0.8, 0.9, 1" in out
    assert "Klubička et al. 2018" in out


def test_listed_in_the_evalcert_commands(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "gain" in capsys.readouterr().out
