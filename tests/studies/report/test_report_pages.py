"""The report pages: ADEMP sections, escaping, byte-identical reruns, Markdown twins."""

from __future__ import annotations

import dataclasses
import html
import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from estimators import f1_ci
from studies.cli.main import main
from studies.engine import Grid, evaluate_claims, results_from_store, run
from studies.engine.findings import versus_paper
from studies.report import write_report
from studies.report.pages import TIMING_FIELDS, ademp_sections, untimed
from studies.suite import get_study, study_names

BINOMIAL = get_study("binomial_coverage")
SMALL = Grid({"n": [10, 30], "p": [0.1, 0.3, 0.5], "confidence_level": [0.95]}, n_replicates=2)


def _report(study, out: Path) -> Path:
    results = run([study], grid=SMALL, rng=1, workers=1, out=out)
    verdicts = {study.name: evaluate_claims(study.claims, results[study.name])}
    return write_report(out, [study], results, verdicts)


def test_every_string_from_data_or_configuration_is_escaped(tmp_path):
    evil = "<script>alert(1)</script>"
    study = dataclasses.replace(BINOMIAL, methods={**BINOMIAL.methods,
                                                   evil: BINOMIAL.methods["wilson"]})
    index = _report(study, tmp_path / "run")
    page = (tmp_path / "run" / "binomial_coverage.html").read_text()
    assert evil not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script" not in index.read_text() + page  # no script of any kind: offline pages


def test_pages_open_with_their_summary_then_figures_tables_and_design(quick_run):
    page = (quick_run / "coverage_proportion.html").read_text()
    headings = ['<section id="summary">', "<h2>Findings", '<nav class="toc">',
                '<h2 id="figures">Figures', '<h2 id="claims">Claims and verdicts',
                '<h2 id="results">Results', '<h2 id="ademp">Design (ADEMP)', "<h3>Aims",
                "<h3>Data-generating mechanisms", "<h3>Estimands", "<h3>Methods",
                "<h3>Performance measures", '<h2 id="legend">Legend',
                '<h2 id="provenance">Provenance']
    places = [page.index(h) for h in headings]
    assert places == sorted(places)
    for term in ("MCSE", "familywise error", "detectable", "LOSCI", "git commit",
                 "reproduce with", "root seed", "matplotlib"):
        assert term in page, term
    index = (quick_run / "index.html").read_text()
    for name in ("coverage_proportion", "mean_bias", "bias_error_rate"):
        assert f'href="{name}.html"' in index
    markdown = (quick_run / "coverage_proportion.md").read_text()
    assert markdown.startswith("# coverage_proportion") and "## Claims and verdicts" in markdown
    assert "](figures/coverage_proportion-1.svg)" in markdown


def test_report_json_hashes_every_file_it_lists(quick_run):
    import hashlib

    report = json.loads((quick_run / "report.json").read_text())
    assert report["files"] and "index.html" in report["files"]
    for name, digest in report["files"].items():
        assert hashlib.sha256((quick_run / name).read_bytes()).hexdigest() == digest, name
    assert set(report["verdicts"]) >= {"coverage_proportion", "mean_bias"}
    assert report["provenance"]["root seed"] == "20190"
    assert {"mean_bias.csv", "mean_bias.claims.csv", "coverage_proportion.summary.csv"} <= set(
        report["tables"])
    for name, digest in report["tables"].items():
        assert hashlib.sha256((quick_run / name).read_bytes()).hexdigest() == digest, name
    assert report["provenance"]["reproduce with"].startswith("evalcert study run ")
    assert report["provenance"]["reproduce with"].endswith(
        " --grid quick --seed 20190 --out reports/studies-quick")
    page = (quick_run / "mean_bias.html").read_text()  # each page: its study alone
    assert ("evalcert study run mean_bias --grid quick --seed 20190 --out reports/mean_bias"
            in page)


def test_the_reproducing_command_fits_how_the_run_was_made():
    from studies.engine.identity import RunIdentity
    from studies.report.pages import _reproduce
    from studies.suite import study_names

    known = study_names()
    named = RunIdentity(studies={}, grid="quick", grids={}, seed=7)
    command = "evalcert study run m:S --workers 2 --out /tmp/x --resume"
    assert _reproduce(named, command, ["s"], "out", known) == (
        "evalcert study run m:S --workers 2 --seed 7 --out out")
    assert _reproduce(named, command, ["mean_bias"], "reports/mean_bias", known) == (
        "evalcert study run mean_bias --grid quick --seed 7 --out reports/mean_bias")
    custom = RunIdentity(studies={}, grid=None, grids={}, seed=7)
    assert _reproduce(custom, command, ["mean_bias"], "x", known).startswith(
        "no single command: the grid was built")


