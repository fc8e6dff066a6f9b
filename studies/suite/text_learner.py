"""Real-learner training runs: a linear classifier trained and cross-validated on generated text.

A real-learner alternative to `studies.suite.stopping_policies.simulate_runs`: instead of a
learning-curve formula, each run trains a scikit-learn linear classifier on a growing, nested
training set drawn from a generated text-like corpus, cross-validates it, and measures it on a
large held-out population from the same corpus (Bagdouri et al. 2013, sections 4.4, 5.1-5.2).

The corpus (`make_corpus`)
    A vocabulary of ``V`` words (default 2,000) with a Zipf background distribution (word ``w``
    has probability proportional to ``1 / (w + 1)``; word 0 the commonest). A topic is a random
    ``TOPIC_SHARE = 10%`` of the vocabulary (drawn uniformly over the frequency ranks, so it
    holds common and rare words) with Zipf weights of its own in a random order. Each document
    is positive with probability ``prevalence`` (Bernoulli). A document has a Poisson number of
    tokens, its mean chosen so that a background document holds ``DISTINCT_WORDS = 77.5``
    distinct words on average (the nonzero features of an RCV1-v2 document, section 5.1); each
    token of a positive document is drawn from the topic with probability ``min(1, signal G)``,
    ``G ~ Gamma(HETEROGENEITY = 2, 1/2)`` per document (mean 1), and from the background
    otherwise; negative documents draw every token from the background. The spread of ``G``
    gives weakly topical positives that no classifier separates from chance occurrences of
    topic words in negatives, so the attainable F1 stays below 1, and the random topic
    vocabulary makes every topic a little easier or harder. ``signal`` (default ``SIGNAL =
    0.1``) sets the difficulty: the larger it is, the more of a positive document's tokens
    come from the topic and the higher the F1 the learner below attains, and the rarer the
    topic, the lower. Generation is vectorized over all tokens of the corpus.
Features
    TF x IDF as in section 5.1: ``TF = 1 + ln(count)`` for a word present in the document
    (0 otherwise), ``IDF = ln(N / df)`` over the ``N`` documents of the whole corpus (the paper
    computes IDF on the whole collection, 804,414 documents, test documents included); each row
    is then scaled to unit L2 norm (the paper does not say whether it normalises; unit rows are
    the usual choice for a linear SVM and keep the regularisation comparable across documents).
    A word present in every document has ``IDF = 0`` and is dropped from the row.
The learner (`learned_runs`)
    scikit-learn's ``LogisticRegression(solver="liblinear", C=1, class_weight="balanced")``,
    L2-regularised, with a fixed ``random_state`` drawn from ``rng``. The paper uses SVMperf
    optimising F1 (section 5.2), which trades precision for recall on rare topics; an
    unweighted linear model minimises error rate instead and, on rare topics with small
    training sets, predicts (nearly) every document negative, and weighting the positives by
    ``sqrt(n0 / n1)`` helps only part of the way. ``class_weight="balanced"`` (each class
    weighted by the inverse of its share) favours recall as an F1 optimiser does, at no extra
    training cost (an F1-optimal threshold would need an inner cross-validation at every fit).
    It targets balanced error, not F1, so with a weak signal on a rare topic the curve can dip
    slightly at the largest training sets, where ``sqrt`` weighting overtakes it. Larger ``C``
    (10, 100) did no better than ``C = 1``.

    When a training set (the whole one, or a cross-validation fold's) holds a single class, the
    classifier predicts that class (the majority class, the only one seen) for every document.
One run
    1. a corpus of ``max(steps) + population`` documents of one topic (IDF over all of them);
       the first ``max(steps)`` documents, in order, are the run's training stream, the rest
       the run's held-out "true population";
    2. at step ``j`` the classifier is trained on the first ``steps[j]`` documents of the
       stream (nested training sets) and applied to the population: ``true_cells[j]``, the
       proportions ``(tp, fp, fn, tn)``;
    3. the same ``steps[j]`` documents are split into ``folds`` folds (``StratifiedKFold`` with
       shuffling when each class has at least ``folds`` documents, else ``KFold`` with
       shuffling; a fresh shuffle at every step), every document is predicted once by the
       classifier trained on the other folds, and the predictions are pooled into one
       confusion matrix ``cv[j]`` of counts ``(tp, fp, fn, tn)`` (sections 2.2 and 4.4).

    The runs of one call share the topic (as the paper's runs of one RCV1-v2 topic share the
    collection) and differ in their documents, training streams and seeds; ``topic=`` fixes
    the topic across calls (a pilot run for ``theta`` and the runs it judges, say).
Speed
    A run fits ``len(steps) x (folds + 1)`` classifiers (440 for 40 steps and 10-fold
    cross-validation); the fits dominate its time, the corpus is generated once per run.

What the tests check
    With fixed seeds (`tests/studies/suite/test_text_learner.py`): the mean true F1 of the default
    learner rises by more than 0.05 from 200 to 3,200 training documents and rises less over the
    last quarter of those steps than over the first (a learning curve that levels off); and, as in
    Figure 3 of the paper, cross-validation understates F1 where the curve is steep: over 100 runs
    of 40 training documents, CV F1 minus true F1 is below 0 by more than 3.09 standard errors,
    while the same statistic does not fire for the true cells scaled to counts nor for a held-out
    sample of 40 from the population. Figure 3's largest understatement, about 0.08,
    pools the paper's 29 RCV1-v2 topics.

References
----------
Bagdouri, M., Webber, W., Lewis, D. D. & Oard, D. W. (2013). Towards minimizing the annotation
cost of certified text classification. *CIKM* (seed 000), sections 2.2 and 4.4
(cross-validation), 5.1 (RCV1-v2, TF x IDF features), 5.2 (SVMperf, Figure 3).
Lewis, D. D., Yang, Y., Rose, T. G. & Li, F. (2004). RCV1: a new benchmark collection for text
categorization research. *JMLR* 5, 361-397.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy import optimize

__all__ = ["DISTINCT_WORDS", "HETEROGENEITY", "MIN_VOCABULARY", "SIGNAL", "TOPIC_SHARE",
           "VOCABULARY", "C", "Corpus", "LearnedRuns", "learned_runs", "make_corpus"]

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

VOCABULARY = 2000
MIN_VOCABULARY = 200
DISTINCT_WORDS = 77.5
TOPIC_SHARE = 0.1
SIGNAL = 0.1
HETEROGENEITY = 2.0
C = 1.0
_SEED_LIMIT = 2**31 - 1  # liblinear's and KFold's random_state must fit a C int


# --- validation at the public boundary ----------------------------------------------------------

def _show(value: Any) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= 80 else text[:77] + "..."


def _integer(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer of at least {minimum}; got "
                        f"{_show(value)}.")
    if value < minimum:
        raise ValueError(f"`{name}` must be an integer of at least {minimum}; got "
                         f"{_show(value)}.")
    return int(value)


def _open_unit(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number strictly between 0 and 1; got "
                        f"{_show(value)}.")
    if not 0.0 < float(value) < 1.0:
        raise ValueError(f"`{name}` must be strictly between 0 and 1; got {_show(value)}.")
    return float(value)


def _generator(rng: Any, name: str = "rng") -> np.random.Generator:
    accepted = (np.random.SeedSequence, np.random.BitGenerator, np.random.Generator)
    whole = isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and int(rng) >= 0
    if rng is not None and not whole and not isinstance(rng, accepted):
        raise TypeError(f"`{name}` must be a numpy Generator, SeedSequence, BitGenerator, "
                        f"non-negative int or None; got {_show(rng)}.")
    return np.random.default_rng(rng)


def _steps(value: Any, folds: int) -> IntArray:
    shape = "a non-empty 1-D sequence of strictly increasing integers (training sizes)"
    try:
        array = np.asarray(value)
    except (ValueError, TypeError):
        raise ValueError(f"`steps` must be {shape}; got {_show(value)}.") from None
    if (array.ndim != 1 or array.size == 0 or array.dtype == np.bool_
            or not np.issubdtype(array.dtype, np.integer)):
        raise ValueError(f"`steps` must be {shape}; got {_show(value)}.")
    steps = array.astype(np.int64)
    if np.any(np.diff(steps) <= 0):
        raise ValueError(f"`steps` must be strictly increasing; got {_show(value)}.")
    if steps[0] < folds:
        raise ValueError(f"`steps` must start at `folds` = {folds} or more (every fold needs a "
                         f"document); got {_show(value)}.")
    return steps


# --- the corpus -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Corpus:
    """A generated text-like corpus: term counts, TF x IDF features and labels.

    Attributes
    ----------
    features : scipy.sparse.csr_matrix of float64, shape (n_documents, vocabulary)
        TF x IDF weights, ``(1 + ln(count)) ln(N / df)``, each row of unit L2 norm (a row is
        empty only for a document without a word of positive IDF).
    counts : scipy.sparse.csr_matrix of int64, shape (n_documents, vocabulary)
        How often each word occurs in each document.
    labels : ndarray of int64, shape (n_documents,)
        1 for a document of the topic, else 0.
    idf : ndarray of float64, shape (vocabulary,)
        ``ln(N / df)`` over the whole corpus (0 for a word that never occurs).
    topic_words : ndarray of int64
        The topic's words (indices into the vocabulary; 0 is the commonest word).
    topic_weights : ndarray of float64
        The topic's distribution over ``topic_words`` (sums to 1).
    prevalence, signal : float
        The parameters the corpus was generated with.
    """

    features: sp.csr_matrix
    counts: sp.csr_matrix
    labels: IntArray
    idf: Array
    topic_words: IntArray
    topic_weights: Array
    prevalence: float
    signal: float


def _background(vocabulary: int) -> tuple[Array, float]:
    """Zipf background probabilities and the Poisson token mean giving `DISTINCT_WORDS`."""
    weights = 1.0 / np.arange(1, vocabulary + 1, dtype=np.float64)
    weights /= weights.sum()

    def excess(mean: float) -> float:  # expected distinct words of a Poisson(mean) document
        return float(np.sum(-np.expm1(-mean * weights))) - DISTINCT_WORDS

    mean = optimize.brentq(excess, DISTINCT_WORDS, 1e8)
    weights.setflags(write=False)
    return weights, float(mean)


def _draw_topic(vocabulary: int, gen: np.random.Generator) -> tuple[IntArray, Array]:
    """A random `TOPIC_SHARE` of the vocabulary with Zipf weights in a random order."""
    size = max(1, round(TOPIC_SHARE * vocabulary))
    words = np.sort(gen.choice(vocabulary, size=size, replace=False)).astype(np.int64)
    weights = 1.0 / gen.permutation(np.arange(1, size + 1, dtype=np.float64))
    return words, weights / weights.sum()


def _inverse_cdf(probabilities: Array, u: Array) -> IntArray:
    """Categorical draws by inverting the cumulative distribution at uniforms ``u``."""
    cumulative = np.cumsum(probabilities)
    index: IntArray = np.minimum(np.searchsorted(cumulative, u * cumulative[-1], side="right"),
                                 probabilities.size - 1).astype(np.int64)
    return index


def _generate(n: int, prevalence: float, signal: float, vocabulary: int,
              topic: tuple[IntArray, Array], gen: np.random.Generator) -> Corpus:
    """The corpus of the module docstring (arguments trusted)."""
    background, mean_tokens = _background(vocabulary)
    topic_words, topic_weights = topic
    labels = (gen.random(n) < prevalence).astype(np.int64)
    lengths = gen.poisson(mean_tokens, size=n)
    share = np.where(labels == 1, np.minimum(
        1.0, signal * gen.gamma(HETEROGENEITY, 1.0 / HETEROGENEITY, size=n)), 0.0)
    document = np.repeat(np.arange(n, dtype=np.int64), lengths)
    topical = gen.random(document.size) < share[document]
    word = np.empty(document.size, dtype=np.int64)
    word[~topical] = _inverse_cdf(background, gen.random(int((~topical).sum())))
    word[topical] = topic_words[_inverse_cdf(topic_weights, gen.random(int(topical.sum())))]
    counts = sp.csr_matrix((np.ones(document.size, dtype=np.int64), (document, word)),
                           shape=(n, vocabulary))
    counts.sum_duplicates()  # canonical: sorted, one entry per (document, word)
    df = np.bincount(counts.indices, minlength=vocabulary)
    idf = np.zeros(vocabulary)
    present = df > 0
    idf[present] = np.log(n / df[present])
    features = counts.astype(np.float64)
    features.data = (1.0 + np.log(features.data)) * idf[features.indices]
    features.eliminate_zeros()  # words in every document (IDF 0)
    rows = np.repeat(np.arange(n), np.diff(features.indptr))
    norms = np.sqrt(np.bincount(rows, weights=features.data**2, minlength=n))
    features.data /= norms[rows]
    return Corpus(features=features, counts=counts, labels=labels, idf=idf,
                  topic_words=topic_words, topic_weights=topic_weights,
                  prevalence=prevalence, signal=signal)


def _topic(topic: Any, vocabulary: int, gen: np.random.Generator) -> tuple[IntArray, Array]:
    """The topic drawn from seed ``topic``, or from ``gen`` when ``topic`` is None."""
    if topic is None:
        return _draw_topic(vocabulary, gen)
    return _draw_topic(vocabulary, _generator(topic, "topic"))


def make_corpus(n_documents: int, prevalence: float, *, vocabulary: int = VOCABULARY,
                signal: float = SIGNAL, topic: Any = None, rng: Any = None) -> Corpus:
    """A generated corpus that looks like text to a linear classifier.

    Parameters
    ----------
    n_documents : int
        Number of documents, at least 1.
    prevalence : float
        Probability that a document belongs to the topic, strictly between 0 and 1.
    vocabulary : int, default 2000
        Number of distinct words, at least `MIN_VOCABULARY` (200).
    signal : float, default `SIGNAL` (0.1)
        Mean share of a positive document's tokens drawn from the topic, strictly between 0
        and 1; larger is easier.
    topic : int, SeedSequence or None, default None
        Seed of the topic (its words and their weights), so that several corpora share one
        topic; None draws the topic from ``rng``.
    rng : Generator, SeedSequence, int or None, optional
        Normalised with `numpy.random.default_rng`.

    Returns
    -------
    Corpus
        Term counts, TF x IDF features (rows of unit L2 norm), labels and the topic.

    Notes
    -----
    The generative model, the features and the calibration are in the module docstring. About
    77.5 distinct words per document (RCV1-v2's nonzero features); a few of them (the words
    present in every document, IDF 0) are not among the features.

    References
    ----------
    Bagdouri et al. (2013), section 5.1 (RCV1-v2; TF x IDF).

    Examples
    --------
    >>> corpus = make_corpus(2000, 0.25, rng=1)
    >>> corpus.features.shape
    (2000, 2000)
    >>> round(float(corpus.labels.mean()), 2)
    0.25
    >>> 70 < corpus.counts.nnz / 2000 < 85
    True
    >>> float(abs(corpus.features.multiply(corpus.features).sum(axis=1) - 1.0).max()) < 1e-12
    True
    """
    n = _integer(n_documents, "n_documents", 1)
    pi = _open_unit(prevalence, "prevalence")
    size = _integer(vocabulary, "vocabulary", MIN_VOCABULARY)
    strength = _open_unit(signal, "signal")
    gen = _generator(rng)
    return _generate(n, pi, strength, size, _topic(topic, size, gen), gen)


# --- learning -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LearnedRuns:
    """Training runs of one topic, step by step.

    Attributes
    ----------
    steps : ndarray of int64, shape (steps,)
        Training sizes; the step-``j`` training set is the first ``steps[j]`` documents of the
        run's training stream.
    true_cells : ndarray of float64, shape (runs, steps, 4)
        Proportions ``(tp, fp, fn, tn)`` of the classifier trained at each step on the run's
        held-out population (each row sums to 1).
    cv : ndarray of int64, shape (runs, steps, 4)
        The pooled cross-validation confusion matrix ``(tp, fp, fn, tn)`` at each step (each
        row sums to ``steps[j]``).
    train_labels : ndarray of int8, shape (runs, max(steps))
        Each run's training stream's labels, in order.
    prevalence, signal : float
        The corpus parameters.
    folds, population : int
        Cross-validation folds; held-out documents per run.
    """

    steps: IntArray
    true_cells: Array
    cv: IntArray
    train_labels: NDArray[np.int8]
    prevalence: float
    signal: float
    folds: int
    population: int

    @property
    def true_f1(self) -> Array:
        """True F1 of each run and step, ``2 tp / (2 tp + fp + fn)`` (nan when undefined)."""
        return _f1(self.true_cells)

    @property
    def cv_f1(self) -> Array:
        """Cross-validated F1 of each run and step (nan when undefined)."""
        return _f1(self.cv.astype(np.float64))


def _f1(cells: Array) -> Array:
    tp, fp, fn = cells[..., 0], cells[..., 1], cells[..., 2]
    denominator = 2.0 * tp + fp + fn
    f1: Array = np.divide(2.0 * tp, denominator, out=np.full(tp.shape, math.nan),
                          where=denominator > 0)
    return f1


def _cells(labels: IntArray, predicted: IntArray) -> IntArray:
    """Counts ``(tp, fp, fn, tn)`` of predictions against labels (both 0/1)."""
    index = 2 * (1 - predicted) + (1 - labels)
    counts: IntArray = np.bincount(index, minlength=4).astype(np.int64)
    return counts


def _fit_predict(X: sp.csr_matrix, y: IntArray, X_new: sp.csr_matrix, seed: int) -> IntArray:
    """Train on ``(X, y)`` and label ``X_new``; a single-class training set predicts its class."""
    if y.min() == y.max():
        return np.full(X_new.shape[0], y[0], dtype=np.int64)
    from sklearn.linear_model import LogisticRegression  # optional dependency: import on use

    model = LogisticRegression(solver="liblinear", C=C, class_weight="balanced",
                               random_state=seed)
    predicted: IntArray = model.fit(X, y).predict(X_new).astype(np.int64)
    return predicted


def _cross_validate(X: sp.csr_matrix, y: IntArray, folds: int, split_seed: int,
                    seed: int) -> IntArray:
    """Pooled ``folds``-fold cross-validation predictions: each document predicted once."""
    from sklearn.model_selection import KFold, StratifiedKFold

    stratify = int(np.bincount(y, minlength=2).min()) >= folds
    splitter = (StratifiedKFold(folds, shuffle=True, random_state=split_seed) if stratify
                else KFold(folds, shuffle=True, random_state=split_seed))
    predicted = np.empty_like(y)
    for train, test in splitter.split(np.zeros(y.size), y):
        predicted[test] = _fit_predict(X[train], y[train], X[test], seed)
    return predicted


def _run(steps: IntArray, prevalence: float, signal: float, vocabulary: int, folds: int,
         population: int, topic: tuple[IntArray, Array], gen: np.random.Generator
         ) -> tuple[Array, IntArray, NDArray[np.int8]]:
    """One run: its true cells (proportions) and CV counts at every step, and its labels."""
    stream = int(steps[-1])
    corpus = _generate(stream + population, prevalence, signal, vocabulary, topic, gen)
    X, y = corpus.features, corpus.labels
    X_train, y_train = X[:stream], y[:stream]
    X_population, y_population = X[stream:], y[stream:]
    model_seed = int(gen.integers(_SEED_LIMIT))
    split_seeds = gen.integers(_SEED_LIMIT, size=steps.size)
    true_cells = np.empty((steps.size, 4))
    cv = np.empty((steps.size, 4), dtype=np.int64)
    for j, r in enumerate(steps.tolist()):
        X_r, y_r = X_train[:r], y_train[:r]
        true_cells[j] = _cells(y_population, _fit_predict(X_r, y_r, X_population,
                                                          model_seed)) / population
        cv[j] = _cells(y_r, _cross_validate(X_r, y_r, folds, int(split_seeds[j]), model_seed))
    return true_cells, cv, y_train.astype(np.int8)


def learned_runs(prevalence: float, n_runs: int, *, steps: Sequence[int] | IntArray,
                 folds: int = 10, population: int = 20_000, signal: float = SIGNAL,
                 topic: Any = None, rng: Any = None) -> LearnedRuns:
    """``n_runs`` training runs of a real linear classifier on a generated text corpus.

    Parameters
    ----------
    prevalence : float
        The topic's prevalence, strictly between 0 and 1 (RCV1-v2's topics of section 5.1
        span 0.031-0.474).
    n_runs : int
        Number of runs, at least 1.
    steps : sequence of int
        Training sizes, strictly increasing, the first at least ``folds``; e.g.
        ``numpy.arange(250, 10_001, 250)``.
    folds : int, default 10
        Cross-validation folds, at least 2.
    population : int, default 20000
        Held-out documents per run on which the true confusion matrix is measured, at least 1.
    signal : float, default `SIGNAL` (0.1)
        The corpus difficulty (`make_corpus`), strictly between 0 and 1.
    topic : int, SeedSequence or None, default None
        Seed of the topic shared by the runs; None draws it from ``rng``.
    rng : Generator, SeedSequence, int or None, optional
        Normalised with `numpy.random.default_rng`; each run has its own child generator
        (`numpy.random.Generator.spawn`), which also seeds its classifier and its folds.

    Returns
    -------
    LearnedRuns
        ``steps``, ``true_cells`` (proportions on the population), ``cv`` (pooled CV counts),
        ``train_labels``; ``true_f1`` and ``cv_f1`` as properties.

    Notes
    -----
    One run is steps 1-3 of the module docstring: a corpus of ``max(steps) + population``
    documents (IDF over all of it), nested training sets (the first ``steps[j]`` documents of
    one stream), ``LogisticRegression(solver="liblinear", C=1, class_weight="balanced")`` and
    a single-class training set predicting its class. Needs scikit-learn. Cost: about 8 s
    per run for 40 steps up to 10,000 documents with 10 folds, on one core.

    References
    ----------
    Bagdouri et al. (2013), sections 4.4 and 5.2 (cross-validation, Figure 3).

    Examples
    --------
    Needs scikit-learn (the ``learner`` extra):

    >>> runs = learned_runs(0.3, 2, steps=[100, 200], population=2000, rng=7)
    >>> runs.cv.shape, runs.true_cells.shape
    ((2, 2, 4), (2, 2, 4))
    >>> runs.cv.sum(axis=-1).tolist()
    [[100, 200], [100, 200]]
    """
    pi = _open_unit(prevalence, "prevalence")
    n = _integer(n_runs, "n_runs", 1)
    k = _integer(folds, "folds", 2)
    sizes = _steps(steps, k)
    held_out = _integer(population, "population", 1)
    strength = _open_unit(signal, "signal")
    gen = _generator(rng)
    shared_topic = _topic(topic, VOCABULARY, gen)
    true_cells = np.empty((n, sizes.size, 4))
    cv = np.empty((n, sizes.size, 4), dtype=np.int64)
    labels = np.empty((n, int(sizes[-1])), dtype=np.int8)
    for i, child in enumerate(gen.spawn(n)):
        true_cells[i], cv[i], labels[i] = _run(sizes, pi, strength, VOCABULARY, k, held_out,
                                               shared_topic, child)
    return LearnedRuns(steps=sizes, true_cells=true_cells, cv=cv, train_labels=labels,
                       prevalence=pi, signal=strength, folds=k, population=held_out)
