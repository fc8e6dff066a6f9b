"""The layout of the packages: imports point down and never go round in a circle; the tests
mirror the packages.

The layers, top to bottom: ``studies.cli`` -> ``studies.audit`` -> ``studies.pipeline`` ->
``studies.report`` -> ``studies.suite`` -> ``studies.engine`` -> ``estimators``. A module may
import its own layer or any layer below; every import statement counts, including those
inside functions. A module's tests sit in the folder of its package's path under ``tests/``
(``tests/studies/engine/`` for ``studies/engine/``), the tests of the whole repository in
``tests/`` itself. The checks are tested on small made-up graphs and trees too, so that they
are seen to fail.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("estimators", "studies.engine", "studies.suite", "studies.report", "studies.pipeline",
          "studies.audit", "studies.cli")


def modules() -> dict[str, Path]:
    """Every module of the two packages by dotted name (a package by its ``__init__``)."""
    found = {}
    for package in ("estimators", "studies"):
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _target(name: str, known: dict[str, Path]) -> str | None:
    """The project module ``name`` refers to (its longest known prefix), if any."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in known:
            return ".".join(parts[:end])
    return None


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (``from package import submodule`` names
    the submodule; ``from package import name`` names the package)."""
    known = modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{path}:{node.lineno}: use an absolute import"
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            for imported in names:
                target = _target(imported, known)
                if target is not None and target != name:
                    graph[name].add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as a list of modules (first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        state[node] = 2
        path.pop()
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)) is not None:
            return found
    return None


def layer(module: str) -> int | None:
    """Index of the module's layer in `LAYERS` (None for the bare ``studies`` package)."""
    for index, prefix in enumerate(LAYERS):
        if module == prefix or module.startswith(prefix + "."):
            return index
    return None


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every import of a module in a higher layer than the importer's."""
    found = []
    for source, targets in graph.items():
        for target in targets:
            low, high = layer(source), layer(target)
            if low is not None and high is not None and high > low:
                found.append((source, target))
    return sorted(found)


def test_no_import_circle():
    assert find_cycle(import_graph()) is None


def test_imports_point_down_the_layers():
    graph = import_graph()
    assert upward_imports(graph) == []
    assert not any(t.startswith("studies") for t in set().union(
        *(targets for source, targets in graph.items() if source.startswith("estimators"))))


def test_every_module_has_a_layer_and_no_file_prefix_stands_for_a_folder():
    names = modules()
    assert all(layer(name) is not None for name in names if name != "studies")
    assert not [n for n in names if n.rsplit(".", 1)[-1].startswith(("study_", "cmd_"))]
    assert {"studies.engine.runner", "studies.suite.coverage_f1", "studies.report.tables",
            "studies.cli.main"} <= set(names)


def test_the_checks_find_a_circle_and_an_upward_import():
    circle = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(circle) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
    graph = {"studies.engine.runner": {"studies.suite.registry", "estimators.power"},
             "estimators.power": {"studies.engine"}, "studies.cli.main": {"studies.report"}}
    assert upward_imports(graph) == [("estimators.power", "studies.engine"),
                                     ("studies.engine.runner", "studies.suite.registry")]


PUBLIC_ESTIMATORS = sorted(name for name in modules() if name.startswith("estimators.")
                           and not name.rsplit(".", 1)[-1].startswith("_"))


def test_estimators_power_is_the_simulated_planner_module():
    # a package attribute of the same name as a submodule would hide it
    import estimators.power

    assert inspect.ismodule(estimators.power)
    assert estimators.power.__name__ == "estimators.power"


@pytest.mark.parametrize("name", PUBLIC_ESTIMATORS)
def test_every_name_a_public_module_exports_resolves(name):
    module = importlib.import_module(name)
    assert isinstance(module.__all__, list) and module.__all__
    assert [n for n in module.__all__ if not hasattr(module, n)] == []


def test_every_name_the_package_exports_is_importable():
    import estimators

    namespace: dict[str, object] = {}
    exec("from estimators import *", namespace)
    assert set(estimators.__all__) <= set(namespace)
    assert not [n for n in estimators.__all__ if inspect.ismodule(namespace[n])]



def misplaced_tests(root: Path) -> list[str]:
    """The test modules under ``root/tests`` in a folder that mirrors no package of ``root``
    (``tests/studies/engine/`` mirrors ``studies/engine/``; ``tests/`` itself holds the tests
    of the whole repository)."""
    tests = root / "tests"
    return [path.relative_to(tests).as_posix() for path in sorted(tests.rglob("test_*.py"))
            if path.parent != tests
            and not (root / path.parent.relative_to(tests) / "__init__.py").is_file()]


def test_tests_mirror_the_packages():
    assert misplaced_tests(ROOT) == []
    assert {p.parent.relative_to(ROOT / "tests").as_posix()
            for p in (ROOT / "tests").rglob("test_*.py")} >= {
        "estimators", "studies/engine", "studies/suite", "studies/report", "studies/cli"}


def test_the_mirror_check_finds_a_misplaced_test(tmp_path):
    for name in ("estimators/__init__.py", "studies/__init__.py", "studies/engine/__init__.py",
                 "tests/test_readme.py", "tests/estimators/test_a.py",
                 "tests/studies/engine/test_b.py", "tests/studies/engines/test_c.py",
                 "tests/engine/test_d.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).touch()
    assert misplaced_tests(tmp_path) == ["engine/test_d.py", "studies/engines/test_c.py"]


def test_test_modules_have_distinct_names_and_no_package():
    # each test folder is put on sys.path and its modules imported by their bare names
    # (pytest's default import mode; studies are run by such names, ``test_engine_run:SLOW``),
    # so two test modules of one name would clash
    names = [path.name for path in (ROOT / "tests").rglob("test_*.py")]
    assert sorted({name for name in names if names.count(name) > 1}) == []
    assert list((ROOT / "tests").rglob("__init__.py")) == []


def test_the_packages_are_not_the_test_folders_of_their_names():
    # tests/ is on sys.path too, and its estimators/ and studies/ would be namespace packages
    import estimators
    import studies

    assert Path(estimators.__file__).parent == ROOT / "estimators"
    assert Path(studies.__file__).parent == ROOT / "studies"
