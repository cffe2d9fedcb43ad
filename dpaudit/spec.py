"""MechanismSpec: a mechanism callable together with the claim it makes.

A mechanism is any of (docs/ARCHITECTURE.md#a-mechanism):

* ``f(data, rng)``: ``data`` a 1-D float ``numpy`` array, ``rng`` a ``numpy.random.Generator``;
* ``f(data)``: the mechanism brings its own randomness (then a rerun gives other numbers);
* ``f(data, rng, size=k)``: the batch form, returning ``k`` outputs at once (much faster audits).

Its claim is declared with :func:`mechanism` on the function, or given as overrides (CLI flags win
over a declaration). Reference mechanisms may also give their exact output law as ``log_prob(data, y)``
(log density or log pmf of output ``y`` on input ``data``) or ``distribution(data)`` (a frozen
``scipy.stats`` distribution), so they can be audited exactly as well as by sampling.
"""

from __future__ import annotations

import inspect
import types
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Callable, Mapping, Optional

import numpy as np

from dpaudit.claims import (
    ClaimNotion,
    Domain,
    Neighbours,
    PrivacyClaim,
    check_delta,
    check_epsilon,
    check_size,
    claim_notion,
    privacy_claim,
)
from dpaudit.errors import InvalidArgument, MechanismError, UsageError
from dpaudit.validation import check_float_policy

__all__ = [
    "OutputKind",
    "CallForm",
    "Declaration",
    "MechanismSpec",
    "mechanism",
    "declaration_of",
    "float_policy_of",
    "curve_of",
    "DEFAULT_NEIGHBOURS",
    "DEFAULT_DOMAIN",
    "DEFAULT_SIZE",
]

DEFAULT_NEIGHBOURS = Neighbours.ADD_REMOVE
DEFAULT_DOMAIN = Domain(0.0, 1.0)
DEFAULT_SIZE = 10

_ATTR = "__dpaudit__"


class OutputKind(str, Enum):
    """What a mechanism returns, as detected from its samples."""

    REAL = "real"            # a real scalar with a continuous-looking law
    DISCRETE = "discrete"    # an integer or a hashable category (finitely many atoms seen)
    BOOL = "bool"
    VECTOR = "vector"        # a fixed-length tuple / 1-D array of numbers
    NONE = "none"            # always None (e.g. an SVT that answers nothing)
    MIXED = "mixed"          # tuples / lists of varying length or with None: (index, value) | None

    @property
    def description(self) -> str:
        return {
            "real": "real scalar", "discrete": "integer or categorical", "bool": "boolean",
            "vector": "fixed-length numeric vector", "none": "None",
            "mixed": "tuple or list of varying length (or None)",
        }[self.value]


class CallForm(str, Enum):
    """How the callable takes its randomness."""

    DATA = "f(data)"
    DATA_RNG = "f(data, rng)"
    BATCH = "f(data, rng, size=k)"


