"""The diffprivlib sweep: every public function of ``diffprivlib.tools`` and every mechanism class
of ``diffprivlib.mechanisms`` (a class with ``randomise``), found by introspection, built over the
grid of :data:`VALUES` (by parameter name) and sampled against the ε (or (ε, δ)) it is given.

* a **tool** ``f(array, **params)`` is called on the records (``random_state`` and a fresh
  ``BudgetAccountant`` from dpaudit), under the notion its noise is calibrated for: the one
  :data:`dpaudit.adapters.diffprivlib.NOTIONS` derives from the library's code where it names the
  tool, else one record replaced (the tools scale their noise by ``array.size``);
* a **mechanism** ``cls(**params).randomise(value)`` gets ``value = lower + sensitivity · x`` for
  a record x (``⌊x⌋`` where the class refuses a float), so that neighbouring records move the value
  by at most ``sensitivity``: relation ``linf``.

A tool or mechanism whose first call raises on the sweep's records (a 2-D histogram, a mechanism
over categories) is skipped with the library's words.
"""

from __future__ import annotations

import inspect
import itertools
from typing import Any, Callable, Iterator, Optional

import numpy as np

from dpaudit.sweep.grid import VALUES, Value, code_of, first_line, plain
from dpaudit.sweep.result import Case, cpu_seconds

__all__ = ["Sweeper", "VALUES_DPL", "entries"]

#: candidate values by parameter name (diffprivlib's keywords), before :data:`dpaudit.sweep.grid.VALUES`
VALUES_DPL: dict[str, list[Value]] = {
    "epsilon": plain(1.0), "delta": plain(1e-3), "bounds": plain((0.0, 1.0), None), "range": plain((0.0, 1.0)),
    "bins": plain(2, 5), "sensitivity": plain(1.0), "lower": plain(0.0), "upper": plain(4.0),
    "q": plain(0.5), "quant": plain(0.5), "percent": plain(50), "axis": plain(None), "keepdims": plain(False),
    "dtype": plain(None), "gamma": plain(None), "value0": plain(0), "value1": plain(1),
    "data_sensitivity": plain(1.0), "function_sensitivity": plain(1.0),
}
_SKIP = {"random_state", "accountant", "self", "array", "a", "sample", "kwargs", "unused_args"}


def entries() -> Iterator[tuple[str, str, Any]]:
    """``(kind, qualified name, object)``: the tools' functions, then the mechanism classes."""
    import diffprivlib.mechanisms as mechanisms
    import diffprivlib.tools as tools

    for name in sorted(getattr(tools, "__all__", dir(tools))):
        fn = getattr(tools, name, None)
        if inspect.isfunction(fn) and not name.startswith("_"):
            yield "tools", f"diffprivlib.tools.{name}", fn
    for name, cls in inspect.getmembers(mechanisms, inspect.isclass):
        if hasattr(cls, "randomise") and not inspect.isabstract(cls) and not name.startswith("_"):
            yield "mechanisms", f"diffprivlib.mechanisms.{name}", cls


def _candidates(p: inspect.Parameter) -> list[Value]:
    default = [] if p.default is inspect.Parameter.empty else [Value(p.default, code_of(p.default))]
    given = VALUES_DPL.get(p.name) or VALUES.get(p.name, [])
    if p.name == "delta" and default and default[0].obj == 0.0:
        given = []
    out = given or default
    return out if given else default


