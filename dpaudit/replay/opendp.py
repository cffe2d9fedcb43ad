"""OpenDP's stability maps checked on neighbouring pairs, and an OpenDP target audited by replay.

An OpenDP transformation T promises, through its stability map, that for every pair of inputs
d_in-close under its input metric, ``d_out(T(D), T(D′)) ≤ T.map(d_in)`` under its output metric
(the stability relation of the OpenDP programming framework: Gaboardi, Hay and Vadhan, "A
Programming Framework for OpenDP", 2020, Definition 2.3). A chain ``T_k ∘ … ∘ T_1`` maps d_in
through each part in turn. :func:`check_stability` searches neighbouring pairs at the distance of
the input metric (the relation's structured patterns, float-rounding patterns, then a hypothesis
search steered toward d_out / map(d_in)), evaluates each part on D and D′, measures the distance
of the outputs *exactly* (rationals, no rounding) and reports a ``sensitivity_exceeded``
violation where it exceeds

* the chain's map at d_in up to that part (``T_j ∘ … ∘ T_1``.map(d_in)), or
* the part's own map at the distance observed at its input (``T_j.map(d(o_{j−1}, o′_{j−1}))``,
  rounded up to the map's distance type),

and, for a chain ending in a measurement M, where ``M.map(d observed at its input)`` exceeds the
claim ``(M ∘ T).map(d_in)``. The float rounding of sums that Casacuberta, Shoemate, Vadhan and
Wagaman found in several libraries ("Widespread Underestimation of Sensitivity in Differentially
Private Libraries and How to Fix It", ACM CCS 2022) shows up here as a d_out above the map.

OpenDP's noise is drawn in native code from the operating system's generator: the replay can
neither see nor freeze it, and says so (``no_noise_intercepted``, a limit). What it does see are
the transformations' outputs. The parts of a chain are read from what :func:`recording` notes
while chains are built (``make_chain_tt``, ``make_chain_mt``, ``make_chain_pm``, which
``Transformation.__rshift__`` calls: their parts and the ``file:line`` of the user's code), and
else from ``__opendp_dict__``, where OpenDP 0.16 keeps a chain's parts for serialisation.
Randomness: the pair search is deterministic from ``seed`` (patterns, then hypothesis seeded).
"""

from __future__ import annotations

import functools
import importlib
import math
import os
import sys
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Iterator, Optional

import numpy as np

from dpaudit.claims import Domain, Neighbours
from dpaudit.errors import InvalidArgument
from dpaudit.neighbours.pair import Pair
from dpaudit.replay.result import KINDS, SEVERITIES, ReplayFinding, ReplayResult
from dpaudit.replay.sites import Site, call_site, folder_of
from dpaudit.results import Verdict, jsonable
from dpaudit.rng import check_seed

__all__ = ["recording", "parts_of", "decompose", "metric_distance", "check_stability",
           "check_pair", "StabilityReport", "replay_opendp", "replay_target", "opendp_of",
           "BUDGET", "EXAMPLES"]

#: chain evaluations (one per dataset) a check may spend at the default budget
BUDGET = 200
#: hypothesis examples (pairs) at most in the targeted search
EXAMPLES = 60
#: the share of the budget the structured and rounding patterns may use
PATTERN_SHARE = 0.5
#: the combinators whose results remember their parts
COMBINATORS = ("make_chain_tt", "make_chain_mt", "make_chain_pm")
#: the attribute under which a chain built while :func:`recording` keeps its parts
ATTRIBUTE = "_dpaudit_parts"
#: the attribute of an adapter's mechanism function holding its OpenDP measurement
TARGET_ATTRIBUTE = "__dpaudit_opendp__"

_INT_TYPES = ("u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize")


# -- recording the parts of chains ------------------------------------------------------------------

@dataclass(frozen=True)
class Built:
    """How a chain was built: the ``combinator``, its ``outer`` and ``inner`` parts, and the
    ``site`` (``file:line`` of the user's code) when it was built while :func:`recording`."""

    combinator: str
    outer: Any
    inner: Any
    site: Optional[Site] = None


def _skipped() -> tuple[str, ...]:
    """Folders that are never the user's code: OpenDP's and dpaudit's adapters'."""
    folders = []
    opendp = sys.modules.get("opendp")
    if opendp is not None:
        folders.append(folder_of(getattr(opendp, "__file__", None)))
    folders.append(folder_of(os.path.join(os.path.dirname(os.path.dirname(__file__)), "adapters",
                                          "opendp.py")))
    return tuple(f for f in folders if f)


def _recorder(name: str, original: Callable) -> Callable:
    @functools.wraps(original)
    def chain(outer: Any, inner: Any) -> Any:
        out = original(outer, inner)
        try:
            setattr(out, ATTRIBUTE, Built(name, outer, inner, call_site(skip=_skipped())))
        except (AttributeError, TypeError):  # an object that takes no attribute: its parts stay unknown
            pass
        return out

    chain.__dpaudit_recorder__ = True  # type: ignore[attr-defined]
    return chain


@contextmanager
def recording() -> Iterator[bool]:
    """While the block runs, every chain built by ``opendp.combinators.make_chain_tt``,
    ``make_chain_mt`` or ``make_chain_pm`` (``>>`` calls them) remembers its parts and the line
    of the user's code that built it; the originals are restored when the block ends, whatever
    happens. Yields False (and records nothing) when OpenDP is not installed."""
    try:
        combinators = importlib.import_module("opendp.combinators")
    except ImportError:
        yield False
        return
    saved = []
    for name in COMBINATORS:
        original = getattr(combinators, name, None)
        if original is None or getattr(original, "__dpaudit_recorder__", False):
            continue
        saved.append((name, original))
        setattr(combinators, name, _recorder(name, original))
    try:
        yield True
    finally:
        for name, original in reversed(saved):
            setattr(combinators, name, original)


