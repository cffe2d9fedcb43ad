"""Range versus sensitivity of exponential-mechanism scores (Dong (2020); docs/math.md#em-range).

For neighbours S ∼ S' and outputs y write δ(y) = u(S', y) − u(S, y). Then
``sens(u) = sup_{S∼S'} sup_y |δ(y)|`` and ``range(u) = sup_{S∼S'} (sup_y δ(y) − inf_y δ(y))``.
Both are suprema over pairs of outputs of per-pair quantities, so a bound proved for one
neighbouring pair and an arbitrary pair of outputs (y₁, y₂) holds for output sets of any size:
``range = sup_{S∼S'} sup_{y₁,y₂} (δ(y₁) − δ(y₂))``. Each claim proves that per-pair lemma, the
same statement over an uninterpreted output sort (every cardinality at once: first-order
validity), and the statement directly for |Y| = 1…6 with max/min written out.
"""

from __future__ import annotations

import z3

from dpaudit.formal.encode import absolute, maximum, minimum, reals
from dpaudit.formal.claim import register
from dpaudit.formal.result import Status
from dpaudit.formal.solver import Query

__all__ = ["range_queries"]

_MECH = ("exponential-quantile", "duff")


def range_queries(monotone: bool, factor: int) -> list[Query]:
    """Queries for "range(u) ≤ factor·sens(u)" (for monotone u under add/remove when
    ``monotone``; δ ≥ 0 for the pair S ⊆ S' = S ∪ {z}, read in both orientations)."""
    s = z3.Real("sens")
    bound = factor * s

    # (1) one neighbouring pair, an arbitrary pair of outputs
    uS1, uS2, uT1, uT2 = z3.Reals("u_S_y1 u_S_y2 u_S2_y1 u_S2_y2")
    d1, d2 = uT1 - uS1, uT2 - uS2
    facts = [absolute(d1) <= s, absolute(d2) <= s]
    if monotone:
        facts += [d1 >= 0, d2 >= 0]
    per_pair = Query("per-pair", f"for outputs y1, y2: delta(y1) - delta(y2) <= {factor}*sens, "
                     "in both orientations of the pair",
                     tuple(facts) + (z3.Or(d1 - d2 > bound, (-d1) - (-d2) > bound),))

    # (2) an uninterpreted output sort: every output set at once
    Y = z3.DeclareSort("Output")
    uS = z3.Function("u_S", Y, z3.RealSort())
    uT = z3.Function("u_S2", Y, z3.RealSort())
    y, y1, y2 = z3.Consts("y y1 y2", Y)
    delta = lambda t: uT(t) - uS(t)  # noqa: E731
    hyp = [z3.ForAll([y], absolute(delta(y)) <= s)]
    if monotone:
        hyp.append(z3.ForAll([y], delta(y) >= 0))
    any_set = Query("any-output-set", f"over any output set Y: delta(y1) - delta(y2) <= {factor}*sens",
                    tuple(hyp) + (z3.Or(delta(y1) - delta(y2) > bound,
                                        delta(y2) - delta(y1) > bound),))

    # (3) |Y| = k directly: sens and range as max / min over the k outputs
    direct = []
    for k in range(1, 7):
        d = reals("delta_y", k)
        sens_k = maximum([absolute(x) for x in d])
        range_k = maximum(d) - minimum(d)
        mono = [x >= 0 for x in d] if monotone else []
        direct.append(Query(f"direct-k{k}", f"|Y| = {k}: range <= {factor}*sens",
                            tuple(mono) + (range_k > factor * sens_k,)))
    return [per_pair, any_set] + direct


@register("em-range-le-2sens", source="Dong 2020 (DDR19 item 1); docs/math.md#em-range",
          statement="""For every score u and every neighbour relation, range(u) ≤ 2·sens(u), over
          finite output sets of any size: for one neighbouring pair and an arbitrary pair of
          outputs, δ(y₁) − δ(y₂) ≤ |δ(y₁)| + |δ(y₂)| ≤ 2·sens (per-pair lemma; also proved over an
          uninterpreted output sort, and directly for |Y| = 1…6); range is the supremum of
          δ(y₁) − δ(y₂) over pairs and outputs, so the bound holds for every Y.""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Dong 2020",), spec=("docs/math.md#em-range",),
          mechanisms=_MECH)
def _range_le_2sens() -> list[Query]:
    return range_queries(monotone=False, factor=2)


@register("em-monotone-range-le-sens", source="Dong 2020 (DDR19 item 2, corrected); docs/math.md#em-range, #e27",
          statement="""For every score u that is monotone under add/remove
          (u(S, y) ≤ u(S ∪ {z}, y) for all y), range(u) ≤ sens(u), over finite output sets of
          any size: δ(y) ∈ [0, sens] for the pair S ⊆ S ∪ {z}, so δ(y₁) − δ(y₂) ≤ sens in
          both orientations (per-pair lemma; also over an uninterpreted output sort, and
          directly for |Y| = 1…6).""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Dong 2020",), spec=("docs/math.md#em-range",),
          mechanisms=_MECH)
