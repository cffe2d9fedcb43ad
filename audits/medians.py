"""Audits of the exponential-mechanism and median mechanisms of seeds 000, 003 and 004 (SPEC §3-§5).

Reference mechanisms, each audited black-box and with its exact law: the finite exponential
mechanism calibrated by range on a monotone utility (seed 003), the quantile exponential
mechanism under change-one and add/remove (seed 004), Duff's median (seed 000), and the two
smooth-sensitivity medians (NRS07; seed 000 Prop 2 corrected). Negative controls, each expected
REFUTED:

* ``em-range.broken-replace``: range calibration exp(ε·u/range) with range = Δu = 1 for a count
  utility under *replace* neighbours, where it is not monotone and the range is 2 (seed 003's
  monotone case does not apply; SPEC §4.1): true ε = 2ε.
* ``quantile.broken-calibration``: the add/drop calibration Δu = max(q, 1 − q) (S4 Thm 3) used
  under change-one neighbours, where Δu = 1 (S4 Thm 2).
* ``duff.broken-exponent``: Duff with exponent ε·u instead of ε·u/2 (seed 000 Def 7 needs ε/2
  because Δu = 1 moves both the score and the normaliser).
* ``smooth.broken-local-sensitivity``: the median plus noise scaled to the *local* sensitivity
  (NRS07 §1's example): neighbours with LS = 0 and LS > 0 give an atom against a density.
"""

from __future__ import annotations

import numpy as np

from dpaudit.claims import Domain
from dpaudit.spec import MechanismSpec
from dpaudit.suite import exact, sampled
from dpaudit.reference.duff import Duff
from dpaudit.reference.exponential import ExponentialMechanism, count_utility, top_item_mechanism
from dpaudit.reference.quantile import QuantileEM
from dpaudit.reference.smooth_mechanisms import SmoothCauchyMedian, SmoothLaplaceMedian
from dpaudit.reference.smooth_sensitivity import median_local_sensitivity, median_of

SAMPLES = 300_000


# -- broken variants (negative controls) -----------------------------------------------------------

def _counts(d: np.ndarray) -> np.ndarray:
    return np.bincount(np.clip(np.rint(d), 0, 3).astype(int), minlength=4).astype(float)


_EM_REPLACE = ExponentialMechanism(1.0, (0.0, 1.0, 2.0, 3.0), count_utility, 1.0, "range", "replace",
                                   Domain(-0.5, 3.5), _counts)


def em_range_under_replace(data, rng, size=None):
    """The most frequent of 4 items by exp(ε·count/range) with range taken as Δu = 1; under
    replace a record moves from one item to another, so the range is 2."""
    return _EM_REPLACE.sample(data, rng, size)


def em_replace_spec() -> MechanismSpec:
    return MechanismSpec.from_function(
        em_range_under_replace, name="EM, range calibration with range = Δu under replace (claims ε=1)",
        epsilon=1.0, neighbours="replace", domain=(-0.5, 3.5), size=6, output="discrete",
        distribution=_EM_REPLACE.law)


_Q_ADD_REMOVE = QuantileEM(1.0, q=0.5, neighbours="add-remove")


def quantile_wrong_calibration(data, rng, size=None):
    """The median by the quantile EM calibrated with Δu = max(q, 1 − q) = ½ (the add/drop bound)
    but claimed under change-one, where Δu = 1."""
    return _Q_ADD_REMOVE.sample(data, rng, size)


def quantile_wrong_spec() -> MechanismSpec:
    return MechanismSpec.from_function(
        quantile_wrong_calibration, name="quantile EM with the add/drop Δu under change-one (claims ε=1)",
        epsilon=1.0, neighbours="replace", domain=(0.0, 1.0), size=9, output="real",
        distribution=_Q_ADD_REMOVE.law)


_DUFF_EPS = Duff(2.0)   # density ∝ exp(2·(−c)/2) = exp(ε·u) at ε = 1


def duff_exponent_eps(data, rng, size=None):
    """Duff's median with density ∝ exp(ε·u(x)) instead of exp(ε·u(x)/2)."""
    return _DUFF_EPS.sample(data, rng, size)


def duff_exponent_spec() -> MechanismSpec:
    return MechanismSpec.from_function(
        duff_exponent_eps, name="Duff with exponent ε instead of ε/2 (claims ε=1)", epsilon=1.0,
        neighbours="add-remove", domain=(0.0, 1.0), size=9, output="real", distribution=_DUFF_EPS.law)