def parts_of(obj: Any) -> Optional[Built]:
    """The parts of a chain: as recorded (with its site), else as OpenDP's ``__opendp_dict__``
    states them (no site); None for an object that is not a chain."""
    rec = getattr(obj, ATTRIBUTE, None)
    if isinstance(rec, Built):
        return rec
    d = getattr(obj, "__opendp_dict__", None)
    if isinstance(d, dict) and d.get("__function__") in COMBINATORS:
        kw = d.get("__kwargs__") or {}
        outer = next((kw[k] for k in ("transformation1", "measurement1", "postprocess1") if k in kw), None)
        inner = next((kw[k] for k in ("transformation0", "measurement0") if k in kw), None)
        if outer is not None and inner is not None:
            return Built(d["__function__"], outer, inner, None)
    return None


@dataclass(frozen=True)
class Part:
    """One transformation or measurement of a chain, its ``label`` and the ``site`` of the chain
    call that joined it (None when unknown)."""

    obj: Any
    label: str
    site: Optional[Site]


def _label(obj: Any) -> str:
    if parts_of(obj) is not None:  # a chain: its parts' constructors, in the order they run
        return " >> ".join(p.label.split("(")[0] for p in _flatten(obj, None))
    d = getattr(obj, "__opendp_dict__", None)
    if not isinstance(d, dict) or "__function__" not in d:
        return type(obj).__name__
    skip = {"input_domain", "input_metric", "output_domain", "output_metric", "function",
            "stability_map", "privacy_map"}
    shown = []
    for k, v in (d.get("__kwargs__") or {}).items():
        text = repr(v)
        if k not in skip and v is not None and len(text) <= 40:
            shown.append(f"{k}={text}")
    return f"{d['__function__']}({', '.join(shown)})"


def _flatten(obj: Any, site: Optional[Site]) -> list[Part]:
    b = parts_of(obj)
    if b is None:
        return [Part(obj, _label(obj), site)]
    here = b.site or site
    if b.combinator == "make_chain_pm":  # post-processing after the measurement cannot cost privacy
        return _flatten(b.inner, here)
    return _flatten(b.inner, here) + _flatten(b.outer, here)


def decompose(obj: Any) -> tuple[list[Part], Optional[Part]]:
    """``(transformations, measurement)``: the parts of a Transformation or Measurement in the order
    they run (a measurement that is not a chain is its own only part)."""
    dp = importlib.import_module("opendp.mod")
    flat = _flatten(obj, None)
    if isinstance(obj, dp.Measurement):
        return flat[:-1], flat[-1]
    return flat, None


# -- exact distances ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Distance:
    """A distance computed exactly: ``value`` a Fraction (or ``math.inf``); for ``L2Distance``
    ``squared`` is True and ``value`` is the sum of squares."""

    value: Any
    squared: bool = False

    @property
    def infinite(self) -> bool:
        return isinstance(self.value, float) and math.isinf(self.value)

    def exceeds(self, bound: Any) -> bool:
        """Whether the distance is above ``bound`` (a number), exactly."""
        b = _fraction(bound)
        if b is None:
            return False
        if isinstance(b, float):  # +inf
            return False
        if self.infinite:
            return True
        return self.value > (b * b if self.squared else b)

    def up(self) -> float:
        """The smallest float64 at least the distance."""
        if self.infinite:
            return math.inf
        if self.squared:
            x = math.sqrt(float(self.value))
            while Fraction(x) ** 2 < self.value:
                x = math.nextafter(x, math.inf)
            while x > 0 and Fraction(math.nextafter(x, 0.0)) ** 2 >= self.value:
                x = math.nextafter(x, 0.0)
            return x
        x = float(self.value)
        if Fraction(x) < self.value:
            x = math.nextafter(x, math.inf)
        return x

    def exact(self) -> bool:
        if self.infinite:
            return True
        if self.squared:
            return Fraction(self.up()) ** 2 == self.value
        return Fraction(float(self.value)) == self.value

    def text(self) -> str:
        """``repr`` of the float (exact, or rounded up, said so)."""
        if self.infinite:
            return "inf"
        if not self.squared and self.value.denominator == 1 and abs(self.value) < 2 ** 63:
            return repr(int(self.value))
        return repr(self.up()) + ("" if self.exact() else " (rounded up)")

    def ratio(self, bound: Any) -> Optional[float]:
        b = _fraction(bound)
        if b is None or isinstance(b, float):
            return None
        if self.infinite:
            return math.inf
        if b == 0:
            return 0.0 if self.value == 0 else math.inf
        return self.up() / float(b)


def _fraction(x: Any) -> Any:
    """``x`` as an exact Fraction (``math.inf`` for +inf, None for what is not a number)."""
    if isinstance(x, bool):
        return Fraction(int(x))
    if isinstance(x, (int, np.integer)):
        return Fraction(int(x))
    if isinstance(x, (float, np.floating)):
        v = float(x)
        if math.isnan(v):
            return None
        return math.inf if math.isinf(v) else Fraction(v)
    return None


def _metric_name(metric: Any) -> str:
    text = str(getattr(metric, "type", None) or metric)
    return text.split("(")[0].split("<")[0].split("::")[-1].strip()


def _key(v: Any) -> Any:
    """A hashable key under which equal records meet (NaNs meet NaNs)."""
    if isinstance(v, float) and math.isnan(v):
        return ("nan",)
    if isinstance(v, list):
        return tuple(_key(x) for x in v)
    return v


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return _key(a) == _key(b)


def _diff(a: Any, b: Any) -> Any:
    """|a − b| exactly (``math.inf`` when one is not finite and they differ)."""
    if _same(a, b):
        return Fraction(0)
    fa, fb = _fraction(a), _fraction(b)
    if fa is None or fb is None or isinstance(fa, float) or isinstance(fb, float):
        return math.inf
    return abs(fa - fb)


def _signed(a: Any, b: Any) -> Any:
    if _same(a, b):
        return Fraction(0)
    fa, fb = _fraction(a), _fraction(b)
    if fa is None or fb is None or isinstance(fa, float) or isinstance(fb, float):
        return None
    return fa - fb


