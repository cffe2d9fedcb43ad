"""Two checks that a mechanism releases what dpaudit audits: noise that is the same in every fresh
process, and a batch form whose law is not the one-call form's.

**Noise fixed at import** (:class:`FreshProcesses`). A mechanism that seeds a global generator
with a constant at import (numpy's global ``seed(7)``, then its ``laplace()`` per call) draws
new numbers call after call, so its samples look like noise to an audit in one process; yet every
fresh process (every real run of the program using it) releases the same first output,
``sum + 1.9606``: the data in the clear. ``dpaudit check`` therefore runs the first calls on one
dataset D in two fresh sandbox children (the audit's own child, before anything else, and one
more), with *different* generators, and compares the two sequences position by position.

The test. Let ``a_1..a_m`` and ``b_1..b_m`` be the two processes' first m outputs on D (one
batch through the call form the audit uses). The null hypothesis is the model every audit
already assumes: within a process the calls are i.i.d. draws of the mechanism's law on D, and the
two processes are independent (each uses the generator it is given, or its own randomness seeded
apart). Under it the sequence ``b`` is exchangeable: given ``a`` and the multiset of ``b``'s
values, its order is a uniformly random permutation. The statistic is the number of agreements
``S = #{k : a_k = b_k}``, a permutation statistic ``Σ_k c(k, π(k))`` with ``c ∈ {0, 1}``, whose
conditional mean is ``E = Σ_y A_y B_y / m`` (``A_y``, ``B_y``: how often value ``y`` occurs in
each sequence). Chatterjee's concentration inequality for such statistics (Stein's method for
concentration inequalities, PTRF 2007, Proposition 1.1) bounds
``P(S − E ≥ t) ≤ 2 exp(−t² / (4E + 2t))``; the sequences are flagged when that bound at
``t = S − E`` is at most :data:`ALPHA` (10⁻⁶). The test is conditional, so it needs no estimate of
the collision probability ``Σ p²``: a legitimate mechanism with discrete or nearly deterministic
outputs (randomized response with p = 0.99, a bool, a count with tiny noise) has a large ``E``
and is flagged with probability at most 10⁻⁶, whatever its law. Noise fixed at import makes
``a = b``: with continuous outputs ``S = m`` against ``E ≈ 1`` (bound about e^(−m/2)).

When the sequences are flagged, the noise does not change between runs, and the k-th release of
a program's run is deterministic wherever the two processes agree at position k: the k-th output
on D (the same in both) and the k-th output of a third fresh process on a neighbour D′ that
differ refute the claim with ε = ∞ (the release on D is a point that the release on D′ never
takes). Every agreeing position is looked at, not only the first: a mechanism that draws fresh
noise for its first call and fixed noise after it passed when only the first was compared. A
constant mechanism stays NOT REFUTED (its outputs agree on D and D′). D and D′
are the structured pair of the relation whose sums and means differ the most (:func:`fresh_pair`),
so a sum, a count or a mean gives different outputs on them.

Only the sandboxed ``dpaudit check`` runs this check: an audit in process (``--in-process``,
:func:`dpaudit.audit`) has one process, and cannot start fresh ones of the audited code.

**Noise that changes source later in the run** (:class:`Checkpoints`). The comparisons above
look at a process's first outputs. A mechanism that draws from the ``rng`` it is given for its
first releases, then from a generator seeded with a constant (the same sequence in every process)
passed: its first outputs are fresh noise, and later ones are sum + a number an attacker knows. A
mechanism whose outputs are a function of its ``rng`` (the rerun check,
``dpaudit.reproduce.reruns_alike``, found it so at the start) gives the same outputs for the same
dataset and seed at any point of the run. So the sampled audit's executor is wrapped: at
:data:`CHECKPOINTS` positions spread over the whole budget (one drawn uniformly in each of as many
equal strata, from the recorded seed, so no position is known in advance and none is left to the
end), the same :data:`CHECKPOINT_CALLS` calls on one dataset and seed are drawn again and
compared, exactly, with their first draw. A difference is an ERROR naming between which releases
the outputs stopped following the seed. Positions past where an early-stopping audit ends are not
reached (what was not sampled is not audited); the cost is (CHECKPOINTS + 1) · CHECKPOINT_CALLS
calls.

**A batch form that is not the one-call form** (:func:`forms_differ`). The audit samples the batch
form ``f(data, rng, size=k)`` (it is much faster), while users call ``f(data, rng)``. A batch form
that adds noise beside a one-call form that returns the raw sum passed. So a sample of
:data:`FORM_SAMPLES` one-call outputs on one dataset is compared with as many batch outputs by a
two-sample test at level :data:`ALPHA` (:mod:`dpaudit.execution.two_sample`: Kolmogorov-Smirnov
for real outputs, per coordinate for vectors, Fisher's exact test per category). A correct mechanism is flagged with probability at
most 10⁻⁶; a flagged one is an ERROR that says which form to fix. So is a one-call form that
fails (raises, hangs) where the batch form returns: users call the form that was not audited.
"""

