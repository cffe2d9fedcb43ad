"""Values as real code returns them, turned into the numbers and plain values dpaudit audits.

The pure functions behind :mod:`dpaudit.outputs` (which decides when each applies and says so in
its module docstring): complex numbers as their parts, times and durations as seconds, tables
(``to_numpy``) as arrays, dataclasses as dicts, sets as sorted tuples, nested values as their
leaves (at most :data:`MAX_LEAVES`), texts as the numbers in them (:func:`text_template`), and the
category key that keeps −0.0 apart from 0.0. Each is a function of the output, so an audit of
what it returns is an audit of a post-processing of the mechanism: its bounds stay sound. Their
names are public: :mod:`dpaudit.outputs` and :mod:`dpaudit.execution.described` call them.
"""

from __future__ import annotations

import dataclasses as _dataclasses
import datetime as _dt
import math
import re
from collections import OrderedDict as _OrderedDict
from decimal import Decimal
from fractions import Fraction
from typing import Any, Optional

import numpy as np


#: the key of the category −0.0, which a dict would merge with 0.0 (they compare equal): an object
#: no output can equal
NEG_ZERO = object()


def as_tuple(v: Any) -> Any:
    """A set as the tuple of its elements, sorted (by value where they compare, else by type and
    repr), so that sets of indices are audited like tuples of them; anything else as it is."""
    if type(v) is not set and type(v) is not frozenset:
        return v
    try:
        return tuple(sorted(v))
    except (TypeError, ArithmeticError):  # Decimal('NaN') beside a number: InvalidOperation
        return tuple(sorted(v, key=lambda x: (type(x).__name__, _sort_text(x))))


def _sort_text(x: Any) -> str:
    """``repr(x)``, or, for an int too long for Python to write as text (4,300 digits), its size
    and its bits in hex (which every int has): a set holding 10**5000 and a text was an internal
    error."""
    try:
        return repr(x)
    except ValueError:
        return f"<int of {x.bit_length()} bits> {x:x}" if isinstance(x, int) else object.__repr__(x)


def element_value(x: Any) -> float:
    """An element of a MIXED output as a number: a text or None (in the skeleton) as NaN."""
    if isinstance(x, str) or x is None:
        return math.nan
    return to_float(x)


def is_complex(v: Any) -> bool:
    """Whether ``v`` is a complex number, or a sequence or array holding one."""
    if isinstance(v, np.ndarray):
        return v.dtype.kind == "c"
    if isinstance(v, (list, tuple)):
        return any(isinstance(x, (complex, np.complexfloating)) for x in v)
    return isinstance(v, (complex, np.complexfloating))


def decomplex(v: Any) -> Any:
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


#: the time and duration types :func:`converted` turns into seconds (a ``date`` into its day number)
TIME_TYPES = (_dt.date, _dt.timedelta, np.datetime64, np.timedelta64)


def convertible(v: Any) -> bool:
    """Whether ``v`` is a time, a duration, or a table-like object with ``to_numpy`` (a pandas or
    polars Series or DataFrame), which :func:`converted` turns into numbers."""
    return isinstance(v, TIME_TYPES) or (not isinstance(v, (str, bytes, np.ndarray))
                                     and callable(getattr(type(v), "to_numpy", None)))


def converted(v: Any) -> Any:
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
        return type(v)(converted(x) if convertible(x) else x for x in v)
    if convertible(v):
        a = np.asarray(v.to_numpy())
        if a.dtype.kind in "biufc":
            return a.reshape(-1) if a.ndim != 1 else a
        return [converted(x) if convertible(x) else x for x in a.reshape(-1).tolist()]
    return v


def fields_of(v: Any) -> Any:
    """A dataclass instance as the dict of its fields (anything else as it is)."""
    if _dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: getattr(v, f.name) for f in _dataclasses.fields(v)}
    return v


#: outputs whose form is their type alone
_SCALAR_TYPES = frozenset((float, int, bool, str, bytes, type(None), complex))
#: a byte per scalar type, for the digest of a long sequence of scalars (one pass in C)
_SCALAR_CODES = {t: i for i, t in enumerate((float, int, bool, str, bytes, type(None), complex))}


def _order_key(k: Any) -> tuple:
    if isinstance(k, (int, float)) and not isinstance(k, bool) and k == k:
        x = to_float(k)  # an int past float64 as the ±inf it rounds to, told apart by its bits
        return (0, x, "" if math.isfinite(x) else _sort_text(k))
    return (1, 0.0, f"{type(k).__name__}:{_sort_text(k)}")


