"""The report figures: well-formed, deterministic SVG with the labels, legends and ids a report
needs, the zip plot's misses counted right, and one-line errors on bad input."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from studies.engine import Grid, run
from studies.report.plots import (
    MEASURE_LABELS,
    coverage_against,
    heat_map,
    measure_by,
    svg,
    zip_plot,
    zip_ranking,
)
from studies.suite import get_study

SVG = "{http://www.w3.org/2000/svg}"
COVERAGE_LABEL = "coverage (share of intervals containing the truth)"


def texts(document: str) -> str:
    """Every text element's content, in document order, joined by spaces (wrapped labels read
    as one phrase)."""
    root = ET.fromstring(document)
    return " ".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))


def ids(document: str) -> list[str]:
    """Every ``id`` attribute of the document."""
    return [e.get("id", "") for e in ET.fromstring(document).iter() if e.get("id")]


@pytest.fixture(scope="module")
def exact() -> pd.DataFrame:
    """A tiny exact run of the binomial coverage study: 2 x 3 cells, wald and wilson."""
    grid = Grid({"n": [10, 30], "p": [0.1, 0.3, 0.5], "confidence_level": [0.95]},
                n_replicates=2)
    return run([get_study("binomial_coverage")], grid=grid, rng=1, workers=1).to_frame()


def monte_carlo(shift: float = 0.0) -> pd.DataFrame:
    """A hand-made Monte Carlo frame: two methods, n in {20, 200, 2000}, two designs."""
    rows: list[dict[str, Any]] = []
    for design in ("srs", "stratified"):
        for n in (20, 200, 2000):
            for k, method in enumerate(("delta", "bootstrap")):
                for measure, value in (("coverage", 0.9 + 0.01 * k + shift),
                                       ("bias", 0.02 / (k + 1) - shift)):
                    rows.append({"study": "s", "position": 0, "design": design, "n": n,
                                 "confidence_level": 0.95, "method": method,
                                 "measure": measure, "value": value, "mcse": 0.01,
                                 "path": "monte-carlo", "n_replicates": 1000})
    return pd.DataFrame(rows)


def intervals(seed: int = 3, size: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Normal-theory intervals around estimates drawn about a truth of 0.5."""
    rng = np.random.default_rng(seed)
    estimate = rng.normal(0.5, 0.1, size)
    return estimate - 0.18, estimate + 0.18


# --------------------------------------------------------------------------------------------
# svg


def test_svg_is_byte_identical_for_the_same_figure_and_prefixes_every_id():
    fig = Figure(figsize=(3, 2))
    fig.add_subplot().plot([0, 1], [1, 0], marker="o")
    first, second = svg(fig, "one"), svg(fig, "one")
    assert first == second
    assert all(i.startswith("one-") for i in ids(first))
    references = re.findall(r'(?:url\(#|xlink:href="#)([^)"]+)', first)
    assert references and all(r.startswith("one-") for r in references)
    assert set(references) <= set(ids(first))
    assert "<dc:date>" not in first and "Matplotlib" not in first


def test_svg_default_id_differs_between_figures():
    a, b = Figure(), Figure()
    a.add_subplot().plot([0, 1])
    b.add_subplot().plot([1, 0])
    assert not set(ids(svg(a))) & set(ids(svg(b)))


def test_svg_rejects_an_id_that_is_not_a_name():
    with pytest.raises(ValueError, match=r"^`figure_id` must be a letter.*got '1x'\.$"):
        svg(Figure(), "1x")


# --------------------------------------------------------------------------------------------
# coverage_against


def test_coverage_against_labels_axes_panels_methods_and_nominal(exact):
    document = coverage_against(exact, x="p", panel_by="n")
    words = texts(document)
    assert COVERAGE_LABEL in words
    for text in ("n = 10", "n = 30", "wald", "wilson", "nominal level", "Coverage against p"):
        assert text in words
    assert "MCSE" not in words  # exact cells: no Monte Carlo band
    assert re.search(r">p</text>", document)


def test_coverage_against_draws_mcse_bands_and_keeps_the_given_method_order():
    document = coverage_against(monte_carlo(), x="n", panel_by="design",
                                methods=["bootstrap", "delta"], title="F1 coverage")
    words = texts(document)
    assert "± 1.96 MCSE" in words and "F1 coverage" in words
    assert words.index("bootstrap") < words.index("delta")


def test_coverage_against_one_method_has_no_method_legend_but_a_nominal_line(exact):
    words = texts(coverage_against(exact, x="p", panel_by="n", methods=["wilson"]))
    assert "wald" not in words
    assert "wilson" in words and "nominal level" in words


# --------------------------------------------------------------------------------------------
# measure_by


def test_measure_by_labels_the_measure_with_units_and_draws_a_reference():
    document = measure_by(monte_carlo(), measure="bias", x="n", hue="method",
                          panel_by="design", reference=0.0)
    words = texts(document)
    assert MEASURE_LABELS["bias"] in words
    for text in ("delta", "bootstrap", "reference (0)", "design = srs", "bias against n"):
        assert text in words


