"""Output kinds: detect what a mechanism returns, validate every output, encode it as numbers.

A mechanism may return (DESIGN.md, "A mechanism"): a real scalar, an integer or a hashable
category, a bool, a fixed-length numeric vector, or ``None``. The kind is detected from the first
batch of outputs (or taken from the declaration ``@dpaudit.mechanism(output=...)``), and every
later batch is checked against it. NaN, +inf and −inf are output values like any other (atoms of
the output space: a mechanism that returns NaN on one dataset and numbers on its neighbour leaks
which one it ran on). A mechanism that changes the type or the length of its output between calls,
or returns something unhashable where a category is expected, raises
:class:`~dpaudit.errors.MechanismError` naming the offending output and the dataset.

Encoding (what the estimators see):

=====================  ===========================================================================
kind                   encoded batch
=====================  ===========================================================================
``REAL``               float64 array (n,) of the values
``DISCRETE`` integer   float64 array (n,) of the integer values (exact below 2**53)
``DISCRETE`` category  float64 array (n,) of codes 0, 1, 2, ... in order of first appearance
``BOOL``               float64 array (n,) of 0.0 / 1.0
``NONE``               float64 array (n,) of 0.0
``VECTOR``             float64 array (n, d)
=====================  ===========================================================================

``NONE`` and ``BOOL`` widen to a category when a later output is another hashable scalar
(``None`` keeps code 0, ``False``/``True`` keep 0/1), so a mechanism answering ``None`` on one
dataset and an index on another is audited, not rejected. A REAL kind accepts ints among its floats.
Mixing a number with ``None`` or integers with other hashables gives categories; a float mixed
with a non-number, or a bool mixed with a number, is a type change.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Hashable, Optional

import numpy as np

from dpaudit.errors import MechanismError
from dpaudit.spec import OutputKind

__all__ = ["OutputSchema", "OutputEncoder"]


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

    @property
    def description(self) -> str:
        if self.kind is OutputKind.VECTOR:
            return f"fixed-length numeric vector (length {self.length})"
        if self.kind is OutputKind.DISCRETE:
            return "integer" if self.integer else "categorical"
        return self.kind.description


#: the one NaN object that stands for every NaN category (dict lookups try identity first)
_NAN = float("nan")

# element classes, from a set of Python types
_NONE, _BOOL, _INT, _REAL, _VEC, _CAT = "None", "bool", "int", "float", "vector", "category"


def _element_class(v: Any) -> str:
    if v is None:
        return _NONE
    if isinstance(v, (bool, np.bool_)):
        return _BOOL
    if isinstance(v, numbers.Integral):
        return _INT
    if isinstance(v, numbers.Real):
        return _REAL
    if isinstance(v, (list, tuple, np.ndarray)):
        return _VEC if _numeric_sequence(v) else _CAT
    return _CAT


def _numeric_sequence(v: Any) -> bool:
    if isinstance(v, np.ndarray):
        return v.ndim == 1 and (v.dtype.kind in "biuf")
    return all(isinstance(x, numbers.Real) or isinstance(x, np.bool_) for x in v)


def _classes(raw: list) -> dict[str, Any]:
    """Element class -> first output of that class (one pass over the distinct types)."""
    found: dict[str, Any] = {}
    seen_types: set = set()
    for v in raw:
        t = type(v)
        if t in seen_types and t not in (list, tuple, np.ndarray):
            continue
        seen_types.add(t)
        c = _element_class(v)
        found.setdefault(c, v)
    return found


def _short(v: Any, limit: int = 80) -> str:
    if isinstance(v, (np.ndarray, np.generic)):
        v = v.tolist()
    text = repr(v)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _kind_of(found: dict[str, Any], data: Any) -> OutputSchema:
    """Combine the element classes of one batch into a schema (or a MechanismError)."""
    classes = set(found)
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
                             f"{_short(found[a])} and {b} {_short(found[b])}", data, found[b])
    return OutputSchema(OutputKind.DISCRETE, ordered=False)


class OutputEncoder:
    """Detects the output kind from the first batch, then validates and encodes every batch.

    Stateful only through the category codebook (codes in order of first appearance), so the
    encoding of a run is a deterministic function of its outputs.
    """

    def __init__(self, declared: Optional[OutputKind] = None) -> None:
        self.declared = declared
        self.schema: Optional[OutputSchema] = None
        self._codes: dict[Hashable, int] = {}
        self._atoms: list = []

    # ------------------------------------------------------------------ public
    def encode(self, raw: Any, data: Any) -> np.ndarray:
        """Validate one batch of raw outputs of ``data`` and return its encoding (module docstring)."""
        if isinstance(raw, np.ndarray) and raw.dtype.kind in "biuf":
            return self._encode_array(raw, data)
        seq = list(raw) if not isinstance(raw, list) else raw
        if not seq:
            return self._empty()
        # a 0-d array (what numpy reductions of arrays often give) is the scalar it holds
        seq = [v.item() if type(v) is np.ndarray and v.ndim == 0 else v for v in seq]
        found = _classes(seq)
        schema = _kind_of(found, data)
        self._accept(schema, found, data)
        return self._encode_list(seq, data)

    def atom(self, code: float) -> Any:
        """The output a code stands for (categories, bools and None); numbers stand for themselves."""
        s = self.schema
        if s is None or s.ordered:
            return code
        if s.kind is OutputKind.NONE:
            return None
        if s.kind is OutputKind.BOOL:
            return bool(code)
        k = int(code)
        return self._atoms[k] if 0 <= k < len(self._atoms) else None

    # ------------------------------------------------------------------ schema
    def _accept(self, schema: OutputSchema, found: dict[str, Any], data: Any) -> None:
        """Check a batch's schema against the current one; widen where the module docstring says."""
        cur = self.schema
        if cur is None:
            self.schema = self._declared(schema, found, data)
            if self.schema.kind is OutputKind.BOOL:
                self._seed_codes([False, True])
            elif self.schema.kind is OutputKind.NONE:
                self._seed_codes([None])
            return
        if cur == schema:
            return
        k, n = cur.kind, schema.kind
        numeric = (OutputKind.REAL, OutputKind.DISCRETE)
        if k in numeric and cur.ordered and n in numeric and schema.ordered:
            self.schema = OutputSchema(OutputKind.REAL)  # ints among reals: both are numbers
            return
        scalar_atoms = n in (OutputKind.NONE, OutputKind.BOOL, OutputKind.DISCRETE, OutputKind.REAL)
        if k is OutputKind.DISCRETE and not cur.ordered and scalar_atoms:
            return
        if k is OutputKind.NONE and scalar_atoms:
            self.schema = OutputSchema(OutputKind.DISCRETE, ordered=False)
            return
        if k is OutputKind.BOOL and n in (OutputKind.NONE, OutputKind.DISCRETE) and not schema.ordered:
            self.schema = OutputSchema(OutputKind.DISCRETE, ordered=False)
            return
        if k is OutputKind.VECTOR and n is OutputKind.VECTOR:
            v = found[_VEC]
            raise MechanismError(f"changed output length between calls: returned {_short(v)} "
                                 f"of length {len(v)} after vectors of length {cur.length}", data, v)
        bad_class = next(iter(found))
        v = found[bad_class]
        raise MechanismError(f"changed output type between calls: returned {bad_class} "
                             f"{_short(v)} after {cur.description} outputs", data, v)

    def _declared(self, schema: OutputSchema, found: dict[str, Any], data: Any) -> OutputSchema:
        d = self.declared
        if d is None or d is schema.kind:
            return schema
        if d is OutputKind.DISCRETE and schema.kind in (OutputKind.REAL, OutputKind.BOOL, OutputKind.NONE):
            return OutputSchema(OutputKind.DISCRETE, ordered=False)
        if d is OutputKind.REAL and schema.kind is OutputKind.DISCRETE and schema.integer:
            return OutputSchema(OutputKind.REAL)
        v = next(iter(found.values()))
        raise MechanismError(f"returned {_short(v)}, not the declared {d.description} output", data, v)

    def _seed_codes(self, atoms: list) -> None:
        for a in atoms:
            if a not in self._codes:
                self._codes[a] = len(self._atoms)
                self._atoms.append(a)

    # ------------------------------------------------------------------ encoding
    def _empty(self) -> np.ndarray:
        s = self.schema
        if s is not None and s.kind is OutputKind.VECTOR:
            return np.empty((0, s.length))
        return np.empty(0)

    def _encode_array(self, raw: np.ndarray, data: Any) -> np.ndarray:
        if raw.ndim == 1:
            if raw.size == 0:
                return self._empty()
            kind = raw.dtype.kind
            cls = _BOOL if kind == "b" else _INT if kind in "iu" else _REAL
            self._accept(_kind_of({cls: raw[0]}, data), {cls: raw[0]}, data)
            if not self.schema.ordered and self.schema.kind is not OutputKind.BOOL:
                return self._encode_list(raw.tolist(), data)
            out = raw.astype(float)
        elif raw.ndim == 2:
            if raw.shape[0] == 0:
                return self._empty()
            self._accept(OutputSchema(OutputKind.VECTOR, length=raw.shape[1]), {_VEC: raw[0]}, data)
            out = raw.astype(float)
        else:
            raise MechanismError(f"returned an array of shape {raw.shape[1:]} per output; "
                                 f"outputs must be scalars or 1-D vectors", data)
        return out

    def _encode_list(self, seq: list, data: Any) -> np.ndarray:
        s = self.schema
        if s.kind is OutputKind.REAL or (s.kind is OutputKind.DISCRETE and s.ordered):
            return np.fromiter((float(v) for v in seq), dtype=float, count=len(seq))
        if s.kind is OutputKind.VECTOR:
            try:
                out = np.asarray([np.asarray(v, dtype=float) for v in seq], dtype=float)
            except ValueError:
                out = None
            if out is None or out.ndim != 2 or out.shape[1] != s.length:
                for v in seq:
                    if len(v) != s.length:
                        raise MechanismError(f"changed output length between calls: returned "
                                             f"{_short(v)} of length {len(v)} after vectors of "
                                             f"length {s.length}", data, v)
                raise MechanismError("returned vectors that are not all numeric", data)
            return out
        codes = self._codes
        out = np.empty(len(seq))
        for i, v in enumerate(seq):
            if isinstance(v, np.generic):
                v = v.item()
            if isinstance(v, float) and v != v:
                v = _NAN  # every NaN is one atom (NaN != NaN, so one canonical object stands for it)
            try:
                c = codes.get(v)
            except TypeError:
                raise MechanismError(f"returned an unhashable {type(v).__name__} where a category "
                                     f"is expected: {_short(v)}", data, v) from None
            if c is None:
                c = codes[v] = len(self._atoms)
                self._atoms.append(v)
            out[i] = c
        return out