def form_of(v: Any, depth: int = 0, _memo: Optional[dict] = None) -> Any:
    """What an output shows beyond its values, as a hashable: its type (``3`` and ``3.0``, a numpy
    float64 and a Python float, ``True`` and ``1``), an array's dtype and shape (an object
    array's elements' forms too), whether a time has a zone, a sequence's type and its elements'
    forms (a tuple and a list), a dict's key order (the permutation from its keys sorted to its
    keys as inserted) and its keys' and values' forms, a set's elements' forms and its iteration
    order, a numpy time's unit, an array's memory layout. Two outputs with the same values and
    different forms are two releases (:mod:`dpaudit.outputs`). (A NaN's sign is not a form, nor
    audited: arithmetic makes −NaN on x86 beside the +NaN of ``np.nan``, so a correct mechanism
    returns both; docs/reports.md lists it with what the audit does not read.)

    A container's form is its type, its length and a digest of its parts' forms, so it stays small
    however long or deep the output, and an object met twice (``x = [x, x]``, 50 times over) is
    read once: the work is linear in the distinct objects."""
    t = type(v)
    if t in _SCALAR_TYPES:
        return t
    if t is _dt.datetime or t is _dt.time:  # naive or UTC: the same seconds, two forms
        return (t, v.tzinfo is not None)
    if isinstance(v, (np.datetime64, np.timedelta64)):  # its unit: str() shows ".000" for ms
        return (t, v.dtype.str)
    if t is np.ndarray:
        # dtype, shape and memory layout (C, Fortran or strided: .flags, .strides and
        # tobytes('A') show it)
        layout = "C" if v.flags.c_contiguous else "F" if v.flags.f_contiguous else "S"
        if v.dtype.kind == "O":  # its elements' forms too: 0 and 0.0 in an object array
            memo = {} if _memo is None else _memo
            return (t, v.dtype.str, v.shape, layout, _digest(v.reshape(-1).tolist(), (), depth, memo))
        return (t, v.dtype.str, v.shape, layout)
    if depth >= MAX_DEPTH or t not in (tuple, list, dict, set, frozenset):
        return t
    memo = {} if _memo is None else _memo
    hit = memo.get(id(v))
    if hit is not None:
        return hit[1]
    if t is dict:
        keys = list(v)
        try:  # the permutation from the keys sorted to their order as inserted
            order = tuple(sorted(range(len(keys)), key=lambda i: _order_key(keys[i])))
        except TypeError:
            order = ()
        # and which keys hold a −0.0: a key −0.0 is the key 0.0 (equal, one hash), so the keys'
        # values never show its sign bit, which a mechanism set by the data
        signs = tuple(i for i, k in enumerate(keys) if _negative_zero_in(k))
        form = (t, len(keys), _digest(keys + [v[k] for k in keys], (order, signs), depth, memo))
    elif t is set or t is frozenset:  # its elements' forms in the order it is audited in (sorted):
        ranked = as_tuple(v)  # {0, 1.0} and {0, 1}; and the permutation from that order to the
        pos = {x: i for i, x in enumerate(ranked)}  # set's own iteration order: {1, 9} built as
        order = tuple(pos.get(x, -1) for x in v)  # 1, 9 or as 9, 1 iterates as [1, 9] or [9, 1]
        form = (t, len(v), _digest(list(ranked), order, depth, memo))
    else:
        form = (t, len(v), _digest(v, (), depth, memo))
    memo[id(v)] = (v, form)  # v kept alive: its id stays its own
    return form


def _negative_zero_in(k: Any, depth: int = 0) -> bool:
    """Whether the dict key ``k`` is, or holds (in a tuple or frozenset), a float −0.0."""
    if isinstance(k, (float, np.floating)):
        return k == 0.0 and math.copysign(1.0, float(k)) < 0.0
    if isinstance(k, (complex, np.complexfloating)):  # either part's zero sign
        return _negative_zero_in(float(k.real)) or _negative_zero_in(float(k.imag))
    if depth < MAX_DEPTH and type(k) in (tuple, frozenset):
        return any(_negative_zero_in(x, depth + 1) for x in k)
    return False


def _digest(items: Any, extra: tuple, depth: int, memo: dict) -> bytes:
    """A digest of the forms of ``items`` in order (and of ``extra``): every position counts (a
    frozenset of the forms of the first 4,096 lost where each was, and a mechanism hid the exact
    sum in it)."""
    import hashlib

    h = hashlib.blake2b(repr(extra).encode(), digest_size=16)
    kinds = list(map(type, items))
    if all(k in _SCALAR_CODES for k in set(kinds)):  # scalars only: their types, a byte each
        h.update(b"scalars" + bytes(map(_SCALAR_CODES.__getitem__, kinds)))
        return h.digest()
    for x in items:
        h.update(b"\x1f" + repr(form_of(x, depth + 1, memo)).encode())
    return h.digest()


def form_name(form: Any) -> str:
    """A form in a few words, for messages: ``float``, ``numpy.float64``, ``list of 2``."""
    if isinstance(form, type):
        return form.__name__ if form.__module__ == "builtins" else f"{form.__module__.split('.')[0]}.{form.__name__}"
    if isinstance(form, tuple) and form and form[0] is np.ndarray:
        return f"array {np.dtype(form[1]).name} of shape {form[2]}"
    if isinstance(form, tuple) and form and form[0] is dict:
        return "dict with keys in another order"
    if isinstance(form, tuple) and form and isinstance(form[0], type):
        return f"{form[0].__name__} of {form_name(form[1][0]) if isinstance(form[1], tuple) and form[1] else '…'}"
    return repr(form)


def holds_zero(v: tuple) -> bool:
    """Whether the tuple ``v`` holds an element equal to 0 (0, 0.0, −0.0 or False); an element
    that cannot be compared so (an array) counts as not zero."""
    try:
        return 0.0 in v
    except (ValueError, TypeError):  # an element that does not compare to a bool (an array)
        return False


def is_nested(v: Any) -> bool:
    """Whether ``v`` is a list or tuple holding a list, tuple, array, dict or set."""
    return type(v) in (list, tuple) and any(
        type(x) in (list, tuple, dict, set, frozenset) or isinstance(x, np.ndarray) for x in v)


#: the most values a nested output may hold (a list of the same list repeated holds exponentially
#: many in a few bytes: a few hundred pickled bytes can spell 10^11 values)
MAX_LEAVES = 1 << 20


class TooNested(Exception):
    """A nested output holds more than :data:`MAX_LEAVES` values."""


