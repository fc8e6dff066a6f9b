"""Drawing the figures a study declares (`studies.engine.Figure`) from its results.

A study lists the figures of its report page as plain data: which plot, which cells (a pandas
query over the grid parameters, ``where``), the plot's options and a caption. `draw` turns one
of them into SVG text with `studies.report.plots`, so that a study module never imports
matplotlib and every study's figures are drawn the same way.

How the cells are found:

* the line and heat-map figures read the study's results piece by piece, as
  `StudyResult.frames` does (the plain cells, then each packed group), and keep the tidy rows
  of the cells the query selects. The query runs on each piece's cell parameters (one row per
  cell) before any tidy row is built, so a full grid of millions of cells is neither built as
  one frame nor expanded group by group: only the selected pieces are;
* a zip plot needs one Monte Carlo cell's per-replicate intervals. A result from
  `studies.engine.run` keeps them in memory; a result read back from a run directory
  (`studies.engine.results_from_store`) does not, and `draw` then reads them from the run's
  store (`studies.engine.replicates.cell_estimates`, given ``run_dir``).

Parameters holding lists (say stratum sizes ``[200, 50, 20]``) are compared as their text, as
the plots label them and as claims compare them (`studies.engine.regions`):
``where="sizes == '[200, 50, 20]'"``.

A summary figure (``summary_bars``, ``summary_lines``) draws the study's summary table
(`Study.summary`, called on the result) rather than its cells: ``where`` stays empty and
``options["query"]``, a pandas query over the table's columns, selects the rows
(`summary_rows`). Summary tables often label a row by its cell, ``"relevant=5,
submitted=250, run=1"``; ``options["split"]`` names such a column, whose ``name=value`` pairs
become columns (numbers where they read as numbers) that the query and the plot can use:
``options={"split": "row", "query": "table == 'design effect (exact)' and submitted ==
1000", "x": "relevant", ...}``.

A figure whose query selects no cells raises ValueError with a one-line message naming the
figure, the study and the query, so that a report fails loudly when a grid changes under its
figures.

Every line figure colours a method the same way (`method_colours`: one colour per method name
of every discovered study), so that a method keeps its colour from figure to figure and from
page to page, whichever methods a figure shows. A figure without a title of its own gets one
in words: the study, what is drawn and the cells (or summary rows) it shows, the query read
out (``n <= 100 and design == 'srs'`` reads "cells with n ≤ 100 and design = srs").
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from studies.engine import CellResult, Figure, Study, StudyResult
from studies.engine.regions import region_mask
from studies.engine.replicates import cell_estimates, per_replicate
from studies.report import plots
from studies.suite import get_study, study_names

__all__ = ["SUMMARY_KINDS", "draw", "figure_rows", "method_colours", "summary_rows"]

_TITLE_WIDTH = 80  # characters per title line (a 7-inch figure at 11 pt)
SUMMARY_KINDS: tuple[str, ...] = ("summary_bars", "summary_lines")
"""The figure kinds drawn from a study's summary table rather than from its cells."""
_SELECTING = ("query", "split")  # options of a summary figure that select its rows
_COLOURED = ("coverage_against", "measure_by", "summary_lines")  # a colour per hue value
_SHOWN_TOGETHER = 100.0  # methods of one figure differ in colour before those of one study
_PAIR = re.compile(r",\s*(?=[A-Za-z_][A-Za-z0-9_]*=)")  # a comma that starts the next name=


class _Selection(ValueError):
    """The figure's query selects nothing, or is not a query over the study's parameters."""


