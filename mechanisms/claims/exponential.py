"""The claims of Muñoz Medina and Gillenwater (2020) (Duff), Dong (2020) (range vs sensitivity) and the EM-for-medians notes (2020), with
their verdicts, as data (docs/math.md#exponential-mechanism, #duff, #errata).

Each claim (a :class:`~dpaudit.reference.claims.types.SeedClaim`, the type shared with
:mod:`~dpaudit.reference.claims.noise`) names its seed, where the seed states it, the statement checked,
the verdict we record, the section of docs/math.md and its errata (E-numbers, docs/math.md#errata), and a ``check`` that
recomputes the evidence from scratch (exhaustive enumeration over a small universe, or exact laws and
:func:`dpaudit.estimators.exact.pair_loss` on a deterministic set of neighbouring pairs).

Verdicts follow the project's three-valued honesty: a claim with an explicit, exactly checked
counterexample is REFUTED; a claim that survived the exhaustive or exact check is NOT_REFUTED
(docs/math.md derives it [D], and the z3 claims of ``dpaudit verify`` may prove it; nothing here prints
"proved"). Ids are ``s<NNN>-<where>-<what>``, lower case; :func:`dpaudit.reference.claims.evaluate`
runs the checks and says whether each observed verdict agrees.

:func:`order_statistic_pairs` is the deterministic worst-pair hunt used by the checks and the tests:
records at the domain ends, tight clusters there and in the middle, splits of j tightly clustered
records at one end and n − j at the other, and neighbours that add, remove or move a record to an
end, the middle or just inside an end. The tight end clusters matter: for the quantile EM under
replace-one the worst loss needs one long cell next to short ones (≈ 0.999ε here, against ≈ 0.78ε
for plain end / midpoint patterns).
"""

from __future__ import annotations

import itertools
import math
from functools import partial
from typing import Any, Callable

import numpy as np

from dpaudit.claims import Domain, Neighbours, check_size
from dpaudit.errors import InvalidArgument
from dpaudit.estimators.exact import pair_loss
from dpaudit.results import Verdict
from dpaudit.rng import generator, root_sequence
from ..duff import Duff, duff_utility
from ..analysis.duff_bounds import level_set_measure
from ..exponential import (
    ExponentialMechanism,
    count_utility,
    piecewise_em_law,
    utility_bounds,
)
from ..quantile import (
    QuantileEM,
    quantile_utility,
    quantile_utility_eq21,
    quantile_utility_eq22,
)
from .types import ClaimEvidence, SeedClaim

__all__ = ["order_statistic_pairs", "max_pair_loss", "claims"]


# ---------------------------------------------------------------------------------------------
# the deterministic worst-pair hunt


def _patterns(n: int, lo: float, hi: float) -> list[np.ndarray]:
    eta = 1e-3 * (hi - lo)
    mid = (lo + hi) / 2
    pats = [np.linspace(lo, hi, n), lo + eta * np.arange(n), hi - eta * np.arange(n),
            mid + eta * (np.arange(n) - n / 2)]
    for j in range(0, n + 1):
        pats.append(np.r_[np.full(j, lo), np.full(n - j, hi)])
        pats.append(np.r_[lo + eta * np.arange(j), hi - eta * np.arange(n - j)])
    return pats