def flatten(v: Any, leaves: list) -> Any:
    """Append the leaves of the nested value ``v`` to ``leaves`` in order (an array's in C order,
    a dict's in sorted key order, a set's sorted) and return its shape: None for a leaf, else the
    tuple of the shapes of its parts. Raises :class:`TooNested` past :data:`MAX_LEAVES`."""
    if len(leaves) > MAX_LEAVES:
        raise TooNested
    t = type(v)
    if t is list or t is tuple:
        return tuple(flatten(x, leaves) for x in v)
    if t is set or t is frozenset:  # its sorted tuple
        return ("set",) + tuple(flatten(x, leaves) for x in as_tuple(v))
    if t is dict:
        return ("{}",) + tuple(flatten(v[k], leaves)
                               for k in sorted(v, key=lambda k: (type(k).__name__, repr(k))))
    if isinstance(v, np.ndarray):
        flat = v.reshape(-1).tolist()
        leaves.extend(flat)
        return v.shape
    leaves.append(v)
    return None


def signed_zeros(v: tuple) -> Any:
    """The category key of a tuple: itself, or where it holds −0.0 a key that tells it from the
    same tuple with 0.0 (the two compare equal)."""
    neg = tuple(i for i, x in enumerate(v)
                if type(x) is float and x == 0.0 and math.copysign(1.0, x) < 0.0)
    return (NEG_ZERO, neg, v) if neg else v


def to_float(v: Any) -> float:
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


#: a number written in text (ASCII digits, a point, an exponent), as :func:`text_template` reads
#: it (``float`` also reads other scripts' digits, which would merge ``"३"`` with ``"3"``)
NUMBER_PATTERN = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
#: the same, capturing (its split keeps the numbers between the literals), behind a lookahead
#: for the characters a number starts with: the same matches, found three times as fast (the
#: engine skips the other characters instead of trying the pattern at each)
_NUMBER_SPLIT = re.compile(f"(?=[-+.0-9])({NUMBER_PATTERN.pattern})")
_FIXED = re.compile(r"(\+?)-?[0-9]+(?:\.([0-9]+))?")
_EXPONENT = re.compile(r"(\+?)-?[0-9](?:\.([0-9]+))?([eE])[-+][0-9]{2,3}")
#: a first batch of texts is read as templates when it holds at least this many texts, and more
#: than half of them are distinct (most seen once: as categories no event could have power)
TEMPLATE_MIN_TEXTS = 20


def spelling(token: str) -> Optional[str]:
    """The format spec that writes ``token`` back from ``float(token)``: ``""`` for Python's own
    spelling of the double (``repr``: ``str(x)``, ``json.dumps``, ``round``), else ``"d"`` (an
    integer), ``".3f"`` (three decimals, trailing zeros kept), ``".2e"``, with a leading ``"+"``
    when it has one; None when none does: leading zeros (``"05"``), ``"5."``, ``".5"``, ``"1e0"``,
    ``"-0"``, more digits than the double holds. Numbers written so carry more than their value,
    and stay text."""
    if not NUMBER_PATTERN.fullmatch(token):
        return None
    value = float(token)
    if value == 0 and token.startswith("-"):
        return None  # −0: the value does not show the sign to an event
    if repr(value) == token:
        return ""
    for pattern, exponent in ((_FIXED, False), (_EXPONENT, True)):
        m = pattern.fullmatch(token)
        if m is None:
            continue
        decimals = len(m.group(2) or "")
        spec = m.group(1) + (f".{decimals}{m.group(3)}" if exponent else
                             f".{decimals}f" if decimals else "d")
        written = format(value, spec.replace("d", ".0f"))
        return spec if written == token else None
    return None


def _literal(text: str) -> str:
    return text.replace("\\", "\\\\").replace("#", "\\#")


def text_template(text: str) -> tuple:
    """A text as (its template, the numbers in it): ``"answer=1.25 (n=3)"`` as
    ``("answer=# (n=#d)", 1.25, 3.0)``; a text without such numbers as ``(text,)``.

    Each number is ``#`` and the spec that writes it back from its value (:func:`spelling`; none
    for Python's own spelling), so the template and the numbers give back the text exactly:
    ``"05"`` and ``"5"``, or ``"1.50"`` and ``"1.5"``, differ in the template. A number no spec
    writes back stays in the template as it is written, and ``#`` and ``\\`` in the text are
    escaped (``\\#``, ``\\\\``), as is a ``+``, ``.`` or ``d`` right after a number in Python's
    spelling (``"0.0+d"`` is ``"#\\+d"``: ``"#+d"`` is ``"+0"``)."""
    pieces = _NUMBER_SPLIT.split(text)  # literal, number, literal, …: one scan of the text
    parts, numbers_ = [], []
    bare = False  # the last hole has Python's spelling (no spec): what follows must not extend it
    for k, piece in enumerate(pieces):
        spec = spelling(piece) if k % 2 else None
        if spec is not None:
            parts.append("#" + spec)
            numbers_.append(float(piece))
            bare = spec == ""
        elif piece:
            if bare and piece[0] in "+.d":
                parts.append("\\" + piece[0])
                piece = piece[1:]
            parts.append(_literal(piece))
            bare = False
    return ("".join(parts), *numbers_) if numbers_ else (text,)


def parses(parse: Any, text: str) -> bool:
    """Whether ``parse(text)`` (``float``, ``json.loads``, ...) succeeds on ``text``."""
    try:
        parse(text)
    except (ValueError, TypeError, RecursionError):
        return False
    return True


