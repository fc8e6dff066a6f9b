"""Per-replicate estimates: what each method returned in each replicate of a Monte Carlo cell.

Morris, White & Crowther (2019, section 5.2) recommend storing the estimates first and
computing performance from them; rsimsum takes exactly such a table. A Monte Carlo cell keeps
its methods' estimates (the fields of `Estimates` each method returned: ``estimate``,
``se``, ``low``, ``high``, ``reject``, ...) as one archive (`pack`), one row per distinct
outcome with its tally when the study tallied its outcomes. This module alone writes and
reads that archive:

* `measure` turns it into each method's performance (what a worker stores for the cell);
* `per_replicate` expands it to one value per replicate (a zip plot's intervals);
* `estimates_frame` gives a run's estimates as one tidy frame, one row per (cell, method,
  replicate) (`RunResults.estimates_frame`), and `performance_frame` recomputes the
  performance measures from such a frame with the same code (`performance`).

Exact-path cells keep no estimates: they are a deterministic function of the group's
parameters, and their measures are exact.

References
----------
Morris, White & Crowther (2019), *Statistics in Medicine* 38, 2074-2102, section 5.2.
Gasparini (2018), rsimsum: summarise results from Monte Carlo simulation studies, *Journal of
Open Source Software* 3(26), 739.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from studies.engine import seeding
from studies.engine.performance import FIELDS, Estimates, Performance, performance
from studies.engine.store import damaged, existing_store

__all__ = [
    "cell_estimates",
    "count",
    "estimates_frame",
    "extend",
    "measure",
    "pack",
    "per_replicate",
    "performance_frame",
    "unpack",
]

Fields = dict[str, dict[str, NDArray[Any]]]


def pack(estimates: Mapping[str, Estimates], frequency: NDArray[np.int64] | None) -> bytes:
    """A Monte Carlo cell's estimates by method (and its tallies) as one archive.

    ``frequency``: the replicates of each row when the cell tallied its outcomes (None: one
    replicate per row).
    """
    arrays: dict[str, Any] = {f"{m}/{k}": v for m, e in estimates.items()
                              for k, v in e.arrays().items()}
    if frequency is not None:
        arrays["frequency"] = frequency
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def unpack(blob: bytes) -> tuple[Fields, dict[str, NDArray[Any] | None]]:
    """The archive's fields by method, one value per stored row, and the rows' weights.

    The weights are ``frequency`` (a tallied cell) and ``probability`` (cells stored by an
    older exact path, before groups); each is None when absent.
    """
    if not blob:
        raise ValueError("`blob` must hold a Monte Carlo cell's estimates; got an empty one (an "
                         "exact-path cell, or a cell read without its estimates).")
    with np.load(io.BytesIO(blob)) as data:
        arrays = {name: data[name] for name in data.files}
    weights = {k: arrays.pop(k, None) for k in ("frequency", "probability")}
    found: Fields = {}
    for name, values in arrays.items():
        method, _, kind = name.rpartition("/")
        found.setdefault(method, {})[kind] = values
    return found, weights


def count(blob: bytes) -> int:
    """The number of replicates an archive holds (its tallies summed when it has them)."""
    found, weights = unpack(blob)
    if weights["frequency"] is not None:
        return int(weights["frequency"].sum())
    sizes = {len(v) for fields in found.values() for v in fields.values()}
    return max(sizes, default=0)


def extend(earlier: bytes, added: bytes) -> bytes:
    """One archive holding the replicates of ``earlier`` followed by those of ``added``.

    The methods of both are kept, each with its rows of both, in that order; a cell tallied in
    one archive only counts each row of the other once. A method missing from either (it
    raised there) is left out: its estimates would be those of part of the replicates.

    Examples
    --------
    >>> a = pack({"m": Estimates(estimate=np.array([0.1]))}, np.array([2]))
    >>> b = pack({"m": Estimates(estimate=np.array([0.3, 0.4]))}, None)
    >>> count(extend(a, b)), per_replicate(extend(a, b))["m"]["estimate"].tolist()
    (4, [0.1, 0.1, 0.3, 0.4])
    """
    first, first_weights = unpack(earlier)
    second, second_weights = unpack(added)
    arrays: dict[str, Any] = {}
    for method in (m for m in first if m in second):
        for kind in (k for k in first[method] if k in second[method]):
            arrays[f"{method}/{kind}"] = np.concatenate([first[method][kind],
                                                         second[method][kind]])
    tallies = [first_weights["frequency"], second_weights["frequency"]]
    if any(t is not None for t in tallies):
        rows = [_rows(first), _rows(second)]
        arrays["frequency"] = np.concatenate([
            t if t is not None else np.ones(n, dtype=np.int64)
            for t, n in zip(tallies, rows, strict=True)])
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _rows(found: Fields) -> int:
    return max((len(v) for fields in found.values() for v in fields.values()), default=0)


def measure(blob: bytes, true_value: float, *, measures: Iterable[str]
            ) -> dict[str, Performance]:
    """Each method's performance from a cell's archive (`pack`), its tallies as weights."""
    found, weights = unpack(blob)
    wanted = tuple(measures)
    return {m: performance(Estimates(**fields), true_value, measures=wanted, **weights)
            for m, fields in found.items()}


def per_replicate(blob: bytes) -> Fields:
    """A cell's estimates by method and field, one value per replicate, in stored order.

    A tallied outcome's values are repeated as many times as it occurred.

    Examples
    --------
    >>> blob = pack({"m": Estimates(estimate=np.array([0.1, 0.2]))}, np.array([2, 1]))
    >>> per_replicate(blob)["m"]["estimate"].tolist()
    [0.1, 0.1, 0.2]
    """
    found, weights = unpack(blob)
    frequency = weights["frequency"]
    if frequency is None:
        return found
    return {m: {k: np.repeat(v, frequency) for k, v in fields.items()}
            for m, fields in found.items()}


def cell_estimates(run_dir: str | Path, study: str, params: Mapping[str, Any]) -> Fields:
    """The per-replicate estimates of one Monte Carlo cell of a stored run (`per_replicate`).

    Reads that cell's archive alone from the run's store, by its key
    (`studies.engine.seeding.cell_key`).

    Raises
    ------
    ValueError
        When ``run_dir`` holds no run, or the run has no such cell with estimates, or they
        are damaged.
    """
    store = existing_store(Path(run_dir), name="run_dir")
    wanted = dict(params)
    try:
        blob = store.cell_estimates(study, seeding.cell_key(study, wanted))
    finally:
        store.close()
    if blob is None:
        raise ValueError(f"`run_dir` {run_dir} must hold cell {wanted} of study {study!r}; it "
                         "does not.")
    if not blob:
        raise ValueError(f"cell {wanted} of study {study!r} in {run_dir} has no per-replicate "
                         "estimates (an exact-path cell).")
    try:
        return per_replicate(blob)
    except (ValueError, KeyError, EOFError, OSError, zipfile.BadZipFile) as error:
        # damage inside a blob passes SQLite's checks; the archive's checksums catch it
        raise damaged("run_dir", Path(run_dir), f"the estimates of cell {wanted} of study "
                      f"{study!r} cannot be decoded: {type(error).__name__}: {error}") from None


def _stored_blobs(directory: Path, wanted: set[tuple[str, str]]) -> dict[tuple[str, str], bytes]:
    """The archives of the cells ``(study, key)`` in ``directory``'s store, read at once."""
    store = existing_store(directory, name="directory")
    try:
        rows = [row for study in sorted({s for s, _ in wanted})
                for row in store.cells(with_estimates=True, study=study)]
    finally:
        store.close()
    return {(row["study"], row["key"]): bytes(row["estimates"]) for row in rows
            if (row["study"], row["key"]) in wanted}


