"""Certification plans for every measure and design, beside the margin-of-error formula.

Prints five markdown tables (``python benchmarks/bench_certification.py``):

1. Planned sizes from one labelled sample (1,000 documents: tp 90, fp 10, fn 10, tn 890;
   prevalence and retrieved share 10%) for recall 0.7 and 0.8, precision 0.8, accuracy 0.9
   and F1 0.8: simple random sampling (exact, with the saw-tooth's stable size), the
   stratified allocation over a collection of 10,000 retrieved and 90,000 unretrieved
   documents, finite collections of 2,000, 20,000 and 200,000 documents, and the
   margin-of-error formula ``n = z^2 p (1 - p) / (p - theta)^2`` on the measure's trials
   (divided by their share of the documents), each with its exact power over the posterior
   and the wall time of planning.
2. Stratified against simple random plans for recall (target 0.7 of the classifier's
   recall) at prevalence 1%, 5%, 20% and retrieved shares 2%, 10%, 30%.
3. Finite collections against the infinite plan.
4. F1's exact plan against the paper's simulated Algorithm 2 over 10 seeds.
5. ``Conditional.curve``, the power at every size up to 2,000 and 20,000 for each outer law
   of the trials, against the straightforward whole urn it replaced (a new array over every
   count ``0..s`` each size), with the ratio of the two times and their largest difference.

Timings are of this machine; the sizes and powers are exact and do not depend on it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
from scipy import stats

from estimators import certification_power, certification_sample_size, proportion_ci
from estimators.assurance import Conditional, CountLaw

SAMPLE = (90, 10, 10, 890)
SEGMENTS = (10_000, 90_000)
Z = float(stats.norm.ppf(0.95))
GOAL = 0.93


def _timed(**kwargs: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    plan = certification_sample_size(SAMPLE if "confusion" not in kwargs else
                                      kwargs.pop("confusion"), kwargs.pop("target"), **kwargs)
    return plan, time.perf_counter() - start


def _margin_size(measure: str, target: float, counts: tuple[int, ...]) -> int | None:
    """The margin-of-error formula's test size: trials for the bound to sit on theta at the
    sample's estimate, over the trials' share of the documents."""
    tp, fp, fn, tn = counts
    n = tp + fp + fn + tn
    count, trials = {"recall": (tp, tp + fn), "precision": (tp, tp + fp),
                     "accuracy": (tp + tn, n), "f1": (tp, tp + fp + fn)}[measure]
    p = count / trials
    theta = target / (2 - target) if measure == "f1" else target  # F1 on Jaccard's scale
    if p <= theta:
        return None
    needed = Z**2 * p * (1 - p) / (p - theta) ** 2
    return math.ceil(needed / (trials / n))


def _shown(plan: Any) -> str:
    if plan.test_size is None:
        return "unreachable"
    if plan.retrieved_size is not None and plan.design == "stratified":
        return (f"{plan.test_size:,} ({plan.retrieved_size:,} + {plan.unretrieved_size:,}), "
                f"power {plan.achieved_power:.4f}")
    return f"{plan.test_size:,}, power {plan.achieved_power:.4f}"


def table_requests() -> None:
    print("| request | SRS exact (stable size) | stratified (n1 + n0) | finite N = 2,000 / "
          "20,000 / 200,000 | margin-of-error size (its power) | planning time |")
    print("|---|---|---|---|---|---|")
    requests = [("recall", 0.7), ("recall", 0.8), ("precision", 0.8), ("accuracy", 0.9),
                ("f1", 0.8)]
    for measure, target in requests:
        options = {"measure": measure, "target": target, "power": GOAL}
        if measure == "f1":
            options |= {"interval": "jaccard-clopper-pearson", "posterior": "dirichlet"}
        srs, t_srs = _timed(**options)
        cells = [f"{_shown(srs)} ({srs.stable_size:,})" if srs.stable_size else _shown(srs)]
        if measure == "accuracy":
            cells.append("-")
            t_strat = 0.0
        else:
            stratified, t_strat = _timed(**{
                **options, "design": "stratified", "segment_sizes": SEGMENTS,
                "posterior": None,
                "interval": "segments-clopper-pearson" if measure in ("recall", "f1")
                else None})
            cells.append(_shown(stratified))
        finite = []
        t_finite = 0.0
        for size in (2_000, 20_000, 200_000):
            segments = (size // 10, size - size // 10)
            if measure == "accuracy":
                plan, t = _timed(**options, interval="hypergeometric", population_size=size)
            elif measure == "precision":
                plan, t = _timed(**options, interval="hypergeometric", population_size=size,
                                 segment_sizes=segments)
            else:
                plan, t = _timed(measure=measure, target=target, power=GOAL,
                                 design="stratified", population_size=size,
                                 segment_sizes=segments)
            t_finite += t
            finite.append(f"{plan.test_size:,}" if plan.test_size else "unreachable")
        cells.append(" / ".join(finite) + (" (stratified)" if measure in ("recall", "f1")
                                           else ""))
        margin = _margin_size(measure, target, SAMPLE)
        if margin is None:
            cells.append("-")
        else:
            interval = "jaccard-clopper-pearson" if measure == "f1" else None
            chance = certification_power(measure, margin, target, confusion=SAMPLE,
                                         interval=interval)
            cells.append(f"{margin:,} ({chance:.3f})")
        cells.append(f"{t_srs:.2f} s / {t_strat:.2f} s / {t_finite:.2f} s")
        print(f"| {measure} >= {target} | " + " | ".join(cells) + " |")


def _sample_for(prevalence: float, share: float, r: int = 2000) -> tuple[int, int, int, int]:
    """A labelled sample of r documents from a classifier finding 80% of what it can."""
    hit = 0.8 * min(prevalence, share)
    cells = np.array([hit, share - hit, prevalence - hit, 1 - share - prevalence + hit])
    counts = np.round(cells * r).astype(int)
    counts[3] = r - counts[:3].sum()
    return tuple(int(c) for c in counts)  # type: ignore[return-value]


def table_design_effect() -> None:
    print("| prevalence | retrieved share | sample (tp, fp, fn, tn) | target recall | SRS "
          "labels | stratified labels (n1 + n0) | labels saved | time |")
    print("|---|---|---|---|---|---|---|---|")
    for prevalence in (0.01, 0.05, 0.2):
        for share in (0.02, 0.1, 0.3):
            counts = _sample_for(prevalence, share)
            recall = counts[0] / (counts[0] + counts[2])
            target = round(0.7 * recall, 3)
            segments = (round(share * 100_000), 100_000 - round(share * 100_000))
            start = time.perf_counter()
            plan = certification_sample_size(counts, target, measure="recall",
                                             design="stratified", segment_sizes=segments,
                                             power=GOAL)
            took = time.perf_counter() - start
            srs = plan.srs_test_size
            saved = (f"{srs - plan.test_size:,} ({(srs - plan.test_size) / srs:.0%})"
                     if srs and plan.test_size else "-")
            print(f"| {prevalence:.0%} | {share:.0%} | {counts} | {target} | "
                  f"{srs:,} | {_shown(plan)} | {saved} | {took:.1f} s |"
                  if srs else
                  f"| {prevalence:.0%} | {share:.0%} | {counts} | {target} | unreachable | "
                  f"{_shown(plan)} | - | {took:.1f} s |")


def table_monte_carlo() -> None:
    exact, t_exact = _timed(measure="f1", target=0.8, interval="jaccard-clopper-pearson",
                            posterior="dirichlet")
    print(f"F1 >= 0.8 from {SAMPLE}: exact (jaccard-clopper-pearson, Dirichlet) "
          f"{exact.test_size:,} in {t_exact:.2f} s, run to run spread 0")
    for interval in ("jaccard-clopper-pearson", "delta"):
        for posterior in ("dirichlet", "known-share"):
            if posterior == "dirichlet" and interval == "jaccard-clopper-pearson":
                continue  # exact
            sizes, took = [], 0.0
            for seed in range(10):
                if posterior == "dirichlet":
                    continue
                plan, t = _timed(measure="f1", target=0.8, interval=interval,
                                 posterior=posterior, rng=seed)
                sizes.append(plan.test_size)
                took += t
            if sizes:
                print(f"simulated Algorithm 2 ({interval}, {posterior}, 1,000 draws): mean "
                      f"{np.mean(sizes):,.0f}, sd {np.std(sizes, ddof=1):.1f} over 10 seeds "
                      f"(min {min(sizes):,}, max {max(sizes):,}), {took / 10:.2f} s a plan")
    delta, t_delta = _timed(measure="f1", target=0.8, interval="delta", posterior="dirichlet")
    print(f"exact delta plan over the Dirichlet posterior: {delta.test_size:,} in "
          f"{t_delta:.2f} s")


# the outer laws of the trials D: recall's relevant documents at a known population, over a
# posterior after a labelled sample of 200 (as in power_calibration_exact), in a collection
CURVE_LAWS = (CountLaw("binomial", 0.3), CountLaw("beta-binomial", 12.5, 190.5),
              CountLaw("hypergeometric", 50_000, 15_000))


def _curve_by_whole_urn(problem: Conditional, largest: int) -> np.ndarray:
    """`Conditional.curve` before the window: the law of ``D`` over every count ``0..s``,
    grown one urn step per size in new arrays (the straightforward reference)."""
    outer, tail = problem.outer, problem._tail
    assert outer is not None
    found = np.empty(largest + 1)
    weights = np.ones(1)
    found[0] = tail[0]
    for size in range(largest):
        x = np.arange(size + 1, dtype=np.float64)
        if outer.kind == "binomial":
            chance = np.full(size + 1, outer.first)
        elif outer.kind == "beta-binomial":
            chance = (outer.first + x) / (outer.first + outer.second + size)
        else:
            left = outer.first - size
            chance = (np.clip((outer.second - x) / left, 0.0, 1.0) if left > 0
                      else np.zeros(size + 1))
        grown = np.zeros(size + 2)
        grown[:-1] = weights * (1.0 - chance)
        grown[1:] += weights * chance
        weights = grown
        found[size + 1] = weights @ tail[:size + 2]
    return found


def _best_time(run: Callable[[], np.ndarray], repeats: int) -> tuple[np.ndarray, float]:
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        found = run()
        best = min(best, time.perf_counter() - start)
    return found, best


def table_curve() -> None:
    # the difference is mostly the whole urn's drift: its weights times 1 - c and c add up to
    # a little less than the weights (0.7 + 0.3 < 1 in floating point), 1e-12 in 20,000 steps
    print("| outer law of D | sizes | whole urn | windowed blocks | whole / windowed | "
          "largest difference |")
    print("|---|---|---|---|---|---|")
    for law in CURVE_LAWS:
        for largest in (2_000, 20_000):
            problem = Conditional(CountLaw("binomial", 0.85), lambda x, d: np.asarray(
                proportion_ci(x, d, method="clopper-pearson", alternative="greater").low > 0.8),
                law)
            problem.curve(largest)  # thresholds and survival, kept: left out of the timings
            repeats = 3 if largest <= 2_000 else 1
            new, t_new = _best_time(partial(problem.curve, largest), repeats)
            old, t_old = _best_time(partial(_curve_by_whole_urn, problem, largest), repeats)
            shown = (f"{law.first:g}" if law.kind == "binomial"
                     else f"{law.first:g}, {law.second:g}")
            print(f"| {law.kind} ({shown}) | 0..{largest:,} | {t_old * 1e3:,.1f} ms | "
                  f"{t_new * 1e3:,.1f} ms | {t_old / t_new:,.1f} | "
                  f"{np.abs(new - old).max():.1e} |")


if __name__ == "__main__":
    print("## Plans from", SAMPLE, "\n")
    table_requests()
    print("\n## Stratified against simple random recall plans (labelled sample of 2,000)\n")
    table_design_effect()
    print("\n## F1: exact against simulated\n")
    table_monte_carlo()
    print("\n## Power curves: windowed urn blocks against the whole urn\n")
    table_curve()