# -- plain values ------------------------------------------------------------------------------

#: the longest text (characters) or bytes value an output may hold: an output is a release,
#: not a log
MAX_TEXT = 4096
#: the most characters and bytes of text the outputs of one batch may hold together
MAX_BATCH_TEXT = 32 << 20
#: the deepest nesting of containers an output may have
MAX_DEPTH = 100
#: libraries whose tables and arrays are audited as their values (``to_numpy``, ``__array__``)
ARRAY_LIBRARIES = frozenset({"pandas", "polars", "torch", "jax", "jaxlib", "tensorflow", "cupy"})

#: scalar types that are plain as they are (numpy's numbers included: they hold nothing else)
_PLAIN_SCALARS = frozenset({float, int, bool, complex, type(None)} | {
    t for t in set(np.sctypeDict.values())
    if isinstance(t, type) and issubclass(t, np.generic) and np.dtype(t).kind in "biufc"})
#: other types audited as they are (exact types: a subclass may carry more than its value)
_PLAIN_OTHERS = frozenset({Decimal, _dt.date, _dt.datetime, _dt.time, _dt.timedelta})
#: numpy dtype kinds of plain values (bool, integers, floats, complex, texts, bytes, times)
_PLAIN_KINDS = "biufcUSmM"
#: the plain types a subclass is named after, with the conversion that drops the rest
_BASES = ((int, "int"), (float, "float"), (complex, "complex"), (str, "str"),
          (bytes, "bytes"), (bytearray, "bytes"), (tuple, "tuple"), (list, "list"),
          (dict, "dict"), (frozenset, "frozenset"), (set, "set"), (np.ndarray, "np.asarray"),
          (Decimal, "Decimal"), (_dt.datetime, "datetime"), (_dt.date, "date"),
          (_dt.timedelta, "timedelta"))


class NotPlain(Exception):
    """An output dpaudit does not audit: not a plain value, or larger than it keeps. ``cause`` is
    the one-line reason (``returned a ...``), ``value`` the output."""

    def __init__(self, cause: str, value: Any = None) -> None:
        super().__init__(cause)
        self.cause, self.value = cause, value


class _Walk:
    """What :func:`plain_outputs` has seen of one batch: texts (characters and bytes), and the
    containers already checked (by id: a container that recurs is checked once, its counts
    added again)."""

    __slots__ = ("text", "memo")

    def __init__(self) -> None:
        self.text = 0
        self.memo: dict = {}


def _class_name(t: type) -> str:
    module = getattr(t, "__module__", "") or ""
    if module in ("builtins", "__main__") or module.startswith("_dpaudit_user_"):
        return t.__qualname__
    return f"{module}.{t.__qualname__}"


def _attributes(v: Any) -> list:
    """The names of the instance attributes ``v`` carries (its ``__dict__`` and set slots)."""
    names = list(getattr(v, "__dict__", None) or ())
    for klass in type(v).__mro__:
        for slot in getattr(klass, "__slots__", ()) if klass.__module__ != "builtins" else ():
            if isinstance(slot, str) and slot not in ("__dict__", "__weakref__") \
                    and slot not in names and hasattr(v, slot):
                names.append(slot)
    return names


def not_plain(v: Any) -> NotPlain:
    """The error for ``v``, an object of a class that is not plain."""
    t = type(v)
    name = _class_name(t)
    for base, spelled in _BASES:
        if isinstance(v, base):
            attrs = _attributes(v)
            what = (f"a subclass of {base.__name__} carrying more than its value (attributes: "
                    f"{', '.join(attrs[:6])})") if attrs else f"a subclass of {base.__name__}"
            return NotPlain(f"returned a {name}, {what}; dpaudit audits plain values only: "
                            f"return {spelled}(x)", v)
    return NotPlain(f"returned a {name} object, not a plain value; dpaudit audits plain values "
                    f"only (numbers, texts, bytes, None, and tuples, lists, dicts, sets and numpy "
                    f"arrays of them): return the values it releases", v)


def _too_long(v: Any) -> NotPlain:
    if isinstance(v, (str, np.str_)) or (isinstance(v, np.ndarray) and v.dtype.kind == "U"):
        n = len(v) if not isinstance(v, np.ndarray) else v.dtype.itemsize // 4
        return NotPlain(f"returned a text of {n:,} characters; dpaudit audits texts of at most "
                        f"{MAX_TEXT:,} (an output is a release, not a log)", v)
    n = len(v) if not isinstance(v, np.ndarray) else v.dtype.itemsize
    return NotPlain(f"returned bytes of length {n:,}; dpaudit audits bytes of at most {MAX_TEXT:,} "
                    f"(an output is a release, not a log)", v)


def library_value(v: Any) -> bool:
    """Whether ``v`` is a table or an array of a library in :data:`ARRAY_LIBRARIES` (its class
    defined there, not a class that only names such a module)."""
    t = type(v)
    module = getattr(t, "__module__", "") or ""
    if module.split(".", 1)[0] not in ARRAY_LIBRARIES:
        return False
    import sys

    found = sys.modules.get(module)
    for part in t.__qualname__.split("."):
        found = getattr(found, part, None)
    return found is t


