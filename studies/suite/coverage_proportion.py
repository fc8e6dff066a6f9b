"""Exact coverage and expected width of every binomial-proportion interval (``proportion_ci``).

Aims
    Give, without Monte Carlo error, the coverage and expected width of every method of
    `estimators.proportion_ci` (and, when installed, of statsmodels' and scipy's intervals as an
    audit) two-sided and one-sided at 90/95/99%, and reproduce the findings of Brown, Cai &
    DasGupta (2001, "BCD"): the Wald interval's erratic coverage, which goes up and down with
    ``n`` at fixed ``p`` (their Figure 1, p = 0.2, n = 25-100: 0.95 at n = 31, 0.89 at n = 32)
    and stays well below nominal for small ``n p`` even at large ``n`` (their Example 2 and
    Table 1, p = 0.005: 0.945 at n = 591 but 0.792 at n = 592); Wilson's and Jeffreys' mean
    coverage near nominal (their Figures 5 and 11); Agresti-Coull's conservatism at small ``n``
    and Clopper-Pearson's coverage never below nominal (their Figures 8 and 11, section 4.2.1).
Data-generating mechanisms
    ``X ~ Binomial(n, p)``; cells are (``n``, ``p``, ``confidence_level``, ``alternative``).
    Full grid: ``n = 1..1000``, ``p = (i - 1/2) / 1000`` for ``i = 1..1000`` (1000 points
    symmetric in (0, 1)), levels 0.90/0.95/0.99, alternatives two-sided/greater/less: 9 000 000
    cells in 1 000 groups. Quick grid: ``n`` in {5, 10, 20, 30, 50, 100}, 99 values of ``p``,
    the same levels and alternatives: 5 346 cells in 6 groups.
Estimands
    ``p``.
Methods
    Every ``proportion_ci`` method (`estimators.PROPORTION_METHODS`). Peer audit (optional,
    present only when the package is installed): statsmodels ``proportion_confint`` methods
    ``normal``, ``agresti_coull``, ``beta``, ``wilson``, ``jeffreys`` (as
    ``statsmodels:<name>``) and scipy ``binomtest(x, n).proportion_ci`` methods ``exact``,
    ``wilson``, ``wilsoncc`` (as ``scipy:<name>``). statsmodels' ``binom_test`` method is in
    `PEER_METHODS` but not in the study: it inverts scipy's two-sided test by a root search per
    count (50-70 ms per (x, n)), about 21 core-hours on the full grid; run it on a small grid
    with a patched study. On the full grid statsmodels' intervals run at every ``n`` up to 30
    and at the multiples of 10 above (127 of the 1,000 values of ``n``; `applies`): their
    formulas do not change with ``n``, and where they differ from ours it shows at small
    ``n``; the audit then costs a tenth of running them everywhere. A user method
    (``--method module:callable``) has the signature
    ``ci(successes, trials, *, confidence_level, alternative) -> (low, high)`` with
    ``successes`` an int array, ``trials`` an int and ``alternative`` in {"two-sided",
    "greater", "less"} (``"greater"``: lower bound, high = 1).

    Where the peers differ from ours, and why:

    * statsmodels names the one-sided intervals the other way round: its ``"larger"`` returns
      ``low = 0`` (an upper bound, our ``"less"``) and ``"smaller"`` returns ``high = 1`` (a
      lower bound, our ``"greater"``); the adapter maps them, so the same cells compare.
    * statsmodels ``jeffreys`` keeps the Beta(x + 1/2, n - x + 1/2) quantile at x = 0 and
      x = n, where ours (BCD section 4.1.2's modification) sets the lower bound to 0 at x = 0
      and the upper to 1 at x = n. Its interval at x = 0 then misses every ``p`` below that
      quantile (9.3e-5 at n = 5, 4.9e-7 at n = 1000, 95% two-sided), so its coverage tends
      to 0 as p -> 0 (0.0 at n = 5, p = 1e-5, where ours is 0.99995), and likewise as
      p -> 1. On the full grid this shows in 66 of its cells, all with n <= 15
      and p within 0.0055 of 0 or 1 (90% and 95%; at 99% the quantile lies below the grid):
      statsmodels' coverage there is 0 (n = 1, p = 0.0005, 90%: ours 0.9995). Elsewhere
      the two differ in width only (by at most 0.0062).
    * statsmodels ``normal``, ``agresti_coull``, ``wilson`` and ``beta`` and scipy ``exact``
      and ``wilson`` agree with ours up to rounding (the same formulas and clipping): on the
      full grid the statsmodels coverages equal ours in every cell they run in and the widths
      to 6e-16.
    * scipy ``wilsoncc`` is the continuity-corrected score interval as scipy writes it; ours
      (``wilson-cc``) is Newcombe's (1998) method 4. scipy has no Jeffreys or Agresti-Coull.

    Intervals do not depend on ``p``, and the outcomes ``x = 0..n`` and their probabilities
    do not depend on the level or the side (``method_parameters``), so each ``n`` is one
    group on the engine's batched exact path: the binomial probability matrix of its 1000
    values of ``p`` is computed once, and every method is applied to ``x = 0..n`` once per
    level and side. The coverage of all 1000 values of ``p`` then follows from the
    cumulative sums of that matrix: both ends of every built-in interval are non-decreasing
    in ``x`` (the engine checks this for each method, level and side, and would sum count
    by count where they are not), so the counts whose interval holds ``p`` are one run
    ``a..b``, found by binary search, and the coverage is ``F(b) - F(a - 1)``. The width
    needs the whole matrix (a dot product per value of ``p``). scipy's interval is per
    (x, n) scalar: the adapter computes it once per count per group and caches the
    ``binomtest`` result per (x, n, alternative), which the three scipy methods and the three
    levels then share.
Performance measures
    Coverage and width (exact: MCSE = 0). One-sided intervals have width ``1 - low`` or
    ``high``, their expected distance to the far end of [0, 1]. `summarise` reduces a run to,
    per (method, level, alternative): mean coverage over the grid (uniform over ``p``, then
    ``n``), minimum coverage, share of cells below nominal - 0.01, mean width and the worst
    cells. Their MCSE is 0 (no Monte Carlo error; what remains is the resolution of the p grid).

Cost
    Quick grid: 1.7 s of computing on one core. Full grid (1 000 groups stored packed,
    ``pack_groups``: one row of arrays per ``n``, 16 bytes per cell and method, a 1.2 GB
    store): 119-134 s on 1 worker with its claims, tables and report, of which about 11 s
    after the last group is stored; 86-91 s on 2 workers (2026-11-28, this project's 2-core
    machine; `benchmarks/RESULTS.md`, "Full grid of coverage_proportion"); judging and
    reporting it again from the store (`evalcert study report`) take 21-25 s. Each group is
    committed to the store on a thread of its own; as it finishes, processes beside the run
    compute its shares of the page tables and of the summary (`summary_share`, a
    `GroupSummary`), so that after the last group the claims and figures remain, computed in
    those processes (`studies.pipeline.publication`). Judging and reporting read the groups'
    arrays from the store a part of the grid at a time, only the rows each reader asks for,
    and build tidy rows only for the cells, methods and measures each claim, table and
    figure reads (`StudyResult.frames`, ``where``; a claim on exact values only for those
    that can change its verdict). A group's computing splits into ours' intervals
    (wilson-cc, Clopper-Pearson, Jeffreys and mid-p run their lower-bound kernel once for
    both ends, their failure counts ``n - x`` being the counts reversed; mid-p's root search
    is about half of ours), the coverage runs and expected widths of each method at each
    level and side (a dot product per value of ``p``, about a sixth of the group), the
    probability matrices and cumulative sums, and statsmodels' intervals where they run
    (about 28% of an audited group). scipy's intervals are audited on the quick grid only:
    each is a scalar root search per count (1.7 ms per exact interval at n = 500), which
    would make the full grid about 3 core-hours.

References
----------
Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation for a binomial proportion.
*Statistical Science* 16, 101-133. Newcombe, R. G. (1998). Two-sided confidence intervals for
the single proportion. *Statistics in Medicine* 17, 857-872. Morris, White & Crowther (2019),
*Statistics in Medicine* 38, 2074-2102 (ADEMP).
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from estimators import PROPORTION_METHODS, proportion_ci
from studies.engine import CellResult, GroupSummary, PackedGroup, StudyResult
from studies.engine.claims import Claim
from studies.engine.design import Figure, Grid, Method, Params, Recommendation, Study
from studies.engine.performance import Estimates
from studies.suite.binomial_coverage import enumerate_outcomes, generate, truth

__all__ = [
    "ALTERNATIVES",
    "AUDIT_SMALL_N",
    "LEVELS",
    "N_BANDS",
    "PEER_METHODS",
    "STUDY",
    "CellCoverage",
    "MethodSummary",
    "applies",
    "exact_coverage",
    "interval_methods",
    "select",
    "summarise",
    "summary_table",
]

LEVELS: tuple[float, ...] = (0.90, 0.95, 0.99)
ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")
BELOW = 0.01  # a cell "under-covers" when below nominal - BELOW
# worst-cell candidates a summary collects before keeping only the lowest
_PENDING = 4096
_ALL_N = (0, 2**62)  # the band of every n
# statsmodels' one-sided names are reversed: "smaller" is our lower bound ("greater").
_STATSMODELS_SIDE = {"two-sided": "two-sided", "greater": "smaller", "less": "larger"}
_SLOW_PEERS = ("statsmodels:binom_test",)

Interval = Callable[..., tuple[Any, Any]]


def _ours(name: str) -> Interval:
    return functools.partial(proportion_ci, method=name)


def _statsmodels_ci(name: str, successes: Any, trials: int, *, confidence_level: float,
                    alternative: str) -> tuple[Any, Any]:
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(successes, trials, alpha=1.0 - confidence_level,
                                   method=name, alternative=_STATSMODELS_SIDE[alternative])
    # a one-sided call returns the open end as the scalar 0 or 1
    shape = np.shape(successes)
    return np.broadcast_to(low, shape), np.broadcast_to(high, shape)


@functools.lru_cache(maxsize=65_536)
def _binomtest(x: int, n: int, alternative: str) -> Any:
    # the interval does not depend on the null p; one result serves every level and method
    # (the quick grid takes 4.7 s with it, 5.6 s without: benchmarks/bench_study_caches.py)
    return stats.binomtest(x, n, alternative=alternative)


def _scipy_ci(name: str, successes: Any, trials: int, *, confidence_level: float,
              alternative: str) -> tuple[Any, Any]:
    bounds = [_binomtest(int(x), int(trials), alternative).proportion_ci(
        confidence_level, method=name) for x in np.asarray(successes)]
    return (np.array([b.low for b in bounds], dtype=np.float64),
            np.array([b.high for b in bounds], dtype=np.float64))


def _peers() -> dict[str, Interval]:
    found: dict[str, Interval] = {}
    if importlib.util.find_spec("statsmodels") is not None:
        for name in ("normal", "agresti_coull", "beta", "wilson", "jeffreys", "binom_test"):
            found[f"statsmodels:{name}"] = functools.partial(_statsmodels_ci, name)
    for name in ("exact", "wilson", "wilsoncc"):
        found[f"scipy:{name}"] = functools.partial(_scipy_ci, name)
    return found


PEER_METHODS: dict[str, Interval] = _peers()


def interval_methods(*, peers: bool = True) -> dict[str, Interval]:
    """Every interval of the study by name: ours, then the installed peers (not the slow one)."""
    found = {name: _ours(name) for name in PROPORTION_METHODS}
    if peers:
        found |= {k: v for k, v in PEER_METHODS.items() if k not in _SLOW_PEERS}
    return found


def _analyse(ci: Interval, successes: Any, params: Params) -> Estimates:
    n = int(params["n"])
    low, high = ci(successes, n, confidence_level=float(params["confidence_level"]),
                   alternative=str(params["alternative"]))
    return Estimates(low=np.asarray(low, dtype=np.float64),
                     high=np.asarray(high, dtype=np.float64))


def wrap_method(ci: Interval) -> Method:
    """A `Method` from ``ci(successes, trials, *, confidence_level, alternative)``."""
    return functools.partial(_analyse, ci)


@dataclass(frozen=True)
class CellCoverage:
    """Exact operating characteristics of one interval method in one cell.

    Attributes
    ----------
    coverage : float
        ``P(low(X) <= p <= high(X))`` for ``X ~ Binomial(n, p)``.
    width : float
        ``E[high(X) - low(X)]``.
    """

    coverage: float
    width: float


def exact_coverage(method: str | Interval, n: int, p: float, *, confidence_level: float = 0.95,
                   alternative: str = "two-sided") -> CellCoverage:
    """Exact coverage and expected width of one interval at one (n, p), without the engine.

    Sums ``scipy.stats.binom.pmf(x, n, p)`` over the counts ``x = 0..n`` whose interval holds
    ``p`` (and weights each width by it), so one number can be checked by hand.

    Parameters
    ----------
    method : str or callable
        A name of `interval_methods` (ours or a peer) or a callable
        ``ci(successes, trials, *, confidence_level, alternative) -> (low, high)``.
    n : int
        Number of trials (>= 1).
    p : float
        Success probability in [0, 1].
    confidence_level : float
        Nominal level.
    alternative : {"two-sided", "greater", "less"}
        As in `estimators.proportion_ci`.

    Returns
    -------
    CellCoverage

    References
    ----------
    Brown, Cai & DasGupta (2001), Statistical Science 16:101-133, eq. (2) (the coverage sum).

    Examples
    --------
    BCD Example 2: the Wald interval at p = 0.005 covers 79% of the time at n = 592.

    >>> round(exact_coverage("wald", 592, 0.005).coverage, 3)
    0.792
    """
    ci = method if callable(method) else {**interval_methods(), **PEER_METHODS}[method]
    x = np.arange(int(n) + 1)
    low, high = ci(x, int(n), confidence_level=confidence_level, alternative=alternative)
    low = np.asarray(low, dtype=np.float64)
    high = np.asarray(high, dtype=np.float64)
    weight = stats.binom.pmf(x, int(n), p)
    inside = (low <= p) & (p <= high)
    return CellCoverage(coverage=float(np.sum(weight[inside])),
                        width=float(np.sum(weight * (high - low))))


def select(result: StudyResult, **params: Any) -> StudyResult:
    """The cells of ``result`` whose parameters equal ``params`` (e.g. one level and side).

    Packed groups are expanded into cells: for quick grids and slices, not a full grid.
    """
    return StudyResult(result.study, tuple(
        cell for cell in result.expanded().cells
        if all(cell.params[k] == v for k, v in params.items())))


@dataclass(frozen=True)
class MethodSummary:
    """One method's coverage over a slice of the grid (one level and alternative).

    Every value is exact (MCSE 0). ``worst`` holds the cells of lowest coverage as
    ``(n, p, coverage)``; ``n_range`` the smallest and largest ``n`` summarised.
    """

    method: str
    confidence_level: float
    alternative: str
    n_range: tuple[int, int]
    cells: int
    mean_coverage: float
    min_coverage: float
    share_below: float
    mean_width: float
    worst: tuple[tuple[int, float, float], ...]


@dataclass(frozen=True)
class _Part:
    """One slice of a chunk (one level and side, one band) for every method of the chunk.

    Row ``i`` of each array belongs to the chunk's ``i``-th method; ``worst[i]`` holds that
    method's candidate cells for the lowest coverages, ``(coverage, position, n, p)`` rows.
    """

    cells: int
    n_low: int
    n_high: int
    coverage: NDArray[np.float64]
    width: NDArray[np.float64]
    below: NDArray[np.int64]
    worst: list[NDArray[np.float64]]


def _part(n: NDArray[Any], p: NDArray[Any], position: NDArray[Any],
          coverage: NDArray[np.float64], width: NDArray[np.float64], level: float,
          keep: int) -> _Part:
    """Sums, counts and worst-cell candidates of ``coverage``, ``width`` (methods x cells)."""
    cells = coverage.shape[1]
    if cells > keep:
        # a method's ``keep`` lowest are among the cells at or below its keep-th lowest value
        cut = np.partition(coverage, keep - 1, axis=1)[:, keep - 1]
    else:
        cut = np.full(coverage.shape[0], np.inf)
    # a method whose keep-th lowest is nan keeps every cell
    rows, picked = np.nonzero((coverage <= cut[:, None]) | np.isnan(cut)[:, None])
    found = np.column_stack([coverage[rows, picked], position[picked], n[picked], p[picked]])
    worst = np.split(found, np.cumsum(np.bincount(rows, minlength=coverage.shape[0]))[:-1])
    return _Part(cells=cells, n_low=int(n.min()), n_high=int(n.max()),
                 coverage=coverage.sum(axis=1), width=width.sum(axis=1),
                 below=np.count_nonzero(coverage < level - BELOW, axis=1), worst=worst)


@dataclass
class _Tally:
    """Running sums of one (method, level, alternative, band): a full grid streams through.

    The sums are kept as one partial sum per chunk and added exactly (``math.fsum``) at the
    end, so the result does not depend on the order in which the chunks arrive.
    """

    level: float
    keep: int
    cells: int = 0
    coverage: list[float] = field(default_factory=list)
    width: list[float] = field(default_factory=list)
    below: int = 0
    n_low: int = 2**62
    n_high: int = 0
    candidates: list[NDArray[np.float64]] = field(default_factory=list)
    pending: int = 0

    def add(self, part: _Part, row: int) -> None:
        self.cells += part.cells
        self.coverage.append(float(part.coverage[row]))
        self.width.append(float(part.width[row]))
        self.below += int(part.below[row])
        self.n_low, self.n_high = min(self.n_low, part.n_low), max(self.n_high, part.n_high)
        self.candidates.append(part.worst[row])
        self.pending += part.worst[row].shape[0]
        if self.pending > _PENDING:
            self.worst()

    def worst(self) -> NDArray[np.float64]:
        """The ``keep`` cells of lowest coverage, ties in grid order (position)."""
        rows = np.vstack(self.candidates)
        rows = rows[np.lexsort((rows[:, 1], rows[:, 0]))[:self.keep]]
        self.candidates, self.pending = [rows], rows.shape[0]
        return rows

    def summary(self, method: str, side: str) -> MethodSummary:
        worst = self.worst()
        return MethodSummary(
            method=method, confidence_level=self.level, alternative=side,
            n_range=(self.n_low, self.n_high), cells=self.cells,
            mean_coverage=math.fsum(self.coverage) / self.cells,
            min_coverage=float(worst[0, 0]), share_below=self.below / self.cells,
            mean_width=math.fsum(self.width) / self.cells,
            worst=tuple((int(r[2]), float(r[3]), float(r[0])) for r in worst))


def _cell_chunks(cells: Sequence[CellResult]) -> Iterator[
        tuple[dict[str, NDArray[Any]], dict[str, dict[str, NDArray[Any]]]]]:
    """(parameter columns, measure arrays) of each method's plain cells."""
    columns = {k: np.array([c.params[k] for c in cells])
               for k in ("n", "p", "confidence_level", "alternative")}
    for method in dict.fromkeys(m for c in cells for m in c.performance):
        have = [c for c in cells if method in c.performance]
        index = np.array([i for i, c in enumerate(cells) if method in c.performance])
        yield ({k: v[index] for k, v in columns.items()}
               | {"position": np.array([c.position for c in have])},
               {method: {m: np.array([c.performance[method][m].value for c in have])
                         for m in ("coverage", "width")}})


