"""Audits of the oblivious noise mechanisms of Chen, Pal and Golubchik (2016) (docs/math.md#oblivious-noise), with broken variants as controls.

Every reference mechanism is audited black-box (sampled) and white-box (exact output law).
The continuous ones are sampled as models over the reals (``spec().idealised()``): their float64
samplers add noise to a data-dependent value, so the sets of doubles they can output differ
between neighbours (Mironov 2012), which the float-structure events would rightly report
(README, "Floating point"). The
negative controls (:mod:`dpaudit.reference.controls.noise`) are the seed's own misprints made
executable, plus one classic implementation slip; each is expected to be REFUTED:

* ``laplace.broken-eq6``: Laplace noise read off Chen, Pal and Golubchik (2016) eq (6) as printed, whose exponent lacks ε: the
  scale is Δ whatever ε is, so a claim of ε = 0.5 is really ε = 1 (docs/math.md#e8).
* ``geometric.broken-eq10``: the quantised geometric with ratio ρ per step d instead of
  ρ^{d/Δ} (Chen, Pal and Golubchik (2016) eq (10), docs/math.md#e10): with d = Δ/4 the true ε is 4ε.
* ``prerounding.broken-fine-grid``: pre-rounding onto a grid finer than the noise step (Δ/2
  instead of Δ): neighbours land on disjoint lattices, an infinite privacy loss (docs/math.md#pre-rounding needs
  rounding cells of width Δ).
* ``collusion.broken-median``: the colluders' median of k = 5 releases presented as one ε-DP
  release; composition makes it up to 5ε-DP (Chen, Pal and Golubchik (2016) §5.3, docs/math.md#e16).
"""

from __future__ import annotations

from dpaudit.spec import MechanismSpec
from dpaudit.suite import exact, sampled
from dpaudit.reference.collusion import round_to_count
from dpaudit.reference.controls.noise import (
    canonical_sum,
    collusion_spec,
    geometric_eq10_spec,
    laplace_eq6_spec,
    prerounding_fine_spec,
)
from dpaudit.reference.geometric import Geometric
from dpaudit.reference.laplace import Laplace
from dpaudit.reference.prerounding import PreRounding
from dpaudit.reference.staircase import Staircase

SAMPLES = 300_000
_LAP = Laplace(1.0)
_QUANTISED = Geometric(1.0, sensitivity=1.0, step=0.25)


def count_remap(data, rng, size=None):
    """A count released with Laplace(1/ε) noise and rounded to the nearest integer (Chen, Pal and Golubchik (2016) §4.2.3):
    post-processing, so still ε-DP."""
    return round_to_count(_LAP.sample(canonical_sum(data), rng, size))


def count_remap_spec() -> MechanismSpec:
    return MechanismSpec.from_function(count_remap, name="Laplace count, rounded (Chen, Pal and Golubchik (2016) §4.2.3)", epsilon=1.0,
                                       neighbours="add-remove", domain=(0.0, 1.0), size=10)


AUDITS = [
    sampled("laplace.sampled", lambda: Laplace(1.0).spec().idealised(), samples=SAMPLES,
            description="Laplace(Δ/ε) on the sum of records in [0, 1]: ε = 1, add-remove (docs/math.md#laplace)"),
    exact("laplace.exact", lambda: Laplace(1.0).spec(), examples=40,
          description="exact loss sup_y |ln p_D(y) − ln p_D'(y)| of the Laplace law over searched pairs"),
    sampled("laplace.broken-eq6.sampled", laplace_eq6_spec, samples=SAMPLES, expected="refuted",
            description="control: Chen, Pal and Golubchik (2016) eq (6) as printed (no ε in the exponent), claiming ε = 0.5"),
    exact("laplace.broken-eq6.exact", laplace_eq6_spec, examples=40, expected="refuted",
          description="control: Chen, Pal and Golubchik (2016) eq (6) as printed, exact law"),
    sampled("geometric.sampled", lambda: Geometric(1.0).spec(), samples=SAMPLES,
            description="two-sided geometric on ℤ (Ghosh et al.), ε = 1, add-remove (docs/math.md#geometric)"),
    exact("geometric.exact", lambda: Geometric(1.0).spec(), examples=60,
          description="exact pmf ratio of the two-sided geometric over searched pairs"),
    exact("geometric-quantised.exact", lambda: _QUANTISED.spec(), examples=60,
          description="quantised geometric, step d = Δ/4, ratio ρ^{d/Δ} (docs/math.md#geometric, Chen, Pal and Golubchik (2016) eq (10) corrected)"),
    sampled("geometric.broken-eq10.sampled", geometric_eq10_spec, samples=SAMPLES, expected="refuted",
            description="control: Chen, Pal and Golubchik (2016) eq (10) as printed (ratio ρ per step d = Δ/4): true ε = 4"),
    exact("geometric.broken-eq10.exact", geometric_eq10_spec, examples=60, expected="refuted",
          description="control: Chen, Pal and Golubchik (2016) eq (10) as printed, exact pmf"),
    sampled("staircase.sampled", lambda: Staircase(1.0).spec().idealised(), samples=SAMPLES,
            description="staircase noise at γ* = 1/(1 + e^{ε/2}), ε = 1 (docs/math.md#staircase)"),
    exact("staircase.exact", lambda: Staircase(1.0).spec(), examples=60,
          description="exact piecewise-constant staircase law over searched pairs"),
    sampled("prerounding.sampled", lambda: PreRounding(1.0).spec(), samples=SAMPLES,
            description="pre-rounding heuristic: round to Δℤ, add Δ·geometric (Chen, Pal and Golubchik (2016) §5.2.2, docs/math.md#pre-rounding)"),
    exact("prerounding.exact", lambda: PreRounding(1.0).spec(), examples=60,
          description="exact law of the pre-rounding heuristic over searched pairs"),
    sampled("prerounding.broken-fine-grid.sampled", prerounding_fine_spec, samples=SAMPLES,
            expected="refuted", description="control: rounding cells of width Δ/2: disjoint output lattices"),
    sampled("count-remap.sampled", count_remap_spec, samples=SAMPLES,
            description="Laplace count rounded to an integer (post-processing keeps ε = 1)"),
    sampled("collusion.broken-median.sampled", collusion_spec, samples=SAMPLES, expected="refuted",
            description="control: the median of 5 ε-DP releases is not ε-DP (composition, Chen, Pal and Golubchik (2016) §5.3)"),
]