def _plain(v: Any, walk: _Walk, depth: int) -> tuple[Any, int]:
    """``v`` as a plain value (converted where the module docstring of :mod:`dpaudit.outputs`
    says) and how many values it holds; raises :class:`NotPlain`."""
    t = type(v)
    if t in _PLAIN_SCALARS:
        if t is not int and t is not bool and _may_hide(v):
            _check_precision(v)
        return v, 1
    if t is str or t is bytes or t is bytearray:
        if len(v) > MAX_TEXT:
            raise _too_long(v)
        walk.text += len(v)
        if t is str:
            _check_precision(v)
        return v, 1
    if depth > MAX_DEPTH:
        raise NotPlain(f"returned an output nested more than {MAX_DEPTH} levels deep (it cannot be "
                       f"sent back or audited)")
    if t is tuple or t is list or t is dict or t is set or t is frozenset:
        seen = walk.memo.get(id(v))
        if seen is not None:
            walk.text += seen[2]
            return seen[1], seen[3]
        before, count, changed = walk.text, 0, False
        if t is dict:
            items = []
            for k, x in v.items():
                pk, nk = _plain(k, walk, depth + 1)
                px, nx = _plain(x, walk, depth + 1)
                changed |= pk is not k or px is not x
                count += nk + nx
                items.append((pk, px))
                if count > MAX_LEAVES:
                    break
            out: Any = dict(items) if changed else v
        else:
            parts = []
            for x in v:
                px, nx = _plain(x, walk, depth + 1)
                changed |= px is not x
                count += nx
                parts.append(px)
                if count > MAX_LEAVES:
                    break
            out = t(parts) if changed else v
        if count > MAX_LEAVES:
            raise NotPlain(f"returned a nested output of more than {MAX_LEAVES:,} values", v)
        walk.memo[id(v)] = (v, out, walk.text - before, count)  # v kept alive: its id stays its own
        return out, count
    if t is np.ndarray:
        return _plain_array(v, walk, depth)
    if isinstance(v, np.generic):
        return _plain_numpy_scalar(v, walk)
    return _plain_object(v, walk, depth)


#: a dtype's metadata (np.dtype(float, metadata={...})) travels with the array, unshown by its
#: values and by dtype.str: a third hostile review put the dataset there, NOT REFUTED
_METADATA = ("returned a numpy array whose dtype carries metadata, which its values do not show: "
             "return np.asarray(x, dtype=x.dtype.str) or the values")


def _plain_array(v: np.ndarray, walk: _Walk, depth: int) -> tuple[Any, int]:
    """A numpy array of numbers, texts or times as it is (its size its count: texts within
    :data:`MAX_TEXT`, no NaN payload), of objects as it is once each element is plain."""
    kind = v.dtype.kind
    if v.dtype.metadata is not None:
        raise NotPlain(_METADATA, v)
    if kind in "US" and v.dtype.itemsize // (4 if kind == "U" else 1) > MAX_TEXT:
        raise _too_long(v)
    if kind in _PLAIN_KINDS:
        if kind in "US":
            walk.text += v.size * v.dtype.itemsize // (4 if kind == "U" else 1)
            if kind == "U":
                for x in v.reshape(-1).tolist():
                    _check_precision(x)
        why = nan_payloads(v) if kind not in "mM" else _numpy_times_beyond(v)
        if why is not None:
            raise NotPlain(why, v)
        return v, v.size
    if kind == "O":
        count = 0
        for x in v.reshape(-1):
            count += _plain(x, walk, depth + 1)[1]
            if count > MAX_LEAVES:
                raise NotPlain(f"returned a nested output of more than {MAX_LEAVES:,} values", v)
        return v, count
    raise NotPlain(f"returned a numpy array of dtype {v.dtype}; dpaudit audits arrays of numbers, "
                   f"texts and times only", v)


def _plain_numpy_scalar(v: np.generic, walk: _Walk) -> tuple[Any, int]:
    """A numpy number, text or time as it is (a text within :data:`MAX_TEXT`)."""
    kind = v.dtype.kind
    if kind not in _PLAIN_KINDS:
        raise NotPlain(f"returned a numpy {type(v).__name__} (dtype {v.dtype}); dpaudit audits "
                       f"numpy numbers, texts and times only", v)
    if kind in "US":
        if len(v) > MAX_TEXT:
            raise _too_long(v)
        walk.text += len(v)
    if kind in "mM":
        _check_precision(v)
    return v, 1


def _plain_object(v: Any, walk: _Walk, depth: int) -> tuple[Any, int]:
    """Any other value: a Decimal, Fraction or time as it is; an ``OrderedDict``, a namedtuple or
    a dataclass without attributes of their own, or a library's table or array, as the plain
    value of what it holds (:func:`plain_outputs`); else :class:`NotPlain`."""
    t = type(v)
    if t is Decimal:
        # as its text's template and value: Decimal("1.0") and Decimal("1.00") are one value,
        # and the exponent would be a release no event looks at
        _check_precision(v)
        return text_template(str(v)), 1
    if t in _PLAIN_OTHERS or t is Fraction:
        _check_precision(v)
        tz = getattr(v, "tzinfo", None)
        if tz is not None and type(tz) is not _dt.timezone:
            raise NotPlain(f"returned a {t.__name__} whose tzinfo is a {_class_name(type(tz))} "
                           f"(dpaudit audits times with a datetime.timezone or none)", v)
        return v, 1
    if t is _OrderedDict:  # its items, in order: all it holds
        return _plain(dict(v), walk, depth)
    if isinstance(v, tuple) and hasattr(t, "_fields") and not _attributes(v):  # a namedtuple
        return _plain(tuple(v), walk, depth)
    if _dataclasses.is_dataclass(v) and not isinstance(v, type):
        names = {f.name for f in _dataclasses.fields(v)}
        extra = [a for a in _attributes(v) if a not in names]
        if extra:
            raise NotPlain(f"returned a {_class_name(t)}, a dataclass carrying more than its fields "
                           f"(attributes: {', '.join(extra[:6])}); dpaudit audits plain values only: "
                           f"return dataclasses.asdict(x)", v)
        return _plain({f.name: getattr(v, f.name) for f in _dataclasses.fields(v)}, walk, depth)
    if library_value(v):
        if callable(getattr(t, "to_numpy", None)):
            why = _table_beyond_values(v)
            if why is not None:
                raise NotPlain(why, v)
            columns = getattr(v, "columns", None)
            if columns is not None and not callable(columns):  # a DataFrame: its column names too
                names = list(columns)
                if len(set(map(repr, names))) != len(names):
                    raise NotPlain(f"returned a {t.__name__} with repeated column names", v)
                for c in names:  # each column checked as a Series is, its name aside
                    why = _table_beyond_values(v[c], column=True)
                    if why is not None:
                        raise NotPlain(why, v)
                return _plain({c: converted(v[c]) for c in names}, walk, depth)
            return _plain(converted(v), walk, depth)
        if callable(getattr(t, "__array__", None)):
            return _plain(np.asarray(v), walk, depth)
    raise not_plain(v)


