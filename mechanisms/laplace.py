"""The Laplace mechanism (docs/math.md#laplace; Chen, Pal and Golubchik (2016) eq (6), corrected) and the canonical sum query.

Noise density, for sensitivity Δ and privacy ε (ρ = e^{-ε}; Chen, Pal and Golubchik (2016) calls ρ "α")::

    p(z) = (ε / (2Δ)) · exp(−ε|z| / Δ)          (docs/math.md#laplace)

Chen, Pal and Golubchik (2016) eq (6) drops the ε from the exponent; its "density" then integrates to ε, not 1 (docs/math.md#e8).
Releasing T + Z is ε-DP when |T(D) − T(D')| ≤ Δ for neighbours (Dwork, McSherry, Nissim and
Smith 2006). E|Z| = Δ/ε = Δ/(−ln ρ) (Chen, Pal and Golubchik (2016) eq (11), exact). The sampler is Z = (Δ/ε)(E1 − E2) with
E1, E2 iid Exp(1) (docs/math.md#laplace).

The canonical query used by :meth:`Laplace.spec` (and by the staircase and pre-rounding
references) is the *snapped sum* of :func:`snapped_sum_units`: every record is clamped to [0, Δ]
and rounded to the grid Δ·2^-32, so sums are exact integers in units of Δ/2^32 and a neighbouring
pair (add-remove) moves the sum by at most Δ exactly, with no floating-point slack.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from scipy import stats

from dpaudit.claims import check_epsilon, check_size
from dpaudit.errors import InvalidArgument
from dpaudit.laws import ContinuousLaw
from dpaudit.rng import check_generator
from dpaudit.spec import MechanismSpec
from ._base import AddRemoveNoise

__all__ = ["Laplace", "snapped_sum_units", "SNAP_BITS", "check_draws", "check_values"]

#: Records are snapped to the grid Δ·2^-SNAP_BITS by :func:`snapped_sum_units`.
SNAP_BITS = 32


def check_draws(size: Any) -> Any:
    """``size`` is None (one draw), an int >= 0, or a tuple of them (numpy's convention)."""
    if size is None:
        return None
    if isinstance(size, tuple):
        return tuple(check_size(s, "size") for s in size)
    return check_size(size, "size")


def check_values(value: Any, name: str = "value") -> np.ndarray:
    """True answers handed to a sampler or a law: finite numbers (a scalar or an array)."""
    try:
        v = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InvalidArgument.bad(name, value, "a finite number or an array of them") from None
    if not np.all(np.isfinite(v)):
        raise InvalidArgument.bad(name, value, "a finite number or an array of them")
    return v


def snapped_sum_units(data: Any, sensitivity: float) -> int:
    """The canonical sum query, exactly, in units of Δ·2^-32.

    ``Σ_i round(clamp(x_i, 0, Δ) · 2^32 / Δ)``: each record is clamped to the domain [0, Δ] and
    snapped to the grid Δ·2^-32 (a per-record map into [0, Δ], so adding or removing one record
    moves the sum by at most 2^32 units = Δ). The sum is an exact integer, so the released value
    ``units · Δ / 2^32`` and its neighbours differ by at most Δ with no rounding slack.
    """
    x = np.asarray(data, dtype=float).reshape(-1)
    if not np.all(np.isfinite(x)):
        raise InvalidArgument.bad("data", data, "an array of finite numbers")
    k = np.rint(np.clip(x, 0.0, sensitivity) * (2.0 ** SNAP_BITS / sensitivity)).astype(np.int64)
    return int(k.sum())


@dataclass(frozen=True, slots=True)
class Laplace(AddRemoveNoise):
    """Laplace noise of scale Δ/ε: the ε-DP release of a query of sensitivity Δ (docs/math.md#laplace).

    ``pdf``/``cdf``/``sf`` describe the noise Z; ``sample(value, rng, size)`` releases ``value + Z``;
    ``law(value)`` is the exact law of ``value + Z`` and ``log_prob(value, y)`` its log-density
    (:class:`dpaudit.laws.ReferenceMechanism`); ``spec()`` is the canonical mechanism for dpaudit
    (see :meth:`spec`).
    """

    epsilon: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_epsilon(self.sensitivity, "sensitivity"))

    # -- parameters and claim -------------------------------------------------------------------
    @property
    def scale(self) -> float:
        """b = Δ/ε."""
        return self.sensitivity / self.epsilon

    # -- the noise Z (scipy's names) --------------------------------------------------------------
    def pdf(self, z: Any) -> np.ndarray:
        """p(z) = (ε/(2Δ)) e^{−ε|z|/Δ}."""
        return stats.laplace.pdf(np.asarray(z, dtype=float), scale=self.scale)

    def cdf(self, z: Any) -> np.ndarray:
        """P(Z ≤ z) = ½e^{εz/Δ} for z < 0, 1 − ½e^{−εz/Δ} for z ≥ 0."""
        return stats.laplace.cdf(np.asarray(z, dtype=float), scale=self.scale)

    def sf(self, z: Any) -> np.ndarray:
        """P(Z > z), accurate in the upper tail."""
        return stats.laplace.sf(np.asarray(z, dtype=float), scale=self.scale)

    def expected_abs(self) -> float:
        """E|Z| = Δ/ε = Δ/(−ln ρ) (Chen, Pal and Golubchik (2016) eq (11), exact; docs/math.md#expected-loss)."""
        return self.scale

    # -- sampling ---------------------------------------------------------------------------------
    def noise(self, rng: np.random.Generator, size: Any = None) -> Any:
        """Z = (Δ/ε)(E1 − E2), E_i iid Exp(1) (docs/math.md#laplace). ``size`` follows numpy's convention."""
        rng, size = check_generator(rng), check_draws(size)
        return self.scale * (rng.standard_exponential(size) - rng.standard_exponential(size))

    def sample(self, value: Any, rng: np.random.Generator, size: Any = None) -> Any:
        """``value + Z``: the released answer for true answer ``value`` (broadcast with ``size``)."""
        out = check_values(value) + self.noise(rng, size)
        return float(out) if out.ndim == 0 else out

    # -- exact output law (dpaudit.laws.ReferenceMechanism) and the canonical spec ---------------
    def log_prob(self, value: Any, y: Any) -> np.ndarray:
        """ln p(y | value) = ln(ε/(2Δ)) − ε|y − value|/Δ, the density of the release ``value + Z``."""
        return stats.laplace.logpdf(np.asarray(y, dtype=float) - check_values(value), scale=self.scale)

    def law(self, value: float = 0.0) -> ContinuousLaw:
        """The law of ``value + Z``: ``ContinuousLaw(scipy.stats.laplace(value, Δ/ε), (value,))``."""
        if np.ndim(value) != 0:
            raise InvalidArgument.bad("value", value, "a finite number")
        v = float(check_values(value))
        return ContinuousLaw(stats.laplace(loc=v, scale=self.scale), (v,))

    def spec(self, size: int = 10, name: Optional[str] = None) -> MechanismSpec:
        """The mechanism as a black box for dpaudit.

        Canonical query: the snapped sum of the records (:func:`snapped_sum_units`; each record
        clamped to [0, Δ]), add-remove neighbours, domain [0, Δ], so the sensitivity is Δ.
        Callable: ``f(data, rng, size=None)`` returns ``T(data) + Z`` (a float, or an array of
        ``size`` draws). ``distribution(data)`` is :meth:`law` at ``T(data)``. Claim: ε-DP, δ = 0.
        """
        size = check_size(size)
        delta_ = self.sensitivity
        unit = delta_ / 2.0 ** SNAP_BITS

        def value_of(data: Any) -> float:
            return snapped_sum_units(data, delta_) * unit

        def laplace_sum(data, rng, size=None):
            return self.sample(value_of(data), rng, size)

        return MechanismSpec.from_function(
            laplace_sum, name=name or f"Laplace(epsilon={self.epsilon:g}, sensitivity={delta_:g})",
            epsilon=self.epsilon, delta=0.0, neighbours=self.neighbours.value,
            domain=(0.0, delta_), size=size, output="real", distribution=lambda data: self.law(value_of(data)))
