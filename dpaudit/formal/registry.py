"""The claim registry: every formal claim by its stable public name.

What a claim is, and the decorator that declares one, live in :mod:`dpaudit.formal.claim`. Topic
modules (``geometry``, ``preprocessing``, ``quantile``, ``exponential``, ``noise``, ``smooth``,
``controls``) declare their claims with it; this module imports them all, in that order, which is
the order ``dpaudit verify`` prints, and looks claims up (an unknown name raises InvalidArgument
with the valid names, as every :class:`dpaudit.registry.Registry` does). Negative controls are
listed and run only on request.
"""

from __future__ import annotations

from typing import Iterable, Optional

from dpaudit.formal.claim import CLAIMS, Claim, ClaimInfo, register

# the topics in print order; each registers its claims when imported (controls last: they mutate
# the claims above and import their topics)
from dpaudit.formal import geometry, preprocessing, quantile, exponential, noise, smooth  # isort:skip
from dpaudit.formal import controls  # isort:skip

__all__ = ["Claim", "ClaimInfo", "register", "all_claims", "get_claims", "list_claims",
           "claim_names", "TOPICS", "TOPIC_MODULES", "CLAIMS"]

#: The topic modules, in print order.
TOPICS = (geometry, preprocessing, quantile, exponential, noise, smooth, controls)
TOPIC_MODULES = tuple(m.__name__.rpartition(".")[2] for m in TOPICS)


def all_claims(include_controls: bool = False) -> list[Claim]:
    """Every registered claim in print order; negative controls only when asked for."""
    return [c for c in CLAIMS.entries() if include_controls or c.control_of is None]


def claim_names(include_controls: bool = True) -> list[str]:
    """The valid claim names (controls included by default: they can be run by name)."""
    return [c.name for c in all_claims(include_controls)]


def get_claims(names: Optional[Iterable[str]] = None) -> list[Claim]:
    """The claims called ``names`` (in the order given, duplicates dropped), or every non-control
    claim when ``names`` is None. An unknown name raises InvalidArgument listing the valid ones."""
    if names is None:
        return all_claims()
    if isinstance(names, str):
        names = [names]
    wanted: list[Claim] = []
    for n in names:
        claim = CLAIMS.get(n)
        if claim not in wanted:
            wanted.append(claim)
    return wanted


def list_claims(include_controls: bool = False) -> list[ClaimInfo]:
    """Metadata of the registered claims (for ``dpaudit list`` and the compliance report)."""
    return [c.info for c in all_claims(include_controls)]
