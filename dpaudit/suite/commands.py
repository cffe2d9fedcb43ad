"""``dpaudit audit`` and ``dpaudit list``: the suite's commands (argparse in :mod:`dpaudit.cli`).

``audit`` loads the definitions (:mod:`dpaudit.suite.define`), runs them
(:mod:`dpaudit.suite.run`), prints one line per audit and writes the reports; ``list`` prints the
audits, the reference mechanisms and the formal claims.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Mapping

from dpaudit.config import resolve_seed
from dpaudit.errors import LoadError, UsageError
from dpaudit.exitcodes import ExitCode, suite_exit_code
from dpaudit.progress import strength_text
from dpaudit.suite.define import DEFAULT_AUDIT_DIR, AuditDef, load_audits
from dpaudit.execution.process import StopOnSignals
from dpaudit.suite.run import SuiteInterrupted, default_jobs, run_suite

__all__ = ["run_audit", "run_list"]


def _line(rec: Mapping[str, Any]) -> str:
    """``ok   ID  VERDICT (expected …)  ε ≥ x  1.2 s``: one short terminal line per audit."""
    from dpaudit.report import describe as d

    ok = rec.get("verdict") == rec.get("expected")
    parts = [f"{'ok  ' if ok else 'FAIL'} {rec.get('id')}", d.verdict_label(rec.get("verdict"))]
    if not ok:
        parts.append(f"(expected {d.verdict_label(rec.get('expected'))})")
    if d.figure(rec):
        parts.append(d.figure(rec))
    if rec.get("verdict") == "refuted" or rec.get("reproducible") is False:
        strength = strength_text(rec)
        if strength:
            parts.append(f"[{strength}]")
    if rec.get("error"):
        parts.append(f"error: {rec['error']}")
    parts.append(f"{d.fmt(rec.get('elapsed_s'), 3)} s")
    return "  ".join(parts)


def run_audit(args: argparse.Namespace) -> ExitCode:
    """``dpaudit audit [PATH ...] [--id ID] [--seed S] [--out DIR] [--html F] ...``.

    Writes ``DIR/index.html`` and ``DIR/results.json`` (default ``reports/``) for a full run; a run
    filtered with ``--id`` writes them only when ``--out`` names another folder, so replaying one
    audit never overwrites the committed report. Exit 0 when every verdict equals its expected one,
    1 otherwise (0 with ``--exit-zero``), 5 when nothing was selected.
    """
    from dpaudit.report import make_run, report_paths, write_each
    from dpaudit.report.json_io import check_report_paths

    seed, _ = resolve_seed(getattr(args, "seed", None))
    audits = load_audits(args.paths or [], args.ids)
    if not audits:
        print("dpaudit: no audits found", file=sys.stderr)
        return ExitCode.NOTHING_TO_AUDIT
    quiet = getattr(args, "quiet", False)
    started = time.time()
    skipped = [skip_record(a) for a in audits if a.missing()]
    audits = [a for a in audits if not a.missing()]
    for rec in skipped:
        if not quiet:
            print(f"skip {rec['id']}  SKIPPED  {rec['reason']}", flush=True)

    def show(rec: dict) -> None:
        if not quiet:
            print(_line(rec), flush=True)

    outputs = report_paths(args)
    out_dir = Path(args.out or "reports")
    if not args.ids or str(args.out) != "reports":
        outputs["html"] = outputs["html"] or str(out_dir / "index.html")
        outputs["json"] = outputs["json"] or str(out_dir / "results.json")
    check_report_paths(outputs)  # before the audits run, not after
    stop = StopOnSignals()
    interrupted = None
    try:
        records = run_suite(audits, seed, on_result=show, jobs=getattr(args, "jobs", None) or default_jobs())
    except SuiteInterrupted as exc:  # what finished is kept, the rest is ERROR, reports written
        records, interrupted, finished = exc.records, exc.received, exc.finished
    finally:
        stop.restore()
    command = ["dpaudit", "audit", *(args.paths or [])] + [x for i in (args.ids or []) for x in ("--id", i)] \
        + ["--seed", str(seed)]
    run = make_run(records, seed=seed, started=started, finished=time.time(), command=command,
                   fail_on_inconclusive=bool(getattr(args, "fail_on_inconclusive", False)))
    if skipped:
        run["skipped"] = skipped
    written, not_written = write_each(run, **outputs)  # one that fails hides no verdict
    for fmt, why in not_written.items():
        print(f"dpaudit: error: the {fmt} report was not written: {why}", file=sys.stderr)
    if interrupted is not None:
        print(f"dpaudit: interrupted ({interrupted}) after {finished} of {len(records)} audits; "
              + "; ".join(f"wrote {fmt}: {path}" for fmt, path in written.items()), file=sys.stderr)
        return ExitCode.INTERRUPTED
    summary = run["summary"]
    bad = [r for r in records if r["verdict"] != r["expected"]]
    print(f"dpaudit audit: {summary['total']} audits, {summary['total'] - len(bad)} as expected, "
          f"{len(bad)} not as expected" + (f", {len(skipped)} SKIPPED (not run, not passed)" if skipped else "")
          + f" (seed {seed}, {time.time() - started:.1f} s)")
    if skipped:
        needed = sorted({m for r in skipped for m in r["requires"]})
        print(f"  skipped: {len(skipped)} audits need {', '.join(needed)}: {install_hint(needed)}")
    for r in bad:
        print(f"  {r['id']}: expected {r['expected']}, got {r['verdict']}; reproduce: {r['reproduce']}")
    for fmt, path in written.items():
        print(f"dpaudit: wrote {fmt}: {path}")
    if not_written:
        return ExitCode.USAGE_ERROR
    if skipped and not records:
        return ExitCode.NOTHING_TO_AUDIT
    return suite_exit_code(records, exit_zero=args.exit_zero,
                           fail_on_inconclusive=getattr(args, "fail_on_inconclusive", False))


def install_hint(modules: Any) -> str:
    """How to install ``modules``: the ``[libraries]`` extra for the libraries dpaudit has adapters
    for, ``pip install NAME`` for anything else an audit file requires."""
    from dpaudit.adapters.common import TESTED_VERSIONS

    ours = [m for m in modules if m in TESTED_VERSIONS]
    other = sorted({m.split(".")[0] for m in modules if m not in TESTED_VERSIONS})
    parts = (["pip install 'dpaudit[libraries]'"] if ours else []) + \
        ([f"pip install {' '.join(other)}"] if other else [])
    return "; ".join(parts)


def skip_record(audit: AuditDef) -> dict:
    """What the report says of an audit that was not run because a module it needs is missing."""
    missing = audit.missing()
    return {"id": audit.id, "kind": audit.kind.value, "expected": audit.expected.value,
            "description": audit.description, "group": audit.group, "requires": list(missing),
            "reason": f"requires {', '.join(missing)} (not installed): {install_hint(missing)}",
            "location": {"path": audit.file, "line": audit.line} if audit.file else None}


def run_list(args: argparse.Namespace) -> ExitCode:
    """``dpaudit list``: reference mechanisms, audits (id, kind, expected) and formal claims."""
    print("Audits (dpaudit audit --id ID):")
    try:
        audits = load_audits([DEFAULT_AUDIT_DIR]) if Path(DEFAULT_AUDIT_DIR).is_dir() else []
    except (LoadError, UsageError) as exc:
        print(f"  (cannot load {DEFAULT_AUDIT_DIR}/: {exc})")
        audits = []
    width = max((len(a.id) for a in audits), default=0)
    for a in audits:
        print(f"  {a.id:<{width}}  {a.kind.description:<18} expected {a.expected.label:<12} {a.description}")
    if not audits:
        print("  (none found in ./audits)")
    print("Reference mechanisms (package dpaudit.reference):")
    for name, doc in _mechanism_modules():
        print(f"  dpaudit.reference.{name:<20} {doc}")
    print("Formal claims (dpaudit verify --claim NAME):")
    for name, doc in _formal_claims():
        print(f"  {name:<34} {doc}")
    # a listing is information, not a run: it succeeds with or without audits in ./audits (it
    # exited 5 with nothing on stderr outside a folder holding one)
    return ExitCode.OK


def _mechanism_modules() -> list[tuple[str, str]]:
    import importlib.util
    import pkgutil

    spec = importlib.util.find_spec("dpaudit.reference")
    if spec is None or not spec.submodule_search_locations:
        return []
    out = []
    for info in sorted(pkgutil.iter_modules(spec.submodule_search_locations), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        doc = _first_doc_line(Path(spec.submodule_search_locations[0]) / (
            info.name + ("/__init__.py" if info.ispkg else ".py")))
        out.append((info.name, doc))
    return out


def _first_doc_line(path: Path) -> str:
    import ast

    try:
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    except (OSError, SyntaxError, ValueError):
        return ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def _formal_claims() -> list[tuple[str, str]]:
    try:
        from dpaudit.formal import list_claims
    except ImportError:  # pragma: no cover - the formal package is part of dpaudit
        return []
    return [(c.name, f"{c.source}; expected {c.expected.value}" + (" (negative control)" if c.control_of else ""))
            for c in list_claims(include_controls=True)]
