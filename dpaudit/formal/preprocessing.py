"""Claims about the sensitivity-preprocessing function (SPF) of Cummings and Durfee (2020) (docs/math.md#spf-definition, #spf-2d).

- ``spf-lemma-3.5``: L(D) ≤ U(D) always, so f̂ is defined, and |f̂(D ∪ i) − f̂(D)| ≤ Δ_i.
- ``spf-2d-lemma-8.4``: in ℝ² with ℓ1, the balls B₁(f̂(D∖i), Δ_i) intersect pairwise; with
  ``l1-helly-2d`` this makes K(D) non-empty (Lemma 8.8).
- ``l1-3d-spf-undefined``: docs/math.md#spf-2d's assignment of f on subsets of {1, 2, 3, 4} in ℝ³ makes the
  feasible set K({1, 2, 3, 4}) empty (Remark 8.6 inside the algorithm).
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Sequence

import z3

from dpaudit.formal.encode import absolute, between, l1_norm, maximum, minimum, num, point
from dpaudit.formal.claim import register
from dpaudit.formal.result import Status
from dpaudit.formal.solver import Query

__all__ = ["spf_3d_queries", "SPF_3D_VALUES"]

HALF = Fraction(1, 2)
#: docs/math.md#spf-2d Remark 8.6: f on the subsets of {1, 2, 3, 4} of size ≤ 3 (every other set maps to 0).
SPF_3D_VALUES: dict[frozenset, tuple] = {
    frozenset({1}): (HALF, 0, 0),
    frozenset({1, 2}): (0, 0, HALF),
    frozenset({1, 3}): (HALF, HALF, 0),
    frozenset({2, 3}): (HALF, HALF, 0),
    frozenset({2, 3, 4}): (1, 0, 0),
    frozenset({1, 3, 4}): (0, 1, 0),
    frozenset({1, 2, 4}): (0, 0, 1),
    frozenset({1, 2, 3}): (HALF, HALF, HALF),
}


def _subsets(universe: Sequence[int], max_size: int) -> list[frozenset]:
    return [frozenset(c) for k in range(max_size + 1) for c in itertools.combinations(universe, k)]


def _label(d: frozenset) -> str:
    return "".join(str(i) for i in sorted(d)) or "empty"


# --- Lemma 3.5 ------------------------------------------------------------------------------

def _lemma_35_direct(n: int) -> Query:
    """The 1-D SPF on every subset of {1..n}: f arbitrary, Δ_i ≥ 0 arbitrary, f̂(∅) = f(∅),
    f̂(D) = clamp(f(D), L(D), U(D)). Negation: some L(D) > U(D), or some |f̂(D) − f̂(D∖i)| > Δ_i."""
    ids = list(range(1, n + 1))
    sets = _subsets(ids, n)
    delta = {i: z3.Real(f"Delta{i}") for i in ids}
    f = {d: z3.Real(f"f_{_label(d)}") for d in sets}
    fh = {d: z3.Real(f"fhat_{_label(d)}") for d in sets}
    facts = [dl >= 0 for dl in delta.values()] + [fh[frozenset()] == f[frozenset()]]
    bad = []
    for d in sets:
        if not d:
            continue
        lo = maximum([fh[d - {i}] - delta[i] for i in sorted(d)])
        hi = minimum([fh[d - {i}] + delta[i] for i in sorted(d)])
        facts.append(fh[d] == minimum([maximum([f[d], lo]), hi]))
        bad.append(lo > hi)
        bad += [absolute(fh[d] - fh[d - {i}]) > delta[i] for i in sorted(d)]
    return Query(f"direct-n{n}", f"n = {n}: L <= U on every subset and f-hat has individual "
                 "sensitivities Delta_i", tuple(facts) + (z3.Or(bad),))


@register("spf-lemma-3.5", source="Cummings & Durfee 2020, Lemma 3.5, Definition 3.1; docs/math.md#spf-definition",
          statement="""For every finite set of individuals, every f and every Δ_i ≥ 0, the SPF
          f̂(D) = clamp(f(D), L(D), U(D)) with L(D) = max_{i∈D}(f̂(D∖i) − Δ_i) and
          U(D) = min_{i∈D}(f̂(D∖i) + Δ_i) has L(D) ≤ U(D) and |f̂(D) − f̂(D∖i)| ≤ Δ_i. All n, by
          induction on |D| from three lemmas z3 proves for arbitrary indices: (P1) if
          |f̂(D∖i) − f̂(D∖{i,j})| ≤ Δ_j and |f̂(D∖j) − f̂(D∖{i,j})| ≤ Δ_i then
          |f̂(D∖i) − f̂(D∖j)| ≤ Δ_i + Δ_j; (P2) that gives f̂(D∖i) − Δ_i ≤ f̂(D∖j) + Δ_j for the
          pair, and over all pairs L(D) ≤ U(D); (P3) for each i, a clamp into [L, U] with
          L ≥ f̂(D∖i) − Δ_i and U ≤ f̂(D∖i) + Δ_i lies within Δ_i of f̂(D∖i). Also proved
          directly on all subsets of {1..n}, n = 1…4.""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Cummings & Durfee 2020",), spec=("docs/math.md#spf-definition",),
          mechanisms=("spf",))
