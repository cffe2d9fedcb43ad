"""How strong a sampled verdict is: the claim's p-value, the margin ε_LB/ε, and the audit's power.

A REFUTED at ε_LB = 1.003 against a claimed 1 and one at ε_LB = 10 print the same verdict; these
numbers tell them apart, all computed from the *same* validation counts as the bound.

**p-value.** The validated bound ε_LB(α) of :func:`~dpaudit.estimators.bounds.validated_bound`
is a (1 − α) lower confidence bound, and it grows with α. The claim is refuted at family-wise
level a when the bound at the per-candidate level a/k exceeds ε (Bonferroni over the k candidates
validated, as in the run itself). The p-value is the smallest such a,

    p = k · inf{α : ε_LB(α) > ε}                                           (capped at 1)

found by bisection on log α, reporting the upper end of the final bracket (so p never understates).
It is a valid p-value: if the claim holds, P[p ≤ a] ≤ P[some candidate's ε_LB(a/k) > ε] ≤ a
(union bound; Lehmann and Romano, TSH §3.3 for p-values from nested tests). p ≤ 1 − confidence
exactly when the verdict is REFUTED (the run's own bound fixes that side). Bisection stops at α = 1/2 per candidate (one-sided bounds at
a larger α are not lower bounds); p = 1 means "not refuted at any level up to k/2".

**Marginal.** A refutation with p > :data:`MARGINAL_P` (10⁻³) is labelled marginal: a tight,
correct mechanism audited at 95% is refuted about 5% of the time, and such refutations have p
near 1 − confidence. Confirm with a fresh seed at a higher confidence (:func:`confirm_advice`).

**Power.** For the event that was validated, with q̂ = Y/n_D' its observed probability under D'
and the validation sizes n_D, n_D', the smallest true ε' whose mechanism (p' = e^ε' q̂ + δ) this
budget would have refuted with probability ≥ :data:`POWER`, and the smallest δ' at the claimed ε
(p' = e^ε q̂ + δ'). Refutation is certain on the event {X ≥ x₀.₀₅} ∩ {Y ≤ y₀.₉₅} (binomial
quantiles; each holds with probability ≥ 0.95, so both with ≥ 0.9 by the union bound) whenever
the marginal Clopper-Pearson bound refutes at (x₀.₀₅, y₀.₉₅): a sufficient condition, so the
figures are upper bounds on what was detectable with the marginal bound at the run's α. The
paired and ratio bounds are chosen when they are tighter, so the audit may do better.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Optional

from dpaudit.estimators.bounds import Counts, cp_lower, cp_upper, validated_bound
# the values are the result's (dpaudit.results); this module grades them
from dpaudit.results import MARGINAL_P, Power, Strength

__all__ = ["MARGINAL_P", "POWER", "Strength", "Power", "p_value", "detectable", "grade",
           "confirm_advice"]

#: The probability of refutation that the power statement promises.
POWER = 0.9
#: a marginal refutation's confirming run gets this many times the run's budget
#: (:func:`confirm_advice`): a probe's subsampling mistake refuted at p = 0.026 from 40,843 samples
#: of a 400,000 budget was NOT REFUTED by a rerun at 0.999 on that budget, and REFUTED
#: (p = 5·10⁻⁶) on 4,000,000
CONFIRM_BUDGET = 10
#: Per-candidate α searched by the p-value's bisection.
_ALPHA_MIN, _ALPHA_MAX = 1e-300, 0.5
_STEPS = 60


def _bound(method: str, counts: Counts, alpha: float, split: tuple, delta: float,
           epsilon: float) -> float:
    # Near α = 1e-300 scipy's beta quantile can warn that its root finding stopped early; the
    # bisection needs only the sign of (bound − ε) and reports the bracket's upper end, so the
    # warning would only reach the user's terminal, not change what is claimed.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return validated_bound(method, counts, alpha, split, delta, epsilon).epsilon_lb


def p_value(method: str, counts: Counts, split: tuple, k: int, epsilon: float,
            delta: float = 0.0) -> float:
    """The smallest family-wise level k·α at which the bound of ``method`` on ``counts`` (split
    as ``split``) exceeds ``epsilon`` (module docstring); 1 when it does not at α = 1/2."""
    if _bound(method, counts, _ALPHA_MAX, split, delta, epsilon) <= epsilon:
        return 1.0
    if _bound(method, counts, _ALPHA_MIN, split, delta, epsilon) > epsilon:
        return min(1.0, k * _ALPHA_MIN)
    lo, hi = math.log(_ALPHA_MIN), math.log(_ALPHA_MAX)  # refuted at hi, not at lo
    for _ in range(_STEPS):
        mid = 0.5 * (lo + hi)
        if _bound(method, counts, math.exp(mid), split, delta, epsilon) > epsilon:
            hi = mid
        else:
            lo = mid
        if hi - lo < 1e-4:
            break
    return min(1.0, k * math.exp(hi))


def _binom_quantile(level: float, n: int, p: float) -> int:
    """The ``level`` quantile of Bin(n, p): the smallest x in [0, n] with P[X ≤ x] ≥ level (the
    number ``scipy.stats.binom.ppf`` gives), by bisection on the CDF of ``scipy.special``: a
    ``dpaudit check`` need not import scipy.stats (about half a second) for its power line."""
    from scipy.special import bdtr

    below, at = -1, int(n)  # P[X ≤ below] < level ≤ P[X ≤ at]
    while at - below > 1:
        mid = (below + at) // 2
        if bdtr(mid, n, p) >= level:
            at = mid
        else:
            below = mid
    return at


def _refutes_surely(n_num: int, n_den: int, p: float, q: float, alpha: float, epsilon: float,
                    delta: float) -> bool:
    """True when X ~ Bin(n_num, p), Y ~ Bin(n_den, q) refute (ε, δ) by the marginal bound at
    (α/2, α/2) with probability ≥ 0.9 (the 5% / 95% quantiles; module docstring)."""
    x = _binom_quantile(0.05, n_num, min(1.0, p))
    y = _binom_quantile(0.95, n_den, q)
    p_lo = cp_lower(x, n_num, alpha / 2)
    q_hi = cp_upper(y, n_den, alpha / 2)
    return p_lo - delta > math.exp(epsilon) * q_hi


#: the largest ε whose e^ε a double holds (e^709.78 ≈ 1.8e308); a claim above it is beyond what
#: any sample refutes, and its power is not stated
MAX_EXP = 709.0


def detectable(counts: Counts, alpha: float, epsilon: float, delta: float = 0.0) -> Power:
    """The power statement (probability :data:`POWER`) for the validated event (module
    docstring)."""
    probability = POWER
    n1, n2 = int(counts.n_num), int(counts.n_den)
    if n1 <= 0 or n2 <= 0 or counts.y <= 0 or epsilon > MAX_EXP:  # e^ε past float64: no power
        return Power(probability, None, None)
    q = counts.y / n2

    def smallest(refutes, lo: float, hi: float) -> Optional[float]:
        if not refutes(hi):
            return None
        for _ in range(50):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if refutes(mid) else (mid, hi)
            if hi - lo <= 1e-4 * max(1e-12, hi):
                break
        return hi

    eps_max = math.log(max(1.0, (1.0 - delta) / q)) if q > 0 else 0.0
    eps_true = smallest(lambda e: _refutes_surely(n1, n2, math.exp(e) * q + delta, q, alpha,
                                                  epsilon, delta), epsilon, max(epsilon, eps_max))
    d_max = 1.0 - math.exp(epsilon) * q
    d_true = None
    if d_max > delta:
        d_true = smallest(lambda d: _refutes_surely(n1, n2, math.exp(epsilon) * q + d, q, alpha,
                                                    epsilon, delta), delta, d_max)
    return Power(probability, eps_true, d_true)


def grade(method: str, counts: Counts, split: tuple, alpha: float, k: int, epsilon: float,
          delta: float, epsilon_lb: float, refuted: bool) -> Strength:
    """The :class:`Strength` of a validated result: ``alpha`` is the per-candidate level the bound
    used (so ``k·alpha`` = 1 − confidence)."""
    p = p_value(method, counts, split, k, epsilon, delta)
    # the run's own bound decides at level k·alpha; bisection only narrows the rest
    p = min(p, k * alpha) if refuted else max(p, min(1.0, k * alpha))
    margin = epsilon_lb / epsilon if epsilon > 0 and math.isfinite(epsilon_lb) else None
    power = None if refuted else detectable(counts, alpha, epsilon, delta)
    return Strength(p_value=p, margin=margin, marginal=bool(refuted and p > MARGINAL_P),
                    power=power)


def no_evidence() -> Strength:
    """The strength of a NOT REFUTED without a validated event (nothing was counted)."""
    return Strength(p_value=1.0, margin=0.0, marginal=False, power=Power(POWER, None, None))


def confirm_advice(record: Any) -> str:
    """How to confirm a marginal refutation: rerun with a fresh seed at a higher confidence."""
    seed = record.get("seed") if hasattr(record, "get") else None
    confidence = record.get("confidence") if hasattr(record, "get") else None
    higher = 0.999 if not confidence or confidence < 0.999 else 1 - (1 - confidence) / 10
    if record.get("id"):  # a suite audit: its seed derives from the root seed and its id
        return f"confirm with another root --seed and the audit's confidence raised to {higher:g}"
    fresh = f"--seed={int(seed) + 1}" if isinstance(seed, int) else "a fresh --seed"
    return f"confirm with {fresh} --confidence={higher:g}" + _budget_for(record, confidence, higher)


def _budget_for(record: Any, confidence: Any, higher: float) -> str:
    """`` --samples=N`` for the confirming run: :data:`CONFIRM_BUDGET` times this run's budget (a
    marginal refutation was found with little to spare, often at an early look on a lucky event;
    the rerun must find it again at the higher confidence, and with early stopping a larger
    budget costs samples only while the effect does not show), or more where, at confidence
    ``higher``, a validation of this run's size could not show ε above the claim at all
    (:func:`dpaudit.estimators.limits.point_reach`, each level scaled by the ratio of the two α);
    ``""`` when the record says too little."""
    import re

    from dpaudit.estimators.limits import point_reach
    from dpaudit.validation import MAX_SAMPLES

    lim, claim = record.get("limits"), record.get("claim")
    samples = record.get("samples")
    if not isinstance(lim, dict) or not isinstance(claim, dict) or not isinstance(samples, int) \
            or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        return ""
    stated = re.search(r"--samples=([0-9]+)", str(record.get("reproduce") or ""))
    budget = max(samples, int(stated.group(1)) if stated else 0)
    try:
        n = max(int(lim["n_D"]), int(lim["n_D_prime"]))
        alpha = float(lim["alpha"]) * (1.0 - higher) / (1.0 - float(confidence))
        reach = point_reach(n, alpha, float(claim["epsilon"]), samples, float(claim.get("delta") or 0.0))
    except (KeyError, TypeError, ValueError):
        return ""
    larger = min(MAX_SAMPLES, CONFIRM_BUDGET * budget)
    if reach is not None and reach.needs is not None and reach.needs > larger:
        return (f" --samples={reach.needs} or more (below that, {higher:g} confidence is "
                f"out of the run's reach)")
    return (f" --samples={larger} ({CONFIRM_BUDGET}× this run's budget: early stopping ends the "
            f"rerun at the first look that confirms)")
