"""The exact certification power and plans (`estimators.certification`, `estimators.assurance`)
against references written here, independently of the machinery.

`estimators.assurance` computes the probability that a certification test passes as a sum
over the trials ``D`` of a count ``X``: ``sum_d P(D = d) P(X >= k(d) | d)``, with thresholds
``k(d)`` found by bisection, survival functions along a path of thresholds (Polya's urn for
the beta-binomial), and whole power curves grown one urn step at a time. None of that is used
by the references below. They enumerate every test set the design can draw (every
multinomial / multivariate hypergeometric outcome of the cells the measure looks at, by a
plain double loop over the counts), weight it with scipy's pmfs (``multinomial``,
``dirichlet_multinomial``, ``multivariate_hypergeom``, ``binom``, ``hypergeom``,
``betabinom``) and decide whether it passes with the public interval functions
(`proportion_ci`, `recall_ci`, `f1_ci`), exactly as a practitioner certifying that test set
would. What is checked:

1. exact power and assurance equal the enumeration to 1e-12 on grids with boundary counts
   (sizes 0 and 1, thresholds near 0 and 1, populations with an empty cell, fully sampled
   finite segments), for every measure, design, law and interval family planned, and
   ``Conditional.curve`` equals ``Conditional.power`` at every size, and closed-form sums
   over thousands of sizes for each outer law (its window of counts trimmed as it goes);
2. the pass region of every interval is an upper set in the count (what `thresholds`
   assumes), by enumeration;
3. seeded Monte Carlo simulations of the tests agree with the exact power within
   ``k x MCSE``, ``k`` from a stated family-wise false-alarm rate;
4. the saw-tooth of exact power is reported as such by a plan (``test_size < stable_size``);
5. plans: achieved power, finite populations, the posterior limit, the simulated planner,
   stratified costs;
6. hypothesis properties that hold for every input.

Every test was run against deliberately broken copies of the estimators (wrong survival
index, ``>=`` for ``>``, a Polya step off by one, the wrong segment law, the urn one size
ahead, the curve's window trimmed one count too far or at 1e-3, ...), each of which some of
these tests catch.

``interval="logit-delta"`` (F1) is refused on the exact path: its bound is undefined at
``tp = m``, so its pass region is not an upper set (checked here).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from estimators import (
    certification_sample_size,
    f1_ci,
    proportion_ci,
    recall_ci,
    theta_star,
)
from estimators.assurance import Conditional, CountLaw
from estimators.certification import certification_power
from estimators.power import LOSCI_METHODS
from estimators.proportion import PROPORTION_METHODS

LEVEL = 0.95
TOL = 1e-12  # exact sums of at most a few thousand terms of size <= 1

# --- the references ----------------------------------------------------------------------------

# Cells (tp, fp, fn, tn) = (0, 1, 2, 3). For each measure under simple random sampling: the
# cells of its count and of the rest of its trials; the remaining cells are neither. Elusion
# is certified from above: its count is fn among the unretrieved fn + tn.
GROUPS = {
    "accuracy": ((0, 3), (1, 2)),
    "precision": ((0,), (1,)),
    "recall": ((0,), (2,)),
    "elusion": ((2,), (3,)),
    "f1": ((0,), (1, 2)),
}


def grouped(measure: str, cells) -> list[float]:
    """The cells' values added up by the measure's groups: (count, other trials[, rest])."""
    count, other = GROUPS[measure]
    values = [sum(cells[i] for i in count), sum(cells[i] for i in other)]
    rest = [i for i in range(4) if i not in count + other]
    if rest:
        values.append(sum(cells[i] for i in rest))
    return values


def outcomes(measure: str, size: int) -> np.ndarray:
    """Every test set of ``size`` by the measure's groups: (count, other) for accuracy,
    (count, other, rest) otherwise. A plain double loop over the counts."""
    if measure == "accuracy":
        return np.array([(x, size - x) for x in range(size + 1)], dtype=np.int64)
    rows = [(a, b, size - a - b) for a in range(size + 1) for b in range(size + 1 - a)]
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def clears(bound, theta: float, *, below: bool = False) -> np.ndarray:
    """Whether each bound clears ``theta`` (strictly above; ``below``: strictly under); an
    undefined bound (nan: no information) certifies nothing."""
    bound = np.atleast_1d(np.asarray(bound, dtype=np.float64))
    found = np.zeros(bound.shape, dtype=bool)
    defined = ~np.isnan(bound)
    found[defined] = bound[defined] < theta if below else bound[defined] > theta
    return found


def mass(weights, passing) -> float:
    """Probability of the passing outcomes, summed on the smaller side: scipy's pmfs carry
    relative errors up to about 1e-12 for large parameters (their sum can miss 1 by that), so
    a power near 1 is one less the failing outcomes' mass, computed from small terms."""
    weights = np.asarray(weights, dtype=np.float64)
    passing = np.asarray(passing, dtype=bool)
    passed, failed = float(weights[passing].sum()), float(weights[~passing].sum())
    return passed if passed <= failed else 1.0 - failed


def srs_passes(measure: str, rows: np.ndarray, theta: float, interval: str,
               population: int | None = None, level: float = LEVEL) -> np.ndarray:
    """Whether each simple random test set passes, by the public interval functions."""
    count, other = rows[:, 0], rows[:, 1]
    finite = {} if population is None else {"population_size": population}
    if measure == "f1":  # the errors all put in fn here (the planner puts them in fp)
        low = f1_ci(count, 0, other, rows[:, 2], method=interval, confidence_level=level,
                    alternative="greater").low
        return clears(low, theta)
    if measure == "elusion":  # the upper bound on fn / (fn + tn) must be below theta
        high = proportion_ci(count, count + other, method=interval, confidence_level=level,
                             alternative="less", **finite).high
        return clears(high, theta, below=True)
    low = proportion_ci(count, count + other, method=interval, confidence_level=level,
                        alternative="greater", **finite).low
    return clears(low, theta)


def srs_reference(measure: str, size: int, theta: float, interval: str, *, truth=None,
                  confusion=None) -> float:
    """Power at a known infinite population (multinomial test set) or assurance over the
    Jeffreys Dirichlet posterior ``Dirichlet(counts + 1/2)``.

    Over the posterior the test set is Dirichlet-multinomial (a multinomial mixed over the
    Dirichlet), and adding up cells keeps it one with the alphas added up (the Dirichlet's
    aggregation property: grouped cells of a Dirichlet are Dirichlet with summed alphas, and
    grouped multinomial counts are multinomial with summed probabilities)."""
    rows = outcomes(measure, size)
    if truth is not None:
        weights = stats.multinomial.pmf(rows, size, grouped(measure, truth))
    else:
        alpha = grouped(measure, [c + 0.5 for c in confusion])
        weights = stats.dirichlet_multinomial.pmf(rows, alpha, size)
    return mass(weights, srs_passes(measure, rows, theta, interval))


