"""What a run is and where it ran, read once from its store, typed.

A run store keeps its metadata as JSON values (`studies.engine.store`, which checks their
shapes as it decodes them). Everything above the store (the report, the baseline, the
reference, the command line) reads them through these two records: `RunIdentity`, what the
run computed (its studies and their versions, the grid, each study's grid as run, the root
seed, user methods, the path), which a resume must match; and `RunProvenance`, where and when
it ran (command, Python, platform, packages, git commit, start, end, status, resumes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from studies.engine.design import Grid

__all__ = ["RunIdentity", "RunProvenance"]


@dataclass(frozen=True, kw_only=True)
class RunIdentity:
    """What a run computed: the same identity and seed give the same tables.

    Attributes
    ----------
    studies : Mapping[str, str]
        Each study's name and version, in the order the run took them.
    grid : str or None
        The named grid every study ran (``"quick"`` or ``"full"``); None for a grid given as
        an object (`grid_name` is then ``"custom"``).
    grids : Mapping[str, Grid]
        Each study's grid as it ran (parameters, replicates, rounds, methods).
    seed : int
        The run's root seed (`studies.engine.seeding`).
    methods : tuple of str
        The user methods added to every study (``module:callable``).
    path : str
        ``"exact"`` or ``"monte-carlo"``: the path asked for.
    """

    studies: Mapping[str, str]
    grid: str | None
    grids: Mapping[str, Grid]
    seed: int
    methods: tuple[str, ...] = ()
    path: str = "exact"

    @classmethod
    def from_metadata(cls, meta: Mapping[str, Any]) -> RunIdentity:
        """The identity of a store's decoded metadata (`studies.engine.store.Metadata`, which
        raises a ValueError naming the store for a missing ``identity``, ``seed`` or
        ``grids``)."""
        identity, grids = meta["identity"], meta["grids"]
        grid = identity["grid"]
        return cls(studies=dict(identity["studies"]),
                   grid=grid if isinstance(grid, str) else None,
                   grids={name: Grid.from_dict(grids[name]) for name in identity["studies"]},
                   seed=int(meta["seed"]), methods=tuple(identity.get("methods", ())),
                   path=str(identity.get("path", "exact")))

    @property
    def grid_name(self) -> str:
        """The named grid, or ``"custom"``."""
        return self.grid if self.grid is not None else "custom"

    def parameters(self) -> dict[str, list[str]]:
        """Each study's parameter names, in grid order."""
        return {name: list(grid.parameters) for name, grid in self.grids.items()}

    def rounds(self) -> dict[str, int]:
        """Each study's most rounds (`Grid.rounds`)."""
        return {name: grid.rounds for name, grid in self.grids.items()}

    def cells(self) -> dict[str, int]:
        """Each study's number of cells."""
        return {name: grid.n_cells for name, grid in self.grids.items()}


@dataclass(frozen=True, kw_only=True)
class RunProvenance:
    """Where and when a run ran (`studies.engine.provenance`), as its store recorded it.

    Attributes
    ----------
    command, python, platform : str or None
        The command line, Python version and platform of the run's first start.
    commit : str or None
        The git commit of the source tree (None: unknown).
    dirty : bool or None
        Whether the tree had uncommitted changes in the parts that compute results.
    packages : Mapping[str, str]
        Versions of the packages that compute the numbers.
    started, ended : str or None
        ISO times of the first start and of the end (None: not recorded).
    status : str
        ``"complete"``, ``"interrupted"``, ... or ``"running or killed"`` when none was
        recorded.
    resumes : tuple of Mapping
        Each resume's own start, command and git state.
    salvaged : Mapping or None
        Where a salvaged store came from and what was saved and lost.
    budget_cut : Mapping[str, int]
        The studies whose rounds the run's time budget (``--budget``) ended with claims still
        open, and the round each would have taken next (empty: none).
    """

    command: str | None = None
    python: str | None = None
    platform: str | None = None
    commit: str | None = None
    dirty: bool | None = None
    packages: Mapping[str, str] | None = None
    started: str | None = None
    ended: str | None = None
    status: str = "running or killed"
    resumes: tuple[Mapping[str, Any], ...] = ()
    salvaged: Mapping[str, Any] | None = None
    budget_cut: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_metadata(cls, meta: Mapping[str, Any]) -> RunProvenance:
        """The provenance of a store's decoded metadata (keys it lacks are None)."""
        return cls(command=meta.get("command"), python=meta.get("python"),
                   platform=meta.get("platform"), commit=meta.get("git_commit"),
                   dirty=meta.get("git_dirty"), packages=dict(meta.get("packages", {})),
                   started=meta.get("started"), ended=meta.get("ended"),
                   status=str(meta.get("status", "running or killed")),
                   resumes=tuple(meta.get("resumes", ())), salvaged=meta.get("salvaged"),
                   budget_cut=dict(meta.get("budget_cut", {})))

    @property
    def wall_seconds(self) -> float | None:
        """Seconds from the first start to the end (None when either is not recorded)."""
        if not self.started or not self.ended:
            return None
        try:
            return (datetime.fromisoformat(self.ended)
                    - datetime.fromisoformat(self.started)).total_seconds()
        except ValueError:
            return None
