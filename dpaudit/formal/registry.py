"""The claim registry: every formal claim by its stable public name.

A :class:`Claim` carries its name, its source (paper and lemma, or a section of docs/math.md), the statement in
words (for an all-k claim: how the proved lemmas compose into the theorem), the status it is
expected to have (PROVED, or REFUTED for a paper's statement that docs/math.md#errata lists as false), whether it
assumes exact reals, what it relates to (papers, sections of docs/math.md, reference mechanisms), and a
``build`` function returning its z3 queries. Negative controls are claims with a planted error
(``control_of`` names the claim they mutate); they are listed and run only on request.

Topic modules (``geometry``, ``preprocessing``, ``quantile``, ``exponential``, ``noise``,
``smooth``, ``controls``) register their claims when first imported; :func:`all_claims` imports
them all, in that order, which is the order ``dpaudit verify`` prints.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

from dpaudit.errors import InvalidArgument
from dpaudit.formal.result import Status
from dpaudit.formal.solver import Query

__all__ = ["Claim", "ClaimInfo", "register", "all_claims", "get_claims", "list_claims",
           "claim_names", "TOPIC_MODULES"]

TOPIC_MODULES = ("geometry", "preprocessing", "quantile", "exponential", "noise", "smooth",
                 "controls")

_NAME = re.compile(r"^[a-z0-9][a-z0-9.\-]*$")
_REGISTRY: dict[str, "Claim"] = {}
_loaded = False


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


def register(name: str, *, source: str, statement: str, expected: Status,
             assumes_exact_reals: bool, seeds: Iterable[str] = (), spec: Iterable[str] = (),
             mechanisms: Iterable[str] = (), control_of: Optional[str] = None
             ) -> Callable[[Callable[[], Sequence[Query]]], Callable[[], Sequence[Query]]]:
    """Decorator: register the decorated query builder as the claim ``name``."""
    if not _NAME.match(name):
        raise ValueError(f"claim name must match {_NAME.pattern}, got {name!r}")
    if expected not in (Status.PROVED, Status.REFUTED):
        raise ValueError(f"a claim is expected PROVED or REFUTED, got {expected!r}")

    def deco(build: Callable[[], Sequence[Query]]) -> Callable[[], Sequence[Query]]:
        if name in _REGISTRY:
            raise ValueError(f"claim {name!r} registered twice")
        _REGISTRY[name] = Claim(name=name, source=source, statement=" ".join(statement.split()),
                                expected=expected, assumes_exact_reals=assumes_exact_reals,
                                build=build, seeds=tuple(seeds), spec=tuple(spec),
                                mechanisms=tuple(mechanisms), control_of=control_of)
        return build

    return deco


def _load() -> None:
    global _loaded
    if not _loaded:
        for module in TOPIC_MODULES:
            importlib.import_module(f"dpaudit.formal.{module}")
        _loaded = True


def all_claims(include_controls: bool = False) -> list[Claim]:
    """Every registered claim in print order; negative controls only when asked for."""
    _load()
    return [c for c in _REGISTRY.values() if include_controls or c.control_of is None]


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
    _load()
    wanted: list[str] = []
    for n in names:
        if not isinstance(n, str) or n not in _REGISTRY:
            raise InvalidArgument(f"unknown claim {n!r}; valid names: {', '.join(claim_names())}")
        if n not in wanted:
            wanted.append(n)
    return [_REGISTRY[n] for n in wanted]


def list_claims(include_controls: bool = False) -> list[ClaimInfo]:
    """Metadata of the registered claims (for ``dpaudit list`` and the compliance report)."""
    return [c.info for c in all_claims(include_controls)]
