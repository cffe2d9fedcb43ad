"""Speed of dpaudit's sensitivity search.

1. Throughput: neighbouring pairs evaluated per second by :func:`dpaudit.check_sensitivity` on a
   cheap function (a clipped sum, with its true bound so the whole budget is searched), datasets
   of up to 50 records, under each relation, the individual model and a utility searched over r.
   Goal: at least 1,000 examples per second. Both wall-clock and process CPU rates are recorded
   (this machine is shared, so wall time is inflated by other processes).
2. Time to refute each planted bug (mechanisms/controls/sensitivity.py) and the raw statistics,
   median over 20 seeds. Goal: at most 2 s each.

Usage::

    python benchmarks/sensitivity_speed.py            # full run, ~2-3 minutes
    python benchmarks/sensitivity_speed.py --quick    # smoke run, writes *_quick.*

Writes ``benchmarks/results/sensitivity_speed.json`` and ``.txt`` (machine, load, date, figures).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import dpaudit  # noqa: E402
from dpaudit.results import Verdict  # noqa: E402
from dpaudit.reference.controls.sensitivity import CONTROLS, raw_mean, raw_median, unclipped_sum  # noqa: E402
from _record import header, machine, save  # noqa: E402


def clipped_sum(data):
    return float(np.sum(np.clip(data, 0.0, 1.0)))


def weighted_clipped_sum(data, ids):
    return float(np.dot(_WEIGHTS[ids], np.clip(data, 0.0, 1.0))) if len(ids) else 0.0


def median_utility(data, r):
    return -abs(float(np.count_nonzero(data < r)) - float(np.count_nonzero(data > r)))


_WEIGHTS = np.linspace(0.5, 2.0, 60)

THROUGHPUT = {
    # name: (f, bound, keyword arguments); every bound is the true sensitivity, so the search
    # runs its whole budget (a refutation would stop it early and say nothing about speed).
    "add-remove": (clipped_sum, 1.0, dict(neighbours="add-remove", domain=(-5, 5), sizes=50)),
    "replace": (clipped_sum, 1.0, dict(neighbours="replace", domain=(-5, 5), sizes=50)),
    "linf": (clipped_sum, 50.0, dict(neighbours="linf", domain=(-5, 5), sizes=50)),
    "l1": (clipped_sum, 1.0, dict(neighbours="l1", domain=(-5, 5), sizes=50)),
    "individual (60 ids)": (weighted_clipped_sum, 2.0,
                            dict(neighbours="add-remove", domain=(-5, 5), sizes=50,
                                 individual=tuple(_WEIGHTS))),
    "utility, r searched": (median_utility, 1.0,
                            dict(neighbours="add-remove", domain=(0, 1), sizes=50, outputs=(0, 1))),
}

REFUTE = {name: (f, f.sensitivity, kw) for name, (f, kw) in CONTROLS.items()}
REFUTE.update({
    "raw-median": (raw_median, 0.25, dict(neighbours="add-remove", domain=(-10, 10), sizes=(1, 20))),
    "raw-mean": (raw_mean, 0.25, dict(neighbours="add-remove", domain=(-10, 10), sizes=(1, 20))),
    "unclipped-sum": (unclipped_sum, 0.25, dict(neighbours="add-remove", domain=(-10, 10), sizes=20)),
})


def throughput(examples: int, repeats: int) -> dict:
    out = {}
    for name, (f, bound, kw) in THROUGHPUT.items():
        walls, cpus = [], []
        for rep in range(repeats):
            w0, c0 = time.perf_counter(), time.process_time()
            r = dpaudit.check_sensitivity(f, bound, examples=examples, seed=100 + rep, **kw)
            w, c = time.perf_counter() - w0, time.process_time() - c0
            if r.verdict is not Verdict.NOT_REFUTED or r.examples < examples:
                raise SystemExit(f"{name}: expected a full NOT_REFUTED run, got {r}")
            walls.append(r.examples / w)
            cpus.append(r.examples / c)
        out[name] = {"examples": examples, "repeats": repeats,
                     "per_s_wall_median": float(np.median(walls)), "per_s_cpu_median": float(np.median(cpus)),
                     "per_s_wall": walls, "per_s_cpu": cpus}
    return out


def time_to_refute(seeds: int) -> dict:
    out = {}
    for name, (f, bound, kw) in REFUTE.items():
        times, sizes, found = [], [], []
        for s in range(seeds):
            t0 = time.perf_counter()
            r = dpaudit.check_sensitivity(f, bound, examples=2_000, seed=s, **kw)
            times.append(time.perf_counter() - t0)
            sizes.append(None if r.counterexample is None else r.counterexample.records)
            found.append(r.verdict.value)
        out[name] = {"seeds": seeds, "median_s": float(np.median(times)), "max_s": float(np.max(times)),
                     "times_s": times, "verdicts": found, "counterexample_records": sizes}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run (fewer examples and seeds)")
    args = ap.parse_args(argv)
    examples, repeats, seeds = (500, 1, 3) if args.quick else (5_000, 3, 20)
    started = time.perf_counter()
    record = {"machine": machine(), "quick": args.quick,
              "throughput": throughput(examples, repeats), "time_to_refute": time_to_refute(seeds)}
    record["total_s"] = time.perf_counter() - started
    lines = ["", "throughput (examples = neighbouring pairs; datasets up to 50 records; goal >= 1000/s)",
             f"{'search':24s} {'examples':>8s} {'per s (wall)':>13s} {'per s (CPU)':>12s}"]
    for name, t in record["throughput"].items():
        lines.append(f"{name:24s} {t['examples']:8d} {t['per_s_wall_median']:13.0f} {t['per_s_cpu_median']:12.0f}")
    lines += ["", f"time to refute, over {seeds} seeds (goal: median <= 2 s)",
              f"{'target':28s} {'median s':>9s} {'max s':>7s} {'refuted':>8s} {'records':>8s}"]
    for name, t in record["time_to_refute"].items():
        refuted = sum(v == "refuted" for v in t["verdicts"])
        recs = [x for x in t["counterexample_records"] if x is not None]
        lines.append(f"{name:28s} {t['median_s']:9.3f} {t['max_s']:7.3f} {refuted:>5d}/{t['seeds']:<2d} "
                     f"{max(recs) if recs else '-':>8}")
    lines.append(f"\ntotal {record['total_s']:.1f} s")
    print("\n".join([header("sensitivity_speed", record["machine"]), *lines]))
    save("sensitivity_speed", record, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
