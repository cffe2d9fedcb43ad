"""Two-sided and quantised geometric (docs/math.md#geometric): pmf against scipy's dlaplace, cdf, law, spec."""

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.claims import Domain, PureDP
from dpaudit.errors import InvalidArgument
from dpaudit.estimators.exact import pair_loss
from dpaudit.laws import DiscreteLaw
from dpaudit.reference.geometric import Geometric


@pytest.mark.parametrize("eps", [0.05, 0.7, 5.0])
def test_pmf_is_scipy_dlaplace(eps):
    # scipy.stats.dlaplace(a): P(K = k) = tanh(a/2) e^{−a|k|} = ((1−r)/(1+r)) r^{|k|} with r = e^{−a}.
    m = Geometric(eps)
    k = np.arange(-200, 201)
    np.testing.assert_allclose(m.pmf(k), stats.dlaplace.pmf(k, eps), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(m.cdf(k), stats.dlaplace.cdf(k, eps), rtol=1e-10, atol=1e-15)
    # In the tails scipy loses digits (1 − cdf); sum its pmf there instead: P(K ≤ −t) = P(K ≥ t).
    t = np.arange(0, 60)
    far = np.arange(0, 20_000)
    tail = np.array([stats.dlaplace.pmf(far + i, eps).sum() for i in t])
    np.testing.assert_allclose(m.cdf(-t), tail, rtol=1e-9)
    np.testing.assert_allclose(m.sf(t - 1), tail, rtol=1e-9)
    assert m.expected_abs() == pytest.approx(2 * m.rho / (1 - m.rho ** 2), rel=1e-14)   # Chen, Pal and Golubchik (2016) eq (13)


def test_quantised_pmf_cdf_and_grid():
    m = Geometric(1.2, sensitivity=2.0, step=0.5)          # s = 4 steps, r = e^{−0.3}
    assert m.steps_per_sensitivity == 4 and m.ratio == pytest.approx(math.exp(-0.3))
    x = 0.5 * np.arange(-40, 41)
    p = m.pmf(x)
    assert p.sum() == pytest.approx(1 - 2 * m.ratio ** 41 / (1 + m.ratio), rel=1e-12)
    np.testing.assert_allclose(m.cdf(x), np.cumsum(p) + m.ratio ** 41 / (1 + m.ratio), rtol=1e-10)
    assert m.pmf(0.25) == 0.0 and m.cdf(0.25) == pytest.approx(float(m.cdf(0.0)))
    assert m.cdf(-0.25) == pytest.approx(float(m.cdf(-0.5)))
    r = m.ratio
    assert m.expected_abs() == pytest.approx(2 * 0.5 * r / (1 - r * r))


@pytest.mark.parametrize("kw", [{"sensitivity": 1.0, "step": 0.3}, {"sensitivity": 1.0, "step": 2.0}])
def test_step_must_divide_the_sensitivity(kw):
    with pytest.raises(InvalidArgument, match="^sensitivity / step must be a positive integer"):
        Geometric(1.0, **kw)


def test_sampler_types_and_grid():
    rng = np.random.default_rng(3)
    k = Geometric(0.4).sample(5, rng, 1000)
    assert k.dtype == np.int64 and isinstance(Geometric(0.4).sample(5, rng), int)
    q = Geometric(0.4, 1.5, 0.5).sample(1.0, rng, 1000)
    assert q.dtype == float and np.allclose(q / 0.5, np.rint(q / 0.5))
    with pytest.raises(InvalidArgument, match="^value must be on the grid 0.5"):
        Geometric(0.4, 1.5, 0.5).sample(0.2, rng, 3)


def test_law_lists_atoms_in_log_space_and_records_the_tail():
    m = Geometric(2.0, 3.0, 1.0)
    law = m.law(4)
    assert isinstance(law, DiscreteLaw) and all(type(a) is int for a in law.atoms[:3])
    kmax = (len(law.atoms) - 1) // 2
    assert law.atoms[0] == 4 - kmax and law.atoms[-1] == 4 + kmax
    assert np.isfinite(law.log_pmf).all()                       # far atoms are not underflowed
    assert 0 < law.tail_mass <= 1e-300 and np.exp(law.log_pmf).sum() == pytest.approx(1.0)
    q = Geometric(1.0, 1.0, 0.25)
    draws = set(q.sample(0.5, np.random.default_rng(0), 200).tolist())
    assert draws <= set(q.law(0.5, 1e-12).atoms)                # same float arithmetic
    with pytest.raises(InvalidArgument, match="pass a larger tail"):
        Geometric(1e-5).law(0)


def test_spec_is_the_rounded_count_and_its_worst_pair_has_loss_epsilon():
    m = Geometric(0.9)
    spec = m.spec(size=5)
    assert spec.claim == PureDP(0.9) and spec.domain == Domain(0.0, 1.0)
    d = np.array([0.2, 0.6, 0.9])                             # count of records >= ½: 2
    law = spec.distribution(d)
    assert law.atoms[int(np.argmax(law.log_pmf))] == 2
    assert all(isinstance(v, int) for v in spec.call_batch(d, np.random.default_rng(0), 4).tolist())
    loss = pair_loss(law, spec.distribution(np.r_[d, 1.0])).epsilon
    assert loss == pytest.approx(0.9, abs=1e-9)
    assert pair_loss(law, spec.distribution(np.r_[d, 0.1])).epsilon == 0.0
