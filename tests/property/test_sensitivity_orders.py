"""Record order as a draw of the sensitivity search (:mod:`dpaudit.sensitivity.orders`).

A dataset is a multiset, so a sensitivity claim covers every order of its records: a permuted
pair must still be a neighbouring pair of the same relation, with ``index`` following the changed
(or extra) record.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpaudit.neighbours.relations import are_neighbours
from dpaudit.neighbours.strategies import neighbouring_pairs
from dpaudit.sensitivity.orders import ORDERS, order_of, permuted

DOMAIN = (-100.0, 100.0)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(data=st.data(), relation=st.sampled_from(["replace", "linf", "l1", "add-remove"]))
def test_a_permuted_pair_is_a_neighbouring_pair_with_its_index_moved(data, relation):
    pair = data.draw(neighbouring_pairs(relation, DOMAIN, (1, 6)))
    n = max(len(pair.dataset), len(pair.neighbour))
    if relation == "add-remove" and pair.index is None:
        return
    order = np.asarray(data.draw(st.permutations(range(n))), dtype=np.intp)
    q = permuted(pair, order)
    assert are_neighbours(relation, q.dataset, q.neighbour, DOMAIN, n)
    big, qbig = ((pair.dataset, q.dataset) if len(pair.dataset) >= len(pair.neighbour)
                 else (pair.neighbour, q.neighbour))
    np.testing.assert_array_equal(qbig, big[order])  # the same records, in the drawn order
    if pair.index is not None:
        np.testing.assert_array_equal(qbig[q.index], big[pair.index])  # the record that differs
        if len(pair.dataset) == len(pair.neighbour):
            changed = np.flatnonzero(np.atleast_2d((q.dataset != q.neighbour).T).any(axis=0))
            assert set(changed.tolist()) <= {q.index}


def test_sorted_orders_put_the_records_in_order_of_their_sums():
    x = np.array([[3.0, 0.0], [-1.0, -1.0], [0.5, 0.5]])
    asc, desc = order_of("ascending", x), order_of("descending", x)
    assert order_of("drawn", x) is None and ORDERS[0] == "drawn"
    assert asc.tolist() == [1, 2, 0] and desc.tolist() == [0, 2, 1]
