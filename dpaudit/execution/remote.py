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

import inspect
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

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
    """An output whose class is defined in the audited file, as dpaudit's process sees it: the
    class name and the value's ``repr`` (two outputs are the same category iff both agree), so
    reading it back never imports the file here."""

    type_name: str
    text: str

    def __repr__(self) -> str:
        return self.text if self.text.startswith(self.type_name) else f"{self.type_name}({self.text})"


def opaque_outputs(outputs: Any, user_prefix: str = "_dpaudit_user_") -> Any:
    """``outputs`` (a list from one batch) with every value of a class from the audited file
    replaced by an :class:`Opaque` (arrays and lists of plain values are returned as they are)."""
    if not isinstance(outputs, list):
        return outputs
    for i, v in enumerate(outputs):
        if type(v).__module__.startswith(user_prefix):
            break
    else:
        return outputs
    return [Opaque(type(v).__qualname__, repr(v)[:500])
            if type(v).__module__.startswith(user_prefix) else v for v in outputs]
