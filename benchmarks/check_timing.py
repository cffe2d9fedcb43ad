"""Timings of ``dpaudit check`` and of its sandbox, against their targets.

1. ``dpaudit check examples/laplace_sum.py`` with default settings, end to end in a subprocess
   (interpreter start, sandbox child, audit, summary): target ≤ 15 s wall.
2. Sandbox overhead against in-process execution on a batch-form Laplace mechanism (target
   ≤ 10%), interleaving the two so both see the same machine load:
   a. the executor alone: the same ``plan_batches`` tasks through ``InProcessExecutor`` and
      ``SandboxExecutor`` (one warm child), medians over repeats: the worst case, no audit work;
   b. a whole ``dpaudit.audit`` (default budget) with ``executor=InProcessExecutor()`` against a
      warm ``SandboxExecutor`` (the ratio the target is about), and the child's start-up time on
      its own (``dpaudit check`` overlaps it with importing the auditor);
   c. ``dpaudit check`` (strict isolation: Landlock and seccomp where the kernel has them) against
      ``dpaudit check --isolation=process`` and ``dpaudit check --in-process``, end to end: the
      ratio the 1.1x target is about, with the isolation in force recorded.

Wall times on a loaded machine are noisy (every hand-off between the parent and the child waits
for a time slice), so CPU times (this process plus the sandbox child, from /proc) are recorded
beside them: on a quiet machine the wall ratio follows the CPU ratio. Results go to ``benchmarks/results/check_timing.json`` with the machine
(platform, CPU count, load average) and the date.

    python benchmarks/check_timing.py            # full run (the recorded figures)
    python benchmarks/check_timing.py --quick    # smoke run, a few seconds
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "laplace_sum.py")
RESULTS = os.path.join(ROOT, "benchmarks", "results", "check_timing.json")


def time_check_cli(repeats: int) -> dict:
    """Wall time of `dpaudit check examples/laplace_sum.py` (default settings) in a subprocess:
    sandboxed with the default (strict) isolation, with --isolation=process, and --in-process,
    interleaved: the end-to-end cost of the sandbox and of its isolation."""
    import tempfile

    variants = (("sandbox", []), ("process_only", ["--isolation=process"]),
                ("in_process", ["--in-process"]))
    walls: dict = {name: [] for name, _ in variants}
    codes, summary, isolation = [], [], {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        for _ in range(repeats):
            for name, extra in variants:
                t0 = time.perf_counter()
                proc = subprocess.run([sys.executable, "-m", "dpaudit", "check", EXAMPLE, "--quiet",
                                       f"--json={out}", *extra], cwd=ROOT, capture_output=True,
                                      text=True)
                walls[name].append(time.perf_counter() - t0)
                codes.append(proc.returncode)
                summary = proc.stdout.strip().splitlines()[:1]
                with open(out) as fh:
                    isolation[name] = json.load(fh)["results"][0].get("isolation")
    med = {k: statistics.median(v) for k, v in walls.items()}
    return {"command": "dpaudit check examples/laplace_sum.py [--isolation=process | --in-process]",
            "wall_s": walls, "median_wall_s": med, "isolation": isolation,
            "ratio_wall": med["sandbox"] / med["in_process"],
            "ratio_wall_process_only": med["process_only"] / med["in_process"],
            "target_ratio": 1.10, "meets_ratio_target": med["sandbox"] / med["in_process"] <= 1.10,
            "exit_codes": codes, "summary": summary, "target_s": 15.0,
            "meets_target": med["sandbox"] <= 15.0}


def _spec():
    from dpaudit.loader import load_mechanism
    from dpaudit.spec import MechanismSpec

    loaded = load_mechanism(EXAMPLE)
    return loaded, MechanismSpec.from_function(loaded.func, name=loaded.target)


def time_executors(samples: int, repeats: int) -> dict:
    """The same batches in process and in the (warm) sandbox, interleaved; medians per run."""
    from dpaudit.rng import root_sequence
    from dpaudit.execution.base import InProcessExecutor, plan_batches
    from dpaudit.execution.sandbox import SandboxExecutor

    loaded, spec = _spec()
    tasks = plan_batches(np.zeros(spec.size), root_sequence(1), samples)
    inproc = InProcessExecutor()
    walls = {"in_process": [], "sandbox": []}
    cpus = {"in_process": [], "sandbox": []}
    with SandboxExecutor(loaded.path, loaded.function) as sandbox:
        sandbox.run(spec, tasks[:1])  # start the child outside the timed region
        for _ in range(repeats):
            for name, ex in (("in_process", inproc), ("sandbox", sandbox)):
                pid = sandbox.pid if name == "sandbox" else None
                c0, t0 = cpu_seconds(pid), time.perf_counter()
                ex.run(spec, tasks)
                walls[name].append(time.perf_counter() - t0)
                cpus[name].append(cpu_seconds(pid) - c0)
    med = {k: statistics.median(v) for k, v in walls.items()}
    cpu = {k: statistics.median(v) for k, v in cpus.items()}
    return {"samples": samples, "batches": len(tasks), "repeats": repeats, "wall_s": walls,
            "cpu_s": cpus, "median_wall_s": med, "median_cpu_s": cpu,
            "ratio_wall": med["sandbox"] / med["in_process"],
            "ratio_cpu": cpu["sandbox"] / cpu["in_process"],
            "per_batch_overhead_ms": 1e3 * (med["sandbox"] - med["in_process"]) / len(tasks)}


def time_audits(repeats: int, samples) -> dict:
    """A whole dpaudit.audit of the batch Laplace in process and in a warm sandbox child,
    interleaved; and, separately, how long a child takes to start (spawn to ready)."""
    import dpaudit
    from dpaudit.execution.base import InProcessExecutor
    from dpaudit.execution.sandbox import SandboxExecutor

    loaded, spec = _spec()
    dpaudit.audit(spec, seed=2, samples=20_000, executor=InProcessExecutor())  # warm imports
    walls = {"in_process": [], "sandbox": []}
    cpus = {"in_process": [], "sandbox": []}
    bounds = {"in_process": [], "sandbox": []}
    starts = []
    for _ in range(repeats):
        with SandboxExecutor(loaded.path, loaded.function) as sandbox:
            t0 = time.perf_counter()
            sandbox.start()
            starts.append(time.perf_counter() - t0)
            for name, ex in (("in_process", InProcessExecutor()), ("sandbox", sandbox)):
                pid = sandbox.pid if name == "sandbox" else None
                c0, t0 = cpu_seconds(pid), time.perf_counter()
                result = dpaudit.audit(spec, seed=1, samples=samples, executor=ex)
                walls[name].append(time.perf_counter() - t0)
                cpus[name].append(cpu_seconds(pid) - c0)
                bounds[name].append(result.epsilon_lower_bound)
    med = {k: statistics.median(v) for k, v in walls.items()}
    cpu = {k: statistics.median(v) for k, v in cpus.items()}
    return {"samples": samples, "repeats": repeats, "wall_s": walls, "median_wall_s": med,
            "cpu_s": cpus, "median_cpu_s": cpu, "ratio_cpu": cpu["sandbox"] / cpu["in_process"],
            "ratio_wall": med["sandbox"] / med["in_process"], "target_ratio": 1.10,
            "meets_target": med["sandbox"] / med["in_process"] <= 1.10,
            "verdict": result.verdict.value, "epsilon_lower_bounds": bounds,
            "same_result": bounds["in_process"] == bounds["sandbox"],
            "child_start_s": starts, "median_child_start_s": statistics.median(starts)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: small sizes, one repeat")
    ap.add_argument("--out", default=RESULTS, help="where to write the JSON results")
    args = ap.parse_args()
    quick = args.quick
    report = {"benchmark": "check_timing", "quick": quick, "machine": machine()}
    report["executor"] = time_executors(samples=200_000 if quick else 2_000_000,
                                        repeats=3 if quick else 9)
    e = report["executor"]
    print(f"executor: sandbox/in-process wall ratio {e['ratio_wall']:.3f}, CPU ratio "
          f"{e['ratio_cpu']:.3f} ({e['per_batch_overhead_ms']:.2f} ms wall per 50k batch)")
    report["audit"] = time_audits(repeats=1 if quick else 15, samples=20_000 if quick else None)
    a = report["audit"]
    print(f"audit: in-process {a['median_wall_s']['in_process']:.2f} s, warm sandbox "
          f"{a['median_wall_s']['sandbox']:.2f} s, ratio {a['ratio_wall']:.3f} "
          f"(target <= 1.10; CPU ratio {a['ratio_cpu']:.3f}), same result: {a['same_result']}; child start "
          f"{a['median_child_start_s']:.2f} s")
    report["check_cli"] = time_check_cli(repeats=1 if quick else 5)
    c = report["check_cli"]
    print(f"dpaudit check examples/laplace_sum.py: median {c['median_wall_s']['sandbox']:.2f} s "
          f"with isolation {c['isolation']['sandbox']!r} (target <= 15 s; --in-process "
          f"{c['median_wall_s']['in_process']:.2f} s, ratio {c['ratio_wall']:.3f}, target <= 1.10; "
          f"--isolation=process ratio {c['ratio_wall_process_only']:.3f}), exit codes "
          f"{c['exit_codes']}")
    finish(report["machine"])
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(report, fh, indent=2)
        fh.write("\n")
    print(f"wrote {os.path.relpath(args.out, ROOT)}")


if __name__ == "__main__":
    main()
