"""The claims of Chen, Pal and Golubchik (2016) (Chen, Pal and Golubchik, oblivious mechanisms), evaluated numerically, as data.

Each claim (a :class:`~dpaudit.reference.claims.types.SeedClaim`) names where Chen, Pal and Golubchik (2016) states it
("eq (n)", "Lemma 1", "§n" of Chen, Pal and Golubchik 2016), the statement, the verdict we record, the docs/math.md section and
errata (docs/math.md#errata (E8–E12)), and a ``check`` that recomputes the evidence from scratch: closed-form
sums of the seed's own formulas, quadrature or exact sums against our laws, exact order
statistics, exact privacy losses (:func:`dpaudit.estimators.exact.pair_loss`) and the linear
programs of :mod:`~dpaudit.reference.analysis.lp_optimal`. Nothing here samples, so every check is deterministic.

Verdicts follow the project's three-valued honesty: a claim with an explicit, exactly evaluated
counterexample is REFUTED; one that matched at every point checked is NOT_REFUTED (never
"proved"). Ids are ``s001-<where>-<what>``, lower case, like those of
:mod:`~dpaudit.reference.claims.exponential`; :func:`dpaudit.reference.claims.evaluate` runs them.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from scipy import integrate, optimize, stats

from dpaudit.estimators.exact import pair_loss
from dpaudit.results import Verdict
from dpaudit.rng import generator, root_sequence
from ..analysis import expected_loss as el
from ..analysis import lp_optimal as lp
from ..collusion import collusion_median
from ..geometric import Geometric
from ..laplace import Laplace
from ..prerounding import PreRounding
from ..staircase import Staircase, optimal_gamma
from .types import ClaimEvidence, SeedClaim

__all__ = ["claims"]

_RHOS = np.round(np.arange(0.05, 0.951, 0.05), 2)          # ρ = 0.05 … 0.95, as in Chen, Pal and Golubchik (2016) Fig. 3
REFUTED, NOT_REFUTED = Verdict.REFUTED, Verdict.NOT_REFUTED
_EVALUATOR = "dpaudit.reference.claims:evaluate"


def _holds(ok: bool, observed: float, bound: float, detail: str, cex: Any = None) -> ClaimEvidence:
    return ClaimEvidence(NOT_REFUTED if ok else REFUTED, float(observed), float(bound), detail,
                         None if ok else cex)


# -- normalisation of the stated densities (Chen, Pal and Golubchik (2016) eqs (6)-(10)) --------------------------------------
def _eq6_mass() -> ClaimEvidence:
    """∫ (ε/(2Δ)) e^{−|x|/Δ} dx, by quadrature: it is ε, so (6) is a density only at ε = 1."""
    eps, d = 0.2, 1.0
    f = lambda x: eps / (2 * d) * math.exp(-abs(x) / d)  # noqa: E731
    mass = 2 * integrate.quad(f, 0, np.inf)[0]
    return _holds(abs(mass - 1) < 1e-9, mass, 1.0,
                  f"Chen, Pal and Golubchik (2016) eq (6) integrates to {mass:.6g} = ε at ε = {eps}, Δ = {d} (a density needs 1)",
                  {"epsilon": eps, "sensitivity": d, "mass": mass})


def _eq6_corrected() -> ClaimEvidence:
    """(ε/(2Δ))e^{−ε|z|/Δ}: mass 1 by quadrature, and exact loss ε on a shift by Δ."""
    worst = 0.0
    for eps, d in [(0.1, 1.0), (1.0, 2.0), (3.0, 0.5)]:
        m = Laplace(eps, d)
        mass = 2 * integrate.quad(lambda z: float(m.pdf(z)), 0, np.inf)[0]
        loss = pair_loss(m.law(0.0), m.law(d)).epsilon
        worst = max(worst, abs(mass - 1), abs(loss - eps))
    return _holds(worst < 1e-9, worst, 1e-9, "max |mass − 1|, |loss − ε| over (ε, Δ) ∈ "
                  "{(0.1, 1), (1, 2), (3, 0.5)}")


def _eq7_mass() -> ClaimEvidence:
    """Σ_k ((1+ρ)/(1−ρ)) ρ^{|k|} = ((1+ρ)/(1−ρ))²: 100.7 at ε = 0.2."""
    eps = 0.2
    rho = math.exp(-eps)
    k = np.arange(-20000, 20001)
    mass = float(np.sum((1 + rho) / (1 - rho) * rho ** np.abs(k)))
    return _holds(abs(mass - 1) < 1e-9, mass, 1.0, f"Chen, Pal and Golubchik (2016) eq (7) sums to {mass:.4f} at ε = {eps} "
                  f"(= ((1+ρ)/(1−ρ))²; the constant should be (1−ρ)/(1+ρ))", {"epsilon": eps, "mass": mass})


def _seed_staircase_mass(eps: float, gamma: float, d: float = 1.0) -> float:
    """Mass of Chen, Pal and Golubchik (2016) eq (8)-(9) with its constant (1−α)/(2Δ√α), summed cell by cell (exact)."""
    rho = math.exp(-eps)
    a = (1 - rho) / (2 * d * math.sqrt(rho))
    k = np.arange(0, 4000)
    return float(2 * np.sum(a * rho ** k * gamma * d + a * rho ** (k + 1) * (1 - gamma) * d))


def _eq8_gamma_star() -> ClaimEvidence:
    worst = max(abs(_seed_staircase_mass(e, optimal_gamma(e)) - 1) for e in (0.1, 1.0, 3.0))
    return _holds(worst < 1e-9, worst, 1e-9, "max |mass − 1| of Chen, Pal and Golubchik (2016) eq (8)-(9) at γ* for ε ∈ {0.1, 1, 3}")


def _eq8_any_gamma() -> ClaimEvidence:
    eps, g = 1.0, 0.1
    mass = _seed_staircase_mass(eps, g)
    return _holds(abs(mass - 1) < 1e-9, mass, 1.0, f"Chen, Pal and Golubchik (2016) eq (8)-(9) with γ = {g} ≠ γ* = "
                  f"{optimal_gamma(eps):.4f} (ε = {eps}) has mass {mass:.6f}: its constant is A(γ*) only",
                  {"epsilon": eps, "gamma": g, "mass": mass})


def _eq10_mass() -> ClaimEvidence:
    """Σ_k d((1+r)/(1−r)) α^{|kd|/Δ} with r = α^{d/Δ} = d((1+r)/(1−r))²."""
    eps, delta_, d = 1.0, 1.0, 0.5
    r = math.exp(-eps * d / delta_)
    k = np.arange(-5000, 5001)
    mass = float(np.sum(d * (1 + r) / (1 - r) * math.exp(-eps) ** (np.abs(k) * d / delta_)))
    return _holds(abs(mass - 1) < 1e-9, mass, 1.0, f"Chen, Pal and Golubchik (2016) eq (10) sums to {mass:.4f} at ε = {eps}, "
                  f"Δ = {delta_}, d = {d} (= d((1+r)/(1−r))²)", {"epsilon": eps, "step": d, "mass": mass})


# -- expected losses (Chen, Pal and Golubchik (2016) eqs (11)-(15)) -----------------------------------------------------------
def _rel(a: Any, b: Any) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / np.abs(b)))


def _eq11() -> ClaimEvidence:
    num = [stats.laplace(scale=1 / -math.log(r)).expect(abs, epsrel=1e-12) for r in _RHOS]
    err = _rel(el.laplace_loss(_RHOS), num)
    return _holds(err < 1e-9, err, 1e-9, "max relative error of Δ/(−ln ρ) against quadrature, ρ = 0.05…0.95")


def _staircase_abs_by_cells(eps: float) -> float:
    """E|Z| = 2 Σ_cells f·(b² − a²)/2 over the staircase's constant cells (Δ = 1, γ*)."""
    m = Staircase(eps)
    k = np.arange(0, math.ceil(745 / eps))
    g = m.gamma
    lo = m.height * np.exp(-eps * k) * ((k + g) ** 2 - k ** 2) / 2
    hi = m.height * np.exp(-eps * (k + 1)) * ((k + 1) ** 2 - (k + g) ** 2) / 2
    return float(2 * np.sum(lo + hi))


