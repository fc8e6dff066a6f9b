"""A run in a few lines of Markdown, for a CI job's summary page.

`job_summary` gives what a CI reader needs first: the verdict counts and the suite's
false-alarm budget, one row per study, every claim that fails or cannot decide with its worst
value or reason, and, when the run was compared with a baseline, the gate's verdict and its
regressions. `studies.report.write_report` writes it as ``summary.md`` beside the report
(GitHub Actions shows it with ``cat summary.md >> "$GITHUB_STEP_SUMMARY"``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from studies.engine import FAILS, HOLDS, INCONCLUSIVE, NOT_RUN, Study, Verdict
from studies.engine.claims import tally, worst_status
from studies.report.compare import REGRESSION, Comparison

__all__ = [
    "REGRESSIONS_SHOWN",
    "Advice",
    "advice_lines",
    "advice_of",
    "budget_cut_lines",
    "job_summary",
    "not_run_lines",
]

REGRESSIONS_SHOWN = 20


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


@dataclass(frozen=True)
class Advice:
    """A study's recommendation as this run judges it: shown when every claim it rests on
    HOLDS, else withheld with the reason."""

    study: str
    advice: str
    claims: tuple[str, ...]
    shown: bool
    why: str


def advice_of(studies: Sequence[Study], verdicts: Mapping[str, Sequence[Verdict]]
              ) -> list[Advice]:
    """Every recommendation of the run's studies, in their order, judged by their claims'
    verdicts on this run (a claim without a verdict counts as not run)."""
    found = []
    for study in studies:
        status = {v.claim.name: v.status for v in verdicts.get(study.name, ())}
        for rec in study.recommendations:
            short = [f"{name} {status.get(name, NOT_RUN)}" for name in rec.claims
                     if status.get(name) != HOLDS]
            found.append(Advice(study.name, rec.advice, rec.claims, not short,
                                "; ".join(short)))
    return found


def advice_lines(advice: Sequence[Advice]) -> list[str]:
    """The recommendations as Markdown: those shown, then those withheld and why."""
    if not advice:
        return []
    lines = ["## Recommendations", "",
             "Advice from the studies, shown where every claim it rests on holds on this run:",
             ""]
    shown = [a for a in advice if a.shown]
    lines += [f"- {_cell(a.advice)} ({a.study}: {', '.join(a.claims)})" for a in shown] or [
        "- none on this run"]
    withheld = [a for a in advice if not a.shown]
    if withheld:
        lines += ["", "Withheld on this run:", ""]
        lines += [f"- {_cell(a.advice)} ({a.study}: {_cell(a.why)})" for a in withheld]
    return [*lines, ""]


def not_run_lines(verdicts: Mapping[str, Sequence[Verdict]]) -> list[str]:
    """A sentence per reason claims were not run here, with how many of each study's."""
    reasons: dict[str, dict[str, int]] = {}
    for name, group in verdicts.items():
        for v in group:
            if v.status == NOT_RUN:
                studies = reasons.setdefault(v.reason or "no reason given", {})
                studies[name] = studies.get(name, 0) + 1
    lines = []
    for reason, studies in reasons.items():
        where = " (their verdicts on the full grid: reports/reference/)" \
            if "full grid" in reason else ""
        count = sum(studies.values())
        lines.append(f"Not run here: {count} claim{'' if count == 1 else 's'}, {reason}{where}: "
                     + ", ".join(f"{n} {k}" for n, k in studies.items()) + ".")
    return lines


def budget_cut_lines(cut: Mapping[str, int]) -> list[str]:
    """A sentence per study whose rounds the run's time budget ended (``cut``: each study and
    the round it would have taken next), saying how its open claims were judged."""
    return [f"The run's time budget (--budget) ended the rounds of {name} before round "
            f"{round_}: its claims still open were judged on the replicates they had, each "
            f"INCONCLUSIVE with how many times the replicates would decide it."
            for name, round_ in cut.items()]


