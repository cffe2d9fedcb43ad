"""Normalisation: a batch of raw outputs as the plain values that are detected and encoded.

Each step reads one form a mechanism may return as what it holds (:mod:`dpaudit.outputs` says
which and why): tables and numpy batches, plain values only, texts that spell numbers or JSON,
dataclasses, dicts, arrays, times and durations, nested sequences, sets, complex numbers, and
integers beyond float64. :class:`Normaliser` runs them in that order and keeps what the first batch
fixed (the text mode, the dict keys, whether nested shapes lead); :class:`~dpaudit.outputs.encoder.
OutputEncoder` is one.
"""

from __future__ import annotations

import dataclasses as _dataclasses
import json
import re
from typing import Any, Optional

import numpy as np

from dpaudit.errors import MechanismError
import math
import numbers

from dpaudit.output_values import (MAX_LEAVES, NUMBER_PATTERN, TEMPLATE_MIN_TEXTS, TIME_TYPES,
                                   NotPlain, TooNested, as_tuple, converted, convertible,
                                   decomplex, fields_of, flatten, is_complex, is_nested,
                                   library_value, nan_payloads, not_plain, parses, plain_outputs,
                                   text_template)
from dpaudit.outputs.schema import ElementClass, OutputSchema, big_int as _big_int, classes_of
from dpaudit.outputs.schema import short as _short
from dpaudit.spec import OutputKind

__all__ = ["Normaliser"]

_INT, _CAT, _SET = ElementClass.INT, ElementClass.CATEGORY, ElementClass.SET


#: a number written with a fractional part or an exponent: a real value's spelling
_REAL_SPELLING = re.compile(r"[0-9]\.[0-9]|[0-9][eE][-+]?[0-9]")


def _key_list(keys: Any, limit: int = 200) -> str:
    """The keys for a message, each at most 60 characters and all at most ``limit`` (an int key
    of 5,000 digits was printed whole)."""
    shown = [r if len(r) <= 60 else r[:28] + "..." + r[-28:] for r in sorted(map(repr, keys))]
    text = "(" + ", ".join(shown) + ")"
    return text if len(text) <= limit else text[: limit - 4] + "...)"


def _key_order(k: Any) -> tuple:
    """The order of the items of a dict whose keys vary: numbers by value, then every other key by
    its type and repr (one order for every output, whatever order its keys were inserted in)."""
    if isinstance(k, numbers.Real):
        try:
            x = float(k)
        except (OverflowError, ValueError):
            x = math.nan
        if not math.isnan(x):
            return (0, x, "", "")
    return (1, 0.0, type(k).__name__, repr(k))



