"""Sampling estimates of a proportion and of TREC-5 linear utility, with their variances.

Lewis (1996), *The TREC-5 Filtering Track*, sections 5-8 (seed 004), estimates the share ``p``
of relevant documents in a submitted set of ``N`` documents from a judged random sample, and
from it the set's linear utility ``u = u_a A + u_b B = ((u_a - u_b) p + u_b) N`` (eq. 1):

* :func:`srs_estimate`: a simple random sample (eq. 6, 28-30);
* :func:`stratified_proportion`: eq. 6-7 and 29/34 for many samples of one design at once,
  vectorized (simulation studies);
* :class:`StratifiedEstimate`: a stratified random sample (eq. 7, 31-35), with
  :meth:`~StratifiedEstimate.utility` giving :class:`UtilityEstimate` (eq. 25-27, 35);
* :class:`MembershipStrata`: the strata of section 5.2.1 (Figure 1), one per pattern of
  membership in the runs' submitted sets, and every run's estimate from one sample;
* :func:`allocate`: sample sizes per stratum (the TREC-5 rule of section 5.3, proportional,
  Neyman);
* :func:`pooled_estimate`: the pooled estimate of section 5.1, a lower bound on the utility.

Interval methods (``confidence_interval(method=...)``)
------------------------------------------------------

=================  =====================================================  ====================
method             construction                                           strata showing 0 or
                                                                          all positives
=================  =====================================================  ====================
``jeffreys``       exact equal-tailed posterior interval of the           keep their
(default)          finite-population proportion: independent Jeffreys     uncertainty
                   Beta(1/2, 1/2) priors per stratum, beta-binomial
                   predictive for each stratum's unsampled documents,
                   convolved exactly ([E1969]; [BCD2001] section 4.1.2)
``mover-wilson``   Zou-Donner MOVER for ``sum W_h p_h`` from per-stratum  keep their
                   Wilson score intervals with the hypergeometric         uncertainty
                   (finite-population) variance ([ZD2008]; [ZHZ2009])
``korn-graubard``  Clopper-Pearson at the effective sample size           never a point, but
                   ``p (1 - p) / Var`` ([KG1998]); the design's size      too short when only
                   under a common ``p`` when ``Var`` is 0                 some strata show 0
``wald``           the paper's normal interval ``p +- z sqrt(Var)``       contribute no width;
                   (Lewis 1996, section 8)                                a point if all do
=================  =====================================================  ====================

``wald`` is Lewis's interval; section 9.3 reports that it degenerated to a point in 32 of the 48
cases where the pooled estimate lay above it, because no relevant document was sampled. Exact
coverage (summed over the hypergeometric sampling distribution,
``tests/estimators/test_sampling.py``) of the nominal 95% intervals in that worst case, 256
documents with 6 relevant in two strata of 200 and 56 sampled 50 + 50: ``jeffreys`` 0.960,
``mover-wilson`` 0.960, ``korn-graubard`` 0.686, ``wald`` 0.687; a simple random sample of 30 from
500 documents with 5 relevant: 0.969, 0.969, 0.998, 0.267. ``jeffreys`` is the default:
deterministic, free of the variance estimate, and near the nominal level in these cases and in the
Figure 2 populations (0.993, 0.948, 0.963 for R1-R3, where ``wald`` gives 0.950, 0.942, 0.862).

Policies
--------
* Sampling is without replacement within each stratum, independently across strata.
* **Empty stratum** (``N_h = 0``): allowed, weight 0; ``sampled`` and ``positives`` must be 0.
* **Unsampled non-empty stratum** (``n_h = 0 < N_h``): no information about its ``p_h``, so
  ``p`` is undefined: nan estimate, variance and bounds (the package's one policy for no
  information; listed in ``unsampled_strata``). No unbiased estimate of ``p`` exists without
  a sample from every stratum.
* **Fully sampled stratum** (``n_h = N_h``): known exactly, contributes no variance (eq. 33
  has the factor ``N_h - n_h``); listed in ``fully_sampled_strata``. If every stratum is fully
  sampled, every interval is the point ``p``.
* **One sampled document** (``n_h = 1 < N_h``): eq. 33 divides by ``n_h - 1 = 0``, so the
  variance cannot be estimated. ``variance`` (and the utility's ``mse``) are nan, the stratum
  is listed in ``unestimable_strata``, and ``wald``/``korn-graubard`` give nan bounds;
  ``jeffreys`` and ``mover-wilson`` do not use the variance estimate and stay defined.
* **Empty population** (every ``N_h = 0``, e.g. a run that submitted nothing): ``p`` is
  undefined (nan estimate, variance and bounds), as for ``ProportionEstimate(0, 0)``; the
  utility of an empty set is exactly 0 with MSE 0.
* **Certain range**: whatever the method, the true ``p`` lies in
  ``[sum a_h / N, (sum a_h + sum (N_h - n_h)) / N]`` (the unsampled documents are the only
  unknowns). Every interval is clipped to it, which can only raise coverage; a one-sided bound's
  other end is that range's end. The paper's Figure 2 R1 interval, 2.672 +- 12.3, is clipped
  this way above at u = 12 (33 relevant, 7 nonrelevant at best).
* Utility needs ``u_a > u_b`` (a relevant document worth more than a nonrelevant one), as for
  :func:`~estimators.confusion.optimal_threshold`; the utility interval is the proportion
  interval mapped through eq. 25.

References
----------
.. [L1996] Lewis, D. D. (1996). The TREC-5 Filtering Track. *TREC-5*, sections 5-9 (seed 004).
.. [C1977] Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed. Wiley: pp. 51-52 (simple
   random sampling of proportions), ch. 5 (stratified sampling: 5.5 optimum allocation,
   5.8 allocation requiring more than 100 percent sampling, 5.10 proportions).
.. [KG1998] Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with
   small expected number of positive counts estimated from survey data. *Survey Methodology*
   24, 193-201.
.. [ZD2008] Zou, G. Y. & Donner, A. (2008). Construction of confidence limits about effect
   measures: a general approach. *Statistics in Medicine* 27, 1693-1702.
.. [ZHZ2009] Zou, G. Y., Huang, W. & Zhang, X. (2009). A note on confidence interval estimation
   for a linear function of binomial proportions. *Computational Statistics & Data Analysis*
   53, 1080-1085.
.. [BCD2001] Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation for a
   binomial proportion. *Statistical Science* 16, 101-133.
.. [E1969] Ericson, W. A. (1969). Subjective Bayesian models in sampling finite populations.
   *Journal of the Royal Statistical Society B* 31, 195-233.
"""

from estimators._allocation import ALLOCATION_METHODS, allocate
from estimators._membership import MembershipStrata
from estimators._pooled import PooledEstimate, pooled_estimate
from estimators._stratified import (
    StratifiedEstimate,
    StratifiedProportion,
    UtilityEstimate,
    srs_estimate,
    stratified_proportion,
)
from estimators._stratified_intervals import STRATIFIED_METHODS

__all__ = [
    "ALLOCATION_METHODS",
    "STRATIFIED_METHODS",
    "MembershipStrata",
    "PooledEstimate",
    "StratifiedEstimate",
    "StratifiedProportion",
    "UtilityEstimate",
    "allocate",
    "pooled_estimate",
    "srs_estimate",
    "stratified_proportion",
]
