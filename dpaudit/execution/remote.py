"""The mechanism as dpaudit's process sees it when only the sandbox child has imported its file.

The child describes the function it loaded (name, ``@dpaudit.mechanism`` declaration, call form,
positional arity, source line; see :mod:`dpaudit.execution.child`). From that description:

* :func:`remote_spec` builds the :class:`~dpaudit.spec.MechanismSpec` the auditor needs (claim,
  relation, domain, size, call form), around a stand-in callable that refuses to run here: every
  call goes through the sandbox executor.
* :func:`remote_function` is a callable with the function's arity whose calls run in the child
  (:meth:`~dpaudit.execution.sandbox.SandboxExecutor.call`), for the sensitivity search.

Declared exact laws (``log_prob``, ``distribution``) are code of the file too, so they stay in
the child: a sandboxed audit is always a sampled one.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import fractions
import inspect
import numbers
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Optional

import numpy as np

from dpaudit.errors import LoadError
from dpaudit.spec import CallForm, MechanismSpec, mechanism

__all__ = ["remote_spec", "remote_function", "Opaque", "opaque_outputs"]

_P = inspect.Parameter


def _signature(names: list[str], size: bool = False) -> inspect.Signature:
    params = [_P(n, _P.POSITIONAL_OR_KEYWORD) for n in names]
    if size:
        params.append(_P("size", _P.POSITIONAL_OR_KEYWORD, default=None))
    return inspect.Signature(params)


def _stand_in(name: str) -> Callable:
    def stand_in(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{name} runs only in the sandbox child")

    stand_in.__name__ = stand_in.__qualname__ = name.rsplit(".", 1)[-1]
    return stand_in


def remote_spec(facts: Mapping[str, Any], *, name: str, **overrides: Any) -> MechanismSpec:
    """The spec of the function described by ``facts``; ``overrides`` (command-line claim fields)
    win over its declaration, as in :meth:`MechanismSpec.from_function`."""
    if facts.get("call_form") is None:
        raise LoadError(f"{name}: {facts.get('call_form_error') or 'cannot be called'}")
    form = CallForm(facts["call_form"])
    func = _stand_in(facts["function"])
    names = {CallForm.DATA: ["data"], CallForm.DATA_RNG: ["data", "rng"],
             CallForm.BATCH: ["data", "rng"]}[form]
    func.__signature__ = _signature(names, size=form is CallForm.BATCH)  # type: ignore[attr-defined]
    decl = facts.get("declaration")
    if decl:
        mechanism(**{k: v for k, v in decl.items() if v is not None})(func)
    spec = MechanismSpec.from_function(func, name=name, **overrides)
    source = facts.get("source")
    return replace(spec, source=None if source is None else tuple(source))


def remote_function(executor: Any, facts: Mapping[str, Any]) -> Callable:
    """A callable with the arity of the described function; each call runs in the sandbox."""
    def call(*args: Any) -> Any:
        return executor.call(*args)

    call.__name__ = call.__qualname__ = str(facts["function"]).rsplit(".", 1)[-1]
    arity = facts.get("positional")
    if arity is not None:
        call.__signature__ = _signature([f"arg{i}" for i in range(int(arity))])  # type: ignore
    if facts.get("sensitivity") is not None:
        call.sensitivity = facts["sensitivity"]  # type: ignore[attr-defined]
    return call


@dataclass(frozen=True, slots=True)
class Opaque:
    """An output of a class dpaudit's process does not load (one defined in the audited file, or a
    library's that :func:`opaque_outputs` cannot turn into numbers), as that process sees it: the
    class name and the value's ``repr`` (two outputs are the same category iff both agree), so
    reading it back never imports the file, or runs what its pickle names, here."""

    type_name: str
    text: str

    def __repr__(self) -> str:
        return self.text if self.text.startswith(self.type_name) else f"{self.type_name}({self.text})"


def opaque_outputs(outputs: Any, user_prefix: str = "_dpaudit_user_") -> Any:
    """``outputs`` (a list from one batch) in forms dpaudit's process reads back
    (:mod:`dpaudit.execution.safe_pickle`): a namedtuple as its tuple, a dataclass as the dict of
    its fields, a table with ``to_numpy`` (pandas, polars) or an array-like with ``__array__``
    (torch, jax) as its numpy array, a number of another library as an int or a float, inside
    tuples, lists, dicts and sets too; any other value as an :class:`Opaque` (its class name and
    repr). Arrays and plain values are returned as they are."""
    if not isinstance(outputs, list):
        return outputs
    for v in outputs:
        if type(v) not in _PLAIN and not isinstance(v, (np.ndarray, np.generic)):
            break
    else:
        return outputs
    return [_portable(v, user_prefix, 0) for v in outputs]


#: types sent back as they are
_PLAIN = frozenset({float, int, str, bool, type(None), bytes, complex})
#: other types dpaudit's process reads back (:data:`dpaudit.execution.safe_pickle.ALLOWED`)
_READ_BACK = frozenset({bytearray, decimal.Decimal, fractions.Fraction, datetime.datetime,
                        datetime.date, datetime.time, datetime.timedelta, collections.OrderedDict})


def _portable(v: Any, prefix: str, depth: int, memo: Optional[dict] = None) -> Any:
    t = type(v)
    if t in _PLAIN or isinstance(v, (np.ndarray, np.generic)) or depth > 8:
        return v
    if (t is tuple or t is list) and all(type(x) in _PLAIN for x in v):
        return v  # the common per-call output, a tuple of numbers: nothing to convert or copy
    if t is tuple or t is list or t is dict:
        # a container is converted once however often it recurs (a list of the same list
        # repeated is exponentially large when walked, and small when pickled)
        memo = {} if memo is None else memo
        hit = memo.get(id(v))
        if hit is not None:
            return hit[1]
        if t is dict:
            out: Any = {k: _portable(x, prefix, depth + 1, memo) for k, x in v.items()}
        else:
            out = t(_portable(x, prefix, depth + 1, memo) for x in v)
        memo[id(v)] = (v, out)  # v kept alive, so its id is not reused while converting
        return out
    if isinstance(v, tuple) and hasattr(v, "_fields"):  # a namedtuple
        return tuple(_portable(x, prefix, depth + 1, memo) for x in v)
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: _portable(getattr(v, f.name), prefix, depth + 1, memo)
                for f in dataclasses.fields(v)}
    if t in _READ_BACK:
        return v
    if t is set or t is frozenset:
        return t(_portable(x, prefix, depth + 1, memo) for x in v)
    try:
        if callable(getattr(t, "to_numpy", None)):
            return np.asarray(v.to_numpy())
        if callable(getattr(t, "__array__", None)):
            return np.asarray(v)
        if isinstance(v, numbers.Integral):  # a number type of another library (gmpy2, sympy)
            return int(v)
        if isinstance(v, numbers.Real):
            return float(v)
    except Exception:  # a value that will not convert: as an Opaque below
        pass
    # any other value of the audited file's classes, or a library's that is not a function,
    # travels as its class name and repr: its pickle would name a class that dpaudit's process
    # does not load (a function goes on as it is: it cannot be sent back, an ERROR that says so)
    if t.__module__.startswith(prefix):
        return Opaque(t.__qualname__, repr(v)[:500])
    if callable(v):
        return v
    return Opaque(f"{t.__module__}.{t.__qualname__}", repr(v)[:500])
