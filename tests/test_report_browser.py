"""The report pages in a real browser: headless Chromium opens them from disk.

Checks, as a reader's browser sees them: no console error, every figure (inline SVG) drawn
with a size, every image loaded, every link to a file of the report resolving; a screenshot of
each page is saved beside the report. Skipped, saying why, where Chromium or Playwright is not
installed (`.ci/run` installs Debian's chromium).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import urlparse

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# The flags of a sandboxed machine without network: no GPU, no background connections.
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="Playwright is not installed (pip install playwright)")
    with sync_api.sync_playwright() as playwright:
        found = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield found
        found.close()


def _open(browser, path: Path):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("requestfailed", lambda request: problems.append(f"failed: {request.url}"))
    page.goto(path.as_uri(), wait_until="load")
    return page, problems


@pytest.mark.parametrize("name", ["index", "coverage_proportion", "coverage_f1", "mean_bias"])
def test_page_opens_offline_with_every_figure_drawn(browser, quick_run, name):
    path = quick_run / f"{name}.html"
    page, problems = _open(browser, path)
    svgs = page.eval_on_selector_all(
        "figure svg", "els => els.map(e => e.getBoundingClientRect().width)")
    images = page.eval_on_selector_all(
        "img", "els => els.map(e => e.complete && e.naturalWidth > 0)")
    links = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
    page.screenshot(path=str(quick_run / f"screenshot-{name}.png"), full_page=True)
    page.close()
    assert problems == []
    assert all(images)
    if name != "index":
        assert svgs and all(width > 100 for width in svgs)
    for link in links:
        target = Path(urlparse(link).path)
        assert urlparse(link).scheme == "file" and target.exists(), link
    assert (quick_run / f"screenshot-{name}.png").stat().st_size > 10_000
