"""Exact (white-box) privacy loss and hockey-stick divergence between two output laws.

For output laws P = M(D) and Q = M(D') with densities (or pmfs) p and q:

* privacy loss ``L(P, Q) = sup_y |ln p(y) − ln q(y)|`` over outputs with p(y) + q(y) > 0 (∞ when one
  law puts mass where the other has none). M is ε-DP on this pair iff ``L(P, Q) ≤ ε``
  (Dwork and Roth 2014, §3.5; pure DP is a pointwise density-ratio bound).
* hockey-stick divergence ``δ_P‖Q(ε) = ∫ (p(y) − e^ε q(y))⁺ dy``: the smallest δ for which
  ``P[S] ≤ e^ε Q[S] + δ`` holds for every event S (Balle, Barthe and Gaboardi 2018, Thm 1);
  the optimal event is ``S* = {y : p(y) > e^ε q(y)}``.

Discrete and piecewise-constant laws are handled in exact arithmetic on the common refinement of
their supports (up to the recorded truncation ``tail_mass``). For a general scipy continuous law the
loss is evaluated on a dense grid that contains every breakpoint and both laws' far tails;
:func:`privacy_loss` then reports the largest value seen, which is exact for log-densities that are
piecewise linear between breakpoints (Laplace). δ is P(S*) − e^ε Q(S*) from the laws' distribution
functions, with the ends of S* found by root-finding between the grid points where they lie.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.laws import ContinuousLaw, DiscreteLaw, PiecewiseConstantLaw, as_law

__all__ = ["privacy_loss", "hockey_stick", "PairLoss", "pair_loss", "LevelSet", "level_set",
           "evaluation_grid", "interval_mass"]


@dataclass(frozen=True, slots=True)
class PairLoss:
    """Exact loss of one neighbouring pair in both directions.

    ``epsilon`` = max(L(P,Q), L(Q,P)) = sup_y |ln p − ln q|; ``witness`` is an output (or cell) at
    which the sup is attained; ``delta(ε)`` needs both laws, so it is computed on demand.
    """

    epsilon: float
    witness: Any


def _log_diff(lp: np.ndarray, lq: np.ndarray) -> np.ndarray:
    """|lp − lq| with the conventions: both −∞ → 0 (no mass), one −∞ → ∞."""
    both_none = np.isneginf(lp) & np.isneginf(lq)
    with np.errstate(invalid="ignore"):
        d = np.abs(lp - lq)
    d = np.where(both_none, 0.0, d)
    return np.where(np.isnan(d), np.inf, d)


def _merge_piecewise(p: PiecewiseConstantLaw, q: PiecewiseConstantLaw):
    """Common refinement of two piecewise-constant laws. Outside a *truncated* law's listed cells
    its density is unknown (not zero), so such cells are left out."""
    edges = np.union1d(p.edges, q.edges)
    lo, hi = edges[:-1], edges[1:]
    keep = hi > lo
    for law in (p, q):
        if law.tail_mass > 0:
            keep &= (lo >= law.edges[0]) & (hi <= law.edges[-1])
    lo, hi = lo[keep], hi[keep]
    mid = (lo + hi) / 2
    return lo, hi, p.log_prob(mid), q.log_prob(mid)


def evaluation_grid(law: ContinuousLaw, other: ContinuousLaw, n: int = 20001) -> np.ndarray:
    """The finite points where the densities of two continuous laws are compared (module
    docstring), sorted and distinct: for each law, ``n`` evenly spaced points over its
    [10⁻¹⁵, 1 − 10⁻¹⁵] quantile range and ``n`` quantile-spaced ones, two far points ten widths
    beyond that range (when it is finite), and every breakpoint of either law with a point just
    either side of it."""
    pts = []
    for d in (law.dist, other.dist):
        a, b = d.ppf(1e-15), d.isf(1e-15)
        lo_s, hi_s = d.support()
        a = a if np.isfinite(a) else lo_s
        b = b if np.isfinite(b) else hi_s
        pts.append(np.linspace(a, b, n))
        # quantile-spaced points: for heavy tails (Cauchy: ppf(1e-15) ≈ −3e14·scale) the linspace
        # above leaves the body of the law unsampled
        pts.append(d.ppf(np.linspace(0.0, 1.0, n + 2)[1:-1]))
        width = b - a
        if np.isfinite(width):
            pts.append(np.array([a - 10 * width, b + 10 * width]))
    bps = np.asarray(list(law.breakpoints) + list(other.breakpoints), dtype=float)
    pts.append(bps)
    pts.append(bps + 1e-9 * (1 + np.abs(bps)))
    pts.append(bps - 1e-9 * (1 + np.abs(bps)))
    g = np.unique(np.concatenate(pts))
    return g[np.isfinite(g)]


def _discrete_atoms(P: DiscreteLaw, Q: DiscreteLaw):
    """Atoms of either law with both log-pmfs. An atom missing from a law has pmf 0 if that law
    is complete (tail_mass == 0); if the law was truncated its pmf there is unknown and the atom
    is left out."""
    dp, dq = P.as_dict(), Q.as_dict()
    atoms = [a for a in dict.fromkeys(list(dp) + list(dq))
             if (a in dp or P.tail_mass == 0) and (a in dq or Q.tail_mass == 0)]
    lp = np.array([dp.get(a, -np.inf) for a in atoms])
    lq = np.array([dq.get(a, -np.inf) for a in atoms])
    return atoms, lp, lq


def pair_loss(p: Any, q: Any) -> PairLoss:
    """``sup_y |ln p(y) − ln q(y)|`` and where it is attained (see module docstring)."""
    P, Q = as_law(p), as_law(q)
    if isinstance(P, DiscreteLaw) and isinstance(Q, DiscreteLaw):
        atoms, lp, lq = _discrete_atoms(P, Q)
        d = _log_diff(lp, lq)
        k = int(np.argmax(d))
        return PairLoss(float(d[k]), atoms[k])
    if isinstance(P, PiecewiseConstantLaw) and isinstance(Q, PiecewiseConstantLaw):
        lo, hi, lp, lq = _merge_piecewise(P, Q)
        d = _log_diff(lp, lq)
        k = int(np.argmax(d))
        return PairLoss(float(d[k]), (float(lo[k]), float(hi[k])))
    if isinstance(P, ContinuousLaw) and isinstance(Q, ContinuousLaw):
        g = evaluation_grid(P, Q)
        d = _log_diff(P.log_prob(g), Q.log_prob(g))
        k = int(np.argmax(d))
        return PairLoss(float(d[k]), float(g[k]))
    raise TypeError(f"cannot compare a {type(P).__name__} with a {type(Q).__name__}")


def privacy_loss(p: Any, q: Any) -> float:
    """``sup_y |ln p(y) − ln q(y)|``: the smallest ε for which this pair satisfies ε-DP."""
    return pair_loss(p, q).epsilon


def hockey_stick(p: Any, q: Any, epsilon: float) -> float:
    """``δ_P‖Q(ε) = ∫ (p − e^ε q)⁺``: the exact δ of the pair at ε, in the direction P over Q."""
    P, Q = as_law(p), as_law(q)
    if isinstance(P, DiscreteLaw) and isinstance(Q, DiscreteLaw):
        _, lp, lq = _discrete_atoms(P, Q)
        pp, qq = np.exp(lp), np.exp(lq)
        return float(np.sum(np.maximum(pp - math.exp(epsilon) * qq, 0.0)))
    if isinstance(P, PiecewiseConstantLaw) and isinstance(Q, PiecewiseConstantLaw):
        lo, hi, lp, lq = _merge_piecewise(P, Q)
        dens = np.maximum(np.exp(lp) - math.exp(epsilon) * np.exp(lq), 0.0)
        return float(np.sum((hi - lo) * dens))
    if isinstance(P, ContinuousLaw) and isinstance(Q, ContinuousLaw):
        return _continuous_hockey_stick(P, Q, epsilon)
    raise TypeError(f"cannot compare a {type(P).__name__} with a {type(Q).__name__}")


def _log_ratio(lp: np.ndarray, lq: np.ndarray) -> np.ndarray:
    """ln p − ln q where S* and the level sets are read: −∞ where p = 0 (no mass of P to count),
    +∞ where it is undefined otherwise (q = 0 too, or infinite densities)."""
    with np.errstate(invalid="ignore"):
        d = lp - lq
    return np.where(np.isneginf(lp), -np.inf, np.where(np.isnan(d), np.inf, d))


def _continuous_hockey_stick(P: ContinuousLaw, Q: ContinuousLaw, epsilon: float) -> float:
    """δ_P‖Q(ε) of two densities as the masses of the optimal event (Balle, Barthe and Gaboardi
    2018, Thm 1): ``Σ_I P(I) − e^ε Q(I)`` over the intervals I of S* = {y : ln p − ln q > ε}.

    S* is located on :func:`evaluation_grid` (a grid point is in S* when ln p − ln q − ε exceeds
    its rounding error, so a flat stretch where the ratio equals e^ε, which adds nothing, is left
    out instead of split into rounding-noise pieces), and each end between two grid points is
    found by root-finding on ln p − ln q − ε. Each mass comes from the tail on the far side of
    the law's median, so both tails keep their relative precision: a Gaussian pair's δ of 10⁻²⁵
    comes out to 10⁻¹² relative, where adaptive quadrature of (p − e^ε q)⁺ was off by 60%."""
    g = evaluation_grid(P, Q)

    def excess(y: np.ndarray) -> np.ndarray:
        return _log_ratio(P.log_prob(y), Q.log_prob(y)) - epsilon

    with np.errstate(invalid="ignore"):
        scale = np.nan_to_num(np.abs(P.log_prob(g)) + np.abs(Q.log_prob(g)), posinf=0.0)
    inside = excess(g) > 64 * np.finfo(float).eps * (scale + abs(epsilon) + 1.0)
    total, e = 0.0, math.exp(epsilon)
    for a, b in _runs(inside):
        lo = -math.inf if a == 0 else _crossing(excess, float(g[a - 1]), float(g[a]))
        hi = math.inf if b == g.size - 1 else _crossing(excess, float(g[b + 1]), float(g[b]))
        total += interval_mass(P.dist, lo, hi) - e * interval_mass(Q.dist, lo, hi)
    return max(total, 0.0)


def _crossing(excess: Any, out: float, into: float) -> float:
    """Where ``excess`` turns positive between ``out`` (excess ≤ 0) and ``into`` (> 0): Brent's
    method where both values are finite, else bisection on the sign, to the last double."""
    def f(y: float) -> float:
        return float(excess(np.array([y]))[0])

    f_out, f_into = f(out), f(into)
    if math.isfinite(f_out) and math.isfinite(f_into) and f_out < 0.0 < f_into:
        from scipy.optimize import brentq

        return float(brentq(f, out, into, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=200))
    for _ in range(1100):  # a bracket halves each time: at most ~1075 halvings reach one double
        mid = 0.5 * (out + into)
        if mid in (out, into):
            break
        if f(mid) > 0.0:
            into = mid
        else:
            out = mid
    return 0.5 * (out + into)


def interval_mass(dist: Any, lo: float, hi: float) -> float:
    """P(lo < Y < hi) from the tail on the far side of the median (full relative precision in
    both tails)."""
    if not hi > lo:
        return 0.0
    median = float(dist.median())
    if lo >= median:
        return float(dist.sf(lo) - dist.sf(hi))
    if hi <= median:
        return float(dist.cdf(hi) - dist.cdf(lo))
    return float(1.0 - dist.cdf(lo) - dist.sf(hi))


@dataclass(frozen=True, slots=True)
class LevelSet:
    """The event S = {y : ln p(y) − ln q(y) > threshold} of two laws, with P(S) and Q(S).

    ``parts`` describes S: atoms (discrete laws) or closed intervals ``(lo, hi)`` (densities).
    For a general scipy law S is located on the grid of :func:`pair_loss` (its ends are exact up to
    the grid spacing, and at breakpoints); the masses are then taken from the laws' CDFs.
    By Balle, Barthe and Gaboardi 2018 (Thm 1), at threshold ε this S attains
    P(S) − e^ε Q(S) = δ_P‖Q(ε).
    """

    p: float
    q: float
    parts: tuple
    kind: str  # "atoms" | "intervals"


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(first, last) index of each run of True in ``mask``."""
    if not mask.any():
        return []
    m = np.r_[False, mask, False].astype(np.int8)
    d = np.diff(m)
    starts = np.flatnonzero(d == 1)
    ends = np.flatnonzero(d == -1) - 1
    return list(zip(starts.tolist(), ends.tolist()))


