"""One run of the audited mechanism under the recorder: what it drew, what it did with the draws.

A replay audit runs the mechanism twice per neighbouring pair: a **record** run on D, in which
every noise call (a numpy ``Generator`` method, a ``@dpaudit.primitive``, a diffprivlib
``randomise``) is answered by the real generator and written down as a :class:`Call`, and a
**replay** run on D′, in which the k-th call is answered with the record's k-th value (frozen),
provided it is the same call (same kind, same call site). The arithmetic the code does on what a
call returned is written down too, as :class:`Event` s (:mod:`dpaudit.replay.tracked`); on the
replay, an addition of data to a frozen draw returns the record's sum, so that the noisy value
itself is frozen (as Re:cord-play freezes a primitive's output: Cebere, Erb, Desfontaines,
Bellet and Fitzsimons, PETS 2026) and everything the code computes from noisy values alone
stays the same. What differs is then data that reached the output some other way.

The run that is active is held in a ``ContextVar`` (:func:`current`); outside an audit it is
None and every hook is a plain pass-through, so an audited module behaves as usual when it is
imported or called on its own.
"""

from __future__ import annotations

import contextvars
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

import numpy as np

from dpaudit.replay.sites import Site

__all__ = ["Call", "Event", "Divergence", "Run", "current", "active", "snapshot", "perturbed",
           "MAX_STORED", "MechanismFailed"]

#: arrays larger than this are kept as a digest, not a copy, where only equality is asked of them
MAX_STORED = 200_000


class MechanismFailed(Exception):
    """The audited function raised, or broke the contract the replay checks (it drew its noise
    from a generator dpaudit did not hand over: :mod:`dpaudit.replay.outside`): the audit's
    ERROR verdict (never a traceback), with the dataset it was called on."""

    def __init__(self, message: str, data: np.ndarray) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


def snapshot(x: Any) -> Any:
    """A copy of ``x`` that later code cannot change: numpy arrays copied as plain arrays, numpy
    scalars as Python numbers, containers element by element; anything else as is."""
    if isinstance(x, np.ndarray):
        return np.array(x, copy=True).view(np.ndarray)
    if isinstance(x, np.generic):
        return x.item()
    if type(x) in (list, tuple):
        return type(x)(snapshot(v) for v in x)
    return x


@dataclass
class Call:
    """One noise call of a run.

    ``source`` is ``"numpy"`` (a ``Generator`` method), ``"primitive"`` (a function decorated
    with :func:`dpaudit.primitive`) or ``"diffprivlib"`` (a mechanism's ``randomise``);
    ``method`` names it (``"laplace"``, a primitive's qualified name, a mechanism class).
    ``params`` are its public parameters (scale, size, bounds, the declared sensitivity ...),
    which a private dataset must not change; ``distribution`` is ``"laplace"`` or ``"gaussian"``
    where the call is accounted per call, ``"categorical"`` for ``choice`` with probabilities, else
    None; ``scale`` its base scale b (Laplace) or σ (Gaussian). ``value`` is what it returned
    (for numpy, the raw draw; for a primitive, its output). ``input`` is the value the noise is
    added to where the call takes it as an argument (``loc=``, a primitive's input, ``randomise(value)``;
    for ``choice``, the probabilities). ``declared`` holds a primitive's declared ``sensitivity``,
    ``epsilon``, ``delta``, ``norm``. ``fresh`` is True when the replay could not freeze it.
    """

    index: int
    source: str
    method: str
    site: Site
    params: dict
    distribution: Optional[str]
    scale: Any
    shape: tuple
    value: Any
    input: Any = None
    has_input: bool = False
    declared: Optional[dict] = None
    fresh: bool = False
    #: choice: the indices drawn (what is frozen), when the population is an array
    indices: Any = None

    @property
    def key(self) -> tuple:
        """What must match for the replay to answer this call with the record's value."""
        return (self.source, self.method, self.site.key)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1


@dataclass
class Event:
    """One numpy operation on a value derived from a draw (:mod:`dpaudit.replay.tracked`).

    ``kind``: ``"add"`` (an addition or subtraction of something that is not noise: the draw's
    input where it moves between the runs, a constant where it does not; ``contribution`` is the
    operand in the draw's units, ± operand / multiplier, while the value is linear in the draw,
    ``elems`` the draw's elements it lands on, ``result`` the sum, which the replay returns),
    ``"scale"`` (a multiplication or division) or ``"post"`` (any other operation). ``operands``
    are the operands that do not come from a draw (copies, or digests of large arrays),
    ``origins`` the calls the tracked operands come from.
    """

    seq: int
    ufunc: str
    site: Site
    kind: str
    origins: tuple
    operands: tuple
    contribution: Any = None
    elems: Any = None
    result: Any = None
    shape: tuple = ()

    @property
    def key(self) -> tuple:
        """What must match between the runs (the shape may follow the data: per-record noise)."""
        return (self.ufunc, self.site.key, self.kind)


@dataclass(frozen=True)
class Divergence:
    """Where the replay left the record: the index of the call (or operation) at which the two
    runs part, what each run did there (None: that run made no such call), and whether it was a
    noise call (``"call"``) or an operation on a noisy value (``"event"``)."""

    what: str
    index: int
    recorded: Optional[tuple]
    replayed: Optional[tuple]
    recorded_site: Optional[Site]
    replayed_site: Optional[Site]


