"""Pairs as blocks at base levels (dpaudit.neighbours.levels) and the level search over them
(dpaudit.search.levels), on an exact, deterministic objective."""

import numpy as np
import pytest
from scipy.stats import laplace

from dpaudit.claims import Domain, Neighbours
from dpaudit.neighbours.levels import (Block, Levels, base_level_patterns, from_pair, shift_moves,
                                       simplifications, structure_moves)
from dpaudit.neighbours.pair import Pair
from dpaudit.neighbours.patterns import structured_pairs
from dpaudit.neighbours.relations import are_neighbours
from dpaudit.search.levels import level_search

DOM = Domain.parse((-10, 10))


def test_blocks_round_trip_and_describe():
    p = Pair.of([1, 1, 1, 0, 0], [0, 0, 0, 1, 1])
    lv = from_pair(p)
    assert lv is not None and len(lv.blocks) == 2
    assert lv.pair("x").key == p.key
    assert lv.describe() == "3 at 1 down, 2 at 0 up"
    assert from_pair(Pair.of([0, 1, 2, 3], [1, 2, 3, 4])) is None  # four blocks


def test_moves_stay_in_the_domain_and_keep_each_blocks_step():
    lv = Levels((Block((0, 1), 8.5, 1.0), Block((2,), -10.0, 0.0)), 3)
    for delta in (5.0, 2.5):
        for _, m in shift_moves(lv, DOM, delta):
            a, b = m.pair("").dataset, m.pair("").neighbour
            assert a.min() >= -10 and b.max() <= 10
            assert sorted(g.step for g in m.blocks) == [0.0, 1.0]
    kinds = [label for label, _ in structure_moves(lv, DOM, 1.0)]
    assert "block 0 split 1/1 opposite" in kinds and "block 1 step 1" in kinds
    for _, m in list(structure_moves(lv, DOM, 1.0)) + list(simplifications(lv, DOM)):
        p = m.pair("")
        assert are_neighbours("linf", p.dataset, p.neighbour, DOM, 3) or p.identical


@pytest.mark.parametrize("rel,dom,n,quarter", [("linf", (-10, 10), 10, True),
                                               ("linf", (-10, 10), 2, True),
                                               ("l1", (0, 10), 5, True), ("linf", (0, 1), 4, False)])
def test_base_level_patterns_are_valid_pairs_at_the_quarter_levels(rel, dom, n, quarter):
    d = Domain.parse(dom)
    raw = list(base_level_patterns(Neighbours.parse(rel), d, n))
    assert raw
    for label, a, b in raw:
        assert are_neighbours(rel, a, b, d, n), label
    q = d.lo + d.width / 4
    # (a domain one step wide has no room for a level: its pairs sit at the ends)
    assert any(f"at {q:g}" in label for label, _, _ in raw) is quarter
    with_levels = structured_pairs(rel, dom, n, both_orders=False)
    without = structured_pairs(rel, dom, n, both_orders=False, levels=False)
    assert [p.key for p in with_levels[:len(without)]] == [p.key for p in without]
    assert len(with_levels) > len(without)


def test_a_single_answer_gets_no_base_level_patterns():
    assert list(base_level_patterns(Neighbours.LINF, DOM, 1)) == []


def _threshold_loss(T: float, b: float, p_min: float):
    """Exact loss of out_i = [D_i + Lap(b) ≥ T], i = 1..d, on its most lopsided output that has
    probability ≥ p_min under D or D' (a sampled audit cannot see rarer outputs): the product of
    Laplace tails, so the loss is d/b exactly when every coordinate sits in [T − 1, T] on one side
    and one above on the other, and shrinks fast as the answers move away from T."""
    def f(pair: Pair) -> float:
        x, y = pair.dataset, pair.neighbour
        px, py = laplace.sf(T - x, scale=b), laplace.sf(T - y, scale=b)
        best = 0.0
        for bits in np.ndindex(*(2,) * x.size):
            on = np.array(bits, dtype=bool)
            lx = np.sum(np.log(np.where(on, px, 1 - px)))
            ly = np.sum(np.log(np.where(on, py, 1 - py)))
            if max(lx, ly) >= np.log(p_min):
                best = max(best, abs(lx - ly))
        return best
    return f


