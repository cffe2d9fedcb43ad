"""The curve audit (dpaudit.curves): claim curves against known values, the simultaneous bands'
coverage on a tiny exact case, the μ inversion, a refutation at a small budget, the record."""

import json
import math

import numpy as np
import pytest
from scipy.stats import norm

from dpaudit.curves import GaussianDP, Profile, RenyiDP, ZCDP, curve_audit, curve_claim
from dpaudit.curves import band as B
from dpaudit.curves import claims as C
from dpaudit.errors import InvalidArgument


def gauss(data, rng, size=None):
    """The Gaussian mechanism of sensitivity 1 (linf, size 1) with σ = 1: exactly 1-GDP, 0.5-zCDP."""
    return data[0] + rng.normal(0.0, 1.0, size=size)


def gauss_half(data, rng, size=None):
    """σ halved: 2-GDP, claimed as 1-GDP."""
    return data[0] + rng.normal(0.0, 0.5, size=size)


GAUSS = dict(neighbours="linf", domain=(0, 1), size=1)


# ------------------------------------------------------------------------------ claim curves

def test_gdp_curve_known_values():
    # δ_1(0) = 2Φ(1/2) − 1 (total variation of N(0,1), N(1,1)); δ_1(1) = Φ(−1/2) − e Φ(−3/2)
    eps = np.array([0.0, 1.0])
    want = [2 * norm.cdf(0.5) - 1, norm.cdf(-0.5) - math.e * norm.cdf(-1.5)]
    assert np.allclose(GaussianDP(1.0).delta(eps), want, rtol=1e-12, atol=1e-15)
    assert np.allclose(C.gdp_delta_formula(1.0, eps), want, rtol=1e-12, atol=1e-15)
    # far out, the formula neither overflows nor goes negative
    assert 0.0 <= C.gdp_delta_formula(0.25, 50.0)[0] < 1e-300 or C.gdp_delta_formula(0.25, 50.0)[0] == 0.0


def test_zcdp_curve_is_opendps_profile_and_above_the_gaussian_curve():
    # OpenDP 0.16's make_zCDP_to_approxDP profile of ρ = 1/32 states δ(0) = 0.1508457845622862;
    # the finite grid of orders gives at most a little more (conservative for the claim)
    d0 = float(ZCDP(1 / 32).delta(0.0)[0])
    assert 0.1508457 <= d0 < 0.1508457845622862 + 1e-5
    # the Gaussian mechanism of that ρ (μ = √(2ρ) = 1/4) has δ(0) = 2Φ(1/8) − 1 ≈ 0.0995: below
    eps = np.linspace(0, 3, 13)
    assert np.all(ZCDP(0.5).delta(eps) >= GaussianDP(1.0).delta(eps) - 1e-15)
    assert abs(float(GaussianDP(0.25).delta(0.0)[0]) - (2 * norm.cdf(0.125) - 1)) < 1e-12


def test_rdp_curve_by_hand():
    # one order (2, 0.5): δ(ε) = min(√(1 − e^(−1/2)), e^(0.5 − ε + ln ½)/2); at ε = 0.5: 1/4
    eps = np.array([0.0, 0.5, 2.0])
    want = [min(math.sqrt(1 - math.exp(-0.5)), math.exp(0.5 + math.log(0.5)) / 2), 0.25,
            math.exp(0.5 - 2.0 + math.log(0.5)) / 2]
    assert np.allclose(RenyiDP([(2, 0.5)]).delta(eps), want, rtol=1e-12)
    assert np.allclose(C.rdp_delta_formula([2.0], [0.5], eps), want, rtol=1e-12)


def test_fallback_formulas_match_dp_accounting():
    pytest.importorskip("dp_accounting", reason="dp-accounting not installed (the curves extra)")
    from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss
    from dp_accounting.rdp.rdp_privacy_accountant import compute_delta

    eps = np.linspace(0, 6, 25)
    for rho in (1 / 32, 0.5, 2.0):
        lib = [compute_delta(list(C.ORDERS), list(C.ORDERS * rho), float(e))[0] for e in eps]
        assert np.allclose(C.rdp_delta_formula(C.ORDERS, C.ORDERS * rho, eps), lib, rtol=1e-9, atol=1e-300)
    loss = GaussianPrivacyLoss(standard_deviation=2.0, sensitivity=1.0)
    lib = [loss.get_delta_for_epsilon(float(e)) for e in eps]
    assert np.allclose(C.gdp_delta_formula(0.5, eps), lib, rtol=1e-9, atol=1e-15)


