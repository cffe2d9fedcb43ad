"""Encoding: every batch of a mechanism's outputs as a float64 array the estimators read.

:class:`OutputEncoder` normalises a batch (:class:`~dpaudit.outputs.normalise.Normaliser`),
detects its kind (:mod:`dpaudit.outputs.schema`), checks it against the kind of the earlier
batches (widening where :mod:`dpaudit.outputs` says), and encodes it as the table there says.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import replace
from typing import Any, Hashable, Optional

import numpy as np

from dpaudit.errors import MechanismError, OutputChanged
from dpaudit.output_values import (NEG_ZERO, element_value, form_name, form_of, holds_zero,
                                   signed_zeros, to_float)
from dpaudit.outputs.normalise import Normaliser
from dpaudit.outputs.schema import (EXACT_INT, MAX_POSITIONS, ElementClass, OutputSchema,
                                    kind_of as _kind_of,
                                    lengths_of as _lengths, mixed_schema as _mixed)
from dpaudit.outputs.schema import big_int as _big_int, short as _short
from dpaudit.spec import OutputKind

__all__ = ["OutputEncoder", "REAL_MARK"]

_BOOL, _INT, _REAL, _VEC, _CAT = (ElementClass.BOOL, ElementClass.INT, ElementClass.REAL,
                                  ElementClass.VECTOR, ElementClass.CATEGORY)
_LABELLED = ElementClass.LABELLED
_NONE = ElementClass.NONE

#: the one NaN object that stands for every NaN category (dict lookups try identity first)
_NAN = float("nan")


class _Real:
    """The marker of a float element in a MIXED skeleton."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "·"

    def __reduce__(self) -> str:
        # pickled as the module's one instance: the fork pool's workers count events with a
        # pickled encoder, whose skeleton codes are found by the marker's identity
        return "REAL_MARK"


REAL_MARK = _Real()


class _Typed:
    """A category or a MIXED skeleton released in another form than the audit's first outputs
    (``3.0`` after ints, a list after tuples): its own atom, shown with its form."""

    __slots__ = ("value", "form")

    def __init__(self, value: Any, form: Any) -> None:
        self.value, self.form = value, form

    def __repr__(self) -> str:
        return f"{self.value!r} as {form_name(self.form)}"


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


