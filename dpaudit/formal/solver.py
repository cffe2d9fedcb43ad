"""The solver factory: every z3 query of dpaudit runs here, seeded and bounded.

A :class:`SolverConfig` fixes z3's random seeds (``smt.random_seed`` per solver and the global
``sat.random_seed``), a resource limit (``rlimit``, deterministic: the same query stops at the same
point on any machine) and a wall-clock ``timeout`` (a safety net on loaded machines). A
:class:`Query` is a list of assertions and the answer the claim needs. :func:`solve` checks it in a
fresh solver and returns a frozen :class:`~dpaudit.formal.result.QueryRecord` with the answer, the
seconds, a readable model and the query's standalone SMT-LIB2 text, which carries the same seeds
and limits as ``set-option`` commands, so ``z3 FILE`` in a fresh process solves it
again (:mod:`dpaudit.formal.independence`).
"""

from __future__ import annotations

import math
import numbers
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional

import z3

from dpaudit.errors import InvalidArgument
from dpaudit.formal.result import QueryRecord
from dpaudit.rng import DEFAULT_SEED, check_seed

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "DEFAULT_RLIMIT",
    "SolverConfig",
    "Query",
    "make_solver",
    "canonical_body",
    "smt2_text",
    "solve",
    "readable_model",
]

#: Per-query wall-clock limit in seconds (a safety net; the rlimit normally binds first).
DEFAULT_TIMEOUT_S = 30.0
#: Per-query z3 resource limit. The heaviest registered query uses about 1.5e7 units; the limit
#: leaves a wide margin while keeping a runaway query to a few seconds.
DEFAULT_RLIMIT = 200_000_000
_MAX_TIMEOUT_S = 86_400.0
_UINT_MAX = 2**32 - 1


@dataclass(frozen=True, slots=True)
class SolverConfig:
    """Seeds and limits for every query of a run (validated on construction)."""

    seed: int = DEFAULT_SEED
    timeout_s: float = DEFAULT_TIMEOUT_S
    rlimit: int = DEFAULT_RLIMIT

    def __post_init__(self) -> None:
        seed = check_seed(self.seed)
        if seed > _UINT_MAX:
            raise InvalidArgument.bad("seed", self.seed, f"an integer in [0, {_UINT_MAX}] for z3")
        t = self.timeout_s
        if (isinstance(t, bool) or not isinstance(t, numbers.Real) or not math.isfinite(float(t))
                or not 0 < float(t) <= _MAX_TIMEOUT_S):
            raise InvalidArgument.bad("timeout", t, f"a number of seconds in (0, {_MAX_TIMEOUT_S:g}]")
        r = self.rlimit
        if isinstance(r, bool) or not isinstance(r, numbers.Integral) or not 0 < int(r) <= _UINT_MAX:
            raise InvalidArgument.bad("rlimit", r, f"an integer in [1, {_UINT_MAX}]")
        object.__setattr__(self, "seed", seed)
        object.__setattr__(self, "timeout_s", float(t))
        object.__setattr__(self, "rlimit", int(r))

    @property
    def timeout_ms(self) -> int:
        return max(1, int(round(self.timeout_s * 1000)))


@dataclass(frozen=True, slots=True)
class Query:
    """One solver query of a claim.

    ``assertions`` are conjoined; ``needs`` is ``"unsat"`` when they state the negation of a
    universal statement (no counterexample may exist) and ``"sat"`` when they state an existential
    one (a witness must exist). For an ``"unsat"`` query the last assertion is the negated
    conclusion and the others are the hypotheses (a test checks the hypotheses are satisfiable,
    so no proof is vacuous). ``shown`` names derived quantities to evaluate in a model (for a
    readable counterexample, e.g. both utilities and their difference).
    """

    name: str
    description: str
    assertions: tuple[z3.BoolRef, ...]
    needs: str = "unsat"
    shown: tuple[tuple[str, z3.ExprRef], ...] = field(default=())

    def __post_init__(self) -> None:
        if self.needs not in ("sat", "unsat"):
            raise ValueError(f"needs must be 'sat' or 'unsat', got {self.needs!r}")
        object.__setattr__(self, "assertions", tuple(self.assertions))
        object.__setattr__(self, "shown", tuple(self.shown))


def make_solver(config: SolverConfig, ctx: Optional[z3.Context] = None) -> z3.Solver:
    """A fresh z3 solver with the run's seeds, resource limit and timeout.

    ``sat.random_seed`` is a global z3 parameter (a solver rejects it), so it is set globally to
    the run's seed; everything else is local to the solver.
    """
    z3.set_param("sat.random_seed", config.seed)
    s = z3.Solver(ctx=ctx)
    s.set("smt.random_seed", config.seed)
    s.set("rlimit", config.rlimit)
    s.set("timeout", config.timeout_ms)
    return s


