"""Monte Carlo power analysis for certifying F1: how large must the certification test set be?

Implements Bagdouri, Webber, Lewis & Oard (2013), "Towards minimizing the annotation cost of
certified text classification" (CIKM), section 4:

* the posterior over infinite-population confusion matrices (section 4.3):
  ``R1 ~ Beta(1/2 + tp, 1/2 + fp)`` on the retrieved segment, ``R0 ~ Beta(1/2 + fn, 1/2 + tn)``
  on the unretrieved one, the retrieved share ``q`` known (default: the sample's); or, with
  ``posterior="dirichlet"``, a Jeffreys Dirichlet posterior on all four cells, which is the same
  two segment posteriors with ``q ~ Beta(1 + tp + fp, 1 + fn + tn)`` drawn independently of
  them (the aggregation and neutrality properties of the Dirichlet distribution);
* Algorithm 1, :func:`theta_star`: the beta-quantile (beta = 1 - power) of the lower bounds of
  the ``confidence_level`` lower one-sided confidence intervals (LOSCI) on F1 computed from
  simulated test sets of a given size;
* Algorithm 2's search (run by `estimators.certification_sample_size` on this simulated
  path): the smallest test size whose theta_star clears the target, by doubling then binary
  search.

Two refinements over the paper:

1. *Unreachable targets.* Algorithm 2 only checks that the point estimate exceeds the target. As
   the test size grows, each simulated LOSCI bound tends to the population F1 of its draw, so
   theta_star tends to the beta-quantile of the posterior of population F1; a target at or above
   that limit can never be certified with the requested power, however large the test set.
2. *Monte Carlo precision.* theta_star is computed with common random numbers (the same posterior
   draws and the same random stream at every candidate size), which makes it a smooth function of
   the size so the search is not thrown about by noise; the planned size is still a Monte Carlo
   estimate, and its uncertainty is reported from the distribution-free confidence interval of the
   beta-quantile (order statistics), optionally refined until a requested relative precision.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from estimators import _validation as check
from estimators.confusion import ConfusionMatrix
from estimators.fmeasure import F1_METHODS_BY_DESIGN, _srs_lower_bounds, f1_from_segments
from estimators.interval import Interval

__all__ = [
    "LOSCI_METHODS",
    "POSTERIORS",
    "ConfusionPosterior",
    "confusion_posterior",
    "theta_star",
]

Array = NDArray[np.float64]
# The certification LOSCI: any deterministic f1_ci method of simple random sampling (the
# simulated test sets are simple random samples). "delta" is the paper's choice (section 4.1);
# "jaccard-clopper-pearson" is the one whose coverage is guaranteed at every size.
LOSCI_METHODS: tuple[str, ...] = tuple(m for m in F1_METHODS_BY_DESIGN["srs"]
                                       if m not in ("beta-posterior", "bootstrap"))
# The posteriors over population confusion matrices: the paper's (retrieved share known) and
# the Jeffreys Dirichlet on all four cells (retrieved share uncertain).
POSTERIORS: tuple[str, ...] = ("known-share", "dirichlet")
# Confidence level of the reported Monte Carlo interval for the planned test size.
MC_INTERVAL_LEVEL = 0.95
# The Monte Carlo interval of an unreachable plan: no finite size.
_NO_SIZE = Interval(low=math.inf, high=math.inf, method="order-statistic",
                    confidence_level=MC_INTERVAL_LEVEL)


@dataclass(frozen=True)
class ConfusionPosterior:
    """Posterior over infinite-population confusion matrices (Bagdouri et al. 2013, 4.3).

    Attributes
    ----------
    tp, fp, fn, tn : int
        The observed (training-time) confusion matrix.
    retrieved_share : float
        ``q``, the population proportion retrieved: known (``model="known-share"``), or the
        posterior mean of ``q`` (``model="dirichlet"``).
    model : {"known-share", "dirichlet"}
        ``"known-share"``: the paper's posterior, ``q`` fixed. ``"dirichlet"``: the Jeffreys
        ``Dirichlet(1/2 + tp, 1/2 + fp, 1/2 + fn, 1/2 + tn)`` posterior on the four cells; its
        segment proportions have the same Beta posteriors, and ``q ~ Beta(1 + tp + fp,
        1 + fn + tn)`` independently of them (`draw_share`).
    """

    tp: int
    fp: int
    fn: int
    tn: int
    retrieved_share: float
    model: str = "known-share"

    def __post_init__(self) -> None:
        for name in ("tp", "fp", "fn", "tn"):
            if _whole_count(getattr(self, name)):
                continue
            if check.as_counts(getattr(self, name), name).ndim:
                raise ValueError(f"`{name}` must be one count; "
                                 f"got {check.show(getattr(self, name))}.")
        share = check.real_scalar(self.retrieved_share, "retrieved_share")
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"`retrieved_share` must be in [0, 1]; got "
                             f"{check.show(self.retrieved_share)}.")
        check.choice(self.model, "model", POSTERIORS)

    def draw(self, draws: int, *, rng: Any = None) -> tuple[Array, Array]:
        """Draw ``(R1, R0)``: relevant proportions of the retrieved and unretrieved segments."""
        draws = check.draws(draws)
        generator = check.generator(rng)
        r1 = generator.beta(0.5 + self.tp, 0.5 + self.fp, size=draws)
        r0 = generator.beta(0.5 + self.fn, 0.5 + self.tn, size=draws)
        return r1, r0

    def draw_share(self, draws: int, *, rng: Any = None) -> Array:
        """Draw the retrieved share ``q``: constant when known, else its Beta posterior.

        Under the Dirichlet posterior ``q = p_tp + p_fp ~ Beta(1 + tp + fp, 1 + fn + tn)`` is
        independent of the segment proportions `draw` gives (Dirichlet aggregation and
        neutrality), so drawing it from its own stream leaves their draws unchanged.
        """
        draws = check.draws(draws)
        if self.model == "known-share":
            return np.full(draws, self.retrieved_share)
        generator = check.generator(rng)
        share: Array = generator.beta(1.0 + self.tp + self.fp, 1.0 + self.fn + self.tn,
                                      size=draws)
        return share

    def cell_probabilities(self, r1: Array, r0: Array, q: Array | None = None) -> Array:
        """Population cell probabilities ``(tp, fp, fn, tn)`` per draw, shape ``(draws, 4)``.

        ``q``: the retrieved share of each draw (default `retrieved_share`).
        """
        r1, r0, q = _proportions(r1=r1, r0=r0, q=self.retrieved_share if q is None else q)
        r1, r0, q = _one_shape(r1, r0, q)
        return np.stack([q * r1, q * (1 - r1), (1 - q) * r0, (1 - q) * (1 - r0)], axis=-1)

    def f1(self, r1: Array, r0: Array, q: Array | None = None) -> Array:
        """Population F1 of each draw (``r1``, ``r0``, ``q`` proportions in [0, 1]).

        ``q``: the retrieved share of each draw (default `retrieved_share`). ``r1``, ``r0``
        and ``q`` hold at least one draw each and broadcast to one shape (as `draw` and
        `draw_share` give them).
        """
        r1, r0, q = _proportions(r1=r1, r0=r0, q=self.retrieved_share if q is None else q)
        for name, array in (("r1", r1), ("r0", r0), ("q", q)):
            if array.size == 0:
                raise ValueError(f"`{name}` must hold at least one draw; got an empty array.")
        r1, r0, q = _one_shape(r1, r0, q)
        return f1_from_segments(q, r1, r0)

    @property
    def point_f1(self) -> float:
        """F1 of the observed matrix (nan if undefined)."""
        denominator = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / denominator if denominator else math.nan


def _proportions(**values: Any) -> list[Array]:
    """Each value as a float array of proportions in [0, 1], or an error naming it."""
    arrays = []
    for name, value in values.items():
        array = check.as_real_array(value, name)
        bad = (array < 0.0) | (array > 1.0)
        if bad.any():
            raise ValueError(f"`{name}` must hold proportions in [0, 1]; got "
                             f"{check.first_offender(array, bad)}.")
        arrays.append(array)
    return arrays


def _one_shape(r1: Array, r0: Array, q: Array) -> tuple[Array, Array, Array]:
    """``r1``, ``r0`` and ``q`` broadcast to one shape, or an error naming them."""
    try:
        shape = np.broadcast_shapes(r1.shape, r0.shape, q.shape)
    except ValueError:
        raise ValueError(f"`r1`, `r0` and `q` must broadcast to one shape; got shapes "
                         f"{r1.shape}, {r0.shape} and {q.shape}.") from None
    return np.broadcast_to(r1, shape), np.broadcast_to(r0, shape), np.broadcast_to(q, shape)


def _counts(confusion: Any) -> tuple[int, int, int, int]:
    """``(tp, fp, fn, tn)`` from a binary ConfusionMatrix, a mapping or a 4-sequence."""
    if isinstance(confusion, ConfusionMatrix):
        if confusion.n_classes != 2:
            raise ValueError(
                f"`confusion` must be a binary (2 x 2) matrix; got {confusion.n_classes} classes.")
        (tp, fn), (fp, tn) = confusion.counts.tolist()
        values: list[Any] = [tp, fp, fn, tn]
    elif isinstance(confusion, dict):
        missing = {"tp", "fp", "fn", "tn"} - set(confusion)
        if missing:
            raise ValueError(
                f"`confusion` must have keys tp, fp, fn, tn; missing {sorted(missing)}.")
        values = [confusion[k] for k in ("tp", "fp", "fn", "tn")]
    else:
        try:
            if isinstance(confusion, str | bytes):  # iterable, but never four counts
                raise TypeError
            values = list(confusion)
        except TypeError:
            raise TypeError("`confusion` must be a ConfusionMatrix, a mapping or (tp, fp, fn, tn); "
                            f"got {check.show(confusion)}.") from None
        if len(values) != 4:
            raise ValueError(f"`confusion` must hold 4 counts (tp, fp, fn, tn); "
                             f"got {check.show(confusion)}.")
    counts = tuple(v if _whole_count(v) else int(check.as_counts(v, f"confusion.{name}"))
                   for v, name in zip(values, ("tp", "fp", "fn", "tn"), strict=True))
    return counts  # type: ignore[return-value]


def _whole_count(value: Any) -> bool:
    """Whether ``value`` is a Python int that `check.as_counts` accepts as one count: told
    without numpy (a planner makes a posterior per labelled sample, thousands in a study)."""
    return type(value) is int and 0 <= value <= check.MAX_COUNT


def confusion_posterior(confusion: Any, *, retrieved_share: float | None = None,
                        posterior: str = "known-share") -> ConfusionPosterior:
    """Posterior over population confusion matrices from an observed matrix (section 4.3).

    Parameters
    ----------
    confusion : ConfusionMatrix or mapping or sequence
        A binary confusion matrix, ``{"tp": .., "fp": .., "fn": .., "tn": ..}`` or
        ``(tp, fp, fn, tn)``.
    retrieved_share : float, optional
        Population proportion retrieved, in [0, 1]; default the sample's ``(tp + fp) / n``
        (the paper's footnote 6). Only with ``posterior="known-share"``.
    posterior : {"known-share", "dirichlet"}
        The paper's posterior (``q`` known) or the Jeffreys Dirichlet posterior on the four
        cells (``q`` uncertain); see `ConfusionPosterior`.

    Returns
    -------
    ConfusionPosterior

    Examples
    --------
    >>> post = confusion_posterior((60, 20, 25, 395))
    >>> post.retrieved_share
    0.16
    """
    tp, fp, fn, tn = _counts(confusion)
    model = check.choice(posterior, "posterior", POSTERIORS)
    share = _share(retrieved_share)
    if model == "dirichlet":
        if share is not None:
            raise ValueError("`retrieved_share` must be None with posterior='dirichlet' (the "
                             f"share is then uncertain); got {check.show(retrieved_share)}.")
        return ConfusionPosterior(tp=tp, fp=fp, fn=fn, tn=tn,
                                  retrieved_share=(1 + tp + fp) / (2 + tp + fp + fn + tn),
                                  model=model)
    if share is None:
        if tp + fp + fn + tn == 0:
            raise ValueError("`retrieved_share` must be given when `confusion` holds no "
                             "document (the sample's retrieved share is undefined); got None.")
        share = (tp + fp) / (tp + fp + fn + tn)
    return ConfusionPosterior(tp=tp, fp=fp, fn=fn, tn=tn, retrieved_share=share, model=model)


def _share(retrieved_share: Any) -> float | None:
    """``retrieved_share`` checked: None, or a proportion in [0, 1]."""
    if retrieved_share is None:
        return None
    share = check.real_scalar(retrieved_share, "retrieved_share")
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"`retrieved_share` must be in [0, 1]; got {check.show(retrieved_share)}.")
    return share


# The LOSCI methods whose bounds are quantiles found by inverting the beta function or by root
# finding (about a microsecond per bound): a curve bounds each distinct simulated
# (tp, errors) pair once (`_PairBounds`), as the draws of one test size, and the nearby sizes
# a search visits, share most of their pairs.
_SHARED_BOUNDS = frozenset({"dirichlet-posterior", "jaccard-clopper-pearson", "jaccard-jeffreys",
                            "jaccard-mid-p"})
# A pair (tp, errors) of a test size below 2**31 is kept under the key tp * 2**32 + errors.
_PAIR_BASE = 2**32


# Bounds of pairs with tp and errors below 2**12 are kept, once computed, in one table per
# (level, method) that every plan in the process reads (`_PairTable`, at most 128 MB): plans
# of other samples, posteriors, targets and cells meet the same small pairs again.
_TABLE_SIDE = 2**12


class _PairTable:
    """The LOSCI lower bounds of the pairs ``(tp, errors)`` with both below `_TABLE_SIDE`
    computed so far in this process at one level and method (nan: not computed yet), grown
    as larger pairs are met. A bound is a function of its pair alone
    (`estimators.fmeasure._srs_lower_bounds`), so a kept bound is the one the pair would get
    again; threads that fill it at once write the same values."""

    def __init__(self, level: float, method: str) -> None:
        self.level = level
        self.method = method
        self.values: Array = np.full((0, 0), np.nan)

    def __call__(self, tp: NDArray[np.int64], errors: NDArray[np.int64]) -> Array:
        """The bounds of the pairs, computed for the pairs not met before."""
        if not tp.size:
            return np.empty(tp.shape)
        values = self.values
        # each side grows to the power of two that holds the largest count met, up to the cap
        shape = tuple(min(_TABLE_SIDE, max(have, 1 << (int(count.max())).bit_length()))
                      for have, count in zip(values.shape, (tp, errors), strict=True))
        if shape != values.shape:
            grown = np.full(shape, np.nan)
            grown[:values.shape[0], :values.shape[1]] = values
            self.values = values = grown
        bounds: Array = values[tp, errors]
        missing = np.isnan(bounds)
        if missing.any():
            pairs = np.unique(tp[missing] * _TABLE_SIDE + errors[missing])
            new_tp, new_errors = pairs // _TABLE_SIDE, pairs % _TABLE_SIDE
            values[new_tp, new_errors] = _srs_lower_bounds(new_tp, new_errors, self.level,
                                                           self.method)
            bounds[missing] = values[tp[missing], errors[missing]]
        return bounds


_TABLES: dict[tuple[float, str], _PairTable] = {}


class _PairBounds:
    """The LOSCI lower bounds of the distinct ``(tp, errors)`` pairs met so far: the small ones
    in the process's `_PairTable`, the others kept sorted by key; each bound is a function of
    its pair alone (`estimators.fmeasure._srs_lower_bounds`), so a kept bound is the one the
    pair would get again."""

    def __init__(self, level: float, method: str) -> None:
        self.level = level
        self.method = method
        self.table = _TABLES.setdefault((level, method), _PairTable(level, method))
        self.keys = np.empty(0, dtype=np.int64)
        self.values = np.empty(0, dtype=np.float64)

    def __call__(self, tp: NDArray[np.int64], errors: NDArray[np.int64]) -> Array:
        """The bounds of the pairs ``(tp, errors)``, computed for the pairs not met before
        (read from the process's `_PairTable` where both are below `_TABLE_SIDE`)."""
        small = (tp < _TABLE_SIDE) & (errors < _TABLE_SIDE)
        if small.all():
            return self.table(tp, errors)
        bounds = np.empty(tp.shape)
        if small.any():
            bounds[small] = self.table(tp[small], errors[small])
        large = ~small
        bounds[large] = self.kept(tp[large], errors[large])
        return bounds

    def kept(self, tp: NDArray[np.int64], errors: NDArray[np.int64]) -> Array:
        """The bounds of pairs outside the table, kept by this instance."""
        # distinct pairs, sorted: searching the kept keys for sorted keys is cache-friendly
        pairs, where = np.unique(tp * _PAIR_BASE + errors, return_inverse=True)
        at = np.searchsorted(self.keys, np.asarray(pairs, dtype=np.int64))
        known = at < self.keys.size
        known[known] = self.keys[at[known]] == pairs[known]
        values = np.empty(pairs.size, dtype=np.float64)
        values[known] = self.values[at[known]]
        new = ~known
        if new.any():
            fresh = pairs[new]
            values[new] = _srs_lower_bounds(fresh // _PAIR_BASE, fresh % _PAIR_BASE,
                                            self.level, self.method)
            # merged in order: a new key goes before the kept keys from its search position on,
            # after the new keys smaller than it
            slots = at[new] + np.arange(fresh.size)
            kept = np.ones(self.keys.size + fresh.size, dtype=bool)
            kept[slots] = False
            keys = np.empty(kept.size, dtype=np.int64)
            keys[slots] = fresh
            keys[kept] = self.keys
            merged = np.empty(kept.size, dtype=np.float64)
            merged[slots] = values[new]
            merged[kept] = self.values
            self.keys, self.values = keys, merged
        bounds: Array = values[where]
        return bounds


@dataclass(frozen=True, kw_only=True)
class _ThetaStarCurve:
    """theta_star as a function of test size, with common random numbers.

    The posterior draws are made once; every candidate size restarts the sampling generator
    from the same seed (its state, saved once), so sizes are compared on the same random
    inputs.
    """

    r1: Array
    r0: Array
    q: Array
    sampling_seed: np.random.SeedSequence
    confidence_level: float
    quantile: float
    method: str
    # Simulated bounds per test size, in draw order, and counts of those below a threshold:
    # the three searches of a plan and its power curve ask about the same sizes.
    _bounds: dict[int, Array] = field(default_factory=dict, compare=False, repr=False)
    _below: dict[tuple[int, float], int] = field(default_factory=dict, compare=False,
                                                 repr=False)
    # The sampling probabilities of each draw and the sampling generator with its start.
    _p_tp: Array = field(init=False, compare=False, repr=False)
    _error_share: Array = field(init=False, compare=False, repr=False)
    _bit_generator: np.random.PCG64 = field(init=False, compare=False, repr=False)
    _start: Any = field(init=False, compare=False, repr=False)  # the PCG64 state
    _generator: np.random.Generator = field(init=False, compare=False, repr=False)
    _pair_bounds: _PairBounds = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        # The sampling probabilities do not depend on the size; `default_rng(seed)` is
        # `Generator(PCG64(seed))`, whose saved state restarts it without re-seeding.
        q = self.q
        p_tp = q * self.r1
        rest = 1.0 - p_tp
        p_errors = q * (1.0 - self.r1) + (1.0 - q) * self.r0
        share = np.divide(p_errors, rest, out=np.zeros_like(rest), where=rest > 0)
        bit_generator = np.random.PCG64(self.sampling_seed)
        object.__setattr__(self, "_p_tp", p_tp)
        object.__setattr__(self, "_error_share", np.minimum(share, 1.0))
        object.__setattr__(self, "_bit_generator", bit_generator)
        object.__setattr__(self, "_start", bit_generator.state)
        object.__setattr__(self, "_generator", np.random.Generator(bit_generator))
        object.__setattr__(self, "_pair_bounds", _PairBounds(self.confidence_level, self.method))

    @property
    def draws(self) -> int:
        return int(self.r1.size)

    def test_sets(self, test_size: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """``(tp, e)`` of one simulated test set of ``test_size`` per draw.

        Only ``tp`` and ``e = fp + fn`` matter for F1 and its SRS delta variance, so the
        multinomial sample is drawn as two conditional binomials:
        ``tp ~ Bin(s, p_tp)`` and ``e | tp ~ Bin(s - tp, (p_fp + p_fn) / (1 - p_tp))``, from
        the sampling generator restarted at its saved state (common random numbers):
        `restart`, `true_positives` of every draw, then `errors` of every draw.
        """
        self.restart()
        tp = self.true_positives(test_size, 0, self.draws)
        return tp, self.errors(test_size, tp, 0, self.draws)

    def restart(self) -> None:
        """Restart the sampling generator at its saved state."""
        self._bit_generator.state = self._start

    @property
    def stream_state(self) -> Any:
        """The sampling generator's state now (the PCG64 state), for `resume`."""
        return self._bit_generator.state

    def resume(self, state: Any) -> None:
        """Set the sampling generator to a state `stream_state` gave (of this curve's stream,
        or of the same stream of another curve with the same draws)."""
        self._bit_generator.state = state

    def true_positives(self, test_size: int, start: int, stop: int) -> NDArray[np.int64]:
        """``tp`` of draws ``start`` to ``stop`` of the test sets of ``test_size``.

        The sampling stream goes on from where the last call left it: called right after
        `restart` for consecutive ranges from 0 to the draws, then `errors` likewise, the
        counts are those of `test_sets` (a binomial array draws its elements in order, one
        after another).
        """
        tp: NDArray[np.int64] = self._generator.binomial(test_size, self._p_tp[start:stop])
        return tp

    def errors(self, test_size: int, tp: NDArray[np.int64], start: int, stop: int
               ) -> NDArray[np.int64]:
        """``e | tp`` of draws ``start`` to ``stop`` (``tp``: their true positives), the stream
        going on as in `true_positives`."""
        e: NDArray[np.int64] = self._generator.binomial(test_size - tp,
                                                        self._error_share[start:stop])
        return e

    def lower_bounds(self, test_size: int) -> Array:
        """LOSCI lower bounds on F1 from one simulated test set of ``test_size`` per draw
        (`test_sets`). A test set with undefined F1 (``tp = e = 0``) cannot certify: its
        bound is 0.
        """
        tp, e = self.test_sets(test_size)
        if self.method in _SHARED_BOUNDS and test_size < _PAIR_BASE // 2:
            bounds = self._pair_bounds(tp, e)
        else:
            bounds = _srs_lower_bounds(tp, e, self.confidence_level, self.method)
        # the bounds lie in [0, 1] where defined: nan is the only value to replace
        np.copyto(bounds, 0.0, where=np.isnan(bounds))
        return bounds

    def bounds(self, test_size: int) -> Array:
        """The simulated lower bounds at ``test_size`` (kept)."""
        if test_size not in self._bounds:
            self._bounds[test_size] = self.lower_bounds(test_size)
        return self._bounds[test_size]

    def evaluated(self) -> list[int]:
        """The test sizes simulated so far."""
        return list(self._bounds)

    def below(self, test_size: int, threshold: float) -> int:
        """How many simulated lower bounds at ``test_size`` are below ``threshold`` (kept)."""
        key = (test_size, threshold)
        if key not in self._below:
            self._below[key] = int(np.count_nonzero(self.bounds(test_size) < threshold))
        return self._below[key]

    def reaches(self, test_size: int, rank: int, threshold: float) -> bool:
        """Whether the ``rank``-th smallest simulated lower bound is at least ``threshold``.

        It is exactly when fewer than ``rank`` bounds are below ``threshold``: a count, where
        the order statistic itself would need the bounds sorted or partitioned.
        """
        return self.below(test_size, threshold) < rank

    def at_most(self, test_size: int, rank: int, threshold: float) -> bool:
        """Whether the ``rank``-th smallest simulated lower bound is at most ``threshold``."""
        return int(np.count_nonzero(self.bounds(test_size) <= threshold)) >= rank

    def passing(self, test_size: int, threshold: float) -> int:
        """How many simulated lower bounds at ``test_size`` are above ``threshold``."""
        return int(np.count_nonzero(self.bounds(test_size) > threshold))

    def order_statistic(self, test_size: int, rank: int) -> float:
        """The ``rank``-th smallest (1-based) simulated lower bound."""
        return float(np.partition(self.bounds(test_size), rank - 1)[rank - 1])

    @property
    def rank(self) -> int:
        """Rank of the beta-quantile: the smallest k with k / N >= beta (inverted CDF)."""
        return max(1, math.ceil(self.quantile * self.draws - 1e-9))

    def rank_interval(self) -> tuple[int, int]:
        """Ranks whose order statistics bracket the beta-quantile with 95% confidence.

        Distribution-free: the number of draws below the true quantile is
        Binomial(N, beta) (e.g. Hahn & Meeker 1991, section 5.2). Rank 0 (or N + 1) stands
        for an end with no order statistic, unbounded: with few draws expected below the
        quantile no lower one brackets it at 95%, and raising the rank to 1 would cover
        less than the label says (0.62 for 100 draws at power 0.99).
        """
        return _rank_interval(self.draws, self.quantile)

    @functools.cached_property
    def _sorted_f1(self) -> Array:
        """Population F1 of each draw (0 where undefined), in increasing order."""
        return np.sort(np.nan_to_num(f1_from_segments(self.q, self.r1, self.r0), nan=0.0))

    def limit(self, rank: int) -> float:
        """Order statistic of population F1 draws: theta_star's limit as the size grows."""
        return float(self._sorted_f1[rank - 1])


@functools.lru_cache(maxsize=64)
def _rank_interval(draws: int, quantile: float) -> tuple[int, int]:
    """`_ThetaStarCurve.rank_interval` for ``draws`` draws at ``quantile`` (kept: a study
    plans many times with the same draws and power, and each computation takes 0.25 ms)."""
    # imported here: scipy.stats takes ~0.3 s to import, which `import estimators` need not pay
    from scipy import stats

    tail = (1.0 - MC_INTERVAL_LEVEL) / 2.0
    low = int(stats.binom.ppf(tail, draws, quantile))
    high = int(stats.binom.ppf(1.0 - tail, draws, quantile)) + 1
    return low, min(draws + 1, high)


def _curve(posterior: ConfusionPosterior, *, confidence_level: float, power: float, draws: int,
           seed: np.random.SeedSequence, method: str) -> _ThetaStarCurve:
    # The share's stream is spawned third, so the segment draws and the test sets are the same
    # under both posteriors (common random numbers between them).
    posterior_seed, sampling_seed, share_seed = seed.spawn(3)
    r1, r0 = posterior.draw(draws, rng=posterior_seed)
    q = posterior.draw_share(draws, rng=share_seed)
    return _ThetaStarCurve(r1=r1, r0=r0, q=q, sampling_seed=sampling_seed,
                           confidence_level=confidence_level, quantile=1.0 - power,
                           method=method)


def _root_seed(rng: Any) -> np.random.SeedSequence:
    """A SeedSequence with recorded entropy from any accepted ``rng``."""
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if isinstance(rng, np.random.Generator):
        return np.random.SeedSequence(int(rng.integers(2**63)))
    if rng is None or (isinstance(rng, int) and not isinstance(rng, bool) and rng >= 0):
        return np.random.SeedSequence(rng)
    raise TypeError("`rng` must be a numpy Generator, SeedSequence, non-negative int or None; "
                    f"got {check.show(rng)}.")


def _test_size(value: Any, name: str) -> int:
    """A positive test-set size small enough to sample (binomial counts are int64)."""
    size = check.positive_int(value, name)
    if size > check.MAX_COUNT:
        raise ValueError(f"`{name}` must be at most 2**53 = {check.MAX_COUNT}; got "
                         f"{check.show(value)}.")
    return size


def _check_common(confidence_level: float, power: float, draws: int, method: str
                  ) -> tuple[float, float, int, str]:
    level = check.open_unit(confidence_level, "confidence_level")
    pw = check.open_unit(power, "power")
    n_draws = check.draws(draws)
    if n_draws < 100:
        raise ValueError(f"`draws` must be at least 100; got {draws}.")
    return level, pw, n_draws, check.choice(method, "interval", LOSCI_METHODS)


def theta_star(
    confusion: Any,
    test_size: int,
    *,
    confidence_level: float = 0.95,
    power: float = 0.93,
    draws: int = 1000,
    rng: Any = None,
    interval: str = "jaccard-clopper-pearson",
    retrieved_share: float | None = None,
    posterior: str = "known-share",
) -> float:
    """Algorithm 1 (EstimateThetaStar) of Bagdouri et al. (2013), section 4.1.

    The largest target F1 that a certification test set of ``test_size`` documents clears with
    probability ``power``: the ``1 - power`` quantile of the LOSCI lower bounds of simulated
    test sets, each drawn from a population confusion matrix drawn from the posterior.

    Parameters
    ----------
    confusion : ConfusionMatrix or mapping or sequence
        Observed binary confusion matrix (e.g. from cross-validation), see
        :func:`confusion_posterior`.
    test_size : int
        Size ``s`` of the simple random certification test set.
    confidence_level : float
        Level ``1 - alpha`` of the LOSCI.
    power : float
        Required probability ``1 - beta`` of passing.
    draws : int
        Monte Carlo draws (at least 100).
    rng : Generator, SeedSequence, int or None
        Randomness.
    interval : str
        The :func:`estimators.f1_ci` method of the certification LOSCI, one of
        `LOSCI_METHODS` (the deterministic methods of simple random sampling): by default
        ``"jaccard-clopper-pearson"``, whose coverage is at least nominal at every size (see
        :func:`estimators.f1_ci`); ``"delta"`` is the paper's choice (section 4.1), which
        under-covers with few relevant documents. The test set is certified with the same
        interval.
    retrieved_share : float, optional
        Known population share retrieved; default the sample's (``posterior="known-share"``).
    posterior : {"known-share", "dirichlet"}
        The posterior over population confusion matrices (:func:`confusion_posterior`): the
        paper's, with the retrieved share known, or the Jeffreys Dirichlet posterior on the four
        cells, with the share uncertain.

    Returns
    -------
    float
        theta_star (the inverted-CDF quantile of the simulated bounds).

    Examples
    --------
    >>> small = theta_star((60, 20, 25, 395), 500, rng=1)
    >>> large = theta_star((60, 20, 25, 395), 5000, rng=1)
    >>> small < large < 0.668
    True
    """
    level, pw, n_draws, method = _check_common(confidence_level, power, draws, interval)
    size = _test_size(test_size, "test_size")
    model = confusion_posterior(confusion, retrieved_share=retrieved_share, posterior=posterior)
    curve = _curve(model, confidence_level=level, power=pw, draws=n_draws,
                   seed=_root_seed(rng), method=method)
    return curve.order_statistic(size, curve.rank)


def _first_size_at_least(reaches: Callable[[int], bool], max_size: int,
                         within: Callable[[int], bool] | None = None) -> int | None:
    """Algorithm 2's search: double to bracket, then bisect ``[u/2, u]``.

    ``reaches(size)``: whether the curve's value at ``size`` is at least the target. Without
    ``within`` the bisection runs to the end and returns the smallest size that reaches the
    target (the curve is monotone up to Monte Carlo noise, which common random numbers keep
    small). With ``within(size)``, whether the value also lies within the tolerance above the
    target, it returns the first candidate of the bisection that does, the paper's stopping
    rule. ``None`` if no size up to ``max_size`` reaches the target.
    """
    upper = 1
    while not reaches(upper):
        if upper >= max_size:
            return None
        upper = min(2 * upper, max_size)
    low, high = upper // 2 + 1, upper
    while low < high:
        middle = (low + high) // 2
        if within is not None and within(middle):
            return middle
        if reaches(middle):
            high = middle
        else:
            low = middle + 1
    return high


def _plan_once(curve: _ThetaStarCurve, target: float, *, tolerance: float | None,
               max_test_size: int) -> tuple[int | None, float, float, Interval, str]:
    """Algorithm 2 on one simulated curve: the size, theta_star there, the limit, the size's
    Monte Carlo interval and, when no size is found, why.

    The three searches (the quantile's rank and the two ranks of its interval) ask whether an
    order statistic reaches the target, which the count of bounds below the target answers
    for every rank at once; a size simulated by one search is not simulated again.
    """
    power = 1.0 - curve.quantile
    rank = curve.rank
    limit = curve.limit(rank)
    low_rank, high_rank = curve.rank_interval()
    if target >= limit:
        reason = (f"target {target:g} is at or above the limit of theta_star as the test size "
                  f"grows ({limit:.4f}, the {1 - power:g}-quantile of the posterior of population "
                  f"F1): no test size certifies it with power {power:g}")
        return None, math.nan, limit, _NO_SIZE, reason

    def at_rank(k: int) -> Callable[[int], bool]:
        return lambda size: curve.reaches(size, k, target)

    ceiling = math.nan if tolerance is None else target + tolerance

    def within(size: int) -> bool:  # the paper's rule: theta_star in [target, ceiling]
        return curve.reaches(size, rank, target) and curve.at_most(size, rank, ceiling)

    size = _first_size_at_least(at_rank(rank), max_test_size,
                                None if tolerance is None else within)
    if size is None:
        reason = (f"no test size up to max_test_size={max_test_size} reaches the target "
                  f"(limit {limit:.4f} is barely above it)")
        return None, math.nan, limit, _NO_SIZE, reason
    # The upper order statistic reaches the target first (smaller sizes), the lower one last.
    # An unbounded end of the quantile's interval leaves the size's end unbounded too.
    size_low = (_first_size_at_least(at_rank(high_rank), max_test_size)
                if high_rank <= curve.draws else 1)
    size_high = (_first_size_at_least(at_rank(low_rank), max_test_size)
                 if low_rank >= 1 and curve.limit(low_rank) > target else None)
    interval = Interval(low=float(size_low if size_low is not None else size),
                        high=float(size_high) if size_high is not None else math.inf,
                        method="order-statistic", confidence_level=MC_INTERVAL_LEVEL)
    return size, curve.order_statistic(size, rank), limit, interval, ""