def _lemma_35() -> list[Query]:
    a, bi, bj, di, dj, x, lo, hi = z3.Reals("fhat_Dij fhat_Di fhat_Dj Delta_i Delta_j f_D L U")
    p1 = Query("P1-pair-through-common-subset",
               "|fhat(D-i) - fhat(D-ij)| <= Delta_j and |fhat(D-j) - fhat(D-ij)| <= Delta_i "
               "imply |fhat(D-i) - fhat(D-j)| <= Delta_i + Delta_j",
               (absolute(bi - a) <= dj, absolute(bj - a) <= di, absolute(bi - bj) > di + dj))
    p2 = Query("P2-pair-lower-below-upper",
               "|fhat(D-i) - fhat(D-j)| <= Delta_i + Delta_j implies "
               "fhat(D-i) - Delta_i <= fhat(D-j) + Delta_j",
               (absolute(bi - bj) <= di + dj, bi - di > bj + dj))
    y = minimum([maximum([x, lo]), hi])
    p3 = Query("P3-clamp-within-Delta_i",
               "L <= U, L >= fhat(D-i) - Delta_i, U <= fhat(D-i) + Delta_i imply "
               "|clamp(f(D), L, U) - fhat(D-i)| <= Delta_i",
               (lo <= hi, lo >= bi - di, hi <= bi + di, z3.Not(z3.And(between(lo, y, hi),
                                                                      absolute(y - bi) <= di))))
    return [p1, p2, p3] + [_lemma_35_direct(n) for n in range(1, 5)]


# --- Lemma 8.4 in ℝ² ------------------------------------------------------------------------

