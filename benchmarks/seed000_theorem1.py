"""Monte Carlo check of Muñoz Medina and Gillenwater (2020) Theorem 1 (Duff's error bound; docs/math.md#duff-theorem-1).

For each data family, ε and δ: draw ``datasets`` datasets, take for each the largest C with
λ(H_{t*/2}) ≥ C·t*/2 (:func:`dpaudit.reference.analysis.duff_bounds.theorem1_constant`; the seed's "for all t"
assumption cannot hold for any C, E4), evaluate the bound 4(e − 1)·SS_{β_exp}(S)·W/ε (add/remove
SS of the AVG median) and draw ``draws`` Duff (AVG) outputs. The theorem says that, on every
dataset, P(|x − T(S)| ≥ bound) ≤ δ. We report the fraction of outputs outside the bound over all
datasets and draws, its Clopper–Pearson 95% upper limit (statsmodels, method 'beta'), the worst
single dataset, and how loose the bound is (median bound / median |error|).

Run: ``python benchmarks/seed000_theorem1.py`` (200 datasets × 500 draws per cell) or ``--quick``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from _record import emit, save

from dpaudit.rng import generator, root_sequence
from dpaudit.reference.duff import Duff
from dpaudit.reference.analysis.duff_bounds import theorem1_bound

LO, HI = -10.0, 10.0
EPSILONS = (0.5, 1.0, 2.0)
DELTAS = (0.1, 0.01)


def family(name: str, rng: np.random.Generator) -> np.ndarray:
    if name == "normal n=1000":
        return rng.normal(0.0, 1.0, 1000)
    if name == "normal n=101":
        return rng.normal(0.0, 1.0, 101)
    if name == "uniform n=500":
        return rng.uniform(-1.0, 1.0, 500)
    if name == "cauchy n=200":
        return np.clip(rng.standard_cauchy(200), LO, HI)
    if name == "two clusters n=100":
        return np.r_[rng.normal(-3.0, 0.1, 50), rng.normal(3.0, 0.1, 50)]
    raise ValueError(name)


FAMILIES = ("normal n=1000", "normal n=101", "uniform n=500", "cauchy n=200", "two clusters n=100")


def run(datasets: int, draws: int, seed: int, families=FAMILIES) -> list[dict]:
    root = root_sequence(seed)
    out = []
    for f_idx, fam in enumerate(families):
        fam_seq = root.spawn(len(families))[f_idx]
        data_seq, noise_seq = fam_seq.spawn(2)
        all_data = [family(fam, generator(s)) for s in data_seq.spawn(datasets)]
        for e_idx, eps in enumerate(EPSILONS):
            for d_idx, delta in enumerate(DELTAS):
                cell_seq = noise_seq.spawn(len(EPSILONS) * len(DELTAS))[e_idx * len(DELTAS) + d_idx]
                mech = Duff(eps, LO, HI, "avg")
                outside = total = no_c = 0
                worst = 0.0
                bounds, errors = [], []
                for data, s in zip(all_data, cell_seq.spawn(datasets)):
                    try:
                        b = theorem1_bound(data, eps, delta, None, LO, HI)
                    except Exception:          # no C > 0 satisfies the growth condition
                        no_c += 1
                        continue
                    err = np.abs(mech.sample(data, generator(s), draws) - mech.target(data))
                    k = int(np.count_nonzero(err >= b.bound))
                    outside += k
                    total += draws
                    worst = max(worst, k / draws)
                    bounds.append(b.bound)
                    errors.append(float(np.median(err)))
                _, upper = proportion_confint(outside, total, alpha=0.05, method="beta") if total else (0, 1)
                out.append({"family": fam, "epsilon": eps, "delta": delta, "datasets_used": datasets - no_c,
                            "datasets_without_C": no_c, "outputs": total, "outside": outside,
                            "fraction": outside / total if total else float("nan"), "cp95_upper": upper,
                            "worst_dataset_fraction": worst,
                            "median_bound": float(np.median(bounds)) if bounds else float("nan"),
                            "median_abs_error": float(np.median(errors)) if errors else float("nan")})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 datasets × 100 draws, two families, nothing saved")
    ap.add_argument("--datasets", type=int, default=200)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--seed", type=int, default=20261122)
    a = ap.parse_args(argv)
    datasets, draws, fams = (10, 100, FAMILIES[:2]) if a.quick else (a.datasets, a.draws, FAMILIES)
    t0 = time.perf_counter()
    res = run(datasets, draws, a.seed, fams)
    elapsed = time.perf_counter() - t0
    lines: list[str] = []
    emit(lines, f"Muñoz Medina and Gillenwater (2020) Theorem 1: P(|x − T| ≥ bound) ≤ δ?  {datasets} datasets × {draws} Duff (AVG) draws per "
                f"row, domain [{LO:g}, {HI:g}], seed {a.seed}")
    emit(lines, f"{'family':22s}{'ε':>5s}{'δ':>6s}{'outside':>9s}{'fraction':>10s}{'CP95 up':>9s}"
                f"{'worst ds':>9s}{'no C':>6s}{'med bound':>11s}{'med |err|':>11s}{'loose×':>8s}")
    ok = True
    for r in res:
        loose = r["median_bound"] / r["median_abs_error"] if r["median_abs_error"] > 0 else float("inf")
        emit(lines, f"{r['family']:22s}{r['epsilon']:5g}{r['delta']:6g}{r['outside']:9d}{r['fraction']:10.2e}"
                    f"{r['cp95_upper']:9.2e}{r['worst_dataset_fraction']:9.3f}{r['datasets_without_C']:6d}"
                    f"{r['median_bound']:11.4f}{r['median_abs_error']:11.5f}{loose:8.0f}")
        ok &= r["fraction"] <= r["delta"]
    emit(lines)
    emit(lines, f"fraction outside ≤ δ in every row: {'yes' if ok else 'NO'}; elapsed {elapsed:.1f} s")
    if not a.quick:
        save("seed000_theorem1", {"datasets": datasets, "draws": draws, "seed": a.seed, "domain": [LO, HI],
                                  "rows": res, "all_within_delta": ok, "elapsed_s": elapsed}, lines)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
