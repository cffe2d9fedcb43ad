"""The numeric corners in the sampled audit's pair search: what they find and what they cost.

The sampled core (:mod:`dpaudit.auditing.core`) scores the float-rounding patterns and the numeric
corners (:func:`dpaudit.search.pairs.candidates` without the structured patterns) after the other
search phases, on a budget of their own. Two measurements, each audit in a fresh process:

* **finds**: the black-box mechanism of ``benchmarks/corner_bugs/relu_clip_sum.py`` (a snapped
  Laplace sum of records of [0, 2^60] clipped at 1 with x − max(x − 1, 0): 2ε-DP at a record
  2^53 + 2 only) and its control (clipped with min(x, 1): ε-DP), audited by ``dpaudit.audit`` at
  the default budget, with and without the corners (without: ``corner_pairs`` replaced by an
  empty list, which leaves every other phase as it was: ``tests/unit/test_sampled_corners.py``),
  and by ``dpaudit check FILE --no-replay`` of this tree and, with ``--before DIR``, of an older
  one (a folder holding its ``dpaudit`` package, run with ``PYTHONPATH=DIR`` and ``python -P``);
* **cost**: CPU seconds (user + system of the auditing process, imports excluded:
  ``_record.cpu_seconds``) of the default audit of ``examples/laplace_sum.py`` with and without
  the corners, ``--repeats`` times interleaved, medians; and of the whole ``dpaudit check
  examples/laplace_sum.py`` command (its process and its children: the sandbox) for this tree and
  the ``--before`` one.

    python benchmarks/corner_search.py [--repeats R] [--before DIR] [--seed S]

Results: ``benchmarks/results/corner_search.json`` and ``.txt`` (machine, date, figures).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys

from _record import ROOT, emit, machine, save

BUG_FILE = ROOT / "benchmarks" / "corner_bugs" / "relu_clip_sum.py"
SUM_FILE = ROOT / "examples" / "laplace_sum.py"
PYTHON = sys.executable

# one audit, in a fresh process: prints its verdict, label, bound, samples, phases and CPU seconds
_ONE = r"""
import importlib.util, json, sys
from _record import cpu_seconds
import dpaudit
import dpaudit.auditing.sampled as engine
path, name, corners, seed = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4])
spec = importlib.util.spec_from_file_location("target", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
if not corners:
    engine.corner_pairs = lambda spec, seed: []
c0 = cpu_seconds()
r = dpaudit.audit(getattr(module, name), seed=seed)
cpu = cpu_seconds() - c0
print(json.dumps({"verdict": r.verdict.value, "epsilon_lb": r.epsilon_lower_bound,
                  "pair": r.details.get("pair_label"), "samples": r.samples, "cpu_seconds": cpu,
                  "corners": r.details["phases"].get("corners")}))
"""


def one(path, name: str, corners: bool, seed: int) -> dict:
    out = subprocess.run([PYTHON, "-c", _ONE, str(path), name, "1" if corners else "0", str(seed)],
                         capture_output=True, text=True, cwd=ROOT / "benchmarks", check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "benchmarks")})
    return json.loads(out.stdout.strip().splitlines()[-1])


def check(target: str, tree, seed: int) -> dict:
    """``dpaudit check TARGET --no-replay`` (finds) or with its defaults (cost) with the dpaudit of
    ``tree`` (None: this one): verdict line and CPU seconds of the command and its children."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # -P: the working directory (this tree) is not put ahead of PYTHONPATH (the older tree)
    args = [PYTHON, "-P", "-m", "dpaudit.cli", "check", *target.split(), f"--seed={seed}", "--exit-zero"]
    out = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    line = next((x for x in out.stdout.splitlines() if "REFUTED" in x), out.stdout.strip()[:300])
    return {"verdict_line": line, "cpu_seconds": round(cpu, 2), "returncode": out.returncode}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--before", help="a folder holding an older dpaudit package (PYTHONPATH)")
    args = ap.parse_args(argv)
    record: dict = {"machine": machine(), "seed": args.seed, "repeats": args.repeats,
                    "before": args.before}
    lines: list[str] = []
    emit(lines, "finds: dpaudit.audit at the default budget, seed %d" % args.seed)
    finds = {}
    for name in ("buggy", "fixed"):
        for corners in (False, True):
            r = one(BUG_FILE, name, corners, args.seed)
            finds[f"{name}, corners {'on' if corners else 'off'}"] = r
            emit(lines, f"  {name:5s} corners {'on ' if corners else 'off'}: {r['verdict']:11s} "
                        f"ε ≥ {r['epsilon_lb']:.4g}  pair: {r['pair']}  corner pairs scored: "
                        f"{(r['corners'] or {}).get('pairs', 0)}")
    record["finds"] = finds
    checks = {}
    for name in ("buggy", "fixed"):
        for label, tree in (("this tree", None), ("before", args.before)):
            if label == "before" and tree is None:
                continue
            r = check(f"{BUG_FILE.relative_to(ROOT)}:{name} --no-replay", tree, args.seed)
            checks[f"{name}, {label}"] = r
            emit(lines, f"  dpaudit check {name} --no-replay ({label}): {r['verdict_line']}")
    record["check_no_replay"] = checks
    emit(lines, "cost: CPU seconds of the default audit of examples/laplace_sum.py "
                f"(medians of {args.repeats}, interleaved)")
    runs: dict = {"audit, corners off": [], "audit, corners on": [], "check, this tree": []}
    if args.before:
        runs["check, before"] = []
    for _ in range(args.repeats):
        runs["audit, corners off"].append(one(SUM_FILE, "noisy_sum", False, args.seed))
        runs["audit, corners on"].append(one(SUM_FILE, "noisy_sum", True, args.seed))
        runs["check, this tree"].append(check(str(SUM_FILE.relative_to(ROOT)), None, args.seed))
        if args.before:
            runs["check, before"].append(check(str(SUM_FILE.relative_to(ROOT)), args.before, args.seed))
    cost = {}
    for key, rs in runs.items():
        cost[key] = {"cpu_seconds_median": round(statistics.median(r["cpu_seconds"] for r in rs), 2),
                     "cpu_seconds": [round(r["cpu_seconds"], 2) for r in rs],
                     "verdict": rs[0].get("verdict") or rs[0].get("verdict_line"),
                     "corners": rs[0].get("corners")}
        emit(lines, f"  {key:20s} {cost[key]['cpu_seconds_median']:6.2f} CPU-s  "
                    f"{cost[key]['cpu_seconds']}  {cost[key]['verdict']}")
    off, on = cost["audit, corners off"]["cpu_seconds_median"], cost["audit, corners on"]["cpu_seconds_median"]
    emit(lines, f"  the corners add {on - off:+.2f} CPU-s to the default audit ({on / off - 1:+.1%})")
    record["cost"] = cost
    print("\n".join(str(p) for p in save("corner_search", record, lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
