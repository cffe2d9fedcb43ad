"""Two findings per audit: the logic and the float64 verdicts on mechanisms users write.

Every file in ``benchmarks/two_findings/`` is one mechanism in plain numpy (``rng.laplace``,
``rng.normal``, float64 sums and means): Laplace and Gaussian noise on sums, counts, means and
histograms, the sparse vector technique, report noisy max, an exponential mechanism, a DP-SGD step
and partition selection. About half are correct and half have a logic bug whose true ε is derived in
the file's docstring; the controls are made safe on doubles by Mironov's snapping (``NOISE =
"snapped"``) or use integer noise (``NOISE = "integer"``). Each file states its claim in
``@dpaudit.mechanism(...)`` and the module constants this script reads (from the source, without
importing it): ``TRUE_EPSILON`` (math.inf allowed), ``CORRECT``, ``NOISE`` (``"continuous"``,
``"snapped"`` or ``"integer"``) and ``OUTPUT`` (``"float"`` when the release holds float64 values,
``"discrete"`` for indices, booleans, key lists and integers).

Protocol: ``dpaudit check FILE --json OUT`` with its defaults (4·10⁶ samples with a batch form, 4·10⁵
without; early stopping; ``--float error``), one file at a time in a child process, the child's
CPU-seconds from ``resource.getrusage(RUSAGE_CHILDREN)`` deltas (user + system, the sandbox children
it waits for included) and its wall time. Correct mechanisms are audited at ``--confidence 0.999``
(a false alarm has chance ≤ 0.1%), logic bugs at dpaudit's default 0.95. Targets, read from
``results[0]["findings"]``:

* every logic bug's ``findings.logic`` is REFUTED with ε_LB ≥ 0.5 × true ε (finite), ≥ 5 (infinite);
* no correct mechanism's ``findings.logic`` is REFUTED (nor an ERROR);
* every continuous-noise mechanism with float64 outputs has ``findings.float`` REFUTED (porosity,
  Mironov 2012); the snapped and integer-noise controls, and releases with no float in them, have
  ``findings.float`` NOT REFUTED or ``not_applicable``.

Run::

    python benchmarks/two_findings.py                  # the recorded run: results/two_findings.{json,txt}
    python benchmarks/two_findings.py --quick          # smoke run, --samples 200000: two_findings_quick.*
    python benchmarks/two_findings.py --only svt_ok --only laplace_sum_scale_bug
    python benchmarks/two_findings.py --seed 7         # passes --seed 7 to every check

Exit status: 0 when every target is met, 1 when one is missed (a check that ends in ERROR or writes
no record misses its targets), 2 when dpaudit's record has no ``findings`` (a dpaudit that predates
two findings: the run stops at the first such record and writes no result file).
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from _record import ROOT, emit, machine, save

SUITE = Path(__file__).resolve().parent / "two_findings"
QUICK_SAMPLES = 200_000
CORRECT_CONFIDENCE = 0.999
INFINITE_TARGET = 5.0
NOISES = ("continuous", "snapped", "integer")
OUTPUTS = ("float", "discrete")
CONSTANTS = ("TRUE_EPSILON", "CORRECT", "NOISE", "OUTPUT")


class NoFindings(RuntimeError):
    """dpaudit's record has no ``findings``: it predates the two findings."""


# ------------------------------------------------------------------------------ the suite

