"""Performance measures and claims for anyone's simulation results: a tidy frame in, verdicts out.

`summarise` takes the per-replicate results of a simulation study made anywhere (R, Julia, a
colleague's CSV) as a long frame, one row per (replicate, method, design cell), and returns
every performance measure of Morris, White & Crowther (2019, Table 6) with its Monte Carlo
standard error (`studies.engine.performance`, the code that measures evalcert's own
studies), per cell and method, as one tidy frame. Given claims (`Claim`, or a TOML file read by
`claims_from_toml`), it judges them with stated false-alarm rates and power, as a study's
claims are judged (`evaluate_claims`).

The arguments follow R's rsimsum (``simsum(data, estvarname, se, true, methodvar, by,
ci.limits, df)``; Gasparini 2018):

* ``estimate``, ``se``, ``low``, ``high``, ``reject``: column names (``se``, the interval and
  the rejection are optional; measures that need an absent one are left out);
* ``true``: the true value, a number or a column (which may vary from row to row: the
  measures are then of each row's error, below);
* ``method``: the column naming the method (none: the frame is one method, named after its
  ``estimate`` column);
* ``by``: the columns that make the design cells (every combination is a cell);
* without ``low`` and ``high`` the interval is ``estimate -/+ c se`` with ``c`` the normal
  quantile at ``level``, or Student's t with ``df`` degrees of freedom (a number or a column);
* without ``reject``, a replicate rejects ``theta = null`` when ``|estimate - null| / se > c``
  (rsimsum's "power").

**Checked, never silent.** Every column named must be in the frame (the error names it and the
columns present) and hold numbers; a replicate number that appears twice in one cell and
method is an error that names the cell (a column missing from ``by`` would otherwise pool
cells); the frame's columns that no argument names are listed in `Summary.unused`, and the
cells whose true value varies from row to row are counted in `Summary.notes` (a pooled cell
would be one).

**A true value per row.** Each measure of Table 6 is taken of the rows' errors ``e_i = t_i -
theta_i``: bias ``mean e``, empirical SE ``sd(e)``, MSE ``mean e^2``, relative bias
``mean(e_i / theta_i)`` with MCSE ``sd(e / theta) / sqrt(R)``, coverage the share of rows
whose interval holds its own ``theta_i``, bias-eliminated coverage the share holding
``theta_i + mean e``. With one true value in a cell these are the usual measures.

**Missing values** (``missing="drop"``, the default): a row whose estimate, SE, interval
bound, rejection or degrees of freedom is missing (NaN or None; an infinite estimate or SE
too, which no mean can hold) is left out of every measure of its cell and method, and counted:
each row of the tidy frame carries ``n_used`` and ``n_missing``. ``missing="error"`` raises
instead. A cell and method with fewer than 2 rows used has no measures (a row says so).

**Measures** beyond `studies.engine.performance.MEASURES`, as rsimsum reports them:
``nsim`` (rows used), ``mean_estimate`` and ``median_estimate`` of the estimates,
``mean_se2`` and ``median_se2`` of the squared SEs, and ``relative_precision`` of each
method against a ``reference`` method, ``(S_ref / S)^2 - 1`` (a proportion; rsimsum gives
percent), over the replicates both have. Their MCSEs: ``sqrt(var / R)`` for a mean, the
distribution-free ``(x_hi - x_lo) / (2 z)`` for a median (``x_lo``, ``x_hi``: the quantiles at
``1/2 -/+ z / (2 sqrt(R))``, ``z = 1.96``; Hahn & Meeker 1991, section 5.2) and Table 6's
``2 (S_ref / S)^2 sqrt((1 - rho^2) / (R - 1))`` for the relative precision, ``rho`` the
correlation of the two methods' estimates across replicates. Relative precision pairs the
replicates by ``replicate`` (a column), or by their order within the cell when none is given
(then every method must have as many rows there). ``nsim`` has no MCSE (0).

``mcse="robust"`` (default) uses evalcert's MCSEs; ``mcse="table6"`` those of Table 6 as
printed, which rsimsum reports (`studies.engine.performance` states where they differ).

References
----------
Morris, T. P., White, I. R. & Crowther, M. J. (2019). Using simulation studies to evaluate
statistical methods. *Statistics in Medicine* 38, 2074-2102. Table 6.
Gasparini, A. (2018). rsimsum: Summarise results from Monte Carlo simulation studies.
*Journal of Open Source Software* 3(26), 739.
Hahn, G. J. & Meeker, W. Q. (1991). *Statistical Intervals*. Wiley. Section 5.2.
"""

