"""Certification planning: how many documents to label so that the test passes with a power.

A certification test labels a test set, computes a one-sided confidence bound on a measure and
passes when the bound clears the target ``theta``. Its *power* is the probability of passing;
planned from the practitioner's labelled sample it is averaged over the sample's posterior
(the *assurance*; Bagdouri, Webber, Lewis & Oard 2013, section 4.3). This module answers
"how many documents?" for every measure and design:

========= ============================================ =====================================
measure   the bound is a count among trials            simple random sample (``design="srs"``)
========= ============================================ =====================================
accuracy  ``tp + tn`` among the ``s`` documents          ``s`` fixed
precision ``tp`` among the retrieved ``n1``              ``n1 | s`` binomial
recall    ``tp`` among the relevant ``m``                ``m | s`` binomial
elusion   ``fn`` among the unretrieved ``n0`` (upper)    ``n0 | s`` binomial
f1        ``tp`` among ``m = tp + fp + fn`` (Jaccard)    ``m | s`` binomial
========= ============================================ =====================================

Given its trials the count is binomial, so the power is a finite sum over the counts
(`estimators.assurance`): exact, no simulation and no seed. Under the Jeffreys Dirichlet
posterior of the four cells (``posterior="dirichlet"``) every one of these measures is a Beta
variable independent of the share of trials (the aggregation and neutrality properties of the
Dirichlet), so the assurance is the same sum with beta-binomial weights. The paper's
posterior, with the retrieved share known (``posterior="known-share"``), keeps Algorithms
1-2's simulation (F1 only, `estimators.power`).

``design="stratified"`` samples the retrieved and unretrieved segments separately (seed 000,
Appendix A; section 7 names stratified test sampling as the next saving): ``tp`` among ``n1``
and ``fn`` among ``n0`` are independent, the bound on recall or F1 increases with ``tp`` and
(for the Bonferroni bounds) decreases with ``fn``, and the power is a sum over ``fn`` of a
tail in ``tp``; the allocation ``(n1, n0)`` of least labelling cost is searched for. A
finite collection (``population_size``) is sampled without replacement: hypergeometric
counts, exact
hypergeometric bounds, and a test set never larger than its population (seed 000 section 7:
"each example annotated is an example to which the classifier need not be applied").

Power of an exact test is not monotone in the size (the saw-tooth of Chernick & Liu 2002):
a plan reports both the smallest size reaching the power and the smallest size beyond which
the power never falls below it, up to a stated search limit, with the whole power curve.
"""

from estimators._exact_power import certification_power
from estimators._planning_request import CERTIFICATION_DESIGNS, CERTIFICATION_MEASURES
from estimators._plans import CertificationPlan, PowerCurve
from estimators._sample_size import certification_sample_size

__all__ = ["CERTIFICATION_DESIGNS", "CERTIFICATION_MEASURES", "CertificationPlan",
           "PowerCurve", "certification_power", "certification_sample_size"]
