"""Studies written one replicate at a time, as in SimDesign: generate one data set, analyse it.

A `Study`'s ``generate`` and methods work on all of a cell's replicates at once (numpy arrays
over replicates), which is what makes the suite fast. For a first version of a study, or a
method that cannot be vectorised (it fits a model), `per_replicate_generate` and
`per_replicate_method` turn functions of one replicate into them:

* ``generate(params, rng) -> data`` draws one replicate's data;
* ``analyse(data, params) -> {"estimate": ..., "low": ..., "high": ...}`` returns one
  replicate's estimates, any of the fields of `Estimates` (``estimate``, ``se``, ``low``,
  ``high``, ``reject``, ...) as numbers.

The engine then calls ``generate`` once per replicate, from the cell's own random stream in
replicate order (so the data are reproducible and the same for every method), and stacks
each field of ``analyse``'s results into the arrays the performance measures read. The cost
is a Python call per replicate and method: vectorise the functions when a grid grows. Like
every part of a study, the functions must be defined at a module's top level, so that worker
processes can import them.

Examples
--------
>>> import numpy as np
>>> generate = per_replicate_generate(lambda params, rng: rng.normal(size=params["n"]))
>>> sample = generate({"n": 5}, 3, rng=np.random.default_rng(1))
>>> sample.size
3
>>> method = per_replicate_method(lambda x, params: {"estimate": float(np.mean(x))})
>>> method(sample.data, {"n": 5}).estimate.shape
(3,)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from studies.engine.design import Method, Params, Sample
from studies.engine.performance import FIELDS, Estimates

__all__ = ["per_replicate_generate", "per_replicate_method"]


def _draw(generate: Callable[[Params, np.random.Generator], Any], params: Params,
          n_replicates: int, *, rng: Any = None) -> Sample:
    stream = np.random.default_rng(rng)
    return Sample(data=[generate(params, stream) for _ in range(n_replicates)],
                  size=n_replicates)


def per_replicate_generate(generate: Callable[[Params, np.random.Generator], Any]
                           ) -> Callable[..., Sample]:
    """A study's ``generate(params, n_replicates, *, rng)`` from one of one replicate.

    ``generate(params, rng)`` returns one replicate's data (any object); the sample's
    ``data`` is the list of them, in the order they were drawn from ``rng``.
    """
    return functools.partial(_draw, generate)


def _stacked(analyse: Callable[[Any, Params], Mapping[str, Any]], data: Any,
             params: Params) -> Estimates:
    found = [analyse(replicate, params) for replicate in data]
    names = [name for name in FIELDS if any(name in row for row in found)]
    unknown = sorted({name for row in found for name in row} - set(FIELDS))
    if unknown:
        raise ValueError(f"`analyse` must return fields among {', '.join(FIELDS)}; got "
                         f"{unknown}.")
    missing = [name for name in names if not all(name in row for row in found)]
    if missing:
        raise ValueError(f"`analyse` must return the same fields for every replicate; "
                         f"{missing} are missing in some.")
    return Estimates(**{name: np.array([row[name] for row in found], dtype=np.float64)
                        for name in names})


def per_replicate_method(analyse: Callable[[Any, Params], Mapping[str, Any]]) -> Method:
    """A study's method ``method(data, params) -> Estimates`` from one of one replicate.

    ``analyse(data, params)`` returns a mapping of fields of `Estimates` to numbers (the same
    fields for every replicate); they are stacked into one array per field.
    """
    return functools.partial(_stacked, analyse)
