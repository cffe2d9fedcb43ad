"""The one-run audit's bound functions against hand computations (dpaudit/onerun/bounds.py,
accountant.py, guesses.py)."""

import math

import numpy as np
import pytest

from dpaudit.curves.claims import gdp_delta_formula
from dpaudit.onerun import audit_scores
from dpaudit.onerun import bounds as B
from dpaudit.onerun.accountant import dpsgd_epsilon, subsampled_gaussian_rdp
from dpaudit.onerun.guesses import Guesser, counts, family, sizes


def test_steinke_pure_all_right_is_half_to_the_r():
    # ε = 0, δ = 0: W′ ~ Bin(10, ½), P[W′ ≥ 10] = 2⁻¹⁰
    assert B.steinke_p_value(10, 10, 10, 0.0, 0.0) == pytest.approx(1 / 1024, rel=1e-12)
    # 7 of 10 at ε = 0: (C(10,7) + C(10,8) + C(10,9) + 1) / 1024 = 176/1024
    assert B.steinke_p_value(10, 10, 7, 0.0, 0.0) == pytest.approx(176 / 1024, rel=1e-12)


def test_steinke_delta_term_by_hand():
    # m = 10, r = v = 2, ε = 0, δ = 0.01: β = ¼; windows: i=1 P[W′=1] = ½, i=2 P[W′<2] = ¾ → /2 = 3/8;
    # max = ½; p = ¼ + 2·10·0.01·½ = 0.35
    assert B.steinke_p_value(10, 2, 2, 0.0, 0.01) == pytest.approx(0.35, rel=1e-12)


def test_steinke_epsilon_all_right_is_the_logit_of_alpha_to_one_over_r():
    # v = r, δ = 0: p(ε) = q^r ≤ α ⇔ q ≥ α^(1/r) ⇔ ε ≥ logit(α^(1/r))
    for r, alpha in ((1000, 0.05), (50, 0.01), (8, 0.2)):
        q = alpha ** (1 / r)
        assert B.steinke_epsilon(r, r, r, 0.0, alpha) == pytest.approx(math.log(q / (1 - q)), abs=1e-6)


def test_steinke_no_evidence_at_half_right():
    assert B.steinke_epsilon(100, 100, 50, 0.0, 0.05) == 0.0
    # 60 of 100 at ε = 0: P[Bin(100, ½) ≥ 60] = 0.02844…: refutes ε = 0 at α = 0.05, not at 0.01
    assert B.steinke_p_value(100, 100, 60, 0.0, 0.0) == pytest.approx(0.028443966820490392, rel=1e-9)
    assert B.steinke_epsilon(100, 100, 60, 0.0, 0.05) > 0.0
    assert B.steinke_epsilon(100, 100, 60, 0.0, 0.01) == 0.0


def test_fdp_recursion_by_hand():
    ident = B.approx_dp_inverse(0.0, 0.0)
    assert [ident(y) for y in (0.0, 0.3, 1.0)] == pytest.approx([0.0, 0.3, 1.0])
    # m = 4, r = v = 2, f̄⁻¹(y) = y (0-DP). τ = ½: r₂ = ¼, h₂ = 0; i=1: h₁ = ¼, r₁ = ¼ + 1·¼ = ½;
    # i=0: h₀ = ½, r₀ = ½ + 0 → r₀ + h₀ = 1 > r/m = ½: refuted (indeed P[2 of 2 right] = ¼ < ½)
    assert B.fdp_rejects(ident, 4, 2, 2, 0.5)
    # τ = 0.2: r₂ = 0.1; h₁ = 0.1, r₁ = 0.2; h₀ = 0.2, r₀ = 0.2 → 0.4 ≤ ½: not refuted (¼ ≥ 0.2)
    assert not B.fdp_rejects(ident, 4, 2, 2, 0.2)


