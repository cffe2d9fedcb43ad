"""Structured candidate pairs (dpaudit/neighbours/patterns.py)."""

import pytest

from dpaudit.neighbours.patterns import structured_pairs
from dpaudit.neighbours.relations import are_neighbours


def _labels(pairs):
    return {p.label for p in pairs}


def test_linf_has_the_statdp_patterns():
    ps = structured_pairs("linf", (-10, 10), 10)
    labels = _labels(ps)
    for name in ("one above", "one below", "one above, rest below", "one below, rest above",
                 "half up, half down", "all up", "all down", "X shape", "last above, rest below"):
        assert name in labels and name + " (swapped)" in labels
    x = next(p for p in ps if p.label == "X shape")
    assert x.key == ((1.0,) * 5 + (0.0,) * 5, (0.0,) * 5 + (1.0,) * 5)


def test_add_remove_has_empty_single_and_largest_datasets():
    ps = structured_pairs("add-remove", (0, 1), 6)
    sizes = {len(p.dataset) for p in ps} | {len(p.neighbour) for p in ps}
    assert {0, 1, 5, 6} <= sizes
    labels = " | ".join(_labels(ps))
    for fragment in ("empty vs one record at lo", "all hi (n=6)", "cluster around the median",
                     "duplicates", "5 lo, 1 hi"):
        assert fragment in labels
    # every split of the end records, as duplicates and as tight clusters (rank-based mechanisms
    # are worst at the split j ≈ qn of their target rank)
    for j in range(1, 6):
        assert f"{j} lo, {6 - j} hi (n=6)" in labels
        assert f"clusters of {j} near lo and {6 - j} near hi (n=6)" in labels


def test_splits_are_spread_over_large_sizes():
    labels = " | ".join(_labels(structured_pairs("replace", (0, 1), 100)))
    for j in (1, 99):
        assert f"{j} lo, {100 - j} hi" in labels


@pytest.mark.parametrize("rel, dom, n", [("linf", (-10, 10), 10), ("linf", (0, 0.5), 3),
                                         ("l1", (0, 10), 5), ("add-remove", (0, 1), 10),
                                         ("replace", (-1, 1), 4), ("add-remove", (0, 1), 1),
                                         ("linf", (-10, 10), 1)])
def test_every_pattern_is_a_valid_distinct_pair(rel, dom, n):
    ps = structured_pairs(rel, dom, n)
    assert ps
    assert len({p.key for p in ps}) == len(ps)
    for p in ps:
        assert p.key[0] != p.key[1]
        assert are_neighbours(rel, p.dataset, p.neighbour, dom, n), p


def test_one_order_only():
    both = structured_pairs("linf", (-10, 10), 4)
    one = structured_pairs("linf", (-10, 10), 4, both_orders=False)
    assert len(one) * 2 == len(both)
    keys = {p.key for p in one}
    assert not any((p.key[1], p.key[0]) in keys for p in one)