def _eq12() -> ClaimEvidence:
    num = [_staircase_abs_by_cells(-math.log(r)) for r in _RHOS]
    err = _rel(el.staircase_loss(_RHOS), num)
    return _holds(err < 1e-9, err, 1e-9, "max relative error of Δ√ρ/(1−ρ) against cell sums, ρ = 0.05…0.95")


def _eq13() -> ClaimEvidence:
    num = []
    for r in _RHOS:
        k = np.arange(-3000, 3001)
        num.append(float(np.sum(np.abs(k) * Geometric(-math.log(r)).pmf(k))))
    err = _rel(el.geometric_loss(_RHOS), num)
    return _holds(err < 1e-9, err, 1e-9, "max relative error of 2ρ/(1−ρ²) against Σ|k|P(K=k) with the "
                  "corrected pmf, ρ = 0.05…0.95")


def _eq14() -> ClaimEvidence:
    num = [el.rounded_expected_abs(Laplace(-math.log(r))) for r in _RHOS]
    err = _rel(el.count_laplace_loss(_RHOS), num)
    return _holds(err < 1e-9, err, 1e-9, "max relative error of √ρ/(1−ρ) against 2Σ P(Z ≥ m − ½), ρ = 0.05…0.95")


def _eq15() -> ClaimEvidence:
    num = [el.rounded_expected_abs(Staircase(-math.log(r))) for r in _RHOS]
    err = _rel(el.count_staircase_loss(_RHOS), num)
    return _holds(err < 1e-9, err, 1e-9, "max relative error of (1−(1−√ρ)²/2)√ρ/(1−ρ) against "
                  "2Σ P(Z ≥ m − ½) for the staircase at γ*, ρ = 0.05…0.95")


