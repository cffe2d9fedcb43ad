"""Values as real code returns them, turned into the numbers and plain values dpaudit audits.

The pure functions behind :mod:`dpaudit.outputs` (which decides when each applies and says so in
its module docstring): complex numbers as their parts, times and durations as seconds, tables
(``to_numpy``) as arrays, dataclasses as dicts, sets as sorted tuples, nested values as their
leaves (at most :data:`MAX_LEAVES`), texts as the numbers in them (:func:`_template`), and the
category key that keeps −0.0 apart from 0.0. Each is a function of the output, so an audit of
what it returns is an audit of a post-processing of the mechanism: its bounds stay sound.
"""

from __future__ import annotations

import dataclasses as _dataclasses
import datetime as _dt
import math
import re
from decimal import Decimal
from typing import Any

import numpy as np


#: the key of the category −0.0, which a dict would merge with 0.0 (they compare equal): an object
#: no output can equal
_NEG_ZERO = object()


def _as_tuple(v: Any) -> Any:
    """A set as the tuple of its elements, sorted (by value where they compare, else by type and
    repr), so that sets of indices are audited like tuples of them; anything else as it is."""
    if type(v) is not set and type(v) is not frozenset:
        return v
    try:
        return tuple(sorted(v))
    except TypeError:
        return tuple(sorted(v, key=lambda x: (type(x).__name__, repr(x))))


def _element_value(x: Any) -> float:
    """An element of a MIXED output as a number: a text or None (in the skeleton) as NaN."""
    if isinstance(x, str) or x is None:
        return math.nan
    return _real(x)


def _is_complex(v: Any) -> bool:
    """Whether ``v`` is a complex number, or a sequence or array holding one."""
    if isinstance(v, np.ndarray):
        return v.dtype.kind == "c"
    if isinstance(v, (list, tuple)):
        return any(isinstance(x, (complex, np.complexfloating)) for x in v)
    return isinstance(v, (complex, np.complexfloating))


def _decomplex(v: Any) -> Any:
    """A complex number as the pair (Re, Im), complex elements of a sequence or an array each as
    their two parts in place (module docstring); anything else as it is."""
    if isinstance(v, np.ndarray):
        if v.dtype.kind != "c":
            return v
        return np.stack((v.real, v.imag), axis=-1).reshape(*v.shape[:-1], -1) if v.ndim else \
            (float(v.real), float(v.imag))
    if isinstance(v, (complex, np.complexfloating)):
        return (float(v.real), float(v.imag))
    if isinstance(v, (list, tuple)) and any(isinstance(x, (complex, np.complexfloating)) for x in v):
        out: list = []
        for x in v:
            out.extend((float(x.real), float(x.imag)) if isinstance(x, (complex, np.complexfloating))
                       else (x,))
        return out
    return v


_TIMES = (_dt.date, _dt.timedelta, np.datetime64, np.timedelta64)


def _convertible(v: Any) -> bool:
    """Whether ``v`` is a time, a duration, or a table-like object with ``to_numpy`` (a pandas or
    polars Series or DataFrame), which :func:`_converted` turns into numbers."""
    return isinstance(v, _TIMES) or (not isinstance(v, (str, bytes, np.ndarray))
                                     and callable(getattr(type(v), "to_numpy", None)))


def _converted(v: Any) -> Any:
    """A time as seconds since 1970-01-01 (a date as its day number, a duration as seconds), a
    Series or DataFrame as its values (flattened, C order), a list or tuple element-wise; anything
    else as it is (module docstring)."""
    if isinstance(v, _dt.datetime):
        return (v - _dt.datetime(1970, 1, 1, tzinfo=v.tzinfo)).total_seconds()
    if isinstance(v, _dt.date):
        return float(v.toordinal())
    if isinstance(v, _dt.timedelta):
        return v.total_seconds()
    if isinstance(v, (np.datetime64, np.timedelta64)):
        x = v.astype(f"{'M' if isinstance(v, np.datetime64) else 'm'}8[us]")
        return math.nan if np.isnat(x) else float(x.astype(np.int64)) / 1e6
    if type(v) is list or type(v) is tuple:
        return type(v)(_converted(x) if _convertible(x) else x for x in v)
    if _convertible(v):
        a = np.asarray(v.to_numpy())
        if a.dtype.kind in "biufc":
            return a.reshape(-1) if a.ndim != 1 else a
        return [_converted(x) if _convertible(x) else x for x in a.reshape(-1).tolist()]
    return v


