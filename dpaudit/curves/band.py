"""Simultaneous confidence bounds on a score's two distributions, and the lower privacy curve,
μ and ρ bounds they give.

Let s be a score (a map from outputs to numbers, chosen on the selection split) and, for a
threshold t, a(t) = P[s(M(D)) ≥ t] and b(t) = P[s(M(D')) ≥ t]. For every event S and ε,
(ε, δ)-DP of the pair in both orders requires P[M(X) ∈ S] − e^ε P[M(X') ∈ S] ≤ δ(ε) for (X, X')
= (D, D') and (D', D). The threshold events and their complements give four such events per t:

====  ==========  =========  ===========================  ===========================
 o     event       order      P_num lower bound            P_den upper bound
====  ==========  =========  ===========================  ===========================
 +     s ≥ t       (D, D')    a_lo                         b_hi
 +     s < t       (D', D)    1 − b_hi                     1 − a_lo
 −     s ≥ t       (D', D)    b_lo                         a_hi
 −     s < t       (D, D')    1 − a_hi                     1 − b_lo
====  ==========  =========  ===========================  ===========================

so the two one-sided bounds (a_lo, b_hi) of orientation ``+`` at one threshold bound both orders
of the pair, and so do (a_hi, b_lo) of ``−``. (An unseen atom, whose score is NaN, counts as
−∞: ``s < t`` holds it, and the two events stay complements.) Given bounds that hold *at once*
for every event, every ε gets

    δ_LB(ε) = max over events of (P_num_lo − e^ε P_den_hi), at least 0,

a lower bound on the pair's privacy profile δ(ε) at every ε simultaneously. Two ways to get such
bounds from n validation samples per dataset that played no part in choosing s:

``cp`` (the default): K (threshold, orientation) pairs chosen on the selection split, each bound
    by an exact one-sided Clopper-Pearson bound (Clopper and Pearson 1934) at α/(2K): 2K bounds,
    all true with probability ≥ 1 − α by the union bound (Bonferroni), whatever the dependence
    between the samples of D and D'. Tight in the tails (δ of order 1/n), where δ(ε) lives at
    large ε.
``dkw``: one two-sided Dvoretzky-Kiefer-Wolfowitz band on each empirical survival function, of
    half-width w = √(ln(4/α)/(2n)) (Massart 1990: P[sup_t |F̂_n − F| > w] ≤ 2 e^(−2nw²) = α/2 per
    dataset), so *every* threshold holds at once: no threshold is chosen in advance. The same
    width at every t, hence loose in the tails; good where δ is large (ε near 0).

**μ (Gaussian DP).** A rejection region S for H0: the output came from M(D') against H1: M(D)
has false-positive rate FPR = P_den(S) and false-negative rate FNR = 1 − P_num(S). μ-GDP means
FNR ≥ G_μ(FPR) = Φ(Φ⁻¹(1 − FPR) − μ) for every S (Dong, Roth and Su 2022, Def. 2.1), so with
FPR ≤ FPR_hi and FNR ≤ FNR_hi,

    μ ≥ Φ⁻¹(1 − FPR_hi) − Φ⁻¹(FNR_hi) = Φ⁻¹(P_num_lo) − Φ⁻¹(P_den_hi)

(the Clopper-Pearson method of Nasr, Hayes, Steinke, Balle, Tramèr, Jagielski, Carlini and Terzis,
"Tight auditing of differentially private machine learning", USENIX Security 2023, §5). μ_LB is
the largest of these over the validated events, which hold at once, so μ_LB holds at the same
confidence as the curve.

**ρ (zCDP).** The curve a ρ-zCDP claim implies (:func:`dpaudit.curves.claims.zcdp_delta`)
increases with ρ, so a mechanism with δ(ε) ≥ δ_LB(ε) is ρ'-zCDP for no ρ' below the ρ whose curve
reaches δ_LB(ε) at ε: ρ_LB is the largest such ρ over the points evaluated. It bounds the ρ any
zCDP claim can state for this mechanism; it is below μ_LB²/2 (the ρ of a Gaussian mechanism
with that μ), since a zCDP claim implies a looser curve than the Gaussian one.

**Projection (selection only).** :func:`project` predicts, from selection counts, the bounds a
threshold would get on ``n_val`` validation samples: the selection frequencies are moved
:data:`Z_SELECT` standard errors the pessimistic way (Wilson 1927), then the band's bound is taken
at the validation size (a Wilson stand-in for Clopper-Pearson, or the DKW width). It only ranks
pairs, scores and thresholds; it never enters a reported bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from scipy.special import ndtri

from dpaudit.errors import InvalidArgument
from dpaudit.estimators.bounds import cp_lower, cp_upper, dkw_width  # dkw_width: re-exported
from dpaudit.estimators.selection import threshold_grid

__all__ = ["BANDS", "Events", "events_of", "cp_events", "dkw_events", "dkw_width", "Projection", "project",
           "candidate_thresholds", "ge_counts", "low", "Z_SELECT", "mu_from_rates"]

#: the ways to make the bounds simultaneous (module docstring)
BANDS = ("cp", "dkw")
#: selection frequencies are moved this many standard errors the pessimistic way before projecting
Z_SELECT = 1.0
#: at most this many candidate thresholds per score at selection (fewer when ranking pairs)
THRESHOLDS = 800


def low(s: np.ndarray) -> np.ndarray:
    """Score values with NaN (an atom never seen when the score was fitted) as −∞."""
    s = np.asarray(s, dtype=float)
    return np.where(np.isnan(s), -np.inf, s) if np.isnan(s).any() else s


def ge_counts(sorted_s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """#{s ≥ t} for each threshold t, from sorted score values (no NaN)."""
    return sorted_s.size - np.searchsorted(sorted_s, t, side="left")