_Slice = tuple[float, str, dict[str, NDArray[Any]], list[str], NDArray[np.float64],
               NDArray[np.float64]]


def _slices(groups: Sequence[PackedGroup]) -> Iterator[_Slice]:
    """Each chunk's cells of one level and side: ``(level, side, columns, methods, coverage,
    width)``, columns ``n``, ``p`` and ``position`` and the measures as (methods x cells)
    arrays, the cells in grid order.

    Groups laid out alike with the level and the side among their axes are cut along those
    axes (their arrays reshaped, no search); other results are sorted by level and side. A
    group without values (its data could not be made: the errors say why) adds nothing.
    """
    groups = [g for g in groups if g.values]
    if not groups:
        return
    if all(g.axes == groups[0].axes for g in groups) and {
            "confidence_level", "alternative"} <= set(groups[0].axes):
        yield from _laid_out(groups)
    else:
        yield from _sorted(*_chunk(groups))


def _chunk(groups: Sequence[PackedGroup]) -> tuple[dict[str, NDArray[Any]],
                                                    dict[str, dict[str, NDArray[Any]]]]:
    names = ("n", "p", "confidence_level", "alternative")
    columns = {k: np.concatenate([g.column(k) for g in groups]) for k in names}
    return columns | {"position": np.concatenate([g.positions for g in groups])}, {
        m: {k: np.concatenate([g.values[m][k] for g in groups]) for k in found}
        for m, found in groups[0].values.items()}


