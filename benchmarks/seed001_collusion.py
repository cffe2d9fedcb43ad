"""Collusion (Chen, Pal and Golubchik (2016) §5.3, Fig. 4): E|median of k releases| for k = 1…100 vs Chen, Pal and Golubchik (2016) eqs (16)–(18).

k colluders pool their releases of the same query and take the low sample median X_(⌈k/2⌉) (an MLE
for Laplace and geometric noise, Chen, Pal and Golubchik (2016) Lemma 1 / docs/math.md#collusion-mle). For ρ ∈ {0.2, 0.5, 0.8} and Δ = 1:

* Laplace and staircase (γ*): the empirical mean over T trials, with a normal interval at level
  1 − 0.05/m (Bonferroni over every (noise, ρ, k) point), must contain the **exact** E|X_(⌈k/2⌉)|
  (:func:`dpaudit.reference.analysis.expected_loss.expected_abs_median`) at every k; exit status 1 otherwise.
  Eqs (16)/(17) are large-k approximations: their relative error is printed (about 20% at k = 5).
* Geometric: the exact E|med_k| decays exponentially (corrected (18), docs/math.md#expected-loss), while Chen, Pal and Golubchik (2016) eq (18)
  decays like 1/√k. Medians are mostly exactly 0, so instead of a normal interval the script checks
  P(med_k ≠ 0) against its Clopper–Pearson interval (statsmodels, same Bonferroni level); where at
  least 30 medians are non-zero it also checks that eq (18) lies outside the interval of the mean,
  and it prints eq (18) / exact (about 3·10^12 at k = 100, ρ = 0.2).

    python benchmarks/seed001_collusion.py            # T = 20000 trials per k
    python benchmarks/seed001_collusion.py --quick    # T = 2000, k = 1…30

Writes ``benchmarks/results/seed001_collusion.{json,txt,svg}``.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from dpaudit.reference import collusion as col
from dpaudit.reference.analysis import expected_loss as el
from dpaudit.reference.geometric import Geometric
from dpaudit.reference.laplace import Laplace
from dpaudit.reference.staircase import Staircase
from seed001_common import mean_interval, pyplot, save

SEED = 20260303
RHOS = (0.2, 0.5, 0.8)


def p_nonzero(g: Geometric, k: int) -> float:
    """P(X_(j) ≠ 0), j = ⌈k/2⌉: P(#{X > 0} ≥ k − j + 1) + P(#{X < 0} ≥ j)."""
    j = (k + 1) // 2
    s = float(g.sf(0))
    return float(stats.binom.sf(k - j, k, s) + stats.binom.sf(j - 1, k, s))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    trials, ks = (2000, np.arange(1, 31)) if args.quick else (20000, np.arange(1, 101))
    m = 3 * len(RHOS) * ks.size
    alpha = 0.05 / m
    streams = iter(np.random.SeedSequence(SEED).spawn(m))
    rows, bad = [], []
    lines = [f"T = {trials} trials per k; Bonferroni α = 0.05/{m} per interval (family-wise 95%)",
             f"{'noise':10s} {'rho':>4s} {'k':>4s} {'exact':>11s} {'mean':>11s} {'ci_lo':>11s} {'ci_hi':>11s} "
             f"{'asymptotic':>11s} {'rel.err':>8s}  check"]
    for rho in RHOS:
        eps = -math.log(rho)
        noises = {"Laplace": (Laplace(eps), el.collusion_laplace_loss),
                  "Staircase": (Staircase(eps), el.collusion_staircase_loss),
                  "Geometric": (Geometric(eps), el.collusion_geometric_loss_seed)}
        for name, (noise, formula) in noises.items():
            for k in ks:
                k = int(k)
                rng = np.random.Generator(np.random.PCG64(next(streams)))
                med = col.collusion_median(noise.noise(rng, (trials, k)), axis=1)
                a = np.abs(med).astype(float)
                exact = el.expected_abs_median(noise, k)
                asym = float(formula(rho, k))
                row = {"noise": name, "rho": rho, "k": k, "exact": exact, "formula": asym,
                       "formula_rel_error": asym / exact - 1 if exact > 0 else math.inf}
                if name != "Geometric":
                    mean, lo, hi = mean_interval(a, alpha)
                    ok = lo <= exact <= hi
                    row.update(mean=mean, ci=[lo, hi], inside=ok)
                else:
                    nz = int(np.count_nonzero(a))
                    plo, phi = proportion_confint(nz, trials, alpha=alpha, method="beta")
                    p = p_nonzero(noise, k)
                    ok = plo <= p <= phi
                    # Where at least 30 medians are non-zero the normal interval of the mean is
                    # usable; there eq (18) must lie outside it. Elsewhere compare with the exact value.
                    mean, lo, hi = mean_interval(a, alpha) if nz >= 30 else (float(a.mean()), math.nan, math.nan)
                    row.update(mean=mean, nonzero=nz, p_nonzero_exact=p, p_ci=[plo, phi], inside=ok,
                               mean_ci=[lo, hi], eq18_outside_ci=(nz >= 30 and not lo <= asym <= hi),
                               eq18_over_exact=asym / exact if exact > 0 else math.inf)
                if not ok:
                    bad.append((name, rho, k))
                rows.append(row)
                if k in (1, 2, 5, 10, 25, 50, 100) or not ok:
                    lines.append(f"{name:10s} {rho:4.1f} {k:4d} {exact:11.4g} {mean:11.4g} {lo:11.4g} {hi:11.4g} "
                                 f"{asym:11.4g} {row['formula_rel_error']:8.1%}  {'ok' if ok else 'OUTSIDE'}")
    geo = [r for r in rows if r["noise"] == "Geometric"]
    usable = [r for r in geo if r["nonzero"] >= 30]
    wrong18 = sum(r["eq18_outside_ci"] for r in usable)
    lines.append(f"exact value outside its interval: {len(bad)} of {m} {bad if bad else ''}")
    lines.append(f"Chen, Pal and Golubchik (2016) eq (18) outside the interval of the empirical mean at {wrong18} of {len(usable)} geometric "
                 f"points with >= 30 non-zero medians; eq (18) / exact at k = {ks[-1]}: "
                 + ", ".join(f"{r['eq18_over_exact']:.3g} (ρ = {r['rho']})" for r in geo if r["k"] == ks[-1]))
    for rho in RHOS:
        r5 = {r["noise"]: r for r in rows if r["rho"] == rho and r["k"] == 5}
        lines.append(f"rho = {rho}: eq (16) error at k = 5: {r5['Laplace']['formula_rel_error']:+.1%}, "
                     f"eq (17): {r5['Staircase']['formula_rel_error']:+.1%}")
    print("\n".join(lines))

    plt = pyplot()
    fig, axes = plt.subplots(1, len(RHOS), figsize=(13, 4.2), sharey=False)
    for ax, rho in zip(axes, RHOS):
        for c, name in enumerate(("Laplace", "Staircase", "Geometric")):
            pts = [r for r in rows if r["noise"] == name and r["rho"] == rho]
            kk = [r["k"] for r in pts]
            ax.plot(kk, [r["exact"] for r in pts], color=f"C{c}", lw=1.2, label=f"{name} exact")
            ax.plot(kk, [r["formula"] for r in pts], color=f"C{c}", lw=1, ls="--",
                    label={"Laplace": "eq (16)", "Staircase": "eq (17)", "Geometric": "eq (18) (wrong)"}[name])
            ax.plot(kk, [max(r["mean"], 1e-12) for r in pts], "o", ms=2, color=f"C{c}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(1e-7, None)
        ax.set_title(f"ρ = {rho} (ε = {-math.log(rho):.2f})")
        ax.set_xlabel("colluders k")
    axes[0].set_ylabel("E|low median of k releases − truth|")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Chen, Pal and Golubchik (2016) Fig. 4: collusion, exact (lines), eqs (16)-(18) (dashed), {trials} trials (dots)")
    record = {"quick": args.quick, "seed": SEED, "trials": trials, "bonferroni_alpha": alpha,
              "family_confidence": 0.95, "rows": rows, "outside": bad, "all_inside": not bad,
              "eq18_outside_ci": wrong18, "geometric_points_with_usable_ci": len(usable)}
    for p in save("collusion", record, lines, fig):
        print("wrote", p)
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
