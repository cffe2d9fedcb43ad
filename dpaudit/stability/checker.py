"""The chain under check: its parts evaluated on the two datasets of a pair, within a budget.

A :class:`Checker` holds a Transformation or Measurement with its input converter, the map of
its chain at d_in after each part and the measurement's claim; :meth:`Checker.evaluate` runs a
pair through every part, measures the outputs' distances exactly and returns a violation (a
part's output further apart than its map allows, or the measurement's map above the claim),
confirmed by a rerun. It counts the evaluations (:class:`OutOfBudget` past the budget or the
deadline), raises :class:`PartFailed` when a part raises, and keeps per part what it saw.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from dpaudit.claims import Domain, Neighbours
from dpaudit.errors import InvalidArgument
from dpaudit.neighbours.pair import Pair
from dpaudit.stability.chains import decompose
from dpaudit.stability.metrics import (Distance, as_fraction, as_numbers, map_argument,
                                           metric_distance, metric_name, same, show)
from dpaudit.replay.sites import Site
from dpaudit.results import jsonable

__all__ = ["Checker", "PartFailed", "OutOfBudget", "default_d_in", "carrier_range"]


@dataclass
class _Stage:
    """What the search saw at one transformation (or the measurement) over every pair."""

    index: int
    label: str
    site: Optional[Site]
    metric: str
    bound: Any  # the chain's map at d_in up to this part (None: not available)
    max_ratio: float = 0.0
    max_observed: str = "0"
    max_value: float = 0.0
    max_pair: Optional[tuple] = None
    checked: int = 0
    note: Optional[str] = None

    def to_record(self) -> dict:
        return {"index": self.index, "part": self.label,
                "site": None if self.site is None else self.site.to_record(),
                "output_metric": self.metric,
                "map_d_in": None if self.bound is None else jsonable(self.bound),
                "map_d_in_repr": None if self.bound is None else show(self.bound),
                "largest_observed": self.max_observed, "largest_observed_up": self.max_value,
                "largest_ratio": self.max_ratio,
                "pair": None if self.max_pair is None else
                {"dataset": list(self.max_pair[0]), "neighbour": list(self.max_pair[1])},
                "pairs_checked": self.checked, "note": self.note}


class PartFailed(Exception):
    """A part of the chain raised on ``data``, a dataset of its domain: the check ends in ERROR."""

    def __init__(self, message: str, data: np.ndarray) -> None:
        super().__init__(message)
        self.message, self.data = message, data


class OutOfBudget(BaseException):
    """The next pair would spend more evaluations than the budget has left."""


def _above(value: tuple, claim: tuple) -> bool:
    """Whether any component of ``value`` is above the claim's, exactly."""
    for x, c in zip(value, claim):
        fx, fc = as_fraction(x), as_fraction(c)
        if fx is None or fc is None:
            continue
        if isinstance(fc, float):
            continue
        if isinstance(fx, float) or fx > fc:
            return True
    return False


def default_d_in(obj: Any) -> int:
    domain = obj.input_domain
    sized = getattr(domain, "size", None) if hasattr(domain, "element_domain") else None
    name = metric_name(obj.input_metric)
    return 2 if sized is not None and name in ("SymmetricDistance", "InsertDeleteDistance") else 1


