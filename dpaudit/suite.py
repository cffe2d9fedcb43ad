"""The audit suite: audit definitions, their runner, and ``dpaudit audit`` / ``dpaudit list``.

An audit definition pairs a target with one kind of evidence and the verdict expected of it::

    # audits/laplace.py
    from dpaudit.suite import sampled, exact, sensitivity, formal
    from dpaudit.reference.laplace import Laplace

    AUDITS = [
        sampled("laplace/sampled", lambda: Laplace(1.0).spec(), samples=200_000),
        exact("laplace/exact", lambda: Laplace(1.0).spec()),
        sampled("laplace/broken-scale", lambda: broken_spec(), expected="refuted"),
    ]

Kinds (the record ``kind`` of the result): ``audit`` (black-box sampled audit,
:func:`dpaudit.audit`), ``exact`` (white-box exact audit, :func:`dpaudit.exact_audit`),
``sensitivity`` (hypothesis search, :func:`dpaudit.check_sensitivity`), ``formal`` (a z3 claim,
:func:`dpaudit.verify`) and ``seed-claim`` (a source paper's statement re-checked numerically, a
:class:`dpaudit.reference.seed_claim_types.SeedClaim`). Each audit has a stable ``id``; its seed is
derived from the run's root seed and the id alone (:func:`audit_seed`), so one audit replays by
itself with ``dpaudit audit FILE --id ID --seed S`` and gives the same record as in the full run
(a seed claim's check is deterministic and ignores the seed). Expected
verdicts: a correct reference mechanism is ``not_refuted`` (sampling and search never prove),
a formal claim that holds is ``proved``, a deliberately broken variant (negative control) is
``refuted`` (or ``error`` for one that crashes), and a seed claim is its recorded verdict:
``refuted`` for a statement shown false, ``not_refuted`` for one that held under the check (a
numeric check never proves). The run passes when every verdict equals its expected one.

Audit files are plain Python modules loaded by path (:func:`dpaudit.loader.import_file`); each
defines a module-level ``AUDITS`` list.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
import time
import zlib
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from dpaudit.errors import InvalidArgument, LoadError, UsageError
from dpaudit.results import Verdict

__all__ = ["AuditKind", "AuditDef", "SUITE_CONFIDENCE", "sampled", "exact", "sensitivity", "formal", "seed_claim",
           "load_audits", "audit_seed", "run_one", "run_suite", "run_audit", "run_list", "DEFAULT_AUDIT_DIR"]

DEFAULT_AUDIT_DIR = "audits"
_ID = re.compile(r"^[a-z0-9][a-z0-9._/-]*$")


class AuditKind(str, Enum):
    """The evidence an audit produces (the ``kind`` of its record)."""

    SAMPLED = "audit"
    EXACT = "exact"
    SENSITIVITY = "sensitivity"
    FORMAL = "formal"
    SEED_CLAIM = "seed-claim"

    @property
    def description(self) -> str:
        return {"audit": "sampled audit", "exact": "exact audit", "sensitivity": "sensitivity search",
                "formal": "formal claim", "seed-claim": "seed claim"}[self.value]


@dataclass(frozen=True, slots=True)
class AuditDef:
    """One audit: ``id`` (stable, lower-case, ``[a-z0-9._/-]``), ``kind``, ``target`` (a spec, a
    function, a claim name, or a zero-argument factory returning one, called at run time), the
    keyword ``params`` of the engine, the ``expected`` verdict, a one-line ``description``, and
    where it was defined (``file``, ``line``; filled in when loaded)."""

    id: str
    kind: AuditKind
    target: Any
    params: Mapping[str, Any] = field(default_factory=dict)
    expected: Verdict = Verdict.NOT_REFUTED
    description: str = ""
    file: Optional[str] = None
    line: Optional[int] = None
    group: str = ""
    requires: tuple[str, ...] = ()

    def missing(self) -> tuple[str, ...]:
        """The modules in ``requires`` (``requires=`` of every kind) that cannot be imported here:
        such an audit is skipped, visibly, and never counted as passed."""
        import importlib.util

        return tuple(m for m in self.requires if importlib.util.find_spec(m) is None)

    @property
    def is_control(self) -> bool:
        """A negative control: a deliberately broken variant expected to be refuted (or to error)."""
        return self.expected in (Verdict.REFUTED, Verdict.ERROR)


def _define(kind: AuditKind, id: str, target: Any, expected: Any, description: str,
            params: Mapping[str, Any]) -> AuditDef:
    if not isinstance(id, str) or not _ID.match(id):
        raise InvalidArgument.bad("id", id, "a lower-case id of letters, digits and . _ / - ")
    try:
        exp = Verdict(expected)
    except ValueError:
        raise InvalidArgument.bad("expected", expected, "one of " + ", ".join(v.value for v in Verdict)) from None
    if kind in (AuditKind.SAMPLED, AuditKind.EXACT, AuditKind.SENSITIVITY) and exp is Verdict.PROVED:
        raise InvalidArgument(f"{id}: a {kind.description} can never prove; expect not_refuted")
    if kind is AuditKind.SEED_CLAIM and exp is Verdict.PROVED:
        raise InvalidArgument(f"{id}: a seed claim is checked numerically and can never be proved; "
                              "expect refuted or not_refuted")
    params = dict(params)
    requires = params.pop("requires", ())
    requires = (requires,) if isinstance(requires, str) else tuple(requires)
    frame = inspect.stack()[2]
    return AuditDef(id, kind, target, params, exp, description, frame.filename, frame.lineno,
                    requires=requires)


#: Default confidence of a sampled suite audit. The reference mechanisms are tight (their true ε
#: equals the claim), so each correct one is refuted with probability up to 1 − confidence; at
#: 99.9% per audit, a suite of up to 50 sampled audits keeps its family-wise confidence ≥ 95%
#: (Bonferroni), where 95% per audit would expect a false refutation in every 20.
SUITE_CONFIDENCE = 0.999


def sampled(id: str, target: Any, *, expected: Any = "not_refuted", description: str = "", **params: Any) -> AuditDef:
    """A black-box sampled audit of a MechanismSpec (``params`` go to :func:`dpaudit.audit`;
    ``confidence`` defaults to :data:`SUITE_CONFIDENCE`)."""
    params.setdefault("confidence", SUITE_CONFIDENCE)
    return _define(AuditKind.SAMPLED, id, target, expected, description, params)


def exact(id: str, target: Any, *, expected: Any = "not_refuted", description: str = "", **params: Any) -> AuditDef:
    """A white-box exact audit of a spec with its output law (``params`` go to :func:`dpaudit.exact_audit`)."""
    return _define(AuditKind.EXACT, id, target, expected, description, params)


def sensitivity(id: str, target: Any, *, expected: Any = "not_refuted", description: str = "",
                **params: Any) -> AuditDef:
    """A sensitivity search on a function (``params``, e.g. ``bound``, go to :func:`dpaudit.check_sensitivity`)."""
    return _define(AuditKind.SENSITIVITY, id, target, expected, description, params)


def formal(id: str, claim: str, *, expected: Any = "proved", description: str = "", **params: Any) -> AuditDef:
    """A formal claim of the z3 registry, by name (``params`` go to :func:`dpaudit.verify`)."""
    return _define(AuditKind.FORMAL, id, claim, expected, description, params)


def seed_claim(id: str, claim: Any, *, expected: Any = None, description: str = "") -> AuditDef:
    """A seed paper's statement re-checked numerically: ``claim`` is a
    :class:`dpaudit.reference.seed_claim_types.SeedClaim` (anything with ``evaluate()`` returning a result
    with ``to_record()``), or a zero-argument factory of one. Running it evaluates that one claim's
    check. ``expected`` defaults to the claim's recorded verdict (``refuted`` for a statement shown
    false, ``not_refuted`` for one that held); a factory must state it; ``proved`` is refused."""
    if expected is None:
        expected = getattr(claim, "verdict", None)
        if expected is None:
            raise InvalidArgument(f"{id}: give expected= (refuted or not_refuted) for a claim built by a factory")
    return _define(AuditKind.SEED_CLAIM, id, claim, expected, description, {})


# -- loading --------------------------------------------------------------------------------------

def _audit_files(paths: Sequence[str]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            files += sorted(f for f in path.glob("*.py") if not f.name.startswith(("_", "conftest")))
        elif path.is_file():
            files.append(path)
        else:
            raise LoadError(f"{p}: no such file or folder (give audit files or folders, default {DEFAULT_AUDIT_DIR}/)")
    return files


def load_file(path: str | Path) -> list[AuditDef]:
    """The ``AUDITS`` of one audit file (LoadError with one line when it cannot be loaded)."""
    from dpaudit.loader import import_file

    module = import_file(str(path))
    audits = getattr(module, "AUDITS", None)
    if not isinstance(audits, (list, tuple)) or not all(isinstance(a, AuditDef) for a in audits):
        raise LoadError(f"{path}: define AUDITS = [...] of dpaudit.suite audits "
                        "(sampled, exact, sensitivity, formal, seed_claim)")
    rel = _display(Path(path))
    doc = (module.__doc__ or "").strip().splitlines()
    group = f"{rel}: {doc[0].rstrip('.')}" if doc else rel
    return [replace(a, file=rel, group=group) for a in audits]


def _display(path: Path) -> str:
    from dpaudit.report.model import relative_path

    return relative_path(str(path))


def load_audits(paths: Sequence[str] = (), ids: Optional[Iterable[str]] = None) -> list[AuditDef]:
    """Every audit in ``paths`` (files or folders; default ``audits/``), in file order, optionally
    only those whose id is in ``ids`` (an unknown id is a UsageError). Ids must be unique."""
    files = _audit_files(list(paths) or [DEFAULT_AUDIT_DIR])
    audits: list[AuditDef] = []
    seen: dict[str, str] = {}
    for f in files:
        for a in load_file(f):
            if a.id in seen:
                raise LoadError(f"{a.file}: audit id {a.id!r} is also defined in {seen[a.id]}")
            seen[a.id] = a.file or ""
            audits.append(a)
    if ids:
        wanted = list(dict.fromkeys(ids))
        unknown = [i for i in wanted if i not in seen]
        if unknown:
            raise UsageError(f"no audit with id {', '.join(map(repr, unknown))} (see dpaudit list)")
        audits = [a for a in audits if a.id in wanted]
    return audits


# -- running --------------------------------------------------------------------------------------

def audit_seed(root_seed: int, audit_id: str) -> int:
    """The audit's own seed: a function of the root seed and the id only (not of the order or of
    the other audits), from ``SeedSequence(root_seed, spawn_key=(crc32(id),))``."""
    import numpy as np

    seq = np.random.SeedSequence(int(root_seed), spawn_key=(zlib.crc32(audit_id.encode("utf-8")),))
    return int(seq.generate_state(1, dtype=np.uint64)[0] >> 1)


def _no_args(f: Callable) -> bool:
    try:
        return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                   for p in inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return False


def resolve_target(audit: AuditDef) -> Any:
    """The audit's target, built: a zero-argument callable is a factory and is called (so loading
    an audit file builds nothing); anything else (a spec, a function of data, a claim name) is
    used as it is."""
    t = audit.target
    if callable(t) and not isinstance(t, type) and _no_args(t):
        t = t()
    return t


def _engine(kind: AuditKind, target: Any, params: Mapping[str, Any], seed: int) -> Any:
    """Run the engine of ``kind`` on the built ``target``; return the result object."""
    import dpaudit

    params = dict(params)
    if kind is AuditKind.SAMPLED:
        return dpaudit.audit(target, seed=seed, **params)
    if kind is AuditKind.EXACT:
        return dpaudit.exact_audit(target, seed=seed, **params)
    if kind is AuditKind.SENSITIVITY:
        bound = params.pop("bound", None)  # None: the function states its own (f.sensitivity)
        params.setdefault("target", _name(target, None))
        return dpaudit.check_sensitivity(target, bound, seed=seed, **params)
    if kind is AuditKind.SEED_CLAIM:  # deterministic: the seed plays no part
        evaluate = getattr(target, "evaluate", None)
        if not callable(evaluate):
            raise InvalidArgument.bad("seed claim", target, "a claim with evaluate() "
                                      "(dpaudit.reference.seed_claim_types.SeedClaim)")
        return evaluate(**params)
    return dpaudit.verify([target], **params)[0]


def _location(audit: AuditDef, target: Any) -> Optional[dict]:
    from dpaudit.report.model import location

    source = getattr(target, "source", None)
    if source is None and callable(target):
        f = inspect.unwrap(target)
        if not (inspect.isfunction(f) or inspect.ismethod(f)):
            f = type(f)  # a callable object: point at its class
        try:
            source = (inspect.getsourcefile(f), inspect.getsourcelines(f)[1])
        except (TypeError, OSError):
            source = None
    if source and source[0]:
        return location(source)
    return _file_location(audit)


def _file_location(audit: AuditDef) -> Optional[dict]:
    return {"path": audit.file, "line": audit.line} if audit.file else None


def run_one(audit: AuditDef, root_seed: int) -> dict:
    """Run one audit and return its record, with ``id``, ``expected``, ``description``,
    ``location`` and a ``reproduce`` command that replays this audit alone. A failure to build
    or run it is an ERROR record with the cause, never an exception."""
    from dpaudit.report.model import record_of

    seed = audit_seed(root_seed, audit.id)
    t0 = time.perf_counter()
    target: Any = None
    try:
        target = resolve_target(audit)
        rec = record_of(_engine(audit.kind, target, audit.params, seed))
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # the audited code or its set-up failed: an ERROR verdict, not a crash
        msg = str(exc).splitlines()[0] if str(exc) else ""
        rec = {"kind": audit.kind.value, "target": _name(target, audit), "verdict": Verdict.ERROR.value,
               "elapsed_s": time.perf_counter() - t0, "reproduce": "",
               "error": f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__}
    out = {"id": audit.id, **rec, "expected": audit.expected.value}
    out["description"] = audit.description
    if audit.group:
        out["group"] = audit.group
    out["seed"] = seed
    library = getattr(target, "library", None)  # a library adapter's spec: name, version, claim
    if isinstance(library, Mapping) and library:
        out["library"] = dict(library)
    if audit.kind is AuditKind.SEED_CLAIM:  # where the claim is defined (its record says), else the audit
        loc = rec.get("location") if isinstance(rec.get("location"), Mapping) else _file_location(audit)
    else:
        loc = _location(audit, target)
    if loc:
        out["location"] = loc
    # the suite's own command replays the audit exactly (the engine's line may name a nested
    # function or an absolute path, which would not replay from another clone)
    out["reproduce"] = f"dpaudit audit {audit.file or DEFAULT_AUDIT_DIR} --id {audit.id} --seed {root_seed}"
    return out


def _name(target: Any, audit: Optional[AuditDef]) -> str:
    if target is None:
        return audit.id if audit is not None else "?"
    name = getattr(target, "name", None)
    if isinstance(name, str) and name:
        return name
    return str(getattr(target, "__qualname__", None) or type(target).__name__)


_FORK_AUDITS: Sequence[AuditDef] = ()  # what a forked audit process inherits


def default_jobs() -> int:
    """Audits run at once: ``DPAUDIT_JOBS`` when set, else the number of CPUs."""
    import os

    raw = os.environ.get("DPAUDIT_JOBS", "")
    try:
        return max(1, int(raw)) if raw.strip() else max(1, os.cpu_count() or 1)
    except ValueError:
        raise UsageError(f"DPAUDIT_JOBS must be a positive integer, got {raw!r}") from None


#: Imported once before forking, so each audit process starts with every engine loaded (the same
#: state for a full run and a one-audit replay) instead of importing it again.
_ENGINES = ("dpaudit.auditor", "dpaudit.search.engine", "dpaudit.search.exact_search",
            "dpaudit.sensitivity", "dpaudit.formal", "dpaudit.report.model")


def _warm_engines() -> None:
    import importlib

    for name in _ENGINES:
        importlib.import_module(name)


def _child(i: int, root_seed: int, conn: Any) -> None:
    try:
        conn.send(run_one(_FORK_AUDITS[i], root_seed))
    finally:
        conn.close()


def _died(audit: AuditDef, code: Optional[int]) -> dict:
    return {"id": audit.id, "kind": audit.kind.value, "target": audit.id, "verdict": Verdict.ERROR.value,
            "elapsed_s": None, "reproduce": "", "expected": audit.expected.value,
            "error": f"the audit's process died (exit code {code}) before reporting a result"}


def run_suite(audits: Sequence[AuditDef], root_seed: int,
              on_result: Optional[Callable[[dict], None]] = None, jobs: int = 1) -> list[dict]:
    """Records of every audit, in definition order; ``on_result`` is called as each one finishes.

    Where ``fork`` exists every audit runs in its own process forked from this one (up to
    ``jobs`` at a time): each starts from the same state whatever ran before it, so a record
    depends only on its audit and the root seed, a run of one ``--id`` reproduces the full run's
    record exactly, and a crash is contained to its audit. Elsewhere audits run here, in order.
    """
    import multiprocessing as mp
    from multiprocessing.connection import wait

    global _FORK_AUDITS
    if "fork" not in mp.get_all_start_methods():  # pragma: no cover - Windows
        records = []
        for a in audits:
            records.append(run_one(a, root_seed))
            if on_result is not None:
                on_result(records[-1])
        return records
    ctx = mp.get_context("fork")
    _warm_engines()
    _FORK_AUDITS = list(audits)
    out: list[Optional[dict]] = [None] * len(audits)
    pending = list(range(len(audits)))
    running: dict[Any, tuple[Any, int]] = {}
    try:
        while pending or running:
            while pending and len(running) < max(1, jobs):
                i = pending.pop(0)
                reader, writer = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_child, args=(i, root_seed, writer), name=f"dpaudit-{audits[i].id}")
                proc.start()
                writer.close()
                running[reader] = (proc, i)
            for reader in wait(list(running)):
                proc, i = running.pop(reader)
                try:
                    rec = reader.recv()
                except (EOFError, OSError):
                    proc.join()
                    rec = _died(audits[i], proc.exitcode)
                reader.close()
                proc.join()
                out[i] = rec
                if on_result is not None:
                    on_result(rec)
    finally:
        for reader, (proc, _) in running.items():
            proc.terminate()
            proc.join()
            reader.close()
        _FORK_AUDITS = ()
    return [r for r in out if r is not None]


# -- command line ---------------------------------------------------------------------------------

def _seed(args: argparse.Namespace) -> int:
    """``--seed``, else ``seed`` of ``[tool.dpaudit]`` in the nearest pyproject.toml, else the default."""
    from dpaudit.check import read_config
    from dpaudit.rng import DEFAULT_SEED, check_seed

    raw, where = getattr(args, "seed", None), "--seed"
    if raw is None:
        config, path = read_config()
        raw, where = config.get("seed"), f"{path} [tool.dpaudit] seed"
    if raw is None:
        return DEFAULT_SEED
    try:
        if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
            raise ValueError
        return check_seed(int(raw))
    except (ValueError, TypeError, InvalidArgument):
        raise UsageError(f"{where} must be an integer >= 0, got {raw!r}") from None


def _line(rec: Mapping[str, Any]) -> str:
    """``ok   ID  VERDICT (expected …)  ε ≥ x  1.2 s``: one short terminal line per audit."""
    from dpaudit.report import describe as d

    ok = rec.get("verdict") == rec.get("expected")
    parts = [f"{'ok  ' if ok else 'FAIL'} {rec.get('id')}", d.verdict_label(rec.get("verdict"))]
    if not ok:
        parts.append(f"(expected {d.verdict_label(rec.get('expected'))})")
    if rec.get("kind") in ("audit", "exact") and d.num(rec.get("epsilon_lower_bound")) is not None:
        parts.append(f"ε ≥ {d.fmt(rec['epsilon_lower_bound'])} (claimed {d.fmt((rec.get('claim') or {}).get('epsilon'))})")
    elif rec.get("kind") == "sensitivity" and d.num(rec.get("ratio")) is not None:
        parts.append(f"gap/bound {d.fmt(rec['ratio'])}")
    elif rec.get("kind") == "seed-claim" and d.num(rec.get("observed")) is not None:
        parts.append(f"observed {d.fmt(rec['observed'])}"
                     + (f" vs {d.fmt(rec['bound'])}" if d.num(rec.get("bound")) is not None else ""))
    if rec.get("error"):
        parts.append(f"error: {rec['error']}")
    parts.append(f"{d.fmt(rec.get('elapsed_s'), 3)} s")
    return "  ".join(parts)


def run_audit(args: argparse.Namespace):
    """``dpaudit audit [PATH ...] [--id ID] [--seed S] [--out DIR] [--html F] ...``.

    Writes ``DIR/index.html`` and ``DIR/results.json`` (default ``reports/``) for a full run; a run
    filtered with ``--id`` writes them only when ``--out`` names another folder, so replaying one
    audit never overwrites the committed report. Exit 0 when every verdict equals its expected one,
    1 otherwise (0 with ``--exit-zero``), 5 when nothing was selected.
    """
    from dpaudit.cli import ExitCode
    from dpaudit.report import make_run, write_reports

    seed = _seed(args)
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

    records = run_suite(audits, seed, on_result=show, jobs=getattr(args, "jobs", None) or default_jobs())
    command = ["dpaudit", "audit", *(args.paths or [])] + [x for i in (args.ids or []) for x in ("--id", i)] \
        + ["--seed", str(seed)]
    run = make_run(records, seed=seed, started=started, finished=time.time(), command=command)
    if skipped:
        run["skipped"] = skipped
    outputs = {k: getattr(args, k, None) for k in ("html", "json", "junit", "sarif")}
    out_dir = Path(args.out or "reports")
    if not args.ids or str(args.out) != "reports":
        outputs["html"] = outputs["html"] or str(out_dir / "index.html")
        outputs["json"] = outputs["json"] or str(out_dir / "results.json")
    written = write_reports(run, **outputs)
    summary = run["summary"]
    bad = [r for r in records if r["verdict"] != r["expected"]]
    print(f"dpaudit audit: {summary['total']} audits, {summary['total'] - len(bad)} as expected, "
          f"{len(bad)} not as expected" + (f", {len(skipped)} SKIPPED (not run, not passed)" if skipped else "")
          + f" (seed {seed}, {time.time() - started:.1f} s)")
    if skipped:
        needed = sorted({m for r in skipped for m in r["requires"]})
        print(f"  skipped: {len(skipped)} audits need {', '.join(needed)}: pip install 'dpaudit[libraries]'")
    for r in bad:
        print(f"  {r['id']}: expected {r['expected']}, got {r['verdict']}; reproduce: {r['reproduce']}")
    for fmt, path in written.items():
        print(f"dpaudit: wrote {fmt}: {path}")
    if bad and not args.exit_zero:
        return ExitCode.REFUTED
    if skipped and not records:
        return ExitCode.NOTHING_TO_AUDIT
    if getattr(args, "fail_on_inconclusive", False) and summary["verdicts"]["inconclusive"]:
        return ExitCode.INCONCLUSIVE
    return ExitCode.OK


def skip_record(audit: AuditDef) -> dict:
    """What the report says of an audit that was not run because a module it needs is missing."""
    missing = audit.missing()
    return {"id": audit.id, "kind": audit.kind.value, "expected": audit.expected.value,
            "description": audit.description, "group": audit.group, "requires": list(missing),
            "reason": f"requires {', '.join(missing)} (not installed): pip install 'dpaudit[libraries]'",
            "location": _file_location(audit)}


def run_list(args: argparse.Namespace):
    """``dpaudit list``: reference mechanisms, audits (id, kind, expected) and formal claims."""
    from dpaudit.cli import ExitCode

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
    return ExitCode.OK if audits else ExitCode.NOTHING_TO_AUDIT


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
