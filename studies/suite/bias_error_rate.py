"""Bias and variance of error-rate estimators of a fitted classifier.

Aims
    Measure how far the error-rate estimators of seed 001 (apparent / resubstitution, holdout
    / train-and-test, k-fold cross-validation, leave-one-out, the e0 bootstrap) and Efron's
    (1983) .632 bootstrap are from the **true error of the classifier fitted on the whole
    sample**, by training size ``n`` and dimension ``d``: the apparent error's optimism (seed
    001, "Apparent vs. true error rate"), leave-one-out's near-unbiasedness and the e0
    bootstrap's pessimism that the .632 rule corrects (Efron 1983).
Data-generating mechanisms
    Separate (stratified) sampling of a training sample of ``n`` points: ``n1 = round(prior *
    n)`` points from class 1, ``X ~ N(+mu, I_d)``, and ``n0 = n - n1`` from class 0, ``X ~
    N(-mu, I_d)``, with ``mu = (delta / 2) e_1`` (Mahalanobis distance ``delta`` between the
    classes; Bayes error ``Phi(-delta / 2)`` at equal priors). Quick grid: ``n`` in 20, 50,
    200; ``d`` in 1, 10, 50; ``delta = 2``; ``prior = 0.5``; 2,000 replicates; ``B = 50``
    bootstrap resamples. Full grid: ``n`` in 20, 30, 50, 100, 200, 500; ``d`` in 1, 2, 5, 10,
    20, 50; ``delta`` in 1, 2, 3; ``prior = 0.5``; 2,000 replicates; ``B = 100``.
Estimands
    The true (conditional) error of the nearest-mean rule fitted on the replicate's sample,
    ``err_n`` (see `true_errors` for the closed form). It differs between replicates, so each
    method reports its **deviation** ``estimate - err_n`` per replicate and the cell's truth is
    0: ``bias`` is ``E[estimate - err_n]``, ``empirical_se`` the SD of the deviation and
    ``mse`` ``E[(estimate - err_n)^2]``, the measures of Efron (1983) and of
    Braga-Neto & Dougherty (2004). Two reference rows: ``loo_vs_n_minus_1`` is leave-one-out
    minus its own target ``T = (1/n) sum_i e_{y_i}(h_{-i})``, the mean class-conditional true
    error of the ``n`` leave-one-out rules (each for the class of the point it left out).
    ``E[LOO - T] = 0`` exactly, for every ``n`` and ``d``: point ``i`` is independent of
    ``h_{-i}``, so ``P(h_{-i} misclassifies x_i | h_{-i}) = e_{y_i}(h_{-i})``. That is the
    precise sense in which LOO is unbiased "for the expected error at size n - 1" under
    separate sampling. Against ``err_n`` itself leave-one-out is then biased upwards where
    ``n`` is small and ``d`` large: leaving a point out leaves its class one point short, which
    moves the nearest-mean threshold against that class (the separate-sampling effect of
    Braga-Neto, Zollanvari & Dougherty 2014; 10-fold CV, whose folds hold one point of each
    class at ``n = 20``, does not have it). ``true_error`` is ``err_n`` itself (its ``bias``
    row is ``E[err_n]``, its ``empirical_se`` the SD of ``err_n``): the scale to read the
    others against.
Methods
    The nearest-mean rule (Fisher's LDA with the identity as pooled covariance): ``w = m1 -
    m0``, threshold at the midpoint, i.e. class 1 iff ``||x - m1|| <= ||x - m0||``. Estimators:

    * ``apparent``: error on the training sample.
    * ``holdout``: fit on the first two thirds of each class, test on the last third
      (``n_c // 3`` points of class ``c``; the points are i.i.d., so a fixed split is a random
      one).
    * ``cv10``: stratified 10-fold cross-validation (point ``j`` of a class is in fold
      ``j mod 10``); fold means by sums and differences, no refit loop.
    * ``loo``: leave-one-out in closed form: removing ``x_i`` from its class ``c`` moves the
      class mean so that ``x_i - m_c^(-i) = n_c / (n_c - 1) (x_i - m_c)``.
    * ``e0``: Efron's e0, the pooled error over the points left out of ``B`` bootstrap
      resamples (stratified: ``n_c`` draws with replacement within each class, so no resample
      lacks a class), ``sum_b sum_i 1(i out of b) Q_bi / sum_b sum_i 1(i out of b)``
      (Efron 1983). Resample means are multinomial weight matrices times the data.
    * ``b632``: ``0.368 apparent + 0.632 e0`` (Efron 1983).

    ``B`` is 50 on the quick grid (100 on the full grid): enough for the bias of e0, whose
    bootstrap noise only adds ``O(1/B)`` variance; seed 001 suggests about 200. Bootstrap
    weights come from a seed drawn in `generate` (common to e0 and .632). A user method
    (``--method module:callable``) is ``estimator(X, y) -> estimates`` with ``X`` of shape
    (replicates, n, d), ``y`` the n labels (0/1, shared by the replicates), returning one error
    estimate per replicate.
Performance measures
    Bias, empirical SE and MSE of the deviation, each with its MCSE (Morris et al. 2019,
    Table 6).

Run time: the bootstrap dominates, ``O(R B n d)`` per cell, computed in blocks of replicates
that bound its arrays; a cell holds its ``R x n x d`` samples at once (400 MB at ``R = 2000,
n = 500, d = 50``).

References
----------
Efron, B. (1983). Estimating the error rate of a prediction rule: improvement on
cross-validation. *Journal of the American Statistical Association* 78, 316-331 (e0, .632;
its simulations compare them on two-class normal problems like these).
Seed 001: *Estimating the true performance of classification-based NLP technology* (ACL
workshop 1997), sections "Apparent vs. true error rate", "Train and test error rate
estimation", "Random resampling" (leaving-one-out, Lachenbruch & Mickey 1968), "Bootstrapping".
Braga-Neto, U. M., Zollanvari, A. & Dougherty, E. R. (2014). Cross-validation under separate
sampling: strong bias and how to correct it. *Bioinformatics* 30, 3349-3355.
Braga-Neto, U. M. & Dougherty, E. R. (2004). Is cross-validation valid for small-sample
microarray classification? *Bioinformatics* 20, 374-380 (deviation distribution).
Morris, White & Crowther (2019), *Statistics in Medicine* 38, 2074-2102 (ADEMP, MCSE).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import special

from studies.engine import StudyResult
from studies.engine.claims import Claim
from studies.engine.design import Figure, Grid, Method, Params, Sample, Study
from studies.engine.findings import extreme
from studies.engine.performance import Estimates

__all__ = [
    "STUDY",
    "TrainingSamples",
    "apparent",
    "bootstrap_e0",
    "cross_validation",
    "holdout",
    "leave_one_out",
    "loo_target",
    "true_errors",
]

Array = NDArray[np.float64]
FOLDS = 10
HOLDOUT_SHARE = 3  # one point in 3 of each class is held out
# keep each bootstrap chunk's (replicates x B x n) arrays near 32 MB
_BOOTSTRAP_CHUNK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class TrainingSamples:
    """One cell's training samples and what the methods need besides them.

    Attributes
    ----------
    X : numpy.ndarray, shape (R, n, d)
        One training sample per replicate.
    y : numpy.ndarray of int, shape (n,)
        Class labels (0/1), shared by the replicates (separate sampling).
    delta, prior : float
        Distance between the class means; probability of class 1.
    true_error : numpy.ndarray, shape (R,)
        ``err_n`` of the rule fitted on each sample.
    bootstrap_seed : int
        Seed of the bootstrap resamples (drawn from the cell's stream).
    resamples : int
        Bootstrap resamples ``B``.
    """

    X: Array
    y: NDArray[np.int64]
    delta: float
    prior: float
    true_error: Array
    bootstrap_seed: int
    resamples: int
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def _once(self, name: str, compute: Callable[[], Any]) -> Any:
        if name not in self._cache:
            self._cache[name] = compute()
        return self._cache[name]

    def geometry(self) -> _Geometry:
        """The inner products of the points and class means, computed once."""
        geometry: _Geometry = self._once("geometry", lambda: _geometry(self.X, self.y))
        return geometry

    def apparent(self) -> Array:
        """The apparent errors, computed once (``apparent`` and ``b632`` share them)."""
        errors: Array = self._once("apparent",
                                   lambda: _loo_errors(self.geometry(), leave_out=False))
        return errors

    def leave_one_out(self) -> Array:
        """The leave-one-out errors, computed once (``loo`` and ``loo_vs_n_minus_1``)."""
        errors: Array = self._once("loo", lambda: _loo_errors(self.geometry(), leave_out=True))
        return errors

    def e0(self) -> Array:
        """The e0 bootstrap estimates, computed once (``e0`` and ``b632`` share them)."""
        errors: Array = self._once("e0", lambda: bootstrap_e0(
            self.X, self.y, resamples=self.resamples, rng=self.bootstrap_seed))
        return errors


def _sqnorm(a: Array) -> Array:
    return np.einsum("...d,...d->...", a, a)


def _dot(points: Array, vectors: Array) -> Array:
    """``x_i . v`` for points (R, n, d) and one vector per replicate (R, d): shape (R, n)."""
    product: Array = np.matmul(points, vectors[:, :, None])[..., 0]
    return product


def _class_errors(m1sq: Array, m0sq: Array, m1m0: Array, m1mu: Array, m0mu: Array,
                  half_delta: float) -> tuple[Array, Array]:
    """Class-conditional true errors ``(e1, e0)`` of the nearest-mean rule of means m1, m0.

    The rule says class 1 iff ``s(x) = w.x + b >= 0`` with ``w = m1 - m0`` and ``b = -(||m1||^2
    - ||m0||^2) / 2``. For ``X ~ N(mu_c, I)``, ``s(X) ~ N(w.mu_c + b, ||w||^2)``, so ``e1 =
    P(s < 0 | class 1) = Phi(-(w.mu1 + b) / ||w||)`` and ``e0 = P(s >= 0 | class 0) =
    Phi((w.mu0 + b) / ||w||)``. Inputs are inner products (``m1mu = m1 . e_1``) so that they
    can be updated in closed form when a point is removed; ``mu1 = -mu0 = half_delta e_1``.
    """
    norm = np.sqrt(m1sq + m0sq - 2.0 * m1m0)
    w_mu1 = half_delta * (m1mu - m0mu)
    b = -(m1sq - m0sq) / 2.0
    return special.ndtr(-(w_mu1 + b) / norm), special.ndtr((-w_mu1 + b) / norm)


def _split(X: Array, y: NDArray[np.int64]) -> tuple[Array, Array]:
    """The points of class 0 and of class 1: views when class 0 comes first (`generate`)."""
    n0 = int(np.count_nonzero(y == 0))
    if (y[:n0] == 0).all():
        return X[:, :n0], X[:, n0:]
    return X[:, y == 0], X[:, y == 1]


class _Geometry(NamedTuple):
    """Inner products of one sample set: all the closed forms need (suffix: class, mean).

    ``sq0``, ``sq1``: ``||x||^2`` of each point of class 0, 1, shape (R, n_c); ``x00`` =
    ``x . m0`` for class-0 points, ``x01`` = ``x . m1``, ``x10``, ``x11`` likewise; ``m0``,
    ``m1``: class means (R, d); ``m00`` = ``||m0||^2``, ``m11``, ``m01`` = ``m0 . m1`` (R,).
    """

    sq0: Array
    sq1: Array
    x00: Array
    x01: Array
    x10: Array
    x11: Array
    m0: Array
    m1: Array
    m00: Array
    m11: Array
    m01: Array


def _geometry(X: Array, y: NDArray[np.int64]) -> _Geometry:
    """The `_Geometry` of samples ``X`` (R, n, d) with labels ``y``."""
    X0, X1 = _split(X, y)
    m0, m1 = X0.mean(axis=1), X1.mean(axis=1)
    return _Geometry(sq0=_sqnorm(X0), sq1=_sqnorm(X1), x00=_dot(X0, m0), x01=_dot(X0, m1),
                     x10=_dot(X1, m0), x11=_dot(X1, m1), m0=m0, m1=m1, m00=_sqnorm(m0),
                     m11=_sqnorm(m1), m01=np.einsum("rd,rd->r", m0, m1))


def true_errors(X: Array, y: NDArray[np.int64], delta: float, prior: float) -> Array:
    """True error of the nearest-mean rule fitted on each sample, in closed form.

    ``err = pi1 Phi(-(w.mu1 + b) / ||w||) + pi0 Phi((w.mu0 + b) / ||w||)``: see
    `_class_errors` for the derivation (``pi1 = prior``, ``pi0 = 1 - prior``).

    Parameters
    ----------
    X : numpy.ndarray, shape (R, n, d)
    y : numpy.ndarray, shape (n,)
    delta, prior : float
        Distance between the class means ``mu1 = -mu0 = (delta / 2) e_1``; P(class 1).

    Returns
    -------
    numpy.ndarray, shape (R,)
    """
    X0, X1 = _split(X, y)
    m0, m1 = X0.mean(axis=1), X1.mean(axis=1)
    e1, e0 = _class_errors(_sqnorm(m1), _sqnorm(m0), np.einsum("rd,rd->r", m1, m0), m1[:, 0],
                           m0[:, 0], delta / 2.0)
    errors: Array = prior * e1 + (1.0 - prior) * e0
    return errors


def _tie_aware_wrong(d0: Array, d1: Array, label: int) -> Array:
    """Misclassified points of class ``label`` from squared distances to m0 and m1.

    The rule says class 1 iff ``s = (d0 - d1) / 2 >= 0``: ties go to class 1.
    """
    return d1 > d0 if label == 1 else d0 >= d1


def _sqdist(points: Array, means: Array) -> Array:
    """Squared distances of points (R, n, d) to one mean per replicate (R, d)."""
    return _sqnorm(points) - 2.0 * _dot(points, means) + _sqnorm(means)[:, None]


def _loo_errors(g: _Geometry, *, leave_out: bool) -> Array:
    n0, n1 = g.sq0.shape[1], g.sq1.shape[1]
    # removing x_i from its class c scales its distance to m_c by n_c / (n_c - 1)
    s0 = (n0 / (n0 - 1)) ** 2 if leave_out else 1.0
    s1 = (n1 / (n1 - 1)) ** 2 if leave_out else 1.0
    m00, m11 = g.m00[:, None], g.m11[:, None]
    wrong0 = _tie_aware_wrong(s0 * (g.sq0 - 2.0 * g.x00 + m00), g.sq0 - 2.0 * g.x01 + m11, 0)
    wrong1 = _tie_aware_wrong(g.sq1 - 2.0 * g.x10 + m00, s1 * (g.sq1 - 2.0 * g.x11 + m11), 1)
    errors: Array = (np.count_nonzero(wrong0, axis=1) + np.count_nonzero(wrong1, axis=1)) / (
        n0 + n1)
    return errors


def apparent(X: Array, y: NDArray[np.int64]) -> Array:
    """Resubstitution error: the rule fitted on each sample, tested on the same sample."""
    return _loo_errors(_geometry(X, y), leave_out=False)


def leave_one_out(X: Array, y: NDArray[np.int64]) -> Array:
    """Leave-one-out error in closed form (no refit loop; see the module docstring)."""
    return _loo_errors(_geometry(X, y), leave_out=True)


def holdout(X: Array, y: NDArray[np.int64]) -> Array:
    """Train on the first two thirds of each class, test on the last ``n_c // 3`` points."""
    X0, X1 = _split(X, y)
    t0, t1 = X0.shape[1] // HOLDOUT_SHARE, X1.shape[1] // HOLDOUT_SHARE
    m0, m1 = X0[:, :-t0].mean(axis=1), X1[:, :-t1].mean(axis=1)
    test0, test1 = X0[:, -t0:], X1[:, -t1:]
    wrong0 = _tie_aware_wrong(_sqdist(test0, m0), _sqdist(test0, m1), 0)
    wrong1 = _tie_aware_wrong(_sqdist(test1, m0), _sqdist(test1, m1), 1)
    errors: Array = (wrong0.sum(axis=1) + wrong1.sum(axis=1)) / (t0 + t1)
    return errors


def _fold_means(Xc: Array, folds: int) -> tuple[Array, NDArray[np.int64]]:
    """Each fold's training mean of one class (R, folds, d), and each point's fold."""
    n_c = Xc.shape[1]
    fold = np.arange(n_c) % folds
    onehot = (fold[:, None] == np.arange(folds)[None, :]).astype(np.float64)
    fold_sums = np.matmul(onehot.T, Xc)
    counts = onehot.sum(axis=0)
    means = (Xc.sum(axis=1)[:, None, :] - fold_sums) / (n_c - counts)[None, :, None]
    return means, fold


def _sqdist_to_fold(points: Array, fold: NDArray[np.int64], means: Array) -> Array:
    """Squared distance of each point to the training mean of its own fold."""
    cross = np.matmul(points, means.transpose(0, 2, 1))
    own = np.take_along_axis(cross, np.broadcast_to(fold[None, :, None], (*cross.shape[:2], 1)),
                             axis=2)[..., 0]
    return _sqnorm(points) - 2.0 * own + _sqnorm(means)[:, fold]


def cross_validation(X: Array, y: NDArray[np.int64], folds: int = FOLDS) -> Array:
    """Stratified ``folds``-fold cross-validation: point ``j`` of a class is in fold j mod k."""
    X0, X1 = _split(X, y)
    means0, fold0 = _fold_means(X0, folds)
    means1, fold1 = _fold_means(X1, folds)
    wrong0 = _tie_aware_wrong(_sqdist_to_fold(X0, fold0, means0),
                              _sqdist_to_fold(X0, fold0, means1), 0)
    wrong1 = _tie_aware_wrong(_sqdist_to_fold(X1, fold1, means0),
                              _sqdist_to_fold(X1, fold1, means1), 1)
    errors: Array = (wrong0.sum(axis=1) + wrong1.sum(axis=1)) / y.size
    return errors


def _resample_counts(gen: np.random.Generator, size: int, rows: int) -> NDArray[np.int64]:
    """Times each of ``size`` points is drawn in a resample of ``size`` draws, (rows, size).

    Multinomial(``size``, uniform) counts, tallied from ``size`` uniform indices per row.
    """
    picks = gen.integers(0, size, size=(rows, size))
    picks += np.arange(rows)[:, None] * size  # each row tallies into its own bins
    return np.bincount(picks.ravel(), minlength=rows * size).reshape(rows, size)


def _bootstrap_chunk(X0: Array, X1: Array, resamples: int, gen: np.random.Generator
                     ) -> Array:
    """e0 of a block of replicates: stratified resample counts, pooled out-of-bag error.

    Each resample's rule says class 1 iff ``s(x) = x . (m1* - m0*) - (||m1*||^2 -
    ||m0*||^2) / 2 >= 0``, half the difference of the squared distances to the resample means.
    """
    r, n0, _ = X0.shape
    n1 = X1.shape[1]
    w0 = _resample_counts(gen, n0, r * resamples).reshape(r, resamples, n0)
    w1 = _resample_counts(gen, n1, r * resamples).reshape(r, resamples, n1)
    star0, star1 = w0 @ X0 / n0, w1 @ X1 / n1  # resample means, (r, B, d)
    normal = star1 - star0
    offset = ((_sqnorm(star1) - _sqnorm(star0)) / 2.0)[:, :, None]
    # the out-of-bag points' scores, (r, B, n_c); ties go to class 1 (`_tie_aware_wrong`)
    wrong0 = (normal @ X0.transpose(0, 2, 1) >= offset) & (w0 == 0)
    wrong1 = (normal @ X1.transpose(0, 2, 1) < offset) & (w1 == 0)
    out = np.count_nonzero(w0 == 0, axis=(1, 2)) + np.count_nonzero(w1 == 0, axis=(1, 2))
    pooled: Array = (np.count_nonzero(wrong0, axis=(1, 2))
                     + np.count_nonzero(wrong1, axis=(1, 2))) / out
    return pooled


def bootstrap_e0(X: Array, y: NDArray[np.int64], *, resamples: int, rng: Any = None) -> Array:
    """Efron's e0: pooled error on the points left out of ``resamples`` bootstrap resamples.

    Resampling is stratified (``n_c`` draws within each class). Replicates are processed in
    blocks that bound the ``(replicates, B, n)`` arrays, each block fully vectorized.

    References
    ----------
    Efron (1983), JASA 78:316-331.
    """
    gen = np.random.default_rng(rng)
    X0, X1 = _split(X, y)
    block = max(1, _BOOTSTRAP_CHUNK_ELEMENTS // (resamples * y.size))
    parts = [_bootstrap_chunk(X0[i:i + block], X1[i:i + block], resamples, gen)
             for i in range(0, X.shape[0], block)]
    return np.concatenate(parts)


def _without_point(sq: Array, own_dot: Array, other_dot: Array, own_mu: Array,
                   points_mu: Array, own_sq: Array, m1m0: Array
                   ) -> tuple[Array, Array, Array]:
    """``||m_c'||^2``, ``m_c' . m_other`` and ``m_c' . e_1`` after removing each point of class c.

    With ``a = 1 / (n_c - 1)``, ``m_c' = (1 + a) m_c - a x``; everything follows from ``x . m_c``
    (``own_dot``), ``x . m_other``, ``x . e_1`` (``points_mu``) and ``||x||^2`` (``sq``), with
    no (R, n, d) copy per left-out point.
    """
    a = 1.0 / (sq.shape[1] - 1)
    moved_sq = (1 + a) ** 2 * own_sq - 2 * a * (1 + a) * own_dot + a * a * sq
    cross = (1 + a) * m1m0 - a * other_dot
    mu = (1 + a) * own_mu - a * points_mu
    return moved_sq, cross, mu


def _loo_target(X: Array, y: NDArray[np.int64], g: _Geometry, delta: float) -> Array:
    X0, X1 = _split(X, y)
    m1m0 = g.m01[:, None]
    m0mu, m1mu = g.m0[:, :1], g.m1[:, :1]
    m00, m11 = g.m00[:, None], g.m11[:, None]
    half = delta / 2.0
    sq0, cross0, mu0 = _without_point(g.sq0, g.x00, g.x01, m0mu, X0[..., 0], m00, m1m0)
    _, e0 = _class_errors(m11, sq0, cross0, m1mu, mu0, half)
    sq1, cross1, mu1 = _without_point(g.sq1, g.x11, g.x10, m1mu, X1[..., 0], m11, m1m0)
    e1, _ = _class_errors(sq1, m00, cross1, mu1, m0mu, half)
    target: Array = (e0.sum(axis=1) + e1.sum(axis=1)) / y.size
    return target


def loo_target(X: Array, y: NDArray[np.int64], delta: float) -> Array:
    """``T = (1/n) sum_i e_{y_i}(h_{-i})``: the target LOO is exactly unbiased for.

    ``e_{y_i}(h_{-i})`` is the true error, on the class of ``x_i``, of the rule fitted without
    ``x_i`` (`_class_errors` with the means updated by `_without_point`).
    """
    return _loo_target(X, y, _geometry(X, y), delta)


def _class_sizes(params: Params) -> tuple[int, int]:
    n, prior = int(params["n"]), float(params["prior"])
    n1 = round(prior * n)
    if min(n1, n - n1) < HOLDOUT_SHARE:
        raise ValueError(f"each class needs at least {HOLDOUT_SHARE} points; got n = {n}, "
                         f"prior = {prior}.")
    return n - n1, n1


def truth(params: Params) -> float:
    """0: every method reports its deviation from the replicate's true error."""
    return 0.0


def generate(params: Params, n_replicates: int, *, rng: Any = None) -> Sample:
    """Separate sampling of ``n_replicates`` training samples, with their true errors."""
    gen = np.random.default_rng(rng)
    n0, n1 = _class_sizes(params)
    d, delta = int(params["d"]), float(params["delta"])
    X = gen.standard_normal((n_replicates, n0 + n1, d))
    X[:, :n0, 0] -= delta / 2.0
    X[:, n0:, 0] += delta / 2.0
    y = np.repeat(np.array([0, 1]), [n0, n1])
    data = TrainingSamples(
        X=X, y=y, delta=delta, prior=float(params["prior"]),
        true_error=true_errors(X, y, delta, float(params["prior"])),
        bootstrap_seed=int(gen.integers(2**63)), resamples=int(params["resamples"]))
    return Sample(data=data, size=n_replicates)


def _deviation(estimator: Callable[[Array, NDArray[np.int64]], Any], data: TrainingSamples,
               params: Params) -> Estimates:
    estimates = np.asarray(estimator(data.X, data.y), dtype=np.float64)
    return Estimates(estimate=estimates - data.true_error)


def wrap_method(estimator: Callable[[Array, NDArray[np.int64]], Any]) -> Method:
    """A `Method` from ``estimator(X, y) -> error estimates``, reported as deviations."""
    return functools.partial(_deviation, estimator)


def _apparent(data: TrainingSamples, params: Params) -> Estimates:
    return Estimates(estimate=data.apparent() - data.true_error)


def _loo(data: TrainingSamples, params: Params) -> Estimates:
    return Estimates(estimate=data.leave_one_out() - data.true_error)


def _e0(data: TrainingSamples, params: Params) -> Estimates:
    return Estimates(estimate=data.e0() - data.true_error)


def _b632(data: TrainingSamples, params: Params) -> Estimates:
    weight = 1.0 - math.exp(-1.0)  # .632: the chance a point is in a bootstrap resample
    rule = (1.0 - weight) * data.apparent() + weight * data.e0()
    return Estimates(estimate=rule - data.true_error)


def _loo_vs_n_minus_1(data: TrainingSamples, params: Params) -> Estimates:
    return Estimates(estimate=data.leave_one_out() - _loo_target(
        data.X, data.y, data.geometry(), data.delta))


def _true_error(data: TrainingSamples, params: Params) -> Estimates:
    return Estimates(estimate=data.true_error)


_QUICK = {"n": [20, 50, 200], "d": [1, 10, 50], "delta": [2.0], "prior": [0.5],
          "resamples": [50]}
_FULL = {"n": [20, 30, 50, 100, 200, 500], "d": [1, 2, 5, 10, 20, 50],
         "delta": [1.0, 2.0, 3.0], "prior": [0.5], "resamples": [100]}

# The bias an error-rate claim must detect: 2 points of error rate.
_RESOLUTION = 0.02
# Where the sample is small for its dimension: the apparent error's optimism and e0's
# pessimism grow with d / n as the rule overfits; at d = 1 and n in the hundreds they are
# within a few MCSE of 0 and the data do not show them.
_OVERFITS = "10 * d >= n"

CLAIMS = (
    Claim("apparent-error-optimistic",
          "Where the sample is small for its dimension (d >= n / 10), the apparent "
          "(resubstitution) error is optimistic: its bias is at most 0.",
          ("apparent",), "bias", "at_most", target=0.0, where=_OVERFITS,
          resolution=_RESOLUTION, effect=True),
    Claim("loo-unbiased-for-its-target",
          "Leave-one-out is unbiased for the average error of its n - 1 point rules.",
          ("loo_vs_n_minus_1",), "bias", "within", target=0.0, resolution=_RESOLUTION),
    Claim("loo-nearly-unbiased",
          "Leave-one-out is nearly unbiased for the error of the rule fitted to all n points: "
          "within 0.04.",
          ("loo",), "bias", "within", target=0.0, margin=0.04, resolution=_RESOLUTION),
    Claim("e0-pessimistic",
          "Where the sample is small for its dimension (d >= n / 10), the e0 bootstrap, "
          "trained on about 0.632 n distinct points, is pessimistic: its bias is at least 0.",
          ("e0",), "bias", "at_least", target=0.0, where=_OVERFITS, resolution=_RESOLUTION,
          effect=True),
)

FIGURES = (
    Figure("measure_by",
           "Bias of each error-rate estimator (its mean deviation from the true error of the "
           "rule fitted on the whole sample) against n, one panel per d, delta = 2; the dashed "
           "line is no bias, below it an estimator is optimistic.",
           where="delta == 2 and d in [1, 10, 50]",
           options={"measure": "bias", "x": "n", "panel_by": "d", "reference": 0.0,
                    "methods": ("apparent", "holdout", "cv10", "loo", "e0", "b632"),
                    "log_x": True}),
)


def _wide(result: StudyResult, measure: str) -> pd.DataFrame:
    """``measure`` of every method: one row per cell, one column per method."""
    frame = pd.concat(result.frames(measures=[measure]), ignore_index=True)
    return frame.pivot(index="position", columns="method", values="value")


def findings(result: StudyResult, summary: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each estimator's largest bias and where it lies, from the run."""
    largest_n = max(int(c.params["n"]) for c in result.expanded().cells)
    bias, spread = _wide(result, "bias"), _wide(result, "empirical_se")
    between = ((bias["apparent"] < bias["b632"]) & (bias["b632"] < bias["e0"])).sum()
    ratio = spread["holdout"] / spread["loo"]

    def most(method: str, **options: Any) -> str:
        return extreme(result, method, "bias", **options)

    return [
        f"The apparent error is most optimistic at {most('apparent')}; at the grid's largest "
        f"n: {most('apparent', where=f'n == {largest_n}')}.",
        f"Leave-one-out's largest bias against the true error err_n: "
        f"{most('loo', magnitude=True, largest=True)}; against its own target T: "
        f"{most('loo_vs_n_minus_1', magnitude=True, largest=True)}. 10-fold CV's largest: "
        f"{most('cv10', magnitude=True, largest=True)}.",
        f"e0 is most pessimistic at {most('e0', largest=True)}. The .632 rule lies between "
        f"the apparent error and e0 in {between} of {len(bias)} cells; it is most optimistic "
        f"at {most('b632')}.",
        f"Holdout, trained on 2n/3 points, is most pessimistic at "
        f"{most('holdout', largest=True)}; its SD is {ratio.min():.2f} to {ratio.max():.2f} "
        f"times leave-one-out's.",
    ]


STUDY = Study(
    name="bias_error_rate",
    ademp=__doc__,
    version="1",
    grids={"quick": Grid(_QUICK, n_replicates=2_000, task_seconds=1.5),
           "full": Grid(_FULL, n_replicates=2_000, task_seconds=1.3)},
    truth=truth,
    generate=generate,
    methods={
        "apparent": _apparent,
        "holdout": wrap_method(holdout),
        "cv10": wrap_method(cross_validation),
        "loo": _loo,
        "e0": _e0,
        "b632": _b632,
        "loo_vs_n_minus_1": _loo_vs_n_minus_1,
        "true_error": _true_error,
    },
    measures=("bias", "empirical_se", "mse"),
    wrap_method=wrap_method,
    claims=CLAIMS,
    figures=FIGURES,
    findings=findings,
)