def test_level_search_finds_all_answers_across_the_threshold_without_a_hint():
    # T = 3.3 is neither a pattern level (−10, −5, 0, 5, 10) nor a step away from one
    T, b, d = 3.3, 0.5, 3
    f = _threshold_loss(T, b, p_min=1e-3)
    scored = [(p, f(p)) for p in structured_pairs("linf", (-10, 10), d, both_orders=False)]
    best_pattern = max(v for _, v in scored)
    seen = level_search(f, "linf", (-10, 10), d, scored, max_evals=12, budget_left=lambda: True)
    assert 0 < len(seen) <= 12
    p, v = max(seen, key=lambda pv: pv[1])
    assert v >= 0.9 * d / b > best_pattern + 1.0
    # the structure expected: every answer moved the same way, all of them next to the threshold
    step = p.neighbour - p.dataset
    assert np.all(step == step[0]) and abs(step[0]) == 1, p
    assert np.all(np.abs((p.dataset + p.neighbour) / 2 - T) <= 1.5), p
    assert p.label.startswith("levels from ")
    for q, _ in seen:
        assert are_neighbours("linf", q.dataset, q.neighbour, (-10, 10), d)


def test_level_search_keeps_l1_pairs_valid():
    # under l1 one answer moves by 1 (its Laplace tail ratio is e^{1/b} wherever it sits): the
    # search keeps every pair valid and loses nothing
    T, b, d = 6.6, 0.5, 4
    f = _threshold_loss(T, b, p_min=1e-3)
    scored = [(p, f(p)) for p in structured_pairs("l1", (0, 10), d, both_orders=False)]
    seen = level_search(f, "l1", (0, 10), d, scored, max_evals=12, budget_left=lambda: True)
    assert seen
    for q, _ in seen:
        assert are_neighbours("l1", q.dataset, q.neighbour, (0, 10), d)
        assert np.abs(q.dataset - q.neighbour).sum() <= 1 + 1e-9
    assert max(v for _, v in seen) >= max(v for _, v in scored) - 1e-9


def test_level_search_stops_at_its_budget_and_skips_other_relations():
    calls = []

    def f(p):
        calls.append(p)
        return float(p.dataset.sum())

    starts = [(p, f(p)) for p in structured_pairs("linf", (-10, 10), 3, both_orders=False)]
    calls.clear()
    seen = level_search(f, "linf", (-10, 10), 3, starts, max_evals=5, budget_left=lambda: True)
    assert len(seen) == len(calls) <= 5
    assert level_search(f, "linf", (-10, 10), 3, starts, max_evals=5, budget_left=lambda: False) == []
    assert level_search(f, "replace", (0, 1), 3, starts, max_evals=5, budget_left=lambda: True) == []


def test_exact_audit_finds_a_rounding_that_doubles_the_sensitivity():
    # round() goes half to even: −1.5 → −2 and −0.5 → 0, so two answers one apart move the
    # geometric mechanism's centre by 2 and its loss is 2ε; the integer levels of the patterns
    # never show it, a level half-way between them does
    import dpaudit
    from scipy import stats

    eps = 0.4
    spec = dpaudit.MechanismSpec.from_function(
        lambda d, rng: float(d.sum()), epsilon=eps, neighbours="linf", domain=(-3, 3), size=1,
        distribution=lambda d: stats.dlaplace(eps, loc=int(round(d.sum()))))
    r = dpaudit.exact_audit(spec, seed=1, examples=20)
    assert r.epsilon_lower_bound == pytest.approx(2 * eps, abs=1e-9)
    a, b = r.counterexample.dataset[0], r.counterexample.neighbour[0]
    assert abs(a - b) == 1 and a % 1 == 0.5 and round(a) - round(b) in (-2, 2)