class Checker:
    """The chain, its converter and its maps; evaluates pairs, counting the evaluations."""

    def __init__(self, obj: Any, *, d_in: Any, relation: Optional[Neighbours], domain: Any,
                 size: Optional[int], seed: int, budget: int, examples: int,
                 deadline: Optional[float], name: str, nonfinite: bool = False) -> None:
        from dpaudit.adapters.common import relation_for_metric
        from dpaudit.adapters.opendp import carrier_of, input_converter

        self.obj, self.name, self.seed = obj, name, seed
        self.d_in = default_d_in(obj) if d_in is None else d_in
        native, scale = relation_for_metric(obj.input_metric, self.d_in)
        self.relation = native if relation is None else Neighbours.parse(relation)
        self.overridden = self.relation is not native
        self.convert, dom, declared = input_converter(obj.input_domain, native, scale)
        vector = hasattr(obj.input_domain, "element_domain")
        if native in (Neighbours.LINF, Neighbours.L1) and not vector:
            declared = 1
        if declared is not None and size is not None and int(size) != int(declared):
            raise InvalidArgument(f"size={size} but the input domain holds {declared} records")
        self.size = int(declared) if declared is not None else (10 if size is None else int(size))
        atom = obj.input_domain.element_domain if vector else obj.input_domain
        carrier = carrier_of(atom)
        if domain is None and not _bounded(atom):
            dom = carrier_range(carrier, scale) or dom
        self.domain = Domain.parse(domain if domain is not None else dom)
        self.carrier = carrier
        self.integers = carrier.startswith(("i", "u"))
        self.floats = carrier.startswith("f")
        self.budget, self.examples, self.deadline = budget, examples, deadline
        #: NaN and ±inf records tried too (``--nonfinite``): only where the input domain admits
        #: NaN (``atom_domain(T=float, nan=False)`` does not, and OpenDP refuses it when invoked)
        self.nonfinite = bool(nonfinite) and self.floats and _admits_nan(atom)
        self.parts, self.measurement = decompose(obj)
        self.invocations = 0
        self.pairs = 0
        self.skipped = 0
        self.random_from: Optional[int] = None
        self.last_score = 0.0  # the largest d_out / map(d_in) of the last pair compared
        self.violation: Optional[dict] = None
        self.timed_out = False
        # the chain's map at d_in after each part, and the claim of a measurement
        self.bounds: list = []
        d: Any = self.d_in
        for p in self.parts:
            try:
                d = p.obj.map(d) if d is not None else None
            except Exception:  # noqa: BLE001 - a map that refuses d_in: that stage is not checked
                d = None
            self.bounds.append(d)
        self.claim = None
        if self.measurement is not None:
            try:
                self.claim = obj.map(self.d_in)
            except Exception:  # noqa: BLE001
                self.claim = None
        self.stages = [_Stage(j, p.label, p.site, str(p.obj.output_metric), self.bounds[j])
                       for j, p in enumerate(self.parts)]
        self.mstage = None if self.measurement is None or not self.parts else {
            "part": self.measurement.label, "claim": show(self.claim), "largest_value": "0",
            "largest_ratio": 0.0, "pair": None, "checked": 0,
            "site": None if self.measurement.site is None else self.measurement.site.to_record()}
        self._memo: list = [dict() for _ in self.parts]
        self._mmemo: dict = {}

    # -- evaluation --------------------------------------------------------------------------------
    def left(self) -> int:
        return self.budget - self.invocations

    def _run(self, data: np.ndarray) -> tuple[Any, list]:
        if self.invocations + 1 > self.budget:
            raise OutOfBudget()
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.timed_out = True
            raise OutOfBudget()
        self.invocations += 1
        x = self.convert(np.asarray(data, dtype=float))
        outs, v = [], x
        for p in self.parts:
            try:
                v = p.obj(v)
            except Exception as exc:  # noqa: BLE001 - a part failing on data of its domain: ERROR
                text = str(exc).strip().splitlines()
                raise PartFailed(f"{p.label} raised {type(exc).__name__}"
                                 + (f": {text[-1][:300]}" if text else ""), np.asarray(data, dtype=float)) from None
            outs.append(v)
        return x, outs

    def _map(self, j: int, d: Distance) -> Any:
        p = self.parts[j]
        arg = map_argument(p.obj.input_metric, d)
        if arg is None:
            return None
        memo = self._memo[j]
        if arg not in memo:
            try:
                memo[arg] = p.obj.map(arg)
            except Exception:  # noqa: BLE001 - a map that refuses the distance: not checked there
                memo[arg] = None
        return memo[arg]

    def _mmap(self, d: Distance) -> Any:
        arg = map_argument(self.measurement.obj.input_metric, d)
        if arg is None:
            return None
        if arg not in self._mmemo:
            try:
                self._mmemo[arg] = self.measurement.obj.map(arg)
            except Exception:  # noqa: BLE001
                self._mmemo[arg] = None
        return self._mmemo[arg]

    def self_check(self, data: np.ndarray) -> None:
        """Evaluate one dataset twice: a part whose output differs is randomised (its stability
        holds for a coupling this check cannot see), and it and what follows are not checked."""
        _, first = self._run(data)
        _, again = self._run(data)
        for j, (a, b) in enumerate(zip(first, again)):
            if not same(a, b):
                self._randomised(j, "two evaluations on one dataset differ")
                break

    def _randomised(self, j: int, why: str) -> None:
        """Part j draws randomness: its stability holds for a coupling of its runs that this
        check cannot see, so it and what follows are not checked (what was seen is dropped)."""
        self.random_from = j if self.random_from is None else min(self.random_from, j)
        for s in self.stages[self.random_from:]:
            s.note = f"randomised ({why}): not checked"
            s.max_ratio, s.max_observed, s.max_pair, s.max_value = 0.0, "not checked", None, 0.0
        if self.mstage is not None:
            self.mstage.update(largest_ratio=0.0, largest_value="not checked", pair=None,
                               note="not checked: a transformation before it is randomised")

    def evaluate(self, pair: Pair) -> Optional[dict]:
        """Evaluate a pair (2 evaluations); return its violation, if any, after a confirming rerun."""
        if self.left() < 2:
            raise OutOfBudget()
        xa, oa = self._run(pair.dataset)
        xb, ob = self._run(pair.neighbour)
        self.pairs += 1
        d0 = metric_distance(self.obj.input_metric, xa, xb)
        if d0 is None:
            raise InvalidArgument(f"{self.name}: its input metric {self.obj.input_metric} is not one "
                                  f"this check measures")
        if not self.overridden and d0.exceeds(self.d_in):
            self.skipped += 1  # not d_in-close once converted: no claim is made on this pair
            return None
        found = self._compare(pair, d0, oa, ob)
        if found is not None and self.left() >= 2:  # confirm: a randomised part would differ now
            _, oa2 = self._run(pair.dataset)
            _, ob2 = self._run(pair.neighbour)
            if not all(same(a, b) for a, b in zip(oa + ob, oa2 + ob2)):
                j = next(k for k, (a, b, c, e) in enumerate(zip(oa, oa2, ob, ob2))
                         if not (same(a, b) and same(c, e)))
                self._randomised(j, "a rerun of the pair differs")
                return None
        return found

    def _compare(self, pair: Pair, d0: Distance, oa: list, ob: list) -> Optional[dict]:
        key = (tuple(pair.dataset.tolist()), tuple(pair.neighbour.tolist()))
        previous = d0
        found = None
        self.last_score = 0.0
        stop = len(self.parts) if self.random_from is None else self.random_from
        for j in range(stop):
            p, stage = self.parts[j], self.stages[j]
            d = metric_distance(p.obj.output_metric, oa[j], ob[j])
            if d is None:
                stage.note = f"its outputs ({type(oa[j]).__name__}) are not measured under {stage.metric}"
                return found
            stage.checked += 1
            ratio = d.ratio(stage.bound)
            if ratio is not None:
                self.last_score = max(self.last_score, ratio)
            if ratio is not None and (ratio > stage.max_ratio or stage.max_pair is None):
                stage.max_ratio, stage.max_observed, stage.max_pair = ratio, d.text(), key
                stage.max_value = d.up()
            if found is None:
                local = self._map(j, previous) if not previous.infinite else None
                if stage.bound is not None and d.exceeds(stage.bound):
                    found = {"stage": j, "how": "chain", "observed": d, "bound": stage.bound,
                             "input": previous, "local": local, "pair": pair, "d0": d0}
                elif local is not None and as_numbers(local) is not None and d.exceeds(as_numbers(local)[0]):
                    found = {"stage": j, "how": "part", "observed": d, "bound": local,
                             "input": previous, "pair": pair, "d0": d0}
            previous = d
        if self.mstage is not None and self.random_from is None and self.claim is not None:
            value = self._mmap(previous)
            numbers, claim = as_numbers(value), as_numbers(self.claim)
            if numbers is not None and claim is not None:
                self.mstage["checked"] += 1
                c = as_fraction(claim[0])
                r = (float(numbers[0]) / float(c)) if c not in (None, 0) and not isinstance(c, float) else 0.0
                if r > self.mstage["largest_ratio"] or self.mstage["pair"] is None:
                    self.mstage.update(largest_ratio=r, largest_value=show(value),
                                       pair={"dataset": list(key[0]), "neighbour": list(key[1])},
                                       at=previous.text())
                if found is None and _above(numbers, claim):
                    found = {"stage": len(self.parts), "how": "measurement", "observed": previous,
                             "bound": value, "claim": self.claim, "pair": pair}
        return found

    def score(self) -> float:
        return max((s.max_ratio for s in self.stages), default=0.0)


