"""`studies.summarise` and `evalcert summarise`: anyone's simulation results measured and judged.

Every measure and MCSE is checked against a computation written here in pandas from the
formulas of Morris, White & Crowther (2019, Table 6) and rsimsum's, on a frame made here with a
known truth, missing values, two ``by`` variables and two methods; the traps of a frame made
elsewhere (a misnamed column, missing values, cells pooled for want of a ``by`` column, no
method column) each raise a clear error or are counted and shown.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import studies
from studies.cli.main import main
from studies.engine import FAILS, HOLDS, Claim
from studies.engine.summary import SUMMARY_MEASURES, claims_from_toml, summarise

TRUE = 0.5
Z = stats.norm.ppf(0.975)


def results_frame(seed: int = 7, replicates: int = 300, bias: float = 0.0) -> pd.DataFrame:
    """Two methods in 2 x 2 cells (n, dgm): ``a`` unbiased with a right SE, ``b`` noisier
    and under-reporting its SE; a few missing estimates and SEs; the truth as a column."""
    rng = np.random.default_rng(seed)
    parts = []
    for n in (20, 80):
        for dgm in ("normal", "skewed"):
            noise = rng.standard_normal(replicates) if dgm == "normal" else \
                (rng.exponential(1.0, replicates) - 1.0)
            other = 0.6 * noise + 0.8 * rng.standard_normal(replicates)
            for method, errors, factor in (("a", noise, 1.0), ("b", 1.3 * other, 0.9)):
                se = 1 / math.sqrt(n) * factor * np.exp(rng.normal(0, 0.05, replicates))
                parts.append(pd.DataFrame({
                    "n": n, "dgm": dgm, "rep": np.arange(replicates), "method": method,
                    "b": TRUE + bias + errors / math.sqrt(n), "se": se, "theta": TRUE}))
    frame = pd.concat(parts, ignore_index=True)
    rows = len(frame)
    frame.loc[[3, rows // 3], "b"] = np.nan
    frame.loc[[1, 2, 2 * rows // 3], "se"] = np.nan
    return frame


def hand(frame: pd.DataFrame, *, table6: bool = False) -> pd.DataFrame:
    """Every measure and MCSE per (n, dgm, method), in pandas from the printed formulas."""
    rows = []
    for (n, dgm, method), g in frame.groupby(["n", "dgm", "method"]):
        used = g.dropna(subset=["b", "se"])
        t, s, r = used["b"], used["se"], len(used)
        theta = used["theta"].iloc[0]
        sd = t.std(ddof=1)
        centred = t - t.mean()
        kurt = (centred**4).mean() / (centred**2).mean() ** 2
        low, high = t - Z * s, t + Z * s
        cover = ((low <= theta) & (theta <= high)).mean()
        be = ((low <= t.mean()) & (t.mean() <= high)).mean()
        reject = ((t - 0.0).abs() > Z * s).mean()
        modse = math.sqrt((s**2).mean())
        sd_se = sd / math.sqrt(2 * (r - 1)) if table6 else sd * math.sqrt((kurt - 1) / (4 * r))
        mod_mcse = math.sqrt((s**2).var(ddof=1) / (4 * r)) / modse
        if table6:
            def share(c: float, r: int = r) -> float:
                return math.sqrt(c * (1 - c) / r)
        else:
            def share(c: float, r: int = r) -> float:
                return math.sqrt(c * (1 - c) / r + 1 / (4 * r * r)) / (1 + 1 / r)
        values = {
            "nsim": (r, 0.0),
            "mean_estimate": (t.mean(), sd / math.sqrt(r)),
            "median_estimate": (t.median(), None),
            "mean_se2": ((s**2).mean(), (s**2).std(ddof=1) / math.sqrt(r)),
            "median_se2": ((s**2).median(), None),
            "bias": (t.mean() - theta, sd / math.sqrt(r)),
            "relative_bias": ((t.mean() - theta) / theta, sd / math.sqrt(r) / theta),
            "empirical_se": (sd, sd_se),
            "mse": (((t - theta) ** 2).mean(), ((t - theta) ** 2).std(ddof=1) / math.sqrt(r)),
            "model_se": (modse, mod_mcse),
            "model_se_error": (modse / sd - 1, modse / sd * math.sqrt(
                mod_mcse**2 / modse**2 + (sd_se / sd) ** 2)),
            "coverage": (cover, share(cover)),
            "be_coverage": (be, share(be)),
            "width": ((high - low).mean(), (high - low).std(ddof=1) / math.sqrt(r)),
            "rejection": (reject, share(reject)),
        }
        rows += [{"n": n, "dgm": dgm, "method": method, "measure": k, "value": v, "mcse": e,
                  "n_used": r, "n_missing": len(g) - r} for k, (v, e) in values.items()]
    return pd.DataFrame(rows)


def _merged(got: pd.DataFrame, want: pd.DataFrame) -> pd.DataFrame:
    keys = ["n", "dgm", "method", "measure"]
    both = got.merge(want, on=keys, suffixes=("", "_hand"), how="outer", indicator=True)
    assert (both["_merge"] == "both").all(), both[both["_merge"] != "both"][keys]
    return both


@pytest.mark.parametrize("mcse", ["robust", "table6"])
def test_every_measure_and_mcse_agrees_with_a_hand_computation(mcse):
    frame = results_frame()
    got = summarise(frame, estimate="b", se="se", true="theta", method="method",
                    by=["n", "dgm"], replicate="rep", mcse=mcse).frame
    both = _merged(got[got["measure"] != "relative_precision"],
                   hand(frame, table6=mcse == "table6"))
    assert np.allclose(both["value"], both["value_hand"], rtol=1e-12, atol=1e-15)
    assert (both["n_used"] == both["n_used_hand"]).all()
    assert (both["n_missing"] == both["n_missing_hand"]).all()
    checked = both["mcse_hand"].notna()
    assert np.allclose(both.loc[checked, "mcse"], both.loc[checked, "mcse_hand"].astype(float),
                       rtol=1e-10, atol=1e-15)
    assert set(got["measure"]) == set(SUMMARY_MEASURES) - {"relative_precision"}


def test_the_two_mcse_formulas_differ_where_the_docs_say():
    frame = results_frame()
    kw = {"estimate": "b", "se": "se", "true": TRUE, "method": "method", "by": ["n", "dgm"]}
    robust = summarise(frame, **kw).frame
    table6 = summarise(frame, mcse="table6", **kw).frame
    same = np.isclose(robust["mcse"], table6["mcse"], rtol=1e-12)
    differ = set(robust.loc[~same, "measure"])
    assert differ == {"empirical_se", "model_se_error", "coverage", "be_coverage", "rejection"}
    # skewed estimates: the kurtosis MCSE is the larger, by more than the divisor's R / (R - 1)
    rows = (robust["measure"] == "empirical_se") & (robust["dgm"] == "skewed") \
        & (robust["method"] == "a")  # exponential errors: kurtosis 9
    assert (robust.loc[rows, "mcse"] > 1.2 * table6.loc[rows, "mcse"]).all()


def test_medians_have_distribution_free_mcses():
    """The median's MCSE is the order-statistic interval's half-width over 1.96: for normal
    estimates near the asymptotic sqrt(pi / 2) S / sqrt(R)."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"b": rng.standard_normal(20_000)})
    got = summarise(frame, estimate="b", true=0.0).frame.set_index("measure")
    expected = math.sqrt(math.pi / 2) / math.sqrt(20_000)
    assert got.loc["median_estimate", "mcse"] == pytest.approx(expected, rel=0.1)


