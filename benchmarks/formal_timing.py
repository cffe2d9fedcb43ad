"""Timings of the formal claims (target: every claim in ≤ 60 s).

1. ``dpaudit.verify()`` over every registered claim, repeated: wall seconds per run, and per claim
   the median wall and solver seconds and the number of queries; the slowest queries.
2. The negative controls, once.
3. ``dpaudit verify`` end to end in a subprocess (interpreter start, z3 import, table).
4. (full mode) every dumped SMT-LIB2 query solved again by a fresh z3 process, sequentially
   (the independence check, :mod:`dpaudit.formal.independence`).

Wall times on a loaded machine are noisy; CPU seconds of this process are recorded beside them.
Results go to ``benchmarks/results/formal_timing.json`` and ``formal_timing.txt`` with the machine
(platform, CPU count, load average), the date and the z3 version.

    python benchmarks/formal_timing.py            # full run (the recorded figures)
    python benchmarks/formal_timing.py --quick    # smoke run: one pass, no fresh solves
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import _record

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")


def machine() -> dict:
    """The common machine record, with z3's version."""
    import z3

    return _record.machine(z3=z3.get_version_string())


def cpu_seconds() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def time_claims(repeats: int) -> tuple[dict, list]:
    from dpaudit.formal import verify

    walls, cpus, runs = [], [], []
    for _ in range(repeats):
        c0, t0 = cpu_seconds(), time.perf_counter()
        results = verify()
        walls.append(time.perf_counter() - t0)
        cpus.append(cpu_seconds() - c0)
        runs.append(results)
    per_claim = {}
    for i, r in enumerate(runs[0]):
        per_claim[r.name] = {
            "expected": r.expected.value, "observed": r.status.value,
            "queries": len(r.queries),
            "median_wall_s": statistics.median(run[i].elapsed_s for run in runs),
            "median_solver_s": statistics.median(run[i].solver_time_s for run in runs),
        }
    queries = sorted(((q.seconds, r.name, q.name) for r in runs[0] for q in r.queries), reverse=True)
    return {"repeats": repeats, "wall_s": walls, "median_wall_s": statistics.median(walls),
            "cpu_s": cpus, "claims": len(runs[0]),
            "queries": sum(len(r.queries) for r in runs[0]),
            "all_as_expected": all(r.matches_expected for run in runs for r in run),
            "target_s": 60.0, "meets_target": max(walls) <= 60.0,
            "per_claim": per_claim,
            "slowest_queries": [{"claim": c, "query": q, "seconds": s} for s, c, q in queries[:10]]
            }, runs[0]


def time_controls() -> tuple[dict, list]:
    from dpaudit.formal import list_claims, verify

    names = [c.name for c in list_claims(include_controls=True) if c.control_of]
    t0 = time.perf_counter()
    results = verify(names)
    return {"wall_s": time.perf_counter() - t0,
            "observed": {r.name: r.status.value for r in results},
            "all_refuted": all(r.status.value == "refuted" for r in results)}, results


def time_cli() -> dict:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "dpaudit", "verify"], cwd=ROOT,
                          capture_output=True, text=True)
    return {"command": "dpaudit verify", "wall_s": time.perf_counter() - t0,
            "exit_code": proc.returncode, "summary": proc.stdout.strip().splitlines()[-1:]}


def time_fresh_solves(results: list) -> dict:
    from dpaudit.formal.cli import write_smt2
    from dpaudit.formal.independence import solve_fresh

    with tempfile.TemporaryDirectory() as folder:
        write_smt2(results, folder)
        t0 = time.perf_counter()
        agree = n = 0
        for r in results:
            for i, q in enumerate(r.queries, start=1):
                n += 1
                agree += solve_fresh(os.path.join(folder, r.name, f"{i:02d}-{q.name}.smt2")) == q.answer
        return {"files": n, "agree": agree, "wall_s": time.perf_counter() - t0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one pass, no fresh solves (smoke run)")
    args = ap.parse_args(argv)
    out = {"machine": machine(), "mode": "quick" if args.quick else "full"}
    out["claims"], results = time_claims(1 if args.quick else 5)
    out["controls"], controls = time_controls()
    out["cli"] = time_cli()
    if not args.quick:
        out["fresh_solve"] = time_fresh_solves(results + controls)
    _record.finish(out["machine"])
    suffix = "_quick" if args.quick else ""
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, f"formal_timing{suffix}.json"), "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=2, ensure_ascii=False)
        fh.write("\n")
    c = out["claims"]
    lines = [
        _record.header(f"formal claims timing ({out['mode']})", out["machine"]) + f", z3 {out['machine']['z3']}",
        f"verify(): {c['claims']} claims, {c['queries']} queries; wall per run "
        f"{', '.join(f'{w:.2f}' for w in c['wall_s'])} s (median {c['median_wall_s']:.2f} s, "
        f"target <= 60 s); CPU {', '.join(f'{x:.2f}' for x in c['cpu_s'])} s; "
        f"all as expected: {c['all_as_expected']}",
        f"controls: {len(out['controls']['observed'])} in {out['controls']['wall_s']:.2f} s, "
        f"all refuted: {out['controls']['all_refuted']}",
        f"dpaudit verify (subprocess): {out['cli']['wall_s']:.2f} s, exit {out['cli']['exit_code']}",
    ]
    if "fresh_solve" in out:
        rp = out["fresh_solve"]
        lines.append(f"solved again in fresh z3 processes: {rp['agree']}/{rp['files']} agree, "
                     f"{rp['wall_s']:.2f} s")
    lines.append("slowest queries: " + "; ".join(
        f"{s['claim']}/{s['query']} {s['seconds']:.3f} s" for s in c["slowest_queries"][:5]))
    lines.append("per claim (median wall s, queries):")
    lines += [f"  {name:<40} {v['median_wall_s']:7.3f}  {v['queries']:3d}  {v['observed']}"
              for name, v in c["per_claim"].items()]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(RESULTS, f"formal_timing{suffix}.txt"), "w", encoding="utf-8") as fh:
        fh.write(text)
    print(text, end="")
    ok = c["all_as_expected"] and out["controls"]["all_refuted"] and out["cli"]["exit_code"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
