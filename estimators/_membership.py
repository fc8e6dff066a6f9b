"""Membership strata: one stratum per pattern of membership in the runs' submitted sets.

Lewis (1996), section 5.2.1 and Figure 1: one stratified sample of the strata estimates every
run's set (eq. 8-10).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, Self

import numpy as np
from numpy.typing import NDArray

from estimators import _validation as check
from estimators._allocation import allocate
from estimators._strata import _one_dimensional, _read_only, _strata_counts
from estimators._stratified import StratifiedEstimate

__all__ = ["MembershipStrata"]

IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

# 2**16 membership patterns is already far more strata than any judging budget can sample.
_MAX_RUNS = 16


def _runs(runs: Any) -> tuple[Hashable, ...]:
    if isinstance(runs, str | bytes | Mapping | AbstractSet) or not check.iterable(runs):
        raise TypeError(f"`runs` must be a sequence of distinct run names; got "
                        f"{check.show(runs)}.")
    result = tuple(runs)
    if not 1 <= len(result) <= _MAX_RUNS:
        raise ValueError(f"`runs` must name between 1 and {_MAX_RUNS} runs; got {len(result)}.")
    try:
        distinct = len(set(result)) == len(result)
    except TypeError:
        raise TypeError(f"`runs` must hold hashable names; got {check.show(result)}.") from None
    if not distinct:
        raise ValueError(f"`runs` must be distinct; got {check.show(result)}.")
    return result


@dataclass(frozen=True, init=False, eq=False)
class MembershipStrata:
    """The strata of documents by which runs submitted them (Lewis 1996, section 5.2.1).

    With ``R`` runs there are ``2^R`` strata, one per membership pattern. Stratum ``k`` is
    labelled by ``k`` in ``R`` binary digits, the first digit for ``runs[0]``: for three runs
    ``"000" .. "111"``, ``"011"`` holding the documents submitted by runs 2 and 3 but not run 1
    (Figure 1). Each run's set is the union of the strata with a 1 in its digit, so one
    stratified sample estimates every run (eq. 8-10). Stratum ``"0...0"`` (documents no run
    submitted) belongs to no set and is never sampled.

    Parameters
    ----------
    runs : sequence of hashable
        1 to 16 distinct run names.
    sizes : array_like of int, shape (2^R,)
        Documents per stratum, in label order.

    Examples
    --------
    Lewis (1996), Figure 2: one stratified sample of 100 documents estimates all three runs,
    each with its own utility measure (eq. 2-4).

    >>> strata = MembershipStrata(["R1", "R2", "R3"], [100050, 1000, 10, 200, 0, 0, 0, 40])
    >>> strata.labels[3], int(strata.sizes[3])
    ('011', 200)
    >>> sampled = strata.allocate(100)
    >>> sampled
    array([ 0, 30, 10, 30,  0,  0,  0, 30])
    >>> runs = strata.estimates(sampled, [0, 1, 2, 10, 0, 0, 0, 23])
    >>> [round(runs[r].estimate, 4) for r in ("R1", "R2", "R3")]
    [0.7667, 0.3973, 0.1054]
    >>> runs["R2"].labels
    ('010', '011', '110', '111')
    >>> round(runs["R3"].utility(u_a=3, u_b=-1).mse, 1)
    21452.5
    """

    runs: tuple[Hashable, ...]
    sizes: IntArray

    def __init__(self, runs: Iterable[Hashable], sizes: Any) -> None:
        names = _runs(runs)
        counts = _one_dimensional(sizes, "sizes")
        if counts.size != 2 ** len(names):
            raise ValueError(f"`sizes` must have one entry per membership pattern of the "
                             f"{len(names)} `runs` (2^{len(names)} = {2 ** len(names)}); got "
                             f"length {counts.size}.")
        object.__setattr__(self, "runs", names)
        object.__setattr__(self, "sizes", _read_only(counts))

    @classmethod
    def from_documents(cls, submitted: Iterable[Iterable[Hashable]], runs: Iterable[Hashable]
                       ) -> Self:
        """Count the documents of each stratum.

        Parameters
        ----------
        submitted : iterable of iterables of hashable
            For each document, the runs that submitted it (empty: none did).
        runs : sequence of hashable
            The run names.

        Examples
        --------
        >>> docs = [{"R1", "R2", "R3"}, {"R3"}, {"R2", "R3"}, {"R3"}, set()]
        >>> MembershipStrata.from_documents(docs, ["R1", "R2", "R3"]).sizes
        array([1, 2, 0, 1, 0, 0, 0, 1])
        """
        names = _runs(runs)
        pattern = _stratum_indices(submitted, names)
        return cls(names, np.bincount(pattern, minlength=2 ** len(names)))

    def stratum_of(self, submitted: Iterable[Iterable[Hashable]]) -> IntArray:
        """Stratum index of each document (to draw each stratum's sample from).

        ``submitted`` is as for :meth:`from_documents`.

        Examples
        --------
        >>> strata = MembershipStrata(["R1", "R2"], [0, 1, 1, 1])
        >>> strata.stratum_of([{"R2"}, {"R1", "R2"}, {"R1"}])
        array([1, 3, 2])
        """
        return _stratum_indices(submitted, self.runs)

    @property
    def labels(self) -> tuple[str, ...]:
        """``"0...0" .. "1...1"``: digit ``r`` is 1 when ``runs[r]`` submitted the stratum."""
        width = len(self.runs)
        return tuple(format(k, f"0{width}b") for k in range(2**width))

    @property
    def membership(self) -> BoolArray:
        """Boolean ``(2^R, R)`` array: ``membership[k, r]`` when stratum k is in run r's set."""
        width = len(self.runs)
        shifts = np.arange(width - 1, -1, -1)
        member: BoolArray = ((np.arange(2**width)[:, None] >> shifts) & 1).astype(np.bool_)
        return member

    def allocate(
        self,
        total: int = 100,
        *,
        method: str = "trec5",
        minimum: int = 2,
        proportions: Any = None,
    ) -> IntArray:
        """:func:`allocate` over the submitted strata (all but ``"0...0"``, which gets 0)."""
        submitted = self.sizes.copy()
        submitted[0] = 0
        return allocate(submitted, total, method=method, minimum=minimum,
                        proportions=proportions)

    def estimates(self, sampled: Any, positives: Any) -> dict[Hashable, StratifiedEstimate]:
        """Every run's stratified estimate from one sample (Lewis 1996, eq. 8-10).

        Parameters
        ----------
        sampled, positives : array_like of int, shape (2^R,)
            Documents judged and relevant ones found per stratum, in label order. A run whose
            set has a non-empty stratum without a sample gets an undefined (nan) estimate;
            ``"0...0"`` belongs to no run's set.

        Returns
        -------
        dict
            Run name to :class:`StratifiedEstimate` over the strata of its set (labelled as
            here). A run that submitted nothing gets an empty estimate (see
            :mod:`estimators.sampling`: nan proportion, utility exactly 0).
        """
        member = self.membership
        sizes, sampled_, positives_, labels = _strata_counts(
            self.sizes, sampled, positives, self.labels)
        estimates: dict[Hashable, StratifiedEstimate] = {}
        for column, run in enumerate(self.runs):
            mask = member[:, column]
            estimates[run] = StratifiedEstimate._trusted(
                sizes[mask], sampled_[mask], positives_[mask],
                tuple(label for label, keep in zip(labels, mask, strict=True) if keep),
            )
        return estimates


def _stratum_indices(submitted: Iterable[Iterable[Hashable]], runs: tuple[Hashable, ...]
                     ) -> IntArray:
    """Stratum index per document: bit ``R - 1 - r`` set when ``runs[r]`` submitted it."""
    if isinstance(submitted, str | bytes) or not check.iterable(submitted):
        raise TypeError(f"`submitted` must be a sequence of per-document run collections; got "
                        f"{check.show(submitted)}.")
    bit = {run: 1 << (len(runs) - 1 - r) for r, run in enumerate(runs)}
    indices = []
    for document, members in enumerate(submitted):
        if isinstance(members, str | bytes) or not check.iterable(members):
            raise TypeError(f"`submitted` must hold a collection of run names per document; "
                            f"got {check.show(members)} for document {document}.")
        index = 0
        for run in set(members):
            if run not in bit:
                raise ValueError(f"`submitted` must name only runs in `runs`; "
                                 f"got {check.show(run)} for "
                                 f"document {document}.")
            index |= bit[run]
        indices.append(index)
    return np.asarray(indices, dtype=np.int64)
