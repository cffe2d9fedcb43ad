"""Drawing outputs for the auditor: budget and time accounting, common random numbers, and the
streamed event counts of the validation split.

Every draw goes through :func:`dpaudit.execution.base.plan_batches` and an
:class:`~dpaudit.execution.base.Executor`, so the same seed gives the same outputs whatever the executor
and the number of workers, and every batch is validated and encoded by
:class:`~dpaudit.outputs.OutputEncoder` (bad outputs raise MechanismError naming the dataset).

Common random numbers: :meth:`Sampler.draw_pair` runs D and D' on the *same* batch seeds, so row i
of both samples comes from one random stream. Each sample is still an i.i.d. sample of its own
output law; the coupling only makes the two dependent, which the paired bound of
:mod:`dpaudit.estimators.bounds` exploits and the others do not mind.

Rows of a plan can be drawn a range at a time (:meth:`Sampler.draw_pair_rows`): the selection race
holds one half of a large sample at a time (:meth:`Sampler.halves`), and draws a half again on the
same seeds, rather than holding it, when it needs it twice.
"""

from __future__ import annotations

import time
from itertools import zip_longest
from typing import Any, Callable, Iterator, Optional

import numpy as np

from dpaudit.estimators.bounds import Counts
from dpaudit.estimators.compact import compact
from dpaudit.estimators.events import Event
from dpaudit.neighbours.relations import Pair
from dpaudit.outputs import OutputEncoder, OutputSchema
from dpaudit.execution.base import BATCH_SIZE, BatchTask, Executor, iter_batches, plan_batches
from dpaudit.execution.counting import CountUnit, count_units
from dpaudit.spec import CallForm, MechanismSpec

__all__ = ["Sampler", "Exhausted", "LOOP_BATCH", "SELECTION_BASE", "fresh"]


class Exhausted(Exception):
    """The sample budget or the time limit of a phase ran out (internal control flow)."""

#: outputs drawn per executor call when drawing selection samples (bounds the raw outputs in memory)
GROUP_SAMPLES = 400_000
#: batch size for mechanisms without a batch form (small, so a parallel executor can spread them)
LOOP_BATCH = 2_000
#: the phases that choose the pair and the event take their shares of at most this many samples;
#: the rest of a larger budget goes to validation, where only counts come back, so the memory of
#: the parent stays bounded whatever the budget (the selection phases keep their outputs)
SELECTION_BASE = 20_000_000
#: :meth:`Sampler.halves` keeps a drawn half of a selection sample (both datasets) up to this
#: many bytes; a larger one is drawn again when needed rather than held
HOLD_BYTES = 96 << 20
#: wide outputs (vectors of thousands of coordinates) are drawn in batches of at most this many
#: encoded bytes (8 per coordinate): a batch of 50,000 rows of 2,000 doubles would be 800 MB before
#: the mechanism's own temporaries. Outputs of up to 80 coordinates keep the usual batch size
BATCH_BYTES = 32 << 20
#: the outputs kept for the report's plots hold at most this many encoded bytes per dataset
KEEP_BYTES = 4 << 20
#: the probe's seed word (:meth:`Sampler.probe_width`), apart from every other use of a seed
_PROBE_WORD = 0x0D7_9E0B


def fresh(seq: np.random.SeedSequence) -> np.random.SeedSequence:
    """A copy of ``seq`` that has spawned no children yet. ``SeedSequence.spawn`` is stateful (the
    second call gives new children), so every plan that must repeat the same batch seeds, such as
    the two datasets of a pair, starts from a fresh copy."""
    return np.random.SeedSequence(seq.entropy, spawn_key=seq.spawn_key, pool_size=seq.pool_size)


