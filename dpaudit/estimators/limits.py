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

**Out of reach.** A claim (ε, δ) is refuted when ε_LB, computed with δ taken off p_lo, exceeds
ε; the largest ε_LB the counts allow at that δ, :attr:`Limits.claim_ceiling`, is the ε ceiling
at the claimed δ (the ε ceiling itself for a pure claim). When it is at most the claimed ε, no
outcome of the run could have refuted the claim, whatever the mechanism does (one that publishes
its input included): such a NOT REFUTED says nothing, and the audit reports it INCONCLUSIVE
(:func:`reach_factor`: by how much the validation would have to grow for the claim to come
within reach; ε_ceiling grows as ln n, so about e^ε ln(1/α) samples per dataset).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

from dpaudit.estimators.bounds import Counts, cp_lower, cp_upper, method as bound_method

__all__ = ["Limits", "epsilon_ceiling", "delta_floor", "limits_of", "curve_limits", "reach_factor",
           "curve_within_reach", "curve_reach_factor", "budget_to_reach"]


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
    #: the largest ε_LB at the claimed δ (module docstring, "Out of reach"); None: not computed
    claim_ceiling: Optional[float] = None

    def to_record(self) -> dict:
        rec = {"epsilon_ceiling": self.epsilon_ceiling, "delta_floor": self.delta_floor,
               "n_D": self.n_num, "n_D_prime": self.n_den, "alpha": self.alpha,
               "method": self.method, "basis": self.basis}
        if self.claim_ceiling is not None:
            rec["epsilon_ceiling_at_claimed_delta"] = self.claim_ceiling
        return rec

    def out_of_reach(self, epsilon: float) -> bool:
        """Whether no outcome of this budget could refute a claim of ``epsilon`` (at the δ the
        claim ceiling was computed for): the claim ceiling is at most ``epsilon``."""
        return self.claim_ceiling is not None and self.claim_ceiling <= epsilon

    def text(self) -> str:
        """``this budget cannot show ε above 11.3 nor δ below 4.1e-06`` (the NOT REFUTED line):
        no bound it gives can be larger, and no smaller δ can be seen, whatever the event."""
        return (f"this budget cannot show ε above {self.epsilon_ceiling:.3g} "
                f"nor δ below {self.delta_floor:.2g}")


def _weights(split: tuple) -> tuple:
    s = float(sum(split))
    return tuple(float(w) / s for w in split)


def epsilon_ceiling(method: str, n_num: int, n_den: int, alpha: float, split: tuple = (0.5, 0.5),
                    lam_num: Optional[float] = None, lam_den: Optional[float] = None,
                    delta: float = 0.0) -> float:
    """The largest ε_LB the bound ``method`` can give on ``n_num``/``n_den`` validation samples at
    level ``alpha`` split as ``split``, for a claimed ``delta`` (module docstring): the method at
    x = n, y = 0 (a = 0)."""
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

    if delta > 0 and m.pure_only:
        m, split = bound_method("marginal"), (0.5, 0.5)
        c = Counts(n_num, n_den, n_num, 0)
    return float(m.epsilon_lb(c, alpha, np.asarray(_weights(split)), float(delta)))


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
              lam_den: Optional[float] = None, basis: str = "validation",
              delta: float = 0.0) -> Limits:
    """The :class:`Limits` of a bound ``method`` on these validation sizes, at the per-candidate
    level ``alpha`` and the claimed ``epsilon`` and ``delta``. The δ floor uses the method's first
    two weights for (p, q), as :meth:`~dpaudit.estimators.bounds.BoundMethod.validated`'s δ_LB
    does."""
    w = _weights(split)
    pq = (w[0], w[1]) if len(w) >= 2 else (0.5, 0.5)
    top = epsilon_ceiling(method, n_num, n_den, alpha, split, lam_num, lam_den)
    at_claim = top if not delta > 0 else epsilon_ceiling(method, n_num, n_den, alpha, split,
                                                           lam_num, lam_den, delta)
    return Limits(top, delta_floor(n_num, n_den, alpha, epsilon, pq), int(n_num), int(n_den),
                  float(alpha), method, basis, at_claim)


def reach_factor(limits: Limits, epsilon: float, delta: float = 0.0, split: tuple = (0.5, 0.5),
                 lam_num: Optional[float] = None, lam_den: Optional[float] = None,
                 most: float = 2.0 ** 40) -> Optional[float]:
    """By how much ``limits``' validation sizes (and Poisson means) would have to grow for a
    claim of (``epsilon``, ``delta``) to come within reach (its claim ceiling above ``epsilon``):
    the least factor on a grid of ratio 2^(1/4), found by doubling then bisection; 1.0 when it is
    within reach already, None when not even ``most`` times the samples would do."""
    def reaches(f: float) -> bool:
        scale = lambda v: None if v is None else float(v) * f  # noqa: E731
        top = epsilon_ceiling(limits.method, math.ceil(limits.n_num * f), math.ceil(limits.n_den * f),
                              limits.alpha, split, scale(lam_num), scale(lam_den), delta)
        return top > epsilon

    if limits.n_num <= 0 or limits.n_den <= 0:
        return 1.0
    return _least_factor(reaches, most)