def test_a_legend_of_long_method_names_takes_fewer_columns_to_fit_the_figure():
    from matplotlib.lines import Line2D

    from studies.report.plots import _legend

    long = [f"{m}-losci" for m in ("delta", "logit-delta", "jaccard-clopper-pearson",
                                   "jaccard-wilson", "jaccard-jeffreys", "dirichlet-posterior")]
    for labels, columns in ((["a", "b", "c", "d", "e"], 4), ([*long, "reference (0.95)"], 2)):
        fig = Figure(figsize=(7.0, 4.2), layout="constrained")
        fig.subplots()
        _legend(fig, [Line2D([], []) for _ in labels], labels, "method")
        (legend,) = fig.legends
        fig.draw_without_rendering()  # lays the entries out
        assert legend.get_window_extent().width <= fig.bbox.width
        assert len({round(t.get_window_extent().x0) for t in legend.get_texts()}) == columns


def test_measure_by_draws_error_bars_only_on_monte_carlo_cells(exact):
    def caps(document: str) -> int:
        return len(re.findall(r'id="[^"]*-LineCollection_\d+"', document))

    assert caps(measure_by(exact, measure="width", x="p", panel_by="n")) == 0
    assert caps(measure_by(monte_carlo(), measure="bias", x="n", panel_by="design")) == 4


def test_measure_by_uses_a_log_axis_for_a_wide_positive_grid():
    wide = measure_by(monte_carlo(), measure="bias", x="n", panel_by="design", figure_id="w")
    linear = measure_by(monte_carlo(), measure="bias", x="n", panel_by="design", log_x=False,
                        figure_id="w")
    ticks = re.compile(r">(\d+)</text>")
    assert set(ticks.findall(wide)) == {"20", "200", "2000"}  # the grid values, plain numbers
    assert "1000" in ticks.findall(linear)


def test_measure_by_takes_a_text_parameter_as_categories():
    words = texts(measure_by(monte_carlo(), measure="coverage", x="design", panel_by="n"))
    assert "srs" in words and "stratified" in words and "n = 2000" in words


# --------------------------------------------------------------------------------------------
# heat_map


def test_heat_map_annotates_cells_and_labels_the_colour_bar(exact):
    document = heat_map(exact, measure="coverage", method="wald", rows="n", columns="p",
                        center=0.95)
    words = texts(document)
    wald = exact[(exact.method == "wald") & (exact.measure == "coverage")]
    for value in wald["value"]:
        assert f"{value:.3f}" in words
    assert COVERAGE_LABEL in words and "wald: coverage" in words
    assert "mean over" not in words


def test_heat_map_averages_other_parameters_and_says_so():
    frame = monte_carlo()
    words = texts(heat_map(frame, measure="bias", method="delta", rows="design",
                           columns="n"))
    assert "mean over" not in words  # one cell per (design, n)
    doubled = pd.concat([frame, frame.assign(confidence_level=0.9, value=frame.value + 0.1)])
    words = texts(heat_map(doubled, measure="bias", method="delta", rows="design", columns="n"))
    assert "(mean over confidence_level)" in words
    assert f"{0.02 + 0.05:.3f}" in words


# --------------------------------------------------------------------------------------------
# zip plot


def test_zip_ranking_ranks_by_abs_z_and_marks_the_misses():
    low, high = intervals()
    ranking = zip_ranking(low, high, 0.5)
    misses = (low > 0.5) | (high < 0.5)
    np.testing.assert_array_equal(ranking.misses, misses)
    assert ranking.coverage == pytest.approx(1 - misses.mean())
    assert ranking.mcse == pytest.approx(np.sqrt(ranking.coverage * (1 - ranking.coverage)
                                                 / low.size))
    np.testing.assert_allclose(ranking.z, ((low + high) / 2 - 0.5) / (0.18 / 1.959963984540054))
    assert np.all(np.diff(np.abs(ranking.z)[ranking.order]) >= 0)
    assert sorted(ranking.centile) == pytest.approx(100 * np.arange(1, low.size + 1) / low.size)
    # The misses take the top centiles.
    assert ranking.centile[misses].min() > ranking.centile[~misses].max()


def test_zip_ranking_handles_zero_width_intervals():
    ranking = zip_ranking([0.5, 0.2, 0.1], [0.5, 0.2, 0.9], 0.5)
    assert ranking.z.tolist() == [0.0, -np.inf, 0.0]
    assert ranking.misses.tolist() == [False, True, False]
    assert ranking.order.tolist() == [0, 2, 1]


def test_zip_plot_draws_one_miss_line_per_interval_that_misses():
    low, high = intervals()
    document = zip_plot(low, high, 0.5, title="wald, n = 20", nominal=0.95, figure_id="z")
    root = ET.fromstring(document)
    groups = {g.get("id"): g for g in root.iter(f"{SVG}g")}
    misses = int(((low > 0.5) | (high < 0.5)).sum())
    assert 0 < misses < low.size
    assert len(list(groups["z-misses"].iter(f"{SVG}path"))) == misses
    assert len(list(groups["z-covers"].iter(f"{SVG}path"))) == low.size - misses
    words = texts(document)
    coverage = 1 - misses / low.size
    assert f"coverage {coverage:.3f}" in words and "wald, n = 20" in words
    for text in ("fractional centile of |z| (%)", "interval bounds", "truth", "nominal (0.95)"):
        assert text in words


