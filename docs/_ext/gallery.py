"""Sphinx extension: the gallery of studies, one page per study of ``studies.suite``.

At ``builder-inited`` it writes ``docs/gallery/index.rst`` and ``docs/gallery/<study>.rst``
(generated, not committed) from the discovered studies (their ADEMP docstring, grids, claims,
recommendations and figures) and from the committed reference verdicts in
``reports/reference/`` (``<study>.claims.csv`` and ``<study>.json``: the full-grid verdicts
and the run they were judged on). Nothing on these pages is typed by hand.

The figures come from the quick suite's run (``evalcert study run all --grid quick --seed
20190``): each study's report draws them as SVG, and the gallery shows those files. The
regression gate's run (``reports/regression``, which the test command makes just before the
docs) or an earlier build's (``docs/_build/quick-run``) is reused when it is complete, of the
quick grid and seed 20190, and was made from the commit checked out with a clean tree; else
the build makes one in ``docs/_build/quick-run`` (about 75 s on 2 cores), so a page never
shows figures of other code.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reports" / "reference"
GALLERY = ROOT / "docs" / "gallery"
FIGURES = GALLERY / "figures"
QUICK_RUN = ROOT / "docs" / "_build" / "quick-run"
GATE_RUN = ROOT / "reports" / "regression"
QUICK_SEED = 20190

_SPECIAL = "\\*`|_[]<>"


def text(value: object) -> str:
    """``value`` as reStructuredText inline text, every markup character escaped."""
    out = str(value).replace("\n", " ")
    for char in _SPECIAL:
        out = out.replace(char, "\\" + char)
    return out


def number(value: str) -> str:
    """A recorded number as people read it: three significant figures, or the text itself."""
    try:
        x = float(value)
    except ValueError:
        return value
    if math.isinf(x):
        return "infinite"
    if math.isnan(x):
        return ""
    return f"{x:.3g}"


def list_table(header: list[str], rows: list[list[str]], widths: list[int]) -> list[str]:
    lines = [
        ".. list-table::",
        "   :header-rows: 1",
        f"   :widths: {' '.join(str(w) for w in widths)}",
        "   :class: gallery-table",
        "",
    ]
    for row in [header, *rows]:
        for i, cell in enumerate(row):
            lines.append(("   * - " if i == 0 else "     - ") + (cell or " "))
    return [*lines, ""]


def heading(title: str, char: str) -> list[str]:
    return [title, char * len(title), ""]


def grid_lines(grid: Any) -> list[str]:
    rows = []
    for name, values in grid.parameters.items():
        values = list(values) if isinstance(values, list | tuple) else [values]
        shown = (
            ", ".join(str(v) for v in values)
            if len(values) <= 8
            else f"{len(values)} values, {values[0]} to {values[-1]}"
        )
        rows.append([f"``{name}``", text(shown)])
    lines = list_table(["parameter", "values"], rows, [20, 80])
    return [
        f"{grid.n_cells:,} cells, {grid.n_replicates:,} replicates per Monte Carlo cell.",
        "",
        *lines,
    ]


def read_reference(name: str) -> tuple[dict[str, dict[str, str]], dict[str, Any] | None]:
    claims_csv = REFERENCE / f"{name}.claims.csv"
    run_json = REFERENCE / f"{name}.json"
    if not claims_csv.exists():
        return {}, None
    with claims_csv.open(newline="", encoding="utf-8") as handle:
        verdicts = {row["claim"]: row for row in csv.DictReader(handle)}
    run = json.loads(run_json.read_text(encoding="utf-8")) if run_json.exists() else None
    return verdicts, run


def study_page(study: Any) -> tuple[str, dict[str, int]]:
    from studies.report.reference import would_take
    name = study.name
    verdicts, run = read_reference(name)
    first_line, _, rest = study.ademp.strip().partition("\n")
    lines = [f".. _gallery-{name}:", "", *heading(f"``{name}``", "="), text(first_line), ""]

    counts: dict[str, int] = {}
    for row in verdicts.values():
        counts[row["status"]] = counts.get(row["status"], 0) + 1

    lines += heading("Verdicts on the full grid", "~")
    if run is None:
        lines += [
            "No reference verdicts are recorded for this study yet "
            "(``evalcert study reference RUN_DIR`` records them).",
            "",
        ]
    else:
        counted = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        lines += [
            f"Judged on the study's ``{text(run['grid'])}`` grid (version {text(run['version'])}), "
            f"seed {text(run['seed'])}, run of commit ``{text(run['commit'][:12])}`` "
            f"({text(run['tree'])} tree), from {text(run['started'])} to {text(run['ended'])}; "
            f"claims judged at commit ``{text(run['claims_judged_at'][:12])}``. "
            f"Verdicts: {counted}. From ``reports/reference/{name}.claims.csv`` and "
            f"``{name}.json``; :doc:`../guide/reading-a-verdict` explains each column.",
            "",
        ]
    rows = []
    statements = []
    for claim in study.claims:
        row = verdicts.get(claim.name)
        statements.append(f"* **{text(claim.name)}**: {text(claim.statement)}")
        if row is None:
            rows.append([text(claim.name), "not recorded", "", "",
                         "not in the reference verdicts (a claim added since)"])
            continue
        unit = f" ({text(row['unit'].replace('_', ' '))})" if row.get("unit") else ""
        rows.append([
            text(claim.name),
            f"**{text(row['status'])}**",
            number(row["detectable"]),
            number(row["resolution"]) + unit,
            text((row["reason"] or (f"worst: {row['worst']}" if row["worst"] else ""))
                 + would_take(row.get("more_replicates"), row.get("more_core_seconds"))),
        ])
    lines += list_table(
        ["claim", "verdict", "detectable", "resolution", "worst value or reason"],
        rows,
        [24, 19, 14, 16, 27],
    )
    lines += heading("Claims", "~")
    lines += [*statements, ""]

    if study.recommendations:
        lines += heading("Recommendations", "~")
        for rec in study.recommendations:
            held = all(verdicts.get(c, {}).get("status") == "HOLDS" for c in rec.claims)
            state = "supported" if held else "withheld"
            lines += [
                f"* {text(rec.advice)} (resting on "
                + ", ".join(f"``{text(c)}``" for c in rec.claims)
                + f"; {state} by the reference verdicts)",
            ]
        lines.append("")

    lines += heading("Design (ADEMP)", "~")
    lines += [textwrap.dedent(rest).strip(), ""]

    lines += heading("Grids", "~")
    for grid_name in ("quick", "full"):
        if grid_name in study.grids:
            lines += heading(f"``{grid_name}``", "-")
            lines += grid_lines(study.grids[grid_name])

    lines += heading("Figures", "~")
    lines += [
        f"Drawn from the quick grid's run this build made (seed {QUICK_SEED}), not from the "
        "full grid of the verdicts above: the quick grid is smaller and its Monte Carlo "
        "values noisier. The full grid's figures are on the report page of its run "
        f"(``evalcert study run {name} --grid full --out reports/{name}``).",
        "",
    ]
    for index, figure in enumerate(study.figures, start=1):
        drawn = FIGURES / f"{name}-{index}.svg"
        if drawn.exists():
            lines += [f".. figure:: figures/{name}-{index}.svg", "   :width: 100%", "",
                      f"   Figure {index}. {text(figure.caption)}", ""]
        else:
            lines += [f"Figure {index} (not drawn on the quick grid). {text(figure.caption)}",
                      ""]
    return "\n".join(lines), counts


def _head() -> str:
    """The commit checked out, with " (tree clean)" when nothing differs from it."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    try:
        commit = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--", "estimators", "studies", "pyproject.toml")
    except (OSError, subprocess.CalledProcessError):
        return ""
    return "" if dirty else f"{commit} (tree clean)"