@dataclass(frozen=True, slots=True)
class Declaration:
    """What ``@dpaudit.mechanism(...)`` wrote on a function; every field may be missing (None)."""

    epsilon: Optional[float] = None
    delta: Optional[float] = None
    neighbours: Optional[Neighbours] = None
    domain: Optional[Domain] = None
    size: Optional[int] = None
    log_prob: Optional[Callable[[np.ndarray, Any], float]] = None
    distribution: Optional[Callable[[np.ndarray], Any]] = None
    output: Optional[OutputKind] = None
    #: ``"error"`` | ``"warn"`` | ``"off"`` (:data:`dpaudit.validation.FLOAT_POLICIES`)
    float_policy: Optional[str] = None
    notion: Optional[ClaimNotion] = None
    #: a claim stated as a privacy curve, ``{"rho" | "mu" | "renyi" | "profile": value}``
    #: (:func:`dpaudit.curve_audit` audits it)
    curve: Optional[Mapping[str, Any]] = None

    @classmethod
    def make(cls, *, epsilon=None, delta=None, neighbours=None, domain=None, size=None,
             log_prob=None, distribution=None, output=None, float_events=None, rho=None, mu=None,
             renyi=None, profile=None, **policy: Any) -> "Declaration":
        """Validate each given field (a bad value raises InvalidArgument naming it).
        ``neighbours`` is a relation or a notion users speak (``"bounded"``, ``"unbounded"``,
        ``"add-remove-public-size"``, ``"change-one"``: :func:`dpaudit.claims.claim_notion`).
        ``float`` is the float policy (:func:`float_policy_of`; ``float_events=False`` is its
        older spelling of ``float="off"``)."""
        chosen = float_policy_of(float_events=float_events, **policy)
        curve = curve_of(rho=rho, mu=mu, renyi=renyi, profile=profile)
        if curve is not None and (epsilon is not None or delta is not None):
            raise InvalidArgument(f"{next(iter(curve))}= states the claim as a curve: give it "
                                  f"without epsilon/delta")
        notion = None if neighbours is None else claim_notion(neighbours)
        return cls(
            epsilon=None if epsilon is None else check_epsilon(epsilon),
            delta=None if delta is None else check_delta(delta),
            neighbours=None if notion is None else notion.relation,
            notion=notion,
            domain=None if domain is None else Domain.parse(domain),
            size=None if size is None else check_size(size),
            log_prob=log_prob,
            distribution=distribution,
            output=None if output is None else OutputKind(output),
            float_policy=chosen,
            curve=curve,
        )

    def merged(self, other: "Declaration") -> "Declaration":
        """``other``'s fields win where they are set (CLI flags over a decorator)."""
        values = {f: getattr(self, f) for f in self.__dataclass_fields__}
        for f in self.__dataclass_fields__:
            v = getattr(other, f)
            if v is not None:
                values[f] = v
        return Declaration(**values)


def curve_of(*, rho: Any = None, mu: Any = None, renyi: Any = None,
             profile: Any = None) -> Optional[dict[str, Any]]:
    """A claim stated as a privacy curve (``rho`` ρ-zCDP, ``mu`` μ-GDP, ``renyi`` [(α, ε_α), …],
    ``profile`` a callable δ(ε)), checked for its form: at most one, ρ and μ finite and > 0, Rényi
    orders > 1 with ε_α ≥ 0, a callable profile; None when none is given. What each means is
    :mod:`dpaudit.curves.claims`'s."""
    given = {k: v for k, v in (("rho", rho), ("mu", mu), ("renyi", renyi), ("profile", profile))
             if v is not None}
    if not given:
        return None
    if len(given) > 1:
        raise InvalidArgument(f"give one curve claim, not {' and '.join(given)}")
    (key, value), = given.items()
    if key in ("rho", "mu"):
        check_epsilon(value, key)  # a finite number > 0, as ε is
        return {key: float(value)}
    if key == "renyi":
        try:
            pairs = tuple((float(a), float(e)) for a, e in value)
        except (TypeError, ValueError):
            raise InvalidArgument.bad("renyi", value, "a list of (alpha, epsilon_alpha) pairs") from None
        if not pairs or any(not (a > 1 and e >= 0) or not np.isfinite(a + e) for a, e in pairs):
            raise InvalidArgument.bad("renyi", value, "pairs with alpha > 1 and epsilon_alpha >= 0")
        return {key: pairs}
    if not callable(value) and not callable(getattr(value, "delta", None)) \
            and not callable(getattr(value, "get_delta_for_epsilon", None)):
        raise InvalidArgument.bad("profile", value, "a callable delta(epsilon), an OpenDP profile "
                                                    "or a dp-accounting PrivacyLossDistribution")
    return {key: value}