# --------------------------------------------------------------------------------------------
# Determinism and ids across figures


def figures(shift: float, exact: pd.DataFrame) -> list[str]:
    """One figure of each kind, the Monte Carlo ones from data moved by ``shift``."""
    frame = monte_carlo(shift)
    low, high = intervals(seed=3 if shift == 0 else 4)
    return [
        coverage_against(frame, x="n", panel_by="design"),
        measure_by(frame, measure="bias", x="n", panel_by="design", reference=0.0),
        heat_map(frame, measure="coverage", method="delta", rows="design", columns="n",
                 center=0.95),
        zip_plot(low, high, 0.5, title="zip"),
        coverage_against(exact, x="p", panel_by="n"),
    ]


def test_every_figure_is_byte_identical_on_the_same_data_and_differs_on_other_data(exact):
    first, again, other = figures(0.0, exact), figures(0.0, exact), figures(0.01, exact)
    assert first == again
    assert [a != b for a, b in zip(first[:4], other[:4], strict=True)] == [True] * 4


def test_figures_inlined_in_one_page_share_no_id(exact):
    documents = [coverage_against(exact, x="p", panel_by="n", figure_id="first"),
                 coverage_against(exact, x="p", panel_by="n", figure_id="second"),
                 *figures(0.0, exact)]
    page = "<html><body>" + "".join(
        d[d.index("<svg"):] for d in documents) + "</body></html>"
    found = re.findall(r'\sid="([^"]+)"', page)
    assert len(found) == len(set(found)) > 100


# --------------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize(("call", "message"), [
    (lambda f: coverage_against(f, x="q", panel_by="n"),
     "`x` must be a column of the frame; got 'q'."),
    (lambda f: coverage_against(f, x="p", panel_by="size"),
     "`panel_by` must be a column of the frame; got 'size'."),
    (lambda f: coverage_against(f, x="p", panel_by="n", nominal_column="level"),
     "`nominal_column` must be a column of the frame; got 'level'."),
    (lambda f: coverage_against(f, x="p", panel_by="n", methods=["agresti"]),
     "`methods` must name method values in the frame (wald, wilson); got 'agresti'."),
    (lambda f: coverage_against(f, x="p"),
     "`frame` has several coverage rows per (p, method): filter n to one value each first."),
    (lambda f: coverage_against(f[f.measure == "width"], x="p", panel_by="n"),
     "`measure` must name measure values in the frame (width); got 'coverage'."),
    (lambda f: measure_by(f, measure="mse", x="p", panel_by="n"),
     "`measure` must name measure values in the frame (bias, coverage, width); got 'mse'."),
    (lambda f: measure_by(f, measure="bias", x="p", hue="p"),
     "`hue` must differ from `x`; both are 'p'."),
    (lambda f: measure_by(f[f.method == "none"], measure="bias", x="p"),
     "`frame` must have rows; got an empty frame."),
    (lambda f: measure_by(f.drop(columns="mcse"), measure="bias", x="p"),
     "`frame` must have the columns method, measure, value and mcse; missing mcse."),
    (lambda f: heat_map(f, measure="coverage", method="mid-p", rows="n", columns="p"),
     "`methods` must name method values in the frame (wald, wilson); got 'mid-p'."),
    (lambda f: heat_map(f, measure="coverage", method="wald", rows="n", columns="z"),
     "`columns` must be a column of the frame; got 'z'."),
])
def test_bad_frames_raise_one_line_errors_naming_the_argument(exact, call, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call(exact)


def test_too_many_panels_and_mixed_nominal_levels_are_refused():
    frame = monte_carlo()
    many = pd.concat([frame.assign(n=n) for n in range(7)])
    many = many[many.design == "srs"].drop_duplicates(["n", "method", "measure"])
    with pytest.raises(ValueError, match=r"^`panel_by` must have at most 6 values; 'n' has 7"):
        measure_by(many, measure="bias", x="design", panel_by="n")
    mixed = frame.assign(confidence_level=np.where(frame.n == 20, 0.9, 0.95))
    with pytest.raises(ValueError, match=r"^`nominal_column` 'confidence_level' must hold one"):
        coverage_against(mixed, x="n", panel_by="design")


@pytest.mark.parametrize(("low", "high", "truth", "message"), [
    ([], [], 0.5, "`low` must be a non-empty 1-D array; got shape (0,)."),
    ([0.1, 0.2], [0.3], 0.5, "`high` must have the shape of `low` (2,); got (1,)."),
    ([0.1, np.nan], [0.3, 0.4], 0.5, "`low` must be finite; got 1 non-finite values."),
    ([0.3], [0.1], 0.5, "`high` must be >= `low`; got 1 intervals with high < low."),
    ([0.1], [0.3], np.inf, "`truth` must be a finite number; got inf."),
])
def test_bad_intervals_raise_one_line_errors(low, high, truth, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        zip_plot(np.array(low), np.array(high), truth, title="t")
