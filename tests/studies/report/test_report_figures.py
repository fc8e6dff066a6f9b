"""The figures the studies declare draw from a quick run (`studies.report.figures`)."""

import dataclasses
import io
import re
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from studies.engine import Figure, Grid, results_from_store, run
from studies.engine.replicates import cell_estimates
from studies.engine.store import existing_store
from studies.report.figures import draw, figure_rows, method_colours
from studies.suite import get_study, study_names

SVG = "{http://www.w3.org/2000/svg}"
ZIP_FIGURES = [(name, index) for name in study_names()
               for index, figure in enumerate(get_study(name).figures, start=1)
               if figure.kind == "zip_plot"]


@pytest.fixture(scope="module")
def results(quick_run):
    """Every study's results read back from the shared quick run (without estimates)."""
    return results_from_store(quick_run)


def _group(svg, group_id):
    """The ``<g>`` element with this id."""
    found = [g for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("id") == group_id]
    assert len(found) == 1, f"expected one group {group_id!r}, got {len(found)}"
    return found[0]


def _misses(low, high, truth):
    """Number of intervals that do not contain the truth."""
    return int(np.count_nonzero((np.asarray(low) > truth) | (np.asarray(high) < truth)))


@pytest.mark.parametrize("name", study_names())
def test_every_study_declares_a_figure_with_a_caption(name):
    figures = get_study(name).figures
    assert figures
    assert all(isinstance(f, Figure) and len(f.caption) > 20 for f in figures)


def _drawn(figure, study, result, figure_id, run_dir):
    """The figure's SVG, or None where it is left out for drawing one value everywhere (the
    one reason a declared figure may not be drawn from the quick run; its rows checked)."""
    try:
        return draw(figure, study, result, figure_id=figure_id, run_dir=run_dir)
    except ValueError as error:
        if "is left out: every value it would draw is" not in str(error):
            raise
        values = figure_rows(figure, study, result)["value"].dropna()
        assert values.nunique() == 1, str(error)
        return None


@pytest.mark.parametrize("name", study_names())
def test_every_declared_figure_draws_from_the_quick_run(name, results, quick_run):
    study = get_study(name)
    for index, figure in enumerate(study.figures, start=1):
        figure_id = f"{name}-{index}"
        svg = _drawn(figure, study, results[name], figure_id, quick_run)
        if svg is None:
            continue
        root = ET.fromstring(svg)
        assert root.tag == f"{SVG}svg"
        ids = [e.get("id") for e in root.iter() if e.get("id")]
        assert ids and all(i.startswith(f"{figure_id}-") for i in ids)
        assert name in svg  # the default title names the study


@pytest.mark.parametrize(("name", "index"), ZIP_FIGURES)
def test_zip_plot_from_the_run_directory_draws_every_miss(name, index, results, quick_run):
    study = get_study(name)
    figure = study.figures[index - 1]
    # the first Monte Carlo cell the query selects, found without the module under test
    cells = [c for c in results[name].cells if c.path == "monte-carlo"]
    first = pd.DataFrame([c.params for c in cells]).query(figure.where).index[0]
    params = cells[first].params
    store = existing_store(quick_run)
    try:
        row = next(r for r in store.cells(with_estimates=True)
                   if r["study"] == name and r["position"] == cells[first].position)
    finally:
        store.close()
    with np.load(io.BytesIO(row["estimates"])) as data:
        method = figure.options["method"]
        low, high = data[f"{method}/low"], data[f"{method}/high"]
    kept = figure.options.get("replicates", low.size)
    expected = _misses(low[:kept], high[:kept], study.truth(params))
    assert 0 < expected < min(kept, low.size)

    svg = draw(figure, study, results[name], figure_id="zip", run_dir=quick_run)
    assert len(_group(svg, "zip-misses").findall(f"{SVG}path")) == expected
    assert f"misses ({expected})" in svg
    assert cell_estimates(quick_run, name, params)[method]["low"].size == low.size


def test_zip_plot_of_a_result_read_without_estimates_needs_the_run_directory(results):
    study = get_study("mean_bias")
    figure = next(f for f in study.figures if f.kind == "zip_plot")
    with pytest.raises(ValueError, match="pass run_dir") as error:
        draw(figure, study, results["mean_bias"], figure_id="zip")
    assert "\n" not in str(error.value)


