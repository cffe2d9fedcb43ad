"""Neighbour relations as predicates (dpaudit/neighbours/relations.py)."""

import pytest

from dpaudit.errors import InvalidArgument
from dpaudit.neighbours.relations import Pair, allowed_sizes, are_neighbours, check_pair

DOM = (0.0, 1.0)


@pytest.mark.parametrize("rel, a, b, ok", [
    ("add-remove", [0.2, 0.5], [0.5], True),
    ("add-remove", [], [1.0], True),
    ("add-remove", [0.2, 0.5], [0.3], False),          # not a sub-multiset
    ("add-remove", [0.2, 0.2, 0.5], [0.2], False),     # two records apart
    ("add-remove", [0.2, 0.2], [0.2], True),           # duplicates
    ("replace", [0.1, 0.2, 0.3], [0.1, 0.9, 0.3], True),
    ("replace", [0.1, 0.2, 0.3], [0.3, 0.1, 0.9], True),  # multisets: order does not matter
    ("replace", [0.1, 0.2, 0.3], [0.9, 0.9, 0.3], False),
    ("linf", [0.0, 0.0, 0.0], [1.0, 1.0, 1.0], True),
    ("linf", [0.0, 0.0, 0.0], [1.0, 0.5, 0.0], True),
    ("l1", [0.0, 0.0, 0.0], [0.5, 0.5, 0.0], True),
    ("l1", [0.0, 0.0, 0.0], [0.5, 0.6, 0.0], False),
    ("linf", [0.0, 0.0, 0.0], [0.5, 1.5, 0.0], False),  # outside the domain
])
def test_are_neighbours(rel, a, b, ok):
    assert are_neighbours(rel, a, b, DOM, 3) is ok


def test_linf_distance_bound():
    assert not are_neighbours("linf", [-10.0, 0.0], [-8.5, 0.0], (-10, 10), 2)
    assert are_neighbours("linf", [-10.0, 0.0], [-9.0, 1.0], (-10, 10), 2)


def test_sizes():
    assert allowed_sizes("add-remove", 5) == (0, 5)
    assert allowed_sizes("replace", 5) == (5, 5)
    assert not are_neighbours("replace", [0.1], [0.2], DOM, 3)          # wrong size
    assert not are_neighbours("add-remove", [0.1] * 4, [0.1] * 5, DOM, 3)


def test_check_pair_says_why():
    with pytest.raises(InvalidArgument, match="is not a linf pair: a coordinate moves by 2 > 1"):
        check_pair("linf", [0.0], [2.0], (-10, 10), 1)
    p = check_pair("add-remove", [0.5], [], DOM, 3)
    assert p == Pair((0.5,), ()) and p.swapped() == Pair((), (0.5,))


def test_every_relation_is_one_registered_module():
    from dpaudit.claims import Neighbours
    from dpaudit.neighbours.registry import Relation, relation, relations

    assert {r.name for r in relations()} == set(Neighbours)
    for r in relations():
        assert isinstance(r, Relation)
        assert relation(r.name.value) is r
    with pytest.raises(InvalidArgument, match="neighbours must be one of"):
        relation("swap")


def test_the_bound_methods_are_objects_with_one_interface():
    from dpaudit.estimators.bounds import METHODS, Counts, method

    assert METHODS == ("marginal", "ratio", "paired")
    c = Counts(1000, 1000, 300, 100, 90)
    assert method("paired").usable(c) and not method("ratio").usable(c)
    b = method("marginal").validated(c, 0.05, (0.5, 0.5))
    assert b.method == "marginal" and 0.0 < b.epsilon_lb < 1.0986  # < ln(300/100)
