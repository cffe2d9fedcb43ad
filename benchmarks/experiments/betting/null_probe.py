"""Prototype null probe: refutation rate of the betting look on tight, correct mechanisms."""
import sys, time
sys.path.insert(0, "benchmarks")
import oracle_gap as og
from dpaudit.auditor import _spec  # private: prototype probe
from dpaudit.auditing.betting import bet
from dpaudit.execution.base import InProcessExecutor

name, n_seeds, budget, alpha = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
f = og.family(name, 0.0)
spec = _spec(f["mech"], {"float_policy": "off"})
hits, t0 = 0, time.process_time()
for s in range(1000, 1000 + n_seeds):
    r = bet(spec, InProcessExecutor(), budget=budget, alpha=alpha, seed=s)
    hits += r.refuted
print(f"{name} null: {hits}/{n_seeds} refuted at alpha {alpha}, budget {budget}, cpu {time.process_time()-t0:.0f}s", flush=True)