def _current(run: Path, head: str) -> bool:
    """Whether ``run`` is a complete quick run, seed `QUICK_SEED`, of the commit ``head``."""
    report = run / "report.json"
    if not head or not report.exists():
        return False
    found = json.loads(report.read_text(encoding="utf-8"))["provenance"]
    return (found.get("run") == "complete" and found.get("git commit") == head
            and found.get("grid") == "quick" and str(found.get("root seed")) == str(QUICK_SEED))


def quick_run() -> Path:
    """The quick suite's run of the source checked out (module docstring)."""
    head = _head()
    for run in (GATE_RUN, QUICK_RUN):
        if _current(run, head):
            return run
    shutil.rmtree(QUICK_RUN, ignore_errors=True)
    QUICK_RUN.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "studies.cli", "study", "run", "all", "--grid", "quick",
         "--seed", str(QUICK_SEED), "--workers", "2", "--out", str(QUICK_RUN)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    # 1: a claim failed or could not decide on the quick grid, which the figures still show
    if done.returncode not in (0, 1) or not (QUICK_RUN / "report.json").exists():
        raise RuntimeError(f"the quick suite's run for the gallery's figures failed "
                           f"(exit {done.returncode}): {done.stderr.strip()[-500:]}")
    return QUICK_RUN


def copy_figures(run: Path) -> None:
    """The run's figures into ``docs/gallery/figures/`` (files unchanged keep their time)."""
    FIGURES.mkdir(parents=True, exist_ok=True)
    for source in sorted((run / "figures").glob("*.svg")):
        _write(FIGURES / source.name, source.read_text(encoding="utf-8"))


def write_gallery() -> list[str]:
    from studies.suite import get_study, study_names

    GALLERY.mkdir(exist_ok=True)
    copy_figures(quick_run())
    names = list(study_names())
    rows = []
    for name in names:
        study = get_study(name)
        page, counts = study_page(study)
        _write(GALLERY / f"{name}.rst", page)
        summary = study.ademp.strip().splitlines()[0]
        shown = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "not recorded"
        rows.append([f":doc:`{name}`", text(summary), text(shown)])
    index = [
        *heading("Gallery of studies", "="),
        "One page per study of the suite (``evalcert study list``): its design in ADEMP form "
        "(aims, data-generating mechanisms, estimands, methods, performance measures), its "
        "claims with the verdicts recorded on its full grid in ``reports/reference/``, and "
        "its figures, drawn from the quick grid's run this build made. The pages are written "
        "by the documentation build from the studies, the reference verdicts and that run.",
        "",
        *list_table(["study", "what it tests", "reference verdicts"], rows, [22, 58, 20]),
        ".. toctree::",
        "   :hidden:",
        "",
        *(f"   {name}" for name in names),
        "",
    ]
    _write(GALLERY / "index.rst", "\n".join(index))
    return names


def _write(path: Path, content: str) -> None:
    # Unchanged pages keep their time stamp, so an incremental build rereads only what moved.
    if not path.exists() or path.read_text(encoding="utf-8") != content:
        path.write_text(content, encoding="utf-8")


def _builder_inited(app: Any) -> None:
    write_gallery()


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _builder_inited)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