def job_summary(verdicts: Mapping[str, Sequence[Verdict]], *, grid: str, seed: object,
                budget: float, state: str = "complete",
                comparison: Comparison | None = None,
                papers: Mapping[str, str] | None = None,
                advice: Sequence[Advice] = (), cut: Mapping[str, int] | None = None) -> str:
    """The Markdown summary of a run.

    Parameters
    ----------
    verdicts : mapping of str to sequence of Verdict
        Each study's verdicts, in the run's order.
    grid : str
        The grid's name.
    seed : object
        The run's root seed.
    budget : float
        The suite's false-alarm budget per run.
    state : str
        The run's state in words (``"complete"`` or why not).
    comparison : Comparison, optional
        The run against a baseline.
    advice : sequence of Advice
        The studies' recommendations as this run judges them (`advice_of`): they open the
        summary.
    cut : mapping of str to int, optional
        The studies whose rounds the run's time budget ended, and the round each would have
        taken next (`budget_cut_lines`).
    papers : mapping of str to str, optional
        Per study, its findings' comparisons with the source paper's numbers counted by
        outcome (`studies.report.pages.paper_tally`); a study with some not reproduced is
        marked so beside its verdict.

    Examples
    --------
    >>> import pandas as pd
    >>> from studies.engine import Claim
    >>> claim = Claim("covers", "covers", ("wilson",), "coverage", "at_least", 0.93)
    >>> text = job_summary({"s": [Verdict(claim, "HOLDS", 4, 3.0, 0.01, pd.DataFrame())]},
    ...                    grid="quick", seed=7, budget=0.01)
    >>> print(text.splitlines()[2])
    **All 1 claims judged hold** on the quick grid, seed 7: 1 hold, 0 inconclusive, 0 fail, 0 not run.
    """  # noqa: E501
    found = [v for group in verdicts.values() for v in group]
    bad = [(name, v) for name, group in verdicts.items() for v in group
           if v.status in (FAILS, INCONCLUSIVE)]
    judged = sum(v.status != NOT_RUN for v in found)
    head = (f"**{len(bad)} of {judged} claims judged fail or cannot decide**" if bad
            else f"**All {judged} claims judged hold**")
    lines = ["# evalcert study run", ""]
    if state != "complete":
        lines += [f"**This run is {state}.**", ""]
    lines += advice_lines(advice)
    lines += [f"{head} on the {grid} grid, seed {seed}: {tally(found)}.", ""]
    lines += [_cell(line) for line in budget_cut_lines(cut or {})]
    lines += [_cell(line) for line in not_run_lines(verdicts)]
    lines += [""] if cut or any(v.status == NOT_RUN for v in found) else []
    lines += [f"False alarms: when every claim is true, a run of the whole suite fails on "
              f"Monte Carlo noise with probability at most about {budget:g}.", "",
              "| study | verdict | claims | the paper's numbers |", "| --- | --- | --- | --- |"]
    papers = papers or {}
    lines += [f"| {_cell(name)} | {worst_status(group) if group else 'no claims'} | "
              f"{tally(group)} | {_cell(papers.get(name) or '-')} |"
              for name, group in verdicts.items()]
    if bad:
        lines += ["", "| study | claim | status | worst value or reason |",
                  "| --- | --- | --- | --- |"]
        lines += [f"| {_cell(name)} | {_cell(v.claim.name)} | {v.status} | "
                  f"{_cell(v.worst() if v.status == FAILS else v.reason)} |" for name, v in bad]
    if comparison is not None:
        lines += ["", f"Regression gate: {comparison.summary()}."]
        regressions = comparison.changes[comparison.changes["change"] == REGRESSION]
        if len(regressions):
            shown = regressions.head(REGRESSIONS_SHOWN)
            columns = [c for c in shown.columns if c not in ("difference", "se")]
            lines += ["", "| " + " | ".join(columns) + " |",
                      "| " + " | ".join("---" for _ in columns) + " |"]
            lines += ["| " + " | ".join(_cell(f"{x:.6g}" if isinstance(x, float) else x)
                                        for x in row) + " |"
                      for row in shown[columns].itertuples(index=False)]
            if len(regressions) > len(shown):
                lines.append(f"\n... and {len(regressions) - len(shown)} more (report.json "
                             f"lists all).")
        claims = comparison.claims[comparison.claims["change"] == REGRESSION]
        lines += [f"- claim {_cell(r.study)} {_cell(r.claim)}: {r.baseline} -> {r.current}"
                  for r in claims.itertuples()]
    return "\n".join(lines) + "\n"
