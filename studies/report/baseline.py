"""Blessed baselines, and every kind of run directory read as comparable results.

A baseline is what a regression gate compares a new run with: a small directory (by default
``reports/baseline``) holding

* ``results.csv.gz``: one row per (study, cell, method, measure): ``study``, ``position`` (the
  cell's place in its grid), ``cell`` (its parameters as text), ``confidence_level`` (the
  nominal level of coverage, when the study has one), ``method``, ``measure``, ``value``,
  ``mcse``, ``path`` and ``n_replicates``, at full precision, sorted; gzip without a time
  stamp, so the same run blesses byte-identical files;
* ``claims.csv``: every claim's verdict (study, claim, status);
* ``manifest.json``: why and when it was blessed (``reason``, ``blessed``), the commit of the
  tree that blessed it, the run's provenance (root seed, grid, study versions, grids, package
  versions, Python, platform, the run's own commit) and the SHA-256 of both files, so that a
  truncated or edited baseline is refused.

`load_results` reads a baseline, a run directory (``run.sqlite``) or a report written with
``study report --out`` (``report.json`` and ``results.csv``) into the same `Results`, which
`studies.report.compare` compares. `bless` writes a baseline from a finished run: it reads and
checks everything first and replaces the old baseline only at the end (a new directory moved
into place), so a bad run directory never damages a baseline.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from studies.engine import Verdict
from studies.engine.provenance import git_state
from studies.engine.reading import StoredRun, read_run
from studies.engine.regions import as_text
from studies.engine.store import DB_NAME
from studies.suite import get_study, judge, study_names

__all__ = ["COLUMNS", "MANIFEST", "Results", "bless", "load_results"]

MANIFEST = "manifest.json"
RESULTS = "results.csv.gz"
CLAIMS = "claims.csv"
COLUMNS: tuple[str, ...] = ("study", "position", "cell", "confidence_level", "method",
                            "measure", "value", "mcse", "path", "n_replicates")


@dataclass(frozen=True)
class Results:
    """A run's results in the form `studies.report.compare.compare` reads.

    Attributes
    ----------
    directory : Path
    kind : {"baseline", "run", "report"}
    rows : pandas.DataFrame
        The columns `COLUMNS`, one row per (study, cell, method, measure).
    verdicts : pandas.DataFrame
        ``study``, ``claim``, ``status``.
    studies : dict of str to str
        Study name to version.
    grids : dict
        Study name to its grid (``parameters``, ``n_replicates``).
    seed : str
    packages : dict of str to str
        Package versions of the run (numpy's random streams may change between versions).
    complete : bool
        Whether every cell of every study finished.
    """

    directory: Path
    kind: str
    rows: pd.DataFrame
    verdicts: pd.DataFrame
    studies: Mapping[str, str]
    grids: Mapping[str, Any]
    seed: str
    packages: Mapping[str, str]
    complete: bool


def _bad(directory: Path, reason: str) -> ValueError:
    return ValueError(f"`directory` must hold a run, a report or a baseline; {directory} "
                      f"{reason}.")


def load_results(directory: str | os.PathLike[str] | StoredRun, *,
                 verdicts: Mapping[str, Sequence[Verdict]] | None = None) -> Results:
    """Read a baseline, a run directory or a report directory (see the module docstring).

    A run already read (`studies.engine.reading.read_run`) is taken as it is, its store not
    opened again; ``verdicts``, its studies' verdicts when already judged (otherwise a run's
    are read from its claims tables, or judged here when it has none).

    Raises
    ------
    ValueError
        One line naming the directory and what is wrong: missing, not a run, report or
        baseline, a truncated or edited file.
    """
    if isinstance(directory, StoredRun):
        return _run(directory, verdicts)
    path = Path(directory)
    if not path.is_dir():
        raise _bad(path, "is not a directory")
    try:
        if (path / MANIFEST).is_file():
            return _baseline(path)
        if (path / DB_NAME).is_file():
            return _run(read_run(path))
        if (path / "report.json").is_file() and (path / "results.csv").is_file():
            return _report(path)
    except (OSError, EOFError, KeyError, TypeError, json.JSONDecodeError, gzip.BadGzipFile,
            pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise _bad(path, f"is unreadable ({type(error).__name__}: {error})") from None
    raise _bad(path, f"has none of {MANIFEST}, {DB_NAME}, report.json with results.csv")


def _cell_text(frame: pd.DataFrame, parameters: list[str]) -> pd.Series:
    """Each row's cell parameters as ``n=10, p=0.1`` (lists as their text)."""
    shown = as_text(frame[parameters].astype(object))
    text = pd.Series("", index=frame.index, dtype=object)
    for i, name in enumerate(parameters):
        text = text + ("" if i == 0 else ", ") + name + "=" + shown[name].map(str)
    return text