@pytest.mark.slow
def test_the_same_run_gives_byte_identical_reports(tmp_path, monkeypatch):
    outs = [tmp_path / "a" / "run", tmp_path / "b" / "run"]
    for out in outs:  # the same command, in two folders (the command is part of the report)
        out.parent.mkdir()
        monkeypatch.chdir(out.parent)
        assert main(["study", "run", "binomial_coverage", "mean_bias", "bias_f1", "--seed", "5",
                     "--workers", "1", "--out", "run"]) == 0
    files = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*")
                   if p.is_file() and not p.name.startswith("run.sqlite"))
    assert len(files) > 20
    for name in files:
        a, b = (out / name for out in outs)
        if name.name == "report.json":  # the pages' hashes differ by their timing rows
            first, second = json.loads(a.read_text()), json.loads(b.read_text())
            for report in (first, second):
                report.pop("timing"), report.pop("files")
                for field in TIMING_FIELDS:
                    report["provenance"].pop(field)
            assert first == second
        else:
            assert _untimed(a.read_bytes()) == _untimed(b.read_bytes()), name


def _untimed(data: bytes) -> bytes:
    """A page without its timing rows (the run's start, end and wall time)."""
    return untimed(data.decode("utf-8", errors="replace")).encode()


def test_study_report_command_writes_elsewhere_and_reports_verdicts(quick_run, tmp_path,
                                                                    capsys):
    assert main(["study", "report", str(quick_run), "--out", str(tmp_path / "r")]) == 0
    assert (tmp_path / "r" / "index.html").exists()
    assert main(["study", "report", str(tmp_path / "nothing")]) == 2
    assert "must hold an evalcert run" in capsys.readouterr().err


def test_ademp_sections_are_read_from_the_study_docstring():
    import studies.suite.mean_bias as module

    titles = [title for title, _ in ademp_sections(module.__doc__ or "")]
    assert titles == ["Aims", "Data-generating mechanisms", "Estimands", "Methods",
                      "Performance measures"]


@pytest.mark.parametrize("name", ["index.html", "results.csv", "report.json"])
def test_the_main_artefacts_exist(quick_run, name):
    assert (quick_run / name).stat().st_size > 0


def test_coverage_bands_say_where_a_method_meets_nominal():
    from studies.engine import CellResult, Measure, Performance, StudyResult
    from studies.report.pages import _bands_pivot, _coverage_bands

    def cell(i, n, method, value, mcse=0.0):
        perf = Performance({"coverage": Measure(value, mcse)}, None if mcse == 0 else 1000)
        return CellResult("s", str(i), i, {"n": n}, "exact" if mcse == 0 else "monte-carlo",
                          {method: perf}, {}, b"")

    cells = (cell(0, 10, "a", 0.90), cell(1, 20, "a", 0.92), cell(2, 50, "a", 0.955),
             cell(3, 10, "b", 0.99), cell(4, 500, "b", 0.935, mcse=0.005))
    bands = _coverage_bands(StudyResult("s", cells))
    found = {(r["method"], r["n"]): (r["cells"], r["verdict"]) for _, r in bands.iterrows()}
    assert found == {("a", 10): (1, "under-covers"), ("a", 20): (1, "under-covers"),
                     ("a", 50): (1, "meets nominal"), ("b", 10): (1, "over-covers"),
                     ("b", 500): (1, "meets nominal")}
    texts, verdicts = _bands_pivot(bands)
    assert texts.columns.tolist() == ["n", "a", "b"] and texts["n"].tolist() == [10, 20, 50, 500]
    assert texts.iloc[0].tolist() == [10, "0.9000 (0) under", "0.9900 (0) over"]
    assert verdicts.iloc[3].tolist() == ["", "", "meets nominal"]
    # more than EXACT_N_LIMIT values of n: bands of n
    many = tuple(cell(i, n, "a", 0.95) for i, n in enumerate(range(5, 65, 5)))
    banded = _coverage_bands(StudyResult("s", (*many, cells[4])))
    assert banded[["n band", "cells"]].values.tolist() == [["1-29", 5], ["30-99", 7],
                                                           [">= 300", 1]]
    more = tuple(cell(i, n, "a", 0.95) for i, n in enumerate([500, 150, 40, *range(1, 12)]))
    texts, _ = _bands_pivot(_coverage_bands(StudyResult("s", more)))
    assert texts["n band"].astype(str).tolist() == ["1-29", "30-99", "100-299", ">= 300"]
    # a cell without a coverage (its method failed) leaves the mean undefined, not low
    failed = _coverage_bands(StudyResult("s", (*cells[:2], cell(5, 10, "a", math.nan))))
    assert failed[["n", "cells", "verdict"]].values.tolist() == [[10, 2, "undefined"],
                                                                 [20, 1, "under-covers"]]
    assert _bands_pivot(failed)[0].iloc[0].tolist() == [10, "nan (0) undefined"]


