"""Invariants of the Chen, Pal and Golubchik (2016) noise laws (docs/math.md#laplace, #geometric, #staircase): symmetry, monotone cdfs, law = shifted
density, and samples that lie in the law's support. Hypothesis draws the parameters and the seed."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.reference.geometric import Geometric
from dpaudit.reference.laplace import Laplace
from dpaudit.reference.staircase import Staircase

EPS = st.floats(0.05, 6.0)
DELTA = st.floats(0.1, 10.0)
POINTS = st.lists(st.floats(-50, 50), min_size=1, max_size=20)


@settings(max_examples=60)
@given(eps=EPS, delta=DELTA, gamma=st.one_of(st.none(), st.floats(0.0, 1.0)), z=POINTS)
def test_continuous_noise_is_symmetric_with_monotone_cdf(eps, delta, gamma, z):
    z = np.sort(np.asarray(z))
    for m in (Laplace(eps, delta), Staircase(eps, delta, gamma)):
        c = m.cdf(z)
        assert np.all(np.diff(c) >= -1e-15) and np.all((c >= 0) & (c <= 1))
        np.testing.assert_allclose(m.cdf(-z), m.sf(z), rtol=1e-9, atol=1e-300)
        np.testing.assert_allclose(m.pdf(-z), m.pdf(z), rtol=1e-12)


@settings(max_examples=40)
@given(eps=st.floats(0.5, 6.0), delta=st.floats(0.1, 10.0), gamma=st.one_of(st.none(), st.floats(0.0, 1.0)),
       value=st.floats(-100, 100), z=POINTS, seed=st.integers(0, 2**32 - 1))
def test_staircase_law_is_the_shifted_density(eps, delta, gamma, value, z, seed):
    m = Staircase(eps, delta, gamma)
    law = m.law(value, 1e-30)
    y = value + np.asarray(z) * delta / 7.0 + 1e-9
    inside = (y > law.edges[0]) & (y < law.edges[-1])
    # away from the cell edges (rounding of value + z) the law and the density agree exactly
    rel = (y - value) / delta
    safe = inside & (np.abs(rel - np.round(rel)) > 1e-6) & (np.abs(np.abs(rel) % 1 - m.gamma) > 1e-6)
    np.testing.assert_allclose(law.log_prob(y[safe]), m.log_prob(value, y[safe]), rtol=1e-9)
    x = m.sample(value, np.random.default_rng(seed), 50)
    assert np.all((x >= law.edges[0]) & (x <= law.edges[-1]))


@settings(max_examples=40)
@given(eps=st.floats(0.3, 6.0), steps=st.integers(1, 5), step=st.sampled_from([0.25, 0.5, 1.0, 3.0]),
       m0=st.integers(-50, 50), seed=st.integers(0, 2**32 - 1))
def test_geometric_law_matches_pmf_and_sampler(eps, steps, step, m0, seed):
    g = Geometric(eps, steps * step, step)
    value = m0 * step
    law = g.law(value, 1e-40)
    atoms = np.asarray(law.atoms, dtype=float)
    np.testing.assert_allclose(law.log_pmf, g.log_prob(value, atoms), rtol=1e-9, atol=1e-9)
    assert abs(np.exp(law.log_pmf).sum() + law.tail_mass - 1) < 1e-12
    x = g.sample(value, np.random.default_rng(seed), 200)
    assert set(np.asarray(x).tolist()) <= set(law.atoms)