def _compact(frame: pd.DataFrame, parameters: list[str]) -> pd.DataFrame:
    """Tidy rows of one study in the columns `COLUMNS`."""
    nominal = (frame["confidence_level"].astype(float) if "confidence_level" in parameters
               else float("nan"))
    frame = frame.assign(cell=_cell_text(frame, parameters), confidence_level=nominal,
                         n_replicates=frame["n_replicates"].astype("Int64"))
    return frame[list(COLUMNS)]


def _sorted(rows: list[pd.DataFrame]) -> pd.DataFrame:
    rows = [r for r in rows if len(r)]
    if not rows:
        return pd.DataFrame(columns=list(COLUMNS))
    frame = pd.concat(rows, ignore_index=True)
    return frame.sort_values(["study", "position", "method", "measure"], kind="stable",
                             ignore_index=True)


def _statuses(study: str, verdicts: Sequence[Verdict]) -> pd.DataFrame:
    """A study's verdicts as rows ``study``, ``claim``, ``status``."""
    return pd.DataFrame([{"study": study, "claim": v.claim.name, "status": v.status}
                         for v in verdicts], columns=["study", "claim", "status"])


def _run(stored: StoredRun, judged: Mapping[str, Sequence[Verdict]] | None = None) -> Results:
    path, identity, results = stored.directory, stored.identity, stored.results
    grids = {name: {"parameters": g.to_dict()["parameters"], "n_replicates": g.n_replicates}
             for name, g in identity.grids.items()}
    rows = [_compact(frame, list(grids.get(name, {}).get("parameters", result.parameters)))
            for name, result in results.items() for frame in result.frames()]
    grid = identity.grid
    verdicts = []
    for name, result in results.items():
        table = path / f"{name}.claims.csv"
        if judged is not None and name in judged:
            verdicts.append(_statuses(name, judged[name]))
        elif table.is_file():
            found = pd.read_csv(table, dtype=str, keep_default_na=False)
            verdicts.append(found[["study", "claim", "status"]])
        elif name in study_names():  # a run made from Python, or interrupted: judge it here
            verdicts.append(_statuses(name, judge({name: result}, [get_study(name)],
                                                  grid)[name]))
    return Results(path, "run", _sorted(rows), _verdict_frame(verdicts),
                   dict(identity.studies), grids, str(identity.seed),
                   dict(stored.provenance.packages or {}), stored.state.complete)


def _report(path: Path) -> Results:
    report = json.loads((path / "report.json").read_text())
    grids = {name: {"parameters": g["parameters"], "n_replicates": g.get("n_replicates")}
             for name, g in report["grids"].items()}
    if report.get("results_csv_left_out"):
        raise _bad(path, "is a report whose results.csv leaves out "
                   f"{', '.join(report['results_csv_left_out'])}; compare its run directory")
    frame = pd.read_csv(path / "results.csv", low_memory=False)
    rows = [_compact(frame[frame["study"] == name], list(grid["parameters"]))
            for name, grid in grids.items()]
    verdicts = pd.DataFrame([{"study": name, "claim": v["claim"], "status": v["status"]}
                             for name, found in report["verdicts"].items() for v in found],
                            columns=["study", "claim", "status"])
    prov = report["provenance"]
    return Results(path, "report", _sorted(rows), verdicts, dict(report.get("studies", {})),
                   grids, str(prov.get("root seed", "")), dict(report.get("packages", {})),
                   str(prov.get("run", "complete")) == "complete")


