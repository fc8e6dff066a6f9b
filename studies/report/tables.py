"""The tables a run writes beside its store: per-cell tables and each study's headline table.

For every study in a run directory:

* ``<study>.csv``: one row per (cell, method): the cell's parameters, ``method``, ``path``,
  ``n_replicates`` (empty on the exact path), then each measure and its MCSE
  (``<measure>_mcse``), at full precision; a measure a method does not report is empty, one
  that is undefined in the cell is ``nan``.
* ``<study>.txt``: the same table aligned for reading (6 significant digits), followed by the
  first failing cell of each method that raised.
* ``<study>.summary.csv`` and ``.txt``: the study's headline table (`Study.summary`, by default
  `headline_table`: each measure's range over the grid per method, with its largest MCSE).
* ``<study>.claims.csv`` and ``.txt``: the verdict on each of the study's claims
  (`studies.engine.claims`), when it has claims: HOLDS, FAILS or NOT RUN, the values compared
  and failing, the MCSE multiplier ``k`` and false-alarm rate, the smallest deviation the claim
  detects, and its worst failing value.

A study whose cells are stored as packed groups (millions of exact cells) gets only its
summary; read its cells with ``results_from_store(DIR).to_frame()`` or, group by group,
``.frames()``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from studies.engine import GroupSummary, PackedGroup, Study, StudyResult, Verdict

__all__ = ["Range", "cell_table", "claims_table", "group_ranges", "headline_table", "summaries",
           "write_tables"]


def _full(value: Any) -> str:
    """A table entry at full precision: None (not reported) empty, floats as Python prints."""
    return "" if value is None else str(value)


def _short(value: Any) -> str:
    """A table entry for reading: floats to 6 significant digits."""
    return f"{value:.6g}" if isinstance(value, float) else _full(value)


def _aligned(frame: pd.DataFrame) -> str:
    """Right-aligned text columns, header first (floats to 6 significant digits)."""
    if frame.empty:
        return " ".join(frame.columns)
    return frame.astype(object).map(_short).to_string(index=False)


def _cell_records(result: StudyResult) -> list[dict[str, Any]]:
    """One dict per (cell, method); a measure the method does not report is None."""
    measures = list(dict.fromkeys(
        m for c in result.cells for p in c.performance.values() for m in p.measures))
    records = []
    for cell in result.cells:
        for method, perf in cell.performance.items():
            row: dict[str, Any] = {**cell.params, "method": method, "path": cell.path,
                                   "n_replicates": perf.n_replicates}
            for m in measures:
                found = perf.measures.get(m)
                row[m] = found.value if found else None
                row[f"{m}_mcse"] = found.mcse if found else None
            records.append(row)
    return records


def cell_table(result: StudyResult) -> pd.DataFrame:
    """One row per (cell, method) with every measure and its MCSE side by side (grid order).

    The wide form of ``result.to_frame()``: what ``<study>.csv`` holds (a measure a method
    does not report is NaN here, as is one undefined in its cell).
    """
    records = _cell_records(result)
    frame = pd.DataFrame.from_records(records)
    if records:
        frame["n_replicates"] = frame["n_replicates"].astype("Int64")
    return frame


def headline_table(result: StudyResult, *,
                   ranges: Mapping[str, Mapping[tuple[str, str], Range]] | None = None
                   ) -> list[dict[str, Any]]:
    """Per method and measure: cells, smallest, mean and largest value, largest MCSE.

    The default summary of a study (`Study.summary`): the range of each measure over the
    grid, with the Monte Carlo error of its least precise cell (0 on the exact path). Cells
    where a measure is undefined (nan) are counted apart (``nan_cells``). Packed groups are
    read as arrays, so a grid of millions of cells is summarised without building its cells.

    ``ranges``: the `group_ranges` of packed groups computed already, by group key (while a
    run still computes its other groups); the table is the same, to the last bit.

    Examples
    --------
    >>> from studies.engine import CellResult, Estimates, performance
    >>> import numpy as np
    >>> perf = performance(Estimates(estimate=np.array([0.5, 1.5])), 1.0, measures=["bias"])
    >>> cell = CellResult("s", "k", 0, {"n": 2}, "monte-carlo", {"m": perf}, {}, b"")
    >>> headline_table(StudyResult("s", (cell,)))[0]["mean"]
    0.0
    """
    found: dict[tuple[str, str], Range] = {}
    given = ranges or {}
    for group in result.groups:
        got = given.get(group.key)
        for key, part in (got if got is not None else group_ranges(group)).items():
            found.setdefault(key, Range()).merge(part)
    for cell in result.cells:
        for method, perf in cell.performance.items():
            for measure, m in perf.measures.items():
                found.setdefault((method, measure), Range()).add(np.array([m.value]), m.mcse)
    return [{"method": method, "measure": measure, "cells": r.cells,
             "nan_cells": r.cells - r.defined, "min": r.low, "mean": r.total / r.defined,
             "max": r.high, "max_mcse": r.mcse}
            for (method, measure), r in found.items() if r.defined]


def group_ranges(group: PackedGroup) -> dict[tuple[str, str], Range]:
    """Each (method, measure)'s `Range` over one packed group's cells (exact: MCSE 0)."""
    found: dict[tuple[str, str], Range] = {}
    for method, measures in group.loaded().values.items():
        for measure, values in measures.items():
            found.setdefault((method, measure), Range()).add(values, 0.0)
    return found


class Range:
    """Running count, sum, extremes and largest MCSE of one measure's defined values.

    Merging the ranges of parts in order adds the same numbers in the same order as adding
    their values would, so the sum has the same bits.
    """

    def __init__(self) -> None:
        self.cells = self.defined = 0
        self.total, self.low, self.high, self.mcse = 0.0, math.inf, -math.inf, math.nan

    def add(self, values: NDArray[np.float64], mcse: float) -> None:
        missing = np.isnan(values)
        # contiguous as a selection would be: the same sum to the last bit
        defined = values[~missing] if missing.any() else np.ascontiguousarray(values)
        self.cells += values.size
        if defined.size:
            self.defined += defined.size
            self.total += float(defined.sum())
            self.low = min(self.low, float(defined.min()))
            self.high = max(self.high, float(defined.max()))
            self.mcse = float(np.fmax(self.mcse, mcse))

    def merge(self, other: Range) -> None:
        """Add the values another range was made of (one `add`: its total is one sum)."""
        self.cells += other.cells
        if other.defined:
            self.defined += other.defined
            self.total += other.total
            self.low, self.high = min(self.low, other.low), max(self.high, other.high)
            self.mcse = float(np.fmax(self.mcse, other.mcse))


def claims_table(study: str, verdicts: Sequence[Verdict]) -> pd.DataFrame:
    """One row per claim: its verdict, what was compared and how strictly, the worst value."""
    return pd.DataFrame.from_records([v.to_row(study) for v in verdicts])


def write_tables(results: Mapping[str, StudyResult], directory: str | Path,
                 studies: Sequence[Study] = (),
                 verdicts: Mapping[str, Sequence[Verdict]] | None = None, *,
                 rows: Mapping[str, list[dict[str, Any]]] | None = None
                 ) -> dict[str, list[dict[str, Any]]]:
    """Write each study's tables into ``directory`` (see the module docstring).

    Parameters
    ----------
    results : mapping of str to StudyResult
        What `studies.engine.run` or `studies.engine.results_from_store` returned.
    directory : path
        The run directory.
    studies : sequence of Study
        The studies run, for their ``summary`` (default `headline_table`).
    verdicts : mapping of str to sequence of Verdict, optional
        Each study's verdicts (`studies.engine.evaluate_claims`), written as its claims table.
    rows : mapping of str to list of dict, optional
        Each study's summary rows (`summaries`) computed already; the others are computed
        here.

    Returns
    -------
    dict of str to list of dict
        Each study's summary rows (`summaries`), for the report to reuse.
    """
    directory = Path(directory)
    given = rows or {}
    computed = summaries({k: v for k, v in results.items() if k not in given}, studies)
    found = {k: list(given[k]) if k in given else computed[k] for k in results}
    for name, result in results.items():
        _write_summary(directory, name, found[name])
        if not result.groups:
            _write_cells(directory, name, result)
        if verdicts and verdicts.get(name):
            frame = claims_table(name, verdicts[name])
            frame.astype(object).map(_full).to_csv(directory / f"{name}.claims.csv", index=False)
            shown = frame.drop(columns=["study", "statement"])
            (directory / f"{name}.claims.txt").write_text(
                f"study {name}: claims\n\n{_aligned(shown)}\n")
    return found


def summaries(results: Mapping[str, StudyResult], studies: Sequence[Study] = (), *,
              shares: Mapping[str, Mapping[str, Any]] | None = None
              ) -> dict[str, list[dict[str, Any]]]:
    """Each study's summary rows: its ``Study.summary``, or `headline_table` without one.

    ``shares``: by study, the shares of packed groups (by key) computed already for a
    summary computed a group at a time (`studies.engine.GroupSummary`). A summary that
    raises is one row saying so (``summary``: "not computed: ..."), and the report goes on:
    the claims and the other studies' tables do not depend on it.
    """
    by_name = {s.name: s for s in studies}
    found = {}
    for name, result in results.items():
        study = by_name.get(name)
        summary = study.summary if study is not None and study.summary else headline_table
        given = (shares or {}).get(name)
        try:
            rows = (summary.table(result, given) if isinstance(summary, GroupSummary) and given
                    else summary(result))
            found[name] = [dict(row) for row in rows]
        except Exception as error:  # a study's own code may fail in any way; say so, go on
            found[name] = [{"summary": f"not computed: {type(error).__name__}: {error}"}]
    return found


def _write_summary(directory: Path, name: str, rows: list[Mapping[str, Any]]) -> None:
    frame = pd.DataFrame.from_records(rows)
    frame.astype(object).map(_full).to_csv(directory / f"{name}.summary.csv", index=False)
    (directory / f"{name}.summary.txt").write_text(
        f"study {name}: summary\n\n{_aligned(frame)}\n")


def _write_cells(directory: Path, name: str, result: StudyResult) -> None:
    # object columns keep None (not reported) apart from nan (undefined in the cell)
    frame = pd.DataFrame(_cell_records(result), dtype=object)
    frame.map(_full).to_csv(directory / f"{name}.csv", index=False)
    lines = [f"study {name}: {len(result.cells)} cells finished", "", _aligned(frame)]
    for method, (params, message) in result.first_errors().items():
        lines.append(f"method {method} FAILED (first failing cell {dict(params)}): {message}")
    (directory / f"{name}.txt").write_text("\n".join(lines) + "\n")
