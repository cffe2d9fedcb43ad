"""Exact privacy of the Chen, Pal and Golubchik (2016) mechanisms over hypothesis-searched neighbouring pairs (docs/math.md#oblivious-noise).

For each canonical spec (records in [0, Δ], add-remove), the exact loss sup|ln p_D − ln p_D'| of
``spec.distribution`` (dpaudit.estimators.exact.pair_loss) never exceeds ε, and the worst pair
(adding a record at the domain end Δ) attains ε to 1e-9.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.estimators.exact import pair_loss
from dpaudit.reference.geometric import Geometric
from dpaudit.reference.laplace import Laplace
from dpaudit.reference.prerounding import PreRounding
from dpaudit.reference.staircase import Staircase

EPS = st.floats(0.1, 4.0)
DELTAS = st.sampled_from([0.5, 1.0, 2.5])


def mechanisms(draw, kind, eps, delta):
    if kind == "laplace":
        return Laplace(eps, delta)
    if kind == "staircase":
        return Staircase(eps, delta, draw(st.one_of(st.none(), st.floats(0.0, 1.0))))
    if kind == "geometric":
        return Geometric(eps, delta, delta / draw(st.sampled_from([1, 2, 4])))
    return PreRounding(eps, delta, (-delta, delta))


@st.composite
def pairs(draw, kind):
    eps, delta = draw(EPS), draw(DELTAS)
    m = mechanisms(draw, kind, eps, delta)
    data = np.array(draw(st.lists(st.floats(0.0, delta), max_size=6)), dtype=float)
    if data.size and draw(st.booleans()):
        other = np.delete(data, draw(st.integers(0, data.size - 1)))
    else:
        other = np.r_[data, draw(st.floats(0.0, delta))]
    return m, data, other


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["laplace", "staircase", "geometric", "prerounding"])
@settings(max_examples=100)
@given(data=st.data())
def test_exact_loss_never_exceeds_epsilon(kind, data):
    m, d, d2 = data.draw(pairs(kind))
    spec = m.spec()
    loss = pair_loss(spec.distribution(d), spec.distribution(d2)).epsilon
    assert loss <= m.epsilon + 1e-9


@pytest.mark.parametrize("kind", ["laplace", "staircase", "geometric"])
@settings(max_examples=30)
@given(eps=EPS, delta=DELTAS, data=st.data())
def test_worst_pair_attains_epsilon(kind, eps, delta, data):
    m = mechanisms(data.draw, kind, eps, delta)
    d = np.array(data.draw(st.lists(st.floats(0.0, delta), max_size=5)), dtype=float)
    if kind == "geometric":       # records on the d-grid, so adding Δ moves the sum by exactly Δ
        d = np.round(d / m.step) * m.step
    spec = m.spec()
    loss = pair_loss(spec.distribution(d), spec.distribution(np.r_[d, delta])).epsilon
    assert abs(loss - eps) <= 1e-9


@settings(max_examples=30)
@given(eps=EPS, below=st.floats(0.0, 0.4999), above=st.floats(0.5, 1.0))
def test_prerounding_worst_pair_attains_epsilon(eps, below, above):
    """A sum just below Δ/2 and one at or above it round to different cells: loss ε."""
    spec = PreRounding(eps).spec()
    loss = pair_loss(spec.distribution(np.array([10 * below])),
                     spec.distribution(np.array([10 * below, 10 * (above - below)]))).epsilon
    assert abs(loss - eps) <= 1e-9