def test_profile_claims_take_callables_and_library_objects():
    class OpenDPLike:
        def delta(self, epsilon):
            return 0.5 * math.exp(-epsilon)

    class PLDLike:
        def get_delta_for_epsilon(self, epsilon):
            return 0.25

    eps = np.array([0.0, 1.0])
    assert np.allclose(Profile(lambda e: 0.1).delta(eps), [0.1, 0.1])
    assert np.allclose(Profile(OpenDPLike()).delta(eps), [0.5, 0.5 / math.e])
    assert np.allclose(Profile(PLDLike()).delta(eps), [0.25, 0.25])
    assert np.allclose(Profile(lambda e: 2.0).delta(eps), [1.0, 1.0])  # clipped to [0, 1]
    with pytest.raises(InvalidArgument, match="NaN"):
        Profile(lambda e: float("nan")).delta(eps)
    with pytest.raises(InvalidArgument, match="raised"):
        Profile(lambda e: 1 / 0).delta(eps)


def test_exactly_one_claim_and_valid_values():
    assert isinstance(curve_claim(rho=0.5), ZCDP) and isinstance(curve_claim(mu=1), GaussianDP)
    assert isinstance(curve_claim(renyi=[(2, 1.0)]), RenyiDP)
    for bad in ({}, {"rho": 0.5, "mu": 1.0}):
        with pytest.raises(InvalidArgument, match="exactly one"):
            curve_claim(**bad)
    for bad in ({"rho": -1}, {"mu": float("inf")}, {"renyi": [(1.0, 0.5)]}, {"renyi": []},
                {"profile": 3}):
        with pytest.raises(InvalidArgument):
            curve_claim(**bad)
    with pytest.raises(InvalidArgument):
        C.check_grid([0.0, -1.0])


def test_rho_inversion_and_default_grid():
    for eps, delta in ((0.0, 0.2), (1.0, 0.05), (3.0, 1e-4)):
        rho = C.rho_for_delta(eps, delta)
        assert abs(float(C.zcdp_delta(rho, eps)[0]) - delta) < 1e-6 * max(1.0, delta / 1e-6) * 1e-3 + 1e-9
        assert float(C.zcdp_delta(0.99 * rho, eps)[0]) < delta
    assert C.rho_for_delta(1.0, 0.0) == 0.0
    grid = C.default_grid(GaussianDP(1.0))
    assert grid[0] == 0.0 and grid.size == C.GRID_POINTS
    assert float(GaussianDP(1.0).delta(grid[-1])[0]) <= C.GRID_DELTA < float(GaussianDP(1.0).delta(grid[-2])[0])


# ------------------------------------------------------------------------------ the bands

def _exact_case():
    """A score with a known law: s_D uniform on {0, …, 4}, s_D' on {0, …, 4} with weights
    (.3, .3, .2, .1, .1); thresholds 1..4 and their true survival probabilities."""
    t = np.array([1.0, 2.0, 3.0, 4.0])
    pd = np.full(5, 0.2)
    pp = np.array([0.3, 0.3, 0.2, 0.1, 0.1])
    surv = lambda w: np.array([w[int(x):].sum() for x in t])  # noqa: E731
    return t, pd, pp, surv(pd), surv(pp)


@pytest.mark.statistical
def test_cp_band_covers_every_event_at_once():
    """α of the test: each repetition misses (some bound false) with probability ≤ 0.2 (the
    band's α); misses ~ at most Bin(300, 0.2), and P(Bin(300, 0.2) > 80) < 0.003."""
    rng = np.random.default_rng(20261201)
    t, pd, pp, a_true, b_true = _exact_case()
    o = np.array([1, -1, 1, -1])
    misses = 0
    for _ in range(300):
        sd, sp = rng.choice(5, 40, p=pd), rng.choice(5, 40, p=pp)
        x_d = np.array([(sd >= x).sum() for x in t])
        x_p = np.array([(sp >= x).sum() for x in t])
        ev = B.cp_events(t, o, x_d, x_p, 40, 40, alpha=0.2)
        truth_p = np.where(ev.side == "above", np.where(ev.numerator == 0, np.repeat(a_true, 2), np.repeat(b_true, 2)),
                           np.where(ev.numerator == 0, 1 - np.repeat(a_true, 2), 1 - np.repeat(b_true, 2)))
        truth_q = np.where(ev.side == "above", np.where(ev.numerator == 0, np.repeat(b_true, 2), np.repeat(a_true, 2)),
                           np.where(ev.numerator == 0, 1 - np.repeat(b_true, 2), 1 - np.repeat(a_true, 2)))
        misses += bool(np.any(ev.p_lo > truth_p + 1e-12) or np.any(ev.q_hi < truth_q - 1e-12))
    assert ev.level == pytest.approx(0.2 / 8)
    assert misses <= 80