def draw(figure: Figure, study: Study, result: StudyResult, *, figure_id: str,
         run_dir: str | Path | None = None,
         summary: Sequence[Mapping[str, Any]] | None = None) -> str:
    """Draw one of ``study``'s figures from its results, as SVG text.

    Parameters
    ----------
    figure : Figure
        The figure, usually one of ``study.figures``. Its ``options`` are the keyword
        arguments of the plot function of its ``kind`` (`studies.report.plots`), except for a
        ``zip_plot``, which takes ``method`` (required), ``nominal`` (default: the cell's
        ``confidence_level``, if it has one), ``replicates`` (draw the first ``k`` replicates
        only; default all) and ``title``, and for the summary figures (`SUMMARY_KINDS`),
        whose ``query`` and ``split`` select the rows (`summary_rows`).
    study : Study
        The study the results are of (a zip plot takes the cell's truth from it, a summary
        figure its summary table).
    result : StudyResult
        The study's results, from `studies.engine.run` or `studies.engine.results_from_store`.
    figure_id : str
        Id prefix of the SVG's elements (`studies.report.plots.svg`); distinct per figure of
        a page.
    run_dir : str or Path, optional
        The run directory, for a zip plot of a result read back without its estimates.
    summary : sequence of mappings, optional
        The study's summary rows, when already computed (a summary figure draws them instead
        of calling ``study.summary`` again).

    Returns
    -------
    str
        The SVG document. Its title is ``options["title"]`` or, by default, the study's name,
        what is drawn and the query.

    Raises
    ------
    ValueError
        When the query selects no cells (for a zip plot, no Monte Carlo cell; for a summary
        figure, no rows or a study without a summary), is not a valid query over the study's
        parameters (or summary columns), or the plot cannot be drawn from the selected rows;
        a one-line message names the figure and the reason.
    """
    options = dict(figure.options)
    try:
        if figure.kind == "zip_plot":
            return _zip(figure, study, result, options, figure_id, run_dir)
        if figure.kind in SUMMARY_KINDS:
            rows = summary_rows(figure, study, result, summary)
            for name in _SELECTING:
                options.pop(name, None)
        else:
            rows = figure_rows(figure, study, result)
            _informative(rows, figure, study)
        title = _wrap(options.pop("title", None) or _title(figure, study))
        if figure.kind in _COLOURED:
            options.setdefault("colours", method_colours())
        if figure.kind == "summary_bars":
            return plots.summary_bars(rows, **options, title=title, figure_id=figure_id)
        if figure.kind == "summary_lines":
            return plots.summary_lines(rows, **options, title=title, figure_id=figure_id)
        if figure.kind == "coverage_against":
            return plots.coverage_against(rows, **options, title=title, figure_id=figure_id)
        if figure.kind == "measure_by":
            return plots.measure_by(rows, **options, title=title, figure_id=figure_id)
        if figure.kind == "heat_map":
            return plots.heat_map(rows, **options, title=title, figure_id=figure_id)
    except _Selection:
        raise
    except (ValueError, TypeError) as error:  # the plot's own reason, or a bad option name
        raise ValueError(f"{_name(figure, study)} cannot be drawn: {_first_line(error)}"
                         ) from error
    raise ValueError(f"{_name(figure, study)} has an unknown kind {figure.kind!r}.")


def _informative(rows: pd.DataFrame, figure: Figure, study: Study) -> None:
    """A figure whose every value is the same carries nothing a reader can see on this grid:
    it is left out, with a line saying so (`_Selection`), rather than drawn flat."""
    values = pd.to_numeric(rows["value"], errors="coerce").dropna()
    if len(values) > 1 and float(values.max() - values.min()) <= 1e-12 * max(
            1.0, float(values.abs().max())):
        raise _Selection(f"{_name(figure, study)} is left out: every value it would draw is "
                         f"{float(values.iloc[0]):.4g} on this grid")


@functools.cache
def method_colours() -> dict[str, str]:
    """One colour per method name of every discovered study (`plots.group_colours`).

    A method keeps its colour in every figure of every study, whichever methods a figure
    shows. The methods a line figure shows together (its ``methods``, or all the study's
    when it draws a line per method without naming them) differ in colour while the
    palette lasts (7 colours), and so, less strictly, do the methods of one study; studies
    in name order, methods in their order. Hue values that are not method names (a
    prevalence, a source) take the palette in order.

    Computed once per process: it reads every study's figures (about 100 ms), and every
    figure drawn asks for it.
    """
    groups: list[list[str]] = []
    weights: list[float] = []
    for name in study_names():
        study = get_study(name)
        for figure in study.figures:
            if figure.kind in _COLOURED and figure.options.get("hue", "method") == "method":
                groups.append(list(figure.options.get("methods") or study.methods))
                weights.append(_SHOWN_TOGETHER)
        groups.append(list(study.methods))
        weights.append(1.0)
    return plots.group_colours(groups, weights=weights)


