"""The report of a run: an index page, a page per study, their Markdown twins and report.json.

What an auditor reads. `write_report` turns a run directory (its store, its tables) into

* ``index.html`` / ``index.md``: every study with its aim, its size and its claims' verdicts,
  and the run's provenance (a run that did not finish every cell says so at the top of every
  page: its verdicts cover the finished cells only);
* ``<study>.html`` / ``<study>.md``: a study's findings in sentences (each claim's verdict with
  the value nearest its bound, then the study's own `Study.findings`, every number read from
  the run), then its ADEMP in order (Morris, White & Crowther 2019; the layout simChef uses):
  aims, data-generating mechanisms and grid, estimands, methods,
  performance measures (from the study module's docstring), then the claims with their
  verdicts, the results as "estimate (MCSE)", the cells that break a claim, the figures with
  their captions, a legend of every column and abbreviation, and the provenance;
* ``figures/<study>-<k>.svg``: each figure, inlined in the HTML page and linked from the
  Markdown;
* ``summary.md``: the run in a few lines of Markdown for a CI job's summary
  (`studies.report.digest`: verdicts, the claims that fail or cannot decide, the gate);
* ``results.csv``: the tidy table of every cell, method and measure with its MCSE (studies
  stored as packed groups of more than `TIDY_CSV_LIMIT` cells are left out and say so);
* ``report.json``: the provenance, every verdict, the SHA-256 of every file written
  (``files``) and of the study tables in the run directory (``tables``).

Pages are self-contained: figures are inline SVG (element ids prefixed per figure), styles are
inline, there is no JavaScript and nothing is fetched, so a page opens offline from disk. Every
string that comes from the data, the configuration or a user's method name is escaped (Jinja2
autoescaping). The same run gives byte-identical pages, Markdown, CSV and figures: the only
fields that change from one run to the next (start, end and wall time) are in report.json's
``timing`` object, which no hash covers.
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
import hashlib
import html
import json
import math
import re
import shlex
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from jinja2 import Environment
from markupsafe import Markup
from numpy.typing import NDArray

from studies.engine import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_RUN,
    STATUSES,
    Study,
    StudyResult,
    Verdict,
)
from studies.engine.claims import FAILURE_COLUMNS, tally, worst_status
from studies.engine.findings import (
    NOT_REPRODUCED,
    PAPER_OUTCOMES,
    claim_finding,
    extreme,
    paper_outcomes,
)
from studies.engine.identity import RunIdentity
from studies.engine.means import MEAN_SUMS, mean_terms, means_from_sums
from studies.engine.pins import PINS, pin_table
from studies.engine.reading import RunHead, StoredRun, read_run
from studies.engine.results import FRAME_COLUMNS, REGION_GROUPS, PackedGroup, group_regions
from studies.engine.rounds import decided_rounds
from studies.report.compare import Comparison
from studies.report.digest import (
    advice_lines,
    advice_of,
    budget_cut_lines,
    job_summary,
    not_run_lines,
)
from studies.report.figures import draw
from studies.report.tables import Range, claims_table, group_ranges, headline_table
from studies.report.tables import summaries as study_summaries
from studies.suite import SUITE_FALSE_ALARM, claim_false_alarm, study_names

__all__ = ["ADEMP", "LEGEND", "NOT_STATED", "TIDY_CSV_LIMIT", "TIMING_FIELDS", "PageTables",
           "ademp_sections", "page_tables", "prereg_table", "study_figure", "untimed",
           "write_report"]

ADEMP: tuple[str, ...] = ("Aims", "Data-generating mechanisms", "Estimands", "Methods",
                          "Performance measures")
TIDY_CSV_LIMIT = 1_000_000

# Every column and abbreviation the pages use, defined once.
LEGEND: dict[str, str] = {
    "HOLDS / INCONCLUSIVE / FAILS / NOT RUN": "the verdict on a claim. HOLDS: no value breaks "
        "it, the claim could detect a deviation of its resolution, and a claim of an effect has "
        "every estimate on its side of the bound. INCONCLUSIVE: nothing breaks it, but the "
        "claim lacks that power on this grid, or an effect's estimate lies on the wrong side "
        "within the Monte Carlo allowance (the reason says which, and how many times the "
        "replicates would decide it). FAILS: a value lies beyond its bound by more than its "
        "allowance, is undefined, or its method raised. NOT RUN: no value in its region on "
        "this grid, or the claim is judged on other grids only",
    "kind": "bound: a property that noise may hide by up to its allowance (coverage at least "
            "nominal, unbiased within a band); effect: a finding the estimates must show "
            "(at least 5 points below nominal, optimistic)",
    "condition": "what each compared value must satisfy; a margin is part of the finding",
    "region": "the cells a claim is about (a query over the grid parameters)",
    "values compared": "the values compared: cells, or means over a parameter",
    "values failing": "the compared values that break the claim",
    "familywise error": "the probability that the claim fails on a run where it is true: "
                        "its share of the suite's false-alarm budget",
    "k": "the multiple of the SE allowed to each Monte Carlo value: the normal quantile of "
         "the familywise error split over the compared values (Bonferroni); blank when "
         "every value is exact. The SE of a share (coverage, pass rate) is taken at the bound",
    "detectable (unit)": "the deviation beyond the bound, in the measure's units, that the claim "
                  "flags with probability 0.95 in its least precise value: (k + 1.645) x SE "
                  "for a measure of estimates; for a share of R replicates, the deviation d at "
                  "which a Binomial(R, bound + d) count breaks the claim with probability "
                  "0.95 (inf: no share in [0, 1] could break it); the rounding tolerance when "
                  "every value is exact",
    "resolution (unit)": "the smallest deviation beyond the bound the claim must detect to "
                         "decide; above it, detectable makes the claim INCONCLUSIVE",
    "unit": "what detectable and resolution are measured in, written after each: the "
            "claim's measure, or a measure of each cell they are multiples of (empirical_se: "
            "the estimator's own SE)",
    "reason": "why a claim is INCONCLUSIVE or NOT RUN",
    "MCSE": "Monte Carlo standard error (Morris, White & Crowther 2019, Table 6; the empirical "
            "SE's adjusted by the estimates' kurtosis, as simhelpers does); 0 for exact "
            "values, computed by enumerating every outcome",
    "value (MCSE)": "a value and its Monte Carlo standard error in one cell; (exact): every "
                    "outcome enumerated, no Monte Carlo error",
    "mean (largest MCSE)": "in the results: the mean of a measure over the cells, with the "
                           "largest MCSE of any of them; smallest and largest: over the cells",
    "coverage": "the share of intervals that contain the true value",
    "width": "the mean width of the intervals",
    "rejection": "the share of replicates a method flags (for F1 intervals: undefined, which "
                 "counts as not covering)",
    "tested": "the share of replicates in which the method made its test (a certification "
              "attempted)",
    "conditional_rejection": "the share of the tests made that rejected (certifications "
                             "attempted that passed)",
    "correct_share": "the share of replicates in which the method's decision was the right "
                     "one (the model it chose is truly the best)",
    "saving": "the share of a cost a method saved against a reference procedure in the same "
              "replicate (mean_saving: over every replicate where it is defined; "
              "conditional_saving: over those where the method made its test)",
    "size": "the sample size a procedure planned (mean, median and quartiles over the "
            "replicates that planned one)",
    "bias": "mean estimate minus the true value; relative bias divides it by the true value",
    "empirical SE": "the standard deviation of the estimates",
    "model SE error": "the mean model-based SE over the empirical SE, minus 1",
    "mse": "mean squared error",
    "LOSCI": "lower one-sided confidence interval [low, 1], the interval of a certification",
    "n band (summary)": "the range of n a summary row covers (e.g. 5-20)",
    "share_below": "the share of cells whose coverage is below nominal - 0.01 (exact cells)",
    "share_under": "the share of cells under-covering: coverage below nominal - 0.01 by more "
                   "than 1.96 MCSE",
    "worst": "in a summary: the cells of lowest coverage (n, p: coverage), or the cell of "
             "lowest coverage as prevalence/F1/n; in a claims table: the value that breaks the "
             "claim most",
    "mean_undefined": "the share of intervals that are undefined (nan), which count as not "
                      "covering",
    "exact / monte-carlo": "the path: every outcome enumerated with its probability, or "
                           "replicates drawn",
}

_STYLE = """
body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;
color:#1b1b1b;line-height:1.45}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ccc}
h3{font-size:1.05rem}
table{border-collapse:collapse;margin:0.5rem 0;font-size:0.85rem}
th,td{border:1px solid #ccc;padding:0.2rem 0.45rem;text-align:left;vertical-align:top}
th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}
.scroll{overflow-x:auto;max-width:100%}
.HOLDS{background:#dff0d8}.FAILS{background:#f2dede;font-weight:bold}
.INCONCLUSIVE{background:#fcefc7;font-weight:bold}
.NOT-RUN{background:#eee}.under-covers{background:#f2dede}
.HOLDS-but-not-reproduced{background:#fcefc7}.cue{font-size:0.85rem;color:#555;margin:0.3rem 0}
.regression{background:#f2dede;font-weight:bold}.improvement{background:#dff0d8}
.over-covers{background:#fcf8e3}.meets-nominal{background:#dff0d8}
code{background:#f5f5f5;padding:0 0.2rem;overflow-wrap:anywhere}
figure{margin:1rem 0}figcaption{font-size:0.9rem;color:#333;max-width:50rem}
figure svg{width:100%;height:auto}dt{font-weight:bold}dd{margin:0 0 0.4rem 1.5rem}
.prov td:first-child{white-space:nowrap}.prov td{overflow-wrap:anywhere}
nav.toc{font-size:0.9rem;margin:1rem 0}nav.toc a{margin-right:0.9rem;white-space:nowrap}
details>summary{cursor:pointer;color:#124;margin:0.4rem 0}
td.statement{min-width:16rem}.badge{padding:0 0.3rem;margin-right:0.3rem;white-space:nowrap}
table.pins{table-layout:fixed;width:100%}table.pins td{overflow-wrap:anywhere}
table.pins .badge{white-space:normal;display:inline-block}
"""

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }}</title><style>{{ style }}</style></head>
<body>
{{ body }}
</body></html>
"""

_INDEX = """
<h1>evalcert study report</h1>
{% if incomplete %}<p class="FAILS">This run is {{ incomplete }}.</p>{% endif %}
{% if advice %}<section id="recommendations"><h2>Recommendations</h2>
<p>Advice from the studies, shown where every claim it rests on holds on this run:</p>
<ul>{% for a in advice if a.shown %}<li>{{ a.advice }} ({{ a.study }}:
{% for c in a.claims %}<a href="{{ a.study }}.html#claim-{{ c }}">{{ c }}</a>
{{- ", " if not loop.last }}{% endfor %})</li>
{% else %}<li>none on this run</li>{% endfor %}</ul>
{% if advice|rejectattr("shown")|list %}<p>Withheld on this run:</p>
<ul>{% for a in advice if not a.shown %}<li>{{ a.advice }} ({{ a.study }}: {{ a.why }})</li>
{% endfor %}</ul>{% endif %}</section>{% endif %}
<section id="summary">
<p>{{ studies|length }} studies on the {{ grid }} grid, root seed {{ seed }}.
Claims: {{ counts.HOLDS }} hold, {{ counts.INCONCLUSIVE }} inconclusive, {{ counts.FAILS }}
fail, {{ counts['NOT RUN'] }} not run.</p>
{% for line in not_run %}<p>{{ line }}</p>
{% endfor %}<p>False alarms: when every claim is true, a run of the suite's own studies shows a
FAILS verdict on Monte Carlo noise alone with probability at most about {{ budget }} (the budget
split equally over its {{ claims }} claims that are not identities, which are judged exactly:
{{ share }} each). Power: a claim HOLDS only where
it detects a deviation of its resolution with probability 0.95; where it cannot, or where a
claimed effect is not shown by the estimates, it is INCONCLUSIVE.</p>
</section>
<nav class="toc">Contents: <a href="#studies">Studies</a> <a href="#methods">Methods by study</a>
<a href="#pins">What pins each method</a>
{% if comparison %}<a href="#comparison">Comparison with the baseline</a> {% endif %}
<a href="#provenance">Provenance</a></nav>
<h2 id="studies">Studies</h2>
<div class="scroll"><table><thead><tr><th>study</th><th>aim</th><th>path</th><th>cells</th>
<th>version</th><th>claims</th><th>verdict</th><th>the paper's numbers</th></tr></thead>
<tbody>
{% for s in studies %}<tr><td><a href="{{ s.name }}.html">{{ s.name }}</a></td>
<td>{{ s.aim|replace('``', '') }}</td><td>{{ s.path }}</td><td class="num">{{ s.cells }}</td>
<td>v{{ s.version }}</td><td>{{ s.tally }}</td>
<td class="{{ s.shown_status|replace(' ', '-') }}">{{ s.status }}</td>
<td>{{ s.paper }}</td></tr>
{% endfor %}</tbody></table></div>
<p>The paper's numbers: how many of the source paper's values that the studies' findings set
beside the run's were reproduced (within their Monte Carlo error, the run precise enough to
tell), not reproduced, or too imprecise to tell; a study whose claims hold while some are not
reproduced is not shown plain green.</p>
<h2 id="methods">Methods by study</h2>
<p>Each method of each study: the verdicts of the claims about it (each links to the claim on
the study's page), and its worst value: where a claim about it fails, the value that breaks
it most; else its lowest coverage at the 95% level against that nominal (studies of
intervals: red below 0.94, the nominal less a point); else its value nearest a claim's
bound.</p>
<div class="scroll"><table><thead><tr><th>study</th><th>method</th><th>verdict</th>
<th>claims</th><th>worst value</th></tr></thead><tbody>
{% for s in studies %}{% for m in s.methods %}<tr>
{% if loop.first %}<td rowspan="{{ s.methods|length }}"><a href="{{ s.name }}.html">{{ s.name
}}</a></td>{% endif %}<td>{{ m.method }}</td>
<td class="{{ m.status|replace(' ', '-') }}">{{ m.status }}</td>
<td>{% for claim, status in m.claims %}<a class="badge {{ status|replace(' ', '-') }}"
href="{{ s.name }}.html#claim-{{ claim }}">{{ claim }}</a> {% endfor %}</td>
<td class="{{ m.shade }}">{{ m.worst }}</td></tr>
{% endfor %}{% endfor %}</tbody></table></div>
<h2 id="pins">What pins each method</h2>
<p>Each public estimator method the studies of this run name, with the claims that hold it to
its promise from both sides: its <em>validity</em> (coverage at least nominal, or near it
where that is the method's promise; no bias; a plan that delivers its power) and its
<em>efficiency</em> (no wider, more conservative or larger than needed), each with its verdict
on this run (NOT RUN: judged on another grid). {{ pins_pinned }} of {{ pins|length }} are
pinned from both sides; the last column says what the others lack.</p>
<div class="scroll"><table class="pins"><thead><tr><th>method</th><th>validity</th>
<th>efficiency</th><th>missing</th></tr></thead><tbody>
{% for p in pins %}<tr><td>{{ p.method }}</td>
{% for side in p.sides %}<td>{% for study, claim, status in side %}<a class="badge {{
status|replace(' ', '-') }}" href="{{ study }}.html#claim-{{ claim }}">{{ study }}:{{ claim
}}</a> {% endfor %}</td>{% endfor %}
<td>{{ p.missing }}</td></tr>
{% endfor %}</tbody></table></div>
<p>Tables: each study's <code>.csv</code> (per cell), <code>.summary.csv</code>,
<code>.claims.csv</code>; all cells in <a href="results.csv">results.csv</a>;
provenance and file hashes in <a href="report.json">report.json</a>.</p>
{% if comparison %}<h2 id="comparison">Comparison with the baseline</h2>
<p>{{ comparison.summary }}</p>
{% for note in comparison.notes %}<p>Note: {{ note }}.</p>
{% endfor %}{% if comparison.changes %}<p>The changed values, worst first (z: the difference
over its SE; inf for an exact value that moved or a value undefined on one side only).</p>
{{ comparison.changes }}{% endif %}
{% if comparison.claims %}<p>Claims whose verdict changed:</p>{{ comparison.claims }}{% endif %}
{% if comparison.missing %}<p>Values the run lacks:</p>{{ comparison.missing }}{% endif %}
{% if comparison.added %}<p>Values the run adds:</p>{{ comparison.added }}{% endif %}
<p>Power: the shift of a Monte Carlo value flagged with probability 0.9 by a run with
another seed, per study and measure.</p>
{{ comparison.power }}
{% endif %}
{{ provenance }}
"""

_STUDY = """
<p><a href="index.html">index</a></p>
<h1>{{ name }}</h1>
{% if incomplete %}<p class="FAILS">This run is {{ incomplete }}.</p>{% endif %}
<section id="summary">
{{ aim }}
{% for line in cut %}<p class="INCONCLUSIVE">{{ line }}</p>
{% endfor %}<p>Tested: {{ tested }}.</p>
{% if untested %}<p>Not tested on this grid: {{ untested }}.</p>{% endif %}
<p class="{{ status|replace(' ', '-') }}">Claims: {{ tally }}.</p>
{% if findings %}<h2>Findings</h2>
<p>What this run found, every number read from its results (MCSE: Monte Carlo standard
error).</p>
<ul>{% for sentence in findings[:shown] %}<li>{{ sentence }}</li>
{% endfor %}</ul>
{% if findings|length > shown %}<details><summary>{{ findings|length - shown }} more
findings</summary><ul>{% for sentence in findings[shown:] %}<li>{{ sentence }}</li>
{% endfor %}</ul></details>{% endif %}{% endif %}
</section>
<nav class="toc">Contents: {% for anchor, title in toc %}<a href="#{{ anchor }}">{{ title }}</a>
{% endfor %}</nav>
{% if figures %}<h2 id="figures">Figures</h2>
{% for f in figures %}<figure id="figure-{{ loop.index }}">{{ f.svg }}
<figcaption>Figure {{ loop.index }}. {{ f.caption }}</figcaption></figure>
{% endfor %}{% endif %}
<h2 id="claims">Claims and verdicts</h2>
{{ claims }}
{% if bands %}<h2 id="coverage">Coverage by method and condition</h2>
<p>{{ bands_text }}</p>
{{ bands }}{% endif %}
{% if summary %}<h2 id="summary-table">Summary table</h2>
<p>The study's headline table (also in <code>{{ name }}.summary.csv</code>).</p>
{{ summary }}{% endif %}
<h2 id="results">Results</h2>
<p>Per method and measure over the grid: the mean with the largest MCSE of any cell
("exact": every outcome enumerated), the smallest and the largest value (also per cell in
<code>{{ name }}.csv</code> where the grid has one row per cell).</p>
{{ results }}
{% if failures %}<h2 id="failures">Cells that break a claim</h2>{{ failures }}{% endif %}
<h2 id="ademp">Design (ADEMP)</h2>
{% for title, text in ademp %}<h3>{{ title }}</h3>{{ text }}
{% if title == 'Data-generating mechanisms' %}{{ grid }}{% endif %}{% endfor %}
<h3 id="protocol">As a protocol</h3>
<p>The items a simulation protocol answers (after Siepe et al. 2024, ADEMP-PreReg), from the
study's declaration and this run; "not stated" where the study says nothing.</p>
{{ prereg }}
<h2 id="legend">Legend</h2>
<details><summary>What each column and term means</summary>
<dl>{% for term, text in legend %}<dt>{{ term }}</dt><dd>{{ text }}</dd>
{% endfor %}</dl></details>
{{ provenance }}
"""

# Findings shown in a page's summary before the rest are folded.
SHOWN_FINDINGS = 6
# Rows of a table shown before it is folded (the full table is in the study's CSV files).
FOLDED_ROWS = 25
# Columns beyond which a table may be wider than the page: it says so above itself.
WIDE_TABLE = 8

_ENV = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True,
                   keep_trailing_newline=True)
# compiled once per process: a compile takes 9 ms (a study page's) to 16 ms (the index's), and
# a run writes a page per study
_template = functools.cache(_ENV.from_string)


def ademp_sections(docstring: str) -> list[tuple[str, str]]:
    """The ADEMP sections of a study module's docstring, as (title, text) in ADEMP order.

    A section is a line holding only its title followed by indented lines (numpydoc's
    definition-list layout), as every study module writes its ADEMP.

    Examples
    --------
    >>> ademp_sections("Title.\\n\\nAims\\n    Show a thing.\\nEstimands\\n    ``p``.\\n")
    [('Aims', 'Show a thing.'), ('Estimands', '``p``.')]
    """
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in docstring.splitlines():
        if line.strip() in ADEMP and not line.startswith(" "):
            current = found.setdefault(line.strip(), [])
        elif current is not None and (line.startswith(" ") or not line.strip()):
            current.append(line[4:] if line.startswith("    ") else line.strip())
        else:
            current = None
    return [(title, "\n".join(found[title]).strip()) for title in ADEMP if title in found]


def _prose(text: str) -> Markup:
    """Docstring text as HTML: paragraphs, bullet lists, ``code`` and **bold**, escaped."""
    blocks = []
    for block in re.split(r"\n\s*\n", text.strip()):
        escaped = _inline(html.escape(block))
        lines = escaped.splitlines()
        if lines and lines[0].lstrip().startswith("* "):
            items = re.split(r"\n\s*\* ", "\n" + escaped.strip())[1:]
            blocks.append("<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>")
        else:
            blocks.append(f"<p>{escaped}</p>")
    return Markup("\n".join(blocks))


def _inline(escaped: str) -> str:
    """``code`` and `code` spans, then **bold** outside them (so tags always nest)."""
    spans: list[str] = []

    def hold(match: re.Match[str]) -> str:
        spans.append(f"<code>{match.group(1)}</code>")
        return f"\0{len(spans) - 1}\0"

    escaped = re.sub(r"``(.+?)``", hold, escaped, flags=re.S)
    escaped = re.sub(r"(?<![`\w])`([^`\n]+?)`(?!`)", hold, escaped)
    escaped = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escaped, flags=re.S)
    return re.sub("\0(\\d+)\0", lambda m: spans[int(m.group(1))], escaped)


def _text(value: Any) -> str:
    """A value as people read it: three significant figures, whole numbers with separators
    from 10,000 on, blank for nan (undefined)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return ""
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}" if abs(value) >= 10_000 else str(int(value))
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    return "" if value is None else str(value)


def _html_table(frame: pd.DataFrame, *, status_column: str | None = None,
                classes: pd.DataFrame | None = None, wide: str = "",
                fold: str = "", row_id: str = "", prose: str = "") -> Markup:
    """A frame as an escaped HTML table in a box that scrolls sideways; numbers right-aligned.

    The entries of ``status_column``, and those where ``classes`` (same shape) is not
    empty, get that text as their CSS class (the verdict colours); the entries of column
    ``wide`` get room to wrap; those of column ``prose`` (docstring text) show its ``code``
    and **bold** as the study's prose does; column ``row_id``, not shown, gives each row its
    anchor. A table of more than `FOLDED_ROWS` rows is folded under a line saying how many
    rows it has and ``fold`` (where the full data are).
    """
    ids = [""] * len(frame)
    if row_id in frame:
        ids = [f' id="{html.escape(str(v))}"' for v in frame[row_id]]
        frame = frame.drop(columns=[row_id])
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for i, record in enumerate(frame.itertuples(index=False)):
        cells = []
        for column, value in zip(frame.columns, record, strict=True):
            kind = ' class="num"' if isinstance(value, int | float) else ""
            status = value if column == status_column else (
                classes[column].iloc[i] if classes is not None and column in classes else "")
            if status:
                kind = f' class="{html.escape(str(status)).replace(" ", "-")}"'
            elif column == wide:
                kind = ' class="statement"'
            text = html.escape(_text(value))
            cells.append(f"<td{kind}>{_inline(text) if column == prose else text}</td>")
        rows.append(f"<tr{ids[i]}>" + "".join(cells) + "</tr>")
    cue = ""
    if len(frame.columns) > WIDE_TABLE:  # may not fit the page: say that more lies aside
        last = ", ".join(html.escape(str(c)) for c in frame.columns[-3:])
        cue = (f'<p class="cue">{len(frame.columns)} columns: where the table is wider than '
               f"the page, scroll it sideways for the rest (the last: {last}).</p>\n")
    table = (f'{cue}<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>\n'
             + "\n".join(rows) + "\n</tbody></table></div>")
    if len(frame) > FOLDED_ROWS:
        where = f"; {html.escape(fold)}" if fold else ""
        table = f"<details><summary>{len(frame):,} rows{where}</summary>\n{table}</details>"
    return Markup(table)


def _readable(frame: pd.DataFrame) -> pd.DataFrame:
    """A study's own table for people: each ``X`` beside ``X_mcse`` as one "X (MCSE)" column
    of "value (MCSE)", and column names in words (underscores as spaces)."""
    columns: dict[str, Any] = {}
    for name in frame.columns:
        if name.endswith("_mcse") and name[:-5] in frame.columns:
            continue
        mcse = f"{name}_mcse"
        if mcse in frame.columns:
            columns[f"{name} (MCSE)".replace("_", " ")] = [
                _estimate_text(v, m) for v, m in zip(frame[name], frame[mcse], strict=True)]
        else:
            columns[str(name).replace("_", " ")] = frame[name]
    return pd.DataFrame(columns, index=frame.index)


def _estimate_text(value: Any, mcse: Any) -> str:
    """``0.947 (0.0023)``; ``0.947 (exact)`` for an MCSE of 0; the value alone without one."""
    if not isinstance(value, int | float) or value != value:
        return _text(value)
    if not isinstance(mcse, int | float) or mcse != mcse:
        return _text(float(value))
    return f"{_text(float(value))} ({'exact' if mcse == 0 else f'{mcse:.2g}'})"


def _md_table(frame: pd.DataFrame) -> str:
    """A frame as a Markdown pipe table (pipes in values escaped)."""
    def cell(value: Any) -> str:
        return _text(value).replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(cell(c) for c in frame.columns) + " |",
             "| " + " | ".join("---" for _ in frame.columns) + " |"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |"
              for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def _claims_frame(name: str, verdicts: Sequence[Verdict],
                  rounds: Mapping[str, int] | None = None) -> pd.DataFrame:
    """The claims table of a study page; ``rounds``: the round each claim was decided at, in
    a run in rounds (`studies.engine.rounds.decided_rounds`; default 1)."""
    table = claims_table(name, verdicts)
    if table.empty:
        return table
    decided = rounds or {}
    not_run = table["status"] == NOT_RUN
    # a claim not judged on this grid took no round and no replicates
    table = table.assign(
        rounds=["" if skipped else decided.get(claim, 1)
                for claim, skipped in zip(table["claim"], not_run, strict=True)],
        replicates=["" if skipped else count
                    for count, skipped in zip(table["replicates"], not_run, strict=True)])
    unit = table["unit"].astype(str)

    def in_unit(column: str) -> list[str]:
        return [f"{_text(v)} {u}".strip() if isinstance(v, int | float) and v == v else
                _text(v) for v, u in zip(table[column], unit, strict=True)]

    table = table.assign(**{"detectable (unit)": in_unit("detectable"),
                            "resolution (unit)": in_unit("resolution"),
                            "values compared": table["compared"],
                            "values failing": table["failing"]})
    table = table.rename(columns={"familywise_error": "familywise error"})
    table.insert(0, "anchor", [f"claim-{c}" for c in table["claim"]])
    # what decided the verdict first (a wide table scrolls; these are seen without scrolling)
    return table[["anchor", "status", "claim", "worst", "reason", "detectable (unit)",
                  "resolution (unit)", "statement", "condition", "region", "methods", "kind",
                  "values compared", "values failing", "familywise error", "k", "rounds",
                  "replicates"]]


def _results_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame([{
        "method": r["method"], "measure": r["measure"].replace("_", " "), "cells": r["cells"],
        "mean (largest MCSE)": _estimate_text(r["mean"], r["max_mcse"]),
        "smallest": r["min"], "largest": r["max"], "undefined cells": r["nan_cells"]}
        for r in rows])


N_BANDS: tuple[tuple[int, float], ...] = ((1, 30), (30, 100), (100, 300), (300, math.inf))
BAND_MARGIN = 0.01


def _band_labels() -> list[str]:
    return [f"{lo}-{hi - 1:g}" if math.isfinite(hi) else f">= {lo}" for lo, hi in N_BANDS]


def _band(n: pd.Series) -> pd.Series:
    labels = _band_labels()
    edges = [lo for lo, _ in N_BANDS] + [math.inf]
    return pd.Series(pd.cut(n.astype(float), edges, right=False, labels=labels).astype(str),
                     index=n.index)


EXACT_N_LIMIT = 10  # up to this many distinct n: a row per n, else per n band
_BAND_KEYS = ("design", "prevalence")  # parameters that get a row per value when a study has them


def _coverage_bands(result: StudyResult,
                    pieces: Mapping[str, GroupTables] | None = None) -> pd.DataFrame:
    """Coverage per method and condition at the 95% level (two-sided where a study has sides).

    The conditions: the design and the prevalence when the study has them, and ``n`` (each
    value when there are at most `EXACT_N_LIMIT`, else the bands `N_BANDS`). Each row: the
    mean coverage over the condition's cells with its MCSE (`studies.engine.means`: cells
    independent; a cell without a coverage or an MCSE leaves them undefined), the smallest
    coverage, and a verdict: under-covers when the mean is below nominal - 0.01 by more than
    1.96 MCSE, over-covers when above nominal + 0.01 by as much, undefined when the mean or
    its MCSE is, else meets nominal. Read in pieces, so a grid of millions of cells is never
    one frame.
    """
    parts = []
    where = _bands_query(set(result.parameters) or {k for c in result.cells for k in c.params}
                         | {k for g in result.groups for k in (*g.shared, *g.axes)})
    # a packed group whose conditions are all shared sums each method's cells in one go
    shared = [_conditions_shared(g) for g in result.groups]
    summed = [g for g, alike in zip(result.groups, shared, strict=True) if alike]
    rest = StudyResult(result.study, result.cells, tuple(
        g for g, alike in zip(result.groups, shared, strict=True) if not alike),
        result.parameters)
    for rows in rest.frames(measures=["coverage"], where=where, batch_rows=500_000):
        keys = ["method", *(k for k in _BAND_KEYS if k in rows.columns), "n"]
        rows = rows.assign(n=rows["n"].astype(float) if "n" in rows.columns else math.nan,
                           **mean_terms(rows["value"], rows["mcse"]))
        parts.append(rows.groupby(keys, sort=False, dropna=False).agg(
            {**MEAN_SUMS, "value": "min"}))
    parts += _shared_band_sums(summed, where, pieces or {})
    if not parts:
        return pd.DataFrame()
    found = pd.concat(parts).reset_index()
    keys = [c for c in found.columns if c in ("method", *_BAND_KEYS)]
    ns = found["n"].dropna().unique()
    if ns.size > EXACT_N_LIMIT:
        found["n band"] = _band(found["n"])
        keys.append("n band")
    elif ns.size:
        found["n"] = found["n"].astype("Int64")
        keys.append("n")
    found = found.groupby(keys, sort=False, dropna=False).agg(
        {**MEAN_SUMS, "value": "min"}).reset_index()
    means = means_from_sums(found)
    mean, mcse = means["value"], means["mcse"]
    slack = BAND_MARGIN + 1.96 * mcse
    verdict = ["undefined" if math.isnan(m) or math.isnan(s) else "under-covers"
               if m < 0.95 - s else "over-covers" if m > 0.95 + s else "meets nominal"
               for m, s in zip(mean, slack, strict=True)]
    return found[keys].assign(
        cells=means["cells"],
        **{"mean coverage (MCSE)": [f"{m:.4f} ({e:.2g})" for m, e in zip(mean, mcse,
                                                                          strict=True)],
           "min coverage": found["value"], "verdict": verdict})


def _bands_query(names: set[str]) -> str:
    """The cells `_coverage_bands` reads: the 95% level, two-sided (those a study has)."""
    return " and ".join(query for name, query in (
        ("alternative", "alternative == 'two-sided'"),
        ("confidence_level", "confidence_level == 0.95")) if name in names)


def _conditions_shared(group: PackedGroup) -> bool:
    """Whether every cell of ``group`` is of one condition of `_coverage_bands`."""
    return not {*_BAND_KEYS, "n"} & {*group.axes}


def _shared_band_sums(groups: Sequence[PackedGroup], where: str,
                      pieces: Mapping[str, GroupTables]) -> list[pd.DataFrame]:
    """`_coverage_bands`' sums over the cells in ``where`` of packed groups whose design,
    prevalence and ``n`` (those they have) are shared: a row per group and method (from
    ``pieces`` where given, computed for that query).
    """
    rows = []
    for start in range(0, len(groups), REGION_GROUPS):
        chunk = groups[start:start + REGION_GROUPS]
        missing = [g for g in chunk if g.key not in pieces or pieces[g.key].where != where]
        regions = dict(zip((g.key for g in missing), group_regions(missing, where),
                           strict=True))
        for group in chunk:
            rows += (_group_band_rows(group, regions[group.key]) if group.key in regions
                     else pieces[group.key].bands)
    if not rows:
        return []
    frame = pd.DataFrame(rows)
    return [frame.set_index([c for c in frame.columns if c in ("method", *_BAND_KEYS, "n")])]


def _group_band_rows(group: PackedGroup, region: NDArray[np.bool_]) -> list[dict[str, Any]]:
    """A packed group's rows of `_shared_band_sums`: its sums per method over ``region``.

    Packed values are exact (MCSE 0): each cell has weight 1 and adds its value.
    """
    if not region.any():
        return []
    conditions = {k: group.shared[k] for k in _BAND_KEYS if k in group.shared}
    n = float(group.shared["n"]) if "n" in group.shared else math.nan
    rows = []
    for method, found in group.values.items():
        if "coverage" not in found:
            continue
        value = found["coverage"][region]
        missing = int(np.isnan(value).sum())
        rows.append({"method": method, **conditions, "n": n,
                     "weight_sum": float(value.size),
                     "weighted_sum": float(np.nansum(value)), "square_sum": 0.0,
                     "cells": value.size, "undefined_cells": missing,
                     "unknown_cells": 0,
                     "value": float(np.nanmin(value)) if missing < value.size
                     else math.nan})
    return rows


BANDS_TEXT = (
    "Mean coverage (MCSE) of each method at the 95% level (two-sided where the study has "
    "one-sided intervals too), over the cells of each condition (each design, prevalence and "
    "n, or band of n, the study has; the means are over the other parameters). A method "
    "under-covers (red, \"under\") where its mean is below 0.94 by more than 1.96 MCSE, and "
    "over-covers (yellow, \"over\") where above 0.96 by as much; green meets nominal. A "
    "condition where a cell has no coverage or no MCSE (the method failed there) is marked "
    "\"undefined\".")
_VERDICT_MARK = {"meets nominal": "", "under-covers": " under", "over-covers": " over",
                 "undefined": " undefined"}


def _bands_pivot(bands: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The coverage table with one column per method: texts, and the verdict of each entry.

    Each entry is "mean (MCSE)", followed by "under" or "over" when the method under- or
    over-covers there; the verdicts (for the entries' colours) come in a frame of the same
    shape ("" where a method has no cells).
    """
    keys = [c for c in bands.columns if c in (*_BAND_KEYS, "n", "n band")]
    if not keys:
        bands, keys = bands.assign(cells="all"), ["cells"]
    methods = list(dict.fromkeys(bands["method"]))
    if "n band" in keys:  # in the order of n, not of the labels' text
        bands = bands.assign(**{"n band": pd.Categorical(
            bands["n band"], categories=_band_labels(), ordered=True)})
    shown = bands.assign(entry=bands["mean coverage (MCSE)"]
                         + bands["verdict"].map(_VERDICT_MARK)).set_index([*keys, "method"])

    def wide(column: str) -> pd.DataFrame:
        table = shown[column].unstack("method").reindex(columns=methods).fillna("")
        return table.reset_index().rename_axis(columns=None)

    verdicts = wide("verdict")
    verdicts[keys] = ""
    return wide("entry"), verdicts


def _failures_frame(verdicts: Sequence[Verdict], limit: int = 10) -> pd.DataFrame:
    parts = [v.failures.head(limit).assign(claim=v.claim.name) for v in verdicts
             if v.status == FAILS]
    if not parts:
        return pd.DataFrame()
    frame = pd.concat(parts, ignore_index=True)
    return frame[["claim", *(c for c in frame.columns if c != "claim")]]


def _grid_frame(identity: RunIdentity, study: Study) -> pd.DataFrame:
    grid = identity.grids[study.name]
    rows = [{"parameter": k, "values": ", ".join(str(v) for v in values), "count": len(values)}
            for k, values in grid.parameters.items()]
    exact = study.enumerate_outcomes is not None
    if grid.where:
        rows.append({"parameter": "cells kept", "values": f"those where {grid.where}",
                     "count": grid.n_cells})
    rows.append({"parameter": "replicates per cell",
                 "values": "none: every outcome enumerated (exact path)" if exact
                 else str(grid.n_replicates), "count": ""})
    return pd.DataFrame(rows)


# Provenance fields that differ between two runs of the same command (the pages mark them).
TIMING_FIELDS: tuple[str, ...] = ("run started", "run ended", "wall time")


def untimed(text: str) -> str:
    """A page (HTML or Markdown) without its timing rows: what two runs of one command share
    byte for byte.

    Examples
    --------
    >>> untimed('<tr class="timing"><td>wall time</td><td>3 s</td></tr><tr><td>grid</td>')
    '<tr><td>grid</td>'
    >>> untimed("| run ended | 2026-01-01 |\\n| grid | quick |")
    '\\n| grid | quick |'
    """
    fields = "|".join(re.escape(field) for field in TIMING_FIELDS)
    text = re.sub(r'<tr class="timing">.*?</tr>', "", text)
    return re.sub(rf"^\| ({fields}) \|.*$", "", text, flags=re.M)


NOT_STATED = "not stated"


def prereg_table(study: Study, verdicts: Sequence[Verdict], tested: str,
                 prov: Mapping[str, str]) -> pd.DataFrame:
    """The study as the items of a simulation protocol (after Siepe et al. 2024's
    ADEMP-PreReg template), each answered from its declaration and this run, or
    `NOT_STATED` where the study says nothing.

    Columns ``item`` and ``answer``: the aims, data-generating mechanisms, conditions,
    estimands, methods, performance measures (from the ADEMP sections and the grid), the
    repetitions and their justification (the claims' power), Monte Carlo errors, failures,
    the random numbers, the software and environment, and where the code and the claims are.
    """
    sections = dict(ademp_sections(study.ademp))
    decided = [v for v in verdicts if v.status != NOT_RUN]
    scales = [v.scale for v in decided if v.scale == v.scale]
    if not verdicts:
        justified = NOT_STATED + " (the study states no claims)"
    elif not decided:
        justified = "no claim is judged on this grid"
    else:
        justified = (f"each claim HOLDS only where it detects a deviation of its resolution "
                     f"with probability 0.95; {sum(v.status != INCONCLUSIVE for v in decided)} "
                     f"of the {len(decided)} judged here do")
        if scales and max(scales) > 1.0:
            justified += (f"; the least served would need {max(scales):.2g} times these "
                          f"replicates")
    exact = study.enumerate_outcomes is not None
    items = [
        ("Aims", sections.get("Aims", NOT_STATED)),
        ("Data-generating mechanisms", sections.get("Data-generating mechanisms", NOT_STATED)),
        ("Conditions (the grid)", tested),
        ("Estimands", sections.get("Estimands", NOT_STATED)),
        ("Methods", sections.get("Methods", NOT_STATED)),
        ("Performance measures", sections.get("Performance measures", NOT_STATED)
         + f" Measures computed: {', '.join(study.measures)}."),
        ("Repetitions", "none: every outcome is enumerated with its probability (exact)"
         if exact else tested.split("Monte Carlo: ")[-1].split(")")[0]
         if "Monte Carlo: " in tested else NOT_STATED),
        ("Why that many", justified),
        ("Monte Carlo error", "exact values: no Monte Carlo error" if exact else
         "every value with its Monte Carlo standard error (Morris, White & Crowther 2019, "
         "Table 6); claims allow k x MCSE at a stated false-alarm rate"),
        ("Failures (a method that raises)", "recorded as that method's error in that cell; a "
         "claim about the method there fails, and the run goes on"),
        ("Random numbers", "root seed " + (prov.get("root seed") or NOT_STATED)
         + ("; every cell draws from a SeedSequence keyed by its parameters, whatever the "
            "workers" if not exact else "; none drawn (exact)")),
        ("Hypotheses (claims)", f"{len(study.claims)} claims, each with its verdict on this "
         "page" if study.claims else NOT_STATED),
        ("Software", ", ".join(f"{k} {prov[k]}" for k in ("python", "evalcert", "numpy",
                                                          "scipy", "pandas") if prov.get(k))
         or NOT_STATED),
        ("Environment", prov.get("platform") or NOT_STATED),
        ("Code", f"study {study.name} v{study.version}; reproduce with "
         f"{prov.get('reproduce with') or NOT_STATED}; git commit "
         f"{prov.get('git commit') or NOT_STATED}"),
    ]
    return pd.DataFrame(items, columns=["item", "answer"])


def _provenance(head: RunHead, reproduce: str) -> dict[str, str]:
    identity, run = head.identity, head.provenance
    packages = run.packages or {}
    tree = {True: " (uncommitted changes)", False: " (tree clean)", None: " (state unknown)"}
    wall = run.wall_seconds
    return {
        "run": head.state.describe(),
        "run started": run.started or "",
        "run ended": run.ended or "not recorded",
        "wall time": "" if wall is None else f"{wall:,.0f} s",
        "evalcert": packages.get("evalcert", ""),
        "git commit": f"{run.commit or 'unknown'}{tree[run.dirty]}",
        "command": run.command or "",
        "reproduce with": reproduce,
        "root seed": str(identity.seed),
        "grid": identity.grid_name,
        "study versions": ", ".join(f"{name} v{version}" for name, version in
                                    identity.studies.items()),
        "python": run.python or "",
        "platform": run.platform or "",
        **{name: packages[name] for name in ("numpy", "scipy", "pandas", "matplotlib")
           if name in packages},
    }


def _provenance_html(prov: Mapping[str, str]) -> Markup:
    timing = ' class="timing"'
    rows = "\n".join(
        f"<tr{timing if field in TIMING_FIELDS else ''}>"
        f"<td>{html.escape(field)}</td><td>{html.escape(value)}</td></tr>"
        for field, value in prov.items())
    return Markup('<h2 id="provenance">Provenance</h2>\n<div class="scroll"><table class="prov">'
                  f"<thead><tr><th>field</th><th>value</th></tr></thead><tbody>\n{rows}\n"
                  "</tbody></table></div>")


def _reproduce(identity: RunIdentity, command: str | None, names: Sequence[str], out: str,
               known: Collection[str]) -> str:
    """The one command that reproduces the run (of ``names`` only) into ``out``, or why there
    is none.

    Discovered studies on a named grid: ``evalcert study run NAMES --grid G --seed S --out
    OUT``; other studies (``module:ATTRIBUTE``): the recorded command with the seed and output
    set; a grid built in Python has no command. A study's cells draw from streams keyed by
    the study and the cell, so one study run alone reproduces its values in a suite's run.
    ``known``: the discovered studies' names (`study_names`).
    """
    grid, seed = identity.grid, str(identity.seed)
    if grid is None:
        return (f"no single command: the grid was built in Python (its values are under "
                f"grids in report.json); run it with studies.engine.run and rng={seed}")
    if set(names) <= set(known):
        words = ["evalcert", "study", "run", *names, "--grid", grid, "--seed", seed,
                 "--out", out]
        for method in identity.methods:
            words += ["--method", method]
        return shlex.join(words)
    recorded = shlex.split(command or "")
    if "run" not in recorded:
        return f"no single command: the run was started from Python with rng={seed}"
    kept: list[str] = []
    skip = False
    for word in recorded:
        if skip:
            skip = False
        elif word in ("--seed", "--out"):
            skip = True
        elif not word.startswith(("--seed=", "--out=", "--resume")):
            kept.append(word)
    return shlex.join([*kept, "--seed", seed, "--out", out])


def _aim(module_doc: str) -> str:
    first = module_doc.strip().splitlines()
    return first[0] if first else ""


def _write(path: Path, text: str, written: dict[str, str]) -> None:
    data = text.encode("utf-8")
    path.write_bytes(data)
    written[path.name if path.parent.name != "figures" else f"figures/{path.name}"] = \
        hashlib.sha256(data).hexdigest()


def _untested(study: Study, identity: RunIdentity) -> str:
    """What the study's declared grids cover and this run's grid does not: each parameter's
    values left out (and in which grid they are), in words; "" when nothing is."""
    ran = identity.grids[study.name].parameters
    found = []
    for parameter in ran:
        for grid_name, grid in study.grids.items():
            mine = {json.dumps(v) for v in ran[parameter]}
            left = [v for v in grid.parameters.get(parameter, ()) if json.dumps(v) not in mine]
            if left:
                shown = ", ".join(_text(v) for v in left[:8]) + (
                    f" and {len(left) - 8} more" if len(left) > 8 else "")
                found.append(f"{parameter} {shown} (the {grid_name} grid)")
    return "; ".join(found)


def _ran(result: StudyResult) -> set[str]:
    """The methods with results in some cell or group of the run."""
    return {m for c in result.cells for m in c.performance} | {
        m for g in result.groups for m in g.values}


def _tested(study: Study, result: StudyResult, identity: RunIdentity) -> str:
    """What the page tested, in one line: cells, grid parameters, path, replicates, and the
    methods that ran (and those of the study that did not, on this grid)."""
    grid = identity.grids[study.name]
    cells = len(result.cells) + sum(g.size for g in result.groups)
    parameters = " x ".join(f"{len(v)} {k}" for k, v in grid.parameters.items()
                            if len(v) > 1) or "one cell"
    if grid.where:
        parameters += f", the cells where {grid.where}"
    ran = _ran(result)
    methods = ", ".join(m for m in study.methods if m in ran) or "none"
    others = sorted(ran - set(study.methods))  # a user's methods, run beside the study's
    if others:
        methods += ", " + ", ".join(others)
    left = [m for m in study.methods if m not in ran]
    if left:
        methods += f" (not run on this grid: {', '.join(left)})"
    if study.enumerate_outcomes is not None:
        how = "exact: every outcome enumerated with its probability, no Monte Carlo error"
    else:
        how = f"Monte Carlo: {_text(grid.n_replicates)} replicates per cell"
    return f"{_text(cells)} cells ({parameters}; {how}) of the methods {methods}"


def study_figure(study: Study, result: StudyResult, index: int, *, run_dir: str | Path,
                 summary: Sequence[Mapping[str, Any]] | None) -> str:
    """The SVG text of a study's ``index``-th figure (from 1; `studies.report.figures.draw`).

    Parameters
    ----------
    study : Study
    result : StudyResult
        Its results.
    index : int
        The figure's place in ``study.figures``, from 1 (its file is ``NAME-INDEX.svg``).
    run_dir : path
        The run directory (a zip plot of a stored result reads its estimates there).
    summary : rows, optional
        The study's summary rows (`studies.report.tables.summaries`), for its summary figures;
        computed by those when not given.

    Returns
    -------
    str
        The SVG document, the same bytes in any process. A figure that cannot be drawn from
        this run (its methods left no values, its query selects nothing) is a short SVG
        saying so and why: the page, its verdicts and the comparison are written all the
        same.
    """
    figure_id = f"{study.name}-{index}"
    try:
        return draw(study.figures[index - 1], study, result, figure_id=figure_id,
                    run_dir=run_dir, summary=summary if study.summary else None)
    except ValueError as error:
        return not_drawn(str(error), figure_id)


_NOTE_LINE = 110  # characters per line of a figure's "not drawn" note


def not_drawn(reason: str, figure_id: str) -> str:
    """A small SVG in a figure's place: "Not drawn from this run:" and the reason."""
    words = f"Not drawn from this run: {reason}".split()
    lines: list[str] = []
    for word in words:
        if lines and len(lines[-1]) + 1 + len(word) <= _NOTE_LINE:
            lines[-1] += " " + word
        else:
            lines.append(word)
    height = 16 + 20 * len(lines)
    texts = "".join(f'<text x="8" y="{24 + 20 * i}">{html.escape(line)}</text>'
                    for i, line in enumerate(lines))
    return ('<?xml version="1.0" encoding="utf-8" standalone="no"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" id="{html.escape(figure_id)}" '
            f'width="720pt" height="{height}pt" viewBox="0 0 960 {height}" role="img" '
            'font-family="sans-serif" font-size="14" fill="#8a5a00">'
            f"<title>Not drawn</title>{texts}</svg>\n")


@dataclass(frozen=True)
class PageTables:
    """What a study's page computes from every cell: the results table of a study with a
    summary of its own (`headline_table`; None for the others, whose summary it is) and the
    coverage by condition (`_coverage_bands`). Computed apart (`page_tables`), in another
    process while the claims are judged, they are what a full grid's page costs."""

    headline: list[dict[str, Any]] | None
    bands: pd.DataFrame


def page_tables(study: Study, result: StudyResult,
                pieces: Mapping[str, GroupTables] | None = None) -> PageTables:
    """The `PageTables` of ``study``'s page for ``result``.

    ``pieces``: the `group_tables` of packed groups computed already (as a run computes its
    other groups), by group key; the others are computed here. The tables are the same.
    """
    given = pieces or {}
    return PageTables(
        headline_table(result, ranges={k: p.ranges for k, p in given.items()})
        if study.summary else None, _coverage_bands(result, given))


@dataclass(frozen=True)
class GroupTables:
    """What one packed group adds to its study's `PageTables`: each (method, measure)'s
    range (`studies.report.tables.group_ranges`) and, when the group is of one condition,
    its rows of coverage by condition over the cells of ``where`` (`_coverage_bands`)."""

    ranges: Mapping[tuple[str, str], Range]
    where: str
    bands: list[dict[str, Any]]


def group_tables(group: PackedGroup) -> GroupTables:
    """The `GroupTables` of a packed group (its arrays read once)."""
    group = group.loaded()
    where = _bands_query({*group.shared, *group.axes})
    bands = (_group_band_rows(group, group_regions([group], where)[0])
             if _conditions_shared(group) else [])
    return GroupTables(group_ranges(group), where, bands)


def paper_tally(outcomes: Sequence[str]) -> str:
    """The paper's numbers a study's findings compared, counted by outcome ("" for none).

    Examples
    --------
    >>> paper_tally(["reproduced", "not reproduced", "not reproduced"])
    '1 reproduced, 2 not reproduced, 0 too imprecise'
    >>> paper_tally([])
    ''
    """
    if not outcomes:
        return ""
    return ", ".join(f"{sum(o == kind for o in outcomes)} {kind}" for kind in PAPER_OUTCOMES)


def _study_page(study: Study, result: StudyResult, verdicts: Sequence[Verdict],
                identity: RunIdentity, prov: Mapping[str, str], reproduce: str, out: Path,
                run_dir: Path, written: dict[str, str],
                summary_rows: Sequence[Mapping[str, Any]] | None,
                drawn: Sequence[str] | None, tables: PageTables | None,
                rounds: Mapping[str, int] | None = None, cut: Sequence[str] = ()
                ) -> dict[str, Any]:
    name = study.name
    tables = tables if tables is not None else page_tables(study, result)
    doc = study.ademp
    sections = ademp_sections(doc)
    found = list(summary_rows) if summary_rows is not None else \
        study_summaries({name: result}, [study])[name]
    if drawn is None:
        drawn = [study_figure(study, result, index, run_dir=run_dir, summary=found)
                 for index in range(1, len(study.figures) + 1)]
    figures = []
    ran = _ran(result)
    for index, (figure, svg) in enumerate(zip(study.figures, drawn, strict=True), start=1):
        _write(out / "figures" / f"{name}-{index}.svg", svg, written)
        inline = svg[svg.index("<svg"):]  # an XML prolog or doctype is not valid inside HTML
        absent = [m for m in figure.options.get("methods") or () if m not in ran]
        caption = figure.caption + (f" (Not run on this grid, so not drawn: "
                                    f"{', '.join(absent)}.)" if absent else "")
        figures.append({"svg": Markup(inline), "caption": caption,
                        "file": f"figures/{name}-{index}.svg"})
    summary = _readable(pd.DataFrame.from_records(found)) if study.summary else pd.DataFrame()
    claims = _claims_frame(name, verdicts, rounds)
    results = _results_frame(tables.headline if tables.headline is not None else found)
    failures, grid = _failures_frame(verdicts), _grid_frame(identity, study)
    # decided claims first, then the study's own findings, then the claims not run here
    sentences = [claim_finding(v) for v in verdicts if v.status != NOT_RUN]
    outcomes: list[str] = []
    if study.findings is not None:
        try:
            with paper_outcomes() as outcomes:
                sentences += list(study.findings(result, found))
        except Exception as error:  # a study's own code may fail in any way; say so, go on
            sentences.append(f"The study's findings could not be written from this run: "
                             f"{type(error).__name__}: {error}")
    paper = paper_tally(outcomes)
    sentences += [claim_finding(v) for v in verdicts if v.status == NOT_RUN]
    bands = tables.bands
    band_texts = band_verdicts = pd.DataFrame()
    if not bands.empty:
        band_texts, band_verdicts = _bands_pivot(bands)
    prov = {**prov, "reproduce with": reproduce}
    toc = [(anchor, title) for anchor, title, shown in (
        ("summary", "Summary", True), ("figures", "Figures", bool(figures)),
        ("claims", "Claims", True), ("coverage", "Coverage by condition", not bands.empty),
        ("summary-table", "Summary table", not summary.empty), ("results", "Results", True),
        ("failures", "Cells that break a claim", not failures.empty),
        ("ademp", "Design (ADEMP)", True), ("legend", "Legend", True),
        ("provenance", "Provenance", True)) if shown]
    tested = _tested(study, result, identity)
    untested = _untested(study, identity)
    prereg = prereg_table(study, verdicts, tested, prov)
    body = _template(_STUDY).render(
        name=name, aim=_prose(_aim(doc)), tally=tally(verdicts) if verdicts else "none stated",
        status=worst_status(verdicts), ademp=[(t, _prose(x)) for t, x in sections],
        prereg=_html_table(prereg, wide="answer", prose="answer"),
        findings=[Markup(_inline(html.escape(x))) for x in sentences], shown=SHOWN_FINDINGS,
        tested=tested, untested=untested, toc=toc, grid=_html_table(grid),
        claims=_html_table(claims, status_column="status", wide="statement", row_id="anchor"),
        results=_html_table(results, fold=f"every cell in {name}.csv"),
        figures=figures,
        summary=_html_table(summary, fold=f"every row in {name}.summary.csv")
        if not summary.empty else "",
        bands=_html_table(band_texts, classes=band_verdicts) if not bands.empty else "",
        bands_text=BANDS_TEXT,
        failures=_html_table(failures) if not failures.empty else "",
        legend=list(LEGEND.items()), provenance=_provenance_html(prov),
        incomplete="" if prov["run"] == "complete" else prov["run"], cut=cut)
    page = _template(_PAGE).render(title=f"{name}: evalcert study", style=Markup(_STYLE),
                                          body=Markup(body))
    _write(out / f"{name}.html", page, written)
    md = [f"# {name}", "", *([f"This run is {prov['run']}.", ""] if prov["run"] != "complete"
                             else []), _aim(doc), "", *(x for line in cut for x in (line, "")),
          f"Tested: {tested}.", "",
          *([f"Not tested on this grid: {untested}.", ""] if untested else []),
          f"Claims: {tally(verdicts)}.", ""]
    if sentences:
        md += ["## Findings", "", *(f"- {x}" for x in sentences), ""]
    if figures:
        md += ["## Figures", ""]
        md += [f"![Figure {i}]({f['file']})\n\nFigure {i}. {f['caption']}\n"
               for i, f in enumerate(figures, start=1)]
    md += ["## Claims and verdicts", "",
           _md_table(claims.drop(columns=["anchor"], errors="ignore")), ""]
    if not bands.empty:
        md += ["## Coverage by method and condition", "", BANDS_TEXT, "",
               _md_table(band_texts), ""]
    if not summary.empty:
        md += ["## Summary table", "", _md_table(summary), ""]
    md += ["## Results", "", _md_table(results), ""]
    if not failures.empty:
        md += ["## Cells that break a claim", "", _md_table(failures), ""]
    md += ["## Design (ADEMP)", ""]
    for title, text in sections:
        md += [f"### {title}", "", text, ""]
        if title == "Data-generating mechanisms":
            md += [_md_table(grid), ""]
    md += ["### As a protocol", "", _md_table(prereg), ""]
    md += ["## Legend", "", *(f"- **{t}**: {x}" for t, x in LEGEND.items()), "",
           "## Provenance", "", _md_table(pd.DataFrame({"field": list(prov),
                                                          "value": list(prov.values())}))]
    _write(out / f"{name}.md", "\n".join(md) + "\n", written)
    cells = len(result.cells) + sum(g.size for g in result.groups)
    status = worst_status(verdicts) if verdicts else "no claims"
    return {"name": name, "aim": _aim(doc), "cells": cells, "tally": tally(verdicts),
            "status": status, "paper": paper,
            "shown_status": "HOLDS but not reproduced" if status == HOLDS
            and NOT_REPRODUCED in outcomes else status,
            "path": "exact" if study.enumerate_outcomes is not None else "monte-carlo",
            "version": study.version,
            "methods": _method_rows(list(dict.fromkeys(results["method"])) if len(results)
                                    else [], verdicts, bands, result)}


def _failing_value(verdict: Verdict, method: str) -> str:
    """The value of ``method`` that breaks a failing claim most, in words ('' if none)."""
    rows = verdict.failures[verdict.failures["method"] == method]
    if rows.empty:
        return ""
    row = rows.iloc[0]
    params = [c for c in rows.columns if c not in FAILURE_COLUMNS]
    where = ", ".join(f"{c}={row[c]}" for c in params)
    if row["error"]:
        return f"raised {row['error']} at {where}"
    return (f"{verdict.claim.label} {_estimate_text(row['value'], row['mcse'])} at {where} "
            f"(bound {_text(float(row['bound']))})")


def _method_rows(methods: Sequence[str], verdicts: Sequence[Verdict],
                 bands: pd.DataFrame, result: StudyResult) -> list[dict[str, Any]]:
    """Each method's claims (status, name) and its worst value against its bound or nominal.

    The worst value: where a claim about the method fails, its value that breaks it most;
    else its lowest coverage over the conditions of the coverage table (95%, two-sided)
    against the nominal 0.95, where it lies (the cell itself, read from ``result``, when the
    table has no condition that places it); else the value of a claim about it nearest the
    claim's bound.
    """
    rows = []
    for method in methods:
        claims = [v for v in verdicts if method in v.claim.methods]
        worst = next((f"{v.claim.name}: {text}" for v in claims if v.status == FAILS
                      and (text := _failing_value(v, method))), "")
        shade = FAILS if worst else ""
        mine = bands[bands["method"] == method] if not bands.empty else bands
        if not worst and not mine.empty:
            low = mine.loc[mine["min coverage"].idxmin()]
            where = ", ".join(f"{k}={low[k]}" for k in mine.columns
                              if k in (*_BAND_KEYS, "n", "n band"))
            if where:
                worst = (f"lowest coverage {_text(float(low['min coverage']))} at {where} "
                         f"(nominal 0.95)")
            else:  # no condition places it: the cell itself (a study of a few cells)
                query = _bands_query(set(result.parameters))
                worst = (f"lowest coverage "
                         f"{extreme(result, method, 'coverage', where=query)} (nominal 0.95)")
            shade = "under-covers" if low["min coverage"] < 0.95 - BAND_MARGIN else \
                "meets-nominal"
        if not worst:
            near = next((v.nearest for v in claims if v.nearest.get("method") == method), {})
            if near:
                worst = (f"{near['value']:.3g} at {near['where'] or 'the mean'} (bound "
                         f"{_text(float(near['bound']))})")
        rows.append({"method": method, "claims": [(v.claim.name, v.status) for v in claims],
                     "status": worst_status(claims) if claims else "no claims",
                     "worst": worst, "shade": shade})
    return rows


def _tidy_csv(results: Mapping[str, StudyResult], out: Path) -> tuple[list[str], str]:
    """Write results.csv piece by piece: the studies left out for their size, its SHA-256."""
    left_out = [name for name, r in results.items()
                if sum(g.size for g in r.groups) > TIDY_CSV_LIMIT]
    path = out / "results.csv"
    kept = [r for name, r in results.items() if name not in left_out]
    params = dict.fromkeys(p for r in kept for p in [
        *r.parameters, *(k for c in r.cells for k in c.params),
        *(k for g in r.groups for k in (*g.shared, *g.axes))])
    order = ["study", "position", *params, *FRAME_COLUMNS[2:]]
    with open(path, "w", newline="") as handle:
        header = True
        for frame in (f for r in kept for f in r.frames()):
            frame.reindex(columns=order).to_csv(handle, index=False, header=header)
            header = False
        if header:
            handle.write(",".join(order) + "\n")
    return left_out, hashlib.sha256(path.read_bytes()).hexdigest()


def _page_task(page: tuple[Any, ...]) -> tuple[dict[str, Any], dict[str, str]]:
    """`_study_page` of ``page`` (its arguments but ``written``), as a task of its own: its
    index row and the files it wrote."""
    written: dict[str, str] = {}
    (study, result, verdicts, identity, prov, reproduce, out, run_dir, summary, drawn, tables,
     rounds, cut) = page
    row = _study_page(study, result, verdicts, identity, prov, reproduce, out, run_dir, written,
                      summary, drawn, tables, rounds, cut)
    return row, written


def _pin_rows(studies: Sequence[Study], verdicts: Mapping[str, Sequence[Verdict]]
              ) -> list[dict[str, Any]]:
    """`studies.engine.pins.pin_table` of the run's studies, the methods they name only, each
    claim as ``(study, claim, its status on this run)``."""
    status = {(name, v.claim.name): v.status for name, found in verdicts.items()
              for v in found}
    named = {public for study in studies for mapped in study.estimator_methods.values()
             for public in ([mapped] if isinstance(mapped, str) else [p for _, p in mapped])}
    rows = []
    for row in pin_table(studies).itertuples():
        if row.method not in named:
            continue
        sides = []
        for side in PINS:
            labels = [label.removesuffix(" (full grid only)")
                      for label in getattr(row, side).split("; ") if label]
            sides.append([(*label.split(":", 1), status.get(tuple(label.split(":", 1)),
                                                             NOT_RUN)) for label in labels])
        rows.append({"method": row.method, "sides": sides, "missing": row.missing})
    return rows


def write_report(run_dir: str | Path | StoredRun, studies: Sequence[Study],
                 results: Mapping[str, StudyResult],
                 verdicts: Mapping[str, Sequence[Verdict]], *,
                 out: str | Path | None = None,
                 summaries: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
                 comparison: Comparison | None = None,
                 figures: Mapping[str, Sequence[str]] | None = None,
                 tables: Mapping[str, PageTables] | None = None,
                 pool: cf.Executor | None = None) -> Path:
    """Write the report of a run (see the module docstring); returns ``index.html``'s path.

    Parameters
    ----------
    run_dir : path or StoredRun
        The run directory (its store gives the provenance), or the run as read already
        (`studies.engine.reading.read_run`: its store is not opened again).
    studies : sequence of Study
        The studies of the run (their docstrings, figures and claims).
    results : mapping of str to StudyResult
        Their results (`studies.engine.results_from_store`).
    verdicts : mapping of str to sequence of Verdict
        Their verdicts (`studies.engine.evaluate_claims`).
    out : path, optional
        Where to write; default the run directory.
    summaries : mapping of str to rows, optional
        Each study's summary rows as `studies.report.write_tables` returned them (computed
        here when not given; a full grid's summary can take minutes).
    comparison : Comparison, optional
        The run compared with a baseline (`studies.report.compare`), shown on the index page
        and kept in report.json.
    figures : mapping of str to sequence of str, optional
        Studies' figures drawn already (`study_figure`, in other processes while the run
        went on), in order; the others are drawn here.
    tables : mapping of str to PageTables, optional
        Studies' `page_tables` computed already (in other processes); the others are
        computed here.
    pool : concurrent.futures.Executor, optional
        Local worker processes to write the study pages and ``results.csv`` in, side by side.
    """
    stored = run_dir if isinstance(run_dir, StoredRun) else read_run(run_dir, results=results)
    run_dir, identity, state = stored.directory, stored.identity, stored.state
    target = Path(out) if out is not None else run_dir
    (target / "figures").mkdir(parents=True, exist_ok=True)
    names = [s.name for s in studies]
    # the tidy table is the same bytes from any process: written beside the pages
    tidy = pool.submit(_tidy_csv, dict(results), target.resolve()) if pool is not None else None
    known = study_names()
    command = stored.provenance.command
    cut = stored.provenance.budget_cut
    prov = _provenance(stored, _reproduce(identity, command, names,
                                          f"reports/studies-{identity.grid_name}", known))
    written: dict[str, str] = {}
    pages = [(s, results[s.name], verdicts.get(s.name, ()), identity, prov,
              _reproduce(identity, command, [s.name], f"reports/{s.name}", known),
              target.resolve(),
              run_dir.resolve(), (summaries or {}).get(s.name), (figures or {}).get(s.name),
              (tables or {}).get(s.name), decided_rounds(stored.looks, s.name),
              budget_cut_lines({s.name: cut[s.name]} if s.name in cut else {}))
             for s in studies if s.name in results]
    # the pages are the same bytes from any process: written side by side where there is a pool
    rows = []
    for row, files in (pool.map if pool is not None else map)(_page_task, pages):
        rows.append(row)
        written.update(files)
    counts = {s: sum(v.status == s for found in verdicts.values() for v in found)
              for s in STATUSES}
    advice = advice_of([s for s in studies if s.name in results], verdicts)
    pins = _pin_rows([s for s in studies if s.name in results], verdicts)
    body = _template(_INDEX).render(
        studies=rows, grid=identity.grid_name, seed=identity.seed,
        counts=counts, not_run=[*budget_cut_lines(cut), *not_run_lines(verdicts)],
        advice=advice,
        provenance=_provenance_html(prov), budget=f"{SUITE_FALSE_ALARM:g}",
        claims=round(SUITE_FALSE_ALARM / claim_false_alarm()),
        share=f"{claim_false_alarm():.2g}",
        comparison=_comparison_html(comparison) if comparison is not None else None,
        incomplete="" if state.complete else state.describe(), pins=pins,
        pins_pinned=sum(not p["missing"] for p in pins))
    page = _template(_PAGE).render(title="evalcert study report", style=Markup(_STYLE),
                                          body=Markup(body))
    _write(target / "index.html", page, written)
    index = pd.DataFrame([{k: r[k] for k in ("name", "aim", "path", "cells", "tally",
                                             "status", "paper")} for r in rows])
    banner = "" if state.complete else f"This run is {state.describe()}.\n\n"
    opening = "\n".join([*advice_lines(advice), *budget_cut_lines(cut), *not_run_lines(verdicts)])
    _write(target / "index.md", "# evalcert study report\n\n" + banner
           + (opening + "\n\n" if opening else "") + _md_table(index)
           + "\n\n"
           + _md_table(pd.DataFrame({"field": list(prov), "value": list(prov.values())}))
           + "\n", written)
    _write(target / "summary.md", job_summary(
        {name: verdicts[name] for name in names if name in verdicts},
        grid=identity.grid_name, seed=identity.seed, budget=SUITE_FALSE_ALARM,
        state=state.describe(), comparison=comparison,
        papers={row["name"]: row["paper"] for row in rows}, advice=advice, cut=cut), written)
    left_out, written["results.csv"] = (tidy.result() if tidy is not None
                                        else _tidy_csv(results, target))
    report = {
        "provenance": prov,
        "grids": {name: grid.to_dict() for name, grid in identity.grids.items()},
        "studies": dict(identity.studies),
        "packages": dict(stored.provenance.packages or {}),
        "verdicts": {name: [v.to_row(name) for v in found] for name, found in verdicts.items()},
        "results_csv_left_out": left_out,
        "comparison": comparison.to_dict() if comparison is not None else None,
        "files": dict(sorted(written.items())),
        "tables": _table_hashes(run_dir, names),
        "timing": {"started": stored.provenance.started, "ended": stored.provenance.ended,
                   "wall_seconds": stored.provenance.wall_seconds,
                   "status": stored.provenance.status,
                   "resumes": [r.get("started") for r in stored.provenance.resumes]},
    }
    (target / "report.json").write_text(json.dumps(_plain(report), indent=2, allow_nan=False)
                                        + "\n")
    return target / "index.html"


COMPARISON_ROWS = 50  # changed values shown on the index page (report.json has all)


def _comparison_html(comparison: Comparison) -> dict[str, Any]:
    def table(frame: pd.DataFrame) -> Markup | str:
        return _html_table(frame, status_column="change" if "change" in frame else None) \
            if len(frame) else ""

    changes = comparison.changes.head(COMPARISON_ROWS)
    return {"summary": comparison.summary(), "notes": comparison.notes,
            "changes": table(changes), "claims": table(comparison.claims),
            "missing": table(comparison.missing), "added": table(comparison.added),
            "power": table(comparison.power)}


TABLE_SUFFIXES: tuple[str, ...] = (".csv", ".txt", ".summary.csv", ".summary.txt",
                                   ".claims.csv", ".claims.txt")


def _table_hashes(run_dir: Path, names: Sequence[str]) -> dict[str, str]:
    """The SHA-256 of each study table in the run directory (`studies.report.write_tables`)."""
    found = {}
    for name in names:
        for suffix in TABLE_SUFFIXES:
            path = run_dir / f"{name}{suffix}"
            if path.is_file():
                found[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return dict(sorted(found.items()))


def _plain(value: Any) -> Any:
    """JSON-ready: nan and inf as null, numpy scalars as Python numbers."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    if hasattr(value, "item"):
        return _plain(value.item())
    return value
