"""The registry of neighbour relations: each relation by its :class:`~dpaudit.claims.Neighbours` member.

One module per relation (:mod:`.add_remove`, :mod:`.replace`, :mod:`.linf`, :mod:`.l1`) implements
the :class:`~dpaudit.neighbours.base.Relation` protocol (:mod:`.base` says what a relation
provides); this module imports the four and registers them (:data:`BUILTIN`), so a new relation is
a new module plus one entry in :data:`BUILTIN` (and a member of :class:`~dpaudit.claims.Neighbours`).
The relation modules never import this one. Relations are looked up by their member or its name
(aliases included) with :func:`relation`; the table is a :class:`dpaudit.registry.Registry`, so a
relation registered twice and an unknown name raise InvalidArgument as every registry does.
"""

from __future__ import annotations

from typing import Union

from dpaudit.claims import Neighbours
from dpaudit.neighbours.add_remove import AddRemove
from dpaudit.neighbours.base import TOLERANCE, Relation, size_reason
from dpaudit.neighbours.l1 import L1
from dpaudit.neighbours.linf import Linf
from dpaudit.neighbours.replace import Replace
from dpaudit.registry import NotAnEntry, Registry

__all__ = ["Relation", "BUILTIN", "RELATIONS", "register", "relation", "relations", "size_reason",
           "TOLERANCE"]


def _check(rel: object) -> None:
    if not isinstance(rel, Relation) or not isinstance(getattr(rel, "name", None), Neighbours):
        raise NotAnEntry(f"a neighbour relation implements dpaudit.neighbours.base.Relation and is "
                         f"named by a dpaudit.claims.Neighbours member, got {rel!r}")


#: Every relation by its name (``"add-remove"``…); lookups accept a member or an alias.
RELATIONS: Registry[Relation] = Registry("neighbours", name_of=lambda rel: rel.name.value, check=_check,
                                         parse=lambda name: Neighbours.parse(name).value)

#: The harness's relations, in registration order.
BUILTIN: tuple[Relation, ...] = (AddRemove(), Replace(), Linf(), L1())


def register(rel: Relation) -> Relation:
    """Add ``rel`` to the registry under ``rel.name`` (a name taken by another relation is an error)."""
    return RELATIONS.add(rel)


for _rel in BUILTIN:
    register(_rel)


def relation(name: Union[str, Neighbours]) -> Relation:
    """The registered relation called ``name`` (InvalidArgument naming the allowed ones)."""
    return RELATIONS.get(name)


def relations() -> tuple[Relation, ...]:
    """Every registered relation, in registration order."""
    return RELATIONS.entries()