def median_plus_local_noise(data, rng, size=None):
    """The (LOW) median plus Cauchy noise of scale LS(S)/α, α = ε/6: local, not smooth, sensitivity."""
    x = np.clip(np.asarray(data, dtype=float), 0.0, 1.0)
    scale = median_local_sensitivity(x, 0.0, 1.0, "replace") / (1.0 / 6.0)
    n = 1 if size is None else size
    out = median_of(x, "low") + scale * np.tan(np.pi * (rng.random(n) - 0.5))
    return float(out[0]) if size is None else out


def local_noise_spec() -> MechanismSpec:
    return MechanismSpec.from_function(
        median_plus_local_noise, name="median + local-sensitivity Cauchy noise (claims ε=1)", epsilon=1.0,
        neighbours="replace", domain=(0.0, 1.0), size=9, output="real")


AUDITS = [
    sampled("em-range.sampled", lambda: top_item_mechanism(1.0, calibration="range").spec(), samples=SAMPLES,
            description="most frequent item by exp(ε·count/range): monotone under add/remove, range = Δu = 1 "
                        "(seed 003, SPEC §4.1)"),
    exact("em-range.exact", lambda: top_item_mechanism(1.0, calibration="range").spec(), examples=80,
          description="exact pmf of the range-calibrated exponential mechanism over searched pairs"),
    exact("em-range.broken-replace.exact", em_replace_spec, examples=80, expected="refuted",
          description="control: range = Δu assumed for a count utility under replace (range is 2)"),
    sampled("em-range.broken-replace.sampled", em_replace_spec, samples=SAMPLES, expected="refuted",
            description="control: range = Δu assumed under replace, sampled"),
    sampled("quantile.replace.sampled", lambda: QuantileEM(1.0, q=0.5, neighbours="replace").spec(),
            samples=SAMPLES, description="median by the quantile EM, change-one, Δu = 1 (seed 004 Thm 2, SPEC §4.3)"),
    exact("quantile.replace.exact", lambda: QuantileEM(1.0, q=0.5, neighbours="replace").spec(), examples=80,
          description="exact density of the quantile EM (change-one) over searched pairs"),
    exact("quantile.add-remove.exact", lambda: QuantileEM(1.0, q=0.25, neighbours="add-remove").spec(),
          examples=80, description="first quartile, add/drop, Δu = max(q, 1 − q) (seed 004 Thm 3 without the "
                                   "constant, SPEC §4.2)"),
    sampled("quantile.add-remove.sampled", lambda: QuantileEM(1.0, q=0.25, neighbours="add-remove").spec(),
            samples=SAMPLES, description="first quartile by the quantile EM, add/drop, sampled"),
    exact("quantile.broken-calibration.exact", quantile_wrong_spec, examples=80, expected="refuted",
          description="control: the add/drop Δu = ½ used under change-one neighbours"),
    sampled("duff.sampled", lambda: Duff(1.0).spec(), samples=SAMPLES,
            description="Duff's median (AVG convention), density ∝ exp(ε·u/2), add/remove (seed 000, SPEC §5)"),
    exact("duff.exact", lambda: Duff(1.0).spec(), examples=80,
          description="exact piecewise density of Duff (AVG) over searched pairs"),
    exact("duff-low.exact", lambda: Duff(1.0, convention="low").spec(), examples=80,
          description="exact piecewise density of Duff (LOW convention) over searched pairs"),
    exact("duff.broken-exponent.exact", duff_exponent_spec, examples=80, expected="refuted",
          description="control: Duff with exponent ε·u instead of ε·u/2"),
    sampled("duff.broken-exponent.sampled", duff_exponent_spec, samples=SAMPLES, expected="refuted",
            description="control: Duff with exponent ε·u instead of ε·u/2, sampled"),
    sampled("smooth-cauchy.sampled", lambda: SmoothCauchyMedian(1.0).spec(), samples=SAMPLES,
            description="median + (SS_β/α)·Cauchy, α = β = ε/6, replace (NRS07; SPEC §3.5)"),
    exact("smooth-cauchy.exact", lambda: SmoothCauchyMedian(1.0).spec(), examples=40,
          description="exact Cauchy law given the data, over searched pairs"),
    sampled("smooth-laplace.sampled", lambda: SmoothLaplaceMedian(1.0, 0.01).spec(), samples=SAMPLES,
            description="(ε, δ) = (1, 0.01) median + (SS_β/α)·Laplace, β = ε/(2 ln(2/δ')) (seed 000 Prop 2 "
                        "corrected, SPEC §3.5)"),
    sampled("smooth.broken-local-sensitivity.sampled", local_noise_spec, samples=SAMPLES, expected="refuted",
            description="control: noise scaled to the local sensitivity (NRS07 §1)"),
]
