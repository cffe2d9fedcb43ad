"""Oblivious additive noise: Laplace, geometric, staircase and pre-rounding (Chen, Pal and Golubchik (2016); docs/math.md#oblivious-noise).

Series and integrals enter through their closed forms, stated in each claim and never proved
here: Σ_{k≥0} ρ^k = 1/(1 − ρ), Σ_{k≥0} k ρ^k = ρ/(1 − ρ)² for ρ ∈ (0, 1), and
∫ e^{−a|z|} dz = 2/a for a > 0. Logarithms of densities enter as exponents: ln(ρ^k) = −kε with
ρ = e^{−ε}. Everything else is exact real (or integer) arithmetic checked by z3.
"""

from __future__ import annotations

from fractions import Fraction

import z3

from dpaudit.formal.encode import absolute, num
from dpaudit.formal.claim import register
from dpaudit.formal.result import Status
from dpaudit.formal.solver import Query

__all__ = ["laplace_loss_queries"]


def _open_unit(x: z3.ArithRef) -> z3.BoolRef:
    return z3.And(x > 0, x < 1)


def laplace_loss_queries(bound_factor: int | Fraction = 1) -> list[Query]:
    """|ε|y − c|/Δ − ε|y − c'|/Δ| ≤ factor·ε whenever |c − c'| ≤ Δ (factor 1 is the claim)."""
    y, c, c2, sens, eps = z3.Reals("y c c_prime Delta epsilon")
    loss = eps * absolute(y - c) / sens - eps * absolute(y - c2) / sens
    facts = (sens > 0, eps > 0, absolute(c - c2) <= sens)
    bound = num(bound_factor) * eps
    shown = (("loss", loss), ("bound", bound))
    return [Query("bound", "|c - c'| <= Delta implies |eps|y-c|/Delta - eps|y-c'|/Delta| <= bound",
                  facts + (absolute(loss) > bound,), shown=shown),
            Query("bound-attained", "some y, c, c' attain the bound", facts + (absolute(loss) == bound,),
                  needs="sat", shown=shown)]


@register("laplace-loss-bound", source="Chen, Pal & Golubchik 2016, §2 (Laplace mechanism); docs/math.md#laplace",
          statement="""For all real y, c, c' with |c − c'| ≤ Δ (Δ > 0, ε > 0), the Laplace privacy
          loss ln p(y − c)/p(y − c') = ε|y − c'|/Δ − ε|y − c|/Δ has absolute value ≤ ε, and some
          y attains ε: releasing T + Lap(Δ/ε) is ε-DP for sensitivity Δ.""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Chen, Pal & Golubchik 2016",), spec=("docs/math.md#laplace",),
          mechanisms=("laplace",))
def _laplace() -> list[Query]:
    return laplace_loss_queries(1)


@register("laplace-s1-eq6-normalisation", source="Chen, Pal & Golubchik 2016, eq (6) as written; docs/math.md#laplace, #e8",
          statement="""Chen, Pal and Golubchik (2016) eq (6) as written, p(z) = (1/(2Δ))e^{−ε|z|/Δ}, is a density for every
          ε > 0. FALSE: with ∫e^{−a|z|}dz = 2/a it integrates to 1/ε; z3 returns an ε ≠ 1.""",
          expected=Status.REFUTED, assumes_exact_reals=True, seeds=("Chen, Pal & Golubchik 2016",), spec=("docs/math.md#laplace", "docs/math.md#e8"),
          mechanisms=("laplace",))
def _laplace_eq6() -> list[Query]:
    sens, eps = z3.Reals("Delta epsilon")
    mass = (1 / (2 * sens)) * (2 * sens / eps)
    return [Query("mass-one", "(1/(2 Delta)) * (2 Delta/eps) = 1", (sens > 0, eps > 0, mass != 1),
                  shown=(("mass", mass),))]


@register("geometric-normalisation", source="Chen, Pal & Golubchik 2016, eq (7) corrected; docs/math.md#geometric",
          statement="""For every ρ ∈ (0, 1), P(K = k) = ((1 − ρ)/(1 + ρ))ρ^{|k|} on ℤ has total
          mass ((1 − ρ)/(1 + ρ))(1 + 2ρ/(1 − ρ)) = 1 and E|K| = ((1 − ρ)/(1 + ρ))·2ρ/(1 − ρ)²
          = 2ρ/(1 − ρ²) (geometric series in closed form). With ratio r = ρ^{d/Δ} the same holds
          for the quantised version on dℤ.""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Chen, Pal & Golubchik 2016",), spec=("docs/math.md#geometric",),
          mechanisms=("geometric",))