def _table_beyond_values(v: Any, column: bool = False) -> Optional[str]:
    """Why a pandas or polars value holds more than the values dpaudit audits it as, or None:
    a time zone (naive and UTC, or any two zones, give the same seconds), times finer than a
    microsecond, a Series' name (not a DataFrame ``column``'s: its name is a key of the dict the
    frame is audited as), an index of its own or a named one, ``.attrs``, a name on the columns, a
    categorical's list of categories (pandas ``category``, polars ``Enum``). A mechanism hid the
    exact sum in each of a Series' index, its name, a column name, a time zone and nanoseconds,
    and (a third hostile review) in ``.attrs``, the index's and the columns' names and the unused
    categories, and was NOT REFUTED."""
    fix = "return its values (x.to_numpy()) or a dict of them"
    what = type(v).__name__
    dtype = getattr(v, "dtype", None)
    tz = getattr(v, "tz", None) or getattr(dtype, "tz", None) or getattr(dtype, "time_zone", None)
    if tz is not None:
        return (f"returned a {what} in the time zone {_shorten(str(tz))}, which its values do not "
                f"show: return naive times (UTC), or {fix}")
    name = getattr(v, "name", None)
    if not column and name not in (None, "") and not callable(name):
        return f"returned a {what} named {_shorten(repr(name))}, which its values do not show: {fix}"
    index = getattr(v, "index", None)
    if index is not None and not callable(index) and (
            type(index).__name__ != "RangeIndex" or (index.start, index.step) != (0, 1)):
        return f"returned a {what} with an index of its own, which its values do not show: {fix}"
    unname = "return x.rename_axis(index=None, columns=None), or its values"
    if index is not None and not callable(index) and _named(index):
        return f"returned a {what} whose index is named, which its values do not show: {unname}"
    attrs = getattr(v, "attrs", None)
    if isinstance(attrs, dict) and attrs:  # pandas' free-form metadata travels with the object
        return f"returned a {what} carrying .attrs, which its values do not show: {fix}"
    columns = getattr(v, "columns", None)
    if columns is not None and not callable(columns) and _named(columns):
        return f"returned a {what} whose columns are named, which its values do not show: {unname}"
    flags = getattr(v, "flags", None)
    if getattr(flags, "allows_duplicate_labels", True) is False:
        return f"returned a {what} with flags set, which its values do not show: {fix}"
    unused = _unused_categories(v, dtype)
    if unused:
        where = "a column" if column else f"a {what}"
        return (f"returned {where} of categories, {unused} of them unused, which its values do not "
                f"show: drop them (x.cat.remove_unused_categories()), or {fix}")
    try:
        a = np.asarray(v.to_numpy())
    except Exception:  # noqa: BLE001 - the conversion itself says what is wrong, later
        return None
    return _numpy_times_beyond(a) if a.dtype.kind in "mM" else None


def _named(axis: Any) -> bool:
    """Whether a pandas axis carries a name (a MultiIndex: any of its levels' names)."""
    names = getattr(axis, "names", None)  # pandas' FrozenList is a list
    if not isinstance(names, (list, tuple)):
        names = [getattr(axis, "name", None)]
    return any(n not in (None, "") for n in names)


def _unused_categories(v: Any, dtype: Any) -> int:
    """How many categories a pandas ``category`` or a polars ``Enum`` lists that no value holds
    (what the values do not show; a category in use is shown by its value)."""
    try:
        if str(dtype) == "category":
            used = set(v.cat.remove_unused_categories().cat.categories)
            return len(v.cat.categories) - len(used)
        if type(dtype).__name__ == "Enum":
            cats = list(dtype.categories)
            return len(set(cats) - set(v.to_list()))
    except Exception:  # noqa: BLE001 - an object that only looks like one: its values decide
        return 0
    return 0


#: significant digits a double carries (17 print any double exactly)
DOUBLE_DIGITS = 17
#: a run of digits long enough to hold more than a double (a prefilter for :func:`_too_precise`)
_LONG_DIGITS = re.compile(r"[0-9][0-9.]{%d,}" % DOUBLE_DIGITS)


def _significant(number: str) -> int:
    """How many significant digits a number written in text has (``0.00120`` has 3)."""
    mantissa = re.split(r"[eE]", number, maxsplit=1)[0].lstrip("+-").replace(".", "")
    return len(mantissa.lstrip("0").rstrip("0")) if "." in number else len(mantissa.lstrip("0"))


