"""Smooth-sensitivity mechanisms (Muñoz Medina and Gillenwater (2020) Prop 2; NRS07; docs/math.md#ss-mechanisms).

- ``ss-laplace-delta-prime``: the (ε, δ) Laplace proof with δ' = 2δ/(e^{ε/2} + 1) composes its
  two bad events into exactly δ.
- ``ss-laplace-s0-delta``: the same proof with Muñoz Medina and Gillenwater (2020)'s β = ε/(2 ln(2/δ)) (bad events δ/2 each)
  does not compose to δ (E1). This refutes the proof step, not the mechanism: docs/math.md#ss-mechanisms finds both
  versions private numerically.
- ``ss-cauchy-constants``: for Cauchy noise h ∝ 1/(1 + z²), L_s = L_d = 1, so α + β ≤ ε suffices,
  and both published constant pairs satisfy it.

e^{ε/2} enters as a real E > 1; the only facts used about it are E > 1 and e^ε = E².
"""

from __future__ import annotations

import z3

from dpaudit.formal.encode import absolute
from dpaudit.formal.claim import register
from dpaudit.formal.result import Status
from dpaudit.formal.solver import Query

__all__ = ["slack_queries"]

_MECH = ("smooth-sensitivity-laplace", "smooth-sensitivity-cauchy")


def slack_queries(corrected: bool) -> list[Query]:
    """The two-step (dilation, then sliding) argument: P[M(S)∈A] ≤ E·P_mid + b and
    P_mid ≤ E·P[M(S')∈A] + b, with bad-event mass b = δ'/2 (corrected) or δ/2 (Muñoz Medina and Gillenwater (2020))."""
    p, pm, p2, delta, E = z3.Reals("P_S P_mid P_S2 delta E")
    dprime = 2 * delta / (E + 1)
    b = dprime / 2 if corrected else delta / 2
    facts = (E > 1, delta > 0, delta < 1, p >= 0, p <= 1, pm >= 0, pm <= 1, p2 >= 0, p2 <= 1,
             p <= E * pm + b, pm <= E * p2 + b)
    shown = (("total_slack", (E + 1) * b), ("delta_prime", dprime))
    return [Query("composition", "the two steps give P_S <= E^2 P_S2 + delta",
                  facts + (p > E * E * p2 + delta,), shown=shown)]


@register("ss-laplace-delta-prime", source="Muñoz Medina & Gillenwater 2020, Proposition 2 (corrected); docs/math.md#ss-mechanisms",
          statement="""Smooth-sensitivity Laplace with α = ε/2, δ' = 2δ/(e^{ε/2} + 1) and
          β = ε/(2 ln(2/δ')): if the dilation step gives P[M(S)∈A] ≤ e^{ε/2}·P_mid + δ'/2 and the
          sliding step gives P_mid ≤ e^{ε/2}·P[M(S')∈A] + δ'/2, then
          P[M(S)∈A] ≤ e^ε·P[M(S')∈A] + δ for all probabilities, every ε > 0 and δ ∈ (0, 1): the
          total slack is (1 + e^{ε/2})δ'/2 = δ.""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Muñoz Medina & Gillenwater 2020",), spec=("docs/math.md#ss-mechanisms",),
          mechanisms=_MECH)
def _delta_prime() -> list[Query]:
    return slack_queries(corrected=True)


@register("ss-laplace-s0-delta", source="Muñoz Medina & Gillenwater 2020, Proposition 2 as written; docs/math.md#ss-mechanisms, #e1",
          statement="""Muñoz Medina and Gillenwater (2020) Proposition 2 as written sets β = ε/(2 ln(2/δ)), so each bad event has
          mass δ/2; the claim is that the two steps still compose to
          P[M(S)∈A] ≤ e^ε·P[M(S')∈A] + δ. FALSE as a proof step: the slack is (1 + e^{ε/2})δ/2 > δ,
          and z3 returns probabilities meeting both steps but not the conclusion. (The mechanism
          itself passes numeric checks, docs/math.md#ss-mechanisms; the gap is in the proof.)""",
          expected=Status.REFUTED, assumes_exact_reals=True, seeds=("Muñoz Medina & Gillenwater 2020",), spec=("docs/math.md#ss-mechanisms", "docs/math.md#e1"),
          mechanisms=_MECH)
def _s0_delta() -> list[Query]:
    return slack_queries(corrected=False)


@register("ss-cauchy-constants", source="NRS07 (SS with Cauchy noise); docs/math.md#ss-mechanisms",
          statement="""For h(z) = 1/(1 + z²): L_s = sup_z |h'(z)/h(z)| = 1 and
          L_d = sup_z |1 + z·h'(z)/h(z)| = 1 (both bounds hold for all real z and are attained),
          so the privacy loss α·L_s + β·L_d is at most α + β, and both published pairs
          (α, β) = (ε/8, ε/2) and (ε/6, ε/6) satisfy α + β ≤ ε.""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Muñoz Medina & Gillenwater 2020",), spec=("docs/math.md#ss-mechanisms",),
          mechanisms=("smooth-sensitivity-cauchy",))
def _cauchy() -> list[Query]:
    z, eps = z3.Reals("z epsilon")
    h = 1 / (1 + z * z)
    dh = -2 * z / ((1 + z * z) * (1 + z * z))
    ls, ld = absolute(dh / h), absolute(1 + z * dh / h)
    out = [Query("L_s-at-most-1", "|h'(z)/h(z)| <= 1", (ls > 1,)),
           Query("L_s-attained", "|h'(z)/h(z)| = 1 for some z", (ls == 1,), needs="sat"),
           Query("L_d-at-most-1", "|1 + z h'(z)/h(z)| <= 1", (ld > 1,)),
           Query("L_d-attained", "|1 + z h'(z)/h(z)| = 1 for some z", (ld == 1,), needs="sat")]
    for name, (a, b) in {"nrs-full": (eps / 8, eps / 2), "nrs-stoc": (eps / 6, eps / 6)}.items():
        out.append(Query(f"{name}-alpha-plus-beta", f"{name}: alpha + beta <= eps",
                         (eps > 0, a * 1 + b * 1 > eps)))
    return out