def finite_srs_reference(measure: str, size: int, theta: float, interval: str,
                         population: int, *, truth=None, confusion=None,
                         segments=None) -> float:
    """A simple random test set drawn without replacement from ``population`` documents.

    Known population cell counts: the grouped counts are multivariate hypergeometric. Over
    the posterior (accuracy): the collection's documents are iid draws of the posterior's
    cells and a sample without replacement of iid documents is iid, so the correct count is
    ``BetaBinomial(s, tp + tn + 1, fp + fn + 1)``. Over the posterior (precision, elusion,
    the segment sizes ``(N1, N0)`` known): the segment's trials are ``Hypergeometric(N, N_h,
    s)`` and, given them, the count is Beta-binomial with the segment's Beta posterior
    (independent of the share: the Dirichlet's neutrality).
    """
    rows = outcomes(measure, size)
    if truth is not None:
        groups = grouped(measure, truth)
        possible = (rows <= np.asarray(groups)).all(axis=1)
        rows = rows[possible]
        weights = stats.multivariate_hypergeom.pmf(rows, m=groups, n=size)
    elif measure == "accuracy":
        a, b = grouped(measure, [c + 0.5 for c in confusion])
        weights = stats.betabinom.pmf(rows[:, 0], size, a, b)
    else:
        segment = segments[0] if measure == "precision" else segments[1]
        trials = rows[:, 0] + rows[:, 1]
        rows = rows[trials <= segment]
        trials = rows[:, 0] + rows[:, 1]
        a, b = grouped(measure, [c + 0.5 for c in confusion])[:2]
        weights = (stats.hypergeom.pmf(trials, population, segment, size)
                   * stats.betabinom.pmf(rows[:, 0], trials, a, b))
    bound_population = population if measure == "accuracy" else (
        None if segments is None else segments[0] if measure == "precision" else segments[1])
    passing = srs_passes(measure, rows, theta, interval,
                         bound_population if interval == "hypergeometric" else None)
    return mass(weights, passing)


def segment_pmf(n: int, hit: int, miss: int, *, truth=None, confusion=None,
                finite: bool = False) -> np.ndarray:
    """Law of the count of cell ``hit`` among ``n`` documents of its segment (cells ``hit``
    and ``miss``): binomial (infinite), hypergeometric (finite counts) or Beta-binomial
    (Jeffreys Beta posterior of the segment's share)."""
    x = np.arange(n + 1)
    if confusion is not None:
        return stats.betabinom.pmf(x, n, confusion[hit] + 0.5, confusion[miss] + 0.5)
    if finite:
        return stats.hypergeom.pmf(x, truth[hit] + truth[miss], truth[hit], n)
    segment = truth[hit] + truth[miss]
    return stats.binom.pmf(x, n, truth[hit] / segment if segment > 0 else 0.0)


def stratified_reference(measure: str, n1: int, n0: int, theta: float, interval: str,
                         segments, *, truth=None, confusion=None,
                         finite: bool = False) -> float:
    """The two segments sampled independently: ``tp`` among ``n1`` retrieved and ``fn``
    among ``n0`` unretrieved documents; every pair ``(tp, fn)`` enumerated."""
    pmf1 = segment_pmf(n1, 0, 1, truth=truth, confusion=confusion, finite=finite)
    pmf0 = segment_pmf(n0, 2, 3, truth=truth, confusion=confusion, finite=finite)
    if measure == "precision":
        x = np.arange(n1 + 1)
        method = {"population_size": segments[0]} if interval == "hypergeometric" else {}
        low = proportion_ci(x, n1, method=interval, alternative="greater", **method).low
        return mass(pmf1, clears(low, theta))
    if measure == "elusion":
        x = np.arange(n0 + 1)
        method = {"population_size": segments[1]} if interval == "hypergeometric" else {}
        high = proportion_ci(x, n0, method=interval, alternative="less", **method).high
        return mass(pmf0, clears(high, theta, below=True))
    tp, fn = (a.ravel() for a in np.meshgrid(np.arange(n1 + 1), np.arange(n0 + 1),
                                             indexing="ij"))
    options = {"method": interval, "confidence_level": LEVEL, "alternative": "greater",
               "design": "stratified", "population_sizes": segments}
    if interval == "delta" and finite:
        options["finite_population"] = True
    bound = recall_ci if measure == "recall" else f1_ci
    low = bound(tp, n1 - tp, fn, n0 - fn, **options).low
    return mass(pmf1[tp] * pmf0[fn], clears(low, theta))


# --- 1. exact power equals enumeration -------------------------------------------------------

SIZES = (0, 1, 2, 7, 40, 150)
THETAS = (0.02, 0.5, 0.97)
# a near-perfect classifier, an empty cell of each kind (no false positive, no true positive,
# no false negative, no true negative)
TRUTHS = ((0.5, 0.025, 0.025, 0.45), (0.3, 0.0, 0.1, 0.6), (0.0, 0.2, 0.1, 0.7),
          (0.25, 0.25, 0.0, 0.5), (0.6, 0.1, 0.3, 0.0))
# the README's sample, no true positive, no error at all, a single document
CONFUSIONS = ((60, 20, 25, 395), (0, 3, 2, 10), (5, 0, 0, 5), (1, 0, 0, 0))
SRS_CASES = [*((("accuracy", m)) for m in PROPORTION_METHODS),
             ("precision", "clopper-pearson"), ("precision", "wilson"),
             ("recall", "clopper-pearson"), ("recall", "jeffreys"),
             ("elusion", "clopper-pearson"), ("elusion", "wilson"),
             ("f1", "jaccard-clopper-pearson"), ("f1", "jaccard-wilson"), ("f1", "delta")]


@pytest.mark.parametrize(("measure", "interval"), SRS_CASES)
def test_srs_power_at_a_known_population_equals_enumeration(measure, interval):
    for truth in TRUTHS:
        for size in SIZES:
            for theta in THETAS:
                found = certification_power(measure, size, theta, truth=truth, interval=interval)
                expected = srs_reference(measure, size, theta, interval, truth=truth)
                assert found == pytest.approx(expected, abs=TOL, rel=0), (truth, size, theta)


@pytest.mark.parametrize(("measure", "interval"), SRS_CASES)
def test_srs_assurance_over_the_dirichlet_posterior_equals_enumeration(measure, interval):
    for confusion in CONFUSIONS:
        for size in SIZES:
            for theta in THETAS:
                found = certification_power(measure, size, theta, confusion=confusion,
                                            interval=interval)
                expected = srs_reference(measure, size, theta, interval, confusion=confusion)
                assert found == pytest.approx(expected, abs=TOL, rel=0), (confusion, size,
                                                                          theta)


def test_power_of_an_empty_test_set_is_zero():
    for measure in GROUPS:
        assert certification_power(measure, 0, 0.02, truth=TRUTHS[0]) == 0.0
        assert certification_power(measure, 0, 0.02, confusion=CONFUSIONS[0]) == 0.0


# Finite collections of 30 and 200 documents (even sizes, so that theta = 0.5 is a multiple of
# 1 / N: a hypergeometric bound can equal it, and "passes" must be strict), with empty cells.
FINITE_TRUTHS = {30: ((12, 3, 0, 15), (0, 10, 20, 0), (30, 0, 0, 0), (8, 4, 3, 15)),
                 200: ((90, 5, 5, 100),)}


