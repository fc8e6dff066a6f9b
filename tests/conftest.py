"""Test configuration: deterministic hypothesis runs in CI; the slow tier; one quick-suite run.

Tests that take long (the quick suite, a study's quick run, many processes or examples) are
marked ``slow``; every test that uses the `quick_run` fixture is marked here. ``tox -e tests``
runs the rest (``-m "not slow"``), ``tox -e tests-slow`` the slow ones (``-m slow``).
"""

import json
import os
import shutil
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import settings

from studies.cli.main import main
from studies.engine.provenance import SOURCES, git_state
from studies.engine.store import existing_store
from studies.suite import get_study, study_names

# CI replays the same examples every run (derandomize), so a failure is reproducible from
# the log; developers run the default randomized profile and find new counterexamples.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

ROOT = Path(__file__).resolve().parents[1]
QUICK_SEED = "20190"  # the seed of tox -e studies-quick and tox -e regression
# A finished quick run to use instead of running the suite again (tox -e tests-slow names
# the regression gate's run, made earlier in the same tox command).
QUICK_RUN_VARIABLE = "EVALCERT_QUICK_RUN"


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(items):
    for item in items:
        if "quick_run" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


def _newest_source_change() -> float:
    """Modification time of the newest source file (the parts of the tree a run records)."""
    paths = [ROOT / name for name in SOURCES]
    files = [p for path in paths for p in ([path] if path.is_file() else path.rglob("*"))
             if p.is_file() and "__pycache__" not in p.parts]
    return max(p.stat().st_mtime for p in files)


def _refusal(run_dir: Path) -> str | None:
    """Why ``run_dir`` is not a complete quick run of this source tree (None: it is).

    A run is of this tree when every part of it (its start and each resume) ran from the
    current commit, and either the tree and the run were clean or, both having uncommitted
    changes, the part started after the last change to a source file.
    """
    if not (run_dir / "report.json").is_file():
        return "it holds no report.json (the run did not finish)"
    try:
        store = existing_store(run_dir, name=QUICK_RUN_VARIABLE)
        try:
            meta = store.metadata()
        finally:
            store.close()
    except ValueError as error:
        return str(error)
    report = json.loads((run_dir / "report.json").read_text())
    expected = {name: get_study(name).version for name in study_names()}
    identity = meta["identity"]
    if (meta["status"], report["provenance"]["run"]) != ("complete", "complete"):
        return f"its run is {meta['status']}, not complete"
    if (identity["grid"], str(meta["seed"]), identity["methods"]) != ("quick", QUICK_SEED, []):
        return (f"it is not the quick suite on seed {QUICK_SEED} (grid {identity['grid']!r}, "
                f"seed {meta['seed']}, methods {identity['methods']})")
    if identity["studies"] != expected:
        return f"its studies and versions {identity['studies']} are not the registered {expected}"
    current = git_state()
    if current["git_commit"] is None:
        return "the source tree is not a git checkout, so the run's code cannot be checked"
    newest = _newest_source_change()
    for part in [meta, *meta.get("resumes", [])]:
        if part["git_commit"] != current["git_commit"]:
            return f"it ran from commit {part['git_commit']}, not {current['git_commit']}"
        if part["git_dirty"] != current["git_dirty"]:
            return (f"its uncommitted-changes flag is {part['git_dirty']}, this tree's "
                    f"{current['git_dirty']}")
        if current["git_dirty"] and datetime.fromisoformat(part["started"]).timestamp() < newest:
            return f"a source file changed after it started ({part['started']})"
    return None


@pytest.fixture(scope="session")
def quick_run(request, tmp_path_factory):
    """The quick suite (every registered study), run once through the command line.

    With ``EVALCERT_QUICK_RUN`` set, the run directory it names is used instead, once checked
    to be a complete quick run of this source tree (`_refusal`). The suite's own progress and
    summary are shown: it takes minutes.
    """
    terminal = request.config.pluginmanager.getplugin("capturemanager")
    given = os.environ.get(QUICK_RUN_VARIABLE)
    with terminal.global_and_fixture_disabled():
        if given:
            run_dir = Path(given).resolve()
            reason = _refusal(run_dir)
            if reason is not None:
                pytest.fail(f"{QUICK_RUN_VARIABLE}={given} cannot stand for the quick suite: "
                            f"{reason}. Run it again (tox -e regression) or unset "
                            f"{QUICK_RUN_VARIABLE}.", pytrace=False)
            print(f"\nquick_run: the quick suite's run in {run_dir}")
            return run_dir
        run_dir = tmp_path_factory.mktemp("quick") / "run"
        print(f"\nquick_run: running the quick suite (every registered study, a few minutes) "
              f"into {run_dir}", flush=True)
        status = main(["study", "run", "all", "--grid", "quick", "--seed", QUICK_SEED,
                       "--workers", "2", "--out", str(run_dir)])
    assert status == 0
    return run_dir


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# The flags of a sandboxed machine without network: no GPU, no background connections.
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"]


@pytest.fixture(scope="session")
def browser():
    """Debian's headless Chromium through Playwright, for the tests of pages (report and docs);
    skipped, saying why, where either is not installed (`.ci/run` installs chromium)."""
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="Playwright is not installed (pip install playwright)")
    with sync_api.sync_playwright() as playwright:
        found = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS,
                                           headless=True)
        yield found
        found.close()
