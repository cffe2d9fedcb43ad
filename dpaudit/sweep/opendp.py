"""The OpenDP sweep: every public constructor of ``opendp.transformations``,
``opendp.measurements`` and ``opendp.combinators`` (and the Polars API's private expressions,
:mod:`dpaudit.sweep.polars`), found by introspection, built over a grid and checked against the
maps it declares.

* **Enumeration**: every ``make_*`` function the three modules define (``inspect``), in that
  order, so that combinators find built measurements and transformations in the pool. A
  constructor that returns no Transformation, Measurement or Odometer (a ``Function``, a link) is
  built for the pool but has no map to check (skipped, said so).
* **Descriptors** (:class:`Descriptors`): the domains, metrics and measures that OpenDP's own
  descriptor constructors build (``opendp.domains``, ``opendp.metrics``, ``opendp.measures``): each
  constructor whose parameters are only type arguments is called with each carrier type; atom
  domains with and without bounds, as they are and inside vector domains, sized and not.
* **Grid** (:mod:`dpaudit.sweep.grid`): per parameter, the candidates its name and annotation call
  for; at most ``attempts`` combinations tried per constructor. The library refuses most of them
  (a metric its domain does not support): each refusal is counted by its first line.
* **Cases**: among the objects built, at most ``cases`` per constructor with distinct
  (input domain, input metric, output measure or metric), the checkable ones first.
* **Checks**: a Transformation's stability map by exact output distances on searched neighbouring
  pairs (:func:`dpaudit.sweep.checks.stability`); a Measurement's privacy map by sampling against
  ``map(d_in)`` in the form its output measure gives (:func:`dpaudit.sweep.checks.privacy`: ε,
  (ε, δ), ρ-zCDP as its curve, a privacy profile as its curve), and a chain's parts as well.

The sampled checks of one sweep share one family-wise confidence (Bonferroni over every case the
sweep may check: constructors × ``cases``), so a sweep of correct maps reports a refutation with
probability at most 1 − confidence.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import os
import time
from collections import Counter
from typing import Any, Callable, Iterator, Optional

import numpy as np

from dpaudit.errors import InvalidArgument
from dpaudit.sweep.grid import N, VALUES, Value, code_of, combinations, required
from dpaudit.sweep.grid import first_line as _first_line
from dpaudit.sweep.result import Case, cpu_seconds

__all__ = ["MODULES", "constructors", "Descriptors", "Sweeper", "prelude"]

#: the modules whose ``make_*`` constructors are swept, in order
MODULES = ("opendp.transformations", "opendp.measurements", "opendp.combinators")
#: the code prefix of each module's constructors in ``opendp.prelude``
ALIASES = {"opendp.transformations": "dp.t", "opendp.measurements": "dp.m", "opendp.combinators": "dp.c"}
#: carrier types tried for a type argument (OpenDP's names)
TYPES = ("f64", "f32", "i32", "i64", "u32", "bool")
#: objects kept per kind in the pool that later constructors take as arguments
POOL = 10
#: the output measures a sampled check states a claim for
CHECKED_MEASURES = ("MaxDivergence", "Approximate(MaxDivergence)", "FixedSmoothedMaxDivergence",
                    "ZeroConcentratedDivergence", "SmoothedMaxDivergence",
                    "Approximate(ZeroConcentratedDivergence)")
#: CPU seconds of build attempts per constructor at most (a refusal costs 0.4 ms, or 0.1 s when Rust
#: captures its backtrace: RUST_BACKTRACE=1 read before the sweep could turn it off)
BUILD_SECONDS = 20.0
#: the δ at which an approximate-zCDP claim (ρ, δ) is stated as (ε, δ + δ′)
DELTA = 1e-6


def prelude() -> Any:
    """``opendp.prelude`` with the ``contrib`` feature (as OpenDP's own documentation enables it). A library refusal costs 0.1 s when Rust captures its backtrace
    (RUST_BACKTRACE=1): the sweep turns the capture off for library errors unless
    RUST_LIB_BACKTRACE is set."""
    from dpaudit.adapters.common import require

    os.environ.setdefault("RUST_LIB_BACKTRACE", "0")
    require("opendp")
    dp = importlib.import_module("opendp.prelude")
    dp.enable_features("contrib")
    return dp


def constructors() -> Iterator[tuple[str, Callable]]:
    """``(qualified name, function)`` of every public ``make_*`` constructor the swept modules
    define, module by module, in name order."""
    for modname in MODULES:
        mod = importlib.import_module(modname)
        for name, fn in inspect.getmembers(mod, inspect.isfunction):
            if name.startswith("make_") and fn.__module__ == modname:
                yield f"{modname}.{name}", fn


def _returns(fn: Callable) -> str:
    try:
        return str(inspect.signature(fn).return_annotation)
    except (TypeError, ValueError):
        return ""


def _kind_of(obj: Any) -> Optional[str]:
    mod = importlib.import_module("opendp.mod")
    for kind in ("Measurement", "Transformation", "Odometer", "Function"):
        if isinstance(obj, getattr(mod, kind, ())):
            return kind
    return None


class Descriptors:
    """Domains, metrics and measures as OpenDP's descriptor constructors build them (module
    docstring), each a :class:`~dpaudit.sweep.grid.Value` with its code; ``skipped`` names the
    descriptor constructors that need more than type arguments."""

    def __init__(self, dp: Any) -> None:
        self.skipped: dict = {}
        self.metrics = self._simple("opendp.metrics", "Metric", dp)
        measures = self._simple("opendp.measures", "Measure", dp)
        self.measures = measures + self._wrapped("opendp.measures", "Measure", measures)
        self.metrics += self._wrapped("opendp.metrics", "Metric", self.metrics)
        self.domains = self._domains(dp)

    def _wrapped(self, modname: str, returns: str, inner: list[Value]) -> list[Value]:
        """The descriptors of constructors that take one descriptor of the same kind (``approximate``
        of a measure, ``l01inf_distance`` of a metric), over the simple ones."""
        out = []
        mod = importlib.import_module(modname)
        for name, fn in inspect.getmembers(mod, inspect.isfunction):
            if name.startswith("_") or fn.__module__ != modname:
                continue
            params = list(inspect.signature(fn).parameters.values())
            ann = str(params[0].annotation) if len(params) == 1 else ""
            if returns in ann and f"{returns}ment" not in ann:
                kind = getattr(importlib.import_module("opendp.mod"), returns)
                for m in inner:
                    try:
                        obj = fn(m.obj)
                    except Exception:  # noqa: BLE001 - the library refuses this inner descriptor
                        continue
                    if isinstance(obj, kind):  # a descriptor, not a text about one
                        out.append(Value(obj, f"dp.{name}({m.code})"))
        return out

    @staticmethod
    def _functions(modname: str, returns: str) -> list[tuple[str, Callable]]:
        mod = importlib.import_module(modname)
        out = []
        for name, fn in inspect.getmembers(mod, inspect.isfunction):
            if name.startswith("_") or fn.__module__ != modname:
                continue
            ret = _returns(fn)
            if returns in ret and f"{returns}ment" not in ret:
                out.append((name, fn))
        return out

    def _simple(self, modname: str, returns: str, dp: Any) -> list[Value]:
        out: list[Value] = []
        for name, fn in self._functions(modname, returns):
            need = required(inspect.signature(fn))
            if not need:
                calls = [("", {})]
            elif need == ["T"]:
                calls = [(f"T={t!r}", {"T": t}) for t in TYPES if t != "bool"]
            else:
                self.skipped[f"{modname}.{name}"] = f"needs {', '.join(need)}"
                continue
            for text, kw in calls:
                try:
                    out.append(Value(fn(**kw), f"dp.{name}({text})"))
                except Exception as exc:  # noqa: BLE001
                    self.skipped[f"{modname}.{name}({text})"] = _first_line(exc)
        return out

    @staticmethod
    def _domains(dp: Any) -> list[Value]:
        atoms: list[Value] = []
        for t in TYPES:
            if t == "bool":
                atoms.append(Value(dp.atom_domain(T="bool"), "dp.atom_domain(T='bool')"))
                continue
            floats = t.startswith("f")
            lo, hi = (0.0, 1.0) if floats else (0, 10)
            if floats:
                atoms.append(Value(dp.atom_domain(T=t, nan=False), f"dp.atom_domain(T={t!r}, nan=False)"))
            else:
                atoms.append(Value(dp.atom_domain(T=t), f"dp.atom_domain(T={t!r})"))
            try:
                atoms.append(Value(dp.atom_domain(bounds=(lo, hi), T=t),
                                   f"dp.atom_domain(bounds={(lo, hi)!r}, T={t!r})"))
            except Exception:  # noqa: BLE001 - a type without bounds
                pass
        out = list(atoms)
        for a in atoms:
            out.append(Value(dp.vector_domain(a.obj), f"dp.vector_domain({a.code})"))
            out.append(Value(dp.vector_domain(a.obj, size=N), f"dp.vector_domain({a.code}, size={N})"))
        # every other domain constructor whose parameters are all domains (map, option…), over
        # the unbounded atoms: keys and values of each type
        plain_atoms = [a for a in atoms if "bounds" not in a.code]
        mod = importlib.import_module("opendp.domains")
        for name, fn in inspect.getmembers(mod, inspect.isfunction):
            if name.startswith("_") or name == "vector_domain" or fn.__module__ != mod.__name__:
                continue
            need = required(inspect.signature(fn))
            params = inspect.signature(fn).parameters
            if not need or not all("Domain" in str(params[k].annotation) for k in need):
                continue
            for combo in itertools.product(plain_atoms, repeat=len(need)):
                try:
                    obj = fn(**{k: v.obj for k, v in zip(need, combo)})
                except Exception:  # noqa: BLE001 - the library refuses these element domains
                    continue
                if not isinstance(obj, importlib.import_module("opendp.mod").Domain):
                    break  # a text about a domain (domain_debug, domain_type…), not a domain
                out.append(Value(obj, f"dp.{name}(" + ", ".join(f"{k}={v.code}" for k, v in zip(need, combo)) + ")"))
        return out


def _space_param(p: inspect.Parameter) -> bool:
    """Whether a parameter states the input space (a Domain or a Metric)."""
    ann = str(p.annotation)
    return ("Domain" in ann or "Metric" in ann) and "Measure" not in ann


def _key(obj: Any) -> tuple:
    out = getattr(obj, "output_measure", None) or getattr(obj, "output_metric", None)
    return (type(obj).__name__, str(getattr(obj, "input_domain", "")), str(getattr(obj, "input_metric", "")),
            str(out))


def _checkable(obj: Any) -> Optional[str]:
    """None when the sweep can hand ``obj`` data (numeric records under a metric dpaudit maps to a
    relation), else why not."""
    from dpaudit.adapters.common import relation_for_metric
    from dpaudit.adapters.opendp import input_converter
    from dpaudit.stability.checker import default_d_in

    if not hasattr(obj, "input_domain"):
        return f"a {type(obj).__name__}: no input domain"
    try:
        d_in = default_d_in(obj)
        relation, scale = relation_for_metric(obj.input_metric, d_in)
        input_converter(obj.input_domain, relation, scale)
    except InvalidArgument as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - a domain the converter cannot read
        return _first_line(exc)
    return None


class Sweeper:
    """One sweep of OpenDP: the descriptors, the pool and the settings; :meth:`run` yields the
    cases constructor by constructor."""

    def __init__(self, *, seed: int, samples: int, budget: int, cases: int, attempts: int,
                 confidence: float, timeout: Optional[float], only: Optional[list] = None,
                 polars: bool = True) -> None:
        self.dp = prelude()
        self.desc = Descriptors(self.dp)
        self.seed, self.samples, self.budget = seed, samples, budget
        self.cases, self.attempts, self.timeout = cases, attempts, timeout
        self.only = only
        self.polars = polars
        self.pool: dict[str, list[Value]] = {"Measurement": [], "Transformation": [], "Odometer": [],
                                             "Function": []}
        self.skipped_constructors: dict = {}
        self.listed = [(q, f) for q, f in constructors()]
        extra = 0
        if polars:
            from dpaudit.sweep.polars import expressions

            self.exprs = list(expressions())
            extra = len(self.exprs)
        else:
            self.exprs = []
        planned = (len(self.listed) + extra) * cases
        #: each sampled case's confidence: Bonferroni over every case the sweep may check
        self.case_confidence = 1.0 - (1.0 - confidence) / max(planned, 1)

    # -- candidates --------------------------------------------------------------------------------
    def _candidates(self, p: inspect.Parameter) -> list[Value]:
        ann = str(p.annotation) if p.annotation is not inspect.Parameter.empty else ""
        default = [] if p.default is inspect.Parameter.empty else [Value(p.default, code_of(p.default))]
        out: list[Value]
        if "Measurement" in ann:
            out = list(self.pool["Measurement"])
        elif "Transformation" in ann:
            out = list(self.pool["Transformation"])
        elif "Odometer" in ann:
            out = list(self.pool["Odometer"])
        elif "Function" in ann:
            out = list(self.pool["Function"])
        elif "Domain" in ann:
            out = list(self.desc.domains)
        elif "Metric" in ann:
            out = list(self.desc.metrics)
        elif "Measure" in ann:
            out = list(self.desc.measures)
        elif p.name.endswith("s") and p.name[:-1] in ("measurement", "transformation"):
            pool = self.pool[p.name[:-1].capitalize()]
            out = [Value([a.obj, b.obj], f"[{a.code}, {b.code}]") for a in pool for b in pool
                   if _key(a.obj)[1:3] == _key(b.obj)[1:3]][: 2 * POOL]
        elif "RuntimeType" in ann:
            if p.name.startswith("M"):  # a measure or metric type argument: the descriptors' types
                out = [Value(str(m.obj.type), repr(str(m.obj.type)))
                       for m in self.desc.measures + self.desc.metrics]
            elif p.name == "S":
                out = []
            else:
                out = [Value(t, repr(t)) for t in TYPES]
        else:
            out = list(VALUES.get(p.name, []))
        seen, uniq = set(), []
        for v in default + out:
            if v.code not in seen:
                seen.add(v.code)
                uniq.append(v)
        return uniq

    # -- one constructor ---------------------------------------------------------------------------
    def build(self, qual: str, fn: Callable) -> tuple[list[tuple[Any, dict]], Counter, Optional[str]]:
        """The distinct objects built from ``fn`` over the grid: ``[(object, params)]`` (params as
        code), the library's refusals counted by their first line, and why nothing could be tried."""
        sig = inspect.signature(fn)
        choices: dict[str, list[Value]] = {}
        for p in sig.parameters.values():
            c = self._candidates(p)
            if not c:
                ann = "" if p.annotation is inspect.Parameter.empty else f": {p.annotation}"
                return [], Counter(), f"no candidate value for parameter {p.name}{ann}"
            choices[p.name] = c
        built: dict[tuple, tuple[Any, dict]] = {}
        refusals: Counter = Counter()
        seed = self.seed + sum(map(ord, qual))
        rng = np.random.default_rng(seed)

        # this thread's CPU seconds, not wall nor the process's: a loaded machine, or threads of
        # the host process (a test runner's, a Dask client's), must not cut the attempts a quiet
        # one makes (the library builds in the calling thread)
        stop = time.thread_time() + BUILD_SECONDS

        def attempt(combo: dict) -> bool:
            if time.thread_time() > stop:  # the library's refusals are slow (a captured backtrace)
                refusals["(attempts cut short: the build time limit was reached)"] += 1
                return False
            try:
                obj = fn(**{k: v.obj for k, v in combo.items()})
            except Exception as exc:  # noqa: BLE001 - the library refuses the combination
                refusals[_first_line(exc)] += 1
                return False
            key = _key(obj)
            if key not in built:
                built[key] = (obj, {k: v.code for k, v in combo.items()})
            return True

        # stage 1: the input space (the Domain and Metric parameters), each with the other
        # parameters at their first candidates and at two random ones; stage 2: the other
        # parameters over the spaces that were built
        space = {k: v for k, v in choices.items() if _space_param(sig.parameters[k])}
        rest = {k: v for k, v in choices.items() if k not in space}

        def draw_rest(first: bool) -> dict:
            return {k: (v[0] if first else v[int(rng.integers(len(v)))]) for k, v in rest.items()}

        spaces = []
        for combo in combinations(space, self.attempts // 3, seed):
            for tries in range(3):
                if attempt({**combo, **draw_rest(tries == 0)}):
                    spaces.append(combo)
                    break
        if space and spaces:
            order = rng.permutation(len(spaces))[: 12]
            per = max(1, self.attempts // (3 * len(order)))
            for i in order:
                for combo in combinations(rest, per, seed + int(i)):
                    attempt({**spaces[int(i)], **combo})
        elif not space:
            for combo in combinations(rest, self.attempts, seed):
                attempt(combo)
        return list(built.values()), refusals, None

    def _pool_add(self, obj: Any, code: str) -> None:
        kind = _kind_of(obj)
        if kind is None or len(self.pool[kind]) >= POOL:
            return
        if kind in ("Measurement", "Transformation") and _checkable(obj) is not None:
            return
        if all(_key(v.obj) != _key(obj) for v in self.pool[kind]):
            self.pool[kind].append(Value(obj, code))

    def run(self) -> Iterator[Case]:
        """The cases, constructor by constructor (the Polars expressions last)."""
        from dpaudit.sweep.grid import selected

        picked = selected([qual for qual, _ in self.listed], self.only)
        for qual, fn in self.listed:
            if qual not in picked:
                continue
            yield from self.constructor(qual, fn)
        if self.polars:
            from dpaudit.sweep.polars import sweep_expressions

            yield from sweep_expressions(self)

    def constructor(self, qual: str, fn: Callable) -> Iterator[Case]:
        t0 = cpu_seconds()
        ret = _returns(fn)
        built, refusals, why = self.build(qual, fn)
        alias = ALIASES[qual.rsplit(".", 1)[0]]
        name = qual.rsplit(".", 1)[1]
        codes = []
        for obj, params in built:
            code = f"{alias}.{name}(" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")"
            codes.append(code)
            self._pool_add(obj, code)
        if not built:
            reason = why or (f"none of the combinations tried was built; the library's most frequent "
                             f"refusal: {refusals.most_common(1)[0][0]}" if refusals else "nothing to try")
            self.skipped_constructors[qual] = reason
            yield Case(qual, {}, verdict="skipped", reason=reason, seconds=cpu_seconds() - t0,
                       details={"refusals": dict(refusals.most_common(3))})
            return
        if not any(k in ret for k in ("Measurement", "Transformation")):
            reason = f"returns {ret.replace('opendp.mod.', '') or 'an object'}: no map is declared"
            self.skipped_constructors[qual] = reason
            yield Case(qual, built[0][1], verdict="skipped", reason=reason, seconds=cpu_seconds() - t0,
                       code=codes[0])
            return
        ranked = sorted(range(len(built)), key=lambda i: _checkable(built[i][0]) is not None)
        build_seconds = cpu_seconds() - t0
        for rank, i in enumerate(ranked[: self.cases]):
            obj, params = built[i]
            case = Case(qual, params, code=codes[i], seconds=build_seconds if rank == 0 else 0.0,
                        details={"built": len(built), "refused": sum(refusals.values())} if rank == 0 else {})
            yield self.check(case, obj)

    # -- checks ------------------------------------------------------------------------------------
    def check(self, case: Case, obj: Any, convert: Any = None, keys: Any = None) -> Case:
        """Check one built object; ``case`` filled in and returned (never raises for the library's
        failures: they are the case's ERROR)."""
        from dpaudit.sweep.checks import stability

        t0 = cpu_seconds()
        try:
            kind = _kind_of(obj)
            why = None if convert is not None else _checkable(obj)
            if kind == "Transformation":
                case.claim = self._stability_claim(obj)
                if why:
                    case.reason, case.verdict = why, "skipped"
                else:
                    stability(case, obj, seed=self.seed, budget=self.budget, timeout=self.timeout)
            elif kind == "Measurement":
                self._privacy(case, obj, why, convert, keys)
            else:
                case.reason = f"a {kind or type(obj).__name__}: no map to check"
        except Exception as exc:  # noqa: BLE001 - a library failure while checking: that case's ERROR
            case.verdict, case.reason = "error", _first_line(exc)
        case.seconds += cpu_seconds() - t0
        if case.verdict == "refuted":
            from dpaudit.sweep.drafts import confirm

            confirm(case, "opendp", obj if _kind_of(obj) == "Transformation" or case.check == "privacy" else None)
        return case

    def _stability_claim(self, obj: Any) -> str:
        from dpaudit.stability.checker import default_d_in

        try:
            d_in = default_d_in(obj)
            return f"{obj.output_metric}: map({d_in!r}) = {obj.map(d_in)!r} under {obj.input_metric}"
        except Exception as exc:  # noqa: BLE001
            return f"map not computed: {_first_line(exc)}"

    def _privacy(self, case: Case, m: Any, why: Optional[str], convert: Any, keys: Any) -> None:
        from dpaudit.adapters.opendp import target
        from dpaudit.stability.checker import default_d_in
        from dpaudit.sweep.checks import privacy, stability

        from dpaudit.adapters.common import relation_for_metric
        from dpaudit.errors import InvalidArgument

        measure = str(m.output_measure)
        d_in = default_d_in(m) if convert is None else 1
        if convert is None:
            try:
                relation_for_metric(m.input_metric, d_in)
            except InvalidArgument:
                case.claim = f"{measure} under {m.input_metric}"
                case.verdict, case.reason = "skipped", (
                    f"dpaudit has no neighbour relation for its input metric {m.input_metric} at "
                    f"d_in = {d_in!r} (not the library's failure: dpaudit does not audit it yet)")
                return
        try:
            value = m.map(d_in)
        except Exception as exc:  # noqa: BLE001 - a map the library cannot compute or return
            case.claim = f"{measure}: map({d_in!r}) not computed"
            case.verdict, case.reason = "skipped", f"its privacy map at d_in = {d_in!r} failed: {_first_line(exc)}"
            return
        case.claim = f"{measure}: map({d_in!r}) = {value!r} under {m.input_metric}"
        if why:
            case.verdict, case.reason = "skipped", why
            return
        if measure not in CHECKED_MEASURES:
            case.verdict, case.reason = "skipped", f"output measure {measure}: no claim dpaudit samples"
            return
        curve = None
        delta = None
        if measure == "ZeroConcentratedDivergence":
            curve = {"rho": float(value)}
        elif measure == "SmoothedMaxDivergence":
            profile = value
            curve = {"profile": _profile(profile)}
            delta = DELTA
        elif measure == "Approximate(ZeroConcentratedDivergence)":
            delta = DELTA
        spec = target(m, d_in=d_in, delta=delta, convert=convert, keys=keys)
        out = spec.func(np.asarray(_dataset(spec), dtype=float), np.random.default_rng(self.seed))
        if not _plain(out):
            case.verdict, case.reason = "skipped", f"releases a {type(out).__name__}: not a value dpaudit reads"
            return
        privacy(case, spec, curve=curve, samples=self.samples, confidence=self.case_confidence,
                       seed=self.seed, timeout=self.timeout)
        if case.verdict in ("not_refuted", "inconclusive") and convert is None:
            from dpaudit.stability.chains import decompose

            parts, _ = decompose(m)
            if parts:  # a chain: its transformations' maps too
                sub = Case(case.constructor, case.params)
                stability(sub, m, seed=self.seed, budget=self.budget, timeout=self.timeout)
                case.details["chain_stability"] = {"verdict": sub.verdict, "bound": sub.bound,
                                                   "evidence": sub.evidence}
                if sub.verdict == "refuted":
                    case.verdict, case.check, case.bound, case.evidence = "refuted", "stability", sub.bound, sub.evidence


def _profile(profile: Any) -> Callable:
    def delta(eps: float) -> float:
        try:
            return float(profile.delta(float(eps)))
        except Exception:  # noqa: BLE001 - ε beyond where the profile is defined: no claim is weaker
            return 1.0

    return delta


def _dataset(spec: Any) -> list:
    lo, hi = spec.domain.lo, spec.domain.hi
    return [lo + (hi - lo) * (k % 3) / 2 for k in range(spec.size)]


def _plain(v: Any) -> bool:
    if v is None or isinstance(v, (bool, int, float, str, np.generic)):
        return True
    if isinstance(v, (list, tuple)):
        return all(_plain(x) for x in v)
    if isinstance(v, np.ndarray):
        return v.dtype.kind in "biuf"
    if isinstance(v, dict):
        return all(_plain(k) and _plain(x) for k, x in v.items())
    return False