def _baseline(path: Path) -> Results:
    manifest = json.loads((path / MANIFEST).read_text())
    if set(manifest["files"]) != {RESULTS, CLAIMS}:
        raise _bad(path, f"is a baseline whose manifest does not list {RESULTS} and {CLAIMS}")
    for name, digest in manifest["files"].items():
        data = (path / name).read_bytes() if (path / name).is_file() else b""
        if hashlib.sha256(data).hexdigest() != digest:
            raise _bad(path, f"is a baseline whose {name} is missing, truncated or edited "
                       "(its SHA-256 differs from the manifest's)")
    rows = pd.read_csv(path / RESULTS, compression="gzip", low_memory=False,
                       dtype={"n_replicates": "Int64"})
    missing = set(COLUMNS) - set(rows.columns)
    if missing:
        raise _bad(path, f"is a baseline whose {RESULTS} lacks columns {sorted(missing)}")
    verdicts = pd.read_csv(path / CLAIMS, dtype=str, keep_default_na=False)
    run = manifest["run"]
    return Results(path, "baseline", rows[list(COLUMNS)], verdicts, dict(manifest["studies"]),
                   dict(manifest["grids"]), str(run["seed"]), dict(run.get("packages", {})),
                   True)


def _verdict_frame(parts: list[pd.DataFrame]) -> pd.DataFrame:
    if not parts:
        return pd.DataFrame(columns=["study", "claim", "status"])
    return pd.concat(parts, ignore_index=True)


def bless(run_dir: str | os.PathLike[str], out: str | os.PathLike[str], *, reason: str
          ) -> Path:
    """Write the baseline of a finished run into ``out`` (replacing the one there).

    Parameters
    ----------
    run_dir : path
        A run directory (``run.sqlite``) whose every cell finished.
    out : path
        The baseline directory (created, or replaced as a whole).
    reason : str
        Why the results changed (recorded in the manifest).

    Returns
    -------
    Path
        The manifest's path.

    Raises
    ------
    ValueError
        When ``reason`` is empty, ``run_dir`` is not a finished run, or ``out`` is a file;
        nothing is written then.
    """
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError(f"`reason` must say why the baseline changes; got {reason!r}.")
    run_path, target = Path(run_dir), Path(out)
    if not (run_path / DB_NAME).is_file():
        raise _bad(run_path, f"has no {DB_NAME}: bless a run directory")
    stored = read_run(run_path)
    found = load_results(stored)
    if not found.complete:
        raise ValueError(f"`run_dir` must be a finished run; {run_path} is "
                         f"{stored.state.describe()}.")
    if target.exists() and not (target.is_dir() and (not any(target.iterdir())
                                                     or (target / MANIFEST).is_file())):
        raise ValueError(f"`out` must be a baseline directory or a new one; {target} is "
                         "something else.")
    prov = stored.provenance
    files = {RESULTS: _gzipped(found.rows.to_csv(index=False).encode()),
             CLAIMS: found.verdicts.to_csv(index=False).encode()}
    manifest = {
        "reason": reason.strip(),
        "blessed": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": git_state(),
        "run": {"directory": str(run_path), "seed": found.seed,
                "grid": stored.identity.grid_name, "command": prov.command,
                "commit": prov.commit, "dirty": prov.dirty, "python": prov.python,
                "platform": prov.platform, "packages": dict(found.packages),
                "started": prov.started, "ended": prov.ended},
        "studies": dict(found.studies),
        "grids": dict(found.grids),
        "rows": len(found.rows),
        "files": {name: hashlib.sha256(data).hexdigest() for name, data in files.items()},
    }
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    staging.chmod(0o755)  # a baseline is read by everyone, like the tree it is committed in
    try:
        for name, data in files.items():
            (staging / name).write_bytes(data)
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        old = target.with_name(f".{target.name}-old")
        shutil.rmtree(old, ignore_errors=True)
        if target.exists():
            target.rename(old)
        try:
            staging.rename(target)
        except OSError as error:
            if old.exists():
                old.rename(target)  # the old baseline back in place
            raise ValueError(f"`out` {target} could not be replaced ({error}); the old "
                             "baseline is kept.") from None
        shutil.rmtree(old, ignore_errors=True)
    except OSError as error:
        raise ValueError(f"`out` {target} could not be written ({error}).") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target / MANIFEST


def _gzipped(data: bytes) -> bytes:
    """gzip without a time stamp or file name: the same data give the same bytes."""
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as handle:
        handle.write(data)
    return buffer.getvalue()