def _fields_of(v: Any) -> Any:
    """A dataclass instance as the dict of its fields (anything else as it is)."""
    if _dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: getattr(v, f.name) for f in _dataclasses.fields(v)}
    return v


def _holds_zero(v: tuple) -> bool:
    try:
        return 0.0 in v
    except (ValueError, TypeError):  # an element that does not compare to a bool (an array)
        return False


def _is_nested(v: Any) -> bool:
    """Whether ``v`` is a list or tuple holding a list, tuple, array, dict or set."""
    return type(v) in (list, tuple) and any(
        type(x) in (list, tuple, dict, set, frozenset) or isinstance(x, np.ndarray) for x in v)


#: the most values a nested output may hold (a list of the same list repeated holds exponentially
#: many in a few bytes: a few hundred pickled bytes can spell 10^11 values)
MAX_LEAVES = 1 << 20


class _TooNested(Exception):
    """A nested output holds more than :data:`MAX_LEAVES` values."""


def _flatten(v: Any, leaves: list) -> Any:
    """Append the leaves of the nested value ``v`` to ``leaves`` in order (an array's in C order,
    a dict's in sorted key order, a set's sorted) and return its shape: None for a leaf, else the
    tuple of the shapes of its parts. Raises :class:`_TooNested` past :data:`MAX_LEAVES`."""
    if len(leaves) > MAX_LEAVES:
        raise _TooNested
    t = type(v)
    if t is list or t is tuple:
        return tuple(_flatten(x, leaves) for x in v)
    if t is set or t is frozenset:  # its sorted tuple
        return ("set",) + tuple(_flatten(x, leaves) for x in _as_tuple(v))
    if t is dict:
        return ("{}",) + tuple(_flatten(v[k], leaves)
                               for k in sorted(v, key=lambda k: (type(k).__name__, repr(k))))
    if isinstance(v, np.ndarray):
        flat = v.reshape(-1).tolist()
        leaves.extend(flat)
        return v.shape
    leaves.append(v)
    return None


def _signed_zeros(v: tuple) -> Any:
    """The category key of a tuple: itself, or where it holds −0.0 a key that tells it from the
    same tuple with 0.0 (the two compare equal)."""
    neg = tuple(i for i, x in enumerate(v)
                if type(x) is float and x == 0.0 and math.copysign(1.0, x) < 0.0)
    return (_NEG_ZERO, neg, v) if neg else v


def _real(v: Any) -> float:
    """``float(v)``, with a signalling Decimal NaN (which refuses it) as NaN, and a number beyond
    float64 (a ``Fraction`` or ``int`` past 1.8e308, which refuses it) as the ±inf it rounds to."""
    try:
        return float(v)
    except ValueError:
        if isinstance(v, Decimal) and v.is_nan():
            return math.nan
        raise
    except OverflowError:
        return math.inf if v > 0 else -math.inf


#: a number written in text (digits, a point, an exponent), as :func:`_template` reads it
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
#: a first batch of texts is read as templates when it holds at least this many texts, and more
#: than half of them are distinct (most seen once: as categories no event could have power)
TEMPLATE_MIN_TEXTS = 20


def _template(text: str) -> tuple:
    """A text as (its template, the numbers in it): ``"answer=1.25 (n=3)"`` as
    ``("answer=# (n=#)", 1.25, 3.0)``; a text without digits as ``(text,)``."""
    numbers_ = _NUMBER.findall(text)
    if not numbers_:
        return (text,)
    return ("#".join(_NUMBER.split(text)), *map(float, numbers_))


def _parses(parse: Any, text: str) -> bool:
    try:
        parse(text)
    except (ValueError, TypeError, RecursionError):
        return False
    return True
