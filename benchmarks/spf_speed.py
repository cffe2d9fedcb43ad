"""Speed and scaling of the sensitivity-preprocessing algorithms (Cummings and Durfee (2020); docs/math.md#spf-definition, #spf-optimality, #spf-np-gadget, #database-ordered, #spf-median, #spf-mean, #spf-variance).

Targets, against the paper's stated complexities:

* median f̂ by the O(n) chain (Lemma 5.4) on n = 10⁶ presorted points: ≤ 0.5 s;
* mean and variance f̂ by the O(n²) DPs (Lemma 5.2 / Cor 5.3, Lemma 6.4) on n = 10⁴: ≤ 2 s;
* the general algorithm (Theorem 3.3, O(2^n (T_f + n))) on n = 16: ≤ 5 s.

It also times each over a range of n and fits the slope of log(time) against log(n) (for the
general algorithm, against log(2^n)): about 1 for the chain, 2 for the DPs, 1 for the subset DP
(in 2^n). Results: ``benchmarks/results/spf_speed.json`` (machine, load, date, every timing) and
the log-log plot ``benchmarks/results/spf_scaling.png``.

    python benchmarks/spf_speed.py            # full run (about a minute on a loaded 2-core box)
    python benchmarks/spf_speed.py --quick    # smoke run: small sizes, no targets enforced
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import _record
from dpaudit.reference.sensitivity_preprocessing import spf_median, spf_ordered, spf_table, spf_variance
from dpaudit.reference.sensitivity_preprocessing.statistics import subset_statistic

RESULTS = Path(__file__).resolve().parent / "results"
SEED = 20260505


def timed(fn, repeats: int) -> dict:
    """Wall-clock seconds of ``repeats`` calls: best and median (best is the least disturbed by load)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return {"best_s": min(times), "median_s": statistics.median(times), "repeats": repeats}


def slope(ns, secs) -> float:
    """Least-squares slope of log(time) on log(n)."""
    return float(np.polyfit(np.log(np.asarray(ns, float)), np.log(np.asarray(secs, float)), 1)[0])


def median_case(rng, n):
    x = np.sort(rng.normal(size=n))
    return lambda: spf_median(x, 0.001, 0.0, convention="avg")


def mean_case(rng, n):
    x = rng.normal(size=n)
    return lambda: spf_ordered(x, "mean", 0.001, 0.0)


def variance_case(rng, n):
    x = rng.normal(size=n)
    return lambda: spf_variance(x, 0.001)


def general_batched_case(rng, n):
    x = rng.normal(size=n)
    return lambda: spf_table(lambda r, B: subset_statistic("median", r, B), x, 0.1, centre=0.0, batched=True)


def general_plain_case(rng, n):
    x = rng.normal(size=n)

    def f(records):
        return float(records.sum()) / records.size if records.size else np.nan

    return lambda: spf_table(f, x, 0.1, centre=0.0)


def run(quick: bool) -> dict:
    rng = np.random.default_rng(SEED)
    rep = 2 if quick else 5
    targets = {
        "median_chain": (median_case, 10**5 if quick else 10**6, 0.5),
        "mean_dp": (mean_case, 2000 if quick else 10**4, 2.0),
        "variance_dp": (variance_case, 2000 if quick else 10**4, 2.0),
        "general_batched": (general_batched_case, 12 if quick else 16, 5.0),
        "general_plain_f": (general_plain_case, 12 if quick else 16, 5.0),
    }
    out = {"machine": _record.machine(), "quick": quick, "seed": SEED, "targets": {}, "scaling": {}}
    for name, (case, n, limit) in targets.items():
        t = timed(case(rng, n), 1 if name.startswith("general_plain") else rep)
        out["targets"][name] = {"n": n, "limit_s": limit, **t,
                                "within_limit": (t["best_s"] <= limit) if not quick else None}
    sweeps = {
        "median_chain": (median_case, [10**4, 3 * 10**4, 10**5] if quick else
                         [10**4, 3 * 10**4, 10**5, 3 * 10**5, 10**6, 3 * 10**6], "n", 1),
        "mean_dp": (mean_case, [500, 1000, 2000] if quick else [1000, 2000, 4000, 8000, 16000, 32000, 64000],
                    "n", 2),
        "variance_dp": (variance_case, [500, 1000, 2000] if quick else
                        [1000, 2000, 4000, 8000, 16000, 32000, 64000], "n", 2),
        "general_batched": (general_batched_case, [8, 10, 12] if quick else [10, 12, 14, 16, 18, 19], "2^n", 1),
    }
    for name, (case, ns, axis, expected) in sweeps.items():
        secs = [timed(case(rng, n), min(rep, 3))["best_s"] for n in ns]
        xs = [2.0 ** n for n in ns] if axis == "2^n" else ns
        out["scaling"][name] = {"n": ns, "x_axis": axis, "best_s": secs, "slope": slope(xs, secs),
                                "tail_slope": slope(xs[-2:], secs[-2:]), "paper_exponent": expected}
    _record.finish(out["machine"])
    return out


def plot(result: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for name, s in result["scaling"].items():
        ax = axes[1] if s["x_axis"] == "2^n" else axes[0]
        xs = [2.0 ** n for n in s["n"]] if s["x_axis"] == "2^n" else s["n"]
        ax.loglog(xs, s["best_s"], "o-", label=f"{name}: slope {s['slope']:.2f}, last two {s['tail_slope']:.2f} "
                                               f"(paper {s['paper_exponent']})")
    axes[0].set_xlabel("n (records)")
    axes[1].set_xlabel("2^n (subsets)")
    for ax in axes:
        ax.set_ylabel("seconds (best of repeats)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    m = result["machine"]
    fig.suptitle(f"sensitivity preprocessing scaling — {m['cores']} cores, load {m['loadavg'][0]:.1f}, "
                 f"{m['date']}{' (quick)' if result['quick'] else ''}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, targets not enforced")
    ap.add_argument("--out", type=Path, default=RESULTS, help="folder for the JSON and the plot")
    args = ap.parse_args(argv)
    result = run(args.quick)
    stem = "spf_speed_quick" if args.quick else "spf_speed"
    _record.write_json(args.out / f"{stem}.json", result)
    plot(result, args.out / f"{stem.replace('speed', 'scaling')}.png")
    print(_record.header(stem, result["machine"]))
    for name, t in result["targets"].items():
        verdict = "" if t["within_limit"] is None else ("  OK" if t["within_limit"] else "  OVER LIMIT")
        print(f"{name:24s} n={t['n']:<8} best {t['best_s']:.3f} s  median {t['median_s']:.3f} s  "
              f"(limit {t['limit_s']} s){verdict}")
    for name, s in result["scaling"].items():
        print(f"scaling {name:16s} slope {s['slope']:.2f} (last two sizes {s['tail_slope']:.2f}) in "
              f"log(time)/log({s['x_axis']}), paper {s['paper_exponent']}; n = {s['n']}; best s: "
              + ", ".join(f"{v:.4f}" for v in s["best_s"]))
    if not args.quick and not all(t["within_limit"] for t in result["targets"].values()):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
