"""Curve claims audited over the whole curve: the must-show list, recorded in
``benchmarks/results/curves.json``.

1. ``calibrated``: the Gaussian mechanism with σ = 1 on a pair at distance 1 (σ calibrated to
   ρ = 0.5 and to μ = 1) is NOT REFUTED at 99.9% for both claims, at the default budget.
2. ``sigma_0.8``: the same code with σ × 0.8 (true μ = 1.25, ρ = 0.78): the curve audit's
   refutation rate over 5 seeds per budget, and the smallest budget at which all 5 refute, side by
   side with the best single (ε, δ = 10⁻⁶) audit of the same code at the same confidence
   (``dpaudit.audit(f, epsilon=ε(10⁻⁶), delta=1e-6, float="off")``, ε(10⁻⁶) read off the claimed
   curve), at budgets up to 4·10⁹.
3. ``mu_lower_bound``: μ_LB / μ at 10⁶ samples for a scalar Gaussian (μ = 0.5 and 1), and at 10⁷
   for a 10-bin Gaussian histogram under replace (μ = 1), at 95%.
4. ``opendp``: OpenDP's Gaussian measurement at scale 4 (ρ = 1/32), its own profile as the claim
   (δ(0) = 0.151) and the exact Gaussian curve (μ = 1/4, δ(0) = 0.0995): NOT REFUTED, and the
   lower curve at ε = 0 within 0.01 of the exact δ, at 10⁶ samples and 95%.
5. ``dp_sgd``: one Poisson-subsampled Gaussian step (q = 0.1, σ = 1, records in [−1, 1], a 1-D
   model's clipped gradients) against dp-accounting's PLD for its parameters: NOT REFUTED; the
   same code with σ halved: REFUTED; 10⁶ samples, 99.9%.

Run: ``python benchmarks/curves.py`` (about 7 minutes on 2 cores; ``--quick`` for a smoke run
that writes ``curves_quick.json``). Needs dp-accounting and opendp (the ``curves`` and
``libraries`` extras).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._record import RESULTS, finish, machine, write_json  # noqa: E402

import dpaudit  # noqa: E402
from dpaudit.curves import claims as C  # noqa: E402
from dpaudit.curves import curve_audit  # noqa: E402

GAUSS = dict(neighbours="linf", domain=(0, 1), size=1)
SEEDS = (101, 102, 103, 104, 105)


def gaussian(sigma: float):
    """``data[0] + N(0, σ²)``: on linf neighbours (sensitivity 1), exactly (1/σ)-GDP and 1/(2σ²)-zCDP."""
    def f(data, rng, size=None):
        return data[0] + rng.normal(0.0, sigma, size=size)
    f.__name__ = f.__qualname__ = f"gaussian_sigma_{sigma:g}".replace(".", "_")
    return f


SQRT2 = math.sqrt(2.0)


def histogram(data, rng, size=None):
    """Counts of records in [0, 1] in 10 bins of width 0.1, plus N(0, 2) each: replacing a record
    moves two counts by 1 (ℓ2 sensitivity √2), so the release is exactly 1-GDP."""
    bins = np.minimum((np.asarray(data) * 10).astype(int), 9)
    counts = np.bincount(bins, minlength=10).astype(float)
    k = 1 if size is None else size
    out = counts[None, :] + rng.normal(0.0, SQRT2, size=(k, 10))
    return out[0] if size is None else out


def sgd_step(sigma: float, q: float = 0.1):
    """One DP-SGD step of a 1-D model: each record (its clipped gradient, in [−1, 1]) joins the
    batch with probability q (Poisson sampling), the released update is the batch's sum plus
    N(0, σ²)."""
    def f(data, rng, size=None):
        data = np.asarray(data, dtype=float)
        k = 1 if size is None else size
        mask = rng.random((k, data.size)) < q
        out = (mask * data[None, :]).sum(axis=1) + rng.normal(0.0, sigma, size=k)
        return out[0] if size is None else out
    f.__name__ = f.__qualname__ = f"sgd_step_sigma_{sigma:g}".replace(".", "_")
    return f


def row(r, **extra) -> dict:
    """The figures of one curve audit."""
    rec = r.to_record()
    pt = rec["point"] or {}
    g = rec["grid"]
    return {**extra, "claim": rec["claim"]["text"], "verdict": rec["verdict"], "samples": rec["samples"],
            "confidence": rec["confidence"], "seed": rec["seed"],
            "delta_claim_at_0": g["delta_claim"][0], "delta_lower_bound_at_0": g["delta_lower_bound"][0],
            "point_epsilon": pt.get("epsilon"), "point_delta_claim": pt.get("delta_claim"),
            "point_delta_lower_bound": pt.get("delta_lower_bound"),
            "point_event": (pt.get("counterexample") or {}).get("event", {}).get("text"),
            "pair": rec["details"].get("pair_label"), "score": rec["details"].get("score"),
            "mu_lower_bound": rec["mu_lower_bound"], "rho_lower_bound": rec["rho_lower_bound"],
            "refutable": rec["refutable"]["text"], "elapsed_s": round(rec["elapsed_s"], 2),
            "reproduce": rec["reproduce"]}


def say(line: str) -> None:
    print(line, flush=True)


def calibrated(quick: bool) -> list:
    n = 200_000 if quick else 4_000_000
    out = []
    for kw in ({"rho": 0.5}, {"mu": 1.0}):
        r = curve_audit(gaussian(1.0), **kw, **GAUSS, samples=n, confidence=0.999, seed=11)
        out.append(row(r, sigma=1.0))
        say(f"calibrated σ=1 {kw}: {r.verdict.value} at {r.samples:,} samples, μ_LB {r.mu_lower_bound:.4f}")
    return out


def point_epsilon(claim) -> float:
    """ε at which the claimed curve reaches δ = 10⁻⁶ (bisection)."""
    from scipy.optimize import brentq

    return float(brentq(lambda e: float(claim.delta(e)[0]) - 1e-6, 1e-3, 40.0, xtol=1e-10))


def oracle_samples(eps: float, shift: float, confidence: float, delta: float = 1e-6) -> int:
    """The samples per dataset an (ε, δ) point audit needs when it knows the best event in
    advance (a threshold on the output of N(shift, 1) against N(0, 1), no search, no selection,
    no look): the smallest n on a grid of 10^(k/4) at which some threshold's expected counts give
    ln((p_lo − δ)/q_hi) > ε with Clopper-Pearson bounds at α/2 each."""
    from scipy.stats import norm

    from dpaudit.estimators.bounds import cp_lower, cp_upper

    alpha = 1.0 - confidence
    t = np.linspace(0.0, 9.0, 901)
    p, q = norm.sf(t - shift), norm.sf(t)
    for k in range(16, 60):
        n = int(round(10 ** (k / 4)))
        p_lo = cp_lower(np.floor(p * n), n, alpha / 2)
        q_hi = cp_upper(np.ceil(q * n), n, alpha / 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            ok = (p_lo - delta) > np.exp(eps) * q_hi
        if np.any(ok):
            return n
    return -1


def sigma_08(quick: bool) -> dict:
    budgets = (10_000, 20_000, 50_000, 100_000, 200_000) if quick else \
        (10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000, 2_000_000, 4_000_000)
    point_budgets = (10**6, 10**7) if quick else (10**6, 10**7, 10**8, 10**9, 4 * 10**9)
    seeds = SEEDS[:2] if quick else SEEDS
    f = gaussian(0.8)
    out = {}
    for name, kw, claim in (("rho=0.5", {"rho": 0.5}, C.ZCDP(0.5)), ("mu=1", {"mu": 1.0}, C.GaussianDP(1.0))):
        ladder = []
        needed = None
        for n in budgets:
            rs = [curve_audit(f, **kw, **GAUSS, samples=n, confidence=0.999, seed=s) for s in seeds]
            k = sum(r.refuted for r in rs)
            ladder.append({"samples": n, "refuted": k, "of": len(seeds),
                           "example": row(rs[0])})
            say(f"σ×0.8 {name} curve audit at {n:,}: {k}/{len(seeds)} refuted")
            if k == len(seeds) and needed is None:
                needed = n
                if n >= 1_000_000:
                    break
        eps = point_epsilon(claim)
        point = []
        point_needed = None
        for n in point_budgets:
            t0 = time.monotonic()
            r = dpaudit.audit(f, epsilon=eps, delta=1e-6, **GAUSS, samples=n, confidence=0.999,
                              seed=SEEDS[0], float="off")
            point.append({"samples_budget": n, "samples": r.samples, "verdict": r.verdict.value,
                          "epsilon_lower_bound": r.epsilon_lower_bound,
                          "delta_lower_bound": r.delta_lower_bound,
                          "elapsed_s": round(time.monotonic() - t0, 2), "reproduce": r.reproduce})
            say(f"σ×0.8 {name} point audit (ε={eps:.4f}, δ=1e-6) at {n:,}: {r.verdict.value}, "
                f"ε_LB {r.epsilon_lower_bound:.3f}")
            if r.refuted:
                point_needed = n
                break
        true_delta = float(C.gdp_delta(1.25, eps)[0])
        oracle = oracle_samples(eps, 1.25, 0.999)
        say(f"σ×0.8 {name}: an oracle point audit (the best threshold known in advance) needs "
            f"{oracle:,} samples per dataset")
        out[name] = {"curve_audit": ladder, "curve_audit_needed": needed,
                     "point_claim": {"epsilon": eps, "delta": 1e-6,
                                     "true_delta_at_epsilon": true_delta},
                     "point_audit": point, "point_audit_needed": point_needed,
                     "point_oracle_samples_per_dataset": oracle,
                     "ratio": None if needed is None or point_needed is None else point_needed / needed,
                     "ratio_at_least": None if needed is None or point_needed is not None
                     else point_budgets[-1] / needed}
    return out


def mu_lower_bound(quick: bool) -> list:
    out = []
    n = 100_000 if quick else 1_000_000
    for mu in (0.5, 1.0):
        r = curve_audit(gaussian(1.0 / mu), mu=mu, **GAUSS, samples=n, confidence=0.95, seed=21)
        out.append(row(r, mechanism="scalar Gaussian", true_mu=mu, ratio=r.mu_lower_bound / mu,
                       target=0.95, met=r.mu_lower_bound >= 0.95 * mu))
        say(f"μ_LB scalar μ={mu}: {r.mu_lower_bound:.4f} ({r.mu_lower_bound / mu:.3f} × μ) at {r.samples:,}")
    n = 200_000 if quick else 10_000_000
    r = curve_audit(histogram, mu=1.0, neighbours="replace", domain=(0, 1), size=10, samples=n,
                    confidence=0.95, seed=22)
    out.append(row(r, mechanism="10-bin Gaussian histogram, replace", true_mu=1.0,
                   ratio=r.mu_lower_bound, target=0.9, met=r.mu_lower_bound >= 0.9))
    say(f"μ_LB histogram μ=1: {r.mu_lower_bound:.4f} at {r.samples:,}")
    return out


def opendp(quick: bool) -> dict:
    import opendp.prelude as dp

    from dpaudit.adapters.opendp import target

    dp.enable_features("contrib")
    m = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=4.0)
    profile = dp.c.make_zCDP_to_approxDP(m).map(1.0)
    spec = target(m, d_in=1.0, delta=1e-6)
    exact0 = float(C.gdp_delta(0.25, 0.0)[0])
    n = 100_000 if quick else 1_000_000
    out = {"rho": m.map(1.0), "profile_delta_0": profile.delta(0.0),
           "zcdp_conversion_delta_0": float(C.zcdp_delta(m.map(1.0), 0.0)[0]),
           "exact_gaussian_delta_0": exact0, "rows": []}
    for name, kw in (("OpenDP profile", {"profile": profile}), ("exact Gaussian curve, μ = 1/4", {"mu": 0.25})):
        r = curve_audit(spec, **kw, samples=n, confidence=0.95, seed=31)
        lb0 = r.delta_lower_bound[0]
        out["rows"].append(row(r, claimed=name, within_0_01_of_exact=abs(lb0 - exact0) <= 0.01))
        say(f"OpenDP scale 4, {name}: {r.verdict.value}, δ_LB(0) {lb0:.4f} vs claim {r.delta_claim[0]:.4f}, "
            f"exact {exact0:.4f}, {r.samples:,} samples")
    return out


def dp_sgd(quick: bool) -> list:
    from dp_accounting.pld import privacy_loss_distribution as pld

    claim = pld.from_gaussian_mechanism(standard_deviation=1.0, sensitivity=1.0, sampling_prob=0.1)
    n = 200_000 if quick else 1_000_000
    out = []
    for sigma in (1.0, 0.5):
        r = curve_audit(sgd_step(sigma), profile=claim, neighbours="add-remove", domain=(-1, 1), size=10,
                        samples=n, confidence=0.999, seed=41)
        out.append(row(r, sigma=sigma, q=0.1, claimed="dp-accounting PLD, σ = 1, q = 0.1"))
        say(f"DP-SGD step σ={sigma} vs PLD(σ=1, q=0.1): {r.verdict.value} at {r.samples:,}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run at small budgets")
    ap.add_argument("--out", type=Path, default=None,
                    help="where to write the record (default benchmarks/results/curves.json, "
                         "curves_quick.json with --quick)")
    args = ap.parse_args()
    from importlib.metadata import version

    record = {"machine": machine(dp_accounting=version("dp-accounting"), opendp=version("opendp")),
              "command": " ".join(["python"] + sys.argv), "quick": args.quick}
    t0 = time.monotonic()
    record["calibrated"] = calibrated(args.quick)
    record["sigma_0.8"] = sigma_08(args.quick)
    record["mu_lower_bound"] = mu_lower_bound(args.quick)
    record["opendp"] = opendp(args.quick)
    record["dp_sgd"] = dp_sgd(args.quick)
    record["elapsed_s"] = round(time.monotonic() - t0, 1)
    finish(record["machine"])
    path = write_json(args.out or RESULTS / ("curves_quick.json" if args.quick else "curves.json"), record)
    say(f"wrote {path}")


if __name__ == "__main__":
    main()
