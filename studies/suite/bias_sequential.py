"""Sequential testing bias: stopping training when a reused test set first shows F1 >= theta.

Aims
    Measure how optimistic the F1 reported at stopping is when a sequence of classifiers of
    rising true F1 is tested on one reused test set and training stops the first time the
    estimate reaches ``theta`` (Bagdouri et al. 2013, sections 1-3; the certification
    failures of section 6, Figures 4 and 6, whose cause they name as this bias); how often the
    true F1 is then below ``theta``; and the coverage of the 95% lower one-sided confidence
    interval (LOSCI) at stopping. Compare with the paper's remedy (section 3): a fresh
    certification test set of a size fixed in advance, used once, which must show no bias.
Data-generating mechanisms
    Classifier ``k = 1..K`` (``K = 30``) has true F1 ``F_k = F_inf - (F_inf - F_1)
    exp(-(k - 1) / 8)``, ``F_1 = 0.5``, ``F_inf = 0.8`` (a learning curve), with precision =
    recall = ``F_k``: it finds a relevant document with probability ``F_k`` and flags a
    nonrelevant one with probability ``s_k = pi (1 - F_k) / (1 - pi)``, so population F1 is
    ``F_k``. The reused test set has ``n`` documents, each relevant with probability ``pi``.
    The classifiers' errors on it are correlated through a latent per-document score: document
    ``i`` is flagged by classifier ``k`` when ``Phi(rho z_i + sqrt(1 - rho^2) e_ik)`` is below
    its rate (``z_i``, ``e_ik`` independent standard normals), so each classifier has the
    stated rates and ``rho`` sets how much of a document's difficulty is shared along the
    sequence (``rho = 0``: independent draws per classifier, the simpler approximation;
    ``rho = 0.9``: mostly the same documents are missed). If no estimate reaches ``theta``,
    training ends at ``K``. The certification set has ``n_cert`` documents, drawn afresh.
    With ``rho = 0`` the flags are independent, so each classifier's counts are drawn as
    binomials given the number of relevant documents (the same law); with ``rho > 0`` the
    scores are drawn document by document, for the replicates still training.
    Quick grid: ``n`` 200, 500 x ``pi`` 0.2, 0.3 x ``rho`` 0, 0.9, ``theta = 0.75``,
    ``n_cert = 1000`` (8 cells, 5,000 replicates). Full grid: ``n`` 100-1,000 x ``pi``
    0.05-0.5 x ``rho`` 0, 0.5, 0.9 x ``theta`` 0.7, 0.75 (96 cells, 10,000 replicates).
Estimands
    The error of the reported F1 about the true F1 ``F_tau`` of the stopped classifier ``tau``,
    whose target is 0: ``tau`` is random, so each method returns ``estimate - F_tau`` and its
    LOSCI shifted by ``-F_tau`` (the engine takes one true value per cell).
Methods
    ``reused-test-set``: the estimate on the reused test set at stopping and its 95% LOSCI
    (``f1_ci``, delta method, ``alternative="greater"``). ``fresh-certification-set``: the same
    stopping rule; classifier ``tau`` is then tested once on the fresh certification set.
    ``rejection`` is the rate of a false claim that F1 >= ``theta``: for the reused set the
    claim is the stop itself (``F_tau < theta``); for the certification set it is a passed
    certification (LOSCI lower bound >= ``theta``) with ``F_tau < theta``.
Performance measures
    Bias (the optimism), empirical SE, MSE, coverage of the LOSCI, its mean width (``1 -``
    lower bound) and the false-claim rate, with MCSE (Morris et al. 2019, Table 6).

References
----------
Bagdouri, M., Webber, W., Lewis, D. D. & Oard, D. W. (2013). Towards minimizing the annotation
cost of certified text classification. *CIKM* (seed 000), sections 1-3 and 6, Figures 4, 6.
Morris, White & Crowther (2019), *Statistics in Medicine* 38, 2074-2102.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

from estimators import f1_ci
from studies.engine import StudyResult
from studies.engine.claims import Claim
from studies.engine.design import Figure, Grid, Params, Sample, Study
from studies.engine.findings import extreme
from studies.engine.performance import Estimates

__all__ = ["STUDY", "true_f1"]

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

N_CLASSIFIERS = 30
F1_FIRST, F1_LIMIT, CURVE_SCALE = 0.5, 0.8, 8.0
LEVEL = 0.95


def true_f1() -> Array:
    """``F_k``, the true F1 of classifiers ``1..K`` along the learning curve."""
    k = np.arange(N_CLASSIFIERS)
    curve: Array = F1_LIMIT - (F1_LIMIT - F1_FIRST) * np.exp(-k / CURVE_SCALE)
    return curve


def truth(params: Params) -> float:
    """0: every method reports its error about the stopped classifier's true F1."""
    return 0.0