def figure_rows(figure: Figure, study: Study, result: StudyResult) -> pd.DataFrame:
    """The tidy rows a line or heat-map figure draws.

    The rows (`StudyResult.to_frame` columns) of the cells ``figure.where`` selects, of the
    figure's measure (``coverage`` for ``coverage_against``, else ``options["measure"]``) and
    of its methods (``options["methods"]`` or ``options["method"]``, when given).

    Raises
    ------
    ValueError
        When the query is invalid, or selects no cells or none with such rows (one line
        naming the figure, the study and the query).
    """
    options = figure.options
    measure = "coverage" if figure.kind == "coverage_against" else options.get("measure")
    methods = options.get("methods")
    if methods is None and options.get("method") is not None:
        methods = [options["method"]]
    kept: list[pd.DataFrame] = []
    selected = False
    for piece in _selected_pieces(figure, study, result, None if methods is None
                                  else list(methods), None if measure is None else [measure]):
        selected = True
        if not piece.empty:
            kept.append(piece)
    if not selected:
        raise _Selection(_nothing(figure, study))
    if not kept:
        of = f" of methods {list(methods)}" if methods is not None else ""
        raise _Selection(f"{_name(figure, study)}: its cells have no {measure} rows{of}; "
                         f"where={figure.where!r}")
    return kept[0] if len(kept) == 1 else pd.concat(kept, ignore_index=True)


def summary_rows(figure: Figure, study: Study, result: StudyResult,
                 summary: Sequence[Mapping[str, Any]] | None = None) -> pd.DataFrame:
    """The rows of the study's summary table a summary figure draws.

    ``study.summary(result)`` (or ``summary``, those rows already computed) as a frame; the
    ``name=value`` pairs of the column ``figure.options["split"]`` (if given) as columns of
    their own, numeric where every value reads as a number (rows without such pairs get no
    value); then the rows that
    ``figure.options["query"]`` (if given) selects.

    Raises
    ------
    ValueError
        When the study has no summary, the figure has a ``where`` (a summary figure selects
        with its query), ``split`` names no text column or a pair's name is already a
        column, or the query is invalid or selects no rows (one line naming the figure).
    """
    if study.summary is None:
        raise _Selection(f"{_name(figure, study)}: a {figure.kind} figure draws the study's "
                         "summary table, and the study has none (Study.summary)")
    if figure.where:
        raise _Selection(f"{_name(figure, study)}: a {figure.kind} figure selects summary rows "
                         f"with options['query'], not where; where={figure.where!r}")
    found = study.summary(result) if summary is None else summary
    rows = pd.DataFrame.from_records([dict(row) for row in found])
    split, query = figure.options.get("split"), figure.options.get("query", "")
    if split is not None:
        try:
            rows = _split(rows, split)
        except ValueError as error:
            raise _Selection(f"{_name(figure, study)}: {error}") from None
    try:
        selected = rows[region_mask(rows, query)].reset_index(drop=True)
    except Exception as error:  # pandas raises many kinds for a bad query
        raise _Selection(f"{_name(figure, study)} has a query that is not a query over its "
                         f"summary columns ({_first_line(error)}); query={query!r}") from error
    if selected.empty:
        raise _Selection(f"{_name(figure, study)} selects no summary rows; query={query!r}")
    return selected


def _split(rows: pd.DataFrame, column: str) -> pd.DataFrame:
    """``rows`` with the ``name=value`` pairs of a text column as columns of their own.

    A comma ends a pair only where the next ``name=`` starts, so that a list value
    (``sizes=[200, 50]``) stays whole.

    Examples
    --------
    >>> labels = pd.DataFrame({"row": ["n=5, sizes=[2, 3]", "n=50, sizes=[4, 5]", "total"]})
    >>> _split(labels, "row")[["n", "sizes"]].to_dict("list")
    {'n': [5.0, 50.0, nan], 'sizes': ['[2, 3]', '[4, 5]', nan]}
    """
    if column not in rows.columns or pd.api.types.is_numeric_dtype(rows[column]):
        raise ValueError(f"options['split'] must name a text column of the summary "
                         f"({', '.join(map(str, rows.columns))}); got {column!r}")
    pairs = [{name.strip(): value.strip() for name, _, value in
              (part.partition("=") for part in _PAIR.split(str(text)) if "=" in part)}
             for text in rows[column]]
    found = pd.DataFrame.from_records(pairs, index=rows.index)
    clash = [name for name in found.columns if name in rows.columns]
    if clash:
        raise ValueError(f"options['split'] column {column!r} names {clash[0]!r}, already a "
                         "column of the summary")
    for name in found.columns:
        numbers = pd.to_numeric(found[name], errors="coerce")
        if numbers.notna().sum() == found[name].notna().sum():  # every value is a number
            found[name] = numbers
    return rows.join(found)


# --------------------------------------------------------------------------------------------
# Selecting cells


