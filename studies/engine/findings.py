"""Findings: sentences about a run whose numbers come from the run.

A report states what a study found in words, and every number in those words is read from the
results: a claim's verdict with the value nearest its bound (`claim_finding`), and the
sentences a study writes from its own summary (`Study.findings`) with the helpers here, which
put a Monte Carlo value beside its MCSE (`estimate`) and, where a study repeats a paper, the
paper's number beside ours with their difference in MCSE units and whether the run
reproduces it, or is too imprecise to tell (`versus_paper`). Nothing here
is typed by hand into a docstring or a caption, so a page never quotes another run.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator

import numpy as np
import pandas as pd

from studies.engine.claims import FAILS, HOLDS, INCONCLUSIVE, POWER_Z, Verdict
from studies.engine.regions import region_mask
from studies.engine.results import StudyResult

__all__ = ["NOT_REPRODUCED", "PAPER_OUTCOMES", "REPRODUCED", "REPRODUCED_WITHIN",
           "TOO_IMPRECISE", "claim_finding", "estimate", "extreme", "paper_outcomes",
           "versus_paper"]

# A paper's value counts as reproduced when ours lies within this many MCSE of it: about a
# 0.3% two-sided false-alarm rate for a run that truly reproduces it.
REPRODUCED_WITHIN = 3.0


def _number(value: float, *, percent: bool, digits: int) -> str:
    if value != value:
        return "undefined"
    if percent:
        return f"{100 * value:.{digits}f}%"
    if value == 0 or 1e-2 <= abs(value) < 1e4:
        return f"{value:.{digits}f}"
    return f"{value:.{digits}g}"


def estimate(value: float, mcse: float, *, percent: bool = False, digits: int = 3) -> str:
    """A Monte Carlo value with its MCSE, in words: ``"0.847 (MCSE 0.015)"``.

    Parameters
    ----------
    value, mcse : float
        The estimate and its Monte Carlo standard error (0 or nan: exact, no MCSE shown).
    percent : bool
        Show a share as a percentage and its MCSE in percentage points.
    digits : int
        Decimals (significant digits for values below 0.01 or of 10,000 or more).

    Examples
    --------
    >>> estimate(0.84712, 0.0151)
    '0.847 (MCSE 0.015)'
    >>> estimate(0.84712, 0.0151, percent=True, digits=1)
    '84.7% (MCSE 1.5 points)'
    >>> estimate(0.95, 0.0)
    '0.950 (exact)'
    """
    shown = _number(value, percent=percent, digits=digits)
    if not mcse or mcse != mcse:
        return f"{shown} (exact)"
    error = f"{100 * mcse:.{digits}f} points" if percent else f"{mcse:.2g}"
    return f"{shown} (MCSE {error})"


def versus_paper(ours: float, mcse: float, paper: float, *, percent: bool = False,
                 digits: int = 3, resolution: float | None = None) -> str:
    """Our value beside a paper's, their difference in MCSE units, and whether it reproduces.

    Ours reproduces the paper's value when it lies within `REPRODUCED_WITHIN` MCSE of it and
    the run is precise enough to have told a difference of ``resolution`` (default 5 points
    for a share shown in percent, else 5% of the paper's value) with probability 0.95:
    ``(REPRODUCED_WITHIN + 1.645) x MCSE <= resolution``. Within the MCSE allowance but less
    precise, it is "too imprecise to tell", never reproduced. An exact value (MCSE 0)
    reproduces only an equal value.

    Examples
    --------
    >>> versus_paper(0.847, 0.015, 0.7946, percent=True, digits=1)
    "84.7% (MCSE 1.5 points) against the paper's 79.5%: 3.5 MCSE above it, not reproduced"
    >>> versus_paper(0.30, 0.005, 0.2948, percent=True, digits=1)
    "30.0% (MCSE 0.5 points) against the paper's 29.5%: 1.0 MCSE above it, reproduced"
    >>> versus_paper(0.30, 0.02, 0.2948, percent=True, digits=1)  # doctest: +NORMALIZE_WHITESPACE
    "30.0% (MCSE 2.0 points) against the paper's 29.5%: 0.3 MCSE above it, too imprecise
    to tell (an MCSE of at most 1.1 points would)"
    """
    ours_text = estimate(ours, mcse, percent=percent, digits=digits)
    paper_text = _number(paper, percent=percent, digits=digits)
    if ours != ours:
        return _said(NOT_REPRODUCED, f"{ours_text} against the paper's {paper_text}: "
                                     "not reproduced")
    difference = ours - paper
    if not mcse or mcse != mcse:
        same = math.isclose(ours, paper, rel_tol=1e-9, abs_tol=1e-12)
        return _said(REPRODUCED if same else NOT_REPRODUCED,
                     f"{ours_text} against the paper's {paper_text}: "
                     f"{'reproduced' if same else 'not reproduced'}")
    z = difference / mcse
    side = "above" if z > 0 else "below"
    if resolution is None:
        resolution = 0.05 if percent else 0.05 * abs(paper)
    needed = resolution / (REPRODUCED_WITHIN + POWER_Z)
    if abs(z) > REPRODUCED_WITHIN:
        outcome, verdict = NOT_REPRODUCED, "not reproduced"
    elif mcse <= needed:
        outcome, verdict = REPRODUCED, "reproduced"
    else:
        shown = f"{100 * needed:.{digits}f} points" if percent else f"{needed:.2g}"
        outcome = TOO_IMPRECISE
        verdict = f"too imprecise to tell (an MCSE of at most {shown} would)"
    return _said(outcome, f"{ours_text} against the paper's {paper_text}: {abs(z):.1f} MCSE "
                          f"{side} it, {verdict}")


# What `versus_paper` found, counted while `paper_outcomes` is open (one list per context).
REPRODUCED, NOT_REPRODUCED, TOO_IMPRECISE = "reproduced", "not reproduced", "too imprecise"
PAPER_OUTCOMES = (REPRODUCED, NOT_REPRODUCED, TOO_IMPRECISE)
_OUTCOMES: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "paper_outcomes", default=None)


def _said(outcome: str, text: str) -> str:
    found = _OUTCOMES.get()
    if found is not None:
        found.append(outcome)
    return text


@contextlib.contextmanager
def paper_outcomes() -> Iterator[list[str]]:
    """Collect the outcome of every `versus_paper` made inside the block (a study's findings):
    one of `PAPER_OUTCOMES` each, in order, so that a report can count them.

    Examples
    --------
    >>> with paper_outcomes() as found:
    ...     _ = versus_paper(0.30, 0.005, 0.2948, percent=True)
    ...     _ = versus_paper(0.5, 0.0, 0.4)
    >>> found
    ['reproduced', 'not reproduced']
    """
    found: list[str] = []
    token = _OUTCOMES.set(found)
    try:
        yield found
    finally:
        _OUTCOMES.reset(token)


def extreme(result: StudyResult, method: str, measure: str, *, largest: bool = False,
            magnitude: bool = False, where: str = "", percent: bool = False,
            digits: int = 3) -> str:
    """A method's smallest (or largest) value of a measure over the run, and where it lies.

    Parameters
    ----------
    result : StudyResult
    method, measure : str
    largest : bool
        The largest value instead of the smallest.
    magnitude : bool
        Rank by absolute value (the value shown keeps its sign).
    where : str
        Only the cells this query over the grid parameters selects (empty: all).
    percent, digits
        As `estimate`.

    Returns
    -------
    str
        ``"0.400 (exact) at n=10, p=0.05"``; ``"no value"`` when the method has no defined
        value of the measure there.

    Examples
    --------
    >>> from studies.engine import CellResult, Measure, Performance
    >>> cells = tuple(CellResult("s", str(i), i, {"n": n}, "exact",
    ...                          {"wald": Performance({"coverage": Measure(c, 0.0)}, None)},
    ...                          {}, b"") for i, (n, c) in enumerate([(10, 0.4), (50, 0.93)]))
    >>> extreme(StudyResult("s", cells), "wald", "coverage")
    '0.400 (exact) at n=10'
    >>> extreme(StudyResult("s", cells), "wald", "coverage", largest=True, where="n > 10")
    '0.930 (exact) at n=50'
    """
    parts = [frame[frame["value"].notna()] for frame in
             result.frames(methods=[method], measures=[measure])]
    if not parts:
        return "no value"
    frame = pd.concat(parts, ignore_index=True)
    params = [c for c in frame.columns if c not in _NOT_PARAMETERS]
    if where:
        frame = frame[region_mask(frame[params], where)]
    if not len(frame):
        return "no value"
    values = frame["value"].to_numpy(float)
    ranked = np.abs(values) if magnitude else values
    row = frame.iloc[int(np.argmax(ranked) if largest else np.argmin(ranked))]
    place = ", ".join(f"{p}={row[p]}" for p in params)
    return f"{estimate(float(row['value']), float(row['mcse']), percent=percent, digits=digits)}" \
        f" at {place}"


_NOT_PARAMETERS = ("study", "position", "method", "measure", "value", "mcse", "path",
                   "n_replicates")
_COMPARISON = {"at_least": "at least", "at_most": "at most"}


def claim_finding(verdict: Verdict) -> str:
    """One sentence on a claim's verdict, with the run's value nearest its bound.

    HOLDS and INCONCLUSIVE quote that value (and the reason of an inconclusive verdict);
    FAILS quotes the value that breaks the claim most; NOT RUN says why.

    Examples
    --------
    >>> import pandas as pd
    >>> from studies.engine import Claim, Verdict
    >>> claim = Claim("covers", "Wilson covers at least 93%.", ("wilson",), "coverage",
    ...               "at_least", 0.93)
    >>> nearest = {"method": "wilson", "where": "n=20", "value": 0.9412, "mcse": 0.0052,
    ...            "bound": 0.93}
    >>> verdict = Verdict(claim, "HOLDS", 4, 3.2, 0.019, pd.DataFrame(), nearest=nearest,
    ...                   familywise_error=0.0001)
    >>> print(claim_finding(verdict))  # doctest: +NORMALIZE_WHITESPACE
    covers HOLDS: Wilson covers at least 93%. Nearest its bound: wilson at n=20,
    coverage 0.941 (MCSE 0.0052) against at least 0.930. Judged with 3.2 MCSE allowed
    (false-alarm rate 0.0001): a value below 0.913 there would have failed it; a deviation
    of 0.019 beyond the bound is detected with probability 0.95 (resolution 0.02).
    """
    claim, status = verdict.claim, verdict.status
    head = f"{claim.name} {status}: {claim.statement}"
    if status == FAILS:
        return f"{head} Breaking it most: {verdict.worst()}."
    if status not in (HOLDS, INCONCLUSIVE) or not verdict.nearest:
        return f"{head} ({verdict.reason})." if verdict.reason else head
    near = verdict.nearest
    where = f" at {near['where']}" if near["where"] else ""
    if claim.comparison == "within":
        bound = f"within {claim.margin:.3g} of {_number(near['bound'], percent=False, digits=3)}"
    else:
        bound = f"{_COMPARISON[claim.comparison]} " \
                f"{_number(near['bound'], percent=False, digits=3)}"
    text = (f"{head} Nearest its bound: {near['method']}{where}, {claim.label} "
            f"{estimate(near['value'], near['mcse'])} against {bound}. {_judged(verdict)}")
    return f"{text} Inconclusive: {verdict.reason}." if status == INCONCLUSIVE else text


def _judged(verdict: Verdict) -> str:
    """What a verdict was judged with: the allowance at the value nearest its bound (the value
    beyond which it would have failed) and the deviation it detects, or exactness."""
    claim, near = verdict.claim, verdict.nearest
    if verdict.k is None:
        return (f"Judged on exact values (no Monte Carlo error; rounding tolerance "
                f"{claim.exact_tolerance:.0e}).")
    mcse = float(near["mcse"]) if near["mcse"] == near["mcse"] else 0.0
    room = verdict.k * mcse
    bound = float(near["bound"])
    if claim.comparison == "at_least":
        edge = f"a value below {_number(bound - room, percent=False, digits=3)}"
    elif claim.comparison == "at_most":
        edge = f"a value above {_number(bound + room, percent=False, digits=3)}"
    else:
        edge = (f"a value further than {claim.margin + room:.3g} from "
                f"{_number(bound, percent=False, digits=3)}")
    unit = f" {claim.resolution_unit}" if claim.resolution_unit else ""
    rate = "" if verdict.familywise_error is None else \
        f" (false-alarm rate {verdict.familywise_error:.2g})"
    return (f"Judged with {verdict.k:.2g} MCSE allowed{rate}: {edge} there would have failed "
            f"it; a deviation of {verdict.detectable:.2g}{unit} beyond the bound is detected "
            f"with probability 0.95 (resolution {claim.resolution:.2g}{unit}).")
