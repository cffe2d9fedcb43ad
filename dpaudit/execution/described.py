"""The mechanism as dpaudit's process sees it when only the sandbox child has imported its file.

The child describes the function it loaded (name, ``@dpaudit.mechanism`` declaration, call form,
positional arity, source line; see :mod:`dpaudit.execution.child`). From that description:

* :func:`remote_spec` builds the :class:`~dpaudit.spec.MechanismSpec` the auditor needs (claim,
  relation, domain, size, call form), around a stand-in callable that refuses to run here: every
  call goes through the sandbox executor.
* :func:`remote_function` is a callable with the function's arity whose calls run in the child
  (:meth:`~dpaudit.execution.sandbox.SandboxExecutor.call`), for the sensitivity search.
* :func:`portable_outputs` is the child's check that a batch's outputs are plain values (and
  their conversion where one is the whole of what a value holds), before they are sent back.

Declared exact laws (``log_prob``, ``distribution``) are code of the file too, so they stay in
the child: a sandboxed audit is always a sampled one.
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from typing import Any, Callable, Mapping, Optional

import numpy as np

from dpaudit.errors import LoadError
from dpaudit.output_values import library_value, not_plain, plain_outputs
from dpaudit.spec import CallForm, MechanismSpec, mechanism

__all__ = ["remote_spec", "remote_function", "portable_outputs"]

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


def remote_spec(facts: Mapping[str, Any], *, name: str, declaration: Optional[Mapping[str, Any]] = None,
                **overrides: Any) -> MechanismSpec:
    """The spec of the function described by ``facts``; ``overrides`` (command-line claim fields)
    win over its declaration, as in :meth:`MechanismSpec.from_function`. ``declaration`` (the
    :func:`dpaudit.spec.mechanism` keywords, as :func:`dpaudit.execution.declared.reconcile`
    checks them against the file's source) replaces the one the child reported."""
    if facts.get("call_form") is None:
        raise LoadError(f"{name}: {facts.get('call_form_error') or 'cannot be called'}")
    form = CallForm(facts["call_form"])
    func = _stand_in(facts["function"])
    names = {CallForm.DATA: ["data"], CallForm.DATA_RNG: ["data", "rng"],
             CallForm.BATCH: ["data", "rng"]}[form]
    func.__signature__ = _signature(names, size=form is CallForm.BATCH)  # type: ignore[attr-defined]
    decl = facts.get("declaration") if declaration is None else declaration
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


def portable_outputs(outputs: Any) -> Any:
    """``outputs`` (one batch's, a list or the batch form's array or table) as the plain values
    dpaudit audits (:func:`dpaudit.output_values.plain_outputs`: a namedtuple as its tuple, a
    dataclass as the dict of its fields, a pandas or polars table or a torch or jax array as its
    numpy values), or :class:`~dpaudit.output_values.NotPlain` saying why an output is none. The
    child checks here only to fail early with that message: dpaudit's process reads the reply
    with :func:`dpaudit.execution.safe_pickle.loads` and checks every output again."""
    if isinstance(outputs, np.ndarray):
        if type(outputs) is not np.ndarray:
            raise not_plain(outputs)
        if outputs.dtype.kind == "O":
            return plain_outputs(list(outputs))
        plain_outputs([outputs])  # texts no longer than dpaudit audits
        return outputs
    if not isinstance(outputs, list) and library_value(outputs) \
            and callable(getattr(type(outputs), "to_numpy", None)):
        outputs = np.asarray(outputs.to_numpy())  # a batch as one Series or DataFrame
        return outputs if outputs.dtype.kind in "biufc" else plain_outputs(
            list(outputs) if outputs.ndim == 1 else [list(r) for r in outputs])
    return plain_outputs(outputs if isinstance(outputs, list) else list(outputs))


#: the name the child imported before outputs were checked as plain values
opaque_outputs = portable_outputs
