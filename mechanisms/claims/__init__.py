"""The seed papers' own statements (formulas, lemmas, theorems), each with a numeric re-check.

* :mod:`.types`: :class:`~.types.SeedClaim` (a statement, where the paper makes it, the verdict we
  record, the section of docs/math.md and the errata) and the :class:`~.types.ClaimCheck` its check produces.
* :mod:`.noise`: Chen, Pal and Golubchik (2016) (Chen, Pal and Golubchik: oblivious noise mechanisms).
* :mod:`.exponential`: Muñoz Medina and Gillenwater (2020) (Duff's median), Dong (2020) (range vs sensitivity) and the EM-for-medians notes (2020) (the quantile
  exponential mechanism).

One id convention, ``s<NNN>-<where>-<what>`` in lower case (``s001-eq6-density``,
``s004-thm2-change-one``), and one entry point: :func:`evaluate` runs every check, or the one
named, over all the seeds.
"""

from __future__ import annotations

from typing import Optional

from . import exponential, noise
from .types import ClaimCheck, SeedClaim, evaluate_selected

__all__ = ["all_claims", "evaluate"]


def all_claims() -> tuple[SeedClaim, ...]:
    """Every recorded claim, Chen, Pal and Golubchik (2016) first (in the paper's order), then papers 000, 003 and 004 (docs/math.md#sources)."""
    return (*noise.claims(), *exponential.claims())


def evaluate(claim_id: Optional[str] = None) -> tuple[ClaimCheck, ...]:
    """Run the checks (all, or the one whose id is ``claim_id``) and return their evidence; an
    unknown id is an :class:`~dpaudit.errors.InvalidArgument` listing the known ones."""
    return evaluate_selected(all_claims(), claim_id)
