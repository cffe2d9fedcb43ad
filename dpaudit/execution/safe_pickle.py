"""Reading what the sandbox child sends back, without running anything it chose, within bounds.

``pickle.loads`` calls whatever callable a pickle names (``os.system`` included), so a mechanism
that writes its own bytes to the pipe, or returns an object whose ``__reduce__`` names such a
callable, would run code in dpaudit's own process, outside every limit of the sandbox. The parent
therefore reads the child's replies with :func:`loads`, an unpickler whose ``find_class`` allows
only a few names (Python docs, ``pickle``, "Restricting Globals"), each bound to a checked
constructor rather than to the class itself.

The names are checked because a constructor can allocate far more than the bytes that name it:
``bytearray(2**31)`` is 25 bytes of pickle and 2 GiB of zeros in dpaudit's process,
``set(range(10**10))`` more, ``Fraction("1e999999999")`` computes a billion-digit integer, and
numpy's own constructors and ``__setstate__`` methods (arrays, dtypes, masked arrays) take shapes,
strides and item sizes from the pickle. So only these are allowed, each refusing what would
amplify its input:

* ``complex`` of two numbers; ``Decimal`` of a text of at most :data:`MAX_NUMBER_TEXT` characters
  and an exponent within ±:data:`MAX_EXPONENT`; ``Fraction`` of two integers of at most
  :data:`MAX_FRACTION_BITS` bits (or a text of them);
* the ``datetime`` types from their own compact state (``timezone`` of a ``timedelta``);
* :func:`array`, dpaudit's own form of a numpy array or scalar: a dtype of numbers, texts or times,
  a shape, and exactly the bytes that shape holds (or, for an object array, the list of its
  elements), so the array is never larger than its bytes in the reply.

Sets, frozensets and bytearrays need no name at protocol 5 (they have opcodes of their own), nor do
built-in containers, numbers, texts and bytes. Anything else is refused with the name it asked for
(:class:`RefusedGlobal`); a checked constructor given other arguments raises
:class:`pickle.UnpicklingError`.

The child converts its outputs into these forms before sending them (:func:`pack`, after
:func:`dpaudit.execution.described.portable_outputs` has checked that they are plain values); what
comes back is checked again in this process (:func:`dpaudit.output_values.plain_outputs`).
"""

from __future__ import annotations

import datetime as _dt
import io
import math
import pickle
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["loads", "pack", "array", "RefusedGlobal", "ALLOWED"]

#: the longest text a ``Decimal`` is read from
MAX_NUMBER_TEXT = 1000
#: the largest exponent (in magnitude) of a ``Decimal`` read back
MAX_EXPONENT = 10 ** 6
#: the largest numerator and denominator of a ``Fraction`` read back, in bits
MAX_FRACTION_BITS = 1 << 16
#: the largest item of an array read back, in bytes (a text of 4,096 characters is 16,384 bytes)
MAX_ITEM_BYTES = 1 << 16
#: the most dimensions of an array read back
MAX_DIMENSIONS = 32


class RefusedGlobal(pickle.UnpicklingError):
    """A reply named a class or function outside :data:`ALLOWED`."""

    def __init__(self, module: str, name: str) -> None:
        super().__init__(f"{module}.{name}")
        self.module, self.name = module, name


