"""Run formal claims: build each claim's queries, solve them, and combine the answers.

Combination (see :mod:`dpaudit.formal.result`): PROVED iff every query gets the answer it needs;
REFUTED as soon as one query gets the opposite definite answer (the first such query decides and
its model is the counterexample); INCONCLUSIVE when some query is ``unknown`` and none fails;
ERROR when the encoding or z3 raises. Every query is run even after a refutation, so the result
keeps the SMT-LIB2 text of all of them.
"""

from __future__ import annotations

import time
from typing import Iterable, Optional

import z3

from dpaudit.formal.registry import Claim, get_claims
from dpaudit.formal.result import FormalResult, QueryRecord, Status
from dpaudit.formal.solver import DEFAULT_RLIMIT, DEFAULT_TIMEOUT_S, SolverConfig, solve
from dpaudit.rng import DEFAULT_SEED

__all__ = ["verify", "run_claim", "combine"]


def combine(records: Iterable[QueryRecord]) -> tuple[Status, Optional[str]]:
    """The claim status from its query records, and the name of the query that decided it
    (the first failing query for REFUTED, the first unknown one for INCONCLUSIVE)."""
    records = list(records)
    for r in records:
        if r.fails:
            return Status.REFUTED, r.name
    for r in records:
        if not r.holds:
            return Status.INCONCLUSIVE, r.name
    if not records:
        return Status.ERROR, None
    return Status.PROVED, None


def run_claim(claim: Claim, config: SolverConfig) -> FormalResult:
    """Solve every query of ``claim`` under ``config``."""
    start = time.perf_counter()
    records: list[QueryRecord] = []
    error: Optional[str] = None
    try:
        queries = list(claim.build())
        names = [q.name for q in queries]
        if len(set(names)) != len(names):
            raise ValueError(f"claim {claim.name!r} has duplicate query names")
        for i, q in enumerate(queries, start=1):
            records.append(solve(q, config, claim=claim.name, index=i))
        status, decided_by = combine(records)
        if status is Status.ERROR:
            error = "the claim built no queries"
    except (z3.Z3Exception, ValueError, TypeError, ArithmeticError) as exc:
        status, decided_by = Status.ERROR, None
        error = f"{type(exc).__name__}: {exc}"
    return FormalResult(
        name=claim.name, source=claim.source, statement=claim.statement,
        expected=claim.expected, status=status, assumes_exact_reals=claim.assumes_exact_reals,
        queries=tuple(records), elapsed_s=time.perf_counter() - start, seed=config.seed,
        timeout_s=config.timeout_s, rlimit=config.rlimit, error=error, decided_by=decided_by,
        seeds=claim.seeds, spec=claim.spec, mechanisms=claim.mechanisms,
        control_of=claim.control_of)


def verify(names: Optional[Iterable[str]] = None, *, timeout: Optional[float] = DEFAULT_TIMEOUT_S,
           seed: Optional[int] = DEFAULT_SEED, rlimit: Optional[int] = DEFAULT_RLIMIT
           ) -> list[FormalResult]:
    """Run the formal claims and return one frozen :class:`FormalResult` each.

    ``names``: claim names (see :func:`dpaudit.formal.list_claims`; negative controls may be
    named too); None runs every non-control claim. ``timeout``: per-query wall-clock limit in
    seconds; ``seed``: z3's ``smt.random_seed`` and ``sat.random_seed``; ``rlimit``: per-query z3
    resource limit (None means the default for each). A claim whose queries hit a limit is
    INCONCLUSIVE, never PROVED.
    """
    config = SolverConfig(seed=DEFAULT_SEED if seed is None else seed,
                          timeout_s=DEFAULT_TIMEOUT_S if timeout is None else timeout,
                          rlimit=DEFAULT_RLIMIT if rlimit is None else rlimit)
    return [run_claim(c, config) for c in get_claims(names)]