from __future__ import annotations

import math
import numbers
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats

from studies.engine.claims import Claim, Verdict, evaluate_claims
from studies.engine.performance import (
    MCSE_FORMULAS,
    Estimates,
    Measure,
    Performance,
    performance,
)
from studies.engine.results import CellResult, StudyResult

__all__ = ["MISSING_POLICIES", "SUMMARY_MEASURES", "Summary", "claims_from_toml", "summarise"]

MISSING_POLICIES: tuple[str, ...] = ("drop", "error")
# In the order of the tidy frame; those of `performance` keep its names.
SUMMARY_MEASURES: tuple[str, ...] = (
    "nsim", "mean_estimate", "median_estimate", "mean_se2", "median_se2", "bias",
    "relative_bias", "empirical_se", "relative_precision", "mse", "model_se", "model_se_error",
    "coverage", "be_coverage", "width", "rejection")
_FROM_PERFORMANCE = ("bias", "empirical_se", "mse", "model_se",
                     "model_se_error", "coverage", "be_coverage", "width", "rejection")
_Z95 = float(stats.norm.isf(0.025))
_STUDY = "summary"
# Below this a claim's allowance (a normal quantile) and its power overflow.
_SMALLEST_RATE = 1e-300
# The claim fields a TOML table may set, with the type each must have.
_CLAIM_FIELDS: dict[str, type | tuple[type, ...]] = {
    "name": str, "statement": str, "methods": list, "measure": str, "comparison": str,
    "target": (int, float, str), "margin": (int, float), "where": str, "mean_over": list,
    "resolution": (int, float), "effect": bool, "familywise_error": (int, float),
    "reference": str, "relative": bool}


@dataclass(frozen=True)
class Summary:
    """The performance of each method in each cell of a frame of results, and its verdicts.

    Attributes
    ----------
    frame : pandas.DataFrame
        Tidy: the ``by`` columns, ``method``, ``measure``, ``value``, ``mcse``, ``n_used``
        and ``n_missing``, one row per (cell, method, measure), cells in the frame's sorted
        order and measures in the order of `SUMMARY_MEASURES`.
    by : tuple of str
        The columns that make the cells.
    methods : tuple of str
        The methods, in order of first appearance.
    unused : tuple of str
        The frame's columns that no argument named (a cell variable missing from ``by``
        would be one).
    settings : Mapping[str, Any]
        The arguments that shaped the measures (column names, level, df, null, reference,
        missing policy, MCSE formulas), for a page's provenance.
    verdicts : tuple of Verdict
        The verdict on each claim given (empty without claims).
    notes : tuple of str
        What the reader should know about the data read (cells whose true value varies).
    """

    frame: pd.DataFrame
    by: tuple[str, ...]
    methods: tuple[str, ...]
    unused: tuple[str, ...]
    settings: Mapping[str, Any]
    verdicts: tuple[Verdict, ...] = ()
    notes: tuple[str, ...] = ()
    _cells: tuple[CellResult, ...] = field(default=(), repr=False)

    def to_frame(self) -> pd.DataFrame:
        """The tidy frame (a copy)."""
        return self.frame.copy()

    @property
    def missing(self) -> pd.DataFrame:
        """Rows used and missing per cell and method."""
        keys = [*self.by, "method"]
        return self.frame.drop_duplicates(keys)[[*keys, "n_used", "n_missing"]] \
            .reset_index(drop=True)

    def result(self) -> StudyResult:
        """The measures as a `StudyResult` (one Monte Carlo cell per ``by`` combination), what
        `evaluate_claims` and a report's tables read."""
        return StudyResult(_STUDY, self._cells, parameters=self.by)

    def judge(self, claims: Iterable[Claim], *, familywise_error: float = 0.05
              ) -> tuple[Verdict, ...]:
        """The verdict on each claim: ``familywise_error`` is split equally over the claims
        that state no rate of their own (Bonferroni), so that all of them, when true, fail
        together with probability at most about that."""
        claims = list(claims)
        for claim in claims:
            if not isinstance(claim, Claim):
                raise TypeError(f"`claims` must hold Claim objects; got {claim!r}.")
        if not _SMALLEST_RATE <= familywise_error < 1.0:
            raise ValueError(f"`familywise_error` must be in [{_SMALLEST_RATE:g}, 1); got "
                             f"{familywise_error!r}.")
        _check_claims(claims, self.by, self.methods)
        shared = [c for c in claims if c.familywise_error is None]
        share = familywise_error / max(len(shared), 1)
        return tuple(evaluate_claims(claims, self.result(), familywise_error=share))


