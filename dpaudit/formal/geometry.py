"""Geometric claims behind Cummings and Durfee (2020)'s 1-D and 2-D sensitivity preprocessing (docs/math.md#spf-definition, #spf-2d).

- ``l1-linf-rotation-2d``: (u, v) = (x + y, x − y) turns ℓ1 distance into ℓ∞ distance.
- ``l1-ball-sign-encoding``: ‖x‖₁ ≤ r ⇔ s·x ≤ r for all s ∈ {±1}^d (d = 1…4), the linear
  encoding of ℓ1 balls used by the Helly queries.
- ``interval-helly-1d`` (Cummings and Durfee (2020) Lemma 3.5's step) and ``l1-helly-2d`` (Cummings and Durfee (2020) Lemma 8.5): pairwise
  intersection implies a common point, for every number k of sets.
- ``l1-3d-counterexample`` (Cummings and Durfee (2020) Remark 8.6) and ``l2-2d-counterexample`` (Cummings and Durfee (2020) Remark 8.7): the
  statement fails for ℓ1 in ℝ³ (and ℝ^d, d ≤ 8) and for ℓ2 in ℝ².

All are statements about exact real arithmetic. The builders take parameters (dimension, radius)
so that the negative controls in :mod:`dpaudit.formal.controls` reuse the same encodings.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Sequence

import z3

from dpaudit.formal.encode import (absolute, between, l1_ball, l1_norm, l2_ball, maximum, num,
                                   point, reals)
from dpaudit.formal.claim import register
from dpaudit.formal.result import Status
from dpaudit.formal.solver import Query

__all__ = ["rotation_queries", "interval_lemma_queries", "helly_existence_query",
           "helly_witness_query", "counterexample_3d_queries", "disc_queries"]

HALF = Fraction(1, 2)
#: docs/math.md#spf-2d Remark 8.6: e₁, e₂, e₃ and q = (½, ½, ½), all with radius 1.
POINTS_3D = ((1, 0, 0), (0, 1, 0), (0, 0, 1), (HALF, HALF, HALF))


def _uv(p: Sequence[z3.ArithRef]) -> tuple[z3.ArithRef, z3.ArithRef]:
    return p[0] + p[1], p[0] - p[1]


# --- the rotation --------------------------------------------------------------------------

def rotation_queries() -> list[Query]:
    """(u, v) = (x + y, x − y): ‖p − c‖₁ = max(|Δu|, |Δv|), the map is invertible, and the ℓ1 ball
    is the axis-parallel square |Δu| ≤ r, |Δv| ≤ r (docs/math.md#spf-2d)."""
    p, c = point("p", 2), point("c", 2)
    r, u, v = z3.Reals("r u v")
    (pu, pv), (cu, cv) = _uv(p), _uv(c)
    du, dv = absolute(pu - cu), absolute(pv - cv)
    x, y = (u + v) / 2, (u - v) / 2
    return [
        Query("rotation-l1-is-linf", "|x-a| + |y-b| = max(|du|, |dv|) for all points p, c",
              (l1_norm([p[0] - c[0], p[1] - c[1]]) != z3.If(du >= dv, du, dv),)),
        Query("rotation-invertible", "x = (u+v)/2, y = (u-v)/2 inverts (u, v) = (x+y, x-y)",
              (z3.Not(z3.And(x + y == u, x - y == v,
                             (pu + pv) / 2 == p[0], (pu - pv) / 2 == p[1])),)),
        Query("ball-is-square", "||p - c||_1 <= r iff |du| <= r and |dv| <= r",
              ((l1_norm([p[0] - c[0], p[1] - c[1]]) <= r) != z3.And(du <= r, dv <= r),)),
    ]


@register("l1-linf-rotation-2d", source="Cummings & Durfee 2020, Lemma 8.5 (proof); docs/math.md#spf-2d implementation",
          statement="""For all points p, c of ℝ² and r ≥ 0, with (u, v) = (x + y, x − y):
          ‖p − c‖₁ = max(|u_p − u_c|, |v_p − v_c|); the map is inverted by x = (u + v)/2,
          y = (u − v)/2; hence the ℓ1 ball B₁(c, r) is the axis-parallel square
          |u − u_c| ≤ r, |v − v_c| ≤ r in (u, v).""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Cummings & Durfee 2020",), spec=("docs/math.md#spf-2d",),
          mechanisms=("spf-2d",))
def _rotation() -> list[Query]:
    return rotation_queries()


@register("l1-ball-sign-encoding", source="docs/math.md#spf-2d (encoding lemma used by the ℓ1 claims)",
          statement="""For d = 1…4, all x ∈ ℝ^d and r: Σ|x_i| ≤ r iff s·x ≤ r for every sign
          vector s ∈ {±1}^d. The Helly queries (ℝ², and ℝ³ in the negative control) write ℓ1
          balls in this linear form; the other ℓ1 claims use Σ|x_i| ≤ r literally.""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Cummings & Durfee 2020",), spec=("docs/math.md#spf-2d",),
          mechanisms=("spf-2d",))
def _sign_encoding() -> list[Query]:
    out = []
    for d in range(1, 5):
        x, r = reals("x", d), z3.Real("r")
        out.append(Query(f"sign-encoding-d{d}", f"sum |x_i| <= r iff s.x <= r for all signs s (d = {d})",
                         ((l1_norm(x) <= r) != l1_ball(x, [0] * d, r),)))
    return out


# --- 1-D Helly: the per-pair witness lemma, the argmax induction, symbolic k ----------------

def interval_lemma_queries(prefix: str = "") -> list[Query]:
    """The lemmas that make "pairwise intersecting intervals share max_i l_i" hold for every k."""
    li, hi, lj, hj, p = z3.Reals("l_i h_i l_j h_j p")
    meet = z3.And(li <= hj, lj <= hi)
    pair = Query(
        f"{prefix}pairwise-intersection-condition",
        "for l_i <= h_i, l_j <= h_j: [l_i,h_i] and [l_j,h_j] meet iff l_i <= h_j and l_j <= h_i",
        (li <= hi, lj <= hj,
         z3.Not(z3.And(z3.Implies(z3.And(between(li, p, hi), between(lj, p, hj)), meet),
                       z3.Implies(meet, z3.And(between(li, maximum([li, lj]), hi),
                                               between(lj, maximum([li, lj]), hj)))))))
    lm, hm = z3.Reals("l_m h_m")
    witness = Query(
        f"{prefix}witness-per-pair",
        "for an arbitrary pair (m, j): if l_m is the largest lower end and the pair meets, "
        "then l_j <= l_m <= h_j",
        (lm <= hm, lj <= hj, lm <= hj, lj <= hm, lj <= lm, z3.Not(between(lj, lm, hj))))
    L = z3.Function("l", z3.IntSort(), z3.RealSort())
    H = z3.Function("h", z3.IntSort(), z3.RealSort())
    n, m, i, j, k = z3.Ints("n m i j k")

    def argmax(idx: z3.ArithRef, size: z3.ArithRef) -> z3.BoolRef:
        return z3.And(0 <= idx, idx < size,
                      z3.ForAll([i], z3.Implies(z3.And(0 <= i, i < size), L(i) <= L(idx))))

    base = Query(f"{prefix}argmax-base", "a family of one interval has its largest lower end at index 0",
                 (z3.Not(argmax(z3.IntVal(0), z3.IntVal(1))),))
    m2 = z3.If(L(n) > L(m), n, m)
    step = Query(
        f"{prefix}argmax-step",
        "induction step: if m maximises l on {0..n-1} then (n if l(n) > l(m) else m) maximises "
        "l on {0..n}",
        (n >= 1, argmax(m, n), z3.Not(argmax(m2, n + 1))))
    in_range = lambda t: z3.And(0 <= t, t < k)  # noqa: E731
    symbolic = Query(
        f"{prefix}witness-symbolic-k",
        "for any k >= 1 and any family l, h : {0..k-1} -> R (uninterpreted) that meets pairwise, "
        "l(m) = max l lies in every interval",
        (k >= 1, argmax(m, k),
         z3.ForAll([i], z3.Implies(in_range(i), L(i) <= H(i))),
         z3.ForAll([i, j], z3.Implies(z3.And(in_range(i), in_range(j)), L(i) <= H(j))),
         in_range(j), z3.Not(between(L(j), L(m), H(j)))))
    return [pair, witness, base, step, symbolic]


def _interval_direct(k: int, explicit: bool) -> Query:
    lo, hi = reals("l", k), reals("h", k)
    facts = [lo[i] <= hi[i] for i in range(k)]
    for i, j in itertools.combinations(range(k), 2):
        p = z3.Real(f"p{i}{j}")
        facts += [between(lo[i], p, hi[i]), between(lo[j], p, hi[j])]
    if explicit:
        w = maximum(lo)
        return Query(f"direct-witness-k{k}", f"k = {k}: pairwise-meeting intervals all contain max_i l_i",
                     tuple(facts) + (z3.Not(z3.And([between(lo[i], w, hi[i]) for i in range(k)])),))
    z = z3.Real("z")
    return Query(f"direct-exists-k{k}", f"k = {k}: pairwise-meeting intervals have a common point",
                 tuple(facts) + (z3.Not(z3.Exists([z], z3.And([between(lo[i], z, hi[i])
                                                               for i in range(k)]))),))


@register("interval-helly-1d", source="Cummings & Durfee 2020, Lemma 3.5 (proof step); docs/math.md#spf-definition",
          statement="""For every k ≥ 1, any k closed intervals [l_i, h_i] of ℝ that intersect
          pairwise have a common point, namely max_i l_i. All k: (1) two intervals meet iff
          l_i ≤ h_j and l_j ≤ h_i; (2) every finite non-empty family has an index m maximising
          l (z3 proves the base k = 1 and the step k → k + 1 with l uninterpreted; induction on k);
          (3) for an arbitrary pair (m, j) with l_j ≤ l_m that meets, l_j ≤ l_m ≤ h_j. Applying
          (3) to the pairs (m, j), j = 1…k, puts l_m in every interval, whatever k is. (4) The
          same conclusion with k symbolic and the family uninterpreted. Also proved directly,
          one query each: the explicit witness for k = 2…10, and existence of a common point
          (∀-quantified, no witness named) for k = 2…6.""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Cummings & Durfee 2020",), spec=("docs/math.md#spf-definition",),
          mechanisms=("spf",))
def _interval_helly() -> list[Query]:
    return (interval_lemma_queries() + [_interval_direct(k, True) for k in range(2, 11)]
            + [_interval_direct(k, False) for k in range(2, 7)])


# --- 2-D ℓ1 Helly -------------------------------------------------------------------------

def _balls(k: int, dim: int) -> tuple[list[list[z3.ArithRef]], list[z3.ArithRef], list[z3.BoolRef]]:
    """k symbolic balls (centres c_i, radii r_i ≥ 0) that intersect pairwise, each pair through
    an explicit point p_ij (no lemma about centre distances is assumed)."""
    cs = [point(f"c{i}", dim) for i in range(k)]
    rs = reals("r", k)
    facts = [r >= 0 for r in rs]
    for i, j in itertools.combinations(range(k), 2):
        p = point(f"p{i}{j}", dim)
        facts += [l1_ball(p, cs[i], rs[i]), l1_ball(p, cs[j], rs[j])]
    return cs, rs, facts


def helly_existence_query(k: int, dim: int = 2) -> Query:
    """k ℓ1 balls of ℝ^dim that intersect pairwise have a common point (∀-quantified: no witness
    is named). Negation: pairwise intersection and ∀z ∃i z ∉ B_i."""
    cs, rs, facts = _balls(k, dim)
    z = point("z", dim)
    return Query(f"direct-exists-d{dim}-k{k}",
                 f"k = {k} l1 balls in R^{dim} that meet pairwise have a common point",
                 tuple(facts) + (z3.Not(z3.Exists(z, z3.And([l1_ball(z, cs[i], rs[i])
                                                             for i in range(k)]))),))


def helly_witness_query(k: int) -> Query:
    """k pairwise-intersecting ℓ1 balls of ℝ² all contain w = ((u* + v*)/2, (u* − v*)/2) with
    u* = max_i(u_i − r_i), v* = max_i(v_i − r_i): one quantifier-free query."""
    cs, rs, facts = _balls(k, 2)
    us = maximum([c[0] + c[1] - r for c, r in zip(cs, rs)])
    vs = maximum([c[0] - c[1] - r for c, r in zip(cs, rs)])
    w = [(us + vs) / 2, (us - vs) / 2]
    return Query(f"direct-witness-k{k}",
                 f"k = {k}: pairwise-meeting l1 balls in R^2 all contain the explicit witness",
                 tuple(facts) + (z3.Not(z3.And([l1_ball(w, cs[i], rs[i]) for i in range(k)])),))


def _helly_lemmas() -> list[Query]:
    ci, cj, p = point("c_i", 2), point("c_j", 2), point("p", 2)
    ri, rj = z3.Reals("r_i r_j")
    (ui, vi), (uj, vj) = _uv(ci), _uv(cj)
    in_i = l1_norm([p[0] - ci[0], p[1] - ci[1]]) <= ri
    in_j = l1_norm([p[0] - cj[0], p[1] - cj[1]]) <= rj
    meets = z3.And(ui - ri <= uj + rj, uj - rj <= ui + ri, vi - ri <= vj + rj, vj - rj <= vi + ri)
    pairwise = Query("pairwise-balls-give-pairwise-intervals",
                     "if B_i and B_j share a point, their u-intervals and v-intervals meet",
                     (ri >= 0, rj >= 0, in_i, in_j, z3.Not(meets)))
    us, vs, r = z3.Reals("u_star v_star r")
    c = point("c", 2)
    cu, cv = _uv(c)
    w = [(us + vs) / 2, (us - vs) / 2]
    back = Query("box-point-in-every-ball",
                 "if |u* - u_c| <= r and |v* - v_c| <= r then ((u*+v*)/2, (u*-v*)/2) is in B_1(c, r)",
                 (r >= 0, absolute(us - cu) <= r, absolute(vs - cv) <= r,
                  z3.Not(l1_norm([w[0] - c[0], w[1] - c[1]]) <= r)))
    return rotation_queries()[:1] + [pairwise] + interval_lemma_queries("interval-") + [back]


@register("l1-helly-2d", source="Cummings & Durfee 2020, Lemma 8.5; docs/math.md#spf-2d",
          statement="""For every k ≥ 1, any k ℓ1 balls B₁(c_i, r_i) of ℝ² that intersect pairwise
          have a common point. All k, from lemmas each proved by z3 for arbitrary balls or
          pairs: (L1) (u, v) = (x + y, x − y) turns ℓ1 distance into ℓ∞ distance, so each ball is
          the square |u − u_i| ≤ r_i, |v − v_i| ≤ r_i; (L2) if two balls share a point, their
          u-intervals [u_i − r_i, u_i + r_i] meet and so do their v-intervals; (L3) the interval
          lemmas of interval-helly-1d: a maximiser m of the lower ends exists for every finite
          family (base and induction step), and for an arbitrary meeting pair (m, j),
          l_j ≤ l_m ≤ h_j; so u* = max_i(u_i − r_i) lies in every u-interval and v* likewise;
          (L4) a point (u*, v*) inside ball i's square maps back to
          ((u* + v*)/2, (u* − v*)/2) ∈ B₁(c_i, r_i). Composing: L2 on every pair, L3 on the
          pairs (m, j), L4 on every ball gives a common point for any k. Also proved directly,
          one query each: the explicit witness for k = 2…10, and existence of a common point
          (∀-quantified, no witness named) for k = 2…5.""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Cummings & Durfee 2020",), spec=("docs/math.md#spf-2d",),
          mechanisms=("spf-2d",))
def _l1_helly_2d() -> list[Query]:
    return (_helly_lemmas() + [helly_witness_query(k) for k in range(2, 11)]
            + [helly_existence_query(k, 2) for k in range(2, 6)])


# --- the counterexamples --------------------------------------------------------------------

def counterexample_3d_queries(dim: int, points: Sequence[Sequence[object]] = POINTS_3D,
                              radius: object = 1) -> list[Query]:
    """The docs/math.md#spf-2d points padded with zeros into ℝ^dim: each pair of balls has a witness point
    (needs sat), and no point lies in all of them (needs unsat). Balls are written literally,
    Σ|p_i − c_i| ≤ r."""
    cs = [list(pt) + [0] * (dim - len(pt)) for pt in points]

    def ball(p: list[z3.ArithRef], c: Sequence[object]) -> z3.BoolRef:
        return l1_norm([pi - num(ci) for pi, ci in zip(p, c)]) <= num(radius)

    out = []
    for i, j in itertools.combinations(range(len(cs)), 2):
        p = point("p", dim)
        out.append(Query(f"d{dim}-pair-{i + 1}-{j + 1}-meet",
                         f"R^{dim}: balls {i + 1} and {j + 1} share a point",
                         (ball(p, cs[i]), ball(p, cs[j])), needs="sat"))
    z = point("z", dim)
    out.append(Query(f"d{dim}-no-common-point", f"R^{dim}: no point lies in all {len(cs)} balls",
                     tuple(ball(z, c) for c in cs)))
    return out


@register("l1-3d-counterexample", source="Cummings & Durfee 2020, Remark 8.6; docs/math.md#spf-2d",
          statement="""The ℓ1 balls of radius 1 around e₁, e₂, e₃ and (½, ½, ½) in ℝ³ intersect
          pairwise (z3 gives a witness point for each of the 6 pairs) but have no common point;
          the same holds for these points padded with zeros into ℝ^d, d = 4…8. So Lemma 8.5 fails
          in dimension ≥ 3.""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Cummings & Durfee 2020",), spec=("docs/math.md#spf-2d",),
          mechanisms=("spf-2d",))
def _l1_3d() -> list[Query]:
    return [q for d in range(3, 9) for q in counterexample_3d_queries(d)]


def disc_queries(radius: object = 1) -> list[Query]:
    """Discs of the given radius around (0, 0), (2, 0), (1, √3): each pair meets (needs sat) and
    no point lies in all three (needs unsat). √3 is the real s with s > 0, s² = 3."""
    s3 = z3.Real("sqrt3")
    root = (s3 > 0, s3 * s3 == 3)
    cs = [(0, 0), (2, 0), (1, s3)]
    out = []
    for i, j in itertools.combinations(range(3), 2):
        p = point("p", 2)
        out.append(Query(f"pair-{i + 1}-{j + 1}-meet", f"discs {i + 1} and {j + 1} share a point",
                         root + (l2_ball(p, cs[i], radius), l2_ball(p, cs[j], radius)), needs="sat"))
    z = point("z", 2)
    out.append(Query("no-common-point", "no point lies in all three discs",
                     root + tuple(l2_ball(z, c, radius) for c in cs)))
    return out


@register("l2-2d-counterexample", source="Cummings & Durfee 2020, Remark 8.7; docs/math.md#spf-2d",
          statement="""The ℓ2 discs of radius 1 around (0, 0), (2, 0) and (1, √3) intersect
          pairwise (they touch at the edge midpoints; z3 gives each touching point) but have no
          common point (the circumradius is 2/√3 > 1). So Lemma 8.5 fails for ℓ2 in ℝ²
          (nonlinear real arithmetic, √3 as the positive root of s² = 3).""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Cummings & Durfee 2020",), spec=("docs/math.md#spf-2d",),
          mechanisms=("spf-2d",))
def _l2_2d() -> list[Query]:
    return disc_queries(1)

