"""The ground truth of the structured suite: its integrals against closed forms, and the
mechanisms' samples against the laws the truth integrates (fixed seeds, stated tolerances)."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpaudit.reference.analysis import structured_truth as st
from dpaudit.reference.controls import structured as sm

A, B, T = 20.0, 40.0, 1.0  # Alg 1, c = 1, ε = 0.1


@pytest.mark.parametrize("level", [-10.0, -3.0, 1.0, 4.5, 10.0])
def test_one_query_above_matches_the_sum_of_two_laplaces(level):
    # P(q + ν ≥ T + ρ) = P(ν − ρ ≥ T − q); closed form for z ≥ 0, its complement by symmetry
    z = T - level
    closed = st.laplace_sum_sf(z, A, B) if z >= 0 else 1 - st.laplace_sum_sf(-z, A, B)
    assert st.pattern_prob([], [level], A, B, T) == pytest.approx(closed, rel=1e-9)
    assert st.pattern_prob([level], [], A, B, T) == pytest.approx(1 - closed, rel=1e-9)


def test_patterns_of_three_queries_sum_to_one():
    q = [-4.0, 2.0, 7.0]
    total = 0.0
    for bits in range(8):
        top = [q[i] for i in range(3) if bits >> i & 1]
        bot = [q[i] for i in range(3) if not bits >> i & 1]
        total += st.pattern_prob(bot, top, A, B, T)
    assert total == pytest.approx(1.0, abs=1e-9)


@pytest.mark.slow
def test_alg1_c1_loss_is_below_its_epsilon_and_close_to_it():
    r = st.pattern_loss(9, 1, A, B, T, grid=3)
    assert 0.09 < r["loss"] <= 0.1 + 1e-9  # ε-DP (Lyu et al. Thm 2); tight within 10% on the box
    assert r["bot"][0] == pytest.approx(9.0) and r["top"][0] == pytest.approx(-9.0)


def test_alg3_value_density_ratio_is_n_over_b_below_every_level():
    # output (⊥ ×m, value u): f_b(u − y)·∫_{ρ ≤ u − T} f_a(ρ) Π F_b(ρ + T − x) dρ; q' = (x + 1, y + 1)
    a, b, m, x, y, u = 20.0, 20.0, 4, -10.0, -8.0, -12.5

    def dens(xl, yl):
        f = lambda r: stats.laplace.pdf(r, scale=a) * stats.laplace.cdf(r + T - xl, scale=b) ** m  # noqa: E731
        return stats.laplace.pdf(u - yl, scale=b) * integrate.quad(f, -np.inf, u - T, epsrel=1e-12)[0]

    ratio = math.log(dens(x, y)) - math.log(dens(x + 1, y + 1))
    assert ratio == pytest.approx(st.alg3_epsilon(m + 1, b), rel=1e-8)


@pytest.mark.slow
def test_gap_density_integrates_to_one():
    q, s = [0.0, 3.0, -2.0], 5.0
    total = sum(integrate.quad(lambda g: st.gap_density(i, g, q, s), 0, np.inf, limit=200)[0]
                for i in range(3))
    assert total == pytest.approx(1.0, abs=1e-7)


@pytest.mark.parametrize("eps", [0.0, 0.7, 1.5])
def test_gaussian_and_laplace_pair_profiles_match_quadrature(eps):
    sig = 1.3
    f = lambda y: max(stats.norm.pdf(y, 0, sig) - math.exp(eps) * stats.norm.pdf(y, 1, sig), 0.0)  # noqa: E731
    assert st.gaussian_delta(eps, sig) == pytest.approx(integrate.quad(f, -40, 0.5 - eps * sig ** 2, limit=400)[0],
                                                        abs=1e-10)
    p, q = stats.laplace(0.2, 0.4), stats.laplace(0.6, 0.7)
    g = lambda y: max(p.pdf(y) - math.exp(eps) * q.pdf(y), 0.0)  # noqa: E731
    exact = integrate.quad(g, -60, 60, points=[0.2, 0.6], limit=800)[0]
    assert st.laplace_pair_delta(eps, 0.2, 0.4, 0.6, 0.7) == pytest.approx(exact, abs=1e-9)


def test_gaussian_sigma_meets_its_own_delta_only():
    sig = sm.gaussian_sigma(sm.GAUSS_EPS, sm.GAUSS_WRONG_DELTA)
    assert st.gaussian_delta(sm.GAUSS_EPS, sig) == pytest.approx(sm.GAUSS_WRONG_DELTA, rel=1e-9)
    assert st.gaussian_epsilon(sm.GAUSS_DELTA, sig) > sm.GAUSS_EPS


@pytest.mark.statistical
def test_first_index_frequencies_match_the_integrated_law():
    # the mechanism as written against the law the truth integrates; 4e5 draws, each cell within
    # 5 standard errors (α < 1e-5 per cell), seed fixed
    q = np.array([9.0, -3.0, 5.0, 0.0, 10.0, -10.0, 2.0, 2.0, 7.0, -1.0])
    out = sm.svt1_first_index(q, np.random.default_rng(20170), size=400_000)
    n = len(out)
    a, b = sm._alg1_scales(1)
    for k in (0, 3, 9, None):
        p = (st.pattern_prob(q, [], a, b, sm.T) if k is None
             else st.pattern_prob(q[:k], [q[k]], a, b, sm.T))
        hits = sum(1 for o in out if o == k)
        assert abs(hits / n - p) < 5 * math.sqrt(p * (1 - p) / n), (k, hits / n, p)


def test_gap_mechanism_matches_its_density():
    q, s = np.array([0.0, 3.0, -2.0, 1.0, 0.5]), 20.0
    out = sm.rnm_gap(q, np.random.default_rng(2019), size=200_000)
    idx = np.array([o[0] for o in out])
    gap = np.array([o[1] for o in out])
    for i in (0, 1):
        p = integrate.quad(lambda g: st.gap_density(i, g, q, s), 0, 10.0)[0]
        freq = np.mean((idx == i) & (gap <= 10.0))
        assert abs(freq - p) < 5 * math.sqrt(p * (1 - p) / idx.size), (i, freq, p)


def test_recorded_truth_agrees_with_the_closed_forms():
    # benchmarks/results/structured_truth.json (what the suite compares bounds with) against the
    # formulas recomputed here, relative tolerance 1e-9
    import json
    from pathlib import Path

    rows = json.loads((Path(__file__).resolve().parents[2] / "benchmarks" / "results"
                       / "structured_truth.json").read_text())["rows"]
    e2 = sm.EPS / 2
    assert rows["SVT3-c1"]["loss"] == pytest.approx(10 * e2, rel=1e-9)
    assert rows["SVT3-c2"]["loss"] == pytest.approx(10 * e2 / 2, rel=1e-9)
    assert rows["SVT5"]["loss"] == "inf"
    sig = sm.gaussian_sigma(sm.GAUSS_EPS, sm.GAUSS_WRONG_DELTA)
    assert rows["Gaussian-wrong-delta"]["loss"] == pytest.approx(st.gaussian_epsilon(sm.GAUSS_DELTA, sig),
                                                                 rel=1e-9)
    # the median's worst pair: its ε at δ recomputed from the two laws
    d, dp = rows["SSMedian-pure-beta"]["pair"]
    assert st.laplace_pair_epsilon(sm.SS_DELTA, *sm.ss_median_law(d), *sm.ss_median_law(dp)) == pytest.approx(
        rows["SSMedian-pure-beta"]["loss"], rel=1e-9)
    # ε-DP rows stay at or under their claim; the broken ones above it
    for name in ("SVT1-c1", "SVT1-c2", "SVT2-c2", "SVT7-c1-numeric", "RNM-gap"):
        assert rows[name]["loss"] <= sm.EPS * (1 + 1e-9), name
    for name in ("SVT1-no-abort", "SVT4-c1", "SVT4-c2", "SVT6-indices", "RNM-gap-monotone-scale"):
        assert rows[name]["loss"] > sm.EPS, name