def _lcs(a: list, b: list) -> int:
    """The length of a longest common subsequence (bit-parallel: Allison and Dix 1986; Hyyrö
    2004), after the common prefix and suffix are stripped."""
    i = 0
    while i < min(len(a), len(b)) and _key(a[i]) == _key(b[i]):
        i += 1
    j = 0
    while j < min(len(a), len(b)) - i and _key(a[-1 - j]) == _key(b[-1 - j]):
        j += 1
    a2, b2 = a[i:len(a) - j], b[i:len(b) - j]
    if not a2 or not b2:
        return i + j
    masks: dict = {}
    for k, x in enumerate(a2):
        masks[_key(x)] = masks.get(_key(x), 0) | (1 << k)
    full = (1 << len(a2)) - 1
    v = full
    for y in b2:
        u = v & masks.get(_key(y), 0)
        v = ((v + u) | (v - u)) & full
    return i + j + len(a2) - bin(v).count("1")


def _vector(x: Any) -> Optional[list]:
    if isinstance(x, (list, tuple)):
        return list(x)
    if isinstance(x, np.ndarray):
        return x.reshape(-1).tolist()
    return None


def metric_distance(metric: Any, a: Any, b: Any) -> Optional[Distance]:
    """The distance of ``a`` and ``b`` under an OpenDP ``metric``, exactly (None when the metric or
    the values are not ones this check measures):

    * ``SymmetricDistance``: |a Δ b| as multisets, Σ_v |#_a(v) − #_b(v)|;
    * ``InsertDeleteDistance``: insertions and deletions between the sequences,
      |a| + |b| − 2·LCS(a, b);
    * ``ChangeOneDistance``: the symmetric distance / 2 between datasets of one size (∞ else);
    * ``HammingDistance``: positions that differ between sequences of one length (∞ else);
    * ``DiscreteDistance``: 0 when equal, else 1;
    * ``AbsoluteDistance``: |a − b|; ``L1Distance`` Σ|a_i − b_i|; ``L2Distance`` √Σ(a_i − b_i)²;
      ``LInfDistance`` max|a_i − b_i| (∞ for a ``monotonic`` one when the differences change
      sign: OpenDP's definition), over vectors of one length (∞ else) or maps (a missing key
      counts 0).

    A value that is not finite is at distance ∞ from any other (0 from itself).
    """
    name = _metric_name(metric)
    if name in ("SymmetricDistance", "ChangeOneDistance"):
        va, vb = _vector(a), _vector(b)
        if va is None or vb is None:
            return None
        ca, cb = Counter(_key(x) for x in va), Counter(_key(x) for x in vb)
        d = sum(abs(ca[k] - cb[k]) for k in set(ca) | set(cb))
        if name == "ChangeOneDistance":
            return Distance(Fraction(d, 2) if len(va) == len(vb) else math.inf)
        return Distance(Fraction(d))
    if name == "InsertDeleteDistance":
        va, vb = _vector(a), _vector(b)
        if va is None or vb is None:
            return None
        return Distance(Fraction(len(va) + len(vb) - 2 * _lcs(va, vb)))
    if name == "HammingDistance":
        va, vb = _vector(a), _vector(b)
        if va is None or vb is None:
            return None
        if len(va) != len(vb):
            return Distance(math.inf)
        return Distance(Fraction(sum(1 for x, y in zip(va, vb) if not _same(x, y))))
    if name == "DiscreteDistance":
        return Distance(Fraction(0 if _same(a, b) else 1))
    if name == "AbsoluteDistance":
        if _vector(a) is not None or _vector(b) is not None:
            return None
        return Distance(_diff(a, b))
    if name in ("L1Distance", "L2Distance", "LInfDistance"):
        if isinstance(a, dict) and isinstance(b, dict):
            keys = list(a.keys() | b.keys())
            va, vb = [a.get(k, 0) for k in keys], [b.get(k, 0) for k in keys]
        else:
            va, vb = _vector(a), _vector(b)
            if va is None or vb is None:
                if _vector(a) is None and _vector(b) is None:
                    va, vb = [a], [b]  # a scalar answer: a vector of one
                else:
                    return None
            if len(va) != len(vb):
                return Distance(math.inf)
        if name == "LInfDistance" and "monotonic" in str(metric):
            signs = [_signed(x, y) for x, y in zip(va, vb)]
            if any(s is None for s in signs):
                return Distance(math.inf)
            if any(s > 0 for s in signs) and any(s < 0 for s in signs):
                return Distance(math.inf)
        diffs = [_diff(x, y) for x, y in zip(va, vb)]
        if any(isinstance(d, float) for d in diffs):
            return Distance(math.inf)
        if name == "L1Distance":
            return Distance(sum(diffs, Fraction(0)))
        if name == "L2Distance":
            return Distance(sum((d * d for d in diffs), Fraction(0)), squared=True)
        return Distance(max(diffs, default=Fraction(0)))
    return None


def _distance_type(metric: Any) -> str:
    return str(getattr(metric, "distance_type", "f64"))


