"""The recording generator: a ``numpy.random.Generator`` that writes down every draw, and on the
neighbour's run answers each draw with the recorded value.

:class:`RecordingGenerator` *is* a ``Generator`` (a subclass: ``isinstance`` checks, ``spawn``
and every method keep working), so the audited code is run unchanged with it as ``rng``. Each
method call is recorded as a :class:`~dpaudit.replay.session.Call` with its call site, its
public parameters (scale, size, bounds, probabilities of ``choice`` as its input) and its value;
continuous draws come back as tracked values (:mod:`dpaudit.replay.tracked`) so that the input
they are added to is observed.

On the replay run the k-th call is answered with the record's k-th value when it is the same
method at the same call site; a call with another scale gets the same standardised draw at the
new scale (``z · b′/b``) and another size gets fresh draws; a call that is not the record's
(another method or site, or one too many) leaves the record: from then on every call is
answered by a fresh generator, and the comparison reports where the runs parted.

``loc=`` of ``laplace``, ``normal``, ``gumbel``, ``logistic`` (and ``mean=`` of
``multivariate_normal``) is the draw's input: the returned value already carries it. ``choice``
and ``permutation``/``shuffle`` of an array are frozen by their indices, so the neighbour's run
picks the same positions of its own data.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from dpaudit.replay.session import Call, Run, current, perturbed, snapshot
from dpaudit.replay.sites import call_site
from dpaudit.replay.tracked import Trace, wrap

__all__ = ["RecordingGenerator", "METHODS", "ACCOUNTED"]


@dataclass(frozen=True)
class _Method:
    """How to read one Generator method: its parameter names in order, the distribution it
    draws, which parameter is its scale (or a constant one), which is its location (input),
    and whether its values are tracked."""

    params: tuple
    distribution: Optional[str] = None
    scale: Any = None
    loc: Optional[str] = None
    tracked: bool = True


#: the methods read by name; any other public method is recorded and frozen as a whole
METHODS: dict[str, _Method] = {
    "laplace": _Method(("loc", "scale", "size"), "laplace", "scale", "loc"),
    "normal": _Method(("loc", "scale", "size"), "gaussian", "scale", "loc"),
    "standard_normal": _Method(("size", "dtype", "out"), "gaussian", 1.0),
    "exponential": _Method(("scale", "size"), "exponential", "scale"),
    "standard_exponential": _Method(("size", "dtype", "method", "out"), "exponential", 1.0),
    "gumbel": _Method(("loc", "scale", "size"), "gumbel", "scale", "loc"),
    "logistic": _Method(("loc", "scale", "size"), "logistic", "scale", "loc"),
    "standard_cauchy": _Method(("size",), "cauchy", 1.0),
    "standard_t": _Method(("df", "size"), "student-t"),
    "uniform": _Method(("low", "high", "size"), "uniform"),
    "random": _Method(("size", "dtype", "out"), "uniform"),
    "gamma": _Method(("shape", "scale", "size"), "gamma", "scale"),
    "integers": _Method(("low", "high", "size", "dtype", "endpoint"), "integers", tracked=False),
    "geometric": _Method(("p", "size"), "geometric", tracked=False),
    "poisson": _Method(("lam", "size"), "poisson", tracked=False),
    "binomial": _Method(("n", "p", "size"), "binomial", tracked=False),
    "multivariate_normal": _Method(("mean", "cov", "size", "check_valid", "tol", "method"),
                                   "multivariate-normal", loc="mean"),
}
#: distributions whose draws are accounted per call (ε of Laplace, ρ of Gaussian noise)
ACCOUNTED = ("laplace", "gaussian")
#: scale-free rescaling of a frozen draw is valid for these (location-scale families)
_LOCATION_SCALE = ("laplace", "gaussian", "exponential", "gumbel", "logistic", "cauchy", "gamma")
_NOT_WRAPPED = {"spawn", "bit_generator", "shuffle", "permutation", "permuted", "choice"}


def _bind(name: str, args: tuple, kwargs: dict) -> dict:
    spec = METHODS.get(name)
    if spec is None:
        try:
            sig = inspect.signature(getattr(np.random.Generator, name))
            bound = sig.bind(None, *args, **kwargs)
            out = dict(bound.arguments)
            out.pop(next(iter(out)), None)   # self
            return out
        except (TypeError, ValueError):
            return {f"arg{i}": a for i, a in enumerate(args)} | dict(kwargs)
    out = dict(zip(spec.params, args))
    out.update(kwargs)
    return out


def _public(params: dict, drop: tuple) -> dict:
    """The parameters that must not depend on the data, as comparable values."""
    out = {}
    for k, v in params.items():
        if k in drop or k == "out":
            continue
        if isinstance(v, np.random.Generator):
            continue
        out[k] = snapshot(np.asarray(v)) if isinstance(v, (list, tuple)) else snapshot(v)
    return out


class RecordingGenerator(np.random.Generator):
    """A Generator that records its draws in the current run and answers them from the record
    on a replay (module docstring). Outside the run it was made for, it is a plain Generator."""

    def __init__(self, bit_generator: Any, run: Optional[Run] = None) -> None:
        super().__init__(bit_generator)
        self._dpa_run = run

    def _dpa_live(self) -> Optional[Run]:
        run = self._dpa_run
        if run is None or current() is not run or run.depth > 0:
            return None
        return run

    def _dpa_real(self, run: Optional[Run]) -> np.random.Generator:
        """The generator that draws real values: this one, or the replay's fresh one."""
        if run is not None and run.mode == "replay":
            return run.fresh_generator()
        return self

    def _dpa_draw(self, name: str, args: tuple, kwargs: dict) -> Any:
        real = getattr(np.random.Generator, name)
        run = self._dpa_live()
        if run is None:
            return real(self, *args, **kwargs)
        site = call_site()
        spec = METHODS.get(name, _Method(()))
        bound = _bind(name, args, kwargs)
        loc = spec.loc if spec.loc in bound else None
        scale = bound.get(spec.scale, 1.0) if isinstance(spec.scale, str) else spec.scale
        key = ("numpy", name, site.key)
        rec = run.recorded_call(key, site) if run.mode == "replay" else None
        value = None
        fresh = run.mode == "replay"
        if rec is not None and bound.get("out") is None:
            value = _frozen(rec, spec, scale, bound, loc)
            if value is None:
                value = _aligned(run, rec, spec, bound, real, args, kwargs)
            fresh = value is None
            if value is not None and run.perturb:
                value = perturbed(np.asarray(value), run.perturb)
                value = value[()] if value.ndim == 0 else value
        if value is None:
            value = _quiet(run, lambda: real(self._dpa_real(run), *args, **kwargs))
        shape = tuple(np.shape(value))
        params = _public(bound, (spec.loc,) if spec.loc else ())
        params["size"] = shape
        call = Call(index=len(run.calls), source="numpy", method=name, site=site, params=params,
                    distribution=spec.distribution, scale=snapshot(scale), shape=shape,
                    value=snapshot(value), input=snapshot(bound[loc]) if loc else None,
                    has_input=loc is not None, fresh=fresh)
        run.calls.append(call)
        if not spec.tracked or bound.get("out") is not None:
            return value
        elems = np.arange(int(np.prod(shape)) if shape else 1).reshape(shape)
        if loc is not None:
            trace = Trace(call.index, False, True, 1.0, elems)
        else:
            trace = Trace(call.index, True, True, 1.0, elems)
        return wrap(value, trace)

    # -- indices frozen: choice, permutation, shuffle, permuted ---------------------------------

    def _dpa_indices(self, name: str, n: int, draw: Any, params: dict, p: Any = None) -> tuple:
        """The positions drawn (recorded, or the record's on a replay) among ``n``."""
        run = self._dpa_live()
        if run is None:
            return draw(self), None
        site = call_site()
        key = ("numpy", name, site.key)
        rec = run.recorded_call(key, site) if run.mode == "replay" else None
        idx = None
        fresh = run.mode == "replay"
        if rec is not None and rec.indices is not None:
            ri = np.asarray(rec.indices)
            if ri.size == 0 or (ri.max() < n if ri.dtype.kind in "iu" else False):
                idx, fresh = np.array(ri, copy=True), False
        if idx is None:
            idx = np.asarray(_quiet(run, lambda: draw(self._dpa_real(run))))
        params = dict(params, population=int(n), size=tuple(idx.shape))
        call = Call(index=len(run.calls), source="numpy", method=name, site=site, params=params,
                    distribution="categorical" if p is not None else None, scale=None,
                    shape=tuple(idx.shape), value=snapshot(idx), input=snapshot(np.asarray(p, dtype=float)) if p is not None else None,
                    has_input=p is not None, fresh=fresh, indices=snapshot(idx))
        run.calls.append(call)
        return idx, call

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        if self._dpa_live() is None:
            return np.random.Generator.choice(self, a, size, replace, p, axis, shuffle)
        population = None if np.ndim(a) == 0 else np.asarray(a)
        n = int(a) if population is None else population.shape[axis]

        def draw(g):
            return np.random.Generator.choice(g, n, size, replace, p, 0, shuffle)

        idx, _ = self._dpa_indices("choice", n, draw, {"replace": bool(replace), "axis": axis}, p)
        if population is None:
            return idx[()] if idx.ndim == 0 else idx
        out = np.take(population, idx, axis=axis)
        return out[()] if np.ndim(out) == 0 else out

    def permutation(self, x, axis=0):
        if self._dpa_live() is None:
            return np.random.Generator.permutation(self, x, axis)
        arr = None if np.ndim(x) == 0 else np.asarray(x)
        n = int(x) if arr is None else arr.shape[axis]
        idx, _ = self._dpa_indices("permutation", n, lambda g: g.permutation(n), {"axis": axis})
        return idx if arr is None else np.take(arr, idx, axis=axis)

    def shuffle(self, x, axis=0):
        if self._dpa_live() is None:
            return np.random.Generator.shuffle(self, x, axis)
        n = np.shape(x)[axis]
        idx, _ = self._dpa_indices("shuffle", n, lambda g: g.permutation(n), {"axis": axis})
        if isinstance(x, np.ndarray):
            x[...] = np.take(x, idx, axis=axis)
        else:
            items = [x[int(i)] for i in idx]
            for j, v in enumerate(items):
                x[j] = v
        return None

    def permuted(self, x, *, axis=None, out=None):
        run = self._dpa_live()
        arr = np.asarray(x)
        if run is None or axis is not None or out is not None:
            return np.random.Generator.permuted(self, x, axis=axis, out=out)
        n = arr.size
        idx, _ = self._dpa_indices("permuted", n, lambda g: g.permutation(n), {"axis": None})
        return arr.reshape(-1)[idx].reshape(arr.shape)

    def spawn(self, n_children):
        children = self.bit_generator.spawn(n_children)
        return [RecordingGenerator(c, self._dpa_run) for c in children]