def _least_factor(reaches: Callable[[float], bool], most: float) -> Optional[float]:
    """The least factor f ≥ 1 with ``reaches(f)`` (monotone in f), on a grid of ratio 2^(1/4):
    doubling, then bisection in the log; None when not even ``most`` reaches."""
    if reaches(1.0):
        return 1.0
    hi = 2.0
    while not reaches(hi):
        if hi >= most:
            return None
        hi *= 2.0
    lo = hi / 2.0  # lo does not reach, hi does
    while hi / lo > 2.0 ** 0.25:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if reaches(mid) else (mid, hi)
    return hi


def curve_limits(n: int, level: float) -> Limits:
    """The limits of a curve audit's band (:mod:`dpaudit.curves.band`) on ``n`` validation
    samples per dataset, each one-sided bound at ``level``: the largest ε at which δ_LB(ε) can be
    positive, ln(level^{1/n} / (1 − level^{1/n})), and the δ floor at ε = 0."""
    return Limits(epsilon_ceiling("marginal", n, n, 2 * level), delta_floor(n, n, 2 * level, 0.0),
                  int(n), int(n), float(level), "cp", "validation")


def _curve_extremes(band: str, n: int, level: float) -> tuple[float, float]:
    """The largest P_num_lo and the smallest P_den_hi a curve band (:mod:`dpaudit.curves.band`)
    can give on ``n`` validation samples a dataset, each one-sided bound at ``level``: every
    output in the event on one dataset and none on the other. ``cp``: level^{1/n} and
    1 − level^{1/n} (Clopper and Pearson 1934); ``dkw``: 1 − w and w, w the DKW half-width at
    2·level (Massart 1990)."""
    if band == "dkw":
        from dpaudit.curves.band import dkw_width

        w = dkw_width(int(n), 2.0 * level)
        return 1.0 - w, w
    return float(cp_lower(int(n), int(n), level)), float(cp_upper(0, int(n), level))


def curve_within_reach(delta_claim: Callable, band: str, n: int, level: float,
                       points: int = 2048) -> bool:
    """Whether some outcome of a curve audit on ``n`` validation samples a dataset (bounds at
    ``level``, band ``band``) could refute the claimed curve ``delta_claim`` (ε array → δ
    array): the largest δ_LB(ε) any counts give, lo − e^ε hi (:func:`_curve_extremes`), above
    δ_claim(ε) at some ε. Both curves fall with ε, so on a grid ε₀ < ε₁ < … up to where lo −
    e^ε hi reaches 0, lo − e^{ε_i} hi ≤ δ_claim(ε_{i+1}) for every i shows that no ε in between
    is reached either: False only then (a claim judged out of reach is out of reach)."""
    lo, hi = _curve_extremes(band, n, level)
    if not lo > 0 or not hi > 0 or lo <= hi:
        return lo > hi  # hi = 0: any positive δ_LB is possible; lo ≤ hi: none is
    top = math.log(lo / hi)  # lo − e^ε hi > 0 only below it
    import numpy as np

    eps = np.linspace(0.0, top, points)
    best = lo - np.exp(eps) * hi
    claim = np.asarray(delta_claim(eps), dtype=float)
    return bool(np.any(best[:-1] > claim[1:]) or best[-1] > claim[-1])


def curve_reach_factor(delta_claim: Callable, band: str, n: int, level: float,
                       most: float = 2.0 ** 40) -> Optional[float]:
    """By how much the validation size would have to grow for :func:`curve_within_reach` (the
    least factor on a grid of ratio 2^(1/4)); 1.0 when it is already, None past ``most``."""
    def reaches(f: float) -> bool:
        return curve_within_reach(delta_claim, band, math.ceil(n * f), level)

    return 1.0 if n <= 0 else _least_factor(reaches, most)


def budget_to_reach(samples: int, factor: float) -> int:
    """The budget a run of ``samples`` draws would need for its validation to grow by ``factor``
    (the validation is a fixed share of a budget), rounded up to two significant digits."""
    x = max(1.0, float(max(int(samples), 1)) * float(factor))
    step = 10.0 ** max(0, math.floor(math.log10(x)) - 1)
    return int(math.ceil(x / step) * step)
