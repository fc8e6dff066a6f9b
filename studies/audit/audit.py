"""The fault audit: the chosen studies run once per declared fault, as CI runs them.

For each fault (`studies.audit.faults`) the packages are copied, the fault is written into the
copy, and ``evalcert study run NAMES --grid GRID --seed SEED --baseline DIR`` runs in a fresh
process that imports the copy (so do its workers and its report's side processes). Its
``report.json`` says which claims failed and which values the regression gate flagged; an
unpatched run of the same command first says what holds without a fault. Each fault's outcome
is one of:

``caught``
    a claim that holds without the fault FAILS with it: the suite states what is wrong;
``inconclusive``
    no claim fails, but one that holds without the fault is INCONCLUSIVE: CI turns red,
    though no claim says the method is wrong;
``gate only``
    every claim holds, but the regression gate flags regressions or missing values: CI turns
    red until someone blesses the change, after which nothing would catch it;
``broke the run``
    the run ended without verdicts (an error, a crash, or the time limit);
``missed``
    CI passes (values the gate calls improvements do not fail it).

A harmless rewrite is ``quiet`` when no claim changes and the gate flags nothing, else
``alarmed`` (a false alarm of the suite).

Each outcome is written to ``OUT/faults/NAME/outcome.json`` as it finishes, so an interrupted
audit resumes (``resume=True``) without running a finished fault again.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from studies.audit.faults import Fault, apply_fault, copy_tree, tree_digest

__all__ = ["OUTCOMES", "AuditResult", "AuditSettings", "FaultOutcome", "run_audit"]

CAUGHT, INCONCLUSIVE, GATE_ONLY, BROKE, MISSED = (
    "caught", "inconclusive", "gate only", "broke the run", "missed")
QUIET, ALARMED = "quiet", "alarmed"
OUTCOMES = (CAUGHT, INCONCLUSIVE, GATE_ONLY, BROKE, MISSED, QUIET, ALARMED)
CLEAN = "no-fault"  # the unpatched run's directory under OUT
_KEPT = ("report.json", "summary.md", "run.log")  # and every *.claims.csv


@dataclass(frozen=True)
class AuditSettings:
    """The command each fault is run with; stored beside each outcome, reused only if equal."""

    studies: tuple[str, ...]
    grid: str = "quick"
    seed: int = 20190
    baseline: str | None = None
    workers: int = 2
    timeout: float = 1800.0

    def command(self, out: Path) -> list[str]:
        """The ``evalcert study run`` command line of one fault's run."""
        words = [sys.executable, "-m", "studies.cli", "study", "run", *self.studies,
                 "--grid", self.grid, "--seed", str(self.seed), "--workers",
                 str(self.workers), "--out", str(out)]
        return words + (["--baseline", self.baseline] if self.baseline else [])


@dataclass(frozen=True)
class FaultOutcome:
    """What one run with a fault (or the unpatched run) showed.

    Attributes
    ----------
    name, target, what : str
        The fault (`Fault`); for the unpatched run, `CLEAN` and empty strings.
    harmless : bool
    outcome : str
        One of `OUTCOMES` (see the module docstring); "" for the unpatched run.
    exit_status : int
        The run's exit status (-9 when stopped at the time limit).
    failed, inconclusive : tuple of str
        ``study:claim`` of the claims that FAIL / are INCONCLUSIVE with the fault and HOLD
        without it.
    regressions, improvements, missing : int
        Values the regression gate flagged (and claims whose verdict changed, counted as
        regressions or improvements by the gate); missing values are counted beyond the
        unpatched run's (all of them for the unpatched run itself: a run of some of the
        suite's studies lacks the others' values).
    statuses : dict
        ``study:claim`` -> verdict, every claim of the run.
    seconds : float
        Wall time of the run.
    error : str
        The last line the run wrote to its standard error when it broke.
    digest : str
        The fault's `Fault.digest` (stale outcomes are run again).
    """

    name: str
    target: str
    what: str
    harmless: bool
    outcome: str
    exit_status: int
    failed: tuple[str, ...]
    inconclusive: tuple[str, ...]
    regressions: int
    improvements: int
    missing: int
    statuses: dict[str, str] = field(repr=False)
    seconds: float
    error: str
    digest: str



