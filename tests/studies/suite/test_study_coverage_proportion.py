"""Findings of Brown, Cai & DasGupta (2001) pinned on the exact coverage_proportion study."""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
import pytest
from scipy import stats

from estimators import PROPORTION_METHODS, proportion_ci
from studies.engine import StudyResult, run
from studies.engine.assertions import assert_coverage
from studies.engine.design import Grid
from studies.engine.results import PackedGroup
from studies.report import write_tables
from studies.suite.coverage_proportion import (
    ALTERNATIVES,
    LEVELS,
    applies,
    exact_coverage,
    interval_methods,
    select,
    summarise,
    wrap_method,
)
from studies.suite.registry import get_study

STUDY = get_study("studies.suite.coverage_proportion:STUDY")
OURS = dataclasses.replace(STUDY, methods={m: STUDY.methods[m] for m in PROPORTION_METHODS})
P_GRID = [round((i - 0.5) / 200, 6) for i in range(1, 201)]
GRID = Grid({"n": [5, 10, 20, 50, 100], "p": P_GRID, "confidence_level": list(LEVELS),
             "alternative": list(ALTERNATIVES)}, n_replicates=2)
EXACT = 1e-12  # exact path: only rounding separates coverage from its bound


def _run(study, grid: Grid) -> StudyResult:
    return run([study], grid=grid, rng=1, workers=1)["coverage_proportion"]


@pytest.fixture(scope="module")
def result() -> StudyResult:
    return _run(OURS, GRID).expanded()


def _ns(result: StudyResult) -> list[int]:
    return sorted({int(n) for g in result.groups for n in g.column("n")}
                  | {c.params["n"] for c in result.cells})


def _assert_mean_coverage(result: StudyResult, method: str, tolerance: float) -> None:
    """Mean coverage over p within ``tolerance`` of nominal at every n, level and side."""
    failures = [
        f"{s.method} n={n} {s.confidence_level} {s.alternative}: {s.mean_coverage:.4f}"
        for s in summarise(result, bands=[(n, n) for n in _ns(result)])
        if s.method == method and abs(s.mean_coverage - s.confidence_level) > tolerance
        for n in [s.n_range[0]]]
    if failures:
        raise AssertionError("mean coverage off nominal:\n" + "\n".join(failures))


def test_kernel_matches_engine_and_a_direct_binomial_sum(result):
    for row in result.rows("coverage")[::397]:
        params = row["params"]
        n, p = params["n"], params["p"]
        cell = exact_coverage(row["method"], n, p, confidence_level=params["confidence_level"],
                              alternative=params["alternative"])
        assert cell.coverage == pytest.approx(row["value"], abs=EXACT)
        low, high = proportion_ci(np.arange(n + 1), n, method=row["method"],
                                  confidence_level=params["confidence_level"],
                                  alternative=params["alternative"])
        direct = math.fsum(math.comb(n, x) * p**x * (1 - p) ** (n - x)
                           for x in range(n + 1) if low[x] <= p <= high[x])
        assert cell.coverage == pytest.approx(direct, abs=EXACT)
    width = result.rows("width", method="wilson")[0]
    assert exact_coverage("wilson", 5, width["params"]["p"], confidence_level=0.9).width \
        == pytest.approx(width["value"], abs=EXACT)


def test_exact_cells_have_no_monte_carlo_error(result):
    assert {r["mcse"] for r in result.rows("coverage")} == {0.0}


def test_wilson_and_jeffreys_mean_coverage_within_001_of_nominal(result):
    # BCD Figures 5 and 11 (95%): average coverage over p close to nominal from n = 10 on; at
    # 90% Wilson's is 0.011 above at n = 10, so there the finding holds from n = 20
    two_sided = select(result, alternative="two-sided")
    large = StudyResult(result.study, tuple(
        c for c in two_sided.cells
        if c.params["n"] >= (10 if c.params["confidence_level"] >= 0.95 else 20)))
    for method in ("wilson", "jeffreys"):
        _assert_mean_coverage(large, method, 0.01)


def test_clopper_pearson_never_below_nominal(result):
    # BCD section 4.2.1: conservative everywhere, two-sided and one-sided
    for level in LEVELS:
        for side in ALTERNATIVES:
            assert_coverage(select(result, confidence_level=level, alternative=side), level,
                            method="clopper-pearson", alternative="greater", tolerance=EXACT)