def _argument(metric: Any, d: Distance) -> Any:
    """The distance ``d`` as the map of a part taking ``metric`` accepts it, never below ``d``
    (None when it cannot be passed: ∞ for an integer type)."""
    kind = _distance_type(metric)
    if kind in _INT_TYPES:
        if d.infinite:
            return None
        v = d.value if not d.squared else Fraction(math.ceil(d.up()))
        return int(-(-v.numerator // v.denominator))
    x = d.up()
    if kind == "f32" and math.isfinite(x):
        x32 = np.float32(x)
        if float(x32) < x:
            x32 = np.nextafter(x32, np.float32(np.inf))
        x = float(x32)
    return x


def _numbers(v: Any) -> Optional[tuple]:
    """A map's output as numbers: one (ε, ρ, a distance) or two ((ε, δ)); None otherwise."""
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return (v,)
    if isinstance(v, tuple) and v and all(isinstance(x, (int, float)) for x in v):
        return tuple(v)
    return None


def _above(value: tuple, claim: tuple) -> bool:
    """Whether any component of ``value`` is above the claim's, exactly."""
    for x, c in zip(value, claim):
        fx, fc = _fraction(x), _fraction(c)
        if fx is None or fc is None:
            continue
        if isinstance(fc, float):
            continue
        if isinstance(fx, float) or fx > fc:
            return True
    return False


def _show(v: Any) -> str:
    if isinstance(v, tuple):
        return "(" + ", ".join(_show(x) for x in v) + ")"
    if isinstance(v, float):
        return repr(v)
    return repr(v)


# -- the check ---------------------------------------------------------------------------------------

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
                "map_d_in_repr": None if self.bound is None else _show(self.bound),
                "largest_observed": self.max_observed, "largest_observed_up": self.max_value,
                "largest_ratio": self.max_ratio,
                "pair": None if self.max_pair is None else
                {"dataset": list(self.max_pair[0]), "neighbour": list(self.max_pair[1])},
                "pairs_checked": self.checked, "note": self.note}


class _Failed(Exception):
    def __init__(self, message: str, data: np.ndarray) -> None:
        super().__init__(message)
        self.message, self.data = message, data


class _OutOfBudget(BaseException):
    """The next pair would spend more evaluations than the budget has left."""


class _Found(Exception):
    """A violation in the hypothesis search (hypothesis then shrinks the pair)."""


@dataclass(frozen=True)
class StabilityReport:
    """What :func:`check_stability` found: ``stages`` (per transformation: its map at d_in, the
    largest distance observed and its ratio to the map, the pair), the ``measurement`` check (the
    measurement's map at the distance observed at its input against the claim), the
    ``violations`` (``sensitivity_exceeded`` findings), the ``notes``, the evaluations spent
    (``invocations``, one per dataset), the ``pairs`` compared, and ``error`` when a part raised
    (on ``failed_on``)."""

    target: str
    d_in: Any
    relation: Neighbours
    domain: Domain
    size: int
    stages: tuple
    measurement: Optional[dict]
    violations: tuple
    notes: tuple
    invocations: int
    pairs: int
    seed: int
    budget: int
    elapsed_s: float
    claim: Any = None
    error: Optional[str] = None
    failed_on: Optional[tuple] = None
    phases: dict = field(default_factory=dict)

    @property
    def refuted(self) -> bool:
        return bool(self.violations)

    def largest_ratio(self) -> float:
        """The largest d_out / map(d_in) seen at any transformation (0 when none was checked)."""
        return max((s["largest_ratio"] for s in self.stages), default=0.0)

    def __str__(self) -> str:
        head = (f"{self.target}: {'VIOLATION' if self.refuted else 'ERROR' if self.error else 'nothing found'}"
                f" (stability maps at d_in = {self.d_in!r}, {self.relation.value}; {self.pairs} pairs, "
                f"{self.invocations} evaluations)")
        lines = [head]
        if self.error:
            lines.append(f"  error: {self.error}")
        for f in self.violations:
            lines.append(f"  violation: {f.message}")
        for s in self.stages:
            lines.append(f"  {s['part']}: map(d_in) = {s['map_d_in_repr']}, largest d_out = "
                         f"{s['largest_observed']} (ratio {s['largest_ratio']:.17g})")
        if self.measurement:
            m = self.measurement
            lines.append(f"  {m['part']}: map(d observed) ≤ {m['largest_value']} against the claim "
                         f"{m['claim']} (ratio {m['largest_ratio']:.17g})")
        for f in self.notes:
            lines.append(f"  note: {f.message}")
        return "\n".join(lines)

    def to_record(self) -> dict:
        return {"target": self.target, "d_in": jsonable(self.d_in), "relation": self.relation.value,
                "domain": [self.domain.lo, self.domain.hi], "size": self.size,
                "claim": None if self.claim is None else _show(self.claim),
                "stages": list(self.stages), "measurement": self.measurement,
                "violations": [f.to_record() for f in self.violations],
                "notes": [f.to_record() for f in self.notes],
                "invocations": self.invocations, "pairs": self.pairs, "seed": self.seed,
                "budget": self.budget, "elapsed_s": self.elapsed_s, "error": self.error,
                "failed_on": jsonable(self.failed_on), "phases": jsonable(self.phases)}


def _default_d_in(obj: Any) -> int:
    domain = obj.input_domain
    sized = getattr(domain, "size", None) if hasattr(domain, "element_domain") else None
    name = _metric_name(obj.input_metric)
    return 2 if sized is not None and name in ("SymmetricDistance", "InsertDeleteDistance") else 1


class _Checker:
    """The chain, its converter and its maps; evaluates pairs, counting the evaluations."""

    def __init__(self, obj: Any, *, d_in: Any, relation: Optional[Neighbours], domain: Any,
                 size: Optional[int], seed: int, budget: int, examples: int,
                 deadline: Optional[float], name: str) -> None:
        from dpaudit.adapters.common import relation_for_metric
        from dpaudit.adapters.opendp import _carrier, _converter

        self.obj, self.name, self.seed = obj, name, seed
        self.d_in = _default_d_in(obj) if d_in is None else d_in
        native, scale = relation_for_metric(obj.input_metric, self.d_in)
        self.relation = native if relation is None else Neighbours.parse(relation)
        self.overridden = self.relation is not native
        self.convert, dom, declared = _converter(obj.input_domain, native, scale)
        vector = hasattr(obj.input_domain, "element_domain")
        if native in (Neighbours.LINF, Neighbours.L1) and not vector:
            declared = 1
        if declared is not None and size is not None and int(size) != int(declared):
            raise InvalidArgument(f"size={size} but the input domain holds {declared} records")
        self.size = int(declared) if declared is not None else (10 if size is None else int(size))
        self.domain = Domain.parse(domain if domain is not None else dom)
        atom = obj.input_domain.element_domain if vector else obj.input_domain
        carrier = _carrier(atom)
        self.carrier = carrier
        self.integers = carrier.startswith(("i", "u"))
        self.floats = carrier.startswith("f")
        self.budget, self.examples, self.deadline = budget, examples, deadline
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
            "part": self.measurement.label, "claim": _show(self.claim), "largest_value": "0",
            "largest_ratio": 0.0, "pair": None, "checked": 0,
            "site": None if self.measurement.site is None else self.measurement.site.to_record()}
        self._memo: list = [dict() for _ in self.parts]
        self._mmemo: dict = {}

    # -- evaluation --------------------------------------------------------------------------------
    def left(self) -> int:
        return self.budget - self.invocations

    def _run(self, data: np.ndarray) -> tuple[Any, list]:
        if self.invocations + 1 > self.budget:
            raise _OutOfBudget()
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.timed_out = True
            raise _OutOfBudget()
        self.invocations += 1
        x = self.convert(np.asarray(data, dtype=float))
        outs, v = [], x
        for p in self.parts:
            try:
                v = p.obj(v)
            except Exception as exc:  # noqa: BLE001 - a part failing on data of its domain: ERROR
                text = str(exc).strip().splitlines()
                raise _Failed(f"{p.label} raised {type(exc).__name__}"
                              + (f": {text[-1][:300]}" if text else ""), np.asarray(data, dtype=float)) from None
            outs.append(v)
        return x, outs

    def _map(self, j: int, d: Distance) -> Any:
        p = self.parts[j]
        arg = _argument(p.obj.input_metric, d)
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
        arg = _argument(self.measurement.obj.input_metric, d)
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
            if not _same(a, b):
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
            raise _OutOfBudget()
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
            if not all(_same(a, b) for a, b in zip(oa + ob, oa2 + ob2)):
                j = next(k for k, (a, b, c, e) in enumerate(zip(oa, oa2, ob, ob2))
                         if not (_same(a, b) and _same(c, e)))
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
                elif local is not None and _numbers(local) is not None and d.exceeds(_numbers(local)[0]):
                    found = {"stage": j, "how": "part", "observed": d, "bound": local,
                             "input": previous, "pair": pair, "d0": d0}
            previous = d
        if self.mstage is not None and self.random_from is None and self.claim is not None:
            value = self._mmap(previous)
            numbers, claim = _numbers(value), _numbers(self.claim)
            if numbers is not None and claim is not None:
                self.mstage["checked"] += 1
                c = _fraction(claim[0])
                r = (float(numbers[0]) / float(c)) if c not in (None, 0) and not isinstance(c, float) else 0.0
                if r > self.mstage["largest_ratio"] or self.mstage["pair"] is None:
                    self.mstage.update(largest_ratio=r, largest_value=_show(value),
                                       pair={"dataset": list(key[0]), "neighbour": list(key[1])},
                                       at=previous.text())
                if found is None and _above(numbers, claim):
                    found = {"stage": len(self.parts), "how": "measurement", "observed": previous,
                             "bound": value, "claim": self.claim, "pair": pair}
        return found

    def score(self) -> float:
        return max((s.max_ratio for s in self.stages), default=0.0)