from __future__ import annotations

import math
import pickle
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np

from dpaudit.errors import MechanismError
from dpaudit.execution.base import BatchTask
from dpaudit.execution.process import printable
from dpaudit.execution.two_sample import two_sample

__all__ = ["ALPHA", "FRESH_CALLS", "FORM_SAMPLES", "fresh_pair", "agreement_p", "FreshProcesses",
           "FixedNoise", "forms_differ", "form_samples", "Checkpoints", "CHECKPOINTS", "CHECKPOINT_CALLS",
           "checkpoint_positions"]

#: the level of both tests: a correct mechanism is flagged with probability at most this
ALPHA = 1e-6
#: first outputs compared between two fresh processes (one batch): 128 with a batch form, 64
#: calls of a one-call form (every call is a call of the audited code, in the audit's own child)
FRESH_CALLS = 128
FRESH_LOOP_CALLS = 64
#: ... or, for a slow one-call form, as many as take about this many seconds (its first call is
#: timed), but at least FRESH_MIN_CALLS: the agreement test needs about 30 agreements to reach
#: ALPHA (p ≤ 2·exp(−m/2) for m agreements of outputs that never agree by chance)
FRESH_SECONDS = 10.0
FRESH_MIN_CALLS = 32
#: ... and at most this share of the time left before the run's deadline (``--timeout``): the
#: calls are the audit's own child's, before its replay stage and sampling. When fewer than
#: FRESH_MIN_CALLS fit, the test could not reach ALPHA: only the timed first call is made, and
#: the check says nothing
FRESH_SHARE = 0.2
#: a first call faster than this (seconds) is timed once more, warm, and the faster of the two
#: times the audit: a fresh child's first call pays its warm-up (lazy imports, first allocations),
#: and one stall of a loaded machine made a 1 ms call read as 0.1 s and its audit as 2.8 hours
RETIME_BELOW = 2.0
#: one-call and batch outputs compared by :func:`forms_differ`, each
FORM_SAMPLES = 500
#: positions of the sampled audit's run at which :class:`Checkpoints` redraws its calls
CHECKPOINTS = 8
#: calls redrawn at each (fewer for a slow mechanism: at most what the rerun check,
#: :func:`dpaudit.reproduce.reruns_alike`, drew)
CHECKPOINT_CALLS = 8


