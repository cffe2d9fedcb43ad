"""Broken variants of the exponential-mechanism and median mechanisms (Muñoz Medina and Gillenwater 2020; Dong 2020; the EM-for-medians notes 2020; NRS07).

Negative controls, each with the claim it makes; an audit of each is expected to REFUTE it
(``audits/medians.py``):

* :func:`em_replace_spec`: range calibration exp(ε·u/range) with range = Δu = 1 for a count
  utility under *replace* neighbours, where it is not monotone and the range is 2 (Dong (2020)'s
  monotone case does not apply; docs/math.md#em-range): true ε = 2ε.
* :func:`quantile_wrong_spec`: the add/drop calibration Δu = max(q, 1 − q) (the EM-for-medians notes (2020) Thm 3) used under
  change-one neighbours, where Δu = 1 (the EM-for-medians notes (2020) Thm 2).
* :func:`duff_exponent_spec`: Duff with exponent ε·u instead of ε·u/2 (Muñoz Medina and Gillenwater (2020) Def 7 needs ε/2
  because Δu = 1 moves both the score and the normaliser).
* :func:`local_noise_spec`: the median plus noise scaled to the *local* sensitivity (NRS07 §1's
  example): neighbours with LS = 0 and LS > 0 give an atom against a density.
"""

from __future__ import annotations

import numpy as np

from dpaudit.claims import Domain
from dpaudit.spec import MechanismSpec
from ..analysis.smooth_sensitivity import median_local_sensitivity, median_of
from ..duff import Duff
from ..exponential import ExponentialMechanism, count_utility
from ..quantile import QuantileEM

__all__ = ["em_replace_spec", "quantile_wrong_spec", "duff_exponent_spec", "local_noise_spec"]


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
