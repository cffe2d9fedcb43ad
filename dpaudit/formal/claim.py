"""A formal claim: its record (:class:`Claim`, :class:`ClaimInfo`) and the decorator that declares one.

A :class:`Claim` carries its name, its source (paper and lemma, or a section of docs/math.md),
the statement in words (for an all-k claim: how the proved lemmas compose into the theorem), the
status it is expected to have (PROVED, or REFUTED for a paper's statement that
docs/math.md#errata lists as false), whether it assumes exact reals, what it relates to (papers,
sections of docs/math.md, reference mechanisms), and a ``build`` function returning its z3
queries. Negative controls are claims with a planted error (``control_of`` names the claim they
mutate).

Topic modules declare their claims with :func:`register`, which adds them to :data:`CLAIMS` (a
:class:`dpaudit.registry.Registry`: a name registered twice is an error). This module imports no
topic module and no lookup: :mod:`dpaudit.formal.registry` imports the topics, so the claims are
registered before anyone can look one up, and the topics never import what looks them up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

from dpaudit.formal.result import Status
from dpaudit.formal.solver import Query
from dpaudit.registry import NotAnEntry, Registry

__all__ = ["Claim", "ClaimInfo", "CLAIMS", "register"]

_NAME = re.compile(r"^[a-z0-9][a-z0-9.\-]*$")


@dataclass(frozen=True, slots=True)
class ClaimInfo:
    """What a report needs to know about a claim without running it."""

    name: str
    source: str
    statement: str
    expected: Status
    assumes_exact_reals: bool
    seeds: tuple[str, ...]
    spec: tuple[str, ...]
    mechanisms: tuple[str, ...]
    control_of: Optional[str]

    @property
    def reproduce(self) -> str:
        from dpaudit.reproduce import verify_command

        return verify_command(self.name)

    def to_record(self) -> dict:
        return {
            "name": self.name,
            "source": self.source,
            "statement": self.statement,
            "expected": self.expected.value,
            "assumes_exact_reals": self.assumes_exact_reals,
            "seeds": list(self.seeds),
            "spec": list(self.spec),
            "mechanisms": list(self.mechanisms),
            "control_of": self.control_of,
            "reproduce": self.reproduce,
        }


@dataclass(frozen=True, slots=True)
class Claim:
    """A registered formal claim; ``build()`` returns its queries (fresh z3 terms each call)."""

    name: str
    source: str
    statement: str
    expected: Status
    assumes_exact_reals: bool
    build: Callable[[], Sequence[Query]]
    seeds: tuple[str, ...] = ()
    spec: tuple[str, ...] = ()
    mechanisms: tuple[str, ...] = ()
    control_of: Optional[str] = None

    @property
    def info(self) -> ClaimInfo:
        return ClaimInfo(self.name, self.source, self.statement, self.expected,
                         self.assumes_exact_reals, self.seeds, self.spec, self.mechanisms,
                         self.control_of)


def _check(claim: object) -> None:
    if not isinstance(claim, Claim):
        raise NotAnEntry.bad("claim", claim, "a dpaudit.formal.claim.Claim")
    if not _NAME.match(claim.name):
        raise NotAnEntry(f"claim name must match {_NAME.pattern}, got {claim.name!r}")
    if claim.expected not in (Status.PROVED, Status.REFUTED):
        raise NotAnEntry(f"a claim is expected PROVED or REFUTED, got {claim.expected!r}")


#: Every declared claim by name, in declaration order.
CLAIMS: Registry[Claim] = Registry("claim", name_of=lambda claim: claim.name, check=_check)


def register(name: str, *, source: str, statement: str, expected: Status,
             assumes_exact_reals: bool, seeds: Iterable[str] = (), spec: Iterable[str] = (),
             mechanisms: Iterable[str] = (), control_of: Optional[str] = None
             ) -> Callable[[Callable[[], Sequence[Query]]], Callable[[], Sequence[Query]]]:
    """Decorator: register the decorated query builder as the claim ``name``."""

    def deco(build: Callable[[], Sequence[Query]]) -> Callable[[], Sequence[Query]]:
        CLAIMS.add(Claim(name=name, source=source, statement=" ".join(statement.split()),
                         expected=expected, assumes_exact_reals=assumes_exact_reals,
                         build=build, seeds=tuple(seeds), spec=tuple(spec),
                         mechanisms=tuple(mechanisms), control_of=control_of))
        return build

    return deco
