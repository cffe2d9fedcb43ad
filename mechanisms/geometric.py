"""The two-sided geometric mechanism on ℤ and its quantised generalisation on dℤ (docs/math.md#geometric).

Step d, sensitivity Δ, with s = Δ/d a positive integer; the true answer lies on dℤ. The release is
T + d·K where K is two-sided geometric with ratio r = ρ^{d/Δ} = e^{−ε/s} (ρ = e^{−ε}, Chen, Pal and Golubchik (2016)'s α)::

    P(X = kd) = ((1 − r)/(1 + r)) · r^{|k|},   k ∈ ℤ              (docs/math.md#geometric)

A shift by Δ = s steps multiplies the pmf by at most r^s = e^{−ε}, so the release is ε-DP.
E|X| = 2dr/(1 − r²); with d = Δ = 1 this is Chen, Pal and Golubchik (2016) eq (13), 2ρ/(1 − ρ²) (exact). Chen, Pal and Golubchik (2016) eq (7) inverts the
constant (its "pmf" sums to ((1+ρ)/(1−ρ))², docs/math.md#e9) and Chen, Pal and Golubchik (2016) eq (10) adds a factor d on top
(E10). Sampler: K = G1 − G2 with G_i iid, P(G = j) = (1 − r) r^j, j ≥ 0 (docs/math.md#geometric).

Cumulative probabilities, for integer k (Ghosh, Roughgarden and Sundararajan 2009, §2)::

    P(K ≤ k) = r^{−k}/(1 + r)  (k < 0),     P(K ≤ k) = 1 − r^{k+1}/(1 + r)  (k ≥ 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from dpaudit.claims import check_epsilon, check_size
from dpaudit.errors import InvalidArgument
from dpaudit.laws import DiscreteLaw
from dpaudit.spec import MechanismSpec
from dpaudit.rng import check_generator
from ._base import AddRemoveNoise
from .laplace import check_draws, check_values

__all__ = ["Geometric", "MAX_ATOMS"]

#: The most atoms :meth:`Geometric.law` lists (raise ``tail`` for a smaller ε).
MAX_ATOMS = 4_000_001
_GRID_TOL = 1e-9


@dataclass(frozen=True, slots=True)
class Geometric(AddRemoveNoise):
    """Two-sided geometric noise on dℤ for a query of sensitivity Δ (Δ/d ∈ ℕ): ε-DP (docs/math.md#geometric).

    ``Geometric(ε)`` is the classic geometric mechanism on ℤ (d = Δ = 1) of Ghosh et al.;
    ``Geometric(ε, sensitivity=Δ, step=d)`` the generalised quantised one (Chen, Pal and Golubchik (2016) eq (10),
    corrected). ``pmf``/``cdf``/``sf`` describe the noise X = d·K; ``sample(value, rng, size)``
    releases ``value + X`` for ``value`` on dℤ; ``law(value)`` is its exact law and
    ``log_prob(value, y)`` its log-pmf (:class:`dpaudit.laws.ReferenceMechanism`).
    """

    epsilon: float
    sensitivity: float = 1.0
    step: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_epsilon(self.sensitivity, "sensitivity"))
        object.__setattr__(self, "step", check_epsilon(self.step, "step"))
        s = self.sensitivity / self.step
        if round(s) < 1 or abs(s - round(s)) > _GRID_TOL * s:
            raise InvalidArgument(f"sensitivity / step must be a positive integer, got "
                                  f"sensitivity={self.sensitivity!r}, step={self.step!r}")

    # -- parameters and claim -------------------------------------------------------------------
    @property
    def steps_per_sensitivity(self) -> int:
        """s = Δ/d, the number of grid steps in one sensitivity."""
        return int(round(self.sensitivity / self.step))

    @property
    def log_ratio(self) -> float:
        """ln r = −ε d/Δ = −ε/s."""
        return -self.epsilon / self.steps_per_sensitivity

    @property
    def ratio(self) -> float:
        """r = ρ^{d/Δ} = e^{−ε/s}."""
        return math.exp(self.log_ratio)

    @property
    def integral(self) -> bool:
        """True when d is an integer: outputs on integer inputs are then Python/numpy ints."""
        return float(self.step).is_integer()

    # -- the noise X = d·K (scipy's names) -----------------------------------------------------
    def _log_p0(self) -> float:
        """ln P(K = 0) = ln((1 − r)/(1 + r)), computed without cancellation."""
        lr = self.log_ratio
        return math.log(-math.expm1(lr)) - math.log1p(math.exp(lr))

    def _steps(self, x: Any) -> tuple[np.ndarray, np.ndarray]:
        """k = x/d rounded, and whether x lies on dℤ (to a relative 1e-9)."""
        x = np.asarray(x, dtype=float)
        k = np.rint(x / self.step)
        on = np.abs(x - k * self.step) <= _GRID_TOL * np.maximum(self.step, np.abs(x))
        return k, on

    def pmf(self, x: Any) -> np.ndarray:
        """P(X = x) = ((1−r)/(1+r)) r^{|x/d|} on dℤ, 0 off the grid."""
        return np.exp(self.log_prob(0.0, x))

    def cdf(self, x: Any) -> np.ndarray:
        """P(X ≤ x) (module docstring), for any real x."""
        k, on = self._steps(x)
        x = np.asarray(x, dtype=float)
        k = np.where(on, k, np.floor(x / self.step))
        lr, r = self.log_ratio, self.ratio
        with np.errstate(over="ignore"):
            neg = np.exp(-k * lr) / (1 + r)
            pos = -np.expm1((k + 1) * lr - math.log1p(r))
        return np.where(k < 0, neg, pos)

    def sf(self, x: Any) -> np.ndarray:
        """P(X > x) = P(X ≤ −x − d) by symmetry, accurate in the upper tail."""
        k, on = self._steps(x)
        x = np.asarray(x, dtype=float)
        k = np.where(on, k, np.floor(x / self.step))
        return self.cdf((-k - 1) * self.step)

    def expected_abs(self) -> float:
        """E|X| = 2dr/(1 − r²) (docs/math.md#geometric; Chen, Pal and Golubchik (2016) eq (13) when d = Δ = 1)."""
        r = self.ratio
        return 2 * self.step * r / (1 - r * r)

    # -- sampling ---------------------------------------------------------------------------------
    def noise_steps(self, rng: np.random.Generator, size: Any = None) -> Any:
        """K = G1 − G2 (int64), G_i iid geometric on {0, 1, …} with P(G = j) = (1 − r) r^j.

        G = ⌊E/λ⌋ with E ~ Exp(1) and λ = −ln r, since P(⌊E/λ⌋ ≥ j) = e^{−jλ} = r^j (ziggurat
        exponentials are about three times faster than ``Generator.geometric``).
        """
        rng, size = check_generator(rng), check_draws(size)
        c = -1.0 / self.log_ratio
        k = np.floor(rng.standard_exponential(size) * c) - np.floor(rng.standard_exponential(size) * c)
        return k.astype(np.int64)

    def noise(self, rng: np.random.Generator, size: Any = None) -> Any:
        """X = d·K (integers when d is an integer)."""
        k = self.noise_steps(rng, size)
        return k * int(self.step) if self.integral else k * self.step

    def _grid_index(self, value: Any) -> np.ndarray:
        m, on = self._steps(check_values(value))
        if not np.all(on):
            raise InvalidArgument.bad("value", value, f"on the grid {self.step:g}·ℤ (the step d)")
        return m.astype(np.int64)

    def _at(self, m: Any) -> Any:
        """Grid index → value: m·d, as int when d is an integer (same arithmetic as :meth:`law`)."""
        m = np.asarray(m, dtype=np.int64)
        return m * int(self.step) if self.integral else m.astype(float) * self.step

    def sample(self, value: Any, rng: np.random.Generator, size: Any = None) -> Any:
        """``value + d·K`` for ``value`` on dℤ. Returns a scalar when ``size`` is None."""
        m = self._grid_index(value)
        out = self._at(m + self.noise_steps(rng, size))
        return out.item() if out.ndim == 0 else out

    # -- exact output law (dpaudit.laws.ReferenceMechanism) and the canonical spec ---------------
    def log_prob(self, value: Any, y: Any) -> np.ndarray:
        """ln P(value + X = y) = ln((1−r)/(1+r)) + |(y − value)/d| ln r on value + dℤ, −∞ off it."""
        k, on = self._steps(np.asarray(y, dtype=float) - check_values(value))
        return np.where(on, self._log_p0() + np.abs(k) * self.log_ratio, -np.inf)

    def law(self, value: float = 0.0, tail: float = 1e-300) -> DiscreteLaw:
        """The law of ``value + d·K`` on the atoms ``(m + k)·d``, |k| ≤ k_max, as a DiscreteLaw.

        k_max is the least k with r^k ≤ tail/2; ``tail_mass`` = P(|K| > k_max) = 2r^{k_max+1}/(1+r).
        Log-probabilities are computed in log space, so far atoms are exact, not underflowed.
        """
        if not (isinstance(tail, (int, float)) and 0 < tail < 1):
            raise InvalidArgument.bad("tail", tail, "a number in (0, 1)")
        m = int(self._grid_index(value))
        kmax = max(1, math.ceil(math.log(tail / 2) / self.log_ratio))
        if 2 * kmax + 1 > MAX_ATOMS:
            raise InvalidArgument(f"law would list {2 * kmax + 1} atoms at epsilon={self.epsilon:g}; "
                                  f"pass a larger tail (got tail={tail!r})")
        ks = np.arange(-kmax, kmax + 1, dtype=np.int64)
        lp = self._log_p0() + np.abs(ks) * self.log_ratio
        tail_mass = 2 * math.exp((kmax + 1) * self.log_ratio - math.log1p(self.ratio))
        return DiscreteLaw(tuple(self._at(m + ks).tolist()), lp, tail_mass)

    def spec(self, size: int = 10, name: Optional[str] = None) -> MechanismSpec:
        """The mechanism as a black box for dpaudit.

        Canonical query: every record is clamped to [0, Δ] and rounded to the nearest multiple of
        d; T(data) is their sum (on dℤ; with d = Δ = 1 this is the count of records ≥ ½).
        Add-remove neighbours, domain [0, Δ], so the sensitivity is Δ. Callable:
        ``f(data, rng, size=None)`` returns ``T(data) + d·K``; ``distribution(data)`` is
        :meth:`law` at ``T(data)``. Claim: ε-DP, δ = 0.
        """
        size = check_size(size)
        d, delta_ = self.step, self.sensitivity

        def index_of(data: Any) -> int:
            x = np.asarray(data, dtype=float).reshape(-1)
            if not np.all(np.isfinite(x)):
                raise InvalidArgument.bad("data", data, "an array of finite numbers")
            return int(np.rint(np.clip(x, 0.0, delta_) / d).astype(np.int64).sum())

        def geometric_sum(data, rng, size=None):
            m = index_of(data)
            out = self._at(m + self.noise_steps(rng, size))
            return out.item() if out.ndim == 0 else out

        return MechanismSpec.from_function(
            geometric_sum,
            name=name or f"Geometric(epsilon={self.epsilon:g}, sensitivity={delta_:g}, step={d:g})",
            epsilon=self.epsilon, delta=0.0, neighbours=self.neighbours.value,
            domain=(0.0, delta_), size=size, output="discrete",
            distribution=lambda data: self.law(self._at(index_of(data)).item()))
