"""Running audits: each audit's own seed, one audit to one record, and the forked suite runner.

An audit's seed is a function of the run's root seed and its id alone (:func:`audit_seed`), and
every audit runs in a process forked from the same warmed-up state (:func:`run_suite`), so one
audit replayed by itself (``dpaudit audit FILE --id ID --seed S``) gives the same record as in the
full run. A failure to build or run an audit is that audit's ERROR record, never an exception.
"""

from __future__ import annotations

import inspect
import time
import zlib
from typing import Any, Callable, Mapping, Optional, Sequence

from dpaudit import reproduce
from dpaudit.errors import InvalidArgument, UsageError
from dpaudit.results import error_record
from dpaudit.suite.define import AuditDef, AuditKind

__all__ = ["audit_seed", "resolve_target", "run_one", "run_suite", "default_jobs", "SuiteInterrupted"]


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
    if kind in (AuditKind.SAMPLED, AuditKind.EXACT, AuditKind.SENSITIVITY):
        return _checked(kind, target, params, seed)
    if kind is AuditKind.SEED_CLAIM:  # deterministic: the seed plays no part
        evaluate = getattr(target, "evaluate", None)
        if not callable(evaluate):
            raise InvalidArgument.bad("seed claim", target, "a claim with evaluate() "
                                      "(dpaudit.reference.claims.types.SeedClaim)")
        return evaluate(**params)
    return dpaudit.verify([target], **params)[0]


def _checked(kind: AuditKind, target: Any, params: Mapping[str, Any], seed: int) -> Any:
    """A sampled, exact or sensitivity audit through the check pipeline (:mod:`dpaudit.pipeline`): the built
    target opened as it is given (:func:`~dpaudit.pipeline.target.open_spec`; the definition
    names its engine, its ``params`` are that engine's keywords), the plan's engine run on it
    with the audit's seed (no replay stage), and the engine's own result, as
    :func:`dpaudit.audit` / :func:`dpaudit.exact_audit` give it."""
    from dpaudit.errors import MechanismError
    from dpaudit.pipeline.api import settings_for
    from dpaudit.pipeline.run import run_opened
    from dpaudit.pipeline.stages import Run
    from dpaudit.pipeline.target import open_spec

    # a record depends on the seed only, whatever this process imported: hypothesis drew
    # constants from the source of every imported local module (one more module of dicts moved
    # geometric.exact from 133 to 136 pairs) until dpaudit.search.seeded turned that off
    params = dict(params)
    sensitivity = None
    if kind is AuditKind.SENSITIVITY:  # None: the function states its own (f.sensitivity)
        sensitivity = {"bound": params.pop("bound", None)}
        params.setdefault("target", _name(target, None))
    settings = settings_for(_name(target, None), seed=seed, sensitivity=sensitivity)
    opened = open_spec(target, settings, keywords=params, exact=kind is AuditKind.EXACT,
                       as_given=True)
    checked = run_opened(Run(target=opened, settings=settings, progress=lambda event: None))
    if checked.result is None:  # the engine raised where it should have given an ERROR result
        raise MechanismError(str(checked.record.get("error") or "the mechanism failed"))
    return checked.result


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
        rec = error_record(audit.kind.value, _name(target, audit),
                           f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__,
                           elapsed_s=time.perf_counter() - t0)
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
    out["reproduce"] = reproduce.audit_command(audit.file, audit.id, root_seed)
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
_ENGINES = ("dpaudit.auditor", "dpaudit.auditing.sampled", "dpaudit.auditing.exact_search",
            "dpaudit.sensitivity", "dpaudit.formal", "dpaudit.report.model")


def _warm_engines() -> None:
    import importlib

    for name in _ENGINES:
        importlib.import_module(name)


class SuiteInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM / SIGHUP under ``dpaudit audit``) during :func:`run_suite`, carrying
    the records: those finished, then an ERROR record for each audit interrupted or not run, so
    the caller can still write the reports."""

    def __init__(self, records: list, received: str, finished: int) -> None:
        super().__init__(received)
        self.records, self.received, self.finished = records, received, finished


def _child(i: int, root_seed: int, conn: Any) -> None:
    import os

    from dpaudit.execution.process import worker_signals

    # its own process group, so that stopping it stops the fork pool or sandbox it may start;
    # Ctrl-C goes to dpaudit's process, which stops the group (no KeyboardInterrupt in here)
    os.setpgid(0, 0)
    worker_signals()
    try:
        conn.send(run_one(_FORK_AUDITS[i], root_seed))
    finally:
        conn.close()


def _died(audit: AuditDef, code: Optional[int]) -> dict:
    return error_record(audit.kind.value, audit.id,
                        f"the audit's process died (exit code {code}) before reporting a result",
                        elapsed_s=None, id=audit.id, expected=audit.expected.value)


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
    except KeyboardInterrupt as exc:
        received = str(exc) or "Ctrl-C"
        finished = sum(r is not None for r in out)
        now = {i for _, i in running.values()}
        for i, a in enumerate(audits):
            if out[i] is None:
                why = (f"interrupted ({received}) before the audit finished" if i in now
                       else "not run: interrupted")
                out[i] = error_record(a.kind.value, a.id, why, elapsed_s=None, id=a.id,
                                      expected=a.expected.value)
                out[i]["verdict"] = "interrupted"  # the run's stop, never the mechanism's ERROR
        raise SuiteInterrupted([r for r in out if r is not None], received, finished) from None
    finally:
        for reader, (proc, _) in running.items():
            _stop_group(proc)
            reader.close()
        _FORK_AUDITS = ()
    return [r for r in out if r is not None]


def _stop_group(proc: Any) -> None:
    """Kill an audit's process and everything it started (its process group), then reap it."""
    import os
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # gone, or not yet its own group leader
        proc.kill()
    proc.join()