def test_a_report_of_an_incomplete_run_says_so_on_every_page(tmp_path, capsys):
    import sqlite3

    out = tmp_path / "run"
    _report(BINOMIAL, out)
    assert "This run is" not in (out / "index.html").read_text()
    with sqlite3.connect(out / "run.sqlite") as db:
        db.execute("DELETE FROM cells WHERE position >= 4")
    assert main(["study", "report", str(out)]) == 1
    assert "INCOMPLETE" in capsys.readouterr().out
    for page in ("index.html", "binomial_coverage.html", "binomial_coverage.md", "index.md"):
        text = (out / page).read_text()
        assert "This run is incomplete: 4 of 6 cells finished" in text, page
    assert json.loads((out / "report.json").read_text())["provenance"]["run"].startswith(
        "incomplete: 4 of 6 cells")


def test_docstring_prose_keeps_code_and_bold_properly_nested():
    from studies.report.pages import _prose

    found = str(_prose("a ``x**y`` and **b** c ``z**`` **bold ``q``** <e> `s`"))
    assert found == ("<p>a <code>x**y</code> and <strong>b</strong> c <code>z**</code> "
                     "<strong>bold <code>q</code></strong> &lt;e&gt; <code>s</code></p>")


def test_findings_quote_each_claims_value_nearest_its_bound_from_the_run(tmp_path):
    _report(BINOMIAL, tmp_path / "run")
    frame = run([BINOMIAL], grid=SMALL, rng=1, workers=1, out=tmp_path / "again")[
        BINOMIAL.name].to_frame()
    coverage = frame[frame["measure"] == "coverage"]
    # Wald, at most nominal - 0.05 where n p <= 2 or n (1 - p) <= 2: its largest coverage there
    wald = coverage[(coverage["method"] == "wald")
                    & ((coverage["n"] * coverage["p"] <= 2)
                       | (coverage["n"] * (1 - coverage["p"]) <= 2))]
    nearest_wald = wald.loc[wald["value"].idxmax()]
    # Wilson, its mean over p within 0.02 of nominal at each n: the mean furthest from 0.95
    means = coverage[coverage["method"] == "wilson"].groupby("n")["value"].mean()
    furthest = (means - 0.95).abs().idxmax()
    page = (tmp_path / "run" / "binomial_coverage.html").read_text()
    findings = page[page.index("<h2>Findings"):page.index('<nav class="toc">')]
    assert (f"wald at n={nearest_wald['n']}, p={nearest_wald['p']}, "
            f"confidence_level=0.95, coverage {nearest_wald['value']:.3f} (exact) against at "
            f"most 0.900") in findings
    assert f"wilson at n={furthest}, confidence_level=0.95, coverage {means[furthest]:.3f}" \
        in findings
    # then the study's own sentences, also read from the run
    own = BINOMIAL.findings(results_from_store(tmp_path / "again")[BINOMIAL.name], [])
    assert own and findings.count("<li>") == len(BINOMIAL.claims) + len(own)
    for sentence in own:
        assert html.escape(sentence, quote=False) in findings
    markdown = (tmp_path / "run" / "binomial_coverage.md").read_text()
    assert "## Findings" in markdown and f"coverage {means[furthest]:.3f}" in markdown


def test_the_job_summary_lists_the_claims_that_fail(tmp_path):
    wald = BINOMIAL.claims[1]
    restated = dataclasses.replace(BINOMIAL, claims=(
        BINOMIAL.claims[0], dataclasses.replace(wald, name="wald-far-short", margin=-0.5)))
    _report(restated, tmp_path / "run")
    digest = (tmp_path / "run" / "summary.md").read_text()
    assert "**1 of 2 claims judged fail or cannot decide**" in digest
    assert "1 hold, 0 inconclusive, 1 fail, 0 not run" in digest
    assert "| binomial_coverage | FAILS | 1 hold, 0 inconclusive, 1 fail, 0 not run |" in digest
    assert "| binomial_coverage | wald-far-short | FAILS | wald at n=" in digest
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert "summary.md" in report["files"]