def _staircase_beats_laplace() -> ClaimEvidence:
    gap = float(np.min(el.laplace_loss(_RHOS) - el.staircase_loss(_RHOS)))
    return _holds(gap > 0, gap, 0.0, "min over ρ = 0.05…0.95 of eq (11) − eq (12) (positive: the "
                  "staircase is better everywhere; the gap shrinks as ρ → 1)")


# -- collusion (Chen, Pal and Golubchik (2016) eqs (16)-(18), Lemma 1) ----------------------------------------------------------
def _asymptotic(noise_of: Callable[[float], Any], formula: Callable) -> ClaimEvidence:
    """Relative error of the formula against the exact E|med_k| must fall with k (to below 1% at
    k = 10001): the formula is then right as the large-k approximation the seed calls it."""
    ks = (5, 101, 1001, 10001)
    errs = [max(abs(el.expected_abs_median(noise_of(-math.log(r)), k) / float(formula(r, k)) - 1)
                for r in (0.2, 0.5, 0.8)) for k in ks]
    ok = all(a > b for a, b in zip(errs, errs[1:])) and errs[-1] < 0.01
    text = ", ".join(f"{e:.2%} at k = {k}" for k, e in zip(ks, errs))
    return _holds(ok, errs[-1], 0.01, f"asymptotic only: max relative error {text} "
                  f"(exact low median, ρ ∈ {{0.2, 0.5, 0.8}})")


def _eq18() -> ClaimEvidence:
    rho, k = 0.2, 25
    exact = el.expected_abs_median(Geometric(-math.log(rho)), k)
    stated = float(el.collusion_geometric_loss_seed(rho, k))
    bound = el.geometric_median_bound(rho, k)
    ok = abs(exact / stated - 1) < 0.5
    return _holds(ok, exact, stated, f"at ρ = {rho}, k = {k}: exact E|med_k| = {exact:.3g}, Chen, Pal and Golubchik (2016) eq (18) "
                  f"gives {stated:.3g}; the corrected bound 2Σ(4s(1−s))^(k/2) = {bound:.3g} decays "
                  f"exponentially in k", {"rho": rho, "k": k, "exact": exact, "stated": stated})


def _lemma1_laplace_geometric() -> ClaimEvidence:
    """The low median maximises Σ ln p(m_i − θ): over all observations (continuous, the log-likelihood
    is concave piecewise linear with kinks there) and over every integer in range (geometric)."""
    worst = -np.inf
    ss = root_sequence(1)
    for kind in ("laplace", "geometric"):
        for k in (2, 3, 4, 7, 10):
            rng = generator(ss.spawn(1)[0])
            m = Laplace(0.7).sample(0.0, rng, k) if kind == "laplace" else Geometric(0.7).sample(0, rng, k)
            noise = Laplace(0.7) if kind == "laplace" else Geometric(0.7)
            cand = np.unique(m) if kind == "laplace" else np.arange(m.min(), m.max() + 1)
            ll = lambda th: float(np.sum(noise.log_prob(th, m)))  # noqa: E731
            med = float(collusion_median(m))
            worst = max(worst, max(ll(c) for c in cand) - ll(med))
    return _holds(worst <= 1e-12, worst, 1e-12, "max over samples of (best log-likelihood − "
                  "log-likelihood at the low median), Laplace and geometric, k ∈ {2, 3, 4, 7, 10}")


