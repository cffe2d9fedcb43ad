"""Audits of the exponential-mechanism and median mechanisms of Muñoz Medina and Gillenwater (2020), Dong (2020) and the EM-for-medians notes (2020) (docs/math.md#smooth-sensitivity, #exponential-mechanism, #duff).

Reference mechanisms, each audited black-box and with its exact law: the finite exponential
mechanism calibrated by range on a monotone utility (Dong (2020)), the quantile exponential
mechanism under change-one and add/remove (the EM-for-medians notes (2020)), Duff's median (Muñoz Medina and Gillenwater (2020)), and the two
smooth-sensitivity medians (NRS07; Muñoz Medina and Gillenwater (2020) Prop 2 corrected). Negative controls
(:mod:`dpaudit.reference.controls.medians`), each expected REFUTED:

* ``em-range.broken-replace``: range calibration exp(ε·u/range) with range = Δu = 1 for a count
  utility under *replace* neighbours, where it is not monotone and the range is 2 (Dong (2020)'s
  monotone case does not apply; docs/math.md#em-range): true ε = 2ε.
* ``quantile.broken-calibration``: the add/drop calibration Δu = max(q, 1 − q) (the EM-for-medians notes (2020) Thm 3) used
  under change-one neighbours, where Δu = 1 (the EM-for-medians notes (2020) Thm 2).
* ``duff.broken-exponent``: Duff with exponent ε·u instead of ε·u/2 (Muñoz Medina and Gillenwater (2020) Def 7 needs ε/2
  because Δu = 1 moves both the score and the normaliser).
* ``smooth.broken-local-sensitivity``: the median plus noise scaled to the *local* sensitivity
  (NRS07 §1's example): neighbours with LS = 0 and LS > 0 give an atom against a density.

The continuous ones are sampled as models over the reals (``spec().idealised()``): their float64
samplers add noise to a data-dependent value, so the sets of doubles they can output differ
between neighbours (Mironov 2012), which the float-structure events would rightly report
(README, "Floating point").
"""

from __future__ import annotations

from dpaudit.suite import exact, sampled
from dpaudit.reference.controls.medians import (
    duff_exponent_spec,
    em_replace_spec,
    local_noise_spec,
    quantile_wrong_spec,
)
from dpaudit.reference.duff import Duff
from dpaudit.reference.exponential import top_item_mechanism
from dpaudit.reference.quantile import QuantileEM
from dpaudit.reference.smooth_mechanisms import SmoothCauchyMedian, SmoothLaplaceMedian

SAMPLES = 300_000


AUDITS = [
    sampled("em-range.sampled", lambda: top_item_mechanism(1.0, calibration="range").spec(), samples=SAMPLES,
            description="most frequent item by exp(ε·count/range): monotone under add/remove, range = Δu = 1 "
                        "(Dong (2020), docs/math.md#em-range)"),
    exact("em-range.exact", lambda: top_item_mechanism(1.0, calibration="range").spec(), examples=80,
          description="exact pmf of the range-calibrated exponential mechanism over searched pairs"),
    exact("em-range.broken-replace.exact", em_replace_spec, examples=80, expected="refuted",
          description="control: range = Δu assumed for a count utility under replace (range is 2)"),
    sampled("em-range.broken-replace.sampled", em_replace_spec, samples=SAMPLES, expected="refuted",
            description="control: range = Δu assumed under replace, sampled"),
    sampled("quantile.replace.sampled", lambda: QuantileEM(1.0, q=0.5, neighbours="replace").spec(),
            samples=SAMPLES, description="median by the quantile EM, change-one, Δu = 1 (the EM-for-medians notes (2020) Thm 2, docs/math.md#quantile-sampler)"),
    exact("quantile.replace.exact", lambda: QuantileEM(1.0, q=0.5, neighbours="replace").spec(), examples=80,
          description="exact density of the quantile EM (change-one) over searched pairs"),
    exact("quantile.add-remove.exact", lambda: QuantileEM(1.0, q=0.25, neighbours="add-remove").spec(),
          examples=80, description="first quartile, add/drop, Δu = max(q, 1 − q) (the EM-for-medians notes (2020) Thm 3 without the "
                                   "constant, docs/math.md#quantile-utility)"),
    sampled("quantile.add-remove.sampled",
            lambda: QuantileEM(1.0, q=0.25, neighbours="add-remove").spec().idealised(), samples=SAMPLES,
            description="first quartile by the quantile EM, add/drop, sampled"),
    exact("quantile.broken-calibration.exact", quantile_wrong_spec, examples=80, expected="refuted",
          description="control: the add/drop Δu = ½ used under change-one neighbours"),
    sampled("duff.sampled", lambda: Duff(1.0).spec().idealised(), samples=SAMPLES,
            description="Duff's median (AVG convention), density ∝ exp(ε·u/2), add/remove (Muñoz Medina and Gillenwater (2020), docs/math.md#duff)"),
    exact("duff.exact", lambda: Duff(1.0).spec(), examples=80,
          description="exact piecewise density of Duff (AVG) over searched pairs"),
    exact("duff-low.exact", lambda: Duff(1.0, convention="low").spec(), examples=80,
          description="exact piecewise density of Duff (LOW convention) over searched pairs"),
    exact("duff.broken-exponent.exact", duff_exponent_spec, examples=80, expected="refuted",
          description="control: Duff with exponent ε·u instead of ε·u/2"),
    sampled("duff.broken-exponent.sampled", duff_exponent_spec, samples=SAMPLES, expected="refuted",
            description="control: Duff with exponent ε·u instead of ε·u/2, sampled"),
    sampled("smooth-cauchy.sampled", lambda: SmoothCauchyMedian(1.0).spec().idealised(), samples=SAMPLES,
            description="median + (SS_β/α)·Cauchy, α = β = ε/6, replace (NRS07; docs/math.md#ss-mechanisms)"),
    exact("smooth-cauchy.exact", lambda: SmoothCauchyMedian(1.0).spec(), examples=40,
          description="exact Cauchy law given the data, over searched pairs"),
    sampled("smooth-laplace.sampled", lambda: SmoothLaplaceMedian(1.0, 0.01).spec().idealised(), samples=SAMPLES,
            description="(ε, δ) = (1, 0.01) median + (SS_β/α)·Laplace, β = ε/(2 ln(2/δ')) (Muñoz Medina and Gillenwater (2020) Prop 2 "
                        "corrected, docs/math.md#ss-mechanisms)"),
    sampled("smooth.broken-local-sensitivity.sampled", local_noise_spec, samples=SAMPLES, expected="refuted",
            description="control: noise scaled to the local sensitivity (NRS07 §1)"),
]
