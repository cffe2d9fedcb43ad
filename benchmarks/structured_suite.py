"""Tightness of the sampled auditor on mechanisms with structured outputs, against their true ε.

The mechanisms (:mod:`dpaudit.reference.controls.structured`): sparse-vector Algs 1-7 of Lyu, Su
and Li (2017) with N = 10 queries and c = 1, 2, released as each algorithm defines (⊤/⊥ codes,
numeric answers) and in common variants (first index or None, tuples of ⊤ indices, (index, value)
pairs, no abort); report noisy max releasing (index, gap); a Gaussian with σ for the wrong δ; a
smooth-sensitivity median with the β of the wrong privacy notion. Neighbours ``linf`` over
[-10, 10] for the query-answer mechanisms (as in the violation suite), ``replace`` over [0, 1]
for the median.

Each row's true ε is computed here (``truth`` below; the integrals and the formulas are in
:mod:`dpaudit.reference.analysis.structured_truth`): by one-dimensional integration over the
threshold noise on the worst pair (SVT), over the maximum (noisy max with gap), in closed form
(Alg 3, Gaussian), or exactly from the two Laplace laws of the worst pair on a grid (median).
SVT losses: every answer pattern with its levels on a 5-point grid, then every level refined
(L-BFGS-B) for the two best patterns. Values found by optimising over pairs are attained by a pair,
so they are lower ends of the truth; ``true_upper`` is the theorem's bound. They are cached in ``results/structured_truth.json``
(``--truth`` recomputes them, a few minutes).

Audits: rows that break their claim at 90% (the bound is compared with 0.9 × the true ε, or
with 8 where the true ε is infinite); rows whose claim holds at 99.9%, where they must not be
refuted, and their bound is compared with 0.9 × their true ε too (``--correct-at-90`` audits them
again at 90%, the level of the target, and records that bound beside the verdict). At most 2·10⁷ samples, early
stopping off (the suite measures the tightest bound). Each row runs in a fresh process; CPU-seconds
are its process time, memory its peak RSS.

Run::

    nice python benchmarks/structured_suite.py --truth        # recompute the ground truth
    nice python benchmarks/structured_suite.py --quick        # 2·10⁶ samples a row, _quick.* files
    nice python benchmarks/structured_suite.py --only SVT3-c1 --merge   # rerun one row, keep the rest
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from _record import RESULTS, emit, machine, save

from dpaudit.reference.controls import structured as sm
from dpaudit.reference.controls.structured import (  # noqa: F401  (early_stop.py reads them here)
    gaussian_wrong_delta, rnm_gap, rnm_gap_monotone_scale, ss_median_pure_beta, svt1_c1, svt1_c2,
    svt1_first_index, svt1_indices_c2, svt1_no_abort, svt2_c2, svt3_c1, svt3_c2, svt3_index_value,
    svt4_c1, svt4_c2, svt5, svt6_indices, svt7_c1)

EPS = sm.EPS
TRUTH = RESULTS / "structured_truth.json"
BIG = 8.0  # the target where the true ε is infinite


@dataclass(frozen=True)
class Case:
    name: str
    func: Callable
    neighbours: str
    domain: tuple
    size: int
    correct: bool
    epsilon: float = EPS
    delta: float = 0.0


Q = ("linf", (-10, 10), 10)
SUITE = [
    Case("SVT1-c1", svt1_c1, *Q, True),
    Case("SVT1-c2", svt1_c2, *Q, True),
    Case("SVT1-first-index", svt1_first_index, *Q, True),
    Case("SVT1-indices-c2", svt1_indices_c2, *Q, True),
    Case("SVT2-c2", svt2_c2, *Q, True),
    Case("SVT7-c1-numeric", svt7_c1, *Q, True),
    Case("RNM-gap", rnm_gap, "linf", (-10, 10), 5, True),
    Case("SVT1-no-abort", svt1_no_abort, *Q, False),
    Case("SVT3-c1", svt3_c1, *Q, False),
    Case("SVT3-c2", svt3_c2, *Q, False),
    Case("SVT3-index-value", svt3_index_value, *Q, False),
    Case("SVT4-c1", svt4_c1, *Q, False),
    Case("SVT4-c2", svt4_c2, *Q, False),
    Case("SVT5", svt5, *Q, False),
    Case("SVT6-indices", svt6_indices, *Q, False),
    Case("RNM-gap-monotone-scale", rnm_gap_monotone_scale, "linf", (-10, 10), 5, False),
    Case("Gaussian-wrong-delta", gaussian_wrong_delta, "linf", (-10, 10), 1, False,
         sm.GAUSS_EPS, sm.GAUSS_DELTA),
    Case("SSMedian-pure-beta", ss_median_pure_beta, "replace", (0.0, 1.0), 5, False,
         sm.SS_EPS, sm.SS_DELTA),
]


# --------------------------------------------------------------------------------- ground truth

def _patterns(n: int, c: Optional[int]):
    """(⊥ count, ⊤ count) of every answer pattern of n queries, abort after c ⊤'s (None: never)."""
    if c is None:
        return [(n - t, t) for t in range(n + 1)]
    return [(m, c) for m in range(n - c + 1)] + [(n - t, t) for t in range(c)]


