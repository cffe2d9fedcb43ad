"""Exact privacy profiles of one released noised value whose noise scale follows the data.

Where the replay shows that a coordinate of the release is, on D, ``m·(x + Z)`` with
``Z ~ Lap(0, b)`` (or ``N(0, σ²)``) and, on D′, ``m′·(x′ + Z′)`` with ``Z′ ~ Lap(0, b′)``, the
coordinate's law is ``P = Lap(m·x, |m|·b)`` on D and ``Q = Lap(m′·x′, |m′|·b′)`` on D′ (the same
with normal laws). Its privacy profile is the hockey-stick divergence (Balle, Barthe and Gaboardi
2018, Definition 2 and Theorem 1 there: a mechanism is (ε, δ)-DP on the pair iff both directions
are at most δ)::

    δ(ε) = max(H_ε(P‖Q), H_ε(Q‖P)),   H_ε(P‖Q) = ∫ (p(y) − e^ε q(y))₊ dy.

The log-ratio ``f(y) = ln p(y) − ln q(y)`` is piecewise linear for Laplace laws (kinks at the two
centres) and quadratic for normal laws, so ``{f > ε}`` is a union of at most four intervals whose
ends are found in closed form, and ``H_ε`` is a sum of differences of distribution functions
(the Laplace law's in closed form, the normal law's from ``scipy.special.ndtr``: the numbers of
``scipy.stats`` without its import, about a second of every ``dpaudit check`` that replays), each
taken on the side of the centre where it has full relative precision.

* Laplace laws of unequal scales: ``f(y)`` grows without limit in one tail (slope
  ``1/|m′|b′ − 1/|m|b``), so no finite ε holds at δ = 0.
* Normal laws: no finite ε at δ = 0 for any shift or scale change.

The least ε with ``δ(ε) ≤ δ`` comes from bisection on that exact profile (it decreases in ε). The
projection of the release on one coordinate is a post-processing, so the profile of any one
coordinate is a lower bound on the release's (docs/math.md#exact-losses-from-the-replay).
"""

from __future__ import annotations

import math
from typing import Tuple

from dpaudit.estimators.exact import interval_mass

__all__ = ["hockey_stick", "profile_delta", "profile_epsilon", "Law"]

#: a law of one released coordinate: ("laplace" | "gaussian", centre, scale)
Law = Tuple[str, float, float]


class _Frozen:
    """The distribution functions of ``Lap(loc, scale)`` or ``N(loc, scale²)``, as
    ``scipy.stats.laplace(loc, scale)`` and ``scipy.stats.norm(loc, scale)`` compute them:
    Laplace ``F(y) = ½e^z`` for ``z = (y − loc)/scale ≤ 0`` and ``1 − ½e^(−z)`` above, normal
    ``F(y) = Φ(z)`` (``ndtr``); each survival function is the distribution function at ``−z``."""

    __slots__ = ("laplace", "loc", "scale")

    def __init__(self, law: Law) -> None:
        self.laplace = law[0] == "laplace"
        self.loc, self.scale = float(law[1]), float(law[2])

    def median(self) -> float:
        return self.loc

    def _lower(self, z: float) -> float:
        if self.laplace:
            return 0.5 * math.exp(z) if z <= 0 else 1.0 - 0.5 * math.exp(-z)
        from scipy.special import ndtr  # here: a child without normal noise never imports scipy

        return float(ndtr(z))

    def cdf(self, y: float) -> float:
        return self._lower((y - self.loc) / self.scale)

    def sf(self, y: float) -> float:
        return self._lower(-(y - self.loc) / self.scale)


def _mass(law: Law, lo: float, hi: float) -> float:
    """P(lo < Y < hi) for ``law``, from the tail on the far side of its centre (full relative
    precision in both tails)."""
    return interval_mass(_Frozen(law), lo, hi)


def _log_ratio(p: Law, q: Law, y: float) -> float:
    """ln p(y) − ln q(y)."""
    if p[0] == "laplace":
        return (math.log(q[2] / p[2]) - abs(y - p[1]) / p[2] + abs(y - q[1]) / q[2])
    return (math.log(q[2] / p[2]) - (y - p[1]) ** 2 / (2 * p[2] ** 2)
            + (y - q[1]) ** 2 / (2 * q[2] ** 2))