def _too_precise(v: Any) -> Optional[str]:
    """Why ``v`` holds more than the double dpaudit audits it as, or None: a Decimal of more than
    17 significant digits, a Fraction whose denominator a double cannot hold, a text with such a
    number in it, a NaN whose bits carry a payload. dpaudit reads each as the double it rounds to
    (every NaN as one value), so the digits beyond would be a release no event looks at: a
    mechanism put the exact sum in the 30th decimal of a Decimal, a Fraction, a numeric text and
    a NaN's payload, and each was NOT REFUTED."""
    t = type(v)
    if t is float or t is complex or (isinstance(v, np.generic) and v.dtype.kind in "fc"):
        return nan_payloads(np.asarray([v])) if _may_hide(v) else None
    if t is Decimal:
        if not v.is_finite():
            return None
        digits = len(v.normalize().as_tuple().digits)
        return None if digits <= DOUBLE_DIGITS or _is_double(v) else (
            f"returned a Decimal of {digits} significant digits ({_shorten(str(v))}); dpaudit "
            f"audits it as the double it rounds to ({DOUBLE_DIGITS} digits), which would hide "
            f"the rest: round it, or return float(x)")
    if t is Fraction:
        # a Fraction is audited as the double it rounds to: Fraction(1, 3) and Fraction(1/3), or a
        # numerator past 2^53, would be one value
        return None if _is_double(v) else (
            f"returned the Fraction {_shorten(str(v))}, which is not a double; dpaudit audits it as "
            f"the double it rounds to, which would hide the rest: return float(x)")
    if t in _TIME_SCALARS or isinstance(v, (np.datetime64, np.timedelta64)):
        return _time_beyond_seconds(v)
    if t is str and _LONG_DIGITS.search(v):
        for number in NUMBER_PATTERN.findall(v):
            if _significant(number) > DOUBLE_DIGITS and not _is_double(Decimal(number)):
                return (f"returned a text holding the number {_shorten(number)} "
                        f"({_significant(number)} significant digits); dpaudit reads numbers in "
                        f"texts as doubles ({DOUBLE_DIGITS} digits), which would hide the rest: "
                        f"write at most {DOUBLE_DIGITS} significant digits")
    return None


#: the Python time types whose every field :func:`_time_beyond_seconds` looks at
_TIME_SCALARS = frozenset({_dt.datetime, _dt.time, _dt.timedelta})
#: the timedelta of one microsecond, the resolution :func:`converted` keeps
_MICROSECOND = _dt.timedelta(microseconds=1)


def _exact_seconds(micro: int) -> bool:
    """Whether ``micro`` microseconds survive as ``micro / 10**6`` seconds in a double (true up to
    about 2^52 microseconds, 142 years either side of 1970)."""
    return round(Decimal(micro / 10 ** 6) * 10 ** 6) == micro


def _time_beyond_seconds(v: Any) -> Optional[str]:
    """Why a time holds more than the seconds dpaudit audits it as (:func:`converted`), or None:
    a UTC offset or a zone name (the seconds are counted in the time's own zone, so the offset
    cancels), ``fold`` (which never changes the value), digits finer than a microsecond (numpy's
    ns to as), or more microseconds than a double holds. A mechanism put the exact sum in each
    of these and was NOT REFUTED."""
    fix = "return the time in UTC (or naive) with fold=0, or its seconds as a float"
    if isinstance(v, (np.datetime64, np.timedelta64)):
        return _numpy_times_beyond(np.asarray(v))
    tz = getattr(v, "tzinfo", None)
    if tz is not None and tz is not _dt.timezone.utc:
        return (f"returned a {type(v).__name__} with the time zone {_shorten(repr(tz))}; dpaudit "
                f"audits a time as seconds in its own zone, which drops the zone's offset and "
                f"name: {fix}")
    if getattr(v, "fold", 0):
        return (f"returned a {type(v).__name__} with fold=1; dpaudit audits a time as its seconds, "
                f"which do not show fold: {fix}")
    if type(v) is _dt.time:
        return None
    micro = (v - _dt.datetime(1970, 1, 1, tzinfo=v.tzinfo)) // _MICROSECOND \
        if type(v) is _dt.datetime else v // _MICROSECOND
    if not _exact_seconds(micro):
        return (f"returned the {type(v).__name__} {_shorten(str(v))}, whose microseconds a double "
                f"of seconds does not hold (dpaudit audits it as seconds since 1970): {fix}")
    return None


def _numpy_times_beyond(a: np.ndarray) -> Optional[str]:
    """:func:`_time_beyond_seconds` for numpy times (an array or a scalar as one): a unit finer
    than a microsecond whose values are not whole microseconds, or more microseconds than a
    double of seconds holds."""
    letter = "M" if a.dtype.kind == "M" else "m"
    try:
        micro = a.astype(f"{letter}8[us]")
        whole = bool(np.all((micro.astype(a.dtype) == a) | np.isnat(a)))
    except (TypeError, ValueError, OverflowError):  # a unit of years or months in a duration
        return (f"returned numpy times of dtype {a.dtype}, which dpaudit cannot count in "
                f"microseconds; return them as datetime64[us] or as seconds")
    if not whole:
        return (f"returned numpy times of dtype {a.dtype} holding digits finer than a "
                f"microsecond; dpaudit audits times as seconds to the microsecond, which would "
                f"hide them: return datetime64[us] values, or the number itself")
    ticks = micro.astype(np.int64)[~np.isnat(micro)]
    large = ticks[np.abs(ticks) >= 2 ** 52].tolist()  # below 2^52 every count survives
    if any(abs(x) >= 2 ** 53 or not _exact_seconds(x) for x in large):
        return (f"returned numpy times of dtype {a.dtype} whose microseconds a double of seconds "
                f"does not hold; return them as datetime64[us] values near 1970, or as numbers")
    return None