@dataclass(frozen=True)
class AuditResult:
    """The unpatched run and every fault's outcome, in the fault file's order."""

    settings: AuditSettings
    clean: FaultOutcome
    outcomes: tuple[FaultOutcome, ...]

    def frame(self) -> pd.DataFrame:
        """One tidy row per fault: its outcome, the claims that caught it, the gate's flags."""
        rows = [{"fault": o.name, "target": o.target, "what": o.what,
                 "harmless": o.harmless, "outcome": o.outcome, "exit_status": o.exit_status,
                 "claims_failed": " ".join(o.failed),
                 "claims_inconclusive": " ".join(o.inconclusive),
                 "gate_regressions": o.regressions, "gate_improvements": o.improvements,
                 "gate_missing": o.missing, "seconds": round(o.seconds, 1), "error": o.error}
                for o in self.outcomes]
        return pd.DataFrame(rows, columns=[
            "fault", "target", "what", "harmless", "outcome", "exit_status", "claims_failed",
            "claims_inconclusive", "gate_regressions", "gate_improvements", "gate_missing",
            "seconds", "error"])

    def rates(self) -> dict[str, Any]:
        """Counts and shares: faults caught by a claim, by CI at all, harmless rewrites quiet."""
        faults = [o for o in self.outcomes if not o.harmless]
        harmless = [o for o in self.outcomes if o.harmless]
        counts = {kind: sum(o.outcome == kind for o in self.outcomes) for kind in OUTCOMES}
        red = sum(o.outcome != MISSED for o in faults)
        return {"faults": len(faults), "harmless": len(harmless), **counts,
                "caught_share": counts[CAUGHT] / len(faults) if faults else float("nan"),
                "ci_red_share": red / len(faults) if faults else float("nan")}


def _claim_statuses(report: dict[str, Any]) -> dict[str, str]:
    return {f"{study}:{row['claim']}": row["status"]
            for study, rows in report.get("verdicts", {}).items() for row in rows}


def _outcome(fault: Fault | None, report: dict[str, Any] | None, clean: FaultOutcome | None,
             exit_status: int, seconds: float, error: str) -> FaultOutcome:
    statuses = _claim_statuses(report) if report else {}
    comparison = (report or {}).get("comparison") or {}
    held = {claim for claim, status in (clean.statuses if clean else {}).items()
            if status == "HOLDS"}
    failed = tuple(c for c, s in statuses.items() if s == "FAILS" and c in held)
    unsure = tuple(c for c, s in statuses.items() if s == "INCONCLUSIVE" and c in held)
    # the missing values beyond the unpatched run's: a run of some studies lacks the rest
    missing = comparison.get("missing") or []
    lacking = sum(int(row["values"]) for row in missing) if isinstance(missing, list) else 0
    flags = [int(comparison.get("regressions", 0)), int(comparison.get("improvements", 0)),
             lacking - (clean.missing if clean else 0)]
    if fault is None:
        kind = ""
    elif fault.harmless:
        moved = any(statuses.get(c) != s for c, s in clean.statuses.items()) if clean else True
        kind = ALARMED if report is None or moved or any(flags) else QUIET
    elif report is None or exit_status not in (0, 1):
        kind = BROKE
    elif failed:
        kind = CAUGHT
    elif unsure:
        kind = INCONCLUSIVE
    elif flags[0] > 0 or flags[2] > 0:  # what fails the gate (improvements do not)
        kind = GATE_ONLY
    else:
        kind = MISSED
    return FaultOutcome(
        name=fault.name if fault else CLEAN, target=fault.target if fault else "",
        what=fault.what if fault else "the packages as they are",
        harmless=bool(fault and fault.harmless), outcome=kind, exit_status=exit_status,
        failed=failed, inconclusive=unsure, regressions=flags[0], improvements=flags[1],
        missing=flags[2], statuses=statuses, seconds=seconds, error=error,
        digest=fault.digest() if fault else "")