def _geometric_norm() -> list[Query]:
    rho = z3.Real("rho")
    c = (1 - rho) / (1 + rho)
    return [Query("mass-one", "c * (1 + 2 rho/(1 - rho)) = 1",
                  (_open_unit(rho), c * (1 + 2 * rho / (1 - rho)) != 1)),
            Query("mean-abs", "c * 2 rho/(1 - rho)^2 = 2 rho/(1 - rho^2)",
                  (_open_unit(rho), c * 2 * rho / ((1 - rho) * (1 - rho)) != 2 * rho / (1 - rho * rho)))]


@register("geometric-s1-eq7-normalisation", source="Chen, Pal & Golubchik 2016, eq (7) as written; docs/math.md#geometric, #e9",
          statement="""Chen, Pal and Golubchik (2016) eq (7) as written, P(K = k) = ((1 + ρ)/(1 − ρ))ρ^{|k|}, sums to 1 for
          every ρ ∈ (0, 1). FALSE: the total is ((1 + ρ)/(1 − ρ))² > 1; z3 returns a ρ.""",
          expected=Status.REFUTED, assumes_exact_reals=True, seeds=("Chen, Pal & Golubchik 2016",), spec=("docs/math.md#geometric", "docs/math.md#e9"),
          mechanisms=("geometric",))
def _geometric_eq7() -> list[Query]:
    rho = z3.Real("rho")
    mass = ((1 + rho) / (1 - rho)) * (1 + 2 * rho / (1 - rho))
    return [Query("mass-one", "((1+rho)/(1-rho)) * (1 + 2 rho/(1 - rho)) = 1",
                  (_open_unit(rho), mass != 1), shown=(("mass", mass),))]


@register("geometric-dp-ratio", source="Chen, Pal & Golubchik 2016, eq (10) corrected; docs/math.md#geometric",
          statement="""Quantised geometric noise on dℤ with Δ = m·d (m ≥ 1 an integer) and
          ln P(X = kd) = const − (εd/Δ)|k|: for all integers k, k' with |kd − k'd| ≤ Δ,
          |ln P(X = kd) − ln P(X = k'd)| = (εd/Δ)·||k| − |k'|| ≤ ε, and some shift attains ε. So
          T + dK is ε-DP for true values on dℤ with sensitivity Δ (d = Δ = 1: the plain
          geometric mechanism; d = Δ = 10: the pre-rounding heuristic of §2.6).""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Chen, Pal & Golubchik 2016",), spec=("docs/math.md#geometric", "docs/math.md#pre-rounding"),
          mechanisms=("geometric", "prerounding"))
def _geometric_ratio() -> list[Query]:
    k, k2, m = z3.Ints("k k_prime m")
    d, eps = z3.Reals("d epsilon")
    sens = m * d
    diff = eps * d / sens * absolute(z3.ToReal(absolute(k) - absolute(k2)))
    facts = (m >= 1, d > 0, eps > 0, absolute(z3.ToReal(k - k2)) * d <= sens)
    return [Query("bound", "|kd - k'd| <= Delta implies (eps d/Delta) ||k| - |k'|| <= eps",
                  facts + (diff > eps,)),
            Query("bound-attained", "some k, k' attain eps", facts + (diff == eps,), needs="sat")]


def _staircase_pieces(rho: z3.ArithRef, gamma: z3.ArithRef, sens: z3.ArithRef):
    den = gamma + (1 - gamma) * rho
    A = (1 - rho) / (2 * sens * den)
    mean_abs = sens * (rho / (1 - rho) + (gamma * gamma + rho * (1 - gamma * gamma)) / (2 * den))
    return den, A, mean_abs


@register("staircase-normalisation", source="Chen, Pal & Golubchik 2016, eqs (8)-(9); docs/math.md#staircase",
          statement="""For every ρ ∈ (0, 1), Δ > 0, γ ∈ [0, 1], the staircase density
          f = A·ρ^k on |z| ∈ [kΔ, (k + γ)Δ) and A·ρ^{k+1} on [(k + γ)Δ, (k + 1)Δ), with
          A = (1 − ρ)/(2Δ(γ + (1 − γ)ρ)), integrates to
          2·Σ_k (AρᵏγΔ + Aρ^{k+1}(1 − γ)Δ) = 2AΔ(γ + (1 − γ)ρ)/(1 − ρ) = 1.""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Chen, Pal & Golubchik 2016",), spec=("docs/math.md#staircase",),
          mechanisms=("staircase",))
def _staircase_norm() -> list[Query]:
    rho, gamma, sens = z3.Reals("rho gamma Delta")
    den, A, _ = _staircase_pieces(rho, gamma, sens)
    return [Query("mass-one", "2 A Delta (gamma + (1-gamma) rho)/(1 - rho) = 1",
                  (_open_unit(rho), sens > 0, gamma >= 0, gamma <= 1,
                   2 * A * sens * den / (1 - rho) != 1))]


