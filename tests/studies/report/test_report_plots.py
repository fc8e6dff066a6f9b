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
    PALETTE,
    coverage_against,
    group_colours,
    heat_map,
    measure_by,
    summary_bars,
    summary_lines,
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
        return len(re.findall(r'id="[^"]*-line-\d+-\d+-[\w-]+-error"', document))

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
# Summary tables


def table2(shift: float = 0.0) -> pd.DataFrame:
    """Summary rows of a Table 2: 3 rows x 2 panels, ours with an sd beside the paper's."""
    rows = []
    for column in ("1", "total"):
        for k, row in enumerate(("below", "equal", "above")):
            rows.append({"table": "table2", "row": row, "column": column,
                         "ours": 10.0 * (k + 1) + shift, "spread": 1.0 + k,
                         "paper": 12.0 * (k + 1)})
    return pd.DataFrame(rows)


def effects(shift: float = 0.0) -> pd.DataFrame:
    """Summary rows of design effects: 2 runs x 3 sizes x 2 allocations."""
    rows = []
    for run_ in (1, 2):
        for relevant in (5, 50, 500):
            for k, allocation in enumerate(("trec5", "neyman")):
                rows.append({"run": run_, "relevant": relevant, "column": allocation,
                             "ours": 1.2 - 0.3 * k + shift + relevant / 5000,
                             "spread": 0.05})
    return pd.DataFrame(rows)


def test_summary_bars_draws_a_bar_per_row_and_column_and_error_bars_from_the_spread():
    document = summary_bars(table2(), x="row", bars=["ours", "paper"],
                            error={"ours": "spread"}, panel_by="column", figure_id="t2")
    bars = [i for i in ids(document) if i.startswith("t2-bar-")]
    assert len(bars) == len(table2()) * 2
    assert {"t2-bar-0-0-0", "t2-bar-1-1-2"} <= set(bars)
    groups = {g.get("id"): g for g in ET.fromstring(document).iter(f"{SVG}g")}
    for panel in (0, 1):  # one error bar per row of the panel, on ours only
        assert len(list(groups[f"t2-error-{panel}-0"].iter(f"{SVG}path"))) == 3
        assert f"t2-error-{panel}-1" not in groups
    words = texts(document)
    for text in ("column = 1", "column = total", "below", "above", "ours (± spread)", "paper",
                 "ours, paper by row"):
        assert text in words


def test_summary_bars_skips_missing_values_and_takes_labels_and_a_log_axis():
    frame = table2().assign(paper=lambda f: f["paper"].where(f["row"] != "above"))
    document = summary_bars(frame, x="row", bars=["ours", "paper"], error={"ours": "spread"},
                            panel_by="column", log_y=True, y_label="pairs",
                            labels={"1": "run 1", "total": "all runs", "spread": "1 sd",
                                    "row": "Table 2 row", "below": "below the interval"},
                            title="Table 2", figure_id="t2")
    assert len([i for i in ids(document) if i.startswith("t2-bar-")]) == 12 - 2
    words = texts(document)
    for text in ("run 1", "all runs", "ours (± 1 sd)", "Table 2 row", "below the interval",
                 "pairs", "Table 2"):
        assert text in words
    assert "column =" not in words
    assert re.search(r">10</text>", document)  # a log axis with plain-number ticks


def test_summary_lines_draws_a_line_per_hue_with_labels_errors_and_a_reference():
    document = summary_lines(effects(), x="relevant", y="ours", hue="column", panel_by="run",
                             error="spread", reference=1.0, figure_id="de",
                             labels={"ours": "design effect", "column": "allocation",
                                     "neyman": "Neyman (oracle)", "spread": "1 sd"})
    words = texts(document)
    for text in ("run = 1", "run = 2", "trec5", "Neyman (oracle)", "allocation",
                 "design effect", "reference (1)", "± 1 sd", "relevant", "ours against relevant"):
        assert text in words
    assert len(re.findall(r'id="de-line2d_\d+"', document)) >= 4  # 2 hues x 2 panels
    assert len(re.findall(r'id="de-line-\d+-\d+-\w+-error"', document)) == 4  # error bars
    assert set(re.findall(r">(\d+)</text>", document)) >= {"5", "50", "500"}  # log x, grid