def _laid_out(groups: Sequence[PackedGroup]) -> Iterator[_Slice]:
    axes = list(groups[0].axes)
    shape = [len(groups), *(len(v) for v in groups[0].axes.values())]
    names = list(groups[0].values)
    stacked = {k: np.stack([g.column(k) for g in groups]).reshape(shape) for k in ("n", "p")}
    stacked["position"] = np.stack([g.positions for g in groups]).reshape(shape)
    measures = {m: np.stack([[g.values[name][m] for g in groups] for name in names]).reshape(
        [len(names), *shape]) for m in ("coverage", "width")}
    level_axis, side_axis = axes.index("confidence_level"), axes.index("alternative")
    order = sorted(itertools.product(enumerate(groups[0].axes["confidence_level"]),
                                     enumerate(groups[0].axes["alternative"])),
                   key=lambda pair: (pair[0][1], pair[1][1]))
    for (i, level), (j, side) in order:
        at: list[Any] = [slice(None)] * len(shape)
        at[1 + level_axis], at[1 + side_axis] = i, j
        columns = {k: v[tuple(at)].ravel() for k, v in stacked.items()}
        yield (float(level), str(side), columns, names,
               measures["coverage"][(slice(None), *at)].reshape(len(names), -1),
               measures["width"][(slice(None), *at)].reshape(len(names), -1))