def _lemma1_staircase() -> ClaimEvidence:
    eps = math.log(9 / 4)
    m = Staircase(eps)
    obs = np.array([0.0, 0.5, 1.0])
    at_med = float(np.sum(m.log_prob(0.5, obs)))
    at_03 = float(np.sum(m.log_prob(0.3, obs)))
    ok = at_med >= at_03
    return _holds(ok, at_03, at_med, f"ε = ln(9/4) (γ* = {m.gamma:.2f}), observations (0, 0.5, 1): "
                  f"log-likelihood {at_med:.3f} at the median 0.5 but {at_03:.3f} at θ = 0.3",
                  {"epsilon": eps, "observations": obs.tolist(), "median_loglik": at_med,
                   "theta": 0.3, "theta_loglik": at_03})


def _eq22() -> ClaimEvidence:
    """(22) A·ρ^{⌈|x|/Δ − γ⌉} against (8)-(9) A·ρ^{k + [x]_γ}, off the null set |x| = (k + γ)Δ."""
    bad = 0
    for eps, d in [(0.3, 1.0), (1.0, 2.0), (2.5, 0.5)]:
        m = Staircase(eps, d)
        x = np.linspace(-20 * d, 20 * d, 40_001)
        x = x[np.abs(np.abs(x) / d - m.gamma - np.round(np.abs(x) / d - m.gamma)) > 1e-9]
        eq22 = math.log(m.height) - eps * np.ceil(np.abs(x) / d - m.gamma)
        bad += int(np.sum(np.abs(eq22 - m.log_prob(0.0, x)) > 1e-9))
    return _holds(bad == 0, bad, 0, "grid points (off |x| = (k+γ)Δ) where (22) and (8)-(9) disagree")


def _eq23() -> ClaimEvidence:
    """(23) writes ε/Δ·⌈|m − θ| − γΔ⌉ for the exponent; from (22) it must be ε·⌈|m − θ|/Δ − γ⌉."""
    eps, d = 1.0, 2.0
    g = optimal_gamma(eps)
    x = 1.0
    stated = eps / d * math.ceil(x - g * d)
    right = eps * math.ceil(x / d - g)
    return _holds(stated == right, stated, right, f"at ε = {eps}, Δ = {d}, |m − θ| = {x}: (23) gives "
                  f"exponent {stated:g}, (22) gives {right:g}", {"epsilon": eps, "sensitivity": d, "x": x})


# -- shape, privacy and optimality ------------------------------------------------------------------
def _gamma_star() -> ClaimEvidence:
    worst = 0.0
    for eps in (0.1, 1.0, 3.0):
        res = optimize.minimize_scalar(lambda g: Staircase(eps, 1.0, g).expected_abs(),
                                       bounds=(0, 1), method="bounded", options={"xatol": 1e-10})
        worst = max(worst, abs(res.x - optimal_gamma(eps)))
    return _holds(worst < 1e-6, worst, 1e-6, "max |argmin_γ E|Z| − √ρ/(1+√ρ)| for ε ∈ {0.1, 1, 3}")


def _staircase_dp() -> ClaimEvidence:
    worst = 0.0
    for eps in (0.5, 2.0):
        for g in (0.0, 0.2, None, 1.0):
            m = Staircase(eps, 1.0, g)
            worst = max(worst, abs(pair_loss(m.law(0.0, 1e-30), m.law(1.0, 1e-30)).epsilon - eps))
    return _holds(worst < 1e-9, worst, 1e-9, "max |exact loss − ε| at a shift by Δ, γ ∈ {0, 0.2, γ*, 1}")


def _geometric_bayes() -> ClaimEvidence:
    worst, n = 0.0, 6
    for eps in (0.5, 1.5):
        for prior in (None, stats.binom.pmf(np.arange(n + 1), n, 0.3)):
            for loss in lp.LOSSES:
                p = lp.check_prior(prior, n)
                L = lp.loss_matrix(n, loss)
                opt = lp.solve_optimal(n, eps, loss, p).value
                _, Z = lp.bayes_remap(lp.geometric_cells(n, eps), p, L)
                worst = max(worst, abs(lp.bayes_risk(Z, p, L) - opt) / max(opt, 1e-12))
    return _holds(worst < 1e-7, worst, 1e-7, "max relative gap of geometric + Bayes remap to OPT1 "
                  "(n = 6, ε ∈ {0.5, 1.5}, uniform/binomial priors, |·|, (·)², 0/1)")


