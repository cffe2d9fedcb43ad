"""Power of the sampled auditor on the standard violation-finder suite (StatDP / DP-Sniper).

The mechanisms follow their published definitions, written here as vectorised batch forms
``f(data, rng, size)``:

* Laplace; NoisyHist1 (Lap(1/ε) per bin) and NoisyHist2 (Lap(ε)); ReportNoisyMax1-4 (Laplace or
  exponential noise of scale 2/ε, the index for 1-2, the noisy maximum for 3-4): Ding, Wang, Wang,
  Zhang and Kifer 2018, "Detecting violations of differential privacy", Algs 5-10;
* SVT1-6: Lyu, Su and Li 2017, "Understanding the sparse vector technique for differential
  privacy", Algs 1-6, with c = 1 and 10 queries, outputs encoded as in DP-Sniper (1 true, 0 false,
  -1 aborted; SVT3 releases the noisy answer, -1000 false, -2000 aborted), thresholds T = 0.5 for
  SVT1 and 1 otherwise;
* OneTimeRAPPOR and RAPPOR: Erlingsson, Pihur and Korolova 2014, steps 1-2 and 1-3, with
  DP-Sniper's parameters (4 hashes, 20-bit Bloom filter, f = 0.95 one-time; f = 0.75, p = 0.45,
  q = 0.55), the Bloom filter hashed with MurmurHash3 (x86, 32-bit) of the decimal value as mmh3 does;
* LaplaceParallel: 20 Laplace mechanisms of ε = 0.005 on one value.

The real-valued outputs of the correct mechanisms (Laplace, NoisyHist1, LaplaceParallel) are rounded
to the grid 2^-30·Z (the mechanisms over the reals, which is what the suite measures: raw float64
x + Laplace is porous, not DP for any ε, and dpaudit refutes it; benchmarks/floating_point.py);
every audit answers both questions, as by default: each row's target is met by its *logic*
finding (the claim over the reals), and its float64 finding is recorded beside it (``--float off``
asks the logic question only, to measure what the float64 one costs).

Claimed ε = 0.1 everywhere. Neighbours as in DP-Sniper's evaluation (Bichsel et al. 2021, §6):
``linf`` over [-10, 10] (component-wise ±1) for the query-answer mechanisms, one record of a 1-D
input for Laplace, RAPPOR and LaplaceParallel; NoisyHist changes a single bin by 1 (``l1`` over the
integer-valued domain [0, 10] of DP-Sniper), since under ``linf`` a 5-bin histogram with Lap(1/ε)
is only 5ε-DP and would not be a "correct" mechanism. 90% confidence, at most 2·10⁷ samples.

Run::

    python benchmarks/violation_suite.py                # full suite, writes results/violation_suite.json
    python benchmarks/violation_suite.py --quick        # smoke run (2·10⁶ samples each)
    python benchmarks/violation_suite.py --only SVT4    # one mechanism
    python benchmarks/violation_suite.py --quick --float off --out results/x.json
    python benchmarks/violation_suite.py --early-stop   # as dpaudit.audit runs by default

Each row runs in a fresh process and records its CPU-seconds (user + system of that process and
its children, imports excluded), the part of them spent inside the mechanism's own calls, its peak
resident memory, and the load average (the machine may be shared), next to the cost targets of
:data:`COST_TARGETS`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from _record import finish, machine

EPS = 0.1
RESULTS = Path(__file__).resolve().parent / "results" / "violation_suite.json"


# --------------------------------------------------------------------------------- mechanisms

def _n(size: Optional[int]) -> int:
    return 1 if size is None else int(size)


def _ret(out: np.ndarray, size: Optional[int]):
    return out if size is not None else out[0]


def _on_grid(y: np.ndarray) -> np.ndarray:
    """y rounded to the grid 2^-30 Z (far coarser than the ulp of any output below 2^22): the
    real-valued mechanism DP-Sniper's suite audits, post-processed. Raw float64 x + Laplace is
    porous (not DP for any ε; benchmarks/floating_point.py) and dpaudit's float events refute it."""
    return np.round(y * 2.0**30) / 2.0**30


def laplace(data, rng, size=None):
    return _ret(_on_grid(data[0] + rng.laplace(scale=1 / EPS, size=_n(size))), size)


