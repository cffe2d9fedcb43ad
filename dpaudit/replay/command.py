"""The replay audit as ``dpaudit check`` runs it: alone (``--replay``), or as the first stage of a
sampled audit (the default; ``--no-replay`` skips it).

The replay runs where the mechanism runs, because the recording generator, the tracked values and
the library patches must live beside the function: in the sandbox child
(:meth:`dpaudit.execution.sandbox.SandboxExecutor.run_engine`), or in this process with
``--in-process``. The claim is the one dpaudit's process resolved (flags over
``[tool.dpaudit.targets]`` over the declaration read from the source), sent to the child whole,
so the child's own word on the claim is never taken. The record the child sends back is checked
here (:func:`record_from_child`): only known finding kinds, plain values, printable text, the
verdict recomputed from the findings' severities, every call site at a line of the audited file as
this process read it, every "replay this pair" line built here from the claim. A record refused
(or a reply of the wrong shape or size, :class:`dpaudit.execution.wire.ForgedReply`) is the
mechanism's ERROR: the audited code replaced dpaudit's functions in the child or wrote to its pipe.
As a first stage, that makes the target's verdict ERROR (:func:`dpaudit.replay.stage.verdict_of_stage`), the sampled
audit's numbers kept beside it.

As a first stage (:func:`before_sampling`) the replay costs at most :data:`dpaudit.replay.BUDGET`
calls; the neighbouring pairs its findings point at (:meth:`ReplayResult.candidates`), checked
against the relation here, are scored by the sampled audit before its structured patterns
(:attr:`dpaudit.spec.MechanismSpec.first_pairs`), so the sampling can confirm with an ε lower
bound what the replay only points at. The pairs were chosen on the replay's own calls, never on
the sampled audit's samples, so its selection and validation stay as sound as before.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Optional

import numpy as np

from dpaudit.execution.wire import AuditedFile
from dpaudit.replay.result import KINDS, RECORD_KIND, SEVERITIES, ReplayFinding, ReplayResult
from dpaudit.results import Verdict, error_record

__all__ = ["run_replay", "finished", "location", "limited", "before_sampling", "limited_record", "record_from_child", "first_pairs", "stage_text",
           "refused",
           "STAGE_SHARE", "MAX_FIRST_PAIRS"]

#: the share of a run's remaining time limit (``--timeout``) the replay stage may take
STAGE_SHARE = 0.2
#: the replay's pairs handed to the sampled audit, at most
MAX_FIRST_PAIRS = 3
#: the replay stage is not run with less time than this (seconds) for it
MIN_STAGE_SECONDS = 1.0


def _options(spec: Any, settings: Any, name: str, *, nonfinite: bool = False,
             timeout: Optional[float] = None) -> dict:
    """The keywords of :func:`dpaudit.replay_audit`: the resolved claim, plain values only."""
    return {"epsilon": float(spec.epsilon), "delta": float(spec.delta),
            "neighbours": spec.neighbours.value,
            "domain": (float(spec.domain.lo), float(spec.domain.hi)), "size": int(spec.size),
            "seed": int(settings.seed), "nonfinite": bool(nonfinite), "name": name,
            "timeout": timeout}


def _claim(spec: Any) -> dict:
    return {"epsilon": float(spec.epsilon), "delta": float(spec.delta),
            "neighbours": spec.neighbours.value,
            "domain": [float(spec.domain.lo), float(spec.domain.hi)], "size": int(spec.size)}


def flags(spec: Any, *, nonfinite: bool = False, claim: Optional[list] = None) -> list[str]:
    """The replay engine's flags in a reproduce line (:func:`dpaudit.reproduce.check_line`):
    ``--replay``, the claim (``claim``: a library target's own flags), ``--nonfinite``."""
    from dpaudit.reproduce import claim_flags

    if claim is None:
        claim = claim_flags(epsilon=spec.epsilon, delta=spec.delta, neighbours=spec.neighbours,
                            domain=spec.domain, size=spec.size)
    return ["--replay", *claim, *(["--nonfinite"] if nonfinite else [])]


def reproduce_line(name: str, spec: Any, settings: Any, *, nonfinite: bool = False) -> str:
    """The ``dpaudit check --replay`` line that replays a replay audit."""
    from dpaudit.reproduce import check_line

    return check_line(name, flags(spec, nonfinite=nonfinite), seed=int(settings.seed),
                      settings=settings)


def run_replay(spec: Any, settings: Any, name: str, *, func: Optional[Callable] = None,
               executor: Any = None, nonfinite: bool = False, timeout: Optional[float] = None,
               isolation: Optional[str] = None, reproduce: Optional[str] = None) -> ReplayResult:
    """The replay result of the target, built once with its reproduce line, isolation and
    location: run here on ``func`` (in process) or in the sandbox child of ``executor``; an ERROR
    result when the mechanism or the child fails. ``reproduce`` is the line that replays it
    (default: :func:`reproduce_line`)."""
    from dpaudit.errors import DpauditError, MechanismError, TimeLimitReached
    from dpaudit.execution.sandbox import SandboxFailure

    options = _options(spec, settings, name, nonfinite=nonfinite, timeout=timeout)
    done = {"reproduce": reproduce_line(name, spec, settings, nonfinite=nonfinite)
            if reproduce is None else reproduce, "isolation": isolation}
    started = time.monotonic()

    def failed(message: str, refused: bool = False) -> ReplayResult:
        return _failed(spec, settings, name, message, time.monotonic() - started,
                       details={"ran_in": "the sandbox child", "refused": True} if refused else {},
                       **done)

    try:
        if func is not None:
            from dpaudit.replay.audit import replay_audit

            return finished(replay_audit(func, **options), **done)
        limit = None if timeout is None else timeout + 30.0  # the child stops itself first
        audited = getattr(executor, "audited", None)
        raw = executor.run_engine("dpaudit.replay.audit:replay_record",
                                  {**options, "sites_in": getattr(audited, "path", None)}, limit)
        rec = record_from_child(raw, name=name, claim=_claim(spec), audited=audited,
                                seed=int(settings.seed))
        return finished(ReplayResult.from_record(
            rec, details={**rec.get("details", {}), "ran_in": "the sandbox child"}), **done)
    except TimeLimitReached as exc:  # the run's own limit, not the mechanism's fault
        why = "the run's time limit (--timeout) was reached during the replay: its pairs are untested"
        return limited(name, spec, why + (f"; {exc.stalled}" if exc.stalled else ""),
                       stalled=exc.stalled, **done)
    except SandboxFailure as exc:
        return failed(f"{name} {exc.cause}", refused=bool(exc.forged))
    except (MechanismError, DpauditError) as exc:
        return failed(f"{type(exc).__name__}: {exc}")
    except ValueError as exc:  # a record no honest child sends: the mechanism's ERROR
        return failed(f"{name} sent back a replay record dpaudit refused ({exc}; the audited code "
                      f"replaced dpaudit's functions in the sandbox)", refused=True)


def finished(result: ReplayResult, **fields: Any) -> ReplayResult:
    """``result`` with ``fields`` (its reproduce line, isolation) and its :func:`location`: a new
    frozen result, the one whose record is written."""
    from dataclasses import replace

    return replace(result, **fields, location=location(result))


def location(result: ReplayResult) -> Optional[dict]:
    """Where a report (SARIF, HTML) points: the call site of the strongest finding (a violation
    first) that names one, its path relative to the working folder; None when none does."""
    from dpaudit.report.model import relative_path

    order = {severity: i for i, severity in enumerate(SEVERITIES)}
    placed = [f for f in result.findings if f.site is not None and f.site.path and f.site.line]
    if not placed:
        return None
    site = min(placed, key=lambda f: order.get(f.severity, 9)).site
    return {"path": relative_path(str(site.path)), "line": int(site.line)}


def _failed(spec: Any, settings: Any, name: str, message: str, elapsed: float, *,
            details: dict, **fields: Any) -> ReplayResult:
    """An ERROR result of the replay: the mechanism (or the sandbox child) failed, ``message``
    says how; no finding."""
    return ReplayResult(target=name, verdict=Verdict.ERROR, epsilon=float(spec.epsilon),
                        delta=float(spec.delta), neighbours=spec.neighbours, domain=spec.domain,
                        size=int(spec.size), findings=(), accounting={}, calls=0, pairs=0,
                        elapsed_s=elapsed, seed=int(settings.seed), budget=0, error=message,
                        details=details, **fields)


def before_sampling(spec: Any, settings: Any, name: str, run: Callable[[Optional[float]], dict],
                    remaining: Optional[float], progress: Callable[[dict], None]) -> tuple:
    """The replay stage before a sampled audit (``--no-replay`` skips it): ``run(timeout)`` gives
    the replay record, with at most :data:`STAGE_SHARE` of the remaining time limit (not run, and
    said so, when that is under :data:`MIN_STAGE_SECONDS`). Returns the record (None when
    skipped) and the spec with the pairs the record points at sampled first
    (:func:`first_pairs`)."""
    if not settings.replay_stage:
        return None, spec
    from dataclasses import replace

    from dpaudit.replay.search import BUDGET

    progress({"phase": "replay", "calls_at_most": BUDGET, "samples": None, "budget": None})  # calls, not samples
    timeout = None if remaining is None else STAGE_SHARE * remaining
    if timeout is not None and timeout < MIN_STAGE_SECONDS:
        stage = limited_record(name, spec, f"not run: {timeout:.2g} s of the time limit (--timeout) "
                               f"was left for it")
    else:
        stage = run(timeout)
    pairs = first_pairs(stage, spec)
    return stage, (replace(spec, first_pairs=pairs) if pairs else spec)


def limited(name: str, spec: Any, why: str, stalled: Optional[str] = None,
            **fields: Any) -> ReplayResult:
    """A replay cut short by the run's time limit before it could say anything: one
    ``time_limit`` limit, INCONCLUSIVE (never an ERROR: the mechanism did nothing wrong);
    ``stalled``: the call in flight looked stuck (:class:`~dpaudit.errors.TimeLimitReached`)."""
    found = ReplayFinding("time_limit", None, why,
                          values={"stalled": stalled} if stalled else {})
    return ReplayResult(target=name, verdict=Verdict.INCONCLUSIVE, epsilon=float(spec.epsilon),
                        delta=float(spec.delta), neighbours=spec.neighbours, domain=spec.domain,
                        size=int(spec.size), findings=(found,),
                        accounting={}, calls=0, pairs=0, elapsed_s=None, seed=None,
                        budget=0, **{"reproduce": "", **fields})


def limited_record(name: str, spec: Any, why: str) -> dict:
    """The record of :func:`limited`."""
    return limited(name, spec, why).to_record()


def first_pairs(rec: dict, spec: Any) -> tuple:
    """The neighbouring pairs the replay record's findings point at (a violation, a finding, an
    accounting excess by composition; :meth:`ReplayResult.candidates`), as labelled
    :class:`~dpaudit.neighbours.pair.Pair` objects, each checked against the relation, the
    domain and the size (a pair from the sandboxed side is its word: one that is not a
    neighbouring pair is dropped, never sampled)."""
    from dpaudit.neighbours.pair import Pair
    from dpaudit.neighbours.relations import are_neighbours

    order = {"violation": 0, "finding": 1, "note": 2}
    found = [f for f in rec.get("findings") or [] if isinstance(f, dict)
             and f.get("severity") in order and f.get("dataset") is not None
             and f.get("neighbour") is not None
             and (f["severity"] != "note" or f.get("kind") == "composition_excess")]
    found.sort(key=lambda f: order[f["severity"]])
    out: list = []
    seen: set = set()
    for f in found:
        try:
            d = np.asarray(f["dataset"], dtype=float).reshape(-1)
            dn = np.asarray(f["neighbour"], dtype=float).reshape(-1)
        except (TypeError, ValueError):
            continue
        key = (d.tobytes(), dn.tobytes())
        if key in seen or not are_neighbours(spec.neighbours, d, dn, spec.domain, spec.size):
            continue
        seen.add(key)
        site = f.get("site") or {}
        where = ""
        if isinstance(site, dict) and site.get("path") and site.get("line"):
            where = f" at {str(site['path']).rsplit('/', 1)[-1]}:{site['line']}"
        out.append(Pair(d, dn, f"the replay's pair ({f.get('title') or f.get('kind')}{where})",
                        spec.neighbours))
        if len(out) >= MAX_FIRST_PAIRS:
            break
    return tuple(out)


def stage_text(record: Any) -> str:
    """The replay stage of a sampled audit's record in a few words, for the terminal line:
    ``replay: data-dependent noise scale at f.py:12; data-dependent control flow at f.py:12``
    (three at most, then ``and N more``), or the stage's
    ERROR; ``""`` when the stage has no violation or finding (its notes and limits are in the
    reports), decided the verdict (its finding heads the line), the sampled audit failed too
    (its line says why), or the record has no stage."""
    stage = record.get("replay") if isinstance(record, dict) else None
    if not isinstance(stage, dict) or record.get("decided_by") == "replay" \
            or record.get("verdict") == Verdict.ERROR.value:
        return ""  # no stage, its violation heads the line already, or the line is the failure
    if stage.get("verdict") == Verdict.ERROR.value:
        return f"replay: ERROR ({stage.get('error') or 'failed'}; the sampling went on)"
    strong = [f for f in stage.get("findings") or [] if isinstance(f, dict)
              and f.get("severity") in ("violation", "finding")]
    if not strong:  # the line still names where the code's noise did not pay for the claim
        strong = [f for f in stage.get("findings") or [] if isinstance(f, dict)
                  and f.get("kind") == "composition_excess" and isinstance(f.get("site"), dict)]
    if not strong:
        found = [f for f in stage.get("findings") or [] if isinstance(f, dict)]
        cut = next((f for f in found if f.get("kind") == "time_limit"), None)
        if cut is not None:
            values = cut.get("values")
            stalled = values.get("stalled") if isinstance(values, dict) else None
            return "replay: cut short by the time limit" + (f" ({stalled})" if stalled else "")
        # what the replay could not see (its noise drawn in native code): the sampling alone decides
        limits = [str(f.get("title") or f.get("kind")) for f in found if f.get("severity") == "limit"]
        return f"replay: {'; '.join(limits[:2])} (the sampling alone decides)" if limits else ""
    named = [f"{f.get('title') or f.get('kind')}{_at(f.get('site'))}" for f in strong[:3]]
    more = len(strong) - len(named)
    tail = f" and {more} more" if more else ""
    if all(f.get("severity") == "finding" for f in strong) \
            and record.get("verdict") == Verdict.NOT_REFUTED.value:
        # what a reader of the line asked: does it matter here? (a library user's probe)
        tail += (" (to read: the report says what met what at that line; a finding is no "
                 "refutation, and the sampling showed none)")
    return "replay: " + "; ".join(named) + tail


def refused(rec: Any) -> bool:
    """Whether a replay record is one dpaudit refused from the sandbox child (a forged or
    malformed record or reply): the mechanism's ERROR, never a note."""
    details = rec.get("details") if isinstance(rec, dict) else None
    return isinstance(details, dict) and details.get("refused") is True


def _at(site: Any) -> str:
    if isinstance(site, dict) and site.get("path") and site.get("line"):
        return f" at {str(site['path']).rsplit('/', 1)[-1]}:{site['line']}"
    return ""


# -- the child's record, checked ------------------------------------------------------------------

_MAX_FINDINGS = 64
_MAX_TEXT = 2000
_MAX_ITEMS = 2000
_MAX_DEPTH = 8


def _text(x: Any, limit: int = _MAX_TEXT) -> str:
    from dpaudit.execution.process import printable

    return printable(str(x))[:limit]


def _plain(x: Any, depth: int = 0, site: Optional[Callable[[Any], dict]] = None) -> Any:
    """``x`` as JSON values only (dict with text keys, list, text, number, bool, None), with
    text made printable and sizes bounded; anything else becomes its printable text. A table
    with a ``path`` and a ``line`` is a call site, read by ``site`` (ValueError when refused)."""
    if x is None or isinstance(x, bool):
        return x
    if isinstance(x, int):
        return int(x)
    if isinstance(x, float):
        return float(x) if math.isfinite(x) else str(x)
    if isinstance(x, str):
        return _text(x)
    if depth >= _MAX_DEPTH:
        return "…"
    if isinstance(x, dict):
        if "path" in x and "line" in x:
            if site is None:
                raise ValueError("a call site where none belongs")
            return site(x)
        return {_text(k, 200): _plain(v, depth + 1, site) for k, v in list(x.items())[:_MAX_ITEMS]}
    if isinstance(x, (list, tuple)):
        return [_plain(v, depth + 1, site) for v in list(x)[:_MAX_ITEMS]]
    return _text(type(x).__name__)


def _numbers(x: Any) -> Optional[list]:
    if x is None:
        return None
    a = np.asarray(x, dtype=float).reshape(-1)  # ValueError/TypeError: malformed
    if a.size > 100_000:
        raise ValueError("a dataset of more than 100,000 records")
    return [float(v) for v in a]


def _site_in(audited: Optional[AuditedFile]) -> Callable[[Any], dict]:
    """What reads a call site the child sent: at a line of ``audited`` (the file as this process
    read it), or the child's "unknown"; ValueError otherwise (with no file read, only "unknown")."""
    def site(x: Any) -> dict:
        if isinstance(x, dict) and x.get("path") == "<unknown>" and x.get("line") == 0:
            return AuditedFile("<unknown>", b"").site(x)
        if audited is None:
            raise ValueError("a call site, and no audited file read to place it in")
        return audited.site(x)
    return site


def record_from_child(raw: Any, *, name: str, claim: dict, audited: Optional[AuditedFile],
                      seed: int) -> dict:
    """The replay record the sandbox child sent, checked (module docstring): ValueError when it
    is not a replay record, or names a call site that is not at a line of ``audited``. The claim
    is dpaudit's own; the verdict is recomputed from the severities of the findings
    (:data:`KINDS`); each pair's replay line is built here from the claim, ``seed`` and the
    pair."""
    from dpaudit.reproduce import replay_pair_call

    if not isinstance(raw, dict) or raw.get("kind") != RECORD_KIND:
        raise ValueError("not a replay record")
    site = _site_in(audited)
    if raw.get("verdict") == Verdict.ERROR.value:
        message = _text(raw.get("error") or "failed during the replay")
        return error_record(RECORD_KIND, name, message, claim=dict(claim),
                            failed_on=_numbers(raw.get("failed_on")))
    items = raw.get("findings")
    if not isinstance(items, list) or len(items) > _MAX_FINDINGS:
        raise ValueError("findings that are not a short list")
    findings = []
    for f in items:
        if not isinstance(f, dict) or f.get("kind") not in KINDS:
            raise ValueError(f"a finding of an unknown kind {_text(f.get('kind') if isinstance(f, dict) else f, 60)!r}")
        severity, title = KINDS[f["kind"]]
        dataset, neighbour = _numbers(f.get("dataset")), _numbers(f.get("neighbour"))
        pair_line = "" if dataset is None or neighbour is None else replay_pair_call(
            name, dataset, neighbour, epsilon=claim["epsilon"], delta=claim["delta"],
            neighbours=claim["neighbours"], domain=claim["domain"], size=claim["size"], seed=seed)
        findings.append({"kind": f["kind"], "severity": severity, "title": title,
                         "message": _text(f.get("message") or title),
                         "site": None if f.get("site") is None else site(f["site"]),
                         "dataset": dataset, "neighbour": neighbour,
                         "pair_label": _text(f.get("pair_label") or "", 200),
                         "values": _plain(f.get("values") if isinstance(f.get("values"), dict) else {},
                                          site=site),
                         "reproduce": pair_line})
    findings.sort(key=lambda f: SEVERITIES.index(f["severity"]))
    severities = {f["severity"] for f in findings}
    verdict = (Verdict.REFUTED if "violation" in severities else Verdict.INCONCLUSIVE
               if severities & {"finding", "limit"} else Verdict.NOT_REFUTED)

    def count(key: str) -> int:
        v = raw.get(key)
        return v if type(v) is int and v >= 0 else 0

    elapsed = raw.get("elapsed_s")
    return {"kind": RECORD_KIND, "target": name, "verdict": verdict.value,
            "elapsed_s": float(elapsed) if isinstance(elapsed, (int, float)) and
            math.isfinite(elapsed) and elapsed >= 0 else None,
            "reproduce": "", "error": None, "method": "replay", "claim": dict(claim),
            "findings": findings,
            "accounting": _plain(raw.get("accounting") if isinstance(raw.get("accounting"), dict) else {},
                                 site=site),
            "calls": count("calls"), "budget": count("budget"), "pairs": count("pairs"),
            "phases": _plain(raw.get("phases") if isinstance(raw.get("phases"), dict) else {}),
            "seed": seed,
            "noise_intercepted": bool(raw.get("noise_intercepted", True)),
            "libraries": [_text(x, 60) for x in raw.get("libraries") or [] if isinstance(x, str)][:8],
            "failed_on": None,
            "details": _plain(raw.get("details") if isinstance(raw.get("details"), dict) else {})}
