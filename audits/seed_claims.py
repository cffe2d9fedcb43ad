"""The seed papers' own statements (formulas, lemmas, theorems), each re-checked numerically.

These are not audits of our code: each is a statement of a source paper, with where the paper makes
it, the SPEC section that corrects it and SPEC §8's errata ids (E8, E9, … E35), and a check that
re-derives the evidence from scratch (exact sums and quadrature of the stated formulas, exact
privacy losses of our laws, exhaustive enumeration on small universes, linear programs). Nothing is
sampled, so every verdict is deterministic. The expected verdict is the one recorded with the
claim: REFUTED for a statement an explicit counterexample shows false (S1 eqs (6), (7), (10) and
(18), the staircase MLE of S1 Lemma 1, seed 003's "range = sens if monotone", seed 004's eq (2.1)
and eq (2.2) under add/drop, seed 000 Theorem 1's assumption), NOT REFUTED for one that held at
every point checked. A numeric check never proves, so none is expected PROVED; some of the true
ones are proved in ``audits/z3_claims.py``.

Ids are ``seed<NNN>/<claim id>`` with the claim ids of :mod:`dpaudit.reference.claims`
(``s<NNN>-<where>-<what>``: mechanisms/claims/noise.py for seed 001, mechanisms/claims/exponential.py
for seeds 000, 003 and 004); each record points at the line that defines its claim.
"""

from __future__ import annotations

from dpaudit.suite import seed_claim
from dpaudit.reference.claims import all_claims

AUDITS = [
    seed_claim(f"seed{c.seed}/{c.id}", c, expected=c.verdict.value,
               description=f"seed {c.seed}, {c.source}: {c.statement}")
    for c in all_claims()
]
