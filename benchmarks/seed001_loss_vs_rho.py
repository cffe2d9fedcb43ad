"""Expected loss against ρ = e^{−ε} (Chen, Pal and Golubchik (2016) Fig. 3, left panels): sampled vs Chen, Pal and Golubchik (2016) eqs (11)–(15).

For ρ = 0.05, 0.10, …, 0.95 and Δ = 1 it draws N values of

* |Z|, Z Laplace(1/ε)                         against Chen, Pal and Golubchik (2016) eq (11)  Δ/(−ln ρ)
* |Z|, Z staircase at γ*                      against Chen, Pal and Golubchik (2016) eq (12)  Δ√ρ/(1 − ρ)
* |K|, K two-sided geometric (corrected pmf)  against Chen, Pal and Golubchik (2016) eq (13)  2ρ/(1 − ρ²)
* |round(Z)|, Laplace, count query            against Chen, Pal and Golubchik (2016) eq (14)  √ρ/(1 − ρ)
* |round(Z)|, staircase at γ*, count query    against Chen, Pal and Golubchik (2016) eq (15)  (1 − (1 − √ρ)²/2)√ρ/(1 − ρ)

and builds a normal confidence interval for each mean at level 1 − 0.05/m (Bonferroni over all
m = 5 × 19 intervals, so the whole family holds at 95%). All five formulas are exact (docs/math.md#expected-loss),
so each must lie inside its interval at every ρ; the script exits with status 1 otherwise. As a
check on resolution it also counts the points where the formula moved by ±1% leaves the interval.

    python benchmarks/seed001_loss_vs_rho.py            # N = 10⁶ draws per point
    python benchmarks/seed001_loss_vs_rho.py --quick    # N = 10⁵

Writes ``benchmarks/results/seed001_loss_vs_rho.{json,txt,svg}``.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from dpaudit.reference import collusion as col
from dpaudit.reference.analysis import expected_loss as el
from dpaudit.reference.geometric import Geometric
from dpaudit.reference.laplace import Laplace
from dpaudit.reference.staircase import Staircase
from seed001_common import mean_interval, pyplot, save

SEED = 20260302
RHOS = np.round(np.arange(0.05, 0.951, 0.05), 2)
CURVES = {
    "eq11 Laplace": (lambda e, rng, n: np.abs(Laplace(e).noise(rng, n)), el.laplace_loss),
    "eq12 Staircase": (lambda e, rng, n: np.abs(Staircase(e).noise(rng, n)), el.staircase_loss),
    "eq13 Geometric": (lambda e, rng, n: np.abs(Geometric(e).noise(rng, n)), el.geometric_loss),
    "eq14 Laplace, count": (lambda e, rng, n: np.abs(col.round_to_count(Laplace(e).noise(rng, n))),
                            el.count_laplace_loss),
    "eq15 Staircase, count": (lambda e, rng, n: np.abs(col.round_to_count(Staircase(e).noise(rng, n))),
                              el.count_staircase_loss),
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    n = 10**5 if args.quick else 10**6
    m = len(CURVES) * RHOS.size
    alpha = 0.05 / m
    root = np.random.SeedSequence(SEED)
    streams = iter(root.spawn(m))
    rows, misses, power = [], [], 0
    lines = [f"N = {n} draws per point; Bonferroni α = 0.05/{m} per interval (family-wise 95%)",
             f"{'curve':24s} {'rho':>5s} {'formula':>10s} {'mean':>10s} {'ci_lo':>10s} {'ci_hi':>10s}  inside"]
    for name, (draw, formula) in CURVES.items():
        for rho in RHOS:
            rng = np.random.Generator(np.random.PCG64(next(streams)))
            x = draw(-math.log(rho), rng, n)
            mean, lo, hi = mean_interval(x, alpha)
            f = float(formula(rho))
            inside = lo <= f <= hi
            power += int(not (lo <= 1.01 * f <= hi)) + int(not (lo <= 0.99 * f <= hi))
            if not inside:
                misses.append((name, float(rho)))
            rows.append({"curve": name, "rho": float(rho), "formula": f, "mean": mean, "ci": [lo, hi],
                         "inside": inside})
            lines.append(f"{name:24s} {rho:5.2f} {f:10.5f} {mean:10.5f} {lo:10.5f} {hi:10.5f}  "
                         f"{'yes' if inside else 'NO'}")
    lines.append(f"formulas outside their interval: {len(misses)} of {m} {misses if misses else ''}")
    lines.append(f"resolution: formula ±1% falls outside the interval at {power} of {2 * m} (point, side) cases")
    print("\n".join(lines))

    plt = pyplot()
    fig, (ax, rx) = plt.subplots(1, 2, figsize=(12, 4.5))
    fine = np.linspace(0.03, 0.97, 200)
    for k, name in enumerate(CURVES):
        pts = [r for r in rows if r["curve"] == name]
        rr = np.array([r["rho"] for r in pts])
        mean = np.array([r["mean"] for r in pts])
        err = np.array([[r["mean"] - r["ci"][0], r["ci"][1] - r["mean"]] for r in pts]).T
        for a, scale_f, scale_p in ((ax, 1.0, 1.0), (rx, el.laplace_loss(fine), el.laplace_loss(rr))):
            a.plot(fine, CURVES[name][1](fine) / scale_f, color=f"C{k}", lw=1, label=f"{name} (formula)")
            a.errorbar(rr, mean / scale_p, yerr=err / scale_p, fmt="o", ms=3, color=f"C{k}")
    ax.set_yscale("log")
    ax.set_ylabel("expected loss E|error| / Δ")
    rx.set_ylabel("relative to eq (11), Laplace")
    for a in (ax, rx):
        a.set_xlabel("ρ = e^{-ε}  (Chen, Pal and Golubchik (2016)'s α)")
    ax.legend(fontsize=7)
    fig.suptitle(f"Chen, Pal and Golubchik (2016) eqs (11)-(15): formulas (lines) vs {n:.0e} draws per point (family-wise 95% intervals)")
    record = {"quick": args.quick, "seed": SEED, "draws_per_point": n, "bonferroni_alpha": alpha,
              "family_confidence": 0.95, "rows": rows, "outside": misses,
              "resolution_excluded_at_1pct": power, "all_inside": not misses}
    for p in save("loss_vs_rho", record, lines, fig):
        print("wrote", p)
    return 0 if not misses else 1


if __name__ == "__main__":
    sys.exit(main())
