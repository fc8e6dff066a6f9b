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
  at the bound, ``sqrt(b (1 - b) / R)``: the MCSE at an estimate near 0 or 1 is too small. A
  claim that is true therefore fails on a run with probability at most about
  ``familywise_error`` (normal approximation); a study's several claims each have their own.

A value is exact when its cell took the exact path, whatever its MCSE. Each verdict also states
``detectable``: the deviation beyond the bound that the claim flags with probability at least
0.95 in its least precise value, ``(k + 1.645) x SE`` (the exact tolerance on the exact path).
A claim whose detectable deviation is as large as the effect it is about is visibly weak. A
claim about an effect (a negative margin: "at least 1 point below nominal") that HOLDS has not
been refuted by the run; its detectable deviation says how strongly the run could refute it.

A verdict is ``HOLDS``, ``FAILS`` (with the values that break it, worst first) or ``NOT RUN``
(the run has no value in the claim's region: its grid or its methods do not reach it). An
undefined (nan) value in the region breaks the claim.

References
----------
Morris, White & Crowther (2019), *Statistics in Medicine* 38, 2074-2102 (Monte Carlo SEs of
performance measures, section 5.2). Bonferroni correction: Hochberg & Tamhane (1987),
*Multiple Comparison Procedures*, Wiley.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats

from studies.engine.results import FRAME_COLUMNS, StudyResult

__all__ = ["COMPARISONS", "FAILS", "HOLDS", "NOT_RUN", "Claim", "Verdict", "evaluate_claims",
           "tally"]

COMPARISONS: tuple[str, ...] = ("at_least", "at_most", "within")
# Measures that are shares of replicates: their MCSE is taken at the bound (binomial).
SHARES: tuple[str, ...] = ("coverage", "be_coverage", "rejection")
_Z95 = float(stats.norm.isf(0.05))
HOLDS, FAILS, NOT_RUN = "HOLDS", "FAILS", "NOT RUN"
_SYMBOL = {"at_least": ">=", "at_most": "<=", "within": "within"}


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
        ``mcse``, ``bound`` (the target with the margin) and ``excess`` (how far beyond the
        bound and its allowance; nan for an undefined value).
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
        params = [c for c in self.failures.columns
                  if c not in ("method", "value", "mcse", "bound", "excess", "allowance")]
        where = ", ".join(f"{c}={row[c]}" for c in params)
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


def _claim_rows(result: StudyResult, claims: Sequence[Claim]) -> pd.DataFrame:
    """The rows of the tidy frame the claims read (read group by group: full grids are large)."""
    wanted = {(m, c.measure) for c in claims for m in c.methods}
    keep = []
    for piece in result.frames():
        pairs = pd.Series(list(zip(piece["method"], piece["measure"], strict=True)),
                          index=piece.index)
        keep.append(piece[pairs.isin(wanted)].drop(columns=["study"]))
    keep = [k for k in keep if len(k)]
    return pd.concat(keep, ignore_index=True) if keep else pd.DataFrame()


def _mean_over(rows: pd.DataFrame, claim: Claim, params: list[str]) -> pd.DataFrame:
    """Means over ``claim.mean_over``; an undefined value makes its mean undefined."""
    keys = ["method", *(p for p in params if p not in claim.mean_over)]
    grouped = rows.assign(square=rows["mcse"] ** 2, null=rows["null"] ** 2).groupby(
        keys, sort=False, dropna=False)
    found = grouped.agg(value=("value", lambda s: float(np.mean(s.to_numpy()))),
                        target=("target", "mean"), count=("value", "size"),
                        square=("square", "sum"), null=("null", "sum"),
                        replicates=("n_replicates", "min"))
    count = found.pop("count")
    found["mcse"] = np.sqrt(found.pop("square")) / count
    found["null"] = np.sqrt(found["null"]) / count
    return found.reset_index()


def _null_se(claim: Claim, bound: NDArray[np.float64], replicates: NDArray[np.float64]
             ) -> NDArray[np.float64]:
    """The Monte Carlo SE of a share at the claim's bound, ``sqrt(b (1 - b) / R)``; nan else.

    The SE at the estimate, ``sqrt(p (1 - p) / R)``, shrinks near 0 and 1 and would make a
    true claim about a share fail far more often than stated (Morris et al. 2019, section 5.2,
    use the nominal level for coverage in the same way).
    """
    if claim.measure not in SHARES:
        return np.full(bound.shape, np.nan)
    share = np.clip(bound, 0.0, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(share * (1.0 - share) / replicates)


def _bound(claim: Claim, target: NDArray[np.float64]) -> NDArray[np.float64]:
    if claim.comparison == "at_least":
        return target - claim.margin
    return target + claim.margin if claim.comparison == "at_most" else target


def _verdict(claim: Claim, rows: pd.DataFrame, params: list[str]) -> Verdict:
    if len(rows):
        rows = rows[rows["method"].isin(claim.methods) & (rows["measure"] == claim.measure)]
    if len(rows) and claim.where:  # the region reads the grid parameters only
        rows = rows.loc[rows[params].query(claim.where).index]
    if rows.empty:
        return Verdict(claim, NOT_RUN, 0, None, math.nan, pd.DataFrame())
    rows = rows.assign(target=rows[claim.target] if isinstance(claim.target, str)
                       else float(claim.target))
    replicates = rows["n_replicates"].astype(float).to_numpy()
    rows = rows.assign(n_replicates=replicates, null=_null_se(
        claim, _bound(claim, rows["target"].to_numpy(float)), replicates))
    if claim.mean_over:
        rows = _mean_over(rows, claim, params).rename(columns={"replicates": "n_replicates"})
        params = [p for p in params if p not in claim.mean_over]
    value, mcse = rows["value"].to_numpy(float), rows["mcse"].to_numpy(float)
    # the path, not a zero MCSE, makes a value exact: a Monte Carlo share of 0 or 1 has MCSE 0
    monte_carlo = ~np.isnan(rows["n_replicates"].to_numpy(float))
    m = int(monte_carlo.sum())
    sides = 2 if claim.comparison == "within" else 1
    k = float(stats.norm.isf(claim.familywise_error / (sides * m))) if m else None
    # shares (coverage, rejection): the SE at the bound, where a true claim is tightest
    spread = np.where(np.isnan(rows["null"].to_numpy(float)), mcse, rows["null"])
    allowance = np.where(monte_carlo, (k or 0.0) * spread, claim.exact_tolerance)
    target = rows["target"].to_numpy(float)
    bound = _bound(claim, target)
    if claim.comparison == "at_least":
        excess = bound - allowance - value
    elif claim.comparison == "at_most":
        excess = value - bound - allowance
    else:
        excess = np.abs(value - target) - claim.margin - allowance
    broken = np.isnan(value) | (excess > 0)
    failures = rows.loc[broken, [*params, "method", "value", "mcse"]].assign(
        bound=bound[broken], excess=excess[broken], allowance=allowance[broken])
    failures = failures.sort_values("excess", ascending=False, na_position="first",
                                    kind="stable", ignore_index=True)
    # a deviation this far beyond the bound is flagged with probability >= 0.95
    detectable = float(np.max(np.where(monte_carlo, ((k or 0.0) + _Z95) * spread,
                                       claim.exact_tolerance)))
    return Verdict(claim, FAILS if broken.any() else HOLDS, len(rows), k, detectable, failures)


def evaluate_claims(claims: Iterable[Claim], result: StudyResult) -> list[Verdict]:
    """The verdict on each claim for a study's results.

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
    rows = _claim_rows(result, claims)
    params = [c for c in rows.columns if c not in FRAME_COLUMNS]
    return [_verdict(claim, rows, params) for claim in claims]


def tally(verdicts: Iterable[Verdict]) -> str:
    """The verdicts counted in words: ``"3 hold, 0 fail, 0 not run"``."""
    found = [v.status for v in verdicts]
    return (f"{found.count(HOLDS)} hold, {found.count(FAILS)} fail, "
            f"{found.count(NOT_RUN)} not run")
