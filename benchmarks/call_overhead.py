"""What dpaudit adds to each call of a one-call target (no batch form), against the call itself.

For three targets ``f(data)`` of :mod:`call_overhead_targets` (a trivial Python function, an
OpenDP ``make_laplace`` measurement invoked once a call, diffprivlib's ``Laplace.randomise``), CPU
seconds per call:

* ``bare``: ``f(data)`` in a plain loop;
* ``in_process``: the same calls through :class:`dpaudit.execution.base.InProcessExecutor`
  (the tasks of :func:`dpaudit.execution.base.plan_batches`, :data:`LOOP_BATCH` calls each: the
  loop of :meth:`dpaudit.spec.MechanismSpec.call_batch`);
* ``sandboxed``: through a warm :class:`dpaudit.execution.sandbox.SandboxExecutor` (the child's
  loop, the reply and its reading here), CPU of this process plus the child's (from /proc).

``overhead`` is through-dpaudit minus bare, per call; the target of the work is an overhead no
larger than the library's own call. Medians of ``--repeats`` runs, the three ways interleaved so
that each sees the same load. ``--demo`` adds the time-limit demonstration: ``dpaudit check`` of
two 1 ms-a-call mechanisms (a correct Laplace sum and one with its scale halved) at
``--timeout 60``, wall time and verdict of each (``--before DIR``: of an older dpaudit too);
``--polars`` the CPU per call of an OpenDP Polars query released at each call against its
measurement resolved once and invoked.

    nice -n 10 python benchmarks/call_overhead.py [--calls N] [--repeats R] [--demo] [--polars] [--quick]

Results: ``benchmarks/results/call_overhead.json`` (machine, date, figures).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from _record import cpu_seconds, finish, machine

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGETS_FILE = os.path.join(HERE, "call_overhead_targets.py")
RESULTS = os.path.join(ROOT, "benchmarks", "results", "call_overhead.json")
TARGETS = ("trivial", "opendp_laplace", "diffprivlib_laplace")


def measure(name: str, calls: int, repeats: int) -> dict:
    sys.path.insert(0, HERE)
    import call_overhead_targets as targets

    from dpaudit.auditing.sampler import LOOP_BATCH
    from dpaudit.execution.base import InProcessExecutor, plan_batches
    from dpaudit.execution.sandbox import SandboxExecutor
    from dpaudit.spec import MechanismSpec

    func = getattr(targets, name)
    data = np.full(5, 0.5)
    spec = MechanismSpec.from_function(func, epsilon=1.0, size=5, domain=(0.0, 1.0))
    seed = np.random.SeedSequence(2024)
    tasks = plan_batches(data, seed, calls, LOOP_BATCH)
    in_proc = InProcessExecutor()
    box = SandboxExecutor(TARGETS_FILE, name, isolation="strict")
    box.start()
    in_proc.run(spec, tasks[:1])
    box.run(spec, tasks[:1])  # warm: the library's first call, the child's first batch
    func(data)
    runs = {"bare": [], "in_process": [], "sandboxed": []}
    try:
        for _ in range(repeats):
            c0 = cpu_seconds()
            for _ in range(calls):
                func(data)
            runs["bare"].append((cpu_seconds() - c0) / calls)
            c0 = cpu_seconds()
            in_proc.run(spec, tasks)
            runs["in_process"].append((cpu_seconds() - c0) / calls)
            c0 = cpu_seconds(box.pid)
            box.run(spec, tasks)
            runs["sandboxed"].append((cpu_seconds(box.pid) - c0) / calls)
    finally:
        box.close()
    med = {k: statistics.median(v) for k, v in runs.items()}
    out = {"calls": calls, "repeats": repeats, "isolation": box.isolation_in_force,
           "cpu_s_per_call": med, "runs": runs,
           "overhead_s_per_call": {k: med[k] - med["bare"] for k in ("in_process", "sandboxed")}}
    out["overhead_over_call"] = {k: v / med["bare"] for k, v in out["overhead_s_per_call"].items()}
    return out


def polars_forms(repeats: int) -> dict:
    """CPU seconds per call, bare, of an OpenDP Polars query released at each call against its
    measurement resolved once and invoked (the form the advice line names)."""
    sys.path.insert(0, HERE)
    import call_overhead_targets as targets

    data = np.full(10, 0.5)
    out = {}
    for name, calls in (("polars_release", 3), ("polars_resolved", 200)):
        func = getattr(targets, name)
        func(data)  # warm: imports, the resolved measurement
        runs = []
        for _ in range(repeats):
            c0 = cpu_seconds()
            for _ in range(calls):
                func(data)
            runs.append((cpu_seconds() - c0) / calls)
        out[name] = {"calls": calls, "cpu_s_per_call": statistics.median(runs), "runs": runs}
    return out


def _check(name: str, timeout: float, root: str) -> dict:
    """One ``dpaudit check`` of ``name`` at ``--timeout``, with dpaudit from ``root``."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        cmd = [sys.executable, "-m", "dpaudit", "check", f"{TARGETS_FILE}:{name}",
               "--timeout", f"{timeout:g}", "--json", report]
        env = dict(os.environ, CI="1", PYTHONPATH=os.pathsep.join([root, HERE]))
        t0 = time.monotonic()
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, env=env)
        wall = time.monotonic() - t0
        rec = json.loads(open(report).read())["results"][0] if os.path.exists(report) else {}
    said = [l for l in done.stdout.splitlines()
            if any(w in l for w in ("REFUTED", "INCONCLUSIVE", "ERROR", "reproduce:"))]
    details = rec.get("details") or {}
    return {"command": f"dpaudit check benchmarks/call_overhead_targets.py:{name} --timeout {timeout:g}",
            "exit": done.returncode, "wall_s": round(wall, 2), "verdict": rec.get("verdict"),
            "samples": rec.get("samples"), "epsilon_lower_bound": rec.get("epsilon_lower_bound"),
            "limits": rec.get("limits"), "budget_fitted": details.get("budget_fitted"),
            "findings": {q: {"verdict": f.get("verdict"), "epsilon_lower_bound": f.get("epsilon_lower_bound")}
                         for q, f in (rec.get("findings") or {}).items() if isinstance(f, dict)},
            "lines": [l.replace(TARGETS_FILE, "call_overhead_targets.py") for l in said]}


