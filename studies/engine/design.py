"""How a simulation study is declared: its ADEMP (Morris, White & Crowther 2019).

A study is one module of `studies.suite` that binds a `Study` to ``STUDY`` (found there by
`studies.suite.registry`; ``evalcert study new NAME`` writes a runnable one):

* **Aims**: the module docstring, which the study holds (``ademp=__doc__``).
* **Data-generating mechanisms**: a `Grid` per size (``"quick"``, ``"full"``): the parameter
  values whose Cartesian product are the cells, and the number of replicates per cell.
* **Estimands**: ``truth(params)``, the true value in a cell.
* **Methods**: named callables ``method(data, params) -> Estimates``, vectorized over the
  replicates in ``data``; ``wrap_method`` turns a user's callable of the study's declared
  signature into one (bring your own method). A method defined for some cells only (an
  interval valid under one sampling design of two) is declared by ``applies``: elsewhere it
  does not run, and the cell has no values of it.
* **Performance measures**: names from `studies.engine.performance.MEASURES`.

Data come from ``generate(params, n_replicates, *, rng)`` (Monte Carlo path) or, when the
outcome space can be enumerated, from ``enumerate_outcomes(cells)`` (exact path); both return a
`Sample`. Every method sees the same sample (common random numbers across methods).

On the exact path a study may declare ``estimates_depend_on``: the parameters that alone
determine the enumerated outcomes and every method's estimates (for a binomial proportion,
``n`` and the confidence level, not ``p``). Cells that agree on them are then enumerated and
analysed once, as one group; only the outcome probabilities and the true value differ between
its cells.

References
----------
Morris, T. P., White, I. R. & Crowther, M. J. (2019). Using simulation studies to evaluate
statistical methods. *Statistics in Medicine* 38, 2074-2102. R's SimDesign (Chalmers & Adkins
2020, *The Quantitative Methods for Psychology* 16(4), 248-280) organises studies the same way
(design grid; generate, analyse, summarise functions).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from studies.engine.claims import Claim
from studies.engine.performance import MEASURES, Estimates
from studies.engine.regions import region_mask

__all__ = ["FIGURE_KINDS", "RESERVED_NAMES", "Figure", "Grid", "GroupSummary", "Method", "Params",
           "Recommendation", "Sample", "Study"]

Params = Mapping[str, Any]
Method = Callable[[Any, Params], Estimates]
# The most levels a grid's schedule may have: 2^7 = 128 times the declared replicates.
MAX_ROUNDS = 8


@dataclass(frozen=True)
class Grid:
    """Data-generating mechanisms: a product of parameter values, and replicates per cell.

    Attributes
    ----------
    parameters : Mapping[str, Sequence]
        Values of each parameter; cells are their Cartesian product in the given order.
    n_replicates : int
        Monte Carlo replicates per cell (ignored on the exact path).
    methods : tuple of str or None
        The study's methods this grid runs (None: all). A full grid may leave out a method
        too slow for it (say why in the study's docstring).
    task_seconds : float or None
        About how many seconds one task of this grid takes on one core (a Monte Carlo cell
        or an exact group): a scheduling hint, not part of the results or the run's
        identity. A run starts the tasks of the costliest grids first (longest processing
        time first: Graham 1969), so a long task does not start last while the other
        workers idle; tasks without a hint come after, in study order. In a later round a
        task's hint is scaled by the replicates it draws.
    rounds : int
        The most looks a run takes at this grid's claims (`studies.engine.rounds`): round 1
        runs every cell with ``n_replicates``; each later round raises the cells that can still
        decide an open claim to a level of the schedule ``n_replicates x 2^(j - 1)``, ``j = 1
        .. rounds`` (`schedule`). Every claim's false-alarm rate is split over the ``rounds``
        levels (Bonferroni), so it holds however many looks the run takes. 1 (default): one
        look, the replicates as declared.
    where : str
        A query over the parameters (`studies.engine.regions`) that keeps only the cells of
        the product it selects, as SimDesign's ``createDesign(subset = ...)`` does: a quick
        grid can then hold, beside its product, one cell of a region no other cell needs,
        without the whole product around it. "" (default): every cell of the product. Cells
        keep the seeds of their parameters, so a cell kept by a new condition gives the same
        values as before.

    References
    ----------
    Graham, R. L. (1969). Bounds on multiprocessing timing anomalies. *SIAM Journal on
    Applied Mathematics* 17(2), 416-429.

    Examples
    --------
    >>> Grid({"n": [10, 20], "p": [0.5]}, n_replicates=100).cells()
    [{'n': 10, 'p': 0.5}, {'n': 20, 'p': 0.5}]
    >>> Grid({"n": [10, 20], "p": [0.1, 0.5]}, n_replicates=100, where="n * p > 5").cells()
    [{'n': 20, 'p': 0.5}]
    """

    parameters: Mapping[str, Sequence[Any]]
    n_replicates: int
    methods: tuple[str, ...] | None = None
    task_seconds: float | None = None
    rounds: int = 1
    where: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.n_replicates, int) or self.n_replicates < 2:
            raise ValueError(
                f"`n_replicates` must be an integer >= 2; got {self.n_replicates!r}.")
        if isinstance(self.rounds, bool) or not isinstance(self.rounds, int) \
                or not 1 <= self.rounds <= MAX_ROUNDS:
            raise ValueError(f"`rounds` must be an integer from 1 to {MAX_ROUNDS}; got "
                             f"{self.rounds!r}.")
        if self.methods is not None and not self.methods:
            raise ValueError("`methods` must name at least one method or be None; got ().")
        seconds = self.task_seconds
        if seconds is not None and (isinstance(seconds, bool)
                                    or not isinstance(seconds, (int, float))
                                    or not 0 < seconds < math.inf):
            raise ValueError(
                f"`task_seconds` must be a positive number of seconds or None; got {seconds!r}.")
        if not isinstance(self.where, str):
            raise TypeError(f"`where` must be a str (a query over the parameters); got "
                            f"{self.where!r}.")
        if self.where:
            _check_where(self.where, self, "grid")
            if not self.cells():
                raise ValueError(f"`where` must keep at least one cell of the grid; got "
                                 f"{self.where!r}.")

    def cells(self) -> list[dict[str, Any]]:
        """Every cell's parameters, in grid order (those `where` keeps)."""
        names = list(self.parameters)
        product = [dict(zip(names, values, strict=True))
                   for values in itertools.product(*self.parameters.values())]
        if not self.where:
            return product
        kept = region_mask(pd.DataFrame(product, columns=names), self.where)
        return [cell for cell, keep in zip(product, kept.tolist(), strict=True) if keep]

    @property
    def schedule(self) -> tuple[int, ...]:
        """The replicates a Monte Carlo cell may hold, level by level: ``n_replicates x
        2^(j - 1)``, ``j = 1 .. rounds``.

        Examples
        --------
        >>> Grid({"n": [10]}, n_replicates=100, rounds=3).schedule
        (100, 200, 400)
        """
        return tuple(self.n_replicates * 2 ** j for j in range(self.rounds))

    @property
    def n_cells(self) -> int:
        """Number of cells, without building them (full grids can hold millions) unless
        `where` selects some."""
        if self.where:
            return len(self.cells())
        return math.prod(len(values) for values in self.parameters.values())

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the run store."""
        found: dict[str, Any] = {"parameters": {k: list(v) for k, v in self.parameters.items()},
                                 "n_replicates": self.n_replicates}
        if self.rounds > 1:  # a grid of one round is recorded as before rounds existed
            found["rounds"] = self.rounds
        if self.methods is not None:
            found["methods"] = list(self.methods)
        if self.where:  # a whole product is recorded as before conditions existed
            found["where"] = self.where
        return found

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Grid:
        """The grid `to_dict` recorded (its scheduling hint, not recorded, is None)."""
        methods = data.get("methods")
        return cls({name: list(values) for name, values in data["parameters"].items()},
                   n_replicates=int(data["n_replicates"]),
                   methods=None if methods is None else tuple(methods),
                   rounds=int(data.get("rounds", 1)), where=str(data.get("where", "")))


FIGURE_KINDS: tuple[str, ...] = ("coverage_against", "measure_by", "heat_map", "zip_plot",
                                  "summary_bars", "summary_lines")


@dataclass(frozen=True)
class Recommendation:
    """Advice a study's findings support, shown only on a run where its claims all HOLD.

    Attributes
    ----------
    advice : str
        What to do, in plain words ("certify F1 under SRS with jaccard-clopper-pearson").
    claims : tuple of str
        The names of the study's claims it rests on (at least one): the report shows the
        advice, linked to them, only when every one HOLDS on the run, and else says which did
        not and why.
    """

    advice: str
    claims: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.advice or not self.claims or isinstance(self.claims, str):
            raise ValueError(f"a recommendation must give its advice and the names of the "
                             f"claims it rests on; got {self.advice!r} on {self.claims!r}.")


@dataclass(frozen=True)
class Figure:
    """A figure of a study's report: which plot, of which cells, and what it shows.

    Plain data, so that a study can declare its figures without drawing anything; the
    report (`studies.report`) draws them.

    Attributes
    ----------
    kind : str
        The plot (`studies.report.plots`), one of `FIGURE_KINDS`: ``coverage_against``,
        ``measure_by``, ``heat_map``, ``zip_plot``, ``summary_bars``, ``summary_lines``.
        ``summary_bars`` and ``summary_lines`` draw the study's summary table
        (`Study.summary`) rather than its cells: columns side by side as grouped bars (say
        ours beside the paper's, with error bars), or one column against another as lines.
    caption : str
        What the reader should see in it, in plain words.
    where : str
        The cells it shows: a pandas query over the grid parameters (empty: every cell). A
        ``zip_plot`` shows one Monte Carlo cell: the first cell the query selects. A summary
        figure leaves it empty: its ``options["query"]`` selects summary rows.
    options : Mapping[str, Any]
        Keyword arguments of the plot function (``x``, ``panel_by``, ``methods``, ``measure``,
        ...); a ``zip_plot`` takes ``method``. A summary figure also takes ``query``, a pandas
        query over the summary's columns, and ``split``, a column of ``name=value, ...``
        labels turned into columns first (`studies.report.figures.summary_rows`).
    """

    kind: str
    caption: str
    where: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in FIGURE_KINDS:
            raise ValueError(f"`kind` must be one of {FIGURE_KINDS}; got {self.kind!r}.")


@dataclass(frozen=True)
class Sample:
    """Data of one cell, as rows the methods analyse all at once.

    Attributes
    ----------
    data : Any
        What the methods receive (an array whose first axis is the rows, or a tuple of them).
    size : int
        Number of rows.
    frequency : numpy.ndarray or None
        Monte Carlo path with tallied outcomes: replicates per row (None: one each).
    probability : numpy.ndarray or None
        Exact path: the probability of each enumerated outcome, one row per cell of the group
        enumerated (shape ``(cells, size)``).
    """

    data: Any
    size: int
    frequency: NDArray[np.int64] | None = None
    probability: NDArray[np.float64] | None = None

    @property
    def exact(self) -> bool:
        """Whether this is an enumeration of the outcome space (MCSE = 0)."""
        return self.probability is not None


# Column names of the tidy frames and of the claims' working tables.
RESERVED_NAMES: tuple[str, ...] = (
    "study", "position", "method", "measure", "value", "mcse", "path", "n_replicates", "error",
    "target", "null", "bound", "excess", "allowance", "deviation", "spread", "undefined",
    "unknown", "square", "count", "cell")


def _check_where(where: str, grid: Grid, what: str) -> None:
    """ValueError unless ``where`` is a query over the grid's parameters (or empty)."""
    if not where:
        return
    try:
        # one cell of the grid: the query must name its parameters and fit their types
        region_mask(pd.DataFrame({k: [next(iter(v))] for k, v in grid.parameters.items()}),
                    where)
    except Exception as error:  # pandas raises many kinds of errors on a bad query
        raise ValueError(f"`where` must be a query over the parameters of the {what} "
                         f"({', '.join(grid.parameters)}); got {where!r} "
                         f"({type(error).__name__}: {error}).") from None


@dataclass(frozen=True)
class GroupSummary:
    """A study's ``summary`` computed a packed group at a time.

    A run hands each packed group, as it finishes, to a process the run leaves idle, which
    computes the group's share of the summary; when the run ends, the summary is put
    together from the shares instead of reading every group again. Called as
    ``summary(result)``, it computes every share itself: the same rows either way.

    Attributes
    ----------
    part : callable
        ``part(group) -> share``: one packed group's share (picklable: it goes between
        processes), from the group alone.
    table : callable
        ``table(result, shares) -> list of dict``: the summary rows of ``result`` (a
        `studies.engine.StudyResult`), using the shares given by group key and computing
        those of the other groups and of any plain cells.
    """

    part: Callable[[Any], Any]
    table: Callable[[Any, Mapping[str, Any]], Sequence[Mapping[str, Any]]]

    def __call__(self, result: Any) -> Sequence[Mapping[str, Any]]:
        return self.table(result, {})


@dataclass(frozen=True)
class Study:
    """A simulation study's ADEMP; see the module docstring.

    Attributes
    ----------
    name, version : str
        Registry name; version recorded in every run (bump it when results would change).
    grids : Mapping[str, Grid]
        At least ``"quick"`` and ``"full"``.
    truth : callable
        ``truth(params) -> float``, the estimand.
    generate : callable
        ``generate(params, n_replicates, *, rng) -> Sample``, vectorized over replicates.
    methods : Mapping[str, Method]
        Built-in methods by name.
    measures : tuple of str
        Performance measures reported.
    enumerate_outcomes : callable or None
        ``enumerate_outcomes(cells) -> Sample`` (exact path): the outcomes shared by the cells
        (a sequence of params agreeing on ``estimates_depend_on``) with a probability row per
        cell.
    estimates_depend_on : tuple of str or None
        Exact path: the parameters that alone determine the enumerated outcomes and every
        method's estimates (methods are called with the first cell's params, so they must read
        only these). Cells agreeing on them are analysed once, as a group. None (default):
        unknown, every cell is enumerated and analysed on its own.
    wrap_method : callable or None
        Adapts a user callable of the study's declared signature into a `Method`.
    applies : callable or None
        ``applies(method, params) -> bool``: whether the study's method ``method`` is defined
        in the cell ``params`` (None: every method in every cell). Where it is not, the method
        is not run and the cell has no values of it: tables, claims and figures leave the
        pair out (neither a miss nor an error; a claim whose methods apply nowhere in its
        region is NOT RUN). User methods run in every cell. Exact path: called with a group's
        first cell, like the methods, so it must read only ``estimates_depend_on``.
    parameter_space : tuple of float
        Bounds any interval must stay within.
    pack_groups : bool
        Exact path: store each group (cells agreeing on ``estimates_depend_on``, or on
        `packed_by` when the study has ``method_parameters``) as one row of arrays, one value
        per cell and measure, instead of a row per cell; resume then skips finished groups.
        For grids of millions of cells, which a row per cell (about 4 kB) would turn into tens
        of gigabytes. Packed studies write their ``summary`` table instead of a per-cell one.
    method_parameters : tuple of str
        Packed exact path: the parameters among ``estimates_depend_on`` that only the methods
        read (an interval's confidence level and side), never ``enumerate_outcomes`` nor
        ``truth``. Cells that differ only in them share their outcomes and probabilities, so a
        packed group spans every combination of them: its outcomes are enumerated once and
        each method runs once per combination. Empty (default): none.
    claims : tuple of Claim
        The findings that must hold on every run (`studies.engine.claims`), each judged
        HOLDS, INCONCLUSIVE, FAILS or NOT RUN when the run ends.
    figures : tuple of Figure
        The figures of the study's report page, in the order shown.
    summary : callable or None
        ``summary(result) -> list of dict``: the study's headline table (one dict per row, the
        same keys in each), written beside the run store as ``<study>.summary.csv`` and
        ``.txt``; ``result`` is the study's `studies.engine.StudyResult`. A `GroupSummary`
        is computed a packed group at a time as a run goes on. None: the report's
        `studies.report.headline_table` (each measure's range per method).
    findings : callable or None
        ``findings(result, summary) -> list of str``: the study's findings in sentences, each
        number read from ``result`` (its `studies.engine.StudyResult`) or ``summary`` (the
        rows of ``summary``, or of the headline table), written with
        `studies.engine.findings` (a value with its MCSE, a paper's number beside ours).
        Shown on the study's page under the sentences the report writes from the claims'
        verdicts. None: those sentences only.
    estimator_methods : mapping of str to str or to pairs of str
        The public estimator method each of the study's methods runs, as ``function:method``
        (``"proportion_ci:wilson"``; ``"f1_ci:jaccard-clopper-pearson"`` for its two-sided
        interval and its LOSCI alike), or, for a method that runs different public methods
        in different cells, ``(region, function:method)`` pairs (a region: a query over the
        grid parameters, as a claim's ``where``): what `studies.engine.pins` reads to say
        which claims hold each public method to its validity and its efficiency. Methods not
        named (a peer library's, a helper) pin nothing.
    recommendations : tuple of Recommendation
        Advice its claims support (`Recommendation`): the report opens with the advice whose
        claims all HOLD on the run, and says which are withheld and why (a claim the study
        no longer states, as in a copy with fewer claims, withholds it).
    ademp : str
        The study's ADEMP in words: a title line, then sections ``Aims``,
        ``Data-generating mechanisms``, ``Estimands``, ``Methods``, ``Performance measures``
        (and ``References``), as in a study module's docstring (a suite module passes
        ``ademp=__doc__``). Shown on the study's page and by ``evalcert study list``, so the
        report needs nothing but the `Study`. Empty: the page shows no ADEMP sections.
    """

    name: str
    version: str
    grids: Mapping[str, Grid]
    truth: Callable[[Params], float]
    generate: Callable[..., Sample]
    methods: Mapping[str, Method]
    measures: tuple[str, ...] = MEASURES
    enumerate_outcomes: Callable[[Sequence[Params]], Sample] | None = None
    estimates_depend_on: tuple[str, ...] | None = None
    wrap_method: Callable[[Callable[..., Any]], Method] | None = None
    applies: Callable[[str, Params], bool] | None = None
    parameter_space: tuple[float, float] = field(default=(-math.inf, math.inf))
    pack_groups: bool = False
    method_parameters: tuple[str, ...] = ()
    claims: tuple[Claim, ...] = ()
    figures: tuple[Figure, ...] = ()
    summary: Callable[[Any], Sequence[Mapping[str, Any]]] | None = None
    findings: Callable[[Any, Sequence[Mapping[str, Any]]], Sequence[str]] | None = None
    estimator_methods: Mapping[str, str | tuple[tuple[str, str], ...]] = field(
        default_factory=dict)
    recommendations: tuple[Recommendation, ...] = ()
    ademp: str = ""

    def __post_init__(self) -> None:
        def public(v: Any) -> bool:
            return isinstance(v, str) and v.count(":") == 1 and all(v.split(":"))

        bad = sorted(k for k, v in self.estimator_methods.items()
                     if not (public(v) or (isinstance(v, tuple) and v and all(
                         isinstance(pair, tuple) and len(pair) == 2
                         and isinstance(pair[0], str) and public(pair[1]) for pair in v))))
        if bad:
            raise ValueError(f"`estimator_methods` must map method names to "
                             f"'function:method' strings or (region, 'function:method') "
                             f"pairs; got {bad} of study {self.name!r}.")
        missing = {"quick", "full"} - set(self.grids)
        if missing:
            raise ValueError(f"`grids` must include 'quick' and 'full'; missing {sorted(missing)}.")
        unknown = set(self.measures) - set(MEASURES)
        if unknown:
            raise ValueError(f"`measures` must be among {MEASURES}; got {sorted(unknown)}.")
        if self.estimates_depend_on is not None and self.enumerate_outcomes is None:
            raise ValueError("`estimates_depend_on` needs `enumerate_outcomes` (exact path); "
                             "got None.")
        if self.pack_groups and self.estimates_depend_on is None:
            raise ValueError("`pack_groups` needs `estimates_depend_on` (the groups); got None.")
        if self.method_parameters and not (
                self.pack_groups and set(self.method_parameters) <= set(
                    self.estimates_depend_on or ())):
            raise ValueError(f"`method_parameters` must name parameters of "
                             f"`estimates_depend_on` of a study with `pack_groups`; got "
                             f"{self.method_parameters!r}.")
        for name, grid in self.grids.items():
            self.check_grid(grid, name)
        # A claim's methods and measure are not checked here: a grid or a copy of the study may
        # run fewer of them, and a claim about what did not run is judged NOT RUN.
        for item in (*self.claims, *self.figures):
            for grid_name, grid in self.grids.items():
                _check_where(item.where, grid, f"{self.name} {grid_name} grid")
        for claim in self.claims:
            named = [*claim.mean_over, *([claim.target] if isinstance(claim.target, str)
                                         else [])]
            for grid_name, grid in self.grids.items():
                unknown = sorted(set(named) - set(grid.parameters))
                if unknown:
                    raise ValueError(
                        f"`mean_over` and `target` of claim {claim.name!r} must name parameters "
                        f"of the {self.name} {grid_name} grid ({', '.join(grid.parameters)}); "
                        f"got {unknown}.")
            if not set(claim.grids) <= set(self.grids):
                raise ValueError(
                    f"`grids` of claim {claim.name!r} must name grids of study {self.name} "
                    f"({', '.join(self.grids)}); got {list(claim.grids)}.")
        names = [claim.name for claim in self.claims]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"`claims` of study {self.name!r} must have distinct names; got "
                             f"{repeated} more than once.")

    @property
    def packed_by(self) -> tuple[str, ...]:
        """The parameters a packed group's cells share: `estimates_depend_on` without the
        `method_parameters`."""
        return tuple(k for k in self.estimates_depend_on or ()
                     if k not in self.method_parameters)

    def check_grid(self, grid: Grid, name: str = "given") -> None:
        """ValueError unless every name in `estimates_depend_on` is a parameter of ``grid``.

        Also unless the grid's parameter names are free: the tidy result frame and the claims'
        tables use `RESERVED_NAMES` for their own columns; and unless a study with
        `pack_groups` has a whole product (its groups' cells are placed by the product).
        """
        if self.pack_groups and grid.where:
            raise ValueError(f"`where` of the {name} grid of study {self.name!r} must be empty: "
                             f"a study with `pack_groups` runs whole products; got "
                             f"{grid.where!r}.")
        taken = sorted(set(grid.parameters) & set(RESERVED_NAMES))
        if taken:
            raise ValueError(f"parameters of the {name} grid of study {self.name!r} must not be "
                             f"named {', '.join(RESERVED_NAMES)}; got {taken}.")
        missing = set(self.estimates_depend_on or ()) - set(grid.parameters)
        if missing:
            raise ValueError(
                f"`estimates_depend_on` of study {self.name!r} must name parameters of its "
                f"{name} grid; got {sorted(missing)}.")

    def for_grid(self, grid: Grid) -> Study:
        """The study with only the methods ``grid`` selects (itself when it selects all).

        Checked when a run is planned, not when the study is built, so a copy of a study
        with fewer methods (``dataclasses.replace``) stays valid for its other grids.
        """
        if grid.methods is None:
            return self
        unknown = sorted(set(grid.methods) - set(self.methods))
        if unknown:
            raise ValueError(f"`methods` of the grid must be among the methods of study "
                             f"{self.name!r} ({', '.join(self.methods)}); got {unknown}.")
        return dataclasses.replace(self, methods={k: self.methods[k] for k in grid.methods})

    def grid(self, name: str) -> Grid:
        """The grid called ``name``, with a one-line error listing the valid ones."""
        if name not in self.grids:
            raise ValueError(
                f"`grid` must be one of {sorted(self.grids)} for study {self.name!r}; "
                f"got {name!r}.")
        return self.grids[name]
