"""A study written one replicate at a time (`studies.engine.simple`) runs like a vectorised one."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from studies.engine import Estimates, Grid, Sample, Study, run
from studies.engine.simple import per_replicate_generate, per_replicate_method

QUANTILE = 1.959963984540054


def draw(params, rng):
    return rng.normal(params["mu"], 1.0, size=params["n"])


def analyse(x, params):
    m, h = x.mean(), QUANTILE * x.std(ddof=1) / np.sqrt(len(x))
    return {"estimate": m, "low": m - h, "high": m + h}


def generate_all(params, n_replicates, *, rng=None):
    return Sample(np.random.default_rng(rng).normal(params["mu"], 1.0,
                                                    size=(n_replicates, params["n"])),
                  n_replicates)


def z_all(draws, params):
    m = draws.mean(axis=1)
    h = QUANTILE * draws.std(axis=1, ddof=1) / np.sqrt(draws.shape[1])
    return Estimates(estimate=m, low=m - h, high=m + h)


def _study(generate, method) -> Study:
    grid = Grid({"n": [4, 30], "mu": [0.0, 2.0]}, n_replicates=300)
    return Study(name="z_mean", version="1", grids={"quick": grid, "full": grid},
                 truth=lambda params: params["mu"], generate=generate, methods={"z": method},
                 measures=("bias", "coverage", "width"))


def test_one_replicate_at_a_time_gives_the_vectorised_study_s_estimates():
    simple = run([_study(per_replicate_generate(draw), per_replicate_method(analyse))],
                 rng=8, workers=1)
    vectorised = run([_study(generate_all, z_all)], rng=8, workers=1)
    a, b = (r.estimates_frame() for r in (simple, vectorised))
    assert len(a) == 4 * 300
    np.testing.assert_allclose(a[["estimate", "low", "high"]], b[["estimate", "low", "high"]],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(simple.to_frame()["value"], vectorised.to_frame()["value"],
                               rtol=0, atol=1e-12)


def test_the_adapters_can_be_sent_to_worker_processes():
    generate, method = per_replicate_generate(draw), per_replicate_method(analyse)
    again = pickle.loads(pickle.dumps((generate, method)))
    sample = again[0]({"n": 3, "mu": 1.0}, 2, rng=1)
    assert again[1](sample.data, {}).estimate.shape == (2,)


def _unknown_field(x, params):
    return {"estimate": 1.0, "ci_low": 0.0}


def _sometimes_high(x, params):
    return {"estimate": float(x[0])} if x[0] > 0 else {"estimate": float(x[0]), "high": 1.0}


@pytest.mark.parametrize(("analyse_one", "message"), [
    (_unknown_field, r"`analyse` must return fields among .*got \['ci_low'\]"),
    (_sometimes_high, r"`analyse` must return the same fields for every replicate; \['high'\]"),
])
def test_a_replicate_s_fields_are_checked(analyse_one, message):
    data = [np.array([v]) for v in (-1.0, 1.0)]
    with pytest.raises(ValueError, match=message):
        per_replicate_method(analyse_one)(data, {})