def _sorted(columns: dict[str, NDArray[Any]], methods: dict[str, dict[str, NDArray[Any]]]
            ) -> Iterator[_Slice]:
    names = list(methods)
    coverage = np.vstack([methods[m]["coverage"] for m in names])
    width = np.vstack([methods[m]["width"] for m in names])
    levels, level_code = np.unique(columns["confidence_level"], return_inverse=True)
    sides, side_code = np.unique(columns["alternative"], return_inverse=True)
    combination = level_code * len(sides) + side_code
    order = np.argsort(combination, kind="stable")  # grid order within each (level, side)
    starts = np.searchsorted(combination[order], np.arange(len(levels) * len(sides) + 1))
    for i, (level, side) in enumerate(itertools.product(levels, sides)):
        same = order[starts[i]:starts[i + 1]]
        if same.size:
            yield (float(level), str(side),
                   {k: columns[k][same] for k in ("n", "p", "position")}, names,
                   coverage[:, same], width[:, same])


def summarise(result: StudyResult, *, worst: int = 3,
              bands: Sequence[tuple[int, int]] | None = None) -> list[MethodSummary]:
    """Per (method, level, alternative): mean and minimum coverage, share below nominal - 0.01.

    The mean is uniform over the grid's cells; on a product grid it is the mean over ``p``
    averaged over ``n`` (BCD's "average coverage", their Figure 11, is the mean over p at
    one n: pass ``bands=[(n, n)]``). Reads packed groups as arrays, a group at a time, so a
    full grid (9,000,000 cells) streams through in memory proportional to one group.

    Parameters
    ----------
    result : StudyResult
        Cells or packed groups of this study (from `studies.engine.run` or
        `results_from_store`).
    worst : int
        How many lowest-coverage cells to keep per summary.
    bands : sequence of (int, int), optional
        Summarise the cells with ``low <= n <= high`` of each band separately (bands may
        overlap; empty bands are left out); None: all cells together.

    Returns
    -------
    list of MethodSummary
        In order of method, level, alternative and band.
    """
    return _summaries(result, worst, list(bands) if bands is not None else [_ALL_N], {})