def _quiet(run: Run, draw: Any) -> Any:
    """Draw without recording: numpy's own methods call others (``choice`` calls ``integers``)."""
    run.depth += 1
    try:
        return draw()
    finally:
        run.depth -= 1


def _expected_shape(spec: _Method, bound: dict) -> Optional[tuple]:
    """The shape a call will return: its ``size``, else the broadcast of its parameters."""
    size = bound.get("size")
    if size is not None:
        return tuple(int(v) for v in np.atleast_1d(size))
    shapes = [np.shape(v) for k, v in bound.items()
              if k not in ("dtype", "out", "method", "endpoint", "check_valid", "tol", "size")
              and not isinstance(v, (str, type))]
    try:
        return tuple(np.broadcast_shapes(*shapes)) if shapes else ()
    except ValueError:
        return None


def _frozen(rec: Call, spec: _Method, scale: Any, bound: dict, loc: Optional[str]) -> Any:
    """The record's value for a replayed draw, or None when it cannot be reused (another size)."""
    value = rec.value
    expected = _expected_shape(spec, bound)
    if spec.params and (expected is None or tuple(np.shape(value)) != expected):
        return None
    value = np.array(value, copy=True) if isinstance(value, np.ndarray) else value
    if spec.distribution in _LOCATION_SCALE and rec.scale is not None and scale is not None:
        with np.errstate(all="ignore"):
            old, new = np.asarray(rec.scale, dtype=float), np.asarray(scale, dtype=float)
            if old.shape == new.shape and not np.array_equal(old, new) and np.all(old > 0):
                shift = np.asarray(rec.input, dtype=float) if loc else 0.0
                value = (np.asarray(value, dtype=float) - shift) * (new / old) + shift
                value = value[()] if np.ndim(value) == 0 else value
    return value


