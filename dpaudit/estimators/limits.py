"""The limits of a budget: the largest ε its validation could have certified and the smallest δ
it could have seen, for the bound actually used.

A validated bound is a function of counts on n validation samples per dataset at a per-candidate
level α (:mod:`dpaudit.estimators.bounds`). However extreme the mechanism, those counts are at
best "every output of D in the event, none of D′", so the bound has a ceiling set by n and α
alone, and a NOT REFUTED verdict says nothing about claims above it.

**ε ceiling.** The one-sided Clopper-Pearson bounds at the extremes are exact: the lower bound
for k = n successes is the Beta(α; n, 1) quantile α^{1/n}, and the upper bound for k = 0 is
1 − α^{1/n} (Clopper and Pearson 1934). For the ``marginal`` bound with its α split (w₀, w₁),

    ε_ceiling = ln( (α w₀)^{1/n} / (1 − (α w₁)^{1/n′}) )  ≈  ln( n / ln(1/(α w₁)) ),

i.e. ≈ ln(n / ln(2/α)) with the even split; the ``ratio`` bound (Lehmann and Romano, TSH §4.5)
and the ``paired`` bound have their own ceilings, which :func:`epsilon_ceiling` computes by
evaluating the method itself at the extreme counts (x = n, y = 0, and for ``paired`` a = 0). It
is the exact supremum of the bound over all counts at these sizes: each method's bound grows
with x and falls with y and a.

**δ floor.** At the claimed ε, δ_LB = p_lo − e^ε q_hi (:meth:`~dpaudit.estimators.bounds.BoundMethod.validated`).
An event never seen on D′ has q_hi = 1 − (α w₁)^{1/n′} ≈ ln(1/(α w₁))/n′, so no δ below
e^ε q_hi can show at all. :func:`delta_floor` is the smallest frequency k/n of an event on D,
never seen on D′, whose lower bound clears that: the least k with
cp_lower(k, n, α w₀) > e^ε (1 − (α w₁)^{1/n′}), divided by n; about (1 + e^ε) ln(1/α)/n.
A mechanism whose δ(ε) at the claimed ε is below it cannot be refuted by this budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from dpaudit.estimators.bounds import Counts, cp_lower, cp_upper, method as bound_method

__all__ = ["Limits", "epsilon_ceiling", "delta_floor", "limits_of", "curve_limits"]


@dataclass(frozen=True, slots=True)
class Limits:
    """The ε ceiling and δ floor of one verdict's budget (module docstring), the sizes and level
    they come from, and the ``basis`` (``"validation"``: the counts actually validated;
    ``"budget"``: nothing was validated, so the run's samples, all as if validated)."""

    epsilon_ceiling: float
    delta_floor: float
    n_num: int
    n_den: int
    alpha: float
    method: str
    basis: str = "validation"

    def to_record(self) -> dict:
        return {"epsilon_ceiling": self.epsilon_ceiling, "delta_floor": self.delta_floor,
                "n_D": self.n_num, "n_D_prime": self.n_den, "alpha": self.alpha,
                "method": self.method, "basis": self.basis}

    def text(self) -> str:
        """``this budget cannot show ε above 11.3 nor δ below 4.1e-06`` (the NOT REFUTED line):
        no bound it gives can be larger, and no smaller δ can be seen, whatever the event."""
        return (f"this budget cannot show ε above {self.epsilon_ceiling:.3g} "
                f"nor δ below {self.delta_floor:.2g}")


def _weights(split: tuple) -> tuple:
    s = float(sum(split))
    return tuple(float(w) / s for w in split)


def epsilon_ceiling(method: str, n_num: int, n_den: int, alpha: float, split: tuple = (0.5, 0.5),
                    lam_num: Optional[float] = None, lam_den: Optional[float] = None) -> float:
    """The largest ε_LB the bound ``method`` can give on ``n_num``/``n_den`` validation samples at
    level ``alpha`` split as ``split`` (module docstring): the method at x = n, y = 0 (a = 0)."""
    n_num, n_den = int(n_num), int(n_den)
    if n_num <= 0 or n_den <= 0 or not 0 < alpha < 1:
        return 0.0
    m = bound_method(method)
    if method == "paired":
        c = Counts(n_num, n_num, n_num, 0, a=0)
    elif method == "ratio":
        c = Counts(n_num, n_den, n_num, 0, lam_num=float(lam_num or n_num), lam_den=float(lam_den or n_den))
    else:
        c = Counts(n_num, n_den, n_num, 0)
    if not m.usable(c):
        m, split = bound_method("marginal"), (0.5, 0.5)
        c = Counts(n_num, n_den, n_num, 0)
    import numpy as np

    return float(m.epsilon_lb(c, alpha, np.asarray(_weights(split)), 0.0))


def delta_floor(n_num: int, n_den: int, alpha: float, epsilon: float,
                split: tuple = (0.5, 0.5)) -> float:
    """The smallest δ(ε) at ``epsilon`` that ``n_num``/``n_den`` validation samples at level
    ``alpha`` can show (module docstring): min k/n_num with
    cp_lower(k, n_num, α w₀) > e^ε (1 − (α w₁)^{1/n_den}); 1 when none can."""
    n_num, n_den = int(n_num), int(n_den)
    if n_num <= 0 or n_den <= 0 or not 0 < alpha < 1 or not math.isfinite(epsilon):
        return 1.0
    w = _weights(split)
    q_hi = float(cp_upper(0, n_den, alpha * w[1]))
    need = math.exp(min(epsilon, 700.0)) * q_hi
    if float(cp_lower(n_num, n_num, alpha * w[0])) <= need:
        return 1.0
    lo, hi = 0, n_num  # cp_lower(lo) <= need < cp_lower(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if float(cp_lower(mid, n_num, alpha * w[0])) > need:
            hi = mid
        else:
            lo = mid
    return hi / n_num


def limits_of(method: str, n_num: int, n_den: int, alpha: float, epsilon: float,
              split: tuple = (0.5, 0.5), lam_num: Optional[float] = None,
              lam_den: Optional[float] = None, basis: str = "validation") -> Limits:
    """The :class:`Limits` of a bound ``method`` on these validation sizes, at the per-candidate
    level ``alpha`` and the claimed ``epsilon``. The δ floor uses the method's first two weights
    for (p, q), as :meth:`~dpaudit.estimators.bounds.BoundMethod.validated`'s δ_LB does."""
    w = _weights(split)
    pq = (w[0], w[1]) if len(w) >= 2 else (0.5, 0.5)
    return Limits(epsilon_ceiling(method, n_num, n_den, alpha, split, lam_num, lam_den),
                  delta_floor(n_num, n_den, alpha, epsilon, pq), int(n_num), int(n_den),
                  float(alpha), method, basis)


def curve_limits(n: int, level: float) -> Limits:
    """The limits of a curve audit's band (:mod:`dpaudit.curves.band`) on ``n`` validation
    samples per dataset, each one-sided bound at ``level``: the largest ε at which δ_LB(ε) can be
    positive, ln(level^{1/n} / (1 − level^{1/n})), and the δ floor at ε = 0."""
    return Limits(epsilon_ceiling("marginal", n, n, 2 * level), delta_floor(n, n, 2 * level, 0.0),
                  int(n), int(n), float(level), "cp", "validation")
