"""Declared faults: a textual patch of one function of the source tree, found by name.

A fault audit measures a suite by the faults it catches (mutation testing: DeMillo, Lipton &
Sayward 1978; mutmut and cosmic-ray for Python). A fault here is declared, not generated: a
person writes the mistake a developer could plausibly make (a quantile for the wrong tail, a
Beta parameter shifted by one, a prior of 1 instead of 1/2) as a text replacement inside one
named function, so the set reads as a list of plausible errors and each is reproducible. A
*harmless* rewrite (a reordered sum, an equivalent formula) is declared the same way and must
alarm nothing.

The patch is applied to a copy of the source tree on disk, never to the running process:
every process of the audited run (its workers, its report's side processes) imports the
patched copy, as a developer's broken commit would be imported in CI.

A fault file is TOML, one ``[[fault]]`` table per fault::

    [[fault]]
    name = "clopper-pearson-upper-shape"        # unique; a file and directory name
    target = "estimators.proportion:_clopper_pearson"   # module, ":" and qualified name
    find = "k + 1"                              # text inside that function's source
    replace = "k + 2"                           # what it becomes
    what = "the upper bound's Beta shape a off by one"
    harmless = false                            # optional: a rewrite that must alarm nothing
    occurrences = 1                             # optional: how often `find` occurs there

A target without ``:`` names a whole module (for a module-level constant).
"""

from __future__ import annotations

import ast
import hashlib
import re
import shutil
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["PACKAGES", "Fault", "apply_fault", "copy_tree", "load_faults", "source_root",
           "tree_digest"]

# The packages copied for a fault's run: the code a study can exercise.
PACKAGES = ("estimators", "studies")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,79}$")
_FIELDS = {"name", "target", "find", "replace", "what", "harmless", "occurrences"}


@dataclass(frozen=True)
class Fault:
    """One declared patch of the source tree.

    Attributes
    ----------
    name : str
        Unique within its file; lowercase letters, digits, ``-``, ``_`` and ``.``.
    target : str
        ``module:qualname`` (a function or method, nested names joined by ``.``) or a module.
    find, replace : str
        The text replaced within the target's source, and its replacement.
    what : str
        The mistake in words, as the audit's page shows it.
    harmless : bool
        A rewrite that changes no result: the audit expects no claim and no value to move.
    occurrences : int
        How often ``find`` occurs in the target (every occurrence is replaced).
    """

    name: str
    target: str
    find: str
    replace: str
    what: str
    harmless: bool = False
    occurrences: int = 1

    @property
    def module(self) -> str:
        return self.target.partition(":")[0]

    @property
    def function(self) -> str:
        """The qualified name patched ("" for a whole module)."""
        return self.target.partition(":")[2]

    def digest(self) -> str:
        """A short hash of the patch: a stored outcome is reused only for the same patch."""
        text = "\0".join((self.target, self.find, self.replace, str(self.occurrences)))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def source_root() -> Path:
    """The directory holding this installation's ``estimators`` and ``studies`` packages."""
    return Path(__file__).resolve().parents[2]


def load_faults(path: str | Path, *, root: Path | None = None) -> list[Fault]:
    """Read a fault file and check every fault against the source tree.

    Parameters
    ----------
    path : path
        A TOML file of ``[[fault]]`` tables (see the module docstring).
    root : Path, optional
        The source tree the faults patch (default `source_root`).

    Returns
    -------
    list of Fault
        In the file's order.

    Raises
    ------
    ValueError
        When the file is not TOML, a field is missing, unknown or of the wrong type, a name
        repeats, a target is not found, ``find`` does not occur exactly ``occurrences`` times
        in it, or the patched module does not parse; the message names the fault.
    """
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text())
    except OSError as error:
        raise ValueError(f"`faults` must be a readable TOML file; got {file} "
                         f"({error.strerror}).") from None
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"`faults` must be a TOML file; {file}: {error}.") from None
    tables = data.get("fault")
    if set(data) != {"fault"} or not isinstance(tables, list) or not tables:
        raise ValueError(f"`faults` must hold [[fault]] tables only; {file} has "
                         f"{sorted(data) or 'nothing'}.")
    faults = [_fault(table, index) for index, table in enumerate(tables, 1)]
    seen: set[str] = set()
    for fault in faults:
        if fault.name in seen:
            raise ValueError(f"fault names must be unique; {fault.name!r} repeats in {file}.")
        seen.add(fault.name)
    base = root or source_root()
    for fault in faults:
        patched_source(fault, base)
    return faults


