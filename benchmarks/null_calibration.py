"""A measured null certificate: how often dpaudit refutes correct, tight mechanisms at its defaults.

Every audit here is of a mechanism whose claim is true and tight (the worst pair attains it), at
dpaudit's default settings (the default budget: 4·10⁶ samples with the batch form; 95%
confidence; early stopping), each on a seed of its own, drawn from one recorded root seed
(``numpy.random.SeedSequence(ROOT_SEED).spawn``). The false-refutation rate of each kind is
reported with its exact two-sided 95% Clopper-Pearson interval, against the stated α = 0.05.

Kinds (one mechanism each; the claim, neighbours and domain in ``KINDS``):

* ``pure_epsilon``: a sum of one record in [0, 1] plus Laplace noise of scale 1, claim ε = 1,
  add-remove (audited as a model over the reals, ``float_events=False``: a float64 Laplace is
  porous, which the float64 question rightly refutes; the ``snapped`` kind audits that question);
* ``approx_dp``: one value plus N(0, 1), claim (1, δ₁) with δ₁ = δ(1) of that Gaussian (its exact
  profile at ε = 1), linf, a model over the reals;
* ``zcdp``: the same Gaussian against 0.5-zCDP (exact: D_α = α/2), a curve audit;
* ``gdp``: the same Gaussian against 1-GDP (exact), a curve audit;
* ``snapped``: Mironov's snapping mechanism (Mironov 2012, Theorem 1) at claim ε = 1, B = 100,
  with the float64 question asked (the default): a release safe on doubles;
* ``discrete``: ⌊x⌋ plus a two-sided geometric of ratio e^-1 (Ghosh, Roughgarden and Sundararajan
  2009), claim ε = 1, linf: integer outputs.

A *refutation* is the record's verdict REFUTED (for the curve kinds, the curve's; for the point
kinds, the overall verdict under the default float policy). The rows are written after every
audit (``benchmarks/results/null_calibration.json``; each audit's line also appended to
``null_calibration.jsonl``), so a run stopped early loses nothing; ``--resume`` goes on from
the audits recorded. CPU-seconds are the process's (user + system).

Run::

    nice -n 10 python benchmarks/null_calibration.py --audits 10000        # per kind, resumable
    nice -n 10 python benchmarks/null_calibration.py --audits 2 --out /tmp/n.json   # the cost of one
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

from _record import RESULTS, ROOT, finish, machine, write_json

import dpaudit
from dpaudit.curves.claims import gdp_delta_formula
from dpaudit.estimators.bounds import cp_lower, cp_upper

sys.path.insert(0, str(ROOT))
from examples.laplace_sum import snapping as _snapping  # noqa: E402

ROOT_SEED = 20261125
ALPHA = 0.05
DELTA_1 = float(gdp_delta_formula(1.0, [1.0])[0])


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=1, float_events=False)
def pure_epsilon(data, rng, size=None):
    return data.sum() + rng.laplace(0.0, 1.0, size=size)


@dpaudit.mechanism(epsilon=1.0, delta=DELTA_1, neighbours="linf", domain=(0, 1), size=1,
                   float_events=False)
def approx_dp(data, rng, size=None):
    return data[0] + rng.normal(0.0, 1.0, size=size)


@dpaudit.mechanism(neighbours="linf", domain=(0, 1), size=1)
def gaussian(data, rng, size=None):
    return data[0] + rng.normal(0.0, 1.0, size=size)


@dpaudit.mechanism(epsilon=1.0, neighbours="linf", domain=(0, 1), size=1)
def snapped(data, rng, size=None):
    return _snapping(data[0], epsilon=1.0, bound=100.0, rng=rng, size=size)


@dpaudit.mechanism(epsilon=1.0, neighbours="linf", domain=(0, 1), size=1)
def discrete(data, rng, size=None):
    p = 1.0 - math.exp(-1.0)
    n = 1 if size is None else size
    y = int(np.floor(data[0])) + rng.geometric(p, n) - rng.geometric(p, n)
    return y if size is not None else int(y[0])


def _point(f: Callable) -> Callable[[int], str]:
    return lambda seed: dpaudit.audit(f, seed=seed).verdict.value


def _curve(**claim) -> Callable[[int], str]:
    return lambda seed: dpaudit.curve_audit(gaussian, seed=seed, **claim).verdict.value


KINDS = {"pure_epsilon": _point(pure_epsilon), "approx_dp": _point(approx_dp),
         "zcdp": _curve(rho=0.5), "gdp": _curve(mu=1.0), "snapped": _point(snapped),
         "discrete": _point(discrete)}


def seed_of(kind_index: int, i: int) -> int:
    """The seed of audit ``i`` of kind ``kind_index``: one child of the root per (kind, audit)."""
    seq = np.random.SeedSequence(ROOT_SEED, spawn_key=(kind_index, i))
    return int(seq.generate_state(1, np.uint64)[0] >> np.uint64(1))


def summary(lines: list[dict]) -> list[dict]:
    rows = []
    for kind in KINDS:
        mine = [x for x in lines if x["kind"] == kind]
        n, k = len(mine), sum(x["verdict"] == "refuted" for x in mine)
        errors = sum(x["verdict"] == "error" for x in mine)
        lo = float(cp_lower(k, n, 0.025)) if n else None
        hi = float(cp_upper(k, n, 0.025)) if n else None
        cpu = [x["cpu_seconds"] for x in mine]
        rows.append({"kind": kind, "audits": n, "refuted": k, "errors": errors, "alpha": ALPHA,
                     "rate": k / n if n else None, "clopper_pearson_95": [lo, hi],
                     "rate_at_most_alpha": None if not n else k / n <= ALPHA,
                     "cpu_seconds_per_audit": float(np.median(cpu)) if cpu else None})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--audits", type=int, default=10_000, help="audits per kind (the target)")
    ap.add_argument("--only", action="append", choices=list(KINDS))
    ap.add_argument("--out", default=str(RESULTS / "null_calibration.json"))
    ap.add_argument("--resume", action="store_true", help="go on from the .jsonl beside --out")
    args = ap.parse_args(argv)
    out = Path(args.out)
    log = out.with_suffix(".jsonl")
    lines: list[dict] = []
    if args.resume and log.exists():
        lines = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines() if x.strip()]
    elif log.exists():
        log.unlink()
    started = machine()
    kinds = args.only or list(KINDS)
    done = {(x["kind"], x["i"]) for x in lines}
    t_start = time.time()
    record = {"benchmark": "null_calibration", "machine": started, "command": " ".join(sys.argv),
              "root_seed": ROOT_SEED, "settings": "dpaudit defaults: default budget, 95% confidence, "
              "early stopping, float policy error", "target_audits_per_kind": args.audits}
    for i in range(args.audits):  # round-robin: every kind grows together, so a cut run is balanced
        for kind in kinds:
            if (kind, i) in done:
                continue
            j = list(KINDS).index(kind)
            seed = seed_of(j, i)
            t0 = time.process_time()
            try:
                verdict = KINDS[kind](seed)
            except Exception as exc:  # an internal error is recorded, never retried
                verdict = f"error: {type(exc).__name__}: {exc}"[:200]
            line = {"kind": kind, "i": i, "seed": seed, "verdict": verdict,
                    "cpu_seconds": round(time.process_time() - t0, 3)}
            lines.append(line)
            with log.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(line) + "\n")
            record.update({"rows": summary(lines), "audits_total": len(lines),
                           "wall_seconds": round(time.time() - t_start, 1),
                           "cpu_seconds": round(sum(x["cpu_seconds"] for x in lines), 1),
                           "machine": dict(finish(dict(started)))})
            write_json(out, record)
    print(json.dumps(record["rows"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
