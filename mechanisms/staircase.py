"""The staircase mechanism of Geng and Viswanath (docs/math.md#staircase; Chen, Pal and Golubchik (2016) eqs (8), (9), (22)).

Parameters ε, Δ and the shape γ ∈ [0, 1]; ρ = e^{−ε} (Chen, Pal and Golubchik (2016)'s α). With
A(γ) = (1 − ρ)/(2Δ(γ + (1 − γ)ρ)) and k ∈ ℕ₀ the noise density is::

    f(z) = A·ρ^k       if |z| ∈ [kΔ, (k + γ)Δ)
    f(z) = A·ρ^{k+1}   if |z| ∈ [(k + γ)Δ, (k + 1)Δ)                        (docs/math.md#staircase)

γ* = √ρ/(1 + √ρ) = 1/(1 + e^{ε/2}) minimises E|Z| (then A = (1 − ρ)/(2Δ√ρ), Chen, Pal and Golubchik (2016) eq (8)).
Survival function, t ≥ 0 with k = ⌊t/Δ⌋ and r = t − kΔ (docs/math.md#staircase, [D,N])::

    P(Z ≥ t) = ρ^k/2 − A·ρ^k·(min(r, γΔ) + ρ·(r − γΔ)⁺)

E|Z| = Δ[ρ/(1 − ρ) + (γ² + ρ(1 − γ²))/(2(γ + (1 − γ)ρ))], which is Δ√ρ/(1 − ρ) at γ* (Chen, Pal and Golubchik (2016) eq (12)).
f(z + Δ)/f(z) ∈ [ρ, 1/ρ] for every z, so releasing T + Z is ε-DP for sensitivity Δ.

Exact sampler (docs/math.md#staircase; IBM diffprivlib): S = ±1 with probability ½ each; G with
P(G = j) = (1 − ρ)ρ^j; U ~ U[0, 1); B = 0 with probability γ/(γ + (1 − γ)ρ), else 1;
Z = S·Δ·(G + γU) if B = 0 and Z = S·Δ·(G + γ + (1 − γ)U) if B = 1. G is drawn as ⌊E/ε⌋ with
E ~ Exp(1), since P(⌊E/ε⌋ ≥ j) = e^{−εj} = ρ^j.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from dpaudit.claims import check_epsilon, check_size
from dpaudit.errors import InvalidArgument
from dpaudit.laws import PiecewiseConstantLaw
from dpaudit.spec import MechanismSpec
from dpaudit.rng import check_generator
from ._base import AddRemoveNoise
from .laplace import SNAP_BITS, check_draws, check_values, snapped_sum_units

__all__ = ["Staircase", "optimal_gamma", "MAX_CELLS"]

#: The most cells :meth:`Staircase.law` lists (raise ``tail`` for a smaller ε).
MAX_CELLS = 4_000_000


def optimal_gamma(epsilon: float) -> float:
    """γ* = 1/(1 + e^{ε/2}) = √ρ/(1 + √ρ), the shape minimising E|Z| (Geng and Viswanath 2014)."""
    return 1.0 / (1.0 + math.exp(check_epsilon(epsilon) / 2))


@dataclass(frozen=True, slots=True)
class Staircase(AddRemoveNoise):
    """Staircase noise (shape γ, default γ*) for a query of sensitivity Δ: ε-DP (docs/math.md#staircase).

    ``pdf``/``cdf``/``sf`` describe the noise Z; ``sample(value, rng, size)`` releases ``value + Z``;
    ``law(value)`` is the exact law of ``value + Z`` as a PiecewiseConstantLaw and
    ``log_prob(value, y)`` its log-density (:class:`dpaudit.laws.ReferenceMechanism`).
    """

    epsilon: float
    sensitivity: float = 1.0
    gamma: Optional[float] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_epsilon(self.sensitivity, "sensitivity"))
        g = self.gamma
        if g is None:
            g = optimal_gamma(self.epsilon)
        elif isinstance(g, bool) or not isinstance(g, (int, float)) or not 0.0 <= float(g) <= 1.0:
            raise InvalidArgument.bad("gamma", g, "a number in [0, 1] (or None for the optimal γ*)")
        object.__setattr__(self, "gamma", float(g))

    # -- parameters and claim -------------------------------------------------------------------
    @property
    def _a_unit(self) -> float:
        """A·Δ = (1 − ρ)/(2(γ + (1 − γ)ρ)): the density at 0 in units of 1/Δ."""
        rho, g = self.rho, self.gamma
        return -math.expm1(-self.epsilon) / (2 * (g + (1 - g) * rho))

    @property
    def height(self) -> float:
        """A = f(0) = (1 − ρ)/(2Δ(γ + (1 − γ)ρ))."""
        return self._a_unit / self.sensitivity

    # -- the noise Z (scipy's names) --------------------------------------------------------------
    def pdf(self, z: Any) -> np.ndarray:
        """f(z) = A·ρ^{k + [r ≥ γ]} with |z|/Δ = k + r, 0 ≤ r < 1."""
        return np.exp(self.log_prob(0.0, z))

    def _sf_abs(self, t: np.ndarray) -> np.ndarray:
        """P(Z ≥ t) for t ≥ 0 (docs/math.md#staircase), in units of Δ."""
        finite = np.isfinite(t)
        k = np.floor(np.where(finite, t, 0.0))
        r = np.where(finite, t, 0.0) - k
        g, a, rho = self.gamma, self._a_unit, self.rho
        s = np.exp(-self.epsilon * k) * (0.5 - a * (np.minimum(r, g) + rho * np.maximum(r - g, 0.0)))
        return np.where(finite, s, 0.0)

    def sf(self, z: Any) -> np.ndarray:
        """P(Z > z), accurate in both tails."""
        t = np.asarray(z, dtype=float) / self.sensitivity
        s = self._sf_abs(np.abs(t))
        return np.where(t >= 0, s, 1.0 - s)

    def cdf(self, z: Any) -> np.ndarray:
        """P(Z ≤ z) = P(Z ≥ −z) by symmetry."""
        return self.sf(-np.asarray(z, dtype=float))

    def expected_abs(self) -> float:
        """E|Z| = Δ[ρ/(1−ρ) + (γ² + ρ(1−γ²))/(2(γ + (1−γ)ρ))] (docs/math.md#staircase; Chen, Pal and Golubchik (2016) eq (12) at γ*)."""
        rho, g = self.rho, self.gamma
        return self.sensitivity * (rho / (1 - rho) + (g * g + rho * (1 - g * g)) / (2 * (g + (1 - g) * rho)))

    # -- sampling ---------------------------------------------------------------------------------
    def noise(self, rng: np.random.Generator, size: Any = None) -> Any:
        """The exact sampler of the module docstring (docs/math.md#staircase), vectorised."""
        rng, size = check_generator(rng), check_draws(size)
        g, rho = self.gamma, self.rho
        geo = np.floor(rng.standard_exponential(size) / self.epsilon)   # P(G ≥ j) = ρ^j
        u = rng.random(size)
        lower = rng.random(size) * (g + (1 - g) * rho) < g          # B = 0
        sign = rng.integers(0, 2, size, dtype=np.int8) * 2 - 1
        mag = geo + np.where(lower, g * u, g + (1 - g) * u)
        return self.sensitivity * sign * mag

    def sample(self, value: Any, rng: np.random.Generator, size: Any = None) -> Any:
        """``value + Z``: the released answer for true answer ``value`` (broadcast with ``size``)."""
        out = check_values(value) + self.noise(rng, size)
        return float(out) if out.ndim == 0 else out

    # -- exact output law (dpaudit.laws.ReferenceMechanism) and the canonical spec ---------------
    def log_prob(self, value: Any, y: Any) -> np.ndarray:
        """ln f(y − value) = ln A + (k + [r ≥ γ])·ln ρ with |y − value|/Δ = k + r, 0 ≤ r < 1."""
        t = np.abs(np.asarray(y, dtype=float) - check_values(value)) / self.sensitivity
        k = np.floor(t)
        upper = (t - k) >= self.gamma
        return math.log(self.height) - self.epsilon * (k + upper)

    def _law_units(self, u: float, tail: float) -> PiecewiseConstantLaw:
        """Law of Δ·(u + Z/Δ). Edges are ((u + n) + c)·Δ with n integer and c ∈ {0, γ, 1 − γ}, so
        laws at u and u + 1 share their common edges bit for bit (no spurious slivers)."""
        if not (isinstance(tail, (int, float)) and 0 < tail < 1):
            raise InvalidArgument.bad("tail", tail, "a number in (0, 1)")
        kmax = max(1, math.ceil(math.log(tail) / -self.epsilon))   # P(|Z| ≥ kmax·Δ) = ρ^kmax ≤ tail
        if 4 * kmax > MAX_CELLS:
            raise InvalidArgument(f"law would list {4 * kmax} cells at epsilon={self.epsilon:g}; "
                                  f"pass a larger tail (got tail={tail!r})")
        g = self.gamma
        n = np.arange(-kmax, kmax, dtype=float)                   # unit periods [n, n + 1)
        # In [n, n+1): for n ≥ 0 the step is at n + γ; for n < 0 at n + (1 − γ).
        frac = np.where(n >= 0, g, 1.0 - g)
        base = u + n                                              # exact: u dyadic, n small integer
        edges = np.empty(2 * n.size + 1)
        edges[0:-1:2] = base * self.sensitivity
        edges[1::2] = (base + frac) * self.sensitivity
        edges[-1] = (u + kmax) * self.sensitivity
        # exponent of ρ on each half cell: |z| = k + r; near 0 the heavy part is [−γ, γ).
        k_lo = np.where(n >= 0, n, -n - 1)
        e_first = np.where(n >= 0, k_lo, k_lo + 1)                # [n, n + c)
        e_second = np.where(n >= 0, k_lo + 1, k_lo)               # [n + c, n + 1)
        expo = np.empty(2 * n.size)
        expo[0::2], expo[1::2] = e_first, e_second
        log_density = math.log(self.height) - self.epsilon * expo
        keep = np.diff(edges) > 0                                 # drop the empty cells of γ ∈ {0, 1}
        edges = np.concatenate([edges[:-1][keep], edges[-1:]])
        return PiecewiseConstantLaw(edges, log_density[keep], tail_mass=math.exp(-self.epsilon * kmax))

    def law(self, value: float = 0.0, tail: float = 1e-300) -> PiecewiseConstantLaw:
        """The law of ``value + Z`` truncated to |Z| < k_max·Δ, k_max the least k with ρ^k ≤ tail.

        ``tail_mass`` = P(|Z| ≥ k_max·Δ) = ρ^{k_max}. Log-densities are exact (log space).
        """
        if np.ndim(value) != 0:
            raise InvalidArgument.bad("value", value, "a finite number")
        v = float(check_values(value))
        return self._law_units(v / self.sensitivity, tail)

    def spec(self, size: int = 10, name: Optional[str] = None) -> MechanismSpec:
        """The mechanism as a black box for dpaudit.

        Canonical query: the snapped sum of the records (:func:`~dpaudit.reference.laplace.snapped_sum_units`;
        each record clamped to [0, Δ]), add-remove neighbours, domain [0, Δ]: sensitivity Δ,
        exactly, so the law at a worst pair (sums differing by Δ) shares its edges bit for bit.
        Callable: ``f(data, rng, size=None)`` returns ``T(data) + Z``; ``distribution(data)`` is
        the exact law (tail 1e-300). Claim: ε-DP, δ = 0.
        """
        size = check_size(size)
        delta_ = self.sensitivity
        scale = 2.0 ** -SNAP_BITS

        def units_of(data: Any) -> float:
            return snapped_sum_units(data, delta_) * scale       # exact dyadic, in units of Δ

        def staircase_sum(data, rng, size=None):
            return self.sample(units_of(data) * delta_, rng, size)

        return MechanismSpec.from_function(
            staircase_sum,
            name=name or f"Staircase(epsilon={self.epsilon:g}, sensitivity={delta_:g}, gamma={self.gamma:.6g})",
            epsilon=self.epsilon, delta=0.0, neighbours=self.neighbours.value,
            domain=(0.0, delta_), size=size, output="real",
            distribution=lambda data: self._law_units(units_of(data), 1e-300))
