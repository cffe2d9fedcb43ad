"""Mechanisms with structured outputs, as a user would write them; some correct, some not.

Vectorised batch forms ``f(data, rng, size=None)`` (``size`` outputs; one output when None); real
outputs lie on the grid 2⁻³⁰ℤ (post-processing of the mechanism over the reals, whose ε the truth
computes; as in the violation suite's Laplace row). The
true ε of each is computed in :mod:`..analysis.structured_truth`; the suite that audits them is
``benchmarks/structured_suite.py``. Claimed ε = :data:`EPS` = 0.1 unless a function says otherwise.

**Sparse vector** (Lyu, Su and Li 2017, "Understanding the sparse vector technique for
differential privacy", Table 1; Δ = 1, threshold T = 1, N = 10 queries given as ``data``): ρ ~
Lap(a) once, query i is ⊤ iff q_i + ν_i ≥ T + ρ with ν_i ~ Lap(b). Abort after c ⊤'s where the
algorithm does.

====  =====================  ====================  ===============================  ==========
Alg   a (threshold noise)    b (query noise)       released                          ε-DP?
====  =====================  ====================  ===============================  ==========
1     1/ε₁, ε₁ = ε/2         2c/ε₂                 ⊤/⊥, abort after c                ε
2     c/ε₁ (fresh after ⊤)   2c/ε₁                 ⊤/⊥, abort after c                ε
3     1/ε₁                   c/ε₂                  q_i + ν_i for ⊤, abort after c    no (N ε₂/c)
4     1/ε₁, ε₁ = ε/4         1/ε₂                  ⊤/⊥, abort after c                (1+6c)/4·ε
5     1/ε₁                   0                     ⊤/⊥, no abort                     ∞
6     1/ε₁                   1/ε₂                  ⊤/⊥, no abort                     N ε₂ here
7     1/ε₁                   2c/ε₂                 q_i + Lap(c/ε₃) for ⊤, abort      ε₁+ε₂+ε₃
====  =====================  ====================  ===============================  ==========

Common variants: the index of the first ⊤ or ``None`` (Alg 1's noise, c = 1); the tuple of
the indices of the ⊤'s (Alg 1 with abort, c = 2; Alg 6; Alg 1's noise without abort); the pair
(index, value) of the first ⊤ or ``None`` (Alg 3's release, c = 1).

**Report noisy max with its gap** (Ding, Wang, Zhang and Kifer 2019, Alg 1, k = 1): the index of
the largest q_i + Lap(s) and its gap to the runner-up; ε-DP with s = 2/ε, claimed here also with the
monotone-query scale s = 1/ε, which ℓ∞ neighbours (moves in both directions) do not allow.

**Gaussian with σ for the wrong δ**: x + N(0, σ²) with σ the analytic Gaussian σ (Balle and Wang
2018) for (ε, δ) = (1, 10⁻²), claimed (1, 10⁻³).

**Smooth-sensitivity median with the β of the wrong privacy notion**: T(S) + (SS_β(S)/α)·Lap(1)
(docs/math.md#ss-mechanisms, the (ε, δ) mechanism), α = ε/2, but β = ε/2, the smoothing of the pure-ε Cauchy
mechanism (NRS07 full version, β = ε/γ), instead of ε/(2 ln(2/δ')); claimed (1, 10⁻³),
replace-one, 5 records in [0, 1].
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..analysis.smooth_sensitivity import median_of, median_smooth_sensitivity

EPS = 0.1
T = 1.0
FALSE, ABORT = -1000.0, -2000.0


def _grid(x):
    """Real outputs rounded to the grid 2⁻³⁰ℤ: the mechanism over the reals, post-processed (raw
    float64 sums are porous, not DP for any ε, and dpaudit's float events refute that)."""
    return np.round(np.asarray(x, float) * 2.0**30) / 2.0**30


def _n(size: Optional[int]) -> int:
    return 1 if size is None else int(size)


def _ret(out, size: Optional[int]):
    return out if size is not None else out[0]


def _above(q, rng, n: int, a: float, b: float) -> np.ndarray:
    """(n, N) booleans q_i + ν_i ≥ T + ρ, one ρ ~ Lap(a) per row (b = 0: no query noise)."""
    rho = rng.laplace(scale=a, size=(n, 1))
    nu = rng.laplace(scale=b, size=(n, q.size)) if b else 0.0
    return (q + nu) >= (T + rho)


def _live(above: np.ndarray, c: int) -> np.ndarray:
    """True where a query is still answered: fewer than c ⊤'s before it."""
    count = np.cumsum(above, axis=1)
    return np.concatenate([np.ones((above.shape[0], 1), bool), count[:, :-1] < c], axis=1)


def _bits(above: np.ndarray, c: Optional[int]) -> np.ndarray:
    """1 ⊤, 0 ⊥, −1 aborted (DP-Sniper's encoding); ``c=None``: no abort."""
    out = above.astype(np.int8)
    return out if c is None else np.where(_live(above, c), out, np.int8(-1))


def _indices(above: np.ndarray, c: Optional[int]) -> list:
    """Tuples of the indices of the answered ⊤'s."""
    if c is not None:
        above = above & _live(above, c)
    rows, cols = np.nonzero(above)
    split = np.searchsorted(rows, np.arange(1, above.shape[0]))
    return [tuple(x.tolist()) for x in np.split(cols, split)]


def _alg1_scales(c: int):
    e1 = EPS / 2
    return 1 / e1, 2 * c / (EPS - e1)


def svt1_c1(data, rng, size=None):
    """Alg 1, c = 1: ⊤/⊥ with abort."""
    return _ret(_bits(_above(data, rng, _n(size), *_alg1_scales(1)), 1), size)


def svt1_c2(data, rng, size=None):
    """Alg 1, c = 2: ⊤/⊥ with abort."""
    return _ret(_bits(_above(data, rng, _n(size), *_alg1_scales(2)), 2), size)


def svt1_first_index(data, rng, size=None):
    """Alg 1, c = 1, released as the index of the first ⊤ or None."""
    above = _above(data, rng, _n(size), *_alg1_scales(1))
    first = np.argmax(above, axis=1)
    out = [int(k) if hit else None for k, hit in zip(first, above.any(axis=1))]
    return _ret(out, size)


def svt1_indices_c2(data, rng, size=None):
    """Alg 1, c = 2, released as the tuple of the (at most 2) indices of the ⊤'s."""
    return _ret(_indices(_above(data, rng, _n(size), *_alg1_scales(2)), 2), size)


def svt1_no_abort(data, rng, size=None):
    """Alg 1's noise for c = 1 but every query answered (no abort): the tuple of all ⊤ indices."""
    return _ret(_indices(_above(data, rng, _n(size), *_alg1_scales(1)), None), size)


def svt2_c2(data, rng, size=None):
    """Alg 2 (Dwork and Roth 2014), c = 2: ρ ~ Lap(c/ε₁) drawn afresh after each ⊤; ⊤/⊥ with abort."""
    c, e1 = 2, EPS / 2
    n = _n(size)
    rho = rng.laplace(scale=c / e1, size=n)
    nu = rng.laplace(scale=2 * c / e1, size=(n, data.size))
    out = np.empty((n, data.size), dtype=np.int8)
    count = np.zeros(n)
    for i in range(data.size):
        above = data[i] + nu[:, i] >= rho + T
        out[:, i] = np.where(count >= c, -1, above)
        count += above & (count < c)
        rho = np.where(above, rng.laplace(scale=c / e1, size=n), rho)
    return _ret(out, size)


def _alg3(data, rng, n: int, c: int):
    e1 = EPS / 2
    rho = rng.laplace(scale=1 / e1, size=(n, 1))
    m = data + rng.laplace(scale=c / (EPS - e1), size=(n, data.size))
    return _grid(m), m >= rho + T


def svt3_c1(data, rng, size=None):
    """Alg 3 (Roth's lecture notes), c = 1: q_i + ν_i for ⊤, −1000 for ⊥, −2000 after the abort."""
    m, above = _alg3(data, rng, _n(size), 1)
    return _ret(np.where(_live(above, 1), np.where(above, m, FALSE), ABORT), size)


def svt3_c2(data, rng, size=None):
    """Alg 3, c = 2: the numeric answers as in :func:`svt3_c1`."""
    m, above = _alg3(data, rng, _n(size), 2)
    return _ret(np.where(_live(above, 2), np.where(above, m, FALSE), ABORT), size)


def svt3_index_value(data, rng, size=None):
    """Alg 3, c = 1, released as (index, noisy value) of the first ⊤, or None."""
    m, above = _alg3(data, rng, _n(size), 1)
    first = np.argmax(above, axis=1)
    val = m[np.arange(m.shape[0]), first]
    out = [(int(k), float(v)) if hit else None for k, v, hit in zip(first, val, above.any(axis=1))]
    return _ret(out, size)


def _alg4(data, rng, size, c):
    e1 = EPS / 4
    return _ret(_bits(_above(data, rng, _n(size), 1 / e1, 1 / (EPS - e1)), c), size)


def svt4_c1(data, rng, size=None):
    """Alg 4 (Lee and Clifton 2014), c = 1: ε₁ = ε/4, ν ~ Lap(1/ε₂); ⊤/⊥ with abort."""
    return _alg4(data, rng, size, 1)


def svt4_c2(data, rng, size=None):
    """Alg 4, c = 2."""
    return _alg4(data, rng, size, 2)


def svt5(data, rng, size=None):
    """Alg 5 (Stoddard et al. 2014): no query noise, every query answered ⊤/⊥."""
    return _ret(_bits(_above(data, rng, _n(size), 2 / EPS, 0.0), None), size)


def svt6_indices(data, rng, size=None):
    """Alg 6 (Chen et al. 2015): ν ~ Lap(1/ε₂), no abort; the tuple of all ⊤ indices."""
    return _ret(_indices(_above(data, rng, _n(size), 2 / EPS, 2 / EPS), None), size)


def alg7_budget(c: int) -> tuple[float, float, float]:
    """(ε₁, ε₂, ε₃) of Alg 7: ε₃ = ε/2 for the values, ε₁ : ε₂ = 1 : (2c)^{2/3} (Lyu et al. §4.2)."""
    e3 = EPS / 2
    e1 = (EPS - e3) / (1 + (2 * c) ** (2 / 3))
    return e1, EPS - e3 - e1, e3


def svt7_c1(data, rng, size=None):
    """Alg 7, c = 1: q_i + Lap(c/ε₃) (fresh noise) for ⊤, −1000 for ⊥, −2000 after the abort."""
    e1, e2, e3 = alg7_budget(1)
    n = _n(size)
    above = _above(data, rng, n, 1 / e1, 2 / e2)
    val = _grid(data + rng.laplace(scale=1 / e3, size=(n, data.size)))
    return _ret(np.where(_live(above, 1), np.where(above, val, FALSE), ABORT), size)


def _gap(data, rng, size, s):
    x = data + rng.laplace(scale=s, size=(_n(size), data.size))
    top2 = np.partition(x, -2, axis=1)[:, -2:]
    idx = np.argmax(x, axis=1)
    gap = _grid(top2[:, 1] - top2[:, 0])
    return _ret(list(zip(idx.tolist(), gap.tolist())), size)


def rnm_gap(data, rng, size=None):
    """Report noisy max with gap, Lap(2/ε): (index, gap)."""
    return _gap(data, rng, size, 2 / EPS)


def rnm_gap_monotone_scale(data, rng, size=None):
    """Report noisy max with gap at the monotone-query scale Lap(1/ε), under ℓ∞ neighbours."""
    return _gap(data, rng, size, 1 / EPS)


#: Gaussian row: claimed (ε, δ), and the δ its σ was computed for
GAUSS_EPS, GAUSS_DELTA, GAUSS_WRONG_DELTA = 1.0, 1e-3, 1e-2


def gaussian_sigma(epsilon: float, delta: float) -> float:
    """The analytic Gaussian σ (Balle and Wang 2018, Alg 1): the smallest σ with δ(ε) ≤ δ at Δ = 1."""
    from scipy import optimize

    from ..analysis.structured_truth import gaussian_delta

    return float(optimize.brentq(lambda s: gaussian_delta(epsilon, s) - delta, 1e-3, 1e3, xtol=1e-14))


_SIGMA = None


def gaussian_wrong_delta(data, rng, size=None):
    """x + N(0, σ²), σ for (1, 10⁻²), claimed (1, 10⁻³)."""
    global _SIGMA
    if _SIGMA is None:
        _SIGMA = gaussian_sigma(GAUSS_EPS, GAUSS_WRONG_DELTA)
    return _ret(_grid(data[0] + _SIGMA * rng.standard_normal(_n(size))), size)


#: smooth-sensitivity row: claimed (ε, δ), α, β, domain
SS_EPS, SS_DELTA = 1.0, 1e-3
SS_ALPHA, SS_BETA = SS_EPS / 2, SS_EPS / 2


def ss_median_law(data) -> tuple[float, float]:
    """(centre, scale) of the smooth-sensitivity median's Laplace output law."""
    x = np.clip(np.asarray(data, float), 0.0, 1.0)
    return median_of(x, "low"), median_smooth_sensitivity(x, SS_BETA, 0.0, 1.0, "replace") / SS_ALPHA


def ss_median_pure_beta(data, rng, size=None):
    """The (LOW) median plus Laplace noise of scale SS_β/α with β = ε/2 (the pure-ε rule)."""
    t, s = ss_median_law(data)
    return _ret(_grid(t + s * rng.laplace(size=_n(size))), size)