def _svt(a: float, b: float, c: Optional[int], extra_per_top: float = 0.0) -> dict:
    from dpaudit.reference.analysis.structured_truth import pattern_loss

    grid = []
    for m, t in _patterns(10, c):
        r = pattern_loss(m, t, a, b, sm.T, grid=5, refine=False)
        grid.append((r["loss"] + t * extra_per_top, m, t))
    grid.sort(reverse=True)
    best = {"loss": -1.0}
    for _, m, t in grid[:2]:  # every level refined for the two best patterns of the grid
        r = pattern_loss(m, t, a, b, sm.T, grid=5)
        r["loss"] += t * extra_per_top
        if r["loss"] > best["loss"]:
            best = dict(r, pattern=[m, t])
    best["patterns_on_grid"] = [[m, t, round(v, 6)] for v, m, t in grid]
    return best


def _svt2(c: int = 2) -> dict:
    """Alg 2: a fresh ρ after each ⊤, so the loss adds over the segments ending in a ⊤."""
    from dpaudit.reference.analysis.structured_truth import pattern_loss

    e1 = EPS / 2
    a, b = c / e1, 2 * c / e1
    seg = {(m, t): pattern_loss(m, t, a, b, sm.T, grid=5, refine=False)["loss"] for m in range(11)
           for t in (0, 1) if m + t <= 10}
    best = max([(seg[(10, 0)], [(10, 0)])]
               + [(seg[(m1, 1)] + seg[(10 - m1 - 1, 0)], [(m1, 1), (10 - m1 - 1, 0)]) for m1 in range(10)]
               + [(seg[(m1, 1)] + seg[(m2, 1)], [(m1, 1), (m2, 1)])
                  for m1 in range(9) for m2 in range(9 - m1)])
    return {"loss": best[0], "segments": best[1], "note": "levels on the 5-point grid per segment"}


