"""Floating-point porosity: textbook Laplace on float64 against float-safe mechanisms.

Setting (DP-Sniper's floating-point experiment, Bichsel et al. S&P 2021, §6): claimed ε = 0.1,
``linf`` neighbours over [-10, 10], one record, 90% confidence, at most 2·10⁷ samples.

(a) ``laplace_float``: x + ``rng.laplace(scale=1/ε)`` in float64;
(b) ``laplace_inverse_cdf``: the textbook inverse-CDF sampler x − b·sign(u)·ln(1 − 2|u|),
    u uniform on [−½, ½);
(c) ``snapping``: Mironov's snapping mechanism (CCS 2012, Theorem 1), B = 100, λ = (1 + 2^-49·B)/ε
    (:func:`examples.laplace_sum.snapping`);
(d) ``discrete_laplace``: ⌊x⌋ + G₁ − G₂ with G geometric, p = 1 − e^-ε (the two-sided geometric of
    Ghosh, Roughgarden and Sundararajan 2009, on integers).

(a) and (b) are not ε-DP for any ε on doubles (Mironov 2012, §3): x + noise and x' + noise reach
different sets of doubles. DP-Sniper reached ε ≥ 0.25 on them with a neural network on the 64
bits; dpaudit's float-structure events (binade × trailing zero bits; README "Floating point") are
expected to give ε_LB ≥ 5. (c) and (d) are ε-DP on doubles; they are audited at 99.9%, as the
violation suite audits correct mechanisms, so a false alarm has chance ≤ 0.1%. The script also
times ``dpaudit check`` with its defaults (4·10⁶ samples) on (a) and (b).

Run::

    python benchmarks/floating_point.py           # writes results/floating_point.json
    python benchmarks/floating_point.py --quick   # 2·10⁶ samples, no file
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import dpaudit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from examples.laplace_sum import snapping as _snapping  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "floating_point.json"
EPS = 0.1
CLAIM = dict(epsilon=EPS, neighbours="linf", domain=(-10.0, 10.0), size=1)


@dpaudit.mechanism(**CLAIM)
def laplace_float(data, rng, size=None):
    return data[0] + rng.laplace(scale=1.0 / EPS, size=size)


@dpaudit.mechanism(**CLAIM)
def laplace_inverse_cdf(data, rng, size=None):
    u = rng.random(size) - 0.5
    return data[0] - (1.0 / EPS) * np.sign(u) * np.log(1.0 - 2.0 * np.abs(u))


@dpaudit.mechanism(**CLAIM)
def snapping(data, rng, size=None):
    return _snapping(data[0], epsilon=EPS, bound=100.0, rng=rng, size=size)


@dpaudit.mechanism(**CLAIM)
def discrete_laplace(data, rng, size=None):
    p = 1.0 - np.exp(-EPS)
    n = 1 if size is None else size
    y = int(np.floor(data[0])) + rng.geometric(p, n) - rng.geometric(p, n)
    return y if size is not None else int(y[0])


CASES = [("laplace_float", laplace_float, False, 0.90), ("laplace_inverse_cdf", laplace_inverse_cdf, False, 0.90),
         ("snapping", snapping, True, 0.999), ("discrete_laplace", discrete_laplace, True, 0.999)]


def audit_row(name, func, correct, confidence, samples, seed) -> dict:
    t0 = time.perf_counter()
    r = dpaudit.audit(func, samples=samples, confidence=confidence, seed=seed)
    secs = time.perf_counter() - t0
    lb = r.epsilon_lower_bound or 0.0
    ok = r.verdict.value == "not_refuted" if correct else (r.verdict.value == "refuted" and lb >= 5.0)
    cx = r.counterexample
    row = {"mechanism": name, "correct": correct, "confidence": confidence, "verdict": r.verdict.value,
           "epsilon_lb": lb, "samples": r.samples, "seconds": round(secs, 1), "meets_target": bool(ok),
           "pair": None if cx is None else [list(cx.dataset), list(cx.neighbour)],
           "event": None if cx is None else cx.event.get("text"), "method": r.details.get("bound_method")}
    print(f"{name:<20} {confidence:>6} {r.verdict.value:<12} eps_LB {lb:8.3f} {r.samples:>10} "
          f"{secs:7.1f} s  {'ok' if ok else 'MISSED'}", flush=True)
    return row


def check_row(name: str) -> dict:
    """``dpaudit check`` with its defaults, wall time from the command line."""
    cmd = ["dpaudit", "check", f"benchmarks/floating_point.py:{name}"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    secs = time.perf_counter() - t0
    first = proc.stdout.splitlines()[0] if proc.stdout else proc.stderr[-300:]
    print(f"check {name}: exit {proc.returncode} in {secs:.1f} s: {first[:160]}", flush=True)
    return {"mechanism": name, "command": " ".join(cmd), "exit_code": proc.returncode,
            "seconds": round(secs, 1), "first_line": first,
            "meets_target": proc.returncode == 1 and secs <= 30.0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2e6 samples per audit, no result file")
    ap.add_argument("--samples", type=int, default=None)
    ap.add_argument("--seed", type=int, default=2021)
    args = ap.parse_args(argv)
    from _record import finish, machine, write_json

    samples = args.samples or (2_000_000 if args.quick else 20_000_000)
    started = machine()
    rows = [audit_row(n, f, c, conf, samples, args.seed) for n, f, c, conf in CASES]
    checks = [check_row(n) for n in ("laplace_float", "laplace_inverse_cdf")]
    met = sum(r["meets_target"] for r in rows + checks)
    print(f"{met}/{len(rows) + len(checks)} meet their target")
    record = {"benchmark": "floating_point", "machine": finish(started),
              "command": " ".join(["python", "benchmarks/floating_point.py"] + (argv or sys.argv[1:])),
              "claimed_epsilon": EPS, "neighbours": "linf", "domain": [-10.0, 10.0], "size": 1,
              "samples_per_audit": samples, "seed": args.seed, "audits": rows, "check": checks,
              "meets_target": met, "dp_sniper_reference": 0.25}
    if not args.quick:
        write_json(RESULTS, record)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