def test_relative_precision_against_a_reference_agrees_with_table_6():
    frame = results_frame()
    got = summarise(frame, estimate="b", se="se", true=TRUE, method="method", by=["n", "dgm"],
                    replicate="rep", reference="a").frame
    precision = got[got["measure"] == "relative_precision"]
    assert set(precision["method"]) == {"b"} and len(precision) == 4
    for row in precision.itertuples():
        cell = frame[(frame["n"] == row.n) & (frame["dgm"] == row.dgm)]
        usable = cell.dropna(subset=["b", "se"])
        wide = usable.pivot(index="rep", columns="method", values="b").dropna()
        sd_a, sd_b = wide["a"].std(ddof=1), wide["b"].std(ddof=1)
        rho = wide["a"].corr(wide["b"])
        ratio = (sd_a / sd_b) ** 2
        assert row.value == pytest.approx(ratio - 1, rel=1e-12)
        assert row.mcse == pytest.approx(
            2 * ratio * math.sqrt((1 - rho**2) / (len(wide) - 1)), rel=1e-10)
    # paired by order within the cell when no replicate column is given: the same here
    by_order = summarise(frame, estimate="b", se="se", true=TRUE, method="method",
                         by=["n", "dgm"], reference="a").frame
    assert np.allclose(by_order[by_order["measure"] == "relative_precision"]["value"],
                       precision["value"])