def test_the_summary_and_index_say_which_claims_were_not_run_and_why(tmp_path):
    full_only = dataclasses.replace(BINOMIAL.claims[1], name="judged-on-full", grids=("full",))
    study = dataclasses.replace(BINOMIAL, claims=(BINOMIAL.claims[0], full_only))
    results = run([study], grid="quick", rng=1, workers=1, out=tmp_path / "run")
    verdicts = {study.name: evaluate_claims(study.claims, results[study.name], grid="quick")}
    write_report(tmp_path / "run", [study], results, verdicts)
    said = ("Not run here: 1 claim, judged on the full grid only (their verdicts on the full "
            "grid: reports/reference/): binomial_coverage 1.")
    assert said in (tmp_path / "run" / "summary.md").read_text()
    assert said in (tmp_path / "run" / "index.html").read_text()


def _one_number_off(result, summary):
    return [f"Table 9: {versus_paper(0.5, 0.0, 0.4)}."]


def test_a_study_whose_paper_numbers_are_not_reproduced_is_not_shown_plain_green(tmp_path):
    study = dataclasses.replace(BINOMIAL, findings=_one_number_off)
    _report(study, tmp_path / "run")
    index = (tmp_path / "run" / "index.html").read_text()
    counted = "0 reproduced, 1 not reproduced, 0 too imprecise"
    assert f'<td class="HOLDS-but-not-reproduced">HOLDS</td>\n<td>{counted}</td>' in index
    assert f"| {counted} |" in (tmp_path / "run" / "summary.md").read_text()
    plain = tmp_path / "plain"
    _report(BINOMIAL, plain)
    assert '<td class="HOLDS">HOLDS</td>\n<td></td>' in (plain / "index.html").read_text()
    # the pages' own style sheet is not escaped as data is (its child selector applies)
    for page in ("index.html", "binomial_coverage.html"):
        text = (plain / page).read_text()
        assert "details>summary{" in text and "&gt;summary" not in text


def _shrunk(ci):
    """An interval shrunk to half its width about its middle: it under-covers."""
    def shrunk(successes, trials, *, confidence_level):
        low, high = ci(successes, trials, confidence_level=confidence_level)
        middle, half = (low + high) / 2, (high - low) / 4
        return middle - half, middle + half
    return shrunk


def test_the_index_shows_a_failing_method_with_its_worst_value(tmp_path):
    import functools

    from estimators import proportion_ci

    broken = BINOMIAL.wrap_method(_shrunk(functools.partial(proportion_ci, method="wilson")))
    study = dataclasses.replace(BINOMIAL, methods={**BINOMIAL.methods, "wilson": broken})
    index = _report(study, tmp_path / "run").read_text()
    rows = re.findall(r"<tr>\s*(?:<td rowspan[^>]*>.*?</td>)?<td>(\w+)</td>\s*"
                      r'<td class="([\w-]+)">([\w ]+)</td>.*?<td class="([\w-]*)">(.*?)</td></tr>',
                      index, flags=re.S)
    by_method = {m: (cls, status, shade, worst) for m, cls, status, shade, worst in rows}
    assert by_method["wilson"][:2] == ("FAILS", "FAILS")
    assert by_method["wilson"][2] == "FAILS"
    assert by_method["wilson"][3].startswith("wilson-mean-near-nominal: coverage ")
    # the value quoted is the one the verdict found breaking the claim most
    verdict = evaluate_claims(study.claims, results_from_store(tmp_path / "run")[
        "binomial_coverage"])[0]
    worst = verdict.failures.iloc[0]
    assert f"coverage {worst['value']:.3g} (exact)" in by_method["wilson"][3]
    assert by_method["wald"][:2] == ("HOLDS", "HOLDS")
    assert 'href="binomial_coverage.html#claim-wilson-mean-near-nominal"' in index


def test_a_study_without_claims_gets_its_page(tmp_path):
    index = _report(dataclasses.replace(BINOMIAL, claims=()), tmp_path / "run").read_text()
    page = (tmp_path / "run" / "binomial_coverage.html").read_text()
    assert "Claims: none stated." in page and 'id="claim-' not in page
    assert ">no claims</td>" in index
    assert "## Claims and verdicts" in (tmp_path / "run" / "binomial_coverage.md").read_text()