class Sweeper:
    """One sweep of diffprivlib (the settings of :func:`dpaudit.sweep.run`)."""

    def __init__(self, *, seed: int, samples: int, budget: int, cases: int, attempts: int,
                 confidence: float, timeout: Optional[float], only: Optional[list] = None) -> None:
        from dpaudit.adapters.common import require

        require("diffprivlib")
        self.seed, self.samples, self.cases, self.timeout = seed, samples, cases, timeout
        self.only = only
        self.listed = list(entries())
        self.skipped_constructors: dict = {}
        self.case_confidence = 1.0 - (1.0 - confidence) / max(len(self.listed) * cases, 1)

    def run(self) -> Iterator[Case]:
        from dpaudit.sweep.grid import selected

        picked = selected([qual for _, qual, _ in self.listed], self.only)
        for kind, qual, obj in self.listed:
            if qual not in picked:
                continue
            yield from self.entry(kind, qual, obj)

    def entry(self, kind: str, qual: str, obj: Any) -> Iterator[Case]:
        t0 = cpu_seconds()
        target = obj.__init__ if kind == "mechanisms" else obj
        params = [p for p in inspect.signature(target).parameters.values()
                  if p.name not in _SKIP and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        choices = {p.name: _candidates(p) for p in params}
        missing = [p.name for p in params if not choices[p.name] and p.default is inspect.Parameter.empty]
        if missing:
            reason = f"no candidate value for parameter {missing[0]}"
            self.skipped_constructors[qual] = reason
            yield Case(qual, {}, verdict="skipped", reason=reason, seconds=cpu_seconds() - t0)
            return
        choices = {k: v for k, v in choices.items() if v}
        combos = list(itertools.islice(itertools.product(*choices.values()), self.cases))
        for i, values in enumerate(combos):
            shown = {k: v.code for k, v in zip(choices, values)}
            kw = {k: v.obj for k, v in zip(choices, values)}
            case = Case(qual, shown, check="privacy", seconds=(cpu_seconds() - t0) if i == 0 else 0.0)
            yield self.check(case, kind, obj, kw)

    def check(self, case: Case, kind: str, obj: Any, kw: dict) -> Case:
        from dpaudit.adapters.diffprivlib import NOTIONS, plain_release, wrap
        from dpaudit.sweep.checks import privacy

        t0 = cpu_seconds()
        eps, delta = float(kw.get("epsilon", 0.0)), float(kw.get("delta", 0.0) or 0.0)
        name = case.constructor.split(".", 1)[1]
        try:
            if kind == "tools":
                call, domain, size, notion = self._tool(obj, kw), kw.get("bounds") or kw.get("range") or (0.0, 1.0), 10, \
                    NOTIONS.get(name, "replace")
            else:
                call, domain = self._mechanism(obj, kw)
                size, notion = 1, "linf"
            rs = np.random.RandomState(self.seed)
            first = plain_release(call(np.linspace(domain[0], domain[1], size), rs))
            if not _plain_value(first):
                case.verdict, case.reason = "skipped", f"releases a {type(first).__name__}: not a value dpaudit reads"
            else:
                spec = wrap(lambda d, r: call(d, r), epsilon=eps, delta=delta, neighbours=notion,
                            domain=tuple(float(v) for v in domain), size=size, name=name, notion=notion)
                case.claim = (f"{'(ε, δ)' if delta else 'ε'}-DP, ε = {eps!r}" + (f", δ = {delta!r}" if delta else "")
                              + f" under {notion}")
                privacy(case, spec, curve=None, samples=self.samples, confidence=self.case_confidence,
                               seed=self.seed, timeout=self.timeout)
        except Exception as exc:  # noqa: BLE001 - the library refuses the sweep's records or keywords
            case.verdict, case.reason = "skipped", f"the library refused it: {first_line(exc)}"
        case.seconds += cpu_seconds() - t0
        case.code = f"{case.constructor}(" + ", ".join(f"{k}={v}" for k, v in case.params.items()) + ")"
        return case

    @staticmethod
    def _tool(fn: Callable, kw: dict) -> Callable:
        from diffprivlib.accountant import BudgetAccountant

        def call(data: np.ndarray, random_state: Any) -> Any:
            return fn(data, **kw, random_state=random_state, accountant=BudgetAccountant())

        return call

    @staticmethod
    def _mechanism(cls: Any, kw: dict) -> tuple[Callable, tuple]:
        from dpaudit.adapters.diffprivlib import plain_release

        sens = float(kw.get("sensitivity", 1.0))
        lower = float(kw.get("lower", 0.0))
        width = (float(kw["upper"]) - lower) / sens if "upper" in kw else 1.0
        mech = cls(**kw)
        try:
            mech.randomise(lower + 0.5 * sens)
            integer = False
        except TypeError:
            integer = True
        domain = (0.0, float(np.floor(width)) if integer else width)
        if integer and domain[1] < 1:
            domain = (0.0, 2.0)

        def call(data: np.ndarray, random_state: Any) -> Any:
            x = float(np.asarray(data).reshape(-1)[0])
            value = lower + sens * (int(np.floor(x)) if integer else x)
            if integer:
                value = int(round(value))
            return plain_release(cls(**kw, random_state=random_state).randomise(value))

        return call, domain


def _plain_value(v: Any) -> bool:
    if v is None or isinstance(v, (bool, int, float, str, np.generic)):
        return True
    if isinstance(v, (list, tuple)):
        return all(_plain_value(x) for x in v)
    return False