def _is_double(v: Any) -> bool:
    """Whether the exact number ``v`` (a Decimal or a Fraction) is a double: ``Decimal(0.1)``
    has 55 digits and ``Fraction(0.1)`` a 56-bit denominator, and carry nothing beyond it."""
    try:
        x = float(v)
    except (OverflowError, ValueError):
        return False
    return math.isfinite(x) and (Decimal(x) == v if isinstance(v, Decimal) else Fraction(x) == v)


def _shorten(text: str, limit: int = 48) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _check_precision(v: Any) -> None:
    why = _too_precise(v)
    if why is not None:
        raise NotPlain(why, v)


#: the bits of the NaN arithmetic makes, either sign, by float width (any other NaN has a payload)
_QUIET_BY_WIDTH = {2: (np.uint16, (0x7E00, 0xFE00)), 4: (np.uint32, (0x7FC00000, 0xFFC00000)),
                   8: (np.uint64, (0x7FF8000000000000, 0xFFF8000000000000))}


def _may_hide(v: Any) -> bool:
    """Whether a number may hold more than the float64 it is audited as (a NaN, whose bits may
    carry a payload, or a long double): the cheap test before :func:`nan_payloads`."""
    return v != v or (isinstance(v, np.generic) and v.dtype.kind == "f" and v.dtype.itemsize > 8)


def nan_payloads(arr: np.ndarray) -> Optional[str]:
    """Why a float or complex array holds more than the float64 values dpaudit audits it as, or
    None; fast when it holds no NaN: a NaN with a payload (float16, float32 and float64 alike, and
    either part of a complex; every NaN is one value to the audit), or a long double that float64
    does not hold. A mechanism hid the exact sum in float32 NaNs, complex NaNs and the last bits of
    long doubles, and each was NOT REFUTED."""
    kind = arr.dtype.kind
    if kind == "c":
        return nan_payloads(np.ascontiguousarray(arr).real) or nan_payloads(np.ascontiguousarray(arr).imag)
    if kind != "f":
        return None
    width = arr.dtype.itemsize
    if width not in _QUIET_BY_WIDTH:  # a long double: the float64 it rounds to must be all of it
        finite = arr[np.isfinite(arr)]
        if finite.size and not np.array_equal(finite.astype(np.float64).astype(arr.dtype), finite):
            return (f"returned numbers of dtype {arr.dtype} that float64 does not hold; dpaudit "
                    f"audits them as float64, which would hide the rest: return float64 values")
        return nan_payloads(arr[np.isnan(arr)].astype(np.float64)) if np.isnan(arr).any() else None
    if not np.isnan(arr).any():
        return None
    unsigned, quiet = _QUIET_BY_WIDTH[width]
    bits = np.ascontiguousarray(arr).view(unsigned)[np.isnan(arr)]
    odd = bits[(bits != quiet[0]) & (bits != quiet[1])]
    if not odd.size:
        return None
    return (f"returned a NaN carrying a payload (bits {int(odd[0]):#0{2 + 2 * width}x}, "
            f"{arr.dtype}); dpaudit audits every NaN as one value, which would hide the payload: "
            f"return float('nan')")


def plain_outputs(seq: list) -> list:
    """The outputs of one batch as plain values: numbers (Python's and numpy's), texts and bytes
    (at most :data:`MAX_TEXT` long each, :data:`MAX_BATCH_TEXT` in all), None, times, ``Decimal``
    and ``Fraction``, and tuples, lists, dicts, sets and numpy arrays of them (at most
    :data:`MAX_LEAVES` values an output). A namedtuple without attributes of its own becomes its
    tuple, a dataclass without them the dict of its fields, an ``OrderedDict`` its dict, and a
    table or an array of a library of :data:`ARRAY_LIBRARIES` its numpy values: each the whole of
    what it holds. Anything else, a subclass of a plain type included (a float carrying an
    attribute), raises :class:`NotPlain`: an audit of part of a release is no audit of it.
    Returns ``seq`` itself when nothing was converted."""
    walk = _Walk()
    out = None
    for i, v in enumerate(seq):
        t = type(v)
        if t is float:
            if v != v:
                _check_precision(v)
            continue
        if t in _PLAIN_SCALARS:
            if t is not int and t is not bool and _may_hide(v):
                _check_precision(v)
            continue
        if t is str or t is bytes:
            if len(v) > MAX_TEXT:
                raise _too_long(v)
            walk.text += len(v)
            if t is str:
                _check_precision(v)
        elif t is np.ndarray and v.dtype.kind in "biufc":  # a numeric vector: nothing to convert
            why = nan_payloads(v) if v.dtype.metadata is None else _METADATA
            if why is not None:
                raise NotPlain(why, v)
            continue
        else:
            p, _ = _plain(v, walk, 0)
            if p is not v:
                if out is None:
                    out = list(seq)
                out[i] = p
        if walk.text > MAX_BATCH_TEXT:
            raise NotPlain(f"returned more than {MAX_BATCH_TEXT:,} characters of text in one batch "
                           f"of {len(seq):,} outputs, more than dpaudit keeps (an output is a "
                           f"release, not a log)", v)
    return seq if out is None else out