def test_wald_below_nominal_for_small_np(result):
    cells = select(result, confidence_level=0.95, alternative="two-sided")
    small = StudyResult(result.study, tuple(c for c in cells.cells
                                            if c.params["n"] * c.params["p"] <= 2))
    with pytest.raises(AssertionError, match=r"(\d+) of \1 coverage checks failed"):
        assert_coverage(small, 0.95, method="wald", alternative="greater", tolerance=0.01)
    assert max(r["value"] for r in small.rows("coverage", method="wald")) < 0.9


def test_wald_coverage_oscillates_in_n_at_fixed_p():
    # BCD Figure 1 (p = 0.2, n = 25..100): 0.946 at n = 30 and 0.950 at 31, 0.890 at 32
    grid = Grid({"n": list(range(25, 101)), "p": [0.2], "confidence_level": [0.95],
                 "alternative": ["two-sided"]}, n_replicates=2)
    wald = dataclasses.replace(STUDY, methods={"wald": STUDY.methods["wald"]})
    coverage = np.array([r["value"] for r in _run(wald, grid).rows("coverage")])
    assert coverage[31 - 25] == pytest.approx(0.950, abs=5e-4)
    assert coverage[32 - 25] == pytest.approx(0.890, abs=5e-4)
    drops = np.diff(coverage) < -0.02
    assert drops.sum() >= 5  # up and down again and again, not a monotone approach
    assert coverage[-10:].min() < 0.93  # still well below nominal near n = 100


def test_wald_far_below_nominal_at_small_np_even_for_large_n():
    # BCD Example 2 and Table 1: p = 0.005, coverage 0.945 at n = 591 but 0.792 at n = 592
    grid = Grid({"n": [591, 592, 1000], "p": [0.005], "confidence_level": [0.95],
                 "alternative": ["two-sided"]}, n_replicates=2)
    wald = dataclasses.replace(STUDY, methods={"wald": STUDY.methods["wald"]})
    coverage = [r["value"] for r in _run(wald, grid).rows("coverage")]
    assert coverage == pytest.approx([0.945, 0.792, 0.871], abs=5e-4)


def _shrunk_z(successes, trials, *, confidence_level, alternative, method):
    """A deliberately broken interval: the level's z quantile replaced by a smaller one."""
    return proportion_ci(successes, trials, method=method, alternative=alternative,
                         confidence_level=confidence_level - 0.05)


def test_broken_methods_fail_the_matching_assertions(result):
    broken = dataclasses.replace(OURS, methods={
        f"shrunk-{m}": wrap_method(functools.partial(_shrunk_z, method=m))
        for m in ("wilson", "clopper-pearson")})
    grid = dataclasses.replace(GRID, parameters={**GRID.parameters, "n": [10, 50],
                                                 "confidence_level": [0.95],
                                                 "alternative": ["two-sided"]})
    shrunk = _run(broken, grid)
    _assert_mean_coverage(select(result, n=10, confidence_level=0.95,
                                 alternative="two-sided"), "wilson", 0.01)
    with pytest.raises(AssertionError, match="shrunk-wilson n=10"):
        _assert_mean_coverage(shrunk, "shrunk-wilson", 0.01)
    with pytest.raises(AssertionError, match="coverage checks failed"):
        assert_coverage(shrunk, 0.95, method="shrunk-clopper-pearson", alternative="greater",
                        tolerance=EXACT)


def test_summaries_report_mean_min_share_and_worst_cells(result):
    cells = select(result, n=20, confidence_level=0.95, alternative="two-sided")
    summary = {s.method: s for s in summarise(cells, worst=2)}["wald"]
    values = [r["value"] for r in cells.rows("coverage", method="wald")]
    assert summary.cells == len(P_GRID)
    assert summary.mean_coverage == pytest.approx(np.mean(values))
    assert summary.min_coverage == min(values) == summary.worst[0][2]
    assert summary.share_below == pytest.approx(np.mean(np.array(values) < 0.94))
    assert summary.worst[0][2] <= summary.worst[1][2]


def test_peers_agree_with_ours_except_at_the_jeffreys_boundary():
    pytest.importorskip("statsmodels")
    pairs = {"statsmodels:beta": "clopper-pearson", "scipy:exact": "clopper-pearson",
             "statsmodels:wilson": "wilson", "scipy:wilson": "wilson",
             "statsmodels:normal": "wald", "statsmodels:agresti_coull": "agresti-coull"}
    for side in ALTERNATIVES:  # statsmodels' reversed one-sided names are mapped
        for peer, ours in pairs.items():
            for p in (0.03, 0.4, 0.9):
                assert exact_coverage(peer, 12, p, alternative=side).coverage == pytest.approx(
                    exact_coverage(ours, 12, p, alternative=side).coverage, abs=EXACT)
    # statsmodels keeps the Beta quantile at x = 0, so p below it is never covered
    assert exact_coverage("statsmodels:jeffreys", 5, 1e-5).coverage == 0.0
    assert exact_coverage("jeffreys", 5, 1e-5).coverage > 0.9999