def truth(done: Optional[dict] = None) -> dict:
    """Every row's true ε (or its lower end, attained by a pair) and its theorem bound; rows in
    ``done`` are kept, each new one is written to the cache as soon as it is known."""
    import numpy as np

    from dpaudit.reference.analysis import structured_truth as st
    from _record import write_json

    e1 = EPS / 2
    e71, e72, e73 = sm.alg7_budget(1)
    alg3 = lambda c: st.alg3_epsilon(10, c / (EPS - e1))  # noqa: E731
    pat = "max over answer patterns and levels of the ρ-integral ratio"
    rules = {
        "SVT1-c1": lambda: dict(_svt(*sm._alg1_scales(1), 1), upper=EPS, how=pat),
        "SVT1-first-index": lambda: dict(out["SVT1-c1"], how="same law as SVT1-c1 (a bijection of outputs)"),
        "SVT1-c2": lambda: dict(_svt(*sm._alg1_scales(2), 2), upper=EPS, how=pat),
        "SVT1-indices-c2": lambda: dict(out["SVT1-c2"], how="same law as SVT1-c2 (a bijection of outputs)"),
        "SVT2-c2": lambda: dict(_svt2(), upper=EPS, how="segments between fresh thresholds add"),
        "SVT7-c1-numeric": lambda: dict(_svt(1 / e71, 2 / e72, 1, extra_per_top=e73), upper=EPS,
                                        how=pat + " + ε₃ for the released value (fresh Laplace noise)"),
        "RNM-gap": lambda: dict(st.gap_loss(5, 2 / EPS), upper=EPS, how="Nelder-Mead over pairs and gap"),
        "SVT1-no-abort": lambda: dict(_svt(*sm._alg1_scales(1), None), upper=10 / 40,
                                      how="no abort: patterns (m, 10−m); upper N/b"),
        "SVT3-c1": lambda: dict(loss=alg3(1), upper=alg3(1),
                                how="closed form N/b, attained for 9 ⊥ and a value below −10"),
        "SVT3-c2": lambda: dict(loss=alg3(2), upper=alg3(2),
                                how="closed form N/b, attained for 8 ⊥ and two values below −10"),
        "SVT3-index-value": lambda: dict(out["SVT3-c1"], how="same law as SVT3-c1 (a bijection of outputs)"),
        "SVT4-c1": lambda: dict(_svt(4 / EPS, 1 / (EPS - EPS / 4), 1), upper=(1 + 6) / 4 * EPS,
                                how=pat + "; upper (1+6c)/4·ε"),
        "SVT4-c2": lambda: dict(_svt(4 / EPS, 1 / (EPS - EPS / 4), 2), upper=(1 + 12) / 4 * EPS,
                                how=pat + "; upper (1+6c)/4·ε"),
        "SVT5": lambda: dict(loss=math.inf, upper=math.inf,
                             how="no query noise: q=(0,0,…), q'=(0,1,…) makes (⊥,⊤) possible under q' only"),
        "SVT6-indices": lambda: dict(_svt(2 / EPS, 2 / EPS, None), upper=10 * e1,
                                     how="no abort: patterns (m, 10−m); upper N ε₂"),
        "RNM-gap-monotone-scale": lambda: dict(st.gap_loss(5, 1 / EPS), upper=2 * EPS,
                                               how="Nelder-Mead over pairs and gap"),
        "Gaussian-wrong-delta": lambda: _gauss_truth(st),
        "SSMedian-pure-beta": lambda: _ss_truth(np, st),
    }
    out = dict(done or {})
    for name, rule in rules.items():
        if name in out:
            continue
        t0 = time.process_time()
        out[name] = dict(rule(), cpu_seconds=round(time.process_time() - t0, 1))
        print(f"truth {name}: {out[name]['loss']:.6g} ({out[name]['cpu_seconds']} CPU-s)", flush=True)
        write_json(TRUTH.with_suffix(".partial.json"), {"rows": out})
    return out


def _gauss_truth(st) -> dict:
    sig = sm.gaussian_sigma(sm.GAUSS_EPS, sm.GAUSS_WRONG_DELTA)
    ge = st.gaussian_epsilon(sm.GAUSS_DELTA, sig)
    return dict(loss=ge, upper=ge, sigma=sig, how="closed form (Balle-Wang Thm 8), its root at the claimed δ")


def _ss_truth(np, st) -> dict:
    """The worst replace-one pair over 5-record multisets on the grid {0, 1/8, …, 1}: the largest
    ε at δ of its two Laplace laws (exact), then a local refinement off the grid."""
    import itertools

    from scipy import optimize

    grid = np.linspace(0, 1, 9)
    laws = {s: sm.ss_median_law(np.array(s)) for s in itertools.combinations_with_replacement(grid, 5)}
    best = (-1.0, None, None)
    for s0, (m1, s1) in laws.items():
        for i in range(5):
            for v in grid:
                s_1 = tuple(sorted(s0[:i] + (v,) + s0[i + 1:]))
                if s_1 <= s0:
                    continue
                e = st.laplace_pair_epsilon(sm.SS_DELTA, m1, s1, *laws[s_1])
                if e > best[0]:
                    best = (e, s0, s_1)

    def neg(z):  # z: the 4 shared records and the two values that differ
        base = np.clip(z[:4], 0, 1)
        a, b = np.r_[base, np.clip(z[4], 0, 1)], np.r_[base, np.clip(z[5], 0, 1)]
        return -st.laplace_pair_epsilon(sm.SS_DELTA, *sm.ss_median_law(a), *sm.ss_median_law(b))

    from collections import Counter

    c0, c1 = Counter(best[1]), Counter(best[2])
    base = sorted((c0 & c1).elements())
    z0 = np.r_[base, list((c0 - c1).elements()), list((c1 - c0).elements())]
    r = optimize.minimize(neg, z0, method="Nelder-Mead", options={"maxiter": 2000, "xatol": 1e-9})
    loss, pair = best[0], [list(best[1]), list(best[2])]
    if -r.fun > loss:
        base = list(np.clip(r.x[:4], 0, 1))
        loss, pair = -r.fun, [base + [float(np.clip(r.x[4], 0, 1))], base + [float(np.clip(r.x[5], 0, 1))]]
    return {"loss": float(loss), "pair": pair, "upper": None,
            "how": "exact ε at δ of the two Laplace laws of the worst grid pair, refined off the grid"}


