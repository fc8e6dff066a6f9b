"""Claims: the findings a study states must hold, and their verdicts on a run.

A claim names methods, a performance measure, a region of the grid and a comparison with a
target: "the coverage of clopper-pearson is at least the nominal level in every cell", "the
mean coverage over p of wilson is within 0.01 of nominal at each n", "the bias of the pooled
estimator is at most 0". The target is a number or a grid parameter (``"confidence_level"``:
the nominal level of each cell); the comparison allows a stated ``margin`` (the size of the
finding, part of the claim). Each value compared gets a statistical allowance:

* exact cells (every outcome enumerated): a stated numerical tolerance (``exact_tolerance``,
  rounding), never a Monte Carlo allowance;
* Monte Carlo values: ``k x SE``, with ``k`` the normal quantile that holds the claim's
  family-wise false-alarm rate over all its ``m`` Monte Carlo values (Bonferroni:
  ``k = z(alpha / m)`` one-sided, ``z(alpha / (2 m))`` for ``within``), the SE the value's
  MCSE. A share of replicates (coverage, rejection) is judged at the bound instead, by the
  exact binomial tail: it fails when more of its ``R`` replicates lie beyond the bound ``b``
  than the smallest ``c`` with ``P(Binomial(R, b) > c) <= alpha / m`` (`_share_critical`).
  The MCSE at an estimate near 0 or 1 is too small, and the normal approximation at the
  bound, ``k sqrt(b (1 - b) / R)``, is too: near ``b = 0.05`` the binomial is skewed, and it
  failed true claims up to 3 times as often as stated at small rates. A share among
  the tests made (``conditional_rejection``) counts the ``tested x R`` replicates that made
  one; a cell without a test is not compared, nor is its mean saving among the tests made
  (``conditional_saving``).

The family-wise rate ``alpha`` of a claim is its own ``familywise_error`` when it states one,
else the share the caller gives it of a suite's budget (`evaluate_claims`); in a run in
rounds it is split over the grid's ``L`` levels of replicates too, ``k = z(alpha / (L m))``
(`studies.engine.rounds`: the rate then holds over all the run's looks); a suite that splits
a budget ``B`` equally over its claims fails, when every claim is true, on at most about ``B``
of its runs (normal approximation).

**Power.** Every claim states its ``resolution``: the smallest deviation beyond its bound (in
the measure's units) that it must detect, or takes the default of its measure
(`RESOLUTIONS`). On each run the engine computes ``detectable``, the deviation beyond the bound
that the claim flags with probability 0.95 in its least precise value: ``(k + 1.645) x SE`` for
a measure of estimates (normal approximation), and for a share of ``R`` replicates exactly: the
``d`` at which ``Binomial(R, b + d)`` passes the claim's critical count with probability 0.95
(`_share_detectable`; above 0 at a bound of 0 or 1, infinite when no share in [0, 1] could
fail the claim). A claim whose ``detectable`` exceeds its ``resolution`` cannot
decide the question it asks on this grid.

**Verdicts.**

* ``FAILS``: a value lies beyond its bound by more than its allowance (an exact value beyond
  the rounding tolerance), is undefined (nan), or its method raised in a cell of the region.
* ``INCONCLUSIVE``: nothing fails, but the claim lacks the power to fail (``detectable >
  resolution``), a Monte Carlo value compared has no MCSE (a mean over a single replicate:
  its power is unknown), or it is a claim of an **effect** whose estimate lies on the wrong
  side of its bound within the allowance. The verdict's ``reason`` says which, and how many
  times the replicates would decide it.
* ``HOLDS``: nothing fails, the claim has the power to detect a deviation of its resolution,
  and a claim of an effect has every estimate on its side of the bound.
* ``NOT RUN``: the run has no value in the claim's region, or the claim is judged only on
  other grids (``grids``).

**A claim against a reference method** (``reference``) compares, in each cell, the difference
between each of its methods' value and the reference method's value of the same measure in
the same cell: "scipy's exact interval has Clopper-Pearson's width" (a peer implementation of
the same formula, difference within 1e-9), "segments-clopper-pearson is at most 0.05 wider than
jaccard-clopper-pearson". Exact values give an exact difference. The MCSE of a Monte Carlo
difference is the sum of the two MCSEs: the results keep no covariance between methods, and
``sd(a - b) <= sd(a) + sd(b)`` whatever their correlation, so the false-alarm rate holds (and
the power is that of the sum). A difference is a measure of estimates, not a share: it takes
its resolution from the claim, and its power from that sum. With ``relative`` the value
compared is the ratio less 1, ``a / b - 1`` ("Korn-Graubard is at most 50% wider than
Jeffreys"; 0 where both are 0, infinite where only the reference is), its MCSE
``(se_a + |a / b| se_b) / |b|``, the delta method's bound whatever the correlation.

A claim of an effect says that the data show something ("at least 5 points below nominal",
"the apparent error is optimistic"): it holds only where the estimates show it. A claim of a
bound ("coverage at least nominal", "unbiased within 0.01") is a property that noise may hide
by up to its allowance. ``effect`` defaults to a negative margin (a finding of a given size).
Parameters holding lists are compared as their text (`studies.engine.regions`).

References
----------
Morris, White & Crowther (2019), *Statistics in Medicine* 38, 2074-2102 (Monte Carlo SEs of
performance measures, section 5.2; the number of replicates for a wanted precision, section
5.3). Bonferroni correction: Hochberg & Tamhane (1987), *Multiple Comparison Procedures*,
Wiley. The power of a one-sided test of a binomial share in its normal approximation with the
SE at the alternative: Fleiss, Levin & Paik (2003), *Statistical Methods for Rates and
Proportions*, 3rd ed., Wiley, section 2.5.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats

from studies.engine.means import MEAN_SUMS, mean_terms, means_from_sums
from studies.engine.regions import as_text, region_mask
from studies.engine.results import PackedGroup, StudyResult

__all__ = ["COMPARISONS", "DEFAULT_FAMILYWISE_ERROR", "FAILS", "FAILURE_COLUMNS", "HOLDS",
           "INCONCLUSIVE", "NOT_RUN", "PINS", "POWER_Z", "RESOLUTIONS", "STATUSES", "Claim",
           "Verdict", "evaluate_claims", "tally", "worst_status"]

COMPARISONS: tuple[str, ...] = ("at_least", "at_most", "within")
# What a claim may hold its methods to (`Claim.pins`).
PINS: tuple[str, ...] = ("validity", "efficiency")
# Measures that are shares of replicates: their MCSE is taken at the bound (binomial).
SHARES: tuple[str, ...] = ("coverage", "be_coverage", "tested", "rejection",
                           "conditional_rejection", "correct_share")
# Measures among the replicates another measure counts: a pass rate among the tests made has
# ``tested * R`` replicates, not ``R``; a cell without a test has nothing to judge.
CONDITIONAL: dict[str, str] = {"conditional_rejection": "tested",
                               "conditional_saving": "tested"}
# The deviation a claim must detect when it states none, in the measure's units: 2 points of
# coverage, 5 points of a pass, test or selection rate, 5% of a relative bias or saving, 10% of
# a model SE. Other measures (bias, sizes, widths) have units of their own: a claim states it.
RESOLUTIONS: dict[str, float] = {
    "coverage": 0.02, "be_coverage": 0.02, "rejection": 0.05, "tested": 0.05,
    "conditional_rejection": 0.05, "correct_share": 0.05, "relative_bias": 0.05,
    "model_se_error": 0.10, "mean_saving": 0.05, "conditional_saving": 0.05,
}
# A claim's family-wise false-alarm rate when neither it nor its caller states one.
DEFAULT_FAMILYWISE_ERROR = 1e-3
# The one-sided 95% normal quantile: a verdict asks for power 0.95 at its resolution.
POWER_Z = float(stats.norm.isf(0.05))
HOLDS, FAILS, INCONCLUSIVE, NOT_RUN = "HOLDS", "FAILS", "INCONCLUSIVE", "NOT RUN"
STATUSES: tuple[str, ...] = (HOLDS, INCONCLUSIVE, FAILS, NOT_RUN)
_SYMBOL = {"at_least": ">=", "at_most": "<=", "within": "within"}
# The columns of `Verdict.failures` besides the parameters.
FAILURE_COLUMNS = ("method", "value", "mcse", "error", "bound", "excess", "allowance")
# How the partial sums of a mean over parameters combine.
_SUMS = {**MEAN_SUMS, "count": "sum", "null": "sum", "target": "sum", "inverse": "sum",
         "n_replicates": "min", "error": "max"}


@dataclass(frozen=True)
class Claim:
    """A finding that must hold on every run of a study.

    Attributes
    ----------
    name : str
        Short identifier, unique within the study.
    statement : str
        The finding in plain words, for the reader of a report.
    methods : tuple of str
        The methods it is about (each method's values are compared separately).
    measure : str
        Performance measure (`studies.engine.performance.MEASURES`).
    comparison : {"at_least", "at_most", "within"}
        ``value >= target - margin``, ``value <= target + margin`` or
        ``|value - target| <= margin`` (each up to the statistical allowance).
    target : float or str
        A number, or the name of a grid parameter holding each cell's target.
    margin : float
        The size of the finding (may be negative: ``at_most`` with margin -0.01 says "at
        least 0.01 below").
    where : str
        The region: a pandas query over the grid parameters (``"n * p <= 2 and alternative
        == 'two-sided'"``); empty: every cell. A string, not a function, so that a study can
        be sent to worker processes and its region printed as it is.
    mean_over : tuple of str
        Compare the mean of the measure over these parameters (at each value of the others),
        not each cell; its MCSE is ``sqrt(sum MCSE^2) / count``.
    resolution : float, optional
        The smallest deviation beyond the bound, in the measure's units, that the claim must
        detect (with probability 0.95) to be decided; default ``RESOLUTIONS[measure]``,
        required for the other measures.
    resolution_unit : str
        A measure the resolution is a multiple of in each cell (``"empirical_se"``: a bias of
        a fifth of the estimator's own SE with ``resolution=0.2``, whatever the estimand's
        scale); empty (default): the claim's measure's own units. Detectable deviations are
        then in that unit too.
    effect : bool, optional
        A claim of an effect holds only where every estimate is on its side of the bound;
        default: a negative margin on ``at_least`` or ``at_most``.
    grids : tuple of str
        The named grids it is judged on (NOT RUN on the others); empty: every grid.
    exact_tolerance : float
        Allowance of exact values: rounding only.
    familywise_error : float, optional
        Probability that the claim fails on a run where it is true (Monte Carlo values);
        default: the share of a suite's budget that `evaluate_claims` is given.
    reference : str
        A method whose value of the same measure in the same cell is subtracted from each
        method's before comparing (module docstring); empty (default): the values themselves.
        A cell without the reference's value is not compared.
    relative : bool
        With a reference, compare ``value / reference's - 1`` instead of the difference.
    identity : bool
        The claim states an identity that holds in every replicate (a policy's saving over
        itself is 0): its Monte Carlo values are compared as exact values, within
        ``exact_tolerance``, whatever their MCSE, and need no power.
    quantity : str
        What the measure is of these methods, in words, where its name would mislead (a
        variance ratio less 1 that a helper method carries as its ``bias``): the claim's
        condition and sentences say it instead of the measure's name. Empty: the name.
    pins : tuple of str
        Which promises of its methods the claim holds them to (`PINS`): ``"validity"``
        (coverage at least nominal, or near it where that is the method's promise; no bias;
        a plan that delivers its power) and ``"efficiency"`` (no wider, more conservative or
        larger than needed); empty: a finding about the methods' behaviour (an interval that
        under-covers, a biased estimator). `studies.engine.pins` tabulates them per public
        estimator method.
    """

    name: str
    statement: str
    methods: tuple[str, ...]
    measure: str
    comparison: str
    target: float | str = 0.0
    margin: float = 0.0
    where: str = ""
    mean_over: tuple[str, ...] = ()
    resolution: float | None = None
    resolution_unit: str = ""
    effect: bool | None = None
    grids: tuple[str, ...] = ()
    exact_tolerance: float = 1e-9
    familywise_error: float | None = None
    pins: tuple[str, ...] = ()
    reference: str = ""
    relative: bool = False
    identity: bool = False
    quantity: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.reference, str) or self.reference in self.methods:
            raise ValueError(f"`reference` of claim {self.name!r} must be the name of a method "
                             f"not among its methods; got {self.reference!r}.")
        if self.relative and not self.reference:
            raise ValueError(f"`relative` of claim {self.name!r} needs a `reference`; got "
                             f"none.")
        if not isinstance(self.pins, tuple) or not set(self.pins) <= set(PINS):
            raise ValueError(f"`pins` of claim {self.name!r} must be a tuple of {PINS}; got "
                             f"{self.pins!r}.")
        if self.comparison not in COMPARISONS:
            raise ValueError(
                f"`comparison` must be one of {COMPARISONS}; got {self.comparison!r}.")
        if not isinstance(self.methods, tuple) or not self.methods or not all(
                isinstance(m, str) for m in self.methods):
            raise ValueError(f"`methods` of claim {self.name!r} must be a non-empty tuple of "
                             f"method names; got {self.methods!r}.")
        for name in ("mean_over", "grids"):
            value = getattr(self, name)
            if not isinstance(value, tuple) or not all(isinstance(p, str) for p in value):
                raise ValueError(f"`{name}` of claim {self.name!r} must be a tuple of names; "
                                 f"got {value!r}.")
        if self.familywise_error is not None and not 0.0 < self.familywise_error < 1.0:
            raise ValueError(f"`familywise_error` must be in (0, 1); got "
                             f"{self.familywise_error!r}.")
        if not (math.isfinite(self.margin) and self.exact_tolerance >= 0.0):
            raise ValueError(f"`margin` must be finite and `exact_tolerance` >= 0; got "
                             f"{self.margin!r} and {self.exact_tolerance!r}.")
        resolution = RESOLUTIONS.get(self.measure) if self.resolution is None \
            and not self.resolution_unit else self.resolution
        if self.resolution_unit and (self.measure in SHARES or self.mean_over
                                     or self.reference):
            raise ValueError(f"`resolution_unit` of claim {self.name!r} must be empty for a "
                             f"share, a mean over parameters or a reference; got "
                             f"{self.resolution_unit!r}.")
        if resolution is None:
            raise ValueError(f"`resolution` of claim {self.name!r} must be given for measure "
                             f"{self.measure!r} (no default); got None.")
        if not (math.isfinite(resolution) and resolution > self.exact_tolerance):
            raise ValueError(f"`resolution` of claim {self.name!r} must be finite and above "
                             f"its exact tolerance {self.exact_tolerance:g}; got "
                             f"{resolution!r}.")
        object.__setattr__(self, "resolution", float(resolution))
        effect = (self.comparison != "within" and self.margin < 0) if self.effect is None \
            else self.effect
        if effect and self.comparison == "within":
            raise ValueError(f"`effect` of claim {self.name!r} must be False for a 'within' "
                             f"comparison (a band is a bound, not an effect); got True.")
        object.__setattr__(self, "effect", bool(effect))

    @property
    def region(self) -> str:
        """The region in words: the query, or "every cell"."""
        return self.where or "every cell"

    @property
    def label(self) -> str:
        """What the claim compares, in words: its `quantity`, else its measure's name."""
        return self.quantity or self.measure

    @property
    def condition(self) -> str:
        """The comparison in symbols, e.g. ``coverage >= confidence_level - 0.01``."""
        value = f"mean {self.label} over {', '.join(self.mean_over)}" if self.mean_over \
            else self.label
        if self.reference:
            value = (f"({value} / {self.reference}'s - 1)" if self.relative
                     else f"({value} - {self.reference}'s)")
        if self.comparison == "within":
            return f"|{value} - {self.target}| <= {self.margin:g}"
        shift = self.margin if self.comparison == "at_most" else -self.margin
        bound = f"{self.target}" + (f" {'+' if shift > 0 else '-'} {abs(shift):g}" if shift
                                    else "")
        return f"{value} {_SYMBOL[self.comparison]} {bound}"


@dataclass(frozen=True)
class Verdict:
    """The verdict on one claim for one run.

    Attributes
    ----------
    claim : Claim
    status : {"HOLDS", "INCONCLUSIVE", "FAILS", "NOT RUN"}
    compared : int
        Values compared (cells, or means over ``mean_over``).
    k : float or None
        The MCSE multiplier of the Monte Carlo values (None: every value exact).
    detectable : float
        The deviation beyond the bound the claim flags with probability >= 0.95 in its least
        precise value (module docstring), or the exact tolerance when every value is exact;
        inf when no value in range could fail it, nan when nothing was compared.
    failures : pandas.DataFrame
        The values that break the claim, worst first: the parameters, ``method``, ``value``,
        ``mcse``, ``error`` (what the method raised in the cell, else empty), ``bound`` (the
        target with the margin), ``excess`` (how far beyond the bound and its allowance; nan
        for an undefined value) and ``allowance``.
    familywise_error : float or None
        The false-alarm rate the claim was judged at (None: every value exact).
    wrong_side : int
        Values of a claim of an effect on the wrong side of the bound, within the allowance.
    scale : float
        How many times the replicates of its least precise value the claim needs to detect a
        deviation of its resolution (1.0 when it has them; nan when every value is exact).
    reason : str
        Why the claim is INCONCLUSIVE or NOT RUN ('' otherwise).
    nearest : dict
        The compared value that lies furthest towards (or beyond) its bound: ``method``,
        ``where`` (its parameters in words; a mean over ``mean_over`` names the others),
        ``value``, ``mcse`` and ``bound`` (empty when nothing defined was compared). What a
        finding quotes of a claim that holds.
    replicates : int
        The Monte Carlo replicates of the cells it compared, each cell counted once: in a run
        in rounds (`studies.engine.rounds`), what deciding it took.
    needs : pandas.DataFrame
        Of an INCONCLUSIVE claim (empty otherwise: nothing to raise), each Monte Carlo value
        compared (a cell, or a mean over ``mean_over``): its parameters and ``factor``, how
        many times its replicates it needs to decide (1: it has the power, and a claim of an
        effect has it on its side of the bound; 2 where that cannot be told from its
        replicates: no MCSE, or an effect not yet shown). What a run in rounds raises.
    """

    claim: Claim
    status: str
    compared: int
    k: float | None
    detectable: float
    failures: pd.DataFrame = field(repr=False)
    familywise_error: float | None = None
    wrong_side: int = 0
    scale: float = math.nan
    reason: str = ""
    nearest: dict[str, Any] = field(default_factory=dict)
    replicates: int = 0
    needs: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    def worst(self) -> str:
        """The worst failing value in words ('' when the claim does not fail)."""
        if self.failures.empty:
            return ""
        row = self.failures.iloc[0]
        params = [c for c in self.failures.columns if c not in FAILURE_COLUMNS]
        where = ", ".join(f"{c}={row[c]}" for c in params)
        if row["error"]:
            return f"{row['method']} at {where}: raised {row['error']}"
        return (f"{row['method']} at {where}: {self.claim.label} {row['value']:.6g} "
                f"(bound {row['bound']:.6g}, MCSE {row['mcse']:.2g})")

    def to_row(self, study: str) -> dict[str, Any]:
        """One row of a verdict table."""
        claim = self.claim
        return {"study": study, "claim": claim.name, "status": self.status,
                "statement": claim.statement, "methods": " ".join(claim.methods),
                "condition": claim.condition, "region": claim.region,
                "kind": "effect" if claim.effect else "bound",
                "compared": self.compared, "failing": len(self.failures),
                "familywise_error": math.nan if self.familywise_error is None
                else self.familywise_error,
                "k": math.nan if self.k is None else self.k, "replicates": self.replicates,
                "detectable": self.detectable,
                "resolution": claim.resolution, "unit": claim.resolution_unit or claim.measure,
                "worst": self.worst(), "reason": self.reason}


def _deviation(claim: Claim, value: NDArray[np.float64], target: NDArray[np.float64]
               ) -> NDArray[np.float64]:
    """How far each value lies beyond the claim's bound (positive: on the wrong side)."""
    if claim.comparison == "at_least":
        return _bound(claim, target) - value
    if claim.comparison == "at_most":
        return value - _bound(claim, target)
    return np.abs(value - target) - claim.margin


def _share_bounds(claim: Claim, target: NDArray[np.float64]) -> list[NDArray[np.float64]]:
    """The bounds of a share as upper bounds of a share: ``at_least`` mirrored (``1 - b``)."""
    if claim.comparison == "within":
        return [np.clip(target + claim.margin, 0.0, 1.0),
                np.clip(1.0 - (target - claim.margin), 0.0, 1.0)]
    bound = np.clip(_bound(claim, target), 0.0, 1.0)
    return [bound if claim.comparison == "at_most" else 1.0 - bound]


def _null_se(claim: Claim, target: NDArray[np.float64], replicates: NDArray[np.float64]
             ) -> NDArray[np.float64]:
    """The Monte Carlo SE of a share at the claim's bound, ``sqrt(b (1 - b) / R)``; nan else.

    The SE at the estimate, ``sqrt(p (1 - p) / R)``, shrinks near 0 and 1 and would make a
    true claim about a share fail far more often than stated (Morris et al. 2019, section 5.2,
    use the nominal level for coverage in the same way). A ``within`` claim has two bounds,
    ``target -/+ margin``; the larger of their SEs is taken.
    """
    if not _is_share(claim):
        return np.full(target.shape, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        found = [np.sqrt(b * (1.0 - b) / replicates) for b in _share_bounds(claim, target)]
    return np.fmax.reduce(found) if len(found) > 1 else found[0]


# A share counted out of R replicates lies on a lattice of step 1 / R: a slack far below the
# step keeps a share at its critical count from failing on the rounding of c / R - b.
_COUNT_ROUNDING = 1e-12


def _share_critical(bound: NDArray[np.float64], replicates: NDArray[np.float64], rate: float
                    ) -> NDArray[np.float64]:
    """The most replicates ``c`` of ``R`` a share may count above its upper bound ``b`` without
    failing: the smallest ``c`` with ``P(X > c) <= rate``, ``X ~ Binomial(R, b)``.

    The exact binomial tail, not its normal approximation: near a bound of 0.05 (the misses of
    a 95% interval) the binomial is skewed, and the normal critical count fails a true claim
    up to 3 times as often as stated at small rates. A mean of shares over cells with
    unequal replicates has ``R = count^2 / sum(1 / R_i)`` (real), taken down to an integer.
    """
    trials = np.maximum(np.floor(replicates), 1.0)
    with np.errstate(invalid="ignore"):
        return np.asarray(stats.binom.isf(rate, trials, bound), dtype=float)


def _share_allowance(claim: Claim, target: NDArray[np.float64],
                     replicates: NDArray[np.float64], rate: float) -> NDArray[np.float64]:
    """How far a share may lie beyond its bound without failing, in the share's units, at a
    false-alarm ``rate`` per side (`_share_critical`; the larger of a ``within`` claim's two
    sides). A share of exactly the critical count passes whatever the rounding of its value
    (``_COUNT_ROUNDING``)."""
    trials = np.maximum(np.floor(replicates), 1.0)
    found = [_share_critical(b, replicates, rate) / trials - b + _COUNT_ROUNDING
             for b in _share_bounds(claim, target)]
    return np.fmax.reduce(found) if len(found) > 1 else found[0]


def _share_detectable(bound: NDArray[np.float64], replicates: NDArray[np.float64], rate: float
                      ) -> NDArray[np.float64]:
    """The deviation ``d`` above an upper bound ``b`` of a share detected with probability 0.95.

    The share fails the claim when more than ``c`` of its ``R`` replicates count
    (`_share_critical`), so it is detected with probability ``P(X >= m)``, ``m = c + 1``,
    ``X ~ Binomial(R, b + d)``: 0.95 at ``b + d = Beta(m, R - m + 1).ppf(0.95)`` (the binomial
    tail as a regularized incomplete beta). inf when ``m > R``: no share in [0, 1] fails the
    claim.
    """
    trials = np.maximum(np.floor(replicates), 1.0)
    m = _share_critical(bound, replicates, rate) + 1.0
    possible = m <= trials
    with np.errstate(invalid="ignore"):
        share = stats.beta.ppf(0.95, np.where(possible, m, 1.0),
                               np.where(possible, trials - m + 1.0, 1.0))
    return np.where(possible, share - bound, np.inf)


def _share_replicates(bound: NDArray[np.float64], resolution: float, rate: float
                      ) -> NDArray[np.float64]:
    """About how many replicates detect ``resolution`` above ``b`` with probability 0.95 by
    the exact test (`_share_detectable`): from the normal approximation
    ``((k sqrt(b (1 - b)) + 1.645 sqrt(p (1 - p))) / resolution)^2``, ``p = b + resolution``
    (Fleiss, Levin & Paik 2003, section 2.5), raised by 2% steps until the exact test
    detects it, with 2% to spare for the binomial lattice (its power is not monotone in
    ``R``)."""
    k = float(stats.norm.isf(rate))
    alternative = np.clip(bound + resolution, 0.0, 1.0)
    root = (k * np.sqrt(bound * (1.0 - bound))
            + POWER_Z * np.sqrt(alternative * (1.0 - alternative))) / resolution
    needed = np.ceil(np.maximum(root * root, 1.0))
    for _ in range(_SEARCH_STEPS):
        short = ~(_share_detectable(bound, needed, rate) <= resolution)
        if not short.any():
            break
        needed = np.where(short, np.ceil(needed * 1.02), needed)
    return np.ceil(needed * 1.02)


# 2% steps from the normal approximation: 200 reach 52 times it
_SEARCH_STEPS = 200


def _compared(value: NDArray[np.float64], reference: NDArray[np.float64], relative: bool
              ) -> NDArray[np.float64]:
    """A value against its reference's: the difference, or the ratio less 1 (0 where both
    are 0, infinite where only the reference is)."""
    if not relative:
        # two infinite values that agree (an exact ratio of a 0 variance) differ by 0
        with np.errstate(invalid="ignore"):
            found_difference: NDArray[np.float64] = np.where(
                np.isinf(value) & (value == reference), 0.0, value - reference)
        return found_difference
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = value / reference - 1.0
    found: NDArray[np.float64] = np.where(value == reference, 0.0, ratio)
    return found


def _is_share(claim: Claim) -> bool:
    """Whether the values a claim compares are shares of replicates (a difference from a
    reference method's share is not)."""
    return claim.measure in SHARES and not claim.reference


def _bound(claim: Claim, target: NDArray[np.float64]) -> NDArray[np.float64]:
    if claim.comparison == "at_least":
        return target - claim.margin
    return target + claim.margin if claim.comparison == "at_most" else target


def _typed(found: NDArray[Any]) -> Any:
    """A column of packed groups' values as `StudyResult.frames` types it: text as strings,
    integers as nullable integers."""
    if found.dtype.kind in "UO" and all(isinstance(v, str) for v in found[:1]):
        return pd.array(found.astype(object), dtype="str")
    return pd.array(found, dtype="Int64") if found.dtype.kind in "iu" else found


def _summed(rows: pd.DataFrame, keys: list[Any]) -> pd.DataFrame:
    """`_SUMS` of ``rows`` in groups by ``keys`` (column names, or index levels by number).

    pandas takes the largest ``error`` text of a group in Python, one group at a time: the
    texts are taken by their rank instead (codes of the sorted texts; -1, missing, only where
    every text of the group is missing), the same text in one pass.
    """
    errors = rows["error"]
    codes, texts = pd.factorize(errors, sort=True)
    by = rows.assign(error=codes).groupby(
        keys if isinstance(keys[0], str) else None,
        level=None if isinstance(keys[0], str) else keys, sort=False, dropna=False)
    sums = by.agg(_SUMS)
    # the missing value pandas gives a group without an error, in the column's dtype
    missing = errors.iloc[:0].reindex(range(1))
    largest = pd.api.extensions.take(np.asarray(texts, dtype=object), sums["error"].to_numpy(),
                                     allow_fill=True, fill_value=missing.iloc[0])
    return sums.assign(error=pd.Series(largest, index=sums.index).astype(errors.dtype))


class _Judge:
    """One claim's verdict, built from a study's rows piece by piece.

    Only what the verdict needs is kept: counts, the largest SE of a measure of estimates, the
    bounds and replicates of Monte Carlo shares (their power depends on ``k``, known once every
    value is counted), the exact values that break the claim, the Monte Carlo values beyond
    their bound and, for a mean over parameters, partial sums.
    """

    def __init__(self, claim: Claim, params: list[str]) -> None:
        self.claim = claim
        self.params = params
        self.compared = self.monte_carlo = 0
        self.any_exact = False
        self.spread = 0.0  # the largest SE of a Monte Carlo value that is not a share
        self.unknown_se = 0  # defined Monte Carlo values without an SE: their power is unknown
        self.shares: list[tuple[list[NDArray[np.float64]], NDArray[np.float64]]] = []
        self.broken: list[pd.DataFrame] = []
        self.beyond: list[pd.DataFrame] = []
        self.partial: list[pd.DataFrame] = []
        self.pending: list[dict[str, NDArray[Any]]] = []  # exact values not yet summed
        self.pending_rows = 0
        self.nearest: dict[str, Any] = {}
        self._nearest_deviation = -math.inf
        self.held: dict[int, float] = {}  # each Monte Carlo cell's replicates, by position
        self.values: list[pd.DataFrame] = []  # each Monte Carlo value's power inputs

    def exact_cells(self, group: PackedGroup, chosen: NDArray[np.intp]) -> NDArray[np.intp]:
        """Of a packed group's cells ``chosen`` in the claim's region, those whose rows can
        change the verdict; the others are counted as compared here.

        A packed group's values are exact: a value within the exact tolerance of its bound
        adds to the count and no more, unless it lies nearest its bound (each method's first
        such cell is kept). A mean over parameters needs every value.
        """
        claim = self.claim
        # in the group's order of methods, as its rows come
        methods = [m for m in group.values
                   if m in claim.methods and claim.measure in group.values[m]]
        present = [group.values[m][claim.measure] for m in methods]
        params = {*group.shared, *group.axes}
        if claim.reference:
            found = group.values.get(claim.reference, {}).get(claim.measure)
            if found is None:
                return chosen[:0]  # no reference: nothing in this group is compared
            present = [_compared(values, found, self.claim.relative) for values in present]
        if (claim.measure in CONDITIONAL or not present
                or (isinstance(claim.target, str) and claim.target not in params)
                or (claim.mean_over and not set(self._keys()[1:]) <= params)):
            return chosen
        target = (group.column(claim.target)[chosen].astype(float)
                  if isinstance(claim.target, str) else np.full(chosen.size, claim.target))
        if claim.mean_over:
            self._exact_sums(group, chosen, methods, present, target)
            return chosen[:0]
        keep = np.zeros(chosen.size, dtype=bool)
        for values in present:
            deviation = _deviation(claim, values[chosen], target)
            # nan: an undefined value, which breaks the claim
            keep |= ~(deviation <= claim.exact_tolerance)
            defined = np.flatnonzero(~np.isnan(deviation))
            if defined.size:
                keep[defined[np.argmax(deviation[defined])]] = True
        dropped = chosen.size - int(keep.sum())
        if dropped:
            self.compared += dropped * len(present)
            self.any_exact = True
        return chosen[keep]

    def add(self, rows: pd.DataFrame) -> None:
        """Take the rows of a piece (tidy columns and ``error``) of cells in the claim's region.

        The rows of other methods and measures are left out here.
        """
        claim = self.claim
        counted = unit = None
        reference = rows[(rows["method"] == claim.reference)
                         & (rows["measure"] == claim.measure)] if claim.reference else None
        if claim.resolution_unit:
            base = rows[rows["measure"] == claim.resolution_unit]
            unit = base.set_index(["position", "method"])["value"]
        if claim.measure in CONDITIONAL:
            base = rows[rows["measure"] == CONDITIONAL[claim.measure]]
            counted = base.set_index(["position", "method"])["value"]
        rows = rows[rows["method"].isin(claim.methods) & (rows["measure"] == claim.measure)]
        if claim.reference:
            rows = self._against_reference(rows, reference)
        replicates = rows["n_replicates"].to_numpy(float, na_value=np.nan)
        for position, held in zip(rows["position"].to_numpy(), replicates, strict=True):
            if held == held:
                self.held[int(position)] = float(held)
        counts = replicates
        if counted is not None and len(rows):
            keys = pd.MultiIndex.from_frame(rows[["position", "method"]])
            counts = replicates * counted.reindex(keys).to_numpy(float)
            made = ~(counts == 0)  # nan (unknown, e.g. a method that raised) stays in
            rows, replicates, counts = rows[made], replicates[made], counts[made]
        if rows.empty or (isinstance(claim.target, str) and claim.target not in rows):
            return  # a grid without the target's parameter does not reach the claim
        target = (rows[claim.target].to_numpy(float) if isinstance(claim.target, str)
                  else np.full(len(rows), float(claim.target)))
        rows = rows.assign(target=target, n_replicates=replicates, counts=counts,
                           null=_null_se(claim, target, counts))
        if unit is not None:
            keys = pd.MultiIndex.from_frame(rows[["position", "method"]])
            rows = rows.assign(unit=unit.reindex(keys).to_numpy(float))
        if claim.mean_over:
            self.partial.append(self._sums(rows))
        else:
            self._judge(rows, self.params)

    def _against_reference(self, rows: pd.DataFrame, reference: pd.DataFrame
                           ) -> pd.DataFrame:
        """Each row's value minus the reference method's in the same cell, with the sum of
        their MCSEs (module docstring); a row whose cell has no reference value is dropped,
        and a value that is undefined (a method that raised) stays undefined."""
        found = reference.drop_duplicates("position").set_index("position")
        keys = rows["position"]
        present = keys.isin(found.index).to_numpy() | rows["value"].isna().to_numpy()
        # a reference that raised or is undefined in a cell breaks the claim there
        undefined = reference[reference["value"].isna()]
        rows = rows[present]
        base = found.reindex(rows["position"])
        # the sampling error of a difference is a measure of estimates, never a share's
        replicates = np.fmin(rows["n_replicates"].to_numpy(float, na_value=np.nan),
                             base["n_replicates"].to_numpy(float, na_value=np.nan))
        value, other = rows["value"].to_numpy(float), base["value"].to_numpy(float)
        mcse, other_mcse = rows["mcse"].to_numpy(float), base["mcse"].to_numpy(float)
        if self.claim.relative:
            # where the reference is 0 the ratio is 0 or infinite whatever the noise
            with np.errstate(divide="ignore", invalid="ignore"):
                mcse = np.where(other == 0, 0.0,
                                (mcse + np.abs(value / other) * other_mcse) / np.abs(other))
        else:
            mcse = np.where(np.isinf(value) & (value == other), 0.0, mcse + other_mcse)
        rows = rows.assign(value=_compared(value, other, self.claim.relative), mcse=mcse,
                           n_replicates=replicates)
        return pd.concat([rows, undefined], ignore_index=True) if len(undefined) else rows

    def _keys(self) -> list[str]:
        return ["method", *(p for p in self.params if p not in self.claim.mean_over)]

    def _sums(self, rows: pd.DataFrame) -> pd.DataFrame:
        """Sums over ``mean_over`` at each value of the other parameters (one piece)."""
        with np.errstate(divide="ignore"):
            inverse = 1.0 / rows["counts"]
        rows = as_text(rows).assign(**mean_terms(rows["value"], rows["mcse"]),
                                    null=rows["null"] ** 2, inverse=inverse, count=1)
        return _summed(rows, self._keys())

    def _exact_sums(self, group: PackedGroup, chosen: NDArray[np.intp], methods: list[str],
                    values: list[NDArray[np.float64]], target: NDArray[np.float64]) -> None:
        """Keep a packed group's exact values in the cells ``chosen`` for `_flush` (its keys,
        in order of first appearance, and each row's key)."""
        keys = self._keys()[1:]
        k = len(methods)
        code = np.zeros(chosen.size, dtype=np.int64)
        for name in keys:
            levels, codes = group.coded(name)
            code = code * len(levels) + codes[chosen]
        # the rows come cell by cell, each cell's methods in turn, as in `StudyResult.frames`
        row = np.repeat(code, k) * k + np.tile(np.arange(k), chosen.size)
        _, first, inverse = np.unique(row, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        shown = first[order]  # each key's first row: its cell and method
        self.pending.append({
            "key": rank[inverse], "value": np.stack([v[chosen] for v in values], axis=1).ravel(),
            "target": np.repeat(target, k),
            "method": np.asarray(methods, dtype=object)[shown % k],
            **{name: group.column(name)[chosen[shown // k]] for name in keys}})
        self.pending_rows += row.size
        if self.pending_rows >= _BATCH_ROWS:
            self._flush()

    def _flush(self) -> None:
        """`_sums` of the kept exact values: pandas' grouped (compensated) sums of the same
        values in the same order as from their rows, so the means have the same bits. An
        exact value has MCSE 0 and no replicates: its squared MCSE, null SE and inverse
        replicates add 0."""
        if not self.pending:
            return
        pending, self.pending, self.pending_rows = self.pending, [], 0
        offsets = np.cumsum([0, *(len(p["method"]) for p in pending[:-1])])
        value = np.concatenate([p["value"] for p in pending])
        sums = pd.DataFrame({
            "key": np.concatenate([p["key"] + o for p, o in zip(pending, offsets, strict=True)]),
            "value": value, "target": np.concatenate([p["target"] for p in pending]),
            "undefined": np.isnan(value)}).groupby("key", sort=False).agg(
            weighted_sum=("value", "sum"), target=("target", "sum"),
            cells=("value", "size"), undefined_cells=("undefined", "sum"))
        index = pd.DataFrame({name: _typed(np.concatenate([p[name] for p in pending]))
                              for name in self._keys()})
        cells = sums["cells"].to_numpy(np.int64)
        frame = pd.DataFrame({
            "weight_sum": cells.astype(float), "weighted_sum": sums["weighted_sum"].to_numpy(),
            "square_sum": 0.0, "cells": cells,
            "undefined_cells": sums["undefined_cells"].to_numpy(np.int64),
            "unknown_cells": np.zeros(cells.size, dtype=np.int64), "count": cells,
            "null": 0.0, "target": sums["target"].to_numpy(), "inverse": 0.0,
            "n_replicates": np.nan, "error": pd.array([""] * cells.size, dtype="str")})
        frame.index = pd.MultiIndex.from_frame(as_text(index))
        self.partial.append(frame)

    def _means(self) -> pd.DataFrame:
        """The means over ``mean_over`` (`studies.engine.means`: an undefined value makes its
        mean undefined, an undefined MCSE its MCSE).

        The replicates of a mean of shares are ``count^2 / sum(1 / R_i)``: the mean's variance
        at a common share ``b`` is ``b (1 - b)`` over that number.
        """
        both = pd.concat(self.partial)
        sums = _summed(both, list(range(both.index.nlevels)))
        count = sums["count"]
        null = np.sqrt(sums["null"]) / count if _is_share(self.claim) else np.nan
        means = means_from_sums(sums)
        return sums.assign(
            value=means["value"], mcse=means["mcse"], null=null, target=sums["target"] / count,
            counts=count * count / sums["inverse"],
        ).reset_index().drop(columns=[*MEAN_SUMS, "count", "inverse"])

    def _judge(self, rows: pd.DataFrame, params: list[str]) -> None:
        claim = self.claim
        value, mcse = rows["value"].to_numpy(float), rows["mcse"].to_numpy(float)
        # the path, not a zero MCSE, makes a value exact: a Monte Carlo share of 0 or 1 has MCSE 0
        monte_carlo = ~np.isnan(rows["n_replicates"].to_numpy(float)) & (not claim.identity)
        null = rows["null"].to_numpy(float)
        # shares (coverage, rejection): the SE at the bound, where a true claim is tightest
        spread = np.where(np.isnan(null), mcse, null)
        target = rows["target"].to_numpy(float)
        deviation = _deviation(claim, value, target)
        undefined = np.isnan(value)
        self.compared += len(rows)
        self.monte_carlo += int(monte_carlo.sum())
        self.any_exact = self.any_exact or bool((~monte_carlo).any())
        relative = spread
        if _is_share(claim):
            counts = rows["counts"].to_numpy(float)
            usable = monte_carlo & np.isfinite(counts) & (counts > 0)
            if usable.any():
                self.shares.append(([b[usable] for b in _share_bounds(claim, target)],
                                    counts[usable]))
        else:
            if claim.resolution_unit:
                # a value that does not vary (unit 0) has nothing to detect
                with np.errstate(divide="ignore", invalid="ignore"):
                    relative = np.where(spread == 0, 0.0, spread / rows["unit"].to_numpy(float))
            known = relative[monte_carlo & ~np.isnan(relative)]
            if known.size:
                self.spread = max(self.spread, float(known.max()))
            self.unknown_se += int((monte_carlo & np.isnan(relative) & ~undefined).sum())
        taken = monte_carlo & ~undefined
        if taken.any():
            self.values.append(rows.loc[taken, params].assign(
                target=target[taken], deviation=deviation[taken],
                spread=np.nan if _is_share(claim) else relative[taken],
                counts=rows["counts"].to_numpy(float)[taken] if _is_share(claim) else np.nan))
        shown = rows[[*params, "method", "value", "mcse", "error"]].assign(
            bound=_bound(claim, target), deviation=deviation,
            spread=np.where(np.isnan(spread), 0.0, spread), target=target,
            counts=rows["counts"].to_numpy(float) if _is_share(claim) else np.nan)
        self._keep_nearest(rows, params, deviation, target)
        exact_broken = ~monte_carlo & (undefined | (deviation > claim.exact_tolerance))
        if exact_broken.any():
            self.broken.append(shown[exact_broken].assign(
                allowance=claim.exact_tolerance,
                excess=deviation[exact_broken] - claim.exact_tolerance))
        beyond = monte_carlo & (undefined | (deviation > 0))
        if beyond.any():
            self.beyond.append(shown[beyond])

    def _keep_nearest(self, rows: pd.DataFrame, params: list[str],
                      deviation: NDArray[np.float64], target: NDArray[np.float64]) -> None:
        """Keep the defined value furthest towards its bound (first of ties, in grid order)."""
        defined = ~np.isnan(deviation)
        if not defined.any():
            return
        i = int(np.flatnonzero(defined)[np.argmax(deviation[defined])])
        if deviation[i] <= self._nearest_deviation:
            return
        self._nearest_deviation = float(deviation[i])
        row = rows.iloc[i]
        self.nearest = {"method": str(row["method"]),
                        "where": ", ".join(f"{p}={row[p]}" for p in params),
                        "value": float(row["value"]), "mcse": float(row["mcse"]),
                        "bound": float(_bound(self.claim, target[i:i + 1])[0])}

    def _power(self, k: float, rate: float) -> tuple[float, float]:
        """The detectable deviation of the least precise Monte Carlo value, and the factor on
        the replicates that would bring it down to the claim's resolution (``rate``: the
        false-alarm rate of each value's test, which sets ``k``)."""
        resolution = float(self.claim.resolution or 0.0)
        detectable = (k + POWER_Z) * self.spread
        scale = (detectable / resolution) ** 2
        for bounds, counts in self.shares:
            for bound in bounds:
                detectable = max(detectable,
                                 float(_share_detectable(bound, counts, rate).max()))
                scale = max(scale, float(
                    (_share_replicates(bound, resolution, rate) / counts).max()))
        return detectable, max(scale, 1.0) if detectable > resolution else 1.0

    def _needs(self, k: float, rate: float) -> pd.DataFrame:
        """Each Monte Carlo value's parameters and the factor on its replicates it needs to
        decide (`Verdict.needs`), by the tests of `_power` applied to it alone."""
        if not self.values:
            return pd.DataFrame()
        claim = self.claim
        frame = pd.concat(self.values, ignore_index=True)
        resolution = float(claim.resolution or 0.0)
        if _is_share(claim):
            counts = frame["counts"].to_numpy(float)
            usable = np.isfinite(counts) & (counts > 0)
            factor = np.where(usable, 1.0, 2.0)
            for bound in _share_bounds(claim, frame["target"].to_numpy(float)[usable]):
                short = _share_detectable(bound, counts[usable], rate) > resolution
                needed = _share_replicates(bound, resolution, rate) / counts[usable]
                factor[usable] = np.fmax(factor[usable], np.where(short, needed, 1.0))
        else:
            with np.errstate(invalid="ignore"):
                factor = ((k + POWER_Z) * frame["spread"].to_numpy(float) / resolution) ** 2
            factor = np.where(np.isnan(factor), 2.0, np.where(factor > 1.0, factor, 1.0))
        if claim.effect:  # an effect not yet shown needs more replicates to show it
            factor = np.where(frame["deviation"].to_numpy(float) > 0, np.fmax(factor, 2.0),
                              factor)
        return frame.drop(columns=["target", "deviation", "spread", "counts"]).assign(
            factor=factor)

    def verdict(self, familywise_error: float, looks: int = 1) -> Verdict:
        """The verdict on every row taken, at the claim's own rate or ``familywise_error``,
        split over ``looks`` levels of replicates."""
        claim = self.claim
        self._flush()
        if self.partial:
            self._judge(self._means(), self._keys()[1:])
        if not self.compared:
            return Verdict(claim, NOT_RUN, 0, None, math.nan, pd.DataFrame(),
                           reason="no value in its region on this grid")
        m = self.monte_carlo
        alpha = claim.familywise_error or familywise_error
        sides = 2 if claim.comparison == "within" else 1
        rate = alpha / (sides * m * looks) if m else math.nan
        k = float(stats.norm.isf(rate)) if m else None
        broken, wrong_side = list(self.broken), 0
        for rows in self.beyond:
            allowance = (k or 0.0) * rows["spread"]
            if _is_share(claim):
                allowance = _share_allowance(claim, rows["target"].to_numpy(float),
                                             rows["counts"].to_numpy(float), rate)
            rows = rows.assign(allowance=allowance, excess=rows["deviation"] - allowance)
            breaks = rows["value"].isna() | (rows["excess"] > 0)
            broken.append(rows[breaks])
            wrong_side += int((~breaks).sum())
        failures = pd.concat(broken, ignore_index=True) if broken else pd.DataFrame(
            columns=list(FAILURE_COLUMNS))
        failures = failures.drop(columns=["deviation", "spread", "target", "counts"],
                                 errors="ignore").sort_values(
            "excess", ascending=False, na_position="first", kind="stable", ignore_index=True)
        detectable, scale = self._power(k, rate) if k is not None else (0.0, math.nan)
        if self.any_exact:
            detectable = max(detectable, claim.exact_tolerance)
        resolution = float(claim.resolution or 0.0)
        status, reason = HOLDS, ""
        if len(failures):
            status = FAILS
        elif self.unknown_se:
            status = INCONCLUSIVE
            detectable = math.inf
            reason = (f"{self.unknown_se} of {self.compared} Monte Carlo values have no MCSE "
                      f"(e.g. from a single replicate): noise cannot be told from a deviation")
        elif claim.effect and wrong_side:
            status = INCONCLUSIVE
            reason = (f"{wrong_side} of {self.compared} estimates lie on the wrong side of the "
                      f"bound, within the Monte Carlo allowance: the data do not show the "
                      f"effect")
        elif detectable > resolution:
            status = INCONCLUSIVE
            unit = f" x {claim.resolution_unit}" if claim.resolution_unit else ""
            reason = (f"cannot detect a deviation of {resolution:.3g}{unit} (detectable "
                      f"{detectable:.3g}{unit}): about {math.ceil(scale * 10) / 10:g} times the "
                      f"replicates would decide it")
        return Verdict(claim, status, self.compared, k, detectable, failures,
                       familywise_error=alpha if m else None,
                       wrong_side=wrong_side if claim.effect else 0, scale=scale,
                       reason=reason, nearest=self.nearest,
                       replicates=int(sum(self.held.values())),
                       needs=self._needs(k, rate) if k is not None and status == INCONCLUSIVE
                       else pd.DataFrame())


def evaluate_claims(claims: Iterable[Claim], result: StudyResult, *, grid: str | None = None,
                    familywise_error: float = DEFAULT_FAMILYWISE_ERROR,
                    looks: int | None = None) -> list[Verdict]:
    """The verdict on each claim for a study's results.

    The results are read in pieces of packed groups (`StudyResult.frames`), so a grid of
    millions of cells is judged without building its tidy frame. A method that raised in a
    cell of a claim's region breaks the claim there (its value is undefined).

    Parameters
    ----------
    claims : iterable of Claim
    result : StudyResult
    grid : str, optional
        The name of the grid the results come from: a claim judged only on other grids
        (`Claim.grids`) is NOT RUN. None: every claim is judged.
    familywise_error : float
        The false-alarm rate of a claim that states none (a suite's share of its budget).
    looks : int, optional
        The levels of replicates its values may be judged at over a run in rounds (the grid's
        ``rounds``, `studies.engine.rounds`): each claim's rate is split over them too, so it
        holds over all the run's looks. Default: the result's own (`StudyResult.looks`).

    Examples
    --------
    >>> from studies.engine import CellResult, Measure, Performance
    >>> perf = [Performance({"coverage": Measure(c, 0.0)}, None) for c in (0.96, 0.93)]
    >>> cells = tuple(CellResult("s", str(i), i, {"n": n}, "exact", {"cp": p}, {}, b"")
    ...               for i, (n, p) in enumerate(zip((10, 20), perf)))
    >>> claim = Claim("conservative", "never below 95%", ("cp",), "coverage", "at_least", 0.95)
    >>> verdict = evaluate_claims([claim], StudyResult("s", cells))[0]
    >>> verdict.status, verdict.worst()
    ('FAILS', 'cp at n=20: coverage 0.93 (bound 0.95, MCSE 0)')
    """
    if not 0.0 < familywise_error < 1.0:
        raise ValueError(f"`familywise_error` must be in (0, 1); got {familywise_error!r}.")
    looks = result.looks if looks is None else looks
    if isinstance(looks, bool) or not isinstance(looks, int) or looks < 1:
        raise ValueError(f"`looks` must be a positive integer; got {looks!r}.")
    claims = list(claims)
    judged = [i for i, c in enumerate(claims) if grid is None or not c.grids or grid in c.grids]
    verdicts = {i: Verdict(c, NOT_RUN, 0, None, math.nan, pd.DataFrame(),
                           reason=f"judged on the {' and '.join(c.grids)} grid only")
                for i, c in enumerate(claims) if i not in judged}
    if judged:
        methods = {m for i in judged for m in (*claims[i].methods, claims[i].reference) if m}
        params = list(dict.fromkeys([*result.parameters, *_cell_parameters(result)]))
        judges = {i: _Judge(claims[i], params) for i in judged}
        # each claim reads only its methods, measures and region, one part of the grid at a
        # time (a stored group's rows as it needs them), every claim in one pass
        for part in result.batches(load=False):
            for judge in judges.values():
                claim = judge.claim
                measures = {claim.measure, CONDITIONAL.get(claim.measure),
                            claim.resolution_unit} - {None, ""}
                read = (*claim.methods, claim.reference) if claim.reference else claim.methods
                for piece in part.frames(methods=read, measures=measures,
                                         where=claim.where, batch_rows=_BATCH_ROWS,
                                         cells=judge.exact_cells):
                    judge.add(piece.assign(error=""))
        errors = result.errors_frame(methods)
        if len(errors):
            errors = errors.assign(value=np.nan, mcse=np.nan, n_replicates=np.nan)
            for judge in judges.values():
                where = judge.claim.where
                inside = errors[region_mask(errors[params], where)] if where else errors
                judge.add(inside.assign(measure=judge.claim.measure))
        verdicts.update((i, j.verdict(familywise_error, looks)) for i, j in judges.items())
    return [verdicts[i] for i in range(len(claims))]


_BATCH_ROWS = 500_000  # rows per piece read: the per-piece cost paid rarely, memory bounded


def _cell_parameters(result: StudyResult) -> list[str]:
    """The parameter names of a result that does not name them (its cells' own order)."""
    names = [k for c in result.cells for k in c.params]
    names += [k for g in result.groups for k in (*g.shared, *g.axes)]
    return list(dict.fromkeys(names))


def worst_status(verdicts: Iterable[Verdict]) -> str:
    """The worst verdict of a study: FAILS, then INCONCLUSIVE, then HOLDS; NOT RUN when no
    claim was judged (or none is stated)."""
    states = {v.status for v in verdicts}
    return next((s for s in (FAILS, INCONCLUSIVE, HOLDS) if s in states), NOT_RUN)


def tally(verdicts: Iterable[Verdict]) -> str:
    """The verdicts counted in words: ``"3 hold, 0 inconclusive, 0 fail, 0 not run"``."""
    found = [v.status for v in verdicts]
    return (f"{found.count(HOLDS)} hold, {found.count(INCONCLUSIVE)} inconclusive, "
            f"{found.count(FAILS)} fail, {found.count(NOT_RUN)} not run")