def float_policy_of(*, float_events: Any = None, **policy: Any) -> Optional[str]:
    """The float policy given as ``float="error" | "warn" | "off"`` (or its older spelling
    ``float_events``: False is ``"off"``, True is ``"error"``), validated; None when neither is
    given. Other keywords are refused by name."""
    extra = sorted(k for k in policy if k not in ("float", "float_policy"))
    if extra:
        said = {"neighbors": "neighbours", "eps": "epsilon", "neighbour": "neighbours"}.get(extra[0])
        raise InvalidArgument(f"unknown keyword argument {extra[0]!r}"
                              + (f": did you mean {said!r}?" if said else ""))
    value = policy.get("float", policy.get("float_policy"))
    if float_events is not None:
        old = "error" if _check_flag("float_events", float_events) else "off"
        if value is not None and check_float_policy(value) != old:
            raise InvalidArgument(f"float={value!r} and float_events={float_events!r} disagree: "
                                  f"give float only")
        return old
    return None if value is None else check_float_policy(value)


def _check_flag(name: str, v: Any) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise InvalidArgument.bad(name, v, "True or False")
    return bool(v)


def mechanism(func: Optional[Callable] = None, *, epsilon=None, delta=None, neighbours=None,
              domain=None, size=None, log_prob=None, distribution=None, output=None,
              float_events=None, rho=None, mu=None, renyi=None, profile=None, **policy):
    """Declare a mechanism's privacy claim on the function itself.

    >>> @mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=10)
    ... def noisy_sum(data, rng):
    ...     return float(data.sum() + rng.laplace(scale=1.0))

    The function is returned unchanged (it stays callable as before); the declaration is stored on
    it and read by :meth:`MechanismSpec.from_function`, ``dpaudit check`` and the pytest plugin.
    Arguments are validated now, so a bad declaration fails at import with a clear message.

    ``float="error" | "warn" | "off"`` is the float policy of its audits (docs/floating-point.md).
    Every audit of real outputs answers two questions apart: the *logic* (the claim for the
    mechanism as a model over the reals) and the *float64 implementation* (events on the bits of
    its outputs, :mod:`dpaudit.estimators.floats`: porosity, Mironov 2012). ``"error"`` (the
    default) refutes a porous mechanism; ``"warn"`` reports a float-only refutation and passes;
    ``"off"`` asks the logic question only, for a model of a mechanism over the reals (a textbook
    definition). A flag or keyword of the audit, then ``[tool.dpaudit]``, come before the
    decorator. ``float_events=False`` is the older spelling of ``float="off"``.

    A claim stated as a privacy curve takes one of ``rho=`` (ρ-zCDP), ``mu=`` (μ-GDP),
    ``renyi=[(α, ε_α), …]`` (Rényi DP) or ``profile=`` (a callable δ(ε)) instead of ε and δ;
    :func:`dpaudit.curve_audit` and ``dpaudit check`` audit it over the whole curve
    (docs/curves.md).
    """
    decl = Declaration.make(epsilon=epsilon, delta=delta, neighbours=neighbours, domain=domain,
                            size=size, log_prob=log_prob, distribution=distribution, output=output,
                            float_events=float_events, rho=rho, mu=mu, renyi=renyi,
                            profile=profile, **policy)

    def wrap(f: Callable) -> Callable:
        if not callable(f):
            raise InvalidArgument.bad("mechanism", f, "a callable")
        setattr(f, _ATTR, decl)
        return f

    return wrap if func is None else wrap(func)


def declaration_of(func: Callable) -> Optional[Declaration]:
    """The :class:`Declaration` written by :func:`mechanism`, or None."""
    d = getattr(func, _ATTR, None)
    return d if isinstance(d, Declaration) else None