def load_truth(recompute: bool = False) -> dict:
    """The cached ground truth; computed (and cached row by row) where missing or ``recompute``."""
    from _record import write_json

    partial = TRUTH.with_suffix(".partial.json")
    rec = json.loads(TRUTH.read_text()) if TRUTH.exists() and not recompute else None
    if rec is None and partial.exists() and not recompute:
        rec = json.loads(partial.read_text())
    if rec is None or any(c.name not in rec["rows"] for c in SUITE):
        rows = truth(done={} if rec is None else rec["rows"])
        rec = {"benchmark": "structured_truth", "machine": machine(), "eps": EPS, "rows": rows}
        write_json(TRUTH, rec)
        partial.unlink(missing_ok=True)
    rows = rec["rows"]
    for t in rows.values():  # JSON keeps ∞ as "inf"
        for k in ("loss", "upper"):
            if t.get(k) == "inf":
                t[k] = math.inf
    return rows


# --------------------------------------------------------------------------------- audits

def run_case(case: Case, samples: int, seed: int, confidence: float) -> dict:
    import dpaudit

    t0 = time.perf_counter()
    r = dpaudit.audit(case.func, epsilon=case.epsilon, delta=case.delta, neighbours=case.neighbours,
                      domain=case.domain, size=case.size, samples=samples, confidence=confidence,
                      seed=seed, early_stop=False)
    cx = r.counterexample
    return {"mechanism": case.name, "claimed_epsilon": case.epsilon, "claimed_delta": case.delta,
            "epsilon_lb": r.epsilon_lower_bound, "samples": r.samples, "confidence": confidence,
            "seconds": round(time.perf_counter() - t0, 2), "verdict": r.verdict.value,
            "correct": case.correct, "neighbours": case.neighbours, "domain": list(case.domain),
            "size": case.size, "pair": None if cx is None else [list(cx.dataset), list(cx.neighbour)],
            "event": None if cx is None else cx.event.get("text"), "error": r.error}


