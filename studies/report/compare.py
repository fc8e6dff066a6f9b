"""Comparing a run with a baseline, value by value, within Monte Carlo error.

The regression gate of CI (`studies.cli.study`'s ``compare``; ``study run --baseline``). Both
sides are read with `studies.report.baseline.load_results` and matched by (study, cell
position, method, measure); the studies both have must agree on version and grid.

A value has **changed** when

* exact on both sides (every outcome enumerated): it differs by more than
  ``exact_tolerance`` (absolute, plus the same relative to its size: rounding only, so a
  change of numpy or scipy must not move an exact cell);
* Monte Carlo: ``|current - baseline| > k x SE`` with ``SE = sqrt(mcse_b^2 + mcse_c^2)``, the
  SE of the difference of two independent runs, and for shares of replicates (coverage,
  rejection) the binomial SE at the pooled share, ``sqrt(p (1 - p) (1/R_b + 1/R_c))`` (the
  MCSE of an estimate near 0 or 1 is too small). ``k`` is the normal quantile that holds the
  family-wise false-alarm rate ``familywise_error`` over all ``m`` Monte Carlo values compared
  (Bonferroni, two-sided: ``k = z(alpha / (2 m))``). A run with the baseline's seed draws the
  same random numbers, so unchanged code gives ``z = 0``; another seed gives independent
  draws, which the SE above describes;
* undefined (nan) on one side only.

A Monte Carlo value whose SE is undefined is compared as an exact one.

A changed value is an **improvement** when it moved toward what a method aims at: coverage
toward its nominal level, bias, relative bias and the model-SE error toward 0, the empirical
SE and MSE down. Every other change (widths, rejection rates, any move of a measure without a
direction) is a **regression**: a narrower interval is a regression until the coverage that
pays for it is judged again, and blessing a new baseline is how that judgement is recorded.

Beside the values: claims whose verdict changed (HOLDS to anything else is a regression,
anything to HOLDS an improvement; a new claim is an addition when it holds and a regression
when it does not), cells or methods the current run lacks (missing: the gate fails on them) or
adds (reported). A baseline study the current run lacks as a whole is missing too, unless
``all_studies=False`` compares only the studies the current run has (a run of one study
against the suite's baseline): it is then listed as not compared. The exit status of the gate
is 1 on a regression or a missing value (or, with ``strict``, on any change or addition), else
0, and the summary line names what it fails on.

Each comparison also states its power: for each study and measure, the median and largest
shift a Monte Carlo value must make to be flagged with probability 0.9 by a run with another
seed, ``(k + z(0.9)) x SE``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from studies.report.baseline import Results

__all__ = ["ADDED", "EXACT_TOLERANCE", "FAMILYWISE_ERROR", "IMPROVEMENT", "REGRESSION",
           "Comparison", "compare"]

EXACT_TOLERANCE = 1e-9
FAMILYWISE_ERROR = 1e-3
SHARES: tuple[str, ...] = ("coverage", "be_coverage", "tested", "rejection")
# Measures confined to [0, 1]: a shift of 1 or more is beyond any change of them.
_BOUNDED: tuple[str, ...] = (*SHARES, "conditional_rejection", "correct_share")
_Z90 = float(stats.norm.isf(0.10))
# Measures with a direction: toward the nominal level, toward 0, or down.
_TOWARD_NOMINAL = ("coverage", "be_coverage")
_TOWARD_ZERO = ("bias", "relative_bias", "model_se_error")
_DOWN = ("empirical_se", "mse")
REGRESSION, IMPROVEMENT, ADDED = "regression", "improvement", "added"
# A count of `Comparison.counts` in the summary's words.
_WORDS = {"regressions": "regressions", "missing": "values missing",
          "improvements": "improvements", "added": "added"}
_KEY = ["study", "position", "method", "measure"]


@dataclass(frozen=True)
class Comparison:
    """A run compared with a baseline.

    Attributes
    ----------
    baseline, current : Results
    changes : pandas.DataFrame
        Every changed value, worst first: ``change`` (regression or improvement),
        ``study``, ``method``, ``cell``, ``measure``, ``baseline``, ``current``,
        ``difference``, ``se`` (of the difference; 0 for exact values) and ``z`` (inf for
        an exact change or one undefined side).
    claims : pandas.DataFrame
        Claims whose verdict changed: ``change``, ``study``, ``claim``, ``baseline``,
        ``current`` (``absent`` when a side does not have it).
    missing, added : pandas.DataFrame
        Per study and method, the values the current run lacks or adds (``values``, and
        ``cells`` they are in).
    compared, monte_carlo : int
        Values compared; of them Monte Carlo values.
    k : float
        The multiple of the SE allowed (given, or from ``familywise_error``).
    familywise_error : float or None
        The false-alarm rate ``k`` holds (None when ``k`` was given).
    exact_tolerance : float
    power : pandas.DataFrame
        Per study and measure: the median and largest shift of a Monte Carlo value flagged
        with probability 0.9 by a run with another seed.
    largest_z : float
        The largest |z| of a Monte Carlo value defined on both sides (how close the run came
        to ``k``).
    notes : tuple of str
        Differences of seed and package versions between the two sides.
    not_compared : tuple of str
        Baseline studies the current run lacks, left out (``all_studies=False``).
    """

    baseline: Results = field(repr=False)
    current: Results = field(repr=False)
    changes: pd.DataFrame = field(repr=False)
    claims: pd.DataFrame = field(repr=False)
    missing: pd.DataFrame = field(repr=False)
    added: pd.DataFrame = field(repr=False)
    compared: int
    monte_carlo: int
    k: float
    familywise_error: float | None
    exact_tolerance: float
    power: pd.DataFrame = field(repr=False)
    largest_z: float = 0.0
    notes: tuple[str, ...] = ()
    not_compared: tuple[str, ...] = ()

    def counts(self) -> dict[str, int]:
        """Regressions and improvements among values and claims; missing and added values."""
        return {
            "regressions": int((self.changes["change"] == REGRESSION).sum()
                               + (self.claims["change"] == REGRESSION).sum()),
            "improvements": int((self.changes["change"] == IMPROVEMENT).sum()
                                + (self.claims["change"] == IMPROVEMENT).sum()),
            "missing": int(self.missing["values"].sum()) if len(self.missing) else 0,
            "added": (int(self.added["values"].sum()) if len(self.added) else 0)
            + int((self.claims["change"] == ADDED).sum()),
        }

    def failing(self, *, strict: bool = False) -> list[str]:
        """What the gate fails on, counted (``["2 regressions", "113 values missing"]``):
        regressions and missing values; with ``strict``, improvements and additions too."""
        found = self.counts()
        kinds = ["regressions", "missing", *(("improvements", "added") if strict else ())]
        return [f"{found[kind]} {_WORDS[kind]}" for kind in kinds if found[kind]]

    def status(self, *, strict: bool = False) -> int:
        """1 when the gate fails on something (`failing`), else 0."""
        return 1 if self.failing(strict=strict) else 0

    def summary(self, *, strict: bool = False) -> str:
        """The one-line summary: the verdict and what it fails on, then every count."""
        found = self.counts()
        failing = self.failing(strict=strict)
        verdict = f"REGRESSION (fails on {', '.join(failing)})" if failing else "no regression"
        rate = (f"family-wise false-alarm rate {self.familywise_error:g}"
                if self.familywise_error is not None else "k given")
        left = (f" ({len(self.not_compared)} baseline studies not compared)"
                if self.not_compared else "")
        return (f"compare: {verdict}: {found['regressions']} regressions, "
                f"{found['improvements']} improvements, {found['missing']} values missing, "
                f"{found['added']} added{left}, over {self.compared:,} values "
                f"({self.monte_carlo:,} Monte Carlo: largest |z| {self.largest_z:.3f}, "
                f"k = {self.k:.3f}, {rate}; exact tolerance {self.exact_tolerance:g})")

    def to_dict(self, *, strict: bool = False) -> dict[str, Any]:
        """Everything as JSON-ready data."""
        def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
            return [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict("records")]

        return {"status": self.status(strict=strict), "summary": self.summary(strict=strict),
                "baseline": str(self.baseline.directory), "current": str(self.current.directory),
                **self.counts(), "compared": self.compared, "monte_carlo": self.monte_carlo,
                "k": self.k, "largest_z": self.largest_z,
                "familywise_error": self.familywise_error,
                "exact_tolerance": self.exact_tolerance, "notes": list(self.notes),
                "not_compared": list(self.not_compared),
                "changes": records(self.changes), "claims": records(self.claims),
                "missing": records(self.missing), "added": records(self.added),
                "power": records(self.power)}


def _plain(value: Any) -> Any:
    if isinstance(value, float | np.floating):
        number = float(value)
        return number if math.isfinite(number) else None
    if isinstance(value, np.integer):
        return int(value)
    return None if value is pd.NA else value


def _check_same_design(baseline: Results, current: Results) -> None:
    """ValueError unless the studies both sides have agree on version and grid."""
    for name in sorted(set(baseline.studies) & set(current.studies)):
        if str(baseline.studies[name]) != str(current.studies[name]):
            raise ValueError(
                f"`current` must run the baseline's version of study {name}; got version "
                f"{current.studies[name]}, the baseline has {baseline.studies[name]} (bless a "
                "new baseline when a study changes).")
        a, b = baseline.grids.get(name), current.grids.get(name)
        if a is not None and b is not None and _grid_key(a) != _grid_key(b):
            raise ValueError(
                f"`current` must run study {name} on the baseline's grid; the grids differ "
                f"(baseline {_grid_text(a)}; current {_grid_text(b)}).")


def _grid_key(grid: Mapping[str, Any]) -> tuple[str, Any, str]:
    return (repr({k: list(v) for k, v in grid["parameters"].items()}), grid.get("n_replicates"),
            grid.get("where", ""))


def _grid_text(grid: Mapping[str, Any]) -> str:
    sizes = ", ".join(f"{k}: {len(v)} values" for k, v in grid["parameters"].items())
    kept = f", the cells where {grid['where']}" if grid.get("where") else ""
    return f"{sizes}{kept}; {grid.get('n_replicates')} replicates"


def compare(baseline: Results, current: Results, *, k: float | None = None,
            familywise_error: float = FAMILYWISE_ERROR,
            exact_tolerance: float = EXACT_TOLERANCE, all_studies: bool = True) -> Comparison:
    """Compare ``current`` with ``baseline`` (see the module docstring).

    Parameters
    ----------
    baseline, current : Results
        From `studies.report.baseline.load_results`.
    k : float, optional
        The multiple of the SE of a difference allowed to Monte Carlo values; default the
        Bonferroni quantile of ``familywise_error``.
    familywise_error : float
        The probability that an unchanged method is flagged somewhere (when ``k`` is None).
    exact_tolerance : float
        Absolute and relative tolerance of exact values.
    all_studies : bool
        Whether a baseline study the current run lacks counts as missing (True, the gate of
        a whole suite) or is left out, listed in ``not_compared`` (False: a run of some of
        the studies).

    Raises
    ------
    ValueError
        When a study both sides have differs in version or grid, or an option is out of
        range.
    """
    if k is not None and not (isinstance(k, int | float) and k > 0 and math.isfinite(k)):
        raise ValueError(f"`k` must be a positive number; got {k!r}.")
    # below 1e-300 the Bonferroni quantile of a tail shared by many values is infinite
    if not 1e-300 <= familywise_error < 1.0:
        raise ValueError(f"`familywise_error` must be in [1e-300, 1); got {familywise_error!r}.")
    _check_same_design(baseline, current)
    shared = set(baseline.studies) & set(current.studies)
    a = baseline.rows[baseline.rows["study"].isin(shared)]
    b = current.rows[current.rows["study"].isin(shared)]
    both = a.merge(b[[*_KEY, "value", "mcse", "path", "n_replicates"]], on=_KEY, how="outer",
                   suffixes=("_a", "_b"), indicator=True)
    matched = both[both["_merge"] == "both"].reset_index(drop=True)
    only_a = _by_method(both[both["_merge"] == "left_only"])
    only_b = _by_method(b.merge(a[_KEY], on=_KEY, how="left", indicator=True)
                        .query("_merge == 'left_only'"))
    if all_studies:
        only_a = pd.concat([only_a, _whole_studies(baseline, current)], ignore_index=True)
    only_b = pd.concat([only_b, _whole_studies(current, baseline)], ignore_index=True)

    monte_carlo = ((matched["path_a"] == "monte-carlo")
                   | (matched["path_b"] == "monte-carlo")).to_numpy()
    m = int(monte_carlo.sum())
    given = k is not None
    if k is None:
        k = float(stats.norm.isf(familywise_error / (2 * max(m, 1))))
    se = _difference_se(matched)
    value_a, value_b = matched["value_a"].to_numpy(float), matched["value_b"].to_numpy(float)
    difference = value_b - value_a
    nan_a, nan_b = np.isnan(value_a), np.isnan(value_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, difference / se,
                     np.where(difference == 0, 0.0, np.copysign(np.inf, difference)))
        exact_moved = (np.abs(difference) > exact_tolerance * (1.0 + np.abs(value_a))) | (
            (np.isinf(value_a) | np.isinf(value_b)) & (value_a != value_b))
    # a Monte Carlo value without an SE is compared as an exact one
    judged = monte_carlo & np.isfinite(se)
    changed = np.where(judged, np.abs(z) > k, exact_moved)
    changed = (changed & ~(nan_a | nan_b)) | (nan_a != nan_b)
    z = np.where(~judged & changed, np.copysign(np.inf, difference), z)
    z = np.where(nan_a != nan_b, np.inf, z)
    defined = judged & ~(nan_a | nan_b) & np.isfinite(z)
    rows = matched.assign(difference=difference, se=np.where(monte_carlo, se, 0.0), z=z)[changed]
    rows = rows.assign(change=[
        IMPROVEMENT if _better(r.measure, r.value_a, r.value_b, r.confidence_level)
        else REGRESSION for r in rows.itertuples()])
    rows = rows.rename(columns={"value_a": "baseline", "value_b": "current"})
    rows = rows.assign(size=np.abs(rows["z"])).sort_values(
        ["size", "study", "position"], ascending=[False, True, True], kind="stable")
    changes = rows[["change", "study", "method", "cell", "measure", "baseline", "current",
                    "difference", "se", "z"]].reset_index(drop=True)
    return Comparison(
        baseline=baseline, current=current, changes=changes,
        claims=_claim_changes(baseline.verdicts, current.verdicts, shared),
        missing=only_a, added=only_b, compared=len(matched), monte_carlo=m, k=float(k),
        familywise_error=None if given else familywise_error,
        exact_tolerance=exact_tolerance,
        power=_power(matched, _difference_se(matched, one_replicate=True), monte_carlo,
                     float(k)),
        largest_z=float(np.max(np.abs(z[defined]), initial=0.0)),
        notes=_notes(baseline, current),
        not_compared=() if all_studies else tuple(sorted(set(baseline.studies)
                                                         - set(current.studies))))


def _difference_se(rows: pd.DataFrame, *, one_replicate: bool = False) -> np.ndarray:
    """The SE of the difference of two independent Monte Carlo values (see the docstring).

    With ``one_replicate`` a share is taken at least one replicate away from 0 and 1: the SE
    a shift away from an all-or-nothing share meets (for the power, not the test).
    """
    mcse = np.sqrt(rows["mcse_a"].to_numpy(float) ** 2 + rows["mcse_b"].to_numpy(float) ** 2)
    r_a = rows["n_replicates_a"].to_numpy(float, na_value=np.nan)
    r_b = rows["n_replicates_b"].to_numpy(float, na_value=np.nan)
    value_a, value_b = rows["value_a"].to_numpy(float), rows["value_b"].to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        pooled = np.clip((value_a * r_a + value_b * r_b) / (r_a + r_b), 0.0, 1.0)
        if one_replicate:
            floor = 1.0 / np.fmin(r_a, r_b)
            pooled = np.clip(pooled, floor, 1.0 - floor)
        binomial = np.sqrt(pooled * (1.0 - pooled) * (1.0 / r_a + 1.0 / r_b))
    share = rows["measure"].isin(SHARES).to_numpy() & np.isfinite(binomial)
    return np.where(share, binomial, mcse)


def _better(measure: str, before: float, after: float, nominal: float) -> bool:
    """Whether ``after`` is closer than ``before`` to what ``measure`` aims at."""
    if math.isnan(before) or math.isnan(after):
        return math.isnan(before)  # undefined becoming defined is better
    if measure in _TOWARD_NOMINAL:
        level = 0.95 if math.isnan(nominal) else nominal
        return abs(after - level) < abs(before - level)
    if measure in _TOWARD_ZERO:
        return abs(after) < abs(before)
    if measure in _DOWN:
        return after < before
    return False


def _by_method(rows: pd.DataFrame) -> pd.DataFrame:
    """Values per study and method (with the cells they are in)."""
    if rows.empty:
        return pd.DataFrame(columns=["study", "method", "values", "cells"])
    return rows.groupby(["study", "method"], sort=True).agg(
        values=("measure", "size"), cells=("position", "nunique")).reset_index()


def _whole_studies(one: Results, other: Results) -> pd.DataFrame:
    """The values of studies ``one`` has and ``other`` does not."""
    names = set(one.studies) - set(other.studies)
    return _by_method(one.rows[one.rows["study"].isin(names)])


def _claim_changes(before: pd.DataFrame, after: pd.DataFrame, shared: set[str]
                   ) -> pd.DataFrame:
    both = before[before["study"].isin(shared)].merge(
        after[after["study"].isin(shared)], on=["study", "claim"], how="outer",
        suffixes=("_a", "_b")).fillna("absent")
    both = both[both["status_a"] != both["status_b"]]
    # a new claim that holds is an addition; one that fails or cannot be judged, a regression
    change = [(ADDED if a == "absent" else IMPROVEMENT) if b == "HOLDS" else REGRESSION
              for a, b in zip(both["status_a"], both["status_b"], strict=True)]
    return pd.DataFrame({"change": change, "study": both["study"], "claim": both["claim"],
                         "baseline": both["status_a"], "current": both["status_b"]}
                        ).reset_index(drop=True)


def _power(rows: pd.DataFrame, se: np.ndarray, monte_carlo: np.ndarray, k: float
           ) -> pd.DataFrame:
    """Per study and measure: the shift flagged with probability 0.9 (median, largest).

    A share (coverage, a pass rate) cannot move by 1 or more: where the shift reaches 1 no
    change of the share could be flagged, and the shift is inf.
    """
    shift = (k + _Z90) * se
    bounded = rows["measure"].isin(_BOUNDED).to_numpy()
    shift = np.where(bounded & (shift >= 1.0), np.inf, shift)
    found = rows.assign(shift=shift)[monte_carlo & ~np.isnan(shift)]
    if found.empty:
        return pd.DataFrame(columns=["study", "measure", "values", "median_shift", "max_shift"])
    return found.groupby(["study", "measure"], sort=True).agg(
        values=("shift", "size"), median_shift=("shift", "median"),
        max_shift=("shift", "max")).reset_index()


def _notes(baseline: Results, current: Results) -> tuple[str, ...]:
    notes = []
    if baseline.seed != current.seed:
        notes.append(f"the root seeds differ (baseline {baseline.seed}, current {current.seed}):"
                     " Monte Carlo values are independent draws, compared within their SE")
    moved = [f"{name} {baseline.packages.get(name)} -> {current.packages.get(name)}"
             for name in ("numpy", "scipy", "pandas", "statsmodels")
             if baseline.packages.get(name) != current.packages.get(name)]
    if moved:
        notes.append("package versions differ (" + ", ".join(moved) + "): random streams may "
                     "change, moving Monte Carlo values within their SE; exact values must not "
                     "move")
    if not current.complete:
        notes.append("the current run is incomplete: its unfinished cells count as missing")
    return tuple(notes)
