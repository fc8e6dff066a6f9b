"""Claims as test cases: ``pytest --evalcert-grid quick [--evalcert-study NAME ...]``.

A pytest plugin (registered through the ``pytest11`` entry point as ``evalcert``) that turns
a suite's claims into test items, so that every CI system shows each claim as a test result
(``pytest --junitxml``, which they all read). With ``--evalcert-grid``, the session's items
are the claims of the named studies (default: every discovered study), one item
``STUDY::CLAIM`` each; any other test collected is deselected. The first item runs the
studies as ``evalcert study run`` does (one run, stored in ``--evalcert-out`` or a temporary
directory, its tables and report written there), judges every claim at its share of the
suite's false-alarm budget, and each item then reports its own verdict:

* HOLDS: passes;
* FAILS: fails with the values that break the claim, worst first;
* INCONCLUSIVE: fails with its reason (a claim without the power to decide is no pass, as
  ``study run`` exits 1 on it);
* NOT RUN: skipped with its reason (no value in its region on this grid, or judged on other
  grids only).

Each item carries its status, detectable deviation and resolution as JUnit properties.
Without ``--evalcert-grid`` the plugin does nothing.
"""

from __future__ import annotations

import secrets
import tempfile
from pathlib import Path
from typing import Any

import pytest

__all__ = ["ClaimFailed", "ClaimItem", "pytest_addoption", "pytest_collection_modifyitems",
           "pytest_configure", "pytest_report_header"]

_FAILURES_SHOWN = 10
_SEED = pytest.StashKey[int]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("evalcert", "evalcert: a study suite's claims as test items")
    group.addoption("--evalcert-grid", choices=("quick", "full"), default=None,
                    help="collect the claims of the studies, judged on this grid, as the "
                         "session's test items")
    group.addoption("--evalcert-study", action="append", default=[], metavar="NAME",
                    help="a study name or module:ATTRIBUTE (repeatable; default every "
                         "discovered study)")
    group.addoption("--evalcert-seed", type=int, default=None, metavar="SEED",
                    help="root seed of the run (default a fresh one, shown in the header)")
    group.addoption("--evalcert-workers", type=int, default=None, metavar="N",
                    help="local worker processes (default the number of cores)")
    group.addoption("--evalcert-out", type=Path, default=None, metavar="DIR",
                    help="run directory for the store, tables and report (default a "
                         "temporary directory)")


class _SuiteRun:
    """The studies' run and verdicts, made once, when the first claim item runs."""

    def __init__(self, config: pytest.Config, names: list[str], grid: str) -> None:
        self.config, self.names, self.grid = config, names, grid
        self.verdicts: dict[str, dict[str, Any]] | None = None
        self.error = ""
        self.out: Path | None = None

    def verdict(self, study: str, claim: str) -> Any:
        if self.error:  # the run is made once: the other items report its error, not retry it
            raise ClaimFailed(f"the run behind the claims failed: {self.error}")
        if self.verdicts is None:
            try:
                self.verdicts = self._judge()
            except Exception as error:
                self.error = f"{type(error).__name__}: {error}"
                raise
        return self.verdicts[study][claim]

    def _judge(self) -> dict[str, dict[str, Any]]:
        from studies.pipeline import run_suite

        out = self.config.getoption("evalcert_out")
        self.out = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="evalcert-"))
        published = run_suite(self.names, grid=self.grid, rng=self.config.stash[_SEED],
                              workers=self.config.getoption("evalcert_workers"), out=self.out)
        return {name: {v.claim.name: v for v in found}
                for name, found in published.verdicts.items()}


class ClaimFailed(Exception):
    """A claim that fails or cannot decide: its message is the whole report of the item."""


class _Claims(pytest.Collector):
    """The parent of the claim items, so that their ids read ``evalcert::STUDY::CLAIM``."""

    def collect(self) -> list[pytest.Item]:
        return []  # the items are made at collection's end, with the studies known


class ClaimItem(pytest.Item):
    """One claim of one study, judged on the session's run."""

    def __init__(self, *, study: str, claim: str, suite_run: _SuiteRun, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.study, self.claim, self.suite_run = study, claim, suite_run

    def runtest(self) -> None:
        from studies.engine import FAILS, INCONCLUSIVE, NOT_RUN

        verdict = self.suite_run.verdict(self.study, self.claim)
        self.user_properties += [("status", verdict.status),
                                 ("detectable", f"{verdict.detectable:.6g}"),
                                 ("resolution", f"{verdict.claim.resolution:.6g}")]
        if verdict.status == NOT_RUN:
            pytest.skip(f"NOT RUN: {verdict.reason}")
        if verdict.status == INCONCLUSIVE:
            raise ClaimFailed(f"INCONCLUSIVE: {verdict.reason}")
        if verdict.status == FAILS:
            shown = verdict.failures.head(_FAILURES_SHOWN).to_string(
                index=False, float_format=lambda v: f"{v:.6g}")
            raise ClaimFailed(f"FAILS: {verdict.claim.statement}\nworst: {verdict.worst()} "
                              f"({len(verdict.failures)} of {verdict.compared} values)\n"
                              f"{shown}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, ClaimFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"evalcert claim {self.study}::{self.claim}"


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    grid = config.getoption("evalcert_grid")
    if grid is None:
        return
    from studies.suite import get_study, study_names

    names = list(dict.fromkeys(config.getoption("evalcert_study"))) or list(study_names())
    try:
        studies = [get_study(name) for name in names]
    except ValueError as error:
        raise pytest.UsageError(f"--evalcert-study: {error}") from None
    if items:
        config.hook.pytest_deselected(items=list(items))
    suite_run = _SuiteRun(config, names, grid)
    parent = _Claims.from_parent(session, name="evalcert", nodeid="evalcert")
    items[:] = [ClaimItem.from_parent(parent, name=f"{study.name}::{claim.name}",
                                      study=study.name, claim=claim.name,
                                      suite_run=suite_run)
                for study in studies for claim in study.claims]


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("evalcert_grid") is not None:
        seed = config.getoption("evalcert_seed")
        # a fresh seed short enough to type back in, shown in the header
        config.stash[_SEED] = secrets.randbelow(2**31) if seed is None else seed


def pytest_report_header(config: pytest.Config) -> str | None:
    grid = config.getoption("evalcert_grid")
    if grid is None:
        return None
    return (f"evalcert: claims judged on the {grid} grid, seed {config.stash[_SEED]} "
            f"(--evalcert-seed {config.stash[_SEED]} reproduces the run)")