def _worker(args):
    """One row in a fresh process: its own CPU-seconds (process time) and peak memory."""
    import resource

    name, samples, seed, confidence = args
    case = next(c for c in SUITE if c.name == name)
    import dpaudit.auditing.sampled  # noqa: F401  (import cost is not the audit's)

    cpu0 = time.process_time()
    row = run_case(case, samples, seed, confidence)
    row["cpu_seconds"] = round(time.process_time() - cpu0, 2)
    row["peak_memory_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)
    row["run"] = machine()
    return row


def judge(row: dict, t: dict) -> dict:
    """Add the true ε, the target and whether the row meets it (module docstring)."""
    true = t["loss"]
    row["true_epsilon"] = true if math.isfinite(true) else "inf"
    row["true_upper"] = t.get("upper") if t.get("upper") is None or math.isfinite(t["upper"]) else "inf"
    row["target"] = 0.9 * true if math.isfinite(true) else BIG
    lb = row["epsilon_lb"] or 0.0
    row["meets_target"] = bool(lb >= row["target"])
    row["verdict_ok"] = (row["verdict"] == "not_refuted") if row["correct"] else (row["verdict"] == "refuted")
    return row


def _line(row: dict) -> str:
    true, lb = row["true_epsilon"], row["epsilon_lb"]
    return (f"{row['mechanism']:<24} {true if isinstance(true, str) else f'{true:8.4f}':>8} "
            f"{'error' if lb is None else f'{lb:8.4f}':>8} {row['target']:7.4f} "
            f"{row['samples']:>9} {row['cpu_seconds']:7.1f} {row['peak_memory_mb']:6.0f}  "
            f"{row['confidence']:5.3f} {row['verdict']:<12} "
            f"{'yes' if row['meets_target'] else 'NO'}{'' if row['verdict_ok'] else ' (VERDICT WRONG)'}")


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2e6 samples a row (writes *_quick.*)")
    ap.add_argument("--samples", type=int, default=None, help="samples a row (default 2e7)")
    ap.add_argument("--seed", type=int, default=2017)
    ap.add_argument("--only", action="append", help="only this row (repeatable)")
    ap.add_argument("--truth", action="store_true", help="recompute the ground truth first")
    ap.add_argument("--jobs", type=int, default=1, help="rows audited at once (processes)")
    ap.add_argument("--correct-at-90", action="store_true",
                    help="also audit the rows whose claim holds at 90%% (their bound at the suite's level)")
    ap.add_argument("--merge", action="store_true",
                    help="keep the rows of the earlier result file that this run does not rerun")
    args = ap.parse_args(argv)
    samples = args.samples or (2_000_000 if args.quick else 20_000_000)
    truths = load_truth(args.truth)
    cases = [c for c in SUITE if not args.only or c.name in args.only]
    started, t0, lines = machine(), time.perf_counter(), []
    emit(lines, f"{'row':<24} {'true ε':>8} {'ε_LB':>8} {'target':>7} {'samples':>9} {'CPU-s':>7} "
                f"{'MB':>6}  {'conf':>5} verdict      meets")
    import multiprocessing

    work = [(c.name, samples, args.seed, 0.999 if c.correct else 0.9) for c in cases]
    if args.correct_at_90:
        work += [(c.name, samples, args.seed, 0.9) for c in cases if c.correct]
    rows, at90 = {}, {}
    with multiprocessing.get_context("fork").Pool(args.jobs, maxtasksperchild=1) as pool:
        for row in pool.imap_unordered(_worker, work):
            row = judge(row, truths[row["mechanism"]])
            if row["correct"] and row["confidence"] == 0.9:
                at90[row["mechanism"]] = row
            else:
                rows[row["mechanism"]] = row
            emit(lines, _line(row))
    for name, r90 in at90.items():  # the bound at 90% beside the verdict at 99.9%
        rows[name]["at_90"] = {k: r90[k] for k in ("epsilon_lb", "verdict", "meets_target", "cpu_seconds",
                                                    "peak_memory_mb", "samples", "pair", "event")}
    stem = "structured_suite_quick" if args.quick else "structured_suite"
    if args.merge and (RESULTS / f"{stem}.json").exists():  # rows run earlier, each with its own run record
        old = json.loads((RESULTS / f"{stem}.json").read_text())["rows"]
        rows = {**{r["mechanism"]: r for r in old}, **rows}
    ordered = [rows[c.name] for c in SUITE if c.name in rows]
    met = sum(r["meets_target"] or r.get("at_90", {}).get("meets_target", False) for r in ordered)
    ok = sum(r["verdict_ok"] for r in ordered)
    emit(lines, f"wall {time.perf_counter() - t0:.0f} s; {met}/{len(ordered)} meet ε_LB ≥ 0.9·true ε "
                f"(≥ {BIG:g} where infinite); {ok}/{len(ordered)} verdicts as expected")
    if args.merge:
        emit(lines, "rows (merged with the earlier run; each row's 'run' says when and where it ran):")
        for r in ordered:
            emit(lines, _line(r) + f"  [{r['run']['date']}, load {r['run']['loadavg'][0]}, "
                                   f"{str(r['run']['git_commit'])[:10]}]")
    emit(lines, "true ε (lower end attained by a pair; upper: the theorem's bound) and how it was computed:")
    for r in ordered:
        t = truths[r["mechanism"]]
        up = t.get("upper")
        emit(lines, f"  {r['mechanism']:<24} {t['loss']:.6g}  upper {'-' if up is None else f'{up:.6g}'}  "
                    f"{t['how']}" + (f"; pair {t['pair']}" if "pair" in t else "")
             + (f"; levels ⊥ {t['bot'][:1]} ⊤ {t['top'][:1]}, pattern {t.get('pattern')}" if t.get("bot") or t.get("top") else ""))
    record = {"machine": started, "samples_per_row": samples, "seed": args.seed, "quick": False,
              "jobs": args.jobs, "meets_target": met, "verdicts_as_expected": ok, "rows": ordered,
              "note": "confidence 0.9 for rows that break their claim, 0.999 for rows whose claim "
                      "holds; cpu_seconds: process time of the row's process; peak_memory_mb: its "
                      "ru_maxrss; true_epsilon from results/structured_truth.json"}
    save(stem, record, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
