"""Output kinds: detect what a mechanism returns, validate every output, encode it as numbers.

A mechanism may return (docs/ARCHITECTURE.md#a-mechanism): a real scalar, an integer or a hashable
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
``DISCRETE`` integer   float64 array (n,) of the integer values (all within ±2**53, so exact)
``DISCRETE`` category  float64 array (n,) of codes 0, 1, 2, ... in order of first appearance
``BOOL``               float64 array (n,) of 0.0 / 1.0
``NONE``               float64 array (n,) of 0.0
``VECTOR``             float64 array (n, d)
``MIXED``              float64 array (n, 2 + W): skeleton code, length, the W first elements
=====================  ===========================================================================

``MIXED`` holds numeric tuples / lists of varying length, or mixed with ``None`` (an SVT answering
``(index, noisy value)`` or ``None``; a list of positive indices), and real numbers mixed with
``None`` (a value or no answer), each number encoded as the 1-tuple ``(v,)``. Each output is split into its
discrete *skeleton* — the integers and bools it holds, with every float replaced by a marker, and
its length (``None`` and ``[]`` are skeletons of their own) — coded 0, 1, 2, ... in order of first
appearance (``None`` and ``[]``, the two spellings of "no answer", share one code), and its
elements: column 0 is the skeleton code, column 1 the length, column 2 + j
element j as a number (NaN past the end). W is fixed when the kind is detected (the longest output
of that batch, at least :data:`MIN_POSITIONS`, at most :data:`MAX_POSITIONS`); elements past W are
left out of the columns but never out of the skeleton. A tuple and a list with the same elements
encode alike, so the events that
:mod:`dpaudit.estimators.joint` builds on this encoding do not depend on which one a user writes.

A complex number is audited as the pair (Re z, Im z), a complex vector as (Re z₀, Im z₀, Re z₁, …)
(as categories almost every value would be seen once, and no event could have power).

Text that spells numbers (``f"{x:.3f}"``, ``str(x)``) is audited as those numbers, and JSON text
of objects or arrays (``json.dumps({"count": x})``) as the values it parses to, when every output
of the first batch parses (a later output that does not is an error; declare ``output="discrete"``
to audit the texts as categories). Other texts whose first batch holds numbers and is mostly
distinct (at least :data:`TEMPLATE_MIN_TEXTS` texts, more than half of them distinct: log lines,
formatted reports) are read as templates: ``"answer=1.25 (n=3)"`` as the labelled tuple
``("answer=# (n=#)", 1.25, 3.0)``, audited as MIXED with the template in the skeleton. A
``Decimal`` is a real number. As categories, a released number written as text or as a Decimal was
seen once per value, and no event had power. Parsing is post-processing (two texts of one number
become one output), so the bounds stay sound.

Nested lists, tuples, arrays and dicts (``[[a, b], [c, d]]``, ``(index, array)``, a dict of lists)
are audited as the tuple of their leaves, in order; where the first nested batch shows outputs of
several shapes (``[[1], [2, 3]]`` and ``[[1, 2], [3]]``), each output's shape leads as a text, so
where the boundaries fall is audited too.

Times are audited as seconds since 1970-01-01 (a ``date`` as its day number), durations as seconds,
and a pandas or polars Series or DataFrame (anything with ``to_numpy``) as its values, flattened;
as categories each time was seen once, and a table was an unhashable output.

A dataclass is audited as the dict of its fields, a namedtuple as its tuple.

Only plain values are audited (:func:`dpaudit.output_values.plain_outputs`): numbers (Python's and
numpy's), texts and bytes, None, times, ``Decimal`` and ``Fraction``, and tuples, lists, dicts,
sets and numpy arrays of them, plus the conversions above whose result is all a value holds (a
dataclass or a namedtuple without attributes of their own, a pandas or polars table, a torch or
jax array). Any other object, or a subclass of a plain type (a float carrying an attribute), is an
error that says so: an audit of its repr or of its float would be an audit of part of the release
only, and a mechanism could hide the exact answer in the rest. A text or bytes output holds at
most :data:`~dpaudit.output_values.MAX_TEXT` characters, a batch's outputs at most
:data:`~dpaudit.output_values.MAX_BATCH_TEXT` in all (an output is a release, not a log).

A dict is audited as the tuple of its values in the order of its keys, sorted (the first dict's
keys; every later dict must have the same keys): a dict of numbers is a vector whose coordinates
events name by key (``output['count'] ≥ 3``), other dicts are what their tuples are.

Integers beyond ±2**53, which float64 would merge with their neighbours (2**60 and 2**60 + 1 are
one double), are categories: a batch holding one makes the kind a category, audited exactly on its
codes (a later batch that brings the first one after smaller integers is an error saying so). A
numeric array of any shape is audited as its flattened vector (C order: element [i, j] of an r × c
matrix is coordinate i·c + j).

``NONE`` and ``BOOL`` widen to a category when a later output is another hashable scalar
(``None`` keeps code 0, ``False``/``True`` keep 0/1), so a mechanism answering ``None`` on one
dataset and an index on another is audited, not rejected. A REAL kind accepts ints among its floats.
Mixing a number with ``None`` or integers with other hashables gives categories; a float mixed
with a non-number, or a bool mixed with a number, is a type change. Numeric sequences of several
lengths, or with ``None``, are ``MIXED`` (declare ``output="mixed"`` when the first batch might
show only one length); a fixed length seen first and another one later is a length change.
"""