def form_samples(budget: int) -> int:
    """One-call and batch outputs :func:`forms_differ` compares for an audit of ``budget``
    samples: :data:`FORM_SAMPLES`, and at most a twentieth of the budget (at least 200) so the
    check never dominates a small audit of a slow mechanism. They are split over two datasets;
    100 against 100 still rejects a noisy batch form beside a raw one-call form at 10⁻⁶ (KS
    distance ≥ 0.5 gives p ≈ 10⁻¹¹)."""
    return int(min(FORM_SAMPLES, max(200, int(budget) // 20)))


# -- D and D′ ---------------------------------------------------------------------------------

def fresh_pair(patterns: Iterable[tuple[str, Any, Any]], limit: int = 400) -> tuple[tuple, tuple]:
    """Of the first ``limit`` structured pairs ``(label, D, D′)`` of ``patterns`` (a relation's, in
    the order the search tries them), the first of those with both datasets non-empty whose sums
    and means differ the most (the records at the domain's ends, where a sum, a count and a mean
    all move), as tuples; the first pair when none has both differences."""
    first, best, score = None, None, 0.0
    for k, (_, a, b) in enumerate(patterns):
        if k >= limit:
            break
        a, b = np.asarray(a, dtype=float).reshape(-1), np.asarray(b, dtype=float).reshape(-1)
        if first is None:
            first = (a, b)
        if not (a.size and b.size):
            continue
        with np.errstate(over="ignore", invalid="ignore"):  # records near DBL_MAX: inf, skipped
            ds, dm = abs(float(a.sum() - b.sum())), abs(float(a.mean() - b.mean()))
        if ds > 0 and dm > 0 and math.isfinite(ds + dm) and ds + dm > score * (1 + 1e-9):
            best, score = (a, b), ds + dm
    if first is None:
        raise ValueError("the relation gave no pair")
    a, b = best if best is not None else first
    return tuple(a.tolist()), tuple(b.tolist())


# -- agreements between two fresh processes ---------------------------------------------------

def _keys(outputs: Any) -> list[bytes]:
    """One comparable key per output: the bytes of a numeric array row, else the pickle (equal
    keys are equal outputs, NaN bits included), else the repr."""
    if isinstance(outputs, np.ndarray) and outputs.ndim >= 1:
        return [outputs.dtype.str.encode() + np.ascontiguousarray(row).tobytes() for row in outputs]
    keys = []
    for v in outputs:
        try:
            keys.append(pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL))
        except Exception:  # noqa: BLE001 - an output that does not pickle: compared as text
            keys.append(repr(v).encode("utf-8", "backslashreplace"))
    return keys


def agreement_p(a: Sequence[bytes], b: Sequence[bytes]) -> tuple[int, float, float]:
    """``(S, E, p)``: the agreements of two key sequences position by position, their mean under
    a random order of ``b`` and the bound on the chance of that many (module docstring)."""
    m = min(len(a), len(b))
    a, b = list(a[:m]), list(b[:m])
    if m == 0:
        return 0, 0.0, 1.0
    s = sum(x == y for x, y in zip(a, b))
    counts: dict = {}
    for y in b:
        counts[y] = counts.get(y, 0) + 1
    e = sum(counts.get(x, 0) for x in a) / m
    t = s - e
    p = 1.0 if t <= 0 else min(1.0, 2.0 * math.exp(-t * t / (4.0 * e + 2.0 * t)))
    return s, e, p


@dataclass(frozen=True)
class FixedNoise:
    """The finding of :class:`FreshProcesses`: the first outputs on D (in both processes) and on
    D′, and the agreement test's figures."""

    dataset: tuple
    neighbour: tuple
    first: Any
    first_neighbour: Any
    agreements: int
    calls: int
    p: float
    #: which release of a fresh process (0: the first) ``first`` and ``first_neighbour`` are
    position: int = 0

    @property
    def reason(self) -> str:
        which = "first" if self.position == 0 else f"release number {self.position + 1} (the " \
            f"first to agree)"
        return (f"its noise is the same in every fresh process (seeded at import?): the {which} "
                f"release on D is {_short(self.first)}, on D′ {_short(self.first_neighbour)} "
                f"({self.agreements} of the first {self.calls} outputs on D were the same in two "
                f"processes with different generators, p = {self.p:.2g})")


def _short(v: Any, limit: int = 60) -> str:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, np.ndarray):
        v = v.tolist()
    text = repr(v) if not isinstance(v, float) else f"{v:.6g}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


class FreshProcesses:
    """The fresh-process check of ``dpaudit check`` (module docstring), around extra sandbox
    executors run in a thread while the audit runs: one for D, and one for D′ started only when
    the first two processes agree beyond chance.

    ``make_executor()`` returns a new, not yet started sandbox executor of the audited file;
    :meth:`spawn` starts the first extra child (it boots while dpaudit imports the auditor).
    :meth:`first_calls` runs the first batch on D in the audit's own executor (call it before any
    other batch); :meth:`result` waits for the extra children and returns a :class:`FixedNoise`
    or None. Any failure of an extra child (the audit reports the mechanism's own failures) makes
    the check say nothing."""

    def __init__(self, make_executor: Callable[[], Any]) -> None:
        # the child for D′ is started only when the first two agree beyond chance (almost never):
        # a correct mechanism costs one extra child, booted while the audit runs
        self._make = make_executor
        self._executors: list = [make_executor(), None]
        self._outputs: list = [None, None]
        self._flagged = False
        self._closed = False
        self._lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        self._first: Any = None
        self._pair: Optional[tuple] = None
        self._seed: Any = None
        self.calls = FRESH_CALLS
        #: seconds the audit's own child took for its first calls (the extra ones take as long)
        self.first_seconds = 0.0
        self.seconds_per_call: Optional[float] = None  # the first call's time (first_calls)
        #: the mechanism's failure in the first calls (first_calls): the check reports it
        self.failure: Optional[MechanismError] = None

    def wait_seconds(self, call_timeout: Optional[float]) -> float:
        """How long :meth:`result` should wait: the extra children boot and make the same calls
        the audit's own child made first, so three times as long as those, and at least the
        per-call limit, plus a start-up allowance (a fixed wait let a mechanism slow in its
        first calls end the check unheard)."""
        return max(call_timeout or 30.0, 3.0 * self.first_seconds) + 20.0

    def spawn(self) -> None:
        for ex in self._executors[:1]:
            try:
                ex.spawn()
            except Exception:  # noqa: BLE001 - no extra child: the check says nothing
                pass

    def first_calls(self, spec: Any, executor: Any, pair: tuple, seed: int,
                    timed: Optional[Callable[[float], None]] = None,
                    deadline: Optional[float] = None) -> None:
        """Run the first batch on D in the audit's executor, then start the extra children's.
        ``timed(seconds_per_call)`` hears how long the first call took (the first batch, for a
        batch form), before any other call: the audit's estimate comes from it. A slow one-call
        form makes no more calls than :data:`FRESH_SHARE` of the time left before ``deadline``
        (a ``time.monotonic`` reading) allows."""
        from dpaudit.spec import CallForm

        self._pair = pair
        batch = spec.call_form is CallForm.BATCH
        self.calls = FRESH_CALLS if batch else FRESH_LOOP_CALLS
        self._seed = np.random.SeedSequence(int(seed), spawn_key=(0xF2E5,))
        seeds = self._seed.spawn(3)
        t0 = time.monotonic()
        try:
            if batch:
                plan = [self.calls]
                (self._first,) = executor.run(spec, [BatchTask(pair[0], seeds[0], self.calls)])
                self.seconds_per_call = (time.monotonic() - t0) / self.calls
                if timed is not None:
                    timed(self.seconds_per_call)
            else:  # one call first, timed: a slow mechanism makes fewer (about FRESH_SECONDS)
                plan, self._first, took = self._timed_calls(spec, executor, pair[0], seeds[0], deadline)
                self.seconds_per_call = took
                if timed is not None:
                    timed(took)
                rest = int(min(self.calls, max(FRESH_MIN_CALLS, FRESH_SECONDS / max(took, 1e-9)))) - len(plan)
                if deadline is not None:
                    fit = int(FRESH_SHARE * max(0.0, deadline - time.monotonic()) / max(took, 1e-9))
                    rest = min(rest, fit) if fit + len(plan) >= FRESH_MIN_CALLS else 0
                if rest > 0:
                    (more,) = executor.run(spec, [BatchTask(pair[0], seeds[0].spawn(1)[0], rest)])
                    self._first, plan = _joined(self._first, more), plan + [rest]
                self.calls = sum(plan)
            self.first_seconds = time.monotonic() - t0
        except MechanismError as exc:
            # the check's verdict is this failure (ERROR; INCONCLUSIVE for the time limit): the
            # stages after it make no call to meet it again (a hang cost a call limit each)
            self._first, self.failure = None, exc
            return
        if self.calls < FRESH_MIN_CALLS and not batch:
            return  # cut by the time limit: too few calls for the test to say anything
        work = [(pair[0], seeds[1]), (pair[1], seeds[2])]

        def run() -> None:
            for k, (data, s) in enumerate(work):
                try:
                    if k == 1:
                        if not self._agree():
                            return  # the noise changes between processes: no D′ to compare
                        with self._lock:
                            if self._closed:
                                return
                            self._flagged = True
                            self._executors[1] = self._make()
                    self._outputs[k] = _in_batches(self._executors[k], spec, data, s, plan)
                except BaseException:  # noqa: BLE001 - a failed or closed child: no finding
                    return
                finally:
                    if self._closed and self._executors[k] is not None:
                        self._executors[k].close()  # closed meanwhile: a run may have restarted it

        self._thread = threading.Thread(target=run, name="dpaudit-fresh-processes", daemon=True)
        self._thread.start()

    @staticmethod
    def _timed_calls(spec: Any, executor: Any, data: tuple, seed: np.random.SeedSequence,
                     deadline: Optional[float]) -> tuple[list[int], Any, float]:
        """The first one or two single calls of a one-call form on ``data``: ``(plan, outputs,
        seconds per call)``. A first call under :data:`RETIME_BELOW` seconds is followed by a
        second (the check makes at least :data:`FRESH_MIN_CALLS` anyway, unless the deadline
        leaves no room for them) and the faster of the two is the time per call."""
        t0 = time.monotonic()
        (one,) = executor.run(spec, [BatchTask(data, seed.spawn(1)[0], 1)])
        took = time.monotonic() - t0
        room = deadline is None or FRESH_MIN_CALLS * took <= FRESH_SHARE * (deadline - time.monotonic())
        if took >= RETIME_BELOW or not room:
            return [1], one, took
        t1 = time.monotonic()
        (two,) = executor.run(spec, [BatchTask(data, seed.spawn(1)[0], 1)])
        return [1, 1], _joined(one, two), min(took, time.monotonic() - t1)

    def result(self, timeout: Optional[float] = None) -> Optional[FixedNoise]:
        """The finding once the extra children are done (None: none, or they did not finish)."""
        if self._thread is None:
            return None
        self._thread.join(timeout)
        if self._thread.is_alive() or self._first is None or self._outputs[0] is None \
                or self._outputs[1] is None:
            return None
        try:
            a, b, c = (_keys(x) for x in (self._first, *self._outputs))
        except Exception:  # noqa: BLE001 - outputs of odd shapes: no finding
            return None
        s, _, p = agreement_p(a, b)
        if p > ALPHA:
            return None
        # the k-th release of a fresh process is fixed where the two processes on D agree; the
        # first such k where the process on D′ released something else refutes the claim (the
        # first call alone is not enough: a mechanism can draw fresh noise once, then fixed noise)
        for k in range(min(len(a), len(b), len(c))):
            if a[k] == b[k] and c[k] != a[k]:
                return FixedNoise(self._pair[0], self._pair[1], _item(self._first, k),
                                  _item(self._outputs[1], k), s, min(len(a), len(b)), p, k)
        return None

    def _agree(self) -> bool:
        """Whether the first two fresh processes' outputs on D agree beyond chance (the test of
        the module docstring at level :data:`ALPHA`), whichever positions agree."""
        try:
            a, b = _keys(self._first), _keys(self._outputs[0])
        except Exception:  # noqa: BLE001 - outputs of odd shapes: no finding
            return False
        return bool(a) and bool(b) and agreement_p(a, b)[2] <= ALPHA

    def close(self) -> None:
        with self._lock:
            self._closed = True
        for _ in range(2):  # again after the thread ends: a run it was in may have restarted one
            for ex in self._executors:
                if ex is None:
                    continue
                try:
                    ex.close()
                except Exception:  # noqa: BLE001 - best effort
                    pass
            if self._thread is not None:
                self._thread.join(5.0)


def _joined(a: Any, b: Any) -> Any:
    """Two batches' outputs as one sequence, in order."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return np.concatenate([a, b])
    return list(a) + list(b)


def _in_batches(executor: Any, spec: Any, data: Any, seed: np.random.SeedSequence,
                plan: list[int]) -> Any:
    """The outputs of batches of ``plan`` calls, one after the other, each on the next seed
    spawned from ``seed`` (the plan the audit's own child followed)."""
    out = None
    for n in plan:
        (got,) = executor.run(spec, [BatchTask(data, seed.spawn(1)[0] if len(plan) > 1 else seed, n)])
        out = got if out is None else _joined(out, got)
    return out


def _item(outputs: Any, k: int) -> Any:
    v = outputs[k]
    return v.tolist() if isinstance(v, np.ndarray) else v.item() if isinstance(v, np.generic) else v


# -- the same calls again, over the whole run -------------------------------------------------

def _same_outputs(a: Any, b: Any) -> bool:
    """Whether two batches of outputs are the same, output by output (their bytes or pickles:
    NaN bits and types included)."""
    try:
        return len(a) == len(b) and _keys(a) == _keys(b)
    except Exception:  # noqa: BLE001 - outputs that cannot be compared: not the same
        return False


def checkpoint_positions(seed: int, budget: int, points: int = CHECKPOINTS) -> list[int]:
    """The calls of a run of ``budget`` after which :class:`Checkpoints` draws its calls again:
    one uniformly in each of ``points`` equal strata of the budget, from ``seed``."""
    draw = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(0xC4EC, 0)))
    step = max(1, int(budget)) / points
    return sorted({max(1, int((k + draw.random()) * step)) for k in range(points)})