def test_relative_precision_without_replicates_needs_equal_rows():
    frame = results_frame().drop(index=[0])
    with pytest.raises(ValueError, match=r"`replicate` must be given to pair methods"):
        summarise(frame, estimate="b", true=TRUE, method="method", by=["n", "dgm"],
                  reference="a")


def test_t_intervals_with_df_as_a_number_and_as_a_column():
    frame = results_frame().dropna()
    got = summarise(frame, estimate="b", se="se", true=TRUE, method="method",
                    by=["n", "dgm"], df=5).frame
    frame = frame.assign(df=5.0)
    column = summarise(frame, estimate="b", se="se", true=TRUE, method="method",
                       by=["n", "dgm"], df="df").frame
    assert np.allclose(got["value"], column["value"])
    c = stats.t.ppf(0.975, 5)
    cell = frame[(frame["n"] == 20) & (frame["dgm"] == "normal") & (frame["method"] == "b")]
    width = (2 * c * cell["se"]).mean()
    row = got[(got["n"] == 20) & (got["dgm"] == "normal") & (got["method"] == "b")
              & (got["measure"] == "width")]
    assert row["value"].iloc[0] == pytest.approx(width, rel=1e-12)


def test_given_interval_bounds_and_rejections_are_used_as_they_are():
    frame = results_frame().dropna()
    frame = frame.assign(lo=frame["b"] - 0.1, hi=frame["b"] + 0.1, rej=(frame["b"] > 0.6))
    got = summarise(frame, estimate="b", true=TRUE, method="method", by=["n", "dgm"],
                    low="lo", high="hi", reject="rej").frame
    for (n, dgm, method), g in frame.groupby(["n", "dgm", "method"]):
        row = got[(got["n"] == n) & (got["dgm"] == dgm) & (got["method"] == method)] \
            .set_index("measure")
        assert row.loc["coverage", "value"] == pytest.approx(
            ((g["lo"] <= TRUE) & (TRUE <= g["hi"])).mean())
        assert row.loc["width", "value"] == pytest.approx(0.2)
        assert row.loc["rejection", "value"] == pytest.approx(g["rej"].mean())


# --- the four traps ----------------------------------------------------------------------------

def test_a_misnamed_column_is_an_error_naming_it_and_the_columns_present():
    frame = results_frame()
    with pytest.raises(ValueError, match=r"`se` must name a column of the frame \(n, dgm, rep, "
                                         r"method, b, se, theta\); got 'stderr'"):
        summarise(frame, estimate="b", se="stderr", true=TRUE, method="method")
    with pytest.raises(ValueError, match=r"`by\[1\]` must name a column"):
        summarise(frame, estimate="b", true=TRUE, method="method", by=["n", "DGM"])


def test_missing_values_are_left_out_counted_and_can_be_refused():
    frame = results_frame()
    summary = summarise(frame, estimate="b", se="se", true=TRUE, method="method",
                        by=["n", "dgm"])
    counts = summary.missing
    assert counts["n_missing"].sum() == 5  # 2 estimates and 3 SEs, each in a different row
    # coverage over the complete rows only: not the 0.92-style undercount of NaN as a miss
    kept = frame.dropna(subset=["b", "se"])
    cell = kept[(kept["n"] == 20) & (kept["dgm"] == "normal") & (kept["method"] == "a")]
    cover = ((cell["b"] - Z * cell["se"] <= TRUE) & (TRUE <= cell["b"] + Z * cell["se"])).mean()
    row = summary.frame[(summary.frame["n"] == 20) & (summary.frame["dgm"] == "normal")
                        & (summary.frame["method"] == "a")
                        & (summary.frame["measure"] == "coverage")]
    assert row["value"].iloc[0] == pytest.approx(cover)
    assert (summary.frame.groupby(["n", "dgm", "method"])["n_used"].nunique() == 1).all()
    model = summary.frame[summary.frame["measure"] == "model_se"]
    assert model["value"].notna().all() and (model["mcse"] > 0).all()
    with pytest.raises(ValueError, match=r"must have no missing value with missing='error'"):
        summarise(frame, estimate="b", se="se", true=TRUE, method="method", by=["n", "dgm"],
                  missing="error")


