"""The NP-hardness gadget of Cummings and Durfee (2020) Prop 4.6 (docs/math.md#spf-np-gadget [R]) agrees with z3 on random CNFs.

f̂(D*) = Δ(n+1) must hold exactly when z3 says the formula is unsatisfiable; on satisfiable
formulas the argument of docs/math.md#spf-np-gadget gives the sharper f̂(D*) ≤ Δ(n−1), checked too.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.errors import InvalidArgument
from dpaudit.reference.sensitivity_preprocessing import (CNF, gadget_table, random_cnf, spf_says_unsatisfiable,
                                                  z3_satisfiable)


@pytest.mark.slow
def test_gadget_agrees_with_z3_on_300_random_cnfs():
    root = np.random.SeedSequence(4606)
    counts = {"sat": 0, "unsat": 0}
    for child in root.spawn(320):
        rng = np.random.default_rng(child)
        n = int(rng.integers(1, 11))
        cnf = random_cnf(rng, n, int(rng.integers(n, 7 * n + 2)), width=int(rng.choice([2, 3, 3])))
        delta = float(rng.choice([0.5, 1.0, 3.0]))
        sat = z3_satisfiable(cnf)
        table = gadget_table(cnf, delta)
        top = table.value(table.full)
        assert spf_says_unsatisfiable(cnf, delta) == (not sat)
        if sat:
            assert top <= delta * (n - 1) + 1e-9
        else:
            assert top == pytest.approx(delta * (n + 1))
        counts["sat" if sat else "unsat"] += 1
    assert counts["sat"] >= 100 and counts["unsat"] >= 80


def test_hand_made_formulas():
    unsat = CNF(2, ((1, 2), (-1, 2), (1, -2), (-1, -2)))
    sat = CNF(2, ((1, 2), (-1, -2)))
    assert not z3_satisfiable(unsat) and spf_says_unsatisfiable(unsat)
    assert z3_satisfiable(sat) and not spf_says_unsatisfiable(sat)
    only_all_false = CNF(3, ((-1,), (-2,), (-3,)))                 # needs D' = all variables
    assert not spf_says_unsatisfiable(only_all_false)


def test_bad_formulas_are_rejected():
    with pytest.raises(InvalidArgument, match="clauses"):
        CNF(2, ((1, 3),))
    with pytest.raises(InvalidArgument, match="clauses"):
        CNF(2, ((),))
    with pytest.raises(InvalidArgument, match="n_vars"):
        CNF(0, ())
    with pytest.raises(InvalidArgument, match="delta"):
        gadget_table(CNF(1, ((1,),)), 0.0)