def _rates(f1: Array, prevalence: float) -> tuple[Array, Array]:
    """Recall and false-positive rate giving precision = recall = ``f1``."""
    return f1, prevalence * (1.0 - f1) / (1.0 - prevalence)


def _independent_counts(rng: np.random.Generator, params: Params, n_replicates: int
                        ) -> IntArray:
    """Counts ``(tp, fp, fn, tn)`` of every classifier when ``rho = 0``, (R, K, 4).

    The documents' flags are then independent across documents and classifiers, so each
    classifier's counts are binomial given the number of relevant documents: ``tp_k ~
    Bin(n_rel, F_k)``, ``fp_k ~ Bin(n - n_rel, s_k)``.
    """
    n, pi = int(params["n"]), float(params["prevalence"])
    recall, false_rate = _rates(true_f1(), pi)
    n_rel = rng.binomial(n, pi, size=(n_replicates, 1))
    tp = rng.binomial(n_rel, recall, size=(n_replicates, N_CLASSIFIERS))
    fp = rng.binomial(n - n_rel, false_rate, size=(n_replicates, N_CLASSIFIERS))
    return np.stack([tp, fp, n_rel - tp, n - n_rel - fp], axis=2)


def _stop(rng: np.random.Generator, params: Params, n_replicates: int
          ) -> tuple[IntArray, IntArray]:
    """The stopped classifier of each replicate and its counts on the reused test set.

    Classifiers are tested in turn (Bagdouri et al. 2013, section 3); a replicate leaves the
    sequence once its estimate reaches ``theta``, so the documents' scores are drawn only for
    the replicates still training. A document is flagged when ``Phi(rho z + sqrt(1 - rho^2)
    e) < rate``, that is when ``rho z + sqrt(1 - rho^2) e < Phi^-1(rate)``.
    """
    n, pi, rho = int(params["n"]), float(params["prevalence"]), float(params["rho"])
    theta = float(params["theta"])
    if rho == 0.0:
        counts = _independent_counts(rng, params, n_replicates)
        stopped = stopping_index(_f1(counts), theta)
        return stopped, counts[np.arange(n_replicates), stopped]
    recall, false_rate = _rates(true_f1(), pi)
    above_relevant, above_other = special.ndtri(recall), special.ndtri(false_rate)
    relevant = rng.random((n_replicates, n)) < pi
    shared = rho * rng.standard_normal((n_replicates, n))
    n_rel = np.count_nonzero(relevant, axis=1)
    active = np.arange(n_replicates)  # the replicates still training
    stopped = np.full(n_replicates, N_CLASSIFIERS - 1)
    at_stop = np.empty((n_replicates, 4), dtype=np.int64)
    for k in range(N_CLASSIFIERS):  # a loop over classifiers; documents and replicates are arrays
        if not active.size:
            break
        score = shared + math.sqrt(1.0 - rho * rho) * rng.standard_normal(shared.shape)
        flagged = score < np.where(relevant, above_relevant[k], above_other[k])
        tp = np.count_nonzero(flagged & relevant, axis=1)
        fp = np.count_nonzero(flagged, axis=1) - tp
        counts = np.stack([tp, fp, n_rel - tp, n - n_rel - fp], axis=1)
        done = _f1(counts) >= theta if k < N_CLASSIFIERS - 1 else np.ones(tp.size, np.bool_)
        stopped[active[done]] = k
        at_stop[active[done]] = counts[done]
        going = ~done
        active, shared, relevant, n_rel = (a[going] for a in (active, shared, relevant, n_rel))
    return stopped, at_stop


