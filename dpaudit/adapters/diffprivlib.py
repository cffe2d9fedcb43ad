"""IBM's diffprivlib as dpaudit specs: ``target("tools.mean", epsilon=1, bounds=(0, 1))``.

A target is a diffprivlib function or mechanism named as in the library, with the keywords the
library takes (``epsilon``, ``delta``, ``sensitivity``, ``bounds``, ``range``, ``bins``, ``quant``,
…). Its claim is the library's: ε-DP (or (ε, δ)-DP) with the parameters given, under the neighbour
notion that diffprivlib's own sensitivity analysis implies (``NOTIONS``; override it with
``neighbours=`` to audit the function under another notion):

* the ``tools`` statistics (mean, var, std, sum, median, quantile, percentile, count_nonzero)
  calibrate their noise with ``array.size``, the number of records, so the size is treated as
  public: one record **replaced** (bounded DP). ``tools.sum`` and ``count_nonzero`` even clamp the
  output to [lower·n, upper·n], so the size leaks under add-remove (``diffprivlib/tools/utils.py``,
  ``_sum``);
* ``tools.histogram`` adds geometric noise of sensitivity 1 to each bin, which covers one record
  **added or removed** (unbounded DP); a replaced record moves two bins (true ε = 2ε);
* a ``mechanisms`` class (``Laplace``, ``Geometric``, ``GaussianAnalytic``, …) randomises one value;
  neighbouring values differ by at most ``sensitivity`` (relation ``linf`` on one value; dpaudit's
  unit move is scaled by ``sensitivity``, and integer mechanisms see ``sensitivity·⌊x⌋``, which
  keeps every move within ``sensitivity``).

Randomness: every call gets ``random_state=numpy.random.RandomState(rng.bit_generator)``, a legacy
generator on dpaudit's own bit generator, so an audit is reproducible from its seed and D and D'
can share random numbers (the paired bound). Each call also gets a fresh ``BudgetAccountant``, so
the library's default accountant does not grow by one entry per call.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from dpaudit.adapters.common import LibrarySpec, checked, make_spec, require
from dpaudit.claims import Neighbours, claim_notion
from dpaudit.errors import InvalidArgument
from dpaudit.execution.base import check_time_limit, time_limit_in_force

__all__ = ["target", "wrap", "plain_release", "NOTIONS", "TOOLS", "MECHANISMS"]

#: ``tools`` functions: name -> (default notion, keyword holding the record domain or None)
TOOLS = {
    "mean": ("replace", "bounds"), "nanmean": ("replace", "bounds"),
    "var": ("replace", "bounds"), "nanvar": ("replace", "bounds"),
    "std": ("replace", "bounds"), "nanstd": ("replace", "bounds"),
    "sum": ("replace", "bounds"), "nansum": ("replace", "bounds"),
    "median": ("replace", "bounds"), "quantile": ("replace", "bounds"),
    "percentile": ("replace", "bounds"), "count_nonzero": ("replace", None),
    "histogram": ("add-remove", "range"),
}
#: ``mechanisms`` classes: name -> (integer input, takes lower/upper)
MECHANISMS = {
    "Laplace": (False, False), "Gaussian": (False, False), "GaussianAnalytic": (False, False),
    "Staircase": (False, False), "LaplaceTruncated": (False, True),
    "LaplaceBoundedDomain": (False, True), "Geometric": (True, False),
    "GeometricTruncated": (True, True),
}
#: the notion diffprivlib's analysis implies, per target name
NOTIONS = {**{f"tools.{k}": v[0] for k, v in TOOLS.items()},
           **{f"mechanisms.{k}": "linf" for k in MECHANISMS}}


def _batch(call: Callable[[np.ndarray, Any], Any]) -> Callable:
    """``f(data, rng, size=k)`` calling ``call(data, random_state)`` k times on dpaudit's stream."""

    def mechanism(data, rng, size=None):
        random_state = np.random.RandomState(rng.bit_generator)
        if size is None:
            return call(data, random_state)
        if time_limit_in_force() is None:
            return [call(data, random_state) for _ in range(size)]
        out = []
        for _ in range(size):  # under an in-process time limit: checked between library calls
            check_time_limit(data)
            out.append(call(data, random_state))
        return out

    return mechanism


def plain_release(value: Any) -> Any:
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], np.ndarray):
        value = value[0]  # histogram: (counts, bin edges); the edges are public
    if isinstance(value, np.ndarray):
        return tuple(value.tolist()) if value.ndim else value.item()
    if isinstance(value, np.generic):
        return value.item()
    return value


