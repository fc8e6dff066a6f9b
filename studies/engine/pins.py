"""What holds each public estimator method to its promises: its claims, from both sides.

A method is pinned when a claim would fail if it broke its promise (**validity**: coverage at
least nominal, or near nominal on average where that is the promise; no bias; a plan that
delivers its power) and when one would fail if it kept the promise wastefully
(**efficiency**: an interval no more conservative than a reference, a bound at its stated
level, a plan no larger than the least that reaches the power). Claims say which they pin
(`studies.engine.claims.Claim.pins`); studies say which public method each of their methods
runs (`studies.engine.design.Study.estimator_methods`). `pin_table` puts the two together for
every public method of `estimators` (`public_methods`), with the grids each claim is judged
on: a method pinned only on a full grid is not guarded in CI.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

import estimators
from studies.engine.claims import PINS
from studies.engine.design import Study
from studies.engine.regions import region_mask

__all__ = ["PIN_COLUMNS", "pin_markdown", "pin_table", "public_methods"]

PIN_COLUMNS = ("method", "validity", "efficiency", "missing")


def public_methods() -> tuple[str, ...]:
    """Every method of a public estimator function, as ``function:method``.

    The interval and estimate functions by their ``method`` choices (`estimators`'
    ``*_METHODS`` tuples: `proportion_ci` with its finite-population method, `f1_ci`, the
    stratified designs of `recall_ci`, `stratified_proportion`, `budget_positives`,
    `cumulative_gain_estimate`, `allocate`), the planners by the measure planned
    (`certification_sample_size`) and the posterior of the simulated one
    (`confusion_posterior`), and the estimators of a set's utility without a choice.
    """
    choices = {
        "proportion_ci": (*estimators.PROPORTION_METHODS, *estimators.FINITE_PROPORTION_METHODS),
        "f1_ci": estimators.F1_METHODS,
        "recall_ci": tuple(f"stratified-{m}" for m in
                           estimators.RECALL_METHODS_BY_DESIGN["stratified"]),
        "stratified_proportion": estimators.STRATIFIED_METHODS,
        "budget_positives": estimators.BUDGET_POSITIVES_METHODS,
        "cumulative_gain_estimate": estimators.CUMULATIVE_GAIN_METHODS,
        "allocate": estimators.ALLOCATION_METHODS,
        "certification_sample_size": estimators.CERTIFICATION_DESIGNS,
        "confusion_posterior": estimators.POSTERIORS,
        "srs_estimate": ("utility",),
        "pooled_estimate": ("utility",),
    }
    return tuple(f"{function}:{method}" for function, methods in choices.items()
                 for method in methods)


def pin_table(studies: Sequence[Study]) -> pd.DataFrame:
    """One row per public method: the claims pinning its validity and its efficiency.

    Parameters
    ----------
    studies : sequence of Study

    Returns
    -------
    pandas.DataFrame
        Columns `PIN_COLUMNS`: ``method`` (``function:method``, in `public_methods` order);
        ``validity`` and ``efficiency``, the claims as ``study:claim`` (with `` (full grid
        only)`` for a claim not judged on the quick grid), joined by ``"; "``; ``missing``,
        the sides no claim pins (``"validity, efficiency"``, one of them, or ``""``).
        Methods that studies name but `public_methods` does not list come last.
    """
    found: dict[str, dict[str, list[str]]] = {}
    for study in studies:
        # a method naming its public methods by region reads the study's cells (a few)
        cells = pd.DataFrame([c for grid in study.grids.values() for c in grid.cells()]) if any(
            not isinstance(v, str) for v in study.estimator_methods.values()) else None
        for claim in study.claims:
            label = f"{study.name}:{claim.name}" + (
                "" if not claim.grids or "quick" in claim.grids else " (full grid only)")
            for method in claim.methods:
                for public in _public(study, method, claim.where, cells):
                    sides = found.setdefault(public, {side: [] for side in PINS})
                    for side in claim.pins:
                        if label not in sides[side]:
                            sides[side].append(label)
    listed = public_methods()
    rows = []
    for method in [*listed, *sorted(set(found) - set(listed))]:
        sides = found.get(method, {side: [] for side in PINS})
        rows.append({"method": method,
                     **{side: "; ".join(sides[side]) for side in PINS},
                     "missing": ", ".join(side for side in PINS if not sides[side])})
    return pd.DataFrame(rows, columns=list(PIN_COLUMNS))


def _public(study: Study, method: str, where: str, cells: pd.DataFrame | None) -> list[str]:
    """The public methods a study's ``method`` runs in the cells of region ``where``: its
    one public method, or those of its ``(region, public)`` pairs whose region shares a cell
    of the study's grids with ``where``."""
    mapped = study.estimator_methods.get(method)
    if mapped is None or isinstance(mapped, str):
        return [] if mapped is None else [mapped]
    assert cells is not None
    inside = region_mask(cells, where) if where else np.ones(len(cells), dtype=bool)
    return [public for region, public in mapped if (inside & region_mask(cells, region)).any()]


def pin_markdown(table: pd.DataFrame) -> str:
    """The table as Markdown: a line of counts, then one row per method."""
    both = int((table["missing"] == "").sum())
    lines = ["# What pins each public estimator method", "",
             "Written by `evalcert study pins --out docs/method-pins.md` from the suite's "
             "claims (`Claim.pins`) and the methods each study runs "
             "(`Study.estimator_methods`); `tests/studies/engine/test_pins.py` fails when it "
             "is stale.", "",
             f"{both} of {len(table)} public estimator methods are pinned from both sides "
             "(a claim on their validity and one on their efficiency); the rest lack what "
             "the last column says.", "",
             "| method | validity | efficiency | missing |", "| --- | --- | --- | --- |"]
    for row in table.itertuples(index=False):
        cells = [f"`{row.method}`", *(text.replace("; ", "<br>") or "-" for text in
                                      (row.validity, row.efficiency)), row.missing or "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