def order_statistic_pairs(size: int, lo: float, hi: float, neighbours: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """Neighbouring pairs (D, D') with |D| = ``size`` built from end / cluster / split patterns.

    add-remove: D' adds lo, hi, the middle or a point just inside an end, or removes a record;
    replace: D' moves one record to one of those values. Deterministic, O(size²) pairs.
    """
    n = check_size(size)
    dom = Domain(lo, hi)
    rel = Neighbours.parse(neighbours)
    eta = 1e-3 * dom.width
    values = [dom.lo, dom.hi, (dom.lo + dom.hi) / 2, dom.lo + eta / 2, dom.hi - eta / 2]
    pairs = []
    for d in _patterns(n, dom.lo, dom.hi):
        if rel is Neighbours.ADD_REMOVE:
            pairs += [(d, np.r_[d, v]) for v in values]
            pairs += [(d, np.delete(d, i)) for i in range(n)]
        elif rel is Neighbours.REPLACE:
            pairs += [(d, np.r_[np.delete(d, i), v]) for i in range(n) for v in values]
        else:
            raise InvalidArgument.bad("neighbours", neighbours, "'add-remove' or 'replace'")
    return pairs


def max_pair_loss(law: Callable[[np.ndarray], Any], pairs) -> tuple[float, tuple]:
    """max over ``pairs`` of the exact loss sup|ln p − ln q| between law(D) and law(D'), and its pair."""
    best, arg = -math.inf, ()
    cache: dict[bytes, Any] = {}

    def cached(x: np.ndarray) -> Any:
        key = np.asarray(x, dtype=float).tobytes()
        if key not in cache:
            cache[key] = law(x)
        return cache[key]

    for d, d2 in pairs:
        loss = pair_loss(cached(d), cached(d2)).epsilon
        if loss > best:
            best, arg = loss, (tuple(d.tolist()), tuple(d2.tolist()))
    return best, arg


# ---------------------------------------------------------------------------------------------
# checks

_EVALUATOR = "dpaudit.reference.claims:evaluate"
_GRID = tuple(np.arange(-0.5, 3.51, 0.25).tolist())   # outputs r, data points and gaps
_UNIVERSE = (0.0, 1.0, 2.0, 3.0)


def _bound_check(utility, neighbours: str, bound: float, max_size: int = 4,
                 quantity: str = "sensitivity", outputs=_GRID, universe=_UNIVERSE) -> ClaimEvidence:
    ub = utility_bounds(utility, outputs, universe, max_size, neighbours)
    value = ub.sensitivity if quantity == "sensitivity" else ub.range
    witness = ub.sensitivity_witness if quantity == "sensitivity" else ub.range_witness
    ok = value <= bound + 1e-12
    detail = (f"{quantity} = {value:g} over {ub.pairs} {neighbours} pairs of multisets of "
              f"{list(universe)} (size ≤ {max_size}), outputs on a 0.25-grid; bound {bound:g}")
    cex = None if ok else {"dataset": witness[0], "neighbour": witness[1]}
    return ClaimEvidence(Verdict.NOT_REFUTED if ok else Verdict.REFUTED, value, bound, detail, cex)


def _quantile_change_one() -> ClaimEvidence:
    worst = max((_bound_check(lambda d, r, q=q: quantile_utility_eq22(d, r, q), "replace", 1.0)
                 for q in (0.25, 0.5, 0.8)), key=lambda e: e.observed)
    return worst


def _quantile_add_remove() -> ClaimEvidence:
    out = []
    for q in (0.25, 0.5, 0.8):
        e = _bound_check(lambda d, r, q=q: quantile_utility(d, r, q), "add-remove", max(q, 1 - q))
        out.append(e)
    return max(out, key=lambda e: (e.verdict is Verdict.REFUTED, e.observed / e.bound))


def _quantile_eq22_add_remove() -> ClaimEvidence:
    S, S2, r, q = np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0, -1.0]), 0.0, 0.5
    gap = abs(quantile_utility_eq22(S2, r, q) - quantile_utility_eq22(S, r, q))
    bound = max(q, 1 - q)
    exhaustive = _bound_check(lambda d, r: quantile_utility_eq22(d, r, q), "add-remove", bound)
    ok = gap <= bound and exhaustive.verdict is Verdict.NOT_REFUTED
    return ClaimEvidence(
        Verdict.NOT_REFUTED if ok else Verdict.REFUTED, max(gap, exhaustive.observed), bound,
        f"q = ½, S = {{1,2,3}}, r = 0: adding −1 moves u by {gap:g} > {bound:g}; exhaustive "
        f"add/remove sensitivity {exhaustive.observed:g} = 2·max(q, 1−q)",
        {"q": q, "r": r, "dataset": S.tolist(), "neighbour": S2.tolist()})