def target(name: str, *, neighbours: Any = None, size: int = 10, domain: Any = None,
           **params: Any) -> LibrarySpec:
    """A diffprivlib function (``"tools.mean"``) or mechanism (``"mechanisms.Laplace"``) with the
    library's keywords (``epsilon``, ``delta``, ``bounds``, ``sensitivity``, …) as a dpaudit spec.

    ``neighbours`` overrides the notion the library implies (:data:`NOTIONS`); ``size`` is the
    number of records (the larger dataset under add-remove); ``domain`` is where records lie
    (default: the ``bounds`` or ``range`` given, else [0, 1]).
    """
    lib = require("diffprivlib")
    if not isinstance(name, str) or name not in NOTIONS:
        raise InvalidArgument.bad("diffprivlib target", name, "one of " + ", ".join(sorted(NOTIONS)))
    if "epsilon" not in params:
        raise InvalidArgument(f"diffprivlib {name}: give epsilon= (the library's own claim)")
    for reserved in ("random_state", "accountant"):
        if reserved in params:
            raise InvalidArgument(f"diffprivlib {name}: {reserved}= is set by dpaudit (from the audit's seed)")
    epsilon, delta = params["epsilon"], float(params.get("delta", 0.0) or 0.0)
    shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
    kind, fname = name.split(".")
    if kind == "tools":
        call, dom = _tool(lib, fname, params)
        rel = NOTIONS[name]
    else:
        call, dom, size = _mechanism(lib, fname, params), _mechanism_domain(fname, params), 1
        rel = "linf"
    notion = Neighbours.parse(NOTIONS[name])
    chosen = neighbours if neighbours is not None else rel
    implied = "values at most `sensitivity` apart" if kind == "mechanisms" else notion.description
    text = f"{'(ε, δ)' if delta else 'ε'}-DP with {shown} (notion implied: {implied})"
    return make_spec("diffprivlib", _batch(call), label=f"{name}({shown})", epsilon=epsilon, delta=delta,
                     neighbours=chosen, domain=domain if domain is not None else dom, size=size,
                     claim_text=text, notion=notion.value, own_randomness=False)


def _tool(lib: Any, fname: str, params: dict) -> tuple[Callable, Any]:
    from diffprivlib.accountant import BudgetAccountant

    func = getattr(lib.tools, fname)
    key = TOOLS[fname][1]
    dom = params.get(key) if key else None
    if key and dom is None:
        raise InvalidArgument(f"diffprivlib tools.{fname}: give {key}=(lo, hi): without it the "
                              "library reads the bounds off the data (it warns that this leaks)")

    def call(data: np.ndarray, random_state: Any) -> Any:
        return plain_release(func(data, **params, random_state=random_state, accountant=BudgetAccountant()))

    return call, dom if dom is not None else (0.0, 1.0)


def _mechanism(lib: Any, cname: str, params: dict) -> Callable:
    integer, bounded = MECHANISMS[cname]
    cls = getattr(lib.mechanisms, cname)
    sens = params.get("sensitivity", 1)
    lower = params.get("lower", 0) if bounded else 0
    checked(f"diffprivlib mechanisms.{cname}", lambda: cls(**params))  # validated now, in the library's words

    def call(data: np.ndarray, random_state: Any) -> Any:
        x = float(data[0])
        value = lower + sens * (int(np.floor(x)) if integer else x)
        return plain_release(cls(**params, random_state=random_state).randomise(value))

    return call


def _mechanism_domain(cname: str, params: dict) -> tuple[float, float]:
    """Inputs x with value = lower + sensitivity·x inside [lower, upper] (or [0, 1] unbounded;
    [0, 2] for integer mechanisms, so that ⌊x⌋ takes three values)."""
    integer, bounded = MECHANISMS[cname]
    if not bounded:
        return (0.0, 2.0) if integer else (0.0, 1.0)
    sens = float(params.get("sensitivity", 1))
    width = (float(params["upper"]) - float(params["lower"])) / sens
    return (0.0, float(np.floor(width)) if integer else width)


def wrap(func: Callable[[np.ndarray, Any], Any], *, epsilon: float, delta: float = 0.0,
         neighbours: Any = "add-remove", domain: Any = (0.0, 1.0), size: int = 10,
         name: Optional[str] = None, notion: Optional[str] = None) -> LibrarySpec:
    """Your own code calling diffprivlib, ``func(data, random_state) -> output``, as a spec: dpaudit
    passes ``random_state`` (on the audit's seed) for you to hand to diffprivlib."""
    require("diffprivlib")
    if not callable(func):
        raise InvalidArgument.bad("func", func, "a function (data, random_state) -> output")
    label = name or getattr(func, "__name__", "function")
    rel = claim_notion(neighbours).relation
    text = f"{'(ε, δ)' if delta else 'ε'}-DP, ε = {epsilon!r}" + (f", δ = {delta!r}" if delta else "") \
        + f" under {rel.value} (as stated by the caller)"
    return make_spec("diffprivlib", _batch(lambda d, rs: plain_release(func(d, rs))), label=label, epsilon=epsilon,
                     delta=delta, neighbours=neighbours, domain=domain, size=size, claim_text=text,
                     notion=notion or rel.value, own_randomness=False)