class Checkpoints:
    """An executor that runs every batch through ``executor`` and, once the calls it ran pass
    each of the checkpoint positions (module docstring), draws the same ``n`` calls on a
    mid-domain dataset and one seed again and compares them with their first draw (made when it
    is built). :attr:`broken` is then the ``(after, before)`` releases between which they first
    differed (None while they agree); :attr:`message` says it in a line. Every other attribute
    is the wrapped executor's."""

    def __init__(self, executor: Any, spec: Any, seed: int, budget: int,
                 n: int = CHECKPOINT_CALLS, points: int = CHECKPOINTS) -> None:
        self._executor, self._spec = executor, spec
        size = max(1, int(spec.size))
        self.data = tuple([0.5 * (spec.domain.lo + spec.domain.hi)] * size)
        self.positions = checkpoint_positions(seed, budget, points)
        self._task = BatchTask(self.data, np.random.SeedSequence(int(seed), spawn_key=(0xC4EC, 1)),
                               max(1, int(n)))
        (self._first,) = executor.run(spec, [self._task])  # a failure: the audit's to report
        self.used = 0
        self._next = 0
        self._checked = 0
        self.broken: Optional[tuple[int, int]] = None
        if callable(getattr(executor, "count", None)):
            self.count = self._count  # counting where the samples are drawn, when it can

    def __getattr__(self, name: str) -> Any:
        return getattr(self._executor, name)

    def run(self, spec: Any, tasks: Sequence[Any]) -> list[Any]:
        out = self._executor.run(spec, tasks)
        self._ran(spec, sum(int(t.n) for t in tasks))
        return out

    def _count(self, spec: Any, encoder: Any, event: Any, units: Sequence[Any], keep: int = 0) -> Any:
        out = self._executor.count(spec, encoder, event, units, keep)
        self._ran(spec, sum(int(t.n) for u in units for t in u.tasks))
        return out

    def _ran(self, spec: Any, calls: int) -> None:
        self.used += calls
        while self.broken is None and self._next < len(self.positions) \
                and self.used >= self.positions[self._next]:
            self._next += 1
            (again,) = self._executor.run(self._spec, [self._task])
            if not _same_outputs(self._first, again):
                self.broken = (self._checked, self.used)
            self._checked = self.used

    @property
    def message(self) -> Optional[str]:
        if self.broken is None:
            return None
        after, before = self.broken
        return (f"its outputs stopped being a function of the rng dpaudit passes between releases "
                f"{after:,} and {before:,} of the audit: the same {self._task.n} calls on one "
                f"dataset and seed gave other outputs than at its start, so from then on its "
                f"outputs depend on more than the data and the rng (state kept across calls, fixed "
                f"noise, or a generator of its own) and what was sampled is not what it releases; "
                f"make each output a function of the data and the rng argument alone")