def candidate_thresholds(sd: np.ndarray, sp: np.ndarray, most: int = THRESHOLDS) -> np.ndarray:
    """At most ``most`` thresholds among the finite pooled values of the two samples: all of them
    when few, else evenly spread ranks plus geometrically dense ranks in both tails (where the
    events of large ε live): the sampled audit's grid
    (:func:`dpaudit.estimators.selection.threshold_grid`)."""
    u = np.concatenate([sd, sp])
    return threshold_grid(np.unique(u[np.isfinite(u)]), most)


def mu_from_rates(p_lo: Any, q_hi: Any) -> np.ndarray:
    """Φ⁻¹(p_lo) − Φ⁻¹(q_hi) = Φ⁻¹(1 − FPR_hi) − Φ⁻¹(FNR_hi) (module docstring; Nasr et al. 2023);
    −∞ where it says nothing (p_lo = 0 or q_hi = 1)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        v = ndtri(np.asarray(p_lo, dtype=float)) - ndtri(np.asarray(q_hi, dtype=float))
    return np.where(np.isnan(v), -np.inf, v)


# ---------------------------------------------------------------------------------------------
# validated events

@dataclass(frozen=True, slots=True, eq=False)
class Events:
    """Validated events, arrays over events: ``side`` (``"above"``: s ≥ t, ``"below"``: s < t),
    ``threshold``, ``numerator`` (0: D's probability is the one bounded below, 1: D'), the
    simultaneous bounds ``p_lo`` (numerator) and ``q_hi`` (denominator), the validation
    frequencies ``p``, ``q``, and the validation sizes ``n_num``, ``n_den``. ``band`` names how
    the bounds were made simultaneous, ``level`` the error level of each one-sided bound."""

    side: np.ndarray
    threshold: np.ndarray
    numerator: np.ndarray
    p_lo: np.ndarray
    q_hi: np.ndarray
    p: np.ndarray
    q: np.ndarray
    n_num: np.ndarray
    n_den: np.ndarray
    band: str
    level: float

    @property
    def size(self) -> int:
        return int(self.p_lo.size)

    def deltas(self, eps: Any) -> np.ndarray:
        """P_num_lo − e^ε P_den_hi for every event (rows) and ε (columns)."""
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        with np.errstate(over="ignore", invalid="ignore"):
            d = self.p_lo[:, None] - np.exp(e)[None, :] * self.q_hi[:, None]
        return np.where(np.isnan(d), -np.inf, d)

    def delta_lb(self, eps: Any) -> tuple[np.ndarray, np.ndarray]:
        """δ_LB(ε) at each ε (at least 0) and the index of the event that gives it."""
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        if self.size == 0:
            return np.zeros(e.size), np.full(e.size, -1)
        d = self.deltas(e)
        best = np.argmax(d, axis=0)
        return np.maximum(0.0, d[best, np.arange(e.size)]), best

    def margin(self, eps: Any, index: np.ndarray) -> np.ndarray:
        """The band's slack at event ``index[j]`` and ε_j: (p − p_lo) + e^ε (q_hi − q), how far
        above its estimate a curve had to be at that event to be refuted (about half the time)."""
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        out = np.full(e.size, np.nan)
        ok = index >= 0
        i = index[ok]
        with np.errstate(over="ignore"):
            out[ok] = (self.p[i] - self.p_lo[i]) + np.exp(e[ok]) * (self.q_hi[i] - self.q[i])
        return out

    def mu_lb(self) -> tuple[float, int]:
        """μ_LB (module docstring), at least 0, and the event that gives it (−1: none)."""
        if self.size == 0:
            return 0.0, -1
        mu = mu_from_rates(self.p_lo, self.q_hi)
        i = int(np.argmax(mu))
        return (float(mu[i]), i) if mu[i] > 0 else (0.0, -1)

    def to_record(self) -> list:
        return [{"side": str(self.side[i]), "threshold": float(self.threshold[i]),
                 "numerator": "D" if int(self.numerator[i]) == 0 else "D'",
                 "p": float(self.p[i]), "p_lower": float(self.p_lo[i]),
                 "q": float(self.q[i]), "q_upper": float(self.q_hi[i])}
                for i in range(self.size)]


def events_of(t: np.ndarray, a: np.ndarray, b: np.ndarray, bounds: dict, orient: np.ndarray,
            n_d: int, n_p: int, band: str, level: float) -> Events:
    """The two events of each (threshold, orientation) (module docstring's table): ``bounds``
    holds ``a_lo``, ``a_hi``, ``b_lo``, ``b_hi`` (only the oriented ones are read)."""
    rows = []
    for k in range(t.size):
        if orient[k] > 0:
            a_lo, b_hi = bounds["a_lo"][k], bounds["b_hi"][k]
            rows.append(("above", t[k], 0, a_lo, b_hi, a[k], b[k], n_d, n_p))
            rows.append(("below", t[k], 1, 1.0 - b_hi, 1.0 - a_lo, 1.0 - b[k], 1.0 - a[k], n_p, n_d))
        else:
            a_hi, b_lo = bounds["a_hi"][k], bounds["b_lo"][k]
            rows.append(("above", t[k], 1, b_lo, a_hi, b[k], a[k], n_p, n_d))
            rows.append(("below", t[k], 0, 1.0 - a_hi, 1.0 - b_lo, 1.0 - a[k], 1.0 - b[k], n_d, n_p))
    cols = list(zip(*rows)) if rows else [()] * 9
    arr = lambda j, dt=float: np.asarray(cols[j], dtype=dt)  # noqa: E731
    return Events(side=np.asarray(cols[0], dtype=object), threshold=arr(1), numerator=arr(2, int),
                  p_lo=arr(3), q_hi=arr(4), p=arr(5), q=arr(6), n_num=arr(7, int), n_den=arr(8, int),
                  band=band, level=level)


def cp_events(thresholds: Any, orientation: Any, x_d: Any, x_p: Any, n_d: int, n_p: int,
              alpha: float) -> Events:
    """The ``cp`` band (module docstring): K (threshold, orientation) pairs with x_d = #{s_D ≥ t}
    of n_d and x_p = #{s_D' ≥ t} of n_p validation samples; two one-sided Clopper-Pearson bounds
    each, at α/(2K)."""
    t = np.asarray(thresholds, dtype=float).reshape(-1)
    o = np.asarray(orientation, dtype=int).reshape(-1)
    x_d, x_p = np.asarray(x_d, dtype=float).reshape(-1), np.asarray(x_p, dtype=float).reshape(-1)
    if not (t.size == o.size == x_d.size == x_p.size):
        raise InvalidArgument("thresholds, orientations and counts must have one entry each")
    if t.size == 0 or n_d <= 0 or n_p <= 0:
        return events_of(t, x_d, x_p, {}, o, n_d, n_p, "cp", alpha)
    level = alpha / (2 * t.size)
    bounds = {"a_lo": np.atleast_1d(cp_lower(x_d, n_d, level)), "a_hi": np.atleast_1d(cp_upper(x_d, n_d, level)),
              "b_lo": np.atleast_1d(cp_lower(x_p, n_p, level)), "b_hi": np.atleast_1d(cp_upper(x_p, n_p, level))}
    return events_of(t, x_d / n_d, x_p / n_p, bounds, o, n_d, n_p, "cp", level)


def dkw_events(sd: np.ndarray, sp: np.ndarray, alpha: float, most: int = 4 * THRESHOLDS) -> Events:
    """The ``dkw`` band (module docstring) on the validation scores ``sd``, ``sp`` (NaN as −∞):
    every threshold holds at once, so the events are those of up to ``most`` thresholds taken
    from the validation values themselves, in both orientations."""
    sd, sp = np.sort(low(sd)), np.sort(low(sp))
    n_d, n_p = sd.size, sp.size
    t = candidate_thresholds(sd, sp, most)
    a, b = ge_counts(sd, t) / max(1, n_d), ge_counts(sp, t) / max(1, n_p)
    wd, wp = dkw_width(n_d, alpha), dkw_width(n_p, alpha)
    bounds = {"a_lo": np.maximum(0.0, a - wd), "a_hi": np.minimum(1.0, a + wd),
              "b_lo": np.maximum(0.0, b - wp), "b_hi": np.minimum(1.0, b + wp)}
    both = np.concatenate([t, t])
    orient = np.concatenate([np.ones(t.size, int), -np.ones(t.size, int)])
    twice = {k: np.concatenate([v, v]) for k, v in bounds.items()}
    return events_of(both, np.concatenate([a, a]), np.concatenate([b, b]), twice, orient, n_d, n_p,
                   "dkw", alpha / 2)


# ---------------------------------------------------------------------------------------------
# projection (selection only)

def _wilson(p: Any, n: Any, z: float, upper: bool) -> np.ndarray:
    """Wilson's score bound (Wilson 1927) on a proportion p seen in n trials, z standard errors."""
    p = np.asarray(p, dtype=float)
    n = np.maximum(np.asarray(n, dtype=float), 1e-12)
    z2 = z * z
    half = z * np.sqrt(np.maximum(p * (1.0 - p), 0.0) / n + z2 / (4.0 * n * n))
    centre = p + z2 / (2.0 * n)
    b = (centre + half if upper else centre - half) / (1.0 + z2 / n)
    return np.clip(b, 0.0, 1.0)


#: the claimed δ below which a ratio δ_LB/δ_claim is taken as δ_LB/TINY (a claim of δ = 0)
TINY = 1e-300


@dataclass(frozen=True, slots=True, eq=False)
class Projection:
    """What a score's thresholds promise on the validation split (module docstring):
    ``thresholds`` (T), ``deltas`` (4, T, G: the four events of the table per threshold, at each
    grid ε), ``ratios`` (the same over δ_claim: above 1 where the claim would be refuted),
    ``mu`` (4, T). Events 0 and 1 are orientation ``+``, 2 and 3 orientation ``−``."""

    thresholds: np.ndarray
    deltas: np.ndarray
    ratios: np.ndarray
    mu: np.ndarray

    @property
    def objective(self) -> float:
        """The largest projected ratio δ_LB(ε)/δ_claim(ε) over thresholds and the grid: above 1
        where the claim would be refuted, and, below 1, how close the pair and score come. (A
        ratio, not the gap δ_LB − δ_claim: where the claimed curve is loose every pair's gap is
        largest, near 0, at large ε where both curves vanish, and the gap ranks nothing.)"""
        return float(np.max(self.ratios)) if self.ratios.size else -math.inf

    def choose(self, k: int, mu_first: bool = False) -> list[tuple[float, int]]:
        """At most ``k`` (threshold, orientation) pairs to validate, in this order: the one of the
        largest projected ratio δ_LB/δ_claim, the one of the largest projected μ (first with
        ``mu_first``: a GDP claim is refuted exactly where μ_LB > μ), then the best at grid
        points spread evenly over those where the projected δ_LB is positive."""
        if self.thresholds.size == 0 or k < 1:
            return []
        picks: list[tuple[float, int]] = []

        def add(c: int, i: int) -> None:
            pick = (float(self.thresholds[i]), 1 if c < 2 else -1)
            if pick not in picks and len(picks) < k:
                picks.append(pick)

        def add_mu() -> None:
            if np.isfinite(self.mu).any():
                c, i = np.unravel_index(int(np.argmax(self.mu)), self.mu.shape)
                if self.mu[c, i] > 0:
                    add(int(c), int(i))

        if mu_first:
            add_mu()
        c, i, _ = np.unravel_index(int(np.argmax(self.ratios)), self.ratios.shape)
        add(int(c), int(i))
        add_mu()
        best = self.deltas.max(axis=(0, 1))
        useful = np.flatnonzero(best > 0)
        if useful.size:
            for j in np.unique(np.linspace(0, useful.size - 1, max(1, k)).round().astype(int)):
                flat = self.deltas[:, :, useful[j]]
                c, i = np.unravel_index(int(np.argmax(flat)), flat.shape)
                add(int(c), int(i))
        return picks


def project(sd: np.ndarray, sp: np.ndarray, *, n_val: float, eps: np.ndarray, dclaim: np.ndarray,
            band: str = "cp", alpha_each: Optional[float] = None, alpha: Optional[float] = None,
            most: int = THRESHOLDS, z_select: float = Z_SELECT) -> Projection:
    """The :class:`Projection` of the score values ``sd`` (under D) and ``sp`` (under D') at
    ``n_val`` validation samples per dataset: ``cp`` at the per-bound level ``alpha_each``
    (α/(2K)), ``dkw`` at the run's ``alpha`` (module docstring)."""
    sd, sp = np.sort(low(sd)), np.sort(low(sp))
    t = candidate_thresholds(sd, sp, most)
    if t.size == 0 or sd.size == 0 or sp.size == 0:
        empty = np.zeros((4, 0, np.size(eps)))
        return Projection(t, empty, empty, np.zeros((4, 0)))
    a, b = ge_counts(sd, t) / sd.size, ge_counts(sp, t) / sp.size
    sel = {("a", lo): _wilson(a, sd.size, z_select, not lo) for lo in (True, False)}
    sel.update({("b", lo): _wilson(b, sp.size, z_select, not lo) for lo in (True, False)})
    if band == "dkw":
        w = dkw_width(int(max(1.0, n_val)), float(alpha))
        val = {k: np.clip(v - w if k[1] else v + w, 0.0, 1.0) for k, v in sel.items()}
    else:
        z = float(-ndtri(float(alpha_each)))
        val = {k: _wilson(v, n_val, z, not k[1]) for k, v in sel.items()}
    a_lo, a_hi, b_lo, b_hi = val[("a", True)], val[("a", False)], val[("b", True)], val[("b", False)]
    P = np.stack([a_lo, 1.0 - b_hi, b_lo, 1.0 - a_hi])
    Q = np.stack([b_hi, 1.0 - a_lo, a_hi, 1.0 - b_lo])
    e = np.asarray(eps, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        D = P[:, :, None] - np.exp(e)[None, None, :] * Q[:, :, None]
    D = np.where(np.isnan(D), -np.inf, D)
    claimed = np.maximum(np.asarray(dclaim, dtype=float), TINY)[None, None, :]
    return Projection(t, D, D / claimed, mu_from_rates(P, Q))