@register("staircase-optimal-gamma", source="Chen, Pal & Golubchik 2016, eq (12) and §2.3's γ*; docs/math.md#staircase, #expected-loss",
          statement="""With s = √ρ (s ∈ (0, 1), ρ = s²) and γ* = s/(1 + s) = 1/(1 + e^{ε/2}):
          γ* + (1 − γ*)ρ = √ρ, A(γ*) = (1 − ρ)/(2Δ√ρ), and for every γ ∈ [0, 1]
          E|Z|(γ) = Δ[ρ/(1 − ρ) + (γ² + ρ(1 − γ²))/(2(γ + (1 − γ)ρ))] ≥ E|Z|(γ*) = Δ√ρ/(1 − ρ):
          γ* is the optimal step and Chen, Pal and Golubchik (2016) eq (12) is exact (E|Z| as derived in docs/math.md#staircase).""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Chen, Pal & Golubchik 2016",), spec=("docs/math.md#staircase", "docs/math.md#expected-loss"),
          mechanisms=("staircase",))
def _staircase_gamma() -> list[Query]:
    s, gamma, sens = z3.Reals("sqrt_rho gamma Delta")
    rho = s * s
    g_star = s / (1 + s)
    den_star, A_star, mean_star = _staircase_pieces(rho, g_star, sens)
    _, _, mean_g = _staircase_pieces(rho, gamma, sens)
    facts = (_open_unit(s), sens > 0)
    return [
        Query("gamma-star-identity", "gamma* + (1 - gamma*) rho = sqrt(rho) and A(gamma*) = "
              "(1 - rho)/(2 Delta sqrt(rho))",
              facts + (z3.Or(den_star != s, A_star != (1 - rho) / (2 * sens * s)),)),
        Query("mean-at-gamma-star", "E|Z|(gamma*) = Delta sqrt(rho)/(1 - rho)",
              facts + (mean_star != sens * s / (1 - rho),)),
        Query("gamma-star-optimal", "E|Z|(gamma) >= E|Z|(gamma*) for gamma in [0, 1]",
              facts + (gamma >= 0, gamma <= 1, mean_g < mean_star)),
    ]


@register("staircase-dp-ratio", source="Chen, Pal & Golubchik 2016, eqs (8)-(9); docs/math.md#staircase",
          statement="""The staircase density is A·ρ^{e(z)} with e(z) = k if |z|/Δ − k < γ and
          k + 1 otherwise, k = ⌊|z|/Δ⌋; it depends on z only through w = z/Δ. For every
          γ ∈ [0, 1] and all w, w' with |w − w'| ≤ 1 (|z − z'| ≤ Δ), |e(w) − e(w')| ≤ 1, so
          |ln f(z) − ln f(z')| = ε|e(w) − e(w')| ≤ ε; and some shift attains ε. Staircase
          noise is ε-DP for sensitivity Δ (integer and real arithmetic with floor).""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Chen, Pal & Golubchik 2016",), spec=("docs/math.md#staircase",),
          mechanisms=("staircase",))
def _staircase_ratio() -> list[Query]:
    w, w2, gamma = z3.Reals("w w_prime gamma")

    def e(x: z3.ArithRef) -> z3.ArithRef:
        t = absolute(x)
        k = z3.ToInt(t)
        return z3.If(t - k < gamma, k, k + 1)

    facts = (gamma >= 0, gamma <= 1, absolute(w - w2) <= 1)
    jump = absolute(e(w) - e(w2))
    return [Query("bound", "|w - w'| <= 1 implies |e(w) - e(w')| <= 1", facts + (jump > 1,)),
            Query("bound-attained", "some w, w' have |e(w) - e(w')| = 1", facts + (jump == 1,),
                  needs="sat")]


@register("prerounding-sensitivity", source="Chen, Pal & Golubchik 2016, §5.2.2; docs/math.md#pre-rounding",
          statement="""With R(q) = −10 on [−10, −5), 0 on [−5, 5) and 10 on [5, 10]: for all
          q, q' ∈ [−10, 10] with |q − q'| ≤ 10, |R(q) − R(q')| ≤ 10 (the half-open cells have
          width Δ = 10), so R(q) + 10·K with K two-sided geometric is ε-DP
          (geometric-dp-ratio with d = Δ = 10).""",
          expected=Status.PROVED, assumes_exact_reals=True, seeds=("Chen, Pal & Golubchik 2016",), spec=("docs/math.md#pre-rounding",),
          mechanisms=("prerounding",))
def _prerounding() -> list[Query]:
    q, q2 = z3.Reals("q q_prime")

    def R(x: z3.ArithRef) -> z3.ArithRef:
        return z3.If(x < -5, z3.RealVal(-10), z3.If(x < 5, z3.RealVal(0), z3.RealVal(10)))

    return [Query("bound", "|q - q'| <= 10 implies |R(q) - R(q')| <= 10",
                  (q >= -10, q <= 10, q2 >= -10, q2 <= 10, absolute(q - q2) <= 10,
                   absolute(R(q) - R(q2)) > 10))]