def test_zip_plot_draws_from_an_in_memory_run():
    study = get_study("mean_bias")
    figure = Figure("zip_plot", "The t interval at n = 10.", where="n == 10",
                    options={"method": "mean", "nominal": 0.95})
    result = run([study], grid=Grid({"distribution": ["exponential"], "n": [10]},
                                    n_replicates=400), rng=7, workers=1)["mean_bias"]
    cell = result.cells[0]
    with np.load(io.BytesIO(cell.estimates)) as data:
        expected = _misses(data["mean/low"], data["mean/high"], 1.0)
    svg = draw(figure, study, result, figure_id="memory")
    assert 0 < expected < 400
    assert len(_group(svg, "memory-misses").findall(f"{SVG}path")) == expected
    assert f"misses ({expected})" in svg
    assert f"coverage {1 - expected / 400:.3f}" in svg


@pytest.mark.parametrize(("kind", "options"), [
    ("coverage_against", {"x": "p", "panel_by": "n"}),
    ("measure_by", {"measure": "width", "x": "p"}),
    ("heat_map", {"measure": "coverage", "method": "wald", "rows": "n", "columns": "p"}),
    ("zip_plot", {"method": "wald"}),
])
def test_a_figure_selecting_no_cells_raises_a_one_line_error(kind, options, results, quick_run):
    study = get_study("binomial_coverage")
    figure = Figure(kind, "Coverage where there is no grid cell at all.", where="n == 7",
                    options=options)
    with pytest.raises(ValueError, match=r"of study binomial_coverage selects no cells; "
                                         r"where='n == 7'") as error:
        draw(figure, study, results["binomial_coverage"], figure_id="none", run_dir=quick_run)
    assert "\n" not in str(error.value)
    assert "Coverage where there" in str(error.value)


def test_a_query_over_unknown_parameters_raises_a_one_line_error(results):
    study = get_study("bias_f1")
    figure = Figure("measure_by", "Bias by an unknown parameter.", where="rho == 0",
                    options={"measure": "bias", "x": "n"})
    with pytest.raises(ValueError, match="not a query over its parameters") as error:
        draw(figure, study, results["bias_f1"], figure_id="bad")
    assert "\n" not in str(error.value)


def test_a_figure_the_plot_cannot_draw_names_the_figure_and_the_reason(results):
    study = get_study("bias_f1")
    figure = Figure("measure_by", "Bias against n, every cell at once.",
                    options={"measure": "bias", "x": "n"})
    with pytest.raises(ValueError, match=r"of study bias_f1 cannot be drawn: .*filter") as error:
        draw(figure, study, results["bias_f1"], figure_id="many")
    assert "\n" not in str(error.value)


# --------------------------------------------------------------------------------------------
# Figures of a study's summary table


@pytest.fixture(scope="module")
def small():
    """A tiny in-memory run of mean_bias (a study without a summary table)."""
    study = get_study("mean_bias")
    grid = Grid({"distribution": ["exponential"], "n": [10]}, n_replicates=50)
    return study, run([study], grid=grid, rng=7, workers=1)["mean_bias"]


def _summary(result):
    """Design-effect-like rows labelled by cell, and a total row without a label to split."""
    rows = [{"table": "effect", "row": f"n={n}, sizes=[{n}, 2], run={r}", "column": method,
             "ours": 1.0 + 0.1 * k + n / 1000, "spread": 0.0}
            for n in (10, 100, 1000) for r in (1, 2) for k, method in enumerate(("a", "b"))]
    return [*rows, {"table": "total", "row": "all", "column": "a", "ours": 3.0, "spread": 0.1}]


def _lines(**options):
    return Figure("summary_lines", "The effect against n, a line per method.",
                  options={"split": "row", "query": "table == 'effect'", "x": "n", "y": "ours",
                           "hue": "column", "panel_by": "run", **options})


def test_a_summary_figure_splits_labels_into_columns_and_selects_rows_by_its_query(small):
    study, result = small
    study = dataclasses.replace(study, summary=_summary)
    svg = draw(_lines(reference=1.0), study, result, figure_id="effect")
    assert svg == draw(_lines(reference=1.0), study, result, figure_id="effect")
    words = " ".join("".join(t.itertext()) for t in ET.fromstring(svg).iter(f"{SVG}text"))
    for text in ("run = 1", "run = 2", "reference (1)", "mean_bias: ours against n, a panel "
                 "per run, a line per column (rows with table = effect)"):
        assert text in words
    # a split list value stays whole, and the query can use it
    narrowed = _lines(query="table == 'effect' and sizes == '[10, 2]'", x="run", panel_by=None)
    assert "sizes = [10, 2]" in draw(narrowed, study, result, figure_id="narrow")