class Sampler:
    """Draw encoded outputs of ``spec`` within a total ``budget`` of mechanism calls."""

    def __init__(self, spec: MechanismSpec, executor: Executor, encoder: OutputEncoder,
                 budget: int, on_batch: Optional[Callable[[int], None]] = None) -> None:
        self.spec = spec
        self.executor = executor
        self.encoder = encoder
        self.budget = int(budget)
        self.used = 0
        self.on_batch = on_batch
        self.batch_size = BATCH_SIZE if spec.call_form is CallForm.BATCH else LOOP_BATCH
        self.time_cut = False  # set when a time limit stopped a draw
        self.width = 1  # encoded numbers per output, once probed (:meth:`probe_width`)
        self.probed: Optional[OutputSchema] = None  # the probe's output kind (:meth:`probe_width`)

    def probe_width(self, data: Any, seed: int) -> int:
        """Draw one output on ``data`` (outside the budget, on a seed of its own, encoded by a
        throwaway encoder: nothing else the audit draws or codes changes), set :attr:`width` to
        the numbers it encodes to and shrink the batch size so a batch holds at most
        :data:`BATCH_BYTES`. Outputs of up to 80 numbers keep the batch size, hence every seed
        of the audit; wider ones get smaller batches (another, equally reproducible, plan)."""
        probe = np.random.SeedSequence([int(seed), _PROBE_WORD])
        task = plan_batches(data, probe, 1, 1)
        raw = self.executor.run(self.spec, task)[0]
        throwaway = OutputEncoder(self.encoder.declared)
        y = throwaway.encode(raw, np.asarray(task[0].data))
        self.probed = throwaway.schema
        # at least 1: an empty tuple (no index above a threshold) encodes to no numbers at all
        self.width = max(1, int(np.prod(y.shape[1:])) if y.ndim > 1 else 1)
        self.batch_size = int(min(self.batch_size, max(64, BATCH_BYTES // (8 * self.width))))
        return self.width

    def rows_within(self, nbytes: int) -> int:
        """How many encoded outputs fit in ``nbytes`` (8 bytes a number, :attr:`width` numbers)."""
        return max(1, int(nbytes) // (8 * self.width))

    @property
    def selection_base(self) -> int:
        """What the selection phases' shares of the budget are shares of: the budget, at most
        :data:`SELECTION_BASE`."""
        return min(self.budget, SELECTION_BASE)

    @property
    def remaining(self) -> int:
        return max(0, self.budget - self.used)

    def _run(self, tasks: list, deadline: Optional[float],
             take: Optional[Callable[[int, np.ndarray], None]] = None,
             charge: Optional[int] = None) -> list[np.ndarray]:
        """The encoded outputs of each task, in order; with ``take``, each is handed to
        ``take(index, outputs)`` as soon as it is encoded, and none are kept here. ``charge``:
        what the draw costs the budget when not every output drawn is a new one."""
        if deadline is not None and time.monotonic() > deadline:
            self.time_cut = True
            raise Exhausted("time")
        need = sum(t.n for t in tasks) if charge is None else charge
        if need > self.remaining:
            raise Exhausted("samples")
        # a group of batches at a time, each encoded and compacted before the next is drawn
        # (small-integer vectors become int8, dpaudit.estimators.compact): the raw outputs of a
        # large draw are never all in memory at once
        step = max(1, GROUP_SAMPLES // self.batch_size,
                   int(getattr(self.executor, "batches_per_call", 0) or 0))
        out = []
        for i in range(0, len(tasks), step):
            group = tasks[i:i + step]
            raws = self.executor.run(self.spec, group)
            for j, (raw, t) in enumerate(zip(raws, group)):
                y = compact(self.encoder.encode(raw, np.asarray(t.data)))
                if take is None:
                    out.append(y)
                else:
                    take(i + j, y)
            del raws
        self.used += need
        if self.on_batch is not None:
            self.on_batch(self.used)
        return out

    def draw(self, data: Any, seed: np.random.SeedSequence, n: int,
             deadline: Optional[float] = None) -> np.ndarray:
        """``n`` encoded outputs of the mechanism on ``data``."""
        tasks = plan_batches(data, fresh(seed), n, self.batch_size)
        parts = self._run(tasks, deadline)
        return np.concatenate(parts) if parts else self.encoder._empty()

    def draw_pair(self, pair: Pair, seed: np.random.SeedSequence, n: int,
                  deadline: Optional[float] = None) -> tuple[np.ndarray, np.ndarray]:
        """``n`` outputs on each of D and D', on the same batch seeds (common random numbers)."""
        return self.draw_pairs([pair], seed, n, deadline)[0]

    def draw_pairs(self, pairs: list, seed: np.random.SeedSequence, n: int,
                   deadline: Optional[float] = None) -> list[tuple[np.ndarray, np.ndarray]]:
        """:meth:`draw_pair` for several pairs in one executor call: the same outputs as one call
        per pair, with one round trip instead of many to a sandboxed mechanism."""
        plans = [(plan_batches(p.dataset, fresh(seed), n, self.batch_size),
                  plan_batches(p.neighbour, fresh(seed), n, self.batch_size)) for p in pairs]
        # each batch copied into its sample as it is drawn (never all batches and the joined
        # samples in memory at once)
        fills, where = [], []
        for td, tp in plans:
            for side in (td, tp):
                f = _Fill(sum(t.n for t in side))
                fills.append(f)
                where.extend(f for _ in side)
        self._run([t for td, tp in plans for t in td + tp], deadline,
                  take=lambda i, y: where[i].add(y))
        done = [f.result(self.encoder._empty()) for f in fills]
        return [(done[2 * i], done[2 * i + 1]) for i in range(len(plans))]

    def draw_pair_rows(self, pair: Pair, seed: np.random.SeedSequence, n: int, start: int,
                       stop: int, deadline: Optional[float] = None,
                       again: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Rows ``start:stop`` of ``draw_pair(pair, seed, n)``, the same rows: only the batches of
        the same plan that hold them are drawn. The budget is charged ``2 (stop − start)``, the
        rows kept, or nothing when ``again``: rows drawn before, drawn again on the same seeds
        rather than kept in memory (the same outputs, not new samples)."""
        ends = self._ends(n)
        first = int(np.searchsorted(ends, start, side="right"))
        last = int(np.searchsorted(ends, stop, side="left")) + 1 if stop > start else first
        rows, offset = self._batches(pair, seed, n, first, last, deadline,
                                     0 if again else 2 * (stop - start))
        return tuple(y[start - offset: stop - offset] for y in rows)

    def _ends(self, n: int) -> np.ndarray:
        """Where each batch of a plan of ``n`` draws ends (its rows are ``ends[b−1]:ends[b]``)."""
        full, rest = divmod(int(n), self.batch_size)
        return np.cumsum([self.batch_size] * full + ([rest] if rest else []), dtype=np.int64)

    def _batches(self, pair: Pair, seed: np.random.SeedSequence, n: int, first: int, last: int,
                 deadline: Optional[float], charge: int, prefix: tuple = ()) -> tuple[tuple, int]:
        """Batches ``first:last`` of both datasets' plans of ``n`` draws, after the rows
        ``prefix[side]`` when given, and the row they start at."""
        plans = [plan_batches(d, fresh(seed), n, self.batch_size) for d in (pair.dataset, pair.neighbour)]
        ends = self._ends(n)
        offset = int(ends[first - 1]) if first else 0
        size = int(ends[last - 1]) - offset if last > first else 0
        fills = [_Fill(size + (prefix[j].shape[0] if prefix else 0)) for j in range(2)]
        for f, y in zip(fills, prefix):
            if y.shape[0]:
                f.add(y)
        k = max(1, last - first)
        self._run([t for plan in plans for t in plan[first:last]], deadline,
                  take=lambda i, y: fills[i // k].add(y), charge=charge)
        empty = self.encoder._empty()
        return tuple(f.result(empty) for f in fills), offset

    def halves(self, pair: Pair, seed: np.random.SeedSequence, n: int,
               deadline: Optional[float] = None) -> Callable[[int], tuple[np.ndarray, np.ndarray]]:
        """``get(i)``: half i (rows ``:n//2``, then ``n//2:``) of ``draw_pair(pair, seed, n)``, for
        a selection that needs one half at a time (two-fold cross-fitting). Each batch is drawn
        once (the rows of half 1 in the batch that straddles the two halves are kept from the
        first draw) and the budget charged ``2n`` in all, as ``draw_pair``. A half of at most
        :data:`HOLD_BYTES` is kept once drawn; a larger one is let go by the caller and drawn
        again, on the same seeds and charged nothing, when asked for again: peak memory is one
        large half, not the whole sample."""
        h = n // 2
        ends = self._ends(n)
        split = int(np.searchsorted(ends, h, side="right"))  # the batch holding row h (if any)
        head = split + 1 if h > (int(ends[split - 1]) if split else 0) else split  # batches of half 0
        held: dict = {}
        drawn: set = set()
        spill: list = []  # half 1's rows of the straddling batch, from half 0's first draw

        def get(i: int) -> tuple[np.ndarray, np.ndarray]:
            if i in held:
                return held[i]
            if i == 0:
                again = 0 in drawn
                rows, offset = self._batches(pair, seed, n, 0, head, deadline, 0 if again else 2 * h)
                if not again:
                    spill.extend(y[h - offset:].copy() for y in rows)
                out = tuple(y[: h - offset] for y in rows)
                drawn.add(0)
            else:
                if 0 not in drawn:  # half 1 first: its straddling batch is drawn here
                    out = self.draw_pair_rows(pair, seed, n, h, n, deadline, again=1 in drawn)
                else:
                    out, _ = self._batches(pair, seed, n, head, len(ends), deadline,
                                           0 if 1 in drawn else 2 * (n - h), tuple(spill))
                drawn.add(1)
            if sum(y.nbytes for y in out) <= HOLD_BYTES:
                held[i] = out
            return out

        return get

    def count(self, pair: Pair, event: Event, *, paired: bool, n_num: int, n_den: int,
              seeds: tuple[np.random.SeedSequence, np.random.SeedSequence], numerator: int,
              deadline: Optional[float] = None, lam: Optional[float] = None,
              chunk: int = 4, progress: Optional[Callable[[Counts], None]] = None,
              keep: Optional[list] = None, keep_n: int = 2_000) -> Counts:
        """Count the event on fresh samples: ``n_num`` outputs of the numerator dataset (D when
        ``numerator == 0``) and ``n_den`` of the other; in ``paired`` design both use ``seeds[0]``
        batch by batch and ``n_num == n_den``, and batch i of both is one unit. Batches of the two
        datasets are interleaved and counted where they are drawn
        (:func:`dpaudit.execution.counting.count_units`: only counts come back), so a run cut short
        by ``deadline`` keeps every completed batch (then the counts are not Poisson and ``lam``
        is dropped). When ``keep`` is a list of two
        lists, the first ``keep_n`` encoded outputs of the numerator and the denominator dataset
        are appended to them (for the report's plots)."""
        num, den = (pair.dataset, pair.neighbour) if numerator == 0 else (pair.neighbour, pair.dataset)
        keep_n = min(keep_n, self.rows_within(KEEP_BYTES))  # kept as Python lists: ~4x the bytes
        tn = iter_batches(num, fresh(seeds[0]), n_num, self.batch_size)
        td = iter_batches(den, fresh(seeds[0] if paired else seeds[1]), n_den, self.batch_size)
        # ((side, ...), unit), numerator and denominator interleaved, made as they are counted
        # (the parent's memory does not grow with the budget)
        units = iter(_interleave(tn, td, paired))
        totals = {"nn": 0, "nd": 0, "x": 0, "y": 0, "a": 0}
        complete = True
        # batches per executor call (a pair unit is two); a parallel executor may ask for more
        step = max(2, 2 * (chunk // 2), int(getattr(self.executor, "batches_per_call", 0) or 0))
        pending = next(units, None)
        while pending is not None:
            group, size = [], 0
            while pending is not None and (not group or size + len(pending[1].tasks) <= step):
                group.append(pending)
                size += len(pending[1].tasks)
                pending = next(units, None)
            want = keep_n if keep is not None and min(len(keep[0]), len(keep[1])) < keep_n else 0
            try:
                counted = self._count([u for _, u in group], event, deadline, want)
            except Exhausted:
                complete = False
                break
            for (sides, _), c in zip(group, counted):
                for j, side in enumerate(sides):
                    if want and len(keep[side]) < keep_n:
                        keep[side].extend(c.kept[j][: keep_n - len(keep[side])].tolist())
                    totals["nn" if side == 0 else "nd"] += c.n[j]
                    totals["x" if side == 0 else "y"] += c.inside[j]
                if c.joint is not None:
                    totals["a"] += c.joint
            if progress is not None:
                progress(self._counts(totals, paired, None))
        lam_used = lam if complete else None
        return self._counts(totals, paired, lam_used)

    def _count(self, units: list, event: Event, deadline: Optional[float], keep: int) -> list:
        """Count ``event`` on the units' batches where they are drawn (budget and time as :meth:`_run`)."""
        if deadline is not None and time.monotonic() > deadline:
            self.time_cut = True
            raise Exhausted("time")
        need = sum(t.n for u in units for t in u.tasks)
        if need > self.remaining:
            raise Exhausted("samples")
        counted = count_units(self.executor, self.spec, self.encoder, event, units, keep)
        self.used += need
        if self.on_batch is not None:
            self.on_batch(self.used)
        return counted

    @staticmethod
    def _counts(t: dict, paired: bool, lam: Optional[float]) -> Counts:
        if paired:
            n = min(t["nn"], t["nd"])
            return Counts(n, n, t["x"], t["y"], t["a"])
        return Counts(t["nn"], t["nd"], t["x"], t["y"], None, lam, lam)


class _Fill:
    """A sample of ``n`` rows filled batch by batch: the same array as ``np.concatenate`` of the
    batches (its dtype widened, as concatenation would, when a batch does not fit it)."""

    __slots__ = ("n", "out", "at")

    def __init__(self, n: int) -> None:
        self.n, self.out, self.at = n, None, 0

    def add(self, y: np.ndarray) -> None:
        if self.out is None:
            self.out = np.empty((self.n,) + y.shape[1:], dtype=y.dtype)
        elif np.result_type(self.out.dtype, y.dtype) != self.out.dtype:
            self.out = self.out.astype(np.result_type(self.out.dtype, y.dtype))
        self.out[self.at:self.at + y.shape[0]] = y
        self.at += y.shape[0]

    def result(self, empty: np.ndarray) -> np.ndarray:
        return empty if self.out is None else self.out[: self.at]


def _interleave(tn: Iterator[BatchTask], td: Iterator[BatchTask], paired: bool) -> Iterator[tuple]:
    """Batch i of the numerator and of the denominator, in turn; in the paired design one unit."""
    for a, b in zip_longest(tn, td):
        if paired and a is not None and b is not None:
            yield ((0, 1), CountUnit((a, b), paired=True))
            continue
        if a is not None:
            yield ((0,), CountUnit((a,)))
        if b is not None:
            yield ((1,), CountUnit((b,)))
