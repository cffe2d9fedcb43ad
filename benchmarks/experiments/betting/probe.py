"""Prototype probe: samples to refute of the betting look on the oracle_gap families."""
import sys, statistics, time
sys.path.insert(0, "benchmarks")
import oracle_gap as og
from dpaudit.auditor import _spec  # private: prototype probe
from dpaudit.auditing.betting import bet
from dpaudit.execution.base import InProcessExecutor

fams = sys.argv[1].split(",")
errs = [float(e) for e in sys.argv[2].split(",")]
seeds = range(1, 1 + int(sys.argv[3]))
alpha, budget = float(sys.argv[4]), int(sys.argv[5])
for name in fams:
    for err in errs:
        f = og.family(name, err)
        if f["audit"] != "point":
            continue
        spec = _spec(f["mech"], {"float_policy": "off"})
        n_or = og.oracle(f["kind"], *f["event"][1:], 0.05, f["claim"])
        runs = []
        t0 = time.process_time()
        for s in seeds:
            r = bet(spec, InProcessExecutor(), budget=budget, alpha=alpha, seed=s)
            runs.append(r.refuted_at if r.refuted else float("inf"))
        med = statistics.median(runs)
        print(f"{name:20s} {err:5.2f} oracle {n_or:8.0f} bet median {med:9.0f} ratio {med/n_or:6.2f} "
              f"runs {runs} lb {r.epsilon_lb:.3f} cpu {time.process_time()-t0:.1f}", flush=True)