def estimates_frame(results: Mapping[str, Any], directory: str | Path | None = None
                    ) -> pd.DataFrame:
    """One row per (study, Monte Carlo cell, method, replicate): the estimates as a dataset.

    ``results``: study name to `StudyResult` (a `RunResults`).

    Columns: ``study``, ``position``, the cell's parameters, ``method``, ``replicate``
    (0, 1, ... within the cell), then each field a method returned (`FIELDS`; missing where a
    method did not return it). Exact-path cells have no replicates and no rows. Cells read
    without their estimates (a result read from a store) are read from the run ``directory``'s
    store in one pass; without one they are a ValueError.
    """
    cells = [(name, cell) for name, result in results.items() for cell in result.cells
             if cell.path == "monte-carlo"]
    missing = {(name, cell.key) for name, cell in cells if not cell.estimates}
    if missing and directory is None:
        name = min(missing)[0]
        raise ValueError(f"`directory` must be the run directory of study {name!r}, whose "
                         f"cells were read without their estimates; got None.")
    stored = _stored_blobs(Path(directory), missing) if missing and directory else {}
    pieces = []
    for name, cell in cells:
        blob = cell.estimates or stored.get((name, cell.key), b"")
        if not blob:
            raise ValueError(f"`directory` {directory} must hold the estimates of cell "
                             f"{dict(cell.params)} of study {name!r}; it does not.")
        for method, fields in per_replicate(blob).items():
            size = len(next(iter(fields.values())))
            piece = {"study": name, "position": cell.position,
                     **{k: [v] * size for k, v in cell.params.items()},
                     "method": method, "replicate": np.arange(size)}
            piece.update({k: fields[k] for k in FIELDS if k in fields})
            pieces.append(pd.DataFrame(piece))
    if not pieces:
        return pd.DataFrame(columns=["study", "position", "method", "replicate"])
    frame = pd.concat(pieces, ignore_index=True)
    front = ["study", "position"]
    params = [c for c in frame.columns if c not in (*front, "method", "replicate", *FIELDS)]
    fields = [k for k in FIELDS if k in frame.columns]
    return frame[[*front, *params, "method", "replicate", *fields]]


def performance_frame(frame: pd.DataFrame, truth: Callable[[Mapping[str, Any]], float],
                      parameters: Iterable[str], *, measures: Iterable[str]) -> pd.DataFrame:
    """Performance measures recomputed from one study's estimates frame (`estimates_frame`).

    Each (cell, method) group's estimates go through `performance`, the code a worker runs,
    with the cell's true value ``truth(params)``. A field missing in every replicate of a
    method is taken as one the method did not return. Returns tidy rows: ``position``, the
    parameters, ``method``, ``measure``, ``value``, ``mcse``.
    """
    names = list(parameters)
    wanted = tuple(measures)
    rows = []
    for (position, method), group in frame.groupby(["position", "method"], sort=True):
        params = {k: group[k].iloc[0] for k in names}
        fields = {k: group[k].to_numpy(dtype=np.float64) for k in FIELDS
                  if k in group and group[k].notna().any()}
        perf = performance(Estimates(**fields), truth(params), measures=wanted)
        rows += [{"position": position, **params, "method": method, "measure": m,
                  "value": perf[m].value, "mcse": perf[m].mcse} for m in perf.measures]
    return pd.DataFrame(rows)
