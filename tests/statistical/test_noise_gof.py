"""Goodness of fit of every Chen, Pal and Golubchik (2016) sampler against its exact law (docs/math.md#laplace, #geometric, #staircase, #pre-rounding).

Each test draws 10⁵ values from a fixed seed and applies one test at level α = 10⁻³: Kolmogorov–
Smirnov against the exact cdf for continuous noise, Pearson's χ² on the atoms (tails merged so that
every expected count is ≥ 5) for lattice noise. A correct sampler fails a given test with
probability at most α; no test retries. The last two tests are power controls: the same procedure
must reject a sampler with a wrong parameter.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.reference.geometric import Geometric
from dpaudit.reference.laplace import Laplace
from dpaudit.reference.prerounding import PreRounding
from dpaudit.reference.staircase import Staircase

ALPHA = 1e-3
N = 100_000
pytestmark = pytest.mark.statistical


def rng(seed):
    return np.random.default_rng(np.random.SeedSequence(seed))


def chi2_pvalue(draws, support, pmf, tail_lo, tail_hi):
    """χ² over the listed atoms plus the two tails (P(X < support[0]), P(X > support[-1])).

    Cells with expected count < 5 are pooled into one cell; if that pool is itself under-filled it
    is merged into the largest cell (merging cells keeps the test valid)."""
    n = len(draws)
    counts = np.array([np.sum(draws < support[0])] + [np.sum(draws == a) for a in support]
                      + [np.sum(draws > support[-1])], dtype=float)
    probs = np.r_[tail_lo, pmf, tail_hi]
    keep = probs * n >= 5
    counts, probs, pooled_c, pooled_p = counts[keep], probs[keep], counts[~keep].sum(), probs[~keep].sum()
    if pooled_p * n >= 5:
        counts, probs = np.r_[counts, pooled_c], np.r_[probs, pooled_p]
    else:
        big = int(np.argmax(probs))
        counts[big] += pooled_c
        probs[big] += pooled_p
    return stats.chisquare(counts, probs / probs.sum() * n).pvalue


@pytest.mark.parametrize("eps, delta", [(0.1, 1.0), (1.0, 1.0), (3.0, 2.5)])
def test_laplace_ks(eps, delta):
    m = Laplace(eps, delta)
    assert stats.kstest(m.noise(rng(11), N), m.cdf).pvalue > ALPHA


@pytest.mark.parametrize("eps, gamma", [(0.1, None), (1.0, None), (3.0, None), (1.0, 0.0), (1.0, 0.25), (1.0, 1.0)])
def test_staircase_ks(eps, gamma):
    m = Staircase(eps, 1.5, gamma)
    assert stats.kstest(m.noise(rng(12), N), m.cdf).pvalue > ALPHA


@pytest.mark.parametrize("eps, delta, step", [(0.1, 1.0, 1.0), (1.0, 1.0, 1.0), (3.0, 1.0, 1.0), (1.0, 2.0, 0.5)])
def test_geometric_chi2(eps, delta, step):
    m = Geometric(eps, delta, step)
    x = m.noise(rng(13), N)
    kmax = int(np.max(np.abs(x)) / step) + 1
    support = step * np.arange(-kmax, kmax + 1)
    p = chi2_pvalue(x, support, m.pmf(support), float(m.cdf(support[0] - step)), float(m.sf(support[-1])))
    assert p > ALPHA


@pytest.mark.parametrize("eps, q", [(0.3, -7.0), (1.0, 4.99), (3.0, 5.0)])
def test_prerounding_chi2(eps, q):
    h = PreRounding(eps)
    x = h.sample(q, rng(14), N)
    law = h.law(q, 1e-20)
    atoms = np.array(law.atoms)
    inside = (atoms >= x.min()) & (atoms <= x.max())
    pmf = np.exp(law.log_pmf)
    p = chi2_pvalue(x, atoms[inside], pmf[inside], pmf[atoms < x.min()].sum(), pmf[atoms > x.max()].sum())
    assert p > ALPHA


def test_specs_sample_their_declared_distribution():
    data = np.array([0.2, 0.9, 0.45])
    lap = Laplace(0.8).spec()
    law = lap.distribution(data)
    assert stats.kstest(lap.call_batch(data, rng(15), N), law.dist.cdf).pvalue > ALPHA
    sc = Staircase(0.8).spec()
    slaw = sc.distribution(data)
    cell_mass = np.diff(slaw.edges) * np.exp(slaw.log_density)
    cum = np.r_[0.0, np.cumsum(cell_mass)]
    cdf = lambda y: np.interp(y, slaw.edges, cum) + slaw.tail_mass / 2  # noqa: E731  (exact: linear per cell)
    assert stats.kstest(sc.call_batch(data, rng(16), N), cdf).pvalue > ALPHA
    geo = Geometric(0.8).spec()
    glaw = geo.distribution(data)
    x = np.asarray(geo.call_batch(data, rng(17), N))
    atoms = np.array(glaw.atoms)
    inside = (atoms >= x.min()) & (atoms <= x.max())
    pmf = np.exp(glaw.log_pmf)
    assert chi2_pvalue(x, atoms[inside], pmf[inside], pmf[atoms < x.min()].sum(), pmf[atoms > x.max()].sum()) > ALPHA


def test_power_ks_rejects_the_seeds_laplace_scale():
    """Chen, Pal and Golubchik (2016) eq (6) has no ε in the exponent: sampling with scale Δ instead of Δ/ε must be rejected."""
    m = Laplace(3.0)
    wrong = rng(18).laplace(0.0, 1.0, N)
    assert stats.kstest(wrong, m.cdf).pvalue < ALPHA


def test_power_chi2_rejects_a_geometric_with_the_wrong_ratio():
    """Ratio ρ instead of ρ^{d/Δ} (d = 0.5, Δ = 1): the quantised law must be rejected."""
    m = Geometric(1.0, 1.0, 0.5)
    wrong = 0.5 * Geometric(1.0).noise_steps(rng(19), N)
    kmax = int(np.max(np.abs(wrong)) / 0.5) + 1
    support = 0.5 * np.arange(-kmax, kmax + 1)
    p = chi2_pvalue(wrong, support, m.pmf(support), float(m.cdf(support[0] - 0.5)), float(m.sf(support[-1])))
    assert p < ALPHA