@pytest.mark.statistical
def test_dkw_band_covers_every_threshold_at_once():
    """α of the test: as above (the DKW band at α = 0.2, both datasets): P(Bin(300, 0.2) > 80) < 0.003."""
    rng = np.random.default_rng(20261202)
    t, pd, pp, a_true, b_true = _exact_case()
    misses = 0
    for _ in range(300):
        sd, sp = rng.choice(5, 40, p=pd).astype(float), rng.choice(5, 40, p=pp).astype(float)
        ev = B.dkw_events(sd, sp, alpha=0.2)
        a = {x: a for x, a in zip(t, a_true)}
        b = {x: b for x, b in zip(t, b_true)}
        a[0.0], b[0.0] = 1.0, 1.0
        for i in range(ev.size):
            x = float(ev.threshold[i])
            pa, pb = a[x], b[x]
            tp, tq = (pa, pb) if ev.numerator[i] == 0 else (pb, pa)
            if ev.side[i] == "below":
                tp, tq = 1 - tp, 1 - tq
            if ev.p_lo[i] > tp + 1e-12 or ev.q_hi[i] < tq - 1e-12:
                misses += 1
                break
    assert misses <= 80


def test_events_give_both_orders_and_the_lower_curve():
    ev = B.cp_events([0.5], [1], [800], [200], 1000, 1000, alpha=0.05)
    assert list(ev.side) == ["above", "below"] and list(ev.numerator) == [0, 1]
    # the complement event bounds the other order with the same two bounds
    assert ev.p_lo[1] == pytest.approx(1 - ev.q_hi[0]) and ev.q_hi[1] == pytest.approx(1 - ev.p_lo[0])
    lb, idx = ev.delta_lb([0.0, 1.0, 20.0])
    assert lb[0] == pytest.approx(ev.p_lo[0] - ev.q_hi[0]) and lb[2] == 0.0 and idx[0] in (0, 1)
    assert 0.5 < lb[0] < 0.6


# ------------------------------------------------------------------------------ μ

def test_mu_inversion_is_exact_on_the_gaussian_tradeoff():
    # the threshold test t on N(μ, 1) vs N(0, 1): Φ⁻¹(P[≥ t | μ]) − Φ⁻¹(P[≥ t | 0]) = μ at every t
    for mu in (0.5, 1.0, 2.0):
        for t in (-1.0, 0.3, 2.5):
            assert B.mu_from_rates(norm.sf(t - mu), norm.sf(t)) == pytest.approx(mu, abs=1e-9)
    assert B.mu_from_rates(0.0, 0.5) == -math.inf and B.mu_from_rates(0.9, 1.0) == -math.inf


def test_a_point_above_the_mu_curve_beats_it_at_the_touching_epsilon():
    # (p_lo, q_hi) with Φ⁻¹(p_lo) − Φ⁻¹(q_hi) > μ lies above δ_μ at ε* = −μ Φ⁻¹(q_hi) − μ²/2
    mu = 1.0
    p_lo, q_hi = norm.sf(0.5 - 1.05), norm.sf(0.5)
    assert B.mu_from_rates(p_lo, q_hi) > mu
    e = -mu * norm.ppf(q_hi) - mu * mu / 2
    assert p_lo - math.exp(e) * q_hi > GaussianDP(mu).delta(e)[0]


# ------------------------------------------------------------------------------ the audit