def _selected_pieces(figure: Figure, study: Study, result: StudyResult,
                     methods: list[str] | None, measures: list[str] | None
                     ) -> Iterator[pd.DataFrame]:
    """The tidy rows of the selected cells: the plain cells', then each packed group's.

    The query runs on the cells' parameters (on the groups', `StudyResult.frames`); only
    selected cells become tidy rows, and only those of ``methods`` and ``measures`` (None:
    all). A packed group without a selected cell is not read.
    """
    if result.cells:
        chosen = _chosen(figure, study, [dict(c.params) for c in result.cells])
        if chosen.size:
            cells = tuple(result.cells[i] for i in chosen)
            yield _rows(StudyResult(result.study, cells, parameters=result.parameters),
                        methods, measures)
    if result.groups:
        packed = StudyResult(result.study, groups=result.groups, parameters=result.parameters)
        try:
            yield from packed.frames(methods=methods, measures=measures, where=figure.where)
        except Exception as error:  # pandas raises many kinds for a bad query
            raise _Selection(f"{_name(figure, study)} has a `where` that is not a query over "
                             f"its parameters ({_first_line(error)}); where={figure.where!r}"
                             ) from error


def _rows(result: StudyResult, methods: list[str] | None, measures: list[str] | None
          ) -> pd.DataFrame:
    found = list(result.frames(methods=methods, measures=measures))
    return pd.concat(found, ignore_index=True) if found else pd.DataFrame()


def _chosen(figure: Figure, study: Study,
            params: Sequence[Mapping[str, Any]] | pd.DataFrame) -> NDArray[np.intp]:
    """Indices of the cells (rows of ``params``) that ``figure.where`` selects."""
    frame = params if isinstance(params, pd.DataFrame) else pd.DataFrame(list(params))
    try:
        return np.flatnonzero(region_mask(frame, figure.where))
    except Exception as error:  # pandas raises many kinds for a bad query
        raise _Selection(f"{_name(figure, study)} has a `where` that is not a query over its "
                         f"parameters ({_first_line(error)}); where={figure.where!r}"
                         ) from error


# --------------------------------------------------------------------------------------------
# Zip plot


def _zip(figure: Figure, study: Study, result: StudyResult, options: dict[str, Any],
         figure_id: str, run_dir: str | Path | None) -> str:
    """The zip plot of ``options["method"]`` in the first Monte Carlo cell selected."""
    method = options.get("method")
    if not isinstance(method, str):
        raise _Selection(f"{_name(figure, study)}: a zip_plot needs options['method'], a method "
                         f"name; got {method!r}")
    cells = [c for c in result.cells if c.path == "monte-carlo"]
    chosen = (_chosen(figure, study, [dict(c.params) for c in cells]) if cells
              else np.empty(0, dtype=np.intp))
    if not chosen.size:
        raise _Selection(_nothing(figure, study) + " (a zip plot needs a Monte Carlo cell)")
    cell = cells[int(chosen[0])]
    if cell.estimates:
        estimates = per_replicate(cell.estimates)
    elif run_dir is not None:
        estimates = cell_estimates(run_dir, study.name, cell.params)
    else:
        raise _Selection(f"{_name(figure, study)}: cell {dict(cell.params)} was read without "
                         "its estimates; pass run_dir, the run directory")
    if "low" not in estimates.get(method, {}) or "high" not in estimates[method]:
        raise _Selection(f"{_name(figure, study)}: method {method!r} has no intervals in cell "
                         f"{dict(cell.params)} (methods: {', '.join(estimates)})")
    low, high = estimates[method]["low"], estimates[method]["high"]
    shown = _cell_text(study, cell)
    if options.get("replicates") is not None and int(options["replicates"]) < low.size:
        shown += f" (the first {int(options['replicates'])} of {low.size} replicates)"
        low, high = low[:int(options["replicates"])], high[:int(options["replicates"])]
    nominal = options.get("nominal", cell.params.get("confidence_level"))
    title = _wrap(options.get("title") or f"{study.name}, {method}: {shown}")
    return plots.zip_plot(low, high, study.truth(cell.params), title=title,
                          nominal=None if nominal is None else float(nominal),
                          figure_id=figure_id)


def _cell_text(study: Study, cell: CellResult) -> str:
    """The cell's parameters that vary in some grid of the study (all when none does)."""
    varying = {name for grid in study.grids.values()
               for name, values in grid.parameters.items() if len(values) > 1}
    shown = {k: v for k, v in cell.params.items() if k in varying} or dict(cell.params)
    return ", ".join(f"{k} = {v}" for k, v in shown.items())


# --------------------------------------------------------------------------------------------
# Messages and titles


def _name(figure: Figure, study: Study) -> str:
    """``figure 'caption...' of study NAME``, the caption cut to about 40 characters."""
    caption = textwrap.shorten(figure.caption, 40, placeholder="...")
    return f"figure {caption!r} of study {study.name}"