_Share = list[tuple[tuple[str, float, str, int], _Part, int]]


def _shares(slices: Iterable[_Slice], limits: Sequence[tuple[int, int]], worst: int
            ) -> _Share:
    """What the cells of ``slices`` add to each (method, level, alternative, band)'s tally:
    ``(key, part, row)``, the part's row ``row`` being the method's."""
    found: _Share = []
    for level, side, columns, names, coverage, width in slices:
        n = columns["n"]
        parts: dict[bytes, _Part] = {}  # bands holding the same cells share their sums
        for b, (low, high) in enumerate(limits):
            inside = (n >= low) & (n <= high)
            if not inside.any():
                continue
            key = inside.tobytes()
            if key not in parts:
                every = bool(inside.all())
                parts[key] = _part(*(v if every else v[..., inside] for v in (
                    n, columns["p"], columns["position"], coverage, width)), level, worst)
            found += [((method, level, side, b), parts[key], row)
                      for row, method in enumerate(names)]
    return found


def _summaries(result: StudyResult, worst: int, limits: Sequence[tuple[int, int]],
               given: Mapping[str, _Share]) -> list[MethodSummary]:
    """`summarise`, with the shares of the packed groups in ``given`` (by key) computed
    already; each other group is read once. The sums are exact over the shares, so the
    summaries do not depend on the order the groups came in."""
    tallies: dict[tuple[str, float, str, int], _Tally] = {}

    def add(share: _Share) -> None:
        for key, part, row in share:
            tallies.setdefault(key, _Tally(key[1], worst)).add(part, row)

    for group in result.groups:
        found = given.get(group.key)
        add(found if found is not None else _shares(_slices([group.loaded()]), limits, worst))
    for columns, methods in _cell_chunks(result.cells):
        add(_shares(_sorted(columns, methods), limits, worst))
    return [tallies[key].summary(key[0], key[2]) for key in sorted(
        tallies, key=lambda k: (_method_order(k[0]), k[1], ALTERNATIVES.index(k[2]), k[3]))]