def _eq21_sign() -> ClaimEvidence:
    data = np.linspace(0.1, 0.9, 9)
    q = QuantileEM(1.0, 0.5, 0.0, 1.0)
    edges, _ = q.cells(data)
    n = data.size
    u21 = np.array([quantile_utility_eq21(data, (edges[k] + edges[k + 1]) / 2) for k in range(n + 1)])
    law = piecewise_em_law(edges, u21, 1.0 / (2 * 2.0))   # eq 2.1 has change-one sensitivity 2
    mode = int(np.argmax(law.log_density))
    central = mode not in (0, n)
    return ClaimEvidence(
        Verdict.NOT_REFUTED if central else Verdict.REFUTED, float(mode), None,
        f"EM with u = |C< − C>| on 9 evenly spread points in [0, 1]: the density is highest on "
        f"cell {mode} (cells 0..{n}; the median cell is {n // 2}), i.e. at an end of [m, M]",
        {"dataset": data.tolist(), "mode_cell": mode, "density_ratio_end_to_median":
         float(math.exp(law.log_density[mode] - law.log_density[n // 2]))})


def _em_private(make, rel: str, sizes=(1, 2, 3, 4, 5)) -> Callable[[], ClaimEvidence]:
    def check() -> ClaimEvidence:
        mech = make()
        best, pair = -math.inf, ()
        for n in sizes:
            loss, p = max_pair_loss(mech.law, order_statistic_pairs(n, mech.lo, mech.hi, rel))
            if loss > best:
                best, pair = loss, p
        ok = best <= mech.epsilon * (1 + 1e-9)
        return ClaimEvidence(Verdict.NOT_REFUTED if ok else Verdict.REFUTED, best, mech.epsilon,
                             f"exact loss on structured {rel} pairs (sizes {list(sizes)}): max "
                             f"{best:.6f} vs ε = {mech.epsilon:g} (worst pair {pair})",
                             None if ok else {"dataset": pair[0], "neighbour": pair[1]})
    return check


def _duff_sensitivity() -> ClaimEvidence:
    return _bound_check(lambda d, x: duff_utility(d, x, "avg", (0.0, 3.0)), "add-remove", 1.0,
                        outputs=tuple(v for v in _GRID if 0 <= v <= 3))


def _theorem1_assumption() -> ClaimEvidence:
    data = np.linspace(-1.0, 1.0, 101)
    small = level_set_measure(data, 0.5, "avg", -10, 10)
    big = level_set_measure(data, 1e9, "avg", -10, 10)
    refuted = small == 0.0 or math.isfinite(big)
    return ClaimEvidence(
        Verdict.REFUTED if refuted else Verdict.NOT_REFUTED, small, None,
        f"λ(H_0.5) = {small:g} < C·0.5 for every C > 0, and λ(H_t) ≤ b − a = {big:g} < C·t for "
        f"t > {big:g}/C: no C > 0 satisfies λ(H_t) ≥ C·t for all t (even t ≥ 1)",
        {"dataset": "101 points evenly spaced in [−1, 1], domain [−10, 10]", "t": 0.5,
         "lambda_H_t": small, "lambda_H_inf": big})


def _size_utility(d: np.ndarray, r: Any) -> float:
    return float(np.asarray(d).size)


def _monotone_range_eq_sens() -> ClaimEvidence:
    ub = utility_bounds(_size_utility, (0.0, 1.0), (0.0, 1.0), 3, "add-remove")
    equal = ub.monotone and abs(ub.range - ub.sensitivity) < 1e-12
    return ClaimEvidence(
        Verdict.NOT_REFUTED if equal else Verdict.REFUTED, ub.range, ub.sensitivity,
        f"q(x, y) = |x| is monotone (add/remove) with sens = {ub.sensitivity:g} but range = "
        f"{ub.range:g}: range ≤ sens holds, range = sens does not",
        {"utility": "q(x, y) = |x|", "sensitivity": ub.sensitivity, "range": ub.range})


def _counting_range() -> ClaimEvidence:
    ub = utility_bounds(count_utility, (0.0, 1.0, 2.0), (0.0, 1.0, 2.0), 4, "add-remove")
    ok = ub.monotone and ub.range == 1.0 and ub.sensitivity == 1.0
    return ClaimEvidence(Verdict.NOT_REFUTED if ok else Verdict.REFUTED, ub.range, 1.0,
                         f"count utility on 3 items, ≤ 4 records: monotone = {ub.monotone}, "
                         f"sens = {ub.sensitivity:g}, range = {ub.range:g}")


def _range_le_two_sens() -> ClaimEvidence:
    table = generator(root_sequence(3)).integers(-3, 4, size=(5, 4)).astype(float)      # u(S, r) = Σ_s table[s, r]

    def u(d: np.ndarray, r: Any) -> float:
        return float(table[d.astype(int), int(r)].sum())

    worst = 0.0
    for rel in ("add-remove", "replace"):
        ub = utility_bounds(u, (0, 1, 2, 3), (0.0, 1.0, 2.0, 3.0, 4.0), 3, rel)
        worst = max(worst, ub.range / ub.sensitivity)
    return ClaimEvidence(Verdict.NOT_REFUTED if worst <= 2 + 1e-12 else Verdict.REFUTED, worst, 2.0,
                         f"max range/sens = {worst:g} for a random additive utility table "
                         f"(both relations, ≤ 3 records)")


def _equal_mechanisms_equal_range() -> ClaimEvidence:
    # Dong (2020): X = Y = {0, 1}, q = x + y, q' = 100x + y (x the record, one record, replace)
    q1 = lambda d, y: float(d[0] + y)          # noqa: E731
    q2 = lambda d, y: float(100 * d[0] + y)    # noqa: E731
    a = utility_bounds(q1, (0.0, 1.0), (0.0, 1.0), 1, "replace")
    b = utility_bounds(q2, (0.0, 1.0), (0.0, 1.0), 1, "replace")
    same = abs(a.range - b.range) < 1e-12
    return ClaimEvidence(Verdict.NOT_REFUTED if same else Verdict.REFUTED, b.range, a.range,
                         f"q = x + y: sens {a.sensitivity:g}, range {a.range:g}; q' = 100x + y: "
                         f"sens {b.sensitivity:g}, range {b.range:g} (same mechanism, same range)")


def _range_theorem() -> ClaimEvidence:
    # exp(ε q) is (range·ε)-DP: exact loss of the top-item EM over every add/remove pair, ≤ 4 records
    eps, items = 1.0, 3
    mech = ExponentialMechanism(eps, (0.0, 1.0, 2.0), count_utility, 1.0, "range", "add-remove")
    best = 0.0
    for size in range(0, 4):
        for S in itertools.combinations_with_replacement(range(items), size):
            d = np.asarray(S, dtype=float)
            for z in range(items):
                best = max(best, pair_loss(mech.law(d), mech.law(np.r_[d, z])).epsilon)
    ok = best <= eps * (1 + 1e-12)
    return ClaimEvidence(Verdict.NOT_REFUTED if ok else Verdict.REFUTED, best, eps,
                         f"exp(ε·count) with range 1: exact max loss {best:.6f} ≤ ε over every "
                         f"add/remove pair of ≤ 3 records on 3 items")


def claims() -> tuple[SeedClaim, ...]:
    """Every recorded claim of papers 000 (Muñoz Medina and Gillenwater 2020), 003 (Dong 2020) and 004 (the EM-for-medians notes 2020), in that order."""
    NR, RF = Verdict.NOT_REFUTED, Verdict.REFUTED
    C = partial(SeedClaim, evaluator=_EVALUATOR)
    return (
        C("s000-duff-sensitivity", "000", "Def 8 and the text after it",
          "the Duff utility u_d has sensitivity 1 under add/remove", NR, "docs/math.md#duff-definition", (),
          _duff_sensitivity),
        C("s000-duff-private", "000", "Def 7–8 (exponential mechanism with u_d)",
          "Duff (density ∝ exp(ε u_d/2)) is ε-DP under add/remove", NR, "docs/math.md#duff-definition", (),
          _em_private(lambda: Duff(1.0, 0.0, 1.0, "avg"), "add-remove")),
        C("s000-thm1-assumption", "000", "Theorem 1 (assumption λ(H_t) ≥ Ct)",
          "some C > 0 satisfies λ(H_t) ≥ C·t for all t", RF, "docs/math.md#duff-theorem-1", ("E4",),
          _theorem1_assumption),
        C("s003-range-theorem", "003", "Theorem 1 [DDR '19]",
          "Exp_{q,ε} is range(q)·ε-DP", NR, "docs/math.md#em-range", (), _range_theorem),
        C("s003-equal-mechanisms-equal-range", "003", "Proposition",
          "q and q' = 100x + y give the same mechanism and the same range", NR,
          "docs/math.md#em-range", (), _equal_mechanisms_equal_range),
        C("s003-range-le-2sens", "003", "item 1 after Theorem 1",
          "range(q) ≤ 2·sens(q)", NR, "docs/math.md#em-range", (), _range_le_two_sens),
        C("s003-monotone-range-eq-sens", "003", "item 2 after Theorem 1",
          "range(q) = sens(q) if q is monotone", RF, "docs/math.md#em-range", ("E27",),
          _monotone_range_eq_sens),
        C("s003-counting-range-eq-sens", "003", "item 2 after Theorem 1",
          "counting queries are monotone with range = sens = 1", NR, "docs/math.md#em-range", (),
          _counting_range),
        C("s004-eq21-sign", "004", "eq 2.1",
          "u = |#(x<r) − #(x>r)| scores outputs near the median highest", RF,
          "docs/math.md#quantile-utility", ("E29",), _eq21_sign),
        C("s004-thm2-change-one", "004", "Theorem 2",
          "the utility of eq 2.2 has change-one sensitivity ≤ 1", NR, "docs/math.md#quantile-utility",
          ("E31",), _quantile_change_one),
        C("s004-thm3-add-remove-no-constant", "004", "Theorem 3 (utility without the constant)",
          "−|(1−q)#(x<r) − q#(x>r)| has add/drop sensitivity ≤ max(q, 1−q)", NR,
          "docs/math.md#quantile-utility", ("E32",), _quantile_add_remove),
        C("s004-thm3-eq22-as-written", "004", "Theorem 3 with eq 2.2 as written",
          "max(q, 1−q)N − |(1−q)#(x<r) − q#(x>r)| has add/drop sensitivity ≤ max(q, 1−q)",
          RF, "docs/math.md#quantile-utility", ("E30", "E32"), _quantile_eq22_add_remove),
        C("s004-em-private-change-one", "004", "Theorem 1 applied to §2 (normaliser: E35)",
          "the quantile EM with Δu = 1 is ε-DP under change-one", NR, "docs/math.md#quantile-sampler", ("E35",),
          _em_private(lambda: QuantileEM(1.0, 0.5, 0.0, 1.0, "replace"), "replace")),
        C("s004-em-private-add-remove", "004", "Theorem 1 applied to §2 (normaliser: E35)",
          "the quantile EM with Δu = max(q, 1−q) is ε-DP under add/drop", NR, "docs/math.md#quantile-sampler",
          ("E35",), _em_private(lambda: QuantileEM(1.0, 0.25, 0.0, 1.0, "add-remove"), "add-remove")),
    )
