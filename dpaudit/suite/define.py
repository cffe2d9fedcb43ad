"""Audit definitions: what an audit is, the five constructors, and loading audit files.

An audit definition pairs a target with one kind of evidence and the verdict expected of it::

    # audits/laplace.py
    from dpaudit.suite import sampled, exact, sensitivity, formal
    from dpaudit.reference.laplace import Laplace

    AUDITS = [
        sampled("laplace/sampled", lambda: Laplace(1.0).spec(), samples=200_000),
        exact("laplace/exact", lambda: Laplace(1.0).spec()),
        sampled("laplace/broken-scale", lambda: broken_spec(), expected="refuted"),
    ]

Kinds (the record ``kind`` of the result): ``audit`` (black-box sampled audit,
:func:`dpaudit.audit`), ``exact`` (white-box exact audit, :func:`dpaudit.exact_audit`),
``sensitivity`` (hypothesis search, :func:`dpaudit.check_sensitivity`), ``formal`` (a z3 claim,
:func:`dpaudit.verify`) and ``seed-claim`` (a source paper's statement re-checked numerically, a
:class:`dpaudit.reference.claims.types.SeedClaim`). Each audit has a stable ``id``; its seed is
derived from the run's root seed and the id alone (:func:`dpaudit.suite.run.audit_seed`), so one audit replays by
itself with ``dpaudit audit FILE --id ID --seed S`` and gives the same record as in the full run
(a seed claim's check is deterministic and ignores the seed). Expected
verdicts: a correct reference mechanism is ``not_refuted`` (sampling and search never prove),
a formal claim that holds is ``proved``, a deliberately broken variant (negative control) is
``refuted`` (or ``error`` for one that crashes), and a seed claim is its recorded verdict:
``refuted`` for a statement shown false, ``not_refuted`` for one that held under the check (a
numeric check never proves). The run passes when every verdict equals its expected one.

Audit files are plain Python modules loaded by path (:func:`dpaudit.loader.import_file`); each
defines a module-level ``AUDITS`` list.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

from dpaudit.errors import InvalidArgument, LoadError, NothingMatched
from dpaudit.results import Verdict

__all__ = ["AuditKind", "AuditDef", "SUITE_CONFIDENCE", "sampled", "exact", "sensitivity", "formal",
           "seed_claim", "load_file", "load_audits", "DEFAULT_AUDIT_DIR"]

DEFAULT_AUDIT_DIR = "audits"
_ID = re.compile(r"^[a-z0-9][a-z0-9._/-]*$")


class AuditKind(str, Enum):
    """The evidence an audit produces (the ``kind`` of its record)."""

    SAMPLED = "audit"
    EXACT = "exact"
    SENSITIVITY = "sensitivity"
    FORMAL = "formal"
    SEED_CLAIM = "seed-claim"

    @property
    def description(self) -> str:
        return {"audit": "sampled audit", "exact": "exact audit", "sensitivity": "sensitivity search",
                "formal": "formal claim", "seed-claim": "seed claim"}[self.value]


@dataclass(frozen=True, slots=True)
class AuditDef:
    """One audit: ``id`` (stable, lower-case, ``[a-z0-9._/-]``), ``kind``, ``target`` (a spec, a
    function, a claim name, or a zero-argument factory returning one, called at run time), the
    keyword ``params`` of the engine, the ``expected`` verdict, a one-line ``description``, and
    where it was defined (``file``, ``line``; filled in when loaded)."""

    id: str
    kind: AuditKind
    target: Any
    params: Mapping[str, Any] = field(default_factory=dict)
    expected: Verdict = Verdict.NOT_REFUTED
    description: str = ""
    file: Optional[str] = None
    line: Optional[int] = None
    group: str = ""
    requires: tuple[str, ...] = ()

    def missing(self) -> tuple[str, ...]:
        """The modules in ``requires`` (``requires=`` of every kind) that cannot be imported here:
        such an audit is skipped, visibly, and never counted as passed."""
        import importlib.util

        return tuple(m for m in self.requires if importlib.util.find_spec(m) is None)

    @property
    def is_control(self) -> bool:
        """A negative control: a deliberately broken variant expected to be refuted (or to error)."""
        return self.expected in (Verdict.REFUTED, Verdict.ERROR)


def _define(kind: AuditKind, id: str, target: Any, expected: Any, description: str,
            params: Mapping[str, Any]) -> AuditDef:
    if not isinstance(id, str) or not _ID.match(id):
        raise InvalidArgument.bad("id", id, "a lower-case id of letters, digits and . _ / - ")
    exp = Verdict.named(expected, "expected")
    if kind in (AuditKind.SAMPLED, AuditKind.EXACT, AuditKind.SENSITIVITY) and exp is Verdict.PROVED:
        raise InvalidArgument(f"{id}: a {kind.description} can never prove; expect not_refuted")
    if kind is AuditKind.SEED_CLAIM and exp is Verdict.PROVED:
        raise InvalidArgument(f"{id}: a seed claim is checked numerically and can never be proved; "
                              "expect refuted or not_refuted")
    params = dict(params)
    requires = params.pop("requires", ())
    requires = (requires,) if isinstance(requires, str) else tuple(requires)
    frame = sys._getframe(2)  # the audit file's call of sampled(), exact(), ... (inspect.stack()
    # read the source lines of every frame: 0.3 s for the 152 audits)
    return AuditDef(id, kind, target, params, exp, description, frame.f_code.co_filename,
                    frame.f_lineno, requires=requires)


#: Default confidence of a sampled suite audit. The reference mechanisms are tight (their true ε
#: equals the claim), so each correct one is refuted with probability up to 1 − confidence; at
#: 99.9% per audit, a suite of up to 50 sampled audits keeps its family-wise confidence ≥ 95%
#: (Bonferroni), where 95% per audit would expect a false refutation in every 20.
SUITE_CONFIDENCE = 0.999


def sampled(id: str, target: Any, *, expected: Any = "not_refuted", description: str = "", **params: Any) -> AuditDef:
    """A black-box sampled audit of a MechanismSpec (``params`` go to :func:`dpaudit.audit`;
    ``confidence`` defaults to :data:`SUITE_CONFIDENCE`)."""
    params.setdefault("confidence", SUITE_CONFIDENCE)
    return _define(AuditKind.SAMPLED, id, target, expected, description, params)


def exact(id: str, target: Any, *, expected: Any = "not_refuted", description: str = "", **params: Any) -> AuditDef:
    """A white-box exact audit of a spec with its output law (``params`` go to :func:`dpaudit.exact_audit`)."""
    return _define(AuditKind.EXACT, id, target, expected, description, params)


def sensitivity(id: str, target: Any, *, expected: Any = "not_refuted", description: str = "",
                **params: Any) -> AuditDef:
    """A sensitivity search on a function (``params``, e.g. ``bound``, go to :func:`dpaudit.check_sensitivity`)."""
    return _define(AuditKind.SENSITIVITY, id, target, expected, description, params)


def formal(id: str, claim: str, *, expected: Any = "proved", description: str = "", **params: Any) -> AuditDef:
    """A formal claim of the z3 registry, by name (``params`` go to :func:`dpaudit.verify`)."""
    return _define(AuditKind.FORMAL, id, claim, expected, description, params)


def seed_claim(id: str, claim: Any, *, expected: Any = None, description: str = "") -> AuditDef:
    """A seed paper's statement re-checked numerically: ``claim`` is a
    :class:`dpaudit.reference.claims.types.SeedClaim` (anything with ``evaluate()`` returning a result
    with ``to_record()``), or a zero-argument factory of one. Running it evaluates that one claim's
    check. ``expected`` defaults to the claim's recorded verdict (``refuted`` for a statement shown
    false, ``not_refuted`` for one that held); a factory must state it; ``proved`` is refused."""
    if expected is None:
        expected = getattr(claim, "verdict", None)
        if expected is None:
            raise InvalidArgument(f"{id}: give expected= (refuted or not_refuted) for a claim built by a factory")
    return _define(AuditKind.SEED_CLAIM, id, claim, expected, description, {})


# -- loading --------------------------------------------------------------------------------------

def _audit_files(paths: Sequence[str]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            files += sorted(f for f in path.glob("*.py") if not f.name.startswith(("_", "conftest")))
        elif path.is_file():
            files.append(path)
        else:
            raise LoadError(f"{p}: no such file or folder (give audit files or folders, default {DEFAULT_AUDIT_DIR}/)")
    return files


def load_file(path: str | Path) -> list[AuditDef]:
    """The ``AUDITS`` of one audit file (LoadError with one line when it cannot be loaded)."""
    from dpaudit.loader import import_file

    module = import_file(str(path))
    audits = getattr(module, "AUDITS", None)
    if not isinstance(audits, (list, tuple)) or not all(isinstance(a, AuditDef) for a in audits):
        raise LoadError(f"{path}: define AUDITS = [...] of dpaudit.suite audits "
                        "(sampled, exact, sensitivity, formal, seed_claim)")
    rel = _display(Path(path))
    doc = (module.__doc__ or "").strip().splitlines()
    group = f"{rel}: {doc[0].rstrip('.')}" if doc else rel
    return [replace(a, file=rel, group=group) for a in audits]


def _display(path: Path) -> str:
    from dpaudit.report.model import relative_path

    return relative_path(str(path))


def load_audits(paths: Sequence[str] = (), ids: Optional[Iterable[str]] = None) -> list[AuditDef]:
    """Every audit in ``paths`` (files or folders; default ``audits/``), in file order, optionally
    only those whose id is in ``ids`` (an unknown id is a NothingMatched, exit 5). Ids must be unique."""
    files = _audit_files(list(paths) or [DEFAULT_AUDIT_DIR])
    audits: list[AuditDef] = []
    seen: dict[str, str] = {}
    for f in files:
        for a in load_file(f):
            if a.id in seen:
                raise LoadError(f"{a.file}: audit id {a.id!r} is also defined in {seen[a.id]}")
            seen[a.id] = a.file or ""
            audits.append(a)
    if ids:
        wanted = list(dict.fromkeys(ids))
        unknown = [i for i in wanted if i not in seen]
        if unknown:
            raise NothingMatched(f"no audit with id {', '.join(map(repr, unknown))} in "
                                 f"{', '.join(map(str, files)) or 'the files given'} (dpaudit list names the "
                                 f"audits of ./audits)")
        audits = [a for a in audits if a.id in wanted]
    return audits