def _method_order(method: str) -> tuple[int, str]:
    known = list(interval_methods())
    return (known.index(method), method) if method in known else (len(known), method)


N_BANDS: tuple[tuple[int, int], ...] = ((1, 29), (30, 99), (100, 1000))
_TABLE_BANDS = [_ALL_N, *N_BANDS]


def summary_table(result: StudyResult, shares: Mapping[str, _Share] | None = None
                  ) -> list[dict[str, Any]]:
    """The run's headline table: `summarise` over all ``n`` and per band of `N_BANDS`.

    One pass over the result (the bands overlap); ``shares``: the `summary_share` of packed
    groups computed already, by group key (as a run goes on).
    """
    return [{
        "method": s.method, "confidence_level": s.confidence_level,
        "alternative": s.alternative, "n": f"{s.n_range[0]}-{s.n_range[1]}",
        "cells": s.cells, "mean_coverage": round(s.mean_coverage, 6),
        "min_coverage": round(s.min_coverage, 6), "share_below": round(s.share_below, 6),
        "mean_width": round(s.mean_width, 6),
        "worst": "; ".join(f"n={n} p={p:g}: {c:.4f}" for n, p, c in s.worst)}
        for s in _summaries(result, 3, _TABLE_BANDS, shares or {})]


def summary_share(group: PackedGroup) -> _Share:
    """A packed group's share of `summary_table` (what its cells add to each tally)."""
    return _shares(_slices([group.loaded()]), _TABLE_BANDS, 3)


def _grid(ns: Iterable[int], points: int, seconds: float,
          methods: Sequence[str] | None = None) -> Grid:
    ps = [round((i - 0.5) / points, 6) for i in range(1, points + 1)]
    return Grid({"n": list(ns), "p": ps, "confidence_level": list(LEVELS),
                 "alternative": list(ALTERNATIVES)}, n_replicates=10_000,
                methods=None if methods is None else tuple(methods), task_seconds=seconds)


AUDIT_SMALL_N = 30  # statsmodels' intervals run at every n up to this, then at multiples of 10


def applies(method: str, params: Params) -> bool:
    """Whether ``method`` runs in the cell: ours everywhere; the statsmodels audit at every
    ``n`` up to `AUDIT_SMALL_N` and at the multiples of 10 above (on the full grid 127 of
    its 1,000 values of ``n``, a tenth of the audit's cost; every ``n`` of the quick grid).

    The audit checks the peer's formulas against ours; they do not change with ``n``, and
    where they differ (Jeffreys at x = 0 and x = n) it shows at small ``n``.
    """
    n = int(params["n"])
    return not method.startswith("statsmodels:") or n <= AUDIT_SMALL_N or n % 10 == 0


def _vectorised_methods() -> list[str]:
    """Ours and the array-valued peers: scipy's per-count intervals are too slow for 9M cells."""
    return [name for name in interval_methods() if not name.startswith("scipy:")]


