"""Reference verdicts: the claims of studies judged on a finished run, kept for the record.

A quick run decides what CI gates on; the findings live on the full grids. `record` writes the
verdicts of a finished run's studies, judged by the claims of the code that records them
(`studies.report.tables.claims_table`: status, values compared, k, familywise error,
detectable, resolution, the worst value, the reason; for a claim still open, the replicates
and core seconds deciding it would take, `studies.engine.rounds.still_needed`), into a
reference directory,
``reports/reference/`` by default, one ``<study>.claims.csv`` per study with a
``<study>.json`` beside it: the run's grid, seed, study version, commit (and whether the tree
was clean), start, end and wall time, and the machine, and the commit whose claims judged it
(a claim restated after the run is judged on the stored values without running the grid
again). Studies judged at different times
(a cheap grid today, a long one on a larger machine tomorrow) accumulate; recording a study
again replaces its files. ``index.md`` lists every study's verdicts and provenance, and names
the suite's studies not recorded yet.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from studies.engine import StudyResult, Verdict
from studies.engine.provenance import git_state
from studies.engine.reading import RunHead, read_head
from studies.engine.rounds import decided_rounds, still_needed
from studies.engine.store import DB_NAME
from studies.report.tables import claims_table
from studies.suite import suite_study_names

__all__ = ["REFERENCE_COLUMNS", "WORKERS", "record", "would_take"]

# The columns of a reference claims table, in the order written.
REFERENCE_COLUMNS = ("claim", "status", "kind", "condition", "region", "compared", "failing",
                     "familywise_error", "k", "detectable", "resolution", "unit", "worst",
                     "reason", "rounds", "replicates", "more_replicates", "more_core_seconds")
# The workers a reference states the time of an open claim's replicates on (the suite's CI
# machine has 2 cores).
WORKERS = 2


def record(run_dir: str | os.PathLike[str], out: str | os.PathLike[str],
           verdicts: Mapping[str, Sequence[Verdict]], *,
           results: Mapping[str, StudyResult] | None = None) -> list[str]:
    """Record the verdicts of the studies of a finished run in the reference directory.

    Parameters
    ----------
    run_dir : path
        A finished run directory (its store).
    out : path
        The reference directory (created; other studies' files are kept).
    verdicts : mapping of str to sequence of Verdict
        Each study's verdicts on the run (`studies.engine.evaluate_claims` on its stored
        results, at the suite's false-alarm share); the studies recorded.
    results : mapping of str to StudyResult, optional
        The studies' stored results: with them, each INCONCLUSIVE claim's
        ``more_replicates`` and ``more_core_seconds`` say what deciding it would take
        (`studies.engine.rounds.still_needed`); without, those columns are empty.

    Returns
    -------
    list of str
        The studies recorded.

    Raises
    ------
    ValueError
        When ``run_dir`` holds no finished run or a study of ``verdicts`` is not in it;
        nothing is written then.
    """
    run_path, target = Path(run_dir), Path(out)
    if not (run_path / DB_NAME).is_file():
        raise ValueError(f"`run_dir` must be a run directory holding {DB_NAME}; got "
                         f"{run_path}.")
    head = read_head(run_path)
    if not head.state.complete:
        raise ValueError(f"`run_dir` must be a finished run; {run_path} is "
                         f"{head.state.describe()}.")
    stored = head.identity.studies
    unknown = sorted(set(verdicts) - set(stored))
    if unknown:
        raise ValueError(f"`verdicts` must be of studies of the run ({', '.join(stored)}); "
                         f"got {unknown}.")
    judged = git_state()
    target.mkdir(parents=True, exist_ok=True)
    for name, found in verdicts.items():
        decided = decided_rounds(head.looks, name)
        table = claims_table(name, found)
        # the round each claim was decided at (a run of one round: 1)
        table["rounds"] = [decided.get(claim, 1) for claim in table["claim"]]
        needed = [None if results is None or name not in results else still_needed(
            v.claim, v, results[name], head.identity.grids[name]) for v in found]
        table["more_replicates"] = [None if n is None else n.replicates for n in needed]
        table["more_core_seconds"] = [None if n is None else round(n.core_seconds, 1)
                                      for n in needed]
        table.reindex(columns=list(REFERENCE_COLUMNS)).to_csv(
            target / f"{name}.claims.csv", index=False)
        info = {**_provenance(head, name), "claims_judged_at": judged["git_commit"],
                "claims_tree": _TREE[judged["git_dirty"]]}
        (target / f"{name}.json").write_text(json.dumps(info, indent=2) + "\n")
    _write_index(target)
    return list(verdicts)


_TREE = {True: "uncommitted changes", False: "clean", None: "unknown"}


def _provenance(head: RunHead, name: str) -> dict[str, Any]:
    identity, prov = head.identity, head.provenance
    seconds = prov.wall_seconds
    grid = identity.grids[name]
    return {"study": name, "version": identity.studies[name], "grid": identity.grid_name,
            "n_replicates": grid.n_replicates, "rounds": grid.rounds,
            "seed": str(identity.seed), "commit": prov.commit, "tree": _TREE[prov.dirty],
            "started": prov.started, "ended": prov.ended,
            "wall_seconds_of_the_run": None if seconds is None else round(seconds, 1),
            "studies_in_the_run": len(identity.studies), "command": prov.command,
            "platform": prov.platform, "python": prov.python,
            "packages": dict(prov.packages or {})}


def _write_index(target: Path) -> None:
    """``index.md``: every recorded study's verdicts and where they come from."""
    lines = ["# Reference verdicts", "",
             "Each study's claims judged on a finished run (`evalcert study reference`): "
             "status, detectable deviation and resolution, and the run they come from.", ""]
    recorded = {path.stem for path in target.glob("*.json")}
    missing = [name for name in suite_study_names() if name not in recorded]
    if missing:
        lines += [f"Not recorded yet: {', '.join(missing)}.", ""]
    for meta_path in sorted(target.glob("*.json")):
        info = json.loads(meta_path.read_text())
        table = pd.read_csv(target / f"{info['study']}.claims.csv", keep_default_na=False,
                            dtype=str)
        rounds = int(info.get("rounds", 1))
        grid = f"{info['grid']} grid" + (f" in up to {rounds} rounds" if rounds > 1 else "")
        lines += [f"## {info['study']} (version {info['version']}, {grid})", "",
                  f"Seed {info['seed']}, commit {info['commit'] or 'unknown'} "
                  f"({info['tree']}), run {info['started']} to {info['ended']} "
                  f"({info['wall_seconds_of_the_run']} s for {_studies(info)}), "
                  f"{info['platform']}. Claims judged at commit "
                  f"{info.get('claims_judged_at') or 'unknown'} "
                  f"({info.get('claims_tree', 'unknown')}).", "",
                  "| claim | status | detectable | resolution | unit | rounds | replicates | "
                  "worst or reason |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for row in table.itertuples():
            note = (row.worst or row.reason).replace("|", "\\|") + _would_take(row)
            # a table recorded before rounds has neither column: one round, not counted
            rounds, replicates = getattr(row, "rounds", "1"), getattr(row, "replicates", "")
            lines.append(f"| {row.claim} | {row.status} | {_short(row.detectable)} | "
                         f"{_short(row.resolution)} | {row.unit} | {rounds} | {replicates} | "
                         f"{note} |")
        lines.append("")
    (target / "index.md").write_text("\n".join(lines))


def _would_take(row: Any) -> str:
    """What deciding an open claim would take, in words ("" when not recorded)."""
    return would_take(getattr(row, "more_replicates", ""), getattr(row, "more_core_seconds", ""))


def would_take(more: Any, seconds: Any) -> str:
    """A reference row's ``more_replicates`` and ``more_core_seconds`` in words, on
    `WORKERS` workers ("" when either is empty: a claim not open, or not recorded)."""
    if more in ("", None) or seconds in ("", None) or more != more or seconds != seconds:
        return ""
    minutes = float(seconds) / WORKERS / 60.0
    return (f"; deciding it: about {int(float(more)):,} more replicates, about {minutes:.0f} "
            f"min on {WORKERS} workers at this run's time per replicate")


def _studies(info: dict[str, Any]) -> str:
    count = info["studies_in_the_run"]
    return f"{count} stud{'y' if count == 1 else 'ies'}"


def _short(text: str) -> str:
    """A number in three significant figures (text as it is when not a number)."""
    try:
        return f"{float(text):.3g}"
    except ValueError:
        return text
