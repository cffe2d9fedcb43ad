"""Audits of sensitivity preprocessing (Cummings and Durfee (2020), docs/math.md#sensitivity-preprocessing, #spf-2d) and of the utilities of Muñoz Medina and Gillenwater (2020) and the EM-for-medians notes (2020).

Sensitivity searches (hypothesis, :func:`dpaudit.check_sensitivity`) on every preprocessed
statistic (median, mean, trimmed mean, max, min, variance; the general algorithm with individual
Δ_i; the 2-D ℓ1 version), on the quantile utility (the EM-for-medians notes (2020) Thms 2 and 3, without the constant)
and on Duff's utility (Muñoz Medina and Gillenwater (2020), Δu = 1); then the preprocessed median released with Laplace
noise, audited for privacy (the personalised mechanisms of Props 7.3/7.5 take datasets of a fixed
population, which the black-box auditor does not draw; they are checked in tests/property). Negative
controls (:mod:`dpaudit.reference.controls.sensitivity`), each expected REFUTED with a small
counterexample:

* ``raw-median.broken``: the raw median claimed to have sensitivity Δ (it has none below the
  domain width); ``raw-mean.broken``: a mean divided by the data-dependent count, claimed 1/10;
  ``unclipped-sum.broken``: a sum of records in [−10, 10] claimed to have sensitivity 1;
* ``spf-median.broken-upper-clamp-only``: the O(n) median chain (docs/math.md#spf-median) that clamps from
  above only (a planted bug);
* ``quantile-utility.broken-eq22``: the EM-for-medians notes (2020) eq (2.2) as written, whose add/drop sensitivity is
  2·max(q, 1 − q), not max(q, 1 − q) (docs/math.md#quantile-utility, #e30).
"""

from __future__ import annotations

import numpy as np

from dpaudit.claims import SensitivityBound
from dpaudit.spec import MechanismSpec
from dpaudit.suite import exact, sampled, sensitivity
from dpaudit.reference.controls.sensitivity import (
    mean_over_count,
    raw_median_or_centre,
    spf_median_upper_only,
    unclipped_sum,
)
from dpaudit.reference.duff import duff_utility
from dpaudit.reference.laplace import Laplace
from dpaudit.reference.quantile import quantile_utility, quantile_utility_eq22
from dpaudit.reference.sensitivity_preprocessing import GeneralSPF, MedianSPF, OrderedSPF, TwoDimSPF, VarianceSPF

EXAMPLES = 400
ADD_REMOVE = dict(neighbours="add-remove", domain=(0.0, 1.0), sizes=(0, 10), examples=EXAMPLES)
DELTAS = (0.1, 0.3, 0.05, 0.2, 0.15, 0.25)


def sum_and_max(records: np.ndarray) -> np.ndarray:
    """A function into ℝ²: (Σ x, max x) for the 2-D ℓ1 preprocessing."""
    return np.array([records.sum(), records.max(initial=0.0)])


def first_quartile_utility(data: np.ndarray, r: float) -> float:
    """The quantile utility at q = ¼ (the EM-for-medians notes (2020), without the constant)."""
    return quantile_utility(data, r, 0.25)


