"""OpenDP's stability maps, checked on neighbouring pairs: every transformation the adapter supports.

For each OpenDP 0.16 transformation below (sums over float and integer carriers, sized and not,
sequential and pairwise, ordered and not; means, variances, counts, histograms, clamps, casts,
a float multiplication, quantile scores, a resize) :func:`dpaudit.stability.check_stability`
searches neighbouring pairs at the input metric's d_in (the relation's patterns, the float-rounding
patterns of Casacuberta, Shoemate, Vadhan and Wagaman, CCS 2022, then a hypothesis search), with
the default budget of 200 evaluations (one per dataset) and, for the float sums, again with 2,000,
and records the transformation's map(d_in), the largest output distance d_out seen (exactly, as a
float repr), d_out / map(d_in), and any violation with its pair. For a float sum it also records
the real-number sensitivity (d_in·max(|L|, U) without a size, d_in/2·(U − L) with one): how far the
float rounding took d_out above it (the effect Casacuberta et al. found), against the margin
OpenDP's map leaves above it (map(d_in) − the real-number sensitivity: the relaxation OpenDP adds
for rounding, plus, for a sum without a size over mixed signs, the gap between d_in·(U − L), which
its map uses, and the tighter d_in·max(|L|, U)).

Then the stability check of five OpenDP measurements built on these chains (the measurement's map at
the distance observed at its input), two misuses (records beyond the declared bounds; the map of
one record added claimed for one replaced), and three deliberately wrong user transformations
(``make_user_transformation`` with the "honest-but-curious" feature: a pure-Python sequential
float sum whose map is the real-number sensitivity, Casacuberta et al.'s bug, at two scales, and
a count whose map halves d_in) beside a correct one: the controls show the check can fail.

Run::

    python benchmarks/opendp_stability.py            # writes results/opendp_stability.json and .txt
    python benchmarks/opendp_stability.py --quick    # default budget only: results/opendp_stability_quick.*
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from fractions import Fraction

from _record import ROOT, emit, machine, save

SEED = 2026
DEEP = 2_000


def _dp():
    import opendp.prelude as dp

    dp.enable_features("contrib", "honest-but-curious")
    return dp


def _space(lo, hi, size=None, ordered=False, T=None):
    dp = _dp()
    atom = dp.atom_domain(bounds=(lo, hi)) if T is None else dp.atom_domain(bounds=(lo, hi), T=T)
    metric = dp.insert_delete_distance() if ordered else dp.symmetric_distance()
    return dp.vector_domain(atom, size=size), metric


def _free(T=float):
    dp = _dp()
    atom = dp.atom_domain(T=T, nan=False) if T is float else dp.atom_domain(T=T)
    return dp.vector_domain(atom), dp.symmetric_distance()


def _python_sum(lo, hi, size=None):
    """A pure-Python sequential float sum whose stability map is the real-number sensitivity
    (d_in·max(|L|, U) without a size, ⌊d_in/2⌋·(U − L) with one): no rounding term."""
    dp = _dp()

    def total(x):
        s = 0.0
        for v in x:
            s += v
        return s

    ideal = (lambda d: (d // 2) * (hi - lo)) if size else (lambda d: d * max(abs(lo), abs(hi)))
    return dp.t.make_user_transformation(*_space(lo, hi, size), dp.atom_domain(T=float, nan=False),
                                         dp.absolute_distance(T=float), total, ideal)


def _python_count(halved: bool):
    dp = _dp()
    return dp.t.make_user_transformation(*_free(int), dp.atom_domain(T=int), dp.absolute_distance(T=int),
                                         lambda x: len(x), (lambda d: d // 2) if halved else (lambda d: d))


def transformations():
    """(name, what, build, keywords of check_stability, real-number sensitivity or None, float sum)."""
    dp = _dp()
    t = dp.t
    e15 = 1e15
    F = [
        ("sum f64 [0,1] n≤10", "make_sum, no size (checked pairwise sum)",
         lambda: _space(0.0, 1.0) >> t.then_sum(), {}, 1.0),
        ("sum f64 [0,1e15] n≤1000", "make_sum, no size, large bound",
         lambda: _space(0.0, e15) >> t.then_sum(), {"size": 1000}, e15),
        ("sum f64 [-1e15,1e15] n≤1000", "make_sum, no size, mixed signs",
         lambda: _space(-e15, e15) >> t.then_sum(), {"size": 1000}, e15),
        ("sum f64 [0,1e15] n=1000", "make_sum, sized",
         lambda: _space(0.0, e15, 1000) >> t.then_sum(), {}, e15),
        ("sum f64 [-1e15,1e15] n=1000", "make_sum, sized, mixed signs",
         lambda: _space(-e15, e15, 1000) >> t.then_sum(), {}, 2 * e15),
        ("sum f64 [2^50,2^50+1] n=10", "make_sum, sized: Casacuberta et al.'s example",
         lambda: _space(2.0 ** 50, 2.0 ** 50 + 1, 10) >> t.then_sum(), {}, 1.0),
        ("sum f64 [0,1e15] n=5000", "make_sum, sized, 5000 records",
         lambda: _space(0.0, e15, 5000) >> t.then_sum(), {}, e15),
        ("sum f32 [0,1e6] n=1000", "make_sum on f32, sized",
         lambda: _space(0.0, 1e6, 1000, T="f32") >> t.then_sum(), {}, 1e6),
        ("sized checked Sequential [0,1e15] n=1000", "make_sized_bounded_float_checked_sum, Sequential<f64>",
         lambda: t.make_sized_bounded_float_checked_sum(1000, (0.0, e15), S="Sequential<f64>"), {}, e15),
        ("sized checked Sequential [-1e15,1e15] n=1000", "the same, mixed signs",
         lambda: t.make_sized_bounded_float_checked_sum(1000, (-e15, e15), S="Sequential<f64>"), {}, 2 * e15),
        ("sized ordered Sequential [0,1e15] n=1000", "make_sized_bounded_float_ordered_sum (InsertDeleteDistance)",
         lambda: t.make_sized_bounded_float_ordered_sum(1000, (0.0, e15), S="Sequential<f64>"), {}, e15),
        ("checked Sequential [0,1e15] n≤1000", "make_bounded_float_checked_sum, size_limit 1000",
         lambda: t.make_bounded_float_checked_sum(1000, (0.0, e15), S="Sequential<f64>"), {"size": 1000}, e15),
        ("ordered Sequential [-1e15,1e15] n≤1000", "make_bounded_float_ordered_sum, size_limit 1000",
         lambda: t.make_bounded_float_ordered_sum(1000, (-e15, e15), S="Sequential<f64>"), {"size": 1000}, e15),
    ]
    floats = [(n, w, b, k, s, True) for n, w, b, k, s in F]
    others = [
        ("sum i32 [0,10] n≤10", "make_sum on integers", lambda: _space(0, 10) >> t.then_sum(), {}, 10.0),
        ("sum i32 [0,10] n=10", "make_sum on integers, sized", lambda: _space(0, 10, 10) >> t.then_sum(), {}, 10.0),
        ("sum i32 [0,2^20] n=3000", "sized integer sum whose total passes i32",
         lambda: _space(0, 2 ** 20, 3000) >> t.then_sum(), {}, float(2 ** 20)),
        ("sum i32 [-2^20,2^20] n≤3000", "integer sum, no size, mixed signs",
         lambda: _space(-2 ** 20, 2 ** 20) >> t.then_sum(), {"size": 3000}, float(2 ** 20)),
        ("split sum i32 [-2^20,2^20] n≤3000", "make_bounded_int_split_sum",
         lambda: t.make_bounded_int_split_sum((-2 ** 20, 2 ** 20)), {"size": 3000}, float(2 ** 20)),
        ("sized monotonic sum i32 [0,2^10] n=1000", "make_sized_bounded_int_monotonic_sum",
         lambda: t.make_sized_bounded_int_monotonic_sum(1000, (0, 2 ** 10)), {}, float(2 ** 10)),
        ("count", "make_count", lambda: _free(int) >> t.then_count(), {}, None),
        ("count distinct", "make_count_distinct", lambda: _free(int) >> t.then_count_distinct(), {}, None),
        ("count by categories L1", "make_count_by_categories, null category",
         lambda: _free(int) >> t.then_count_by_categories(categories=[0, 1, 2]), {"domain": (0, 4)}, None),
        ("count by categories L2", "make_count_by_categories, MO=L2Distance",
         lambda: _free(int) >> t.then_count_by_categories(categories=[0, 1, 2], MO=dp.L2Distance[int]),
         {"domain": (0, 4)}, None),
        ("count by", "make_count_by (a map; metric L01InfDistance)",
         lambda: _free(int) >> t.then_count_by(), {"domain": (0, 4)}, None),
        ("clamp", "make_clamp, records in [-5, 5] clamped to [0, 1]",
         lambda: _free() >> t.then_clamp((0.0, 1.0)), {"domain": (-5, 5)}, None),
        ("clamp >> sum", "a chain", lambda: _free() >> t.then_clamp((0.0, 1.0)) >> t.then_sum(),
         {"domain": (-5, 5)}, None),
        ("mean [0,1] n=10", "make_mean, sized", lambda: _space(0.0, 1.0, 10) >> t.then_mean(), {}, None),
        ("mean [0,1e15] n=1000", "make_mean, sized, large bound",
         lambda: _space(0.0, e15, 1000) >> t.then_mean(), {}, None),
        ("variance [0,1] n=10", "make_variance", lambda: _space(0.0, 1.0, 10) >> t.then_variance(), {}, None),
        ("sum of squared deviations [0,1e6] n=1000", "make_sum_of_squared_deviations",
         lambda: _space(0.0, 1e6, 1000) >> t.then_sum_of_squared_deviations(), {}, None),
        ("lipschitz float mul 0.1", "make_lipschitz_float_mul on one value in [-1e10, 1e10]",
         lambda: t.make_lipschitz_float_mul(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
                                            0.1, (-1e10, 1e10)), {"domain": (-1e10, 1e10)}, None),
        ("quantile score candidates", "make_quantile_score_candidates (LInfDistance)",
         lambda: _free() >> t.then_quantile_score_candidates(candidates=[0.0, 25.0, 50.0, 75.0, 100.0],
                                                             alpha=0.5), {"domain": (0, 100)}, None),
        ("cast f64 -> i32", "make_cast_default", lambda: _free() >> t.then_cast_default(TOA=int),
         {"domain": (-5, 5)}, None),
        ("resize to 5", "make_resize (samples records when truncating: randomised)",
         lambda: _space(0.0, 1.0) >> t.then_resize(size=5, constant=0.0), {}, None),
    ]
    return floats + [(n, w, b, k, s, False) for n, w, b, k, s in others]


def controls():
    """(name, what, build, keywords, expected violation)."""
    return [
        ("control: Python sequential sum, ideal map, [2^50,2^50+1] n=10",
         "make_user_transformation: map ⌊d_in/2⌋·(U − L), no rounding term (Casacuberta et al.'s bug)",
         lambda: _python_sum(2.0 ** 50, 2.0 ** 50 + 1, 10), {}, True),
        ("control: Python sequential sum, ideal map, [0,1e15] n≤1000",
         "make_user_transformation: map d_in·U, no rounding term",
         lambda: _python_sum(0.0, 1e15), {"size": 1000}, True),
        ("control: Python count, map d_in/2", "make_user_transformation: a wrong map",
         lambda: _python_count(True), {}, True),
        ("control: Python count, map d_in", "make_user_transformation: a correct map",
         lambda: _python_count(False), {}, False),
    ]


def measurements():
    """(name, build, keywords of check_measurement, expected verdict)."""
    dp = _dp()
    t, m = dp.t, dp.m
    return [
        ("sum >> laplace", lambda: _space(0.0, 1.0) >> t.then_sum() >> m.then_laplace(scale=1.0), {}, "inconclusive"),
        ("clamp >> sum >> laplace", lambda: _free() >> t.then_clamp((0.0, 1.0)) >> t.then_sum()
         >> m.then_laplace(scale=1.0), {"domain": (-5, 5)}, "inconclusive"),
        ("count by categories >> laplace", lambda: _free(int) >> t.then_count_by_categories(
            categories=[0, 1], null_category=False) >> m.then_laplace(scale=1.0), {"domain": (0, 2)}, "inconclusive"),
        ("sized mean >> laplace (d_in 2)", lambda: _space(0.0, 1.0, 10) >> t.then_mean()
         >> m.then_laplace(scale=0.1), {"d_in": 2}, "inconclusive"),
        ("sum >> gaussian (zCDP)", lambda: _space(0.0, 1.0) >> t.then_sum() >> m.then_gaussian(scale=1.0),
         {"delta": 1e-6}, "inconclusive"),
        ("misuse: records in [0,2], sum declared over [0,1]",
         lambda: _space(0.0, 1.0) >> t.then_sum() >> m.then_laplace(scale=1.0), {"domain": (0, 2)}, "refuted"),
        ("misuse: histogram map(1) claimed for a replaced record",
         lambda: _free(int) >> t.then_count_by_categories(categories=[0, 1], null_category=False)
         >> m.then_laplace(scale=1.0), {"domain": (0, 2), "neighbours": "replace"}, "refuted"),
    ]


def _rounding(stage: dict, ideal: float | None) -> dict:
    """d_out above the real-number sensitivity (the rounding seen) and the margin of OpenDP's map
    above it (map(d_in) − the real-number sensitivity)."""
    if ideal is None or stage.get("largest_observed_up") is None or stage.get("map_d_in") is None:
        return {}
    seen = Fraction(stage["largest_observed_up"]) - Fraction(ideal)
    margin = Fraction(stage["map_d_in"]) - Fraction(ideal)
    return {"real_sensitivity": ideal, "rounding_seen": float(seen), "margin": float(margin),
            "rounding_share_of_margin": None if margin <= 0 else float(seen / margin)}


def _compact(data):
    """A dataset as recorded: whole up to 40 records, else its size, its first and last records and
    the records that occur in it (the patterns repeat a few values), to keep the file small."""
    if data is None:
        return None
    data = list(data)
    if len(data) <= 40:
        return data
    values = sorted(set(data))
    return {"size": len(data), "first": data[:3], "last": data[-3:],
            "values": values if len(values) <= 8 else f"{len(values)} distinct values"}


def _compact_pair(pair):
    if not isinstance(pair, dict):
        return pair
    return {**pair, "dataset": _compact(pair.get("dataset")), "neighbour": _compact(pair.get("neighbour"))}


def _compact_violation(v):
    if not v:
        return v
    out = {k: val for k, val in v.items() if k != "reproduce"}
    out["dataset"], out["neighbour"] = _compact(v.get("dataset")), _compact(v.get("neighbour"))
    if len(v.get("reproduce") or "") <= 400:
        out["reproduce"] = v.get("reproduce")
    return out


def _compact_measurement(m):
    return None if not m else {**m, "pair": _compact_pair(m.get("pair"))}


def _check(name, what, build, kw, budget, ideal=None, expected=None) -> dict:
    from dpaudit.stability import check_stability

    row = {"name": name, "what": what, "budget": budget, "keywords": {k: v for k, v in kw.items()}}
    try:
        obj = build()
    except Exception as exc:  # noqa: BLE001 - OpenDP refused the parameters: said, not hidden
        row.update(outcome="not built", error=f"{type(exc).__name__}: {str(exc).strip()[:200]}")
        return row
    started = time.perf_counter()
    deep = {} if budget <= 200 else {"examples": budget // 2}  # the hypothesis search gets the budget
    r = check_stability(obj, seed=SEED, budget=budget, **deep, **kw)
    row["seconds"] = round(time.perf_counter() - started, 3)
    stage = r.stages[-1] if r.stages else {}
    noted = [f.message for f in r.notes]
    if r.error:
        outcome = "error"
    elif r.violations:
        outcome = "VIOLATION"
    elif stage.get("note"):
        outcome = "not checked"
    else:
        outcome = "nothing found"
    row.update(outcome=outcome, d_in=r.d_in, relation=r.relation.value, size=r.size,
               domain=[r.domain.lo, r.domain.hi], evaluations=r.invocations, pairs=r.pairs,
               map_d_in=stage.get("map_d_in_repr"), largest_d_out=stage.get("largest_observed"),
               largest_ratio=stage.get("largest_ratio"), pair=_compact_pair(stage.get("pair")),
               stages=[{**st, "pair": _compact_pair(st.get("pair"))} for st in r.stages], notes=noted,
               error=r.error,
               violation=None if not r.violations else _compact_violation(r.violations[0].to_record()))
    row.update(_rounding(stage, ideal))
    if expected is not None:
        row["expected_violation"] = expected
        row["as_expected"] = (outcome == "VIOLATION") == expected
    return row


def _measurement(name, build, kw, expected) -> dict:
    from dpaudit.stability import check_measurement

    obj = build()
    started = time.perf_counter()
    r = check_measurement(obj, seed=SEED, **kw)
    rec = r.to_record()
    return {"name": name, "keywords": kw, "verdict": rec["verdict"], "expected": expected,
            "as_expected": rec["verdict"] == expected, "seconds": round(time.perf_counter() - started, 3),
            "calls": rec["calls"], "pairs": rec["pairs"],
            "findings": [{"kind": f["kind"], "severity": f["severity"], "message": f["message"]}
                         for f in rec["findings"]],
            "measurement": _compact_measurement((rec["accounting"] or {}).get("measurement"))}


def _short(x, width):
    s = "-" if x is None else str(x)
    return s if len(s) <= width else s[: width - 1] + "…"


def main(argv=None) -> int:
    from dpaudit.adapters.common import library_version

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the default budget only")
    args = ap.parse_args(argv)
    os.chdir(ROOT)
    record = {"machine": machine(opendp=library_version("opendp"),
                                 cpu_affinity=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None),
              "quick": args.quick, "seed": SEED, "default_budget": 200, "deep_budget": DEEP,
              "transformations": [], "controls": [], "measurements": []}
    lines: list[str] = []
    emit(lines, f"{'transformation':45s} {'budget':>6s} {'outcome':14s} {'map(d_in)':>24s} "
                f"{'largest d_out':>30s} {'ratio':>20s} {'rounding':>10s} {'map−real':>10s} {'s':>6s}")
    for name, what, build, kw, ideal, float_sum in transformations():
        budgets = [200] + ([DEEP] if float_sum and not args.quick else [])
        for budget in budgets:
            row = _check(name, what, build, kw, budget, ideal)
            record["transformations"].append(row)
            ratio = row.get("largest_ratio")
            emit(lines, f"{_short(name, 45):45s} {budget:6d} {row['outcome']:14s} "
                        f"{_short(row.get('map_d_in'), 24):>24s} {_short(row.get('largest_d_out'), 30):>30s} "
                        f"{'-' if ratio is None else format(ratio, '.17g'):>20s} "
                        f"{_short(None if row.get('rounding_seen') is None else format(row['rounding_seen'], '.4g'), 10):>10s} "
                        f"{_short(None if row.get('margin') is None else format(row['margin'], '.4g'), 10):>10s} "
                        f"{row.get('seconds', 0):6.2f}")
            if row.get("error") and row["outcome"] in ("not built", "error"):
                emit(lines, f"    {row['error']}")
            for note in row.get("notes") or []:
                emit(lines, f"    note: {_short(note, 160)}")
    emit(lines)
    emit(lines, "controls (deliberately wrong stability maps, and one right one):")
    for name, what, build, kw, expected in controls():
        row = _check(name, what, build, kw, 200, expected=expected)
        record["controls"].append(row)
        emit(lines, f"{_short(name, 62):62s} {row['outcome']:14s} expected "
                    f"{'a violation' if expected else 'none':12s} {'ok' if row['as_expected'] else 'NOT AS EXPECTED'} "
                    f"({row['evaluations']} evaluations, {row['seconds']:.2f} s)")
        if row.get("violation"):
            emit(lines, f"    {_short(row['violation']['message'], 230)}")
            emit(lines, f"    pair: D = {_short(row['violation']['dataset'], 110)}, "
                        f"D′ = {_short(row['violation']['neighbour'], 110)}")
    emit(lines)
    emit(lines, "measurements checked (dpaudit.stability.check_measurement):")
    for name, build, kw, expected in measurements():
        row = _measurement(name, build, kw, expected)
        record["measurements"].append(row)
        top = next((f for f in row["findings"] if f["severity"] == "violation"), None)
        m = row["measurement"] or {}
        emit(lines, f"{_short(name, 55):55s} {row['verdict']:13s} {'ok' if row['as_expected'] else 'NOT AS EXPECTED'} "
                    f"{row['calls']:4d} calls {row['seconds']:6.2f} s; measurement map at the largest "
                    f"distance seen {m.get('largest_value', '-')} of claim {m.get('claim', '-')}")
        if top is not None:
            emit(lines, f"    {_short(top['message'], 230)}")
    rows = [r for r in record["transformations"] if r.get("outcome") != "not built"]
    summary = {
        "transformations": len({r["name"] for r in record["transformations"]}),
        "runs": len(record["transformations"]),
        "violations_in_opendp": sorted({r["name"] for r in rows if r["outcome"] == "VIOLATION"}),
        "nothing_found": sorted({r["name"] for r in rows if r["outcome"] == "nothing found"}),
        "not_checked": sorted({r["name"] for r in rows if r["outcome"] == "not checked"}),
        "not_built": sorted({r["name"] for r in record["transformations"] if r.get("outcome") == "not built"}),
        "largest_ratio": max((r["largest_ratio"] for r in rows if isinstance(r.get("largest_ratio"), float)
                              and r["outcome"] == "nothing found"), default=None),
        "largest_rounding_share_of_margin": max(
            (r["rounding_share_of_margin"] for r in rows if r.get("rounding_share_of_margin") is not None),
            default=None),
        "controls_as_expected": all(r["as_expected"] for r in record["controls"]),
        "measurements_as_expected": all(r["as_expected"] for r in record["measurements"]),
        "max_evaluations_at_default_budget": max((r.get("evaluations", 0) for r in rows if r["budget"] == 200),
                                                 default=0),
    }
    record["summary"] = summary
    emit(lines)
    emit(lines, "summary: " + json.dumps(summary, ensure_ascii=False))
    save("opendp_stability", record, lines)
    return 0 if summary["controls_as_expected"] and summary["measurements_as_expected"] else 1


if __name__ == "__main__":
    sys.exit(main())
