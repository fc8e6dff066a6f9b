"""Finding studies: the suite's own modules, installed packages, and import paths.

Studies are discovered, not listed:

* every module of `studies.suite` (its directories on ``studies.suite.__path__``) that binds a
  `Study` to the module-level name ``STUDY`` is the study of that name (other `Study` objects
  a module builds, such as a variant for another data source, are not registered);
* an installed package registers studies through the entry-point group ``evalcert.studies``:
  ``name = "package.module:ATTRIBUTE"`` naming a `Study` (its ``name`` must equal the entry
  point's name);
* on the command line, ``package.module:ATTRIBUTE`` names a `Study` anywhere.

Modules are imported only when a study is asked for by name or the whole list is wanted.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import pkgutil
from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import Any

from studies.engine.claims import Verdict, evaluate_claims
from studies.engine.design import Study
from studies.engine.loading import load_study
from studies.engine.reading import StoredRun
from studies.engine.results import StudyResult

__all__ = ["ENTRY_POINT_GROUP", "SUITE_FALSE_ALARM", "claim_false_alarm", "get_study", "judge",
           "judge_claim", "stored_studies", "study_names", "study_sources", "suite_study_names"]

# The probability that a run of the suite's own studies (`suite_study_names`) shows a FAILS
# verdict on Monte Carlo noise alone when every claim is true, split equally over their claims.
SUITE_FALSE_ALARM = 0.01

# Installed packages name their studies in this entry-point group.
ENTRY_POINT_GROUP = "evalcert.studies"

# Modules of studies.suite that are machinery, not studies.
_NOT_STUDIES = frozenset({"registry"})


def _suite_modules() -> dict[str, str]:
    """Name -> import path of every public module in `studies.suite`'s directories."""
    suite = importlib.import_module("studies.suite")
    return {info.name: f"studies.suite.{info.name}"
            for info in sorted(pkgutil.iter_modules(suite.__path__), key=lambda i: i.name)
            if not info.name.startswith("_") and info.name not in _NOT_STUDIES
            and not info.ispkg}


def _module_study(module: str) -> Study | None:
    """The module's ``STUDY``, or None when it binds none (a helper module of the suite)."""
    found = getattr(importlib.import_module(module), "STUDY", None)
    if found is not None and not isinstance(found, Study):
        raise ValueError(f"`STUDY` of module {module} must be a Study; got "
                         f"{type(found).__name__}.")
    return found


def _entry_points() -> dict[str, str]:
    """Name -> ``module:ATTRIBUTE`` of the studies installed packages register."""
    return {point.name: point.value
            for point in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def study_sources() -> dict[str, str]:
    """Every discovered study's name and where it is defined (``module:ATTRIBUTE``), sorted.

    Imports each module of `studies.suite` to see whether it defines a study (cached); the
    installed packages' studies are read from their entry points without importing them.

    Raises
    ------
    ValueError
        When a suite module's ``STUDY`` is named unlike its module, or an installed package
        registers a name the suite already has.
    """
    found: dict[str, str] = {}
    for name, module in _suite_modules().items():
        study = _module_study(module)
        if study is None:
            continue
        if study.name != name:
            raise ValueError(f"`name` of the study in {module} must be its module's name "
                             f"{name!r}; got {study.name!r}.")
        found[name] = f"{module}:STUDY"
    for name, path in _entry_points().items():
        if name in found:
            raise ValueError(f"entry point {name!r} of group {ENTRY_POINT_GROUP} must not "
                             f"reuse the name of the suite's study at {found[name]}; got "
                             f"{path!r}.")
        found[name] = path
    return dict(sorted(found.items()))


def study_names() -> tuple[str, ...]:
    """Names of the discovered studies (the suite's and installed packages'), sorted."""
    return tuple(study_sources())


def suite_study_names() -> tuple[str, ...]:
    """Names of the studies of `studies.suite` itself (no installed package's)."""
    return tuple(name for name, path in study_sources().items()
                 if path.startswith("studies.suite."))


def get_study(name: str) -> Study:
    """The study called ``name``, or the one at import path ``module:ATTRIBUTE``.

    A suite module of that name is imported alone; only an unknown name lists them all.

    Raises
    ------
    ValueError
        If the name is unknown (the message lists the discovered ones).
    """
    if ":" in name:
        return load_study(name)
    module = f"studies.suite.{name}"
    if (name.isidentifier() and not name.startswith("_") and name not in _NOT_STUDIES
            and importlib.util.find_spec(module) is not None):
        study = _module_study(module)
        if study is not None and study.name == name:
            return study
    points = _entry_points()
    if name in points:
        study = load_study(points[name])
        if study.name != name:
            raise ValueError(f"`name` of the study at entry point {name!r} "
                             f"({points[name]}) must be {name!r}; got {study.name!r}.")
        return study
    raise ValueError(f"`study` must be one of {', '.join(study_names())}; got {name!r}.")


@functools.cache
def claim_false_alarm() -> float:
    """Each claim's share of the suite's false-alarm budget: ``SUITE_FALSE_ALARM`` over the
    number of claims of the suite's own studies (Bonferroni), the rate `evaluate_claims`
    judges a claim at when it states none. Claims of an identity (`Claim.identity`) are judged
    exactly whatever their values and cannot alarm on noise: they take no share. An installed
    package's studies are judged at the same share and do not change it, so verdicts do not
    depend on what else is installed.

    Computed once per process (it is read for every study judged; counting the claims takes
    about 80 ms, `benchmarks/bench_study_caches.py`)."""
    count = sum(not claim.identity for name in suite_study_names()
                for claim in get_study(name).claims)
    return SUITE_FALSE_ALARM / max(count, 1)


def judge(results: Mapping[str, Any], studies: Sequence[Study], grid: str | None
          ) -> dict[str, tuple[Verdict, ...]]:
    """Each study's verdicts, every claim at its share of the suite's false-alarm budget
    (`claim_false_alarm`): the one place a run's claims are judged (the report, the baseline,
    the command line and the side processes of a run all call it).

    ``grid``: the named grid the results come from (a claim may be judged on some grids
    only); None for a grid built in Python.
    """
    by_name = {study.name: study for study in studies}
    return {name: tuple(evaluate_claims(by_name[name].claims, result, grid=grid,
                                        familywise_error=claim_false_alarm()))
            for name, result in results.items() if name in by_name}


def judge_claim(study: Study, index: int, result: StudyResult, grid: str | None) -> Verdict:
    """The verdict on ``study``'s claim ``index``, as `judge` gives it (a task of its own)."""
    return evaluate_claims([study.claims[index]], result, grid=grid,
                           familywise_error=claim_false_alarm())[0]


def stored_studies(run: StoredRun) -> tuple[list[Study], list[str]]:
    """The discovered studies a stored run holds, and the names of those it holds that are
    not discovered (only discovered names are imported: a name stored in a run is data, and
    importing a ``module:ATTRIBUTE`` name would run code nobody named)."""
    known = set(study_names())
    names = list(run.results)
    return ([get_study(name) for name in names if name in known],
            [name for name in names if name not in known])