def level_set(p: Any, q: Any, threshold: float, *, inclusive: bool = False) -> LevelSet:
    """S = {y : ln p(y) − ln q(y) > threshold} (≥ with ``inclusive``) and its two masses."""
    P, Q = as_law(p), as_law(q)
    cmp = np.greater_equal if inclusive else np.greater
    diff = _log_ratio
    if isinstance(P, DiscreteLaw) and isinstance(Q, DiscreteLaw):
        atoms, lp, lq = _discrete_atoms(P, Q)
        keep = cmp(diff(lp, lq), threshold)
        idx = np.flatnonzero(keep)
        return LevelSet(float(np.exp(lp[idx]).sum()), float(np.exp(lq[idx]).sum()),
                        tuple(atoms[i] for i in idx), "atoms")
    if isinstance(P, PiecewiseConstantLaw) and isinstance(Q, PiecewiseConstantLaw):
        lo, hi, lp, lq = _merge_piecewise(P, Q)
        keep = cmp(diff(lp, lq), threshold)
        w = hi - lo
        parts = tuple((float(lo[a]), float(hi[b])) for a, b in _runs(keep))
        return LevelSet(float(np.sum(w[keep] * np.exp(lp[keep]))),
                        float(np.sum(w[keep] * np.exp(lq[keep]))), parts, "intervals")
    if isinstance(P, ContinuousLaw) and isinstance(Q, ContinuousLaw):
        g = evaluation_grid(P, Q)
        keep = cmp(diff(P.log_prob(g), Q.log_prob(g)), threshold)
        parts, pm, qm = [], 0.0, 0.0
        for a, b in _runs(keep):
            lo_v = -np.inf if a == 0 else float(g[a])
            hi_v = np.inf if b == g.size - 1 else float(g[b])
            parts.append((lo_v, hi_v))
            pm += float(P.dist.cdf(hi_v) - P.dist.cdf(lo_v))
            qm += float(Q.dist.cdf(hi_v) - Q.dist.cdf(lo_v))
        return LevelSet(pm, qm, tuple(parts), "intervals")
    raise TypeError(f"cannot compare a {type(P).__name__} with a {type(Q).__name__}")
