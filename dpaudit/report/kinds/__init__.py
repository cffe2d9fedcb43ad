"""Record kinds: one class per kind of result record, found by the record's ``kind``.

::

    from dpaudit.report.kinds import kind_of

    k = kind_of(record)          # SampledAudit, ExactAudit, SensitivitySearch, FormalClaim, ...
    k.claim_text(), k.finding_text(), k.facts(), k.counterexample(), k.junit_outcome(), k.rule

The harness registers its own four kinds here. Any other kind registers itself from its own
package: :func:`register_kind` at import, and (so a saved JSON re-renders without importing that
package first) an entry point in the group ``dpaudit.record_kinds`` naming the class, e.g.
``seed-claim = "dpaudit.reference.seed_claim_record:SeedClaimRecord"`` in ``pyproject.toml``.
A kind nobody registered is shown by :class:`GenericRecord` (its statement, its verdict's meaning).
"""

from __future__ import annotations

from typing import Any, Mapping

from dpaudit.report.kinds.audit import ExactAudit, SampledAudit
from dpaudit.report.kinds.base import (CounterexampleView, GenericRecord, JUnitOutcome, RecordKind,
                                       SarifRule)
from dpaudit.report.kinds.formal import FormalClaim
from dpaudit.report.kinds.sensitivity import SensitivitySearch
from dpaudit.report.plugins import load_plugins

__all__ = ["RecordKind", "SarifRule", "CounterexampleView", "JUnitOutcome", "GenericRecord",
           "register_kind", "kind_of", "registered_kinds", "ENTRY_POINT_GROUP"]

#: entry-point group through which another distribution registers a record kind
ENTRY_POINT_GROUP = "dpaudit.record_kinds"

_KINDS: dict[str, type[RecordKind]] = {}


def register_kind(cls: type[RecordKind]) -> type[RecordKind]:
    """Register ``cls`` for records whose ``kind`` is ``cls.kind`` (usable as a class decorator).
    Registering the same class again is a no-op; another class for a taken kind is an error."""
    if not (isinstance(cls, type) and issubclass(cls, RecordKind)) or not cls.kind:
        raise TypeError(f"register_kind needs a RecordKind subclass with a kind, got {cls!r}")
    taken = _KINDS.get(cls.kind)
    if taken is not None and (taken.__module__, taken.__qualname__) != (cls.__module__, cls.__qualname__):
        raise ValueError(f"record kind {cls.kind!r} is already registered by {taken.__module__}.{taken.__qualname__}")
    _KINDS[cls.kind] = cls
    return cls


for _cls in (SampledAudit, ExactAudit, SensitivitySearch, FormalClaim):
    register_kind(_cls)


def _load_entry_points() -> None:
    load_plugins(ENTRY_POINT_GROUP, register_kind)


def registered_kinds() -> tuple[type[RecordKind], ...]:
    """Every registered kind: the harness's four in a fixed order, then the others by name (so
    SARIF rule indices are stable from run to run)."""
    _load_entry_points()
    builtin = [SampledAudit, ExactAudit, SensitivitySearch, FormalClaim]
    others = sorted((c for c in _KINDS.values() if c not in builtin), key=lambda c: c.kind)
    return tuple(builtin + others)


def kind_of(rec: Mapping[str, Any]) -> RecordKind:
    """The kind object wrapping ``rec`` (a :class:`GenericRecord` when its kind is unknown)."""
    name = rec.get("kind")
    cls = _KINDS.get(name) if isinstance(name, str) else None
    if cls is None and isinstance(name, str):
        _load_entry_points()
        cls = _KINDS.get(name)
    return (cls or GenericRecord)(rec)