@pytest.mark.parametrize("interval", ["hypergeometric", "clopper-pearson"])
def test_finite_population_accuracy_equals_enumeration(interval):
    for population, truths in FINITE_TRUTHS.items():
        sizes = (0, 1, 2, 7, population // 2, population - 1, population)
        for size in sizes:
            for theta in THETAS:
                for truth in truths:
                    found = certification_power("accuracy", size, theta, truth=truth,
                                                interval=interval, population_size=population)
                    expected = finite_srs_reference("accuracy", size, theta, interval,
                                                    population, truth=truth)
                    assert found == pytest.approx(expected, abs=TOL, rel=0), (truth, size)
                found = certification_power("accuracy", size, theta, confusion=CONFUSIONS[0],
                                            interval=interval, population_size=population)
                expected = finite_srs_reference("accuracy", size, theta, interval, population,
                                                confusion=CONFUSIONS[0])
                assert found == pytest.approx(expected, abs=TOL, rel=0), (size, theta)


@pytest.mark.parametrize("measure", ["precision", "elusion"])
def test_finite_population_precision_and_elusion_equal_enumeration(measure):
    # 12 retrieved and 18 unretrieved documents; the last population retrieves everything
    # relevant, the one before retrieves nothing relevant
    segments = (12, 18)
    truths = ((8, 4, 3, 15), (12, 0, 0, 18), (0, 12, 18, 0), (5, 7, 0, 18))
    for size in (0, 1, 2, 7, 15, 29, 30):
        for theta in THETAS:
            for truth in truths:
                found = certification_power(measure, size, theta, truth=truth, population_size=30,
                                            segment_sizes=segments)
                expected = finite_srs_reference(measure, size, theta, "hypergeometric", 30,
                                                truth=truth, segments=segments)
                assert found == pytest.approx(expected, abs=TOL, rel=0), (truth, size, theta)
            for confusion in CONFUSIONS[:3]:
                found = certification_power(measure, size, theta, confusion=confusion,
                                            population_size=30, segment_sizes=segments)
                expected = finite_srs_reference(measure, size, theta, "hypergeometric", 30,
                                                confusion=confusion, segments=segments)
                assert found == pytest.approx(expected, abs=TOL, rel=0), (confusion, size,
                                                                          theta)


# Stratified: 400 retrieved and 600 unretrieved documents (truth proportions retrieve 40%), or
# a finite collection of 30 and 50. Sizes include empty and fully sampled segments.
STRATIFIED_TRUTHS = ((0.3, 0.1, 0.05, 0.55), (0.4, 0.0, 0.0, 0.6), (0.0, 0.4, 0.2, 0.4),
                     (0.2, 0.2, 0.6, 0.0))
STRATIFIED_SIZES = ((0, 0), (1, 0), (0, 1), (1, 1), (5, 3), (40, 60), (150, 20), (20, 150))
FINITE_SEGMENTS = (30, 50)
FINITE_STRATIFIED_TRUTHS = ((20, 10, 5, 45), (30, 0, 0, 50), (0, 30, 10, 40), (10, 20, 50, 0))
FINITE_STRATIFIED_SIZES = ((0, 0), (1, 0), (0, 1), (5, 3), (15, 25), (29, 50), (30, 1),
                           (30, 50))


@pytest.mark.parametrize("measure", ["recall", "f1"])
@pytest.mark.parametrize("interval", ["segments-clopper-pearson", "delta"])
def test_stratified_power_at_a_known_population_equals_enumeration(measure, interval):
    for truth in STRATIFIED_TRUTHS:
        for n1, n0 in STRATIFIED_SIZES:
            for theta in THETAS:
                found = certification_power(measure, (n1, n0), theta, truth=truth,
                                            design="stratified", interval=interval,
                                            segment_sizes=(400, 600))
                expected = stratified_reference(measure, n1, n0, theta, interval, (400, 600),
                                                truth=truth)
                assert found == pytest.approx(expected, abs=TOL, rel=0), (truth, n1, n0,
                                                                          theta)


@pytest.mark.parametrize("measure", ["recall", "f1"])
@pytest.mark.parametrize("interval", ["segments-hypergeometric", "delta"])
def test_stratified_power_in_a_finite_population_equals_enumeration(measure, interval):
    for truth in FINITE_STRATIFIED_TRUTHS:
        for n1, n0 in FINITE_STRATIFIED_SIZES:
            for theta in THETAS:
                found = certification_power(measure, (n1, n0), theta, truth=truth,
                                            design="stratified", interval=interval,
                                            population_size=80, segment_sizes=FINITE_SEGMENTS)
                expected = stratified_reference(measure, n1, n0, theta, interval,
                                                FINITE_SEGMENTS, truth=truth, finite=True)
                assert found == pytest.approx(expected, abs=TOL, rel=0), (truth, n1, n0,
                                                                          theta)


@pytest.mark.parametrize("measure", ["recall", "f1"])
@pytest.mark.parametrize(("interval", "population"), [("segments-clopper-pearson", None),
                                                      ("delta", None),
                                                      ("segments-hypergeometric", 80)])
def test_stratified_assurance_over_the_segment_posteriors_equals_enumeration(
        measure, interval, population):
    # the known-share posterior: independent Jeffreys Beta segments, so each segment's count
    # is Beta-binomial and the two are independent (also in a finite collection, itself
    # drawn from the posterior: a sample without replacement of iid documents is iid)
    segments = (400, 600) if population is None else FINITE_SEGMENTS
    sizes = STRATIFIED_SIZES if population is None else FINITE_STRATIFIED_SIZES
    for confusion in CONFUSIONS[:3]:
        for n1, n0 in sizes:
            for theta in THETAS:
                found = certification_power(measure, (n1, n0), theta, confusion=confusion,
                                            design="stratified", interval=interval,
                                            population_size=population, segment_sizes=segments)
                expected = stratified_reference(measure, n1, n0, theta, interval, segments,
                                                confusion=confusion,
                                                finite=population is not None)
                assert found == pytest.approx(expected, abs=TOL, rel=0), (confusion, n1, n0,
                                                                          theta)


@pytest.mark.parametrize("measure", ["precision", "elusion"])
def test_stratified_precision_and_elusion_equal_enumeration(measure):
    for n1, n0 in STRATIFIED_SIZES:
        for theta in THETAS:
            for truth in STRATIFIED_TRUTHS:
                found = certification_power(measure, (n1, n0), theta, truth=truth,
                                            design="stratified", segment_sizes=(400, 600))
                expected = stratified_reference(measure, n1, n0, theta, "clopper-pearson",
                                                (400, 600), truth=truth)
                assert found == pytest.approx(expected, abs=TOL, rel=0), (truth, n1, n0)
            for confusion in CONFUSIONS[:3]:
                found = certification_power(measure, (n1, n0), theta, confusion=confusion,
                                            design="stratified", segment_sizes=(400, 600))
                expected = stratified_reference(measure, n1, n0, theta, "clopper-pearson",
                                                (400, 600), confusion=confusion)
                assert found == pytest.approx(expected, abs=TOL, rel=0), (confusion, n1, n0)
    for n1, n0 in FINITE_STRATIFIED_SIZES:
        for theta in THETAS:
            for truth in FINITE_STRATIFIED_TRUTHS:
                found = certification_power(measure, (n1, n0), theta, truth=truth,
                                            design="stratified", population_size=80,
                                            segment_sizes=FINITE_SEGMENTS)
                expected = stratified_reference(measure, n1, n0, theta, "hypergeometric",
                                                FINITE_SEGMENTS, truth=truth, finite=True)
                assert found == pytest.approx(expected, abs=TOL, rel=0), (truth, n1, n0)


def _cp_passes(theta: float):
    def passes(x, d):
        return clears(proportion_ci(x, d, method="clopper-pearson", alternative="greater").low,
                      theta)
    return passes


# (inner law, outer law, the same laws as scipy pmfs, most trials, largest size)
CURVES = {
    "binomial": (CountLaw("binomial", 0.7), CountLaw("binomial", 0.3),
                 lambda x, d: stats.binom.pmf(x, d, 0.7),
                 lambda d, s: stats.binom.pmf(d, s, 0.3), None, 150),
    "beta-binomial": (CountLaw("beta-binomial", 3.5, 1.5), CountLaw("beta-binomial", 2.5, 6.5),
                      lambda x, d: stats.betabinom.pmf(x, d, 3.5, 1.5),
                      lambda d, s: stats.betabinom.pmf(d, s, 2.5, 6.5), None, 150),
    "hypergeometric": (CountLaw("hypergeometric", 40, 25), CountLaw("hypergeometric", 100, 40),
                       lambda x, d: stats.hypergeom.pmf(x, 40, 25, d),
                       lambda d, s: stats.hypergeom.pmf(d, 100, 40, s), 40, 100),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(CURVES))
def test_conditional_curve_equals_power_and_enumeration_at_every_size(kind):
    inner, outer, inner_pmf, outer_pmf, most, largest = CURVES[kind]
    theta = 0.55
    curve = Conditional(inner, _cp_passes(theta), outer, most_trials=most).curve(largest)
    single = Conditional(inner, _cp_passes(theta), outer, most_trials=most)
    assert curve.shape == (largest + 1,)
    for size in range(largest + 1):
        expected = 0.0
        for d in range(min(size, most or size) + 1):
            x = np.arange(d + 1)
            low = proportion_ci(x, d, method="clopper-pearson", alternative="greater").low
            expected += float(outer_pmf(d, size)) * float(inner_pmf(x, d) @ clears(low, theta))
        assert curve[size] == pytest.approx(single.power(size), abs=TOL, rel=0), size
        assert curve[size] == pytest.approx(expected, abs=TOL, rel=0), size
    # without an outer law the curve is the survival at each size itself
    alone = Conditional(inner, _cp_passes(theta), most_trials=most)
    top = largest if most is None else most
    values = alone.curve(top)
    for size in range(top + 1):
        x = np.arange(size + 1)
        low = proportion_ci(x, size, method="clopper-pearson", alternative="greater").low
        expected = float(inner_pmf(x, size) @ clears(low, theta))
        assert values[size] == pytest.approx(expected, abs=TOL, rel=0), size


def _sixty_percent(x, d):
    """Passes with at least 60% successes: threshold ``ceil(0.6 d)``, written out below."""
    return 10 * x >= 6 * d


def _betabinom_pmf(s: int, a: float, b: float) -> np.ndarray:
    """``BetaBinomial(s, a, b)`` at ``d = 0..s`` from its closed form ``C(s, d) (a)_d (b)_(s-d)
    / (a + b)_s``: the two end values as sums of logs, the rest by the ratios of neighbours,
    outward from the nearer end. (scipy's ``betabinom`` goes through log-beta functions and
    is off by up to 1e-11 in a power at thousands of trials; this is within 1e-13.)"""
    i = np.arange(s)
    first = np.exp(np.sum(np.log1p(-a / (a + b + i))))  # (b)_s / (a + b)_s
    last = np.exp(np.sum(np.log1p(-b / (a + b + i))))  # (a)_s / (a + b)_s
    half = s // 2
    d = np.arange(half)
    up = first * np.cumprod(np.concatenate([[1.0], (s - d) * (a + d)
                                            / ((d + 1) * (b + s - d - 1))]))
    e = np.arange(max(s - half - 1, 0))  # from d = s down
    down = last * np.cumprod(np.concatenate([[1.0], (s - e) * (b + e)
                                             / ((e + 1) * (a + s - e - 1))]))
    return np.concatenate([up, down[:s - half][::-1]])


def _hypergeom_pmf(s: int, population: int, successes: int) -> np.ndarray:
    """``Hypergeometric(M, K, s)`` at ``d = 0..s`` as ``binom(d; K, p) binom(s - d; M - K, p) /
    binom(s; M, p)`` with ``p = s / M`` (the powers of ``p`` and ``1 - p`` cancel): as exact
    as scipy's ``hypergeom``, which takes ~4 us a value at these sizes."""
    d, p = np.arange(s + 1), s / population
    return (stats.binom.pmf(d, successes, p) * stats.binom.pmf(s - d, population - successes, p)
            / stats.binom.pmf(s, population, p))


def _binom_sf(p: float):
    return lambda k, d: stats.binom.sf(k - 1, d, p)


# The successes among the trials, and their survival P(X >= k | d), for every long curve.
LONG_INNER, LONG_INNER_SF = CountLaw("binomial", 0.62), _binom_sf(0.62)
# (outer law, its pmf at d = 0..s, largest size): thousands of sizes, for the window of
# counts to leave 0 and s behind
LONG_CURVES = {
    "binomial": (CountLaw("binomial", 0.3),
                 lambda s: stats.binom.pmf(np.arange(s + 1), s, 0.3), 3000),
    "binomial near one": (CountLaw("binomial", 0.995),
                          lambda s: stats.binom.pmf(np.arange(s + 1), s, 0.995), 3000),
    "beta-binomial, U-shaped": (CountLaw("beta-binomial", 0.5, 0.7),
                                lambda s: _betabinom_pmf(s, 0.5, 0.7), 3000),
    "beta-binomial, a posterior": (CountLaw("beta-binomial", 12.5, 190.5),
                                   lambda s: _betabinom_pmf(s, 12.5, 190.5), 3000),
    # drawn to the last item: at s = M the count is K = 1100 itself
    "hypergeometric, exhausted": (CountLaw("hypergeometric", 3000, 1100),
                                  lambda s: _hypergeom_pmf(s, 3000, 1100), 3000),
    # the window pressed against K = 40 from the start (the survival beyond K is left
    # nonzero: no mass may reach it)
    "hypergeometric, few successes": (CountLaw("hypergeometric", 3200, 40),
                                      lambda s: _hypergeom_pmf(s, 3200, 40), 3200),
}


@pytest.mark.parametrize("case", sorted(LONG_CURVES))
def test_long_conditional_curve_equals_the_sum_of_pmfs_at_every_size(case):
    """Thousands of urn steps with the window of counts trimmed: the power at every size
    equals ``sum_d P(D = d | s) P(X >= ceil(0.6 d) | d)``, both from closed forms."""
    outer, outer_pmf, largest = LONG_CURVES[case]
    curve = Conditional(LONG_INNER, _sixty_percent, outer).curve(largest)
    assert curve.shape == (largest + 1,)
    trials = np.arange(largest + 1)
    tail = LONG_INNER_SF((6 * trials + 9) // 10, trials)
    expected = np.array([outer_pmf(size) @ tail[:size + 1] for size in range(largest + 1)])
    worst = int(np.argmax(np.abs(curve - expected)))
    assert curve[worst] == pytest.approx(expected[worst], abs=TOL, rel=0), worst


# --- 2. the pass regions are upper sets --------------------------------------------------------

PASS_THETAS = np.linspace(0.005, 0.995, 100)


def _all_counts(largest: int) -> tuple[np.ndarray, np.ndarray]:
    trials = np.concatenate([np.full(d + 1, d) for d in range(largest + 1)])
    counts = np.concatenate([np.arange(d + 1) for d in range(largest + 1)])
    return counts, trials


def _assert_upper_sets(passing: np.ndarray, counts: np.ndarray, trials: np.ndarray,
                       what: str) -> None:
    """``passing`` (thetas x outcomes, outcomes ordered by trials then count): within each
    number of trials, once a count passes every larger count passes."""
    for d in np.unique(trials):
        row = passing[:, trials == d]
        broken = (row[:, :-1] & ~row[:, 1:]).any(axis=1)
        assert not broken.any(), (f"{what}: d = {d}, theta = "
                                  f"{PASS_THETAS[np.argmax(broken)]:.3f}: passes at "
                                  f"{np.flatnonzero(row[np.argmax(broken)]).tolist()}")


@pytest.mark.parametrize("level", [0.95, 0.8])
def test_pass_region_is_an_upper_set_proportions(level):
    counts, trials = _all_counts(150)
    for method in PROPORTION_METHODS:
        low = proportion_ci(counts, trials, method=method, confidence_level=level,
                            alternative="greater").low
        passing = np.array([clears(low, t) for t in PASS_THETAS])
        _assert_upper_sets(passing, counts, trials, f"{method} lower bound")
        # elusion: the upper bound on the share of fn among the unretrieved; its count is tn,
        # the unretrieved documents that are not relevant (the planner's X)
        high = proportion_ci(trials - counts, trials, method=method, confidence_level=level,
                             alternative="less").high
        passing = np.array([clears(high, t, below=True) for t in PASS_THETAS])
        _assert_upper_sets(passing, counts, trials, f"{method} upper bound")
    small_counts, small_trials = _all_counts(60)
    for population in (60, 61, 97, 400):
        low = proportion_ci(small_counts, small_trials, method="hypergeometric",
                            population_size=population, confidence_level=level,
                            alternative="greater").low
        passing = np.array([clears(low, t) for t in PASS_THETAS])
        _assert_upper_sets(passing, small_counts, small_trials, f"hypergeometric N={population}")
        high = proportion_ci(small_trials - small_counts, small_trials, method="hypergeometric",
                             population_size=population, confidence_level=level,
                             alternative="less").high
        passing = np.array([clears(high, t, below=True) for t in PASS_THETAS])
        _assert_upper_sets(passing, small_counts, small_trials,
                           f"hypergeometric upper N={population}")


def test_logit_delta_pass_region_is_not_an_upper_set_and_is_refused():
    # F1 estimate 1 (tp = m) has an undefined logit bound: a failing count above passing ones
    low = f1_ci([4, 5], [1, 0], 0, 0, method="logit-delta", alternative="greater").low
    assert low[0] > 0.5 and np.isnan(low[1])
    with pytest.raises(ValueError, match="`interval` must not be 'logit-delta'"):
        certification_power("f1", 10, 0.5, confusion=(60, 20, 25, 395), interval="logit-delta")


@pytest.mark.parametrize("method", [m for m in LOSCI_METHODS if m != "logit-delta"])
def test_pass_region_is_an_upper_set_f1(method):
    # F1 under simple random sampling: tp among m = tp + fp + fn, every method the planner
    # accepts (LOSCI_METHODS)
    counts, trials = _all_counts(150)
    for level in (0.95, 0.8):
        low = f1_ci(counts, trials - counts, 0, 0, method=method, confidence_level=level,
                    alternative="greater").low
        passing = np.array([clears(low, t) for t in PASS_THETAS])
        _assert_upper_sets(passing, counts, trials, method)


@pytest.mark.parametrize("measure", ["recall", "f1"])
def test_pass_region_is_an_upper_set_in_tp_for_every_fn_stratified(measure):
    bound = recall_ci if measure == "recall" else f1_ci
    thetas = PASS_THETAS[::3]
    for segments in ((30, 50), (400, 600), (1, 100), (100, 1)):
        for n1 in sorted({min(n, segments[0]) for n in (0, 1, 2, 5, 40, segments[0])}):
            for n0 in sorted({min(n, segments[1]) for n in (0, 1, 3, 40, segments[1])}):
                tp, fn = np.meshgrid(np.arange(n1 + 1), np.arange(n0 + 1), indexing="ij")
                for method, finite in (("segments-clopper-pearson", False),
                                       ("segments-hypergeometric", False),
                                       ("delta", False), ("delta", True)):
                    options = {"finite_population": True} if finite else {}
                    low = bound(tp, n1 - tp, fn, n0 - fn, method=method, design="stratified",
                                population_sizes=segments, alternative="greater",
                                **options).low
                    for theta in thetas:
                        passing = clears(low, theta).reshape(tp.shape)
                        broken = passing[:-1] & ~passing[1:]  # passes at tp, not at tp + 1
                        assert not broken.any(), (method, finite, segments, n1, n0, theta)


# --- 3. Monte Carlo agrees with the exact power -------------------------------------------------

REPLICATES = 20_000


def _simulate(case: str, rng: np.random.Generator) -> tuple[float, float]:
    """(exact power, share of simulated test sets that pass) for one case."""
    if case == "accuracy-truth":
        truth, size, theta = (0.5, 0.025, 0.025, 0.45), 200, 0.9
        cells = rng.multinomial(size, truth, size=REPLICATES)
        low = proportion_ci(cells[:, 0] + cells[:, 3], size, method="clopper-pearson",
                            alternative="greater").low
        return (certification_power("accuracy", size, theta, truth=truth),
                clears(low, theta).mean())
    if case == "recall-dirichlet":
        confusion, size, theta = (60, 20, 25, 395), 300, 0.55
        cells = rng.multinomial(size, rng.dirichlet(np.add(confusion, 0.5), REPLICATES))
        low = recall_ci(*cells.T, alternative="greater").low
        return (certification_power("recall", size, theta, confusion=confusion),
                clears(low, theta).mean())
    if case == "f1-delta-dirichlet":
        confusion, size, theta = (60, 20, 25, 395), 400, 0.6
        cells = rng.multinomial(size, rng.dirichlet(np.add(confusion, 0.5), REPLICATES))
        low = f1_ci(*cells.T, method="delta", alternative="greater").low
        return (certification_power("f1", size, theta, confusion=confusion, interval="delta"),
                clears(low, theta).mean())
    if case == "f1-segments-known-share":
        confusion, (n1, n0), theta, segments = (60, 20, 25, 395), (120, 200), 0.55, (1600, 8400)
        r1 = rng.beta(confusion[0] + 0.5, confusion[1] + 0.5, REPLICATES)
        r0 = rng.beta(confusion[2] + 0.5, confusion[3] + 0.5, REPLICATES)
        tp, fn = rng.binomial(n1, r1), rng.binomial(n0, r0)
        low = f1_ci(tp, n1 - tp, fn, n0 - fn, method="segments-clopper-pearson",
                    design="stratified", population_sizes=segments, alternative="greater").low
        return (certification_power("f1", (n1, n0), theta, confusion=confusion,
                                    design="stratified", segment_sizes=segments),
                clears(low, theta).mean())
    if case == "accuracy-finite":
        truth, size, theta = (90, 5, 5, 100), 120, 0.92
        population = np.repeat([1, 0, 0, 1], truth)  # 1: a correct document
        drawn = rng.permuted(np.tile(population, (REPLICATES, 1)), axis=1)[:, :size]
        low = proportion_ci(drawn.sum(axis=1), size, method="hypergeometric",
                            population_size=200, alternative="greater").low
        return (certification_power("accuracy", size, theta, truth=truth, population_size=200),
                clears(low, theta).mean())
    assert case == "recall-segments-finite"
    truth, (n1, n0), theta = (20, 10, 5, 45), (15, 25), 0.5
    tp = rng.hypergeometric(truth[0], truth[1], n1, REPLICATES)
    fn = rng.hypergeometric(truth[2], truth[3], n0, REPLICATES)
    low = recall_ci(tp, n1 - tp, fn, n0 - fn, method="segments-hypergeometric",
                    design="stratified", population_sizes=FINITE_SEGMENTS,
                    alternative="greater").low
    return (certification_power("recall", (n1, n0), theta, truth=truth, design="stratified",
                                population_size=80, segment_sizes=FINITE_SEGMENTS),
            clears(low, theta).mean())


MC_CASES = ("accuracy-truth", "recall-dirichlet", "f1-delta-dirichlet",
            "f1-segments-known-share", "accuracy-finite", "recall-segments-finite")
# Family-wise false-alarm rate 1e-4 over the cases, two-sided (Bonferroni): k = 4.31.
MC_FALSE_ALARM = 1e-4
MC_K = float(stats.norm.isf(MC_FALSE_ALARM / (2 * len(MC_CASES))))


@pytest.mark.parametrize("case", MC_CASES)
def test_monte_carlo_pass_share_agrees_with_exact_power(case):
    seed = 20_130_000 + MC_CASES.index(case)
    exact, share = _simulate(case, np.random.default_rng(seed))
    assert 0.05 < exact < 0.95  # a sensitive case: neither certain nor hopeless
    mcse = math.sqrt(exact * (1 - exact) / REPLICATES)  # the binomial SE at the exact power
    assert abs(share - exact) <= MC_K * mcse, (case, share, exact, mcse)


# --- 4. the saw-tooth ---------------------------------------------------------------------------

# Found by scanning accuracy plans from concentrated samples. (4000, 50, 50, 5900) makes the
# accuracy posterior Beta(9901, 101), about 0.99 +- 0.001. A 95% Clopper-Pearson lower bound
# clears 0.9 with no error up to 45 documents, with at most one error from 46 to 60 and at most
# two from 61: the allowed errors step up at 46 and 61, and between the steps each added
# document is one more chance of a second error. So the assurance jumps to 0.921 at 46, then
# falls by about 0.003 a document, below 0.9 from 53 to 60, and jumps to 0.976 at 61: the
# least size reaching 0.9 is 46, the size from which it stays at or above 0.9 is 61.
def _rising(a: Fraction, k: int) -> Fraction:
    found = Fraction(1)
    for i in range(k):
        found *= a + i
    return found


def exact_betabinom_sf(k: int, n: int, a: int, b: int) -> Fraction:
    """``P(X >= k)`` for ``X ~ BetaBinomial(n, a, b)`` as an exact fraction:
    ``pmf(x) = C(n, x) a^(x) b^(n - x) / (a + b)^(n)`` with rising factorials."""
    a, b = Fraction(a), Fraction(b)
    return sum((math.comb(n, x) * _rising(a, x) * _rising(b, n - x) / _rising(a + b, n)
                for x in range(k, n + 1)), Fraction(0))


SAW = {"confusion": (4000, 50, 50, 5900), "theta": 0.9, "goal": 0.9}


def test_power_saw_tooth_is_reported_by_the_plan():
    confusion, theta, goal = SAW["confusion"], SAW["theta"], SAW["goal"]

    def at(size):
        return certification_power("accuracy", size, theta, confusion=confusion)

    # the saw-tooth itself, and that the references see it too
    assert at(47) < at(46)
    assert at(52) >= goal > at(53)
    assert at(60) < goal <= at(61)
    # against exact rational arithmetic: the least passing count by the public interval,
    # then P(X >= k) for X ~ BetaBinomial(s, 9901, 101) as a fraction. scipy's beta-binomial
    # pmf, which the planner sums, carries relative errors near 1e-11 at parameters near 1e4:
    # hence 1e-10 here (the margins of the saw-tooth above are at least 7e-4).
    tp, fp, fn, tn = confusion
    for size in (45, 46, 47, 52, 53, 60, 61):
        x = np.arange(size + 1)
        passing = clears(proportion_ci(x, size, method="clopper-pearson",
                                       alternative="greater").low, theta)
        least = int(np.argmax(passing))
        assert passing[least:].all() and not passing[:least].any()
        expected = exact_betabinom_sf(least, size, tp + tn + 1, fp + fn + 1)
        assert at(size) == pytest.approx(float(expected), abs=1e-10, rel=0), size
    plan = certification_sample_size(confusion, theta, measure="accuracy", power=goal)
    assert plan.method == "exact" and plan.reachable
    assert (plan.test_size, plan.stable_size) == (46, 61)
    assert plan.test_size < plan.stable_size <= plan.search_limit
    assert at(plan.test_size) >= goal > at(plan.test_size - 1)
    assert plan.achieved_power == at(plan.test_size)
    assert at(plan.stable_size - 1) < goal
    assert min(at(s) for s in range(plan.stable_size, plan.search_limit + 1)) >= goal
    assert any(at(s) < goal for s in range(plan.test_size, plan.stable_size))
    # the plan's curve is the power at every size it holds
    assert plan.curve.sizes.tolist() == list(range(1, plan.search_limit + 1))
    for size, value in zip(plan.curve.sizes, plan.curve.power, strict=True):
        assert value == at(int(size))


# --- 5. plans ---------------------------------------------------------------------------------

CONFUSION = (60, 20, 25, 395)
STRATA = (1600, 8400)  # the sample's retrieved share, 0.16
PLANS = [
    ("accuracy", 0.85, {}),
    ("precision", 0.6, {}),
    ("recall", 0.5, {}),
    ("elusion", 0.1, {}),
    ("f1", 0.55, {"interval": "jaccard-clopper-pearson", "posterior": "dirichlet"}),
    ("f1", 0.55, {"interval": "jaccard-wilson", "posterior": "dirichlet"}),
    ("f1", 0.55, {"interval": "delta", "posterior": "dirichlet"}),
    ("accuracy", 0.85, {"population_size": 500}),
    ("precision", 0.6, {"population_size": 1000, "segment_sizes": (160, 840)}),
    ("elusion", 0.1, {"population_size": 1000, "segment_sizes": (160, 840)}),
    ("recall", 0.5, {"design": "stratified", "segment_sizes": STRATA}),
    ("f1", 0.55, {"design": "stratified", "segment_sizes": STRATA}),
    ("recall", 0.5, {"design": "stratified", "segment_sizes": STRATA, "interval": "delta"}),
    ("f1", 0.55, {"design": "stratified", "segment_sizes": STRATA, "interval": "delta"}),
    ("recall", 0.5, {"design": "stratified", "segment_sizes": (160, 840),
                     "population_size": 1000}),
    ("f1", 0.55, {"design": "stratified", "segment_sizes": (160, 840),
                  "population_size": 1000}),
    ("precision", 0.6, {"design": "stratified", "segment_sizes": STRATA}),
    ("elusion", 0.1, {"design": "stratified", "segment_sizes": STRATA}),
    ("precision", 0.6, {"design": "stratified", "segment_sizes": (160, 840),
                        "population_size": 1000}),
]


def _plan_size(plan):
    return plan.test_size if plan.design == "srs" else (plan.retrieved_size,
                                                        plan.unretrieved_size)


@pytest.mark.parametrize(("measure", "target", "options"), PLANS)
def test_plan_achieves_the_power_it_reports(measure, target, options):
    goal = 0.93
    plan = certification_sample_size(CONFUSION, target, measure=measure, power=goal,
                                     **options)
    assert plan.method == "exact" and plan.reachable, plan.reason
    given_options = {k: v for k, v in options.items()
                     if k in ("design", "interval", "population_size", "segment_sizes")}

    def at(size):
        return certification_power(measure, size, target, confusion=CONFUSION, **given_options)

    achieved = at(_plan_size(plan))
    assert achieved >= goal
    if plan.design == "stratified" and measure in ("recall", "f1"):
        # the allocation's power is computed by the same Segments sum: identical
        assert plan.achieved_power == achieved
        assert plan.retrieved_size + plan.unretrieved_size == plan.test_size
        assert plan.retrieved_size <= plan.segment_sizes[0]
        assert plan.unretrieved_size <= plan.segment_sizes[1]
        return
    # single-sample plans read the achieved power off the urn-grown curve, `power` sums the
    # pmf of the trials: two exact computations, equal up to rounding
    assert plan.achieved_power == pytest.approx(achieved, abs=1e-10, rel=0)
    single = plan.test_size
    if plan.design == "stratified":
        single = plan.retrieved_size if measure == "precision" else plan.unretrieved_size
        assert plan.test_size == single

    def at_single(size):
        if plan.design == "srs":
            return at(size)
        return at((size, 0) if measure == "precision" else (0, size))

    assert at_single(single - 1) < goal  # the least size reaching the power
    stride = max(1, plan.search_limit // 60)
    for size in [*range(1, plan.search_limit + 1, stride), plan.search_limit]:
        assert plan.curve.at(size) == pytest.approx(at_single(size), abs=1e-10, rel=0), size
    if plan.population_size is not None:
        # a simple random test set is drawn from the whole collection, a stratified one from
        # the segment
        big = plan.population_size if plan.design == "srs" else (
            plan.segment_sizes[0] if measure == "precision" else plan.segment_sizes[1])
        assert plan.search_limit <= big
        assert plan.curve.sizes.max() <= big


@pytest.mark.slow
def test_finite_accuracy_plans_never_exceed_the_population_and_shrink_with_it():
    sizes = {}
    for population in (2_000, 20_000, 200_000, None):
        plan = certification_sample_size(CONFUSION, 0.82, measure="accuracy",
                                         population_size=population)
        assert plan.reachable
        sizes[population] = plan.test_size
        if population is not None:
            assert plan.test_size <= plan.search_limit <= population
            assert certification_power("accuracy", plan.test_size, 0.82, confusion=CONFUSION,
                                       population_size=population) == plan.achieved_power
    assert sizes[2_000] <= sizes[20_000] <= sizes[200_000] <= sizes[None]
    assert sizes[2_000] < sizes[None]
    # a collection smaller than the infinite plan: the census certifies when the posterior
    # puts the collection's accuracy above the target often enough, and no plan is larger
    small = certification_sample_size(CONFUSION, 0.85, measure="accuracy", population_size=300)
    assert small.reachable and small.test_size <= 300 and small.search_limit <= 300
    assert certification_sample_size(CONFUSION, 0.85, measure="accuracy").test_size > 300


def _srs_limit(measure: str, goal: float) -> float:
    """The 1 - goal quantile of the measure's Jeffreys-Dirichlet posterior (goal quantile for
    elusion), from scipy's Beta."""
    tp, fp, fn, tn = CONFUSION
    if measure == "recall":
        return float(stats.beta(tp + 0.5, fn + 0.5).ppf(1 - goal))
    if measure == "precision":
        return float(stats.beta(tp + 0.5, fp + 0.5).ppf(1 - goal))
    if measure == "accuracy":
        return float(stats.beta(tp + tn + 1, fp + fn + 1).ppf(1 - goal))
    if measure == "elusion":
        return float(stats.beta(fn + 0.5, tn + 0.5).ppf(goal))
    jaccard = float(stats.beta(tp + 0.5, fp + fn + 1).ppf(1 - goal))
    return 2 * jaccard / (1 + jaccard)


@pytest.mark.parametrize("measure", list(GROUPS))
def test_limit_is_the_posterior_quantile_and_beyond_it_is_unreachable(measure):
    goal = 0.93
    limit = _srs_limit(measure, goal)
    options = {"interval": "jaccard-clopper-pearson"} if measure == "f1" else {}
    target = limit - 0.05 if measure != "elusion" else limit + 0.02
    plan = certification_sample_size(CONFUSION, target, measure=measure, power=goal,
                                     posterior="dirichlet", **options)
    assert plan.limit == pytest.approx(limit, rel=1e-9, abs=0)
    assert plan.reachable
    beyond = limit + 0.001 if measure != "elusion" else limit - 0.001
    plan = certification_sample_size(CONFUSION, beyond, measure=measure, power=goal,
                                     posterior="dirichlet", **options)
    assert not plan.reachable and plan.test_size is None
    assert "limit" in plan.reason and f"{limit:.4f}" in plan.reason


LIMIT_DRAWS = 400_000
# Family-wise false-alarm rate 1e-4 over the two measures, two-sided: k = 4.06.
LIMIT_K = float(stats.norm.isf(1e-4 / 4))


@pytest.mark.parametrize("measure", ["recall", "f1"])
def test_stratified_limit_is_the_quantile_of_the_segment_posteriors(measure):
    goal = 0.93
    plan = certification_sample_size(CONFUSION, 0.3, measure=measure, design="stratified",
                                      segment_sizes=STRATA, power=goal)
    rng = np.random.default_rng(2013)
    tp, fp, fn, tn = CONFUSION
    q = STRATA[0] / sum(STRATA)
    r1 = rng.beta(tp + 0.5, fp + 0.5, LIMIT_DRAWS)
    r0 = rng.beta(fn + 0.5, tn + 0.5, LIMIT_DRAWS)
    values = (q * r1 / (q * r1 + (1 - q) * r0) if measure == "recall"
              else 2 * q * r1 / (q * r1 + q + (1 - q) * r0))
    # the number of posterior draws at or below the 1 - goal quantile is Binomial(M, 1 - goal)
    below = int((values <= plan.limit).sum())
    expected = LIMIT_DRAWS * (1 - goal)
    assert abs(below - expected) <= LIMIT_K * math.sqrt(expected * goal), (below, expected)
    beyond = certification_sample_size(CONFUSION, plan.limit + 0.002, measure=measure,
                                       design="stratified", segment_sizes=STRATA, power=goal)
    assert not beyond.reachable and "limit" in beyond.reason


def test_exact_f1_plan_agrees_with_the_simulated_theta_star():
    # The exact plan's size s with power P: theta_star simulates N bounds of test sets of s
    # documents from the same Dirichlet posterior, and the number B of them at or below the
    # target is Binomial(N, 1 - P). The r-th smallest bound is at or below the target exactly
    # when B >= r. With r_low, r_high the Binomial's 5e-5 and 1 - 5e-5 quantiles (false-alarm
    # rate 1e-4), the r_low-th bound is at or below the target and the r_high-th above it.
    # theta_star's rank is ceil((1 - power) N): power = 1 - r / N asks for rank r, and the same
    # seed gives the same bounds at every rank.
    target, goal, draws = 0.55, 0.93, 20_000
    plan = certification_sample_size(CONFUSION, target, measure="f1", power=goal,
                                     interval="jaccard-clopper-pearson", posterior="dirichlet")
    assert plan.method == "exact" and plan.reachable
    chance_below = 1 - plan.achieved_power
    r_low = int(stats.binom.ppf(5e-5, draws, chance_below))
    r_high = int(stats.binom.isf(5e-5, draws, chance_below)) + 1

    def bound_at_rank(rank):
        return theta_star(CONFUSION, plan.test_size, power=1 - rank / draws, draws=draws,
                          rng=7, interval="jaccard-clopper-pearson", posterior="dirichlet")

    assert bound_at_rank(r_low) <= target < bound_at_rank(r_high), (r_low, r_high)


def test_stratified_allocation_follows_the_labelling_cost():
    cheap_unretrieved = certification_sample_size(CONFUSION, 0.5, measure="recall",
                                                  design="stratified", segment_sizes=STRATA,
                                                  cost=(10, 1))
    dear_unretrieved = certification_sample_size(CONFUSION, 0.5, measure="recall",
                                                 design="stratified", segment_sizes=STRATA,
                                                 cost=(1, 10))
    assert dear_unretrieved.unretrieved_size < cheap_unretrieved.unretrieved_size
    assert dear_unretrieved.retrieved_size > cheap_unretrieved.retrieved_size
    for plan in (cheap_unretrieved, dear_unretrieved):
        c1, c0 = plan.cost
        assert plan.total_cost == c1 * plan.retrieved_size + c0 * plan.unretrieved_size
        assert certification_power("recall", (plan.retrieved_size, plan.unretrieved_size), 0.5,
                                   confusion=CONFUSION, design="stratified",
                                   segment_sizes=STRATA) == plan.achieved_power >= 0.93
    # each plan is no dearer, at its own costs, than the other's allocation
    for plan, other in ((cheap_unretrieved, dear_unretrieved),
                        (dear_unretrieved, cheap_unretrieved)):
        c1, c0 = plan.cost
        assert plan.total_cost <= c1 * other.retrieved_size + c0 * other.unretrieved_size


# --- 6. properties ------------------------------------------------------------------------------

cells = st.lists(st.integers(0, 20), min_size=4, max_size=4).filter(lambda c: sum(c) > 0)
PROPERTY = settings(max_examples=25, deadline=None)


@PROPERTY
@given(measure=st.sampled_from(sorted(GROUPS)), size=st.integers(0, 60),
       theta=st.floats(0.01, 0.99), weights=cells, from_sample=st.booleans())
def test_power_is_a_probability_and_equals_enumeration(measure, size, theta, weights,
                                                       from_sample):
    interval = "jaccard-clopper-pearson" if measure == "f1" else "clopper-pearson"
    if from_sample:
        found = certification_power(measure, size, theta, confusion=weights, interval=interval)
        expected = srs_reference(measure, size, theta, interval, confusion=weights)
    else:
        truth = [w / sum(weights) for w in weights]
        found = certification_power(measure, size, theta, truth=truth, interval=interval)
        expected = srs_reference(measure, size, theta, interval, truth=truth)
    assert 0.0 <= found <= 1.0
    assert found == pytest.approx(expected, abs=TOL, rel=0)


@PROPERTY
@given(theta=st.floats(0.01, 0.79), gap=st.floats(0.2, 1.0), split=st.floats(0.0, 1.0))
def test_power_tends_to_one_far_above_the_target(theta, gap, split):
    # Accuracy p >= theta + 0.2, 1000 documents, 95% Clopper-Pearson. The bound is within
    # sqrt(log(20) / 2000) = 0.0387 of the observed share (Hoeffding: the bound L solves
    # P_L(X >= x) = 0.05 <= exp(-2000 (x / 1000 - L)^2)), so the test fails only if the share
    # falls 0.16 below p: probability at most exp(-2000 x 0.16^2) < 1e-22.
    p = min(theta + gap, 1.0)
    truth = (p * split, (1 - p) * split, (1 - p) * (1 - split), p * (1 - split))
    assert certification_power("accuracy", 1000, theta, truth=truth) >= 1 - 1e-12


@PROPERTY
@given(measure=st.sampled_from(sorted(GROUPS)), size=st.integers(1, 200),
       thetas=st.lists(st.floats(0.01, 0.99), min_size=2, max_size=2), weights=cells)
def test_power_falls_as_the_target_rises(measure, size, thetas, weights):
    # a higher target (lower for elusion) passes fewer test sets of every kind
    low, high = sorted(thetas)
    easier, harder = (high, low) if measure == "elusion" else (low, high)
    interval = "jaccard-clopper-pearson" if measure == "f1" else "clopper-pearson"
    # (equal thresholds reached along different Polya paths may differ by a rounding)
    passes_easier = certification_power(measure, size, easier, confusion=weights,
                                        interval=interval)
    passes_harder = certification_power(measure, size, harder, confusion=weights,
                                        interval=interval)
    assert passes_easier >= passes_harder - TOL


@PROPERTY
@given(size=st.integers(1, 200), theta=st.floats(0.05, 0.95), weights=cells)
def test_assurance_lies_between_the_powers_at_the_posterior_quantiles(size, theta, weights):
    # Accuracy's power at a known population is increasing in its accuracy p (a binomial tail
    # at a fixed threshold), and the assurance is its mean over p ~ Beta(tp + tn + 1, fp + fn
    # + 1). With q_e, q_(1-e) the posterior's quantiles: (1 - e) f(q_e) <= assurance <=
    # (1 - e) f(q_(1-e)) + e.
    eps = 0.05
    tp, fp, fn, tn = weights
    posterior = stats.beta(tp + tn + 1, fp + fn + 1)

    def at(p):
        return certification_power("accuracy", size, theta, truth=(p, 1 - p, 0.0, 0.0))

    assurance = certification_power("accuracy", size, theta, confusion=weights)
    assert (1 - eps) * at(posterior.ppf(eps)) - TOL <= assurance
    assert assurance <= (1 - eps) * at(posterior.ppf(1 - eps)) + eps + TOL


def test_method_chooses_the_simulated_path_or_refuses_a_path_that_does_not_exist():
    simulated = certification_sample_size((60, 20, 25, 395), 0.6, posterior="dirichlet",
                                          interval="delta", method="monte-carlo", rng=1)
    exact = certification_sample_size((60, 20, 25, 395), 0.6, posterior="dirichlet",
                                      interval="delta")
    assert (simulated.method, exact.method) == ("monte-carlo", "exact")
    assert simulated.draws == 1000 and exact.draws == 0
    with pytest.raises(ValueError, match="`method` must not be 'exact'"):
        certification_sample_size((60, 20, 25, 395), 0.6, method="exact")
    with pytest.raises(ValueError, match="`method` must be 'monte-carlo' only for F1"):
        certification_sample_size((60, 20, 25, 395), 0.6, measure="recall",
                                  method="monte-carlo")
