"""Record kinds: one class per kind of result record, found by the record's ``kind``.

::

    from dpaudit.report.kinds import kind_of

    k = kind_of(record)          # SampledAudit, ExactAudit, SensitivitySearch, FormalClaim, ...
    k.claim_text(), k.finding_text(), k.facts(), k.counterexample(), k.junit_outcome(), k.rule

The harness's own four kinds are listed here (:data:`BUILTIN`); their modules never import this
one, so the kinds, the wording (:mod:`dpaudit.report.describe`) and the plots import in one
direction. Any other kind registers itself from its own package: :func:`register_kind` at import
(also usable as a class decorator), and (so a saved JSON re-renders without importing that package
first) an entry point in the group ``dpaudit.record_kinds`` naming the class, e.g.
``seed-claim = "dpaudit.reference.seed_claim_record:SeedClaimRecord"`` in ``pyproject.toml``.
A kind nobody registered is shown by :class:`GenericRecord` (its statement, its verdict's meaning).
"""

from __future__ import annotations

from typing import Any, Mapping

from dpaudit.registry import NotAnEntry, Registry
from dpaudit.report.kinds.audit import ExactAudit, SampledAudit
from dpaudit.report.kinds.base import (CounterexampleView, GenericRecord, JUnitOutcome, RecordKind,
                                       SarifRule)
from dpaudit.report.kinds.curve import CurveRecord
from dpaudit.report.kinds.formal import FormalClaim
from dpaudit.report.kinds.onerun import OneRunRecord
from dpaudit.report.kinds.replay import ReplayRecord
from dpaudit.report.kinds.sensitivity import SensitivitySearch

__all__ = ["RecordKind", "SarifRule", "CounterexampleView", "JUnitOutcome", "GenericRecord",
           "register_kind", "kind_of", "registered_kinds", "BUILTIN", "KINDS", "ENTRY_POINT_GROUP"]

#: entry-point group through which another distribution registers a record kind
ENTRY_POINT_GROUP = "dpaudit.record_kinds"

#: The harness's kinds, in the order SARIF numbers their rules (DPA001..DPA004).
BUILTIN: tuple[type[RecordKind], ...] = (SampledAudit, ExactAudit, SensitivitySearch, FormalClaim)


def _check(cls: object) -> None:
    if not (isinstance(cls, type) and issubclass(cls, RecordKind)) or not cls.kind:
        raise NotAnEntry(f"register_kind needs a RecordKind subclass with a kind, got {cls!r}")


def _same_class(a: type, b: type) -> bool:
    """The same class again, even from a module imported twice."""
    return (a.__module__, a.__qualname__) == (b.__module__, b.__qualname__)


#: Every kind by its ``kind`` (the rules of :class:`dpaudit.registry.Registry`), plugins from
#: :data:`ENTRY_POINT_GROUP`.
KINDS: Registry[type[RecordKind]] = Registry("record kind", name_of=lambda cls: cls.kind, check=_check,
                                             same=_same_class, group=ENTRY_POINT_GROUP)


def register_kind(cls: type[RecordKind]) -> type[RecordKind]:
    """Register ``cls`` for records whose ``kind`` is ``cls.kind`` (usable as a class decorator).
    Registering the same class again is a no-op; another class for a taken kind is an error."""
    return KINDS.add(cls)


for _cls in BUILTIN + (CurveRecord, ReplayRecord, OneRunRecord):  # (their SARIF rules come after the four)
    register_kind(_cls)


def registered_kinds() -> tuple[type[RecordKind], ...]:
    """Every registered kind: the harness's four in a fixed order, then the others by name (so
    SARIF rule indices are stable from run to run)."""
    others = sorted((c for c in KINDS.entries() if c not in BUILTIN), key=lambda c: c.kind)
    return BUILTIN + tuple(others)


def kind_of(rec: Mapping[str, Any]) -> RecordKind:
    """The kind object wrapping ``rec`` (a :class:`GenericRecord` when its kind is unknown)."""
    return (KINDS.find(rec.get("kind")) or GenericRecord)(rec)
