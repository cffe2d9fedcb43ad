"""Neighbour relations, structured patterns and refinement moves agree with each other
(dpaudit/neighbours/relations.py, patterns.py, dpaudit/search/refine.py)."""

import numpy as np
from hypothesis import given, settings, strategies as st

from dpaudit.neighbours.patterns import structured_pairs
from dpaudit.neighbours.relations import Pair, allowed_sizes, are_neighbours, check_pair
from dpaudit.neighbours.strategies import neighbouring_pairs
from dpaudit.search.refine import neighbourhood

RELATIONS = ("add-remove", "replace", "linf", "l1")
DOMAINS = st.sampled_from([(0.0, 1.0), (-10.0, 10.0), (0.0, 10.0), (-1.0, 0.5)])


@st.composite
def relation_pairs(draw):
    rel = draw(st.sampled_from(RELATIONS))
    dom = draw(DOMAINS)
    size = draw(st.integers(1, 6))
    lo, hi = allowed_sizes(rel, size)
    pair = draw(neighbouring_pairs(rel, dom, (lo, hi)))
    return rel, dom, size, pair


@given(relation_pairs())
@settings(max_examples=100)
def test_strategy_pairs_are_neighbours(case):
    rel, dom, size, p = case
    assert are_neighbours(rel, p.dataset, p.neighbour, dom, size)
    assert are_neighbours(rel, p.neighbour, p.dataset, dom, size)  # symmetric


@given(relation_pairs(), st.integers(0, 2**32 - 1))
@settings(max_examples=60)
def test_refinement_moves_stay_neighbours(case, seed):
    rel, dom, size, p = case
    start = Pair.of(p.dataset, p.neighbour, "start")
    for q in neighbourhood(rel, start, dom, size, np.random.default_rng(seed)):
        assert are_neighbours(rel, q.dataset, q.neighbour, dom, size), q
        assert q.key != start.key


@given(st.sampled_from(RELATIONS), DOMAINS, st.integers(1, 12))
@settings(max_examples=60)
def test_patterns_are_neighbours_for_any_domain_and_size(rel, dom, size):
    for p in structured_pairs(rel, dom, size):
        assert are_neighbours(rel, p.dataset, p.neighbour, dom, size), p


@given(st.sampled_from(RELATIONS), st.lists(st.floats(0, 1), max_size=4),
       st.lists(st.floats(0, 1), max_size=4))
def test_check_pair_raises_exactly_when_not_neighbours(rel, a, b):
    ok = are_neighbours(rel, a, b, (0, 1), 4) if (a or b) else False
    try:
        check_pair(rel, a, b, (0, 1), 4)
        raised = False
    except Exception:
        raised = True
    assert raised is not are_neighbours(rel, a, b, (0, 1), 4)
    del ok
