"""Sphinx configuration of the evalcert documentation site.

The site builds offline (no intersphinx, no fetched assets): ``tox -e docs`` runs
``sphinx-build -W -n``, so every warning, including every unresolved cross-reference, fails it.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))

project = "evalcert"
author = "the evalcert authors"
copyright = "the evalcert authors"

try:
    from importlib.metadata import version as _version

    release = _version("evalcert")
except Exception:  # pragma: no cover - the package is installed by tox
    release = "0.1.0"
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_parser",
    "gallery",  # docs/_ext/gallery.py: one page per study, from the reference verdicts
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "**/.ipynb_checkpoints", "README.md"]
templates_path = ["_templates"]

# MyST: anchors for headings so that guide pages can link to sections of each other.
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# The API reference: one generated page per public name (docs/api/generated/, not committed).
autosummary_generate = True
autosummary_imported_members = True
# Signatures show parameter names and defaults; their types are in the numpydoc sections.
autodoc_typehints = "none"
autodoc_member_order = "bysource"

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# Nitpicky mode reports every cross-reference that does not resolve. There is no network at
# build time, so intersphinx cannot resolve numpy, pandas, scipy or the standard library;
# references to those external names are ignored here instead of linked.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|pandas|pd|scipy|matplotlib|dask|distributed|collections)\..*"),
    (r"py:.*", r"(typing|collections\.abc|os|pathlib|datetime)\..*"),
    (r"py:class", r"(int|float|str|bool|bytes|object|tuple|list|dict|set|frozenset|None)"),
    # Modules named in docstrings as where code lives; the API pages document public names.
    (r"py:mod", r"(estimators|studies)\..*"),
    (r"py:class", r"(array_like|array-like|optional|callable|sequence|mapping|iterable)"),
]

html_theme = "pydata_sphinx_theme"
html_title = f"evalcert {release}"
html_static_path = ["_static"]
html_css_files = ["gallery.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_show_sourcelink = False
html_copy_source = False


def _drop_builtin_docstring(app, what, name, obj, options, lines):
    """A constant (a tuple or dict of method names) shows its value, not its type's docstring."""
    if what in ("data", "attribute") and lines:
        builtin = (type(obj).__doc__ or "").strip().splitlines()
        if builtin and lines[0].strip() == builtin[0].strip():
            lines.clear()


def setup(app):
    # Before numpydoc (priority 500) reformats the lines.
    app.connect("autodoc-process-docstring", _drop_builtin_docstring, priority=400)
