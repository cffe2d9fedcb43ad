"""The pre-rounding heuristic of Chen, Pal and Golubchik (2016) §5.2.2 (docs/math.md#pre-rounding): cells, exact law, loss, privacy."""

import math

import numpy as np
import pytest

from dpaudit.claims import Domain
from dpaudit.errors import InvalidArgument
from dpaudit.estimators.exact import pair_loss
from dpaudit.reference.geometric import Geometric
from dpaudit.reference.prerounding import PreRounding


def test_rounding_cells_are_the_seeds():
    h = PreRounding(1.0)
    q = np.array([-10, -7, -5.000001, -5, 0, 4.999999, 5, 9.9, 10, 14, -30])
    np.testing.assert_array_equal(h.round(q), [-10, -10, -10, 0, 0, 0, 10, 10, 10, 10, -10])
    with pytest.raises(InvalidArgument, match="^q must be a finite number or an array of them"):
        h.round([math.nan])


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_expected_loss_against_a_direct_sum(eps):
    h = PreRounding(eps)
    g = Geometric(eps)
    k = np.arange(-2000, 2001)
    for q in (-9.0, -5.0, -1.2, 0.0, 3.7, 4.99, 5.0, 10.0):
        direct = float(np.sum(g.pmf(k) * np.abs(h.round(q) - q + 10 * k)))
        assert float(h.expected_loss(q)) == pytest.approx(direct, rel=1e-12)


def test_law_matches_sampler_and_worst_pair_loss_is_epsilon():
    h = PreRounding(0.8, sensitivity=10.0, domain=(-10, 10))
    law = h.law(4.0)
    draws = h.sample(4.0, np.random.default_rng(0), 1000)
    assert set(draws.tolist()) <= set(law.atoms)
    assert law.atoms[int(np.argmax(law.log_pmf))] == 0.0
    assert pair_loss(h.law(4.99), h.law(5.0)).epsilon == pytest.approx(0.8, abs=1e-9)
    assert pair_loss(h.law(-5.0), h.law(4.99)).epsilon == 0.0
    assert pair_loss(h.law(-10.0), h.law(10.0)).epsilon == pytest.approx(1.6, abs=1e-9)  # 2Δ apart
    atoms = np.asarray(law.atoms)
    np.testing.assert_allclose(h.log_prob(4.0, atoms), law.log_pmf, rtol=1e-12)
    np.testing.assert_allclose(h.cdf(4.0, atoms), np.cumsum(np.exp(law.log_pmf)) + law.tail_mass / 2, rtol=1e-9)
    assert np.exp(h.log_prob(4.0, 5.0)) == 0.0


def test_spec_claims_epsilon_and_its_worst_pair_reaches_it():
    h = PreRounding(1.2)
    spec = h.spec(size=4)
    assert spec.domain == Domain(0.0, 10.0) and spec.epsilon == 1.2
    d = np.array([1.0, 2.0, 1.99])                              # sum 4.99 → R = 0
    assert pair_loss(spec.distribution(d), spec.distribution(np.r_[d, 0.01])).epsilon == pytest.approx(1.2, abs=1e-9)
    out = spec.call_batch(d, np.random.default_rng(1), 6)
    assert len(out) == 6 and np.all(np.mod(out, 10.0) == 0)