def test_packed_summaries_equal_those_of_the_cells_and_are_written(tmp_path):
    grid = dataclasses.replace(GRID, parameters={**GRID.parameters, "n": [5, 30, 100]})
    packed = run([OURS], grid=grid, rng=1, workers=1, out=tmp_path / "run")
    write_tables(packed, tmp_path / "run", [OURS])
    packed = packed["coverage_proportion"]
    assert packed.groups and not packed.cells
    cells = packed.expanded()
    for bands in (None, [(1, 29), (30, 1000)]):
        for a, b in zip(summarise(packed, bands=bands), summarise(cells, bands=bands),
                        strict=True):
            # sums of 1000s of values: only the order of additions differs (last bits)
            assert (a.mean_coverage, a.mean_width) == pytest.approx(
                (b.mean_coverage, b.mean_width), rel=1e-14)
            assert dataclasses.replace(a, mean_coverage=0, mean_width=0) == \
                dataclasses.replace(b, mean_coverage=0, mean_width=0)
    wald = summarise(packed, bands=[(5, 5)], worst=1)[0]
    coverage = [r["value"] for r in select(cells, n=5, confidence_level=0.9,
                                           alternative="two-sided").rows("coverage",
                                                                         method="wald")]
    assert (wald.method, wald.confidence_level, wald.alternative) == ("wald", 0.9, "two-sided")
    assert wald.mean_coverage == pytest.approx(np.mean(coverage), abs=EXACT)
    table = (tmp_path / "run" / "coverage_proportion.summary.csv").read_text().splitlines()
    assert table[0].startswith("method,confidence_level,alternative,n,cells,mean_coverage")
    assert len(table) == 1 + len(PROPORTION_METHODS) * 9 * (1 + 3)  # overall + N_BANDS


def test_full_grid_runs_ours_and_the_vectorised_peers():
    full = STUDY.grids["full"]
    assert full.n_cells == 1000 * 1000 * 3 * 3 and len(full.parameters["p"]) == 1000
    methods = list(STUDY.for_grid(full).methods)
    assert methods[:len(PROPORTION_METHODS)] == list(PROPORTION_METHODS)
    assert not any(m.startswith("scipy:") for m in methods)
    assert set(STUDY.methods) - set(methods) == {m for m in STUDY.methods if "scipy:" in m}