def test_cells_pooled_for_want_of_a_by_column_are_caught_or_reported():
    frame = results_frame()
    with pytest.raises(ValueError, match=r"`replicate` 0 must appear once per cell and method; "
                                         r"got it twice in method 'a' in cell n=20: a column "
                                         r"that tells cells apart may be missing from `by` "
                                         r"\(columns not used: dgm, se, theta\)"):
        summarise(frame, estimate="b", true=TRUE, method="method", by=["n"], replicate="rep")
    pooled = summarise(frame, estimate="b", true=TRUE, method="method", by=["n"])
    assert pooled.unused == ("dgm", "rep", "se", "theta")
    varying = frame.assign(theta=np.where(frame["dgm"] == "normal", 0.5, 0.6))
    notes = summarise(varying, estimate="b", true="theta", method="method", by=["n"]).notes
    assert notes == ("The true value varies within 2 of 2 cells: their measures are of each "
                     "row's error against its own true value (if that is not the design, a "
                     "column that tells cells apart is missing from `by`).",)
    assert summarise(varying, estimate="b", true="theta", method="method",
                     by=["n", "dgm"]).notes == ()


def test_a_true_value_per_row_measures_each_rows_error():
    """rsimsum's truth per row: bias, MSE, empirical SE, relative bias and coverage of the
    errors against each row's own true value, by hand in pandas."""
    rng = np.random.default_rng(11)
    theta = rng.uniform(0.2, 0.8, 600)
    frame = pd.DataFrame({"theta": theta, "b": theta + 0.03 + rng.normal(0, 0.1, 600),
                          "se": 0.1})
    got = summarise(frame, estimate="b", se="se", true="theta").frame.set_index("measure")
    e = frame["b"] - frame["theta"]
    inside = ((frame["b"] - Z * frame["se"] <= frame["theta"])
              & (frame["theta"] <= frame["b"] + Z * frame["se"])).mean()
    expected = {"bias": (e.mean(), e.std() / math.sqrt(600)),
                "mse": ((e**2).mean(), (e**2).std() / math.sqrt(600)),
                "relative_bias": ((e / frame["theta"]).mean(),
                                  (e / frame["theta"]).std() / math.sqrt(600)),
                "coverage": (inside, None)}
    for measure, (value, mcse) in expected.items():
        assert got.loc[measure, "value"] == pytest.approx(value, rel=1e-12)
        if mcse is not None:
            assert got.loc[measure, "mcse"] == pytest.approx(mcse, rel=1e-10)
    assert got.loc["empirical_se", "value"] == pytest.approx(e.std(), rel=1e-12)
    assert got.loc["mean_estimate", "value"] == pytest.approx(frame["b"].mean(), rel=1e-12)
    # with the truth's mean as one true value the bias agrees, the spread does not
    one = summarise(frame, estimate="b", se="se", true=float(theta.mean())).frame \
        .set_index("measure")
    assert one.loc["bias", "value"] == pytest.approx(got.loc["bias", "value"], rel=1e-9)
    assert one.loc["empirical_se", "value"] > 1.5 * got.loc["empirical_se", "value"]


