"""Rounds: a claim's false-alarm rate and power over the looks of a run, and their checks failing
when the method is broken on purpose (`studies.engine.rounds`).

A claim judged after each of a run's rounds has its rate ``alpha`` split over its ``m`` values
and the grid's ``L`` levels, ``k = z(alpha / (sides m L))`` (`evaluate_claims`, ``looks``), so
that it fails a run where it is true with probability at most ``alpha`` over all its looks.

* A share (coverage) of one cell: its verdict is a function of the count of covering
  replicates, and the path of a run's sizes depends on the data only through FAILS (the power
  of a share depends on its replicates alone), so P(FAILS at some look) is computed exactly by a
  dynamic program over the cumulative count, with each look's critical count taken from the
  engine itself.
* A measure of estimates (bias): a claim over a mean of cells, and an effect claim of each
  cell, simulated over many runs. Each cell's value at level ``j`` of the schedule is the mean
  of its first ``n_j`` replicates (a normal draw per block of new replicates, combined by
  weights; MCSE ``sigma / sqrt(n_j)``). The engine's decision at a configuration of levels
  depends on the data only through whether a value fails and whether one lies on the wrong side
  of its bound: it is read once per configuration from `rounds.look` (`_decisions`), applied to
  every run at once, and checked against `rounds.look` run by run (the first runs, and the
  first of each final status and number of looks). The claim over a mean, whose path is fixed,
  is also checked against the exact normal probability of its two looks.

Each check is also run with the looks not split (``looks=1``), and fails there.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, stats

from studies.engine import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    CellResult,
    Claim,
    Grid,
    Measure,
    Performance,
    Study,
    StudyResult,
    evaluate_claims,
    rounds,
)

# A share of one cell, exact: coverage at least 0.95 (resolution 0.02), R = 200, 5 levels.
SHARE_CLAIM = Claim("c", "coverage at least 95%", ("m",), "coverage", "at_least", 0.95)
SHARE_ALPHA = 0.01
SHARE_GRID = Grid({"setting": [0]}, n_replicates=200, rounds=5)

# Measures of estimates, simulated: bias at most 0 on average over 4 cells; an effect, bias at
# least 0.05 below 0 in each of 4 cells; both with resolution 0.05, at rate 0.05.
MC_ALPHA = 0.05
MC_RUNS = 100_000
MEAN_CLAIM = Claim("mean", "unbiased on average", ("m",), "bias", "at_most", 0.0,
                   mean_over=("setting",), resolution=0.05)
MEAN_SIGMAS = (1.0, 1.5, 2.0, 2.5)
MEAN_GRID = Grid({"setting": [0, 1, 2, 3]}, n_replicates=800, rounds=4)
EFFECT_CLAIM = Claim("below", "at least 0.05 below 0", ("m",), "bias", "at_most", 0.0,
                     margin=-0.05, resolution=0.05)
EFFECT_SIGMAS = (0.4, 0.5, 0.6, 0.7)
EFFECT_GRID = Grid({"setting": [0, 1, 2, 3]}, n_replicates=2000, rounds=5)
SEED_MEAN_TRUE, SEED_MEAN_OFF = 20240601, 20240602
SEED_EFFECT_TRUE, SEED_EFFECT_OFF = 20240603, 20240604
SEED_MEAN_BROKEN, SEED_EFFECT_BROKEN = 20240605, 20240606
# The simulated checks' own false-alarm rate, each (one-sided): 1e-4.
K_TOL = float(stats.norm.isf(1e-4))
# Runs replayed through `rounds.look`, one look at a time, per simulation: the first ones and
# the first of each final status and number of looks.
REPLAYED = 6

_OPEN = 0
_CODES = {FAILS: 1, HOLDS: 2, INCONCLUSIVE: 3}
# `_decisions` by claim, sigmas, configuration of levels, rate and looks (the engine's, fixed).
_TABLES: dict[tuple[object, ...], dict[str, object]] = {}


def _study(claim: Claim, grid: Grid) -> Study:
    """A study of one method stating ``claim`` (only its grid and claims are read here)."""
    return Study(name="s", version="1", grids={"quick": grid, "full": grid},
                 truth=lambda params: 0.0, generate=lambda *args, **kwargs: None,
                 methods={"m": lambda sample, params: None}, claims=(claim,))


def _result(measure: str, values, mcses, replicates, looks: int) -> StudyResult:
    """A study result of Monte Carlo cells ``setting`` = 0, 1, ..., one method's ``measure``."""
    cells = tuple(
        CellResult("s", f"cell{i}", i, {"setting": i}, "monte-carlo",
                   {"m": Performance({measure: Measure(float(v), float(e))}, int(n))}, {}, b"")
        for i, (v, e, n) in enumerate(zip(values, mcses, replicates, strict=True)))
    return StudyResult("s", cells, parameters=("setting",), looks=looks)


