"""The seed papers' own statements (formulas, lemmas, theorems), each re-checked numerically.

These are not audits of our code: each is a statement of a source paper, with where the paper makes
it, the section of docs/math.md that corrects it and its errata ids (E8, E9, … E35 of docs/math.md#errata), and a check that
re-derives the evidence from scratch (exact sums and quadrature of the stated formulas, exact
privacy losses of our laws, exhaustive enumeration on small universes, linear programs). Nothing is
sampled, so every verdict is deterministic. The expected verdict is the one recorded with the
claim: REFUTED for a statement an explicit counterexample shows false (Chen, Pal and Golubchik (2016) eqs (6), (7), (10) and
(18), the staircase MLE of Chen, Pal and Golubchik (2016) Lemma 1, Dong (2020)'s "range = sens if monotone", the EM-for-medians notes' eq (2.1)
and eq (2.2) under add/drop, Muñoz Medina and Gillenwater (2020) Theorem 1's assumption), NOT REFUTED for one that held at
every point checked. A numeric check never proves, so none is expected PROVED; some of the true
ones are proved in ``audits/z3_claims.py``.

Ids are ``seed<NNN>/<claim id>`` with the claim ids of :mod:`dpaudit.reference.claims`
(``s<NNN>-<where>-<what>``: mechanisms/claims/noise.py for Chen, Pal and Golubchik (2016), mechanisms/claims/exponential.py
for papers 000, 003 and 004); each record points at the line that defines its claim.
"""

from __future__ import annotations

from dpaudit.suite import seed_claim
from dpaudit.reference.claims import all_claims
from dpaudit.reference.seed_claim_record import paper_name

AUDITS = [
    seed_claim(f"seed{c.seed}/{c.id}", c, expected=c.verdict.value,
               description=f"{paper_name(c.seed)} {c.source}: {c.statement}")
    for c in all_claims()
]
