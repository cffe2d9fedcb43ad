"""The library sweep at its defaults, on OpenDP 0.16 and diffprivlib 0.6.6, with controls.

1. ``dpaudit.sweep("opendp")`` and ``dpaudit.sweep("diffprivlib")`` at the defaults (seed 0): one
   row per case in ``results/opendp_sweep.json`` / ``results/diffprivlib_sweep.json``
   (``{"constructor", "params", "claim", "verdict", "bound", "seconds"}``, seconds in CPU), the
   table in the ``.txt``, each case journaled as it is known (``results/*_sweep.jsonl``), the
   CPU seconds per constructor (the budget: at most 120 s on 2 cores) and a bug-report draft per
   refutation (``results/opendp_sweep_drafts/``), its reproduction run against the library alone.
2. **Controls with hand-checked maps** (``--controls``): OpenDP objects whose maps are derived
   here by hand (ε = d_in / scale for Laplace, ρ = d_in² / (2σ²) for Gaussian, ln(p·(k − 1) / (1 − p)) for
   randomized response, the sum's d_in·max(|L|, U)…); the map the library computes is compared
   with the hand value, then the object goes through the sweep's own check. A right map must not
   be refuted. Beside them, deliberately wrong maps (``make_user_transformation`` /
   ``make_user_measurement`` under the "honest-but-curious" feature) that the check must refute.

Run::

    nice -n 10 python benchmarks/opendp_sweep.py                # the sweeps and the controls
    nice -n 10 python benchmarks/opendp_sweep.py --controls     # the controls only
    nice -n 10 python benchmarks/opendp_sweep.py --library diffprivlib
    nice -n 10 python benchmarks/opendp_sweep.py --library opendp --no-controls
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections import defaultdict

from _record import RESULTS, emit, machine, save

CPU_LIMIT = 120.0  # CPU seconds per constructor at the defaults


def _controls():
    """``(label, code, object, hand map at d_in, d_in, right?)``: hand-checked maps."""
    import opendp.prelude as dp

    dp.enable_features("contrib", "honest-but-curious")
    out = []

    def add(label, code, hand, d_in, right=True):
        obj = eval(code, {"dp": dp, "math": math})  # noqa: S307 - the benchmark's own literals
        out.append((label, code, obj, hand, d_in, right))

    f64 = "dp.atom_domain(T='f64', nan=False), dp.absolute_distance(T='f64')"
    i32 = "dp.atom_domain(T='i32'), dp.absolute_distance(T='i32')"
    vf = "dp.vector_domain(dp.atom_domain(T='f64', nan=False)), dp.l1_distance(T='f64')"
    for s in (0.5, 1.0, 2.0, 4.0):
        add(f"laplace f64 scale {s}", f"dp.m.make_laplace({f64}, scale={s})", 1 / s, 1.0)
        add(f"gaussian f64 scale {s}", f"dp.m.make_gaussian({f64}, scale={s})", 1 / (2 * s * s), 1.0)
    for s in (1.0, 2.0, 3.0, 4.0):
        add(f"laplace i32 scale {s}", f"dp.m.make_laplace({i32}, scale={s})", 1 / s, 1)
        add(f"geometric i32 scale {s}", f"dp.m.make_geometric({i32}, scale={s})", 1 / s, 1)
        add(f"gaussian i32 scale {s}", f"dp.m.make_gaussian({i32}, scale={s})", 1 / (2 * s * s), 1)
        add(f"laplace vector l1 scale {s}", f"dp.m.make_laplace({vf}, scale={s})", 1 / s, 1.0)
    for p in (0.6, 0.75, 0.9):
        add(f"randomized response bool p={p}", f"dp.m.make_randomized_response_bool(prob={p})",
            math.log(p / (1 - p)), 1)
        add(f"randomized response 3 categories p={p}",
            f"dp.m.make_randomized_response(categories=[0, 1, 2], prob={p})", math.log(p * 2 / (1 - p)), 1)
    for s in (1.0, 2.0):
        add(f"pureDP_to_zCDP(laplace scale {s})", f"dp.c.make_pureDP_to_zCDP(dp.m.make_laplace({f64}, scale={s}))",
            (1 / s) ** 2 / 2, 1.0)
    for lo, hi in ((0, 10), (-5, 5), (0, 3)):
        sp = f"dp.vector_domain(dp.atom_domain(bounds=({lo}, {hi}), T='i32')), dp.symmetric_distance()"
        add(f"sum i32 [{lo}, {hi}]", f"dp.t.make_sum({sp})", max(abs(lo), abs(hi)), 1)
        add(f"clamp i32 to [{lo}, {hi}]", f"dp.t.make_clamp(dp.vector_domain(dp.atom_domain(T='i32')), "
            f"dp.symmetric_distance(), bounds=({lo}, {hi}))", 1, 1)
        add(f"sum i32 [{lo}, {hi}] + discrete laplace scale 2",
            f"dp.t.make_sum({sp}) >> dp.m.then_laplace(scale=2.0)", max(abs(lo), abs(hi)) / 2, 1)
    for T in ("i32", "f64", "bool"):
        atom = f"dp.atom_domain(T='{T}'{', nan=False' if T == 'f64' else ''})"
        sp = f"dp.vector_domain({atom}), dp.symmetric_distance()"
        add(f"count {T}", f"dp.t.make_count({sp})", 1, 1)
        if T != "f64":  # f64 records are not hashable for OpenDP
            add(f"count_distinct {T}", f"dp.t.make_count_distinct({sp})", 1, 1)
        add(f"count {T} + laplace scale 1", f"dp.t.make_count({sp}) >> dp.m.then_laplace(scale=1.0)", 1, 1)
    add("count_by_categories i32 [0, 1, 2]", "dp.t.make_count_by_categories(dp.vector_domain(dp.atom_domain(T='i32')), "
        "dp.symmetric_distance(), categories=[0, 1, 2])", 1, 1)
    add("resize i32 to 5 records", "dp.t.make_resize(dp.vector_domain(dp.atom_domain(T='i32')), "
        "dp.symmetric_distance(), size=5, constant=0)", 2, 1)
    # row-by-row maps on unbounded records (the stability check draws them from the whole type)
    vi32 = "dp.vector_domain(dp.atom_domain(T='i32')), dp.symmetric_distance()"
    add("clamp f64 to [0, 1] (unbounded f64 records)", "dp.t.make_clamp(dp.vector_domain(dp.atom_domain("
        "T='f64', nan=False)), dp.symmetric_distance(), bounds=(0.0, 1.0))", 1, 1)
    add("cast_default i32 -> f64", f"dp.t.make_cast_default({vi32}, TOA='f64')", 1, 1)
    add("is_equal i32 to 0", f"dp.t.make_is_equal({vi32}, value=0)", 1, 1)
    add("sum i64 [-3, 7]", "dp.t.make_sum(dp.vector_domain(dp.atom_domain(bounds=(-3, 7), T='i64')), "
        "dp.symmetric_distance())", 7, 1)
    add("randomized response 4 categories p=0.7",
        "dp.m.make_randomized_response(categories=[0, 1, 2, 3], prob=0.7)", math.log(0.7 * 3 / 0.3), 1)
    add("count i32 + gaussian scale 2 (zCDP)", f"dp.t.make_count({vi32}) >> dp.m.then_gaussian(scale=2.0)",
        1 / (2 * 2.0 ** 2), 1)
    # deliberately wrong maps: the check must refute them
    vec = "dp.vector_domain(dp.atom_domain(T='i32')), dp.symmetric_distance()"
    add("WRONG: a count whose map halves d_in", f"dp.t.make_user_transformation({vec}, dp.atom_domain(T='i32'), "
        "dp.absolute_distance(T='i32'), lambda x: len(x), lambda d: d // 2)", 0, 1, right=False)
    add("WRONG: a clamp-free sum of i32 claiming map = d_in (unbounded: no finite map)",
        f"dp.t.make_user_transformation({vec}, dp.atom_domain(T='i32'), dp.absolute_distance(T='i32'), "
        "lambda x: sum(x), lambda d: d)", 1, 1, right=False)
    bounded = "dp.vector_domain(dp.atom_domain(bounds=(0, 10), T='i32')), dp.symmetric_distance()"
    add("WRONG: a sum of i32 records in [0, 10] claiming map = d_in (true 10·d_in)",
        f"dp.t.make_user_transformation({bounded}, dp.atom_domain(T='i32'), dp.absolute_distance(T='i32'), "
        "lambda x: sum(x), lambda d: d)", 1, 1, right=False)
    add("WRONG: Laplace(1) claiming ε = d_in / 2", f"(lambda L: dp.m.make_user_measurement({f64}, "
        f"dp.max_divergence(), lambda x: L(x), lambda d: d / 2, TO=float))(dp.m.make_laplace({f64}, scale=1.0))",
        0.5, 1.0, right=False)
    return out


def run_controls(lines: list) -> dict:
    from dpaudit.sweep.opendp import Sweeper, _kind_of
    from dpaudit.sweep.result import Case

    sweeper = Sweeper(seed=0, samples=20_000, budget=200, cases=4, attempts=3_000, confidence=0.95,
                      timeout=60.0, only=["(controls only)"], polars=False)
    rows = []
    emit(lines, "## Controls: hand-checked maps (a right map must not be refuted; a wrong one must)")
    for label, code, obj, hand, d_in, right in _controls():
        try:
            value = obj.map(d_in)
        except Exception as exc:  # noqa: BLE001
            value = f"{type(exc).__name__}"
        number = value if isinstance(value, (int, float)) else None
        agrees = number is not None and hand <= number <= hand * (1 + 1e-6) + 1e-12
        case = sweeper.check(Case(label, {"code": code}, code=code), obj)
        ok = (case.verdict != "refuted") if right else (case.verdict == "refuted")
        rows.append({"label": label, "code": code, "right": right, "hand_map": hand, "library_map": value,
                     "hand_agrees": agrees, "verdict": case.verdict, "check": case.check, "bound": case.bound,
                     "seconds": round(case.seconds, 3), "reason": case.reason, "confirmed": case.confirmed,
                     "reproduction_output": case.details.get("reproduction_output"), "as_expected": ok})
        emit(lines, f"{'ok ' if ok else 'BAD'} {case.verdict.upper():12} {case.seconds:6.1f}s  {label}: map({d_in}) = "
                    f"{value!r} (by hand {hand:.6g}{'' if agrees or not right else ', DISAGREES'})"
                    + (f"; bound {case.bound:.4g}" if case.bound is not None else "")
                    + (f"; {case.reason}" if case.reason else "")
                    + ("" if case.confirmed is None else f"; reproduction alone: {'confirmed' if case.confirmed else 'NOT confirmed'}"))
    right = [r for r in rows if r["right"]]
    summary = {"controls": len(right), "refuted": sum(r["verdict"] == "refuted" for r in right),
               "hand_agrees": sum(r["hand_agrees"] for r in right),
               "wrong_maps": len(rows) - len(right),
               "wrong_maps_refuted": sum(r["verdict"] == "refuted" for r in rows if not r["right"])}
    emit(lines, f"controls: {summary['controls']} right maps ({summary['hand_agrees']} equal to the hand value), "
                f"{summary['refuted']} refuted; wrong maps refuted {summary['wrong_maps_refuted']} of {summary['wrong_maps']}")
    return {"rows": rows, "summary": summary}


def run_sweep(library: str, lines: list, only=None) -> dict:
    import dpaudit

    journal = RESULTS / f"{library}_sweep.jsonl"
    drafts = RESULTS / f"{library}_sweep_drafts"
    emit(lines, f"## dpaudit.sweep({library!r}) at the defaults, seed 0")

    def progress(case):
        print(f"  {case.verdict:12} {case.seconds:6.1f}s  {case.constructor}", flush=True)

    result = dpaudit.sweep(library, seed=0, journal=journal, drafts=drafts, only=only, progress=progress)
    for line in result.table().splitlines():
        emit(lines, line)
    per = defaultdict(float)
    for c in result.cases:
        per[c.constructor] += c.seconds
    worst = max(per.items(), key=lambda kv: kv[1], default=("-", 0.0))
    over = sorted(k for k, v in per.items() if v > CPU_LIMIT)
    emit(lines, f"CPU seconds per constructor: at most {worst[1]:.1f} ({worst[0]}); over {CPU_LIMIT:g} s: "
                f"{', '.join(over) or 'none'}; total {sum(per.values()):.1f}")
    rec = result.to_record()
    rec["cpu_per_constructor"] = {k: round(v, 3) for k, v in per.items()}
    rec["cpu_limit"] = CPU_LIMIT
    rec["over_limit"] = over
    return rec


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--library", choices=("opendp", "diffprivlib", "both"), default="both")
    ap.add_argument("--controls", action="store_true", help="the controls only")
    ap.add_argument("--only", action="append")
    ap.add_argument("--no-controls", action="store_true",
                    help="the sweep without the controls (run them apart with --controls)")
    args = ap.parse_args()
    os.environ.setdefault("RUST_LIB_BACKTRACE", "0")
    m = machine(opendp=_version("opendp"), diffprivlib=_version("diffprivlib"), polars=_version("polars"),
                affinity=len(os.sched_getaffinity(0)))
    if args.controls:
        lines: list = []
        rec = run_controls(lines)
        save("opendp_sweep_controls", {"machine": m, **rec}, lines)
        return 0
    for library in (("opendp", "diffprivlib") if args.library == "both" else (args.library,)):
        lines = []
        rec = run_sweep(library, lines, args.only)
        if library == "opendp" and not args.only and not args.no_controls:
            rec["controls"] = run_controls(lines)
        save(f"{library}_sweep", {"machine": dict(m), **rec}, lines)
    return 0


def _version(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    sys.exit(main())