# --- a share of one cell: exact --------------------------------------------------------------


def _share_result(covering: int, n: int, looks: int) -> StudyResult:
    share = covering / n
    return _result("coverage", [share], [math.sqrt(share * (1 - share) / n)], [n], looks)


def _fails(covering: int, n: int, looks: int, alpha: float) -> bool:
    found = evaluate_claims([SHARE_CLAIM], _share_result(covering, n, looks),
                            familywise_error=alpha, looks=looks)[0]
    return found.status == FAILS


def _critical_count(n: int, looks: int, alpha: float) -> int:
    """The fewest covering replicates of ``n`` that the engine does not fail (bisection)."""
    low, high = 0, n
    assert _fails(low, n, looks, alpha) and not _fails(high, n, looks, alpha)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if _fails(middle, n, looks, alpha) else (low, middle)
    return high


def _share_path(looks: int, alpha: float) -> list[tuple[int, str, int]]:
    """The sizes a run judges the share claim at, by `rounds.look`: each look's replicates, its
    status when the claim does not fail, and its critical count.

    The status and the cells raised are the same at every count that does not fail (all
    covering, or the critical count): a share's power depends on its replicates alone.
    """
    study, schedule = _study(SHARE_CLAIM, SHARE_GRID), SHARE_GRID.schedule
    n, path = schedule[0], []
    for round_ in range(1, SHARE_GRID.rounds + 1):
        critical = _critical_count(n, looks, alpha)
        found = [rounds.look(study, SHARE_GRID, None, _share_result(c, n, looks), round_,
                             familywise_error=alpha) for c in (n, critical)]
        (first, (verdict,)), (other, (same,)) = found
        assert (verdict.status, first.raised) == (same.status, other.raised)
        assert verdict.status in (HOLDS, INCONCLUSIVE)
        path.append((n, verdict.status, critical))
        if not first.raised:
            return path
        n = schedule[first.raised["cell0"] - 1]
    return path


def _fail_probability(sizes, critical, p: float) -> tuple[float, list[float]]:
    """P(FAILS at some look) when each replicate covers with probability ``p``: the run looks
    at ``sizes`` in turn and fails at the first whose count of covering replicates is below
    its ``critical`` count. Exact: the distribution of the cumulative count among the runs not
    yet failed, advanced by binomial increments between looks."""
    alive = stats.binom.pmf(np.arange(sizes[0] + 1), sizes[0], p)
    each = []
    for j, (n, c) in enumerate(zip(sizes, critical, strict=True)):
        if j:
            added = n - sizes[j - 1]
            alive = np.convolve(alive, stats.binom.pmf(np.arange(added + 1), added, p))
        each.append(float(alive[:c].sum()))
        alive[:c] = 0.0
    return float(sum(each)), each


def _independent_critical(n: int, looks: int, alpha: float) -> int:
    """The critical count by the binomial tail, scipy only: a share fails when more of its
    replicates miss than the smallest ``c`` with ``P(Binomial(n, 0.05) > c) <= alpha / L``
    (summed from the probability mass function, not read from the engine's quantile)."""
    tail = 1.0 - np.cumsum(stats.binom.pmf(np.arange(n + 1), n, 0.05))
    return n - int(np.flatnonzero(tail <= alpha / looks)[0])


def test_a_share_claim_fails_at_most_alpha_over_its_looks_and_detects_its_resolution():
    """Exact (no tolerance; sums of binomial probabilities): coverage at least 0.95 of one
    cell, R = 200 and 5 levels (200 ... 3200), alpha = 0.01. The run looks at 200 replicates
    (no power: INCONCLUSIVE), is raised to the level of its power, 3200, and decides there.
    P(FAILS at some look) is at most alpha at a true coverage of 0.95, and at least 0.95 at
    0.93 (off by the resolution). The critical counts read from the engine are those of the
    formula, computed independently."""
    path = _share_path(SHARE_GRID.rounds, SHARE_ALPHA)
    sizes, statuses, critical = (list(t) for t in zip(*path, strict=True))
    assert sizes == [200, 3200] and statuses == [INCONCLUSIVE, HOLDS]
    assert critical == [_independent_critical(n, SHARE_GRID.rounds, SHARE_ALPHA)
                        for n in sizes]
    false_alarm, _ = _fail_probability(sizes, critical, 0.95)
    assert false_alarm <= SHARE_ALPHA  # 0.00829
    power, _ = _fail_probability(sizes, critical, 0.95 - SHARE_CLAIM.resolution)
    assert power >= 0.95  # 0.978