def test_a_study_whose_summary_and_findings_raise_still_gets_its_verdicts_and_page(tmp_path):
    # a study's own reporting code failing is said where its output would be; the claims,
    # the other tables and the page are written all the same
    from studies.pipeline import run_suite

    def broken(*args):
        raise ZeroDivisionError("nothing to divide")

    study = dataclasses.replace(get_study("mean_bias"), summary=broken, findings=broken)
    grid = Grid({"distribution": ["exponential"], "n": [10, 20]}, n_replicates=50)
    published = run_suite([study], grid=grid, out=tmp_path / "run", rng=7, workers=1)
    assert published.verdicts["mean_bias"]
    summary = (tmp_path / "run" / "mean_bias.summary.csv").read_text()
    assert "not computed: ZeroDivisionError: nothing to divide" in summary
    page = (tmp_path / "run" / "mean_bias.html").read_text()
    assert "could not be written from this run: ZeroDivisionError: nothing to divide" in page
    assert "not computed: ZeroDivisionError" in page


def test_the_index_shows_what_pins_each_method_with_its_verdicts(tmp_path):
    from studies.pipeline import run_suite

    study = get_study("binomial_coverage")
    published = run_suite([study], grid="quick", out=tmp_path / "run", rng=7, workers=1)
    assert published.verdicts["binomial_coverage"]
    page = (tmp_path / "run" / "index.html").read_text()
    section = page[page.index('<h2 id="pins">'):page.index("<p>Tables:")]
    rows = {re.search(r"<td>([^<]+)</td>", row).group(1): row
            for row in section.split("<tr>")[2:]}
    # the study names two public methods: only they are listed, with this run's verdicts
    assert sorted(rows) == ["proportion_ci:wald", "proportion_ci:wilson"]
    assert ('class="badge HOLDS" href="binomial_coverage.html#claim-wilson-mean-near-nominal"'
            in rows["proportion_ci:wilson"])
    assert rows["proportion_ci:wald"].rstrip().endswith("<td>validity, efficiency</td></tr>")
    assert "1 of 2 are\npinned from both sides" in section


def _jaccard_cp_six_points_low(tp, fp, fn, tn, *, confidence_level, **options):
    """jaccard-clopper-pearson computed at a level 6 points below the one asked for: it
    covers about 4 points below nominal."""
    return f1_ci(tp, fp, fn, tn, method="jaccard-clopper-pearson",
                 confidence_level=confidence_level - 0.06, **options)


def test_a_recommendation_is_shown_only_while_its_claims_hold(tmp_path):
    from studies.suite import coverage_f1
    from studies.suite import coverage_f1_exact as exact

    grid = Grid({"design": ["srs"], "prevalence": [0.15, 0.5], "f1": [0.7], "n": [100, 200],
                 "confidence_level": [0.95]}, n_replicates=2)
    advice = "Certify F1 from a simple random test sample with jaccard-clopper-pearson"

    def report(study, out):
        results = run([study], grid=grid, rng=1, workers=1, out=out)
        verdicts = {study.name: evaluate_claims(study.claims, results[study.name])}
        write_report(out, [study], results, verdicts)
        return (out / "index.html").read_text(), (out / "summary.md").read_text()

    for page in report(exact.STUDY, tmp_path / "right"):
        assert advice in page.split("Withheld on this run")[0]
    broken = dataclasses.replace(exact.STUDY, methods={
        **exact.STUDY.methods,
        "jaccard-clopper-pearson": coverage_f1.wrap_method(_jaccard_cp_six_points_low),
        "jaccard-clopper-pearson-losci": coverage_f1.wrap_method(_jaccard_cp_six_points_low,
                                                                 "greater")})
    index, summary = report(broken, tmp_path / "broken")
    for page in (index, summary):
        shown, withheld = page.split("Withheld on this run")
        assert advice not in shown
        assert advice in withheld and "clopper-pearson-never-below-nominal FAILS" in withheld


def test_the_worst_coverage_keeps_its_cell_where_no_condition_places_it(tmp_path):
    from studies.report.pages import _method_rows

    result = run([BINOMIAL], grid=SMALL, rng=1, workers=1)[BINOMIAL.name]
    bands = pd.DataFrame({"method": ["wald"], "min coverage": [0.5]})  # no design, no n
    (row,) = _method_rows(["wald"], [], bands, result)
    assert re.fullmatch(r"lowest coverage \S+ \(exact\) at n=\d+, p=\S+, "
                        r"confidence_level=0.95 \(nominal 0.95\)", row["worst"]), row["worst"]


