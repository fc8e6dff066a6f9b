"""Per-cell random streams: one root seed per run, one `SeedSequence` per cell.

A cell's stream depends only on the root seed, the study's name and the cell's parameters, never
on the cell's position in the grid, the number of workers or the order cells run in. The cell's
parameters are hashed (SHA-256 of a canonical JSON text) into the ``spawn_key`` of a
``numpy.random.SeedSequence`` whose entropy is the root seed; NumPy's SeedSequence mixes both
into a well-spread state, so nearby seeds or parameters give unrelated streams (unlike
``seed + i``).

References
----------
NumPy, "Parallel random number generation" (SeedSequence spawning); O'Neill, M. E. (2015),
PCG: a family of simple fast space-efficient statistically good algorithms for random number
generation, HMC-CS-2014-0905 (the seeding design SeedSequence follows).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["canonical_json", "cell_key", "cell_seed", "root_entropy"]


def canonical_json(value: Any) -> str:
    """JSON text that is the same for equal parameters (sorted keys, no spaces).

    Floats are written by ``repr``, which round-trips exactly, so 0.1 and 0.1000000001 differ.
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def cell_key(study: str, params: Mapping[str, Any]) -> str:
    """A stable identifier of a cell: hex SHA-256 of ``{"study": ..., "params": ...}``."""
    text = canonical_json({"study": study, "params": dict(params)})
    return hashlib.sha256(text.encode()).hexdigest()


def root_entropy(seed: Any) -> int:
    """The root seed as a non-negative integer (fresh OS entropy when ``seed`` is None).

    Raises
    ------
    ValueError
        If ``seed`` is negative or not an integer.
    """
    if seed is None:
        entropy: int = np.random.SeedSequence().entropy  # type: ignore[assignment]
        return entropy
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"`seed` must be a non-negative integer; got {seed!r}.")
    return int(seed)


def cell_seed(root: int, study: str, params: Mapping[str, Any], level: int = 1, part: int = 0
              ) -> np.random.SeedSequence:
    """The cell's SeedSequence: entropy ``root``, spawn key from the cell's hash.

    ``level``: the level of the grid's schedule (`studies.engine.design.Grid.schedule`) whose
    added replicates the stream draws, and ``part``: which part of them (a later level's
    replicates are drawn in parts of at most the declared number). Level 1 (the declared
    replicates) has the cell's own key, a later level that key followed by the level and the
    part, so that the stream of the replicates a round adds depends on the cell, the level and
    the part only, not on when or where they run.

    Examples
    --------
    >>> a = cell_seed(1, "s", {"n": 10, "p": 0.5})
    >>> b = cell_seed(1, "s", {"p": 0.5, "n": 10})  # key order does not matter
    >>> a.generate_state(2).tolist() == b.generate_state(2).tolist()
    True
    """
    digest = bytes.fromhex(cell_key(study, params))
    spawn_key = tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 32, 4))
    if level != 1:
        spawn_key = (*spawn_key, level, part)
    return np.random.SeedSequence(entropy=root, spawn_key=spawn_key)