def _zigzag(successes, trials, *, confidence_level, alternative):
    """Bounds that fall back and forth with the count: coverage must be summed count by count."""
    centre = successes / trials - 0.2 * (successes % 2)
    half = 0.5 * (1.0 - confidence_level) + 0.1
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def _landing_points(ns):
    """Values of p on which some method's bound lands exactly (bound equal to the truth)."""
    found = {0.0, 1.0}
    for n in ns:
        for method in ("clopper-pearson", "wilson", "wald", "mid-p", _zigzag):
            ci = method if callable(method) else functools.partial(proportion_ci, method=method)
            low, high = ci(np.arange(n + 1), n, confidence_level=0.95, alternative="two-sided")
            found |= {float(low[n // 2]), float(high[min(1, n)])}
    return sorted(found)


@pytest.mark.slow
def test_coverage_by_runs_equals_the_sum_over_counts():
    # The engine finds each method's covering counts as runs (binary search on the bounds)
    # and takes differences of cumulative probabilities; the reference sums scipy's binomial
    # pmf count by count with the same `low <= p <= high`. A bound equal to p must cover.
    ns = [1, 2, 3, 7, 25, 60, 150]  # 150: the zigzag bounds change direction > MAX_RUNS times
    points = sorted({0.0, 1e-9, 0.0005, 0.02, 0.5, 0.9995, 1 - 1e-9, 1.0,
                     *_landing_points(ns)})
    grid = Grid({"n": ns, "p": points, "confidence_level": list(LEVELS),
                 "alternative": list(ALTERNATIVES)}, n_replicates=2)
    methods = {**STUDY.methods, "zigzag": wrap_method(_zigzag)}
    study = dataclasses.replace(STUDY, methods=methods)
    frame = _run(study, grid).to_frame().set_index(
        ["n", "confidence_level", "alternative", "method", "measure", "p"]).sort_index()["value"]
    calls = {**interval_methods(), "zigzag": _zigzag}
    landed = 0
    checked = 0
    for n in ns:
        x = np.arange(n + 1)
        p = np.array(points)[:, None]
        pmf = stats.binom.pmf(x, n, p)
        for level in LEVELS:
            for side in ALTERNATIVES:
                for name, ci in calls.items():
                    low, high = (np.asarray(b, dtype=np.float64) for b in ci(
                        x, n, confidence_level=level, alternative=side))
                    inside = (low <= p) & (p <= high)
                    landed += int(np.count_nonzero(inside & ((low == p) | (high == p))))
                    expected = {"coverage": np.sum(pmf * inside, axis=1),
                                "width": pmf @ (high - low)}
                    for measure, values in expected.items():
                        got = frame.loc[(n, level, side, name, measure)].loc[points]
                        np.testing.assert_allclose(got.to_numpy(), values, rtol=0, atol=EXACT,
                                                   err_msg=f"{name} n={n} {level} {side}")
                        checked += len(points)
    assert checked == 2 * len(ns) * len(points) * len(LEVELS) * len(ALTERNATIVES) * len(calls)
    assert landed >= 100  # bounds equal to p, covering, are part of what was compared


def test_summaries_keep_the_lowest_cells_ties_in_grid_order():
    """Every summary figure against a direct computation over packed groups with many ties."""
    rng = np.random.default_rng(7)
    ps, levels = [0.1, 0.2, 0.3, 0.4], [0.9, 0.95]
    groups, cells = [], []
    for g, n in enumerate((3, 8, 40)):
        size = len(ps) * len(levels) * len(ALTERNATIVES)
        # few distinct values: ties at the lowest coverage within and across groups, and
        # cells exactly at the under-coverage line (90% - 0.01), which do not count
        values = {m: {"coverage": rng.choice([0.5, 0.7, 0.9 - 0.01, 0.9, 1.0], size),
                      "width": rng.uniform(0.0, 1.0, size)} for m in ("a", "b")}
        group = PackedGroup(study="coverage_proportion", key=str(g), shared={"n": n},
                            axes={"p": ps, "confidence_level": levels,
                                  "alternative": list(ALTERNATIVES)},
                            positions=np.arange(size) + g * size, values=values, errors={})
        groups.append(group)
        cells.extend(group.cells())
    result = StudyResult("coverage_proportion", groups=tuple(groups))
    bands = [(1, 10), (5, 100)]
    for keep in (1, 3, 30):
        found = {(s.method, s.confidence_level, s.alternative, s.n_range): s
                 for s in summarise(result, worst=keep, bands=bands)}
        assert len(found) == 2 * len(levels) * len(ALTERNATIVES) * len(bands)
        for (method, level, side, _), s in found.items():
            band = next(b for b in bands if b[0] <= s.n_range[0] and s.n_range[1] <= b[1])
            chosen = [c for c in cells if c.params["confidence_level"] == level
                      and c.params["alternative"] == side and band[0] <= c.params["n"] <= band[1]]
            coverage = [c.performance[method]["coverage"].value for c in chosen]
            width = [c.performance[method]["width"].value for c in chosen]
            expected = sorted(chosen, key=lambda c: (
                c.performance[method]["coverage"].value, c.position))[:keep]
            assert s.worst == tuple((c.params["n"], c.params["p"],
                                     c.performance[method]["coverage"].value) for c in expected)
            assert s.cells == len(chosen)
            assert s.mean_coverage == pytest.approx(math.fsum(coverage) / len(chosen), rel=1e-15)
            assert s.mean_width == pytest.approx(math.fsum(width) / len(chosen), rel=1e-15)
            assert s.share_below == np.mean(np.array(coverage) < level - 0.01)
            assert s.min_coverage == min(coverage)


def test_the_statsmodels_audit_runs_at_small_n_and_multiples_of_ten_only():
    """Ours run in every cell; statsmodels' at n <= 30 and at multiples of 10 (every n of the
    quick grid), so a full-grid group at n = 31 has ours only and one at n = 40 has both."""
    pytest.importorskip("statsmodels")
    full = STUDY.grid("full")
    quick = STUDY.grid("quick")
    assert all(applies("statsmodels:beta", {"n": n}) for n in quick.parameters["n"])
    audited = [n for n in full.parameters["n"] if applies("statsmodels:beta", {"n": n})]
    assert len(audited) == 127 and audited[:31] == [*range(1, 31), 40]
    for n, peers in ((31, False), (40, True)):
        grid = Grid({**full.parameters, "n": [n], "p": [0.25]}, n_replicates=2,
                    methods=full.methods)
        group = run([STUDY], grid=grid, rng=1, workers=1)["coverage_proportion"].groups[0]
        assert ("statsmodels:beta" in group.values) is peers
        assert "clopper-pearson" in group.values and not group.errors