def test_the_share_claims_check_fails_when_the_looks_are_not_split():
    """The break of the test above, exact: the critical counts of one look (``looks=1``)
    applied at the same two looks fail a true claim with probability 0.0233 > alpha = 0.01:
    the split over the levels is what holds the rate."""
    sizes = [n for n, _, _ in _share_path(SHARE_GRID.rounds, SHARE_ALPHA)]
    critical = [_critical_count(n, 1, SHARE_ALPHA) for n in sizes]
    assert critical == [_independent_critical(n, 1, SHARE_ALPHA) for n in sizes]
    false_alarm, _ = _fail_probability(sizes, critical, 0.95)
    assert false_alarm > SHARE_ALPHA  # 0.0233


def test_each_look_of_a_share_fails_a_true_claim_at_most_at_its_share_of_alpha():
    """Exact: the premise of the rounds' union bound, each look's false-alarm rate at most
    ``alpha / L``, at every level of the schedule (a cell may be judged at each, when the
    claims of a study raise it a level at a time), and P(FAILS at some of the 5 levels)."""
    schedule, levels = SHARE_GRID.schedule, SHARE_GRID.rounds
    critical = [_critical_count(n, levels, SHARE_ALPHA) for n in schedule]
    each = [float(stats.binom.cdf(c - 1, n, 0.95)) for n, c in zip(schedule, critical,
                                                                    strict=True)]
    union, _ = _fail_probability(list(schedule), critical, 0.95)
    assert max(each) <= SHARE_ALPHA / levels and union <= SHARE_ALPHA, (each, union)


def test_a_share_claim_at_a_small_rate_fails_at_most_alpha_over_its_looks():
    """Exact, as the first test, at alpha = 1e-3 (a suite's claims are judged at about 1e-4):
    R = 500, 4 levels."""
    alpha, grid = 1e-3, Grid({"setting": [0]}, n_replicates=500, rounds=4)
    study = _study(SHARE_CLAIM, grid)
    n, sizes = grid.schedule[0], []
    for round_ in range(1, grid.rounds + 1):
        sizes.append(n)
        found, _ = rounds.look(study, grid, None, _share_result(n, n, grid.rounds), round_,
                               familywise_error=alpha)
        if not found.raised:
            break
        n = grid.schedule[found.raised["cell0"] - 1]
    assert sizes == [500, 4000]
    critical = [_critical_count(n, grid.rounds, alpha) for n in sizes]
    false_alarm, _ = _fail_probability(sizes, critical, 0.95)
    assert false_alarm <= alpha, false_alarm


# --- measures of estimates: simulated --------------------------------------------------------


def _bias_result(values, levels, sigmas, schedule, looks: int) -> StudyResult:
    replicates = [schedule[level - 1] for level in levels]
    mcses = [s / math.sqrt(n) for s, n in zip(sigmas, replicates, strict=True)]
    return _result("bias", values, mcses, replicates, looks)


def _bound(claim: Claim) -> float:
    return float(claim.target) + claim.margin  # both claims are "at_most"