def test_a_frame_without_a_method_column_is_one_method():
    frame = results_frame()
    one = frame[frame["method"] == "a"].drop(columns=["method"])
    summary = summarise(one, estimate="b", se="se", true=TRUE, by=["n", "dgm"])
    assert summary.methods == ("b",)
    with_method = summarise(frame[frame["method"] == "a"], estimate="b", se="se", true=TRUE,
                            method="method", by=["n", "dgm"]).frame
    assert np.allclose(summary.frame["value"], with_method["value"])


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"true": "nan"}, r"`true` must name a column"),
    ({"true": float("nan")}, r"`true` must be a finite number or a column name"),
    ({"level": 1.0}, r"`level` must be strictly between 0 and 1"),
    ({"df": 0}, r"`df` must be a positive number or a column name"),
    ({"missing": "ignore"}, r"`missing` must be one of"),
    ({"mcse": "normal"}, r"`mcse` must be one of"),
    ({"low": "b"}, r"`low` and `high` must be given together"),
    ({"by": ["method"]}, r"`by` must name the columns that make design cells"),
    ({"reference": "c"}, r"`reference` must be one of the methods \['a', 'b'\]"),
    ({"estimate": "method"}, r"`estimate` column 'method' must hold numbers; got 'a'"),
])
def test_bad_arguments_are_clear_errors(kwargs, message):
    args = {"estimate": "b", "true": TRUE, "method": "method", **kwargs}
    with pytest.raises(ValueError, match=message):
        summarise(results_frame(replicates=5), **args)


def test_not_a_frame_is_a_type_error():
    with pytest.raises(TypeError, match=r"`frame` must be a pandas DataFrame; got dict"):
        summarise({"b": [1.0]}, estimate="b", true=0.0)


# --- claims ------------------------------------------------------------------------------------

CLAIMS = (
    Claim("a-unbiased", "Method a is unbiased within 0.02.", ("a",), "bias", "within",
          margin=0.02, resolution=0.05),
    Claim("a-covers", "Method a covers within 3 points of 95%.", ("a",), "coverage", "within",
          0.95, margin=0.03, resolution=0.05),
)


def test_true_claims_hold_with_power_and_a_broken_method_fails_them():
    frame = results_frame(replicates=2000)
    summary = summarise(frame, estimate="b", se="se", true=TRUE, method="method",
                        by=["n", "dgm"], claims=CLAIMS)
    assert [v.status for v in summary.verdicts] == [HOLDS, HOLDS]
    assert all(v.familywise_error == pytest.approx(0.025) for v in summary.verdicts)
    # the same method with a bias of 0.06 and SEs half the truth: both claims fail
    broken = results_frame(replicates=2000, bias=0.06)
    broken["se"] /= 2
    verdicts = summarise(broken, estimate="b", se="se", true=TRUE, method="method",
                         by=["n", "dgm"], claims=CLAIMS).verdicts
    assert [v.status for v in verdicts] == [FAILS, FAILS]


def test_claims_name_the_summarys_methods_and_columns():
    frame = results_frame(replicates=5)
    bad = Claim("x", "x", ("c",), "bias", "within", margin=0.1, resolution=0.1)
    with pytest.raises(ValueError, match=r"the methods of claim 'x' must be among the `method` "
                                         r"column's values \['a', 'b'\]; got 'c'"):
        summarise(frame, estimate="b", true=TRUE, method="method", claims=[bad])
    over = Claim("y", "y", ("a",), "bias", "within", margin=0.1, resolution=0.1,
                 mean_over=("dgm",))
    with pytest.raises(ValueError, match=r"`mean_over` of claim 'y' must name `by` columns"):
        summarise(frame, estimate="b", true=TRUE, method="method", by=["n"], claims=[over])


def test_claims_from_toml_and_their_errors(tmp_path):
    path = tmp_path / "claims.toml"
    path.write_text('[[claim]]\nname = "c"\nstatement = "s"\nmethods = ["a"]\n'
                    'measure = "coverage"\ncomparison = "at_least"\ntarget = 0.9\n'
                    'mean_over = ["dgm"]\n')
    (claim,) = claims_from_toml(path)
    assert claim.methods == ("a",) and claim.mean_over == ("dgm",) and claim.target == 0.9
    path.write_text('[[claim]]\nname = "c"\nstatement = "s"\nmethods = ["a"]\n'
                    'measure = "coverage"\ncomparison = "at_least"\ntarget = 0.9\nk = 2\n')
    with pytest.raises(ValueError, match=r"the fields of claim 1 of .* must be among .*; "
                                         r"got 'k'"):
        claims_from_toml(path)
    path.write_text('[[claim]]\nname = "c"\nstatement = "s"\nmethods = "a"\n')
    with pytest.raises(ValueError, match=r"`methods` of claim 1 .* must be of type an array"):
        claims_from_toml(path)
    path.write_text('[[claim]]\nname = "c"\n')
    with pytest.raises(ValueError, match=r"claim 1 of .* must give `statement`"):
        claims_from_toml(path)
    path.write_text("name = 1\n")
    with pytest.raises(ValueError, match=r"must hold \[\[claim\]\] tables and nothing else"):
        claims_from_toml(path)
    path.write_text("[[claim]\n")
    with pytest.raises(ValueError, match=r"`claims` must be valid TOML"):
        claims_from_toml(path)