def summarise(
    frame: pd.DataFrame,
    *,
    estimate: str,
    true: float | str,
    se: str | None = None,
    method: str | None = None,
    by: Sequence[str] = (),
    low: str | None = None,
    high: str | None = None,
    reject: str | None = None,
    replicate: str | None = None,
    level: float = 0.95,
    df: float | str | None = None,
    null: float = 0.0,
    reference: str | None = None,
    missing: str = "drop",
    mcse: str = "robust",
    claims: Iterable[Claim] = (),
    familywise_error: float = 0.05,
) -> Summary:
    """Performance measures with MCSEs of every method in every cell of a frame of results.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per replicate, method and cell.
    estimate : str
        The column of point estimates.
    true : float or str
        The true value, or the column holding it (constant within each cell).
    se : str, optional
        The column of model-based standard errors.
    method : str, optional
        The column naming the method; None: one method, named after ``estimate``.
    by : sequence of str
        The columns whose combinations are the design cells.
    low, high : str, optional
        The columns of the interval's bounds (both or neither); neither: ``estimate -/+ c
        se`` (module docstring).
    reject : str, optional
        The column saying whether the method's test rejected (1/0, True/False).
    replicate : str, optional
        The replicate's number: checked for duplicates within a cell and method, and the
        pairing of replicates for ``relative_precision``.
    level : float
        The intervals' confidence level when ``low`` and ``high`` are not given, and ``1 -``
        the size of the test when ``reject`` is not.
    df : float or str, optional
        Degrees of freedom of a t-based interval (a number or a column); None: normal.
    null : float
        The value a computed test rejects.
    reference : str, optional
        The method the others' ``relative_precision`` is measured against.
    missing : {"drop", "error"}
        What a row with a missing value does (module docstring).
    mcse : {"robust", "table6"}
        Which MCSE formulas (`studies.engine.performance.performance`).
    claims : iterable of Claim
        Claims to judge (`Summary.judge`), by method names and ``by`` columns.
    familywise_error : float
        The claims' false-alarm budget, split equally over those that state none.

    Returns
    -------
    Summary

    Raises
    ------
    TypeError
        If ``frame`` is not a DataFrame, or a claim is not a `Claim`.
    ValueError
        If a column named is not in the frame or holds no numbers, the truth varies within a
        cell, a replicate appears twice in a cell and method, an option is out of its range,
        or (``missing="error"``) a value is missing.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"b": [0.9, 1.1, 1.0, 1.2], "se": [0.1] * 4})
    >>> summary = summarise(frame, estimate="b", se="se", true=1.0)
    >>> row = summary.frame.set_index("measure").loc["bias"]
    >>> round(float(row["value"]), 3), round(float(row["mcse"]), 4), int(row["n_used"])
    (0.05, 0.0645, 4)
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"`frame` must be a pandas DataFrame; got {type(frame).__name__}.")
    by = _names(by, "by")
    named = {"estimate": estimate, "se": se, "low": low, "high": high, "reject": reject,
             "replicate": replicate, "method": method,
             **({"true": true} if isinstance(true, str) else {}),
             **({"df": df} if isinstance(df, str) else {})}
    for arg, column in [*named.items(), *((f"by[{i}]", c) for i, c in enumerate(by))]:
        if column is not None:
            _column(frame, column, arg)
    overlap = [c for c in by if c in (estimate, se, low, high, reject, replicate, method)]
    if overlap:
        raise ValueError(f"`by` must name the columns that make design cells, not those of "
                         f"the estimates or the method; got {overlap[0]!r}.")
    if (low is None) != (high is None):
        raise ValueError(f"`low` and `high` must be given together; got low={low!r}, "
                         f"high={high!r}.")
    for arg in ("estimate", "se", "low", "high", "reject", "replicate", "true", "df"):
        if (column := named.get(arg)) is not None:
            _numeric(frame, column, arg)
    if not isinstance(true, str) and not (isinstance(true, numbers.Real)
                                          and math.isfinite(float(true))):
        raise ValueError(f"`true` must be a finite number or a column name; got {true!r}.")
    if not (isinstance(level, numbers.Real) and 0.0 < float(level) < 1.0):
        raise ValueError(f"`level` must be strictly between 0 and 1; got {level!r}.")
    if df is not None and not isinstance(df, str) and not (
            isinstance(df, numbers.Real) and float(df) > 0):
        raise ValueError(f"`df` must be a positive number or a column name; got {df!r}.")
    if not (isinstance(null, numbers.Real) and math.isfinite(float(null))):
        raise ValueError(f"`null` must be a finite number; got {null!r}.")
    if missing not in MISSING_POLICIES:
        raise ValueError(f"`missing` must be one of {MISSING_POLICIES}; got {missing!r}.")
    if mcse not in MCSE_FORMULAS:
        raise ValueError(f"`mcse` must be one of {MCSE_FORMULAS}; got {mcse!r}.")
    methods_column = method if method is not None else None
    labels = (frame[method].astype(str) if method is not None
              else pd.Series(estimate, index=frame.index))
    methods = tuple(dict.fromkeys(labels))
    if reference is not None and reference not in methods:
        raise ValueError(f"`reference` must be one of the methods {list(methods)}; got "
                         f"{reference!r}.")
    data = frame.assign(_method=labels.to_numpy())
    checked = [c for c in (estimate, se, low, high, reject) if c is not None]
    if isinstance(df, str):
        checked.append(df)
    absent = _absent(data, estimate, se, checked)
    if missing == "error" and absent.any():
        first = data.index[absent.to_numpy()][0]
        raise ValueError(f"`frame` must have no missing value with missing='error'; got one "
                         f"in row {first!r} (columns {', '.join(checked)}).")
    if isinstance(true, str) and data[true].isna().any():
        raise ValueError(f"`true` column {true!r} must have a value in every row; got a "
                         "missing one.")
    data = data.assign(_absent=absent.to_numpy())
    settings = {"estimate": estimate, "true": true, "se": se, "method": methods_column,
                "by": list(by), "low": low, "high": high, "reject": reject,
                "replicate": replicate, "level": float(level), "df": df, "null": float(null),
                "reference": reference, "missing": missing, "mcse": mcse}
    rows: list[dict[str, Any]] = []
    cells: list[CellResult] = []
    groups = data.groupby(list(by), sort=True, dropna=False) if by else [((), data)]
    varying = 0
    for position, (key, cell) in enumerate(groups):
        params = {k: _plain(v) for k, v in
                  zip(by, key if isinstance(key, tuple) else (key,), strict=True)}
        found: dict[str, dict[str, Measure]] = {}
        taken: dict[str, tuple[pd.DataFrame, int]] = {}
        for name in methods:
            rows_of = cell[cell["_method"] == name]
            if not len(rows_of):
                continue
            if replicate is not None and rows_of[replicate].duplicated().any():
                twice = _plain(rows_of[replicate][rows_of[replicate].duplicated()].iloc[0])
                raise ValueError(
                    f"`replicate` {twice!r} must appear once per cell and method; got it twice "
                    f"in method {name!r}{_where(params)}: a column that tells cells apart may "
                    f"be missing from `by` (columns not used: "
                    f"{_unused_text(frame, named, by)}).")
            used = rows_of[~rows_of["_absent"]]
            taken[name] = (rows_of, len(used))
            theta = _float(used, true) if isinstance(true, str) else float(true)
            found[name] = _measures(used, theta, estimate=estimate, se=se, low=low, high=high,
                                    reject=reject, level=float(level), df=df,
                                    null=float(null), mcse=mcse)
        if reference is not None and reference in taken:
            for name in found:
                if name != reference:
                    precision = _relative_precision(taken[name][0], taken[reference][0],
                                                    estimate, replicate, name, reference,
                                                    params)
                    if precision is not None:
                        found[name] = _ordered({**found[name],
                                                "relative_precision": precision})
        for name, values in found.items():
            rows_of, n_used = taken[name]
            rows += _rows(params, name, values, n_used, len(rows_of) - n_used)
        performances = {name: Performance(values, taken[name][1])
                        for name, values in found.items() if taken[name][1] >= 2}
        if isinstance(true, str) and cell[true].nunique() > 1:
            varying += 1
        cells.append(CellResult(_STUDY, str(position), position, params, "monte-carlo",
                                performances, {}, b""))
    tidy = _tidy(rows, by)
    unused = tuple(c for c in frame.columns if c not in {*named.values(), *by})
    notes = (f"The true value varies within {varying} of {len(cells)} cells: their measures "
             f"are of each row's error against its own true value (if that is not the "
             f"design, a column that tells cells apart is missing from `by`).",) \
        if varying else ()
    summary = Summary(tidy, by, methods, unused, settings, (), notes, tuple(cells))
    claims = list(claims)
    if claims:
        summary = Summary(tidy, by, methods, unused, settings,
                          summary.judge(claims, familywise_error=familywise_error), notes,
                          tuple(cells))
    return summary


def claims_from_toml(source: str | Path) -> list[Claim]:
    """Claims from a TOML file: one ``[[claim]]`` table per claim, with `Claim`'s fields.

    Lists (``methods``, ``mean_over``) are TOML arrays; a field not in `Claim` is an error
    naming it.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> text = '''
    ... [[claim]]
    ... name = "covers"
    ... statement = "Wald covers at least 93% in every cell."
    ... methods = ["wald"]
    ... measure = "coverage"
    ... comparison = "at_least"
    ... target = 0.93
    ... '''
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "claims.toml"
    >>> _ = path.write_text(text)
    >>> [c.name for c in claims_from_toml(path)]
    ['covers']
    """
    path = Path(source)
    try:
        data = tomllib.loads(path.read_text())
    except OSError as error:
        raise ValueError(f"`claims` must be a readable file; got {str(path)!r} "
                         f"({error.strerror}).") from None
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"`claims` must be valid TOML; got {str(path)!r}: {error}.") from None
    tables = data.get("claim")
    if set(data) != {"claim"} or not isinstance(tables, list) or not tables:
        raise ValueError(f"`claims` must hold [[claim]] tables and nothing else; got keys "
                         f"{sorted(data)} in {str(path)!r}.")
    claims = []
    for index, table in enumerate(tables, start=1):
        where = f"claim {index} of {str(path)!r}"
        for key, value in table.items():
            if key not in _CLAIM_FIELDS:
                raise ValueError(f"the fields of {where} must be among {sorted(_CLAIM_FIELDS)}; "
                                 f"got {key!r}.")
            # a TOML boolean is an int to isinstance: only `effect` and `relative` take one
            if not isinstance(value, _CLAIM_FIELDS[key]) or (
                    isinstance(value, bool) and _CLAIM_FIELDS[key] is not bool):
                raise ValueError(f"`{key}` of {where} must be of type "
                                 f"{_type_name(_CLAIM_FIELDS[key])}; got {value!r}.")
        for key in ("name", "statement", "methods", "measure", "comparison"):
            if key not in table:
                raise ValueError(f"{where} must give `{key}`; got fields {sorted(table)}.")
        fields = {k: tuple(v) if isinstance(v, list) else v for k, v in table.items()}
        claims.append(Claim(**fields))
    return claims


def _type_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {"str": "text", "list": "an array", "bool": "true or false", "int": "a number",
             "float": "a number"}
    return " or ".join(dict.fromkeys(names[k.__name__] for k in kinds))


def _check_claims(claims: Sequence[Claim], by: Sequence[str], methods: Sequence[str]) -> None:
    """Each claim's methods and parameters are the summary's (a misspelt name would leave
    a claim NOT RUN without saying why)."""
    for claim in claims:
        for name in (*claim.methods, *([claim.reference] if claim.reference else [])):
            if name not in methods:
                raise ValueError(f"the methods of claim {claim.name!r} must be among the "
                                 f"`method` column's values {list(methods)}; got {name!r}.")
        for name in claim.mean_over:
            if name not in by:
                raise ValueError(f"`mean_over` of claim {claim.name!r} must name `by` columns "
                                 f"{list(by)}; got {name!r}.")
        if isinstance(claim.target, str) and claim.target not in by:
            raise ValueError(f"`target` of claim {claim.name!r} must be a number or a `by` "
                             f"column {list(by)}; got {claim.target!r}.")
        if claim.measure not in SUMMARY_MEASURES:
            raise ValueError(f"`measure` of claim {claim.name!r} must be one of "
                             f"{SUMMARY_MEASURES}; got {claim.measure!r}.")


def _names(by: Sequence[str], arg: str) -> tuple[str, ...]:
    if isinstance(by, str):
        return (by,)
    names = tuple(by)
    if not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise ValueError(f"`{arg}` must be distinct column names; got {list(names)!r}.")
    return names


def _column(frame: pd.DataFrame, column: Any, arg: str) -> None:
    if not isinstance(column, str) or column not in frame.columns:
        present = ", ".join(map(str, frame.columns))
        raise ValueError(f"`{arg}` must name a column of the frame ({present}); got "
                         f"{column!r}.")


def _numeric(frame: pd.DataFrame, column: str, arg: str) -> None:
    values = frame[column]
    if pd.api.types.is_bool_dtype(values) or pd.api.types.is_numeric_dtype(values):
        return
    converted = pd.to_numeric(values, errors="coerce")
    bad = converted.isna() & values.notna()
    if bad.any():
        raise ValueError(f"`{arg}` column {column!r} must hold numbers; got "
                         f"{values[bad].iloc[0]!r}.")


def _float(frame: pd.DataFrame, column: str) -> NDArray[np.float64]:
    return pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=np.float64,
                                                                    na_value=np.nan)


def _absent(data: pd.DataFrame, estimate: str, se: str | None, checked: Sequence[str]
            ) -> pd.Series:
    """Rows with a missing value in a column used (an infinite estimate or SE counts)."""
    absent = pd.Series(False, index=data.index)
    for column in checked:
        values = _float(data, column)
        bad = ~np.isfinite(values) if column in (estimate, se) else np.isnan(values)
        absent |= bad
    return absent


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (so that messages show ``3``, not
    ``np.int64(3)``)."""
    return value.item() if isinstance(value, np.generic) else value