def demo(timeout: float, before: str | None) -> dict:
    """``dpaudit check`` of the two 1 ms mechanisms at ``--timeout``: wall time (from the
    interpreter's start), verdict, samples, the fitted budget; with ``before`` (a folder holding
    an older dpaudit package, e.g. ``git archive`` of a commit) the same runs of that one too,
    interleaved."""
    out: dict = {}
    for name in ("slow_laplace", "slow_laplace_halved"):
        for label, root in (("before", before), ("now", ROOT)):
            if root is None:
                continue
            out.setdefault(label, {})[name] = res = _check(name, timeout, root)
            print(label, name, json.dumps(res, indent=1), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--demo", action="store_true", help="the --timeout 60 runs of the 1 ms mechanisms")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--before", help="a folder holding an older dpaudit package: the demo runs it too")
    ap.add_argument("--polars", action="store_true", help="an OpenDP Polars query: released per call vs resolved once")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 4,000 calls, one repeat")
    ap.add_argument("--out", default=RESULTS)
    args = ap.parse_args()
    calls, repeats = (4_000, 1) if args.quick else (args.calls, args.repeats)
    os.environ.setdefault("RUST_LIB_BACKTRACE", "0")
    record = {"machine": machine(), "benchmark": "call_overhead", "targets": {}}
    for name in TARGETS:
        try:
            record["targets"][name] = res = measure(name, calls, repeats)
        except ImportError as exc:  # a library not installed: said, not measured
            record["targets"][name] = {"skipped": f"{type(exc).__name__}: {exc}"}
            continue
        per = res["cpu_s_per_call"]
        print(f"{name:20s} bare {per['bare'] * 1e6:8.2f} µs  in process {per['in_process'] * 1e6:8.2f} µs"
              f"  sandboxed {per['sandboxed'] * 1e6:8.2f} µs  (overhead {res['overhead_s_per_call']['in_process'] * 1e6:.2f}"
              f" / {res['overhead_s_per_call']['sandboxed'] * 1e6:.2f} µs per call)", flush=True)
    if args.polars:
        try:
            record["polars"] = res = polars_forms(repeats)
            print("polars: " + ", ".join(f"{k} {v['cpu_s_per_call']:.4g} s per call" for k, v in res.items()))
        except ImportError as exc:
            record["polars"] = {"skipped": f"{type(exc).__name__}: {exc}"}
    if args.demo:
        record["time_limit_demo"] = demo(args.timeout, args.before)
    finish(record["machine"])
    with open(args.out, "w") as fh:
        json.dump(record, fh, indent=1)
        fh.write("\n")
    print(f"wrote {os.path.relpath(args.out, ROOT)}")


if __name__ == "__main__":
    main()