def noisy_hist1(data, rng, size=None):
    return _ret(_on_grid(data + rng.laplace(scale=1 / EPS, size=(_n(size), data.size))), size)


def noisy_hist2(data, rng, size=None):
    return _ret(data + rng.laplace(scale=EPS, size=(_n(size), data.size)), size)


def rnm1(data, rng, size=None):
    return _ret(np.argmax(data + rng.laplace(scale=2 / EPS, size=(_n(size), data.size)), axis=1), size)


def rnm2(data, rng, size=None):
    return _ret(np.argmax(data + rng.exponential(scale=2 / EPS, size=(_n(size), data.size)), axis=1), size)


def rnm3(data, rng, size=None):
    return _ret(np.max(data + rng.laplace(scale=2 / EPS, size=(_n(size), data.size)), axis=1), size)


def rnm4(data, rng, size=None):
    return _ret(np.max(data + rng.exponential(scale=2 / EPS, size=(_n(size), data.size)), axis=1), size)


def _svt_abort(above: np.ndarray, values: np.ndarray, false_code: float, abort_code: float,
               c: int = 1) -> np.ndarray:
    """Answer queries in order; after the c-th TRUE every later query is ABORTED."""
    count = np.cumsum(above, axis=1)
    before = np.concatenate([np.zeros((above.shape[0], 1)), count[:, :-1]], axis=1)
    out = np.where(above, values, false_code)
    return np.where(before >= c, abort_code, out)


def _svt_bits(data, rng, size, eps1, rho_scale, nu_scale, t, abort, c=1):
    n = _n(size)
    rho = rng.laplace(scale=rho_scale, size=(n, 1))
    nu = rng.laplace(scale=nu_scale, size=(n, data.size)) if nu_scale else 0.0
    above = (data + nu) >= (rho + t)
    if not abort:
        return _ret(above.astype(np.int8), size)
    return _ret(_svt_abort(above, 1, 0, -1, c).astype(np.int8), size)


def svt1(data, rng, size=None, c=1, t=0.5):
    e1 = EPS / 2
    return _svt_bits(data, rng, size, e1, 1 / e1, 2 * c / (EPS - e1), t, True, c)


def svt2(data, rng, size=None, c=1, t=1.0):
    e1 = EPS / 2
    e2 = EPS - e1
    n = _n(size)
    rho = rng.laplace(scale=c / e1, size=n)
    nu = rng.laplace(scale=2 * c / e2, size=(n, data.size))
    out = np.empty((n, data.size), dtype=np.int8)
    count = np.zeros(n)
    for i in range(data.size):
        above = data[i] + nu[:, i] >= rho + t
        out[:, i] = np.where(count >= c, -1, above)
        count += above & (count < c)
        fresh = rng.laplace(scale=c / e1, size=n)
        rho = np.where(above, fresh, rho)  # a new threshold after each TRUE
    return _ret(out, size)


def svt3(data, rng, size=None, c=1, t=1.0):
    e1 = EPS / 2
    n = _n(size)
    rho = rng.laplace(scale=1 / e1, size=(n, 1))
    m = data + rng.laplace(scale=c / (EPS - e1), size=(n, data.size))
    return _ret(_svt_abort(m >= rho + t, m, -1000.0, -2000.0, c), size)


def svt4(data, rng, size=None, c=1, t=1.0):
    e1 = EPS / 4
    return _svt_bits(data, rng, size, e1, 1 / e1, 1 / (EPS - e1), t, True, c)


def svt5(data, rng, size=None, t=1.0):
    e1 = EPS / 2
    return _svt_bits(data, rng, size, e1, 1 / e1, 0.0, t, False)


def svt6(data, rng, size=None, t=1.0):
    e1 = EPS / 2
    return _svt_bits(data, rng, size, e1, 1 / e1, 1 / (EPS - e1), t, False)


