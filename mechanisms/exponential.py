"""The exponential mechanism: over a finite output set, and over the cells of an interval.

**Finite output set** (McSherry and Talwar 2007; Dong (2020); docs/math.md#em-range). For a utility u(S, r) and
outputs r ∈ R, release r with probability

    P[M(S) = r] = exp(c·u(S, r)) / Σ_{r'} exp(c·u(S, r')),

with the exponent coefficient c chosen by one of two calibrations:

* ``"sensitivity"`` (MT07 as rewritten by Dwork and Roth): c = ε / (2Δu), where
  Δu = sup_{S∼S'} sup_r |u(S, r) − u(S', r)|. This is ε-DP.
* ``"range"`` (Durfee–Rogers 2019, Dong–Durfee–Rogers 2019, Dong (2020) Thm 1): c = ε / range(u),
  where range(u) = sup_{S∼S'} (sup_r δ(r) − inf_r δ(r)) with δ(r) = u(S', r) − u(S, r). This is
  ε-DP and range ≤ 2Δu, so it is never worse; for a utility that is monotone under add/remove
  (counting queries) range ≤ Δu, a factor-2 gain (docs/math.md#em-range; Dong (2020) says "=", E27).

:func:`utility_bounds` computes Δu and range(u) of a utility by enumerating every neighbouring pair
of multisets over a finite universe.

**Cells of an interval.** A utility that is constant on the cells (e_k, e_{k+1}) of an interval,
with Lebesgue base measure, is the finite exponential mechanism over the cells with base weights
ℓ_k = e_{k+1} − e_k, followed by a uniform draw within the chosen cell (docs/math.md#quantile-sampler steps 2–4, §5.3):

    w_k = ln ℓ_k + c·u_k,    density on cell k = exp(c·u_k − LSE(w)).

:func:`piecewise_em_law` builds that law and :func:`sample_piecewise` draws from any
:class:`~dpaudit.laws.PiecewiseConstantLaw` exactly (cell by inverse cdf on the cell masses, then
uniform within the cell); the quantile mechanism and Duff use both.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np
from scipy.special import logsumexp

from dpaudit.claims import Domain, Neighbours, PureDP, check_epsilon, check_size
from dpaudit.errors import InvalidArgument
from dpaudit.laws import DiscreteLaw, PiecewiseConstantLaw
from dpaudit.rng import check_generator
from dpaudit.spec import MechanismSpec

__all__ = [
    "CALIBRATIONS",
    "em_coefficient",
    "em_log_probs",
    "UtilityBounds",
    "utility_bounds",
    "ExponentialMechanism",
    "count_utility",
    "top_item_mechanism",
    "piecewise_em_law",
    "sample_piecewise",
    "piecewise_cdf",
]

#: How the exponent is calibrated: ``"sensitivity"`` → ε/(2·bound), ``"range"`` → ε/bound.
CALIBRATIONS = ("sensitivity", "range")


def _check_calibration(calibration: Any) -> str:
    if calibration not in CALIBRATIONS:
        raise InvalidArgument.bad("calibration", calibration, "'sensitivity' or 'range'")
    return calibration


def _check_positive(value: Any, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InvalidArgument.bad(name, value, "a finite number > 0") from None
    if isinstance(value, bool) or not math.isfinite(v) or v <= 0:
        raise InvalidArgument.bad(name, value, "a finite number > 0")
    return v


def em_coefficient(epsilon: float, bound: float, calibration: str = "sensitivity") -> float:
    """The exponent coefficient c: ε/(2Δu) for ``"sensitivity"``, ε/range(u) for ``"range"``
    (docs/math.md#em-range)."""
    eps = check_epsilon(epsilon)
    b = _check_positive(bound, "bound")
    return eps / (2.0 * b) if _check_calibration(calibration) == "sensitivity" else eps / b


def em_log_probs(scores: Any, coefficient: float, log_base: Any = None) -> np.ndarray:
    """log P[k] = c·u_k + ln μ_k − LSE_j(c·u_j + ln μ_j) (μ_k = 1 when ``log_base`` is None).

    Entries with u_k = −∞ or μ_k = 0 get −∞. At least one entry must be finite.
    """
    u = np.asarray(scores, dtype=float).reshape(-1)
    if np.any(np.isnan(u)) or np.any(u == np.inf):
        raise InvalidArgument.bad("scores", u, "numbers < +inf (no NaN)")
    w = float(coefficient) * u
    if log_base is not None:
        w = w + np.asarray(log_base, dtype=float).reshape(-1)
    total = logsumexp(w)
    if not np.isfinite(total):
        raise InvalidArgument("the exponential mechanism needs at least one output with positive weight")
    return w - total


# ---------------------------------------------------------------------------------------------
# sensitivity and range of a utility by enumeration


@dataclass(frozen=True, slots=True)
class UtilityBounds:
    """Δu and range(u) of a utility over every neighbouring pair of a finite universe (docs/math.md#em-range).

    ``monotone`` (add-remove only) is True when u(S, r) ≤ u(S ∪ {z}, r) for every pair and r.
    The witnesses are the pairs (S, S') attaining each supremum.
    """

    sensitivity: float
    range: float
    monotone: Optional[bool]
    pairs: int
    sensitivity_witness: tuple
    range_witness: tuple


def utility_bounds(utility: Callable[[np.ndarray, Any], float], outputs: Sequence[Any],
                   universe: Sequence[float], max_size: int,
                   neighbours: Any = Neighbours.ADD_REMOVE) -> UtilityBounds:
    """Δu = max |δ| and range = max (max_r δ − min_r δ) with δ(r) = u(S', r) − u(S, r), over every
    neighbouring pair of multisets drawn from ``universe``.

    ``add-remove``: every S with |S| ≤ max_size − 1 and S' = S ∪ {z}, z ∈ universe.
    ``replace``: every S with |S| = max_size and S' = S with one record replaced by z ≠ it.
    Exhaustive, so exact on that universe (a lower bound on the supremum over all data).
    """
    rel = Neighbours.parse(neighbours)
    if rel not in (Neighbours.ADD_REMOVE, Neighbours.REPLACE):
        raise InvalidArgument.bad("neighbours", neighbours, "'add-remove' or 'replace'")
    n = check_size(max_size, "max_size")
    outs = list(outputs)
    if not outs:
        raise InvalidArgument.bad("outputs", outputs, "a non-empty sequence")
    uni = sorted({float(v) for v in universe})
    if not uni:
        raise InvalidArgument.bad("universe", universe, "a non-empty sequence of numbers")
    if n < 1:
        raise InvalidArgument.bad("max_size", max_size, "an integer >= 1")
    cache: dict[tuple, np.ndarray] = {}

    def scores(ms: tuple) -> np.ndarray:
        if ms not in cache:
            data = np.asarray(ms, dtype=float)
            cache[ms] = np.array([float(utility(data, r)) for r in outs])
        return cache[ms]

    sens, rng_, count = 0.0, 0.0, 0
    sens_w: tuple = ()
    range_w: tuple = ()
    monotone = True if rel is Neighbours.ADD_REMOVE else None
    for S, S2 in _pairs(uni, n, rel):
        d = scores(S2) - scores(S)
        count += 1
        s, r = float(np.max(np.abs(d))), float(np.max(d) - np.min(d))
        if s > sens or not sens_w:
            sens, sens_w = s, (S, S2)
        if r > rng_ or not range_w:
            rng_, range_w = r, (S, S2)
        if monotone and np.any(d < 0):
            monotone = False
    return UtilityBounds(sens, rng_, monotone, count, sens_w, range_w)


def _pairs(uni: list[float], n: int, rel: Neighbours):
    if rel is Neighbours.ADD_REMOVE:
        for size in range(0, n):
            for S in itertools.combinations_with_replacement(uni, size):
                for z in uni:
                    yield S, tuple(sorted(S + (z,)))
    else:
        for S in itertools.combinations_with_replacement(uni, n):
            for i in range(n):
                if i > 0 and S[i] == S[i - 1]:
                    continue
                for z in uni:
                    if z != S[i]:
                        yield S, tuple(sorted(S[:i] + S[i + 1:] + (z,)))


# ---------------------------------------------------------------------------------------------
# the finite exponential mechanism


def count_utility(data: np.ndarray, r: float) -> float:
    """u(S, r) = #{s ∈ S : round(s) = r}: the score of item r in a histogram (a counting query).

    Monotone under add/remove with Δu = 1 and range 1; under replace Δu = 1 and range 2.
    """
    d = np.asarray(data, dtype=float).reshape(-1)
    return float(np.count_nonzero(np.rint(d) == float(r)))


@dataclass(frozen=True, slots=True)
class ExponentialMechanism:
    """The exponential mechanism over a finite output set (docs/math.md#em-range).

    ``bound`` is Δu for ``calibration="sensitivity"`` (exponent ε·u/(2Δu)) and range(u) for
    ``calibration="range"`` (exponent ε·u/range). The mechanism is ε-DP under ``neighbours``
    provided ``bound`` really bounds Δu (resp. range) under that relation; :func:`utility_bounds`
    checks it on a finite universe. ``scores`` optionally gives the vector (u(S, r))_r at once.
    """

    epsilon: float
    outputs: tuple
    utility: Callable[[np.ndarray, Any], float]
    bound: float = 1.0
    calibration: str = "sensitivity"
    neighbours: Neighbours = Neighbours.ADD_REMOVE
    domain: Optional[Domain] = None
    scores_fn: Optional[Callable[[np.ndarray], np.ndarray]] = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        outs = tuple(o.item() if isinstance(o, np.generic) else o for o in self.outputs)
        if not outs or len(set(outs)) != len(outs):
            raise InvalidArgument.bad("outputs", self.outputs, "a non-empty sequence of distinct values")
        object.__setattr__(self, "outputs", outs)
        if not callable(self.utility):
            raise InvalidArgument.bad("utility", self.utility, "a callable u(data, r) -> float")
        object.__setattr__(self, "bound", _check_positive(self.bound, "bound"))
        _check_calibration(self.calibration)
        object.__setattr__(self, "neighbours", Neighbours.parse(self.neighbours))
        if self.domain is not None:
            object.__setattr__(self, "domain", Domain.parse(self.domain))

    @property
    def claim(self) -> PureDP:
        return PureDP(self.epsilon)

    @property
    def coefficient(self) -> float:
        """c in exp(c·u): ε/(2Δu) or ε/range."""
        return em_coefficient(self.epsilon, self.bound, self.calibration)

    def scores(self, data: Any) -> np.ndarray:
        """(u(S, r))_{r ∈ outputs}."""
        d = _as_data(data)
        if self.scores_fn is not None:
            return np.asarray(self.scores_fn(d), dtype=float).reshape(-1)
        return np.array([float(self.utility(d, r)) for r in self.outputs])

    def pmf(self, data: Any) -> np.ndarray:
        """P[M(S) = r] for every output r, in the order of ``outputs``."""
        return np.exp(self.law(data).log_pmf)

    def law(self, data: Any) -> DiscreteLaw:
        """The exact output law (complete: no tail mass): ln P[M(S) = r] = c·u(S, r) − LSE_r' c·u(S, r')."""
        return DiscreteLaw(self.outputs, em_log_probs(self.scores(data), self.coefficient))

    def log_prob(self, data: Any, y: Any) -> np.ndarray:
        """ln P[M(S) = y] (−inf for a value that is not an output)."""
        return self.law(data).log_prob(y)

    def sample(self, data: Any, rng: np.random.Generator, size: Optional[int] = None):
        """Draw by inverse cdf on the exact pmf; ``size=None`` gives one output."""
        check_generator(rng)
        p = self.pmf(data)
        cdf = np.cumsum(p)
        n = 1 if size is None else check_size(size)
        idx = np.minimum(np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right"), len(p) - 1)
        out = np.asarray(self.outputs, dtype=object if _non_numeric(self.outputs) else float)[idx]
        return out[0] if size is None else out

    def spec(self, *, size: int = 10, name: Optional[str] = None) -> MechanismSpec:
        """This mechanism as a dpaudit black box: ``f(data, rng, size=None)`` returns ``sample``;
        ``distribution(data)`` is the exact :class:`~dpaudit.laws.DiscreteLaw`."""
        mech = self

        def exponential_mechanism(data, rng, size=None):
            return mech.sample(data, rng, size=size)

        return MechanismSpec.from_function(
            exponential_mechanism, name=name or f"exponential-{self.calibration}",
            epsilon=self.epsilon, delta=0.0, neighbours=self.neighbours,
            domain=self.domain or Domain(0.0, 1.0), size=size,
            distribution=lambda data: mech.law(data), output="discrete")


def top_item_mechanism(epsilon: float, items: int = 4, calibration: str = "range") -> ExponentialMechanism:
    """The canonical finite EM: report the most frequent item of a histogram (Dong (2020)'s setting).

    Records are item labels in [−0.5, items − 0.5] (rounded to the nearest integer); outputs are
    0..items−1; u = :func:`count_utility`. Under add/remove it is monotone with Δu = range = 1, so
    both calibrations use ``bound = 1``: ``"range"`` gives exp(ε·count) (ε-DP, tight) and
    ``"sensitivity"`` exp(ε·count/2) (ε-DP, exact loss only about ε/2).
    """
    k = check_size(items, "items")
    if k < 2:
        raise InvalidArgument.bad("items", items, "an integer >= 2")
    labels = np.arange(k, dtype=float)

    def scores(d: np.ndarray) -> np.ndarray:
        return np.bincount(np.clip(np.rint(d), 0, k - 1).astype(int), minlength=k).astype(float)

    return ExponentialMechanism(epsilon, tuple(labels.tolist()), count_utility, 1.0, calibration,
                                Neighbours.ADD_REMOVE, Domain(-0.5, k - 0.5), scores)


# ---------------------------------------------------------------------------------------------
# the exponential mechanism on the cells of an interval


def piecewise_em_law(edges: Any, utilities: Any, coefficient: float) -> PiecewiseConstantLaw:
    """Density ∝ exp(c·u_k) on cell [e_k, e_{k+1}) (docs/math.md#quantile-sampler): exp(c·u_k − LSE_j(ln ℓ_j + c·u_j)).

    Zero-length cells carry no mass; at least one cell must have positive length.
    """
    e = np.asarray(edges, dtype=float).reshape(-1)
    u = np.asarray(utilities, dtype=float).reshape(-1)
    if e.size != u.size + 1:
        raise InvalidArgument(f"piecewise_em_law needs len(edges) == len(utilities) + 1, got {e.size} and {u.size}")
    lengths = np.diff(e)
    if np.any(lengths < 0):
        raise InvalidArgument("piecewise_em_law edges must be non-decreasing")
    with np.errstate(divide="ignore"):
        log_len = np.log(lengths)
    w = float(coefficient) * u
    total = logsumexp(w + log_len)
    if not np.isfinite(total):
        raise InvalidArgument("piecewise_em_law needs a cell of positive length and finite utility")
    return PiecewiseConstantLaw(e, w - total)


def _cell_log_masses(law: PiecewiseConstantLaw) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return law.log_density + np.log(np.diff(law.edges))


def sample_piecewise(law: PiecewiseConstantLaw, rng: np.random.Generator,
                     size: Optional[int] = None):
    """Exact draws from a piecewise-constant density (docs/math.md#quantile-sampler step 4): choose cell k with
    probability ℓ_k·p_k (inverse cdf on the normalised cell masses, computed from their logs),
    then a uniform point of the cell. O(n) set-up plus O(log n) per draw."""
    check_generator(rng)
    lm = _cell_log_masses(law)
    lm = np.where(np.isnan(lm), -np.inf, lm)
    p = np.exp(lm - logsumexp(lm))
    cdf = np.cumsum(p)
    n = 1 if size is None else check_size(size)
    u = rng.random(n) * cdf[-1]
    k = np.searchsorted(cdf, u, side="right")
    k = np.minimum(k, p.size - 1)
    # a cell of zero mass can be picked only by a rounding tie: move to the next cell with mass
    bad = p[k] == 0
    if np.any(bad):
        pos = np.flatnonzero(p > 0)
        k[bad] = pos[np.minimum(np.searchsorted(pos, k[bad]), pos.size - 1)]
    lo, hi = law.edges[k], law.edges[k + 1]
    x = lo + (hi - lo) * rng.random(n)
    x = np.minimum(x, hi)
    return float(x[0]) if size is None else x


def piecewise_cdf(law: PiecewiseConstantLaw, y: Any) -> np.ndarray:
    """F(y) = ∫_{−∞}^y p for a piecewise-constant law (exact, vectorised)."""
    y = np.asarray(y, dtype=float)
    lm = _cell_log_masses(law)
    mass = np.exp(np.where(np.isnan(lm), -np.inf, lm))
    cum = np.concatenate([[0.0], np.cumsum(mass)])
    e = law.edges
    k = np.clip(np.searchsorted(e, y, side="right") - 1, 0, mass.size - 1)
    width = e[k + 1] - e[k]
    frac = np.where(width > 0, np.clip((y - e[k]) / np.where(width > 0, width, 1.0), 0.0, 1.0), 1.0)
    out = cum[k] + frac * mass[k]
    out = np.where(y < e[0], 0.0, np.where(y >= e[-1], cum[-1], out))
    return out / cum[-1]


# ---------------------------------------------------------------------------------------------
# helpers shared by the mechanisms of this package


def _as_data(data: Any, name: str = "data") -> np.ndarray:
    try:
        d = np.asarray(data, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InvalidArgument.bad(name, data, "a 1-D array of finite numbers") from None
    if not np.all(np.isfinite(d)):
        raise InvalidArgument.bad(name, data, "a 1-D array of finite numbers")
    return d


def _non_numeric(values: tuple) -> bool:
    return not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
