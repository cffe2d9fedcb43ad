"""Privacy of the smooth-sensitivity medians on searched neighbouring pairs (docs/math.md#ss-mechanisms).

Given the data the output is T(S) + (SS_β(S)/α)·Z, so each pair is two location–scale laws:

* Cauchy, pure ε: the exact loss sup_y |ln p − ln q| (``pair_loss``) must be ≤ ε. It is checked
  against an independent dense-grid maximum first, since heavy tails defeat a plain grid.
* Laplace, (ε, δ): the hockey-stick divergence ∫(p − e^ε q)⁺ in both directions must be ≤ δ.
  It is integrated here on a dense grid (trapezoid rule over ±60 scales, where the neglected tail
  mass is below e^{-60}), the corrected β and the seed's literal β (E1) both.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings, target
from hypothesis import strategies as st

from dpaudit.estimators.exact import pair_loss
from dpaudit.neighbours.strategies import neighbouring_pairs
from dpaudit.reference.smooth_mechanisms import SmoothCauchyMedian, SmoothLaplaceMedian


def test_pair_loss_of_cauchy_laws_matches_a_dense_grid():
    m = SmoothCauchyMedian(1.0, 0.0, 1.0)
    a, b = np.array([0.0, 0.2, 1.0]), np.array([0.0, 0.9, 1.0])
    P, Q = m.law(a), m.law(b)
    y = np.linspace(-20, 20, 800_001)
    want = float(np.max(np.abs(P.dist.logpdf(y) - Q.dist.logpdf(y))))
    assert pair_loss(P, Q).epsilon == pytest.approx(want, rel=1e-4)


CAUCHY = {"ε/6, ε/6 (NRS STOC)": (None, None), "ε/8, ε/2 (NRS full)": (1 / 8, 1 / 2)}


@pytest.mark.slow
@settings(max_examples=60)
@given(st.sampled_from(["replace", "add-remove"]), st.data(), st.sampled_from(sorted(CAUCHY)),
       st.sampled_from([0.5, 2.0]))
def test_cauchy_loss_never_exceeds_epsilon(rel, data, params, eps):
    pair = data.draw(neighbouring_pairs(rel, (0.0, 1.0), (1, 9)))
    a, b = CAUCHY[params]
    m = SmoothCauchyMedian(eps, 0.0, 1.0, rel, None if a is None else a * eps, None if b is None else b * eps)
    loss = pair_loss(m.law(pair.dataset), m.law(pair.neighbour)).epsilon
    target(loss / eps)
    assert loss <= eps * (1 + 1e-6)


def laplace_delta(P, Q, eps):
    """∫(p − e^ε q)⁺ by the trapezoid rule on a dense grid around both centres."""
    (t1, b1), (t2, b2) = ((L.dist.mean(), L.dist.std() / math.sqrt(2)) for L in (P, Q))
    w = 60 * max(b1, b2)
    y = np.unique(np.r_[np.linspace(min(t1, t2) - w, max(t1, t2) + w, 100_001), t1, t2])
    f = np.maximum(P.dist.pdf(y) - math.exp(eps) * Q.dist.pdf(y), 0.0)
    return float(np.trapz(f, y)) if hasattr(np, "trapz") else float(np.trapezoid(f, y))


@pytest.mark.slow
@settings(max_examples=30)
@given(st.sampled_from(["replace", "add-remove"]), st.data(), st.sampled_from([(1.0, 1e-3), (2.0, 0.9), (0.5, 0.1)]),
       st.sampled_from(["corrected", "literal"]))
def test_laplace_hockey_stick_within_delta(rel, data, eps_delta, rule):
    pair = data.draw(neighbouring_pairs(rel, (0.0, 1.0), (1, 9)))
    eps, delta = eps_delta
    m = SmoothLaplaceMedian(eps, delta, 0.0, 1.0, rel, rule)
    P, Q = m.law(pair.dataset), m.law(pair.neighbour)
    worst = max(laplace_delta(P, Q, eps), laplace_delta(Q, P, eps))
    target(worst / delta)
    assert worst <= delta


@pytest.mark.slow
def test_laplace_noise_four_times_too_small_is_caught():
    """Negative control: the same pairs with the noise scale divided by 4 (α = 2ε) exceed δ."""
    from scipy import stats

    from dpaudit.laws import ContinuousLaw
    from dpaudit.reference.claims.exponential import order_statistic_pairs

    m = SmoothLaplaceMedian(1.0, 1e-3, 0.0, 1.0)

    def shrunk(L):
        return ContinuousLaw(stats.laplace(L.dist.mean(), L.dist.std() / math.sqrt(2) / 4))

    worst_ok = worst_bad = 0.0
    for d, d2 in order_statistic_pairs(3, 0.0, 1.0, "replace")[::4]:
        P, Q = m.law(d), m.law(d2)
        worst_ok = max(worst_ok, laplace_delta(P, Q, 1.0), laplace_delta(Q, P, 1.0))
        worst_bad = max(worst_bad, laplace_delta(shrunk(P), shrunk(Q), 1.0), laplace_delta(shrunk(Q), shrunk(P), 1.0))
    assert worst_ok <= 1e-3 < worst_bad