def _where(params: Mapping[str, Any]) -> str:
    return (" in cell " + ", ".join(f"{k}={_plain(v)!r}" for k, v in params.items())
            if params else "")


def _unused_text(frame: pd.DataFrame, named: Mapping[str, Any], by: Sequence[str]) -> str:
    unused = [str(c) for c in frame.columns if c not in {*named.values(), *by}]
    return ", ".join(unused) if unused else "none"


def _measures(used: pd.DataFrame, theta: float | NDArray[np.float64], *, estimate: str,
              se: str | None, low: str | None, high: str | None, reject: str | None, level: float,
              df: float | str | None, null: float, mcse: str) -> dict[str, Measure]:
    """Every measure of one method in one cell from its rows used (empty with fewer than 2).

    The measures of `performance` are taken of the errors ``t - theta`` against a true value
    of 0, which serves a true value per row and, with one true value, gives the usual ones;
    the relative bias is then ``mean((t - theta) / theta)``."""
    n = len(used)
    found = {"nsim": Measure(float(n), 0.0)}
    if n < 2:
        return found
    t = _float(used, estimate)
    s = _float(used, se) if se is not None else None
    errors = t - theta
    fields: dict[str, NDArray[Any]] = {"estimate": errors}
    critical: NDArray[np.float64] | float | None = None
    if s is not None:
        fields["se"] = s
        tail = (1.0 + level) / 2.0
        if df is None:
            critical = float(stats.norm.ppf(tail))
        else:
            freedom = _float(used, df) if isinstance(df, str) else float(df)
            critical = np.asarray(stats.t.ppf(tail, freedom), dtype=np.float64)
    if low is not None and high is not None:
        fields["low"], fields["high"] = _float(used, low) - theta, _float(used, high) - theta
    elif s is not None and critical is not None:
        fields["low"], fields["high"] = errors - critical * s, errors + critical * s
    if reject is not None:
        fields["reject"] = _float(used, reject)
    elif s is not None and critical is not None:
        fields["reject"] = (np.abs(t - null) > critical * s).astype(np.float64)
    found |= _location(t, "estimate")
    if s is not None:
        found |= _location(s * s, "se2")
    # values near the float limit (1e200) square past it: their MSE is inf and its MCSE
    # undefined (nan), shown as such, not an error
    with np.errstate(over="ignore", invalid="ignore"):
        perf = performance(Estimates(**fields), 0.0, measures=_FROM_PERFORMANCE, mcse=mcse)
    found |= dict(perf.measures)
    truth = np.broadcast_to(np.asarray(theta, dtype=np.float64), t.shape)
    if (truth != 0).all():
        ratio = errors / truth
        found["relative_bias"] = Measure(float(np.mean(ratio)),
                                         float(np.std(ratio, ddof=1) / math.sqrt(n)))
    else:
        found["relative_bias"] = Measure(math.nan, math.nan)
    return _ordered(found)


