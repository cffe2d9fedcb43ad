"""Properties of the dataset and neighbouring-pair strategies (dpaudit/neighbours/strategies.py).

Every pair drawn must be a neighbouring pair under its relation (docs/math.md#neighbour-relations), inside the domain and
the size range; the strategies must also reach the corner cases they promise (domain ends,
duplicates, tiny and large sizes, float-limit values, every linf pattern).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.claims import Domain, Neighbours
from dpaudit.errors import InvalidArgument
from dpaudit.neighbours.strategies import (
    NeighbourPair,
    SizeRange,
    datasets,
    elements,
    neighbouring_pairs,
    size_range,
    special_values,
)

DOMAINS = [Domain(0.0, 1.0), Domain(-10.0, 10.0), Domain(-1.7e308, 1.7e308), Domain(2.5, 3.0)]


def _multiset_diff(a: np.ndarray, b: np.ndarray) -> int:
    """|A Δ B| for multisets of records (rows compared exactly)."""
    ra = sorted(map(tuple, np.atleast_2d(a.reshape(len(a), -1)))) if len(a) else []
    rb = sorted(map(tuple, np.atleast_2d(b.reshape(len(b), -1)))) if len(b) else []
    from collections import Counter

    ca, cb = Counter(ra), Counter(rb)
    return sum(((ca - cb) + (cb - ca)).values())


def _is_neighbour(pair: NeighbourPair, d: Domain, r: SizeRange) -> bool:
    x, y = pair.dataset, pair.neighbour
    inside = d.contains(x) and d.contains(y) and len(x) in r and len(y) in r
    if pair.relation is Neighbours.ADD_REMOVE:
        big, small = (x, y) if len(x) > len(y) else (y, x)
        ok = len(big) == len(small) + 1 and np.array_equal(np.delete(big, pair.index, axis=0), small)
        return inside and ok and _multiset_diff(x, y) == 1
    if pair.relation is Neighbours.REPLACE:
        same = np.delete(x, pair.index, axis=0), np.delete(y, pair.index, axis=0)
        return inside and x.shape == y.shape and np.array_equal(*same)
    diff = np.abs(x.reshape(-1) - y.reshape(-1))
    if pair.relation is Neighbours.LINF:
        return inside and x.shape == y.shape and bool(np.all(diff <= 1.0))
    return inside and x.shape == y.shape and float(diff.sum()) <= 1.0 + 1e-12


@pytest.mark.slow
@pytest.mark.parametrize("relation", list(Neighbours))
@pytest.mark.parametrize("domain", DOMAINS, ids=str)
def test_pairs_are_neighbours(relation, domain):
    r = size_range((0, 12))

    @settings(max_examples=100)
    @given(neighbouring_pairs(relation, domain, r))
    def check(pair):
        assert pair.relation is relation
        assert pair.dataset.dtype == float and pair.neighbour.dtype == float
        assert _is_neighbour(pair, domain, r), pair

    check()


@pytest.mark.parametrize("relation", list(Neighbours))
def test_pairs_with_vector_records_and_integers(relation):
    d, r = Domain(-3.0, 3.0), size_range((1, 6))

    @settings(max_examples=80)
    @given(neighbouring_pairs(relation, d, r, integers=True, dim=2))
    def check(pair):
        assert pair.dataset.ndim == 2 and pair.dataset.shape[1] == 2
        assert np.array_equal(pair.dataset, np.round(pair.dataset))
        assert np.array_equal(pair.neighbour, np.round(pair.neighbour))
        assert _is_neighbour(pair, d, r), pair
        if relation is Neighbours.L1:  # integer counts move by exactly one unit in total
            assert float(np.abs(pair.dataset - pair.neighbour).sum()) in (0.0, 1.0)

    check()


def test_individual_model_pairs():
    """Cummings and Durfee (2020)'s i-neighbours: D and D ∪ {i}, records fixed per identity, identity order kept."""
    d, r, n_ind = Domain(0.0, 5.0), size_range((0, 7)), 9

    @settings(max_examples=150)
    @given(neighbouring_pairs("add-remove", d, r, individuals=n_ind))
    def check(pair):
        i = pair.individual
        assert 0 <= i < n_ind
        small_ids, big_ids = sorted((pair.dataset_ids, pair.neighbour_ids), key=len)
        assert i not in small_ids and np.array_equal(np.sort(np.append(small_ids, i)), big_ids)
        assert np.all(np.diff(big_ids) > 0)
        assert int(big_ids[pair.index]) == i
        assert _is_neighbour(pair, d, r)
        # a record belongs to its identity: the same id carries the same value in both datasets
        small = pair.dataset if len(pair.dataset) < len(pair.neighbour) else pair.neighbour
        big = pair.neighbour if small is pair.dataset else pair.dataset
        assert np.array_equal(np.delete(big, pair.index), small)

    check()