def _nothing(figure: Figure, study: Study) -> str:
    """The one-line message of a figure whose query selects no cells."""
    return f"{_name(figure, study)} selects no cells; where={figure.where!r}"


def _first_line(error: BaseException) -> str:
    """An error's message on one line (its type when it has none)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _title(figure: Figure, study: Study) -> str:
    """The default title, in words: the study, what is drawn, and the cells (or summary rows)
    shown, the query read out (`_in_words`)."""
    options = figure.options
    labels = {str(key): str(text) for key, text in (options.get("labels") or {}).items()}

    def named(column: Any) -> str:
        return labels.get(str(column), str(column))

    def measure(name: Any) -> str:  # the axis label without its units
        return plots.MEASURE_LABELS.get(str(name), str(name)).split(" (")[0]

    x = named(options.get("x"))
    if figure.kind == "coverage_against":
        what = f"coverage against {x}"
    elif figure.kind == "measure_by":
        what = f"{measure(options.get('measure'))} against {x}"
    elif figure.kind == "summary_bars":
        what = f"{', '.join(named(b) for b in options.get('bars') or ())} by {x}"
    elif figure.kind == "summary_lines":
        what = f"{named(options.get('y'))} against {x}"
    else:
        what = (f"{measure(options.get('measure'))} of {options.get('method')} by "
                f"{options.get('rows')} and {options.get('columns')}")
    if options.get("panel_by"):
        what += f", a panel per {named(options['panel_by'])}"
    if options.get("hue") not in (None, "method") and figure.kind != "heat_map":
        what += f", a line per {named(options['hue'])}"
    summary = figure.kind in SUMMARY_KINDS
    where = options.get("query", "") if summary else figure.where
    shown = f" ({'rows' if summary else 'cells'} with {_in_words(where)})" if where else ""
    return f"{study.name}: {what}{shown}"


_OPERATORS = {ast.Eq: "=", ast.NotEq: "≠", ast.Lt: "<", ast.LtE: "≤", ast.Gt: ">",
              ast.GtE: "≥", ast.In: "=", ast.NotIn: "other than"}


def _in_words(query: str) -> str:
    """A pandas query read out: ``==`` as "=", ``<=`` as "≤", text without its quotes, a
    list as "a, b or c", ``x == x`` (a value that is not nan) as "x given"; a query it cannot
    read is returned as written.

    Examples
    --------
    >>> _in_words("n <= 100 and design == 'srs' and d in [1, 10, 50]")
    'n ≤ 100 and design = srs and d = 1, 10 or 50'
    >>> _in_words("table == 'policies' and (wait == wait or path != 'exact')")
    'table = policies and (wait given or path ≠ exact)'
    """
    try:
        return _spoken(ast.parse(query.strip(), mode="eval").body)
    except (SyntaxError, ValueError):
        return query


def _spoken(node: ast.expr, nested: bool = False) -> str:
    """One node of a query read out (`_in_words`); ValueError on a node it cannot read."""
    if isinstance(node, ast.BoolOp | ast.BinOp) and isinstance(
            getattr(node, "op", None), ast.And | ast.Or | ast.BitAnd | ast.BitOr):
        word = " and " if isinstance(node.op, ast.And | ast.BitAnd) else " or "
        parts = node.values if isinstance(node, ast.BoolOp) else [node.left, node.right]
        text = word.join(_spoken(part, nested=True) for part in parts)
        return f"({text})" if nested and word == " or " else text
    if isinstance(node, ast.Compare):
        if (len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq)
                and isinstance(node.left, ast.Name) and isinstance(node.comparators[0], ast.Name)
                and node.left.id == node.comparators[0].id):
            return f"{node.left.id} given"
        words = [_spoken(node.left)]
        for op, right in zip(node.ops, node.comparators, strict=True):
            if type(op) not in _OPERATORS:
                raise ValueError(f"no words for {type(op).__name__}")
            words += [_OPERATORS[type(op)], _spoken(right)]
        return " ".join(words)
    if isinstance(node, ast.List | ast.Tuple | ast.Set) and node.elts:
        items = [_spoken(item) for item in node.elts]
        return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name | ast.Constant | ast.UnaryOp):
        return ast.unparse(node)
    raise ValueError(f"no words for {type(node).__name__}")


def _wrap(text: str) -> str:
    """A title broken into lines of at most `_TITLE_WIDTH` characters (its own breaks kept)."""
    return "\n".join(textwrap.fill(line, _TITLE_WIDTH) for line in text.splitlines()) or text
