"""Claims: the findings a study states must hold, and their verdicts on a run.

A claim names methods, a performance measure, a region of the grid and a comparison with a
target: "the coverage of clopper-pearson is at least the nominal level in every cell", "the
mean coverage over p of wilson is within 0.01 of nominal at each n", "the bias of the pooled
estimator is at most 0". The target is a number or a grid parameter (``"confidence_level"``:
the nominal level of each cell); the comparison allows a stated ``margin`` (the size of the
finding, part of the claim) and, on top of it, the statistical allowance of each compared value:

* exact cells (MCSE 0): a stated numerical tolerance (``exact_tolerance``, rounding);
* Monte Carlo values: ``k x SE``, with ``k`` the normal quantile that holds the claim's
  family-wise false-alarm rate ``familywise_error`` over all its ``m`` Monte Carlo values
  (Bonferroni: ``k = z(alpha / m)`` one-sided, ``z(alpha / (2 m))`` for ``within``). The SE is
  the value's MCSE, except for shares of replicates (coverage, rejection), whose SE is taken
  at the bound, ``sqrt(b (1 - b) / R)``: the MCSE at an estimate near 0 or 1 is too small.
  A share among the tests made (``conditional_rejection``) counts the ``tested x R``
  replicates that made one; a cell without a test is not compared, nor is its mean saving
  among the tests made (``conditional_saving``). A claim that is true therefore fails on a
  run with probability at most about ``familywise_error`` (normal approximation); a study's
  several claims each have their own.

A value is exact when its cell took the exact path, whatever its MCSE. A Monte Carlo value whose
SE is undefined (a method whose model SE is 0 has an undefined MCSE of ``model_se_error``) gets
no allowance: beyond its bound, it breaks the claim. Each verdict also states
``detectable``: the deviation beyond the bound that the claim flags with probability at least
0.95 in its least precise value, ``(k + 1.645) x SE`` (the exact tolerance on the exact path).
A claim whose detectable deviation is as large as the effect it is about is visibly weak. A
claim about an effect (a negative margin: "at least 1 point below nominal") that HOLDS has not
been refuted by the run; its detectable deviation says how strongly the run could refute it.

A verdict is ``HOLDS``, ``FAILS`` (with the values that break it, worst first) or ``NOT RUN``
(the run has no value in the claim's region: its grid or its methods do not reach it). An
undefined (nan) value in the region breaks the claim, and so does a cell where a method of the
claim raised. Parameters holding lists are compared as their text (`studies.engine.regions`).

References
----------
Morris, White & Crowther (2019), *Statistics in Medicine* 38, 2074-2102 (Monte Carlo SEs of
performance measures, section 5.2). Bonferroni correction: Hochberg & Tamhane (1987),
*Multiple Comparison Procedures*, Wiley.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats

from studies.engine.regions import as_text, region_mask
from studies.engine.results import StudyResult

__all__ = ["COMPARISONS", "FAILS", "HOLDS", "NOT_RUN", "Claim", "Verdict", "evaluate_claims",
           "tally"]

COMPARISONS: tuple[str, ...] = ("at_least", "at_most", "within")
# Measures that are shares of replicates: their MCSE is taken at the bound (binomial).
SHARES: tuple[str, ...] = ("coverage", "be_coverage", "tested", "rejection",
                           "conditional_rejection", "correct_share")
# Measures among the replicates another measure counts: a pass rate among the tests made has
# ``tested * R`` replicates, not ``R``; a cell without a test has nothing to judge.
CONDITIONAL: dict[str, str] = {"conditional_rejection": "tested",
                               "conditional_saving": "tested"}
_Z95 = float(stats.norm.isf(0.05))
HOLDS, FAILS, NOT_RUN = "HOLDS", "FAILS", "NOT RUN"
_SYMBOL = {"at_least": ">=", "at_most": "<=", "within": "within"}
# The columns of `Verdict.failures` besides the parameters.
_FAILURE_COLUMNS = ("method", "value", "mcse", "error", "bound", "excess", "allowance")


@dataclass(frozen=True)
class Claim:
    """A finding that must hold on every run of a study.

    Attributes
    ----------
    name : str
        Short identifier, unique within the study.
    statement : str
        The finding in plain words, for the reader of a report.
    methods : tuple of str
        The methods it is about (each method's values are compared separately).
    measure : str
        Performance measure (`studies.engine.performance.MEASURES`).
    comparison : {"at_least", "at_most", "within"}
        ``value >= target - margin``, ``value <= target + margin`` or
        ``|value - target| <= margin`` (each up to the statistical allowance).
    target : float or str
        A number, or the name of a grid parameter holding each cell's target.
    margin : float
        The size of the finding (may be negative: ``at_most`` with margin -0.01 says "at
        least 0.01 below").
    where : str
        The region: a pandas query over the grid parameters (``"n * p <= 2 and alternative
        == 'two-sided'"``); empty: every cell. A string, not a function, so that a study can
        be sent to worker processes and its region printed as it is.
    mean_over : tuple of str
        Compare the mean of the measure over these parameters (at each value of the others),
        not each cell; its MCSE is ``sqrt(sum MCSE^2) / count``.
    exact_tolerance : float
        Allowance of exact values (MCSE 0): rounding only.
    familywise_error : float
        Probability that the claim fails on a run where it is true (Monte Carlo values).
    """

    name: str
    statement: str
    methods: tuple[str, ...]
    measure: str
    comparison: str
    target: float | str = 0.0
    margin: float = 0.0
    where: str = ""
    mean_over: tuple[str, ...] = ()
    exact_tolerance: float = 1e-9
    familywise_error: float = 1e-3

    def __post_init__(self) -> None:
        if self.comparison not in COMPARISONS:
            raise ValueError(
                f"`comparison` must be one of {COMPARISONS}; got {self.comparison!r}.")
        if not isinstance(self.methods, tuple) or not self.methods or not all(
                isinstance(m, str) for m in self.methods):
            raise ValueError(f"`methods` of claim {self.name!r} must be a non-empty tuple of "
                             f"method names; got {self.methods!r}.")
        if not isinstance(self.mean_over, tuple) or not all(
                isinstance(p, str) for p in self.mean_over):
            raise ValueError(f"`mean_over` of claim {self.name!r} must be a tuple of parameter "
                             f"names; got {self.mean_over!r}.")
        if not 0.0 < self.familywise_error < 1.0:
            raise ValueError(f"`familywise_error` must be in (0, 1); got "
                             f"{self.familywise_error!r}.")
        if not (math.isfinite(self.margin) and self.exact_tolerance >= 0.0):
            raise ValueError(f"`margin` must be finite and `exact_tolerance` >= 0; got "
                             f"{self.margin!r} and {self.exact_tolerance!r}.")

    @property
    def region(self) -> str:
        """The region in words: the query, or "every cell"."""
        return self.where or "every cell"

    @property
    def condition(self) -> str:
        """The comparison in symbols, e.g. ``coverage >= confidence_level - 0.01``."""
        value = f"mean {self.measure} over {', '.join(self.mean_over)}" if self.mean_over \
            else self.measure
        if self.comparison == "within":
            return f"|{value} - {self.target}| <= {self.margin:g}"
        shift = self.margin if self.comparison == "at_most" else -self.margin
        bound = f"{self.target}" + (f" {'+' if shift > 0 else '-'} {abs(shift):g}" if shift
                                    else "")
        return f"{value} {_SYMBOL[self.comparison]} {bound}"


@dataclass(frozen=True)
class Verdict:
    """The verdict on one claim for one run.

    Attributes
    ----------
    claim : Claim
    status : {"HOLDS", "FAILS", "NOT RUN"}
    compared : int
        Values compared (cells, or means over ``mean_over``).
    k : float or None
        The MCSE multiplier of the Monte Carlo values (None: every value exact).
    detectable : float
        The deviation beyond the bound the claim flags with probability >= 0.95 in its least
        precise value: ``(k + 1.645) x`` the largest SE, or the exact tolerance.
    failures : pandas.DataFrame
        The values that break the claim, worst first: the parameters, ``method``, ``value``,
        ``mcse``, ``error`` (what the method raised in the cell, else empty), ``bound`` (the
        target with the margin), ``excess`` (how far beyond the bound and its allowance; nan
        for an undefined value) and ``allowance``.
    """

    claim: Claim
    status: str
    compared: int
    k: float | None
    detectable: float
    failures: pd.DataFrame = field(repr=False)

    def worst(self) -> str:
        """The worst failing value in words ('' when the claim does not fail)."""
        if self.failures.empty:
            return ""
        row = self.failures.iloc[0]
        params = [c for c in self.failures.columns if c not in _FAILURE_COLUMNS]
        where = ", ".join(f"{c}={row[c]}" for c in params)
        if row["error"]:
            return f"{row['method']} at {where}: raised {row['error']}"
        return (f"{row['method']} at {where}: {self.claim.measure} {row['value']:.6g} "
                f"(bound {row['bound']:.6g}, MCSE {row['mcse']:.2g})")

    def to_row(self, study: str) -> dict[str, Any]:
        """One row of a verdict table."""
        claim = self.claim
        return {"study": study, "claim": claim.name, "status": self.status,
                "statement": claim.statement, "methods": " ".join(claim.methods),
                "condition": claim.condition, "region": claim.region,
                "compared": self.compared, "failing": len(self.failures),
                "familywise_error": math.nan if self.k is None else claim.familywise_error,
                "k": math.nan if self.k is None else self.k, "detectable": self.detectable,
                "worst": self.worst()}


def _deviation(claim: Claim, value: NDArray[np.float64], target: NDArray[np.float64]
               ) -> NDArray[np.float64]:
    """How far each value lies beyond the claim's bound (positive: on the wrong side)."""
    if claim.comparison == "at_least":
        return _bound(claim, target) - value
    if claim.comparison == "at_most":
        return value - _bound(claim, target)
    return np.abs(value - target) - claim.margin


def _null_se(claim: Claim, target: NDArray[np.float64], replicates: NDArray[np.float64]
             ) -> NDArray[np.float64]:
    """The Monte Carlo SE of a share at the claim's bound, ``sqrt(b (1 - b) / R)``; nan else.

    The SE at the estimate, ``sqrt(p (1 - p) / R)``, shrinks near 0 and 1 and would make a
    true claim about a share fail far more often than stated (Morris et al. 2019, section 5.2,
    use the nominal level for coverage in the same way). A ``within`` claim has two bounds,
    ``target -/+ margin``; the larger of their SEs is taken.
    """
    if claim.measure not in SHARES:
        return np.full(target.shape, np.nan)
    bounds = ([target - claim.margin, target + claim.margin] if claim.comparison == "within"
              else [_bound(claim, target)])
    with np.errstate(invalid="ignore", divide="ignore"):
        found = [np.sqrt(np.clip(b, 0.0, 1.0) * (1.0 - np.clip(b, 0.0, 1.0)) / replicates)
                 for b in bounds]
    return np.fmax.reduce(found) if len(found) > 1 else found[0]


def _bound(claim: Claim, target: NDArray[np.float64]) -> NDArray[np.float64]:
    if claim.comparison == "at_least":
        return target - claim.margin
    return target + claim.margin if claim.comparison == "at_most" else target


class _Judge:
    """One claim's verdict, built from a study's rows piece by piece.

    Only what the verdict needs is kept: counts, the largest SE, the exact values that break
    the claim, the Monte Carlo values beyond their bound (whether they break it depends on
    ``k``, known once every value is counted) and, for a mean over parameters, partial sums.
    """

    def __init__(self, claim: Claim, params: list[str]) -> None:
        self.claim = claim
        self.params = params
        self.compared = self.monte_carlo = 0
        self.any_exact = False
        self.spread = 0.0  # the largest SE of a Monte Carlo value
        self.broken: list[pd.DataFrame] = []
        self.beyond: list[pd.DataFrame] = []
        self.partial: list[pd.DataFrame] = []

    def add(self, rows: pd.DataFrame) -> None:
        """Take the rows of a piece (tidy columns and ``error``) that are in the claim."""
        claim = self.claim
        counted = None
        if claim.measure in CONDITIONAL:
            base = rows[rows["measure"] == CONDITIONAL[claim.measure]]
            counted = base.set_index(["position", "method"])["value"]
        rows = rows[rows["method"].isin(claim.methods) & (rows["measure"] == claim.measure)]
        if len(rows) and claim.where:  # the region reads the grid parameters only
            rows = rows[region_mask(rows[self.params], claim.where)]
        replicates = rows["n_replicates"].to_numpy(float, na_value=np.nan)
        counts = replicates
        if counted is not None and len(rows):
            keys = pd.MultiIndex.from_frame(rows[["position", "method"]])
            counts = replicates * counted.reindex(keys).to_numpy(float)
            made = ~(counts == 0)  # nan (unknown, e.g. a method that raised) stays in
            rows, replicates, counts = rows[made], replicates[made], counts[made]
        if rows.empty or (isinstance(claim.target, str) and claim.target not in rows):
            return  # a grid without the target's parameter does not reach the claim
        target = (rows[claim.target].to_numpy(float) if isinstance(claim.target, str)
                  else np.full(len(rows), float(claim.target)))
        rows = rows.assign(target=target, n_replicates=replicates,
                           null=_null_se(claim, target, counts))
        if claim.mean_over:
            self.partial.append(self._sums(rows))
        else:
            self._judge(rows, self.params)

    def _keys(self) -> list[str]:
        return ["method", *(p for p in self.params if p not in self.claim.mean_over)]

    def _sums(self, rows: pd.DataFrame) -> pd.DataFrame:
        """Sums over ``mean_over`` at each value of the other parameters (one piece)."""
        rows = as_text(rows).assign(undefined=rows["value"].isna(), square=rows["mcse"] ** 2,
                                    unknown=rows["mcse"].isna(), null=rows["null"] ** 2)
        return rows.groupby(self._keys(), sort=False, dropna=False).agg(
            value=("value", "sum"), undefined=("undefined", "sum"), count=("value", "size"),
            square=("square", "sum"), unknown=("unknown", "sum"), null=("null", "sum"),
            target=("target", "sum"), n_replicates=("n_replicates", "min"),
            error=("error", "max"))

    def _means(self) -> pd.DataFrame:
        """The means over ``mean_over``; an undefined value makes its mean undefined."""
        both = pd.concat(self.partial)
        sums = both.groupby(level=list(range(both.index.nlevels)), sort=False,
                            dropna=False).agg(
            value=("value", "sum"), undefined=("undefined", "sum"), count=("count", "sum"),
            square=("square", "sum"), unknown=("unknown", "sum"), null=("null", "sum"),
            target=("target", "sum"), n_replicates=("n_replicates", "min"),
            error=("error", "max"))
        count = sums["count"]
        null = np.sqrt(sums["null"]) / count if self.claim.measure in SHARES else np.nan
        return sums.assign(
            value=(sums["value"] / count).where(sums["undefined"] == 0),
            mcse=(np.sqrt(sums["square"]) / count).where(sums["unknown"] == 0), null=null,
            target=sums["target"] / count,
        ).reset_index().drop(columns=["undefined", "unknown", "count", "square"])

    def _judge(self, rows: pd.DataFrame, params: list[str]) -> None:
        claim = self.claim
        value, mcse = rows["value"].to_numpy(float), rows["mcse"].to_numpy(float)
        # the path, not a zero MCSE, makes a value exact: a Monte Carlo share of 0 or 1 has MCSE 0
        monte_carlo = ~np.isnan(rows["n_replicates"].to_numpy(float))
        null = rows["null"].to_numpy(float)
        # shares (coverage, rejection): the SE at the bound, where a true claim is tightest
        spread = np.where(np.isnan(null), mcse, null)
        target = rows["target"].to_numpy(float)
        deviation = _deviation(claim, value, target)
        undefined = np.isnan(value)
        self.compared += len(rows)
        self.monte_carlo += int(monte_carlo.sum())
        self.any_exact = self.any_exact or bool((~monte_carlo).any())
        known = spread[monte_carlo & np.isfinite(spread)]
        if known.size:
            self.spread = max(self.spread, float(known.max()))
        shown = rows[[*params, "method", "value", "mcse", "error"]].assign(
            bound=_bound(claim, target), deviation=deviation,
            spread=np.where(np.isnan(spread), 0.0, spread))
        exact_broken = ~monte_carlo & (undefined | (deviation > claim.exact_tolerance))
        if exact_broken.any():
            self.broken.append(shown[exact_broken].assign(
                allowance=claim.exact_tolerance,
                excess=deviation[exact_broken] - claim.exact_tolerance))
        beyond = monte_carlo & (undefined | (deviation > 0))
        if beyond.any():
            self.beyond.append(shown[beyond])

    def verdict(self) -> Verdict:
        """The verdict on every row taken."""
        claim = self.claim
        if self.partial:
            self._judge(self._means(), self._keys()[1:])
        if not self.compared:
            return Verdict(claim, NOT_RUN, 0, None, math.nan, pd.DataFrame())
        m = self.monte_carlo
        sides = 2 if claim.comparison == "within" else 1
        k = float(stats.norm.isf(claim.familywise_error / (sides * m))) if m else None
        broken = list(self.broken)
        for rows in self.beyond:
            allowance = (k or 0.0) * rows["spread"]
            rows = rows.assign(allowance=allowance, excess=rows["deviation"] - allowance)
            broken.append(rows[rows["value"].isna() | (rows["excess"] > 0)])
        failures = pd.concat(broken, ignore_index=True) if broken else pd.DataFrame(
            columns=list(_FAILURE_COLUMNS))
        failures = failures.drop(columns=["deviation", "spread"], errors="ignore").sort_values(
            "excess", ascending=False, na_position="first", kind="stable", ignore_index=True)
        # a deviation this far beyond the bound is flagged with probability >= 0.95
        detectable = max(((k or 0.0) + _Z95) * self.spread if m else 0.0,
                         claim.exact_tolerance if self.any_exact else 0.0)
        return Verdict(claim, FAILS if len(failures) else HOLDS, self.compared, k, detectable,
                       failures)


def evaluate_claims(claims: Iterable[Claim], result: StudyResult) -> list[Verdict]:
    """The verdict on each claim for a study's results.

    The results are read in pieces of packed groups (`StudyResult.frames`), so a grid of
    millions of cells is judged without building its tidy frame. A method that raised in a
    cell of a claim's region breaks the claim there (its value is undefined).

    Examples
    --------
    >>> from studies.engine import CellResult, Measure, Performance
    >>> perf = [Performance({"coverage": Measure(c, 0.0)}, None) for c in (0.96, 0.93)]
    >>> cells = tuple(CellResult("s", str(i), i, {"n": n}, "exact", {"cp": p}, {}, b"")
    ...               for i, (n, p) in enumerate(zip((10, 20), perf)))
    >>> claim = Claim("conservative", "never below 95%", ("cp",), "coverage", "at_least", 0.95)
    >>> verdict = evaluate_claims([claim], StudyResult("s", cells))[0]
    >>> verdict.status, verdict.worst()
    ('FAILS', 'cp at n=20: coverage 0.93 (bound 0.95, MCSE 0)')
    """
    claims = list(claims)
    if not claims:
        return []
    methods = {m for c in claims for m in c.methods}
    measures = {c.measure for c in claims}
    measures |= {CONDITIONAL[m] for m in measures if m in CONDITIONAL}
    params = list(dict.fromkeys([*result.parameters, *_cell_parameters(result)]))
    judges = [_Judge(claim, params) for claim in claims]
    for piece in result.frames(methods=methods, measures=measures, batch_rows=_BATCH_ROWS):
        piece = piece.assign(error="")
        for judge in judges:
            judge.add(piece)
    errors = result.errors_frame(methods)
    if len(errors):
        errors = errors.assign(value=np.nan, mcse=np.nan, n_replicates=np.nan)
        for judge in judges:
            judge.add(errors.assign(measure=judge.claim.measure))
    return [judge.verdict() for judge in judges]


_BATCH_ROWS = 500_000  # rows per piece read: the per-piece cost paid rarely, memory bounded


def _cell_parameters(result: StudyResult) -> list[str]:
    """The parameter names of a result that does not name them (its cells' own order)."""
    names = [k for c in result.cells for k in c.params]
    names += [k for g in result.groups for k in (*g.shared, *g.axes)]
    return list(dict.fromkeys(names))


def tally(verdicts: Iterable[Verdict]) -> str:
    """The verdicts counted in words: ``"3 hold, 0 fail, 0 not run"``."""
    found = [v.status for v in verdicts]
    return (f"{found.count(HOLDS)} hold, {found.count(FAILS)} fail, "
            f"{found.count(NOT_RUN)} not run")