def _fresh_counts(rng: np.random.Generator, params: Params, stopped: IntArray) -> IntArray:
    """Counts of each replicate's stopped classifier on a fresh certification set, (R, 4)."""
    n, pi = int(params["n_cert"]), float(params["prevalence"])
    recall, false_rate = _rates(true_f1()[stopped], pi)
    n_rel = rng.binomial(n, pi, size=stopped.size)
    tp = rng.binomial(n_rel, recall)
    fp = rng.binomial(n - n_rel, false_rate)
    return np.stack([tp, fp, n_rel - tp, n - n_rel - fp], axis=1)


def stopping_index(estimates: Array, theta: float) -> IntArray:
    """First classifier whose estimate reaches ``theta`` (the last one if none does)."""
    reached = estimates >= theta
    first: IntArray = np.where(reached.any(axis=1), reached.argmax(axis=1), N_CLASSIFIERS - 1)
    return first


def _f1(counts: IntArray) -> Array:
    """Plug-in F1 (0 when undefined: no relevant document found or flagged)."""
    tp = counts[..., 0].astype(np.float64)
    denominator = 2.0 * tp + counts[..., 1] + counts[..., 2]
    return np.divide(2.0 * tp, denominator, out=np.zeros_like(tp), where=denominator > 0)


def generate(params: Params, n_replicates: int, *, rng: Any = None) -> Sample:
    """Per replicate: the stopped classifier, its reused-set and fresh-set counts."""
    gen = np.random.default_rng(rng)
    stopped, reused = _stop(gen, params, n_replicates)
    return Sample(data=(stopped, reused, _fresh_counts(gen, params, stopped)),
                  size=n_replicates)


def _report(counts: IntArray, stopped: IntArray, params: Params, claim: Any) -> Estimates:
    """Error and shifted LOSCI about the stopped classifier's true F1; false-claim flags."""
    true = true_f1()[stopped]
    low = np.asarray(f1_ci(*counts.T, method="delta", confidence_level=LEVEL,
                           alternative="greater").low)
    low = np.nan_to_num(low, nan=0.0)  # undefined F1 claims nothing: the bound is 0
    below = true < float(params["theta"])
    return Estimates(estimate=_f1(counts) - true, low=low - true, high=1.0 - true,
                     reject=below & claim(low))


def _reused(data: tuple[IntArray, IntArray, IntArray], params: Params) -> Estimates:
    stopped, reused, _ = data
    return _report(reused, stopped, params, lambda low: np.ones(low.shape, dtype=np.bool_))


def _fresh(data: tuple[IntArray, IntArray, IntArray], params: Params) -> Estimates:
    stopped, _, fresh = data
    theta = float(params["theta"])
    return _report(fresh, stopped, params, lambda low: low >= theta)


CLAIMS = (
    Claim("reused-test-set-not-pessimistic",
          "Stopping when a reused test set first shows F1 >= theta never underestimates F1 on "
          "average (Bagdouri et al. 2013, section 3: sequential testing bias).",
          ("reused-test-set",), "bias", "at_least", target=0.0, resolution=0.01),
    Claim("reused-test-set-losci-undercovers",
          "The LOSCI computed on the reused test set covers at least 1 point below nominal.",
          ("reused-test-set",), "coverage", "at_most", target=0.95, margin=-0.01),
    Claim("fresh-set-not-optimistic",
          "A fresh certification set is not optimistic: its bias is at most 0.",
          ("fresh-certification-set",), "bias", "at_most", target=0.0, resolution=0.01,
          pins=("validity",)),
    Claim("fresh-set-losci-near-nominal",
          "Where the certification set holds 200 or more relevant documents on average "
          "(prevalence >= 0.2), its 95% LOSCI covers within 1.5 points of nominal on average "
          "over n and rho: the delta LOSCI is neither anti-conservative nor computed at "
          "another level (a 97.5% bound would cover about 97%).",
          ("fresh-certification-set",), "coverage", "within", target=0.95, margin=0.015,
          where="prevalence >= 0.2", mean_over=("n", "rho"), pins=("validity", "efficiency")),
)