def _constant(node: ast.expr, path: Path, name: str) -> Any:
    """A module constant's value, read from the source: a literal, ``math.inf`` or ``float("inf")``."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id == "math" and node.attr == "inf":
        return math.inf
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float" \
            and len(node.args) == 1 and isinstance(node.args[0], ast.Constant):
        return float(node.args[0].value)
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise SystemExit(f"{path.name}: {name} must be a literal (or math.inf)") from None


def read_case(path: Path) -> dict:
    """The module constants of one mechanism file, checked."""
    found: dict = {}
    for stmt in ast.parse(path.read_text(encoding="utf-8"), filename=str(path)).body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id in CONSTANTS:
            found[stmt.targets[0].id] = _constant(stmt.value, path, stmt.targets[0].id)
    missing = [c for c in CONSTANTS if c not in found]
    if missing:
        raise SystemExit(f"{path.name}: missing module constant(s) {', '.join(missing)}")
    true_eps, correct, noise, output = (found[c] for c in CONSTANTS)
    if not isinstance(correct, bool) or noise not in NOISES or output not in OUTPUTS \
            or not isinstance(true_eps, (int, float)) or not true_eps > 0:
        raise SystemExit(f"{path.name}: bad constants {found}")
    return {"name": path.stem, "file": str(path.relative_to(ROOT)), "true_epsilon": float(true_eps),
            "correct": correct, "noise": noise, "output": output}


def suite() -> list[dict]:
    return [read_case(p) for p in sorted(SUITE.glob("*.py")) if not p.name.startswith("_")]


def float_expected(case: dict) -> str:
    """``"refuted"`` for continuous noise released as float64; else ``"not_refuted"`` (or
    ``not_applicable``: no float64 question)."""
    return "refuted" if case["noise"] == "continuous" and case["output"] == "float" else "not_refuted"


def logic_target(case: dict) -> Optional[float]:
    """The ε_LB a logic bug's finding must reach (None for a correct mechanism)."""
    if case["correct"]:
        return None
    return INFINITE_TARGET if math.isinf(case["true_epsilon"]) else 0.5 * case["true_epsilon"]


# ------------------------------------------------------------------------------ one check

def _bound(v: Any) -> Optional[float]:
    if v is None:
        return None
    return math.inf if v in ("inf", "Infinity") else float(v)


def _finding(f: Optional[dict]) -> dict:
    if not isinstance(f, dict):
        return {"verdict": None, "epsilon_lb": None}
    cx = f.get("counterexample") or {}
    event = cx.get("event") or {}
    return {"verdict": f.get("verdict"), "epsilon_lb": _bound(f.get("epsilon_lower_bound")),
            "delta_lb": f.get("delta_lower_bound"), "reason": f.get("reason"),
            "confidence": f.get("confidence"), "p_value": f.get("p_value"),
            "event": event.get("text"), "event_kind": event.get("kind"),
            "pair": [cx.get("dataset"), cx.get("neighbour")] if cx else None}


