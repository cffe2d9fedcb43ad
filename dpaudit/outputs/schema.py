"""Detection: the kind of a batch of outputs (:class:`OutputSchema`), from the classes of its elements.

The kinds and how each is detected are described in :mod:`dpaudit.outputs`; this module holds the
schema, the element classes of one output, and the rule that combines a batch's classes into a kind
(a :class:`~dpaudit.errors.MechanismError` where they cannot be one kind).
"""

from __future__ import annotations

import numbers
import reprlib
from decimal import Decimal
from dataclasses import dataclass, field, replace
from typing import Any, Optional

import numpy as np

from dpaudit.errors import MechanismError
from dpaudit.spec import OutputKind

__all__ = ["OutputSchema", "MIN_POSITIONS", "MAX_POSITIONS", "EXACT_INT", "ElementClass",
           "element_class", "classes_of", "big_int", "lengths_of", "mixed_schema", "kind_of",
           "short"]

#: a MIXED encoding keeps W element columns (the selection samples are kept in memory: 8·(2 + W)
#: bytes a row): the one length of a first batch whose outputs all have it (at least
#: MIN_POSITIONS), else MAX_POSITIONS; a float past W is the mechanism's ERROR
MIN_POSITIONS = 4
MAX_POSITIONS = 16


@dataclass(frozen=True, slots=True)
class OutputSchema:
    """The detected kind of a mechanism's outputs.

    ``length`` is the vector length (VECTOR only). ``ordered`` says whether the encoded values are
    ordered numbers (REAL and integer DISCRETE), so that threshold events make sense; categories,
    bools and None are compared as atoms only.
    """

    kind: OutputKind
    length: Optional[int] = None
    ordered: bool = True
    integer: bool = False
    #: the keys of dict outputs, in the order of the encoded coordinates (VECTOR only)
    names: Optional[tuple] = field(default=None, compare=False)
    #: "number", "json" or "template" where the outputs are texts read as what they hold
    text: Optional[str] = field(default=None, compare=False)
    #: dict outputs whose keys vary, read as their items (MIXED only)
    keyed: bool = field(default=False, compare=False)

    @property
    def description(self) -> str:
        if self.text is not None:
            spelled = {"number": "numbers", "json": "JSON"}.get(self.text)
            how = f"spells {spelled}" if spelled else "holds numbers (template, numbers)"
            return f"{replace(self, text=None).description}, read from text that {how}"
        if self.kind is OutputKind.VECTOR and self.names is not None:
            return f"dict of {self.length} numbers (keys {', '.join(map(repr, self.names))})"
        if self.kind is OutputKind.VECTOR:
            return f"fixed-length numeric vector (length {self.length})"
        if self.kind is OutputKind.MIXED and self.keyed:
            return (f"dict whose keys vary, read as its (key, value) items in key order "
                    f"({self.length} positions encoded)")
        if self.kind is OutputKind.MIXED:
            return f"tuple or list of varying length or None ({self.length} positions encoded)"
        if self.kind is OutputKind.DISCRETE:
            return "integer" if self.integer else "categorical"
        return self.kind.description


class ElementClass:
    """The classes of one output's element, from a set of Python types (texts: messages name them)."""

    NONE, BOOL, INT, REAL, VECTOR, CATEGORY = "None", "bool", "int", "float", "vector", "category"
    LABELLED, SET = "sequence with text", "set"


_NONE, _BOOL, _INT, _REAL, _VEC, _CAT = (ElementClass.NONE, ElementClass.BOOL, ElementClass.INT,
                                         ElementClass.REAL, ElementClass.VECTOR,
                                         ElementClass.CATEGORY)
_LABELLED, _SET = ElementClass.LABELLED, ElementClass.SET


def element_class(v: Any) -> str:
    t = type(v)
    if t is tuple or t is list:  # the common case first: one type test per output
        return _VEC if _numeric_sequence(v) else _LABELLED if _labelled_sequence(v) else _CAT
    if t is set or t is frozenset:
        return _SET
    if v is None:
        return _NONE
    if isinstance(v, (bool, np.bool_)):
        return _BOOL
    if isinstance(v, np.timedelta64):  # numpy makes it an Integral: a duration, read as seconds
        return _CAT
    if isinstance(v, numbers.Integral):
        return _INT
    if isinstance(v, (numbers.Real, Decimal)):
        return _REAL
    if isinstance(v, (list, tuple, np.ndarray)):
        return _VEC if _numeric_sequence(v) else _CAT
    if isinstance(v, (set, frozenset)):
        return _SET
    return _CAT


def _numeric_sequence(v: Any) -> bool:
    if isinstance(v, np.ndarray):
        return v.ndim == 1 and (v.dtype.kind in "biuf")
    for x in v:
        t = type(x)
        if t is not float and t is not int and not isinstance(x, (numbers.Real, np.bool_, Decimal)):
            return False
    return True


