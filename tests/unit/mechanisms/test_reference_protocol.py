"""Every reference mechanism offers the one output-law protocol, ``dpaudit.laws.ReferenceMechanism``:
``law(x)``, ``log_prob(x, y)`` (input first, output second) and ``sample(x, rng, size)``, and
``log_prob(x, y)`` agrees with ``law(x).log_prob(y)`` (to 1e-12, relative)."""

import numpy as np
import pytest

from dpaudit.laws import ReferenceMechanism
from dpaudit.reference.duff import Duff
from dpaudit.reference.exponential import top_item_mechanism
from dpaudit.reference.geometric import Geometric
from dpaudit.reference.laplace import Laplace
from dpaudit.reference.prerounding import PreRounding
from dpaudit.reference.quantile import QuantileEM
from dpaudit.reference.sensitivity_preprocessing.personalised import PersonalisedExponential, PersonalisedLaplace
from dpaudit.reference.smooth_mechanisms import SmoothCauchyMedian, SmoothLaplaceMedian
from dpaudit.reference.staircase import Staircase

DATA = np.array([0.1, 0.4, 0.45, 0.7, 0.9])
CASES = [
    (Laplace(1.0), 2.0, np.array([-1.0, 2.0, 3.5])),
    (Geometric(1.0), 2.0, np.array([-1.0, 2.0, 2.5, 7.0])),
    (Staircase(1.0), 2.0, np.array([-1.0, 2.0, 2.3, 3.5])),
    (PreRounding(1.0), 4.0, np.array([-10.0, 0.0, 5.0, 10.0])),
    (top_item_mechanism(1.0, 4, "range"), np.array([0.0, 1.0, 1.0, 3.0]), [0, 1, 3, 7]),
    (QuantileEM(1.0, q=0.5, neighbours="replace"), DATA, np.array([0.05, 0.42, 0.95])),
    (Duff(1.0), DATA, np.array([0.05, 0.42, 0.95])),
    (SmoothCauchyMedian(1.0), DATA, np.array([-1.0, 0.45, 2.0])),
    (SmoothLaplaceMedian(1.0, 0.01), DATA, np.array([-1.0, 0.45, 2.0])),
    (PersonalisedLaplace((0.1, 0.2), (1.0, 0.5)), 0.3, np.array([-1.0, 0.3, 2.0])),
    (PersonalisedExponential((1.0, 1.0), (1.0, 0.5), (0, 1, 2)), [0.0, -1.0, -2.0], [0, 2, 5]),
]


@pytest.mark.parametrize("mech, x, ys", CASES, ids=[type(c[0]).__name__ for c in CASES])
def test_log_prob_is_the_law_at_x(mech, x, ys):
    assert isinstance(mech, ReferenceMechanism)
    want = np.asarray(mech.law(x).log_prob(ys), dtype=float)
    got = np.asarray(mech.log_prob(x, ys), dtype=float)
    assert got.shape == want.shape == (len(ys),)
    assert np.array_equal(np.isneginf(got), np.isneginf(want)) and np.isfinite(want).any()
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-12, atol=1e-12)
    draw = mech.sample(x, np.random.default_rng(3))
    assert np.isfinite(float(mech.log_prob(x, np.array([draw]))[0]))


def test_a_law_answers_log_prob_off_its_support():
    law = Geometric(1.0).law(0.0)
    assert law.log_prob(0.5) == -np.inf and law.log_prob(0) == pytest.approx(float(Geometric(1.0).log_prob(0.0, 0.0)))
    assert Staircase(1.0).law(0.0).log_prob(1e6) == -np.inf
