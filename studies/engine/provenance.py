"""What a run records about where it ran, so that its results can be reproduced.

Beside the root seed and the grid (the run's identity), a run stores the command line, the
Python version and platform, the versions of the packages that compute its numbers, and the
git commit of the source tree with a flag saying whether the tree had uncommitted changes
(a run from a modified tree cannot be reproduced from its commit alone).
"""

from __future__ import annotations

import platform
import shlex
import subprocess
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["PACKAGES", "SOURCES", "git_state", "provenance"]

# The packages whose versions can change a run's numbers or its execution.
PACKAGES: tuple[str, ...] = ("evalcert", "numpy", "scipy", "pandas", "matplotlib", "jinja2",
                             "dask", "distributed")
# The parts of the tree that determine results: a change elsewhere (a report) leaves it clean.
SOURCES: tuple[str, ...] = ("estimators", "studies", "pyproject.toml")


def _package_versions() -> dict[str, str]:
    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def _git(root: Path, *args: str) -> str | None:
    """Output of a read-only git command in ``root`` (None if git fails or is missing).

    ``--no-optional-locks``: a status must not take the index lock from the user's own git.
    """
    try:
        done = subprocess.run(["git", "--no-optional-locks", "-C", str(root), *args],
                              capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _source_root() -> Path | None:
    """The git checkout this package's source is tracked in (None: not in one).

    The nearest ``.git`` above the installed file is not enough: a package copied into an
    ignored folder of some other repository would record that repository's state.
    """
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / ".git").exists():
            tracked = _git(parent, "ls-files", "--error-unmatch", str(here.relative_to(parent)))
            return parent if tracked else None
    return None


def git_state() -> dict[str, Any]:
    """``{"git_commit": ..., "git_dirty": ...}`` of the source tree (None when unknown).

    ``git_dirty`` is true when the sources (``estimators/``, ``studies/``,
    ``pyproject.toml``) differ from the commit, untracked files included; None when the
    package is not in a git checkout or git is not installed.
    """
    root = _source_root()
    status = None if root is None else _git(root, "status", "--porcelain=v2", "--branch", "--",
                                            *SOURCES)
    if status is None:
        return {"git_commit": None, "git_dirty": None}
    lines = status.splitlines()
    head = next((line.split()[2] for line in lines if line.startswith("# branch.oid ")), None)
    return {"git_commit": None if head in (None, "(initial)") else head,
            "git_dirty": any(not line.startswith("#") for line in lines)}


def provenance(command: Sequence[str] | None = None) -> dict[str, Any]:
    """Everything a run records about its environment (JSON-ready).

    Parameters
    ----------
    command : sequence of str, optional
        The command line that started the run; default this process's ``sys.argv``.
    """
    words = list(command) if command is not None else [Path(sys.argv[0]).name, *sys.argv[1:]]
    return {
        "command": shlex.join(words),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": _package_versions(),
        **git_state(),
    }