def test_tested_names_the_methods_that_ran_and_those_that_did_not(tmp_path):
    study = dataclasses.replace(BINOMIAL, applies=lambda method, params: method != "wald")
    _report(study, tmp_path / "run")
    page = (tmp_path / "run" / "binomial_coverage.md").read_text()
    assert "of the methods wilson (not run on this grid: wald)." in page


def test_each_page_answers_the_protocol_items_or_says_not_stated(tmp_path):
    _report(dataclasses.replace(BINOMIAL, ademp=""), tmp_path / "bare")
    bare = (tmp_path / "bare" / "binomial_coverage.md").read_text()
    protocol = bare.split("### As a protocol")[1].split("## Legend")[0]
    assert "| Aims | not stated |" in protocol and "| Estimands | not stated |" in protocol
    assert "| Repetitions | none: every outcome is enumerated" in protocol
    assert "| Random numbers | root seed 1; none drawn (exact) |" in protocol
    assert "judged here do |" in protocol
    _report(BINOMIAL, tmp_path / "full")
    stated = (tmp_path / "full" / "binomial_coverage.md").read_text()
    assert "| Aims | not stated |" not in stated.split("### As a protocol")[1]


def test_the_protocol_table_shows_the_studys_code_spans_as_code_and_escapes_the_rest(tmp_path):
    ademp = ("Aims\n    Whether ``x < y`` holds for **every** cell.\n"
             "Estimands\n    ``p``, `q` and <b>r</b>.\n")
    _report(dataclasses.replace(BINOMIAL, ademp=ademp), tmp_path / "run")
    page = (tmp_path / "run" / "binomial_coverage.html").read_text()
    protocol = page.split('id="protocol"')[1].split('id="legend"')[0]
    assert ("Whether <code>x &lt; y</code> holds for <strong>every</strong> cell."
            in protocol)
    assert "<code>p</code>, <code>q</code> and &lt;b&gt;r&lt;/b&gt;." in protocol
    assert "``" not in protocol and "<b>" not in protocol


def test_a_wide_table_says_that_more_columns_lie_aside_and_opens_with_the_verdicts(tmp_path):
    _report(BINOMIAL, tmp_path / "run")
    page = (tmp_path / "run" / "binomial_coverage.html").read_text()
    claims = page.split('id="claims"')[1]
    assert '<p class="cue">17 columns: where the table is wider than the page' in claims
    head = re.search(r"<thead><tr>(.*?)</tr></thead>", claims).group(1)
    assert head.startswith("<th>status</th><th>claim</th><th>worst</th><th>reason</th>"
                           "<th>detectable (unit)</th><th>resolution (unit)</th>")
    # the round each claim was decided at and the replicates it compared close the table
    assert head.endswith("<th>k</th><th>rounds</th><th>replicates</th>")


def test_a_caption_says_which_of_its_lines_did_not_run(tmp_path):
    figure = BINOMIAL.figures[0]
    named = dataclasses.replace(figure, options={**figure.options,
                                                 "methods": ("wald", "wilson")})
    study = dataclasses.replace(BINOMIAL, figures=(named,),
                                applies=lambda method, params: method != "wald")
    _report(study, tmp_path / "run")
    page = (tmp_path / "run" / "binomial_coverage.md").read_text()
    assert f"{figure.caption} (Not run on this grid, so not drawn: wald.)" in page
    _report(dataclasses.replace(BINOMIAL, figures=(named,)), tmp_path / "all")
    assert "Not run on this grid" not in (tmp_path / "all" / "binomial_coverage.md").read_text()


def test_a_page_says_what_its_grid_left_out_of_the_declared_ones(tmp_path):
    _report(BINOMIAL, tmp_path / "run")  # SMALL: n 10, 30 and p 0.1, 0.3, 0.5
    page = (tmp_path / "run" / "binomial_coverage.md").read_text()
    (line,) = [t for t in page.splitlines() if t.startswith("Not tested on this grid: ")]
    full = BINOMIAL.grids["full"].parameters
    left = [n for n in full["n"] if n not in (10, 30)]
    assert f"n {', '.join(str(n) for n in left[:8])}" in line and "(the full grid)" in line


@pytest.mark.parametrize("name", study_names())
def test_every_recommendation_rests_on_claims_its_study_states(name):
    study = get_study(name)
    stated = {c.name for c in study.claims}
    for advice in study.recommendations:
        assert set(advice.claims) <= stated, (name, advice.advice, set(advice.claims) - stated)