def _decisions(claim: Claim, grid: Grid, sigmas, config: tuple[int, ...], alpha: float,
               looks: int) -> dict[str, object]:
    """What `rounds.look` does at the levels ``config`` of the cells, read from the engine.

    The allowance of each value compared (a cell's, or the mean's) is the engine's, from a
    look at values far beyond the bound; the engine then fails the values 1e-6 of it beyond it
    (every one), and not those 1e-6 of it inside: there it reads the status and the cells
    raised when some value lies on the wrong side of its bound; and at values 1 below their
    bound, those when none does. The cells raised are given as levels (0: not raised).
    """
    study, schedule, bound = _study(claim, grid), grid.schedule, _bound(claim)

    def at(values):
        found, (verdict,) = rounds.look(
            study, grid, None, _bias_result(values, config, sigmas, schedule, looks), 1,
            familywise_error=alpha)
        raised = np.array([found.raised.get(f"cell{i}", 0) for i in range(len(sigmas))])
        return verdict, raised

    cells = len(sigmas)
    far, _ = at([bound + 1e3] * cells)
    assert far.status == FAILS
    failures = far.failures.sort_values("setting") if not claim.mean_over else far.failures
    allowance = failures["allowance"].to_numpy(float)
    assert len(allowance) == (1 if claim.mean_over else cells) and (allowance > 0).all()
    per_cell = np.broadcast_to(allowance, (cells,))
    beyond, _ = at(bound + per_cell * (1 + 1e-6))
    assert beyond.status == FAILS and len(beyond.failures) == len(allowance)
    wrong, wrong_raised = at(bound + per_cell * (1 - 1e-6))
    right, right_raised = at([bound - 1.0] * cells)
    assert wrong.status != FAILS and right.status != FAILS
    return {"allowance": allowance, "wrong": (_CODES[wrong.status], wrong_raised),
            "right": (_CODES[right.status], right_raised)}


def _cumulative_values(mu, sigmas, schedule, runs: int, seed: int) -> np.ndarray:
    """Each run's value of each cell at each level (runs x cells x levels): the mean of its
    first ``n_j`` replicates, built from the normal mean of each block of new replicates."""
    rng = np.random.default_rng(seed)
    sizes = np.asarray(schedule, dtype=float)
    added = np.diff(sizes, prepend=0.0)
    sd = np.asarray(sigmas)[:, None] / np.sqrt(added)[None, :]
    blocks = np.asarray(mu, dtype=float)[None, :, None] + sd[None] * rng.standard_normal(
        (runs, len(sigmas), len(schedule)))
    return np.cumsum(blocks * added, axis=2) / sizes


def _simulate(claim: Claim, grid: Grid, sigmas, values: np.ndarray, alpha: float,
              looks: int) -> tuple[np.ndarray, np.ndarray]:
    """Every run's final status code and number of looks, by the engine's decisions
    (`_decisions`) at each configuration of levels the runs reach; a look at the last round
    raises nothing, as `rounds.look`."""
    runs, cells, _ = values.shape
    bound = _bound(claim)
    levels = np.ones((runs, cells), dtype=int)
    status = np.full(runs, _OPEN)
    taken = np.zeros(runs, dtype=int)
    for round_ in range(1, grid.rounds + 1):
        open_ = np.flatnonzero(status == _OPEN)
        if not open_.size:
            break
        taken[open_] = round_
        # each run's configuration of levels as one integer (base: more than the levels)
        coded = levels[open_] @ (grid.rounds + 1) ** np.arange(cells)
        codes, first, which = np.unique(coded, return_index=True, return_inverse=True)
        for c in range(codes.size):
            idx = open_[which == c]
            config = levels[open_[first[c]]].copy()
            key = (claim.name, tuple(sigmas), tuple(int(v) for v in config), alpha, looks)
            if key not in _TABLES:
                _TABLES[key] = _decisions(claim, grid, sigmas, key[2], alpha, looks)
            table = _TABLES[key]
            current = values[idx[:, None], np.arange(cells)[None, :], config[None, :] - 1]
            compared = current.mean(axis=1, keepdims=True) if claim.mean_over else current
            deviation = compared - bound
            fails = (deviation > table["allowance"]).any(axis=1)
            # a value on the wrong side raises its own cells (a mean's: all of them)
            wrong_values = np.broadcast_to(deviation > 0, (idx.size, cells))
            wrong = wrong_values.any(axis=1)
            status[idx[fails]] = _CODES[FAILS]
            (wrong_code, wrong_raised), (right_code, right_raised) = (table["wrong"],
                                                                      table["right"])
            code = np.where(wrong, wrong_code, right_code)
            raised = np.where(wrong_values, wrong_raised, right_raised)
            ends = (code != _CODES[INCONCLUSIVE]) | ~(raised > 0).any(axis=1) \
                | (round_ == grid.rounds)
            for chosen, ended in ((~fails & ends, True), (~fails & ~ends, False)):
                if ended:
                    status[idx[chosen]] = code[chosen]
                else:
                    levels[idx[chosen]] = np.where(raised[chosen] > 0, raised[chosen], config)
    return status, taken


