"""Audits on Dask: throughput per worker count, overhead against the fork pool, parent memory at a
large budget, and (ε, δ) audits of the Gaussian mechanism at budgets only a cluster affords.

Parts (each runs in a fresh Python process, so clusters and peak memory do not leak between them):

* ``throughput``: samples/s of the validation stage (the event counted where the samples are
  drawn; :meth:`dpaudit.execution.dask.DaskExecutor.count`) for the Laplace batch mechanism, on a
  ``LocalCluster`` of 1, 2, ... worker processes, and the same batches on a
  :class:`~dpaudit.execution.fork.ForkExecutor` of as many workers (which also counts in its
  workers; with one worker it runs in process). Parallel efficiency = rate(w) / (w · rate(1)), for
  Dask and for the fork pool (the fork pool's is what the machine itself allows: independent
  processes, no scheduler); overhead = 1 − rate(dask) / rate(fork) at equal workers. The counts of
  every run are checked equal (same seeds).
* ``rss``: a full audit of the Laplace mechanism on Dask at growing budgets; the parent's peak RSS
  (``ru_maxrss``) must stay flat: validation returns counts, the selection phases draw at most
  ``SELECTION_BASE`` samples.
* ``gaussian``: the Gaussian mechanism with the analytic σ for (ε, δ) = (1, 1e-6) (Balle and Wang
  2018, Theorem 8: δ(ε) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ)) is NOT REFUTED, and with σ halved
  REFUTED with δ_LB reported, on a LocalCluster.
* ``laplace-tight``: Laplace at ε = 0.1 at a large budget: how close ε_LB gets to 0.1, at 1 and 2
  workers (the same value: same seed).

Run::

    python benchmarks/distributed.py                    # every part, budgets for this machine
    python benchmarks/distributed.py --workers 1 2 4 8 16 --scale 10   # a larger machine
    python benchmarks/distributed.py --quick            # smoke run (results/distributed_quick.*)
    python benchmarks/distributed.py --scale 2.5 --only rss laplace-tight --tag 1e9   # 10⁹ samples

Recorded (``results/``): ``distributed_quiet`` (throughput, 2 cores); ``distributed_1e9`` and
``distributed_laplace_tight_1e9`` (2 cores, before float-structure events existed: the mechanism
was then audited over the reals by default); on a 16-core machine lent for the purpose (an
``Intel(R) Xeon(R) Processor``, 1 thread per core, under gVisor): ``distributed_device16``
(throughput at 1-16 workers; its ``rss`` rows audited float64 ``x + noise`` with float events on,
refuted by porosity, so they measure nothing: see ``distributed_device16_rss``),
``distributed_device16_audits`` (Gaussian at 10⁹ samples), ``distributed_device16_1e10`` (Laplace at
ε = 0.1 with 10¹⁰ samples) and ``distributed_device16_rss`` (parent RSS with batches made as they
are counted, commit after 9500abc; the device's header names the session's base commit).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

# This file's folder is on sys.path when it runs as a script, and its name would shadow the
# `distributed` package: take the folder off and load the record helper by path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
_spec_record = importlib.util.spec_from_file_location("_dpaudit_bench_record", _HERE / "_record.py")
_record = importlib.util.module_from_spec(_spec_record)
_spec_record.loader.exec_module(_record)
emit, machine, save = _record.emit, _record.machine, _record.save

EPS = 1.0


def laplace_sum(data, rng, size=None):
    """Sum of records in [0, 1] plus Laplace(1/ε): ε-DP under add/remove."""
    return data.sum() + rng.laplace(scale=1.0 / EPS, size=size)


def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest σ with δ(ε) ≤ δ for the Gaussian mechanism (Balle and Wang 2018, Thm 8)."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    def excess(sigma: float) -> float:
        a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
        return norm.cdf(a - b) - math.exp(epsilon) * norm.cdf(-a - b) - delta

    return brentq(excess, 1e-3, 1e3, xtol=1e-12)


def _spec(fn, **claim):
    import dpaudit

    # Audited over the reals (float-structure events off): x + rng.laplace in float64 is porous and
    # would be refuted at any ε (benchmarks/floating_point.py); these parts measure scale, not that.
    return dpaudit.MechanismSpec.from_function(fn, neighbours="add-remove", domain=(0.0, 1.0), size=10,
                                               **claim).idealised()


def _units(n: int):
    import numpy as np

    from dpaudit.execution.base import plan_batches
    from dpaudit.execution.counting import CountUnit

    d, dp = (0.0,) * 9 + (1.0,), (0.0,) * 9
    a = plan_batches(d, np.random.SeedSequence(1), n // 2)
    b = plan_batches(dp, np.random.SeedSequence(1), n // 2)
    return [CountUnit((x, y), paired=True) for x, y in zip(a, b)]


def part_throughput(workers: list[int], samples: int) -> dict:
    import numpy as np

    from dpaudit.estimators.events import Event
    from dpaudit.estimators.scores import Identity
    from dpaudit.execution.counting import count_units
    from dpaudit.execution.dask import DaskExecutor
    from dpaudit.execution.fork import ForkExecutor
    from dpaudit.outputs import OutputEncoder

    spec = _spec(laplace_sum, epsilon=EPS)
    encoder, event = OutputEncoder(), Event(Identity(), "above", lo=1.0)
    encoder.encode(np.zeros(1), np.zeros(1))
    units = _units(samples)
    rows, reference = [], None
    for w in workers:
        row = {"workers": w}
        with DaskExecutor.local(w, processes=True) as ex:
            ex.count(spec, encoder, event, units[: 2 * w])  # warm: workers import numpy, get the spec
            t0 = time.perf_counter()
            counts = ex.count(spec, encoder, event, units)
            row["dask_s"] = time.perf_counter() - t0
        with ForkExecutor(w) as fork:
            count_units(fork, spec, encoder, event, units[: 2 * w])
            t0 = time.perf_counter()
            fork_counts = count_units(fork, spec, encoder, event, units)
            row["fork_s"] = time.perf_counter() - t0
        reference = reference or counts
        row["same_counts"] = counts == reference and fork_counts == reference
        row["dask_samples_per_s"] = samples / row["dask_s"]
        row["fork_samples_per_s"] = samples / row["fork_s"]
        row["dask_overhead_vs_fork"] = 1.0 - row["dask_samples_per_s"] / row["fork_samples_per_s"]
        rows.append(row)
    base = rows[0]["dask_samples_per_s"] / rows[0]["workers"]
    fork_base = rows[0]["fork_samples_per_s"] / rows[0]["workers"]
    for row in rows:
        row["dask_efficiency"] = row["dask_samples_per_s"] / (row["workers"] * base)
        row["fork_efficiency"] = row["fork_samples_per_s"] / (row["workers"] * fork_base)
    return {"samples": samples, "rows": rows}


def _audit(spec, samples: int, workers: int, seed: int = 1) -> dict:
    import dpaudit
    from dpaudit.execution.dask import DaskExecutor

    with DaskExecutor.local(workers, processes=True) as ex:
        t0 = time.perf_counter()
        r = dpaudit.audit(spec, samples=samples, seed=seed, confidence=0.95, executor=ex)
        secs = time.perf_counter() - t0
    return {"budget": samples, "workers": workers, "seconds": secs, "samples": r.samples,
            "samples_per_s": r.samples / secs, "verdict": r.verdict.value,
            "epsilon_lb": r.epsilon_lower_bound, "delta_lb": r.delta_lower_bound, "seed": seed,
            "event": None if r.counterexample is None else r.counterexample.event.get("text"),
            "pair": r.details.get("pair_label"), "bound_method": r.details.get("bound_method"),
            "parent_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def part_rss(samples: int, workers: int) -> dict:
    return _audit(_spec(laplace_sum, epsilon=EPS), samples, workers)


def part_gaussian(samples: int, workers: int, halved: bool) -> dict:
    sigma = analytic_sigma(1.0, 1e-6) * (0.5 if halved else 1.0)

    def gaussian_sum(data, rng, size=None):
        return data.sum() + rng.normal(scale=sigma, size=size)

    out = _audit(_spec(gaussian_sum, epsilon=1.0, delta=1e-6), samples, workers)
    out.update({"sigma": sigma, "halved": halved})
    return out


def part_laplace_tight(samples: int, workers: int, seed: int = 1) -> dict:
    def laplace_tenth(data, rng, size=None):
        return data.sum() + rng.laplace(scale=10.0, size=size)

    out = _audit(_spec(laplace_tenth, epsilon=0.1), samples, workers, seed=seed)
    out["relative_gap"] = (0.1 - out["epsilon_lb"]) / 0.1
    return out


def _child(part: str, **kw) -> dict:
    """Run one part in a fresh interpreter; its JSON result."""
    cmd = [sys.executable, __file__, "--part", part, "--args", json.dumps(kw)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{part} failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


PARTS = {"throughput": part_throughput, "rss": part_rss, "gaussian": part_gaussian,
         "laplace-tight": part_laplace_tight}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every budget")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", nargs="+", choices=sorted(PARTS), help="run only these parts")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1], help="seeds of the laplace-tight part")
    ap.add_argument("--tag", default="", help="write results/distributed_TAG.* (keeps the default run's files)")
    ap.add_argument("--part", help=argparse.SUPPRESS)
    ap.add_argument("--args", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.part:
        print(json.dumps(PARTS[args.part](**json.loads(args.args))))
        return 0
    s = 0.01 if args.quick else args.scale
    top = max(args.workers)
    started = machine(cpu_affinity=len(os.sched_getaffinity(0)))
    lines: list[str] = []
    record: dict = {"quick": args.quick, "scale": s, "workers": args.workers}
    parts = args.only or list(PARTS)
    if "throughput" in parts:
        t = record["throughput"] = _child("throughput", workers=args.workers, samples=int(4e7 * s))
        emit(lines, f"validation throughput, Laplace batch, {t['samples']:,} samples (counted in the workers):")
        for r in t["rows"]:
            emit(lines, f"  {r['workers']:>2} workers: dask {r['dask_samples_per_s'] / 1e6:6.1f} M/s "
                        f"(efficiency {r['dask_efficiency']:.2f}), fork pool {r['fork_samples_per_s'] / 1e6:6.1f} M/s "
                        f"(efficiency {r.get('fork_efficiency', float('nan')):.2f}), "
                        f"dask overhead {100 * r['dask_overhead_vs_fork']:+.1f}%, same counts {r['same_counts']}")
    if "rss" in parts:
        record["rss"] = [_child("rss", samples=int(b * s), workers=top) for b in (2e7, 1e8, 4e8)]
        emit(lines, "parent peak RSS, full Laplace audit on Dask:")
        for r in record["rss"]:
            emit(lines, f"  budget {r['budget']:>13,}: {r['parent_peak_rss_mb']:7.1f} MB, {r['seconds']:7.1f} s, "
                        f"{r['samples_per_s'] / 1e6:5.1f} M samples/s, ε_LB {r['epsilon_lb']:.4f} ({r['verdict']})")
    if "gaussian" in parts:
        record["gaussian"] = [_child("gaussian", samples=int(1e8 * s), workers=top, halved=h) for h in (False, True)]
        emit(lines, "Gaussian mechanism, claim (1, 1e-6), analytic σ and σ halved:")
        for r in record["gaussian"]:
            emit(lines, f"  σ = {r['sigma']:.4f}{' (halved)' if r['halved'] else ''}: {r['verdict']}, "
                        f"δ_LB at ε = 1: {r['delta_lb']:.3g}, ε_LB {r['epsilon_lb']:.4f}, "
                        f"{r['samples']:,} samples in {r['seconds']:.1f} s")
    if "laplace-tight" in parts:
        record["laplace_tight"] = [_child("laplace-tight", samples=int(4e8 * s), workers=w, seed=seed)
                                   for seed in args.seeds for w in (args.workers[:2] if seed == args.seeds[0] else [top])]
        emit(lines, "Laplace at ε = 0.1:")
        for r in record["laplace_tight"]:
            emit(lines, f"  seed {r['seed']}, {r['workers']} workers: {r['verdict']}, ε_LB {r['epsilon_lb']:.6f} "
                        f"({100 * r['relative_gap']:+.4f}% below 0.1) from {r['samples']:,} samples in "
                        f"{r['seconds']:.1f} s; pair {r['pair']}, event {r['event']}, bound {r['bound_method']}")
    record["machine"] = started
    for p in save("distributed" + (f"_{args.tag}" if args.tag else ""), record, lines):
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
