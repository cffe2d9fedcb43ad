"""The true ε of the structured-output mechanisms (:mod:`..controls.structured`), computed exactly.

**Sparse vector with one threshold** (Lyu, Su and Li 2017, Algs 1, 3-7). Queries q ∈ [lo, hi]^N,
neighbours in ℓ∞ (each answer moved by at most 1), threshold T, ρ ~ Lap(a), ν_i ~ Lap(b); query i
is ⊤ iff q_i + ν_i ≥ T + ρ. *Given ρ the answers are independent*, so an answer pattern with ⊥ on
the set B and ⊤ on the set A (queries after an abort do not appear) has probability

    P_q(B, A) = ∫ f_a(ρ) · Π_{i∈B} F_b(ρ + T − q_i) · Π_{j∈A} S_b(ρ + T − q_j) dρ,

a one-dimensional integral (:func:`pattern_prob`, ``scipy.integrate.quad``). F_b is decreasing in
q_i and S_b increasing, so for a fixed pattern the smallest P over the neighbours q' of q is at
q'_B = q_B + 1, q'_A = q_A − 1 (coordinate-wise monotone integrand); the true ε is the maximum over
patterns and over q of ln P_q − ln P_q' (:func:`pattern_loss`: a grid over one level for B and one
for A, then a box-constrained optimisation over every level; the value is attained by the pair it
reports, so it is a lower bound of the supremum, and the theorem's ε an upper bound).
The answer is a function of the counts |B|, |A| only (the integrand is symmetric in the levels).

**Numeric answers of the compared noise** (Alg 3): the released value v = q_k + ν_k of a ⊤ query
constrains ρ ≤ v − T. For v < min_i q_i every F_b(ρ+T−q_i) on ρ ≤ v − T is in its exponential
tail ½e^{z/b}, so the ρ-integral's ratio is exactly e^{|B|/b}, and the value's own density ratio
f_b(v−q_k)/f_b(v−q_k−1) = e^{1/b} (v ≤ q_k); pointwise in ρ no factor can exceed e^{1/b}, hence

    ε_true(Alg 3) = (|B| + |A|)/b = N/b   (c = 1: N ε₂; c = 2: N ε₂/2),

attained on the event {|B| = N − c ⊥'s, every value < −10} of positive probability
(:func:`alg3_epsilon`). As N → ∞ it grows without bound: Lyu-Su-Li's "∞-DP" for Alg 3.

**Report noisy max with its gap** (Ding, Wang, Zhang and Kifer 2019, "Free gap information", Alg 1
with k = 1): X_i = q_i + Lap(s); the output (i, g), g = X_i − max_{j≠i} X_j, has density

    p_q(i, g) = ∫ f_s(x − q_i) Σ_{j≠i} f_s(x − g − q_j) Π_{l≠i,j} F_s(x − g − q_l) dx

(:func:`gap_density`, Gauss-Legendre between the kinks); the density is not monotone in q_j, so the pair search moves every level
freely (:func:`gap_loss`). Ding et al. prove ε = 2/s (Lap(2/ε) gives ε-DP).

**Gaussian** x + N(0, σ²), sensitivity Δ: δ(ε) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ)
(Balle and Wang 2018, Thm 8); the true ε at δ is its root (:func:`gaussian_epsilon`).

**Two Laplace laws** (smooth-sensitivity median with Laplace noise): δ(ε) = ∫ (p − e^ε q)⁺, with
ln p − ln q piecewise linear between the two centres, integrated exactly with the Laplace CDF
(:func:`laplace_pair_delta`); :func:`laplace_pair_epsilon` is the root at δ.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy import integrate, optimize, stats

__all__ = ["pattern_prob", "pattern_loss", "alg3_epsilon", "gap_density", "gap_loss",
           "gaussian_delta", "gaussian_epsilon", "laplace_pair_delta", "laplace_pair_epsilon",
           "laplace_sum_sf"]

_QUAD = dict(epsabs=0.0, epsrel=1e-11, limit=400)


def _lap_pdf(z, b):
    return np.exp(-np.abs(z) / b) / (2 * b)


def _lap_cdf(z, b):
    return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0) / b), 1 - 0.5 * np.exp(-np.maximum(z, 0) / b))


def _quad_split(f, points: Sequence[float]) -> float:
    """∫_ℝ f, split at the kinks ``points`` (quad is exact to ~1e-11 on each smooth piece)."""
    pts = sorted(set(float(p) for p in points))
    total = integrate.quad(f, -np.inf, pts[0], **_QUAD)[0] + integrate.quad(f, pts[-1], np.inf, **_QUAD)[0]
    for lo, hi in zip(pts[:-1], pts[1:]):
        total += integrate.quad(f, lo, hi, **_QUAD)[0]
    return total


def pattern_prob(bot: Sequence[float], top: Sequence[float], a: float, b: float, t: float) -> float:
    """P(⊥ on the queries with answers ``bot``, ⊤ on those with answers ``top``) for a shared
    threshold T + Lap(a) and query noise Lap(b) (module docstring), by quad over ρ."""
    x, y = np.asarray(bot, float), np.asarray(top, float)

    def f(rho):
        return (_lap_pdf(rho, a) * np.prod(_lap_cdf(rho + t - x, b))
                * np.prod(1 - _lap_cdf(rho + t - y, b)))

    return _quad_split(f, [0.0, *(x - t), *(y - t)])


def laplace_sum_sf(z: float, a: float, b: float) -> float:
    """P(ν − ρ ≥ z) for ν ~ Lap(b), ρ ~ Lap(a), a ≠ b, z ≥ 0: (a²e^{−z/a} − b²e^{−z/b})/(2(a²−b²))
    (the density of a sum of two Laplaces, (a e^{−|z|/a} − b e^{−|z|/b})/(2(a²−b²)), integrated)."""
    return (a * a * math.exp(-z / a) - b * b * math.exp(-z / b)) / (2 * (a * a - b * b))


def pattern_loss(n_bot: int, n_top: int, a: float, b: float, t: float, lo: float = -10.0,
                 hi: float = 10.0, grid: int = 11, refine: bool = True) -> dict:
    """max over q in [lo, hi] of ln P_q − ln P_q', q' = q + 1 on ⊥ and q − 1 on ⊤: the largest loss of
    one answer pattern with ``n_bot`` ⊥'s and ``n_top`` ⊤'s (module docstring). Returns the loss and
    the levels (q on ⊥, q on ⊤) that attain it."""
    def loss(x, y):
        return (math.log(pattern_prob(x, y, a, b, t))
                - math.log(pattern_prob(np.asarray(x) + 1, np.asarray(y) - 1, a, b, t)))

    if n_bot + n_top == 0:
        return {"loss": 0.0, "bot": [], "top": []}
    xs, ys = np.linspace(lo, hi - 1, grid), np.linspace(lo + 1, hi, grid)
    best = (-np.inf, None, None)
    for xv in (xs if n_bot else [lo]):
        for yv in (ys if n_top else [hi]):
            v = loss([xv] * n_bot, [yv] * n_top)
            if v > best[0]:
                best = (v, xv, yv)
    x0 = [best[1]] * n_bot + [best[2]] * n_top
    out = {"loss": best[0], "bot": [best[1]] * n_bot, "top": [best[2]] * n_top}
    if refine:
        bounds = [(lo, hi - 1)] * n_bot + [(lo + 1, hi)] * n_top
        r = optimize.minimize(lambda z: -loss(z[:n_bot], z[n_bot:]), x0, method="L-BFGS-B",
                              bounds=bounds, options={"maxiter": 60})
        if -r.fun > out["loss"]:
            out = {"loss": float(-r.fun), "bot": list(r.x[:n_bot]), "top": list(r.x[n_bot:])}
    return out


def alg3_epsilon(n_queries: int, b: float) -> float:
    """Alg 3's true ε with N queries and query noise Lap(b): N/b (module docstring)."""
    return n_queries / b