def _replay(claim: Claim, grid: Grid, sigmas, values: np.ndarray, alpha: float,
            looks: int) -> tuple[np.ndarray, np.ndarray]:
    """The same runs' final statuses and looks through `rounds.look`, one look at a time, the
    raised cells taking their values at their new levels."""
    study, schedule = _study(claim, grid), grid.schedule
    statuses, taken = [], []
    for run in values:
        levels = [1] * len(sigmas)
        for round_ in range(1, grid.rounds + 1):
            current = [run[i, level - 1] for i, level in enumerate(levels)]
            found, (verdict,) = rounds.look(
                study, grid, None, _bias_result(current, levels, sigmas, schedule, looks),
                round_, familywise_error=alpha)
            if not found.raised:
                break
            levels = [found.raised.get(f"cell{i}", level) for i, level in enumerate(levels)]
        statuses.append(_CODES[verdict.status])
        taken.append(round_)
    return np.array(statuses), np.array(taken)


def _fails_rate(claim: Claim, grid: Grid, sigmas, mu, seed: int, looks: int,
                alpha: float = MC_ALPHA, runs: int = MC_RUNS) -> tuple[float, np.ndarray]:
    """The share of simulated runs whose claim FAILS, and each run's number of looks; the
    first `REPLAYED` runs and the first of each final status and number of looks are checked
    against `rounds.look`."""
    values = _cumulative_values(mu, sigmas, grid.schedule, runs, seed)
    status, taken = _simulate(claim, grid, sigmas, values, alpha, looks)
    assert (status != _OPEN).all()
    _, first = np.unique(status * (grid.rounds + 1) + taken, return_index=True)
    chosen = np.union1d(np.arange(REPLAYED), first)
    replayed = _replay(claim, grid, sigmas, values[chosen], alpha, looks)
    assert np.array_equal(replayed[0], status[chosen])
    assert np.array_equal(replayed[1], taken[chosen])
    return float(np.mean(status == _CODES[FAILS])), taken


def _mcse(rate: float, runs: int = MC_RUNS) -> float:
    return math.sqrt(rate * (1 - rate) / runs)


def _mean_claim_exact(mu: float, looks: int) -> float:
    """P(FAILS) of the claim over the mean of cells at a common true bias ``mu``, by the normal
    law of its two looks (all cells at the first level, then at the level both paths take):
    the means of the first ``n_1`` and of all ``n_2`` replicates have correlation
    ``sqrt(n_1 / n_2)``; the allowances are the engine's (`_decisions`)."""
    schedule, last = MEAN_GRID.schedule, MEAN_GRID.rounds
    cells = len(MEAN_SIGMAS)
    found = _decisions(MEAN_CLAIM, MEAN_GRID, MEAN_SIGMAS, (1,) * cells, MC_ALPHA, looks)
    assert found["wrong"][1].tolist() == found["right"][1].tolist() == [last] * cells
    ses, limits = [], []
    for level in (1, last):
        se = math.sqrt(sum(s * s for s in MEAN_SIGMAS) / schedule[level - 1]) / cells
        table = _decisions(MEAN_CLAIM, MEAN_GRID, MEAN_SIGMAS, (level,) * cells, MC_ALPHA,
                           looks)
        ses.append(se)
        limits.append((_bound(MEAN_CLAIM) + float(table["allowance"][0]) - mu) / se)
    rho = ses[1] / ses[0]
    # P(Z_1 <= h_1, Z_2 <= h_2), by Z_2 given Z_1 = z: normal, mean rho z, variance 1 - rho^2
    inside, _ = integrate.quad(
        lambda z: stats.norm.pdf(z) * stats.norm.cdf(
            (limits[1] - rho * z) / math.sqrt(1 - rho * rho)), -np.inf, limits[0],
        epsabs=1e-12)
    return 1.0 - inside