class OutputEncoder(Normaliser):
    """Detects the output kind from the first batch, then validates and encodes every batch.

    Stateful only through the category codebook (codes in order of first appearance), so the
    encoding of a run is a deterministic function of its outputs.
    """

    def __init__(self, declared: Optional[OutputKind] = None, forms: bool = True) -> None:
        super().__init__(declared)
        self.declared = declared
        self.schema: Optional[OutputSchema] = None
        self._codes: dict[Hashable, int] = {}
        self._atoms: list = []
        self._skeleton_codes: dict[Any, int] = {}
        self._skeletons: list = []
        #: whether the form of an output (its type, dtype, shape, key order) is released too
        #: (:mod:`dpaudit.outputs`); False compares values only (one-call against batch form)
        self.forms = forms
        self._primary: Any = None  # the most common form of the first batch
        self._primary_set = False
        #: the names of the forms (types) of ordered outputs met besides the primary one, which
        #: are encoded as NaN (what a report must not call a non-finite output)
        self.other_forms: set = set()
        self._form_codes: dict[Any, int] = {}
        #: how many outputs :meth:`encode` took (with :attr:`categories`: how often a category repeats)
        self.encoded = 0
        self._splits: dict[tuple, int] = {}
        self._code_form: dict[int, Any] = {}  # category or skeleton code -> the form first met

    # ------------------------------------------------------------------ public
    @property
    def categories(self) -> int:
        """How many distinct categories (atoms of an unordered output) the encoder has seen."""
        return len(self._atoms)

    def encode(self, raw: Any, data: Any) -> np.ndarray:
        """Validate one batch of raw outputs of ``data`` and return its encoding (docstring of
        :mod:`dpaudit.outputs`): normalise, detect the kind, accept it, encode."""
        out = self._encode(raw, data)
        self.encoded += len(out)
        return out

    def _encode(self, raw: Any, data: Any) -> np.ndarray:
        raw = self._from_table(raw)
        self._refuse_array_subclass(raw, data)
        forms = self._forms_of(raw) if self.forms and isinstance(raw, np.ndarray) else None
        books = (len(self._skeletons), len(self._atoms))
        raw = self._array_texts_and_times(raw)
        raw = self._array_complex(raw)
        if isinstance(raw, np.ndarray) and raw.dtype.kind in "biuf":
            self._refuse_nan_payloads(raw, data)
            return self._formed(self._encode_array(raw, data), forms, books)
        seq = list(raw) if not isinstance(raw, list) else raw
        if not seq:
            return self._empty()
        if self.forms:
            forms = self._forms_of(seq)
        seq, found = self._normalise(seq, data)
        lengths = _lengths(seq) if _VEC in found or _LABELLED in found else None
        schema = _kind_of(found, data, lengths)
        if self._keyed and schema.kind in (OutputKind.MIXED, OutputKind.VECTOR, OutputKind.NONE):
            # a dict whose keys vary: its items, as many positions as MIXED keeps (the first
            # batch, often of an empty dataset's empty dicts, says nothing of how many keys come)
            schema = replace(_mixed({MAX_POSITIONS}), keyed=True)
        self._accept(schema, found, data)
        return self._formed(self._encode_list(seq, data), forms, books)

    # ------------------------------------------------------------------ forms
    @staticmethod
    def _forms_of(raw: Any) -> tuple:
        """``(form, None)`` when every output of the batch has one form (a numpy batch: its dtype,
        and each output's shape), else ``(None, [form of each output])``."""
        if isinstance(raw, np.ndarray):
            if raw.ndim == 1:  # what raw[k] is: the one-call form's scalar (form_of's form)
                t = raw.dtype.type
                return ((t, raw.dtype.str), None) if raw.dtype.kind in "mM" else (t, None)
            return ((np.ndarray, raw.dtype.str, raw.shape[1:], "C"), None)  # a row, as form_of has it
        types = set(map(type, raw))
        if len(types) == 1:
            (t,) = types
            if t in (np.datetime64, np.timedelta64):  # one unit throughout, or a form each
                units = {x.dtype.str for x in raw}
                if len(units) == 1:
                    return ((t, units.pop()), None)
            elif issubclass(t, np.generic) or form_of(raw[0]) is t:  # scalars of one type
                return (t, None)
        return (None, [form_of(v) for v in raw])

    def _formed(self, out: np.ndarray, forms: Optional[tuple], books: tuple) -> np.ndarray:
        """The encoding ``out`` with outputs of another form made atoms of their own
        (:mod:`dpaudit.outputs`): ordered numbers and vectors of another form than the first
        batch's most common one as NaN; a category or a MIXED skeleton met in another form than
        the one it was first met in as a code of its own. ``out`` itself in the common case (one
        form throughout: one comparison per batch, or one per output of a list). ``books``: how
        many skeletons and atoms there were before the batch."""
        if forms is None or not len(out) or self.schema is None:
            return out
        one, each = forms
        if not self._primary_set:
            if one is None:
                counts: dict = {}
                for f in each:
                    counts[f] = counts.get(f, 0) + 1
                one = max(counts, key=counts.__getitem__) if len(counts) > 1 else each[0]
                if len(counts) == 1:
                    forms = (one, None)
            self._primary, self._primary_set = one, True
            one, each = forms
        primary, s = self._primary, self.schema
        ordered = s.kind in (OutputKind.REAL, OutputKind.VECTOR) or (
            s.kind is OutputKind.DISCRETE and s.ordered)
        if one is not None and one == primary and (ordered or not self._code_form):
            return out
        if each is None:
            each = [one] * len(out)
        if ordered:
            mask = np.fromiter((f != primary for f in each), dtype=bool, count=len(each))
            if not mask.any():
                return out
            if len(self.other_forms) < 4:
                self.other_forms.update(_form_name(f) for f in {f for f in each if f != primary})
            out = np.array(out, dtype=float, copy=True)
            if out.ndim == 1:
                out[mask] = np.nan
            else:
                out[mask, :] = np.nan
            return out
        return self._split(np.array(out, dtype=float, copy=True), each, books)

    def _split(self, out: np.ndarray, forms: list, books: tuple) -> np.ndarray:
        """Categories and MIXED skeletons: each code keeps the form it was first met in (the
        batch's usual form for codes met before in batches of one form); met in another, it is
        the code of that (code, form) pair, shown as the value and its form."""
        mixed = self.schema.kind is OutputKind.MIXED
        col = out[:, 0] if mixed else out
        book = self._skeletons if mixed else self._atoms
        new_from = books[0] if mixed else books[1]
        seen = self._code_form
        primary = self._primary
        split = False
        for i, f in enumerate(forms):
            c = int(col[i])
            first = seen.get(c)
            if first is None:
                if c >= new_from:  # met first in this batch: its form is this one
                    seen[c] = first = f
                else:
                    first = primary
            if f == first:
                continue
            fc = self._form_codes.setdefault(f, len(self._form_codes) + 1)
            code = self._splits.get((c, fc))
            if code is None:
                code = self._splits[(c, fc)] = len(book)
                book.append(_Typed(book[c] if 0 <= c < len(book) else None, f))
                seen[code] = f
            col[i] = code
            split = True
        if split and self.schema.kind in (OutputKind.BOOL, OutputKind.NONE):  # a third atom
            self.schema = OutputSchema(OutputKind.DISCRETE, ordered=False)
        return out

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
        """Check a batch's schema against the current one; widen where :mod:`dpaudit.outputs` says."""
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
                                      or (n in (OutputKind.REAL, OutputKind.DISCRETE) and schema.ordered)
                                      or set(found) <= {_NONE, _INT}):  # integers or None
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
            v = next((x for x in found.values() if x is not None and hasattr(x, "__len__")
                      and len(x) != cur.length), None)
            if v is not None:
                what = f"{_short(v)} of length {len(v)}"
            elif _NONE in found:
                what = "None"
            else:  # the batch's example vector is of the old length; another of it is not
                what = "vectors of another length"
            raise OutputChanged(f"changed output length between calls: returned {what} after "
                                 f"vectors of length {cur.length} (declare output='mixed' for "
                                 f"outputs of varying length)", data, v)
        big = found.get(_CAT)
        if k is OutputKind.DISCRETE and cur.integer and isinstance(big, numbers.Integral):
            raise MechanismError(f"returned the integer {big}, beyond ±2**53, after smaller "
                                 f"integers: float64 cannot hold it exactly (return such outputs "
                                 f"as str to audit them as categories)", data, big)
        if _NONE in found and k in numeric and cur.ordered:
            raise OutputChanged(f"changed output type between calls: returned None after "
                                 f"{cur.description} outputs (declare output='mixed' for a value "
                                 f"that may be None)", data, None)
        bad_class = next(iter(found))
        v = found[bad_class]
        raise OutputChanged(f"changed output type between calls: returned {bad_class} "
                             f"{_short(v)} after {cur.description} outputs", data, v)

    def _declared(self, schema: OutputSchema, found: dict[str, Any], data: Any) -> OutputSchema:
        d = self.declared
        if d is None or d is schema.kind:
            return schema
        if d is OutputKind.MIXED and schema.kind in (OutputKind.VECTOR, OutputKind.NONE):
            return _mixed({schema.length or 0})
        if d is OutputKind.MIXED and schema.kind in (OutputKind.REAL, OutputKind.DISCRETE) \
                and (schema.ordered or set(found) <= {_NONE, _INT}):
            return _mixed({0, 1})  # declared a value that may be None: a number as its 1-tuple
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
    def _encode_mixed(self, seq: list, data: Any = None) -> np.ndarray:
        """Skeleton code, length and elements per output (:mod:`dpaudit.outputs`); one pass. A
        number past the W positions kept is the mechanism's ERROR: its skeleton shows only that
        a number is there (a hostile review hid the exact sum at position 17 of a labelled tuple
        and in the 16th number of a text, NOT REFUTED)."""
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
                if m > w and REAL_MARK in key[w:]:
                    raise MechanismError(
                        f"returned an output holding a number at position {w + key[w:].index(REAL_MARK) + 1} "
                        f"of a labelled or varying output ({_short(v)}); dpaudit audits the numbers "
                        f"of such outputs in their first {w} positions only (it would not see the "
                        f"rest): return the numbers as one numeric array, or fewer of them", data, v)
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
        except (ValueError, TypeError, OverflowError):  # texts, None, Decimal("sNaN"): NaN; an int
            # past float64 (10**5000 in a set with a text): the ±inf it rounds to
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
                raise MechanismError(f"returned vectors holding the integer {_short(big)}, beyond ±2**53: "
                                     f"float64 cannot hold it exactly", data, big)
            self._accept(OutputSchema(OutputKind.VECTOR, length=raw.shape[1]) if raw.shape[1]
                         else _mixed({0}), {_VEC: raw[0]}, data)
            if self.schema.kind is OutputKind.MIXED:
                return self._encode_mixed(raw.tolist(), data)
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
            return self._encode_mixed(seq, data)
        if s.kind is OutputKind.VECTOR:
            try:
                out = np.asarray([np.asarray(v, dtype=float) for v in seq], dtype=float)
            except (ValueError, OverflowError, TypeError):  # an int past float64: OverflowError
                out = None
            if out is None or out.ndim != 2 or out.shape[1] != s.length:
                for v in seq:
                    if len(v) != s.length:
                        raise OutputChanged(f"changed output length between calls: returned "
                                             f"{_short(v)} of length {len(v)} after vectors of "
                                             f"length {s.length}", data, v)
                big = next((b for b in map(_big_int, seq) if b is not None), None)
                if big is not None:
                    raise MechanismError(f"returned vectors holding the integer {_short(big)}, beyond "
                                         f"±2**53: float64 cannot hold it exactly", data, big)
                raise MechanismError("returned vectors that are not all numeric", data)
            with np.errstate(invalid="ignore"):  # NaN compares False; ±inf are floats, not ints
                # ≥: 2**53 + 1 rounds to 2**53 on the way to float64 (a bit released unread)
                wide = bool((np.abs(out) >= EXACT_INT).any())
            if wide:
                big = next((b for b in map(_big_int, seq) if b is not None), None)
                if big is not None:
                    raise MechanismError(f"returned vectors holding the integer {_short(big)}, beyond "
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


def _form_name(form: Any) -> str:
    """A form as a reader names it: ``float``, ``numpy.float64``, ``numpy.ndarray``."""
    t = form[0] if isinstance(form, tuple) and form else form
    if isinstance(t, type):
        mod = t.__module__
        return t.__name__ if mod == "builtins" else f"{mod.split('.')[0]}.{t.__name__}"
    return str(t)[:40]