_GL_X, _GL_W = np.polynomial.legendre.leggauss(48)


def _gl_split(f, points: Sequence[float], scale: float) -> float:
    """∫_ℝ f for a vectorised f with kinks at ``points`` and Laplace tails of scale ``scale``:
    48-point Gauss-Legendre on pieces at most ``scale`` wide between the kinks, over
    [min − 45·scale, max + 45·scale] (the tails beyond hold < e^{−45})."""
    pts = sorted(set(float(p) for p in points))
    edges = [pts[0] - 45 * scale, *pts, pts[-1] + 45 * scale]
    nodes, weights = [], []
    for lo, hi in zip(edges[:-1], edges[1:]):
        k = max(1, int(math.ceil((hi - lo) / scale)))
        for j in range(k):
            a, b = lo + (hi - lo) * j / k, lo + (hi - lo) * (j + 1) / k
            nodes.append((b - a) / 2 * _GL_X + (a + b) / 2)
            weights.append((b - a) / 2 * _GL_W)
    x, w = np.concatenate(nodes), np.concatenate(weights)
    return float(np.dot(w, f(x)))


def gap_density(i: int, g: float, q: Sequence[float], s: float) -> float:
    """Density of report-noisy-max's output (index i, gap g) under Lap(s) noise (module docstring),
    by :func:`_gl_split` over the maximum x."""
    q = np.asarray(q, float)
    others = np.delete(q, i)

    def f(x):
        z = x[:, None] - g - others[None, :]
        dens, cdf = _lap_pdf(z, s), _lap_cdf(z, s)
        tot = np.zeros(x.size)
        for j in range(others.size):
            tot += dens[:, j] * np.prod(np.delete(cdf, j, axis=1), axis=1)
        return _lap_pdf(x - q[i], s) * tot

    return _gl_split(f, [q[i], *(others + g)], s)


