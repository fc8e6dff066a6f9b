"""The report pages in a real browser: headless Chromium opens them from disk.

Checks, as a reader's browser sees them at 1,280 px: no console error, no page wider than the
window, every figure (inline SVG) drawn with a size, every image loaded, every link to a file
of the report and every anchor resolving; screenshots of the index and two pages are saved
beside the report (``screenshots/``; ``reports/screenshots/`` keeps copies, and the README
shows the index's). Skipped, saying why, where Chromium or Playwright is not
installed (`.ci/run` installs Debian's chromium).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse


def _open(browser, path: Path):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("requestfailed", lambda request: problems.append(f"failed: {request.url}"))
    page.goto(path.as_uri(), wait_until="load")
    return page, problems


def _pages(run: Path) -> list[str]:
    return sorted(path.stem for path in run.glob("*.html"))


# The pages whose screenshots are kept (reports/screenshots/; the README shows the index's).
SHOWN = ("index", "coverage_f1", "coverage_f1_exact", "power_calibration")


def test_every_page_reads_at_1280_px_with_its_contents_resolving(browser, quick_run):
    """Index and every study page: no horizontal overflow, every figure drawn, every link and
    every anchor of the table of contents resolving, no console error."""
    pages = _pages(quick_run)
    assert "index" in pages and len(pages) >= 15
    shots = quick_run / "screenshots"
    shots.mkdir(exist_ok=True)
    for name in pages:
        page, problems = _open(browser, quick_run / f"{name}.html")
        width = page.evaluate("document.documentElement.scrollWidth")
        svgs = page.eval_on_selector_all(
            "figure svg", "els => els.map(e => e.getBoundingClientRect().width)")
        # each figure as wide as the column it stands in
        column = page.evaluate("document.body.clientWidth")
        fill = page.eval_on_selector_all(
            "figure svg", "els => els.map(e => e.getBoundingClientRect().width"
                          " / e.parentElement.getBoundingClientRect().width)")
        images = page.eval_on_selector_all(
            "img", "els => els.map(e => e.complete && e.naturalWidth > 0)")
        links = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
        anchors = page.eval_on_selector_all(
            "nav.toc a, a[href*='#']", "els => els.map(e => e.getAttribute('href'))")
        hidden = page.evaluate(
            """() => [...document.querySelectorAll('.scroll')]
                 .filter(box => box.scrollWidth > box.clientWidth + 1)
                 .filter(box => !(box.previousElementSibling
                                  && box.previousElementSibling.classList.contains('cue')))
                 .map(box => box.querySelector('th') ? box.querySelector('th').textContent
                                                     : '?')""")
        missing = page.evaluate(
            """hrefs => hrefs.filter(h => h.startsWith('#'))
                             .filter(h => !document.getElementById(h.slice(1)))""", anchors)
        if name in SHOWN:
            page.screenshot(path=str(shots / f"{name}.png"), full_page=False)
        page.close()
        assert problems == [], name
        assert width <= 1280, (name, width)
        assert hidden == [], (name, "a table wider than its box without a cue", hidden)
        assert all(images), name
        if name != "index":
            assert svgs and all(width > 100 for width in svgs), name
            assert all(share > 0.99 for share in fill), (name, fill)
            assert all(width > 0.8 * column for width in svgs), (name, svgs, column)
        assert missing == [], (name, missing)
        for link in links:
            target = Path(urlparse(link).path)
            assert urlparse(link).scheme == "file" and target.exists(), link
            fragment = urlparse(link).fragment
            if fragment and target.suffix == ".html":  # a claim's anchor on another page
                assert f'id="{fragment}"' in target.read_text(), link
    assert all((shots / f"{name}.png").stat().st_size > 10_000 for name in SHOWN)


def test_a_summary_page_of_results_made_elsewhere_reads_at_1280_px(browser, tmp_path):
    """`evalcert summarise --out`'s page: no overflow, no console error, wide tables cued,
    every anchor resolving, data escaped (a method named like markup shows as text)."""
    import numpy as np
    import pandas as pd

    from studies.engine import Claim
    from studies.engine.summary import summarise
    from studies.report.summary_page import write_summary

    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"n": np.repeat([20, 80], 400), "method": np.tile(["a", "<i>b"], 400),
                          "b": 0.5 + rng.normal(0, 0.1, 800), "se": 0.1})
    frame.loc[3, "b"] = np.nan
    claim = Claim("a-unbiased", "a is unbiased within 0.05.", ("a",), "bias", "within",
                  margin=0.05, resolution=0.05)
    summary = summarise(frame, estimate="b", se="se", true=0.5, method="method", by=["n"],
                        claims=[claim])
    written = write_summary(summary, tmp_path, source="results.csv")
    page, problems = _open(browser, Path(written["html"]))
    width = page.evaluate("document.documentElement.scrollWidth")
    hidden = page.evaluate(
        """() => [...document.querySelectorAll('.scroll')]
             .filter(box => box.scrollWidth > box.clientWidth + 1)
             .filter(box => !(box.previousElementSibling
                              && box.previousElementSibling.classList.contains('cue')))
             .length""")
    text = page.inner_text("body")
    page.close()
    assert problems == [] and width <= 1280 and hidden == 0
    assert "<i>b" in text and "Claims: 1 hold" in text and "1 row left out" in text