def _geometric_minimax(deterministic: bool) -> ClaimEvidence:
    n, eps, loss = 5, 2.0, "squared"
    L = lp.loss_matrix(n, loss)
    opt = lp.solve_optimal(n, eps, loss, objective="minimax").value
    G = lp.geometric_cells(n, eps)
    if not deterministic:
        gap = lp.minimax_remap(G, L).value - opt
        return _holds(abs(gap) < 1e-7, abs(gap), 1e-7, f"|geometric + randomised remap − OPT2| at n = {n}, "
                      f"ε = {eps}, loss (·)²")
    mask = np.ones(n + 1, dtype=bool)
    mask[[0, n]] = False           # outputs ≤ 0 and ≥ n may still be split (they are many atoms of ℤ)
    lb = lp.minimax_remap(G, L, deterministic=mask).lower_bound
    return _holds(lb - opt < 1e-7, lb - opt, 1e-7, f"at n = {n}, ε = {eps}, loss (·)²: every deterministic "
                  f"remap of the geometric on ℤ has worst-case risk ≥ {lb:.6f} > OPT2 = {opt:.6f}",
                  {"n": n, "epsilon": eps, "loss": loss, "opt2": opt, "deterministic_lower_bound": lb})


def _heuristic_collusion() -> ClaimEvidence:
    """Loss of the pre-rounding heuristic after k = 101 colluders: P(M = 0)|c| + 10E|M| ≥ P(M=0)|c|."""
    eps, q, k = 1.0, 2.0, 101
    h = PreRounding(eps)
    c = float(h.round(q) - q)
    g = Geometric(eps)
    j = (k + 1) // 2
    p0 = float(1 - stats.binom.sf(k - j, k, g.sf(0)) - stats.binom.sf(j - 1, k, g.cdf(-1)))  # P(M = 0)
    loss = p0 * abs(c) + 10 * el.expected_abs_median(g, k)
    return _holds(loss > 0.99 * abs(c), loss, abs(c), f"ε = {eps}, q = {q}: E|median of {k} releases − q| "
                  f"= {loss:.4f} → |R(q) − q| = {abs(c):g}, not 0")


# -- the list -----------------------------------------------------------------------------------------
def _claim(id: str, source: str, statement: str, verdict: Verdict, spec: str, errata: tuple[str, ...],
           check: Callable[[], ClaimEvidence]) -> SeedClaim:
    return SeedClaim(id, "001", source, statement, verdict, spec, errata, check, _EVALUATOR)


