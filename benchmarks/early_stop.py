"""Early stopping: wall time of ``dpaudit check`` with its defaults against ``--no-early-stop`` on
the refuted rows of the violation suite (benchmarks/violation_suite.py), side by side in one run.

Each row's mechanism is written to a small file declaring its claim (its ε and δ, the suite's
neighbours, domain and size), and ``dpaudit check FILE --quiet --json F`` runs in a fresh process
with the default budget (4·10⁶ samples), once with early stopping and once without, alternating
so that both see the same machine load. The figure is the ratio of the median wall times (target
≤ 1/3). The refuted rows of benchmarks/structured_suite.py (its ``SUITE`` rows with
``correct=False``, each with its own ε and δ) are added; ``--suite`` picks one suite.

Run::

    nice python benchmarks/early_stop.py            # writes results/early_stop.json
    nice python benchmarks/early_stop.py --only SVT5
    nice python benchmarks/early_stop.py --suite structured_suite   # results/early_stop_structured_suite.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "early_stop.json"

TEMPLATE = """import sys
sys.path.insert(0, {here!r})
import dpaudit
import {module} as suite


@dpaudit.mechanism(epsilon={eps!r}, delta={delta!r}, neighbours={neighbours!r}, domain={domain!r},
                   size={size!r})
def mechanism(data, rng, size=None):
    return suite.{func}(data, rng, size)
"""


def _rows(only, suite=None):
    sys.path.insert(0, str(HERE))
    import violation_suite as vs

    rows = [("violation_suite", c, vs.EPS) for c in vs.SUITE if not c.correct]
    if (HERE / "structured_suite.py").exists():
        try:
            import structured_suite as ss

            rows += [("structured_suite", c, getattr(c, "epsilon", getattr(ss, "EPS", None)))
                     for c in getattr(ss, "SUITE", []) if not getattr(c, "correct", True)]
        except Exception as exc:  # a suite in progress: say so, run the rest
            print(f"structured_suite skipped: {type(exc).__name__}: {exc}", file=sys.stderr)
    return [r for r in rows if (not only or r[1].name in only) and (not suite or r[0] == suite)]


def _check(path: Path, extra: list, out: Path) -> tuple[float, dict]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "dpaudit", "check", f"{path}:mechanism", "--quiet",
                           "--json", str(out), *extra], capture_output=True, text=True,
                          cwd=str(HERE.parent))  # the repository is the working folder: the
    # sandbox shares it, so the suites' imports of mechanisms/ are readable (docs/sandbox.md)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"dpaudit check {path} exited {proc.returncode}: {proc.stderr.strip()}")
    rec = json.loads(out.read_text())["results"][0]
    return wall, rec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append")
    ap.add_argument("--suite", choices=["violation_suite", "structured_suite"],
                    help="only the refuted rows of this suite (default: both)")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from _record import finish, machine, write_json

    started = machine()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for module, case, eps in _rows(args.only, args.suite):
            src = Path(tmp) / f"{case.name}.py"
            src.write_text(TEMPLATE.format(here=str(HERE), module=module, eps=float(eps),
                                           delta=float(getattr(case, "delta", 0.0)),
                                           neighbours=case.neighbours, domain=tuple(case.domain),
                                           size=int(case.size), func=case.func.__name__))
            w_early, r_early = _check(src, [], Path(tmp) / "a.json")
            w_full, r_full = _check(src, ["--no-early-stop"], Path(tmp) / "b.json")
            es = r_early["details"].get("early_stop") or {}
            row = {"suite": module, "mechanism": case.name, "claimed_epsilon": float(eps),
                   "wall_s_default": round(w_early, 2), "wall_s_no_early_stop": round(w_full, 2),
                   "ratio": round(w_early / w_full, 3),
                   "verdict_default": r_early["verdict"], "verdict_no_early_stop": r_full["verdict"],
                   "epsilon_lb_default": r_early["epsilon_lower_bound"],
                   "epsilon_lb_no_early_stop": r_full["epsilon_lower_bound"],
                   "samples_default": r_early["samples"], "samples_no_early_stop": r_full["samples"],
                   "stopped_at_look": es.get("stopped_at_look"), "looks": len(es.get("budgets", [])) + 1}
            rows.append(row)
            print(f"{case.name:<16} default {w_early:6.2f} s ({row['verdict_default']}, look "
                  f"{row['stopped_at_look']}/{row['looks']}, ε ≥ {row['epsilon_lb_default']:.3g})   "
                  f"--no-early-stop {w_full:6.2f} s ({row['verdict_no_early_stop']}, ε ≥ "
                  f"{row['epsilon_lb_no_early_stop']:.3g})   ratio {row['ratio']:.2f}", flush=True)
    refuted = [r for r in rows if r["verdict_no_early_stop"] == "refuted"]
    med_e = statistics.median(r["wall_s_default"] for r in refuted) if refuted else None
    med_f = statistics.median(r["wall_s_no_early_stop"] for r in refuted) if refuted else None
    ratio = None if not refuted else med_e / med_f
    if refuted:
        print(f"median wall time on {len(refuted)} refuted rows: default {med_e:.2f} s, "
              f"--no-early-stop {med_f:.2f} s, ratio {ratio:.3f} (target ≤ 1/3)")
    record = {"benchmark": "early_stop", "machine": finish(started),
              "command": " ".join(["python", "benchmarks/early_stop.py"] + (argv or sys.argv[1:])),
              "median_wall_s_default": med_e, "median_wall_s_no_early_stop": med_f,
              "median_ratio": ratio, "target_ratio": 1 / 3,
              "meets_target": bool(ratio is not None and ratio <= 1 / 3), "rows": rows}
    if not args.only:
        out = Path(args.out)
        if args.suite and args.out == str(RESULTS):
            out = RESULTS.with_name(f"early_stop_{args.suite}.json")
        write_json(out, record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
