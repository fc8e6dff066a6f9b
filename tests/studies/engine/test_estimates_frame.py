"""The per-replicate estimates as one dataset (`RunResults.estimates_frame`), and the
performance measures recomputed from it by the code the workers run."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from studies.engine import RunResults, results_from_store, run
from studies.engine.performance import Estimates
from studies.engine.replicates import pack, per_replicate, performance_frame
from studies.suite import get_study

MEAN = get_study("mean_bias")
BINOMIAL = get_study("binomial_coverage")


@pytest.fixture(scope="module")
def mean_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("mean") / "run"
    return run([MEAN], rng=1, workers=1), run([MEAN], rng=1, workers=1, out=out)


def _recomputed(study, results) -> pd.DataFrame:
    frame = results.estimates_frame()
    params = list(study.grids["quick"].parameters)
    found = performance_frame(frame, study.truth, params, measures=study.measures)
    stored = results.to_frame()[["position", "method", "measure", "value", "mcse"]]
    return stored.merge(found, on=["position", "method", "measure"], how="outer",
                        suffixes=("", "_recomputed"), indicator=True)


def test_one_row_per_replicate_and_the_measures_recomputed_exactly(mean_run):
    memory, _ = mean_run
    frame = memory.estimates_frame()
    grid = MEAN.grids["quick"]
    # every method has a row per replicate (the median has no interval: its bounds are missing)
    assert len(frame) == grid.n_cells * len(MEAN.methods) * grid.n_replicates
    assert frame.query("method == 'median'")["low"].isna().all()
    assert list(frame.columns[:4]) == ["study", "position", "distribution", "n"]
    assert frame.groupby(["position", "method"])["replicate"].max().eq(
        grid.n_replicates - 1).all()
    merged = _recomputed(MEAN, memory)
    assert (merged["_merge"] == "both").all()
    assert np.allclose(merged["value"], merged["value_recomputed"], rtol=0, atol=1e-12,
                       equal_nan=True)
    assert np.allclose(merged["mcse"], merged["mcse_recomputed"], rtol=0, atol=1e-12,
                       equal_nan=True)


def test_a_stored_run_gives_the_same_frame_read_in_one_pass(mean_run):
    memory, stored = mean_run
    assert stored.directory is not None
    read = results_from_store(stored.directory)
    assert not any(cell.estimates for r in read.values() for cell in r.cells)
    pd.testing.assert_frame_equal(read.estimates_frame(), memory.estimates_frame())
    bare = RunResults(read)  # no directory to read the estimates from
    with pytest.raises(ValueError, match="`directory` must be the run directory of study "
                                         "'mean_bias'"):
        bare.estimates_frame()


def test_tallied_outcomes_are_repeated_once_per_replicate():
    grid = dataclasses.replace(BINOMIAL.grids["quick"], n_replicates=500)
    results = run([BINOMIAL], grid=grid, rng=4, workers=1, path="monte-carlo")
    frame = results.estimates_frame()
    assert (frame.groupby(["position", "method"]).size() == 500).all()
    merged = _recomputed(BINOMIAL, results)
    assert np.allclose(merged["value"], merged["value_recomputed"], rtol=0, atol=1e-12,
                       equal_nan=True)
    # the tallies are the blob's: the first cell's wald estimates, in stored order
    cell = results["binomial_coverage"].cells[0]
    expected = per_replicate(cell.estimates)["wald"]["estimate"]
    shown = frame.query("position == 0 and method == 'wald'")["estimate"].to_numpy()
    assert np.array_equal(shown, expected)


def test_per_replicate_repeats_each_tallied_row_its_count_of_times():
    blob = pack({"m": Estimates(estimate=np.array([0.1, 0.5, 0.9]),
                                low=np.array([0.0, 0.4, 0.8]))}, np.array([3, 1, 2]))
    found = per_replicate(blob)["m"]
    assert found["estimate"].tolist() == [0.1, 0.1, 0.1, 0.5, 0.9, 0.9]
    assert found["low"].tolist() == [0.0, 0.0, 0.0, 0.4, 0.8, 0.8]


def test_the_exact_path_has_no_replicates():
    results = run([BINOMIAL], rng=1, workers=1)
    frame = results.estimates_frame()
    assert frame.empty and list(frame.columns) == ["study", "position", "method", "replicate"]