def test_halved_sigma_is_refuted_at_a_small_budget():
    r = curve_audit(gauss_half, mu=1.0, **GAUSS, samples=20_000, confidence=0.95, seed=7)
    assert r.refuted and r.point.gap > 0 and r.refuting_point is r.point
    assert r.mu_lower_bound > 1.0 and r.rho_lower_bound > 0.0
    cx = r.point.counterexample
    assert cx is not None and {cx.dataset[0], cx.neighbour[0]} == {0.0, 1.0}
    assert cx.p_interval.lo <= cx.p and cx.q <= cx.q_interval.hi


def test_correct_gaussian_is_not_refuted_and_says_what_it_could_refute():
    r = curve_audit(gauss, rho=0.5, **GAUSS, samples=20_000, confidence=0.95, seed=8)
    assert not r.refuted and r.refuting_point is None
    assert all(lb <= c for lb, c in zip(r.delta_lower_bound, r.delta_claim))
    text = r.refutable()["text"]
    assert text.startswith("not refuted") and "scaled by less than" in text
    assert 0.5 < r.mu_lower_bound < 1.0 + 1e-9


def test_record_keys_and_json():
    r = curve_audit(gauss_half, mu=1.0, **GAUSS, samples=20_000, confidence=0.95, seed=9, band="dkw")
    rec = r.to_record()
    for key in ("kind", "target", "verdict", "elapsed_s", "reproduce", "error"):
        assert key in rec
    assert rec["kind"] == "curve" and rec["verdict"] == "refuted" and rec["error"] is None
    assert rec["claim"]["type"] == "gdp" and rec["claim"]["mu"] == 1.0 and rec["claim"]["neighbours"] == "linf"
    g = rec["grid"]
    assert len(g["epsilon"]) == len(g["delta_claim"]) == len(g["delta_lower_bound"]) == len(g["margin"])
    assert rec["refuting_point"] == rec["point"] and rec["point"]["gap"] > 0
    assert rec["mu_lower_bound"] > 1 and "rho_lower_bound" in rec and rec["details"]["band"] == "dkw"
    assert "curve_audit(gauss_half, mu=1," in rec["reproduce"] and "band='dkw'" in rec["reproduce"]
    json.dumps(rec, allow_nan=False)


def test_same_seed_same_result_and_errors_are_verdicts():
    a = curve_audit(gauss, mu=1.0, **GAUSS, samples=10_000, seed=3).to_record()
    b = curve_audit(gauss, mu=1.0, **GAUSS, samples=10_000, seed=3).to_record()
    a.pop("elapsed_s"), b.pop("elapsed_s")
    assert a == b

    def broken(data, rng, size=None):
        raise ValueError("boom")

    r = curve_audit(broken, mu=1.0, **GAUSS, samples=10_000, seed=3)
    assert r.verdict.value == "error" and "boom" in r.error
    with pytest.raises(InvalidArgument):
        curve_audit(gauss, mu=1.0, **GAUSS, band="wide")
    with pytest.raises(InvalidArgument):
        curve_audit(gauss, **GAUSS)


def test_a_curve_record_renders_with_its_plot_and_its_sarif_rule(tmp_path):
    # deterministic given the seed; σ = 0.5 against a 1-GDP claim is 2-GDP (refuted far beyond α)
    from dpaudit.report import make_run, write_each
    from dpaudit.report.describe import one_line

    def noisy(data, rng, size=None):
        return data[0] + rng.normal(0.0, 0.5, size=size)

    rec = curve_audit(noisy, mu=1.0, neighbours="linf", domain=(0, 1), size=1,
                             samples=20_000, seed=7).to_record()
    line = one_line(rec)
    assert "noisy: REFUTED — 1-GDP, linf neighbours" in line and "δ(ε) ≥" in line and "μ ≥" in line
    # a reviewer could not tell whether the doubles were checked: the line says they were not
    assert line.endswith("; float64: not asked (a curve audit takes the mechanism as a model over the "
                         "reals; an (ε, δ) check asks it)"), line
    run = make_run([rec], seed=7, started=0, finished=1, command="test")
    written, failed = write_each(run, html=tmp_path / "r.html", sarif=tmp_path / "r.sarif")
    assert not failed
    html = (tmp_path / "r.html").read_text()
    assert "privacy profile: claimed against measured" in html and "<svg" in html
    import json

    result = json.loads((tmp_path / "r.sarif").read_text())["runs"][0]["results"][0]
    assert result["ruleId"] == "DPA007"
