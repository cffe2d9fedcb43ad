"""A validated sensitivity claim and how to evaluate ``f`` on one neighbouring pair.

The claim (docs/math.md#individual-model, #em-range): for neighbours D ~ D' under the relation,
``‖f(D) − f(D')‖ ≤ Δ``; in Cummings and Durfee (2020)'s individual model ``‖f(D ∪ {i}) − f(D)‖ ≤ Δ_i``;
for a utility u(D, r), ``sup_r |u(D, r) − u(D', r)| ≤ Δu`` (MT07's Δu). Outputs in ℝ^d are
compared in ℓ1, ℓ2 or ℓ∞. A pair violates the claim when

    gap > allowed + rtol · max(allowed, ‖f(D)‖∞, ‖f(D')‖∞)

so that floating-point rounding of a correct implementation (relative error ~1e-15) is never
reported as a violation, while any real excess is (the default rtol is 1e-9).
"""

from __future__ import annotations

import inspect
import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from dpaudit.claims import Domain, Neighbours, SensitivityBound
from dpaudit.errors import InvalidArgument
from dpaudit.neighbours.strategies import SizeRange, size_range
from dpaudit.validation import check_bound

__all__ = ["Problem", "BadOutput", "OutOfDomain", "make_problem", "NORMS"]

NORMS = {"l1": 1, "l2": 2, "linf": np.inf}


class OutOfDomain(Exception):
    """The declaration says this input is outside f's domain: skip it (not an error)."""


class BadOutput(Exception):
    """f raised, or returned NaN / ±inf / None / a value of another shape, on an in-domain input."""

    def __init__(self, message: str, which: str) -> None:
        super().__init__(message)
        self.message = message
        self.which = which  # "dataset" or "neighbour"


@dataclass(frozen=True, slots=True)
class Problem:
    """Everything the search needs, validated (see :func:`dpaudit.check_sensitivity`)."""

    f: Callable
    name: str
    bound: float
    individual: Optional[tuple[float, ...]]
    neighbours: Neighbours
    norm: str
    domain: Domain
    sizes: SizeRange
    integers: bool
    dim: Optional[int]
    outputs: Optional[Domain]
    output_grid: Optional[tuple[float, ...]]
    pass_ids: bool
    out_of_domain_errors: tuple[type, ...]
    out_of_domain: Optional[Callable[[np.ndarray], bool]]
    rtol: float

    @property
    def utility(self) -> bool:
        return self.outputs is not None or self.output_grid is not None

    def allowed(self, individual: Optional[int]) -> float:
        """The bound that applies to a pair: Δ_i in the individual model, else Δ."""
        if self.individual is not None and individual is not None:
            return self.individual[individual]
        return self.bound

    # ------------------------------------------------------------------ evaluation

    def value(self, data: np.ndarray, ids: Optional[np.ndarray], r: Optional[float],
              which: str) -> np.ndarray:
        """f on one dataset, as a float array of shape () or (d,).

        Raises :class:`OutOfDomain` for inputs the declaration excludes and :class:`BadOutput`
        when f fails on an in-domain input.
        """
        if self.out_of_domain is not None:
            try:
                excluded = bool(self.out_of_domain(data.copy()))
            except Exception as exc:
                raise BadOutput(f"out_of_domain predicate raised {type(exc).__name__}: {exc}", which) from None
            if excluded:
                raise OutOfDomain()
        args: list[Any] = [data.copy()]
        if self.pass_ids:
            args.append(None if ids is None else ids.copy())
        if r is not None:
            args.append(r)
        try:
            out = self.f(*args)
        except self.out_of_domain_errors:
            raise OutOfDomain() from None
        except Exception as exc:  # user code failing is reported, never re-raised (STYLE 10)
            text = str(exc).splitlines()[0] if str(exc) else ""
            raise BadOutput(f"raised {type(exc).__name__}: {text}".rstrip(": "), which) from None
        return _as_value(out, which)

    def gap(self, data: np.ndarray, neighbour: np.ndarray, ids: Optional[np.ndarray],
            neighbour_ids: Optional[np.ndarray], r: Optional[float]) -> tuple[float, Any, Any, Optional[float]]:
        """(gap, f(D), f(D'), r) for one pair; with an output grid, the sup over the grid and
        the r attaining it."""
        if self.output_grid is None:
            return self._gap_at(data, neighbour, ids, neighbour_ids, r)
        best: tuple[float, Any, Any, Optional[float]] = (-1.0, None, None, None)
        for rr in self.output_grid:
            found = self._gap_at(data, neighbour, ids, neighbour_ids, rr)
            if found[0] > best[0]:
                best = found
        return best

    def _gap_at(self, data, neighbour, ids, neighbour_ids, r) -> tuple[float, Any, Any, Optional[float]]:
        a = self.value(data, ids, r, "dataset")
        b = self.value(neighbour, neighbour_ids, r, "neighbour")
        if a.shape != b.shape:
            raise BadOutput(f"returned values of different shapes {a.shape} and {b.shape} "
                            f"on the two datasets", "neighbour")
        diff = a - b
        if diff.ndim == 0:
            g = abs(float(diff))
        else:
            g = float(np.linalg.norm(diff, ord=NORMS[self.norm]))
        if not math.isfinite(g):  # finite values whose difference overflows
            g = math.inf
        return g, _plain(a), _plain(b), r

    def violates(self, gap: float, allowed: float, fa: Any, fb: Any) -> bool:
        return self.excess(gap, allowed, fa, fb) > 0

    def excess(self, gap: float, allowed: float, fa: Any, fb: Any) -> float:
        """gap − (allowed + rtol · max(allowed, ‖f(D)‖∞, ‖f(D')‖∞)): > 0 for a violation."""
        scale = max(allowed, _maxabs(fa), _maxabs(fb))
        return gap - (allowed + self.rtol * scale)