def _run_one(fault: Fault | None, settings: AuditSettings, directory: Path,
             clean: FaultOutcome | None, *, keep: bool, snapshot: Path) -> FaultOutcome:
    """Run the command on a copy of the packages (from ``snapshot``) with ``fault`` written in;
    read its report."""
    if directory.exists():
        shutil.rmtree(directory)
    tree = copy_tree(directory / "tree", root=snapshot)
    if fault is not None:
        apply_fault(fault, tree)
    out = directory / "run"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tree), *filter(None, [os.environ.get("PYTHONPATH")])])}
    started = time.monotonic()
    with open(directory / "run.log", "wb") as log:
        # its own session: a run stopped at the time limit takes its workers with it
        process = subprocess.Popen(settings.command(out), cwd=tree, env=env, stdout=log,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
        try:
            status = process.wait(timeout=settings.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            status = -9
        except BaseException:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise
    seconds = time.monotonic() - started
    report_path = out / "report.json"
    report = json.loads(report_path.read_text()) if report_path.is_file() else None
    lines = (directory / "run.log").read_text(errors="replace").strip().splitlines()
    error = "" if status in (0, 1) else (
        "stopped at the time limit" if status == -9 else (lines[-1] if lines else ""))
    found = _outcome(fault, report, clean, status, seconds, error)
    if not keep:
        _prune(directory, out)
    return found


def _prune(directory: Path, out: Path) -> None:
    """Keep the report, the digest, the claims tables and the log; drop the store and copies."""
    shutil.rmtree(directory / "tree", ignore_errors=True)
    if out.is_dir():
        for path in out.iterdir():
            if path.name in _KEPT or path.name.endswith(".claims.csv"):
                continue
            shutil.rmtree(path) if path.is_dir() else path.unlink()


def _save(found: FaultOutcome, settings: AuditSettings, source: str, path: Path) -> None:
    data = {"settings": asdict(settings), "source": source, "outcome": asdict(found)}
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    temporary.replace(path)  # complete or absent, never half-written


def _load(path: Path, settings: AuditSettings, source: str, digest: str
          ) -> FaultOutcome | None:
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    stored = data["outcome"]
    if (data["settings"] != json.loads(json.dumps(asdict(settings)))
            or data.get("source") != source or stored["digest"] != digest):
        return None
    return FaultOutcome(**{**stored, "failed": tuple(stored["failed"]),
                           "inconclusive": tuple(stored["inconclusive"])})


def run_audit(faults: Sequence[Fault], out: str | os.PathLike[str], settings: AuditSettings,
              *, resume: bool = False, keep: bool = False,
              on_outcome: Callable[[int, int, FaultOutcome], None] | None = None
              ) -> AuditResult:
    """Run the audit's command without a fault, then once per fault.

    Parameters
    ----------
    faults : sequence of Fault
        From `studies.audit.faults.load_faults`.
    out : path
        The audit directory: ``faults/NAME/`` per fault (its outcome, log and report).
    settings : AuditSettings
        The studies, grid, seed, baseline, workers and time limit of every run.
    resume : bool
        Reuse the stored outcome of a fault already run with the same patch and settings on
        the same source tree (`tree_digest`).
    keep : bool
        Keep each run's store, pages and patched copy (default: only what the page needs).
    on_outcome : callable, optional
        Called as ``on_outcome(done, total, outcome)`` after each run (progress).

    Returns
    -------
    AuditResult
    """
    root = Path(out) / "faults"
    root.mkdir(parents=True, exist_ok=True)
    total = len(faults) + 1
    # every run starts from the packages as they were when the audit began: an edit made
    # during a long audit would otherwise reach the later faults' runs and not the earlier
    snapshot = copy_tree(Path(out) / "source")
    source = tree_digest(snapshot)
    results: list[FaultOutcome] = []
    clean: FaultOutcome | None = None
    for done, fault in enumerate([None, *faults], 1):
        name = fault.name if fault else CLEAN
        stored = root / name / "outcome.json"
        digest = fault.digest() if fault else ""
        found = _load(stored, settings, source, digest) if resume else None
        if found is None:
            found = _run_one(fault, settings, root / name, clean, keep=keep,
                             snapshot=snapshot)
            _save(found, settings, source, stored)
        if fault is None:
            clean = found
        else:
            results.append(found)
        if on_outcome is not None:
            on_outcome(done, total, found)
    assert clean is not None
    return AuditResult(settings, clean, tuple(results))
