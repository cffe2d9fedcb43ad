"""The grid a sweep builds constructors over: candidate values per parameter, each with the code
that builds it, and the order in which combinations are tried.

Nothing here names a constructor. A parameter's candidates come from its *name* and its
*annotation* in the constructor's signature (:meth:`dpaudit.sweep.opendp.Sweeper._candidates`): a ``Domain``, ``Metric`` or
``Measure`` parameter takes every descriptor the library's own descriptor constructors build
(:class:`dpaudit.sweep.opendp.Descriptors`), a ``Measurement``/``Transformation``/``Odometer``/``Function`` parameter
the objects the sweep built before (the pool), a type argument (``T``, ``TO``, ``MO``…) the
library's type names, and a plain parameter the values of :data:`VALUES` for its name (a
``scale``, ``bounds``, ``size``…); a parameter with a default keeps it as its first candidate.
Combinations are tried in a seeded random order (:func:`combinations`), at most ``limit``.
"""

from __future__ import annotations

import inspect
import itertools
from dataclasses import dataclass
from typing import Any, Iterator, Optional

import numpy as np

__all__ = ["Value", "VALUES", "combinations", "code_of", "required", "first_line", "selected"]

#: records in a sized dataset (a ``size`` parameter, a sized vector domain)
N = 10


@dataclass(frozen=True)
class Value:
    """A candidate value and the Python code that builds it (``dp`` is ``opendp.prelude``)."""

    obj: Any
    code: str
    label: Optional[str] = None

    def show(self) -> str:
        return self.label or self.code


def code_of(x: Any) -> str:
    """Python code for a plain value (numbers as ``repr``, so they read back exactly)."""
    if isinstance(x, Value):
        return x.code
    if isinstance(x, (list, tuple)):
        inner = ", ".join(code_of(v) for v in x)
        return f"[{inner}]" if isinstance(x, list) else f"({inner}{',' if len(x) == 1 else ''})"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{code_of(k)}: {code_of(v)}" for k, v in x.items()) + "}"
    return repr(x)


def plain(*xs: Any) -> list[Value]:
    return [Value(x, code_of(x)) for x in xs]


#: candidate values of a parameter, by its name (whatever constructor it belongs to): the values a
#: DP engineer would try first, with integer twins where a library types them by the domain
VALUES: dict[str, list[Value]] = {
    "scale": plain(1.0, 2.0),
    "bounds": plain((0.0, 1.0), (0, 10), (-1.0, 1.0)),
    "threshold": plain(5.0, 5),
    "k": plain(2),
    "size": plain(N), "size_limit": plain(N), "leaf_count": plain(8), "population_size": plain(100),
    "branching_factor": plain(2),
    "constant": plain(0.0, 0),
    "categories": plain([0, 1, 2], [0.0, 0.5, 1.0], [False, True]),
    "candidates": plain([0.0, 0.25, 0.5, 0.75, 1.0], [0, 2, 5, 8, 10]),
    "alpha": plain(0.5, 0.25),
    "alphas": plain([0.25, 0.5, 0.75]),
    "prob": plain(0.75),
    "f": plain(0.5),
    "edges": plain([0.25, 0.5, 0.75], [2, 5, 8]),
    "bin_edges": plain([0.0, 0.25, 0.5, 0.75, 1.0]),
    "value": plain(0.5, 1, True),
    "ddof": plain(1),
    "negate": plain(False, True),
    "optimize": plain("max", "min"),
    "total_limit": plain(100),
    "d_in": plain(1, 1.0),
    "d_out": plain((1.0, 1e-6)),
    "d_mids": plain([1.0, 1.0]),
    "delta": plain(1e-6),
    "stop_probability": plain(0.5),
    "null_category": plain(True, False),
    "null": plain(-1, 0),
    "constant_time": plain(False),
    "global_scale": plain(1.0),
}


def required(sig: inspect.Signature) -> list[str]:
    return [p.name for p in sig.parameters.values()
            if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def combinations(choices: dict[str, list[Value]], limit: int, seed: int) -> Iterator[dict[str, Value]]:
    """Every combination of the candidates when there are at most ``limit``, else ``limit`` of them
    drawn without repetition in a seeded order; the first combination is each parameter's first
    candidate (its default where it has one)."""
    names = list(choices)
    sizes = [len(choices[n]) for n in names]
    total = int(np.prod(sizes, dtype=float)) if names else 1
    if total == 0:
        return
    if total <= limit:
        order = list(itertools.product(*[range(s) for s in sizes]))
        rng = np.random.default_rng(seed)
        rest = order[1:]
        rng.shuffle(rest)
        order = order[:1] + rest
    else:
        rng = np.random.default_rng(seed)
        seen = {tuple(0 for _ in sizes)}
        order = [tuple(0 for _ in sizes)]
        tries = 0
        while len(order) < limit and tries < 20 * limit:
            tries += 1
            idx = tuple(int(rng.integers(s)) for s in sizes)
            if idx not in seen:
                seen.add(idx)
                order.append(idx)
    for idx in order:
        yield {n: choices[n][i] for n, i in zip(names, idx)}


def first_line(exc: BaseException) -> str:
    """The library's refusal in one line: its message without the backtrace or the variant."""
    text = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    msg = next((ln for ln in text if not ln.startswith(("0:", "at "))), type(exc).__name__)
    for head in ("MakeTransformation(", "MakeMeasurement(", "FFI(", "FailedFunction("):
        msg = msg.replace(head, "")
    return f"{type(exc).__name__}: {msg[:200]}"


def selected(quals: list[str], only: Optional[list]) -> set:
    """The qualified names ``--only`` picks: for each NAME, the constructors whose last name is
    NAME when there is one (``make_laplace`` is make_laplace, not make_laplace_threshold too, as
    a user asking for it expects), else those whose name contains it."""
    if not only:
        return set(quals)
    picked: set = set()
    for o in only:
        exact = {q for q in quals if q.rsplit(".", 1)[-1] == o or q == o}
        found = exact or {q for q in quals if o in q}
        if not found:  # a typo swept nothing and exited 0 (a hurried user's probe)
            import difflib

            from dpaudit.errors import NothingMatched

            close = difflib.get_close_matches(o, sorted({q.rsplit(".", 1)[-1] for q in quals}), n=3)
            hint = f"; close: {', '.join(close)}" if close else ""
            raise NothingMatched(f"--only {o}: no constructor is named so or contains it{hint}")
        picked |= found
    return picked