from __future__ import annotations

import dataclasses as _dataclasses
import json
import math
import numbers
import reprlib
from decimal import Decimal
from dataclasses import dataclass, field, replace
from typing import Any, Hashable, Optional

import numpy as np

from dpaudit.errors import MechanismError
from dpaudit.output_values import (MAX_LEAVES, NEG_ZERO, NUMBER_PATTERN, TEMPLATE_MIN_TEXTS,
                                   TIME_TYPES, NotPlain, TooNested, as_tuple, converted,
                                   convertible, decomplex, element_value, fields_of, flatten,
                                   holds_zero, is_complex, is_nested, library_value, not_plain,
                                   parses, plain_outputs, signed_zeros, text_template, to_float,
                                   nan_payloads)
from dpaudit.spec import OutputKind

__all__ = ["OutputSchema", "OutputEncoder", "MIN_POSITIONS", "MAX_POSITIONS"]

#: a MIXED encoding keeps at least this many, at most this many element columns (the selection
#: samples are kept in memory: 8·(2 + W) bytes a row)
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
        if self.kind is OutputKind.MIXED:
            return f"tuple or list of varying length or None ({self.length} positions encoded)"
        if self.kind is OutputKind.DISCRETE:
            return "integer" if self.integer else "categorical"
        return self.kind.description


#: the one NaN object that stands for every NaN category (dict lookups try identity first)
_NAN = float("nan")

# element classes, from a set of Python types
_NONE, _BOOL, _INT, _REAL, _VEC, _CAT = "None", "bool", "int", "float", "vector", "category"
_LABELLED, _SET = "sequence with text", "set"


def _element_class(v: Any) -> str:
    t = type(v)
    if t is tuple or t is list:  # the common case first: one type test per output
        return _VEC if _numeric_sequence(v) else _LABELLED if _labelled_sequence(v) else _CAT
    if t is set or t is frozenset:
        return _SET
    if v is None:
        return _NONE
    if isinstance(v, (bool, np.bool_)):
        return _BOOL
    if isinstance(v, numbers.Integral):
        return _INT
    if isinstance(v, (numbers.Real, Decimal)):
        return _REAL
    if isinstance(v, (list, tuple, np.ndarray)):
        return _VEC if _numeric_sequence(v) else _CAT
    if isinstance(v, (set, frozenset)):
        return _SET
    return _CAT


