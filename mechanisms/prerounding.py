"""The pre-rounding heuristic of Chen, Pal and Golubchik (2016) §5.2.2 (docs/math.md#pre-rounding).

The true answer q lies in the query domain [lo, hi] (Chen, Pal and Golubchik (2016): [−10, 10], Δ = 10). Stage 1 rounds
it onto the grid Δℤ with half-open cells of width Δ::

    R(q) = Δ·⌊q/Δ + ½⌋        (for Δ = 10: [−10, −5) → −10, [−5, 5) → 0, [5, 10] → 10)

Stage 2 adds the generalised geometric noise of docs/math.md#geometric with d = Δ (ratio ρ = e^{−ε}):
the release is R(q) + Δ·K. Since |q − q'| ≤ Δ implies |R(q) − R(q')| ≤ Δ (⌊x + ½⌋ moves by at
most 1 when x moves by at most 1), the heuristic is ε-DP for sensitivity Δ [docs/math.md#pre-rounding, D].

Expected loss, with c = R(q) − q ∈ [−Δ/2, Δ/2) (docs/math.md#pre-rounding)::

    E|R(q) + ΔK − q| = Σ_k P(K = k)·|c + Δk| = P(K = 0)·|c| + Δ·E|K|,

because |c| ≤ Δ/2 < Δ|k| for k ≠ 0 and K is symmetric; P(K = 0) = (1 − ρ)/(1 + ρ) and
E|K| = 2ρ/(1 − ρ²). Under k-fold collusion the median of the releases tends to R(q), so the loss
tends to |R(q) − q|, not to 0 (Chen, Pal and Golubchik (2016) Fig. 4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from dpaudit.claims import Domain, check_epsilon, check_size
from dpaudit.laws import DiscreteLaw
from dpaudit.spec import MechanismSpec
from ._base import AddRemoveNoise
from .geometric import Geometric
from .laplace import SNAP_BITS, check_values, snapped_sum_units

__all__ = ["PreRounding"]


@dataclass(frozen=True, slots=True)
class PreRounding(AddRemoveNoise):
    """Round q ∈ [lo, hi] to Δℤ, then add Δ·K with K two-sided geometric of ratio e^{−ε} (docs/math.md#pre-rounding).

    Defaults are Chen, Pal and Golubchik (2016)'s Fig. 3 setting: Δ = 10 and the query domain [−10, 10]. Inputs are
    clamped to the domain first (a per-answer map, so the sensitivity stays Δ).
    """

    epsilon: float
    sensitivity: float = 10.0
    domain: Domain = Domain(-10.0, 10.0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_epsilon(self.sensitivity, "sensitivity"))
        object.__setattr__(self, "domain", Domain.parse(self.domain))

    @property
    def noise(self) -> Geometric:
        """The stage-2 noise: Geometric(ε, sensitivity=Δ, step=Δ)."""
        return Geometric(self.epsilon, self.sensitivity, self.sensitivity)

    # -- stage 1 ----------------------------------------------------------------------------------
    def _index(self, q: Any) -> np.ndarray:
        """⌊clamp(q)/Δ + ½⌋ as int64."""
        q = np.clip(check_values(q, "q"), self.domain.lo, self.domain.hi)
        return np.floor(q / self.sensitivity + 0.5).astype(np.int64)

    def round(self, q: Any) -> np.ndarray:
        """R(q) = Δ·⌊clamp(q, lo, hi)/Δ + ½⌋."""
        return self._index(q) * self.sensitivity

    # -- release, law (dpaudit.laws.ReferenceMechanism) and loss ----------------------------------
    def log_prob(self, q: Any, y: Any) -> np.ndarray:
        """ln P(R(q) + ΔK = y) = ln P(ΔK = y − R(q)) (−∞ off the grid Δℤ)."""
        return self.noise.log_prob(self.round(q), check_values(y, "y"))

    def cdf(self, q: Any, y: Any) -> np.ndarray:
        """P(R(q) + ΔK ≤ y)."""
        return self.noise.cdf(check_values(y, "y") - self.round(q))

    def sample(self, q: Any, rng: np.random.Generator, size: Any = None) -> Any:
        """R(q) + Δ·K (floats on Δℤ). Returns a scalar when ``size`` is None and q is a scalar."""
        m = self._index(q)
        out = (m + self.noise.noise_steps(rng, size)).astype(float) * self.sensitivity
        return float(out) if out.ndim == 0 else out

    def _law_index(self, m: int, tail: float) -> DiscreteLaw:
        """Law of (m + K)·Δ (the same float arithmetic as :meth:`sample`)."""
        base = self.noise.law(0.0, tail)
        kmax = (len(base.atoms) - 1) // 2
        steps = np.arange(-kmax, kmax + 1, dtype=np.int64)
        atoms = ((m + steps).astype(float) * self.sensitivity).tolist()
        return DiscreteLaw(tuple(atoms), base.log_pmf, base.tail_mass)

    def law(self, q: float, tail: float = 1e-300) -> DiscreteLaw:
        """The exact law of R(q) + Δ·K on the atoms (m + k)·Δ, m = R(q)/Δ, |k| ≤ k_max."""
        return self._law_index(int(self._index(q)), tail)

    def expected_loss(self, q: Any) -> np.ndarray:
        """E|R(q) + ΔK − q| = P(K = 0)·|R(q) − q| + Δ·E|K| (module docstring; exact)."""
        g = self.noise
        p0 = float(g.pmf(0.0))
        return p0 * np.abs(self.round(q) - np.clip(np.asarray(q, dtype=float), self.domain.lo,
                                                    self.domain.hi)) + g.expected_abs()

    def spec(self, size: int = 10, name: Optional[str] = None) -> MechanismSpec:
        """The heuristic as a black box for dpaudit.

        Canonical query: the snapped sum of the records (each clamped to [0, Δ];
        :func:`~dpaudit.reference.laplace.snapped_sum_units`), clamped to the query domain [lo, hi];
        add-remove neighbours, record domain [0, Δ]: sensitivity Δ. Callable
        ``f(data, rng, size=None)`` returns R(T(data)) + Δ·K; ``distribution(data)`` its exact law.
        Rounding is done on the exact integer sum, so R never sees a rounding error. Claim: ε-DP.
        """
        size = check_size(size)
        delta_ = self.sensitivity
        lo_u, hi_u = self.domain.lo / delta_, self.domain.hi / delta_
        scale = 2.0 ** -SNAP_BITS

        def index_of(data: Any) -> int:
            u = min(max(snapped_sum_units(data, delta_) * scale, lo_u), hi_u)   # exact dyadic
            return int(math.floor(u + 0.5))

        def prerounded_sum(data, rng, size=None):
            m = index_of(data)
            out = (m + self.noise.noise_steps(rng, size)).astype(float) * delta_
            return float(out) if out.ndim == 0 else out

        return MechanismSpec.from_function(
            prerounded_sum,
            name=name or f"PreRounding(epsilon={self.epsilon:g}, sensitivity={delta_:g}, domain={self.domain})",
            epsilon=self.epsilon, delta=0.0, neighbours=self.neighbours.value,
            domain=(0.0, delta_), size=size, output="discrete",
            distribution=lambda data: self._law_index(index_of(data), 1e-300))