#: the numpy type of each integer carrier OpenDP names
_INTEGER_CARRIERS = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
                     "isize": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32,
                     "u64": np.uint64, "usize": np.uint64}
#: the largest record the input converter carries into an int64 exactly (2^63 − 1024, the
#: largest double below 2^63)
_INT64_CAP = float(np.nextafter(2.0 ** 63, 0.0))


def carrier_range(carrier: str, scale: float = 1.0) -> Optional[tuple[float, float]]:
    """The records an unbounded OpenDP atom domain of type ``carrier`` holds, as dpaudit's record
    domain (divided by the metric's ``scale``, as the input converter multiplies by it): the
    integer type's [min, max] (within int64, which the converter carries), or ±the float type's
    largest finite value; None for another carrier (bool, strings). A stability map is claimed
    for every member of the input domain, so the pairs are drawn there: records in [0, 1] alone
    hide a map that is right only for small records (a clamp-free sum whose map is d_in)."""
    if carrier in _INTEGER_CARRIERS:
        info = np.iinfo(_INTEGER_CARRIERS[carrier])
        lo, hi = max(float(info.min), -2.0 ** 63), min(float(info.max), _INT64_CAP)
    elif carrier in ("f32", "f64"):
        hi = float(np.finfo(np.float32 if carrier == "f32" else np.float64).max)
        lo = -hi
    else:
        return None
    s = abs(float(scale)) or 1.0
    if s != 1.0 and carrier in _INTEGER_CARRIERS:
        # whole records once multiplied by the scale, inside the carrier's range
        lo, hi = math.ceil(lo / s), math.floor(hi / s)
    elif s != 1.0:
        lo, hi = lo / s, hi / s
    return float(lo), float(hi)


def _bounded(atom: Any) -> bool:
    """Whether an OpenDP atom domain states bounds (``atom_domain(bounds=…)``)."""
    try:
        return atom.bounds is not None
    except Exception:  # noqa: BLE001 - an atom type without bounds
        return False


def _admits_nan(atom: Any) -> bool:
    """Whether an OpenDP atom domain has NaN as a member (its own ``member``; False when it
    cannot say)."""
    try:
        return bool(atom.member(float("nan")))
    except Exception:  # noqa: BLE001 - a domain that cannot test membership: no NaN tried
        return False