class _Real:
    """The marker of a float element in a MIXED skeleton."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "·"


REAL_MARK = _Real()


def _skeleton(e: Any) -> Any:
    t = type(e)
    if t is float:
        return REAL_MARK
    if t is int or t is str or e is None:  # texts and None inside a sequence are discrete
        return e
    if isinstance(e, str):
        return str(e)
    if isinstance(e, (bool, np.bool_)):
        return bool(e)
    if isinstance(e, numbers.Integral):
        return int(e)
    return REAL_MARK


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


#: integers of larger magnitude are not all exact in float64
EXACT_INT = 2 ** 53


def _big_int(seq: Any) -> Optional[Any]:
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


def _key_list(keys: Any) -> str:
    return "(" + ", ".join(sorted(map(repr, keys))) + ")"


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


def _short(v: Any, limit: int = 80) -> str:
    if isinstance(v, np.ndarray):
        v = v.reshape(-1)[:32].tolist() if v.size > 32 else v.tolist()
    elif isinstance(v, np.generic):
        v = v.tolist()
    text = _REPR.repr(v)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _lengths(seq: list) -> set:
    return {len(v) for v in seq if type(v) in (list, tuple, np.ndarray)}


def _mixed(lengths: set) -> OutputSchema:
    w = min(MAX_POSITIONS, max([MIN_POSITIONS, *lengths]))
    return OutputSchema(OutputKind.MIXED, length=w, ordered=False)


def _kind_of(found: dict[str, Any], data: Any, lengths: Optional[set] = None) -> OutputSchema:
    """Combine the element classes of one batch into a schema (or a MechanismError);
    ``lengths``: the lengths of its sequences, when it has any."""
    classes = set(found)
    if _VEC in classes and classes <= {_VEC, _NONE} and (
            _NONE in classes or len(lengths or ()) > 1 or 0 in (lengths or ())):
        return _mixed(lengths or set())  # an empty sequence is a length of its own, not a vector
    if _LABELLED in classes and classes <= {_LABELLED, _VEC, _NONE}:
        return _mixed(lengths or set())
    if _NONE in classes and _REAL in classes and classes <= {_NONE, _REAL, _INT}:
        return _mixed({1})  # a value or None: the value as a 1-tuple, so its law is tested too
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
        self._skeleton_codes: dict[Any, int] = {}
        self._skeletons: list = []
        self._keys: Optional[tuple] = None  # dict outputs: their keys, in encoding order
        # nested outputs: whether their shape leads as a text (decided on the first nested batch)
        self._shaped: Optional[bool] = None
        # text outputs: None until the first batch is seen, then "number", "json" or False
        self._text: Any = None if declared is not OutputKind.DISCRETE else False

    # ------------------------------------------------------------------ public
    def encode(self, raw: Any, data: Any) -> np.ndarray:
        """Validate one batch of raw outputs of ``data`` and return its encoding (module docstring)."""
        if not isinstance(raw, (np.ndarray, list)) and convertible(raw) \
                and not isinstance(raw, TIME_TYPES) and library_value(raw):  # a Series or a DataFrame
            raw = np.asarray(raw.to_numpy())
            if raw.dtype.kind not in "biufc":
                raw = list(raw) if raw.ndim == 1 else [list(r) for r in raw]
        if isinstance(raw, np.ndarray) and type(raw) is not np.ndarray:
            # a masked array or a matrix carries more than its values (a mask, a shape rule)
            raise MechanismError(not_plain(raw).cause, data, None)
        if isinstance(raw, np.ndarray) and raw.dtype.kind in "US":  # a batch of numpy texts
            raw = raw.tolist()
        if isinstance(raw, np.ndarray) and raw.dtype.kind in "mM":  # a batch of times
            raw = [converted(x) for x in raw]
        if isinstance(raw, np.ndarray) and raw.dtype.kind == "c" and raw.ndim:
            # a batch of complex numbers (or vectors): each output's real and imaginary parts
            raw = np.stack((raw.real, raw.imag), axis=-1).reshape(raw.shape[0], -1)
        if isinstance(raw, np.ndarray) and raw.dtype.kind in "biuf":
            why = nan_payloads(raw)
            if why is not None:  # every NaN is one value: a payload would be an unaudited release
                raise MechanismError(why, data, None)
            return self._encode_array(raw, data)
        seq = list(raw) if not isinstance(raw, list) else raw
        if not seq:
            return self._empty()
        try:  # plain values only, of bounded size (module docstring)
            seq = plain_outputs(seq)
        except NotPlain as exc:
            raise MechanismError(exc.cause, data, exc.value) from None
        if self._text is not False and (self._text or isinstance(seq[0], str) or (
                seq[0] is None and self.schema is None)):
            seq = self._parse_text(seq, data)
        if _dataclasses.is_dataclass(seq[0]) and not isinstance(seq[0], type):
            seq = [fields_of(v) for v in seq]  # a dataclass as the dict of its fields
        if self._keys is not None or type(seq[0]) is dict:
            seq = self._undict(seq, data)
        # a 0-d array (what numpy reductions of arrays often give) is the scalar it holds, an
        # array of several dimensions its flattened vector
        seq = [v if type(v) is not np.ndarray or v.ndim == 1 else v.item() if v.ndim == 0
               else v.reshape(-1) for v in seq]
        found = _classes(seq)
        if _CAT in found and (convertible(found[_CAT]) or (
                type(found[_CAT]) in (list, tuple) and any(map(convertible, found[_CAT])))):
            seq = [converted(v) for v in seq]  # times, durations, Series and DataFrames
            found = _classes(seq)
        if _CAT in found and is_nested(found[_CAT]):
            seq = self._unnest(seq, data)
            found = _classes(seq)
        if _SET in found:  # sets as sorted tuples
            seq = [as_tuple(v) for v in seq]
            found = _classes(seq)
        if _CAT in found and is_complex(found[_CAT]):
            seq = [decomplex(v) for v in seq]
            found = _classes(seq)
        if _INT in found:
            big = _big_int(seq)
            if big is not None:
                found[_CAT] = big  # exact as a category (float64 would merge it with its neighbours)
        lengths = _lengths(seq) if _VEC in found or _LABELLED in found else None
        schema = _kind_of(found, data, lengths)
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
            if self._keys is not None and self.schema.kind is OutputKind.VECTOR \
                    and len(self._keys) == self.schema.length:  # not when values were nested
                self.schema = replace(self.schema, names=self._keys)
            if self._text:
                self.schema = replace(self.schema, text=self._text)
            if self.schema.kind is OutputKind.BOOL:
                self._seed_codes([False, True])
            elif self.schema.kind is OutputKind.NONE:
                self._seed_codes([None])
            return
        if cur == schema:
            return
        k, n = cur.kind, schema.kind
        if k is OutputKind.MIXED and (n in (OutputKind.MIXED, OutputKind.VECTOR, OutputKind.NONE)
                                      or (n in (OutputKind.REAL, OutputKind.DISCRETE) and schema.ordered)):
            return
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
        if k is OutputKind.VECTOR and n in (OutputKind.VECTOR, OutputKind.MIXED, OutputKind.NONE):
            v = next((x for x in found.values() if x is None or len(x) != cur.length), None)
            what = "None" if v is None else f"{_short(v)} of length {len(v)}"
            raise MechanismError(f"changed output length between calls: returned {what} after "
                                 f"vectors of length {cur.length} (declare output='mixed' for "
                                 f"outputs of varying length)", data, v)
        big = found.get(_CAT)
        if k is OutputKind.DISCRETE and cur.integer and isinstance(big, numbers.Integral):
            raise MechanismError(f"returned the integer {big}, beyond ±2**53, after smaller "
                                 f"integers: float64 cannot hold it exactly (return such outputs "
                                 f"as str to audit them as categories)", data, big)
        bad_class = next(iter(found))
        v = found[bad_class]
        raise MechanismError(f"changed output type between calls: returned {bad_class} "
                             f"{_short(v)} after {cur.description} outputs", data, v)

    def _declared(self, schema: OutputSchema, found: dict[str, Any], data: Any) -> OutputSchema:
        d = self.declared
        if d is None or d is schema.kind:
            return schema
        if d is OutputKind.MIXED and schema.kind in (OutputKind.VECTOR, OutputKind.NONE):
            return _mixed({schema.length or 0})
        if d is OutputKind.DISCRETE and schema.kind in (OutputKind.REAL, OutputKind.BOOL, OutputKind.NONE):
            return OutputSchema(OutputKind.DISCRETE, ordered=False)
        if d is OutputKind.REAL and schema.kind is OutputKind.DISCRETE and schema.integer:
            return OutputSchema(OutputKind.REAL)
        v = next(iter(found.values()))
        raise MechanismError(f"returned {_short(v)}, not the declared {d.description} output", data, v)

    def _unnest(self, seq: list, data: Any = None) -> list:
        """Nested lists, tuples, arrays and dicts as the tuple of their leaves (module docstring);
        where the first batch shows several shapes, every output's shape leads as a text."""
        out, shapes = [], []
        for v in seq:
            leaves: list = []
            try:
                shapes.append(flatten(v, leaves) if type(v) in (list, tuple) else None)
            except (TooNested, RecursionError):
                raise MechanismError(f"returned a nested output of more than {MAX_LEAVES:,} values "
                                     f"or nested too deep to read: {_short(v)}", data) from None
            out.append(tuple(leaves) if shapes[-1] is not None else v)
        if self._shaped is None:
            self._shaped = len({s for s in shapes if s is not None}) > 1
        if self._shaped:
            out = [v if s is None else (repr(s),) + v for v, s in zip(out, shapes)]
        return out

    def _parse_text(self, seq: list, data: Any) -> list:
        """Text outputs as the numbers or the JSON values they spell, or as templates and the
        numbers in them (module docstring); ``None`` stays "no answer". The mode is fixed by the
        first batch, and every later output must parse the same way."""
        mode = self._text
        seq = [str(v) if type(v) is np.str_ else v for v in seq]  # numpy texts as Python texts
        if mode is None:
            mode = False
            texts = [v for v in seq if v is not None]
            if texts and all(type(v) is str for v in texts):
                if all(parses(float, v) for v in texts):
                    mode = "number"
                elif all(v.lstrip()[:1] in ("{", "[") and parses(json.loads, v) for v in texts):
                    mode = "json"
                elif len(texts) >= TEMPLATE_MIN_TEXTS and 2 * len(set(texts)) > len(texts) \
                        and any(NUMBER_PATTERN.search(v) for v in texts):
                    mode = "template"
            self._text = mode
            if not mode:
                return seq
        if mode == "template":  # every text reads as a template (and None is no answer)
            return [v if v is None else text_template(v) if type(v) is str else v for v in seq]
        parse, what = (float, "numbers") if mode == "number" else (json.loads, "JSON objects or arrays")
        out = []
        for v in seq:
            try:
                if v is None:
                    out.append(None)
                    continue
                if type(v) is not str:
                    raise ValueError
                out.append(parse(v))
            except (ValueError, TypeError, RecursionError):
                raise MechanismError(f"returned {_short(v)} after text outputs that all spelled "
                                     f"{what} (audited as what they spell; declare "
                                     f"output='discrete' to audit the texts as categories)",
                                     data, v) from None
        return out

    def _undict(self, seq: list, data: Any) -> list:
        """Dict outputs as the tuples of their values in one key order (the first dict's keys,
        sorted), every dict checked to have those keys (module docstring)."""
        if self._keys is None:
            first = seq[0]
            self._keys = tuple(sorted(first, key=lambda k: (type(k).__name__, repr(k))))
        keys, want = self._keys, set(self._keys)
        out = []
        for v in seq:
            if not isinstance(v, dict):
                raise MechanismError(f"returned {_short(v)} after dict outputs", data, v)
            if v.keys() != want:
                raise MechanismError(f"returned a dict with keys {_key_list(v)} after dicts with "
                                     f"keys {_key_list(keys)} (return the same keys every time)",
                                     data, v)
            out.append(tuple(v[k] for k in keys))
        return out

    def _seed_codes(self, atoms: list) -> None:
        for a in atoms:
            if a not in self._codes:
                self._codes[a] = len(self._atoms)
                self._atoms.append(a)

    # ------------------------------------------------------------------ encoding
    def _encode_mixed(self, seq: list) -> np.ndarray:
        """Skeleton code, length and elements per output (module docstring); one pass."""
        w = self.schema.length
        codes, skeletons = self._skeleton_codes, self._skeletons
        pads = [[math.nan] * (w - k) for k in range(w + 1)]
        head, flat = [], []
        for v in seq:
            if v is None:
                key, m = None, 0
            else:
                if type(v) is np.ndarray:
                    v = v.tolist()
                elif not isinstance(v, (list, tuple)):  # a number among Nones: the 1-tuple (v,)
                    v = (v.item() if isinstance(v, np.generic) else v,)
                m = len(v)
                key = tuple(map(_skeleton, v)) if m else None
                flat.extend(v[:w])
            flat.extend(pads[min(m, w)])
            c = codes.get(key)
            if c is None:
                c = codes[key] = len(skeletons)
                skeletons.append(() if v is not None and key is None else key)
            head.append(c)
            head.append(m)
        out = np.empty((len(seq), 2 + w))
        out[:, :2] = np.asarray(head, dtype=float).reshape(-1, 2)
        try:
            out[:, 2:] = np.asarray(flat, dtype=float).reshape(-1, w)
        except (ValueError, TypeError):  # texts, None and Decimal("sNaN") inside: NaN
            out[:, 2:] = np.asarray([element_value(x) for x in flat], dtype=float).reshape(-1, w)
        return out

    def skeleton(self, code: float) -> Any:
        """The skeleton a MIXED code stands for: None, or a tuple of integers, bools and ``·``
        (a float element)."""
        k = int(code)
        return self._skeletons[k] if 0 <= k < len(self._skeletons) else None

    def _empty(self) -> np.ndarray:
        s = self.schema
        if s is not None and s.kind is OutputKind.VECTOR:
            return np.empty((0, s.length))
        if s is not None and s.kind is OutputKind.MIXED:
            return np.empty((0, 2 + s.length))
        return np.empty(0)

    def _encode_array(self, raw: np.ndarray, data: Any) -> np.ndarray:
        if raw.ndim > 2:  # a batch of matrices (or more): each output its flattened vector
            raw = raw.reshape(raw.shape[0], -1)
        big = _big_int(raw)
        if raw.ndim == 1:
            if raw.size == 0:
                return self._empty()
            kind = raw.dtype.kind
            cls = _BOOL if kind == "b" else _INT if kind in "iu" else _REAL
            found = {cls: raw[0]} if big is None else {cls: raw[0], _CAT: big}
            self._accept(_kind_of(found, data), found, data)
            if not self.schema.ordered and self.schema.kind is not OutputKind.BOOL:
                return self._encode_list(raw.tolist(), data)
            out = raw.astype(float)
        elif raw.ndim == 2:
            if raw.shape[0] == 0:
                return self._empty()
            if big is not None:
                raise MechanismError(f"returned vectors holding the integer {big}, beyond ±2**53: "
                                     f"float64 cannot hold it exactly", data, big)
            self._accept(OutputSchema(OutputKind.VECTOR, length=raw.shape[1]) if raw.shape[1]
                         else _mixed({0}), {_VEC: raw[0]}, data)
            if self.schema.kind is OutputKind.MIXED:
                return self._encode_mixed(raw.tolist())
            out = raw.astype(float)
        else:
            raise MechanismError(f"returned an array of shape {raw.shape[1:]} per output; "
                                 f"outputs must be scalars or 1-D vectors", data)
        return out

    def _encode_list(self, seq: list, data: Any) -> np.ndarray:
        s = self.schema
        if s.kind is OutputKind.REAL or (s.kind is OutputKind.DISCRETE and s.ordered):
            try:
                return np.fromiter((float(v) for v in seq), dtype=float, count=len(seq))
            except (ValueError, OverflowError):  # Decimal("sNaN"): NaN; beyond float64: ±inf
                return np.fromiter((to_float(v) for v in seq), dtype=float, count=len(seq))
        if s.kind is OutputKind.MIXED:
            return self._encode_mixed(seq)
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
            with np.errstate(invalid="ignore"):  # NaN compares False; ±inf are floats, not ints
                wide = bool((np.abs(out) > EXACT_INT).any())
            if wide:
                big = next((b for b in map(_big_int, seq) if b is not None), None)
                if big is not None:
                    raise MechanismError(f"returned vectors holding the integer {big}, beyond "
                                         f"±2**53: float64 cannot hold it exactly", data, big)
            return out
        codes = self._codes
        out = np.empty(len(seq))
        for i, v in enumerate(seq):
            if isinstance(v, np.generic):
                v = v.item()
            key = v
            if isinstance(v, float):
                if v != v:
                    key = v = _NAN  # every NaN is one atom (NaN != NaN: one object stands for it)
                elif v == 0.0 and math.copysign(1.0, v) < 0.0:
                    key = NEG_ZERO  # −0.0 == 0.0 in a dict, but the sign bit is released
            elif type(v) is tuple and holds_zero(v):  # a tuple holding a zero: keep signs apart
                key = signed_zeros(v)
            try:
                c = codes.get(key)
            except TypeError:
                raise MechanismError(f"returned an unhashable {type(v).__name__} where a category "
                                     f"is expected: {_short(v)}", data, v) from None
            if c is None:
                c = codes[key] = len(self._atoms)
                self._atoms.append(v)
            out[i] = c
        return out