def _as_value(out: Any, which: str) -> np.ndarray:
    if out is None:
        raise BadOutput("returned None", which)
    try:
        arr = np.asarray(out, dtype=float)
    except (TypeError, ValueError):
        raise BadOutput(f"returned {type(out).__name__} {_short(out)}, not a number or a vector", which) from None
    except OverflowError:  # an int beyond float64 (10**400): no gap can be measured on it
        raise BadOutput(f"returned a number too large for a float ({_short(out)})", which) from None
    if arr.ndim > 1:
        raise BadOutput(f"returned an array of shape {arr.shape}; expected a number or a 1-D vector", which)
    if np.isnan(arr).any():
        raise BadOutput(f"returned nan ({_short(out)})", which)
    if np.isinf(arr).any():
        raise BadOutput(f"returned inf ({_short(out)})", which)
    return arr


def _plain(a: np.ndarray) -> Any:
    return float(a) if a.ndim == 0 else tuple(float(v) for v in a)


def _maxabs(v: Any) -> float:
    if v is None:
        return 0.0
    if isinstance(v, tuple):
        return max((abs(x) for x in v), default=0.0)
    return abs(v)


def _short(x: Any, limit: int = 60) -> str:
    if type(x) is int and x.bit_length() > 14_000:  # past Python's default 4,300 digits: named
        return f"an int of {x.bit_length()} bits"  # by its size, whatever limit the process set
    try:
        text = repr(x)
    except ValueError:  # an int of more than 4300 digits has no repr (sys.set_int_max_str_digits)
        return f"an int of {x.bit_length()} bits" if isinstance(x, int) else type(x).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------------- validation

def _positional_count(f: Callable) -> Optional[int]:
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return None
    params = sig.parameters.values()
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def _errors_and_predicate(out_of_domain: Any) -> tuple[tuple[type, ...], Optional[Callable]]:
    if out_of_domain is None:
        return (), None
    if isinstance(out_of_domain, type) and issubclass(out_of_domain, Exception):
        return (out_of_domain,), None
    if isinstance(out_of_domain, tuple) and out_of_domain and all(
            isinstance(e, type) and issubclass(e, Exception) for e in out_of_domain):
        return out_of_domain, None
    if callable(out_of_domain):
        return (), out_of_domain
    raise InvalidArgument.bad("out_of_domain", out_of_domain,
                              "an exception class, a tuple of them, or a predicate data -> bool")