def _monotone_le() -> list[Query]:
    return range_queries(monotone=True, factor=1)


@register("em-monotone-range-eq-sens", source="Dong 2020 (DDR19 item 2 as written); docs/math.md#e27",
          statement="""Dong (2020) as written: range(u) = sens(u) for every monotone score u. FALSE:
          z3 returns a monotone score on one neighbouring pair and two outputs with
          range ≠ sens (docs/math.md#e27: u(x, y) = |x| has sens 1 and range 0).""",
          expected=Status.REFUTED, assumes_exact_reals=True, seeds=("Dong 2020",), spec=("docs/math.md#em-range", "docs/math.md#e27"),
          mechanisms=_MECH)
def _monotone_eq() -> list[Query]:
    uS1, uS2, uT1, uT2 = z3.Reals("u_S_y1 u_S_y2 u_S2_y1 u_S2_y2")
    d = [uT1 - uS1, uT2 - uS2]
    sens = maximum([absolute(x) for x in d])
    rng = maximum(d) - minimum(d)
    return [Query("equality", "a monotone score (S subset of S2 = S + {z}) with range = sens",
                  tuple(x >= 0 for x in d) + (rng != sens,),
                  shown=(("sens", sens), ("range", rng)))]


@register("em-range-dp", source="Dong 2020, Theorem 1 (DDR19); docs/math.md#em-range",
          statement="""p_S(y) ∝ exp(ε·u(S, y)/range(u)) is ε-DP. With a_y = exp(ε u(S, y)/R) > 0,
          f_y = exp(ε δ(y)/R), m = exp(ε·inf δ/R) > 0 and E = e^ε: δ(y) − inf δ ∈ [0, R] gives
          f_y ∈ [m, m·E] (exp is increasing and multiplicative; the only facts about exp used).
          (T1) per term, m·a_y ≤ a_y f_y ≤ m·E·a_y; summing the terms (any finite |Y|) gives
          Z' = Σ a_y f_y ∈ [m·Z, m·E·Z] with Z = Σ a_y; (T2) then
          p_S'(y)/p_S(y) = f_y·Z/Z' ∈ [1/E, E]. Also proved directly for |Y| = 1…4.""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Dong 2020",), spec=("docs/math.md#em-range",),
          mechanisms=_MECH)
def _range_dp() -> list[Query]:
    m, E, a, f, Z, Zp = z3.Reals("m E a f Z Z_prime")
    base = (m > 0, E >= 1)
    t1 = Query("T1-per-term", "a > 0 and f in [m, mE] give m*a <= a*f <= m*E*a",
               base + (a > 0, m <= f, f <= m * E, z3.Or(a * f < m * a, a * f > m * E * a)))
    ratio = f * Z / Zp
    t2 = Query("T2-ratio", "Z > 0, Z' in [mZ, mEZ], f in [m, mE] give f*Z/Z' in [1/E, E]",
               base + (Z > 0, m * Z <= Zp, Zp <= m * E * Z, m <= f, f <= m * E,
                       z3.Or(ratio > E, ratio * E < 1)))
    direct = []
    for k in range(1, 5):
        As, Fs = reals("a", k), reals("f", k)
        Zk, Zpk = z3.Sum(As), z3.Sum([x * y for x, y in zip(As, Fs)])
        r = Fs[0] * Zk / Zpk
        facts = [x > 0 for x in As] + [z3.And(m <= x, x <= m * E) for x in Fs]
        direct.append(Query(f"direct-k{k}", f"|Y| = {k}: p_S'(y1)/p_S(y1) in [1/E, E]",
                            base + tuple(facts) + (z3.Or(r > E, r * E < 1),)))
    return [t1, t2] + direct
