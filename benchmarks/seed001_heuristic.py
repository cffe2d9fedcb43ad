"""The pre-rounding heuristic against the staircase and Laplace (Chen, Pal and Golubchik (2016) §5.2, Figs. 3 and 4).

Setting of Chen, Pal and Golubchik (2016) Fig. 3: Δ = 10, query domain [−10, 10] (n = 100 records only shapes the priors):

* mean query: q ~ N(0, 1) truncated to [−10, 10];
* max query:  q = −10 + 20·B, B ~ Beta(100, 1).

Losses E|M(q) − q| (docs/math.md#expected-loss, #pre-rounding), exact: Laplace Δ/ε, staircase Δ√ρ/(1 − ρ), and for the
heuristic P(K = 0)·E_q|R(q) − q| + Δ·2ρ/(1 − ρ²) with E_q|R(q) − q| by quadrature. For every
ρ = 0.05…0.95 each exact value must lie inside the normal interval of N sampled losses at level
1 − 0.05/m (Bonferroni over all points; exit status 1 otherwise). The gain of the heuristic over
the staircase is printed; the seed reports it in the low-to-medium privacy regime ρ < 0.5.

Collusion (Chen, Pal and Golubchik (2016) Fig. 4, item 4 of §5.2.3): with k colluders taking the low median of their releases,
the heuristic's loss is Σ_m P(M_k = m)·E_q|c(q) + Δm| (M_k the low median of k geometrics,
c = R(q) − q), which tends to E_q|R(q) − q| > 0, while the staircase's and Laplace's tend to 0.
Exact curves for k = 1…100, spot-checked by simulation at k ∈ {1, 5, 25, 100}.

    python benchmarks/seed001_heuristic.py            # N = 10⁶ per point, 20000 collusion trials
    python benchmarks/seed001_heuristic.py --quick    # N = 10⁵, 2000 trials

Writes ``benchmarks/results/seed001_heuristic.{json,txt,svg}``.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
from scipy import integrate, stats

from dpaudit.reference import collusion as col
from dpaudit.reference.analysis import expected_loss as el
from dpaudit.reference.geometric import Geometric
from dpaudit.reference.laplace import Laplace
from dpaudit.reference.prerounding import PreRounding
from dpaudit.reference.staircase import Staircase
from seed001_common import mean_interval, pyplot, save

SEED = 20260304
DELTA = 10.0
RHOS = np.round(np.arange(0.05, 0.951, 0.05), 2)
PRIORS = {
    "mean": (stats.truncnorm(-10, 10, loc=0.0, scale=1.0), lambda rng, n: stats.truncnorm(
        -10, 10).rvs(size=n, random_state=rng)),
    "max": (None, lambda rng, n: -10 + 20 * rng.beta(100, 1, n)),
}


def prior_pdf(name: str):
    if name == "mean":
        return PRIORS["mean"][0].pdf
    return lambda q: stats.beta(100, 1).pdf((q + 10) / 20) / 20


def rounding_moments(name: str, h: PreRounding) -> tuple[float, float]:
    """(E_q|R(q) − q|, E_q[R(q) − q]) under the prior, by quadrature cell by cell."""
    pdf = prior_pdf(name)
    a = e = 0.0
    for lo, hi in ((-10, -5), (-5, 5), (5, 10)):
        c = float(h.round((lo + hi) / 2))
        a += integrate.quad(lambda q: abs(c - q) * pdf(q), lo, hi, epsabs=1e-13, epsrel=1e-12, limit=200,
                            points=[0.0] if lo < 0 < hi else None)[0]
        e += integrate.quad(lambda q: (c - q) * pdf(q), lo, hi, epsabs=1e-13, epsrel=1e-12, limit=200)[0]
    return a, e


def heuristic_collusion(rho: float, k: int, abs_c: float, mean_c: float) -> float:
    """Σ_m P(M_k = m)·h(m), h(0) = E|c|, h(m) = Δ|m| + sign(m)·E[c] (|c| ≤ Δ/2 < Δ|m|)."""
    g = Geometric(-math.log(rho))
    j = (k + 1) // 2
    m = np.arange(-2000, 2001)
    cdf_med = stats.binom.sf(j - 1, k, g.cdf(m))                 # P(M ≤ m) = P(#{X ≤ m} ≥ j)
    pm = np.diff(np.r_[0.0, cdf_med])
    h = np.where(m == 0, abs_c, DELTA * np.abs(m) + np.sign(m) * mean_c)
    return float(np.sum(pm * h))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    n, trials = (10**5, 2000) if args.quick else (10**6, 20000)
    m = 3 * len(PRIORS) * RHOS.size
    alpha = 0.05 / m
    streams = iter(np.random.SeedSequence(SEED).spawn(m + 64))
    rows, bad = [], []
    lines = [f"N = {n} draws per point; Bonferroni α = 0.05/{m} (family-wise 95%); Δ = {DELTA:g}",
             f"{'query':5s} {'rho':>5s} {'mechanism':11s} {'exact':>9s} {'mean':>9s} {'ci_lo':>9s} {'ci_hi':>9s}  check"]
    moments = {name: rounding_moments(name, PreRounding(1.0)) for name in PRIORS}
    for name, (_, draw_q) in PRIORS.items():
        abs_c, _ = moments[name]
        for rho in RHOS:
            eps = -math.log(rho)
            mechs = {"Laplace": (Laplace(eps, DELTA), DELTA / eps),
                     "Staircase": (Staircase(eps, DELTA), DELTA * math.sqrt(rho) / (1 - rho)),
                     "PreRounding": (PreRounding(eps, DELTA), (1 - rho) / (1 + rho) * abs_c
                                     + DELTA * 2 * rho / (1 - rho * rho))}
            point = {"query": name, "rho": float(rho)}
            for mname, (mech, exact) in mechs.items():
                rng = np.random.Generator(np.random.PCG64(next(streams)))
                q = draw_q(rng, n)
                loss = np.abs(mech.sample(q, rng, n) - q)
                mean, lo, hi = mean_interval(loss, alpha)
                ok = lo <= exact <= hi
                if not ok:
                    bad.append((name, float(rho), mname))
                point[mname] = {"exact": exact, "mean": mean, "ci": [lo, hi], "inside": ok}
                lines.append(f"{name:5s} {rho:5.2f} {mname:11s} {exact:9.4f} {mean:9.4f} {lo:9.4f} {hi:9.4f}  "
                             f"{'ok' if ok else 'OUTSIDE'}")
            point["gain_over_staircase"] = point["Staircase"]["exact"] - point["PreRounding"]["exact"]
            point["relative_gain"] = point["gain_over_staircase"] / point["Staircase"]["exact"]
            rows.append(point)
    lines.append(f"exact values outside their interval: {len(bad)} of {m} {bad if bad else ''}")
    for name in PRIORS:
        g = [r for r in rows if r["query"] == name]
        low = [r for r in g if r["rho"] < 0.5]
        wins = [r["rho"] for r in g if r["gain_over_staircase"] > 0]
        lines.append(f"{name} query: E|R(q) − q| = {moments[name][0]:.4f}; heuristic beats the staircase at "
                     f"ρ ∈ {wins}; mean relative gain for ρ < 0.5: {np.mean([r['relative_gain'] for r in low]):.1%}")

    # -- collusion --------------------------------------------------------------------------------
    ks = np.arange(1, 101)
    coll = []
    spot = (1, 5, 25, 100)
    for rho in (0.2, 0.5):
        eps = -math.log(rho)
        for name in PRIORS:
            abs_c, mean_c = moments[name]
            for k in ks:
                k = int(k)
                rec = {"rho": rho, "query": name, "k": k,
                       "PreRounding": heuristic_collusion(rho, k, abs_c, mean_c),
                       "Staircase": el.expected_abs_median(Staircase(eps, DELTA), k),
                       "Laplace": el.expected_abs_median(Laplace(eps, DELTA), k)}
                if k in spot:
                    rng = np.random.Generator(np.random.PCG64(next(streams)))
                    q = PRIORS[name][1](rng, trials)
                    rel = PreRounding(eps, DELTA).sample(q[:, None], rng, (trials, k))
                    mean, lo, hi = mean_interval(np.abs(col.collusion_median(rel, axis=1) - q), 0.05 / 16)
                    rec["PreRounding_sampled"] = {"mean": mean, "ci": [lo, hi], "inside": lo <= rec["PreRounding"] <= hi}
                    if not rec["PreRounding_sampled"]["inside"]:
                        bad.append(("collusion", rho, name, k))
                coll.append(rec)
            last = [c for c in coll if c["rho"] == rho and c["query"] == name][-1]
            lines.append(f"collusion ρ = {rho}, {name} query, k = 100: heuristic {last['PreRounding']:.4f} "
                         f"(limit E|R(q) − q| = {abs_c:.4f}), staircase {last['Staircase']:.4f}, "
                         f"Laplace {last['Laplace']:.4f}")
    spots = [c for c in coll if "PreRounding_sampled" in c]
    lines.append(f"collusion spot checks inside their interval (Bonferroni over 16): "
                 f"{sum(c['PreRounding_sampled']['inside'] for c in spots)} of {len(spots)}")
    print("\n".join(lines))

    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
    for col_i, name in enumerate(PRIORS):
        ax = axes[0, col_i]
        g = [r for r in rows if r["query"] == name]
        for c, mname in enumerate(("Laplace", "Staircase", "PreRounding")):
            ax.plot([r["rho"] for r in g], [r[mname]["exact"] / DELTA for r in g], color=f"C{c}", lw=1, label=f"{mname} exact")
            ax.plot([r["rho"] for r in g], [r[mname]["mean"] / DELTA for r in g], "x" if mname == "PreRounding" else "o",
                    ms=4, color=f"C{c}")
        ax.set_title(f"{name} query: loss / Δ against ρ (points: {n:.0e} draws)")
        ax.set_xlabel("ρ = e^{-ε}")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
        ax = axes[1, col_i]
        for rho, ls in ((0.2, "-"), (0.5, "--")):
            cc = [c for c in coll if c["query"] == name and c["rho"] == rho]
            for c, mname in enumerate(("Laplace", "Staircase", "PreRounding")):
                ax.plot([x["k"] for x in cc], [x[mname] / DELTA for x in cc], ls=ls, color=f"C{c}",
                        label=f"{mname}, ρ = {rho}")
            sp = [x for x in cc if "PreRounding_sampled" in x]
            ax.plot([x["k"] for x in sp], [x["PreRounding_sampled"]["mean"] / DELTA for x in sp], "x", color="C2")
        ax.axhline(moments[name][0] / DELTA, color="gray", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("colluders k")
        ax.set_title(f"{name} query under collusion (dotted: E|R(q) − q| / Δ)")
        ax.legend(fontsize=6)
    fig.tight_layout()
    record = {"quick": args.quick, "seed": SEED, "draws_per_point": n, "collusion_trials": trials,
              "bonferroni_alpha": alpha, "rounding_moments": {k: {"abs": v[0], "mean": v[1]} for k, v in moments.items()},
              "rows": rows, "collusion": coll, "outside": bad, "all_inside": not bad}
    for p in save("heuristic", record, lines, fig):
        print("wrote", p)
    if bad and args.quick:
        print("(quick run: smoke only, intervals not enforced)")
    return 0 if not bad or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
