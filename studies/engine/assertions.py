"""Statistical assertions for regression tests on study results.

Each assertion tests every (cell, method) it is given at once and controls the family-wise
error rate: the tolerance of each comparison is ``z * MCSE`` with ``z`` the two-sided normal
quantile at the Bonferroni share ``familywise_error / k`` of the ``k`` comparisons. A correct
method therefore fails with probability at most about ``familywise_error``; a broken one, whose
error is many MCSE, fails surely. Exact-path cells have no Monte Carlo error (MCSE = 0), so an
explicit absolute ``tolerance`` is required for them.

References
----------
Morris, White & Crowther (2019), *Statistics in Medicine* 38, 2074-2102, section 5.2 (MCSE of
coverage under the nominal level); Bonferroni correction (e.g. Hochberg & Tamhane 1987,
*Multiple Comparison Procedures*, Wiley).
"""

from __future__ import annotations

import math
from typing import Any

from scipy import stats

from studies.engine.results import StudyResult

__all__ = ["assert_coverage", "assert_measure"]


def _check_rate(value: float, name: str) -> float:
    if not isinstance(value, int | float) or not 0.0 < value < 1.0:
        raise ValueError(f"`{name}` must be strictly between 0 and 1; got {value!r}.")
    return float(value)


def _verdicts(rows: list[dict[str, Any]], target: float, z: float, tolerance: float | None,
              alternative: str, null_se: Any) -> list[str]:
    failures = []
    for row in rows:
        if row["n_replicates"] is None:
            if tolerance is None:
                raise ValueError(
                    "`tolerance` must be given for exact-path cells (MCSE = 0); got None.")
            allowed = tolerance
        else:
            se = row["mcse"] if null_se is None else null_se(row["n_replicates"])
            allowed = z * se if tolerance is None else tolerance
        gap = row["value"] - target
        bad = gap < -allowed if alternative == "greater" else abs(gap) > allowed
        if math.isnan(row["value"]) or bad:
            failures.append(
                f"{row['method']} at {row['params']}: {row['value']:.6g} vs {target:g} "
                f"(allowed {'-' if alternative == 'greater' else '+-'}{allowed:.3g})")
    return failures


def assert_measure(
    result: StudyResult,
    measure: str,
    target: float,
    *,
    method: str | None = None,
    tolerance: float | None = None,
    familywise_error: float = 0.001,
    alternative: str = "two-sided",
) -> None:
    """Assert ``measure`` equals ``target`` within Monte Carlo error in every cell and method.

    Parameters
    ----------
    result : StudyResult
        A study's results (from `studies.engine.run` or `results_from_store`).
    measure : str
        Performance measure name, e.g. ``"bias"``.
    target : float
        The value it should have (0 for bias).
    method : str, optional
        Only this method (default: every method reporting ``measure``).
    tolerance : float, optional
        Absolute tolerance instead of the MCSE-derived one; required for exact-path cells.
    familywise_error : float
        Probability that a correct method fails the assertion somewhere (Bonferroni split).
    alternative : {"two-sided", "greater"}
        ``"greater"``: fail only when the measure is below ``target`` (e.g. coverage of a
        conservative method).

    Raises
    ------
    AssertionError
        Listing every failing cell.
    ValueError
        On bad arguments, no matching rows, or exact-path cells without ``tolerance``.
    """
    _check_measure_args(familywise_error, alternative)
    rows = result.rows(measure, method=method)
    if not rows:
        raise ValueError(f"`measure` {measure!r} is not reported by {method or 'any method'} "
                         f"in study {result.study!r}.")
    z = _z(familywise_error, len(rows))
    failures = _verdicts(rows, target, z, tolerance, alternative, None)
    if failures:
        raise AssertionError(f"{len(failures)} of {len(rows)} {measure} checks failed:\n"
                             + "\n".join(failures))


def _check_measure_args(familywise_error: float, alternative: str) -> None:
    _check_rate(familywise_error, "familywise_error")
    if alternative not in ("two-sided", "greater"):
        raise ValueError(f"`alternative` must be 'two-sided' or 'greater'; got {alternative!r}.")


def _z(familywise_error: float, k: int) -> float:
    return float(stats.norm.isf(familywise_error / (2 * k)))


def assert_coverage(
    result: StudyResult,
    nominal: float = 0.95,
    *,
    method: str | None = None,
    tolerance: float | None = None,
    familywise_error: float = 0.001,
    alternative: str = "two-sided",
) -> None:
    """Assert the coverage of every cell and method is ``nominal`` within Monte Carlo error.

    The MCSE used is the one under the hypothesis that coverage is nominal,
    ``sqrt(nominal (1 - nominal) / R)`` ([MWC2019] section 5.2), so an over-covering cell does
    not get a tighter tolerance than a correct one. See `assert_measure` for the parameters.

    Examples
    --------
    >>> from studies.engine import Grid, run
    >>> normal = Grid({"distribution": ["normal"], "n": [5, 20]}, n_replicates=4000)
    >>> results = run(["studies.suite.mean_bias:STUDY"], grid=normal, rng=2024, workers=1)
    >>> assert_coverage(results["mean_bias"], 0.95, method="mean")  # exact t interval
    """
    nominal = _check_rate(nominal, "nominal")
    _check_measure_args(familywise_error, alternative)
    rows = result.rows("coverage", method=method)
    if not rows:
        raise ValueError(f"no coverage reported by {method or 'any method'} in {result.study!r}.")
    z = _z(familywise_error, len(rows)) if alternative == "two-sided" else float(
        stats.norm.isf(familywise_error / len(rows)))
    failures = _verdicts(rows, nominal, z, tolerance, alternative,
                         lambda n: math.sqrt(nominal * (1.0 - nominal) / n))
    if failures:
        raise AssertionError(f"{len(failures)} of {len(rows)} coverage checks failed:\n"
                             + "\n".join(failures))
