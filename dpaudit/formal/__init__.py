"""Formal claims checked with z3: PROVED, REFUTED (with a model) or INCONCLUSIVE.

Sampling can only refute; a proof settles. This package states the geometric claims on which
Cummings and Durfee (2020)'s preprocessing rests (docs/math.md#spf-definition, #spf-2d) and the algebraic claims behind the other seeds'
privacy and sensitivity statements (docs/math.md#oblivious-noise, #smooth-sensitivity, #exponential-mechanism), including the seed statements docs/math.md#errata lists as
false, which are registered as expected REFUTED. ::

    import dpaudit
    results = dpaudit.verify()                       # every claim, seeded and bounded
    bad = [r for r in results if not r.matches_expected]
    dpaudit.formal.list_claims()                     # names, sources, statements, expectations

Modules: :mod:`~dpaudit.formal.solver` (the seeded, bounded solver factory and SMT-LIB2 text),
:mod:`~dpaudit.formal.registry` (claims by name), :mod:`~dpaudit.formal.runner` (``verify``),
:mod:`~dpaudit.formal.result` (frozen results), :mod:`~dpaudit.formal.cli` (``dpaudit verify``),
and the claims by topic: ``geometry``, ``preprocessing``, ``quantile``, ``exponential``,
``noise``, ``smooth``, ``controls`` (negative controls with planted errors).
"""

from __future__ import annotations

from dpaudit.formal.registry import ClaimInfo, claim_names, list_claims
from dpaudit.formal.result import FormalResult, QueryRecord, Status
from dpaudit.formal.runner import verify
from dpaudit.formal.solver import DEFAULT_RLIMIT, DEFAULT_TIMEOUT_S, SolverConfig

__all__ = [
    "verify",
    "FormalResult",
    "QueryRecord",
    "Status",
    "ClaimInfo",
    "list_claims",
    "claim_names",
    "SolverConfig",
    "DEFAULT_TIMEOUT_S",
    "DEFAULT_RLIMIT",
]