def _ascii(text: str) -> str:
    return text.encode("ascii", "replace").decode("ascii")


def _body(solver: z3.Solver) -> str:
    return "\n".join(line for line in solver.to_smt2().splitlines()
                     if not line.startswith("; benchmark generated")
                     and not line.startswith("(set-info :status")) + "\n"


def canonical_body(query: Query) -> str:
    """The declarations, assertions and ``(check-sat)`` of ``query`` as SMT-LIB2, in canonical
    form: printed once, parsed into a fresh z3 context and printed again, so the text (and every
    solve of it) does not depend on what else was built in this process."""
    s = z3.Solver()
    s.add(*query.assertions)
    fresh = z3.Solver(ctx=z3.Context())
    fresh.from_string(_body(s))
    return _body(fresh)


def smt2_text(query: Query, config: SolverConfig, *, claim: str = "", index: int = 0,
              body: Optional[str] = None) -> str:
    """The standalone SMT-LIB2 text of ``query``: a comment header, the run's seeds and limits as
    ``set-option`` commands, then :func:`canonical_body`."""
    header = [
        f"; dpaudit formal claim: {claim}",
        f"; query {index}: {_ascii(query.name)}",
        f"; {_ascii(query.description)}",
        f"; the claim needs: {query.needs}",
        f"(set-option :smt.random_seed {config.seed})",
        f"(set-option :sat.random_seed {config.seed})",
        f"(set-option :rlimit {config.rlimit})",
        f"(set-option :timeout {config.timeout_ms})",
    ]
    return "\n".join(header) + "\n" + (canonical_body(query) if body is None else body)


def _value(v: z3.ExprRef) -> tuple[Any, str]:
    """(readable number, exact text) of a model value."""
    if z3.is_true(v):
        return True, "true"
    if z3.is_false(v):
        return False, "false"
    if z3.is_int_value(v):
        n = v.as_long()
        return n, str(n)
    if z3.is_rational_value(v):
        q = Fraction(v.numerator_as_long(), v.denominator_as_long())
        if q.denominator == 1:
            return int(q), str(q.numerator)
        return float(q), f"{q.numerator}/{q.denominator}"
    if z3.is_algebraic_value(v):
        return float(v.approx(20).as_decimal(20).rstrip("?")), v.sexpr()
    return str(v), v.sexpr()


def readable_model(model: z3.ModelRef, shown: tuple[tuple[str, z3.ExprRef], ...] = ()
                   ) -> tuple[dict[str, Any], dict[str, str]]:
    """The constants of ``model`` and the ``shown`` quantities, sorted by name, as readable numbers
    and as exact texts. Functions and z3-internal names (containing ``!``) are left out."""
    readable: dict[str, Any] = {}
    exact: dict[str, str] = {}
    for d in sorted(model.decls(), key=lambda d: d.name()):
        if d.arity() != 0 or "!" in d.name():
            continue
        readable[d.name()], exact[d.name()] = _value(model[d])
    for label, expr in shown:
        readable[label], exact[label] = _value(model.eval(expr, model_completion=True))
    return readable, exact


def solve(query: Query, config: SolverConfig, *, claim: str = "", index: int = 0) -> QueryRecord:
    """Check ``query`` under ``config`` and return its record; z3 ``unknown`` stays ``"unknown"``.

    The query is solved from its canonical SMT-LIB2 text, parsed into a fresh context: what is
    checked here is exactly what the dumped file states, and the answer and model do not depend
    on earlier work in the process.
    """
    body = canonical_body(query)
    text = smt2_text(query, config, claim=claim, index=index, body=body)
    ctx = z3.Context()
    s = make_solver(config, ctx)
    s.from_string(body)
    start = time.perf_counter()
    answer = s.check()
    seconds = time.perf_counter() - start
    model = exact = None
    reason: Optional[str] = None
    if answer == z3.sat:
        shown = tuple((label, expr.translate(ctx)) for label, expr in query.shown)
        model, exact = readable_model(s.model(), shown)
    elif answer == z3.unknown:
        reason = s.reason_unknown()
    return QueryRecord(name=query.name, description=query.description, needs=query.needs,
                       answer=str(answer), seconds=seconds, smt2=text, reason_unknown=reason,
                       model=model, model_exact=exact)
