"""Every counterexample check_sensitivity returns is a genuine one, after shrinking and
simplification: a neighbouring pair under its relation (checked by the independent predicate
dpaudit.neighbours.relations.are_neighbours), inside the domain and the size range, whose gap,
recomputed here from f, exceeds the bound that applies to it.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpaudit
from dpaudit.neighbours.relations import are_neighbours
from dpaudit.results import Verdict

SEEDS = range(4)


def _sum(x):
    return float(np.sum(x))


def _squares(x):
    return float(np.sum(np.square(x)))


def _twice_abs(x):
    return 2.0 * float(np.sum(np.abs(x)))


CASES = {
    # relation: (f, bound, domain, sizes, extra keyword arguments)
    "add-remove": (_sum, 1.0, (-3.0, 3.0), (2, 8), {}),
    "replace": (_squares, 1.0, (-3.0, 3.0), (3, 8), {}),
    "linf": (_sum, 1.5, (-3.0, 3.0), (1, 8), {}),
    "l1": (_twice_abs, 1.5, (-3.0, 3.0), (1, 8), {}),
    "l1-counts": (lambda x: 3.0 * float(np.sum(x)), 2.0, (0.0, 20.0), (1, 8), {"integers": True}),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("seed", SEEDS)
def test_counterexamples_are_neighbouring_pairs_that_break_the_bound(name, seed):
    f, bound, domain, sizes, extra = CASES[name]
    relation = name.split("-counts")[0]
    r = dpaudit.check_sensitivity(f, bound, neighbours=relation, domain=domain, sizes=sizes,
                                  examples=500, seed=seed, **extra)
    assert r.verdict is Verdict.REFUTED
    c = r.counterexample
    a, b = np.array(c.dataset), np.array(c.neighbour)
    assert are_neighbours(relation, a, b, domain, max(a.size, b.size))
    assert all(sizes[0] <= len(x) <= sizes[1] for x in (a, b))
    assert abs(f(a) - f(b)) == pytest.approx(c.gap) and c.gap > bound
    assert c.records <= 3
    if extra.get("integers"):
        assert np.array_equal(a, np.round(a)) and np.array_equal(b, np.round(b))


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_individual_and_vector_record_counterexamples(seed):
    """Individual model: the pair is D, D ∪ {i} with records tied to identities; records in ℝ²."""
    w = np.array([1.0, 3.0, 1.0, 1.0, 2.0])

    def weighted(data, ids):
        return float(np.dot(w[ids], data)) if len(ids) else 0.0

    # 2,000 examples: at 500, seed 2 was not refuted in full parallel runs (never alone); the cause
    # (some state left by an earlier test in the same worker) is not yet found
    r = dpaudit.check_sensitivity(weighted, 3.0, individual=(1.0, 2.0, 1.0, 1.0, 2.0),
                                  neighbours="add-remove", domain=(0, 1), sizes=4, examples=2000, seed=seed)
    assert r.verdict is Verdict.REFUTED
    c = r.counterexample
    small, big = sorted((c.ids, c.neighbour_ids), key=len)
    assert c.individual == 1 and set(big) - set(small) == {1} and set(small) <= set(big)
    assert c.gap > 2.0 and c.records <= 3

    r = dpaudit.check_sensitivity(lambda x: float(np.sum(x)), 1.0, neighbours="add-remove",
                                  domain=(0, 1), sizes=(1, 6), dim=2, examples=500, seed=seed)
    assert r.verdict is Verdict.REFUTED
    c = r.counterexample
    a, b = np.array(c.dataset).reshape(-1, 2), np.array(c.neighbour).reshape(-1, 2)
    big, small = (a, b) if len(a) > len(b) else (b, a)
    assert len(big) == len(small) + 1 and len(small) >= 1
    assert any(np.array_equal(np.delete(big, k, axis=0), small) for k in range(len(big)))
    assert c.gap > 1.0 and c.records <= 3
