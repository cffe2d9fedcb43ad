"""The NP-hardness gadget of Cummings and Durfee (2020) Proposition 4.6 [R, docs/math.md#spf-np-gadget], checked against z3.

Cummings and Durfee (2020)'s formula, f, D* and Δ are stripped; this is docs/math.md#spf-np-gadget's reconstruction. For a CNF φ
over variables 1..n (DIMACS literals: ±k), the universe is individuals 0..n−1 (variable k is
individual k−1) plus a dummy, individual n; Δ > 0 is uniform.

* For D, the assignment v_D makes variable k false iff individual k−1 ∈ D (the rest true).
* ``f(D) = Δ · (|D| − 2·φ(v_D)·[n ∉ D])`` and ``D* = {0, …, n}``.
* **Claim**: ``f̂(D*) = f(D*) = Δ(n+1)`` ⇔ φ is unsatisfiable.
  UNSAT: f = Δ|D| has individual sensitivity Δ, so f̂ = f. SAT: take a satisfying assignment with
  fewest false variables and D' its false set; on proper subsets of D' f̂ = f = Δ|·|, at D'
  f(D') = Δ(|D'| − 2) = L(D') so f̂(D') = f(D'), and f̂(D*) ≤ f̂(D') + Δ|D*∖D'| = Δ(n−1) < f(D*).

So evaluating f̂ at one database decides SAT; computing f̂ is NP-hard in general. (The seed's
extension to any f̃ with Lemma 4.2's guarantee follows only in the UNSAT direction, E24.)
"""

from __future__ import annotations

from dataclasses import dataclass
import numpy as np

from dpaudit.errors import InvalidArgument
from dpaudit.rng import check_generator

from .errors import SpfError
from .general import SubsetTable, spf_table
from .subsets import MAX_INDIVIDUALS

__all__ = ["CNF", "random_cnf", "gadget_table", "spf_says_unsatisfiable", "z3_satisfiable"]


@dataclass(frozen=True, slots=True)
class CNF:
    """A CNF formula: ``clauses`` of non-zero DIMACS literals over variables 1..``n_vars``."""

    n_vars: int
    clauses: tuple[tuple[int, ...], ...]

    def __post_init__(self) -> None:
        if isinstance(self.n_vars, bool) or not isinstance(self.n_vars, (int, np.integer)) \
                or not 1 <= int(self.n_vars) < MAX_INDIVIDUALS:
            raise InvalidArgument.bad("n_vars", self.n_vars, f"an integer in [1, {MAX_INDIVIDUALS - 1}]")
        clauses = tuple(tuple(int(lit) for lit in c) for c in self.clauses)
        for c in clauses:
            if not c or any(lit == 0 or abs(lit) > self.n_vars for lit in c):
                raise InvalidArgument.bad("clauses", c, f"non-empty clauses of literals ±1..±{self.n_vars}")
        object.__setattr__(self, "n_vars", int(self.n_vars))
        object.__setattr__(self, "clauses", clauses)

    def evaluate(self, values: np.ndarray) -> np.ndarray:
        """φ on a batch of assignments ``values`` (bool, shape (m, n_vars)); returns bool (m,)."""
        out = np.ones(values.shape[0], dtype=bool)
        for c in self.clauses:
            sat = np.zeros(values.shape[0], dtype=bool)
            for lit in c:
                col = values[:, abs(lit) - 1]
                sat |= col if lit > 0 else ~col
            out &= sat
        return out


def random_cnf(rng: np.random.Generator, n_vars: int, n_clauses: int, width: int = 3) -> CNF:
    """A random CNF: each clause has ``min(width, n_vars)`` distinct variables with random signs."""
    check_generator(rng)
    k = min(int(width), int(n_vars))
    clauses = []
    for _ in range(int(n_clauses)):
        vs = rng.choice(n_vars, size=k, replace=False) + 1
        signs = rng.choice([-1, 1], size=k)
        clauses.append(tuple(int(v) for v in vs * signs))
    return CNF(n_vars, tuple(clauses))


def gadget_table(cnf: CNF, delta: float = 1.0) -> SubsetTable:
    """f̂ of the gadget f on all subsets of the n + 1 individuals (general algorithm, batched)."""
    if not isinstance(cnf, CNF):
        raise InvalidArgument.bad("cnf", cnf, "a CNF")
    if not (isinstance(delta, (int, float)) and np.isfinite(delta) and delta > 0):
        raise InvalidArgument.bad("delta", delta, "a finite number > 0")
    n = cnf.n_vars

    def f(records: np.ndarray, B: np.ndarray) -> np.ndarray:
        phi = cnf.evaluate(~B[:, :n])                             # variable k false ⇔ k−1 ∈ D
        return delta * (B.sum(axis=1) - 2.0 * (phi & ~B[:, n]))

    return spf_table(f, np.arange(n + 1, dtype=float), delta, batched=True)


def spf_says_unsatisfiable(cnf: CNF, delta: float = 1.0) -> bool:
    """``f̂(D*) == Δ(n+1)``: the gadget's verdict that φ is unsatisfiable (Prop 4.6)."""
    table = gadget_table(cnf, delta)
    return bool(np.isclose(table.value(table.full), delta * (cnf.n_vars + 1), rtol=0, atol=1e-9 * delta))


def z3_satisfiable(cnf: CNF, timeout_ms: int = 10_000) -> bool:
    """Satisfiability of φ decided by z3 (a SAT problem: z3 answers sat or unsat, never guesses)."""
    if not isinstance(cnf, CNF):
        raise InvalidArgument.bad("cnf", cnf, "a CNF")
    import z3  # imported here: z3 is slow to import and only this function needs it

    xs = [z3.Bool(f"x{k}") for k in range(1, cnf.n_vars + 1)]
    solver = z3.Solver()
    solver.set("timeout", int(timeout_ms))
    solver.set("random_seed", 0)
    for c in cnf.clauses:
        solver.add(z3.Or([xs[abs(lit) - 1] if lit > 0 else z3.Not(xs[abs(lit) - 1]) for lit in c]))
    result = solver.check()
    if result == z3.unknown:  # pragma: no cover - tiny formulas; never an answer by default
        raise SpfError(f"z3 could not decide the formula within {timeout_ms} ms")
    return result == z3.sat