CLAIMS = (
    Claim("clopper-pearson-conservative",
          "Clopper-Pearson never covers less than the nominal level, two- or one-sided "
          "(Brown, Cai & DasGupta 2001, section 4.2.1).",
          ("clopper-pearson",), "coverage", "at_least", target="confidence_level",
          pins=("validity",)),
    Claim("wilson-jeffreys-mean-near-nominal",
          "Averaged over p, the two-sided Wilson and Jeffreys intervals cover within 1 point "
          "of nominal at each n >= 10 (n >= 11 at 90%, where Wilson's mean at n = 10 is 1.03 "
          "points above) (Brown, Cai & DasGupta 2001, Figures 5 and 11).",
          ("wilson", "jeffreys"), "coverage", "within", target="confidence_level", margin=0.01,
          where="alternative == 'two-sided' and (n >= 11 or (n >= 10 and confidence_level >= "
                "0.95))",
          mean_over=("p",), pins=("validity", "efficiency")),
    Claim("wilson-jeffreys-one-sided-mean-near-nominal",
          "Averaged over p, the one-sided Wilson and Jeffreys bounds cover within 1 point of "
          "nominal at each n >= 10 and level (on the full grid the largest gap is 0.8 points: "
          "Wilson at 90%, n = 10); a one-sided bound computed at the two-sided level would "
          "cover 97.5% at 95%.",
          ("wilson", "jeffreys"), "coverage", "within", target="confidence_level", margin=0.01,
          where="alternative != 'two-sided' and n >= 10", mean_over=("p",),
          pins=("validity", "efficiency")),
    Claim("mid-p-mean-near-nominal",
          "Averaged over p, mid-p covers within 1 point of nominal at each n >= 40, two- and "
          "one-sided (Brown, Cai & DasGupta 2001, section 4.2.2: close to Jeffreys; full grid: "
          "at most 1 point from n = 39 on), where Clopper-Pearson is still 1.5-2 points above "
          "at 95% and n = 50-100.",
          ("mid-p",), "coverage", "within", target="confidence_level", margin=0.01,
          where="n >= 40", mean_over=("p",), pins=("validity", "efficiency")),
    Claim("agresti-coull-mean-near-nominal",
          "Averaged over p, Agresti-Coull covers within 2 points of nominal at each n >= 30, "
          "two- and one-sided (Brown, Cai & DasGupta 2001, Figure 5: slightly conservative; "
          "2.07 points above at 90% and n = 20 on the quick grid's p).",
          ("agresti-coull",), "coverage", "within", target="confidence_level", margin=0.02,
          where="n >= 30", mean_over=("p",), pins=("validity", "efficiency")),
    Claim("wilson-cc-conservative-on-average",
          "Averaged over p, the continuity-corrected Wilson interval covers at least the "
          "nominal level at every n, level and side (full grid: at least 0.11 points above), "
          "though not in every cell.",
          ("wilson-cc",), "coverage", "at_least", target="confidence_level",
          mean_over=("p",), pins=("validity",)),
    Claim("guaranteed-intervals-not-needlessly-conservative",
          "Averaged over p, the 95% Clopper-Pearson and continuity-corrected Wilson intervals "
          "cover at most 97.5% at each n >= 30, two- and one-sided: they miss at least half as "
          "often as nominal (full grid: 97.3% at most, at n = 30), so a bound computed at "
          "the wrong level or with widened Beta shapes is seen.",
          ("clopper-pearson", "wilson-cc"), "coverage", "at_most", target=0.975,
          where="confidence_level == 0.95 and n >= 30", mean_over=("p",), pins=("efficiency",)),
    Claim("wald-mean-near-nominal-with-large-counts",
          "Averaged over the p with n p (1 - p) >= 10, the Wald interval covers within 1.5 "
          "points of nominal at each n, level and side (full grid: at most 1.18 points below, "
          "at 90% and n = 43, and never above): its promise is a large-count one (Brown, Cai & "
          "DasGupta 2001, section 2.1).",
          ("wald",), "coverage", "within", target="confidence_level", margin=0.015,
          where="n * p * (1 - p) >= 10", mean_over=("p",), pins=("validity", "efficiency")),
    Claim("wald-undercovers-small-np",
          "The two-sided 95% Wald interval covers at least 5 points below nominal in every cell "
          "with n min(p, 1 - p) <= 2 (Brown, Cai & DasGupta 2001, section 2.1).",
          ("wald",), "coverage", "at_most", target="confidence_level", margin=-0.05,
          where="alternative == 'two-sided' and confidence_level == 0.95 and "
                "(n * p <= 2 or n * (1 - p) <= 2)"),
)

# A peer's interval beside ours for the same formula, and how far their widths may differ.
_PEERS_OF_OURS = (("scipy:exact", "clopper-pearson", 0.0), ("scipy:wilson", "wilson", 0.0),
                  ("scipy:wilsoncc", "wilson-cc", 0.0), ("statsmodels:normal", "wald", 0.0),
                  ("statsmodels:agresti_coull", "agresti-coull", 0.0),
                  ("statsmodels:beta", "clopper-pearson", 0.0),
                  ("statsmodels:wilson", "wilson", 0.0),
                  ("statsmodels:jeffreys", "jeffreys", 0.0065))