# -- the pairs -------------------------------------------------------------------------------------

def _ulp(x: float, carrier: str) -> float:
    """The unit in the last place of |x| in the carrier's float type (f32 or f64)."""
    if carrier == "f32":
        v = np.float32(abs(x))
        return float(np.nextafter(v, np.float32(np.inf)) - v)
    return math.ulp(abs(x))


def _straddle(big: float, other: float, n: int, carrier: str = "f64") -> Optional[tuple[int, float]]:
    """``(m, t)`` for the binade-straddling pattern: after the changed record and m records at
    ``big``, the partial sum of D has reached a power of two 2^k that the partial sum of D′ (the
    changed record at ``other``) has not, and records t just above half of D's unit in the last
    place round up by a whole unit on D and by almost nothing on D′, each step. Chosen to
    maximise (steps left) × ulp(2^k) / 2; None when no m crosses a power of two."""
    best = None
    for m in range(1, n - 1):
        on_d, on_dp = abs((m + 1) * big), abs(other + m * big)
        if not (math.isfinite(on_d) and on_d > 0):
            break
        power = 2.0 ** math.floor(math.log2(on_d))
        if not on_dp < power <= on_d:
            continue
        t = math.copysign(_ulp(power, carrier) / 2 * (1 + 2 ** -20), big)
        score = (n - m - 1) * _ulp(power, carrier) / 2
        if best is None or score > best[0]:
            best = (score, m, t)
    return None if best is None else (best[1], best[2])


def _rounding_pairs(c: _Checker) -> list[Pair]:
    """Float-rounding patterns in the manner of Casacuberta et al. (2022, Section 4), for float
    records under add-remove or replace (n records, domain [lo, hi]; ``big`` the end of largest
    magnitude, ``other`` the other end):

    * one record at ``big`` and n − 1 records t just above half a unit in the last place of it,
      against that record at ``other`` (replace) or removed (add-remove), in both orders: every
      addition of t to a partial sum near ``big`` rounds up by a whole unit on D, not on D′;
    * the same after m records at ``big``, m chosen so that D's partial sum has crossed a power of
      two that D′'s has not (:func:`_straddle`): the units then differ by a factor 2;
    * n records at ``big`` against one moved to ``other`` (or removed), and alternating ends when
      the domain holds both signs (cancellation)."""
    if not c.floats or c.relation not in (Neighbours.REPLACE, Neighbours.ADD_REMOVE) or c.size < 2:
        return []
    from dpaudit.neighbours.relations import are_neighbours

    lo, hi = c.domain.lo, c.domain.hi
    big = hi if abs(hi) >= abs(lo) else lo
    other = lo if big == hi else hi
    n = c.size
    replace = c.relation is Neighbours.REPLACE
    out: list[Pair] = []

    def add(head: list, rest: list, label: str) -> None:
        first = [big] + head + rest
        second = ([other] if replace else []) + head + rest
        out.append(Pair.of(first, second, label))
        out.append(Pair.of(head + rest + [big], head + rest + ([other] if replace else []), label))

    half = _ulp(big, c.carrier) / 2
    for t in (math.copysign(half * (1 + 2 ** -20), big), math.copysign(half * 1.5, big)):
        if lo <= t <= hi:
            add([], [t] * (n - 1), "float rounding: ½ ulp records after an extreme one")
    straddle = _straddle(big, other if replace else 0.0, n, c.carrier)
    if straddle is not None:
        m, t = straddle
        if lo <= t <= hi:
            add([big] * m, [t] * (n - m - 1), "float rounding: partial sums straddling a power of two")
    add([big] * (n - 1), [], "float rounding: n records at the far end")
    if lo < 0 < hi:  # mixed signs: cancellation
        alt = [hi if k % 2 == 0 else lo for k in range(n - 1)]
        add(alt, [], "float rounding: alternating ends")
    return [p for p in out if are_neighbours(c.relation, p.dataset, p.neighbour, c.domain, c.size)]