def test_fdp_never_refutes_a_mechanism_that_shows_everything():
    # ε = ∞ (f̄⁻¹ ≡ 0 below 1): any count is possible
    assert not B.fdp_rejects(lambda y: 0.0 if y < 1 else 1.0, 1000, 1000, 1000, 0.05)


def test_inverses():
    inv = B.approx_dp_inverse(math.log(2), 0.1)
    # f̄(x) = min(1, 0.1 + 2x, 1 − (1 − 0.1 − x)/2): f̄⁻¹(0.5) = max((0.5 − 0.1)/2, 1 − 0.1 − 2·0.5) = 0.2
    assert inv(0.5) == pytest.approx(0.2)
    assert B.gdp_inverse(0.0)(0.37) == pytest.approx(0.37)
    assert B.gdp_inverse(1.0)(0.5) == pytest.approx(0.15865525393145707)  # Φ(−1)


def test_gdp_epsilon_inverts_the_gdp_curve():
    for mu, delta in ((0.5, 1e-5), (1.0, 1e-5), (2.0, 1e-3)):
        eps = B.gdp_epsilon(mu, delta)
        assert gdp_delta_formula(mu, eps)[0] == pytest.approx(delta, rel=1e-4)
    assert B.gdp_epsilon(0.0, 1e-5) == 0.0


def test_ceilings_are_the_bounds_with_every_guess_right():
    c = B.ceilings(100, (100, 50), 0.0, 0.01, 0.01)
    assert c["steinke"] == pytest.approx(max(B.steinke_epsilon(100, r, r, 0.0, 0.01) for r in (100, 50)))
    assert c["mu"] == pytest.approx(max(B.gdp_mu(100, r, r, 0.01) for r in (100, 50)))


def test_rdp_of_the_gaussian_at_q_one_and_alpha_two_by_hand():
    assert subsampled_gaussian_rdp(2.0, 1.0, 5) == pytest.approx(5 / 8)
    # α = 2: A = (1−q)² + 2q(1−q) + q² e^(1/σ²)
    q, s = 0.1, 1.5
    a = (1 - q) ** 2 + 2 * q * (1 - q) + q * q * math.exp(1 / s ** 2)
    assert subsampled_gaussian_rdp(s, q, 2) == pytest.approx(math.log(a), rel=1e-12)


def test_dpsgd_epsilon_grows_with_the_sampling_rate():
    lo, hi = dpsgd_epsilon(3.0, 0.01, 400, 1e-5), dpsgd_epsilon(3.0, 0.1, 400, 1e-5)
    assert 0 < lo < hi < 10


def test_family_and_counts_on_a_small_example():
    assert sizes(20) == (20, 10)
    fam = family(20, ["s"])
    # per direction: r = 20 balanced; r = 10: (10,0), (0,10), (5,5)
    assert len(fam) == 2 * 4
    scores = {"s": np.array([5.0, 4.0, 3.0, 2.0, 1.0, 0.0])}
    included = np.array([True, True, False, False, True, False])
    ties = np.zeros(6)
    got = counts(scores, included, [Guesser("s", 1, 2, 0), Guesser("s", 1, 0, 2), Guesser("s", -1, 2, 2)], ties)
    # top 2 in: both right; bottom 2 out (1.0 in, 0.0 out): 1 right; reversed: top (0,1) in → 1,
    # bottom (5,4) out → 0 right
    assert got == [(2, 2), (2, 1), (4, 1)]


def test_audit_scores_on_perfect_separation_reaches_the_ceiling_and_refutes_a_low_claim():
    m = 200
    included = np.arange(m) % 2 == 0
    r = audit_scores(np.where(included, 1.0, 0.0) + np.arange(m) * 1e-9, included, epsilon=1.0, seed=1)
    assert r.verdict.value == "refuted"
    assert r.steinke.epsilon_lower_bound == pytest.approx(r.steinke.ceiling, rel=1e-6)
    rec = r.to_record()
    assert rec["kind"] == "one-run" and rec["bounds"]["fdp"]["mu_lower_bound"] > 0