# --- from the package and the command line -----------------------------------------------------

def test_the_three_line_use_from_the_package():
    frame = results_frame(replicates=20)
    summary = studies.summarise(frame, estimate="b", se="se", true=0.5, method="method",
                                by=["n", "dgm"])
    assert summary.to_frame().columns.tolist() == [
        "n", "dgm", "method", "measure", "value", "mcse", "n_used", "n_missing"]


def test_the_command_agrees_with_the_api_and_writes_an_escaped_page(tmp_path, capsys):
    frame = results_frame(replicates=400)
    frame["method"] = frame["method"].replace({"b": "<b>&"})
    path = tmp_path / "results.csv"
    frame.to_csv(path, index=False)
    (tmp_path / "claims.toml").write_text(
        '[[claim]]\nname = "a-unbiased"\nstatement = "a is unbiased."\nmethods = ["a"]\n'
        'measure = "bias"\ncomparison = "within"\nmargin = 0.02\nresolution = 0.05\n')
    argv = ["summarise", str(path), "--estimate", "b", "--se", "se", "--true", "theta",
            "--method", "method", "--by", "n,dgm", "--replicate", "rep", "--reference", "a",
            "--claims", str(tmp_path / "claims.toml"), "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    api = summarise(pd.read_csv(path), estimate="b", se="se", true="theta", method="method",
                    by=["n", "dgm"], replicate="rep", reference="a").frame
    got = pd.DataFrame(out["rows"])
    assert np.allclose(got["value"], api["value"], rtol=1e-12, equal_nan=True)
    assert out["verdicts"][0]["claim"] == "a-unbiased"
    assert main([*argv[:-1], "--out", str(tmp_path / "page")]) == 0
    text = capsys.readouterr().out
    assert "rows" not in text and "a-unbiased" in text and "page:" in text
    page = (tmp_path / "page" / "summary.html").read_text()
    assert "&lt;b&gt;&amp;" in page and "<b>&" not in page
    csv = pd.read_csv(tmp_path / "page" / "summary.csv")
    assert np.allclose(csv["value"], api["value"], rtol=1e-12, equal_nan=True)
    assert "5 rows left out for a missing value" in page


def test_a_failing_claim_exits_1(tmp_path, capsys):
    frame = results_frame(replicates=1000, bias=0.06)
    path = tmp_path / "results.csv"
    frame.to_csv(path, index=False)
    (tmp_path / "claims.toml").write_text(
        '[[claim]]\nname = "a-unbiased"\nstatement = "a is unbiased."\nmethods = ["a"]\n'
        'measure = "bias"\ncomparison = "within"\nmargin = 0.02\nresolution = 0.05\n')
    status = main(["summarise", str(path), "--estimate", "b", "--true", "0.5", "--method",
                   "method", "--by", "n,dgm", "--claims", str(tmp_path / "claims.toml")])
    assert status == 1
    assert "FAILS        a-unbiased" in capsys.readouterr().out


def test_the_same_input_gives_byte_identical_files(tmp_path):
    from studies.report.summary_page import write_summary

    summary = summarise(results_frame(replicates=200), estimate="b", se="se", true=TRUE,
                        method="method", by=["n", "dgm"], claims=CLAIMS)
    first = write_summary(summary, tmp_path / "1", source="results.csv")
    second = write_summary(summary, tmp_path / "2", source="results.csv")
    for kind in ("html", "md", "csv"):
        with open(first[kind], "rb") as a, open(second[kind], "rb") as b:
            assert a.read() == b.read()