def test_summary_lines_breaks_a_line_at_a_missing_value_and_needs_no_hue():
    frame = effects().query("column == 'trec5' and run == 1")
    frame.loc[frame["relevant"] == 50, "ours"] = np.nan
    words = texts(summary_lines(frame, x="relevant", y="ours", log_x=False))
    assert "trec5" not in words  # a single line: no legend
    assert "ours against relevant" in words


def test_summary_figures_are_byte_identical_on_the_same_rows_and_differ_on_others():
    def draw(shift: float) -> list[str]:
        return [summary_bars(table2(shift), x="row", bars=["ours", "paper"],
                             error={"ours": "spread"}, panel_by="column", figure_id="bars"),
                summary_lines(effects(shift), x="relevant", y="ours", hue="column",
                              panel_by="run", reference=1.0, figure_id="lines")]

    first, again, other = draw(0.0), draw(0.0), draw(0.5)
    assert first == again
    assert first[0] != other[0] and first[1] != other[1]
    for document, prefix in zip(first, ("bars-", "lines-"), strict=True):
        assert ids(document) and all(i.startswith(prefix) for i in ids(document))


@pytest.mark.parametrize(("call", "message"), [
    (lambda: summary_bars(table2(), x="row", bars="ours", panel_by="column"),
     "`bars` must be a non-empty sequence of column names; got 'ours'."),
    (lambda: summary_bars(table2(), x="row", bars=["ours", "mine"], panel_by="column"),
     "`bars` must be a column of the frame; got 'mine'."),
    (lambda: summary_bars(table2(), x="row", bars=["ours", "table"], panel_by="column"),
     "`bars` must name numeric columns; 'table' holds str values."),
    (lambda: summary_bars(table2(), x="row", bars=["ours"], error={"paper": "spread"}),
     "`error` must map columns of `bars` (ours); got 'paper'."),
    (lambda: summary_bars(table2(), x="row", bars=["ours"], error="spread"),
     "`error` must map columns of `bars` to the columns of their error bars; got 'spread'."),
    (lambda: summary_bars(table2(), x="row", bars=["ours", "paper"]),
     "`frame` has several rows per (row), differing in column: select one row each first."),
    (lambda: summary_bars(table2(), x="row", bars=["ours"], panel_by="row"),
     "`panel_by` must differ from `x`; both are 'row'."),
    (lambda: summary_bars(table2().iloc[:0], x="row", bars=["ours"]),
     "`frame` must have rows; got an empty frame."),
    (lambda: summary_bars(table2().assign(ours=np.nan), x="row", bars=["ours"],
                          panel_by="column"),
     "`bars` must name columns holding a number; ours hold none in the frame."),
    (lambda: summary_lines(effects(), x="relevant", y="ours", hue="column"),
     "`frame` has several rows per (relevant, column), differing in run: select one row "
     "each first."),
    (lambda: summary_lines(effects(), x="size", y="ours", hue="column", panel_by="run"),
     "`x` must be a column of the frame; got 'size'."),
    (lambda: summary_lines(effects(), x="relevant", y="column", panel_by="run"),
     "`y` must name numeric columns; 'column' holds str values."),
    (lambda: summary_lines(effects().assign(run=[1.0, np.nan] * 6), x="relevant", y="ours",
                           hue="column", panel_by="run"),
     "`panel_by` column 'run' has no value in 6 rows: filter them out first."),
    (lambda: summary_lines(effects(), x="relevant", y="ours", hue="column", panel_by="run",
                           labels=["a"]),
     "`labels` must be a mapping of names and values to text; got list."),
])
def test_bad_summary_options_raise_one_line_errors_naming_the_argument(call, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call()


# --------------------------------------------------------------------------------------------
# Figures that read alone: one colour per method, bars within range, categories as categories


def groups(document: str, pattern: str) -> dict[str, ET.Element]:
    """The ``<g>`` elements whose id matches ``pattern`` (a regular expression), by id."""
    return {g.get("id", ""): g for g in ET.fromstring(document).iter(f"{SVG}g")
            if re.fullmatch(pattern, g.get("id", ""))}


def stroke(element: ET.Element) -> str:
    """The first stroke colour drawn inside an element (a line's, or its markers')."""
    found = re.findall(r"stroke: (#[0-9a-f]{6})", ET.tostring(element, encoding="unicode"))
    assert found, "the element draws nothing"
    return found[0]


def path_ys(element: ET.Element) -> list[float]:
    """The y coordinates of every path drawn directly in an element (SVG y grows downwards)."""
    return [float(y) for path in element.findall(f"{SVG}path")
            for y in re.findall(r"[ML] [-\d.]+ ([-\d.]+)", path.get("d", ""))]


def test_group_colours_keeps_a_name_s_colour_and_separates_names_shown_together():
    studies = [["wald", "wilson", "jeffreys"], ["jeffreys", "delta", "bootstrap"]]
    colours = group_colours(studies)
    assert set(colours) == {"wald", "wilson", "jeffreys", "delta", "bootstrap"}
    for group in studies:  # one colour per name, distinct within a group
        assert len({colours[name] for name in group}) == len(group)
    assert colours["wald"] == PALETTE[0]  # the first names take the first colours
    many = group_colours([[f"m{i}" for i in range(9)]])
    assert len(set(many.values())) == len(PALETTE)  # every colour used before one repeats
    # a heavier group (the methods of one figure) is kept apart before a lighter one
    figure, study = ["a", "c"], ["a", "b", "c", "d", "e", "f", "g", "h"]
    plain = group_colours([study])
    weighted = group_colours([figure, study], weights=[100, 1])
    assert plain["a"] == plain["h"]  # 8 names, 7 colours: the study alone repeats one
    assert weighted["a"] != weighted["c"]
    assert group_colours([figure, study], weights=[100, 1]) == weighted  # deterministic


@pytest.mark.parametrize(("call", "message"), [
    (lambda: group_colours(["wald"]), "`groups` must hold sequences of names; got the name "
                                      "'wald'."),
    (lambda: group_colours([["a"], ["b"]], weights=[1]),
     "`weights` must hold one weight per group (2); got 1."),
])
def test_group_colours_rejects_bad_input(call, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call()


def test_a_method_keeps_its_colour_whichever_methods_a_figure_shows():
    colours = group_colours([["delta", "bootstrap"]])
    both = measure_by(monte_carlo(), measure="bias", x="n", panel_by="design",
                      colours=colours, figure_id="both")
    alone = measure_by(monte_carlo(), measure="bias", x="n", panel_by="design",
                       methods=["bootstrap"], colours=colours, figure_id="alone")
    lines = {**groups(both, r"both-line-0-\d+-\w+"), **groups(alone, r"alone-line-0-\d+-\w+")}
    assert set(lines) == {"both-line-0-0-delta", "both-line-0-1-bootstrap",
                          "alone-line-0-0-bootstrap"}
    assert stroke(lines["alone-line-0-0-bootstrap"]) == stroke(lines["both-line-0-1-bootstrap"]) \
        == colours["bootstrap"].lower()
    assert stroke(lines["both-line-0-0-delta"]) == colours["delta"].lower()
    # without the mapping, the lone line takes the palette's first colour, as delta does
    plain = measure_by(monte_carlo(), measure="bias", x="n", panel_by="design",
                       methods=["bootstrap"], figure_id="plain")
    assert stroke(groups(plain, r"plain-line-0-0-bootstrap")["plain-line-0-0-bootstrap"]) \
        == PALETTE[0].lower()


def test_a_colour_met_twice_in_a_figure_changes_the_line_style():
    colours = {"delta": PALETTE[2], "bootstrap": PALETTE[2]}
    document = measure_by(monte_carlo(), measure="bias", x="n", panel_by="design",
                          colours=colours, figure_id="twice")
    lines = groups(document, r"twice-line-0-\d+-\w+")
    styles = [ET.tostring(g, encoding="unicode") for g in lines.values()]
    assert all(PALETTE[2].lower() in style for style in styles)
    assert ["stroke-dasharray" in style for style in styles] == [False, True]


def near_one(shift: float = 0.0) -> pd.DataFrame:
    """Coverage 0.99 with an MCSE of 0.02: +-1.96 MCSE would run past 1."""
    return monte_carlo().assign(value=lambda f: f["value"].where(f["measure"] != "coverage",
                                                                 0.99 + shift),
                                mcse=0.02)


def test_error_bars_of_a_share_stop_at_one_and_unbounded_measures_do_not():
    def ends(document: str, figure_id: str) -> tuple[list[float], float]:
        bars = groups(document, rf"{figure_id}-line-0-\d+-\w+-error")
        (top,) = set(path_ys(groups(document, rf"{figure_id}-reference-0")
                             [f"{figure_id}-reference-0"]))
        assert len(bars) == 2
        return [y for bar in bars.values() for y in path_ys(bar)], top

    coverage, one = ends(measure_by(near_one(), measure="coverage", x="n", panel_by="design",
                                    reference=1.0, figure_id="cov"), "cov")
    assert min(coverage) >= one - 1e-6  # no bar end above the line at coverage 1
    assert min(coverage) == pytest.approx(one)  # they reach it
    frame = near_one().query("measure == 'coverage'").assign(measure="bias")
    bias, one = ends(measure_by(frame, measure="bias", x="n", panel_by="design",
                                reference=1.0, figure_id="bias"), "bias")
    assert min(bias) < one - 1.0  # bias has no bound: its bars run past 1


def test_a_coverage_band_is_cut_at_one():
    from studies.report.plots import _error_ends

    low, high = _error_ends(np.array([0.99, 0.5, 0.01]), np.full(3, 0.05), (0.0, 1.0))
    np.testing.assert_allclose(low, [0.94, 0.45, 0.0])
    np.testing.assert_allclose(high, [1.0, 0.55, 0.06])
    document = coverage_against(near_one(), x="n", panel_by="design", figure_id="band")
    assert "± 1.96 MCSE" in texts(document)


def test_summary_lines_cut_error_bars_at_the_bounds_given():
    frame = effects().assign(ours=0.98, spread=0.1)

    def top(**options: Any) -> tuple[float, float]:
        document = summary_lines(frame, x="relevant", y="ours", hue="column", panel_by="run",
                                 error="spread", reference=1.0, figure_id="s", **options)
        bars = groups(document, r"s-line-0-\d+-\w+-error")
        (one,) = set(path_ys(groups(document, "s-reference-0")["s-reference-0"]))
        return min(y for bar in bars.values() for y in path_ys(bar)), one

    highest, one = top(bounds=(0.0, 1.0))
    assert highest == pytest.approx(one)
    highest, one = top()
    assert highest < one - 1.0
    with pytest.raises(ValueError, match=r"^`bounds` must be a pair of numbers \(low, high\), "
                                         r"low <= high; got \(1, 0\)\.$"):
        summary_lines(frame, x="relevant", y="ours", hue="column", panel_by="run",
                      bounds=(1, 0))


def topics() -> pd.DataFrame:
    """Success by topic id (numbers naming topics, not quantities), two methods."""
    rows = [{"topic": topic, "method": method, "measure": "conditional_rejection",
             "value": 0.9 - 0.1 * k, "mcse": 0.01}
            for topic in (22, 8, 14) for k, method in enumerate(("first", "split-50-50"))]
    return pd.DataFrame(rows)


def joined(document: str, pattern: str) -> list[bool]:
    """Whether each line group matching ``pattern`` draws a line (a path of its own), not
    just markers."""
    return [bool(g.findall(f"{SVG}path")) for g in groups(document, pattern).values()]


def test_a_categorical_x_draws_points_at_categories_without_a_joining_line():
    ticks = re.compile(r">(\d+)</text>")
    as_numbers = measure_by(topics(), measure="conditional_rejection", x="topic",
                            figure_id="num")
    assert joined(as_numbers, r"num-line-0-\d+-(first|split-50-50)") == [True, True]
    assert "10" in ticks.findall(as_numbers)  # a continuous axis: ticks between the ids
    document = measure_by(topics(), measure="conditional_rejection", x="topic",
                          categorical=True, figure_id="cat")
    assert joined(document, r"cat-line-0-\d+-(first|split-50-50)") == [False, False]
    assert [t for t in ticks.findall(document) if t in {"8", "10", "14", "22"}] == \
        ["8", "14", "22"]  # one tick per topic, in order, nothing between them
    assert "split-50-50" in texts(document)


def test_text_and_single_values_are_categories_too():
    text = measure_by(monte_carlo(), measure="bias", x="design", panel_by="n",
                      figure_id="text")
    assert not any(joined(text, r"text-line-\d+-\d+-\w+"))
    single = measure_by(monte_carlo().query("n == 200"), measure="bias", x="n",
                        panel_by="design", figure_id="one")
    numbers = re.findall(r">(\d+)</text>", single)
    assert "200" in numbers and not {"150", "180", "199", "220", "250"} & set(numbers)
    lines = summary_lines(effects().query("relevant == 50"), x="relevant", y="ours",
                          hue="column", panel_by="run", figure_id="lone")
    assert not any(joined(lines, r"lone-line-\d+-\d+-\w+"))


def test_a_tolerance_band_colours_points_inside_and_outside():
    frame = topics().assign(value=[0.93, 0.95, 0.80, 0.92, 0.99, 0.60])
    document = measure_by(frame, measure="conditional_rejection", x="topic", hue="method",
                          reference=0.93, tolerance=0.02, categorical=True, figure_id="tol")
    inside = groups(document, r"tol-line-0-\d+-[\w-]+-inside")
    outside = groups(document, r"tol-line-0-\d+-[\w-]+-outside")
    # topics 8, 14, 22 in order: first 0.80, 0.99, 0.93; split 0.60, 0.92, 0.95 (at the edge)
    assert sum(len(g.findall(f".//{SVG}use")) for g in inside.values()) == 3
    assert sum(len(g.findall(f".//{SVG}use")) for g in outside.values()) == 3
    assert {stroke(g) for g in inside.values()} == {PALETTE[2].lower()}
    assert {stroke(g) for g in outside.values()} == {PALETTE[1].lower()}
    words = texts(document)
    for text in ("0.93 ± 0.02", "inside the band", "outside the band", "reference (0.93)"):
        assert text in words
    with pytest.raises(ValueError, match=r"^`tolerance` must be a positive number, given with "
                                         r"`reference`; got 0\.02 \(reference None\)\.$"):
        measure_by(frame, measure="conditional_rejection", x="topic", tolerance=0.02)


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


# --------------------------------------------------------------------------------------------
# summary_lines: a band between two columns


def banded(shift: float = 0.0) -> pd.DataFrame:
    """Design effects with a low/high band about each: 2 runs x 3 sizes x 2 allocations."""
    return effects(shift).assign(low=lambda f: f["ours"] - 0.1, high=lambda f: f["ours"] + 0.1)


def test_summary_lines_draws_a_band_per_line_and_is_byte_identical():
    def draw(frame: pd.DataFrame) -> str:
        return summary_lines(frame, x="relevant", y="ours", hue="column", panel_by="run",
                             band=("low", "high"), figure_id="band",
                             labels={"low": "lower bound", "high": "upper bound"})

    document = draw(banded())
    # one filled band per line: 2 hues x 2 panels, beside the 4 lines
    assert len(re.findall(r'id="band-FillBetweenPolyCollection_\d+"|'
                          r'id="band-PolyCollection_\d+"', document)) == 4
    assert "lower bound to upper bound" in texts(document)
    assert draw(banded()) == document
    assert draw(banded(0.5)) != document
    named = summary_lines(banded(), x="relevant", y="ours", hue="column", panel_by="run",
                          band=("low", "high"), labels={"band": "95% interval"})
    assert "95% interval" in texts(named) and " to " not in texts(named)
    # without the band option the same rows draw no band (backwards compatible)
    plain = summary_lines(banded(), x="relevant", y="ours", hue="column", panel_by="run",
                          figure_id="band")
    assert "PolyCollection" not in plain and "lower bound" not in texts(plain)


def test_summary_lines_band_skips_missing_bounds_and_a_zero_width_band_has_no_legend():
    frame = banded().assign(low=lambda f: f["low"].where(f["relevant"] != 50))
    document = summary_lines(frame, x="relevant", y="ours", hue="column", panel_by="run",
                             band=("low", "high"), figure_id="gap")
    assert "low to high" in texts(document)
    point = banded().assign(low=lambda f: f["ours"], high=lambda f: f["ours"])
    assert "low to high" not in texts(summary_lines(point, x="relevant", y="ours",
                                                    hue="column", panel_by="run",
                                                    band=("low", "high")))


@pytest.mark.parametrize(("band", "message"), [
    ("low", "`band` must be a pair of column names (low, high); got 'low'."),
    (("low",), "`band` must be a pair of column names (low, high); got ('low',)."),
    (("low", "top"), "`band` must be a column of the frame; got 'top'."),
    (("low", "column"), "`band` must name numeric columns; 'column' holds str values."),
])
def test_summary_lines_rejects_a_bad_band(band, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        summary_lines(banded(), x="relevant", y="ours", hue="column", panel_by="run", band=band)