@dataclass
class Run:
    """Everything one run of the mechanism recorded (mode ``"record"`` or ``"replay"``)."""

    mode: str
    generator_seed: int
    recorded: Optional["Run"] = None
    calls: list = field(default_factory=list)
    events: list = field(default_factory=list)
    #: depth of primitive calls under way: draws inside a primitive belong to it
    depth: int = 0
    divergence: Optional[Divergence] = None
    #: for each numpy draw, the operation that first added each element to data (-1: none yet)
    consumed: dict = field(default_factory=dict)
    #: (call index, first operation, later operation) for each element added to data twice
    reuses: list = field(default_factory=list)
    #: the line of the audited function that returned (the output's release site)
    return_site: Optional[Site] = None
    fallback: Optional[np.random.Generator] = None
    #: a replay that answers every frozen value v with v·(1 + perturb) (0: exactly v): what
    #: depends on the noise moves, what does not stays (:mod:`dpaudit.replay.search`)
    perturb: float = 0.0
    #: add-remove pairs: the records of the recorded dataset and of this one, and the position of
    #: the extra record in the larger: a per-record draw (one value per record) is answered with
    #: the record's values for the records both datasets hold (:mod:`dpaudit.replay.generator`)
    sizes: Optional[tuple] = None
    align: Optional[int] = None

    @property
    def replaying(self) -> bool:
        """True while the replay still answers calls with recorded values."""
        return self.mode == "replay" and self.divergence is None

    def fresh_generator(self) -> np.random.Generator:
        """The generator that answers the replay's calls once it has left the record."""
        if self.fallback is None:
            self.fallback = np.random.Generator(np.random.PCG64(
                np.random.SeedSequence([self.generator_seed, 0x5E9])))
        return self.fallback

    def diverge(self, what: str, index: int, recorded: Any, replayed: Any,
                recorded_site: Optional[Site], replayed_site: Optional[Site]) -> None:
        if self.divergence is None:
            self.divergence = Divergence(what, index, recorded, replayed, recorded_site, replayed_site)

    def recorded_call(self, key: tuple, site: Site) -> Optional[Call]:
        """The record's call at this run's next index if it is the same call (``key``, made at
        ``site``), else None (and the run leaves the record there)."""
        k = len(self.calls)
        rec = self.recorded.calls[k] if self.recorded is not None and k < len(self.recorded.calls) else None
        if not self.replaying:
            return None
        if rec is None or rec.key != key:
            self.diverge("call", k, None if rec is None else rec.key, key,
                         None if rec is None else rec.site, site)
            return None
        return rec

    def recorded_event(self, key: tuple) -> Optional[Event]:
        """The record's operation at this run's next index when it is the same one, else None."""
        k = len(self.events)
        if not self.replaying:
            return None
        rec = self.recorded.events[k] if k < len(self.recorded.events) else None
        if rec is None or rec.key != key:
            self.diverge("event", k, None if rec is None else rec.key, key,
                         None if rec is None else rec.site, None)
            return None
        return rec

    def primitive_call(self, *, source: str, method: str, site: Site, value: Any,
                       declared: dict, params: dict, distribution: Optional[str],
                       call: Callable[[], Any]) -> Any:
        """Record (or replay) one call of a declared primitive: the record calls it; the replay
        returns the record's output without calling it, when the call is the same."""
        key = (source, method, site.key)
        rec = self.recorded_call(key, site) if self.mode == "replay" else None
        if rec is not None:
            out = perturbed(snapshot(rec.value), self.perturb)
            fresh = False
        else:
            self.depth += 1
            try:
                out = call()
            finally:
                self.depth -= 1
            fresh = self.mode == "replay"
        shape = tuple(np.shape(value)) if _numeric(value) else ()
        self.calls.append(Call(index=len(self.calls), source=source, method=method, site=site,
                               params=params, distribution=distribution,
                               scale=None, shape=shape, value=snapshot(out), input=snapshot(value),
                               has_input=True, declared=declared, fresh=fresh))
        return out


def perturbed(x: Any, eta: float) -> Any:
    """``x`` moved by a relative ``eta`` when it is a float or an array of floats (else as is)."""
    if not eta:
        return x
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        return x * (1.0 + eta)
    if isinstance(x, float):
        return x * (1.0 + eta)
    return x


def _numeric(x: Any) -> bool:
    try:
        a = np.asarray(x)
    except Exception:  # noqa: BLE001 - any object a primitive is given
        return False
    return a.dtype.kind in "biuf"


_CURRENT: contextvars.ContextVar[Optional[Run]] = contextvars.ContextVar("dpaudit_replay_run", default=None)


def current() -> Optional[Run]:
    """The run under way in this context, or None outside an audit."""
    return _CURRENT.get()


@contextmanager
def active(run: Run) -> Iterator[Run]:
    """Make ``run`` the current run for the duration of the block."""
    token = _CURRENT.set(run)
    try:
        yield run
    finally:
        _CURRENT.reset(token)
