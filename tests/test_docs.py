"""The documentation site's sources: every public name has an API page.

The public names are ``estimators.__all__`` and the names of the README's "Public names" block
(the README stays their source of truth). Each must be listed in an ``autosummary`` directive of
``docs/api/*.rst`` under its module (``.. currentmodule::``), which makes Sphinx generate its
page from its docstring. Sphinx itself is not needed here: ``tox -e docs`` builds the site.
"""

from __future__ import annotations

import re
from pathlib import Path

import estimators

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api"


def readme_public_names() -> set[str]:
    """Fully qualified names of the README's "Public names" code block."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^#+ Public names\s*\n+```python\n(.*?)^```", text, re.S | re.M)
    assert match, 'README.md has no "Public names" section with a python code block'
    code = re.sub(r"#[^\n]*", "", match.group(1)).replace("\\\n", " ")
    names: set[str] = set()
    for line in code.splitlines():
        for statement in line.split(";"):
            statement = statement.strip()
            found = re.fullmatch(r"from\s+([\w.]+)\s+import\s+(.+)", statement)
            if found:
                module, imported = found.groups()
                names |= {f"{module}.{n.strip()}" for n in imported.split(",") if n.strip()}
            elif re.fullmatch(r"[\w]+(\.[\w]+)+", statement):
                names.add(statement)  # an attribute named as such: `studies.run_suite`
    return names


def documented_names() -> set[str]:
    """Fully qualified names listed in the autosummary directives of docs/api/*.rst."""
    names: set[str] = set()
    for path in sorted(API.glob("*.rst")):
        module = ""
        in_autosummary = False
        for line in path.read_text(encoding="utf-8").splitlines():
            current = re.match(r"\.\.\s+currentmodule::\s+(\S+)", line)
            if current:
                module, in_autosummary = current.group(1), False
            elif re.match(r"\.\.\s+autosummary::", line):
                in_autosummary = True
            elif in_autosummary:
                stripped = line.strip()
                if line and not line[0].isspace():
                    in_autosummary = False
                elif stripped and not stripped.startswith(":"):
                    names.add(stripped if "." in stripped else f"{module}.{stripped}")
    return names


def test_the_readme_block_is_read() -> None:
    names = readme_public_names()
    assert {"estimators.proportion_ci", "studies.engine.Study", "studies.run_suite",
            "studies.summarise", "studies.engine.simple.per_replicate_method"} <= names


def test_every_public_name_has_an_api_page() -> None:
    public = {f"estimators.{name}" for name in estimators.__all__} | readme_public_names()
    missing = sorted(public - documented_names())
    assert not missing, f"public names without an API page in docs/api/*.rst: {missing}"


def test_every_documented_name_exists() -> None:
    import importlib

    for name in sorted(documented_names()):
        module_name, _, attribute = name.rpartition(".")
        module = importlib.import_module(module_name)
        assert hasattr(module, attribute), f"docs/api lists {name}, which does not exist"
