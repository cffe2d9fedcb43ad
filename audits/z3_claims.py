"""The formal claims of ``dpaudit verify`` (z3; dpaudit/formal), each with the status expected of it.

Every claim in the registry is an audit here, named ``formal.<claim name>``: true statements are
expected PROVED; the seed statements that docs/math.md#errata lists as false (Chen, Pal and Golubchik (2016) eqs (6) and (7) as printed,
Dong (2020)'s "range = sensitivity", the EM-for-medians notes (2020) eq (2.2) under add/drop, Muñoz Medina and Gillenwater (2020) Prop 2's δ) are
expected REFUTED with a model; and the registry's negative controls (a claim restated with a
planted error: dimension 3, radius 0.9, a wrong constant) are expected REFUTED too, which shows the
encodings can fail. INCONCLUSIVE never counts as PROVED. Each record carries the SMT-LIB2 text of
its queries, which any z3 solves again.
"""

from __future__ import annotations

from dpaudit.formal import list_claims
from dpaudit.suite import formal

AUDITS = [
    formal(f"formal.{c.name}", c.name, expected=c.expected.value,
           description=(f"negative control of {c.control_of}: " if c.control_of else "") + c.statement)
    for c in list_claims(include_controls=True)
]
