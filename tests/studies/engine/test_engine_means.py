"""The mean of a measure over independent cells and its MCSE, against numpy by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from studies.engine import mean_over_cells, mean_over_cells_frame
from studies.engine.means import MEAN_SUMS, mean_terms, means_from_sums


def _by_hand(values, mcses, weights):
    """``sum w v / sum w`` and ``sqrt(sum w^2 m^2) / sum w`` in numpy, as written."""
    v, m, w = (np.asarray(x, dtype=float) for x in (values, mcses, weights))
    return float(np.dot(w, v) / w.sum()), float(np.sqrt(np.dot(w * w, m * m)) / w.sum())


def test_the_weighted_mean_and_its_mcse_are_the_formula():
    gen = np.random.default_rng(20190)
    values, mcses, weights = gen.uniform(0, 1, 7), gen.uniform(0, 0.1, 7), gen.uniform(0, 3, 7)
    found = mean_over_cells(values, mcses, weights)
    value, mcse = _by_hand(values, mcses, weights)
    assert found.value == pytest.approx(value, rel=1e-13)
    assert found.mcse == pytest.approx(mcse, rel=1e-13)
    # equal weights by default: sqrt(sum m^2) / k
    found = mean_over_cells(values, mcses)
    assert found.value == pytest.approx(values.mean(), rel=1e-13)
    assert found.mcse == pytest.approx(math.sqrt(np.sum(mcses**2)) / 7, rel=1e-13)


# MCSEs below 1e-100 would underflow when squared
@given(value=st.floats(-1e3, 1e3), mcse=st.just(0.0) | st.floats(1e-100, 10),
       k=st.integers(1, 40), weight=st.floats(1e-3, 1e3))
def test_identical_cells_give_the_cells_value_and_its_mcse_over_root_k(value, mcse, k, weight):
    for weights in (None, [weight] * k):
        found = mean_over_cells([value] * k, [mcse] * k, weights)
        assert found.value == pytest.approx(value, rel=1e-12, abs=1e-12)
        assert found.mcse == pytest.approx(mcse / math.sqrt(k), rel=1e-12)


def test_an_undefined_value_makes_the_mean_undefined_unless_omitted():
    values, mcses = [0.5, math.nan, 0.8], [0.1, 0.3, 0.2]
    found = mean_over_cells(values, mcses)
    assert math.isnan(found.value)
    omitted = mean_over_cells(values, mcses, nan_policy="omit")
    assert (omitted.value, omitted.mcse) == pytest.approx(_by_hand([0.5, 0.8], [0.1, 0.2],
                                                                   [1, 1]))
    # a cell of weight 0 takes no part, whatever its value and MCSE
    zero = mean_over_cells(values, [0.1, math.nan, 0.2], [1.0, 0.0, 1.0])
    assert (zero.value, zero.mcse) == (omitted.value, omitted.mcse)


def test_a_value_without_an_mcse_leaves_the_mean_defined_and_its_mcse_undefined():
    found = mean_over_cells([0.5, 1.0, 0.8], [0.1, math.nan, 0.2], [1.0, 0.05, 1.0])
    assert found.value == pytest.approx((0.5 + 0.05 + 0.8) / 2.05)
    assert math.isnan(found.mcse)


@pytest.mark.parametrize("values, weights", [([], None), ([0.5], [0.0]),
                                             ([math.nan], None)])
def test_without_a_cell_taking_part_the_mean_is_undefined(values, weights):
    found = mean_over_cells(values, [0.1] * len(values), weights, nan_policy="omit")
    assert math.isnan(found.value) and math.isnan(found.mcse)


def test_the_exact_path_mean_has_mcse_zero():
    assert mean_over_cells([0.93, 0.95], [0.0, 0.0]).mcse == 0.0


def test_each_group_of_a_frame_is_the_mean_of_its_cells_in_order_of_appearance():
    gen = np.random.default_rng(7)
    frame = pd.DataFrame({"method": list("babcab"), "n": [10, 10, 20, 10, 10, 20],
                          "value": gen.uniform(0, 1, 6), "mcse": gen.uniform(0, 0.1, 6),
                          "w": gen.uniform(0.5, 2, 6)})
    found = mean_over_cells_frame(frame, ["method", "n"], weight="w")
    assert found[["method", "n"]].values.tolist() == [["b", 10], ["a", 10], ["b", 20],
                                                      ["c", 10]]
    for _, row in found.iterrows():
        cells = frame[(frame["method"] == row["method"]) & (frame["n"] == row["n"])]
        value, mcse = _by_hand(cells["value"], cells["mcse"], cells["w"])
        assert (row["value"], row["mcse"], row["cells"]) == (
            pytest.approx(value, rel=1e-13), pytest.approx(mcse, rel=1e-13), len(cells))


def test_sums_of_pieces_give_the_mean_of_the_whole():
    gen = np.random.default_rng(3)
    frame = pd.DataFrame({"method": gen.choice(["a", "b"], 50), "value": gen.uniform(0, 1, 50),
                          "mcse": gen.uniform(0, 0.1, 50)})
    pieces = [piece.assign(**mean_terms(piece["value"], piece["mcse"]))
              .groupby("method").agg(dict(MEAN_SUMS)) for piece in (frame[:20], frame[20:])]
    streamed = means_from_sums(pd.concat(pieces).groupby(level=0).sum())
    whole = mean_over_cells_frame(frame, ["method"]).set_index("method")
    pd.testing.assert_frame_equal(streamed.loc[whole.index], whole, rtol=1e-14)


@pytest.mark.parametrize("kwargs, fragment", [
    ({"weights": [1.0, -1.0]}, "`weight` must be non-negative"),
    ({"weights": [1.0, math.nan]}, "`weight` must be non-negative"),
    ({"weights": [1.0]}, "must have one length"),
    ({"nan_policy": "raise"}, "`nan_policy` must be one of propagate, omit"),
])
def test_bad_input_is_refused(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        mean_over_cells([0.5, 0.6], [0.1, 0.1], **kwargs)


def test_a_frame_needs_a_column_to_group_by():
    with pytest.raises(ValueError, match="`by` must name at least one column"):
        mean_over_cells_frame(pd.DataFrame({"value": [1.0], "mcse": [0.1]}), [])


_CELL_NUMBER = st.floats(-1e6, 1e6) | st.just(math.nan)


@given(cells=st.lists(st.tuples(_CELL_NUMBER, st.floats(0, 1e3) | st.just(math.nan),
                                st.just(0.0) | st.floats(1e-3, 1e3)), max_size=60),
       weighted=st.booleans(), policy=st.sampled_from(["propagate", "omit"]))
def test_one_list_of_cells_gives_the_bits_of_a_frame_with_one_group(cells, weighted, policy):
    values, mcses, weights = ([cell[i] for cell in cells] for i in range(3))
    found = mean_over_cells(values, mcses, weights if weighted else None, nan_policy=policy)
    frame = pd.DataFrame({"g": 0, "value": values, "mcse": mcses, "w": weights})
    whole = mean_over_cells_frame(frame, ["g"], weight="w" if weighted else None,
                                  nan_policy=policy)
    expected = (whole["value"].iloc[0], whole["mcse"].iloc[0]) if len(whole) else (
        math.nan, math.nan)
    assert np.array_equal([found.value, found.mcse], expected, equal_nan=True)
