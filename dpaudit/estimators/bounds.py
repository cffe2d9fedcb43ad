"""Confidence bounds on event probabilities and the ε / δ lower bounds built from them.

An event S and neighbours D, D' give p = P[M(D) ∈ S] and q = P[M(D') ∈ S]. (ε, δ)-DP requires
p ≤ e^ε q + δ, so any lower confidence bound on ln((p − δ)/q) is a lower bound on ε that holds at
that confidence (Ding et al. 2018, "Detecting violations of differential privacy", §4; Bichsel et
al. 2021, DP-Sniper, §5). Three validated bounds, each exact (Clopper-Pearson: the Beta quantiles
of ``scipy.special``, the numbers of statsmodels' ``proportion_confint(method="beta")`` without
the import of statsmodels, pandas and scipy.stats, about a second of every ``dpaudit check``) and
each valid whatever the dependence between the samples of D and D':

``marginal`` (any δ)
    p_lo, q_hi one-sided CP bounds at α_p + α_q = α:  ε_LB = ln((p_lo − δ)/q_hi),
    δ_LB(ε) = p_lo − e^ε q_hi (the issue's definition).
``ratio`` (δ = 0, independent samples with Poisson sample counts N_D ~ Poi(λ_D), N_D' ~ Poi(λ_D'))
    The counts X ~ Poi(λ_D p), Y ~ Poi(λ_D' q) are independent, so X | X + Y = m ~ Bin(m, π) with
    π = λ_D p / (λ_D p + λ_D' q) (Lehmann and Romano, TSH §4.5). One CP lower bound π_lo at α gives
    p/q ≥ (π_lo/(1 − π_lo))·(λ_D'/λ_D): one quantile instead of two.
``paired`` (any δ, common random numbers: row i of D and D' share a seed)
    With A = #{both in S} and X = #{D in S}: q = θ1 p + θ2 (1 − p) where θ1 = P[D' ∈ S | D ∈ S]
    and θ2 = P[D' ∈ S | D ∉ S]. Given X, A ~ Bin(X, θ1) and C = #{D' in S, D not} ~ Bin(N − X, θ2);
    X ~ Bin(N, p). With CP bounds at α1 + α2 + α3 = α (union bound), θ1 ≤ θ1_hi, θ2 ≤ θ2_hi and
    p ≥ p_lo together, and (p − δ)/(θ1_hi p + θ2_hi (1 − p)) increases with p (its derivative has
    the sign of θ2_hi (1 − δ) + δ θ1_hi ≥ 0), so
    (p − δ)/q ≥ (p_lo − δ)/(θ1_hi p_lo + θ2_hi (1 − p_lo)), at δ = 0 p/q ≥ 1/(θ1_hi + θ2_hi (1 − p_lo)/p_lo);
    δ_LB(ε) = min over p in [p_lo, 1] of p − e^ε (θ1_hi p + θ2_hi (1 − p)), linear in p (its two
    ends). When the mechanism's randomness couples the two outputs (a shift of a noisy value), θ1
    is close to q/p with variance θ1(1 − θ1)/X, far below the 1/X + 1/Y of two independent counts.
    docs/math.md ("Paired bounds") has the derivation.

Selection uses :func:`projected_lb`, a fast Wilson-score stand-in for the same bounds evaluated at
the validation budget on pessimistic (one standard error) selection estimates; it never enters a
reported bound.
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
from scipy.special import ndtri

from dpaudit.claims import check_confidence
from dpaudit.errors import InvalidArgument

__all__ = ["METHODS", "Counts", "Bound", "cp_lower", "cp_upper", "cp_interval", "validated_bound",
           "projected_lb", "projected_lbs", "SPLITS", "bonferroni", "method", "BoundMethod",
           "Marginal", "Ratio", "Paired", "dkw_width"]

def bonferroni(confidence: float, k: int) -> float:
    """The per-candidate error level (1 − confidence)/k: family-wise confidence over k candidates."""
    check_confidence(confidence)
    if k < 1:
        raise InvalidArgument.bad("k", k, "an integer >= 1")
    return (1.0 - confidence) / k


# ---------------------------------------------------------------------------------------------
# exact one-sided Clopper-Pearson bounds

def cp_lower(k, n, alpha: float):
    """One-sided (1 − α) Clopper-Pearson lower bound on p from k successes in n trials.

    The Beta(α; k, n − k + 1) quantile (Clopper and Pearson 1934): statsmodels'
    ``proportion_confint(k, n, alpha=2α, method="beta")[0]``; 0 when k = 0. Arrays
    broadcast.
    """
    from scipy.special import betaincinv

    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    m = np.maximum(n, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.asarray(betaincinv(k, m - k + 1.0, alpha), dtype=float)
    lo = np.where((n <= 0) | (k <= 0), 0.0, lo)
    return lo if lo.ndim else float(lo)


def cp_upper(k, n, alpha: float):
    """One-sided (1 − α) Clopper-Pearson upper bound on p: the Beta(1 − α; k + 1, n − k) quantile
    (statsmodels' ``proportion_confint(..., method="beta")[1]``); 1 when k = n or n = 0."""
    from scipy.special import betainccinv

    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    m = np.maximum(n, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        hi = np.asarray(betainccinv(k + 1.0, m - k, alpha), dtype=float)
    hi = np.where((n <= 0) | (k >= n), 1.0, hi)
    return hi if hi.ndim else float(hi)


def cp_interval(k: int, n: int, alpha: float) -> tuple[float, float]:
    """Two-sided (1 − α) Clopper-Pearson interval on p from k successes in n trials (α/2 a side):
    the frequencies' intervals a bound reports."""
    return float(cp_lower(k, n, alpha / 2)), float(cp_upper(k, n, alpha / 2))


def dkw_width(n: int, alpha: float) -> float:
    """Half-width of a two-sided DKW band at level α/2 on n samples: √(ln(4/α)/(2n)) (Massart 1990)."""
    return math.sqrt(math.log(4.0 / alpha) / (2.0 * n)) if n > 0 else 1.0


# ---------------------------------------------------------------------------------------------
# validated bounds

@dataclass(frozen=True, slots=True)
class Counts:
    """Validation counts for one event in one direction (numerator dataset first).

    ``n_num``/``n_den`` samples of the numerator / denominator dataset; ``x``/``y`` how many fell
    in the event; ``a`` how many *pairs* had both in the event (paired design only, else None);
    ``lam_num``/``lam_den`` the Poisson means the sample counts were drawn with (independent
    design only; None when the counts were not Poisson, e.g. a run cut short by its time limit).
    """

    n_num: int
    n_den: int
    x: int
    y: int
    a: Optional[int] = None
    lam_num: Optional[float] = None
    lam_den: Optional[float] = None

    @property
    def paired(self) -> bool:
        return self.a is not None

    def usable(self, method: str) -> bool:
        return _method(method).usable(self)


@dataclass(frozen=True, slots=True)
class Bound:
    """A validated bound: ε_LB (≥ 0), δ_LB at the claimed ε (None for pure claims), and the
    frequencies with two-sided CP intervals at the candidate's level (for the report). A bound of
    the betting look (``method`` "betting", :mod:`dpaudit.auditing.betting`) carries the largest
    log-wealth its test reached at the claim (its p-value is e^−log_wealth)."""

    epsilon_lb: float
    delta_lb: Optional[float]
    p: float
    q: float
    p_interval: tuple[float, float]
    q_interval: tuple[float, float]
    method: str
    alpha: float
    log_wealth: Optional[float] = None


# ---------------------------------------------------------------------------------------------
# projections (selection only)

def _wilson_p(ph, n, z, upper: bool):
    """Wilson score bound (Wilson 1927) on a proportion ph observed in n trials, at z standard
    errors: a fast stand-in for Clopper-Pearson. Broadcasts (z may be a column of values)."""
    # the same operations as
    #   b = (ph + z²/2n ± z·sqrt(ph(1 − ph)/n + z²/4n²)) / (1 + z²/n), clipped to [0, 1],
    # with the full-size (splits × events) temporaries updated in place
    z2 = z * z
    inv = 1.0 / np.maximum(n, 1e-12)
    half = np.array(ph * (1.0 - ph) * inv + z2 * 0.25 * inv * inv, dtype=float, copy=None, ndmin=0)
    np.sqrt(half, out=half)
    half *= z
    b = np.array(z2 * 0.5 * inv + ph, dtype=float, copy=None, ndmin=0)
    if upper:
        b += half
    else:
        b -= half
    del half
    b /= 1.0 + z2 * inv
    np.maximum(b, 0.0, out=b)
    np.minimum(b, 1.0, out=b)
    return b if b.ndim else b[()]


def _wilson(k, n, z, upper: bool):
    n = np.asarray(n, dtype=float)
    ph = np.minimum(np.maximum(np.asarray(k, dtype=float) / np.maximum(n, 1e-12), 0.0), 1.0)
    return _wilson_p(ph, n, z, upper)


@functools.lru_cache(maxsize=4096)
def _z(alpha: float) -> float:
    return float(-ndtri(alpha))


#: selection estimates are moved this many standard errors the pessimistic way before projecting
SELECTION_Z = 2.0


def projected_lb(method: str, n, x, y, a, n_val: float, alpha: float, split: tuple[float, ...],
                 delta: float = 0.0, pessimism: Optional[float] = None) -> np.ndarray:
    """The ε_LB an event would get from ``n_val`` validation samples per dataset (pairs for
    ``paired``), predicted from selection counts: ``n`` pairs, ``x``/``y`` in the event under the
    numerator / denominator dataset, ``a`` pairs with both in it. The selection proportions are
    first moved :data:`SELECTION_Z` standard errors the pessimistic way (the
    best of many events on one sample is optimistic), then the Wilson version of the method's
    bound is taken at the validation size (``pessimism`` overrides the number of standard errors;
    0 for counts of one event on data that did not choose it). Vectorised over events; −inf where
    the bound is empty.
    """
    return projected_lbs(method, n, x, y, a, n_val, alpha, (split,), delta, pessimism)[0]


def projected_lbs(method: str, n, x, y, a, n_val: float, alpha: float, splits: tuple,
                  delta: float = 0.0, pessimism: Optional[float] = None) -> np.ndarray:
    """:func:`projected_lb` for several α splits at once: an array (len(splits), events)."""
    zs = SELECTION_Z if pessimism is None else float(pessimism)
    n = np.asarray(n, dtype=float)
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.asarray(splits, dtype=float)
    w = w / w.sum(axis=1, keepdims=True)
    zcol = lambda j: np.array([[_z(alpha * float(v))] for v in w[:, j]])  # noqa: E731
    with np.errstate(divide="ignore", invalid="ignore"):
        out = _method(method).projected(n, x, y, a, n_val, zs, zcol, delta)
    out = np.where(np.isnan(out), -np.inf, out)
    return np.where(x > 0, out, -np.inf)


# ---------------------------------------------------------------------------------------------
# the bound methods as objects

def _log_ratio(num: float, den: float) -> float:
    if num <= 0:
        return 0.0
    if den <= 0:
        return math.inf
    return max(0.0, math.log(num / den))


class BoundMethod(ABC):
    """A bound method: ``usable(counts)``, ``epsilon_lb(counts, α, weights, δ)`` (validated) and
    ``projected(...)`` (its Wilson stand-in for selection), plus the α ``splits`` tried at selection.
    A subclass defines the three abstract methods and the class attributes; :meth:`validated` is
    shared."""

    #: the method's name in records and on the command line
    name = ""
    #: the α splits (fractions summing to 1, one per confidence bound) tried at selection
    splits: tuple = ()
    #: whether the method bounds pure DP only (δ = 0)
    pure_only = False

    @abstractmethod
    def usable(self, c: "Counts") -> bool:
        """Whether the method applies to counts like ``c`` (paired or not, Poisson or not)."""

    @abstractmethod
    def epsilon_lb(self, c: "Counts", alpha: float, w: np.ndarray, delta: float) -> float:
        """The exact ε lower bound from ``c`` at level ``alpha`` split by the weights ``w``
        (summing to 1), for the claimed ``delta``; 0 where the counts show nothing."""

    @abstractmethod
    def projected(self, n: np.ndarray, x: np.ndarray, y: np.ndarray, a: np.ndarray,
                  n_val: float, zs: float, zcol: Callable[[int], np.ndarray],
                  delta: float) -> np.ndarray:
        """The Wilson stand-in of :meth:`epsilon_lb` for selection (:func:`projected_lbs`):
        selection counts ``n``, ``x``, ``y``, ``a`` (vectorised over events) moved ``zs``
        standard errors the pessimistic way, projected to ``n_val`` validation samples; ``zcol(j)``
        is the column of normal quantiles of the j-th part of α, one row per split."""

    def delta_lb(self, c: "Counts", alpha: float, w: np.ndarray, epsilon: float) -> float:
        """δ_LB(ε) = p_lo − e^ε q_hi from one-sided CP bounds at α·w0, α·w1 (the marginal form;
        a method whose counts say more overrides it)."""
        pl = cp_lower(c.x, c.n_num, alpha * w[0])
        qh = cp_upper(c.y, c.n_den, alpha * w[1])
        return float(pl - math.exp(epsilon) * qh)

    def validated(self, counts: "Counts", alpha: float, split: tuple, delta: float = 0.0,
                  epsilon: Optional[float] = None) -> "Bound":
        """The exact bound of this method on validation ``counts`` at level ``alpha`` split as
        ``split`` (fractions summing to 1); ``epsilon`` is the claimed ε for δ_LB."""
        if not self.usable(counts):
            raise InvalidArgument(f"method {self.name!r} cannot use these counts ({counts})")
        if self.pure_only and delta > 0:
            raise InvalidArgument(f"method {self.name!r} bounds pure DP only, got delta={delta!r}")
        c = counts
        w = np.asarray(split, dtype=float) / float(np.sum(split))
        eps_lb = self.epsilon_lb(c, alpha, w, delta)
        delta_lb = None
        if delta > 0 and epsilon is not None:
            delta_lb = float(self.delta_lb(c, alpha, w, epsilon))
        p = c.x / c.n_num if c.n_num else 0.0
        q = c.y / c.n_den if c.n_den else 0.0
        return Bound(float(eps_lb), delta_lb, p, q, cp_interval(c.x, c.n_num, alpha),
                     cp_interval(c.y, c.n_den, alpha), self.name, float(alpha))


class Marginal(BoundMethod):
    """``marginal`` (any δ): ε_LB = ln((p_lo − δ)/q_hi) from one-sided CP bounds at α·w0, α·w1."""

    name = "marginal"
    splits = ((0.5, 0.5), (0.3, 0.7), (0.7, 0.3))
    pure_only = False

    def usable(self, c: "Counts") -> bool:
        return True

    def epsilon_lb(self, c: "Counts", alpha: float, w: np.ndarray, delta: float) -> float:
        p_lo = cp_lower(c.x, c.n_num, alpha * w[0])
        q_hi = cp_upper(c.y, c.n_den, alpha * w[1])
        return _log_ratio(p_lo - delta, q_hi)

    def projected(self, n, x, y, a, n_val, zs, zcol, delta):
        p_s = _wilson(x, n, zs, False)
        q_s = _wilson(y, n, zs, True)
        p_v = _wilson_p(p_s, n_val, zcol(0), False)
        q_v = _wilson_p(q_s, n_val, zcol(1), True)
        return np.log((p_v - delta) / q_v)


class Ratio(BoundMethod):
    """``ratio`` (δ = 0, Poisson sample counts): X | X + Y = m ~ Bin(m, π), π = λ_D p/(λ_D p + λ_D' q)
    (Lehmann and Romano, TSH §4.5); p/q ≥ (π_lo/(1 − π_lo))·(λ_D'/λ_D)."""

    name = "ratio"
    splits = ((1.0,),)
    pure_only = True

    def usable(self, c: "Counts") -> bool:
        return c.a is None and c.lam_num is not None and c.lam_den is not None

    def epsilon_lb(self, c: "Counts", alpha: float, w: np.ndarray, delta: float) -> float:
        pi_lo = cp_lower(c.x, c.x + c.y, alpha)
        return 0.0 if pi_lo <= 0 else _log_ratio(pi_lo * c.lam_den, (1.0 - pi_lo) * c.lam_num)

    def projected(self, n, x, y, a, n_val, zs, zcol, delta):
        m = x + y
        pi_s = _wilson(x, m, zs, False)
        m_v = m * (n_val / np.maximum(n, 1e-12))
        pi_v = _wilson_p(pi_s, m_v, zcol(0), False)
        return np.log(pi_v / (1 - pi_v))


class Paired(BoundMethod):
    """``paired`` (any δ, common random numbers): (p − δ)/q ≥ (p_lo − δ)/(θ1_hi p_lo + θ2_hi (1 − p_lo))
    with θ1 = P[D' ∈ S | D ∈ S], θ2 = P[D' ∈ S | D ∉ S], CP bounds at α·w0, α·w1, α·w2 (module
    docstring; at δ = 0 the form 1/(θ1_hi + θ2_hi (1 − p_lo)/p_lo) of Ding et al.'s ratio)."""

    name = "paired"
    splits = ((0.8, 0.1, 0.1), (0.6, 0.2, 0.2), (0.9, 0.05, 0.05), (0.34, 0.33, 0.33))
    pure_only = False

    def usable(self, c: "Counts") -> bool:
        return c.a is not None and c.n_num == c.n_den

    @staticmethod
    def _parts(c: "Counts", alpha: float, w: np.ndarray) -> tuple[float, float, float]:
        t1 = cp_upper(c.a, c.x, alpha * w[0])
        t2 = cp_upper(c.y - c.a, c.n_num - c.x, alpha * w[1])
        p_lo = cp_lower(c.x, c.n_num, alpha * w[2])
        return float(t1), float(t2), float(p_lo)

    def epsilon_lb(self, c: "Counts", alpha: float, w: np.ndarray, delta: float) -> float:
        t1, t2, p_lo = self._parts(c, alpha, w)
        if delta > 0:
            return 0.0 if p_lo <= delta else _log_ratio(p_lo - delta, t1 * p_lo + t2 * (1.0 - p_lo))
        return 0.0 if p_lo <= 0 else _log_ratio(1.0, t1 + t2 * (1.0 - p_lo) / p_lo)

    def delta_lb(self, c: "Counts", alpha: float, w: np.ndarray, epsilon: float) -> float:
        t1, t2, p_lo = self._parts(c, alpha, w)
        e = math.exp(epsilon)
        return float(min(p_lo - e * (t1 * p_lo + t2 * (1.0 - p_lo)), 1.0 - e * t1))

    def projected(self, n, x, y, a, n_val, zs, zcol, delta):
        a = np.asarray(a, dtype=float)
        scale = n_val / np.maximum(n, 1e-12)
        t1 = _wilson(a, x, zs, True)
        t2 = _wilson(y - a, n - x, zs, True)
        p_s = _wilson(x, n, zs, False)
        t1v = _wilson_p(t1, x * scale, zcol(0), True)
        t2v = _wilson_p(t2, (n - x) * scale, zcol(1), True)
        p_v = _wilson_p(p_s, n_val, zcol(2), False)
        if delta > 0:
            return np.log((p_v - delta) / (t1v * p_v + t2v * (1 - p_v)))
        return -np.log(t1v + t2v * (1 - p_v) / p_v)


#: the bound methods by name; a new method is a class above plus one entry here
_METHODS = {m.name: m for m in (Marginal(), Ratio(), Paired())}
METHODS = tuple(_METHODS)
SPLITS = {name: m.splits for name, m in _METHODS.items()}


def _method(name: str) -> BoundMethod:
    try:
        return _METHODS[name]
    except (KeyError, TypeError):
        raise InvalidArgument.bad("method", name, "one of " + ", ".join(METHODS)) from None


def method(name: str) -> BoundMethod:
    """The bound method called ``name`` (``marginal`` | ``ratio`` | ``paired``)."""
    return _method(name)


def validated_bound(method: str, counts: "Counts", alpha: float, split: tuple[float, ...],
                    delta: float = 0.0, epsilon: Optional[float] = None) -> "Bound":
    """The exact bound of ``method`` (module docstring) on validation ``counts`` at level ``alpha``
    split as ``split`` (fractions summing to 1). ``epsilon`` is the claimed ε for δ_LB."""
    return _method(method).validated(counts, alpha, split, delta, epsilon)
