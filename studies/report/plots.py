"""Figures of a study's results, each returned as SVG text ready to inline in a report.

The figures read the tidy frame of a run (``results_from_store(DIR).to_frame()`` or
``StudyResult.to_frame()``: one row per study, cell, method and measure, with the cell's
parameters, ``value`` and ``mcse``):

* `coverage_against`: coverage against a grid parameter, a line per method, a panel per value
  of another parameter, the nominal level dashed (Brown, Cai & DasGupta 2001, figures 1-5);
* `measure_by`: any measure against a grid parameter, a line per method (or per value of
  another parameter), with +-1.96 MCSE error bars on Monte Carlo cells;
* `heat_map`: one method's measure over two grid parameters, cells annotated;
* `zip_plot`: the intervals of one Monte Carlo cell ranked by ``|z|`` (Morris, White &
  Crowther 2019, figure 4); `zip_ranking` computes the ranking it draws.

Two figures read a study's summary table instead (`studies.engine.Study.summary`: rows of
named columns, such as ``table, row, column, ours, spread, paper``):

* `summary_bars`: columns side by side (ours beside the paper's), a group of bars per value
  of a column, error bars from another column (an sd), a panel per value of a third;
* `summary_lines`: one column against another, a line per value of a third (e.g. a design
  effect against the number of relevant documents, a line per allocation).

How the line figures read alone:

* a hue level takes its colour from ``colours`` when given (`group_colours` makes one colour
  per method name for a whole suite, so a method keeps its colour from figure to figure),
  else the next palette colour; a colour met twice in a figure changes its line style;
* error bars and bands stop at the range the measure can take (`MEASURE_RANGES`: a coverage
  bar never runs past 1, a width never below 0);
* an x parameter of text, one declared ``categorical`` (topic ids) or one with a single value
  is drawn as categories: points side by side at each category, no line joining them.

Every figure is a `matplotlib.figure.Figure` built without pyplot (no global figure registry)
and written by `svg`, which gives the same bytes for the same data: no date, fixed hash salt
for clip-path and marker ids, text kept as text (searchable, small), and every element id
prefixed by the figure's id so that several figures inlined in one HTML page never share an
id. Colours are the Okabe-Ito palette (colour-blind safe) without its yellow. The figures set
matplotlib's rc parameters (fonts, palette) for the time they are built, through
`matplotlib.rc_context`: build them from one thread at a time.

References
----------
.. [BCD2001] Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation for a binomial
   proportion. *Statistical Science* 16, 101-133.
.. [MWC2019] Morris, T. P., White, I. R. & Crowther, M. J. (2019). Using simulation studies to
   evaluate statistical methods. *Statistics in Medicine* 38, 2074-2102.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
import textwrap
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from cycler import cycler
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.collections import LineCollection
from matplotlib.colors import CenteredNorm, Normalize
from matplotlib.figure import Figure
from matplotlib.layout_engine import PlaceHolderLayoutEngine
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.spines import Spine
from matplotlib.ticker import FuncFormatter, Locator, NullFormatter, NullLocator
from numpy.typing import ArrayLike, NDArray

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

__all__ = [
    "MEASURE_LABELS",
    "MEASURE_RANGES",
    "PALETTE",
    "ZipRanking",
    "coverage_against",
    "group_colours",
    "heat_map",
    "measure_by",
    "summary_bars",
    "summary_lines",
    "svg",
    "zip_plot",
    "zip_ranking",
]

PALETTE: tuple[str, ...] = (
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
)
"""Okabe-Ito colours (blue, vermillion, green, purple, orange, sky blue, black): the yellow is
left out, too pale on white. Lines past the seventh also change marker and line style."""

MEASURE_LABELS: dict[str, str] = {
    "coverage": "coverage (share of intervals containing the truth)",
    "be_coverage": "bias-eliminated coverage (share of intervals containing the mean estimate)",
    "width": "mean interval width (units of the estimand)",
    "bias": "bias (mean estimate - truth, units of the estimand)",
    "relative_bias": "relative bias (bias / truth)",
    "empirical_se": "empirical SE (units of the estimand)",
    "mse": "mean squared error (squared units of the estimand)",
    "model_se": "model SE (root mean squared SE, units of the estimand)",
    "model_se_error": "relative error of model SE (model SE / empirical SE - 1)",
    "tested": "share of replicates in which a test was made",
    "rejection": "rejection rate (share of replicates rejecting)",
    "conditional_rejection": "rejection rate among the tests made",
    "mean_size": "mean planned or used sample size",
    "median_size": "median planned or used sample size",
    "lower_quartile_size": "lower quartile of the planned or used sample size",
    "upper_quartile_size": "upper quartile of the planned or used sample size",
    "correct_share": "share of replicates whose decision was right",
    "mean_saving": "mean share of the cost saved against the reference",
    "conditional_saving": "mean share of the cost saved, among the tests made",
}
"""Axis label of each measure of `studies.engine.MEASURES`, with its units."""

_SHARE = (0.0, 1.0)
_SIZE = (0.0, math.inf)
MEASURE_RANGES: dict[str, tuple[float, float]] = {
    "coverage": _SHARE, "be_coverage": _SHARE, "tested": _SHARE, "rejection": _SHARE,
    "conditional_rejection": _SHARE, "correct_share": _SHARE,
    "width": _SIZE, "empirical_se": _SIZE, "mse": _SIZE, "model_se": _SIZE,
    "mean_size": _SIZE, "median_size": _SIZE, "lower_quartile_size": _SIZE,
    "upper_quartile_size": _SIZE,
    "model_se_error": (-1.0, math.inf),
    "mean_saving": (-math.inf, 1.0), "conditional_saving": (-math.inf, 1.0),
}
"""The values a measure can take (low, high), where bounded: error bars stop there. Shares lie
in [0, 1], widths, SEs and sizes are >= 0, a model SE's relative error is >= -1 and a saving
(``1 - cost / reference``) is <= 1; bias has no bound."""

_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_LINESTYLES = ("-", "--", ":")
_MAX_PANELS = 6
_Z95 = 1.959963984540054
_NOMINAL_COLOUR = "0.35"
_INSIDE, _OUTSIDE = PALETTE[2], PALETTE[1]  # green inside a tolerance band, vermillion out
_ID = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_TAG = re.compile(r"<[^<>]+>")
_REFERENCE = re.compile(r'(\sid="|url\(#|xlink:href="#)')
_RC: dict[RcKeyType, Any] = {
    "font.family": "DejaVu Sans",
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.title_fontsize": 9,
    "figure.titlesize": 11,
    "axes.prop_cycle": cycler(color=list(PALETTE)),
    "axes.grid": True,
    "grid.color": "0.9",
    "svg.fonttype": "none",
    "svg.hashsalt": "evalcert",
}

Array = NDArray[np.float64]


# --------------------------------------------------------------------------------------------
# SVG output


def svg(fig: Figure, figure_id: str | None = None) -> str:
    """Write a figure as SVG text, the same bytes for the same figure, and close it.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure. One made by pyplot is closed (removed from pyplot's registry); a bare
        `Figure` is left to the garbage collector.
    figure_id : str, optional
        Prefix of every element id and id reference in the SVG (``id="axes_1"`` becomes
        ``id="<figure_id>-axes_1"``), so that figures inlined in one HTML page never share an
        id. A letter, then letters, digits, ``-`` or ``_``. Default: ``f`` and 12 hex digits of
        the SHA-256 of the SVG, distinct for distinct figures; pass distinct ids to inline one
        figure twice.

    Returns
    -------
    str
        The SVG document: no creation date or creator, text as ``<text>`` elements
        (``svg.fonttype: none``), hashed ids salted with a fixed salt. A figure with a layout
        engine is laid out once first and left without one (`_lay_out`).

    Examples
    --------
    >>> fig = Figure(figsize=(2, 1))
    >>> _ = fig.add_subplot().plot([0, 1], [0, 1])
    >>> text = svg(fig, "demo")
    >>> 'id="demo-axes_1"' in text and text == svg(fig, "demo")
    True
    """
    if figure_id is not None and not _ID.fullmatch(figure_id):
        raise ValueError("`figure_id` must be a letter followed by letters, digits, '-' or '_'; "
                         f"got {figure_id!r}.")
    buffer = io.StringIO()
    with mpl.rc_context({"svg.fonttype": "none", "svg.hashsalt": "evalcert", "svg.id": None,
                         "figure.autolayout": False, "figure.constrained_layout.use": False}):
        _lay_out(fig)
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    _close(fig)
    text = buffer.getvalue()
    prefix = figure_id or "f" + hashlib.sha256(text.encode()).hexdigest()[:12]
    return _prefix_ids(text, prefix)


def _lay_out(fig: Figure) -> None:
    """Run the figure's layout engine once, measuring text as the SVG writer does, then fix
    the layout, so that `savefig` draws the figure once instead of twice.

    Given a layout engine, `Figure.savefig` first draws the whole figure without output only
    to run the engine, then draws it again into the file. Running the engine here with an
    SVG renderer (the one that pre-draw would use, at the SVG's 72 dpi) places every panel,
    legend and colour bar where that pre-draw would, and with the layout fixed the save
    draws the figure once.

    The engine measures every panel's decorations twice (constrained layout makes two
    passes); what cannot move the layout is left out of that measuring: spines that lie
    within what the panel's axes already span (`_spine_inside`) and unlabelled minor ticks
    (their labels are empty and their marks no longer than the major ticks'). The minor
    tick marks are then drawn as one line of markers per panel (`_minor_marks`).
    """
    engine = fig.get_layout_engine()
    if engine is None or isinstance(engine, PlaceHolderLayoutEngine):
        return
    bare = _bare_minor_ticks(fig)
    for axis, _ in bare:
        axis.set_minor_locator(NullLocator())
    for ax in fig.axes:
        for spine in ax.spines.values():
            if _spine_inside(spine):
                spine.set_in_layout(False)
    canvas = fig.canvas
    FigureCanvasSVG(fig)  # sets itself as the figure's canvas: an SVG renderer measures text
    try:
        engine.execute(fig)
    finally:
        fig.set_canvas(canvas)
    fig.set_layout_engine(None)  # no engine at all (with the rc defaults `svg` sets)
    _minor_marks(bare)


def _spine_inside(spine: Spine) -> bool:
    """Whether a spine's extent lies within the panel's box and its axis's tick labels, so
    that measuring it for the layout cannot move anything.

    A spine at the panel's edge spans the edge, plus the length of the tick marks on its
    side. With no marks on that side (the top and right spines here) that is the edge
    itself; with marks and their labels shown, each label sits beyond its mark (the axis's
    extent, which the layout measures anyway, takes the label's position even when empty).
    """
    axis = spine.axis
    if axis is None or spine.get_position() != ("outward", 0.0):
        return False
    if not axis.get_visible():
        return True  # a hidden axis adds no tick marks to its spine
    ticks = [axis.majorTicks[0]]
    if not isinstance(axis.get_minor_locator(), NullLocator):
        ticks.append(axis.minorTicks[0])
    if spine.spine_type in ("top", "right"):
        return not any(tick.tick2line.get_visible() for tick in ticks)
    shown = axis.get_in_layout() and axis.axes.axison
    return all(not tick.tick1line.get_visible() or (shown and tick.label1.get_visible())
               for tick in ticks)


def _bare_minor_ticks(fig: Figure) -> list[tuple[Axis, Locator]]:
    """The axes whose minor ticks are bare marks (no label, no grid line), with their minor
    locators: say a log axis's ticks between the powers of ten (`_x_axis`)."""
    bare = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            locator = axis.get_minor_locator()
            if (isinstance(axis.get_minor_formatter(), NullFormatter)
                    and not isinstance(locator, NullLocator)):
                bare.append((axis, locator))
    return bare


def _minor_marks(bare: list[tuple[Axis, Locator]]) -> None:
    """Draw the bare minor ticks of each axis as one line of tick markers, not a tick each.

    A matplotlib tick is a group of five artists (two marks, two labels, a grid line) that
    the axis updates each time it is measured or drawn; bare minor ticks show only their
    first mark. The marks go where the axis would draw them (`Axis.get_minorticklocs`, within
    the view), with the first minor tick's marker, size, width, colour and transform.
    """
    marks, kept = [], set()
    for axis, locator in bare:
        axis.set_minor_locator(locator)  # shared axes share it: restore all before reading
    for axis, locator in bare:
        tick = axis.get_minor_ticks(1)[0]
        if tick.gridline.get_visible() or tick.tick2line.get_visible():
            kept.add(id(locator))  # more than bare marks: leave the ticks to the axes
            continue
        locs = axis.get_minorticklocs()
        low, high = sorted(axis.get_view_interval())
        marks.append((axis, locator, tick.tick1line, locs[_within(axis, locs, low, high)]))
    for axis, locator, mark, locs in marks:
        if id(locator) in kept:
            continue
        axis.set_minor_locator(NullLocator())
        x, y = (locs, np.zeros(locs.size)) if axis.axis_name == "x" else (np.zeros(locs.size), locs)
        drawn = Line2D(x, y, transform=mark.get_transform(), marker=mark.get_marker(),
                       markersize=mark.get_markersize(),
                       markeredgewidth=mark.get_markeredgewidth(), color=mark.get_color(),
                       linestyle="none", clip_on=False, zorder=axis.get_zorder())
        drawn.set_in_layout(False)
        axis.axes.add_artist(drawn)


def _within(axis: Axis, locs: Array, low: float, high: float) -> NDArray[np.bool_]:
    """Which tick locations lie in the view [low, high], compared on the axis's scale with
    the slack the axis allows (1e-10 of the view's span), so that a tick at an end stays."""
    ends = np.sort(axis.get_transform().transform(np.array([low, high])))
    spots = axis.get_transform().transform(locs)
    slack = 1e-10 * (ends[1] - ends[0])
    return np.asarray((spots >= ends[0] - slack) & (spots <= ends[1] + slack), dtype=bool)


def _close(fig: Figure) -> None:
    """Remove a pyplot-made figure from pyplot's registry (a bare Figure has no manager)."""
    if getattr(fig.canvas, "manager", None) is not None:
        from matplotlib import pyplot

        pyplot.close(fig)


def _prefix_ids(text: str, prefix: str) -> str:
    """Prefix every ``id="..."``, ``url(#...)`` and ``xlink:href="#..."`` inside a tag.

    Only tags are rewritten (text between tags is left alone, so a title that reads
    ``id="x"`` stays as written); colours such as ``fill="#0072b2"`` are not id references.
    """
    def tag(match: re.Match[str]) -> str:
        return _REFERENCE.sub(lambda ref: f"{ref.group(1)}{prefix}-", match.group(0))

    return _TAG.sub(tag, text)


@contextmanager
def _house_style() -> Iterator[None]:
    """Font sizes (>= 9 pt), palette, grid and SVG settings while a figure is built."""
    with mpl.rc_context(_RC):
        yield


# --------------------------------------------------------------------------------------------
# Checking and shaping the frame


def _require(frame: pd.DataFrame, column: str | None, argument: str) -> None:
    """Raise ValueError unless ``column`` (if given) is a column of the frame."""
    if column is not None and column not in frame.columns:
        raise ValueError(f"`{argument}` must be a column of the frame; got {column!r}.")


def _check_frame(frame: pd.DataFrame) -> None:
    """Raise ValueError unless the frame is a DataFrame with the tidy result columns."""
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"`frame` must be a pandas DataFrame; got {type(frame).__name__}.")
    missing = [c for c in ("method", "measure", "value", "mcse") if c not in frame.columns]
    if missing:
        raise ValueError("`frame` must have the columns method, measure, value and mcse; "
                         f"missing {', '.join(missing)}.")
    if frame.empty:
        raise ValueError("`frame` must have rows; got an empty frame.")


def _select(frame: pd.DataFrame, column: str, wanted: Sequence[Any], argument: str) -> pd.DataFrame:
    """The rows whose ``column`` is one of ``wanted``; ValueError naming what is not there."""
    present = list(dict.fromkeys(frame[column]))
    absent = [w for w in wanted if w not in present]
    if absent or not wanted:
        shown = ", ".join(map(str, present[:12])) + (", ..." if len(present) > 12 else "")
        got = absent if absent else list(wanted)
        raise ValueError(f"`{argument}` must name {column} values in the frame ({shown}); "
                         f"got {got[0] if len(got) == 1 else got!r}.")
    return frame[frame[column].isin(list(wanted))]


def _hashable(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """The frame with list-valued parameter columns (e.g. stratum sizes) turned into text."""
    out = frame.copy()
    for column in columns:
        if out[column].map(lambda v: isinstance(v, list | tuple | dict | np.ndarray)).any():
            out[column] = out[column].map(str)
    return out


def _parameters(frame: pd.DataFrame, used: Sequence[str]) -> list[str]:
    """The frame's other columns that vary (cell parameters, study, path)."""
    skip = {*used, "position", "value", "mcse", "n_replicates", "measure"}
    return [c for c in frame.columns
            if c not in skip and frame[c].map(str).nunique(dropna=False) > 1]


def _prepare(frame: pd.DataFrame, *, measure: str, keys: dict[str, str | None],
             methods: Sequence[str] | None, unique: bool) -> pd.DataFrame:
    """Rows of one measure (and of ``methods``), checked for the columns named by ``keys``.

    ``keys`` maps argument names to columns. With ``unique``, every combination of the key
    columns must be a single row, else ValueError names the parameters to filter first.
    """
    _check_frame(frame)
    for argument, column in keys.items():
        _require(frame, column, argument)
    used = [c for c in keys.values() if c is not None]
    seen: dict[str, str] = {}
    for argument, column in keys.items():
        if column is not None and column in seen:
            raise ValueError(f"`{argument}` must differ from `{seen[column]}`; both are "
                             f"{column!r}.")
        if column is not None:
            seen[column] = argument
    rows = _select(frame, "measure", [measure], "measure")
    if methods is not None:
        rows = _select(rows, "method", list(methods), "methods")
    rows = _hashable(rows, used)
    if unique and rows.duplicated(subset=used).any():
        varying = _parameters(rows, used) or ["the repeated rows"]
        raise ValueError(f"`frame` has several {measure} rows per ({', '.join(used)}): "
                         f"filter {', '.join(varying)} to one value each first.")
    return rows


def _levels(values: pd.Series) -> list[Any]:
    """Distinct values, ascending when numeric, else in order of first appearance."""
    distinct = list(dict.fromkeys(values.dropna()))
    if _numeric(values):
        return sorted(distinct)
    return distinct


def _numeric(values: pd.Series) -> bool:
    """Whether a column holds numbers (not booleans) that can stand on a numeric axis."""
    return bool(pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values))


@dataclass(frozen=True)
class _XAxis:
    """What the x axis shows: its values (`_levels`), and whether as categories.

    Text, a column declared categorical (ids, say topics) and a single value are categories:
    a lone number on a continuous axis would get ticks around it (480 to 520 about 500) that
    no cell has.
    """

    levels: list[Any]
    categorical: bool

    @classmethod
    def of(cls, values: pd.Series, categorical: bool) -> _XAxis:
        levels = _levels(values)
        return cls(levels, categorical or not _numeric(values) or len(levels) == 1)

    def positions(self, values: pd.Series) -> Array:
        """Axis positions: the numbers themselves, or the index of each category."""
        if not self.categorical:
            return np.asarray(values.to_numpy(dtype=float, na_value=np.nan), dtype=float)
        index = {level: i for i, level in enumerate(self.levels)}
        return np.array([index.get(v, np.nan) for v in values], dtype=float)


def _dodge(index: int, count: int) -> float:
    """The shift of the ``index``-th of ``count`` hue levels at a category: side by side
    within 0.6 of the category's width, so that their points and error bars do not overlap."""
    step = min(0.2, 0.6 / count)
    return (index - (count - 1) / 2) * step


def _fmt(value: Any) -> str:
    """A parameter value for a tick or a title: floats as ``%g``."""
    if isinstance(value, float | np.floating):
        return f"{value:g}"
    return str(value)


def _wrap(text: str, width: int = 36) -> str:
    """An axis label broken into lines of at most ``width`` characters."""
    return "\n".join(textwrap.wrap(text, width)) or text


def _label(measure: str) -> str:
    """A measure's axis label with its units (the bare name for an unknown measure)."""
    return MEASURE_LABELS.get(measure, measure)


def _bounds(measure: str | None) -> tuple[float, float]:
    """The range a measure's values can take (`MEASURE_RANGES`; unbounded when unknown)."""
    return MEASURE_RANGES.get(measure or "", (-math.inf, math.inf))


def _error_ends(y: Array, half: Array, bounds: tuple[float, float]) -> tuple[Array, Array]:
    """The ends ``y -/+ half`` of error bars, cut at the range the values can take.

    Examples
    --------
    >>> low, high = _error_ends(np.array([0.99, 0.5]), np.array([0.05, 0.05]), (0.0, 1.0))
    >>> low.round(2).tolist(), high.round(2).tolist()
    ([0.94, 0.45], [1.0, 0.55])
    """
    low, high = bounds
    return np.clip(y - half, low, high), np.clip(y + half, low, high)


# --------------------------------------------------------------------------------------------
# Colours, panels, lines and legends


def group_colours(groups: Iterable[Sequence[str]], *,
                  weights: Sequence[float] | None = None) -> dict[str, str]:
    """A colour of `PALETTE` for each name, the same in every group it belongs to.

    Made for method names: given the methods each figure of a suite shows (and each study's
    methods), a method keeps one colour in every figure, whichever methods a figure shows,
    and the methods shown together differ in colour while the palette lasts. Names are
    coloured in order of first appearance; each takes the colour that costs least, the cost
    of a colour being, over the groups of the name, the group's weight times the number of
    its names already given that colour (the first in `PALETTE` order on a tie).

    Parameters
    ----------
    groups : iterable of sequences of str
        Names that should differ in colour (say the methods a figure shows), in order.
    weights : sequence of float, optional
        How much each group's names should differ (default: 1 each); say 1 for a study's
        methods and 100 for those one figure shows together.

    Returns
    -------
    dict of str to str
        The colour of each name.

    Examples
    --------
    >>> colours = group_colours([["wald", "wilson"], ["wilson", "jeffreys"]])
    >>> [PALETTE.index(colours[name]) for name in ("wald", "wilson", "jeffreys")]
    [0, 1, 0]
    """
    listed: list[list[str]] = []
    for group in groups:
        if isinstance(group, str):
            raise ValueError(f"`groups` must hold sequences of names; got the name {group!r}.")
        listed.append(list(dict.fromkeys(group)))
    weight = [1.0] * len(listed) if weights is None else [float(w) for w in weights]
    if len(weight) != len(listed):
        raise ValueError(f"`weights` must hold one weight per group ({len(listed)}); got "
                         f"{len(weight)}.")
    member: dict[str, list[int]] = {}
    for index, group in enumerate(listed):
        for name in group:
            member.setdefault(name, []).append(index)
    colours: dict[str, str] = {}
    for name in member:
        cost: Counter[str] = Counter()
        for index in member[name]:
            for other in listed[index]:
                if other in colours:
                    cost[colours[other]] += weight[index]
        colours[name] = min(PALETTE, key=lambda colour: cost[colour])
    return colours


@dataclass(frozen=True)
class _Style:
    """How one hue level is drawn: colour, marker, line style."""

    colour: str
    marker: str
    linestyle: str


def _styles(levels: Sequence[Any], colours: Mapping[Any, str] | None) -> list[_Style]:
    """The style of each hue level, in order.

    A level's colour is its entry in ``colours`` (keys compared as text, `_fmt`), else the
    next palette colour that no level with an entry takes in this figure. Each level takes
    the next marker, and a colour met again in the figure the next line style, so that no
    two lines look alike.
    """
    if colours is not None and not isinstance(colours, Mapping):
        raise ValueError(f"`colours` must map hue values to colours; got "
                         f"{type(colours).__name__}.")
    given = {_fmt(key): colour for key, colour in (colours or {}).items()}
    taken = {given[_fmt(level)] for level in levels if _fmt(level) in given}
    free = [colour for colour in PALETTE if colour not in taken] or list(PALETTE)
    seen: Counter[str] = Counter()
    styles, spare = [], 0
    for index, level in enumerate(levels):
        colour = given.get(_fmt(level))
        if colour is None:
            colour, spare = free[spare % len(free)], spare + 1
        styles.append(_Style(colour, _MARKERS[index % len(_MARKERS)],
                             _LINESTYLES[seen[colour] % len(_LINESTYLES)]))
        seen[colour] += 1
    return styles


def _gid(*parts: Any) -> str:
    """An SVG group id from the parts (a hue value's text kept to letters, digits, - and _),
    so that a test or a reader can find a level's line in the document."""
    return "-".join(re.sub(r"[^A-Za-z0-9_-]+", "_", _fmt(part)) for part in parts)


def _panel_axes(count: int) -> tuple[Figure, list[Axes]]:
    """A 7-inch-wide figure with ``count`` panels sharing their axes (one or two rows)."""
    rows = 1 if count <= 3 else 2
    columns = math.ceil(count / rows)
    fig = Figure(figsize=(7.0, 4.2 if rows == 1 else 6.5), layout="constrained")
    grid = fig.subplots(rows, columns, sharex=True, sharey=True, squeeze=False)
    axes = [ax for row in grid for ax in row]
    for ax in axes[count:]:
        ax.set_visible(False)
    for ax in axes[:count]:
        ax.tick_params(labelbottom=True)
    return fig, axes[:count]


def _panels(rows: pd.DataFrame, panel_by: str | None,
            name: Callable[[Any], str] | None = None) -> list[tuple[str, pd.DataFrame]]:
    """(title, rows) of each panel; one untitled panel without ``panel_by``.

    A panel's title is ``name(value)`` when given, else ``"<panel_by> = <value>"``.
    """
    if panel_by is None:
        return [("", rows)]
    levels = _levels(rows[panel_by])
    if len(levels) > _MAX_PANELS:
        raise ValueError(f"`panel_by` must have at most {_MAX_PANELS} values; {panel_by!r} has "
                         f"{len(levels)}: filter the frame first.")
    return [(name(v) if name is not None else f"{panel_by} = {_fmt(v)}",
             rows[rows[panel_by] == v]) for v in levels]


@dataclass(frozen=True)
class _Points:
    """One hue level's points in a panel, sorted by x: positions, values, error half-widths."""

    x: Array
    y: Array
    half: Array

    @classmethod
    def of(cls, x: Array, y: Array, half: Array) -> _Points:
        ranked = np.argsort(x, kind="stable")
        return cls(x[ranked], y[ranked], half[ranked])


def _draw_line(ax: Axes, points: _Points, style: _Style, *, band: bool, joined: bool,
               bounds: tuple[float, float], start: int, gid: str) -> Line2D:
    """One hue level: a line (``joined``) or bare points, with +-``half`` where ``half`` > 0.

    ``half`` is the error bars' half-width at each point: 1.96 MCSE for a measure of the
    tidy frame, whatever spread a summary table gives for its rows. The bars (or the band,
    with ``band``) stop at ``bounds``. Points of a category axis are not joined: a line would
    suggest an order between categories.

    On a dense grid (more than 12 points) markers go on every k-th point only, starting at a
    different point for each line (``start``) so that the lines' markers do not sit on top
    of each other.
    """
    stride = max(1, math.ceil(points.x.size / 12)) if joined else 1
    line: Line2D = ax.plot(points.x, points.y, color=style.colour, marker=style.marker,
                           linestyle=style.linestyle if joined else "none", linewidth=1.4,
                           markersize=4.5, markevery=(start % stride, stride), gid=gid)[0]
    _draw_errors(ax, points, style.colour, band=band and joined, bounds=bounds, gid=gid)
    return line


def _draw_errors(ax: Axes, points: _Points, colour: str, *, band: bool,
                 bounds: tuple[float, float], gid: str) -> None:
    """Error bars (or a band) of +-``half`` where it is positive, cut at ``bounds``."""
    x, y, half = points.x, points.y, points.half
    noisy = np.isfinite(half) & (half > 0) & np.isfinite(y)
    if not noisy.any():
        return
    low, high = _error_ends(y, np.where(noisy, half, 0.0), bounds)
    if band:
        ax.fill_between(x, low, high, where=noisy, color=colour, alpha=0.2, linewidth=0)
        return
    below = np.maximum(y - low, 0.0)[noisy]
    above = np.maximum(high - y, 0.0)[noisy]
    drawn = ax.errorbar(x[noisy], y[noisy], yerr=np.vstack([below, above]), fmt="none",
                        ecolor=colour, elinewidth=1.0, capsize=2.5)
    drawn.lines[2][0].set_gid(f"{gid}-error")


def _draw_judged(ax: Axes, points: _Points, style: _Style, *, band: tuple[float, float],
                 joined: bool, bounds: tuple[float, float], gid: str) -> Line2D:
    """One hue level's points coloured by whether they lie inside ``band`` (low, high):
    green inside, vermillion outside, a grey line joining them (unless categorical).

    Returns the legend's handle: the level's marker in grey.
    """
    if joined:
        ax.plot(points.x, points.y, color="0.6", linestyle=style.linestyle, linewidth=1.0)
    inside = (points.y >= band[0]) & (points.y <= band[1])
    for name, colour, mask in (("inside", _INSIDE, inside),
                               ("outside", _OUTSIDE, np.isfinite(points.y) & ~inside)):
        if mask.any():
            part = _Points(points.x[mask], points.y[mask], points.half[mask])
            ax.plot(part.x, part.y, color=colour, marker=style.marker, linestyle="none",
                    markersize=5.5, gid=f"{gid}-{name}")
            _draw_errors(ax, part, colour, band=False, bounds=bounds, gid=f"{gid}-{name}")
    return Line2D([], [], color="0.35", marker=style.marker, markersize=5.5,
                  linestyle=style.linestyle if joined else "none")


def _legend(fig: Figure, handles: list[Artist], labels: list[str], title: str | None) -> None:
    """A legend below the panels (never over the data) when there is more than one entry.

    At most 4 columns, fewer where long labels (method names) would make it wider than the
    figure, whose edges would cut it off.
    """
    if len(handles) <= 1:
        return
    for columns in range(min(len(handles), 4), 0, -1):
        legend = fig.legend(handles, labels, loc="outside lower center", ncols=columns,
                            title=title, frameon=False)
        if columns == 1 or legend.get_window_extent().width <= fig.bbox.width:
            return
        legend.remove()


def _y_labels(axes: list[Axes], label: str) -> None:
    """The y label on the first panel of each row of panels (`_panel_axes`)."""
    for ax in axes[:: len(axes) if len(axes) <= 3 else math.ceil(len(axes) / 2)]:
        ax.set_ylabel(_wrap(label))


def _x_axis(axes: list[Axes], x_axis: _XAxis, label: str, log: bool,
            name: Callable[[Any], str] = _fmt) -> None:
    """Label the x axis; category names (``name`` of each level) as ticks; log scale when asked.

    A category axis has a tick per category and no vertical grid line (no scale between
    categories). A log axis of at most 10 grid values has its ticks at those values; others
    get ticks as plain numbers (``%g``: "1000", not a superscript power, so that tick text
    stays text). More than 5 tick labels are slanted, so that close values (200, 300) do not
    run together in a narrow panel.
    """
    levels = x_axis.levels
    for ax in axes:
        ax.set_xlabel(label)
        if x_axis.categorical:
            ax.set_xticks(range(len(levels)), [name(v) for v in levels])
            ax.set_xlim(-0.5, len(levels) - 0.5)
            ax.xaxis.grid(False)
        elif log:
            ax.set_xscale("log")
            if len(levels) <= 10:
                ax.set_xticks([float(v) for v in levels], [_fmt(v) for v in levels])
            else:
                ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_formatter(NullFormatter())
        if len(levels) > 5:
            ax.tick_params(axis="x", labelrotation=45)


def _tolerance_band(axes: Sequence[Axes], band: tuple[float, float], label: str,
                    entries: dict[str, Artist]) -> None:
    """Shade ``band`` (low, high) in every panel; legend entries for it and for the points
    inside and outside it."""
    for ax in axes:
        ax.axhspan(*band, color=_INSIDE, alpha=0.12, linewidth=0)
    entries[label] = Patch(color=_INSIDE, alpha=0.25, linewidth=0)
    for text, colour in (("inside", _INSIDE), ("outside", _OUTSIDE)):
        entries[f"{text} the band"] = Line2D([], [], color=colour, marker="o",
                                             linestyle="none")


def _lines_figure(rows: pd.DataFrame, *, measure: str, x: str, hue: str,
                  panel_by: str | None, band: bool, log_x: bool,
                  order: Sequence[str] | None, categorical: bool,
                  colours: Mapping[Any, str] | None,
                  judged: tuple[float, float] | None = None, y_label: str | None = None
                  ) -> tuple[Figure, list[Axes], dict[str, Artist]]:
    """Panels of one line per hue level (methods in ``order`` if given): the line figures.

    With ``judged`` (a band low, high), each point is coloured by whether it lies inside.
    The y axis reads ``y_label``, by default the measure's label.
    """
    panels = _panels(rows, panel_by)
    fig, axes = _panel_axes(len(panels))
    hues = list(dict.fromkeys(rows[hue])) if hue == "method" else _levels(rows[hue])
    if hue == "method" and order is not None:
        hues = list(order)
    styles = _styles(hues, colours)
    x_axis = _XAxis.of(rows[x], categorical)
    bounds = _bounds(measure)
    entries: dict[str, Artist] = {}
    for p, (ax, (name, part)) in enumerate(zip(axes, panels, strict=True)):
        for index, (level, style) in enumerate(zip(hues, styles, strict=True)):
            line = part[part[hue] == level]
            if line.empty:
                continue
            shift = _dodge(index, len(hues)) if x_axis.categorical else 0.0
            points = _Points.of(x_axis.positions(line[x]) + shift,
                                line["value"].to_numpy(float),
                                _Z95 * line["mcse"].to_numpy(float))
            gid = _gid("line", p, index, level)
            if judged is not None:
                drawn = _draw_judged(ax, points, style, band=judged,
                                     joined=not x_axis.categorical, bounds=bounds, gid=gid)
            else:
                drawn = _draw_line(ax, points, style, band=band,
                                   joined=not x_axis.categorical, bounds=bounds, start=index,
                                   gid=gid)
            # judged points are coloured by the band: the legend names the hue on each marker
            entries.setdefault(_fmt(level) if judged is None else f"{hue} = {_fmt(level)}",
                               drawn)
        ax.set_title(name)
    _x_axis(axes, x_axis, x, log_x and not x_axis.categorical)
    _y_labels(axes, y_label if y_label is not None else _label(measure))
    if band and not x_axis.categorical and (rows["mcse"] > 0).any():
        entries["± 1.96 MCSE"] = Patch(color="0.5", alpha=0.3, linewidth=0)
    return fig, axes, entries


# --------------------------------------------------------------------------------------------
# Coverage against a parameter


def coverage_against(frame: pd.DataFrame, *, x: str, panel_by: str | None = None,
                     methods: Sequence[str] | None = None,
                     nominal_column: str | None = "confidence_level",
                     categorical: bool = False, colours: Mapping[Any, str] | None = None,
                     title: str | None = None, figure_id: str | None = None) -> str:
    """Coverage against a grid parameter, a line per method, a panel per value of another.

    The figures of Brown, Cai & DasGupta (2001): coverage (y) against, say, ``p`` (x) with one
    panel per ``n``; the nominal level is a grey dashed line; Monte Carlo cells (MCSE > 0) get a
    band of +-1.96 MCSE, cut at 0 and 1 (error bars on a category axis). Filter the frame
    first so that each (panel, method, x) is one cell (e.g. one confidence level and one
    ``alternative``).

    Parameters
    ----------
    frame : pandas.DataFrame
        A tidy result frame (`StudyResult.to_frame`); only its ``coverage`` rows are drawn.
    x : str
        The parameter on the x axis (linear scale; categories when text or a single value).
    panel_by : str, optional
        The parameter with one panel per value (at most 6), e.g. ``"n"``.
    methods : sequence of str, optional
        The methods drawn, in legend order (default: all, in the frame's order).
    nominal_column : str or None
        The column holding each cell's nominal coverage (one value per panel), or None for no
        nominal line.
    categorical : bool
        Draw ``x`` as categories even when numeric (ids): points side by side, not joined.
    colours : mapping, optional
        The colour of each method (e.g. `group_colours` of a suite's methods); others take
        the palette's next free colour.
    title : str, optional
        The figure title (default: "Coverage against <x>", and "by <panel_by>").
    figure_id : str, optional
        Id prefix of the SVG's elements (see `svg`).

    Returns
    -------
    str
        The figure as SVG text.

    Raises
    ------
    ValueError
        When a named column is missing, the frame has no coverage rows (of ``methods``), a
        (panel, method, x) has several rows, or a panel has several nominal levels.
    """
    with _house_style():
        rows = _prepare(frame, measure="coverage",
                        keys={"x": x, "panel_by": panel_by, "methods": "method"},
                        methods=methods, unique=True)
        _require(frame, nominal_column, "nominal_column")
        fig, axes, entries = _lines_figure(rows, measure="coverage", x=x, hue="method",
                                           panel_by=panel_by, band=True, log_x=False,
                                           order=methods, categorical=categorical,
                                           colours=colours)
        if nominal_column is not None:
            for ax, (_, part) in zip(axes, _panels(rows, panel_by), strict=True):
                entries.setdefault("nominal level", _nominal_line(ax, part, nominal_column))
        by = f" by {panel_by}" if panel_by else ""
        fig.suptitle(title if title is not None else f"Coverage against {x}{by}")
        _legend(fig, list(entries.values()), list(entries), "method")
        return svg(fig, figure_id)


def _nominal_line(ax: Axes, rows: pd.DataFrame, column: str) -> Line2D:
    """The grey dashed line at a panel's nominal coverage (ValueError if several levels)."""
    levels = rows[column].dropna().unique()
    if len(levels) != 1:
        raise ValueError(f"`nominal_column` {column!r} must hold one value per panel; got "
                         f"{sorted(map(float, levels))}: filter the frame first.")
    return ax.axhline(float(levels[0]), color=_NOMINAL_COLOUR, linestyle="--", linewidth=1.0)


# --------------------------------------------------------------------------------------------
# Any measure against a parameter


def _reference_lines(axes: Sequence[Axes], reference: float) -> Line2D:
    """A grey dashed horizontal line at ``reference`` in every panel (SVG group id
    ``reference-<panel>``); the last, for a legend."""
    drawn = [ax.axhline(reference, color=_NOMINAL_COLOUR, linestyle="--", linewidth=1.0,
                        gid=f"reference-{p}") for p, ax in enumerate(axes)]
    return drawn[-1]


def measure_by(frame: pd.DataFrame, *, measure: str, x: str, hue: str = "method",
               panel_by: str | None = None, reference: float | None = None,
               tolerance: float | None = None, methods: Sequence[str] | None = None,
               log_x: bool | None = None, categorical: bool = False,
               colours: Mapping[Any, str] | None = None, y_label: str | None = None,
               title: str | None = None, figure_id: str | None = None) -> str:
    """A measure against a grid parameter, a line per method (or per value of ``hue``).

    Monte Carlo cells (MCSE > 0) get error bars of +-1.96 MCSE, cut at the range the measure
    can take (`MEASURE_RANGES`); exact cells none. With ``tolerance``, the band ``reference
    +- tolerance`` is shaded and each point is green inside it, vermillion outside; the hue
    levels then differ by marker only (say a pass rate against a nominal power, a marker per
    prevalence). Filter the frame first so that each (panel, hue, x) is one cell.

    Parameters
    ----------
    frame : pandas.DataFrame
        A tidy result frame (`StudyResult.to_frame`).
    measure : str
        The measure drawn, e.g. ``"bias"``, ``"relative_bias"``, ``"width"``.
    x : str
        The parameter on the x axis; text parameters (e.g. ``design``) and a single value
        become categories.
    hue : str
        The column with one line per value (default ``"method"``).
    panel_by : str, optional
        The parameter with one panel per value (at most 6).
    reference : float, optional
        A grey dashed horizontal line, e.g. 0 for bias.
    tolerance : float, optional
        With ``reference``: the half-width (> 0) of the band of acceptable values around it.
    methods : sequence of str, optional
        The methods drawn (default: all).
    log_x : bool, optional
        Log x axis; default: when ``x`` is positive and spans more than a factor 20.
    categorical : bool
        Draw ``x`` as categories even when numeric (ids, say topics): points side by side at
        each category, not joined by a line.
    colours : mapping, optional
        The colour of each hue value (e.g. `group_colours` of a suite's methods); others take
        the palette's next free colour.
    y_label : str, optional
        The y axis label (default: the measure's, `MEASURE_LABELS`), say what a rejection
        rate means in a study ("pass rate among attempts").
    title : str, optional
        The figure title (default: "<measure> against <x>").
    figure_id : str, optional
        Id prefix of the SVG's elements (see `svg`).

    Returns
    -------
    str
        The figure as SVG text.

    Raises
    ------
    ValueError
        When a named column or the measure is missing, a (panel, hue, x) has several rows, or
        ``tolerance`` is not a positive number given with ``reference``.
    """
    if tolerance is not None and (reference is None or isinstance(tolerance, bool)
                                  or not isinstance(tolerance, int | float)
                                  or not 0 < tolerance < math.inf):
        raise ValueError("`tolerance` must be a positive number, given with `reference`; got "
                         f"{tolerance!r} (reference {reference!r}).")
    with _house_style():
        rows = _prepare(frame, measure=measure, keys={"x": x, "hue": hue, "panel_by": panel_by},
                        methods=methods, unique=True)
        log = _wide_positive(rows[x]) if log_x is None else log_x
        band = (None if tolerance is None or reference is None
                else (reference - tolerance, reference + tolerance))
        fig, axes, entries = _lines_figure(
            rows, measure=measure, x=x, hue=hue, panel_by=panel_by, band=False, log_x=log,
            order=methods, categorical=categorical, colours=colours, judged=band,
            y_label=y_label)
        if band is not None:
            _tolerance_band(axes, band, f"{reference:g} ± {tolerance:g}", entries)
        if reference is not None:
            entries[f"reference ({reference:g})"] = _reference_lines(axes, reference)
        fig.suptitle(title if title is not None else f"{measure} against {x}")
        _legend(fig, list(entries.values()), list(entries), hue if band is None else None)
        return svg(fig, figure_id)


def _wide_positive(values: pd.Series) -> bool:
    """Whether numbers are all positive and span more than a factor 20."""
    if not _numeric(values):
        return False
    numbers = values.to_numpy(dtype=float, na_value=np.nan)
    numbers = numbers[np.isfinite(numbers)]
    return bool(numbers.size and numbers.min() > 0 and numbers.max() > 20 * numbers.min())


# --------------------------------------------------------------------------------------------
# Heat map


def heat_map(frame: pd.DataFrame, *, measure: str, method: str, rows: str, columns: str,
             center: float | None = None, title: str | None = None,
             figure_id: str | None = None) -> str:
    """One method's measure over two grid parameters, each cell annotated with its value.

    A cell holds the mean over the frame's other parameters (the title names them). With
    ``center`` (e.g. the nominal coverage, or 0 for bias) the colours diverge around it, red
    below and blue above, symmetric in distance; otherwise they run on viridis. Values are
    written in the cells (3 decimals) when the grid is at most 14 columns and 24 rows.

    Parameters
    ----------
    frame : pandas.DataFrame
        A tidy result frame (`StudyResult.to_frame`).
    measure : str
        The measure drawn.
    method : str
        The method drawn.
    rows, columns : str
        The parameters along the y axis (first value on top) and the x axis.
    center : float, optional
        The value at the middle of a diverging colour scale.
    title : str, optional
        The figure title (default: "<method>: <measure>").
    figure_id : str, optional
        Id prefix of the SVG's elements (see `svg`).

    Returns
    -------
    str
        The figure as SVG text.

    Raises
    ------
    ValueError
        When a named column, the measure or the method is missing, or every value is nan.
    """
    with _house_style():
        data = _prepare(frame, measure=measure, keys={"rows": rows, "columns": columns},
                        methods=[method], unique=False)
        row_levels, column_levels = _levels(data[rows]), _levels(data[columns])
        table = (data.groupby([rows, columns], sort=False, dropna=False)["value"].mean()
                 .unstack(columns).reindex(index=row_levels, columns=column_levels))
        values = table.to_numpy(dtype=float)
        if not np.isfinite(values).any():
            raise ValueError(f"`method` {method!r} has no defined {measure} values in the frame.")
        fig = Figure(figsize=(7.0, min(9.0, max(4.2, 1.6 + 0.32 * len(row_levels)))),
                     layout="constrained")
        ax = fig.add_subplot()
        _draw_cells(fig, ax, values, center, measure)
        _category_ticks(ax, column_levels, rows=False)
        _category_ticks(ax, row_levels, rows=True)
        ax.set_xlabel(columns)
        ax.set_ylabel(rows)
        averaged = _parameters(data, [rows, columns, "method"])
        over = f" (mean over {', '.join(averaged)})" if averaged else ""
        fig.suptitle((title if title is not None else f"{method}: {measure}") + over)
        return svg(fig, figure_id)


def _draw_cells(fig: Figure, ax: Axes, values: Array, center: float | None,
                measure: str) -> None:
    """The coloured cells, their annotations and the colour bar.

    A diverging scale is symmetric about ``center`` (equal distances, equal shades) but its
    colour bar shows only the range from the data to the centre: a coverage bar does not run
    past 1.
    """
    finite = values[np.isfinite(values)]
    low, high = float(finite.min()), float(finite.max())
    if center is None:
        pad = 0.0 if high > low else max(abs(high) * 0.05, 0.05)
        norm: Normalize = Normalize(low - pad, high + pad)
        cmap = mpl.colormaps["viridis"]
    else:
        half = max(abs(low - center), abs(high - center))
        norm = CenteredNorm(vcenter=center, halfrange=half if half > 0 else 0.05)
        cmap = mpl.colormaps["RdBu"]
    n_rows, n_columns = values.shape
    small = n_columns <= 30 and n_rows <= 30
    mesh = ax.pcolormesh(np.ma.masked_invalid(values), cmap=cmap, norm=norm,
                         edgecolors="white" if small else "face", linewidth=0.5 if small else 0)
    ax.set_facecolor("0.85")
    ax.grid(False)
    ax.invert_yaxis()
    bar = fig.colorbar(mesh, ax=ax, label=_wrap(_label(measure)))
    if center is not None and high - low > 0:
        bar.ax.set_ylim(min(low, center), max(high, center))
        bar.ax.axhline(center, color="black", linewidth=1.0)
    if n_columns <= 14 and n_rows <= 24:
        for (i, j), value in np.ndenumerate(values):
            shade = cmap(norm(value)) if np.isfinite(value) else (0.85, 0.85, 0.85, 1.0)
            ax.text(j + 0.5, i + 0.5, "nan" if np.isnan(value) else f"{value:.3f}",
                    ha="center", va="center", fontsize=9, color=_ink(shade))


def _ink(rgba: tuple[float, float, float, float]) -> str:
    """Black or white text, whichever reads better on a cell of this colour."""
    red, green, blue = rgba[:3]
    return "black" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.5 else "white"


def _category_ticks(ax: Axes, levels: list[Any], *, rows: bool) -> None:
    """Ticks at cell centres labelled with the values (3 significant digits; at most 8 on the
    x axis and 16 on the y axis, evenly spaced, so that labels never overlap)."""
    stride = max(1, math.ceil(len(levels) / (16 if rows else 8)))
    where = [i + 0.5 for i in range(0, len(levels), stride)]
    names = [_short(levels[i]) for i in range(0, len(levels), stride)]
    if rows:
        ax.set_yticks(where, names)
    else:
        ax.set_xticks(where, names)


def _short(value: Any) -> str:
    """A tick label: floats to 3 significant digits, other values as text."""
    if isinstance(value, float | np.floating):
        return f"{value:.3g}"
    return str(value)


# --------------------------------------------------------------------------------------------
# Summary tables


def summary_bars(frame: pd.DataFrame, *, x: str, bars: Sequence[str],
                 error: Mapping[str, str] | None = None, panel_by: str | None = None,
                 labels: Mapping[Any, str] | None = None, y_label: str = "value",
                 log_y: bool = False, title: str | None = None,
                 figure_id: str | None = None) -> str:
    """Columns of a summary table side by side: a group of bars at each value of ``x``.

    Made for a study's summary table (`studies.engine.Study.summary`), whose rows put our
    numbers beside a paper's: at each value of ``x`` (say Table 2's rows) one bar per column
    of ``bars`` (say ``ours`` and ``paper``), a colour each, with black error bars of +- the
    column ``error`` names for a bar (say ``spread``, an sd over simulated evaluations), and
    a panel per value of ``panel_by``. A missing (nan) value draws no bar. Filter the frame
    first so that each (panel, x) is one row. A log y axis (``log_y``) shows ratios between
    bars, when one group dwarfs the others; it leaves out values of 0 or less.

    Each bar has the SVG id ``<figure_id>-bar-<panel>-<bar>-<x>`` and each bar column's error
    bars in a panel ``<figure_id>-error-<panel>-<bar>`` (indices from 0, in drawing order).

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of a summary table.
    x : str
        The column whose values the groups stand at, as categories: text in order of first
        appearance, numbers ascending.
    bars : sequence of str
        The numeric columns drawn as bars, in this order (at most 7, a colour each).
    error : mapping of str to str, optional
        For some of ``bars``, the numeric column holding their error bars' half-width.
    panel_by : str, optional
        The column with one panel per value (at most 6).
    labels : mapping, optional
        Display text of column names and values (see `summary_lines`): the ``bars`` and
        ``error`` columns in the legend, ``x`` and its values on the axis, ``panel_by`` and
        its values in the panel titles.
    y_label : str
        The y axis label.
    log_y : bool
        Log y axis (the panels share it).
    title : str, optional
        The figure title (default: "<bars> by <x>").
    figure_id : str, optional
        Id prefix of the SVG's elements (see `svg`).

    Returns
    -------
    str
        The figure as SVG text.

    Raises
    ------
    ValueError
        When the frame has no rows, a named column is missing, a bar or error column is not
        numeric or holds no number, ``error`` names a column not in ``bars``, or a (panel, x)
        has several rows.
    """
    drawn_columns = _columns(bars, "bars")
    if len(drawn_columns) > len(PALETTE):
        raise ValueError(f"`bars` must name at most {len(PALETTE)} columns; got "
                         f"{len(drawn_columns)}.")
    if error is not None and not isinstance(error, Mapping):
        raise ValueError("`error` must map columns of `bars` to the columns of their error "
                         f"bars; got {error!r}.")
    errors = dict(error or {})
    strays = [column for column in errors if column not in drawn_columns]
    if strays:
        raise ValueError(f"`error` must map columns of `bars` ({', '.join(drawn_columns)}); "
                         f"got {strays[0]!r}.")
    with _house_style():
        rows = _summary_frame(frame, {"x": x, "panel_by": panel_by},
                              {"bars": drawn_columns, "error": list(errors.values())})
        found = _labels(labels)
        x_levels = _levels(rows[x])
        at = {level: i for i, level in enumerate(x_levels)}
        panels = _panels(rows, panel_by, _panel_title(panel_by, found))
        fig, axes = _panel_axes(len(panels))
        width = 0.8 / len(drawn_columns)
        entries: dict[str, Artist] = {}
        for p, (ax, (name, part)) in enumerate(zip(axes, panels, strict=True)):
            index = part[x].map(at).to_numpy(dtype=int)
            for s, column in enumerate(drawn_columns):
                centre = index + (s - (len(drawn_columns) - 1) / 2) * width
                heights = part[column].to_numpy(dtype=float)
                shown = np.isfinite(heights)
                for patch, i in zip(ax.bar(centre[shown], heights[shown], width,
                                           color=PALETTE[s]).patches, index[shown],
                                    strict=True):
                    patch.set_gid(f"bar-{p}-{s}-{i}")
                label = _named(found, column)
                if column in errors:
                    half = part[errors[column]].to_numpy(dtype=float)
                    ticked = shown & np.isfinite(half) & (half > 0)
                    if ticked.any():
                        bars_drawn = ax.errorbar(centre[ticked], heights[ticked],
                                                 yerr=half[ticked], fmt="none", ecolor="black",
                                                 elinewidth=1.0, capsize=2.5)
                        bars_drawn.lines[2][0].set_gid(f"error-{p}-{s}")
                    label += f" (± {_named(found, errors[column])})"
                entries.setdefault(label, Patch(color=PALETTE[s], linewidth=0))
            ax.set_title(name)
            ax.xaxis.grid(False)  # vertical grid lines would cut through the groups
        for ax in axes:
            ax.set_xlabel(_named(found, x))
            ax.set_xticks(range(len(x_levels)), [_named(found, v) for v in x_levels])
            if len(x_levels) > 3:
                ax.tick_params(axis="x", labelrotation=30)
        if log_y:
            for ax in axes:
                ax.set_yscale("log")
                ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        _y_labels(axes, y_label)
        fig.suptitle(title if title is not None else f"{', '.join(drawn_columns)} by {x}")
        _legend(fig, list(entries.values()), list(entries), None)
        return svg(fig, figure_id)


def summary_lines(frame: pd.DataFrame, *, x: str, y: str, hue: str | None = None,
                  panel_by: str | None = None, error: str | None = None,
                  band: Sequence[str] | None = None,
                  reference: float | None = None, labels: Mapping[Any, str] | None = None,
                  log_x: bool | None = None, categorical: bool = False,
                  bounds: Sequence[float] | None = None,
                  colours: Mapping[Any, str] | None = None, title: str | None = None,
                  figure_id: str | None = None) -> str:
    """A column of a summary table against another, a line per value of ``hue``.

    Made for a study's summary table (`studies.engine.Study.summary`), e.g. a design effect
    (``y="ours"``) against a cell parameter (``x``) with a line per allocation (``hue``)
    and a panel per run (``panel_by``); error bars of +- the column ``error`` (say
    ``spread``) where it is positive, cut at ``bounds``; a grey dashed line at
    ``reference``. A missing (nan) value breaks its line. Filter the frame first so that each
    (panel, hue, x) is one row.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of a summary table.
    x : str
        The column on the x axis; text columns and a single value become categories.
    y : str
        The numeric column on the y axis.
    hue : str, optional
        The column with one line per value (default: a single line).
    panel_by : str, optional
        The column with one panel per value (at most 6).
    error : str, optional
        The numeric column holding the error bars' half-width.
    band : pair of str, optional
        Two numeric columns ``(low, high)``: a shaded band between them in each line's colour
        (say an interval's bounds around its estimate), where both are numbers.
    reference : float, optional
        A grey dashed horizontal line, e.g. 1 for a design effect.
    labels : mapping, optional
        Display text of column names and values, keys compared as text (``1``, ``1.0`` and
        ``"1"`` alike): ``x`` and ``y`` on the axes (their values on a category axis),
        ``hue`` and its values in the legend, ``error`` there too, the band as the label of
        ``"band"`` (default "<low> to <high>", each column labelled); a ``panel_by`` value with a
        label is its panel's whole title, others read "<panel_by> = <value>" (``panel_by``
        labelled too). Unlabelled names and values are shown as they are.
    log_x : bool, optional
        Log x axis; default: when ``x`` is positive and spans more than a factor 20.
    categorical : bool
        Draw ``x`` as categories even when numeric (ids): points side by side, not joined.
    bounds : pair of float, optional
        The range ``y`` can take (low, high), say ``(0, 1)`` for a rate: error bars and the
        band stop there. Default: unbounded.
    colours : mapping, optional
        The colour of each ``hue`` value (e.g. `group_colours` of a suite's methods); others
        take the palette's next free colour.
    title : str, optional
        The figure title (default: "<y> against <x>").
    figure_id : str, optional
        Id prefix of the SVG's elements (see `svg`).

    Returns
    -------
    str
        The figure as SVG text.

    Raises
    ------
    ValueError
        When the frame has no rows, a named column is missing, ``y``, ``error`` or a
        ``band`` column is not numeric or ``y`` holds no number, ``band`` is not a pair of
        column names, ``bounds`` not a pair of numbers low <= high, or a (panel, hue, x) has
        several rows.
    """
    if band is not None and (isinstance(band, str) or not isinstance(band, Sequence)
                             or len(band) != 2):
        raise ValueError(f"`band` must be a pair of column names (low, high); got {band!r}.")
    limits = _pair_of_bounds(bounds)
    with _house_style():
        rows = _summary_frame(frame, {"x": x, "hue": hue, "panel_by": panel_by},
                              {"y": [y], "error": [error] if error is not None else [],
                               "band": list(band) if band is not None else []})
        found = _labels(labels)
        log = _wide_positive(rows[x]) if log_x is None else log_x
        panels = _panels(rows, panel_by, _panel_title(panel_by, found))
        fig, axes = _panel_axes(len(panels))
        hues = _levels(rows[hue]) if hue is not None else [None]
        styles = _styles(hues, colours)
        x_axis = _XAxis.of(rows[x], categorical)
        entries: dict[str, Artist] = {}
        for p, (ax, (name, part)) in enumerate(zip(axes, panels, strict=True)):
            for index, (level, style) in enumerate(zip(hues, styles, strict=True)):
                line = part if hue is None else part[part[hue] == level]
                if line.empty:
                    continue
                shift = _dodge(index, len(hues)) if x_axis.categorical else 0.0
                xs = x_axis.positions(line[x]) + shift
                ranked = np.argsort(xs, kind="stable")
                half = (line[error].to_numpy(dtype=float) if error is not None
                        else np.zeros(len(line)))
                points = _Points(xs[ranked], line[y].to_numpy(dtype=float)[ranked],
                                 half[ranked])
                drawn = _draw_line(ax, points, style, band=False,
                                   joined=not x_axis.categorical, bounds=limits, start=index,
                                   gid=_gid("line", p, index,
                                            *(() if level is None else (level,))))
                if band is not None:
                    low, high = (np.clip(line[c].to_numpy(dtype=float)[ranked], *limits)
                                 for c in band)
                    both = np.isfinite(low) & np.isfinite(high)
                    if x_axis.categorical:  # a shaded bar at each category, not across them
                        ax.vlines(points.x[both], low[both], high[both], color=style.colour,
                                  alpha=0.3, linewidth=6)
                    else:
                        ax.fill_between(points.x, np.where(both, low, 0.0),
                                        np.where(both, high, 0.0), where=both,
                                        color=style.colour, alpha=0.2, linewidth=0)
                entries.setdefault(_named(found, y if hue is None else level), drawn)
            ax.set_title(name)
        _x_axis(axes, x_axis, _named(found, x), log and not x_axis.categorical,
                lambda v: _named(found, v))
        _y_labels(axes, _named(found, y))
        if error is not None and (rows[error] > 0).any():
            entries[f"± {_named(found, error)}"] = Line2D([], [], color="0.35", marker="|",
                                                          markersize=9, linestyle="none")
        if band is not None and (rows[band[1]] > rows[band[0]]).any():
            shaded = found.get("band", f"{_named(found, band[0])} to {_named(found, band[1])}")
            entries[shaded] = Patch(color="0.5", alpha=0.3, linewidth=0)
        if reference is not None:
            entries[f"reference ({reference:g})"] = _reference_lines(axes, reference)
        fig.suptitle(title if title is not None else f"{y} against {x}")
        _legend(fig, list(entries.values()), list(entries),
                _named(found, hue) if hue is not None else None)
        return svg(fig, figure_id)


def _pair_of_bounds(bounds: Sequence[float] | None) -> tuple[float, float]:
    """``bounds`` as (low, high), checked; unbounded when None."""
    if bounds is None:
        return (-math.inf, math.inf)
    try:
        low, high = (float(b) for b in bounds)
    except (TypeError, ValueError):
        low = high = math.nan
    if not low <= high:
        raise ValueError(f"`bounds` must be a pair of numbers (low, high), low <= high; got "
                         f"{bounds!r}.")
    return low, high


def _columns(names: Sequence[str], argument: str) -> list[str]:
    """Column names given as a sequence (not one string), at least one."""
    if isinstance(names, str) or not isinstance(names, Sequence) or not names:
        raise ValueError(f"`{argument}` must be a non-empty sequence of column names; got "
                         f"{names!r}.")
    return list(names)


def _summary_frame(frame: pd.DataFrame, keys: dict[str, str | None],
                   values: dict[str, list[str]]) -> pd.DataFrame:
    """The summary rows, checked: the key columns (one row per combination) and numeric values.

    ``keys`` maps argument names to the columns that place a row (x, hue, panel), ``values``
    argument names to the numeric columns drawn.
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"`frame` must be a pandas DataFrame; got {type(frame).__name__}.")
    if frame.empty:
        raise ValueError("`frame` must have rows; got an empty frame.")
    seen: dict[str, str] = {}
    for argument, column in keys.items():
        _require(frame, column, argument)
        if column is not None and column in seen:
            raise ValueError(f"`{argument}` must differ from `{seen[column]}`; both are "
                             f"{column!r}.")
        if column is not None:
            seen[column] = argument
    for argument, columns in values.items():
        for column in columns:
            _require(frame, column, argument)
            if not _numeric(frame[column]):
                raise ValueError(f"`{argument}` must name numeric columns; {column!r} holds "
                                 f"{frame[column].dtype} values.")
    drawn = values.get("bars") or values.get("y") or []
    if not np.isfinite(frame[drawn].to_numpy(dtype=float)).any():
        raise ValueError(f"`{'bars' if 'bars' in values else 'y'}` must name columns holding "
                         f"a number; {', '.join(drawn)} hold none in the frame.")
    used = list(seen)
    for column in used:
        if frame[column].isna().any():
            raise ValueError(f"`{seen[column]}` column {column!r} has no value in "
                             f"{int(frame[column].isna().sum())} rows: filter them out first.")
    rows = _hashable(frame, used)
    if rows.duplicated(subset=used).any():
        # name the columns the repeated rows differ in: what the query should pin down
        held = {*used, *(c for columns in values.values() for c in columns)}
        text = rows[rows.duplicated(subset=used, keep=False)].map(str)
        varying = [c for c in text.columns
                   if c not in held and (text.groupby(used)[c].nunique() > 1).any()]
        raise ValueError(f"`frame` has several rows per ({', '.join(used)}), differing in "
                         f"{', '.join(varying) or 'nothing else'}: select one row each first.")
    return rows


def _labels(labels: Mapping[Any, str] | None) -> dict[str, str]:
    """The display texts keyed by text (`_fmt`), so that ``1``, ``1.0`` and ``"1"`` match."""
    if labels is not None and not isinstance(labels, Mapping):
        raise ValueError(f"`labels` must be a mapping of names and values to text; got "
                         f"{type(labels).__name__}.")
    return {_fmt(key): str(text) for key, text in (labels or {}).items()}


def _named(found: dict[str, str], value: Any) -> str:
    """A column name or value as displayed: its label, else itself (`_fmt`)."""
    return found.get(_fmt(value), _fmt(value))


def _panel_title(panel_by: str | None, found: dict[str, str]) -> Callable[[Any], str]:
    """A panel's title: its value's label, else "<panel_by> = <value>"."""
    return lambda value: found.get(_fmt(value), f"{_named(found, panel_by)} = {_fmt(value)}")


# --------------------------------------------------------------------------------------------
# Zip plot


@dataclass(frozen=True)
class ZipRanking:
    """The intervals of a zip plot ranked by ``|z|``, and which of them miss the truth.

    Attributes
    ----------
    order : ndarray of int
        Interval indices from the smallest ``|z|`` to the largest (stable for ties).
    centile : ndarray of float
        Fractional centile of ``|z|`` (``100 * rank / n``, in (0, 100]) of each interval, in
        the input order.
    z : ndarray of float
        ``(centre - truth) / se`` with ``centre = (low + high) / 2`` and
        ``se = (high - low) / (2 * 1.96)``; a zero-width interval off the truth has infinite z.
    misses : ndarray of bool
        Intervals that do not contain the truth (``truth < low`` or ``truth > high``), input
        order.
    coverage : float
        Share of intervals containing the truth.
    mcse : float
        Its Monte Carlo standard error, ``sqrt(coverage (1 - coverage) / n)``.
    """

    order: NDArray[np.intp]
    centile: Array
    z: Array
    misses: NDArray[np.bool_]
    coverage: float
    mcse: float


def zip_ranking(low: ArrayLike, high: ArrayLike, truth: float) -> ZipRanking:
    """Rank Monte Carlo intervals by ``|z|`` for a zip plot (Morris, White & Crowther 2019).

    An interval contains the truth exactly when ``|z| <= 1.96``, so the covering intervals take
    the lowest centiles and the misses the highest.

    Parameters
    ----------
    low, high : array_like
        One interval per replicate (1-D, finite, ``low <= high``).
    truth : float
        The true value of the estimand.

    Returns
    -------
    ZipRanking

    Examples
    --------
    >>> r = zip_ranking([0.1, 0.4, 0.0], [0.3, 0.8, 0.9], truth=0.5)
    >>> r.order.tolist(), r.misses.tolist(), r.coverage
    ([2, 1, 0], [True, False, False], 0.6666666666666666)
    """
    lows, highs, true = _intervals(low, high, truth)
    centre, half = (lows + highs) / 2.0, (highs - lows) / 2.0
    offset = centre - true
    off_truth = np.where(offset == 0, 0.0, np.copysign(np.inf, offset))
    z = np.divide(offset * _Z95, half, out=off_truth, where=half > 0)
    order = np.argsort(np.abs(z), kind="stable")
    centile = np.empty(z.size)
    centile[order] = 100.0 * np.arange(1, z.size + 1) / z.size
    misses = (true < lows) | (true > highs)
    coverage = float((~misses).mean())
    return ZipRanking(order, centile, z, misses, coverage,
                      math.sqrt(coverage * (1.0 - coverage) / z.size))


def _intervals(low: ArrayLike, high: ArrayLike, truth: float) -> tuple[Array, Array, float]:
    """The interval bounds as float arrays and the truth as a float, checked."""
    lows, highs = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    if lows.ndim != 1 or lows.size == 0:
        raise ValueError(f"`low` must be a non-empty 1-D array; got shape {lows.shape}.")
    if highs.shape != lows.shape:
        raise ValueError(f"`high` must have the shape of `low` {lows.shape}; got {highs.shape}.")
    for name, bounds in (("low", lows), ("high", highs)):
        if not np.isfinite(bounds).all():
            raise ValueError(f"`{name}` must be finite; got "
                             f"{int((~np.isfinite(bounds)).sum())} non-finite values.")
    if (highs < lows).any():
        raise ValueError(f"`high` must be >= `low`; got {int((highs < lows).sum())} intervals "
                         "with high < low.")
    if not math.isfinite(float(truth)):
        raise ValueError(f"`truth` must be a finite number; got {truth!r}.")
    return lows, highs, float(truth)


def zip_plot(low: ArrayLike, high: ArrayLike, truth: float, *, title: str,
             nominal: float | None = None, figure_id: str | None = None) -> str:
    """The zip plot of one method's intervals in one Monte Carlo cell.

    Each interval is a horizontal line at the fractional centile of its ``|z|`` (see
    `zip_ranking`): blue when it contains the truth (group id ``covers``), vermillion when it
    misses (group id ``misses``); the truth is a black vertical line. Black dotted lines mark
    the estimated coverage +-1.96 MCSE (in percent) and a grey dashed line the nominal level;
    the title gives the coverage and its MCSE. Where the blue zip closes should sit within the
    dotted band, and the band should hold the nominal line.

    Parameters
    ----------
    low, high : array_like
        One interval per replicate (1-D, finite, ``low <= high``).
    truth : float
        The true value of the estimand.
    title : str
        The first line of the title (e.g. method and cell); the second gives the coverage.
    nominal : float, optional
        The nominal coverage (a proportion, e.g. 0.95).
    figure_id : str, optional
        Id prefix of the SVG's elements (see `svg`).

    Returns
    -------
    str
        The figure as SVG text.
    """
    ranking = zip_ranking(low, high, truth)
    lows, highs = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    with _house_style():
        fig = Figure(figsize=(7.0, 4.6), layout="constrained")
        ax = fig.add_subplot()
        width = min(2.0, max(0.25, 250.0 / lows.size))
        handles: dict[str, Artist] = {}
        for gid, colour, mask in (("covers", PALETTE[0], ~ranking.misses),
                                  ("misses", PALETTE[1], ranking.misses)):
            index = np.flatnonzero(mask)[np.argsort(ranking.centile[mask], kind="stable")]
            segments = [((lows[i], ranking.centile[i]), (highs[i], ranking.centile[i]))
                        for i in index]
            lines = LineCollection(segments, colors=colour, linewidths=width, gid=gid)
            ax.add_collection(lines)
            handles[f"{gid} ({index.size})"] = Line2D([], [], color=colour, linewidth=2)
        handles["truth"] = ax.axvline(float(truth), color="black", linewidth=1.2)
        _coverage_lines(ax, ranking, nominal, handles)
        ax.autoscale_view()
        ax.set_ylim(0, 100)
        ax.grid(False)
        ax.set_xlabel("interval bounds (units of the estimand)")
        ax.set_ylabel("fractional centile of |z| (%)")
        ax.set_title(f"{title}\ncoverage {ranking.coverage:.3f} (MCSE {ranking.mcse:.3f}), "
                     f"{lows.size} intervals")
        fig.legend(list(handles.values()), list(handles), loc="outside right center",
                   frameon=False)
        return svg(fig, figure_id)


def _coverage_lines(ax: Axes, ranking: ZipRanking, nominal: float | None,
                    handles: dict[str, Artist]) -> None:
    """Dotted lines at the coverage +-1.96 MCSE and a dashed one at the nominal level."""
    for bound in (-_Z95, _Z95):
        level = 100.0 * min(1.0, max(0.0, ranking.coverage + bound * ranking.mcse))
        line = ax.axhline(level, color="black", linestyle=":", linewidth=1.2)
    handles["coverage ± 1.96 MCSE"] = line
    if nominal is not None:
        handles[f"nominal ({nominal:g})"] = ax.axhline(
            100.0 * nominal, color=_NOMINAL_COLOUR, linestyle="--", linewidth=1.0)