@pytest.mark.parametrize(("figure", "message"), [
    (_lines(query="table == 'effect' and n == 7"),
     r"selects no summary rows; query=\"table == 'effect' and n == 7\"$"),
    (_lines(query="size == 7"), r"has a query that is not a query over its summary columns"),
    (_lines(split="ours"), r"options\['split'\] must name a text column of the summary"),
    (dataclasses.replace(_lines(), where="n == 10"),
     r"selects summary rows with options\['query'\], not where; where='n == 10'$"),
    (_lines(query="table == 'effect' and run == 1", panel_by=None, hue=None),
     r"cannot be drawn: `frame` has several rows per \(n\), differing in column: select"),
])
def test_a_summary_figure_that_cannot_select_its_rows_raises_a_one_line_error(
        small, figure, message):
    study, result = small
    study = dataclasses.replace(study, summary=_summary)
    with pytest.raises(ValueError, match=message) as error:
        draw(figure, study, result, figure_id="bad")
    assert "\n" not in str(error.value)
    assert "of study mean_bias" in str(error.value)


def test_a_split_label_may_not_name_a_column_the_summary_has(small):
    study, result = small
    study = dataclasses.replace(study, summary=lambda r: [{"row": "ours=1", "ours": 2.0}])
    with pytest.raises(ValueError, match=r"options\['split'\] column 'row' names 'ours', "
                                         r"already a column of the summary$") as error:
        draw(_lines(query=""), study, result, figure_id="clash")
    assert "\n" not in str(error.value)


def test_a_summary_figure_of_a_study_without_a_summary_raises_a_one_line_error(small):
    study, result = small
    assert study.summary is None
    with pytest.raises(ValueError, match=r"^figure 'The effect against n, a line per method\.' "
                                         r"of study mean_bias: a summary_lines figure draws the "
                                         r"study's summary table, and the study has none"
                       ) as error:
        draw(_lines(), study, result, figure_id="none")
    assert "\n" not in str(error.value)


def test_the_table2_figure_draws_ours_beside_the_paper_in_every_panel(results):
    study = get_study("stratified_vs_pooled")
    figure = next(f for f in study.figures if f.kind == "summary_bars")
    svg = draw(figure, study, results["stratified_vs_pooled"], figure_id="t2")
    assert svg == draw(figure, study, results["stratified_vs_pooled"], figure_id="t2")
    groups = {g.get("id"): g for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("id")}
    # 5 Table 2 rows x 4 panels (runs 1-3 and total) x (ours, paper)
    assert len([i for i in groups if i.startswith("t2-bar-")]) == 5 * 4 * 2
    for panel in range(4):  # ours carries its sd over the 10 evaluations, the paper none
        assert len(list(groups[f"t2-error-{panel}-0"].iter(f"{SVG}path"))) == 5
        assert f"t2-error-{panel}-1" not in groups


# --------------------------------------------------------------------------------------------
# Figures that read alone


def _lines_by_method(svg, figure_id):
    """The stroke colour of each line drawn per hue value (``<id>-line-<panel>-<i>-<value>``
    groups), by the value's text."""
    found = {}
    for g in ET.fromstring(svg).iter(f"{SVG}g"):
        match = re.fullmatch(rf"{figure_id}-line-\d+-\d+-([\w-]+?)", g.get("id", ""))
        if match and not match.group(1).endswith(("-error", "-inside", "-outside")):
            colour = re.search(r"stroke: (#[0-9a-f]{6})", ET.tostring(g, encoding="unicode"))
            found.setdefault(match.group(1), set()).add(colour.group(1))
    return found


@pytest.fixture(scope="module")
def binomial():
    """A small exact run of binomial_coverage (wald and wilson)."""
    study = get_study("binomial_coverage")
    grid = Grid({"n": [10, 30], "p": [0.1, 0.3, 0.5], "confidence_level": [0.95]},
                n_replicates=2)
    return study, run([study], grid=grid, rng=1, workers=1)["binomial_coverage"]


def test_a_method_keeps_its_colour_in_every_figure_whichever_methods_it_shows(binomial):
    study, result = binomial
    alone = Figure("coverage_against", "Wilson's coverage alone, against p by n.",
                   options={"x": "p", "panel_by": "n", "methods": ("wilson",)})
    both = Figure("measure_by", "The widths of both intervals against p by n.",
                  options={"measure": "width", "x": "p", "panel_by": "n"})
    colours = {**{f"alone {k}": v for k, v in _lines_by_method(
        draw(alone, study, result, figure_id="alone"), "alone").items()},
               **{f"both {k}": v for k, v in _lines_by_method(
                   draw(both, study, result, figure_id="both"), "both").items()}}
    wilson = method_colours()["wilson"].lower()
    assert colours == {"alone wilson": {wilson}, "both wilson": {wilson},
                       "both wald": {method_colours()["wald"].lower()}}
    assert method_colours()["wald"] != method_colours()["wilson"]


def test_the_methods_a_figure_of_the_suite_shows_differ_in_colour():
    colours = method_colours()
    for name in study_names():
        study = get_study(name)
        for figure in study.figures:
            shown = figure.options.get("methods")
            if shown and len(shown) <= 7:
                assert len({colours[m] for m in shown}) == len(shown), (name, shown)