@register("spf-2d-lemma-8.4", source="Cummings & Durfee 2020, Lemmas 8.4 and 8.8; docs/math.md#spf-2d",
          statement="""In ℝ² with the ℓ1 norm: (a) if ‖f̂(D∖i) − f̂(D∖{i,j})‖₁ ≤ Δ_j and
          ‖f̂(D∖j) − f̂(D∖{i,j})‖₁ ≤ Δ_i then ‖f̂(D∖i) − f̂(D∖j)‖₁ ≤ Δ_i + Δ_j; (b) two ℓ1 balls
          B₁(a, r), B₁(b, s) with r, s ≥ 0 meet iff ‖a − b‖₁ ≤ r + s (the point
          a + r/(r + s)·(b − a) is common). So the balls B₁(f̂(D∖i), Δ_i) meet pairwise, and by
          l1-helly-2d the feasible set K(D) is non-empty for every D (Lemma 8.8, by induction
          on |D|).""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Cummings & Durfee 2020",), spec=("docs/math.md#spf-2d",),
          mechanisms=("spf-2d",))
def _lemma_84() -> list[Query]:
    a, bi, bj = point("fhat_Dij", 2), point("fhat_Di", 2), point("fhat_Dj", 2)
    di, dj = z3.Reals("Delta_i Delta_j")
    dist = lambda p, q: l1_norm([p[0] - q[0], p[1] - q[1]])  # noqa: E731
    tri = Query("triangle-through-common-subset",
                "the two distances through fhat(D-ij) bound ||fhat(D-i) - fhat(D-j)||_1",
                (dist(bi, a) <= dj, dist(bj, a) <= di, dist(bi, bj) > di + dj))
    c1, c2, p = point("a", 2), point("b", 2), point("p", 2)
    r, s = z3.Reals("r s")
    t = z3.If(r + s > 0, r / (r + s), z3.RealVal(0))
    w = [c1[0] + t * (c2[0] - c1[0]), c1[1] + t * (c2[1] - c1[1])]
    only_if = Query("balls-meet-only-if-close", "a common point p forces ||a - b||_1 <= r + s",
                    (dist(p, c1) <= r, dist(p, c2) <= s, dist(c1, c2) > r + s))
    if_ = Query("balls-meet-if-close", "||a - b||_1 <= r + s puts a + r/(r+s)(b - a) in both balls",
                (r >= 0, s >= 0, dist(c1, c2) <= r + s,
                 z3.Not(z3.And(dist(w, c1) <= r, dist(w, c2) <= s))))
    return [tri, only_if, if_]


# --- Remark 8.6 inside the algorithm ----------------------------------------------------------

def spf_3d_queries(values: dict[frozenset, tuple] = SPF_3D_VALUES, delta: object = 1
                   ) -> list[Query]:
    """Definition 8.2 in ℝ³ on the subsets of {1, 2, 3, 4} of size ≤ 3, with Δ_i = ``delta``.
    f̂(D) must lie in K(D) = ∩_{i∈D} B₁(f̂(D∖i), Δ_i) and be ℓ1-nearest to f(D); the nearest-point
    condition enters through its instance at z = f(D) (a consequence of it)."""
    sets = _subsets([1, 2, 3, 4], 3)
    f = {d: [num(v) for v in values.get(d, (0, 0, 0))] for d in sets}
    fh = {d: point(f"fhat_{_label(d)}", 3) for d in sets}
    dist = lambda p, q: l1_norm([x - y for x, y in zip(p, q)])  # noqa: E731
    facts = [z3.And([x == y for x, y in zip(fh[frozenset()], f[frozenset()])])]
    for d in sets:
        if d:
            parents = [fh[d - {i}] for i in sorted(d)]
            facts.append(z3.And([dist(fh[d], q) <= num(delta) for q in parents]))
            f_in_k = z3.And([dist(f[d], q) <= num(delta) for q in parents])
            facts.append(z3.Implies(f_in_k, dist(fh[d], f[d]) <= 0))
    facts = tuple(facts)
    full = frozenset({1, 2, 3, 4})
    z = point("z", 3)
    k_full = tuple(dist(z, fh[full - {i}]) <= num(delta) for i in sorted(full))
    return [
        Query("defined-up-to-size-3", "Definition 8.2 can be met on every set of size <= 3",
              facts, needs="sat"),
        Query("fhat-equals-f-up-to-size-3", "every admissible fhat equals f on the sets of size <= 3",
              facts + (z3.Or([z3.Or([x != y for x, y in zip(fh[d], f[d])]) for d in sets]),)),
        Query("K-1234-empty", "no point z lies in K({1,2,3,4})", facts + k_full),
    ]


@register("l1-3d-spf-undefined", source="Cummings & Durfee 2020, Remark 8.6, Definition 8.2; docs/math.md#spf-2d",
          statement="""With individuals 1…4, Δ_i = 1 and docs/math.md#spf-2d's f on the sets of size ≤ 3
          (f({1}) = (½,0,0), f({1,2}) = (0,0,½), f({1,3}) = f({2,3}) = (½,½,0),
          f({2,3,4}) = e₁, f({1,3,4}) = e₂, f({1,2,4}) = e₃, f({1,2,3}) = (½,½,½), else 0),
          Definition 8.2 in ℝ³ can be met on every set of size ≤ 3, forces f̂ = f there, and
          leaves K({1,2,3,4}) = ∩_i B₁(f̂({1,2,3,4}∖i), 1) empty: the 3-D preprocessing is
          undefined at {1,2,3,4}, for every admissible choice of nearest points.""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Cummings & Durfee 2020",), spec=("docs/math.md#spf-2d",),
          mechanisms=("spf-2d",))
def _spf_3d() -> list[Query]:
    return spf_3d_queries()

