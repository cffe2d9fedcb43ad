"""Speed of the sampled auditor: time for a correct Laplace at ε = 1 to reach ε_LB ≥ 0.97.

The mechanism is a noisy sum of records in [0, 1] with Laplace(1/ε) noise under add/remove (the
README's example), audited at 95% confidence. Rows:

* ``budget``: audits with growing sample budgets (batch form), seconds and ε_LB for each;
* ``timeout``: the same mechanism with ``timeout=10`` and the default budget: the anytime result;
* ``loop`` : the same mechanism without a batch form (one Python call per sample), on one core
  and on all cores through :class:`dpaudit.execution.fork.ForkExecutor` (same seed: same result).

Run::

    python benchmarks/auditor_speed.py          # writes results/auditor_speed.json
    python benchmarks/auditor_speed.py --quick  # smoke run
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


import dpaudit
from _record import finish, machine, write_json
from dpaudit.execution.fork import ForkExecutor
from dpaudit.execution.base import InProcessExecutor

RESULTS = Path(__file__).resolve().parent / "results" / "auditor_speed.json"
EPS = 1.0


@dpaudit.mechanism(epsilon=EPS, neighbours="add-remove", domain=(0, 1), size=10, float_events=False)
def noisy_sum(data, rng, size=None):
    return data.sum() + rng.laplace(scale=1.0 / EPS, size=size)


@dpaudit.mechanism(epsilon=EPS, neighbours="add-remove", domain=(0, 1), size=10, float_events=False)
def noisy_sum_loop(data, rng):
    return float(data.sum() + rng.laplace(scale=1.0 / EPS))


def _run(f, **kw) -> dict:
    t0 = time.perf_counter()
    r = dpaudit.audit(f, confidence=0.95, seed=kw.pop("seed", 1), **kw)
    secs = time.perf_counter() - t0
    return {"seconds": round(secs, 3), "epsilon_lb": r.epsilon_lower_bound, "samples": r.samples,
            "verdict": r.verdict.value, "method": r.details.get("bound_method"),
            "timed_out": r.details.get("timed_out")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)
    started = machine()
    budgets = [100_000, 300_000] if args.quick else [100_000, 300_000, 1_000_000, 4_000_000]
    rows = {"budget": [], "timeout": None, "loop": []}
    dpaudit.audit(noisy_sum, samples=10_000, seed=0)  # imports (scipy, statsmodels) out of the timings
    for b in budgets:
        row = {"samples_budget": b, **_run(noisy_sum, samples=b)}
        rows["budget"].append(row)
        print(f"budget {b:>9}: {row['seconds']:6.2f} s  eps_LB {row['epsilon_lb']:.4f}  {row['method']}", flush=True)
    first = next((r for r in rows["budget"] if r["epsilon_lb"] >= 0.97), None)
    rows["first_budget_reaching_0.97"] = first
    if not args.quick:
        rows["timeout"] = {"timeout_s": 10, **_run(noisy_sum, timeout=10.0, samples=20_000_000)}
        print(f"timeout 10 s: {rows['timeout']}", flush=True)
    loop_budget = 40_000 if args.quick else 200_000
    for label, ex in (("one core", InProcessExecutor()), ("all cores", ForkExecutor())):
        try:
            row = {"executor": label, "samples_budget": loop_budget,
                   **_run(noisy_sum_loop, samples=loop_budget, executor=ex)}
        finally:
            if isinstance(ex, ForkExecutor):
                ex.close()
        rows["loop"].append(row)
        print(f"loop ({label}): {row['seconds']:.2f} s  eps_LB {row['epsilon_lb']:.4f}", flush=True)
    ok = first is not None and first["seconds"] <= 10.0
    print(f"reaches eps_LB >= 0.97 within 10 s: {ok}"
          + (f" (budget {first['samples_budget']}, {first['seconds']} s)" if first else ""))
    record = {"benchmark": "auditor_speed", "machine": finish(started),
              "command": " ".join(["python", "benchmarks/auditor_speed.py"] + (argv or sys.argv[1:])),
              "reaches_0.97_within_10s": ok, "rows": rows}
    if not args.quick or args.out != str(RESULTS):
        write_json(Path(args.out), record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