def _fault(table: Any, index: int) -> Fault:
    if not isinstance(table, dict):
        raise ValueError(f"fault {index} must be a table; got {table!r}.")
    label = f"fault {table.get('name', index)!r}"
    unknown = sorted(set(table) - _FIELDS)
    missing = sorted({"name", "target", "find", "replace", "what"} - set(table))
    if unknown or missing:
        raise ValueError(f"{label} must have the fields name, target, find, replace and what "
                         f"(optional: harmless, occurrences); got unknown {unknown}, missing "
                         f"{missing}.")
    for key in ("name", "target", "find", "replace", "what"):
        if not isinstance(table[key], str):
            raise ValueError(f"{label}: `{key}` must be a string; got {table[key]!r}.")
    if not _NAME.match(table["name"]):
        raise ValueError(f"{label}: `name` must be lowercase letters, digits, '-', '_' or "
                         f"'.' (at most 80); got {table['name']!r}.")
    if not table["find"] or table["find"] == table["replace"]:
        raise ValueError(f"{label}: `find` must be non-empty text that `replace` changes; got "
                         f"{table['find']!r} -> {table['replace']!r}.")
    harmless = table.get("harmless", False)
    occurrences = table.get("occurrences", 1)
    if not isinstance(harmless, bool):
        raise ValueError(f"{label}: `harmless` must be true or false; got {harmless!r}.")
    if not isinstance(occurrences, int) or isinstance(occurrences, bool) or occurrences < 1:
        raise ValueError(f"{label}: `occurrences` must be a positive integer; got "
                         f"{occurrences!r}.")
    return Fault(table["name"], table["target"], table["find"], table["replace"],
                 table["what"], harmless, occurrences)


def module_path(module: str, root: Path) -> Path:
    """The file of a dotted module name under ``root`` (a package by its ``__init__``)."""
    if module.split(".")[0] not in PACKAGES:
        raise ValueError(f"a fault's module must be in {' or '.join(PACKAGES)}; got {module!r}.")
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    raise ValueError(f"a fault's module must exist under {root}; got {module!r}.")


def _span(tree: ast.Module, qualname: str) -> tuple[int, int] | None:
    """First and last line (1-based, decorators included) of a nested definition."""
    body: Sequence[ast.stmt] = tree.body
    node: ast.stmt | None = None
    for part in qualname.split("."):
        node = next((n for n in body if isinstance(
            n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name == part), None)
        if node is None:
            return None
        body = node.body
    assert node is not None and node.end_lineno is not None
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    return first, node.end_lineno


def patched_source(fault: Fault, root: Path) -> tuple[Path, str]:
    """The target module's file and its text with the fault applied (nothing written)."""
    path = module_path(fault.module, root)
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    if fault.function:
        span = _span(ast.parse(text, str(path)), fault.function)
        if span is None:
            raise ValueError(f"fault {fault.name!r}: `target` must name a function or class of "
                             f"{fault.module}; got {fault.function!r}.")
        first, last = span
    else:
        first, last = 1, len(lines)
    region = "".join(lines[first - 1:last])
    found = region.count(fault.find)
    if found != fault.occurrences:
        raise ValueError(f"fault {fault.name!r}: `find` must occur {fault.occurrences} time(s) "
                         f"in {fault.target}; it occurs {found} time(s): {fault.find!r}.")
    patched = ("".join(lines[:first - 1]) + region.replace(fault.find, fault.replace)
               + "".join(lines[last:]))
    try:
        ast.parse(patched, str(path))
    except SyntaxError as error:
        raise ValueError(f"fault {fault.name!r}: the patched {fault.module} must parse; line "
                         f"{error.lineno}: {error.msg}.") from None
    return path, patched


def tree_digest(root: Path | None = None) -> str:
    """A short hash of the packages' source files: an outcome is reused only on the same code."""
    base = root or source_root()
    digest = hashlib.sha256()
    for package in PACKAGES:
        for path in sorted((base / package).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                digest.update(str(path.relative_to(base)).encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def copy_tree(destination: Path, *, root: Path | None = None) -> Path:
    """Copy the packages of `PACKAGES` from ``root`` into ``destination`` (caches left out)."""
    base = root or source_root()
    destination.mkdir(parents=True, exist_ok=True)
    for package in PACKAGES:
        target = destination / package
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(base / package, target,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return destination


def apply_fault(fault: Fault, tree: Path) -> Path:
    """Write the fault into a copied tree (`copy_tree`); return the file it changed."""
    path, text = patched_source(fault, tree)
    path.write_text(text)
    return path
