"""Confusion matrices for first-best classifiers.

A :class:`ConfusionMatrix` holds the K x K counts of (reference, response) pairs, rows being
the reference (truth) and columns the response (prediction), as in the LingPipe chapter
*Classifiers and Evaluation*. From it follow:

* counts: ``total``, ``reference_counts`` (row sums), ``response_counts`` (column sums),
  ``correct`` (the trace);
* proportions, as :class:`~estimators.proportion.ProportionEstimate` so that any
  :func:`~estimators.proportion.proportion_ci` method gives their interval: ``accuracy``,
  ``error_rate`` and, per class, ``precision``, ``recall``, ``specificity``, ``prevalence``;
* the F-beta measure, one-versus-all 2 x 2 views, micro and macro averages;
* chance-adjusted agreement: random accuracy and kappa (Cohen, Siegel-Castellan, Byrt);
* decision-theoretic summaries: misclassification cost, expected gain (risk matrix), TREC-5
  linear utility, and the probability threshold that maximises that utility
  (:func:`optimal_threshold`).

Policy shared by every measure: **undefined ratios are nan, never an exception or a
warning**. A ratio is undefined when its denominator is empty (precision of a class that was
never predicted, accuracy of an all-zero matrix, ...). Macro averages propagate nan.

References
----------
.. [LP] LingPipe book, chapter *Classifiers and Evaluation*: sections Confusion Matrices,
   Accuracy, Kappa Statistics, The ConfusionMatrix Class (seed 003).
.. [HW97] *Estimating the true performance of classification-based NLP technology* (ACL
   workshop, 1997), section Costs and Risks (seed 001).
.. [L96] Lewis, D. D. (1996). The TREC-5 Filtering Track, sections 4.4-4.5 (seed 004).
.. [VR79] van Rijsbergen, C. J. (1979). *Information Retrieval*, 2nd ed., chapter 7 (F).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, NamedTuple, Self

import numpy as np
from numpy.typing import ArrayLike, NDArray

from estimators import _validation as check
from estimators._numeric import ratio
from estimators.proportion import ProportionEstimate

__all__ = [
    "CLASS_MEASURES",
    "KAPPA_KINDS",
    "RANDOM_ACCURACY_KINDS",
    "ConfusionMatrix",
    "WeightedTotal",
    "optimal_threshold",
]

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

RANDOM_ACCURACY_KINDS: tuple[str, ...] = ("cohen", "siegel-castellan")
KAPPA_KINDS: tuple[str, ...] = (*RANDOM_ACCURACY_KINDS, "byrt")
CLASS_MEASURES: tuple[str, ...] = ("precision", "recall", "specificity", "f_measure")
_BINARY_LABELS: tuple[str, str] = ("positive", "negative")


class _Outcomes(NamedTuple):
    """One-versus-all counts of every class, arrays aligned with the labels."""

    tp: IntArray
    fp: IntArray
    fn: IntArray
    tn: IntArray


# (successes, trials) of each per-class proportion, from the one-versus-all counts.
_PROPORTIONS: dict[str, Callable[[_Outcomes], tuple[IntArray, IntArray]]] = {
    "precision": lambda o: (o.tp, o.tp + o.fp),
    "recall": lambda o: (o.tp, o.tp + o.fn),
    "specificity": lambda o: (o.tn, o.tn + o.fp),
    "prevalence": lambda o: (o.tp + o.fn, o.tp + o.fp + o.fn + o.tn),
}


def _f_beta(outcomes: _Outcomes, beta: float) -> Array:
    """``(1 + b^2) tp / ((1 + b^2) tp + b^2 fn + fp)`` per class; nan on a zero denominator.

    Computed as ``tp / (tp + w fn + (1 - w) fp)`` with ``w = b^2 / (1 + b^2)`` (numerator and
    denominator divided by ``1 + b^2``), which cannot overflow for a large ``beta``.
    """
    w = beta * beta / (1.0 + beta * beta) if beta <= 1.0 else 1.0 / (1.0 + beta**-2.0)
    tp = outcomes.tp.astype(np.float64)
    return ratio(tp, tp + w * outcomes.fn + (1.0 - w) * outcomes.fp)


def _beta(value: Any) -> float:
    beta = check.real_scalar(value, "beta")
    if beta < 0.0:
        raise ValueError(f"`beta` must be non-negative; got {check.show(value)}.")
    return beta


def _square_counts(counts: ArrayLike) -> IntArray:
    """Validate a K x K (K >= 2) matrix of counts; return a read-only int64 copy."""
    matrix = check.as_counts(counts, "counts")
    total = sum(int(c) for c in matrix.ravel())  # Python ints: the int64 sum could wrap
    if total > check.MAX_COUNT:
        raise ValueError(f"`counts` must sum to at most 2**53 = {check.MAX_COUNT} (the total "
                         f"is every proportion's number of trials); got {total}.")
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"`counts` must be a square K x K matrix; got shape {matrix.shape}.")
    if matrix.shape[0] < 2:
        raise ValueError(f"`counts` must have at least 2 classes; got shape {matrix.shape}.")
    matrix = matrix.copy()  # the caller's array must not alias our immutable state
    matrix.flags.writeable = False
    return matrix


def _labels(labels: Iterable[Hashable] | None, k: int) -> tuple[Hashable, ...]:
    """Validate ``k`` distinct hashable labels (``0 .. k-1`` when None)."""
    if labels is None:
        return tuple(range(k))
    # A string is iterable but is almost never meant as a sequence of one-letter labels.
    if isinstance(labels, str | bytes | Mapping | AbstractSet) or not check.iterable(labels):
        raise TypeError(f"`labels` must be a sequence of distinct hashables; "
                        f"got {check.show(labels)}.")
    result = tuple(labels)
    if len(result) != k:
        raise ValueError(f"`labels` must hold {k} labels, one per class; got {len(result)}.")
    seen: dict[Hashable, int] = {}
    for index, label in enumerate(result):
        try:
            first = seen.setdefault(label, index)
        except TypeError:
            raise TypeError(
                f"`labels` must hold hashable labels; got {check.show(label)} at index {index}."
            ) from None
        if first != index:
            raise ValueError(
                f"`labels` must be distinct; "
                f"got {check.show(label)} at indices {first} and {index}."
            )
    return result


def _single_count(value: Any, name: str) -> int:
    count = check.as_counts(value, name)
    if count.ndim:
        raise ValueError(f"`{name}` must be a single count; got shape {count.shape}.")
    return int(count)


@dataclass(frozen=True)
class WeightedTotal:
    """Counts weighted cell by cell by a cost or gain matrix.

    Attributes
    ----------
    total : float
        ``sum_ij E_ij W_ij`` over the confusion counts ``E`` and the weights ``W``.
    average : float
        ``total / N``, the cost or gain per decision; nan for an empty matrix.
    """

    total: float
    average: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "total", check.real_scalar(self.total, "total"))
        # nan: an empty matrix
        object.__setattr__(self, "average", check.real_or_nan(self.average, "average"))


@dataclass(frozen=True, init=False, eq=False)
class ConfusionMatrix:
    """Counts of (reference, response) category pairs of a first-best classifier.

    Parameters
    ----------
    counts : array_like of int, shape (K, K)
        ``counts[i, j]`` is the number of items whose reference (true) category is
        ``labels[i]`` and whose response (predicted) category is ``labels[j]``: rows are the
        reference, columns the response. Non-negative whole numbers, K >= 2. Stored as a
        read-only int64 copy.
    labels : sequence of hashable, optional
        K distinct category labels, in the order of the rows and columns; ``0 .. K-1`` by
        default.

    Raises
    ------
    TypeError
        If ``counts`` is not numeric or a label is not hashable.
    ValueError
        If ``counts`` is not square, has fewer than 2 classes, or holds a negative or
        fractional entry; if ``labels`` has the wrong length or a duplicate.

    Notes
    -----
    Undefined ratios are nan, never an exception or a warning: a proportion whose denominator
    is 0 has ``estimate`` nan and nan interval bounds; ``f_measure`` is nan when
    ``tp + fp + fn == 0``; kappa is nan when the random accuracy is 1 or the matrix is empty.
    Per-class methods take the class as ``label``; its default ``"positive"`` fits
    :meth:`binary` and the one-versus-all views, and any other matrix must name the class.

    The constructor is written out (not generated) so that it can accept array-like input
    while the attributes keep the validated types.

    References
    ----------
    LingPipe, Classifiers and Evaluation, sections Confusion Matrices (the wine example) and
    The ConfusionMatrix Class (immutable; one-versus-all views).

    Examples
    --------
    The blind wine-tasting example of the LingPipe chapter:

    >>> wine = ConfusionMatrix([[9, 3, 0], [3, 5, 1], [1, 1, 4]],
    ...                        labels=["cabernet", "syrah", "pinot"])
    >>> wine.total, wine.correct
    (27, 18)
    >>> wine.reference_counts, wine.response_counts
    (array([12,  9,  6]), array([13,  9,  5]))
    >>> round(wine.accuracy.estimate, 2)
    0.67
    >>> low, high = wine.accuracy.confidence_interval(0.95, method="wald")
    >>> round((high - low) / 2, 2)
    0.18
    >>> low, high = wine.accuracy.confidence_interval(0.99, method="wald")
    >>> round((high - low) / 2, 2)
    0.23
    >>> wine.precision("pinot").estimate, wine.recall("cabernet").estimate
    (0.8, 0.75)
    """

    counts: IntArray
    labels: tuple[Hashable, ...]

    def __init__(self, counts: ArrayLike, labels: Iterable[Hashable] | None = None) -> None:
        matrix = _square_counts(counts)
        object.__setattr__(self, "counts", matrix)
        object.__setattr__(self, "labels", _labels(labels, matrix.shape[0]))

    @classmethod
    def binary(cls, *, tp: int, fp: int, fn: int, tn: int) -> Self:
        """A 2 x 2 matrix labelled ``("positive", "negative")``.

        Parameters
        ----------
        tp, fp, fn, tn : int
            True positives, false positives, false negatives, true negatives.

        Returns
        -------
        ConfusionMatrix
            Counts ``[[tp, fn], [fp, tn]]`` (rows reference, columns response).

        Examples
        --------
        >>> m = ConfusionMatrix.binary(tp=8, fp=2, fn=4, tn=86)
        >>> m.counts
        array([[ 8,  4],
               [ 2, 86]])
        >>> m.precision().estimate, m.recall().estimate
        (0.8, 0.6666666666666666)
        """
        a, b, c, d = (_single_count(v, n) for v, n in ((tp, "tp"), (fn, "fn"), (fp, "fp"),
                                                         (tn, "tn")))
        if a + b + c + d > check.MAX_COUNT:
            raise ValueError(f"`tp` + `fp` + `fn` + `tn` must be at most 2**53 = "
                             f"{check.MAX_COUNT}; got {a + b + c + d}.")
        return cls([[a, b], [c, d]], labels=_BINARY_LABELS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ConfusionMatrix):
            return NotImplemented
        return self.labels == other.labels and np.array_equal(self.counts, other.counts)

    def __hash__(self) -> int:
        return hash((self.labels, self.counts.tobytes()))

    # ------------------------------------------------------------------ counts

    @property
    def n_classes(self) -> int:
        """K, the number of categories."""
        return int(self.counts.shape[0])

    @property
    def total(self) -> int:
        """N, the number of items (sum of all cells)."""
        return int(self.counts.sum())

    @property
    def reference_counts(self) -> IntArray:
        """Items per reference category (row sums)."""
        rows: IntArray = self.counts.sum(axis=1)
        return rows

    @property
    def response_counts(self) -> IntArray:
        """Items per response category (column sums)."""
        columns: IntArray = self.counts.sum(axis=0)
        return columns

    @property
    def correct(self) -> int:
        """Items whose response matches the reference (the trace)."""
        return int(np.trace(self.counts))

    def _index(self, label: Hashable) -> int:
        try:
            return self.labels.index(label)
        except ValueError:
            valid = ", ".join(repr(known) for known in self.labels)
            raise ValueError(f"`label` must be one of {valid}; got {check.show(label)}.") from None

    def _outcomes(self) -> _Outcomes:
        tp = np.diagonal(self.counts).copy()
        fp = self.response_counts - tp
        fn = self.reference_counts - tp
        return _Outcomes(tp=tp, fp=fp, fn=fn, tn=self.total - tp - fp - fn)

    # ------------------------------------------------------------- proportions

    @property
    def accuracy(self) -> ProportionEstimate:
        """``correct / total``; nan for an empty matrix.

        Its ``confidence_interval(level, method="wald")`` is the normal approximation of
        LingPipe, Classifiers and Evaluation, section Accuracy Confidence Intervals.
        """
        return ProportionEstimate(self.correct, self.total)

    @property
    def error_rate(self) -> ProportionEstimate:
        """``(total - correct) / total`` (seed 001, What is an Error?); nan if empty."""
        return ProportionEstimate(self.total - self.correct, self.total)

    def _proportion(self, measure: str, label: Hashable) -> ProportionEstimate:
        k = self._index(label)
        successes, trials = _PROPORTIONS[measure](self._outcomes())
        return ProportionEstimate(int(successes[k]), int(trials[k]))

    def precision(self, label: Hashable = "positive") -> ProportionEstimate:
        """Precision of class ``label``: ``tp / (tp + fp)``, over the items it was given.

        Parameters
        ----------
        label : hashable
            The class; ``"positive"`` by default (binary matrices).

        Returns
        -------
        ProportionEstimate
            ``successes = tp`` (diagonal cell), ``trials = tp + fp`` (column sum); estimate
            nan when the class was never given as a response.

        References
        ----------
        van Rijsbergen (1979), chapter 7; the one-versus-all view of LingPipe, Classifiers
        and Evaluation, section The ConfusionMatrix Class.
        """
        return self._proportion("precision", label)

    def recall(self, label: Hashable = "positive") -> ProportionEstimate:
        """Recall (sensitivity) of class ``label``: ``tp / (tp + fn)``.

        ``trials`` is the row sum; the estimate is nan when the class never occurs in the
        reference. See :meth:`precision` for the parameters and references.
        """
        return self._proportion("recall", label)

    def specificity(self, label: Hashable = "positive") -> ProportionEstimate:
        """Specificity of class ``label``: ``tn / (tn + fp)``, the recall of "not label".

        nan when every item belongs to ``label``. See :meth:`precision` for the parameters.
        """
        return self._proportion("specificity", label)

    def prevalence(self, label: Hashable = "positive") -> ProportionEstimate:
        """Share of items whose reference is ``label``: ``(tp + fn) / N``; nan if empty."""
        return self._proportion("prevalence", label)

    def per_class(self, measure: str = "precision", *, beta: float = 1.0) -> Array:
        """One measure for every class, aligned with ``labels``.

        Parameters
        ----------
        measure : {"precision", "recall", "specificity", "f_measure"}
            The per-class measure.
        beta : float
            F-beta weight, used by ``"f_measure"`` only (validated always).

        Returns
        -------
        numpy.ndarray of float, shape (K,)
            nan where the measure is undefined.

        Examples
        --------
        >>> wine = ConfusionMatrix([[9, 3, 0], [3, 5, 1], [1, 1, 4]])
        >>> wine.per_class("recall")
        array([0.75      , 0.55555556, 0.66666667])
        """
        measure = check.choice(measure, "measure", CLASS_MEASURES)
        beta = _beta(beta)
        outcomes = self._outcomes()
        if measure == "f_measure":
            return _f_beta(outcomes, beta)
        return ratio(*_PROPORTIONS[measure](outcomes))

    def f_measure(self, label: Hashable = "positive", *, beta: float = 1.0) -> float:
        """F-beta of class ``label``, the weighted harmonic mean of precision and recall.

        Parameters
        ----------
        label : hashable
            The class; ``"positive"`` by default.
        beta : float
            Non-negative weight of recall relative to precision (``beta = 0`` is precision).

        Returns
        -------
        float
            nan when ``tp + fp + fn == 0`` (for ``beta = 0``: when ``tp + fp == 0``). It is a
            function of two proportions, not a binomial proportion, so no interval is offered.

        Notes
        -----
        ``F_beta = (1 + b^2) tp / ((1 + b^2) tp + b^2 fn + fp)``, which equals
        ``(1 + b^2) P R / (b^2 P + R)`` when precision P and recall R are defined and not both
        0. Computed from the counts, it is 0 (not nan) when ``tp = 0`` but ``fp + fn > 0``,
        even if one of P and R is undefined.

        References
        ----------
        van Rijsbergen (1979), chapter 7.

        Examples
        --------
        >>> wine = ConfusionMatrix([[9, 3, 0], [3, 5, 1], [1, 1, 4]],
        ...                        labels=["cabernet", "syrah", "pinot"])
        >>> wine.f_measure("cabernet")
        0.72
        """
        k = self._index(label)
        return float(self.per_class("f_measure", beta=beta)[k])

    def f1(self, label: Hashable = "positive") -> float:
        """:meth:`f_measure` with ``beta = 1``: ``2 tp / (2 tp + fn + fp)``."""
        return self.f_measure(label, beta=1.0)

    # ------------------------------------------------------ views and averages

    def one_vs_all(self, label: Hashable) -> ConfusionMatrix:
        """The 2 x 2 view of ``label`` ("positive") against all other classes ("negative").

        Returns
        -------
        ConfusionMatrix
            ``binary(tp, fp, fn, tn)`` with ``tp = counts[k, k]``, ``fp`` the rest of
            column k, ``fn`` the rest of row k and ``tn`` everything else.

        References
        ----------
        LingPipe, Classifiers and Evaluation, section The ConfusionMatrix Class (the seed
        text names one-versus-all views and ends before their subsection's body).

        Examples
        --------
        >>> wine = ConfusionMatrix([[9, 3, 0], [3, 5, 1], [1, 1, 4]],
        ...                        labels=["cabernet", "syrah", "pinot"])
        >>> wine.one_vs_all("cabernet").counts
        array([[ 9,  3],
               [ 4, 11]])
        """
        k = self._index(label)
        outcomes = self._outcomes()
        return ConfusionMatrix.binary(
            tp=int(outcomes.tp[k]),
            fp=int(outcomes.fp[k]),
            fn=int(outcomes.fn[k]),
            tn=int(outcomes.tn[k]),
        )

    def micro_average(self) -> ConfusionMatrix:
        """The sum of the K one-versus-all 2 x 2 matrices.

        Returns
        -------
        ConfusionMatrix
            A binary matrix with total ``K N``. For single-label classification every error is
            a false positive of one class and a false negative of another, so its precision
            and recall (and hence F) all equal the accuracy of this matrix.

        Examples
        --------
        >>> wine = ConfusionMatrix([[9, 3, 0], [3, 5, 1], [1, 1, 4]])
        >>> micro = wine.micro_average()
        >>> micro.counts
        array([[18,  9],
               [ 9, 45]])
        >>> micro.precision().estimate == micro.recall().estimate == wine.accuracy.estimate
        True
        """
        outcomes = self._outcomes()
        return ConfusionMatrix.binary(
            tp=int(outcomes.tp.sum()),
            fp=int(outcomes.fp.sum()),
            fn=int(outcomes.fn.sum()),
            tn=int(outcomes.tn.sum()),
        )

    def macro_average(self, measure: str = "precision", *, beta: float = 1.0) -> float:
        """Unweighted mean of a per-class measure over all K classes.

        Parameters
        ----------
        measure : {"precision", "recall", "specificity", "f_measure"}
            The per-class measure (:meth:`per_class`).
        beta : float
            F-beta weight for ``"f_measure"``.

        Returns
        -------
        float
            The mean over every class; **nan propagates**: if the measure is undefined for any
            class (e.g. precision of a class never predicted) the macro average is nan. To
            average over the defined classes only (scikit-learn's ``zero_division=np.nan``),
            use ``np.nanmean(m.per_class(measure))``.

        Notes
        -----
        ``macro = (1 / K) sum_k measure_k``; the macro F is the mean of per-class F values,
        not the F of the mean precision and mean recall.

        Examples
        --------
        >>> wine = ConfusionMatrix([[9, 3, 0], [3, 5, 1], [1, 1, 4]])
        >>> round(wine.macro_average("recall"), 4)
        0.6574
        """
        return float(np.mean(self.per_class(measure, beta=beta)))

    def weighted_average(self, measure: str = "precision", *, beta: float = 1.0) -> float:
        r"""Mean of a per-class measure over all K classes, weighted by each class's support.

        Parameters
        ----------
        measure : {"precision", "recall", "specificity", "f_measure"}
            The per-class measure (:meth:`per_class`).
        beta : float
            F-beta weight for ``"f_measure"``.

        Returns
        -------
        float
            The support-weighted mean; nan for an empty matrix. **nan propagates** from every
            class that occurs in the reference: if the measure is undefined for such a class
            (precision of a class never predicted) the average is nan, as for
            :meth:`macro_average`. A class with zero support has weight zero and is left out
            even where its measure is undefined: it contributes nothing to the sum.

        Notes
        -----
        With ``n_k`` the reference count (row sum) of class ``k`` and ``N = sum_k n_k``,

        .. math:: \mathrm{weighted} = \sum_k \frac{n_k}{N}\, \mathrm{measure}_k .

        The weighted recall is the accuracy (``sum_k tp_k / N``). The weighted F is the mean of
        the per-class F values, not the F of the weighted precision and recall: that harmonic
        mean lies between the two, while the mean of per-class F values can lie below both
        (Klubička et al.'s Table 4: F1 0.70 against precision 0.82 and recall 0.73 for M1).
        scikit-learn's ``precision_recall_fscore_support(average="weighted")`` computes the
        same weights (where every class with support has a defined measure).

        References
        ----------
        Klubička, F., Salton, G. D. and Kelleher, J. D. (2018). Is it worth it?
        Budget-related evaluation metrics for model selection. Section 4, Table 4 ("the
        weighted average of Precision, Recall and F-Scores over each class").

        Examples
        --------
        A balanced test set on which the positive class is found precisely but rarely:

        >>> m = ConfusionMatrix([[50, 50], [5, 95]])
        >>> [round(m.weighted_average(x), 4) for x in ("precision", "recall", "f_measure")]
        [0.7821, 0.725, 0.7103]
        >>> m.weighted_average("recall") == m.accuracy.estimate
        True
        """
        values = self.per_class(measure, beta=beta)
        support = self.reference_counts
        total = int(support.sum())
        if total == 0:
            return math.nan
        present = support > 0  # a class that never occurs has weight 0, defined or not
        return float(np.sum(values[present] * support[present]) / total)

    # ------------------------------------------------------------------- kappa

    def _random_fraction(self, kind: str) -> tuple[int, int]:
        """Random accuracy as an exact fraction ``(numerator, denominator)``."""
        rows = self.reference_counts.tolist()
        cols = self.response_counts.tolist()
        n = self.total
        # Python integers keep the sums exact for any N (int64 products could overflow).
        if kind == "cohen":
            return sum(r * c for r, c in zip(rows, cols, strict=True)), n * n
        return sum((r + c) ** 2 for r, c in zip(rows, cols, strict=True)), 4 * n * n

    def random_accuracy(self, kind: str = "cohen") -> float:
        """Accuracy expected from guessing at random with the observed marginals.

        Parameters
        ----------
        kind : {"cohen", "siegel-castellan"}
            ``"cohen"``: ``e = sum_k (row_k / N) (col_k / N)``; ``"siegel-castellan"``:
            ``e = sum_k ((row_k + col_k) / (2 N))^2``.

        Returns
        -------
        float
            ``e``, computed as one exact integer ratio; nan for an empty matrix.

        Notes
        -----
        Siegel-Castellan's ``e`` is never below Cohen's: ``((r + c) / 2)^2 >= r c`` term by
        term (arithmetic-geometric mean inequality), with equality iff the reference and
        response marginals coincide.

        References
        ----------
        LingPipe, Classifiers and Evaluation, sections Random Accuracy and Siegel and
        Castellan's kappa Statistic.

        Examples
        --------
        >>> wine = ConfusionMatrix([[9, 3, 0], [3, 5, 1], [1, 1, 4]])
        >>> round(wine.random_accuracy(), 4), round(wine.random_accuracy("siegel-castellan"), 4)
        (0.3663, 0.3669)
        """
        kind = check.choice(kind, "kind", RANDOM_ACCURACY_KINDS)
        numerator, denominator = self._random_fraction(kind)
        return numerator / denominator if denominator else math.nan

    def kappa(self, kind: str = "cohen") -> float:
        """Chance-adjusted agreement ``kappa = (a - e) / (1 - e)``.

        Parameters
        ----------
        kind : {"cohen", "siegel-castellan", "byrt"}
            Which random accuracy ``e`` (:meth:`random_accuracy`); ``"byrt"`` is
            ``2 a - 1``, i.e. ``e = 1/2``.

        Returns
        -------
        float
            At most 1 (equal iff ``a = 1``). nan for an empty matrix and when ``e = 1`` (both
            marginals concentrated on one class, so that ``a = 1`` too: 0 / 0).

        Notes
        -----
        ``a = correct / N``. The ratio is formed from exact integers, so Cohen's kappa is
        exactly symmetric under transposition (swapping reference and response).

        References
        ----------
        LingPipe, Classifiers and Evaluation, section Kappa Statistics for Chance-Adjusted
        Agreement (Cohen 1960; Siegel & Castellan 1988; Byrt, Bishop & Carlin 1993).

        Examples
        --------
        >>> wine = ConfusionMatrix([[9, 3, 0], [3, 5, 1], [1, 1, 4]])
        >>> round(wine.kappa(), 4), round(wine.kappa("siegel-castellan"), 4)
        (0.474, 0.4735)
        >>> round(wine.kappa("byrt"), 4)
        0.3333
        """
        kind = check.choice(kind, "kind", KAPPA_KINDS)
        n = self.total
        if n == 0:
            return math.nan
        if kind == "byrt":
            return (2 * self.correct - n) / n
        numerator, denominator = self._random_fraction(kind)
        # (a - e) / (1 - e) with both terms multiplied by the denominator of e (a multiple of N).
        excess = self.correct * (denominator // n) - numerator
        return excess / (denominator - numerator) if denominator != numerator else math.nan

    # ----------------------------------------------------- costs and utilities

    def _aligned(self, weights: ArrayLike, name: str) -> Array:
        matrix = check.as_real_array(weights, name)
        if matrix.shape != self.counts.shape:
            raise ValueError(
                f"`{name}` must have the shape of `counts` {self.counts.shape} (rows reference, "
                f"columns response); got shape {matrix.shape}."
            )
        return matrix

    def _weighted_total(self, weights: Array) -> WeightedTotal:
        total = float(np.sum(self.counts * weights))
        n = self.total
        return WeightedTotal(total=total, average=total / n if n else math.nan)

    def cost(self, cost_matrix: ArrayLike) -> WeightedTotal:
        """Total and average misclassification cost.

        Parameters
        ----------
        cost_matrix : array_like of float, shape (K, K)
            ``cost_matrix[i, j]`` is the cost of responding ``labels[j]`` to an item of
            reference ``labels[i]`` (same orientation as ``counts``). Non-negative; the
            diagonal is normally 0 but need not be.

        Returns
        -------
        WeightedTotal
            ``total = sum_ij E_ij C_ij`` and ``average = total / N`` (cost per decision).

        Raises
        ------
        ValueError
            If the shape differs from ``counts`` or a cost is negative (a negative cost is a
            gain: use :meth:`expected_gain`).

        Notes
        -----
        Seed 001 indexes ``E_ij`` and ``C_ij`` by (predicted i, true j); this method takes
        (true, predicted), so pass the transpose of a matrix written in the seed's order. A
        unit cost off the diagonal gives ``average == error_rate``.

        References
        ----------
        Seed 001, section Costs and Risks.

        Examples
        --------
        The seed's example: 14 class-1 and 6 class-2 cases misclassified out of 106;
        misclassifying a class-2 case costs 2 (the split of the 86 correct cases is not
        given; it does not affect the cost).

        >>> m = ConfusionMatrix([[50, 14], [6, 36]])
        >>> c = m.cost([[0, 1], [2, 0]])
        >>> c.total, round(c.average, 2)
        (26.0, 0.25)
        """
        weights = self._aligned(cost_matrix, "cost_matrix")
        negative = weights < 0
        if negative.any():
            raise ValueError(
                "`cost_matrix` must be non-negative (a negative cost is a gain: use "
                f"expected_gain); got {check.first_offender(weights, negative)}."
            )
        return self._weighted_total(weights)

    def expected_gain(self, risk_matrix: ArrayLike) -> WeightedTotal:
        """Total and average gain under a risk matrix (gains positive, losses negative).

        Parameters
        ----------
        risk_matrix : array_like of float, shape (K, K)
            ``risk_matrix[i, j]`` is the gain (positive) or loss (negative) of responding
            ``labels[j]`` to an item of reference ``labels[i]``, correct decisions included.

        Returns
        -------
        WeightedTotal
            ``total = sum_ij E_ij R_ij`` (the seed's total risk) and ``average = total / N``,
            the expected gain per decision.

        Notes
        -----
        Same orientation remark as :meth:`cost`.

        References
        ----------
        Seed 001, section Costs and Risks.

        Examples
        --------
        >>> m = ConfusionMatrix([[50, 14], [6, 36]])
        >>> m.expected_gain([[1, -1], [-2, 1]]).total
        60.0
        """
        return self._weighted_total(self._aligned(risk_matrix, "risk_matrix"))

    def linear_utility(self, *, u_a: float, u_b: float, label: Hashable = "positive") -> float:
        """TREC-5 linear utility ``u = u_a A + u_b B`` of the documents retrieved as ``label``.

        Parameters
        ----------
        u_a : float
            Value of retrieving a relevant document.
        u_b : float
            Value (normally negative) of retrieving a nonrelevant document.
        label : hashable
            The "relevant" class; ``"positive"`` by default.

        Returns
        -------
        float
            ``u_a tp + u_b fp``: ``A = tp`` relevant and ``B = fp`` nonrelevant documents in
            the retrieved set. Rejected documents contribute nothing.

        References
        ----------
        Lewis (1996), TREC-5 Filtering Track, section 4.4.

        Examples
        --------
        >>> run = ConfusionMatrix.binary(tp=10, fp=4, fn=5, tn=81)
        >>> [run.linear_utility(u_a=a, u_b=b) for a, b in [(1, -3), (1, -1), (3, -1)]]
        [-2.0, 6.0, 26.0]
        """
        a = check.real_scalar(u_a, "u_a")
        b = check.real_scalar(u_b, "u_b")
        k = self._index(label)
        outcomes = self._outcomes()
        return a * float(outcomes.tp[k]) + b * float(outcomes.fp[k])


def optimal_threshold(u_a: float, u_b: float) -> float:
    """Probability-of-relevance threshold that maximises TREC-5 linear utility.

    Parameters
    ----------
    u_a : float
        Value of retrieving a relevant document.
    u_b : float
        Value of retrieving a nonrelevant document; ``u_a > u_b`` is required.

    Returns
    -------
    float
        ``t = -u_b / (u_a - u_b)``. Accepting a document whose probability of relevance is
        ``p`` adds ``p u_a + (1 - p) u_b`` to the expected utility and rejecting it adds 0, so
        the rule "accept iff ``p > t``" accepts exactly the documents of positive expected
        utility. ``t`` is not clipped so that this holds for every ``p`` in [0, 1]:
        ``t <= 0`` (``u_b >= 0``) accepts every document with ``p > t``, and ``t >= 1``
        (``u_a <= 0``) accepts none. ``u_b = 0`` gives exactly ``0.0``.

    Raises
    ------
    ValueError
        If ``u_a <= u_b`` (relevance would not be worth more than nonrelevance, and a
        higher probability would not make a document more worth accepting).

    References
    ----------
    Lewis (1996), TREC-5 Filtering Track, section 4.5 (decision-theoretic thresholds).

    Examples
    --------
    The three TREC-5 filtering runs:

    >>> [optimal_threshold(a, b) for a, b in [(1, -3), (1, -1), (3, -1)]]
    [0.75, 0.5, 0.25]
    """
    a = check.real_scalar(u_a, "u_a")
    b = check.real_scalar(u_b, "u_b")
    if not a > b:
        raise ValueError(f"`u_a` must be greater than `u_b`; got u_a={check.show(u_a)}, "
                         f"u_b={check.show(u_b)}.")
    return -b / (a - b) + 0.0  # + 0.0 turns the -0.0 of u_b == 0 into 0.0
