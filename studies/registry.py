"""The registry of studies: name -> module, imported only when used.

A study is also accepted by import path ``package.module:ATTRIBUTE`` (a `Study` object), so a
project can run its own studies through the engine without registering them here.
"""

from __future__ import annotations

import importlib
from typing import Any

from studies.design import Study

__all__ = ["STUDY_MODULES", "get_study", "load_object", "study_names"]

# Registered studies: name -> module defining STUDY (or "module:ATTRIBUTE"). Keep sorted.
STUDY_MODULES: dict[str, str] = {
    "bias_error_rate": "studies.study_bias_error_rate",
    "bias_f1": "studies.study_bias_f1",
    "bias_sampling": "studies.study_bias_sampling",
    "bias_sequential": "studies.study_bias_sequential",
    "binomial_coverage": "studies.study_binomial_coverage",
    "coverage_f1": "studies.study_coverage_f1",
    "coverage_f1_exact": "studies.study_coverage_f1:EXACT_STUDY",
    "coverage_proportion": "studies.study_coverage_proportion",
    "mean_bias": "studies.study_mean_bias",
}


def study_names() -> tuple[str, ...]:
    """Names of the registered studies."""
    return tuple(sorted(STUDY_MODULES))


def load_object(path: str, what: str) -> Any:
    """Import ``module:attribute``; ValueError with a one-line message when it cannot."""
    module_name, sep, attribute = path.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"`{what}` must be an import path 'module:attribute'; got {path!r}.")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"`{what}` {path!r} cannot be imported: {error}.") from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ValueError(f"`{what}` {path!r}: module has no attribute {attribute!r}.") from None


def get_study(name: str) -> Study:
    """The study registered as ``name`` (or at import path ``module:ATTRIBUTE``).

    Raises
    ------
    ValueError
        If the name is unknown (the message lists the registered ones).
    """
    if ":" in name:
        study = load_object(name, "study")
        if not isinstance(study, Study):
            raise ValueError(f"`study` {name!r} must be a Study; got {type(study).__name__}.")
        return study
    if name not in STUDY_MODULES:
        raise ValueError(
            f"`study` must be one of {', '.join(study_names())}; got {name!r}.")
    target = STUDY_MODULES[name]
    study = (load_object(target, "study") if ":" in target
             else importlib.import_module(target).STUDY)
    assert isinstance(study, Study)
    return study