def _labelled_sequence(v: Any) -> bool:
    """A sequence of numbers, texts and None with at least one text or None (``("mean", 2.5)``):
    audited as MIXED, the texts and None in its skeleton."""
    if isinstance(v, np.ndarray):
        return False
    seen = False
    for x in v:
        if isinstance(x, str) or x is None:
            seen = True
        elif not isinstance(x, (numbers.Real, np.bool_, Decimal)):
            return False
    return seen


def classes_of(raw: list) -> dict[str, Any]:
    """Element class -> first output of that class (one pass over the distinct types)."""
    found: dict[str, Any] = {}
    seen_types: set = set()
    for v in raw:
        t = type(v)
        if t in seen_types and t not in (list, tuple, np.ndarray):
            continue
        seen_types.add(t)
        c = element_class(v)
        found.setdefault(c, v)
    return found


#: integers of larger magnitude are not all exact in float64
EXACT_INT = 2 ** 53


def big_int(seq: Any) -> Optional[Any]:
    """The first integer of ``seq`` beyond ±:data:`EXACT_INT` (None when there is none)."""
    if isinstance(seq, np.ndarray):
        if seq.dtype.kind not in "iu" or not seq.size:
            return None
        big = np.flatnonzero((seq > EXACT_INT) | (seq < -EXACT_INT)) if seq.dtype.kind == "i" \
            else np.flatnonzero(seq > EXACT_INT)
        return seq.flat[big[0]].item() if big.size else None
    for v in seq:
        if isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) \
                and not -EXACT_INT <= v <= EXACT_INT:
            return v
    return None


def _bounded_repr() -> reprlib.Repr:
    r = reprlib.Repr()
    r.maxlevel = 4
    r.maxlist = r.maxtuple = r.maxset = r.maxfrozenset = r.maxdict = r.maxdeque = 16
    r.maxstring = r.maxother = 100
    r.maxlong = 60
    return r


#: repr of outputs in messages, bounded in depth and length (a list of the same list repeated
#: would have an exponentially long plain repr)
_REPR = _bounded_repr()


def short(v: Any, limit: int = 80) -> str:
    if isinstance(v, np.ndarray):
        v = v.reshape(-1)[:32].tolist() if v.size > 32 else v.tolist()
    elif isinstance(v, np.generic):
        v = v.tolist()
    try:
        text = _REPR.repr(v)
    except ValueError:  # an int too long for Python to write as text (4,300 digits), inside
        text = f"<a {type(v).__name__} holding an int of over 4,300 digits>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def lengths_of(seq: list) -> set:
    return {len(v) for v in seq if type(v) in (list, tuple, np.ndarray)}


def mixed_schema(lengths: set) -> OutputSchema:
    """A MIXED schema: as many columns as the one length of a first batch whose outputs all have
    it (at least :data:`MIN_POSITIONS`), else :data:`MAX_POSITIONS`, so that outputs of varying
    length (a first batch of empty ones included) keep every number a later, longer one holds up
    to that; a float past the columns is the mechanism's ERROR (it was left out: a blind spot)."""
    one = next(iter(lengths)) if len(lengths) == 1 else 0
    w = max(MIN_POSITIONS, one) if 0 < one <= MAX_POSITIONS else MAX_POSITIONS
    return OutputSchema(OutputKind.MIXED, length=w, ordered=False)


def kind_of(found: dict[str, Any], data: Any, lengths: Optional[set] = None) -> OutputSchema:
    """Combine the element classes of one batch into a schema (or a MechanismError);
    ``lengths``: the lengths of its sequences, when it has any."""
    classes = set(found)
    # None among sequences is a length of its own (0): the batch's lengths vary
    lengths = set(lengths or ()) | ({0} if _NONE in classes else set())
    if _VEC in classes and classes <= {_VEC, _NONE} and (
            _NONE in classes or len(lengths) > 1 or 0 in lengths):
        return mixed_schema(lengths)  # an empty sequence is a length of its own, not a vector
    if _LABELLED in classes and classes <= {_LABELLED, _VEC, _NONE}:
        return mixed_schema(lengths)
    if _NONE in classes and _REAL in classes and classes <= {_NONE, _REAL, _INT}:
        return mixed_schema({0, 1})  # a value or None: as its 1-tuple or None, so its law is tested too
    if classes == {_NONE}:
        return OutputSchema(OutputKind.NONE, ordered=False)
    if classes == {_BOOL}:
        return OutputSchema(OutputKind.BOOL, ordered=False)
    if classes == {_INT}:
        return OutputSchema(OutputKind.DISCRETE, ordered=True, integer=True)
    if classes <= {_INT, _REAL}:
        return OutputSchema(OutputKind.REAL)
    if classes == {_VEC}:
        return OutputSchema(OutputKind.VECTOR, length=len(found[_VEC]))
    if _VEC in classes or (_BOOL in classes and classes & {_INT, _REAL}) or {_REAL, _CAT} <= classes:
        a, b = sorted(classes)[:2]
        raise MechanismError(f"changed output type between calls: returned {a} "
                             f"{short(found[a])} and {b} {short(found[b])}", data, found[b])
    return OutputSchema(OutputKind.DISCRETE, ordered=False)
