"""Values that remember which noise draw they came from: the inputs of the noise, observed.

A draw of the recording generator comes back as a :class:`Noisy` array (an ``ndarray``
subclass) or a :class:`NoisyScalar` (a ``numpy.float64`` subclass, so it still *is* a float).
Every numpy operation on one goes through :func:`dispatch` (``__array_ufunc__``, and the Python
operators of the scalar), which computes it as usual and writes down an
:class:`~dpaudit.replay.session.Event`. Each value carries a :class:`Trace`: the call it came
from, whether data has been added to it yet (``pure``), and, while it is a linear function of
the draw, its multiplier and the draw's elements it holds. For a value ``m·Z + c`` (``Z`` the raw
draw) the noise hides ``c`` behind noise of scale ``|m|·b``, so the *input* of the draw, in the
draw's own units, is ``c / m``: an addition ``x + m·Z`` contributes ``x / m``, a subtraction
``m·Z − x`` contributes ``−x / m``. That is how the input is observed from numpy arithmetic
(the ``"add"`` events), with no change to the audited code.

On the replay run (D′), an ``"add"`` that matches the record returns the record's sum: the noisy
value is frozen (the noise becomes ``Z + (c_D − c_D′)/m``), so what the code derives from noisy
values alone is identical to the record, and a difference that remains came from data that did
not pass through the noise. Multiplications and divisions are ``"scale"`` events (of pure noise:
its calibration; of a noisy value: a rescaling of its noise), any other operation a ``"post"``
event; their operands are compared between the runs. Whether an addition brings data (its operand
moves between D and D′) or a constant (``1 − u`` of an inverse-CDF sampler) is decided by that
comparison (:mod:`dpaudit.replay.compare`), not here: here every addition is written down, and
frozen.

What is not followed: a draw turned into a Python ``float`` (``float(z)``, ``z.tolist()``) or
passed through a non-ufunc numpy function (``np.concatenate``, ``np.where``) leaves the tracking;
the audit then falls back on the outputs (:mod:`dpaudit.replay.compare`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any, Optional

import numpy as np

from dpaudit.replay.session import MAX_STORED, Event, Run, current, perturbed, snapshot
from dpaudit.replay.sites import call_site

__all__ = ["Trace", "Noisy", "NoisyScalar", "trace_of", "plain", "wrap", "dispatch", "stored",
           "plain_output", "track_output"]


@dataclass(frozen=True)
class Trace:
    """Where a value comes from: ``origin`` (the index of the call it was drawn by), ``pure``
    (no data added yet), ``linear`` (the value is ``mult · draw[elems]`` plus data), ``mult``
    (a number, or an array of the value's shape) and ``elems`` (the draw's flat element indices,
    an int array of the value's shape; None once the mapping is lost)."""

    origin: int
    pure: bool
    linear: bool
    mult: Any = 1.0
    elems: Optional[np.ndarray] = None


def trace_of(x: Any) -> Optional[Trace]:
    if isinstance(x, (Noisy, NoisyScalar)):
        return getattr(x, "_dpa", None)
    return None


def plain(x: Any) -> Any:
    """``x`` without its tracking: a plain ndarray view, or a plain float64."""
    if isinstance(x, Noisy):
        return x.view(np.ndarray)
    if isinstance(x, NoisyScalar):
        return np.float64(x)
    return x


def wrap(value: Any, trace: Trace) -> Any:
    """``value`` (a float array or number) as a tracked value with ``trace``; booleans, integers
    and objects are returned as they are."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "fc":
            return value
        if value.ndim == 0:
            return _scalar(value[()], trace)
        out = value.view(Noisy)
        out._dpa = trace
        return out
    if isinstance(value, (float, np.floating)) and not isinstance(value, np.float16):
        return _scalar(value, trace)
    return value


def _scalar(value: Any, trace: Trace) -> Any:
    if not isinstance(value, (float, np.floating)):
        return value
    out = NoisyScalar(float(value))
    out._dpa = trace
    return out


def stored(x: Any) -> Any:
    """What is kept of an operand to compare it between the runs: a copy, or for an array of
    more than :data:`MAX_STORED` elements a digest (shape, dtype, hash of the bytes)."""
    if isinstance(x, np.ndarray) and x.size > MAX_STORED:
        a = np.ascontiguousarray(x)
        return ("digest", a.shape, str(a.dtype), hashlib.sha1(a.tobytes()).hexdigest())
    return snapshot(plain(x))


def plain_output(x: Any) -> Any:
    """An output with every tracked value made plain again (tuples, lists and dicts walked)."""
    if isinstance(x, (Noisy, NoisyScalar)):
        return plain(x)
    if type(x) in (list, tuple):
        return type(x)(plain_output(v) for v in x)
    if isinstance(x, dict):
        return {k: plain_output(v) for k, v in x.items()}
    return x


_LINEAR_ADD = ("add", "subtract")
_LINEAR_MUL = ("multiply", "divide", "true_divide")


def _shape_of(x: Any) -> tuple:
    return tuple(np.shape(x))


def _broadcast(a: Any, shape: tuple) -> Any:
    if a is None:
        return None
    if np.ndim(a) == 0:
        return a
    try:
        return np.broadcast_to(a, shape)
    except ValueError:
        return None


def dispatch(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    """Compute ``ufunc`` on the plain values and, inside a run, write the operation down and
    return a tracked result (module docstring)."""
    run = current()
    traces = [trace_of(x) for x in inputs]
    args = [plain(x) for x in inputs]
    out = kwargs.get("out")
    if out is not None:
        kwargs = dict(kwargs, out=tuple(plain(o) for o in out))
    if run is None or run.depth > 0 or all(t is None for t in traces):
        return getattr(ufunc, method)(*args, **kwargs)
    tracked = [i for i, t in enumerate(traces) if t is not None]
    others = [args[i] for i in range(len(args)) if traces[i] is None]
    t = traces[tracked[0]]
    pure = all(traces[i].pure for i in tracked)
    single = len(tracked) == 1
    name = ufunc.__name__
    site = call_site()
    if method != "__call__":
        result = getattr(ufunc, method)(*args, **kwargs)
        _event(run, name, site, "post", traces, tracked, others, result)
        if method == "at" or out is not None:
            return out[0] if out is not None else result
        return wrap(result, Trace(t.origin, pure, False))
    if single and name in _LINEAR_ADD and len(args) == 2:
        return _add(run, ufunc, name, site, args, kwargs, out, tracked[0], t)
    if single and len(args) == 2 and (name == "multiply" or (name in _LINEAR_MUL and tracked[0] == 0)):
        return _scale(run, ufunc, name, site, args, kwargs, out, tracked[0], t)
    if single and name in ("negative", "positive") and len(args) == 1:
        result = ufunc(*args, **kwargs)
        _event(run, name, site, "scale", traces, tracked, others, result)
        mult = -t.mult if name == "negative" else t.mult
        return _result(result, out, replace(t, mult=mult))
    result = ufunc(*args, **kwargs)
    _event(run, name, site, "post", traces, tracked, others, result)
    return _result(result, out, Trace(t.origin, pure, False))


def _result(result: Any, out: Optional[tuple], trace: Trace) -> Any:
    if out is not None:
        target = out[0]
        if isinstance(target, Noisy):
            target._dpa = trace
        return target
    return wrap(result, trace)


def _event(run: Run, name: str, site: Any, kind: str, traces: list, tracked: list, others: list,
           result: Any, **extra: Any) -> Event:
    ev = Event(seq=len(run.events), ufunc=name, site=site, kind=kind,
               origins=tuple(traces[i].origin for i in tracked),
               operands=tuple(stored(o) for o in others), shape=_shape_of(result), **extra)
    if run.mode == "replay":
        run.recorded_event(ev.key)
    run.events.append(ev)
    return ev


def _add(run: Run, ufunc: np.ufunc, name: str, site: Any, args: list, kwargs: dict,
         out: Optional[tuple], i: int, t: Trace) -> Any:
    """Something added to a draw or to a value derived from one: the input when it moves (linear
    values: in the draw's units), a constant when it does not; frozen on the replay."""
    u = args[1 - i]
    result = ufunc(*args, **kwargs)
    shape = _shape_of(result)
    # the new multiplier: u − m·Z is −m·Z + u
    mult = -t.mult if (name == "subtract" and i == 1) else t.mult
    sign = -1.0 if (name == "subtract" and i == 0) else 1.0
    contribution = None
    elems = _broadcast(t.elems, shape)
    if t.linear:
        with np.errstate(all="ignore"):
            contribution = sign * np.asarray(u, dtype=float) / np.asarray(mult, dtype=float)
        contribution = _broadcast(contribution, shape)
    if t.pure and elems is not None:
        _note_reuse(run, t.origin, np.asarray(elems), site)
    ev = Event(seq=len(run.events), ufunc=name, site=site, kind="add", origins=(t.origin,),
               operands=(stored(u),), contribution=None if contribution is None else snapshot(np.asarray(contribution)),
               elems=None if elems is None else np.array(elems), shape=shape)
    if run.mode == "replay":
        rec = run.recorded_event(ev.key)
        if rec is not None and rec.result is not None and _shape_of(rec.result) == shape:
            frozen = perturbed(np.array(rec.result, copy=True), run.perturb)
            if out is not None:
                kwargs["out"][0][...] = frozen
            else:
                result = frozen[()] if frozen.ndim == 0 else frozen
    ev.result = snapshot(result if out is None else kwargs["out"][0])
    run.events.append(ev)
    trace = Trace(t.origin, False, t.linear and elems is not None, _broadcast(mult, shape) if np.ndim(mult) else mult,
                  None if elems is None else np.array(elems))
    return _result(result, out, trace)


def _scale(run: Run, ufunc: np.ufunc, name: str, site: Any, args: list, kwargs: dict,
           out: Optional[tuple], i: int, t: Trace) -> Any:
    """A draw (or a noisy value) multiplied or divided by something that is not noise."""
    u = args[1 - i]
    result = ufunc(*args, **kwargs)
    shape = _shape_of(result)
    ev = Event(seq=len(run.events), ufunc=name, site=site, kind="scale", origins=(t.origin,),
               operands=(stored(u),), shape=shape)
    if run.mode == "replay":
        run.recorded_event(ev.key)
    run.events.append(ev)
    with np.errstate(all="ignore"):
        factor = np.asarray(u, dtype=float) if np.asarray(u).dtype.kind in "biuf" else None
        if factor is None:
            return _result(result, out, Trace(t.origin, t.pure, False))
        mult = np.asarray(t.mult, dtype=float) * factor if name == "multiply" else \
            np.asarray(t.mult, dtype=float) / factor
    mult = mult.item() if mult.ndim == 0 else _broadcast(mult, shape)
    elems = _broadcast(t.elems, shape)
    linear = t.linear and elems is not None and mult is not None
    return _result(result, out, Trace(t.origin, t.pure, linear, 1.0 if mult is None else mult,
                                      None if elems is None else np.array(elems)))


def _note_reuse(run: Run, origin: int, elems: np.ndarray, site: Any) -> None:
    """A draw's elements added to data: an element added twice (twice in one addition, by
    broadcasting one draw over several values, or in two additions) is noted with the two
    operations' indices; whether the reuse releases a difference of data is decided by the
    comparison of the two runs (:mod:`dpaudit.replay.compare`)."""
    flat = elems.reshape(-1)
    seq = len(run.events)
    first = run.consumed.get(origin)
    if first is None:
        size = run.calls[origin].size if origin < len(run.calls) else int(flat.max(initial=0)) + 1
        first = np.full(max(size, int(flat.max(initial=0)) + 1), -1, dtype=np.int64)
        run.consumed[origin] = first
    if len(np.unique(flat)) < len(flat):
        run.reuses.append((origin, seq, seq))
    earlier = np.unique(first[flat][first[flat] >= 0])
    for s in earlier.tolist():
        run.reuses.append((origin, int(s), seq))
    fresh = flat[first[flat] < 0]
    first[fresh] = seq


class Noisy(np.ndarray):
    """A float array drawn by the recording generator (or computed from one): numpy's operations
    on it are written down (:func:`dispatch`); it is otherwise an ordinary ndarray."""

    _dpa: Optional[Trace]

    def __array_finalize__(self, obj: Any) -> None:
        t = getattr(obj, "_dpa", None)
        if t is None:
            self._dpa = None
        elif t.elems is not None and getattr(obj, "size", -1) == self.size and np.ndim(t.mult) == 0:
            # reshape, ravel, copy, astype: the elements keep their C order
            self._dpa = replace(t, elems=np.asarray(t.elems).reshape(self.shape))
        else:
            self._dpa = replace(t, linear=False, elems=None)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return dispatch(ufunc, method, inputs, kwargs)

    def __getitem__(self, key: Any) -> Any:
        res = super().__getitem__(key)
        t = self._dpa
        if t is None:
            return res
        try:
            elems = None if t.elems is None else np.asarray(t.elems)[key]
            mult = t.mult if np.ndim(t.mult) == 0 else np.asarray(t.mult)[key]
        except (IndexError, TypeError, ValueError):
            elems, mult = None, 1.0
        trace = Trace(t.origin, t.pure, t.linear and elems is not None, mult, elems)
        if isinstance(res, np.ndarray):
            res = res.view(Noisy)
            res._dpa = trace
            return res
        return _scalar(res, trace)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def _moved(self) -> None:
        """Values rearranged or overwritten in place (not a ufunc): which draw element each
        position holds is no longer known (:mod:`dpaudit.replay.exact` must not read it)."""
        t = getattr(self, "_dpa", None)
        if t is not None:
            self._dpa = replace(t, linear=False, elems=None)

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        self._moved()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        super().sort(*args, **kwargs)
        self._moved()

    def partition(self, *args: Any, **kwargs: Any) -> None:
        super().partition(*args, **kwargs)
        self._moved()

    def put(self, *args: Any, **kwargs: Any) -> None:
        super().put(*args, **kwargs)
        self._moved()

    def fill(self, value: Any) -> None:
        super().fill(value)
        self._moved()


def _binary(ufunc: np.ufunc, reflected: bool = False):
    def op(self, other):
        pair = (other, self) if reflected else (self, other)
        return dispatch(ufunc, "__call__", pair, {})
    op.__name__ = ufunc.__name__
    return op


def _unary(ufunc: np.ufunc):
    def op(self):
        return dispatch(ufunc, "__call__", (self,), {})
    op.__name__ = ufunc.__name__
    return op


class NoisyScalar(np.float64):
    """A number drawn by the recording generator: a ``float`` (and ``numpy.float64``) whose
    arithmetic is written down like :class:`Noisy`'s."""

    _dpa: Optional[Trace]

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return dispatch(ufunc, method, inputs, kwargs)

    __add__ = _binary(np.add)
    __radd__ = _binary(np.add, True)
    __sub__ = _binary(np.subtract)
    __rsub__ = _binary(np.subtract, True)
    __mul__ = _binary(np.multiply)
    __rmul__ = _binary(np.multiply, True)
    __truediv__ = _binary(np.true_divide)
    __rtruediv__ = _binary(np.true_divide, True)
    __floordiv__ = _binary(np.floor_divide)
    __rfloordiv__ = _binary(np.floor_divide, True)
    __mod__ = _binary(np.remainder)
    __rmod__ = _binary(np.remainder, True)
    __pow__ = _binary(np.power)
    __rpow__ = _binary(np.power, True)
    __lt__ = _binary(np.less)
    __le__ = _binary(np.less_equal)
    __gt__ = _binary(np.greater)
    __ge__ = _binary(np.greater_equal)
    __eq__ = _binary(np.equal)
    __ne__ = _binary(np.not_equal)
    __neg__ = _unary(np.negative)
    __pos__ = _unary(np.positive)
    __abs__ = _unary(np.absolute)
    __hash__ = np.float64.__hash__


def track_output(run: Run, out: Any) -> Any:
    """The output of the run's last recorded primitive call as a noisy value (its later
    arithmetic with data is then written down); non-float outputs are returned as they are."""
    if not run.calls:
        return out
    return wrap(out, Trace(len(run.calls) - 1, False, False))