def check(case: dict, *, samples: Optional[int], seed: Optional[int], early_stop: bool,
          timeout: float) -> dict:
    """``dpaudit check`` on one file in a child process; the row with its targets."""
    confidence = CORRECT_CONFIDENCE if case["correct"] else None
    with tempfile.TemporaryDirectory(prefix="two_findings_") as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, "-m", "dpaudit", "check", case["file"], "--json", str(out), "--quiet"]
        if confidence is not None:
            cmd += ["--confidence", str(confidence)]
        if samples is not None:
            cmd += ["--samples", str(samples)]
        if seed is not None:
            cmd += ["--seed", str(seed)]
        if not early_stop:
            cmd += ["--no-early-stop"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
            rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:
            rc, stdout, stderr = None, exc.stdout or "", f"timed out after {timeout:g} s"
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        record = json.loads(out.read_text(encoding="utf-8")) if out.exists() else None
    row = {**case, "command": " ".join(["dpaudit", "check", case["file"], "--json", "OUT"] + cmd[7:]),
           "confidence": confidence or 0.95, "exit_code": rc, "cpu_seconds": round(cpu, 2),
           "wall_seconds": round(wall, 2),
           "first_line": (stdout.strip().splitlines() or [""])[0][:400] if isinstance(stdout, str) else ""}
    if record is None or not record.get("results"):
        row.update(error=(stderr or "no JSON record written").strip()[-400:], logic={}, float={})
        return _judge(row)
    r = record["results"][0]
    if r.get("kind") in ("audit", "exact") and "findings" not in r and r.get("verdict") != "error":
        raise NoFindings(f"{case['file']}: record has no findings: this dpaudit predates the two findings "
                         f"(dpaudit {record.get('tool_version')}, commit {record.get('git_commit')})")
    findings = r.get("findings") or {}
    row.update(verdict=r.get("verdict"), decided_by=r.get("decided_by"),
               float_policy=r.get("float_policy"), samples=r.get("samples"), seed=r.get("seed"),
               claim=r.get("claim"), reproduce=r.get("reproduce"), error=r.get("error"),
               logic=_finding(findings.get("logic")), float=_finding(findings.get("float")))
    return _judge(row)


def _judge(row: dict) -> dict:
    """Mark the row's logic and float targets."""
    logic, flt = row.get("logic") or {}, row.get("float") or {}
    lv, lb = logic.get("verdict"), logic.get("epsilon_lb")
    target = logic_target(row)
    if row["correct"]:
        row["logic_ok"] = lv is not None and lv not in ("refuted", "error")
    else:
        row["logic_ok"] = lv == "refuted" and lb is not None and lb >= target
    row["logic_target"] = "not refuted" if target is None else f"refuted, ε_LB ≥ {target:g}"
    expected = float_expected(row)
    fv = flt.get("verdict")
    row["float_target"] = "refuted" if expected == "refuted" else "not refuted / not applicable"
    row["float_ok"] = (fv == "refuted") if expected == "refuted" else fv in ("not_refuted", "not_applicable")
    row["meets_targets"] = bool(row["logic_ok"] and row["float_ok"])
    return row


# ------------------------------------------------------------------------------ output

def _eps(v: Optional[float]) -> str:
    if v is None:
        return "—"
    return "∞" if math.isinf(v) else f"{v:.3g}"


def _verdict(f: dict) -> str:
    v = f.get("verdict")
    return {"refuted": "REFUTED", "not_refuted": "not refuted", "not_applicable": "n/a",
            "inconclusive": "inconcl.", "error": "ERROR", None: "—"}.get(v, str(v))


HEADER = (f"{'mechanism':<34} {'correct':>7} {'true ε':>7} {'noise':>10}  {'logic':>11} {'ε_LB':>6}  "
          f"{'float':>11} {'ε_LB':>6} {'CPU s':>7} {'wall s':>7}  logic  float")


def line(row: dict) -> str:
    lg, fl = row.get("logic") or {}, row.get("float") or {}
    mark = lambda ok: "ok  " if ok else "MISS"  # noqa: E731
    text = (f"{row['name']:<34} {'yes' if row['correct'] else 'no':>7} {_eps(row['true_epsilon']):>7} "
            f"{row['noise']:>10}  {_verdict(lg):>11} {_eps(lg.get('epsilon_lb')):>6}  "
            f"{_verdict(fl):>11} {_eps(fl.get('epsilon_lb')):>6} {row['cpu_seconds']:>7.1f} "
            f"{row['wall_seconds']:>7.1f}  {mark(row['logic_ok'])}   {mark(row['float_ok'])}")
    if row.get("error"):
        text += f"\n    error: {str(row['error'])[:300]}"
    return text


# ------------------------------------------------------------------------------ main

def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"smoke run: --samples {QUICK_SAMPLES} on every check "
                         "(results/two_findings_quick.*)")
    ap.add_argument("--only", action="append", metavar="NAME",
                    help="only this mechanism (file stem; repeatable)")
    ap.add_argument("--seed", type=int, default=None,
                    help="root seed passed to every check (default: dpaudit's fixed default, recorded)")
    ap.add_argument("--no-early-stop", action="store_true",
                    help="pass --no-early-stop (not the protocol: the defaults stop at the "
                         "first refuting look)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per check (default 1800)")
    args = ap.parse_args(argv)

    cases = suite()
    if args.only:
        names = {c["name"] for c in cases}
        unknown = [n for n in args.only if n not in names]
        if unknown:
            raise SystemExit(f"unknown mechanism(s) {', '.join(unknown)}; known: {', '.join(sorted(names))}")
        cases = [c for c in cases if c["name"] in args.only]
    samples = QUICK_SAMPLES if args.quick else None
    import dpaudit

    started = machine(dpaudit=getattr(dpaudit, "__version__", None))
    lines: list[str] = []
    emit(lines, f"{len(cases)} mechanisms ({sum(c['correct'] for c in cases)} correct, "
                f"{sum(not c['correct'] for c in cases)} with a logic bug); dpaudit check defaults"
                + (f" but --samples {samples}" if samples else "")
                + (", --no-early-stop" if args.no_early_stop else "")
                + (f", --seed {args.seed}" if args.seed is not None else ""))
    emit(lines, f"correct mechanisms audited at --confidence {CORRECT_CONFIDENCE}, logic bugs at the "
                f"default 0.95; CPU s: the child's user + system time (RUSAGE_CHILDREN deltas)")
    emit(lines, HEADER)
    rows = []
    t0 = time.perf_counter()
    try:
        for case in cases:
            row = check(case, samples=samples, seed=args.seed, early_stop=not args.no_early_stop,
                        timeout=args.timeout)
            rows.append(row)
            emit(lines, line(row))
    except NoFindings as exc:
        print(f"two_findings: {exc}", file=sys.stderr)
        return 2
    wall = time.perf_counter() - t0
    bugs = [r for r in rows if not r["correct"]]
    correct = [r for r in rows if r["correct"]]
    cont = [r for r in rows if float_expected(r) == "refuted"]
    ctrl = [r for r in rows if float_expected(r) != "refuted"]
    summary = {
        "logic_bugs_refuted_at_target": [sum(r["logic_ok"] for r in bugs), len(bugs)],
        "correct_logic_not_refuted": [sum(r["logic_ok"] for r in correct), len(correct)],
        "continuous_float_refuted": [sum(r["float_ok"] for r in cont), len(cont)],
        "controls_float_not_refuted": [sum(r["float_ok"] for r in ctrl), len(ctrl)],
        "rows_meeting_all_targets": [sum(r["meets_targets"] for r in rows), len(rows)],
    }
    emit(lines)
    for k, (met, n) in summary.items():
        emit(lines, f"{k.replace('_', ' ')}: {met}/{n}")
    emit(lines, f"wall time {wall:.1f} s, CPU {sum(r['cpu_seconds'] for r in rows):.1f} s")
    record = {
        "benchmark": "two_findings", "machine": started, "quick": args.quick,
        "protocol": {"check": "dpaudit check FILE --json OUT (defaults)", "samples": samples or "default",
                     "seed": args.seed if args.seed is not None else "default",
                     "early_stop": not args.no_early_stop,
                     "confidence_correct": CORRECT_CONFIDENCE, "confidence_bugs": 0.95,
                     "cpu_note": "cpu_seconds: user + system time of the dpaudit check child and the "
                                 "children it waited for (resource.getrusage(RUSAGE_CHILDREN) deltas); "
                                 "one check at a time"},
        "targets": {"logic_bug": "findings.logic REFUTED with epsilon_lb >= 0.5 * true epsilon "
                                 f"(>= {INFINITE_TARGET:g} when infinite)",
                    "correct": "findings.logic not REFUTED (nor ERROR)",
                    "float_continuous": "findings.float REFUTED (noise continuous, output float)",
                    "float_controls": "findings.float NOT REFUTED or not_applicable (snapped, integer "
                                      "noise, or no float in the release)"},
        "wall_seconds": round(wall, 1), "summary": summary, "rows": rows,
    }
    if args.only:  # a part of the suite is not the recorded run
        print("not recorded (--only)")
    else:
        for p in save("two_findings", record, lines):
            print(f"wrote {p.relative_to(ROOT)}")
    return 0 if all(r["meets_targets"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