def claims() -> tuple[SeedClaim, ...]:
    """Every checked claim of Chen, Pal and Golubchik (2016), in the order of the paper."""
    C = _claim
    return (
        C("s001-eq6-density", "eq (6)", "p(x|ε,Δ) = (ε/(2Δ)) e^{−|x|/Δ} is the Laplace density", REFUTED,
          "docs/math.md#laplace", ("E8",), _eq6_mass),
        C("s001-eq6-corrected", "eq (6), corrected", "(ε/(2Δ)) e^{−ε|z|/Δ} is a density and ε-DP for "
          "sensitivity Δ", NOT_REFUTED, "docs/math.md#laplace", ("E8",), _eq6_corrected),
        C("s001-eq7-density", "eq (7)", "p(x|α) = ((1+α)/(1−α)) α^{|x|} is a pmf on ℤ", REFUTED,
          "docs/math.md#geometric", ("E9",), _eq7_mass),
        C("s001-eq8-gamma-star", "eqs (8)-(9)", "the staircase with constant (1−α)/(2Δ√α) is a density "
          "at γ* = √α/(1+√α)", NOT_REFUTED, "docs/math.md#staircase", (), _eq8_gamma_star),
        C("s001-eq8-any-gamma", "eqs (8)-(9)", "the same formula is a density for every γ ∈ [0, 1]",
          REFUTED, "docs/math.md#staircase", (), _eq8_any_gamma),
        C("s001-eq10-density", "eq (10)", "p(x|α,Δ,d) = d((1+α^{d/Δ})/(1−α^{d/Δ})) α^{|x|/Δ} is a pmf on dℤ",
          REFUTED, "docs/math.md#geometric", ("E10",), _eq10_mass),
        C("s001-eq11", "eq (11)", "Laplace: EL = Δ/(−log α)", NOT_REFUTED, "docs/math.md#expected-loss", (), _eq11),
        C("s001-eq12", "eq (12)", "Staircase: EL = Δ√α/(1−α)", NOT_REFUTED, "docs/math.md#expected-loss", (), _eq12),
        C("s001-eq13", "eq (13)", "Geometric: EL = 2α/(1−α²)", NOT_REFUTED, "docs/math.md#expected-loss", ("E9",), _eq13),
        C("s001-eq14", "eq (14)", "count query, Laplace rounded: EL = √α/(1−α)", NOT_REFUTED,
          "docs/math.md#expected-loss", (), _eq14),
        C("s001-eq15", "eq (15)", "count query, staircase rounded: EL = (1 − (1−√α)²/2)√α/(1−α)",
          NOT_REFUTED, "docs/math.md#expected-loss", ("E11",), _eq15),
        C("s001-5.1-staircase-better", "§5.1", "the staircase has lower expected loss than Laplace",
          NOT_REFUTED, "docs/math.md#expected-loss", (), _staircase_beats_laplace),
        C("s001-eq16", "eq (16)", "k colluders, Laplace: E|med_k| ≈ √(2/(πk))/(−log α) for large k",
          NOT_REFUTED, "docs/math.md#expected-loss", ("E11",),
          lambda: _asymptotic(Laplace, el.collusion_laplace_loss)),
        C("s001-eq17", "eq (17)", "k colluders, staircase: E|med_k| ≈ √(2/(πk))√α/(1−α) for large k",
          NOT_REFUTED, "docs/math.md#expected-loss", ("E11",),
          lambda: _asymptotic(Staircase, el.collusion_staircase_loss)),
        C("s001-eq18", "eq (18)", "k colluders, geometric: E|med_k| ≈ (1+α)/((1−α)√(2πk))", REFUTED,
          "docs/math.md#expected-loss", ("E11",), _eq18),
        C("s001-lemma1-laplace-geometric", "Lemma 1", "for Laplace and geometric noise the sample median "
          "is an MLE of θ", NOT_REFUTED, "docs/math.md#collusion-mle", (), _lemma1_laplace_geometric),
        C("s001-lemma1-staircase", "Lemma 1", "for staircase noise the sample median is an MLE of θ",
          REFUTED, "docs/math.md#collusion-mle", ("E12",), _lemma1_staircase),
        C("s001-eq22", "eq (22)", "(8)-(9) equals (1−α)/(2Δ√α)·e^{−ε⌈|x|/Δ − γ⌉}", NOT_REFUTED,
          "docs/math.md#staircase", (), _eq22),
        C("s001-eq23", "eq (23)", "the staircase log-likelihood is −(ε/Δ)Σ⌈|m_i − θ| − γΔ⌉ + const",
          REFUTED, "docs/math.md#e12", ("E12",), _eq23),
        C("s001-gamma-star", "§2.5", "γ = √α/(1+√α) minimises the expected noise amplitude",
          NOT_REFUTED, "docs/math.md#staircase", (), _gamma_star),
        C("s001-staircase-dp", "§2.5", "the staircase is ε-DP for sensitivity Δ (every γ)", NOT_REFUTED,
          "docs/math.md#staircase", (), _staircase_dp),
        C("s001-3-geometric-bayes", "§3", "geometric + optimal remap is optimal for every Bayesian user "
          "(count query; Ghosh et al.)", NOT_REFUTED, "docs/math.md#geometric", (), _geometric_bayes),
        C("s001-3-geometric-minimax-random", "§3", "geometric + a randomised remap is optimal for "
          "risk-averse (minimax) users (Gupte and Sundararajan)", NOT_REFUTED, "docs/math.md#geometric", (),
          lambda: _geometric_minimax(False)),
        C("s001-3-geometric-minimax-deterministic", "§3, §4.2.3", "geometric + a deterministic remap "
          "(the seed's round()) is optimal for risk-averse users", REFUTED, "docs/math.md#geometric", (),
          lambda: _geometric_minimax(True)),
        C("s001-5.2-heuristic-collusion", "§5.2.3 (4)", "the pre-rounding heuristic's loss does not "
          "vanish under collusion", NOT_REFUTED, "docs/math.md#pre-rounding", (), _heuristic_collusion),
    )