def murmur3_32(key: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86 32-bit (Appleby), signed like ``mmh3.hash``."""
    m = 0xFFFFFFFF
    c1, c2 = 0xCC9E2D51, 0x1B873593
    rotl = lambda x, r: ((x << r) | (x >> (32 - r))) & m  # noqa: E731
    h = seed & m
    nblocks = len(key) // 4
    for i in range(nblocks):
        k = int.from_bytes(key[4 * i: 4 * i + 4], "little")
        k = rotl((k * c1) & m, 15) * c2 & m
        h = (rotl(h ^ k, 13) * 5 + 0xE6546B64) & m
    tail = key[4 * nblocks:]
    k = 0
    for j in range(len(tail) - 1, -1, -1):
        k = (k << 8) | tail[j]
    if tail:
        h ^= rotl((k * c1) & m, 15) * c2 & m
    h ^= len(key)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & m
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & m
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h


def bloom_bits(value: int, hashes: int = 4, bits: int = 20) -> np.ndarray:
    f = np.zeros(bits)
    for i in range(hashes):
        f[murmur3_32(str(value).encode(), i) % bits] = 1.0
    return f


def _rappor(data, rng, size, f, p=None, q=None):
    n = _n(size)
    b = bloom_bits(int(np.floor(data[0])))
    u = rng.random((n, b.size))
    prr = np.where(u < f / 2, 1.0, np.where(u < f, 0.0, b))          # permanent randomized response
    if p is None:
        return _ret(prr, size)
    v = rng.random((n, b.size))
    return _ret((v < np.where(prr == 1.0, q, p)).astype(float), size)  # instantaneous response


def one_time_rappor(data, rng, size=None):
    return _rappor(data, rng, size, 0.95)


def rappor(data, rng, size=None):
    return _rappor(data, rng, size, 0.75, 0.45, 0.55)


def laplace_parallel(data, rng, size=None):
    return _ret(_on_grid(data[0] + rng.laplace(scale=1 / 0.005, size=(_n(size), 20))), size)


# --------------------------------------------------------------------------------- the suite

#: CPU-seconds per row at 2e7 samples: a tenth of DP-Sniper's measured figures (25.2, 66.6, 60.5,
#: 165.0, 91.6, 31.6, 64.4 CPU-s on a 2-core AMD EPYC machine); peak memory at most 500 MB
COST_TARGETS = {"Laplace": 2.5, "ReportNoisyMax3": 6.7, "ReportNoisyMax4": 6.1, "SVT3": 16.5,
                "SVT6": 9.2, "NoisyHist2": 3.2, "OneTimeRAPPOR": 6.4}
MEMORY_TARGET_MB = 500

@dataclass(frozen=True)
class Case:
    name: str
    func: Callable
    neighbours: str
    domain: tuple
    size: int
    correct: bool
    target: Optional[float] = None  # DP-Sniper's best published lower bound


SUITE = [
    Case("Laplace", laplace, "linf", (-10, 10), 1, True, 0.097),
    Case("NoisyHist1", noisy_hist1, "l1", (0, 10), 5, True),
    Case("NoisyHist2", noisy_hist2, "l1", (0, 10), 5, False, 9.0),
    Case("ReportNoisyMax1", rnm1, "linf", (-10, 10), 5, True),
    Case("ReportNoisyMax2", rnm2, "linf", (-10, 10), 5, True),
    Case("ReportNoisyMax3", rnm3, "linf", (-10, 10), 5, False, 0.245),
    Case("ReportNoisyMax4", rnm4, "linf", (-10, 10), 5, False, 1.0),
    Case("SVT1", svt1, "linf", (-10, 10), 10, True),
    Case("SVT2", svt2, "linf", (-10, 10), 10, True),
    Case("SVT3", svt3, "linf", (-10, 10), 10, False, 0.18),
    Case("SVT4", svt4, "linf", (-10, 10), 10, False, 0.17),
    Case("SVT5", svt5, "linf", (-10, 10), 10, False, 10.0),
    Case("SVT6", svt6, "linf", (-10, 10), 10, False, 0.32),
    Case("OneTimeRAPPOR", one_time_rappor, "linf", (-10, 10), 1, False, 0.60),
    Case("RAPPOR", rappor, "linf", (-10, 10), 1, False, 0.30),
    Case("LaplaceParallel", laplace_parallel, "linf", (-10, 10), 1, True),
]


class Timed:
    """``func`` with the process time of its calls added up in :attr:`seconds`: the mechanism's
    own share of an audit's CPU-seconds (the audit runs it in this process)."""

    def __init__(self, func: Callable) -> None:
        self.func, self.seconds = func, 0.0
        self.__name__ = getattr(func, "__name__", "mechanism")

    def __call__(self, data, rng, size=None):
        t0 = time.process_time()
        try:
            return self.func(data, rng, size)
        finally:
            self.seconds += time.process_time() - t0


def run_case(case: Case, samples: int, seed: int, confidence: float, float_policy: str = "error",
             early_stop: bool = False) -> dict:
    """One row: its targets are met by the *logic* finding (the claim over the reals: SVT3 and
    ReportNoisyMax3 through their missing noise, not through the porosity of their real outputs);
    the float64 finding is recorded beside it."""
    import dpaudit

    t0 = time.perf_counter()
    func = Timed(case.func)
    # by default the suite measures the tightest bound the whole budget gives, not the first
    # refutation (early_stop=True is what dpaudit.audit does by default)
    r = dpaudit.audit(func, epsilon=EPS, neighbours=case.neighbours, domain=case.domain,
                      size=case.size, samples=samples, confidence=confidence, seed=seed,
                      float=float_policy, early_stop=early_stop)
    secs = time.perf_counter() - t0
    logic, flt = r.findings["logic"], r.findings.get("float")
    lb = logic.epsilon_lower_bound
    ok = (logic.verdict is not None and logic.verdict.value == "not_refuted") if case.correct else (
        case.target is None or (lb or 0.0) >= case.target)
    cx = logic.counterexample
    return {"mechanism": case.name, "claimed_epsilon": EPS, "epsilon_lb": lb,
            "float_verdict": None if flt is None or flt.verdict is None else flt.verdict.value,
            "float_epsilon_lb": None if flt is None else flt.epsilon_lower_bound,
            "overall_verdict": r.verdict.value, "decided_by": r.decided_by,
            "samples": r.samples, "seconds": round(secs, 2),
            "verdict": None if logic.verdict is None else logic.verdict.value,
            "correct": case.correct, "target": case.target, "meets_target": bool(ok),
            "neighbours": case.neighbours, "domain": list(case.domain), "size": case.size,
            "pair": None if cx is None else [list(cx.dataset), list(cx.neighbour)],
            "event": None if cx is None else cx.event.get("text"),
            "method": logic.details.get("bound_method"), "error": r.error,
            "mechanism_cpu_seconds": round(func.seconds, 2)}


def _cpu_seconds() -> float:
    """Process time of this process and its waited-for children (user + system)."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _peak_mb() -> float:
    """Peak resident memory of this process or of its largest child, in MB (ru_maxrss: KiB)."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return max(own.ru_maxrss, kids.ru_maxrss) / 1024.0


def _worker(args):
    """One row in a fresh process (the pool gives each task its own), so its CPU-seconds and its
    peak memory are its own; imports are warmed first and left out of the CPU figure."""
    import os

    case_name, samples, seed, confidence, float_policy, early_stop = args
    case = next(c for c in SUITE if c.name == case_name)
    import dpaudit.auditing.sampled  # noqa: F401  (import cost is not the audit's)
    import statsmodels.stats.proportion  # noqa: F401

    load0 = os.getloadavg()
    cpu0 = _cpu_seconds()
    row = run_case(case, samples, seed, confidence, float_policy, early_stop)
    row["cpu_seconds"] = round(_cpu_seconds() - cpu0, 2)
    row["peak_memory_mb"] = round(_peak_mb(), 1)
    row["early_stop"] = early_stop
    row["loadavg"] = [round(v, 2) for v in load0] + [round(os.getloadavg()[0], 2)]
    row["cost_target_cpu_seconds"] = COST_TARGETS.get(case.name)
    return row


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 2e6 samples per mechanism")
    ap.add_argument("--samples", type=int, default=None, help="samples per mechanism (default 2e7)")
    ap.add_argument("--seed", type=int, default=2021)
    ap.add_argument("--confidence", type=float, default=0.9)
    ap.add_argument("--jobs", type=int, default=2, help="mechanisms audited at once (processes)")
    ap.add_argument("--only", action="append", help="only this mechanism (repeatable)")
    ap.add_argument("--out", default=str(RESULTS), help="JSON results file")
    ap.add_argument("--float", dest="float_policy", choices=("error", "warn", "off"), default="error",
                    help="the float policy (default error, as in dpaudit; off: the logic question only)")
    ap.add_argument("--early-stop", action="store_true",
                    help="audit as dpaudit.audit does by default (stop at the first refuting look)")
    args = ap.parse_args(argv)
    samples = args.samples or (2_000_000 if args.quick else 20_000_000)
    cases = [c for c in SUITE if not args.only or c.name in args.only]
    # slowest first, so the two workers finish together
    order = sorted(cases, key=lambda c: -c.size)
    started, t0 = machine(), time.perf_counter()
    work = [(c.name, samples, args.seed, args.confidence, args.float_policy, args.early_stop) for c in order]
    print(f"{'mechanism':<16} {'claimed':>7} {'eps_LB':>9} {'samples':>10} {'seconds':>8}  verdict      target")
    rows = {}
    if args.jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(args.jobs, maxtasksperchild=1) as pool:
            for row in pool.imap_unordered(_worker, work):
                rows[row["mechanism"]] = row
                _print(row)
    else:
        import multiprocessing

        for w in work:  # still one fresh process per row
            with multiprocessing.get_context("fork").Pool(1, maxtasksperchild=1) as pool:
                row = pool.apply(_worker, (w,))
            rows[row["mechanism"]] = row
            _print(row)
    wall = time.perf_counter() - t0
    ordered = [rows[c.name] for c in cases]
    met = sum(r["meets_target"] for r in ordered)
    print(f"wall time {wall:.1f} s; {met}/{len(ordered)} meet their target")
    record = {
        "benchmark": "violation_suite", "machine": finish(started),
        "command": " ".join(["python", "benchmarks/violation_suite.py"] + (argv or sys.argv[1:])),
        "samples_per_mechanism": samples, "confidence": args.confidence, "seed": args.seed,
        "jobs": args.jobs, "float_policy": args.float_policy, "early_stop": args.early_stop,
        "wall_seconds": round(wall, 1),
        "cpu_seconds": round(sum(r.get("cpu_seconds", 0.0) for r in ordered), 2), "meets_target": met,
        "cpu_note": "cpu_seconds: process time (user + system) of the row's own process and its "
                    "children, imports excluded; peak_memory_mb: ru_maxrss of that process; "
                    "loadavg: the 1, 5, 15 minute load averages when the row started, then the "
                    "1 minute one when it ended (a shared machine inflates CPU-seconds too); "
                    "cost_target_cpu_seconds: a tenth of DP-Sniper's CPU-seconds for the row at "
                    "2e7 samples on a 2-core AMD EPYC machine; mechanism_cpu_seconds: the process "
                    "time spent inside the mechanism's own calls (part of cpu_seconds; the rest "
                    "is dpaudit's)",
        "memory_target_mb": MEMORY_TARGET_MB,
        "cost_met": {r["mechanism"]: {"cpu": r["cpu_seconds"] <= r["cost_target_cpu_seconds"],
                                      "memory": r["peak_memory_mb"] <= MEMORY_TARGET_MB}
                     for r in ordered if r.get("cost_target_cpu_seconds") is not None},
        "rows": ordered,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    if not args.quick or args.out != str(RESULTS):
        Path(args.out).write_text(json.dumps(record, indent=1) + "\n")
    return 0


def _print(row: dict) -> None:
    lb = row["epsilon_lb"]
    lbs = "   error" if lb is None else f"{lb:9.4f}"
    tgt = "" if row["target"] is None else f"≥ {row['target']:g}"
    if row["correct"]:
        tgt = "not refuted"
    mark = "ok" if row["meets_target"] else "MISSED"
    print(f"{row['mechanism']:<16} {row['claimed_epsilon']:>7g} {lbs} {row['samples']:>10} "
          f"{row['seconds']:>8.1f} {row.get('cpu_seconds', float('nan')):>7.1f} CPU-s "
          f"({row.get('mechanism_cpu_seconds', float('nan')):.1f} in the mechanism) "
          f"{row.get('peak_memory_mb', float('nan')):>7.0f} MB  {row['verdict']:<12} {tgt} {mark}"
          f"  | float64: {row.get('float_verdict')} {_num(row.get('float_epsilon_lb'))}",
          flush=True)


def _num(x) -> str:
    return "" if x is None else f"(ε ≥ {x:.3g})"


if __name__ == "__main__":
    sys.exit(main())
