"""OpenMined's python-dp (Google's differential-privacy C++ library) as dpaudit specs:
``target("BoundedSum", epsilon=1, lower_bound=0, upper_bound=1, dtype="float")``.

A target is an algorithm of ``pydp.algorithms.laplacian`` (``BoundedMean``, ``BoundedSum``,
``Count``, ``Median``, ``Percentile``, …) or a mechanism of
``pydp.algorithms.numerical_mechanisms`` (``LaplaceMechanism``, ``GaussianMechanism``), named as
in the library with the library's keywords. Its claim is the library's: ε-DP (or (ε, δ)) with the
``epsilon`` given, under the notion Google's library documents: one user's contributions **added
or removed** (its contribution bounds ``l0_sensitivity`` and ``linf_sensitivity`` default to 1, so
one user is one record). Each dataset is one ``quick_result`` call on a fresh algorithm object,
as a user would call it; records are rounded to integers when ``dtype="int"``. A mechanism
randomises one value; neighbouring values differ by at most ``sensitivity`` (relation ``linf``,
dpaudit's unit move scaled by ``sensitivity``).

Randomness: the library draws its own (a secure generator in C++) and ignores dpaudit's, so a
rerun with the same seed gives other numbers (the bound stays valid) and ``library.own_randomness``
says so. Its generator keeps a buffer that ``fork()`` copies: two processes forked from one that
has drawn noise draw the *same* noise. The adapter's mechanisms therefore have a batch form, so
dpaudit runs them in one process (never on its fork pool, where D and D' would share noise).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from dpaudit.adapters.common import LibrarySpec, checked, make_spec, require
from dpaudit.claims import Neighbours, claim_notion
from dpaudit.errors import InvalidArgument
from dpaudit.execution.base import check_time_limit, time_limit_in_force

__all__ = ["target", "wrap", "ALGORITHMS", "MECHANISMS"]

#: ``pydp.algorithms.laplacian`` classes (bounded ones take lower_bound/upper_bound)
ALGORITHMS = {"BoundedMean": True, "BoundedSum": True, "BoundedStandardDeviation": True,
              "BoundedVariance": True, "Max": True, "Min": True, "Median": True, "Percentile": True,
              "Count": False}
#: ``pydp.algorithms.numerical_mechanisms`` classes
MECHANISMS = ("LaplaceMechanism", "GaussianMechanism")


def _batch(call: Callable[[np.ndarray], Any]) -> Callable:
    """``f(data, rng, size=k)``: ``call(data)`` k times; ``rng`` is not used (the library's own)."""

    def mechanism(data, rng, size=None):
        if size is None:
            return call(data)
        if time_limit_in_force() is None:
            return [call(data) for _ in range(size)]
        out = []
        for _ in range(size):  # under an in-process time limit: checked between library calls
            check_time_limit(data)
            out.append(call(data))
        return out

    return mechanism


def target(name: str, *, neighbours: Any = None, size: int = 10, domain: Any = None,
           **params: Any) -> LibrarySpec:
    """A python-dp algorithm (``"BoundedSum"``) or mechanism (``"LaplaceMechanism"``) with the
    library's keywords as a dpaudit spec. ``neighbours`` overrides the notion (add-remove for
    algorithms, values within ``sensitivity`` for mechanisms); ``size`` is the number of records;
    ``domain`` where they lie (default ``(lower_bound, upper_bound)``, else [0, 1])."""
    require("pydp")
    if name not in ALGORITHMS and name not in MECHANISMS:
        raise InvalidArgument.bad("python-dp target", name,
                                  "one of " + ", ".join(sorted(ALGORITHMS) + list(MECHANISMS)))
    if "epsilon" not in params:
        raise InvalidArgument(f"python-dp {name}: give epsilon= (the library's own claim)")
    epsilon, delta = params["epsilon"], float(params.get("delta", 0.0) or 0.0)
    shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
    if name in ALGORITHMS:
        call, dom = _algorithm(name, params)
        notion = Neighbours.ADD_REMOVE
    else:
        call, dom, size = _mechanism(name, params), (0.0, 1.0), 1
        notion = Neighbours.LINF
    chosen = neighbours if neighbours is not None else notion
    text = f"{'(ε, δ)' if delta else 'ε'}-DP with {shown} (notion documented: {notion.description})"
    return make_spec("pydp", _batch(call), label=f"{name}({shown})", epsilon=epsilon, delta=delta,
                     neighbours=chosen, domain=domain if domain is not None else dom, size=size,
                     claim_text=text, notion=notion.value, own_randomness=True)


def _algorithm(name: str, params: dict) -> tuple[Callable, Any]:
    from pydp.algorithms import laplacian

    cls = getattr(laplacian, name)
    bounded = ALGORITHMS[name]
    if bounded and (params.get("lower_bound") is None or params.get("upper_bound") is None):
        raise InvalidArgument(f"python-dp {name}: give lower_bound= and upper_bound= (without them "
                              "the library spends part of ε estimating bounds)")
    integer = params.get("dtype", "int") == "int"
    checked(f"python-dp {name}", lambda: cls(**params))  # validated now, in the library's words

    def call(data: np.ndarray) -> Any:
        records = np.rint(data).astype(int).tolist() if integer else data.tolist()
        return cls(**params).quick_result(records)

    dom = (float(params["lower_bound"]), float(params["upper_bound"])) if bounded else (0.0, 1.0)
    return call, dom


def _mechanism(name: str, params: dict) -> Callable:
    from pydp.algorithms import numerical_mechanisms

    cls = getattr(numerical_mechanisms, name)
    mech = checked(f"python-dp {name}", lambda: cls(**params))
    sens = float(params.get("sensitivity", 1.0))

    def call(data: np.ndarray) -> Any:
        return mech.add_noise(sens * float(data[0]))

    return call


def wrap(func: Callable[[np.ndarray], Any], *, epsilon: float, delta: float = 0.0,
         neighbours: Any = "add-remove", domain: Any = (0.0, 1.0), size: int = 10,
         name: Optional[str] = None, notion: Optional[str] = None) -> LibrarySpec:
    """Your own code calling python-dp, ``func(data) -> output``, as a spec (own randomness)."""
    require("pydp")
    if not callable(func):
        raise InvalidArgument.bad("func", func, "a function (data) -> output")
    rel = claim_notion(neighbours).relation
    text = f"{'(ε, δ)' if delta else 'ε'}-DP, ε = {epsilon!r}" + (f", δ = {delta!r}" if delta else "") \
        + f" under {rel.value} (as stated by the caller)"
    return make_spec("pydp", _batch(func), label=name or getattr(func, "__name__", "function"),
                     epsilon=epsilon, delta=delta, neighbours=neighbours, domain=domain, size=size,
                     claim_text=text, notion=notion or rel.value, own_randomness=True)