@pytest.mark.slow
def test_corner_cases_are_reached():
    """Within a modest budget the strategy produces domain ends, duplicates, the smallest and the
    largest size, values at the float limits, and sizes 0 and N."""
    d = Domain(-1.7e308, 1.7e308)
    seen = {"empty": False, "largest": False, "lo": False, "hi": False, "dup": False, "huge": False,
            "subnormal": False}

    @settings(max_examples=400)
    @given(datasets(d, 40))
    def check(x):
        seen["empty"] |= len(x) == 0
        seen["largest"] |= len(x) == 40
        seen["lo"] |= bool(np.any(x == d.lo))
        seen["hi"] |= bool(np.any(x == d.hi))
        seen["dup"] |= len(x) > 1 and len(np.unique(x)) < len(x)
        seen["huge"] |= bool(np.any(np.abs(x) > 1e300))
        seen["subnormal"] |= bool(np.any((x != 0) & (np.abs(x) < 1e-307)))

    check()
    assert all(seen.values()), seen


def test_every_linf_pattern_moves_by_at_most_one():
    d = Domain(-10.0, 10.0)
    maxima = []

    @settings(max_examples=200)
    @given(neighbouring_pairs("linf", d, (1, 10)))
    def check(pair):
        maxima.append(float(np.max(np.abs(pair.dataset - pair.neighbour))))

    check()
    assert max(maxima) <= 1.0 and maxima.count(1.0) > 20


def test_special_values_and_elements():
    assert special_values((0.0, 1.0))[:3] == (0.0, 1.0, 0.5)
    assert 5e-324 in special_values((-1.0, 1.0))
    assert special_values((0.5, 3.5), integers=True) == (1.0, 3.0, 2.0)

    @settings(max_examples=100)
    @given(elements((2.0, 3.0)))
    def check(v):
        assert 2.0 <= v <= 3.0

    check()


def test_size_range_parsing_and_errors():
    assert size_range(5) == SizeRange(0, 5)
    assert size_range((2, 9)) == SizeRange(2, 9)
    assert size_range(range(1, 4)) == SizeRange(1, 3)
    assert 3 in size_range((2, 9)) and 10 not in size_range((2, 9))
    for bad in (-1, (3, 2), "x", (1.5, 2), True):
        with pytest.raises(InvalidArgument, match="sizes must be"):
            size_range(bad)
    with pytest.raises(InvalidArgument, match="sizes must be"):
        neighbouring_pairs("add-remove", (0, 1), (4, 4))
    with pytest.raises(InvalidArgument, match="neighbours must be"):
        neighbouring_pairs("replace", (0, 1), 4, individuals=5)
    with pytest.raises(InvalidArgument, match="domain must be"):
        datasets((0.2, 0.8), 3, integers=True)
    with pytest.raises(InvalidArgument, match="dim must be"):
        datasets((0, 1), 3, dim=0)


@given(st.data())
@settings(max_examples=30)
def test_arrays_are_fresh_copies(data):
    pair = data.draw(neighbouring_pairs("replace", (0, 1), (1, 5)))
    before = pair.neighbour.copy()
    pair.dataset[:] = -1.0
    assert np.array_equal(pair.neighbour, before)
