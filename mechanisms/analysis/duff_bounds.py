"""The error bound of Duff (Muñoz Medina and Gillenwater (2020) Theorem 1, restated; docs/math.md#duff-theorem-1).

Let H_t = {x : c(x) ≤ t} (c the Duff cost, :mod:`~dpaudit.reference.duff`), λ the Lebesgue measure,
W = W₀(ε(b − a)/(Cδ)) (principal Lambert branch, ``scipy.special.lambertw``), t* = 4W/ε and
β_exp = ε/(4W) = 1/t*. If the growth assumption holds, then with probability ≥ 1 − δ Duff's output x
satisfies

    |x − T(S)| < 4(e − 1)·SS_{β_exp}(S)·W/ε = (e − 1)·t*·SS_{1/t*}(S),

with SS the add/remove smooth sensitivity of the (AVG) median (docs/math.md#median-ss-add-remove).

Proof sketch [D]: P(c ≥ t) ≤ (b − a)e^{−εt/2} / (λ(H_{t/2})e^{−εt/4}) ≤ 2(b − a)e^{−εt/4}/(Ct) when
λ(H_{t/2}) ≥ C·t/2, which is ≤ δ at t = t* (already at (4/ε)W(ε(b−a)/(2Cδ)); the seed's Cδ is
larger, hence also valid). If c(x) < t a chain of fewer than t add/remove steps reaches a dataset
with median x, so |x − T| ≤ Σ_{k<t} A^{(k)} ≤ (e − 1)·t·SS_{1/t}.

**The assumption.** Muñoz Medina and Gillenwater (2020) asks λ(H_t) ≥ C·t for all t. That fails at t < 1 (H_0 is a null set;
E4) and, since λ(H_t) ≤ b − a, also for every t > (b − a)/C: no C > 0 satisfies it on all t ≥ 1.
The proof uses it only at t*/2, so :func:`theorem1_assumption_holds` checks exactly
λ(H_{t*/2}) ≥ C·t*/2, and :func:`theorem1_constant` finds the largest such C for a dataset.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from scipy.special import lambertw

from dpaudit.claims import Domain, check_delta, check_epsilon
from dpaudit.errors import InvalidArgument
from ..duff import duff_pieces
from .smooth_sensitivity import median_smooth_sensitivity

__all__ = [
    "Theorem1Bound",
    "level_set_measure",
    "theorem1_radius",
    "theorem1_assumption_holds",
    "theorem1_constant",
    "theorem1_bound",
]

_VARIANTS = ("seed", "sharp")


def _check_c(C: Any) -> float:
    try:
        v = float(C)
    except (TypeError, ValueError):
        raise InvalidArgument.bad("C", C, "a finite number > 0") from None
    if isinstance(C, bool) or not math.isfinite(v) or v <= 0:
        raise InvalidArgument.bad("C", C, "a finite number > 0")
    return v


def _check_theorem_delta(delta: Any) -> float:
    d = check_delta(delta)
    if d == 0:
        raise InvalidArgument.bad("delta", delta, "a number in (0, 1)")
    return d


@dataclass(frozen=True, slots=True)
class Theorem1Bound:
    """One evaluation of Theorem 1: the constant C used, W, t* = 4W/ε, β_exp = ε/(4W), the add/remove
    smooth sensitivity SS_{β_exp}(S), the ``bound`` 4(e − 1)·SS·W/ε, and whether the growth
    assumption λ(H_{t*/2}) ≥ C·t*/2 holds for this dataset (if not, the bound is not guaranteed)."""

    C: float
    W: float
    radius: float
    beta: float
    smooth_sensitivity: float
    bound: float
    assumption_holds: bool


def level_set_measure(data: Any, t: float, convention: str = "avg", lo: float = 0.0,
                      hi: float = 1.0) -> float:
    """λ(H_t) = λ{x ∈ [lo, hi] : c(x) ≤ t}, summed over the cells of :func:`duff_pieces`."""
    return _measure(_level_table(data, convention, lo, hi), t)


def _level_table(data: Any, convention: str, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """The cell costs sorted, with the cumulative cell lengths: λ(H_t) by one binary search."""
    edges, costs = duff_pieces(data, convention, Domain(lo, hi))
    order = np.argsort(costs, kind="stable")
    return costs[order], np.cumsum(np.diff(edges)[order])


def _measure(table: tuple[np.ndarray, np.ndarray], t: float) -> float:
    costs, cum = table
    k = int(np.searchsorted(costs, float(t), side="right"))
    return float(cum[k - 1]) if k else 0.0


def theorem1_radius(epsilon: float, delta: float, C: float, lo: float = 0.0, hi: float = 1.0,
                    variant: str = "seed") -> float:
    """t* = (4/ε)·W₀(ε(b − a)/(Cδ)) (``"seed"``) or (4/ε)·W₀(ε(b − a)/(2Cδ)) (``"sharp"``)."""
    eps, d, c = check_epsilon(epsilon), _check_theorem_delta(delta), _check_c(C)
    dom = Domain(lo, hi)
    if variant not in _VARIANTS:
        raise InvalidArgument.bad("variant", variant, "'seed' or 'sharp'")
    arg = eps * dom.width / (c * d) / (1.0 if variant == "seed" else 2.0)
    return 4.0 * float(lambertw(arg, 0).real) / eps


def theorem1_assumption_holds(data: Any, epsilon: float, delta: float, C: float, lo: float = 0.0,
                              hi: float = 1.0, variant: str = "seed") -> bool:
    """λ(H_{t*/2}) ≥ C·t*/2 (AVG median): the growth condition where the proof uses it."""
    return _holds(_level_table(data, "avg", lo, hi), epsilon, delta, C, lo, hi, variant)


def _holds(table, epsilon: float, delta: float, C: float, lo: float, hi: float, variant: str) -> bool:
    t = theorem1_radius(epsilon, delta, C, lo, hi, variant)
    return _measure(table, t / 2.0) >= _check_c(C) * t / 2.0


def theorem1_constant(data: Any, epsilon: float, delta: float, lo: float = 0.0, hi: float = 1.0,
                      variant: str = "seed") -> Optional[float]:
    """The largest C (to 1e-9 relative) with λ(H_{t*(C)/2}) ≥ C·t*(C)/2, or None if none exists.

    The left side falls and the right side rises as C grows (t* falls, C·W(K/C) rises), so the
    feasible set is an interval (0, C_max] and bisection on ln C finds C_max.
    """
    dom = Domain(lo, hi)
    table = _level_table(data, "avg", dom.lo, dom.hi)

    def ok(c: float) -> bool:
        return _holds(table, epsilon, delta, c, dom.lo, dom.hi, variant)

    lo_c, hi_c = 1e-300, dom.width  # λ(H) ≤ b − a and t*/2 ≥ 1 is needed, so C ≤ b − a
    if not ok(lo_c):
        return None
    if ok(hi_c):
        return hi_c
    llo, lhi = math.log(lo_c), math.log(hi_c)
    while lhi - llo > 1e-9:
        mid = (llo + lhi) / 2
        if ok(math.exp(mid)):
            llo = mid
        else:
            lhi = mid
    return math.exp(llo)


def theorem1_bound(data: Any, epsilon: float, delta: float, C: Optional[float] = None,
                   lo: float = 0.0, hi: float = 1.0, variant: str = "seed") -> Theorem1Bound:
    """Muñoz Medina and Gillenwater (2020) Theorem 1: 4(e − 1)·SS_{β_exp}(S)·W/ε with β_exp = ε/(4W) (docs/math.md#duff-theorem-1).

    ``C=None`` uses :func:`theorem1_constant` (the best C for which the growth assumption holds).
    The theorem is for Duff with the AVG median (the convention whose add/remove smooth
    sensitivity docs/math.md#median-ss-add-remove gives); SS and H_t both use it.
    """
    eps = check_epsilon(epsilon)
    if C is None:
        C = theorem1_constant(data, eps, delta, lo, hi, variant)
        if C is None:
            raise InvalidArgument.bad("data", data, "a dataset for which some C > 0 satisfies the "
                                      "growth assumption of Theorem 1")
    c = _check_c(C)
    t = theorem1_radius(eps, delta, c, lo, hi, variant)
    W = eps * t / 4.0
    beta = eps / (4.0 * W)
    ss = median_smooth_sensitivity(data, beta, lo, hi, "add-remove")
    holds = theorem1_assumption_holds(data, eps, delta, c, lo, hi, variant)
    return Theorem1Bound(c, W, t, beta, ss, 4.0 * (math.e - 1.0) * ss * W / eps, holds)