def _crossings(p: Law, q: Law, eps: float) -> list:
    """The points where ``f(y) = ε`` (f the log-ratio): on each linear piece of a Laplace pair,
    the roots of the quadratic of a normal pair."""
    out: list = []
    if p[0] == "laplace":
        (_, m1, b1), (_, m2, b2) = p, q
        cuts = sorted({m1, m2})
        edges = [-math.inf, *cuts, math.inf]
        for lo, hi in zip(edges[:-1], edges[1:]):
            # on (lo, hi): |y − m| = s·(y − m) with s = ±1 fixed; f(y) = c + k·y
            mid = (lo + hi) / 2 if math.isfinite(lo) and math.isfinite(hi) else (
                (hi - 1.0) if math.isfinite(hi) else (lo + 1.0) if math.isfinite(lo) else 0.0)
            s1, s2 = (1.0 if mid >= m1 else -1.0), (1.0 if mid >= m2 else -1.0)
            k = -s1 / b1 + s2 / b2
            c = math.log(b2 / b1) + s1 * m1 / b1 - s2 * m2 / b2
            if k != 0.0:
                y = (eps - c) / k
                if lo <= y <= hi and math.isfinite(y):
                    out.append(y)
        return out + cuts
    (_, m1, s1), (_, m2, s2) = p, q
    a = 1.0 / (2 * s2 * s2) - 1.0 / (2 * s1 * s1)
    b = m1 / (s1 * s1) - m2 / (s2 * s2)
    c = math.log(s2 / s1) - m1 * m1 / (2 * s1 * s1) + m2 * m2 / (2 * s2 * s2) - eps
    if a == 0.0:
        return [] if b == 0.0 else [-c / b]
    disc = b * b - 4 * a * c
    if disc < 0:
        return []
    r = math.sqrt(disc)
    q_ = -0.5 * (b + math.copysign(r, b))  # the stable form of the two roots
    roots = [q_ / a] + ([c / q_] if q_ != 0.0 else [])
    return [y for y in roots if math.isfinite(y)]


def hockey_stick(p: Law, q: Law, eps: float) -> float:
    """H_ε(P‖Q) = ∫ (p − e^ε q)₊ (module docstring): the sum over the intervals where
    ``ln p − ln q > ε`` of P(I) − e^ε Q(I)."""
    if p[0] != q[0]:
        raise ValueError("the two laws must be of the same family")
    points = sorted(set(_crossings(p, q, eps)))
    edges = [-math.inf, *points, math.inf]
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        if not hi > lo:
            continue
        probe = (lo + hi) / 2 if math.isfinite(lo) and math.isfinite(hi) else (
            hi - 1.0 - abs(hi) if math.isfinite(hi) else lo + 1.0 + abs(lo) if math.isfinite(lo) else 0.0)
        if _log_ratio(p, q, probe) > eps:
            total += _mass(p, lo, hi) - math.exp(eps) * _mass(q, lo, hi)
    return max(total, 0.0)


def profile_delta(p: Law, q: Law, eps: float) -> float:
    """δ(ε) of the pair of laws: the larger hockey-stick divergence of the two directions."""
    return max(hockey_stick(p, q, eps), hockey_stick(q, p, eps))


def profile_epsilon(p: Law, q: Law, delta: float) -> float:
    """The least ε ≥ 0 with δ(ε) ≤ ``delta`` (bisection on the exact profile, to 1e-12
    relative); ``inf`` at δ = 0 where the log-ratio is unbounded (unequal Laplace scales, any two
    different normal laws)."""
    if p == q:
        return 0.0
    if delta <= 0:
        if p[0] == "gaussian" or p[2] != q[2]:
            return math.inf
        return abs(p[1] - q[1]) / p[2]
    if profile_delta(p, q, 0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while profile_delta(p, q, hi) > delta:
        lo, hi = hi, hi * 2.0
        if hi > 1e6:
            return math.inf
    for _ in range(200):
        mid = (lo + hi) / 2
        if profile_delta(p, q, mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return hi
