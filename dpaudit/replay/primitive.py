"""``@dpaudit.primitive``: declare a noise primitive of your own, with its sensitivity and budget.

A library's own noise function (``laplace_mechanism(values, sensitivity, epsilon, rng)``) is
where a developer states what the noise pays for: "this input moves by at most Δ between
neighbours, and I spend ε on it". Decorated with ::

    @dpaudit.primitive(sensitivity="sensitivity", epsilon="epsilon", input="values")
    def laplace_mechanism(values, sensitivity, epsilon, rng): ...

every call made during a replay audit is recorded with its input, the declared sensitivity,
ε and δ and the caller's ``file:line``; on the neighbour's run the call is not made and the
record's output is returned (frozen). A pair on which ``‖input(D) − input(D′)‖ > sensitivity``
is an **accounting violation** at that call site (:mod:`dpaudit.replay.compare`). Outside an
audit the decorated function is called as it is, at the cost of one context-variable lookup.

Each of ``sensitivity``, ``epsilon`` and ``delta`` is a number, the name of one of the function's
parameters (its value at each call), or a callable given the call's arguments as a dict. ``input``
names the parameter the noise is added to (the first parameter when omitted); ``norm`` is the
norm of the sensitivity (``"l1"``, ``"l2"`` or ``"linf"``; ``"l1"`` by default, ``"l2"`` for a
Gaussian primitive). ``distribution="laplace"`` says that the primitive's ε scales with the
input's shift (ε·‖Δ‖/s, as Laplace noise does); ``"gaussian"`` that it is a Gaussian primitive
with its declared (ε, δ).
"""

from __future__ import annotations

import functools
import inspect
import numbers
import os
from typing import Any, Callable, Optional

import numpy as np

from dpaudit.errors import InvalidArgument
from dpaudit.replay.session import current, snapshot
from dpaudit.replay.sites import call_site
from dpaudit.replay.tracked import track_output

__all__ = ["primitive", "declared_primitive", "NORMS"]

NORMS = ("l1", "l2", "linf")
_ATTR = "__dpaudit_primitive__"


def _check_spec(name: str, value: Any, params: list[str], optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if isinstance(value, str):
        if value not in params:
            raise InvalidArgument.bad(name, value, f"a number, a callable or one of the parameters "
                                                   f"{', '.join(params)}")
        return value
    if callable(value):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= 0:
        raise InvalidArgument.bad(name, value, "a number >= 0, a parameter name or a callable")
    return float(value)


def _resolve(spec: Any, arguments: dict) -> Optional[float]:
    if spec is None:
        return None
    if isinstance(spec, str):
        value = arguments.get(spec)
    elif callable(spec):
        value = spec(arguments)
    else:
        value = spec
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _public(arguments: dict, drop: set) -> dict:
    out = {}
    for k, v in arguments.items():
        if k in drop or isinstance(v, np.random.Generator):
            continue
        if isinstance(v, (numbers.Number, str, bool, type(None))):
            out[k] = v
        elif isinstance(v, np.ndarray) and v.size <= 64:
            out[k] = snapshot(v)
        elif isinstance(v, (list, tuple)) and len(v) <= 64 and all(isinstance(x, numbers.Number) for x in v):
            out[k] = list(v)
    return out


def primitive(func: Optional[Callable] = None, *, sensitivity: Any, epsilon: Any = None,
              delta: Any = 0.0, input: Optional[str] = None, norm: Optional[str] = None,
              distribution: Optional[str] = None, name: Optional[str] = None) -> Any:
    """Declare ``func`` a noise primitive (module docstring). Arguments are checked now: a bad
    declaration fails at import with a message naming it."""
    if norm is not None and norm not in NORMS:
        raise InvalidArgument.bad("norm", norm, f"one of {', '.join(NORMS)}")
    if distribution not in (None, "laplace", "gaussian"):
        raise InvalidArgument.bad("distribution", distribution, "None, 'laplace' or 'gaussian'")

    def wrap(f: Callable) -> Callable:
        if not callable(f):
            raise InvalidArgument.bad("primitive", f, "a callable")
        sig = inspect.signature(f)
        params = list(sig.parameters)
        if not params:
            raise InvalidArgument.bad("primitive", getattr(f, "__name__", f),
                                      "a function taking the value the noise is added to")
        source = input if input is not None else params[0]
        if source not in params:
            raise InvalidArgument.bad("input", input, f"one of the parameters {', '.join(params)}")
        s_spec = _check_spec("sensitivity", sensitivity, params)
        e_spec = _check_spec("epsilon", epsilon, params, optional=True)
        d_spec = _check_spec("delta", delta, params, optional=True)
        chosen_norm = norm or ("l2" if distribution == "gaussian" else "l1")
        label = name or getattr(f, "__qualname__", getattr(f, "__name__", "primitive"))
        drop = {source} | {x for x in (s_spec, e_spec, d_spec) if isinstance(x, str)}
        code = getattr(f, "__code__", None)  # its first line is the decorator's (Python ≥ 3.8)
        at = f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}" if code is not None else None

        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            run = current()
            if run is None or run.depth > 0:
                return f(*args, **kwargs)
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = dict(bound.arguments)
            declared = {"sensitivity": _resolve(s_spec, arguments),
                        "epsilon": _resolve(e_spec, arguments),
                        "delta": _resolve(d_spec, arguments) or 0.0, "norm": chosen_norm,
                        "at": at}
            params_public = _public(arguments, drop)
            params_public.update({"sensitivity": declared["sensitivity"], "epsilon": declared["epsilon"],
                                  "delta": declared["delta"]})
            out = run.primitive_call(source="primitive", method=label, site=call_site(),
                                     value=arguments[source], declared=declared,
                                     params=params_public, distribution=distribution,
                                     call=lambda: f(*args, **kwargs))
            return track_output(run, out)

        setattr(wrapper, _ATTR, {"sensitivity": sensitivity, "epsilon": epsilon, "delta": delta,
                                 "input": source, "norm": chosen_norm, "distribution": distribution})
        return wrapper

    return wrap if func is None else wrap(func)


def declared_primitive(func: Callable) -> Optional[dict]:
    """What ``@primitive`` declared on ``func`` (None for any other function)."""
    d = getattr(func, _ATTR, None)
    return d if isinstance(d, dict) else None
