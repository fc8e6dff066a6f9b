"""The page of a summary of anyone's results (`studies.engine.summary`), in a study page's form.

`write_summary` writes into a directory:

* ``<name>.html`` / ``<name>.md``: what was decided (the claims' tally and a sentence per
  verdict, each saying what it was judged with), what was read (rows, cells, methods, the
  rows left out for a missing value, the columns no argument named), the claims table, every
  cell's measures as "estimate (MCSE)", the cells that break a claim, a legend and the
  arguments that shaped the measures;
* ``<name>.csv``: the tidy performance frame (`Summary.frame`).

The page is self-contained and escapes every string from the data (Jinja2 autoescaping), as a
study's page does; it uses that page's style, tables and verdict sentences
(`studies.report.pages`). The same summary gives byte-identical files.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
from markupsafe import Markup

from studies.engine.claims import tally, worst_status
from studies.engine.findings import claim_finding
from studies.engine.summary import SUMMARY_MEASURES, Summary
from studies.report.pages import (
    _PAGE,
    _STYLE,
    LEGEND,
    _claims_frame,
    _failures_frame,
    _html_table,
    _inline,
    _md_table,
    _provenance_html,
    _template,
    _text,
    _write,
)

__all__ = ["MEASURE_LEGEND", "write_summary"]

MEASURE_LEGEND: dict[str, str] = {
    "nsim": "the rows used (replicates with every value needed)",
    "mean estimate, median estimate": "the mean and the median of the estimates",
    "mean se2, median se2": "the mean and the median of the squared standard errors",
    "bias": "mean estimate minus the true value",
    "relative bias": "the bias over the true value",
    "empirical se": "the standard deviation of the estimates",
    "relative precision": "(reference's empirical SE / this method's)^2 - 1, over the "
                          "replicates both have (a proportion)",
    "mse": "mean squared error",
    "model se": "the root mean squared standard error",
    "model se error": "model SE over empirical SE, less 1 (a proportion)",
    "coverage": "the share of intervals holding the true value",
    "be coverage": "bias-eliminated coverage: the share holding the mean estimate",
    "width": "the mean width of the intervals",
    "rejection": "the share of replicates whose test rejected (power, or the type I error "
                 "rate where the null is true)",
}

_BODY = """
<h1>{{ title }}</h1>
<section id="summary">
<p>Performance measures of {{ methods }} in {{ cells }} from {{ source }}, each with its
Monte Carlo standard error (MCSE).</p>
<p class="{{ status|replace(' ', '-') }}">Claims: {{ tally }}.</p>
{% if findings %}<h2>Findings</h2><ul>{% for sentence in findings %}<li>{{ sentence }}</li>
{% endfor %}</ul>{% endif %}
<h2 id="read">What was read</h2>
<ul>{% for line in read %}<li>{{ line }}</li>{% endfor %}</ul>
{% if missing %}{{ missing }}{% endif %}
</section>
{% if claims %}<h2 id="claims">Claims and verdicts</h2>
{{ claims }}{% endif %}
<h2 id="results">Results</h2>
<p>Each cell and method: every measure as "estimate (MCSE)" (also in
<code>{{ name }}.csv</code>, one row per measure).</p>
{{ results }}
{% if failures %}<h2 id="failures">Cells that break a claim</h2>{{ failures }}{% endif %}
<h2 id="legend">Legend</h2>
<details><summary>What each column and term means</summary>
<dl>{% for term, text in legend %}<dt>{{ term }}</dt><dd>{{ text }}</dd>
{% endfor %}</dl></details>
{{ provenance }}
"""


def write_summary(summary: Summary, out: str | Path, *, source: str, name: str = "summary",
                  title: str = "", provenance: Mapping[str, str] | None = None
                  ) -> dict[str, str]:
    """Write a summary's page, Markdown twin and CSV into ``out``; their paths by kind.

    Parameters
    ----------
    summary : Summary
    out : str or Path
        The directory (made if absent).
    source : str
        Where the results came from, in words (a file name).
    name : str
        The files' stem.
    title : str
        The page's heading; default: "Summary of SOURCE".
    provenance : Mapping[str, str], optional
        More rows for the provenance table (a version, the input's hash).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, str] = {}
    title = title or f"Summary of {source}"
    verdicts = summary.verdicts
    findings = [claim_finding(v) for v in verdicts]
    read = _read_lines(summary)
    missing = summary.missing
    missing = missing[missing["n_missing"] > 0]
    claims = _claims_frame(name, verdicts) if verdicts else pd.DataFrame()
    results = _results(summary)
    failures = _failures_frame(verdicts)
    settings = {k: _setting(v) for k, v in summary.settings.items()}
    prov = {**settings, **(provenance or {})}
    legend = [*((k, v) for k, v in LEGEND.items() if k in _LEGEND_TERMS),
              *MEASURE_LEGEND.items()]
    cells = len(summary.missing.drop_duplicates(list(summary.by))) if summary.by else 1
    body = _template(_BODY).render(
        title=title, name=name, source=source, methods=_count(len(summary.methods), "method"),
        cells=_count(cells, "cell"), status=worst_status(verdicts) if verdicts else "none",
        tally=tally(verdicts) if verdicts else "none stated",
        findings=[Markup(_inline(html.escape(x))) for x in findings], read=read,
        missing=_html_table(missing) if len(missing) else "",
        claims=_html_table(claims, status_column="status", wide="statement", row_id="anchor")
        if len(claims) else "",
        results=_html_table(results, fold=f"every row in {name}.csv"),
        failures=_html_table(failures) if len(failures) else "", legend=legend,
        provenance=_provenance_html(prov))
    page = _template(_PAGE).render(title=f"{title}: evalcert summary", style=Markup(_STYLE),
                                   body=Markup(body))
    _write(out / f"{name}.html", page, written)
    md = [f"# {title}", "", f"Claims: {tally(verdicts) if verdicts else 'none stated'}.", ""]
    if findings:
        md += ["## Findings", "", *(f"- {x}" for x in findings), ""]
    md += ["## What was read", "", *(f"- {x}" for x in read), ""]
    if len(missing):
        md += [_md_table(missing), ""]
    if len(claims):
        md += ["## Claims and verdicts", "", _md_table(claims.drop(columns=["anchor"])), ""]
    md += ["## Results", "", _md_table(results), ""]
    if len(failures):
        md += ["## Cells that break a claim", "", _md_table(failures), ""]
    md += ["## Provenance", "", _md_table(pd.DataFrame({"field": list(prov),
                                                        "value": list(prov.values())}))]
    _write(out / f"{name}.md", "\n".join(md) + "\n", written)
    _write(out / f"{name}.csv", summary.frame.to_csv(index=False, lineterminator="\n"),
           written)
    return {"html": str(out / f"{name}.html"), "md": str(out / f"{name}.md"),
            "csv": str(out / f"{name}.csv")}


_LEGEND_TERMS = ("HOLDS / INCONCLUSIVE / FAILS / NOT RUN", "kind", "condition", "region",
                 "values compared", "values failing", "familywise error", "k",
                 "detectable (unit)", "resolution (unit)")


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _setting(value: Any) -> str:
    if value is None:
        return "not given"
    if isinstance(value, list):
        return ", ".join(map(str, value)) if value else "none"
    return str(value)


def _read_lines(summary: Summary) -> list[str]:
    """What the summary read, in sentences: rows, cells, methods, rows left out, columns
    no argument named."""
    counts = summary.missing
    used, missing = int(counts["n_used"].sum()), int(counts["n_missing"].sum())
    lines = [f"{_count(used + missing, 'row')}; {used:,} used.",
             f"Methods: {', '.join(summary.methods)}.",
             f"Cells made by {', '.join(summary.by)}." if summary.by
             else "One cell: no `by` columns."]
    if missing:
        policy = summary.settings["missing"]
        lines.append(f"{_count(missing, 'row')} left out for a missing value (policy: "
                     f"{policy}); the table below counts them per cell and method.")
    else:
        lines.append("No row has a missing value.")
    small = counts[counts["n_used"] < 2]
    if len(small):
        lines.append(f"{len(small)} cell-method pairs have fewer than 2 rows used: no "
                     "measures there.")
    lines += list(summary.notes)
    if summary.unused:
        lines.append(f"Columns no argument named: {', '.join(map(str, summary.unused))}. If one "
                     "of them tells design cells apart, name it in `by`: otherwise its cells "
                     "are pooled.")
    return lines


def _shown(value: float, mcse: float) -> str:
    """``0.947 (0.0023)``; the value alone where its MCSE is undefined; an MCSE that is
    rounding noise on a constant (``1e-18``) as 0."""
    if value != value:
        return "undefined"
    if mcse == mcse and abs(mcse) < 1e-12 * max(1.0, abs(value)):
        mcse = 0.0
    return _text(float(value)) + (f" ({mcse:.2g})" if mcse == mcse else "")


def _results(summary: Summary) -> pd.DataFrame:
    """One row per cell and method, one column per measure, as "estimate (MCSE)"."""
    frame = summary.frame
    keys = [*summary.by, "method"]
    if frame.empty:
        return pd.DataFrame(columns=keys)
    text = frame.assign(shown=[
        f"{int(v):,}" if m == "nsim" else _shown(v, e)
        for m, v, e in zip(frame["measure"], frame["value"], frame["mcse"], strict=True)])
    wide = text.pivot_table(index=keys, columns="measure", values="shown", aggfunc="first",
                            sort=False)
    measures = [m for m in SUMMARY_MEASURES if m in wide.columns]
    wide = wide[measures].reset_index()
    wide.columns = [str(c).replace("_", " ") for c in wide.columns]
    return wide.fillna("")
