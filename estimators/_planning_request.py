"""A certification planning request, validated: what is certified and how the test is drawn.

The measures and designs planned for, each measure's count and trials among the four cells,
the certification bounds allowed for each, and the assumptions behind a plan, in words
(:mod:`estimators.certification`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from estimators import _validation as check
from estimators._defaults import default_method
from estimators.power import LOSCI_METHODS, POSTERIORS
from estimators.proportion import PROPORTION_METHODS

__all__ = ["CERTIFICATION_DESIGNS", "CERTIFICATION_MEASURES", "_CELLS", "_SEGMENT", "_Request",
           "_assumptions", "_interval_choices", "_refuse_logit_delta", "_request", "_split"]

Array = NDArray[np.float64]

CERTIFICATION_MEASURES: tuple[str, ...] = ("f1", "recall", "precision", "accuracy", "elusion")
CERTIFICATION_DESIGNS: tuple[str, ...] = ("srs", "stratified")
# Cells (tp, fp, fn, tn) = (0, 1, 2, 3) of each measure's count and of its trials under simple
# random sampling. Elusion is certified from above, so its count is its complement's, tn
# among the unretrieved documents: the test passes when enough of them are not relevant.
_CELLS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "accuracy": ((0, 3), (0, 1, 2, 3)),
    "precision": ((0,), (0, 1)),
    "recall": ((0,), (0, 2)),
    "elusion": ((3,), (2, 3)),
    "f1": ((0,), (0, 1, 2)),
}
# The segment whose documents a single-segment measure samples (stratified design).
_SEGMENT = {"precision": 0, "elusion": 1}
_SEGMENT_METHODS = ("segments-clopper-pearson", "delta")
_FINITE_SEGMENT_METHODS = ("segments-hypergeometric", "delta")


@dataclass(frozen=True, kw_only=True)
class _Request:
    """A validated planning request: what is certified, how the test is drawn and bounded."""

    measure: str
    design: str
    theta: float
    level: float
    interval: str
    posterior: str
    population_size: int | None
    segment_sizes: tuple[int, int] | None

    @property
    def finite(self) -> bool:
        return self.population_size is not None

    @property
    def exact(self) -> bool:
        return not (self.design == "srs" and self.posterior == "known-share")

    def largest(self, max_test_size: int) -> tuple[int, int]:
        """The most documents each segment (or the one sample) can give: a segment's
        documents even when the population is treated as infinite."""
        if self.design == "stratified":
            n1, n0 = self.segment_sizes  # type: ignore[misc]
            return min(n1, max_test_size), min(n0, max_test_size)
        if self.population_size is None:
            return max_test_size, 0
        return min(self.population_size, max_test_size), 0


def _interval_choices(measure: str, design: str, finite: bool) -> tuple[tuple[str, ...], str]:
    """The certification bounds allowed for a measure and design, and the default one: the
    one whose coverage is guaranteed (`estimators._defaults`)."""
    if design == "stratified" and measure in ("recall", "f1"):
        allowed = _FINITE_SEGMENT_METHODS if finite else _SEGMENT_METHODS
        return allowed, allowed[0]
    if measure == "f1":
        return LOSCI_METHODS, default_method("f1")
    if finite:
        return ("hypergeometric", *PROPORTION_METHODS), "hypergeometric"
    return PROPORTION_METHODS, "clopper-pearson"


def _segment_sizes(value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise ValueError(f"`segment_sizes` must be a pair (N1, N0) of document counts; got "
                         f"{check.show(value)}.")
    sizes = (check.whole(value[0], "segment_sizes[0]"), check.whole(value[1], "segment_sizes[1]"))
    if sizes[0] + sizes[1] == 0:
        raise ValueError(f"`segment_sizes` must not both be 0; got {check.show(value)}.")
    return sizes


def _request(measure: Any, design: Any, target: Any, confidence_level: Any, interval: Any,
             posterior: Any, population_size: Any, segment_sizes: Any,
             target_name: str = "target") -> _Request:
    measure = check.choice(measure, "measure", CERTIFICATION_MEASURES)
    design = check.choice(design, "design", CERTIFICATION_DESIGNS)
    theta = check.open_unit(target, target_name)
    level = check.open_unit(confidence_level, "confidence_level")
    sizes = _segment_sizes(segment_sizes)
    total = None if population_size is None else check.positive_int(population_size,
                                                                     "population_size")
    if design == "stratified":
        if measure == "accuracy":
            raise ValueError("`measure` must be one of 'f1', 'recall', 'precision', 'elusion' "
                             "with design='stratified' (accuracy is planned on a simple "
                             "random sample); got 'accuracy'.")
        if sizes is None:
            raise ValueError("`segment_sizes` must be given with design='stratified' (the "
                             "collection's retrieved and unretrieved documents, N1 and N0); "
                             "got None.")
    elif total is not None and measure in ("recall", "f1"):
        raise ValueError(f"`population_size` applies to measure={measure!r} only with "
                         "design='stratified' (the relevant documents' number is unknown, so "
                         "no exact finite-population bound exists for a simple random "
                         f"sample); got {check.show(population_size)}.")
    elif total is not None and measure != "accuracy" and sizes is None:
        raise ValueError(f"`segment_sizes` must be given with population_size for "
                         f"measure={measure!r} (the segment's size is the bound's "
                         "population); got None.")
    elif total is None and sizes is not None:
        raise ValueError("`segment_sizes` applies to design='stratified' or a finite "
                         "population; got it with design='srs' and population_size=None.")
    if total is not None and sizes is not None and sum(sizes) != total:
        raise ValueError(f"`population_size` must equal the documents of `segment_sizes`, "
                         f"{sizes[0]} + {sizes[1]} = {sum(sizes)}; got {total}.")
    allowed, default = _interval_choices(measure, design, total is not None)
    method = default if interval is None else check.choice(interval, "interval", allowed)
    if posterior is None:
        model = "known-share" if (measure == "f1" and design == "srs") or design == "stratified" \
            else "dirichlet"
    else:
        model = check.choice(posterior, "posterior", POSTERIORS)
    if design == "stratified" and model != "known-share":
        raise ValueError("`posterior` must be 'known-share' with design='stratified' (the "
                         "segment sizes fix the retrieved share); got 'dirichlet'.")
    if design == "srs" and model == "known-share" and measure != "f1":
        raise ValueError(f"`posterior` must be 'dirichlet' for measure={measure!r} under "
                         "design='srs' (its exact assurance; the simulated known-share path "
                         "plans F1 only); got 'known-share'.")
    if design == "srs" and model == "known-share" and total is not None:
        raise ValueError("`population_size` must be None on the simulated known-share path "
                         "(F1 under design='srs'); got "
                         f"{check.show(population_size)}.")
    return _Request(measure=measure, design=design, theta=theta, level=level, interval=method,
                    posterior=model, population_size=total, segment_sizes=sizes)


def _refuse_logit_delta(req: _Request) -> None:
    if req.interval == "logit-delta":
        raise ValueError("`interval` must not be 'logit-delta' on the exact path "
                         "(posterior='dirichlet'): its bound is undefined when every "
                         "relevant or retrieved document is a true positive, so passing counts "
                         "are not all those above a threshold; got 'logit-delta'.")


def _split(values: Array, cells: tuple[int, ...], within: tuple[int, ...]) -> tuple[float, float]:
    inside = float(sum(values[i] for i in cells))
    return inside, float(sum(values[i] for i in within)) - inside


def _assumptions(req: _Request) -> tuple[str, ...]:
    said = []
    if req.design == "srs":
        said.append("the test set is a simple random sample of the collection")
    else:
        said.append("the retrieved and unretrieved segments are sampled separately, at "
                    "random within each")
    if req.finite:
        said.append(f"drawn without replacement from {req.population_size} documents "
                    "(hypergeometric counts)")
    else:
        said.append("the collection is large enough to treat as infinite (binomial counts)")
    if req.posterior == "dirichlet":
        said.append("planned over the Jeffreys Dirichlet posterior of the labelled sample's "
                    "four cells")
    elif req.design == "stratified":
        said.append("planned over Jeffreys Beta posteriors of each segment's relevant share, "
                    "the retrieved share known from the segment sizes")
    else:
        said.append("planned over the paper's posterior: Jeffreys Beta segments, the "
                    "retrieved share known (Bagdouri et al. 2013, section 4.3)")
    said.append("the labelled sample comes from the same population as the test set")
    return tuple(said)
