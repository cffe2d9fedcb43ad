"""A Python snippet that recomputes a sensitivity counterexample exactly.

Values are written with ``repr`` (the shortest string that round-trips a float), so running the
snippet recomputes the very gap that was reported. When ``f`` can be imported by its module and
qualified name the snippet imports it; otherwise it says where ``f`` must come from.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Callable, Optional

import numpy as np

from dpaudit.sensitivity.problem import NORMS, Problem
from dpaudit.sensitivity.simplify import Case

__all__ = ["reproduce_snippet", "import_line"]


def import_line(f: Callable) -> Optional[str]:
    """``from MODULE import NAME as f`` when that import gives back ``f`` itself, else None."""
    module = getattr(f, "__module__", None)
    qualname = getattr(f, "__qualname__", None) or getattr(f, "__name__", None)
    if not module or not qualname or module == "__main__" or "<" in qualname:
        return None
    try:
        obj: Any = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except Exception:
        return None
    if obj is not f:
        return None
    head, _, tail = qualname.partition(".")
    if tail:
        return f"from {module} import {head}\nf = {qualname}"
    return f"from {module} import {qualname} as f"


def _where(f: Callable) -> str:
    """Where ``f`` comes from, for a snippet that cannot import it."""
    target = f if inspect.isfunction(f) or inspect.ismethod(f) else type(f)
    try:
        return f" (defined in {inspect.getsourcefile(target)}:{inspect.getsourcelines(target)[1]})"
    except (TypeError, OSError):
        return f" (a {type(f).__module__}.{type(f).__qualname__})"


def _array(x: np.ndarray) -> str:
    return f"np.array({x.tolist()!r})"


def _call(p: Problem, data: str, ids: Optional[str], r: Optional[float]) -> str:
    args = [data]
    if p.pass_ids:
        args.append(ids or "None")
    if r is not None:
        args.append(repr(float(r)))
    return f"f({', '.join(args)})"


def reproduce_snippet(p: Problem, case: Case, *, error: Optional[str] = None) -> str:
    """The snippet for ``case``: it prints the gap and the bound that applies (or calls ``f`` on the
    input that failed, for an ERROR)."""
    lines = ["import numpy as np"]
    imp = import_line(p.f)
    if imp is None:
        lines.append(f"# f = {p.name}{_where(p.f)}: the function under test")
    else:
        lines.append(imp)
    pair = case.pair
    lines.append(f"D = {_array(pair.dataset)}")
    lines.append(f"D_prime = {_array(pair.neighbour)}")
    ids = ids2 = None
    if p.pass_ids:
        lines.append(f"ids = np.array({pair.dataset_ids.tolist()!r})")
        lines.append(f"ids_prime = np.array({pair.neighbour_ids.tolist()!r})")
        ids, ids2 = "ids", "ids_prime"
    r = case.r
    if error is not None:
        lines.append(f"{_call(p, 'D', ids, r)}  # on D or D_prime: {error}")
        lines.append(_call(p, "D_prime", ids2, r))
        return "\n".join(lines)
    a, b = _call(p, "D", ids, r), _call(p, "D_prime", ids2, r)
    ord_ = {1: "1", 2: "2", np.inf: "np.inf"}[NORMS[p.norm]]
    lines.append(f"gap = np.linalg.norm(np.atleast_1d(np.subtract({a}, {b})), ord={ord_})")
    allowed = p.allowed(pair.individual)
    who = "" if pair.individual is None else f" (individual {pair.individual})"
    lines.append(f"print(gap, '>', {allowed!r}, gap > {allowed!r})  # claimed bound{who}")
    return "\n".join(lines)