def _ordered(draw: Any, pair: Pair) -> Pair:
    """The pair with its records in the order drawn, sorted, or reversed (both datasets alike, so
    that they stay neighbours); a float sum's rounding depends on the order."""
    from hypothesis import strategies as st

    kind = draw(st.integers(0, 2))
    a, b = pair.dataset, pair.neighbour
    if kind == 0 or a.ndim != 1:
        return pair
    if len(a) == len(b):
        order = np.argsort(a, kind="stable")
        order = order[::-1] if kind == 2 else order
        return Pair(a[order], b[order], pair.label, pair.relation)
    big, small = (a, b) if len(a) > len(b) else (b, a)
    big2 = np.sort(big)[::-1] if kind == 2 else np.sort(big)
    small2 = np.sort(small)[::-1] if kind == 2 else np.sort(small)
    return Pair(big2, small2, pair.label, pair.relation) if len(a) > len(b) else \
        Pair(small2, big2, pair.label, pair.relation)


def _search(c: _Checker) -> dict:
    """Patterns, then the hypothesis search; stops at the first violation (shrunk by hypothesis)."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings, target
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st
    from hypothesis.errors import HypothesisException

    from dpaudit.neighbours.patterns import structured_pairs
    from dpaudit.neighbours.relations import allowed_sizes
    from dpaudit.neighbours.strategies import neighbouring_pairs

    phases: dict = {}
    patterns = structured_pairs(c.relation, c.domain, c.size, both_orders=False)
    patterns = patterns[:1] + _rounding_pairs(c) + patterns[1:]
    if not patterns:
        return phases
    try:
        c.self_check(patterns[0].dataset)
        cap = max(4, int(PATTERN_SHARE * c.budget))
        seen = 0
        for pair in patterns:
            if c.invocations + 2 > cap:
                break
            seen += 1
            found = c.evaluate(pair)
            if found is not None:
                c.violation = found
                break
            if c.random_from == 0 and c.mstage is None:  # nothing left that can be checked
                break
        phases["patterns"] = {"pairs": seen, "of": len(patterns)}
        if c.violation is not None or c.left() < 4 or (c.random_from == 0 and c.mstage is None):
            return phases
        lo, hi = allowed_sizes(c.relation, c.size)
        strategy = neighbouring_pairs(c.relation, c.domain, (lo, hi), integers=c.integers)
        state: dict = {"last": None, "examples": 0}

        @st.composite
        def pairs(draw: Any) -> Pair:
            if c.left() < 2:
                raise _OutOfBudget()
            return _ordered(draw, draw(strategy)).relabelled("hypothesis search")

        def probe(pair: Pair) -> None:
            found = c.evaluate(pair)
            state["examples"] += 1
            target(min(c.last_score, 1e6), label="d_out / map(d_in)")
            if found is not None:
                state["last"] = found
                raise _Found()

        test = settings(max_examples=c.examples, database=None, derandomize=False, deadline=None,
                        verbosity=Verbosity.quiet, print_blob=False, report_multiple_bugs=False,
                        suppress_health_check=list(HealthCheck),
                        phases=(Phase.generate, Phase.target, Phase.shrink))(given(pairs())(probe))
        test = hypothesis_seed(c.seed)(test)
        try:
            test()
        except (_Found, _OutOfBudget, HypothesisException):
            pass
        if state["last"] is not None:
            c.violation = state["last"]
        phases["search"] = {"pairs": state["examples"], "examples_asked": c.examples}
    except _OutOfBudget:
        pass
    return phases


# -- findings ----------------------------------------------------------------------------------------

def _floats(a: np.ndarray) -> str:
    return "[" + ", ".join(repr(float(x)) for x in np.asarray(a).reshape(-1)) + "]"


def _violation_finding(c: _Checker, v: dict) -> ReplayFinding:
    pair: Pair = v["pair"]
    d: Distance = v["observed"]
    j = v["stage"]
    if v["how"] == "measurement":
        part = c.measurement
        msg = (f"privacy map exceeded at {part.label}: the distance observed at its input is "
               f"{d.text()} ({part.obj.input_metric}), where its map gives {_show(v['bound'])}, "
               f"above the claim map(d_in = {c.d_in!r}) = {_show(v['claim'])} of the whole chain")
        values = {"part": part.label, "observed_input_distance": d.text(),
                  "map_at_observed": _show(v["bound"]), "claim": _show(v["claim"]), "d_in": c.d_in}
    else:
        part = c.parts[j]
        upto = " ∘ ".join(p.label.split("(")[0] for p in reversed(c.parts[: j + 1]))
        if v["how"] == "chain":
            apart = (f"at d_in = {c.d_in!r} ({c.obj.input_metric})" if not c.overridden else
                     f"(neighbours under {c.relation.value}, {v['d0'].text()} apart under "
                     f"{c.obj.input_metric}, for which map(d_in = {c.d_in!r}) is claimed)")
            msg = (f"stability map exceeded at {part.label}: d_out = {d.text()} "
                   f"({part.obj.output_metric}) on D and D′ {apart}, above map(d_in) = "
                   f"{_show(v['bound'])} of {upto}")
        else:
            msg = (f"stability map exceeded at {part.label}: d_out = {d.text()} "
                   f"({part.obj.output_metric}) from inputs {v['input'].text()} apart "
                   f"({part.obj.input_metric}), above its map({_show(_argument(part.obj.input_metric, v['input']))})"
                   f" = {_show(v['bound'])}")
        excess = None
        b = _fraction(_numbers(v["bound"])[0]) if _numbers(v["bound"]) else None
        if b is not None and not isinstance(b, float) and not d.infinite and not d.squared:
            excess = float(d.value - b)
            msg += f" (excess {excess!r})"
        values = {"part": part.label, "observed": d.text(), "map": _show(v["bound"]), "d_in": c.d_in,
                  "input_distance": v["input"].text(), "check": v["how"], "excess": excess}
    return ReplayFinding("sensitivity_exceeded", part.site, msg, tuple(pair.dataset.tolist()),
                         tuple(pair.neighbour.tolist()), pair.label or "", values,
                         f"dpaudit.replay.opendp.check_pair({c.name}, {_floats(pair.dataset)}, "
                         f"{_floats(pair.neighbour)}, d_in={c.d_in!r})")


def _notes(c: _Checker) -> list[ReplayFinding]:
    out = []
    for s in c.stages:
        if s.note:
            out.append(ReplayFinding("input_not_observed", s.site, f"{s.label}: {s.note}"))
        elif s.bound is None:
            out.append(ReplayFinding("input_not_observed", s.site,
                                     f"{s.label}: its map at d_in could not be computed: only its "
                                     f"map at the observed input distance was checked"))
    if c.mstage is not None and _numbers(c.claim) is None:
        out.append(ReplayFinding("input_not_observed", c.measurement.site,
                                 f"{c.measurement.label}: its privacy map gives a "
                                 f"{type(c.claim).__name__}, not numbers: its map at the distance "
                                 f"observed was not compared with the claim"))
    if c.skipped:
        out.append(ReplayFinding("input_not_observed", None,
                                 f"{c.skipped} pair(s) were more than d_in = {c.d_in!r} apart once "
                                 f"converted to OpenDP's input (rounding): not checked"))
    return out


def _make_checker(obj: Any, *, d_in: Any, neighbours: Any, domain: Any, size: Any, seed: Any,
                  budget: Any, examples: Any, timeout: Any, name: Optional[str]) -> _Checker:
    from dpaudit.validation import check_count

    dp = importlib.import_module("opendp.mod")
    if not isinstance(obj, (dp.Transformation, dp.Measurement)):
        raise InvalidArgument.bad("transformation", obj, "an opendp Transformation or Measurement")
    deadline = None if timeout is None else time.monotonic() + float(timeout)
    return _Checker(obj, d_in=d_in, relation=None if neighbours is None else Neighbours.parse(neighbours),
                    domain=domain, size=size, seed=check_seed(seed),
                    budget=check_count(BUDGET if budget is None else budget, "budget", minimum=4),
                    examples=check_count(EXAMPLES if examples is None else examples, "examples"),
                    deadline=deadline, name=name or _label(obj))


def _run_check(obj: Any, **kw: Any) -> tuple[_Checker, dict, Optional[_Failed], float]:
    started = time.perf_counter()
    c = _make_checker(obj, **kw)
    failed = None
    phases: dict = {}
    if c.parts:
        try:
            phases = _search(c)
        except _Failed as exc:
            failed = exc
    if c.timed_out:
        phases["stopped"] = "time limit"
    return c, phases, failed, started


def _report(c: _Checker, phases: dict, failed: Optional[_Failed], started: float) -> StabilityReport:
    violations = () if c.violation is None else (_violation_finding(c, c.violation),)
    return StabilityReport(
        target=c.name, d_in=c.d_in, relation=c.relation, domain=c.domain, size=c.size,
        stages=tuple(s.to_record() for s in c.stages), measurement=c.mstage,
        violations=violations, notes=tuple(_notes(c)), invocations=c.invocations, pairs=c.pairs,
        seed=c.seed, budget=c.budget, elapsed_s=time.perf_counter() - started, claim=c.claim,
        error=None if failed is None else failed.message,
        failed_on=None if failed is None else tuple(failed.data.tolist()), phases=phases)


def check_stability(obj: Any, *, d_in: Any = None, neighbours: Any = None, domain: Any = None,
                    size: Any = None, seed: Any = 0, budget: Any = None, examples: Any = None,
                    timeout: Any = None, name: Optional[str] = None) -> StabilityReport:
    """Check the stability maps of an OpenDP Transformation (or of the transformations of a
    Measurement chain, and the measurement's map at the distance observed at its input) on
    neighbouring pairs (module docstring).

    ``d_in``: the input distance (default 1, or 2 for a sized dataset under the symmetric
    distance: one record replaced); ``neighbours`` pairs of another relation than the metric's
    (the claim map(d_in) stated for them); ``domain`` where records lie (default: the atom
    bounds, else [0, 1]); ``size`` records (default: the domain's size, else 10); ``budget`` the
    evaluations (one per dataset, 200), ``examples`` the hypothesis pairs at most (60);
    ``timeout`` seconds. Deterministic from ``seed``.
    """
    c, phases, failed, started = _run_check(obj, d_in=d_in, neighbours=neighbours, domain=domain,
                                            size=size, seed=seed, budget=budget, examples=examples,
                                            timeout=timeout, name=name)
    return _report(c, phases, failed, started)


def check_pair(obj: Any, dataset: Any, neighbour: Any, *, d_in: Any = None) -> StabilityReport:
    """The stability check of one pair (the ``reproduce`` line of a violation): 2 evaluations,
    4 when a violation is confirmed by a rerun."""
    started = time.perf_counter()
    domain = obj.input_domain
    vector = hasattr(domain, "element_domain")
    sized = vector and getattr(domain, "size", None) is not None
    n = max(len(np.asarray(dataset).reshape(-1)), len(np.asarray(neighbour).reshape(-1)))
    c = _make_checker(obj, d_in=d_in, neighbours=None, domain=None,
                      size=None if sized or not vector else n, seed=0, budget=4, examples=1,
                      timeout=None, name=None)
    failed = None
    try:
        c.violation = c.evaluate(Pair.of(dataset, neighbour, "given"))
    except _Failed as exc:
        failed = exc
    return _report(c, {}, failed, started)


# -- an OpenDP target audited by replay --------------------------------------------------------------

def opendp_of(spec: Any) -> Optional[dict]:
    """The OpenDP measurement behind an adapter's spec (``{"measurement", "d_in", "delta"}``), or
    None for any other spec."""
    info = getattr(getattr(spec, "func", None), TARGET_ATTRIBUTE, None)
    return info if isinstance(info, dict) and "measurement" in info else None


def replay_target(spec: Any, *, seed: Any = None, budget: Any = None, examples: Any = None,
                  timeout: Any = None, name: Optional[str] = None) -> ReplayResult:
    """The replay audit of an OpenDP target (``dpaudit.adapters.opendp.target``): the stability
    check of each transformation prefix of its chain, the measurement's privacy map at the
    distance observed at its input against the claim, and the ``no_noise_intercepted`` limit
    (OpenDP's noise is native code). REFUTED on a violation; else INCONCLUSIVE (the noise itself
    was not seen: audit it by sampling); ERROR when a transformation raised."""
    info = opendp_of(spec)
    if info is None:
        raise InvalidArgument.bad("spec", spec, "a target of dpaudit.adapters.opendp")
    m = info["measurement"]
    label = name or getattr(spec, "name", None) or _label(m)
    c, phases, failed, started = _run_check(m, d_in=info["d_in"], neighbours=spec.neighbours,
                                            domain=spec.domain, size=spec.size, seed=seed,
                                            budget=budget, examples=examples, timeout=timeout,
                                            name="measurement")
    findings: list[ReplayFinding] = []
    if c.violation is not None:
        findings.append(_violation_finding(c, c.violation))
    if c.timed_out and "time_limit" in KINDS:
        findings.append(ReplayFinding("time_limit", None,
                                      f"the time limit was reached after {c.pairs} pair(s): the "
                                      f"pairs it did not try are untested",
                                      values={"calls": c.invocations, "pairs": c.pairs, "budget": c.budget}))
    if c.parts:
        seen = (f"the outputs of its {len(c.parts)} transformation(s) were observed instead "
                f"(stability maps checked on {c.pairs} pair(s)) and the measurement's map applied to "
                f"the distance seen at its input")
    else:
        seen = "it has no transformation before the noise whose output could be observed"
    findings.append(ReplayFinding(
        "no_noise_intercepted", c.measurement.site if c.measurement else None,
        f"OpenDP draws its noise in native code ({c.measurement.label if c.measurement else 'the measurement'}) "
        f"from the operating system's generator: the replay cannot see or freeze it; {seen}; audit "
        f"the noise by sampling (dpaudit check without --replay)"))
    findings += _notes(c)
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    findings.sort(key=lambda f: rank[KINDS[f.kind][0]])
    if failed is not None:
        verdict = Verdict.ERROR
    elif any(f.severity == "violation" for f in findings):
        verdict = Verdict.REFUTED
    else:
        verdict = Verdict.INCONCLUSIVE
    best = max(c.stages, key=lambda s: s.max_ratio, default=None)
    accounting = {"d_in": jsonable(info["d_in"]), "claim": _show(c.claim),
                  "stages": [s.to_record() for s in c.stages], "measurement": c.mstage,
                  "score": None if best is None else best.max_ratio}
    if best is not None and best.max_pair is not None:
        accounting["pair"] = {"dataset": list(best.max_pair[0]), "neighbour": list(best.max_pair[1]),
                              "label": f"largest d_out / map(d_in) at {best.label}"}
    details = {"opendp": {"parts": [p.label for p in c.parts] +
                          ([c.measurement.label] if c.measurement else []),
                          "sites": [None if p.site is None else str(p.site) for p in c.parts],
                          "largest_ratio": c.score(), "skipped_pairs": c.skipped}}
    return ReplayResult(
        target=label, verdict=verdict, epsilon=spec.epsilon, delta=spec.delta,
        neighbours=spec.neighbours, domain=spec.domain, size=spec.size, findings=tuple(findings),
        accounting=accounting, calls=c.invocations, pairs=c.pairs,
        elapsed_s=time.perf_counter() - started, seed=c.seed,
        reproduce=(f"dpaudit.replay.opendp.replay_target(<the target {label}>, seed={c.seed})"),
        budget=c.budget, phases=phases, noise_intercepted=False,
        error=None if failed is None else f"{label} {failed.message}",
        failed_on=None if failed is None else tuple(failed.data.tolist()), libraries=("opendp",),
        details=details)


def replay_opendp(measurement: Any, *, d_in: Any = 1, delta: Optional[float] = None, size: Any = None,
                  domain: Any = None, neighbours: Any = None, seed: Any = None, budget: Any = None,
                  examples: Any = None, timeout: Any = None, name: Optional[str] = None) -> ReplayResult:
    """:func:`replay_target` of ``dpaudit.adapters.opendp.target(measurement, d_in=…, …)``."""
    from dpaudit.adapters.opendp import target

    spec = target(measurement, d_in=d_in, delta=delta, size=size, domain=domain,
                  neighbours=neighbours, name=name)
    return replay_target(spec, seed=seed, budget=budget, examples=examples, timeout=timeout,
                         name=name or spec.name)