AUDITS = [
    sensitivity("spf-median.sensitivity", lambda: MedianSPF(0.1, 0.5), **ADD_REMOVE,
                description="preprocessed median, O(n) chain: add/remove sensitivity ≤ Δ = 0.1 (Lemmas 5.4-5.5)"),
    sensitivity("spf-mean.sensitivity", lambda: OrderedSPF("mean", 0.1, 0.5), **ADD_REMOVE,
                description="preprocessed mean, O(n²) ordered DP: sensitivity ≤ Δ = 0.1 (Lemma 5.2)"),
    sensitivity("spf-trimmed-mean.sensitivity", lambda: OrderedSPF("trimmed-mean", 0.1, 0.5, alpha=0.2),
                **ADD_REMOVE, description="preprocessed 20%-trimmed mean: sensitivity ≤ Δ = 0.1 (Cor 5.3)"),
    sensitivity("spf-max.sensitivity", lambda: OrderedSPF("max", 0.1, 0.5), **ADD_REMOVE,
                description="preprocessed max: sensitivity ≤ Δ = 0.1 (Cor 5.3)"),
    sensitivity("spf-min.sensitivity", lambda: OrderedSPF("min", 0.1, 0.5), **ADD_REMOVE,
                description="preprocessed min: sensitivity ≤ Δ = 0.1 (Cor 5.3)"),
    sensitivity("spf-variance.sensitivity", lambda: VarianceSPF(0.02), **ADD_REMOVE,
                description="preprocessed variance: sensitivity ≤ Δ = 0.02 (Lemma 6.4)"),
    sensitivity("spf-general-individual.sensitivity", lambda: GeneralSPF(raw_median_or_centre, DELTAS, centre=0.5),
                neighbours="add-remove", domain=(0.0, 1.0), sizes=(0, 6), examples=EXAMPLES,
                description="general algorithm on the median with individual Δ_i: "
                            "|f̂(D ∪ {i}) − f̂(D)| ≤ Δ_i (Def 3.1, Lemma 3.5)"),
    sensitivity("spf-2d-l1.sensitivity", lambda: TwoDimSPF(sum_and_max, DELTAS, centre=0.0),
                neighbours="add-remove", domain=(0.0, 1.0), sizes=(0, 6), examples=EXAMPLES,
                description="2-D ℓ1 preprocessing of (Σx, max x): ‖f̂(D ∪ {i}) − f̂(D)‖₁ ≤ Δ_i (Thm 8.3)"),
    sensitivity("raw-median.broken.sensitivity", raw_median_or_centre, bound=0.1, expected="refuted", **ADD_REMOVE,
                description="control: the raw median claimed to have sensitivity 0.1"),
    sensitivity("raw-mean.broken.sensitivity", mean_over_count, bound=0.1, expected="refuted", **ADD_REMOVE,
                description="control: Σx/|D| claimed to have sensitivity 1/10"),
    sensitivity("unclipped-sum.broken.sensitivity", unclipped_sum, bound=1.0, expected="refuted",
                neighbours="add-remove", domain=(-10.0, 10.0), sizes=(0, 8), examples=EXAMPLES,
                description="control: an unclipped sum of records in [−10, 10] claimed to have sensitivity 1"),
    sensitivity("spf-median.broken-upper-clamp-only.sensitivity", spf_median_upper_only, bound=0.1,
                expected="refuted", **ADD_REMOVE,
                description="control: the median chain clamping from above only"),
    sensitivity("quantile-utility.change-one.sensitivity", quantile_utility, bound=1.0,
                neighbours="replace", domain=(0.0, 1.0), sizes=(1, 10), outputs=(0.0, 1.0), examples=EXAMPLES,
                description="quantile utility −|(1−q)C< − qC>|, q = ½, change-one: Δu ≤ 1 (the EM-for-medians notes (2020) Thm 2)"),
    sensitivity("quantile-utility.add-remove.sensitivity", first_quartile_utility, bound=0.75, outputs=(0.0, 1.0), **ADD_REMOVE,
                description="quantile utility, q = ¼, add/drop: Δu ≤ max(q, 1 − q) (the EM-for-medians notes (2020) Thm 3, no constant)"),
    sensitivity("quantile-utility.broken-eq22.sensitivity", quantile_utility_eq22, bound=0.5,
                outputs=(-1.0, 2.0), expected="refuted", **ADD_REMOVE,
                description="control: the EM-for-medians notes (2020) eq (2.2) as written, claimed Δu ≤ max(q, 1 − q) = ½ (E30)"),
    sensitivity("duff-utility.sensitivity", duff_utility, bound=1.0, outputs=(0.0, 1.0), **ADD_REMOVE,
                description="Duff's utility −c(x) (AVG): add/remove Δu ≤ 1 (Muñoz Medina and Gillenwater (2020), docs/math.md#duff-definition)"),
]

_SPF_MEDIAN = MedianSPF(0.1, 0.5)
_NOISE = Laplace(1.0, sensitivity=0.1)


def spf_median_laplace(data, rng, size=None):
    """The preprocessed median (Δ = 0.1) released with Laplace(Δ/ε) noise: ε-DP under add/remove."""
    return _NOISE.sample(_SPF_MEDIAN(data), rng, size)


def spf_median_laplace_spec() -> MechanismSpec:
    return MechanismSpec.from_function(
        spf_median_laplace, name="preprocessed median + Laplace(Δ/ε)", epsilon=1.0, neighbours="add-remove",
        domain=(0.0, 1.0), size=8, distribution=lambda data: _NOISE.law(_SPF_MEDIAN(data)))


AUDITS += [
    sampled("spf-median-laplace.sampled", lambda: spf_median_laplace_spec().idealised(), samples=300_000,
            description="the preprocessed median released with Laplace(Δ/ε): ε = 1 under add/remove (Prop 7.3)"),
    exact("spf-median-laplace.exact", spf_median_laplace_spec, examples=30,
          description="exact Laplace law at f̂(D) over searched pairs"),
]

# The claims themselves, for readers of this file: each search above states its bound; the
# preprocessed objects state theirs as ``.sensitivity``.
assert MedianSPF(0.1, 0.5).sensitivity == SensitivityBound(0.1)