def _bad(what: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError(what)


def _complex(*args: Any) -> complex:
    if len(args) > 2 or any(type(a) not in (int, float) for a in args):
        raise _bad("complex() of other than two numbers")
    return complex(*args)


def _decimal(text: Any) -> Decimal:
    if type(text) is not str or len(text) > MAX_NUMBER_TEXT:
        raise _bad(f"Decimal() of other than a text of at most {MAX_NUMBER_TEXT} characters")
    try:
        d = Decimal(text)
    except InvalidOperation:
        raise _bad("Decimal() of a text that is no number") from None
    if d.is_finite() and abs(d.adjusted()) > MAX_EXPONENT:
        raise _bad(f"a Decimal with an exponent beyond ±{MAX_EXPONENT}")
    return d


_FRACTION_TEXT = re.compile(r"-?\d+(/\d+)?")


def _fraction(*args: Any) -> Fraction:
    if len(args) == 1 and type(args[0]) is str:  # written as "n/d" (no exponent: 1e999999999)
        if len(args[0]) > MAX_FRACTION_BITS // 3 or not _FRACTION_TEXT.fullmatch(args[0]):
            raise _bad("Fraction() of a text other than n/d")
        args = tuple(int(x) for x in args[0].split("/"))
    if not 1 <= len(args) <= 2 or any(type(a) is not int or a.bit_length() > MAX_FRACTION_BITS
                                      for a in args):
        raise _bad(f"Fraction() of other than integers of at most {MAX_FRACTION_BITS} bits")
    return Fraction(*args)


def _state(*args: Any) -> None:
    """The arguments of a ``datetime`` type's own pickle: its bytes, then a ``timezone``."""
    if not args or type(args[0]) is not bytes or len(args[0]) > 16 or len(args) > 2 \
            or (len(args) == 2 and type(args[1]) is not _dt.timezone):
        raise _bad("a datetime value from other than its own state")


def _datetime(*args: Any) -> _dt.datetime:
    _state(*args)
    return _dt.datetime(*args)


def _date(*args: Any) -> _dt.date:
    _state(*args)
    return _dt.date(*args)


def _time(*args: Any) -> _dt.time:
    _state(*args)
    return _dt.time(*args)


def _timedelta(*args: Any) -> _dt.timedelta:
    if len(args) > 3 or any(type(a) is not int for a in args):
        raise _bad("timedelta() of other than days, seconds and microseconds")
    return _dt.timedelta(*args)


def _timezone(*args: Any) -> _dt.timezone:
    if not 1 <= len(args) <= 2 or type(args[0]) is not _dt.timedelta or (
            len(args) == 2 and (type(args[1]) is not str or len(args[1]) > 64)):
        raise _bad("timezone() of other than an offset and a short name")
    return _dt.timezone(*args)


def array(dtype: Any, shape: Any, data: Any) -> Any:
    """A numpy array (``shape`` a tuple) or scalar (``shape`` None) of ``dtype`` (its ``str``: a
    byte order, a kind of number, text or time, a size) from exactly the bytes it holds, or, for
    the dtype ``"|O"``, from the list of its elements. Never larger than ``data``."""
    if type(dtype) is not str or len(dtype) > 32:
        raise _bad("an array without a dtype")
    try:
        dt = np.dtype(dtype)
    except (TypeError, ValueError):
        raise _bad(f"an array of dtype {dtype[:32]!r}") from None
    if dt.kind not in "biufcUSmMO" or dt.fields is not None or dt.subdtype is not None \
            or dt.itemsize > MAX_ITEM_BYTES or (dt.kind == "O" and shape is None):
        raise _bad(f"an array of dtype {dt.str}")
    if shape is None:
        if type(data) is not bytes or len(data) != dt.itemsize:
            raise _bad("a numpy scalar whose bytes are not its dtype's size")
        return np.frombuffer(data, dtype=dt)[0]
    if type(shape) is not tuple or len(shape) > MAX_DIMENSIONS \
            or any(type(k) is not int or k < 0 for k in shape):
        raise _bad("an array whose shape is not a tuple of sizes")
    count = math.prod(shape)
    if dt.kind == "O":
        if type(data) is not list or len(data) != count:
            raise _bad("an object array whose elements are not a list of its size")
        out = np.empty(count, dtype=object)
        for i, x in enumerate(data):
            out[i] = x
        return out.reshape(shape)
    if type(data) is not bytes or len(data) != count * dt.itemsize:
        raise _bad(f"an array of shape {shape[:4]} whose bytes are not its size")
    return np.frombuffer(data, dtype=dt).reshape(shape)


#: (module, name) of every class or function a reply may name, and what it is read as
_CHECKED = {
    ("builtins", "complex"): _complex,
    ("decimal", "Decimal"): _decimal, ("_decimal", "Decimal"): _decimal,
    ("fractions", "Fraction"): _fraction,
    ("datetime", "datetime"): _datetime, ("datetime", "date"): _date,
    ("datetime", "time"): _time, ("datetime", "timedelta"): _timedelta,
    ("datetime", "timezone"): _timezone,
    ("dpaudit.execution.safe_pickle", "array"): array,
}
ALLOWED = frozenset(_CHECKED)


class _Restricted(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        checked = _CHECKED.get((module, name))
        if checked is None:
            raise RefusedGlobal(module, name)
        return checked


def loads(payload: bytes) -> Any:
    """``pickle.loads`` restricted to :data:`ALLOWED`, each name a checked constructor (module
    docstring)."""
    return _Restricted(io.BytesIO(payload)).load()


# -- the child's side ---------------------------------------------------------------------------

class _Packed:
    """A numpy array or scalar as the child sends it: pickled as a call of :func:`array`."""

    __slots__ = ("args",)

    def __init__(self, *args: Any) -> None:
        self.args = args

    def __reduce__(self) -> tuple:
        return (array, self.args)


#: types sent as they are
_AS_THEY_ARE = frozenset({float, int, bool, complex, str, bytes, bytearray, type(None), Decimal,
                          Fraction, _dt.date, _dt.datetime, _dt.time, _dt.timedelta})


def _pack(v: Any, memo: dict) -> Any:
    t = type(v)
    if t in _AS_THEY_ARE:
        return v
    if t is np.ndarray:
        if v.dtype.kind == "O":
            return _Packed("|O", v.shape, [_pack(x, memo) for x in v.reshape(-1).tolist()])
        return _Packed(v.dtype.str, v.shape, np.ascontiguousarray(v).tobytes())
    if isinstance(v, np.generic):
        kind, size = v.dtype.kind, v.dtype.itemsize
        if kind in "biuUS" or (kind == "f" and size <= 8) or (kind == "c" and size <= 16):
            return v.item()  # the same value as a Python number, text or bytes
        return _Packed(v.dtype.str, None, v.tobytes())
    if t is list or t is tuple or t is set or t is frozenset or t is dict:
        hit = memo.get(id(v))
        if hit is not None:
            return hit[1]
        if t is dict:
            out: Any = {_pack(k, memo): _pack(x, memo) for k, x in v.items()}
        elif all(type(x) in _AS_THEY_ARE for x in v):
            out = v
        else:
            out = t(_pack(x, memo) for x in v)
        memo[id(v)] = (v, out)
        return out
    return v


def pack(outputs: Any) -> Any:
    """``outputs`` (plain values) with every numpy array and scalar in the form :func:`array`
    reads back; a numpy scalar that a Python number, text or bytes holds exactly becomes that."""
    return _pack(outputs, {})
