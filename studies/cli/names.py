"""The method names and defaults the parsers show, copied from their sources.

Building the parser must import no estimator, engine or report: those bring in scipy, pandas
and matplotlib, most of a second, which ``evalcert --help`` need not pay. The choices and
defaults the parsers show are copied here instead; ``tests/studies/cli/test_cli_startup.py``
checks that every copy equals its source, so that they cannot drift apart.
"""

from __future__ import annotations

__all__ = [
    "CERTIFICATION_DESIGNS",
    "CERTIFICATION_MEASURES",
    "F1_SRS_METHODS",
    "F1_STRATIFIED_METHODS",
    "FAMILYWISE_ERROR",
    "LOSCI_METHODS",
    "POSTERIORS",
    "PROPORTION_METHODS",
    "RECALL_STRATIFIED_METHODS",
    "STRATIFIED_METHODS",
]

# estimators.F1_METHODS_BY_DESIGN["srs"]: the F1 intervals of a simple random sample.
F1_SRS_METHODS: tuple[str, ...] = (
    "delta", "logit-delta", "beta-posterior", "bootstrap", "dirichlet-posterior", "jaccard-wald",
    "jaccard-wilson", "jaccard-wilson-cc", "jaccard-agresti-coull", "jaccard-clopper-pearson",
    "jaccard-jeffreys", "jaccard-mid-p",
)
# estimators.F1_METHODS_BY_DESIGN["stratified"]: the F1 intervals of a stratified sample.
F1_STRATIFIED_METHODS: tuple[str, ...] = (
    "delta", "logit-delta", "beta-posterior", "bootstrap", "segments-clopper-pearson",
    "segments-hypergeometric",
)
# estimators.RECALL_METHODS_BY_DESIGN["stratified"] (under "srs", PROPORTION_METHODS)
RECALL_STRATIFIED_METHODS: tuple[str, ...] = (
    "segments-clopper-pearson", "segments-hypergeometric", "delta",
)
# estimators.PROPORTION_METHODS
PROPORTION_METHODS: tuple[str, ...] = (
    "wald", "wilson", "wilson-cc", "agresti-coull", "clopper-pearson", "jeffreys", "mid-p",
)
# estimators.CERTIFICATION_MEASURES, estimators.CERTIFICATION_DESIGNS
CERTIFICATION_MEASURES: tuple[str, ...] = ("f1", "recall", "precision", "accuracy", "elusion")
CERTIFICATION_DESIGNS: tuple[str, ...] = ("srs", "stratified")
# estimators.LOSCI_METHODS, estimators.POSTERIORS
LOSCI_METHODS: tuple[str, ...] = (
    "delta", "logit-delta", "dirichlet-posterior", "jaccard-wald", "jaccard-wilson",
    "jaccard-wilson-cc", "jaccard-agresti-coull", "jaccard-clopper-pearson", "jaccard-jeffreys",
    "jaccard-mid-p",
)
POSTERIORS: tuple[str, ...] = ("known-share", "dirichlet")
# estimators.STRATIFIED_METHODS
STRATIFIED_METHODS: tuple[str, ...] = ("jeffreys", "mover-wilson", "korn-graubard", "wald")
# studies.report.compare.FAMILYWISE_ERROR: the default of ``study compare --familywise-error``.
FAMILYWISE_ERROR = 1e-3