# -- one-call form against batch form ---------------------------------------------------------

def forms_differ(spec: Any, executor: Any, seed: int, data: Optional[tuple] = None,
                 n: int = FORM_SAMPLES) -> Optional[tuple[str, tuple]]:
    """For a batch-form ``spec``: ``(message, D)`` when ``n`` one-call outputs and ``n`` batch
    outputs on D (``data``; by default n/2 of each on two datasets of records spread over the
    domain, of the declared size and of half of it) differ in law at level :data:`ALPHA` (each)
    or in kind, or when the one-call form fails (raises, hangs, returns a bad output) where the
    batch form returned; else None. Costs 2·n calls through ``executor``."""
    from dataclasses import replace

    from dpaudit.outputs import OutputEncoder
    from dpaudit.spec import CallForm

    if spec.call_form is not CallForm.BATCH:
        return None
    if data is None:
        # two datasets of different sizes, n/2 draws each: a one-call form honest on one dataset
        # only (it tested len(data) == 10) passed when one was looked at
        size = max(1, int(spec.size))
        for k, m in enumerate(dict.fromkeys((size, max(1, size // 2)))):
            spread = tuple(np.linspace(spec.domain.lo, spec.domain.hi, m).tolist()) if m > 1 \
                else (0.5 * (spec.domain.lo + spec.domain.hi),)
            found = forms_differ(spec, executor, int(seed) + k, spread, max(1, n // 2))
            if found is not None:
                return found
        return None
    seq = np.random.SeedSequence(int(seed), spawn_key=(0xF0F3,))
    s_batch, s_one = seq.spawn(2)
    one_spec = replace(spec, call_form=CallForm.DATA_RNG)
    (batch,) = executor.run(spec, [BatchTask(data, s_batch, n)])  # the audit reports a failure
    try:
        (single,) = executor.run(one_spec, [BatchTask(data, s_one, n)])
    except MechanismError as exc:
        # the form users call fails where the audited one returns: its failure may depend on
        # the data (an exception is an output too), and either way it is not what was audited
        return (f"its one-call form f(data, rng) {exc.cause} on D = {_dataset_text(data)}, where "
                f"its batch form returned {n:,} outputs: dpaudit audits the batch form, so the "
                f"one-call form users call is unaudited; {_ADVICE}", data)
    if _scalar_batch(batch):  # a one-call form that returns an array of one number: that number
        single = [v.reshape(-1)[0] if isinstance(v, np.ndarray) and v.size == 1
                  and v.dtype.kind in "biufc" else v for v in single]
    where = _dataset_text(data)
    encoder = OutputEncoder(spec.output, forms=False)  # the batch form's array holds numpy scalars
    arr = np.asarray(data, dtype=float)
    try:
        x = encoder.encode(batch, arr)
    except MechanismError:
        return None  # the audit reports the batch form's own bad outputs
    try:
        y = encoder.encode(single, arr)
    except MechanismError as exc:
        return (f"its one-call form and its batch form release different kinds of output "
                f"({exc.cause} on D = {where}): dpaudit audits the batch form, so the one-call "
                f"form users call is unaudited; {_ADVICE}", data)
    try:
        p, test = two_sample(encoder.schema, x, y)
    except (ValueError, TypeError, IndexError):  # outputs no test here reads: nothing said
        return None
    if p > ALPHA:
        return None
    same = ""
    if len(single) > 1 and len({repr(v) for v in single}) == 1:
        # a point mass: no noise, or noise that does not follow the rng (seeded in the function)
        same = (f": the one-call form returned the same output on all {len(single)} calls "
                f"({printable(repr(single[0]))[:80]}), so it adds no noise, or noise that does not "
                f"follow the rng it is given (a generator seeded inside the function)")
    return (f"its one-call form and its batch form release different laws ({test} p = {p:.2g} on "
            f"D = {where}){same}; dpaudit audits the batch form, so the one-call form users call "
            f"is unaudited; {'draw every random number from rng and ' if same else ''}{_ADVICE}",
            data)


_ADVICE = "make f(data, rng) return f(data, rng, size=1)[0]"


def _scalar_batch(batch: Any) -> bool:
    """Whether a batch form's outputs are scalars (a 1-D array, or a list of non-arrays): only
    then does a one-element array from the one-call form stand for its number (a vector of
    length 1 stays a vector)."""
    if isinstance(batch, np.ndarray):
        return batch.ndim == 1
    return bool(batch) and not isinstance(batch[0], (np.ndarray, list, tuple))


def _dataset_text(data: tuple, limit: int = 60) -> str:
    text = "[" + ", ".join(f"{v:g}" for v in data) + "]"
    return text if len(text) <= limit else text[: limit - 2] + "…]"
