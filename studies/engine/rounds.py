"""Rounds: replicates spent where a claim is still open, at error rates that survive the looks.

A grid that declares ``rounds = L > 1`` (`studies.engine.design.Grid`) runs in rounds. Round
1 runs every cell with the declared ``R`` replicates; then every claim is judged (`look`).
A Monte Carlo cell that can still decide an open claim is raised to a higher level of the
grid's schedule ``R, 2R, 4R, ..., 2^(L-1) R`` (`Grid.schedule`) in the next round: it draws
the replicates it lacks from the stream of the cell and the level
(`studies.engine.seeding.cell_seed`) and adds them to those it has. A claim that HOLDS or
FAILS raises nothing; a run ends when no open claim can raise a cell (every claim decided,
or its cells at the top level), or when its time budget is spent. A claim still open then is
INCONCLUSIVE, its reason saying how many times the replicates would decide it.

**Error rates over the looks.** Each claim is judged with its false-alarm rate split over the
``L`` levels as well as over its values (`studies.engine.claims.evaluate_claims`,
``looks``): ``k = z(alpha / (L m))``. Whatever the path of a run, each of a cell's values is
judged at a number of replicates taken from the schedule's ``L`` values, and at each of these
its test has false-alarm rate at most ``alpha / (L m)`` under a true claim; by the union
bound, the claim fails on a run where it is true with probability at most ``alpha`` over all
its looks, however the data chose which cells to raise when. A confidence sequence
(Howard et al. 2021) would allow any number of replicates at any look; the fixed doubling
schedule costs instead a factor ``L`` inside the normal quantile (``k`` from 4.1 to 4.4 at
``alpha = 2e-5``, ``L = 4``: about 12% more replicates for the same power), and keeps every
claim judged as in a run of one round, by the same code.

**Power.** A claim HOLDS at a look only where it has power 0.95 to detect a deviation of its
resolution with the replicates it then has (its ``detectable`` at most its ``resolution``),
as in a run of one round. For a share (coverage, rejection) this power depends on the
replicates alone, not on the data, so the level at which a cell can decide is fixed in
advance and a claim off by its resolution is still flagged with probability at least 0.95.

**Allocation** (`next_levels`): each open claim raises the cells of its values that cannot
decide yet (`studies.engine.claims.Verdict.needs`), each to the level whose replicates bring
that value's detectable deviation to the resolution; its values that can decide raise
nothing:

* a value of one cell (a share, an estimate's measure, a difference from a reference method)
  raises that cell: a share by the exact binomial test's power, a measure of estimates by
  ``((k + 1.645) MCSE / resolution)^2`` times its replicates;
* a mean over cells raises the cells it is a mean of, by the same factor computed for the
  mean (Neyman-like, the replicates go where the open mean's MCSE comes from), and the
  claim's other means, decided, stay where they are: "at every f" raises only the f still
  open;
* a value without an MCSE (a topic that opened once) or an effect the data do not yet show
  raises its cells one level at least;
* a cell raised by any claim raises with it the other cells of every mean over cells it is
  in, decided or not (a decided claim is judged again at each look), to the same level.
  Raising a mean's cells together keeps its looks on the schedule: a mean whose cells stood
  at a mix of levels would be judged at a configuration of replicates outside the
  schedule's ``L``, which the union bound does not count.

A cell raised by one claim is raised for all: every claim is judged again on the cells as
they are after the last round (more replicates only add power; a new FAILS is one of the
looks the split pays for). Exact cells are never raised: they have no Monte Carlo error.

References
----------
Gandy, A. (2009). Sequential implementation of Monte Carlo tests with uniformly bounded
resampling risk. *JASA* 104(488), 1504-1511 (a Monte Carlo decision in rounds with a bounded
chance of a wrong one). Gandy, A. & Hahn, G. (2014). MMCTest: a safe algorithm for implementing
multiple Monte Carlo tests. *Scandinavian Journal of Statistics* 41(4), 1083-1101 (many tests at
once, undecided ones given more samples). Howard, S. R., Ramdas, A., McAuliffe, J. & Sekhon,
J. (2021). Time-uniform, nonparametric, nonasymptotic confidence sequences. *Annals of
Statistics* 49(2), 1055-1080. Morris, White & Crowther (2019), *Statistics in Medicine* 38,
2074-2102, section 5.3 (replicates for a wanted Monte Carlo precision).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from studies.engine.claims import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    Claim,
    Verdict,
    evaluate_claims,
)
from studies.engine.design import Grid, Study
from studies.engine.regions import as_text, region_mask
from studies.engine.results import StudyResult, now

__all__ = ["Look", "Needed", "decided_rounds", "level_of", "look", "next_levels", "still_needed"]


@dataclass(frozen=True)
class Look:
    """One study's look at its claims after a round: what was decided, what is raised next.

    Attributes
    ----------
    study : str
    round : int
        The round whose cells the look judged (1: the declared replicates).
    statuses : Mapping[str, tuple[str, int]]
        Each claim's status at this look and the Monte Carlo replicates of its region then
        (each cell counted once).
    raised : Mapping[str, int]
        The cells (`studies.engine.seeding.cell_key`) the next round raises, each to its level
        of the schedule (1-based); empty: the study's rounds are over.
    """

    study: str
    round: int
    statuses: Mapping[str, tuple[str, int]]
    raised: Mapping[str, int]

    def to_row(self) -> dict[str, object]:
        """The run-store row (`studies.engine.store.RunStore.put_round`)."""
        return {"study": self.study, "round": self.round,
                "statuses": json.dumps({k: list(v) for k, v in self.statuses.items()}),
                "raised": json.dumps(dict(self.raised)), "finished": now()}

    @classmethod
    def from_row(cls, row: Mapping[str, object]) -> Look:
        """Inverse of `to_row`."""
        statuses = json.loads(str(row["statuses"]))
        return cls(study=str(row["study"]), round=int(str(row["round"])),
                   statuses={k: (str(v[0]), int(v[1])) for k, v in statuses.items()},
                   raised={k: int(v) for k, v in json.loads(str(row["raised"])).items()})


def decided_rounds(looks: Sequence[Look], study: str) -> dict[str, int]:
    """The round each of a study's claims was decided at: the first look at which it HOLDS or
    FAILS; a claim open at every look has the number of rounds run. Empty without looks (a
    grid of one round)."""
    taken = [found for found in looks if found.study == study]
    decided: dict[str, int] = {}
    for found in taken:
        for claim, (status, _) in found.statuses.items():
            if claim not in decided and status in (HOLDS, FAILS):
                decided[claim] = found.round
    last = max((found.round for found in taken), default=1)
    return {claim: decided.get(claim, last) for found in taken for claim in found.statuses}


def level_of(schedule: Sequence[int], replicates: int) -> int:
    """The level (1-based) of a cell holding ``replicates``: the schedule's first level with at
    least that many (a cell run before the grid had rounds holds the declared number)."""
    return next((j + 1 for j, n in enumerate(schedule) if replicates <= n), len(schedule))


def look(study: Study, grid: Grid, grid_name: str | None, result: StudyResult, round_: int, *,
         familywise_error: float) -> tuple[Look, list[Verdict]]:
    """Judge the study's claims after round ``round_`` and plan the next round.

    The cells raised are those `next_levels` names, none once ``round_`` is the grid's last.
    """
    verdicts = evaluate_claims(study.claims, result, grid=grid_name,
                               familywise_error=familywise_error)
    frame = _monte_carlo_rows(result)
    statuses = {c.name: (v.status, v.replicates) for c, v in
                zip(study.claims, verdicts, strict=True)}
    raised = next_levels(study.claims, verdicts, frame, grid.schedule,
                         parameters=result.parameters) if round_ < grid.rounds else {}
    return Look(study.name, round_, statuses, raised), verdicts


def next_levels(claims: Sequence[Claim], verdicts: Sequence[Verdict], frame: pd.DataFrame,
                schedule: Sequence[int], *, parameters: Sequence[str] = ()) -> dict[str, int]:
    """The cells the open claims need raised, each to the highest level one of them needs,
    and with each the other cells of every mean it is in (`_aligned`).

    ``frame``: the Monte Carlo rows of the study's tidy frame with each cell's ``key``;
    ``schedule``: the grid's levels; ``parameters``: the grid's (a mean's cells share the
    values of those it is not over). A cell already at the top level is not raised.
    """
    wanted: dict[str, int] = {}
    if frame.empty:
        return wanted
    for claim, verdict in zip(claims, verdicts, strict=True):
        if verdict.status != INCONCLUSIVE:
            continue
        rows = _claim_rows(claim, frame)
        if rows.empty:
            continue
        replicates = rows["n_replicates"].to_numpy(float)
        factor = _factors(verdict, rows)
        for key, held, times in zip(rows["key"], replicates, factor, strict=True):
            if not times > 1.0:
                continue
            level = next((j + 1 for j, n in enumerate(schedule) if n >= held * times),
                         len(schedule))
            if level > level_of(schedule, int(held)):
                wanted[key] = max(wanted.get(key, 0), level)
    return _aligned(claims, frame, wanted, schedule, parameters)


def _aligned(claims: Sequence[Claim], frame: pd.DataFrame, wanted: Mapping[str, int],
             schedule: Sequence[int], parameters: Sequence[str]) -> dict[str, int]:
    """``wanted`` with every mean's cells brought to one level: a cell raised (by any claim)
    raises the other cells of each mean over cells it is in, decided or not, to its level.

    Every claim is judged again at each look, so a mean whose cells stood at a mix of levels
    would be judged at a configuration of replicates outside the schedule's ``L``, which the
    union bound does not count; with its cells at one level it is judged at one of them.
    """
    held = frame.groupby("key", sort=False)["n_replicates"].max()
    level = {key: max(wanted.get(key, 0), level_of(schedule, int(n)))
             for key, n in held.items()}
    means: list[list[str]] = []
    for claim in claims:
        if not claim.mean_over:
            continue
        rows = _claim_rows(claim, frame)
        if rows.empty:
            continue
        by = [p for p in parameters if p not in claim.mean_over and p in rows.columns]
        labels = _labels(rows, by) if by else pd.Series("", index=rows.index)
        means += [list(dict.fromkeys(part)) for _, part in rows["key"].groupby(labels)]
    moved = True
    while moved:  # means may share cells: until no mean has its cells at two levels
        moved = False
        for keys in means:
            top = max(level[key] for key in keys)
            for key in keys:
                if level[key] < top:
                    level[key], moved = top, True
    return {key: found for key, found in sorted(level.items())
            if found > level_of(schedule, int(held[key]))}


# The levels past a grid's schedule `still_needed` may count: up to 2^24 times its replicates.
_BEYOND = 24


@dataclass(frozen=True)
class Needed:
    """What raising an open claim's cells to the level that would decide it takes.

    Attributes
    ----------
    replicates : int
        Monte Carlo replicates more, over the cells raised.
    core_seconds : float
        Their time on one core, at each cell's own seconds per replicate in the run.
    """

    replicates: int
    core_seconds: float


def still_needed(claim: Claim, verdict: Verdict, result: StudyResult, grid: Grid
                 ) -> Needed | None:
    """What an INCONCLUSIVE claim would need to decide, from a finished run.

    The cells `next_levels` raises for the claim alone, on the grid's doubling schedule
    continued past its levels, and their time at each cell's measured seconds per replicate
    (`CellResult.seconds` over its replicates). A value without an MCSE, or an effect the data
    do not show yet, counts one level more: the next round's try, not a bound. None for a
    claim of another status, or when no cell would be raised.
    """
    if verdict.status != INCONCLUSIVE:
        return None
    frame = _monte_carlo_rows(result)
    schedule = tuple(grid.n_replicates * 2 ** j for j in range(max(grid.rounds, _BEYOND)))
    raised = next_levels([claim], [verdict], frame, schedule, parameters=result.parameters)
    if not raised:
        return None
    held = frame.groupby("key")["n_replicates"].max()
    seconds = {c.key: c.seconds for c in result.cells}
    more = {key: schedule[level - 1] - int(held[key]) for key, level in raised.items()}
    return Needed(sum(more.values()), float(sum(
        n * seconds[key] / float(held[key]) for key, n in more.items())))


def _factors(verdict: Verdict, rows: pd.DataFrame) -> NDArray[np.float64]:
    """How many times its replicates each row needs for the claim to decide (> 1: raise): the
    largest factor of the open values it is in (`Verdict.needs`), matched on the values'
    parameters (a mean's: the parameters it is not over); 1 in no open value."""
    needs = verdict.needs
    found = np.ones(len(rows))
    if needs.empty or not (needs["factor"] > 1.0).any():
        return found
    open_ = needs[needs["factor"] > 1.0]
    by = [c for c in open_.columns if c not in ("method", "factor")]
    if not by:  # a mean over every parameter: one value, all its cells
        return np.full(len(rows), float(open_["factor"].max()))
    wanted = open_.groupby(_labels(open_, by))["factor"].max()
    matched = _labels(rows, by).map(wanted).to_numpy(float)
    return np.where(np.isnan(matched), 1.0, matched)


def _labels(frame: pd.DataFrame, by: Sequence[str]) -> pd.Series:
    """Each row's values of ``by`` as one text (a parameter may hold a list)."""
    return as_text(frame[list(by)]).astype(str).agg("|".join, axis=1)


def _claim_rows(claim: Claim, frame: pd.DataFrame) -> pd.DataFrame:
    """The Monte Carlo rows a claim reads: its methods' (and reference's) measure, in its
    region."""
    methods = (*claim.methods, claim.reference) if claim.reference else claim.methods
    rows = frame[frame["method"].isin(methods) & (frame["measure"] == claim.measure)]
    if claim.where and len(rows):
        rows = rows[region_mask(rows, claim.where)]
    return rows


def _monte_carlo_rows(result: StudyResult) -> pd.DataFrame:
    """The study's tidy frame, Monte Carlo cells only, with each cell's key."""
    cells = [c for c in result.cells if c.path != "exact"]
    if not cells:
        return pd.DataFrame(columns=["key", "method", "measure", "n_replicates"])
    only = StudyResult(result.study, tuple(cells), (), result.parameters, result.looks)
    frame = only.to_frame()
    keys = {c.position: c.key for c in cells}
    return frame.assign(key=frame["position"].map(keys))