def make_problem(f: Any, bound: Any, *, neighbours: Any, domain: Any, sizes: Any,
                 individual: Any, norm: Any, outputs: Any, output_grid: Any, ids: Any,
                 out_of_domain: Any, integers: Any, dim: Any, rtol: Any, target: Any) -> Problem:
    """Validate :func:`dpaudit.check_sensitivity`'s arguments (InvalidArgument names the bad one)."""
    if not callable(f):
        raise InvalidArgument.bad("f", f, "a callable f(data) (or u(data, r) with outputs=)")
    if bound is None:
        bound = getattr(f, "sensitivity", None)
        if bound is None:
            raise InvalidArgument.bad("bound", None, "a number or a SensitivityBound (f has no .sensitivity)")
    declared_norm = None
    if isinstance(bound, SensitivityBound):
        if individual is not None and tuple(individual) != bound.individual:
            raise InvalidArgument.bad("individual", individual,
                                      f"omitted or equal to the SensitivityBound's {bound.individual!r}")
        individual = bound.individual
        declared_norm = bound.norm
        delta = bound.bound
    else:
        delta = check_bound(bound, "bound")
    if norm is None:
        norm = declared_norm or "l1"
    if norm not in NORMS:
        raise InvalidArgument.bad("norm", norm, "one of l1, l2, linf")
    if declared_norm is not None and norm != declared_norm:
        raise InvalidArgument.bad("norm", norm, f"omitted or equal to the SensitivityBound's {declared_norm!r}")
    rel = Neighbours.parse(neighbours)
    dom = Domain.parse(domain)
    rng = size_range(sizes)
    ind: Optional[tuple[float, ...]] = None
    if individual is not None:
        try:
            ind = tuple(check_bound(v, f"individual[{k}]") for k, v in enumerate(individual))
        except TypeError:
            raise InvalidArgument.bad("individual", individual, "a sequence of bounds Δ_i >= 0") from None
        if not ind:
            raise InvalidArgument.bad("individual", individual, "a non-empty sequence of bounds Δ_i")
        if rel is not Neighbours.ADD_REMOVE:
            raise InvalidArgument.bad("neighbours", rel.value,
                                      "add-remove with individual bounds (D and D ∪ {i}, Cummings and Durfee (2020))")
    out_dom = None if outputs is None else Domain.parse(outputs)
    grid = None
    if output_grid is not None:
        try:
            grid = tuple(float(v) for v in np.asarray(output_grid, dtype=float).reshape(-1))
        except (TypeError, ValueError):
            raise InvalidArgument.bad("output_grid", output_grid, "a sequence of numbers") from None
        if not grid or not all(math.isfinite(v) for v in grid):
            raise InvalidArgument.bad("output_grid", output_grid, "a non-empty sequence of finite numbers")
        if out_dom is not None:
            raise InvalidArgument("give either outputs= (searched interval) or output_grid=, not both")
    errors, predicate = _errors_and_predicate(out_of_domain)
    n_pos = _positional_count(f)
    needed = 1 + (out_dom is not None or grid is not None)
    if ids is None:
        pass_ids = ind is not None and n_pos is not None and n_pos > needed
    else:
        if not isinstance(ids, bool):
            raise InvalidArgument.bad("ids", ids, "None (automatic), True or False")
        if ids and ind is None:
            raise InvalidArgument.bad("ids", ids, "False unless individual bounds are given")
        pass_ids = ids
    if not isinstance(integers, bool):
        raise InvalidArgument.bad("integers", integers, "True or False")
    if dim is not None and (isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 1):
        raise InvalidArgument.bad("dim", dim, "None or an integer >= 1")
    if isinstance(rtol, bool) or not isinstance(rtol, numbers.Real) or not (0.0 <= float(rtol) < 1.0):
        raise InvalidArgument.bad("rtol", rtol, "a number in [0, 1)")
    name = target if target is not None else _name_of(f)
    if not isinstance(name, str):
        raise InvalidArgument.bad("target", target, "a string")
    return Problem(f=f, name=name, bound=delta, individual=ind, neighbours=rel, norm=norm, domain=dom,
                   sizes=rng, integers=integers, dim=None if dim is None else int(dim), outputs=out_dom,
                   output_grid=grid, pass_ids=pass_ids, out_of_domain_errors=errors,
                   out_of_domain=predicate, rtol=float(rtol))


def _name_of(f: Callable) -> str:
    """A readable name: a string ``name`` attribute (e.g. ``spf-median(Δ=0.5, c=0)``), else the
    qualified name, else the type's name."""
    name = getattr(f, "name", None)
    if isinstance(name, str) and name:
        return name
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or type(f).__name__