class Normaliser:
    """The normalisation steps of :meth:`OutputEncoder.encode <dpaudit.outputs.encoder.OutputEncoder.encode>`,
    in order, and the state the first batch fixes."""

    #: the detected schema (None before the first batch), kept by the encoder
    schema: Optional[OutputSchema]

    def __init__(self, declared: Optional[OutputKind] = None) -> None:
        self._keys: Optional[tuple] = None  # dict outputs: their keys, in encoding order
        # dict outputs whose keys vary between calls (a partition selection's released keys):
        # each read as its items (key, value, key, value, ...) in key order; decided by the first
        # dict batch, or by a declared output="mixed"
        self._keyed = False
        self._mixed_declared = declared is OutputKind.MIXED
        # nested outputs: whether their shape leads as a text (decided on the first nested batch)
        self._shaped: Optional[bool] = None
        # text outputs: None until the first batch is seen, then "number", "json" or False
        self._text: Any = None if declared is not OutputKind.DISCRETE else False

    # ------------------------------------------------------------------ a batch as a whole
    @staticmethod
    def _from_table(raw: Any) -> Any:
        """A pandas or polars Series or DataFrame as its values."""
        if not isinstance(raw, (np.ndarray, list)) and convertible(raw) \
                and not isinstance(raw, TIME_TYPES) and library_value(raw):  # a Series or a DataFrame
            raw = np.asarray(raw.to_numpy())
            if raw.dtype.kind not in "biufc":
                raw = list(raw) if raw.ndim == 1 else [list(r) for r in raw]
        return raw

    @staticmethod
    def _refuse_array_subclass(raw: Any, data: Any) -> None:
        if isinstance(raw, np.ndarray) and type(raw) is not np.ndarray:
            # a masked array or a matrix carries more than its values (a mask, a shape rule)
            raise MechanismError(not_plain(raw).cause, data, None)

    @staticmethod
    def _array_texts_and_times(raw: Any) -> Any:
        if isinstance(raw, np.ndarray) and raw.dtype.kind in "US":  # a batch of numpy texts
            raw = raw.tolist()
        if isinstance(raw, np.ndarray) and raw.dtype.kind in "mM":  # a batch of times
            raw = [converted(x) for x in raw]
        return raw

    @staticmethod
    def _array_complex(raw: Any) -> Any:
        if isinstance(raw, np.ndarray) and raw.dtype.kind == "c" and raw.ndim:
            # a batch of complex numbers (or vectors): each output's real and imaginary parts
            raw = np.stack((raw.real, raw.imag), axis=-1).reshape(raw.shape[0], -1)
        return raw

    @staticmethod
    def _refuse_nan_payloads(raw: np.ndarray, data: Any) -> None:
        why = nan_payloads(raw)
        if why is not None:  # every NaN is one value: a payload would be an unaudited release
            raise MechanismError(why, data, None)

    # ------------------------------------------------------------------ output by output
    def _normalise(self, seq: list, data: Any) -> tuple[list, dict[str, Any]]:
        """A non-empty list of raw outputs as plain values, and its element classes."""
        seq = self._plain(seq, data)
        seq = self._read_texts(seq, data)
        seq = self._dataclass_fields(seq)
        seq = self._dict_values(seq, data)
        seq = self._array_values(seq)
        found = classes_of(seq)
        seq, found = self._conversions(seq, found)
        seq, found = self._nested(seq, found, data)
        seq, found = self._sets(seq, found)
        seq, found = self._complex(seq, found)
        self._big_ints(seq, found)
        return seq, found

    @staticmethod
    def _plain(seq: list, data: Any) -> list:
        try:  # plain values only, of bounded size (docstring of dpaudit.outputs)
            return plain_outputs(seq)
        except NotPlain as exc:
            raise MechanismError(exc.cause, data, exc.value) from None

    def _read_texts(self, seq: list, data: Any) -> list:
        if self._text is not False and (self._text or isinstance(seq[0], str) or (
                seq[0] is None and self.schema is None)):
            seq = self._parse_text(seq, data)
        return seq

    @staticmethod
    def _dataclass_fields(seq: list) -> list:
        if _dataclasses.is_dataclass(seq[0]) and not isinstance(seq[0], type):
            seq = [fields_of(v) for v in seq]  # a dataclass as the dict of its fields
        return seq

    def _dict_values(self, seq: list, data: Any) -> list:
        if self._keys is not None or self._keyed or type(seq[0]) is dict:
            seq = self._undict(seq, data)
        return seq

    @staticmethod
    def _array_values(seq: list) -> list:
        # a 0-d array (what numpy reductions of arrays often give) is the scalar it holds, an
        # array of several dimensions its flattened vector
        return [v if type(v) is not np.ndarray or v.ndim == 1 else v.item() if v.ndim == 0
                else v.reshape(-1) for v in seq]

    @staticmethod
    def _conversions(seq: list, found: dict[str, Any]) -> tuple[list, dict[str, Any]]:
        if _CAT in found and (convertible(found[_CAT]) or (
                type(found[_CAT]) in (list, tuple) and any(map(convertible, found[_CAT])))):
            seq = [converted(v) for v in seq]  # times, durations, Series and DataFrames
            found = classes_of(seq)
        return seq, found

    def _nested(self, seq: list, found: dict[str, Any], data: Any) -> tuple[list, dict[str, Any]]:
        if _CAT in found and is_nested(found[_CAT]):
            seq = self._unnest(seq, data)
            found = classes_of(seq)
        return seq, found

    @staticmethod
    def _sets(seq: list, found: dict[str, Any]) -> tuple[list, dict[str, Any]]:
        if _SET in found:  # sets as sorted tuples
            seq = [as_tuple(v) for v in seq]
            found = classes_of(seq)
        return seq, found

    @staticmethod
    def _complex(seq: list, found: dict[str, Any]) -> tuple[list, dict[str, Any]]:
        if _CAT in found and is_complex(found[_CAT]):
            seq = [decomplex(v) for v in seq]
            found = classes_of(seq)
        return seq, found

    @staticmethod
    def _big_ints(seq: list, found: dict[str, Any]) -> None:
        if _INT in found:
            big = _big_int(seq)
            if big is not None:
                found[_CAT] = big  # exact as a category (float64 would merge it with its neighbours)

    # ------------------------------------------------------------------ nested, texts, dicts
    def _unnest(self, seq: list, data: Any = None) -> list:
        """Nested lists, tuples, arrays and dicts as the tuple of their leaves (:mod:`dpaudit.outputs`);
        where the first batch shows several shapes, every nested output's shape leads as a text.

        A flat sequence (``[]``, ``[1.0, 2.0]``) never gets a shape: it is encoded alike in a batch
        with nested outputs and in one without, so each output's encoding is a function of that
        output alone. (Shaping the flat ones too made ``[]`` one value in a batch where some
        output was nested and another where none was: a mechanism releasing ``[(key, count)]``
        with probability δ on D put a whole batch of D's rows, ``[]`` included, in an event that
        D' never reached, a bound on δ of about the batch size times δ.)"""
        out, shapes, nested = [], [], []
        for v in seq:
            leaves: list = []
            try:
                shapes.append(flatten(v, leaves) if type(v) in (list, tuple) else None)
            except (TooNested, RecursionError):
                raise MechanismError(f"returned a nested output of more than {MAX_LEAVES:,} values "
                                     f"or nested too deep to read: {_short(v)}", data) from None
            out.append(tuple(leaves) if shapes[-1] is not None else v)
            nested.append(shapes[-1] is not None and is_nested(v))
        if self._shaped is None:
            self._shaped = len({s for s in shapes if s is not None}) > 1
        if self._shaped:
            out = [(repr(s),) + v if deep else v for v, s, deep in zip(out, shapes, nested)]
        return out

    def _parse_text(self, seq: list, data: Any) -> list:
        """Text outputs as the numbers or the JSON values they spell, or as templates and the
        numbers in them (:mod:`dpaudit.outputs`); ``None`` stays "no answer". The mode is fixed by the
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
                elif len(texts) < TEMPLATE_MIN_TEXTS and all(_REAL_SPELLING.search(v) for v in texts):
                    # too few to judge how distinct they are (a one-call mechanism's first call):
                    # each spells a real number ("count=-0.1703"), which no label of a few
                    # categories needs; a template reads a label losslessly all the same
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
                parse(v)
                # the text's template and numbers: "05" and "5", "1.50" and "1.5", and in JSON
                # the whitespace, the key order, a repeated key, 1 and 1.0, all differ
                out.append(text_template(v))
            except (ValueError, TypeError, RecursionError):
                raise MechanismError(f"returned {_short(v)} after text outputs that all spelled "
                                     f"{what} (audited as what they spell; declare "
                                     f"output='discrete' to audit the texts as categories)",
                                     data, v) from None
        return out

    def _undict(self, seq: list, data: Any) -> list:
        """Dict outputs as the tuples of their values in one key order (the first dict's keys,
        sorted), every dict checked to have those keys (:mod:`dpaudit.outputs`); or, where the
        keys vary (:meth:`_keyed_mode`), each dict as its items in key order."""
        if self._keys is None and not self._keyed:
            if self._keyed_mode(seq):
                self._keyed = True
            else:
                first = seq[0]
                self._keys = tuple(sorted(first, key=lambda k: (type(k).__name__, repr(k))))
        if self._keyed:
            return [self._items(v, data) for v in seq]
        keys, want = self._keys, set(self._keys)
        out = []
        for v in seq:
            if not isinstance(v, dict):
                raise MechanismError(f"returned {_short(v)} after dict outputs", data, v)
            if v.keys() != want:
                raise MechanismError(f"returned a dict with keys {_key_list(v)} after dicts with "
                                     f"keys {_key_list(keys)} (return the same keys every time, or "
                                     f"declare output='mixed' for a dict whose keys vary, such as "
                                     f"the keys a partition selection releases)", data, v)
            out.append(tuple(v[k] for k in keys))
        return out

    def _keyed_mode(self, seq: list) -> bool:
        """Whether dict outputs are read as their items: declared ``output="mixed"``, or the first
        dict batch shows several key sets, or only empty dicts (a partition selection on an empty
        dataset releases no key, which says nothing of the keys it releases elsewhere)."""
        if self._mixed_declared:
            return True
        keysets = set()
        for v in seq:
            if isinstance(v, dict):
                keysets.add(frozenset(v))
                if len(keysets) > 1:
                    return True
        return keysets == {frozenset()}

    @staticmethod
    def _items(v: Any, data: Any) -> tuple:
        """A dict whose keys vary as the tuple ``(k₁, v₁, k₂, v₂, …)`` of its items in key order
        (:func:`_key_order`), a key or a value that is itself a sequence as its leaves: which keys
        were released is in the output's skeleton (integer and text keys) and in its elements
        (number keys), and each value follows its key."""
        if not isinstance(v, dict):
            raise MechanismError(f"returned {_short(v)} after dict outputs", data, v)
        out: list = []
        try:
            for k in sorted(v, key=_key_order):
                flatten(k, out)
                flatten(v[k], out)
        except (TooNested, RecursionError):
            raise MechanismError(f"returned a dict of more than {MAX_LEAVES:,} values or nested "
                                 f"too deep to read: {_short(v)}", data) from None
        return tuple(out)
