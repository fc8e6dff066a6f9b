"""Importing objects named by an import path ``module:attribute`` (studies, user methods)."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["load_object"]


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