def test_a_claim_over_a_mean_of_cells_fails_at_most_alpha_and_detects_its_resolution():
    """Simulated, 100,000 runs: bias at most 0 on average over 4 cells (sigma 1 to 2.5),
    R = 800, 4 levels, alpha = 0.05. A run looks at 800 replicates a cell (no power) and is
    raised, every cell together, to the level of its power (6400), where it decides. With the
    mean's truth at the bound it FAILS in at most alpha + K_TOL MCSE of the runs; off by the
    resolution (0.05), in at least 0.95 - K_TOL MCSE. Each tolerance's own false-alarm rate:
    1e-4 (one-sided normal quantile of the rate's binomial MCSE). Both rates agree with the
    exact normal probabilities of the two looks within K_TOL MCSE (two-sided: 2e-4)."""
    zero = [0.0] * len(MEAN_SIGMAS)
    false_alarm, taken = _fails_rate(MEAN_CLAIM, MEAN_GRID, MEAN_SIGMAS, zero,
                                     SEED_MEAN_TRUE, MEAN_GRID.rounds)
    assert set(np.unique(taken)) == {1, 2}  # a look without power, then one with it
    assert false_alarm <= MC_ALPHA + K_TOL * _mcse(MC_ALPHA)
    off = [MEAN_CLAIM.resolution] * len(MEAN_SIGMAS)
    power, _ = _fails_rate(MEAN_CLAIM, MEAN_GRID, MEAN_SIGMAS, off, SEED_MEAN_OFF,
                           MEAN_GRID.rounds)
    assert power >= 0.95 - K_TOL * _mcse(0.95)
    # the simulation agrees with the exact normal probabilities (two-sided, rate 2e-4 each)
    for rate, mu in ((false_alarm, 0.0), (power, MEAN_CLAIM.resolution)):
        exact = _mean_claim_exact(mu, MEAN_GRID.rounds)
        assert abs(rate - exact) <= K_TOL * _mcse(exact)


def test_an_effect_claim_fails_at_most_alpha_at_its_bound_and_detects_a_miss_of_its_resolution():
    """Simulated, 100,000 runs: bias at least 0.05 below 0 in each of 4 cells (sigma 0.4 to
    0.7), R = 2000, 5 levels (2000 ... 32000), alpha = 0.05. A cell whose estimate lies on the
    wrong side of the bound within the allowance is raised a level and looked at again, up to
    5 looks; one without the power (R = 2000) is raised to the level that gives it. With
    the effect exactly at its bound in every cell the claim FAILS in at most alpha + K_TOL MCSE
    of the runs; with the least precise cell missing it by the resolution (0.05), in at least
    0.95 - K_TOL MCSE. Each tolerance's own false-alarm rate: 1e-4."""
    bound = [_bound(EFFECT_CLAIM)] * len(EFFECT_SIGMAS)
    false_alarm, taken = _fails_rate(EFFECT_CLAIM, EFFECT_GRID, EFFECT_SIGMAS, bound,
                                     SEED_EFFECT_TRUE, EFFECT_GRID.rounds)
    assert set(np.unique(taken)) == set(range(1, EFFECT_GRID.rounds + 1))  # every path length
    assert false_alarm <= MC_ALPHA + K_TOL * _mcse(MC_ALPHA)
    missed = [*bound[:-1], bound[-1] + EFFECT_CLAIM.resolution]
    power, _ = _fails_rate(EFFECT_CLAIM, EFFECT_GRID, EFFECT_SIGMAS, missed, SEED_EFFECT_OFF,
                           EFFECT_GRID.rounds)
    assert power >= 0.95 - K_TOL * _mcse(0.95)


def test_the_simulated_checks_fail_when_the_looks_are_not_split():
    """The break of the two tests above: the same simulations judged with one look's ``k``
    (``looks=1``, each claim's rate not split over the levels) fail a true claim in more than
    alpha + K_TOL MCSE of the runs (each check's own false-alarm rate 1e-4); the mean's rate
    agrees with its exact normal probability (within K_TOL MCSE, two-sided: 2e-4)."""
    zero = [0.0] * len(MEAN_SIGMAS)
    mean_rate, _ = _fails_rate(MEAN_CLAIM, MEAN_GRID, MEAN_SIGMAS, zero, SEED_MEAN_BROKEN, 1)
    assert mean_rate > MC_ALPHA + K_TOL * _mcse(MC_ALPHA)
    exact = _mean_claim_exact(0.0, 1)
    assert exact > MC_ALPHA and abs(mean_rate - exact) <= K_TOL * _mcse(exact)
    bound = [_bound(EFFECT_CLAIM)] * len(EFFECT_SIGMAS)
    effect_rate, _ = _fails_rate(EFFECT_CLAIM, EFFECT_GRID, EFFECT_SIGMAS, bound,
                                 SEED_EFFECT_BROKEN, 1)
    assert effect_rate > MC_ALPHA + K_TOL * _mcse(MC_ALPHA)