def gap_loss(n: int, s: float, lo: float = -10.0, hi: float = 10.0, starts: int = 12,
             seed: int = 0) -> dict:
    """max of ln p_q(0, g) − ln p_q'(0, g) over q, q' in [lo, hi]^n with |q − q'|∞ ≤ 1 and g ≥ 0:
    a grid over symmetric pairs (index 0 at one level, the others at another, each moved by ±1), then
    Nelder-Mead over every level and g from the best points (module docstring)."""
    def loss(z):
        q = np.clip(z[:n], lo, hi)
        d = np.clip(z[n:2 * n], -1, 1)
        qp = np.clip(q + d, lo, hi)
        g = abs(z[-1])
        return math.log(gap_density(0, g, q, s)) - math.log(gap_density(0, g, qp, s))

    cands = []
    for b0 in np.linspace(lo, hi, 5):
        for a0 in np.linspace(lo, hi, 5):
            for db in (-1.0, 1.0):
                for da in (-1.0, 1.0):
                    for g in (0.0, s, 4 * s):
                        z = np.r_[b0, [a0] * (n - 1), db, [da] * (n - 1), g]
                        cands.append((loss(z), z))
    cands.sort(key=lambda c: -c[0])
    rng = np.random.default_rng(seed)
    best_v, best_z = cands[0]
    for v, z in cands[:starts]:
        z = z + rng.normal(scale=0.05, size=z.size)
        r = optimize.minimize(lambda w: -loss(w), z, method="Nelder-Mead",
                              options={"maxiter": 1500, "xatol": 1e-6, "fatol": 1e-10})
        if -r.fun > best_v:
            best_v, best_z = -r.fun, r.x
    q = np.clip(best_z[:n], lo, hi)
    return {"loss": float(best_v), "q": list(q), "q_prime": list(np.clip(q + np.clip(best_z[n:2 * n], -1, 1), lo, hi)),
            "gap": float(abs(best_z[-1]))}


def gaussian_delta(epsilon: float, sigma: float, sensitivity: float = 1.0) -> float:
    """δ(ε) of x + N(0, σ²) at sensitivity Δ (Balle and Wang 2018, Thm 8)."""
    u, v = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
    return float(stats.norm.cdf(u - v) - math.exp(epsilon) * stats.norm.cdf(-u - v))


def gaussian_epsilon(delta: float, sigma: float, sensitivity: float = 1.0) -> float:
    """The smallest ε with δ(ε) ≤ ``delta`` for the Gaussian mechanism (root of :func:`gaussian_delta`)."""
    if gaussian_delta(0.0, sigma, sensitivity) <= delta:
        return 0.0
    return float(optimize.brentq(lambda e: gaussian_delta(e, sigma, sensitivity) - delta, 0.0, 200.0,
                                 xtol=1e-13))


def _lcdf(y: float, m: float, s: float) -> float:
    z = (y - m) / s
    return 0.5 * math.exp(z) if z < 0 else 1.0 - 0.5 * math.exp(-z)


def laplace_pair_delta(epsilon: float, m1: float, s1: float, m2: float, s2: float) -> float:
    """δ(ε) = ∫ (p − e^ε q)⁺ for p = Lap(m1, s1), q = Lap(m2, s2), exactly: ln p − ln q is linear
    on each piece between the centres, so {ln p − ln q > ε} is a union of at most three intervals."""
    knots = sorted((m1, m2))
    edges = [-math.inf, knots[0], knots[1], math.inf]
    total, ee = 0.0, math.exp(epsilon)
    for lo, hi in zip(edges[:-1], edges[1:]):
        if hi <= lo:
            continue
        y = (lo + hi) / 2 if math.isfinite(lo) and math.isfinite(hi) else (hi - 1 if math.isfinite(hi) else lo + 1)
        # r(y) = ln p − ln q = c0 + c1·y on this piece
        c1 = -math.copysign(1.0, y - m1) / s1 + math.copysign(1.0, y - m2) / s2
        c0 = (-abs(y - m1) / s1 + abs(y - m2) / s2 + math.log(s2 / s1)) - c1 * y
        if abs(c1) < 1e-300:
            a, b = (lo, hi) if c0 > epsilon else (0.0, 0.0)
        else:
            y0 = (epsilon - c0) / c1
            a, b = (max(lo, y0), hi) if c1 > 0 else (lo, min(hi, y0))
        if b > a:
            total += (_lcdf(b, m1, s1) - _lcdf(a, m1, s1)) - ee * (_lcdf(b, m2, s2) - _lcdf(a, m2, s2))
    return max(total, 0.0)


def laplace_pair_epsilon(delta: float, m1: float, s1: float, m2: float, s2: float) -> float:
    """The smallest ε ≥ 0 with :func:`laplace_pair_delta` ≤ ``delta`` (both directions of the pair)."""
    def worst(e):
        return max(laplace_pair_delta(e, m1, s1, m2, s2), laplace_pair_delta(e, m2, s2, m1, s1))

    if worst(0.0) <= delta:
        return 0.0
    return float(optimize.brentq(lambda e: worst(e) - delta, 0.0, 200.0, xtol=1e-12))
