"""The limits of a budget: the largest ε its validation could have certified and the smallest δ
it could have seen.

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
with x and falls with y and a. The ceiling a record gives (:func:`limits_of`) is the largest over
the method used and every method and split the selection could have chosen at these sizes
(:func:`best_ceiling`), at the claimed δ (taken off p_lo, as in the bound that decides a δ
claim): what the budget could have shown whichever bound its events got.

**δ floor.** At the claimed ε, δ_LB = p_lo − e^ε q_hi (:meth:`~dpaudit.estimators.bounds.BoundMethod.validated`).
An event never seen on D′ has q_hi = 1 − (α w₁)^{1/n′} ≈ ln(1/(α w₁))/n′, so no δ below
e^ε q_hi can show at all. :func:`delta_floor` is the smallest frequency k/n of an event on D,
never seen on D′, whose lower bound clears that: the least k with
cp_lower(k, n, α w₀) > e^ε (1 − (α w₁)^{1/n′}), divided by n; about (1 + e^ε) ln(1/α)/n.
A mechanism whose δ(ε) at the claimed ε is below it cannot be refuted by this budget.

**Out of reach.** A claim (ε, δ) is refuted when ε_LB, with δ taken off p_lo, exceeds ε. No
event validated on at most n samples a dataset at level α can show more than the best ceiling at
the claimed δ over every bound method and split the selection could choose (:func:`best_ceiling`),
whatever the outputs. When that ceiling, at the largest validation size of the events a run
counted, is at most the claimed ε, the run could not have refuted the claim, not even for a
mechanism that publishes its input: its NOT REFUTED would say nothing, and the audit reports
INCONCLUSIVE (:func:`point_reach`, :class:`Reach`), with about the budget whose validation would
bring the claim within reach (the size grown until the ceiling passes ε; it grows as ln n, so
about e^ε ln(1/α) validation samples a dataset; necessary, not sufficient). With nothing
validated, the run's samples as validation stand in, as for the limits themselves. A curve claim
is out of reach when no counts of the band put a lower curve above it at any ε
(:func:`curve_reach`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

from dpaudit.estimators.bounds import (SPLITS, Counts, cp_lower, cp_upper, dkw_width,
                                      method as bound_method)

__all__ = ["Limits", "Reach", "epsilon_ceiling", "delta_floor", "limits_of", "curve_limits",
           "best_ceiling", "point_reach", "curve_reach"]


@dataclass(frozen=True, slots=True)
class Reach:
    """Why a run's counts could not have refuted its claim (module docstring, "Out of reach"):
    the most its validation could show (``ceiling``: an ε for a point claim, the largest δ gap
    at ε = 0 for a curve), the run's ``samples``, the level ``alpha`` of the bound, and about the
    budget that would bring the claim within reach (``needs``, rounded up to two digits; None when
    no budget dpaudit can draw would)."""

    ceiling: float
    samples: int
    alpha: float
    needs: Optional[int]

    def to_record(self) -> dict:
        return {"ceiling": self.ceiling, "samples": self.samples, "alpha": self.alpha,
                "needs_samples": self.needs}

    def text(self, what: str) -> str:
        """``the claim is out of this run's reach: {what}; about N samples would bring it within
        reach (--samples N or more)``."""
        text = f"the claim is out of this run's reach: {what}"
        if self.needs is None:
            return text + "; no budget dpaudit can draw brings it within reach (it needs about e^ε samples)"
        return text + (f"; about {self.needs:,} samples would bring it within reach "
                       f"(--samples {self.needs} or more)")


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
    #: set when the claim is out of the run's reach (:func:`point_reach`)
    reach: Optional[Reach] = None

    def to_record(self) -> dict:
        rec = {"epsilon_ceiling": self.epsilon_ceiling, "delta_floor": self.delta_floor,
               "n_D": self.n_num, "n_D_prime": self.n_den, "alpha": self.alpha,
               "method": self.method, "basis": self.basis}
        if self.reach is not None:
            rec["out_of_reach"] = self.reach.to_record()
        return rec

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
              reach: Optional[Reach] = None, delta: float = 0.0) -> Limits:
    """The :class:`Limits` of a bound ``method`` on these validation sizes, at the per-candidate
    level ``alpha`` and the claimed ``epsilon`` and ``delta`` (module docstring: the ε ceiling of
    the method used or of any the selection could choose, whichever is larger). The δ floor is the
    budget's too, whichever method was used: the least over the splits of the ``marginal``
    bound, which the selection may choose for any claim (:func:`delta_floor`)."""
    top = max(epsilon_ceiling(method, n_num, n_den, alpha, split, lam_num, lam_den, delta),
              best_ceiling(max(int(n_num), int(n_den)), alpha, delta))
    floor = min(delta_floor(n_num, n_den, alpha, epsilon, s) for s in SPLITS["marginal"])
    return Limits(top, floor, int(n_num), int(n_den), float(alpha), method, basis, reach)


def curve_limits(n: int, level: float) -> Limits:
    """The limits of a curve audit's band (:mod:`dpaudit.curves.band`) on ``n`` validation
    samples per dataset, each one-sided bound at ``level``: the largest ε at which δ_LB(ε) can be
    positive, ln(level^{1/n} / (1 − level^{1/n})), and the δ floor at ε = 0."""
    return Limits(epsilon_ceiling("marginal", n, n, 2 * level), delta_floor(n, n, 2 * level, 0.0),
                  int(n), int(n), float(level), "cp", "validation")


def _least_factor(reaches: Callable[[float], bool], most: float = 2.0 ** 40) -> Optional[float]:
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


def _budget(samples: int, factor: Optional[float]) -> Optional[int]:
    """``samples`` grown by ``factor``, rounded up to two significant digits; None when no factor
    reaches or the budget is more than dpaudit draws (:data:`dpaudit.validation.MAX_SAMPLES`)."""
    from dpaudit.validation import MAX_SAMPLES

    if factor is None:
        return None
    x = max(1.0, float(max(int(samples), 1)) * float(factor))
    step = 10.0 ** max(0, math.floor(math.log10(x)) - 1)
    need = int(math.ceil(x / step) * step)
    return need if need <= MAX_SAMPLES else None


def best_ceiling(n: int, alpha: float, delta: float = 0.0) -> float:
    """The largest ε ceiling, at the claimed ``delta``, of every bound method and split the
    selection could choose (:data:`dpaudit.estimators.bounds.SPLITS`; for a δ claim the methods
    that bound one, marginal and paired) with ``n`` validation samples on each dataset at level ``alpha``: what an event
    validated at these sizes could show, whatever the outputs and whichever bound it got."""
    if n <= 0 or not 0 < alpha < 1:
        return 0.0
    best = 0.0
    for name, splits in SPLITS.items():
        if delta > 0 and bound_method(name).pure_only:
            continue
        for split in splits:
            best = max(best, epsilon_ceiling(name, n, n, alpha, split, float(n), float(n), delta))
    return best


def point_reach(n: int, alpha: float, epsilon: float, samples: int, delta: float = 0.0) -> Optional[Reach]:
    """The :class:`Reach` of a point claim (``epsilon``, ``delta``) when events validated on at
    most ``n`` samples a dataset at level ``alpha`` could not show more (:func:`best_ceiling` at
    most ``epsilon``), in a run of ``samples`` calls; None otherwise. The budget named grows
    ``samples`` as ``n`` must grow for the ceiling to pass ``epsilon`` (None past what dpaudit
    can draw, :data:`dpaudit.validation.MAX_SAMPLES`)."""
    top = best_ceiling(n, alpha, delta)
    if top > epsilon or samples <= 0 or n <= 0:
        return None
    grow = _least_factor(lambda f: best_ceiling(math.ceil(n * f), alpha, delta) > epsilon)
    return Reach(float(top), int(samples), float(alpha), _budget(samples, grow))


def _curve_extremes(band: str, n: int, level: float) -> tuple[float, float]:
    """The largest P_num_lo and the smallest P_den_hi a curve band (:mod:`dpaudit.curves.band`)
    can give on ``n`` validation samples a dataset, each one-sided bound at ``level``: ``cp``,
    level^{1/n} and 1 − level^{1/n} (Clopper and Pearson 1934); ``dkw``, 1 − w and w, w the DKW
    half-width at 2·level (Massart 1990)."""
    if band == "dkw":
        w = dkw_width(int(n), 2.0 * level)
        return 1.0 - w, w
    return float(cp_lower(int(n), int(n), level)), float(cp_upper(0, int(n), level))


def _curve_reached(delta_claim: Callable, band: str, n: int, level: float, points: int = 2048) -> bool:
    """Whether some counts of the band on ``n`` validation samples a dataset (each bound at
    ``level``) put a lower curve above ``delta_claim`` at some ε: the largest δ_LB(ε) any counts
    give, lo − e^ε hi (:func:`_curve_extremes`), above δ_claim(ε). Both curves fall with ε, so on a
    grid ε₀ < ε₁ < … up to where lo − e^ε hi reaches 0, lo − e^{ε_i} hi ≤ δ_claim(ε_{i+1}) at
    every i shows that no ε between is reached: False only then."""
    if n <= 0:
        return False
    lo, hi = _curve_extremes(band, n, level)
    if lo <= hi:
        return False  # lo − e^ε hi ≤ 0 at every ε ≥ 0
    if hi <= 0:
        return True
    import numpy as np

    eps = np.linspace(0.0, math.log(lo / hi), points)
    best = lo - np.exp(eps) * hi
    claim = np.asarray(delta_claim(eps), dtype=float)
    return bool(np.any(best[:-1] > claim[1:]) or best[-1] > claim[-1])


def curve_reach(delta_claim: Callable, band: str, n: int, level: float, samples: int) -> Optional[Reach]:
    """The :class:`Reach` of a curve claim ``delta_claim`` (an ε array → δ array) when no counts
    of the ``band`` on ``n`` validation samples a dataset, each bound at ``level``, put a lower
    curve above it at any ε (:func:`_curve_reached`); None otherwise. ``ceiling`` is the largest δ
    gap any counts give at ε = 0; the budget named grows ``samples`` as the sizes must grow."""
    if n <= 0 or samples <= 0 or _curve_reached(delta_claim, band, n, level):
        return None
    lo, hi = _curve_extremes(band, n, level)
    grow = _least_factor(lambda f: _curve_reached(delta_claim, band, math.ceil(n * f), level))
    return Reach(max(0.0, lo - hi), int(samples), float(level), _budget(samples, grow))