def _aligned(run: Run, rec: Call, spec: _Method, bound: dict, real: Any, args: tuple,
             kwargs: dict) -> Any:
    """A per-record draw on an add-remove pair: the record's values for the records both
    datasets hold, a fresh value for the extra record of the replayed dataset (None when the call
    is not one value per record)."""
    if run.sizes is None or run.align is None or spec.loc is not None:
        return None
    expected = _expected_shape(spec, bound)
    shape = tuple(np.shape(rec.value))
    n_rec, n_here = run.sizes
    if expected is None or not shape or not expected or shape[0] != n_rec or expected[0] != n_here \
            or shape[1:] != expected[1:] or abs(n_rec - n_here) != 1:
        return None
    value = np.asarray(rec.value)
    if n_here < n_rec:
        return np.delete(value, run.align, axis=0)
    extra = np.asarray(_quiet(run, lambda: real(run.fresh_generator(), *args, **kwargs)))
    return np.insert(value, run.align, extra[run.align], axis=0)


def _wrapped(name: str):
    def method(self, *args, **kwargs):
        return self._dpa_draw(name, args, kwargs)
    method.__name__ = name
    method.__qualname__ = f"RecordingGenerator.{name}"
    method.__doc__ = getattr(np.random.Generator, name).__doc__
    return method


for _name in dir(np.random.Generator):
    if _name.startswith("_") or _name in _NOT_WRAPPED:
        continue
    if callable(getattr(np.random.Generator, _name, None)):
        setattr(RecordingGenerator, _name, _wrapped(_name))
