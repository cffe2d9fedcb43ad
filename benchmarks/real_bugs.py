"""Real bugs, found by record and replay: documented DP bugs re-created, with correct controls.

Each file of ``benchmarks/real_bugs/`` is one small re-creation of a documented bug (its docstring
cites the issue, pull request or paper and says what was kept) or a correct control, with an
``@dpaudit.mechanism`` claim, ``EXPECTED`` (the finding kind the replay must report: None for a
control), ``SOURCE`` and, in a bug, a ``# replay: expected site`` comment on the line the finding
must name. For every file this script records:

* the replay audit (:func:`dpaudit.replay.replay_audit`, default budget of 200 calls, the file's
  ``REPLAY`` options): its verdict, whether it reported the expected kind at the expected line
  (``found``), the call site it names, seconds, calls and pairs;
* beside it, the default ``dpaudit check`` on the same file, ``python -m dpaudit check FILE --json
  OUT --quiet`` in a subprocess (with ``--timeout`` so that a slow mechanism cannot hold the run:
  the sampled audit needs millions of calls): its verdict, the logic and float64 findings, its ε
  lower bound, which finding decided it (``by``: logic, float, or replay when only the replay
  stage's violation refutes), the verdict of its replay stage (``stage``), whether its refuting
  pair is one the replay stage pointed at (``pair``), and wall time.

Then checks its targets: at least 10 documented bugs found, each with the right call site
in at most 10 s; at least 8 controls, none with a violation; every replay within 200 calls.

Run::

    python benchmarks/real_bugs.py              # writes results/real_bugs.json and .txt
    python benchmarks/real_bugs.py --quick      # replay only, writes results/real_bugs_quick.*
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _record import ROOT, emit, machine, save

FOLDER = ROOT / "benchmarks" / "real_bugs"
MARK = "# replay: expected site"
#: the most seconds a replay may take to count as found (the target: 10 s on 2 cores)
REPLAY_SECONDS = 10.0
#: the default replay budget
CALLS = 200


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"real_bugs_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _expected_line(path: Path) -> int | None:
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if MARK in line:
            return i
    return None


def _replay(path: Path, module) -> dict:
    from dpaudit.replay import replay_audit

    expected = getattr(module, "EXPECTED", None)
    line = _expected_line(path)
    started = time.perf_counter()
    result = replay_audit(module.mechanism, **getattr(module, "REPLAY", {}))
    seconds = time.perf_counter() - started
    hits = [f for f in result.findings if f.kind == expected] if expected else []
    right = [f for f in hits if f.site is not None and Path(f.site.path).resolve() == path.resolve()
             and f.site.line == line]
    shown = (right or hits or list(result.findings) or [None])[0]
    violations = [f.kind for f in result.findings if f.severity == "violation"]
    return {"verdict": result.verdict.value, "expected": expected, "expected_line": line,
            "found": bool(right), "kind_reported": bool(hits),
            "site": None if shown is None or shown.site is None else f"{shown.site.short()}",
            "message": None if shown is None else shown.message,
            "kinds": sorted(result.kinds()), "violations": violations,
            "seconds": round(seconds, 3), "calls": result.calls, "pairs": result.pairs,
            "error": result.error, "record": result.to_record()}


def _sampled(path: Path, timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "check.json"
        cmd = [sys.executable, "-m", "dpaudit", "check", str(path.relative_to(ROOT)), "--json", str(out),
               "--quiet", "--timeout", f"{timeout:g}"]
        started = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout + 300)
        seconds = time.perf_counter() - started
        shown = ["python"] + cmd[1:6] + ["OUT.json"] + cmd[7:]
        row = {"command": " ".join(shown), "exit": proc.returncode, "seconds": round(seconds, 2)}
        if not out.exists():
            row.update({"verdict": "error", "error": (proc.stderr or proc.stdout).strip().splitlines()[-1:]})
            return row
        rec = json.loads(out.read_text())["results"][0]
    findings = rec.get("findings") or {}
    stage = rec.get("replay") or {}
    cx = rec.get("counterexample") or {}
    # the pairs the stage hands to the sampling (dpaudit.replay.command.first_pairs' rule)
    stage_pairs = [(f.get("dataset"), f.get("neighbour")) for f in stage.get("findings") or []
                   if f.get("severity") in ("violation", "finding") or f.get("kind") == "composition_excess"]
    row.update({"replay_stage": stage.get("verdict"),
                "replay_stage_kinds": sorted({f["kind"] for f in stage.get("findings") or []}),
                "decided_by": rec.get("decided_by"),
                # the sampling's refuting pair is one the replay stage pointed at
                "on_replay_pair": rec.get("verdict") == "refuted" and bool(cx) and
                (cx.get("dataset"), cx.get("neighbour")) in stage_pairs})
    row.update({"verdict": rec.get("verdict"), "epsilon_lower_bound": rec.get("epsilon_lower_bound"),
                "samples": rec.get("samples"), "elapsed_s": rec.get("elapsed_s"),
                "logic": (findings.get("logic") or {}).get("verdict"),
                "float": (findings.get("float") or {}).get("verdict"),
                "timed_out": bool((rec.get("details") or {}).get("timed_out")),
                "error": rec.get("error")})
    return row


def _bound(x) -> str:
    return "-" if x is None else f"{float(x):.3g}"


def _role(module) -> str:
    if getattr(module, "SOURCE", "") == "control":
        return "control"
    return "bug" if getattr(module, "EXPECTED", None) else "not exploitable"


def replay_alone(rows: list) -> dict:
    """How many bugs ``dpaudit check --replay`` refutes with no sampling (a declared sensitivity
    exceeded or an exact loss), by which kind and in what time; how many default checks the
    replay stage decided (``decided_by = "replay"``); any control refuted by the replay."""
    bugs = [r for r in rows if r["role"] == "bug"]
    refuted = [r for r in bugs if r["replay"]["verdict"] == "refuted"]
    seconds = sorted(r["replay"]["seconds"] for r in refuted)
    kinds: dict = {}
    for r in refuted:
        for k in r["replay"]["violations"]:
            kinds[k] = kinds.get(k, 0) + 1
    return {"bugs": len(bugs), "refuted_by_replay_alone": len(refuted), "by_kind": kinds,
            "files": [Path(r["file"]).stem for r in refuted],
            "seconds_max": seconds[-1] if seconds else None,
            "seconds_median": seconds[len(seconds) // 2] if seconds else None,
            "calls_max": max((r["replay"]["calls"] for r in refuted), default=None),
            "default_check_decided_by_replay": sum(1 for r in rows if (r.get("sampled") or {}).get("decided_by") == "replay"),
            "controls_refuted_by_replay": [Path(r["file"]).stem for r in rows
                                           if r["role"] == "control" and r["replay"]["verdict"] == "refuted"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="replay only (no sampled check)")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="time limit of each sampled check, in seconds (default 120)")
    ap.add_argument("--only", default=None, help="run the files whose name contains this")
    args = ap.parse_args(argv)
    os.chdir(ROOT)
    record = {"machine": machine(cpu_affinity=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None),
              "quick": args.quick, "sampled_timeout_s": None if args.quick else args.timeout,
              "replay_budget_calls": CALLS, "rows": []}
    lines: list[str] = []
    files = sorted(FOLDER.glob("*.py"), key=lambda p: (p.stem.startswith("control_"), p.stem))
    if args.only:
        files = [p for p in files if args.only in p.name]
    emit(lines, f"{'file':42s} {'role':8s} {'source':46s} {'replay':13s} {'found':5s} {'site':38s} "
                f"{'s':>6s} {'calls':>5s}  {'sampled':13s} {'logic':12s} {'ε_LB':>7s} {'by':6s} "
                f"{'stage':13s} {'pair':4s} {'s':>7s}")
    for path in files:
        module = _load(path)
        row = {"file": str(path.relative_to(ROOT)), "role": _role(module),
               "title": (module.__doc__ or "").strip().splitlines()[0],
               "source": getattr(module, "SOURCE", None)}
        row["replay"] = _replay(path, module)
        row["sampled"] = None if args.quick else _sampled(path, args.timeout)
        record["rows"].append(row)
        r, s = row["replay"], row["sampled"] or {}
        found = ("yes" if r["found"] else "no") if row["role"] == "bug" else \
            ("viol" if r["violations"] else "-")
        emit(lines, f"{path.stem[:42]:42s} {row['role'][:8]:8s} {str(row['source'])[:46]:46s} "
                    f"{r['verdict']:13s} {found:5s} {str(r['site'])[:38]:38s} {r['seconds']:6.2f} "
                    f"{r['calls']:5d}  {str(s.get('verdict', '-')):13s} {str(s.get('logic', '-')):12s} "
                    f"{_bound(s.get('epsilon_lower_bound')):>7s} {str(s.get('decided_by') or '-')[:6]:6s} "
                    f"{str(s.get('replay_stage') or '-'):13s} {'yes' if s.get('on_replay_pair') else '-':4s} "
                    f"{s.get('seconds', float('nan')):7.1f}")
    bugs = [r for r in record["rows"] if r["role"] == "bug"]
    controls = [r for r in record["rows"] if r["role"] == "control"]
    found = [r for r in bugs if r["replay"]["found"] and r["replay"]["seconds"] <= REPLAY_SECONDS]
    targets = {
        "bugs": len(bugs),
        "bugs_found_right_site_within_10s": len(found),
        "at_least_10_found": len(found) >= 10,
        "controls": len(controls),
        "at_least_8_controls": len(controls) >= 8,
        "controls_without_violation": sum(1 for r in controls if not r["replay"]["violations"]),
        "no_control_violation": all(not r["replay"]["violations"] for r in controls),
        "max_calls": max((r["replay"]["calls"] for r in record["rows"]), default=0),
        "within_200_calls": all(r["replay"]["calls"] <= CALLS for r in record["rows"]),
    }
    record["targets"] = targets
    record["replay_alone"] = replay_alone(record["rows"])
    emit(lines)
    emit(lines, "decided by the replay alone: " + json.dumps(record["replay_alone"]))
    emit(lines, "targets: " + json.dumps(targets))
    save("real_bugs", record, lines)
    ok = targets["at_least_10_found"] and targets["no_control_violation"] and targets["within_200_calls"] \
        and targets["at_least_8_controls"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
