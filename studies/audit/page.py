"""The audit's page: the suite's sensitivity table, as HTML, Markdown and CSV.

``OUT/audit.csv`` is `AuditResult.frame` (one row per fault); ``OUT/audit.md`` and
``OUT/index.html`` open with what was decided (the share of faults a claim caught, the share
that turned CI red at all, the harmless rewrites that stayed quiet), say what the audit ran
(studies, grid, seed, baseline) and what it did not establish, then list every fault with the
claims that caught it and the values the gate flagged.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from jinja2 import Environment

from studies.audit.audit import (
    ALARMED,
    BROKE,
    CAUGHT,
    GATE_ONLY,
    INCONCLUSIVE,
    MISSED,
    QUIET,
    AuditResult,
    FaultOutcome,
)

__all__ = ["describe", "headline", "write_audit"]

_ORDER = (CAUGHT, INCONCLUSIVE, GATE_ONLY, BROKE, MISSED, QUIET, ALARMED)


def _share(part: int, whole: int) -> str:
    return f"{part} of {whole} ({100 * part / whole:.0f}%)" if whole else "none"


def headline(result: AuditResult) -> list[str]:
    """The sentences the page opens with, every number from the audit."""
    rates = result.rates()
    faults, harmless = rates["faults"], rates["harmless"]
    settings = result.settings
    statuses = list(result.clean.statuses.values())
    lines = [
        f"Claims caught {_share(rates[CAUGHT], faults)} faults: a claim that holds on the "
        "unpatched packages FAILS with the fault.",
        f"CI turned red for {_share(faults - rates[MISSED], faults)} "
        f"({rates[INCONCLUSIVE]} by an inconclusive claim only, {rates[GATE_ONLY]} by the "
        f"regression gate only, {rates[BROKE]} by a run that ended without verdicts); "
        f"{rates[MISSED]} passed CI.",
        f"Harmless rewrites: {_share(rates[QUIET], harmless)} stayed quiet "
        f"({rates[ALARMED]} alarmed).",
        f"Each run: evalcert study run {' '.join(settings.studies)} --grid {settings.grid} "
        f"--seed {settings.seed} --workers {settings.workers}"
        + (f" --baseline {settings.baseline}" if settings.baseline else " (no baseline)")
        + f"; the unpatched run exited {result.clean.exit_status}, its claims: "
        f"{statuses.count('HOLDS')} hold, {statuses.count('NOT RUN')} not run (judged on the "
        f"full grid only), {len(statuses) - statuses.count('HOLDS') - statuses.count('NOT RUN')}"
        " other.",
        "Not established: a fault the audit misses may still be caught on a full grid, and "
        "a caught fault is caught on this grid and seed only; a gate-only fault passes CI "
        "once the change is blessed.",
    ]
    return lines


_TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Fault audit</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 72rem;
       padding: 0 1rem; line-height: 1.45; color: #1d1d1d; }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
th, td { border-bottom: 1px solid #ddd; padding: 0.3rem 0.5rem; text-align: left;
         vertical-align: top; overflow-wrap: break-word; }
td:nth-child(2) { white-space: nowrap; }
th { background: #f3f3f3; }
.caught, .quiet { color: #17622b; font-weight: 600; }
.missed, .alarmed { color: #a11; font-weight: 600; }
.inconclusive, .gate-only, .broke-the-run { color: #8a5a00; font-weight: 600; }
code { font-size: 0.85rem; }
td:nth-child(3) code, td:nth-child(5) code { overflow-wrap: anywhere; }
</style></head><body>
<h1>Fault audit</h1>
{% for line in headline %}<p>{{ line }}</p>
{% endfor %}
<h2>Outcomes</h2>
<table><thead><tr><th>outcome</th><th>faults</th></tr></thead><tbody>
{% for kind, count in counts %}<tr><td class="{{ kind|replace(' ', '-') }}">{{ kind }}</td>
<td>{{ count }}</td></tr>
{% endfor %}</tbody></table>
<h2>Every fault</h2>
<table><thead><tr><th>fault</th><th>outcome</th><th>claims that caught it</th>
<th>gate: regressions,<br>improvements, missing</th><th>where and what</th><th>s</th>
</tr></thead><tbody>
{% for o in outcomes %}<tr><td><code>{{ o.name }}</code></td>
<td class="{{ o.outcome|replace(' ', '-') }}">{{ o.outcome }}</td>
<td>{% for c in o.failed %}<code>{{ c }}</code> FAILS<br>{% endfor %}
{% for c in o.inconclusive %}<code>{{ c }}</code> INCONCLUSIVE<br>{% endfor %}
{% if o.error %}{{ o.error }}{% endif %}</td>
<td>{{ o.regressions }}, {{ o.improvements }}, {{ o.missing }}</td>
<td><code>{{ o.target }}</code>: {{ o.what }}</td><td>{{ "%.0f"|format(o.seconds) }}</td></tr>
{% endfor %}</tbody></table>
<p>The table as data: <a href="audit.csv">audit.csv</a>; each run's log and report under
<code>faults/NAME/</code>.</p>
</body></html>
"""


def _markdown(result: AuditResult, lines: list[str]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    rows = ["# Fault audit", "", *[f"{line}\n" for line in lines],
            "| fault | outcome | claims that caught it | gate (regressions, improvements, "
            "missing) | target | what |", "| --- | --- | --- | --- | --- | --- |"]
    for o in result.outcomes:
        caught = ", ".join([*(f"{c} FAILS" for c in o.failed),
                            *(f"{c} INCONCLUSIVE" for c in o.inconclusive)]) or o.error or "-"
        rows.append(f"| `{o.name}` | {o.outcome} | {cell(caught)} | {o.regressions}, "
                    f"{o.improvements}, {o.missing} | `{o.target}` | {cell(o.what)} |")
    return "\n".join(rows) + "\n"


def write_audit(result: AuditResult, out: str | os.PathLike[str]) -> Path:
    """Write ``audit.csv``, ``audit.md`` and ``index.html`` into ``out``; return the page."""
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    lines = headline(result)
    result.frame().to_csv(target / "audit.csv", index=False)
    (target / "audit.md").write_text(_markdown(result, lines))
    rates = result.rates()
    context: dict[str, Any] = {
        "headline": lines, "counts": [(kind, rates[kind]) for kind in _ORDER],
        "outcomes": list(result.outcomes)}
    page = target / "index.html"
    html = Environment(autoescape=True).from_string(_TEMPLATE).render(**context)
    page.write_text(html)
    return page


def describe(done: int, total: int, found: FaultOutcome) -> str:
    """One progress line: ``[3/48] name: caught (study:claim); gate 12, 0, 0; 61 s``."""
    claims = ", ".join([*found.failed, *(f"{c} (inconclusive)" for c in found.inconclusive)])
    what = found.outcome or f"exit {found.exit_status}"
    return (f"[{done}/{total}] {found.name}: {what}" + (f" ({claims})" if claims else "")
            + f"; gate {found.regressions}, {found.improvements}, {found.missing}"
            + (f"; {found.error}" if found.error else "") + f"; {found.seconds:.0f} s")