_ONE_TOPIC = "prevalence == 0.2 and theta == 0.75"

FIGURES = (
    Figure("measure_by",
           "The bias of the F1 reported at stopping, on the reused test set and on a fresh "
           "certification set, against the test size n, one panel per correlation rho of "
           "the classifiers' errors, beside the dashed zero line.",
           where=_ONE_TOPIC,
           options={"measure": "bias", "x": "n", "panel_by": "rho", "reference": 0.0,
                    "log_x": True}),
    Figure("measure_by",
           "The coverage of the 95% LOSCI computed at stopping on the reused test set and on "
           "a fresh certification set, against n, one panel per rho, beside the dashed 95% "
           "line.",
           where=_ONE_TOPIC,
           options={"measure": "coverage", "x": "n", "panel_by": "rho", "reference": 0.95,
                    "log_x": True}),
    Figure("measure_by",
           "False claims (the rejection measure): the share of replicates in which a "
           "procedure claims F1 >= 0.75 for a classifier whose true F1 is below it, against "
           "n, one panel per rho.",
           where=_ONE_TOPIC,
           options={"measure": "rejection", "x": "n", "panel_by": "rho", "log_x": True,
                    "title": "bias_sequential: share of false claims that F1 ≥ theta "
                             "against n, a panel per rho (cells with prevalence = 0.2 and "
                             "theta = 0.75)"}),
)

def findings(result: StudyResult, summary: Sequence[Mapping[str, Any]]) -> list[str]:
    """The reused test set's worst bias, coverage and false claims against the fresh set's."""
    reused, fresh = "reused-test-set", "fresh-certification-set"
    return [
        f"Largest bias of the F1 reported on the reused test set: "
        f"{extreme(result, reused, 'bias', largest=True)}; on a fresh certification set, "
        f"largest in magnitude: {extreme(result, fresh, 'bias', magnitude=True, largest=True)}.",
        f"Lowest coverage of the 95% LOSCI at stopping: on the reused test set "
        f"{extreme(result, reused, 'coverage')}, on the fresh set "
        f"{extreme(result, fresh, 'coverage')}.",
        f"Largest share of false claims that F1 >= theta: on the reused test set "
        f"{extreme(result, reused, 'rejection', largest=True)}, on the fresh set "
        f"{extreme(result, fresh, 'rejection', largest=True)}.",
    ]


STUDY = Study(
    name="bias_sequential",
    ademp=__doc__,
    version="1",
    grids={
        "quick": Grid({"n": [200, 500], "prevalence": [0.2, 0.3], "rho": [0.0, 0.9],
                       "theta": [0.75], "n_cert": [1000]}, n_replicates=5_000, task_seconds=1.5),
        # n and replicates bounded by memory: each classifier draws an (R, n) array, so a
        # claim that needs more gets them in a second round (another R at most per task)
        "full": Grid({"n": [100, 200, 500, 1000], "prevalence": [0.05, 0.1, 0.2, 0.5],
                      "rho": [0.0, 0.5, 0.9], "theta": [0.7, 0.75], "n_cert": [1000]},
                     n_replicates=10_000, task_seconds=1.2, rounds=2),
    },
    truth=truth,
    generate=generate,
    methods={"reused-test-set": _reused, "fresh-certification-set": _fresh},
    measures=("bias", "empirical_se", "mse", "coverage", "width", "rejection"),
    claims=CLAIMS,
    estimator_methods={"fresh-certification-set": "f1_ci:delta", "reused-test-set": "f1_ci:delta"},
    figures=FIGURES,
    findings=findings,
)
