"""Tidy results: ``results_from_store(DIR).to_frame()`` against the tables a run writes.

The quick suite is run once through the command line (every registered study); its frame must
hold every measure of every per-cell CSV, value and MCSE bit for bit, and one row per cell,
method and measure for the packed ``coverage_proportion`` study.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from studies.engine import CellResult, Measure, Performance, StudyResult, results_from_store, run
from studies.report import write_tables
from studies.suite import get_study, study_names


@pytest.fixture(scope="module")
def frame(quick_run):
    return results_from_store(quick_run).to_frame()


def _tidy_from_csv(path):
    """The per-cell CSV melted to one row per (table row, measure), as written."""
    table = pd.read_csv(path, dtype=str, keep_default_na=False)  # "" not reported, "nan"
    measures = [c for c in table.columns if f"{c}_mcse" in table.columns]
    rows = []
    for index, row in table.iterrows():
        for measure in measures:
            if row[measure] != "":
                rows.append({"row": index, "method": row["method"], "measure": measure,
                             "value": float(row[measure]), "mcse": float(row[f"{measure}_mcse"]),
                             "path": row["path"], "n_replicates": row["n_replicates"]})
    return pd.DataFrame(rows), table


def test_every_registered_study_is_in_the_frame(frame):
    assert list(dict.fromkeys(frame["study"])) == list(study_names())
    assert list(frame.columns[:2]) == ["study", "position"]
    assert list(frame.columns[-6:]) == ["method", "measure", "value", "mcse", "path",
                                        "n_replicates"]


@pytest.mark.parametrize("name", [n for n in study_names() if n != "coverage_proportion"])
def test_frame_round_trips_every_measure_of_the_per_cell_table(frame, quick_run, name):
    expected, table = _tidy_from_csv(quick_run / f"{name}.csv")
    found = frame[frame["study"] == name].reset_index(drop=True)
    # the table's rows are the (cell, method) pairs in grid order
    pairs = list(dict.fromkeys(zip(found["position"], found["method"], strict=True)))
    assert len(pairs) == len(table)
    found["row"] = [pairs.index(p) for p in zip(found["position"], found["method"],
                                                strict=True)]
    merged = expected.merge(found, on=["row", "measure"], suffixes=("_csv", ""),
                            validate="one_to_one")
    assert len(merged) == len(expected) == len(found)
    assert (merged["method_csv"] == merged["method"]).all()
    assert (merged["path_csv"] == merged["path"]).all()
    # full precision: bit for bit (undefined measures are nan in both)
    assert np.array_equal(merged["value_csv"], merged["value"], equal_nan=True)
    assert np.array_equal(merged["mcse_csv"], merged["mcse"], equal_nan=True)
    exact = merged["path"] == "exact"
    assert merged.loc[exact, "n_replicates"].isna().all()
    assert (merged.loc[exact, "n_replicates_csv"] == "").all()
    assert (merged.loc[~exact, "n_replicates_csv"].astype(int)
            == merged.loc[~exact, "n_replicates"]).all()
    params = [c for c in table.columns if c not in
              {"method", "path", "n_replicates"} and not c.endswith("_mcse")
              and f"{c}_mcse" not in table.columns]
    for param in params:
        written = table.loc[merged["row"], param].to_numpy()
        assert list(written) == [str(v) for v in merged[param]], param


def test_packed_study_has_one_row_per_cell_method_and_measure(frame, quick_run):
    study = get_study("coverage_proportion")
    found = frame[frame["study"] == "coverage_proportion"]
    n_cells = study.grids["quick"].n_cells
    methods, measures = found["method"].unique(), found["measure"].unique()
    assert len(found) == n_cells * len(methods) * len(measures)
    assert not found.duplicated(["position", "method", "measure"]).any()
    assert sorted(found["position"].unique()) == list(range(n_cells))
    assert (found["path"] == "exact").all() and (found["mcse"] == 0).all()
    # every value is the one the packed group stored, in its cell
    result = results_from_store(quick_run)["coverage_proportion"]
    cells = {c.position: c for c in result.expanded().cells}
    for row in found.sample(200, random_state=0).itertuples():
        cell = cells[row.position]
        assert cell.performance[row.method][row.measure].value == row.value or (
            math.isnan(row.value) and math.isnan(cell.performance[row.method][row.measure].value))
        assert all(getattr(row, k) == v for k, v in cell.params.items())


def test_frames_in_pieces_add_up_to_the_frame(quick_run, frame):
    results = results_from_store(quick_run)
    pieces = list(results["coverage_proportion"].frames())
    assert len(pieces) == len(results["coverage_proportion"].groups)
    whole = results["coverage_proportion"].to_frame()
    assert sum(len(p) for p in pieces) == len(whole)
    alone = frame[frame["study"] == "coverage_proportion"].reset_index(drop=True)
    pd.testing.assert_frame_equal(whole, alone[whole.columns])


def test_packed_groups_give_the_frame_of_plain_cells():
    study = get_study("binomial_coverage")  # groups share (n, confidence_level), not p
    packed = dataclasses.replace(study, pack_groups=True)
    plain = run([study], rng=1, workers=1).to_frame()
    assert list(plain.columns[2:5]) == ["n", "p", "confidence_level"]  # grid order
    pd.testing.assert_frame_equal(run([packed], rng=1, workers=1).to_frame(), plain)


def test_every_study_writes_its_summary_table(quick_run):
    for name in study_names():
        summary = pd.read_csv(quick_run / f"{name}.summary.csv")
        assert len(summary) > 0, name


def test_undefined_is_nan_and_not_reported_is_empty(tmp_path):
    undefined = Performance({"bias": Measure(math.nan, math.nan), "coverage": Measure(0.95, 0.01)},
                            n_replicates=100)
    partial = Performance({"coverage": Measure(1 / 3, 0.0)}, n_replicates=None)
    cells = (CellResult("s", "a", 0, {"n": 2}, "monte-carlo", {"m": undefined}, {}, b""),
             CellResult("s", "b", 1, {"n": 3}, "exact", {"m": partial}, {}, b""))
    write_tables({"s": StudyResult("s", cells)}, tmp_path)
    assert (tmp_path / "s.csv").read_text().splitlines() == [
        "n,method,path,n_replicates,bias,bias_mcse,coverage,coverage_mcse",
        "2,m,monte-carlo,100,nan,nan,0.95,0.01",
        "3,m,exact,,,,0.3333333333333333,0.0"]