def _peer_claim(peer: str, ours: str, margin: float) -> Claim:
    """The peer's interval has the width of ours in every cell both run in, two- and one-sided:
    the same formula written independently, so a fault in either (a tail, a side, a shape, a
    variance) shows as a difference."""
    package, name = peer.split(":")
    differs = (f" up to {margin:g}: statsmodels keeps the Beta quantile at x = 0 and x = n, "
               "which ours sets to 0 and 1 (Brown, Cai & DasGupta 2001, section 4.1.2)"
               if margin else ", up to rounding")
    return Claim(f"{package}-{name.replace('_', '-')}-has-the-width-of-{ours}",
                 f"{package}'s {name} interval has the width of ours ({ours}) in every cell, "
                 f"two- and one-sided at every level{differs}.",
                 (peer,), "width", "within", target=0.0, margin=margin, reference=ours,
                 resolution=1e-6 if not margin else margin / 2, exact_tolerance=1e-9)


CLAIMS = (*CLAIMS, *(_peer_claim(*found) for found in _PEERS_OF_OURS))

_FOUR = ("wald", "wilson", "jeffreys", "clopper-pearson")

FIGURES = (
    Figure("coverage_against",
           "Two-sided 95% intervals (Brown, Cai & DasGupta 2001, Figures 1-5): Wald's coverage "
           "collapses as p nears 0 or 1; Wilson's and Jeffreys' oscillate about the dashed "
           "nominal line with dips below it; Clopper-Pearson's never falls below it.",
           where="n in [10, 30, 100] and confidence_level == 0.95 "
                 "and alternative == 'two-sided'",
           options={"x": "p", "panel_by": "n", "methods": _FOUR}),
    Figure("coverage_against",
           "One-sided 95% lower bounds (alternative 'greater'): Wald's coverage collapses as p "
           "nears 1, where a sample of all successes gives a lower bound of 1; Wilson's and "
           "Jeffreys' swing below and above the dashed nominal line; Clopper-Pearson's again "
           "never falls below it.",
           where="n in [10, 30, 100] and confidence_level == 0.95 and alternative == 'greater'",
           options={"x": "p", "panel_by": "n", "methods": _FOUR}),
    Figure("heat_map",
           "Wald's two-sided 95% coverage over n and p <= 0.5 (coverage is symmetric about "
           "p = 0.5; white is nominal, red below it, blue above).",
           where="n in [5, 10, 20, 30, 50, 100] and p <= 0.5 and confidence_level == 0.95 "
                 "and alternative == 'two-sided'",
           options={"measure": "coverage", "method": "wald", "rows": "n", "columns": "p",
                    "center": 0.95}),
)

def findings(result: StudyResult, summary: Sequence[Mapping[str, Any]]) -> list[str]:
    """Which peer comparisons this run could not make: a peer package not installed here."""
    if importlib.util.find_spec("statsmodels") is not None:
        return []
    return ["statsmodels is not installed where this run ran: its intervals "
            "(statsmodels:normal, agresti_coull, beta, wilson, jeffreys) were not run, so this "
            "page compares ours with scipy's only (install the peers extra, "
            "pip install 'evalcert[peers]', to add them)."]


STUDY = Study(
    name="coverage_proportion",
    ademp=__doc__,
    version="3",
    grids={
        "quick": _grid([5, 10, 20, 30, 50, 100], 99, 1.3),
        "full": _grid(range(1, 1001), 1000, 0.2, _vectorised_methods()),
    },
    truth=truth,
    generate=generate,
    methods={name: wrap_method(ci) for name, ci in interval_methods().items()},
    measures=("coverage", "width"),
    enumerate_outcomes=enumerate_outcomes,
    estimates_depend_on=("n", "confidence_level", "alternative"),
    wrap_method=wrap_method,
    parameter_space=(0.0, 1.0),
    applies=applies,
    pack_groups=True,
    method_parameters=("confidence_level", "alternative"),
    summary=GroupSummary(part=summary_share, table=summary_table),
    claims=CLAIMS,
    estimator_methods={name: f"proportion_ci:{name}" for name in PROPORTION_METHODS},
    recommendations=(
        Recommendation(
            "For a proportion's interval or bound that must hold, use Clopper-Pearson (the "
            "default): never below nominal, and no more than needed from n = 30.",
            ("clopper-pearson-conservative", "guaranteed-intervals-not-needlessly-conservative")),
        Recommendation(
            "Where near nominal on average is enough, Wilson or Jeffreys: within 1 point of "
            "nominal from n = 10, two-sided and one-sided.",
            ("wilson-jeffreys-mean-near-nominal", "wilson-jeffreys-one-sided-mean-near-nominal")),
    ),
    figures=FIGURES,
    findings=findings,
)
