"""Importing objects named by an import path ``module:attribute`` (studies, user methods)."""

from __future__ import annotations

import importlib
from typing import Any

from studies.engine.design import Study

__all__ = ["load_object", "load_study"]


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


def load_study(path: str) -> Study:
    """The `Study` at import path ``module:ATTRIBUTE``; ValueError (one line) otherwise.

    A discovered study's name is not an import path: `studies.suite.get_study` resolves it.
    """
    if ":" not in path:
        raise ValueError(
            f"`study` must be a Study or its import path 'module:ATTRIBUTE' (study names "
            f"are resolved by studies.suite.get_study); got {path!r}.")
    study = load_object(path, "study")
    if not isinstance(study, Study):
        raise ValueError(f"`study` {path!r} must be a Study; got {type(study).__name__}.")
    return study
