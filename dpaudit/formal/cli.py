"""``dpaudit verify``: run the z3 claims and print one row per claim.

Each row gives the claim's name, its source, the expected status, the observed one and the
seconds it took; a REFUTED claim also prints its counterexample. The exit code is
``ExitCode.REFUTED`` (1) when any observed status differs from the expected one (an INCONCLUSIVE
claim that should be PROVED is a difference: it is never a pass), else ``ExitCode.OK``.
``--json F`` writes the canonical run (:func:`dpaudit.report.model.make_run`); ``--smt2-dir DIR``
writes every query as ``DIR/CLAIM/NN-QUERY.smt2``, which ``z3 FILE`` solves
again in a fresh process (:mod:`dpaudit.formal.independence`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Optional, Sequence

from dpaudit.config import parse_seconds
from dpaudit.exitcodes import ExitCode
from dpaudit.errors import NothingMatched
from dpaudit.formal.registry import claim_names, get_claims
from dpaudit.formal.result import FormalResult, Status
from dpaudit.formal.runner import run_claim
from dpaudit.formal.solver import DEFAULT_TIMEOUT_S, SolverConfig

__all__ = ["run_verify", "parse_timeout", "format_row", "write_smt2"]

_SOURCE_WIDTH = 44
_MODEL_ITEMS = 10


def parse_timeout(raw: Optional[str]) -> float:
    """``--timeout`` as seconds: a finite number > 0 (default :data:`DEFAULT_TIMEOUT_S`)."""
    return DEFAULT_TIMEOUT_S if raw is None else parse_seconds("--timeout", raw)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def format_row(r: FormalResult, name_width: int) -> str:
    """One table row: name, source, expected, observed, seconds (``≠`` marks a difference)."""
    mark = "  " if r.matches_expected else "≠ "
    return (f"{r.name:<{name_width}}  {_clip(r.source, _SOURCE_WIDTH):<{_SOURCE_WIDTH}}  "
            f"{r.expected.label:<8}  {mark}{r.status.label:<12}  {r.elapsed_s:7.2f}")


def _details(r: FormalResult) -> list[str]:
    lines = []
    if r.status is Status.REFUTED:
        if r.model_exact:
            items = list(r.model_exact.items())
            shown = ", ".join(f"{k}={v}" for k, v in items[:_MODEL_ITEMS])
            more = f", … ({len(items) - _MODEL_ITEMS} more)" if len(items) > _MODEL_ITEMS else ""
            lines.append(f"    counterexample ({r.decided_by}): {shown}{more}")
        else:
            q = next(q for q in r.queries if q.name == r.decided_by)
            lines.append(f"    {r.decided_by}: z3 answered {q.answer}, the claim needs {q.needs}"
                         f" ({q.description})")
    elif r.status is Status.INCONCLUSIVE:
        q = next(q for q in r.queries if q.name == r.decided_by)
        lines.append(f"    {r.decided_by}: z3 answered unknown ({q.reason_unknown})")
    elif r.status is Status.ERROR:
        lines.append(f"    error: {r.error}")
    return lines


def write_smt2(results: Sequence[FormalResult], folder: str) -> int:
    """Write every query of ``results`` as ``folder/CLAIM/NN-QUERY.smt2``; return the count."""
    from dpaudit.report.json_io import write_text

    n = 0
    for r in results:
        for i, q in enumerate(r.queries, start=1):
            write_text(os.path.join(folder, r.name, f"{i:02d}-{q.name}.smt2"), q.smt2)
            n += 1
    return n


def _write_json(results: Sequence[FormalResult], path: str, seed: int, started: float,
                finished: float) -> None:
    from dpaudit.report.json_io import write_json
    from dpaudit.report.model import make_run

    run = make_run(results, seed=seed, started=started, finished=finished,
                   command=["dpaudit"] + sys.argv[1:])
    write_json(run, path)


def run_verify(args: argparse.Namespace) -> ExitCode:
    """The body of ``dpaudit verify`` (argparse in :mod:`dpaudit.cli`)."""
    timeout = parse_timeout(getattr(args, "timeout", None))
    names = getattr(args, "claims", None)
    if names:
        valid = claim_names()
        unknown = [n for n in names if n not in valid]
        if unknown:
            raise NothingMatched(f"unknown claim {unknown[0]!r}; valid names: {', '.join(valid)}")
    claims = get_claims(names or None)
    if not claims:
        print("dpaudit verify: no claims to run", file=sys.stderr)
        return ExitCode.NOTHING_TO_AUDIT
    config = SolverConfig(timeout_s=timeout)

    import z3

    width = max(len(c.name) for c in claims)
    print(f"z3 {z3.get_version_string()}, seed {config.seed}, per-query timeout "
          f"{config.timeout_s:g} s, rlimit {config.rlimit}")
    print(f"{'CLAIM':<{width}}  {'SOURCE':<{_SOURCE_WIDTH}}  {'EXPECTED':<8}  "
          f"  {'OBSERVED':<12}  {'SECONDS':>7}")
    started = time.time()
    results = []
    for claim in claims:
        r = run_claim(claim, config)
        results.append(r)
        print(format_row(r, width))
        for line in _details(r):
            print(line)
        sys.stdout.flush()
    finished = time.time()

    differ = [r.name for r in results if not r.matches_expected]
    counts = {s: sum(r.status is s for r in results) for s in Status}
    summary = ", ".join(f"{counts[s]} {s.value}" for s in Status if counts[s] or s in
                        (Status.PROVED, Status.REFUTED))
    verdict = "all as expected" if not differ else f"{len(differ)} differ from expected: " + ", ".join(differ)
    print(f"{len(results)} claims: {summary}; {verdict} ({finished - started:.1f} s)")
    if getattr(args, "smt2_dir", None):
        n = write_smt2(results, args.smt2_dir)
        print(f"wrote {n} SMT-LIB2 queries to {args.smt2_dir}")
    if getattr(args, "json", None):
        _write_json(results, args.json, config.seed, started, finished)
        print(f"wrote {args.json}")
    return ExitCode.REFUTED if differ else ExitCode.OK