def _location(x: NDArray[np.float64], name: str) -> dict[str, Measure]:
    """The mean and median of ``x`` with their MCSEs (module docstring)."""
    n = x.size
    half = _Z95 * 0.5 / math.sqrt(n)
    lo, hi = np.quantile(x, [max(0.5 - half, 0.0), min(0.5 + half, 1.0)],
                         method="inverted_cdf")
    return {f"mean_{name}": Measure(float(np.mean(x)), float(np.std(x, ddof=1) / math.sqrt(n))),
            f"median_{name}": Measure(float(np.median(x)), float((hi - lo) / (2.0 * _Z95)))}


def _relative_precision(rows: pd.DataFrame, ref_rows: pd.DataFrame, estimate: str,
                        replicate: str | None, name: str, reference: str,
                        params: Mapping[str, Any]) -> Measure | None:
    """``(S_ref / S)^2 - 1`` over the replicates both methods have, with Table 6's MCSE."""
    if replicate is not None:
        pairs = rows.merge(ref_rows, on=replicate, suffixes=("", "_ref"))
        usable = pairs[~pairs["_absent"] & ~pairs["_absent_ref"]]
        a, b = _float(usable, estimate), _float(usable, f"{estimate}_ref")
    else:
        if len(rows) != len(ref_rows):
            raise ValueError(
                f"`replicate` must be given to pair methods with unequal rows; got {len(rows)} "
                f"rows of {name!r} and {len(ref_rows)} of {reference!r}{_where(params)}.")
        keep = ~rows["_absent"].to_numpy() & ~ref_rows["_absent"].to_numpy()
        a, b = _float(rows, estimate)[keep], _float(ref_rows, estimate)[keep]
    if a.size < 3:
        return None
    sd_a, sd_b = np.std(a, ddof=1), np.std(b, ddof=1)
    if not (sd_a > 0 and sd_b > 0):
        return Measure(math.nan, math.nan)
    ratio = (sd_b / sd_a) ** 2
    rho = float(np.corrcoef(a, b)[0, 1])
    return Measure(float(ratio - 1.0),
                   float(2.0 * ratio * math.sqrt(max(1.0 - rho * rho, 0.0) / (a.size - 1))))


def _ordered(found: Mapping[str, Measure]) -> dict[str, Measure]:
    return {name: found[name] for name in SUMMARY_MEASURES if name in found}


def _rows(params: Mapping[str, Any], method: str, values: Mapping[str, Measure], n_used: int,
          n_missing: int) -> list[dict[str, Any]]:
    return [{**params, "method": method, "measure": measure, "value": found.value,
             "mcse": found.mcse, "n_used": n_used, "n_missing": n_missing}
            for measure, found in values.items()]


def _tidy(rows: list[dict[str, Any]], by: Sequence[str]) -> pd.DataFrame:
    columns = [*by, "method", "measure", "value", "mcse", "n_used", "n_missing"]
    frame = pd.DataFrame.from_records(rows, columns=columns)
    return frame.astype({"n_used": "int64", "n_missing": "int64"})