def _call_form(func: Callable) -> CallForm:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return CallForm.DATA_RNG
    params = list(sig.parameters.values())
    positional = [p for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    var_pos = any(p.kind is p.VAR_POSITIONAL for p in params)
    takes_size = "size" in sig.parameters and sig.parameters["size"].kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    named = [p.name for p in positional if p.name != "size"]
    takes_rng = var_pos or len(named) >= 2
    if takes_rng and takes_size:
        return CallForm.BATCH
    if takes_rng:
        return CallForm.DATA_RNG
    if not named and not var_pos:
        raise InvalidArgument.bad("mechanism", getattr(func, "__name__", func),
                                  "a callable taking (data) or (data, rng)")
    return CallForm.DATA


def _source(func: Callable) -> Optional[tuple[str, int]]:
    try:
        f = inspect.unwrap(func)
        path = inspect.getsourcefile(f)
        line = inspect.getsourcelines(f)[1]
        return (path, line) if path else None
    except (TypeError, OSError):
        return None


#: The most characters of a mechanism's exception message kept (its first line).
MESSAGE_CHARS = 500


def _message(exc: BaseException) -> str:
    """``": "`` and the first line of ``exc``'s message (at most :data:`MESSAGE_CHARS`), or ``""``;
    a message that cannot be made (``__str__`` raises or returns no text) is said to be so."""
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - the audited code's __str__
        return " (its message could not be read)"
    line = text.splitlines()[0] if text.strip() else ""
    if len(line) > MESSAGE_CHARS:
        line = line[:MESSAGE_CHARS] + "…"
    return f": {line}" if line else ""


def _not_deferred(outputs: list, data: np.ndarray) -> list:
    """``outputs``, unless the calls returned coroutines or generators (an ``async def`` or a
    function with ``yield``): their work has not run, and each object, a new category by its
    address, would have passed for noise (a leaking mechanism NOT REFUTED)."""
    first = outputs[0] if outputs else None
    if isinstance(first, (types.CoroutineType, types.GeneratorType, types.AsyncGeneratorType)):
        for out in outputs:
            if isinstance(out, (types.CoroutineType, types.GeneratorType)):
                out.close()  # no "never awaited" warning
        what = ("a coroutine (an async def: wrap it in a plain def that calls asyncio.run)"
                if isinstance(first, types.CoroutineType) else
                "a generator (it yields: return the output instead)")
        raise MechanismError(f"returned {what}", data)
    return outputs


@dataclass(frozen=True, slots=True)
class MechanismSpec:
    """A mechanism plus its claim: everything an auditor needs, validated.

    ``size`` is the number of records in a dataset (for ``add-remove``, in the larger dataset of
    a pair; for ``linf`` and ``l1``, the length of the answer / count vector).
    """

    func: Callable
    claim: PrivacyClaim
    neighbours: Neighbours = DEFAULT_NEIGHBOURS
    domain: Domain = DEFAULT_DOMAIN
    size: int = DEFAULT_SIZE
    name: str = ""
    call_form: CallForm = CallForm.DATA_RNG
    log_prob: Optional[Callable[[np.ndarray, Any], float]] = None
    distribution: Optional[Callable[[np.ndarray], Any]] = None
    output: Optional[OutputKind] = None
    source: Optional[tuple[str, int]] = field(default=None, compare=False)
    #: the float policy (:func:`mechanism`): ``"error"``, ``"warn"`` or ``"off"`` (the logic
    #: question only: the mechanism audited as a model over the reals)
    float_policy: str = "error"
    #: neighbouring pairs another evidence engine points at (the replay stage of ``dpaudit
    #: check``: :func:`dpaudit.replay.command.first_pairs`), scored before the structured
    #: patterns; chosen on that engine's own calls, never on the audit's samples
    first_pairs: tuple = field(default=(), compare=False)

    @property
    def float_events(self) -> bool:
        """Whether the float64 question is asked (the policy is not ``"off"``)."""
        return self.float_policy != "off"

    @property
    def epsilon(self) -> float:
        return self.claim.epsilon

    @property
    def delta(self) -> float:
        return self.claim.delta

    @property
    def exact(self) -> bool:
        """True when the exact output law is available (white-box audit possible)."""
        return self.log_prob is not None or self.distribution is not None

    @classmethod
    def from_function(cls, func: Callable, *, name: Optional[str] = None, **overrides: Any) -> "MechanismSpec":
        """Build a spec from a (possibly decorated) function; ``overrides`` win over the declaration.

        ``overrides`` takes the :func:`mechanism` keywords. A missing ε is a :class:`UsageError`
        saying which flag or keyword to add; neighbours, domain and size have documented defaults.
        """
        if not callable(func):
            raise InvalidArgument.bad("mechanism", func, "a callable")
        decl = (declaration_of(func) or Declaration()).merged(Declaration.make(**overrides))
        label = name or getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
        if decl.epsilon is None and decl.curve is not None and "epsilon" not in overrides:
            raise UsageError(
                f"{label}: its claim is a privacy curve ({next(iter(decl.curve))}=): audit it with "
                f"dpaudit.curve_audit or dpaudit check, which audit a curve over all of it")
        if decl.epsilon is None:
            raise UsageError(
                f"{label}: no privacy claim: add --epsilon E (and --delta D for (ε, δ)-DP) "
                f"or declare @dpaudit.mechanism(epsilon=...) on the function")
        return cls(
            func=func,
            claim=(decl.notion.translate(decl.epsilon, decl.delta or 0.0) if decl.notion is not None
                   else privacy_claim(decl.epsilon, decl.delta or 0.0)),
            neighbours=decl.neighbours or DEFAULT_NEIGHBOURS,
            domain=decl.domain or DEFAULT_DOMAIN,
            size=DEFAULT_SIZE if decl.size is None else decl.size,
            name=label,
            call_form=_call_form(func),
            log_prob=decl.log_prob,
            distribution=decl.distribution,
            output=decl.output,
            source=_source(func),
            float_policy=decl.float_policy or "error",
        )

    def idealised(self) -> "MechanismSpec":
        """The same mechanism audited as a model over the reals: the float64 question is not
        asked (``float="off"``, see :func:`mechanism`)."""
        return replace(self, float_policy="off")

    def with_float_policy(self, policy: str) -> "MechanismSpec":
        """The same mechanism audited under another float policy (:func:`mechanism`)."""
        return replace(self, float_policy=check_float_policy(policy))

    def with_claim(self, epsilon: float, delta: float = 0.0) -> "MechanismSpec":
        """The same mechanism audited against another claim."""
        return replace(self, claim=privacy_claim(epsilon, delta))

    def call_batch(self, data: Any, rng: np.random.Generator, n: int) -> list | np.ndarray:
        """Run the mechanism ``n`` times on ``data`` with ``rng``; return the raw outputs.

        Uses the batch form when the callable has one, else a tight loop. Every call receives its
        own copy of ``data`` so a mechanism that mutates its input cannot corrupt the audit.
        Any exception raised by the mechanism becomes a :class:`MechanismError` naming it and the
        dataset; output validation (NaN, type changes, lengths) is the sampling engine's job.
        """
        base = np.array(data, dtype=float)
        f = self.func
        try:
            if self.call_form is CallForm.BATCH:
                out = f(base.copy(), rng, size=n)
                try:
                    length = len(out)
                except TypeError:
                    raise MechanismError(f"batch form returned {type(out).__name__}, "
                                         f"not a sequence of {n} outputs", base) from None
                if length != n:
                    raise MechanismError(f"batch form returned {length} outputs for size={n}", base)
                return out
            if self.call_form is CallForm.DATA_RNG:
                return _not_deferred([f(base.copy(), rng) for _ in range(n)], base)
            return _not_deferred([f(base.copy()) for _ in range(n)], base)
        except MechanismError:
            raise
        except KeyboardInterrupt:
            raise
        except SystemExit as exc:  # a call, not the end of the audit (nor of a worker or caller)
            raise MechanismError(f"called sys.exit({exc.code!r})", base) from None
        except BaseException as exc:  # the audited code failed: not our bug (reported as its ERROR)
            raise MechanismError(f"raised {type(exc).__name__}" + _message(exc), base) from exc
