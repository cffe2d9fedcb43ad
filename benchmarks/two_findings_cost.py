"""CPU of the violation suite's rows with two findings per audit against one finding, side by side.

Every audit answers the logic question and the float64 question apart (each with its
own early stop). This measures what that costs on the 16 rows of ``benchmarks/violation_suite.py``:
each row runs once on this tree and once on a BASELINE tree (a ``git worktree`` of the commit
before the change), alternately, each run in a fresh process, and the CPU-seconds (user + system,
imports excluded) are compared row by row. Target: the total ratio at most 1.25 at the suite's own
settings (2·10⁷ samples, 90%, the whole budget spent: both trees do the same work, so the ratio is
the price of the second finding). With ``--early-stop`` (as ``dpaudit check`` runs by default) the
ratio also shows what examining the logic costs where a porosity event used to end the audit at
its first look (SVT3, ReportNoisyMax3): that is the point of the change, not an overhead.

Run::

    git worktree add /tmp/base 4d3c7af          # the commit before the two findings
    python benchmarks/two_findings_cost.py --baseline /tmp/base                 # suite settings
    python benchmarks/two_findings_cost.py --baseline /tmp/base --early-stop --samples 4000000 --confidence 0.95
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results" / "two_findings_cost.json"

DRIVER = r'''
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])          # the dpaudit tree to measure
sys.path.insert(1, sys.argv[2])          # benchmarks/ (the suite's mechanisms)
import numpy as np
import dpaudit, dpaudit.auditing.sampled, statsmodels.stats.proportion  # imports left out
from violation_suite import SUITE, EPS
case = next(c for c in SUITE if c.name == sys.argv[3])
samples, seed, conf, early = int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]), sys.argv[7] == "1"
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
c0, t0 = cpu(), time.perf_counter()
r = dpaudit.audit(case.func, epsilon=EPS, neighbours=case.neighbours, domain=case.domain,
                  size=case.size, samples=samples, confidence=conf, seed=seed, early_stop=early)
rec = r.to_record()
f = rec.get("findings") or {}
print(json.dumps({"cpu": cpu() - c0, "wall": time.perf_counter() - t0, "verdict": rec["verdict"],
                  "samples": rec["samples"], "epsilon_lb": rec["epsilon_lower_bound"],
                  "logic": (f.get("logic") or {}).get("epsilon_lower_bound"),
                  "logic_verdict": (f.get("logic") or {}).get("verdict"),
                  "float": (f.get("float") or {}).get("verdict"),
                  "float_lb": (f.get("float") or {}).get("epsilon_lower_bound")}))
'''


def run(tree: str, name: str, samples: int, seed: int, confidence: float, early: bool) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", DRIVER, tree, str(HERE), name, str(samples), str(seed),
                          str(confidence), "1" if early else "0"],
                         capture_output=True, text=True, env=env, timeout=3600)
    if out.returncode != 0:
        raise SystemExit(f"{name} on {tree}: {out.stderr.strip()[-500:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    sys.path.insert(0, str(HERE))
    from _record import finish, machine
    from violation_suite import SUITE

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, help="a checkout of the commit before the change")
    ap.add_argument("--samples", type=int, default=20_000_000)
    ap.add_argument("--confidence", type=float, default=0.9)
    ap.add_argument("--early-stop", action="store_true")
    ap.add_argument("--seed", type=int, default=2021)
    ap.add_argument("--only", action="append")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)
    started = machine()
    rows = []
    print(f"{'mechanism':<16} {'before CPU-s':>12} {'after CPU-s':>12} {'ratio':>6}   "
          f"before (verdict ε_LB)   after: logic ε_LB | float64")
    for case in SUITE:
        if args.only and case.name not in args.only:
            continue
        before = run(args.baseline, case.name, args.samples, args.seed, args.confidence, args.early_stop)
        after = run(str(ROOT), case.name, args.samples, args.seed, args.confidence, args.early_stop)
        ratio = after["cpu"] / max(before["cpu"], 1e-9)
        rows.append({"mechanism": case.name, "correct": case.correct, "target": case.target,
                     "before": before, "after": after, "ratio": ratio})
        print(f"{case.name:<16} {before['cpu']:>12.2f} {after['cpu']:>12.2f} {ratio:>6.2f}   "
              f"{before['verdict']:<12} {before['epsilon_lb'] or 0:>8.3f}   "
              f"{after['logic_verdict']} {after['logic'] or 0:.3f} | {after['float']} "
              f"{after['float_lb'] if after['float_lb'] is not None else ''}", flush=True)
    total_b = sum(r["before"]["cpu"] for r in rows)
    total_a = sum(r["after"]["cpu"] for r in rows)
    print(f"total CPU-s: before {total_b:.1f}, after {total_a:.1f}, ratio {total_a / total_b:.3f} "
          f"(target ≤ 1.25)")
    record = {"benchmark": "two_findings_cost", "machine": finish(started),
              "command": " ".join(["python", "benchmarks/two_findings_cost.py"] + (argv or sys.argv[1:])),
              "baseline": args.baseline, "samples": args.samples, "seed": args.seed,
              "confidence": args.confidence, "early_stop": args.early_stop,
              "total_cpu_before": total_b, "total_cpu_after": total_a,
              "ratio": total_a / total_b, "target_ratio": 1.25, "rows": rows,
              "note": "each row run alternately on the baseline tree and on this one, each in a "
                      "fresh process, imports excluded; CPU = user + system of that process"}
    if not args.only:
        if args.early_stop and args.out == str(RESULTS):
            args.out = str(RESULTS.with_name("two_findings_cost_early_stop.json"))
        Path(args.out).write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
