"""The target of a check, opened: the function to audit, where it runs and the claim it states.

A file target (``FILE.py[:FUNCTION]``) is opened in the sandbox child
(:class:`~dpaudit.execution.sandbox.SandboxExecutor`: the file is imported only there, and this
process sees the function through the child's description of it) or, with ``--in-process``, by
:func:`dpaudit.loader.load_mechanism`. A function given to :func:`dpaudit.check` is opened as it
is. Either way the claim is resolved here once: the command line's fields over
``[tool.dpaudit.targets]`` over the declaration (in the sandbox, the declaration as the file's
source states it, :func:`dpaudit.execution.declared.read_declaration`: the child's word is the
audited code's, which can patch dpaudit there).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from dpaudit.errors import LoadError
from dpaudit.execution.process import printable

__all__ = ["Target", "LibraryTarget", "SpecTarget", "open_file", "open_function", "open_spec",
           "CURVE_KEYS", "clean_record", "clean_facts", "function_named", "refuse_unchecked"]

#: Seconds the sandbox grants beyond ``--timeout`` so the auditor can stop on its own first (it
#: stops between draws; a draw of a slow mechanism, thousands of calls in one batch, is then cut by
#: the sandbox, which stops the child: the run ends within the limit and this, plus the reports).
TIMEOUT_GRACE = 0.5
#: the claim stated as a privacy curve (dpaudit.curves): a decorator keyword or a flag
CURVE_KEYS = ("rho", "mu", "renyi", "profile")
#: the flag that states each claim field on the command line
_CLAIM_FLAGS = {"epsilon": "--epsilon", "delta": "--delta", "neighbours": "--neighbours",
                "domain": "--domain", "size": "--size"}
#: a function as the sandbox child may name it: a dotted Python identifier
_FUNCTION_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


@dataclass
class Target:
    """One opened target. ``func`` is the function itself (in process) or None (sandboxed:
    ``executor`` runs it and ``facts`` describe it); ``fresh`` the extra children of the
    fresh-process check (sandboxed sampled audits only); ``overrides`` the claim fields the run
    states (flags over the target's table); ``declared`` the declaration to audit."""

    given: str
    name: str
    path: Optional[str]
    isolation: str
    func: Optional[Callable] = None
    executor: Any = None
    fresh: Any = None
    facts: Optional[Mapping[str, Any]] = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    declared: Mapping[str, Any] = field(default_factory=dict)
    #: claim fields the source computed with OpenDP's map, recomputed by dpaudit
    #: (``{"epsilon": "meas.map(1.0) = 0.5"}``)
    computed: Mapping[str, str] = field(default_factory=dict)

    @property
    def curve(self) -> dict:
        """The target's curve claim: ``--rho``/``--mu`` (or a ``[tool.dpaudit.targets]`` table)
        over the declaration's; a point claim given on the command line (``--epsilon``) replaces
        a declared curve, as any flag replaces the field it states."""
        flagged = {k: self.overrides[k] for k in CURVE_KEYS if self.overrides.get(k) is not None}
        if flagged:
            return flagged
        if self.overrides.get("epsilon") is not None:
            return {}
        return {k: self.declared[k] for k in CURVE_KEYS if self.declared.get(k) is not None}

    def spec(self, *, curve: bool = False) -> Any:
        """The :class:`~dpaudit.spec.MechanismSpec` to audit; for a curve claim, the spec with a
        placeholder ε (the curve audit reads the curve, never ε)."""
        from dpaudit.spec import MechanismSpec

        overrides = dict(self.overrides)
        extra: dict = {}
        if curve:
            overrides = {k: v for k, v in overrides.items()
                         if k not in CURVE_KEYS and k not in ("epsilon", "delta")}
            extra = {"epsilon": 1.0}
        if self.func is not None:
            return MechanismSpec.from_function(self.func, name=self.name, **extra, **overrides)
        from dpaudit.execution.described import remote_spec

        declaration = {k: v for k, v in self.declared.items() if not curve or k not in CURVE_KEYS}
        return remote_spec(self.facts or {}, name=self.name, declaration=declaration, **extra,
                           **overrides)

    #: a reproduce line of this target needs ``--in-process`` (a library's module by path)
    in_process_flag: bool = False
    #: a library target's library (name, version, its claim), as its record names it
    library: Optional[Mapping[str, Any]] = None

    def claim_flags(self, spec: Any, *, point: bool = True) -> list[str]:
        """The claim flags of a reproduce line: the whole claim as audited (``point=False``:
        without ε and δ, for a curve claim, whose flag its engine gives)."""
        from dpaudit.reproduce import claim_flags

        return claim_flags(epsilon=spec.epsilon if point else None,
                           delta=spec.delta if point else None, neighbours=spec.neighbours,
                           domain=spec.domain, size=spec.size)

    def close(self) -> None:
        for part in (self.executor, self.fresh):
            if part is not None:
                part.close()


@dataclass
class LibraryTarget(Target):
    """A library target (``lib:opendp:...``): its spec is the adapter's, its claim the library's
    own, so a reproduce line names only the claim flags the run gave."""

    given_flags: tuple = ()
    built: Any = None

    def claim_flags(self, spec: Any, *, point: bool = True) -> list[str]:
        return list(self.given_flags)

    def spec(self, *, curve: bool = False) -> Any:
        return self.built

    @property
    def curve(self) -> dict:
        library = self.library or {}
        return {"library": library["curve"]} if library.get("curve") else {}


@dataclass
class SpecTarget(Target):
    """An in-memory target (the pytest fixture's mechanism, an audit of the suite): a function or
    a :class:`~dpaudit.spec.MechanismSpec`, audited in this process. ``keywords`` are the
    engine's own keywords as the caller gave them (``samples=``, ``confidence=``, ``examples=``,
    ``grid=``, ...): the engine is called with them and the run's seed. ``exact`` asks for the
    exact engine; ``claim_curve`` is the curve claim to audit ({}: a point claim); ``mechanism``
    is what the engine is handed as it is (a spec, or the suite's target, whose keywords
    may carry claim fields), None when the engine audits :meth:`spec` (a function, named and
    claimed as :func:`open_function` does: a ``dpaudit check`` line reruns it)."""

    keywords: Mapping[str, Any] = field(default_factory=dict)
    exact: bool = False
    claim_curve: Mapping[str, Any] = field(default_factory=dict)
    mechanism: Any = None

    @property
    def curve(self) -> dict:
        return {} if self.exact else dict(self.claim_curve)

    @property
    def rerunnable(self) -> bool:
        """Whether a ``dpaudit check`` line reruns the target (the check's context then goes to
        the engine); an in-memory spec's engine writes its own line."""
        return self.mechanism is None

    def spec(self, *, curve: bool = False) -> Any:
        from dpaudit.spec import MechanismSpec

        if self.mechanism is None:
            return super().spec(curve=curve)
        if isinstance(self.mechanism, MechanismSpec):
            return self.mechanism
        # the suite's function: its claim fields are among the keywords (as the engine reads them)
        claim = {k: v for k, v in self.keywords.items() if k in _DECLARATION}
        return MechanismSpec.from_function(self.mechanism, **claim)


#: the claim fields of a declaration (:func:`dpaudit.mechanism`'s keywords)
_DECLARATION = ("epsilon", "delta", "neighbours", "domain", "size", "log_prob", "distribution",
                "output", "float_events", "float", "rho", "mu", "renyi", "profile")


def open_spec(mechanism: Any, settings: Any, *, claim: Optional[Mapping[str, Any]] = None,
              keywords: Optional[Mapping[str, Any]] = None, exact: bool = False,
              as_given: bool = False) -> SpecTarget:
    """An in-memory target: ``mechanism`` (a function or a MechanismSpec) with the ``claim``
    fields over its declaration or its spec's fields, audited by the engine the plan chooses
    with ``keywords``. A function is named and claimed as :func:`open_function` does (its record
    is the one :func:`dpaudit.check` gives it); a spec, or anything with ``as_given``, is handed
    to the engine as it is (its claim fields already in it, or among ``keywords``); ``as_given``
    (the audit suite's, whose definition names its engine) states no curve of its own."""
    from dpaudit.spec import MechanismSpec

    claim = dict(claim or {})
    keywords = dict(keywords or {})
    if not isinstance(mechanism, MechanismSpec) and not as_given:
        base = open_function(mechanism, settings)
        return SpecTarget(given=base.name, name=base.name, path=None, isolation=base.isolation,
                          func=mechanism, in_process_flag=base.in_process_flag, overrides={**base.overrides, **claim},
                          declared=base.declared, keywords=keywords, exact=exact,
                          claim_curve={} if exact else _curve_claim(mechanism, claim))
    func = getattr(mechanism, "func", mechanism)
    curve = {} if exact or as_given else _curve_claim(func, claim)
    # a point claim's fields go into the spec; a curve's reach the curve audit as keywords
    given = _with_claim(mechanism, claim) if claim and not curve else mechanism
    name = str(getattr(given, "name", None) or _function_name(given))
    return SpecTarget(given=name, name=name, path=None, isolation="none (in process)", func=func,
                      overrides=claim, keywords=keywords, exact=exact, claim_curve=curve,
                      mechanism=given)


def _with_claim(spec: Any, claim: Mapping[str, Any]) -> Any:
    """``spec`` with the ``claim`` fields over its own (every field carries over, the claim's
    float policy or float events over the spec's policy)."""
    from dpaudit.spec import MechanismSpec

    fields = {"epsilon": spec.epsilon, "delta": spec.delta, "neighbours": spec.neighbours,
              "domain": spec.domain, "size": spec.size, "log_prob": spec.log_prob,
              "distribution": spec.distribution, "output": spec.output}
    if "float_events" not in claim:
        fields["float"] = spec.float_policy
    return MechanismSpec.from_function(spec.func, name=spec.name, **{**fields, **claim})


def _curve_claim(func: Any, claim: Mapping[str, Any]) -> dict:
    """The curve claim to audit: the ``claim``'s (``mu=``, ``rho=``, ...), else the
    declaration's when the claim states no ε; {} for a point claim."""
    from dpaudit.spec import declaration_of

    given = {k: claim[k] for k in CURVE_KEYS if claim.get(k) is not None}
    if given or claim.get("epsilon") is not None:
        return given
    decl = declaration_of(func) if callable(func) else None
    if decl is None or not decl.curve or decl.epsilon is not None:
        return {}
    return dict(decl.curve)


def open_function(func: Callable, settings: Any) -> Target:
    """A function given to :func:`dpaudit.check`, audited in this process under the name a
    ``dpaudit check --in-process`` run of its file gives it (``path/to/file.py:name``)."""
    from dpaudit.spec import declaration_of

    name = _function_name(func)
    target = Target(given=name, name=name, path=None, isolation="none (in process)", func=func)
    target.overrides = settings.claim_for(name, name)
    decl = declaration_of(func)
    target.declared = dict(decl.curve or {}) if decl is not None else {}
    return target


def _function_name(func: Callable) -> str:
    """``FILE.py:QUALNAME`` for a function defined in a file (the path relative to the working
    folder when below it, as :attr:`dpaudit.loader.LoadedMechanism.target`), else its name."""
    import inspect

    from dpaudit.report.model import relative_path

    qual = getattr(func, "__qualname__", None) or getattr(func, "__name__", "mechanism")
    try:
        path = inspect.getsourcefile(func)
    except TypeError:
        path = None
    if path is None or "<" in qual:
        return qual
    return f"{relative_path(str(Path(path).resolve()))}:{qual}"


def open_file(given: str, settings: Any, remaining: Optional[float], *, fresh: bool,
              warm: Callable[[], None]) -> Target:
    """Open a file target: the sandbox child spawned (and the fresh-process check's children when
    ``fresh``), ``warm()`` run while they boot, the file imported in the child (a crash there is a
    load error); or, with ``--in-process``, the file loaded here."""
    from dpaudit.loader import load_mechanism, parse_target

    path, function = parse_target(given)
    if settings.in_process:
        warm()
        loaded = load_mechanism(path, function)
        target = Target(given=given, name=loaded.target, path=path,
                        isolation="none (in process)", func=loaded.func)
        from dpaudit.spec import declaration_of

        target.overrides = settings.claim_for(given, target.name)
        decl = declaration_of(loaded.func)
        target.declared = dict(decl.curve or {}) if decl is not None else {}
        return target
    target = _sandboxed(given, path, function, settings, remaining, fresh)
    try:
        target.executor.spawn()  # the child boots while this process imports the auditor
        if target.fresh is not None:
            target.fresh.spawn()
        warm()
        target.executor.start()  # the child imports the file: a crash there is a load error
        _describe(target, function, settings)
    except BaseException:
        target.close()
        raise
    return target


def _sandboxed(given: str, path: str, function: Optional[str], settings: Any,
               remaining: Optional[float], fresh: bool) -> Target:
    from dpaudit.execution.sandbox import SandboxExecutor

    def sandbox() -> SandboxExecutor:
        return SandboxExecutor(path, function, call_timeout=settings.call_timeout,
                               memory=settings.memory, isolation=settings.isolation,
                               pass_env=settings.pass_env,
                               total_timeout=None if remaining is None else remaining + TIMEOUT_GRACE,
                               stated_timeout=settings.timeout)

    checker = None
    if fresh:
        from dpaudit.execution.honesty import FreshProcesses

        checker = FreshProcesses(sandbox)  # fresh children: is the noise fixed at import?
    return Target(given=given, name=given, path=path, isolation="", executor=sandbox(),
                  fresh=checker)


def _describe(target: Target, function: Optional[str], settings: Any) -> None:
    """Name the sandboxed function from the child's facts and resolve its declaration."""
    from dpaudit.execution.declared import computed_text, read_declaration, reconcile
    from dpaudit.report.model import relative_path

    facts = clean_facts(target.executor.facts)
    target.facts = facts
    target.name = (f"{relative_path(str(Path(target.path).expanduser().resolve()))}:"
                   f"{function_named(facts, function)}")
    target.isolation = target.executor.isolation_in_force
    if settings.sensitivity is not None:
        return  # the search reads neighbours, domain and size itself
    # the declaration as the file's source states it, read here: the child's is the word of the
    # audited code, which can patch dpaudit in the sandbox
    overrides = settings.claim_for(target.given, target.name)
    source = read_declaration(target.path, target.name.rsplit(":", 1)[1])
    _refuse_opaque_curve(source, overrides, target.name)
    declared, unchecked = reconcile(source, facts.get("declaration"), path=target.path)
    unchecked = tuple(k for k in unchecked if overrides.get(k) is None)
    target.declared = refuse_unchecked(declared, unchecked, target.path, target.name)
    target.computed = {k: v for k, v in computed_text(source, target.declared).items()
                       if overrides.get(k) is None}
    target.overrides = overrides


def clean_record(value: Any) -> Any:
    """``value`` with control characters and line breaks in every string escaped as visible text
    (:func:`~dpaudit.execution.process.one_line`): what the audited code wrote reaches neither
    the terminal nor a report raw, and no field of a record spans two lines (a message carrying
    ``"\\nimport os; ..."`` written to a ``.pth`` file would run at the next Python start)."""
    from dpaudit.execution.process import one_line

    if isinstance(value, str):
        return one_line(value)
    if isinstance(value, dict):
        return {clean_record(k): clean_record(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(clean_record(v) for v in value)
    return value


def clean_facts(facts: Any) -> dict:
    """The sandbox child's description of the mechanism (its ``"ready"`` reply: function, path,
    found_by, call_form_error, source, declaration) with every string made one line. The child
    runs the audited code, which can patch dpaudit's modules there, so each text it sends is
    cleaned here, in dpaudit's process, before it names anything, reaches an error message or a
    report; a reply that is not a table is an empty one (its absent fields are load errors)."""
    return clean_record(facts) if isinstance(facts, dict) else {}


def function_named(facts: Mapping[str, Any], asked: Optional[str]) -> str:
    """The audited function's name. The child reports it (it found the decorated one), but the
    child runs the audited code, which can patch dpaudit's modules there: the name is taken only
    when it is the one asked for, or a dotted identifier when none was (a forged ``"mechanism "``
    dodged the project's claim for ``FILE:mechanism``; a forged newline reached the terminal)."""
    got = facts.get("function")
    if asked is not None:
        if got != asked:
            raise LoadError(f"the sandbox child reported function {printable(repr(got))[:80]}, "
                            f"not {asked!r} (the audited file tampered with dpaudit in the sandbox)")
        return asked
    if not isinstance(got, str) or not _FUNCTION_NAME.fullmatch(got):
        raise LoadError(f"the sandbox child reported a function name that is none: "
                        f"{printable(repr(got))[:80]} (the audited file tampered with dpaudit in "
                        f"the sandbox)")
    return got


def _refuse_opaque_curve(source: Any, overrides: Mapping[str, Any], name: str) -> None:
    """A curve claim the source does not spell as a literal, nor computes with OpenDP's map of a
    zCDP measurement (``rho=meas.map(1)``, recomputed), is a usage error naming its flag
    (:data:`dpaudit.execution.declared.COMPUTABLE`). It was dropped silently, and the run then
    asked for ``--epsilon``."""
    computed = getattr(source, "computed", {}) or {}
    opaque = [k for k in ("rho", "mu") if k in getattr(source, "opaque", ())
              and k not in computed and overrides.get(k) is None and overrides.get("epsilon") is None]
    if opaque:
        flags = " or ".join(f"--{k} {k.upper() if k == 'mu' else 'R'}" for k in opaque)
        raise LoadError(f"{name}: its declaration of {', '.join(opaque)} is not a literal: dpaudit "
                        f"reads a curve claim from the source as a number, or as OpenDP's map of "
                        f"a zCDP measurement for rho); give {flags}")


def refuse_unchecked(declared: dict, unchecked: tuple, path: str, name: str) -> dict:
    """The declaration to audit, when no claim field is taken on the sandboxed code's word alone.

    A field the source does not spell as a literal (``delta=compute()``, or a declaration made
    as ``f = dpaudit.mechanism(...)(f)``) is known only from the child, which runs the audited
    code and can patch dpaudit there: a leaky sum whose child reported δ = 0.999 was NOT
    REFUTED. Such a field is a usage error naming the flag that states it (module-level
    constants, ``EPSILON = 0.5``, are read from the source). The output kind is a hint, not a
    claim: taken from the child it could only hide the outputs, so it is dropped and detected."""
    refused = [k for k in unchecked if k in _CLAIM_FLAGS]
    if refused:
        said = ", ".join(f"{k} = {_claim_text(declared.get(k))}" for k in refused)
        flags = " and ".join(_CLAIM_FLAGS[k] for k in refused)
        raise LoadError(f"{name}: its declaration of {', '.join(refused)} is not readable from the "
                        f"source (not a literal, nor OpenDP's map of a measurement whose "
                        f"arguments are literals or names bound to one, or not an "
                        f"@dpaudit.mechanism(...) decorator on the def); dpaudit does not take a "
                        f"claim on the sandboxed code's word (it reported {said}): give {flags}")
    return {k: v for k, v in declared.items() if k not in unchecked}


def _claim_text(value: Any) -> str:
    text = repr(tuple(value)) if isinstance(value, list) else repr(value)
    return printable(text)[:60]


def left(deadline: Optional[float]) -> Optional[float]:
    """Seconds left before ``deadline`` (a monotonic time), at least a millisecond; None: none."""
    return None if deadline is None else max(0.001, deadline - time.monotonic())