def test_a_default_title_reads_the_study_the_measure_and_the_cells_in_words(binomial):
    study, result = binomial
    figure = Figure("measure_by", "Wald's and Wilson's widths where n <= 10, against p.",
                    where="n <= 10 and p in [0.1, 0.3]",
                    options={"measure": "width", "x": "p", "hue": "method"})
    words = " ".join("".join(t.itertext()) for t in ET.fromstring(
        draw(figure, study, result, figure_id="title")).iter(f"{SVG}text"))
    assert ("binomial_coverage: mean interval width against p (cells with n ≤ 10 and p = "
            "0.1 or 0.3)") in words
    assert "<=" not in words and "==" not in words


@pytest.mark.parametrize("name", study_names())
def test_a_method_has_one_colour_on_its_study_s_page(name, results, quick_run):
    study = get_study(name)
    seen = {}
    for index, figure in enumerate(study.figures, start=1):
        if figure.kind == "zip_plot":
            continue
        svg = _drawn(figure, study, results[name], f"p{index}", quick_run)
        if svg is None:
            continue
        for value, colours in _lines_by_method(svg, f"p{index}").items():
            if value in study.methods:
                seen.setdefault(value, set()).update(colours)
    assert all(colours == {method_colours()[m].lower()} for m, colours in seen.items()), seen


def test_the_table1_figure_draws_a_lone_sample_size_as_a_category_coloured_by_the_band(
        results):
    study = get_study("power_calibration")
    figure = study.figures[0]
    svg = draw(figure, study, results["power_calibration"], figure_id="t1")
    words = " ".join("".join(t.itertext()) for t in ET.fromstring(svg).iter(f"{SVG}text"))
    for text in ("0.93 ± 0.02", "inside the band", "pass rate among attempts", "f = 0.8",
                 "prevalence"):
        assert text in words
    drawn = pd.DataFrame([c.params for c in results["power_calibration"].expanded().cells])
    r_values = set(drawn.query(figure.where)["r"])  # the cells of the figure's region
    ticks = set(re.findall(r">(\d+)</text>", svg))
    assert {str(r) for r in r_values} <= ticks
    if len(r_values) == 1:  # the quick grid: no ticks around the lone value
        (r,) = r_values
        assert not {str(r - 20), str(r + 20), str(r - 10), str(r + 10)} & ticks
    judged = [g for g in ET.fromstring(svg).iter(f"{SVG}g")
              if re.fullmatch(r"t1-line-\d+-\d+-[\w]+-(inside|outside)", g.get("id", ""))]
    assert judged


def test_a_run_whose_method_left_a_figure_nothing_to_draw_still_writes_its_verdicts(tmp_path):
    # the median fails in every cell: its figure cannot be drawn; the page says so in the
    # figure's place, and the run's verdicts, tables and page are written all the same
    from studies.pipeline import run_suite

    study = get_study("mean_bias")

    def broken(data, params):
        raise FloatingPointError("no median today")

    figure = Figure("measure_by", "Bias of the median against n.",
                    options={"measure": "bias", "x": "n", "methods": ("median",)})
    grid = Grid({"distribution": ["exponential"], "n": [10, 20]}, n_replicates=50)
    changed = dataclasses.replace(study, methods={**study.methods, "median": broken},
                                  figures=(figure,))
    published = run_suite([changed], grid=grid, out=tmp_path / "run", rng=7, workers=1)
    with pytest.raises(ValueError, match=r"its cells have no bias rows of methods \['median'\]"):
        draw(figure, changed, published.results["mean_bias"], figure_id="m")
    svg = (tmp_path / "run" / "figures" / "mean_bias-1.svg").read_text()
    assert "Not drawn from this run:" in svg and 'id="mean_bias-1"' in svg
    ET.fromstring(svg[svg.index("<svg"):])  # well-formed
    page = (tmp_path / "run" / "mean_bias.html").read_text()
    assert "Not drawn from this run:" in page and "median-biased-for-skewed-data" in page
    assert published.verdicts["mean_bias"] and (tmp_path / "run" / "summary.md").is_file()


def test_a_figure_whose_every_value_is_the_same_is_left_out_with_a_line():
    from studies.report.figures import _informative

    study = get_study("binomial_coverage")
    figure = study.figures[0]
    flat = pd.DataFrame({"value": [1.0, 1.0, 1.0], "method": ["wald", "wilson", "wald"]})
    with pytest.raises(ValueError, match=r"is left out: every value it would draw is 1 on "
                                         r"this grid$"):
        _informative(flat, figure, study)
    _informative(flat.assign(value=[1.0, 0.9, 1.0]), figure, study)  # something to see
