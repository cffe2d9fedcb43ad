"""The general sensitivity-preprocessing function (Cummings and Durfee 2020, Definition 3.1, Theorem 3.3) [R, docs/math.md#spf-definition].

Individual model (docs/math.md#individual-model): individual i ∈ {0, …, n−1} has a fixed record ``records[i]``; a
database is a subset D of individuals; i-neighbours are D and D ∪ {i}. Given any f and individual
sensitivities Δ_i ≥ 0, f̂ is built from the empty set upwards:

    f̂(∅) = f(∅), or the analyst's centre c when given (Remark 3.2)
    U(D) = min_{i∈D} (f̂(D∖i) + Δ_i),   L(D) = max_{i∈D} (f̂(D∖i) − Δ_i)
    f̂(D) = clamp(f(D), L(D), U(D))

Lemma 3.5: L ≤ U always, so f̂ is defined everywhere and ``|f̂(D ∪ {i}) − f̂(D)| ≤ Δ_i``.
Theorem 3.3: memoise over all 2^n subsets in increasing size, O(2^n (T_f + n)). Here the DP runs
one numpy pass per (size, individual), vectorised over all subsets of that size, so n = 18 takes
well under a second once f is known on every subset. A vector-valued f is preprocessed
coordinate by coordinate (Remark 3.4); this is also the engine of the 2-D ℓ1 version (``two_d``).

This implementation is the test oracle for every efficient one (docs/math.md#spf-definition, #test-oracles). Floating point:
each f̂(D) is a clamp to sums ``f̂(D∖i) ± Δ_i`` computed in double precision, so the sensitivity
bound holds up to a few ulps of those sums.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Callable, Iterable, Optional

import numpy as np

from dpaudit.claims import SensitivityBound
from dpaudit.errors import InvalidArgument

from .statistics import check_data
from .subsets import MAX_INDIVIDUALS, by_size, check_subset, members, membership, population_mask

__all__ = ["SubsetTable", "spf_table", "check_deltas", "GeneralSPF"]


@dataclass(frozen=True, slots=True, eq=False)
class SubsetTable:
    """f and its preprocessed f̂ on every subset of n individuals (index = bitmask of the subset).

    ``f_values[m]``, ``values[m]``, ``lower[m]``, ``upper[m]`` have shape (2^n, d): f(D), f̂(D),
    L(D), U(D) for D = members(m) (L(∅) = −∞, U(∅) = +∞). Row 0 of ``f_values`` holds f̂(∅)
    (the centre when one was given), which is the convention of the Lemma 3.6 bound: f(∅) := f̂(∅).
    ``scalar`` is True when f returns numbers (then :meth:`value` returns a float).
    """

    records: np.ndarray
    deltas: np.ndarray
    centre: np.ndarray
    f_values: np.ndarray
    values: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    scalar: bool

    @property
    def n(self) -> int:
        return int(self.deltas.size)

    @property
    def full(self) -> int:
        """The mask of the whole population {0, …, n−1}."""
        return (1 << self.n) - 1

    def _out(self, row: np.ndarray) -> Any:
        return float(row[0]) if self.scalar else row.copy()

    def value(self, subset: Iterable[int] | int) -> Any:
        """f̂(D) for D given as a set of individuals or a bitmask."""
        return self._out(self.values[check_subset(subset, self.n)])

    def f_value(self, subset: Iterable[int] | int) -> Any:
        """f(D) (f̂(∅) at ∅, see the class docstring)."""
        return self._out(self.f_values[check_subset(subset, self.n)])

    def errors(self, norm: str = "l1") -> np.ndarray:
        """``‖f(D) − f̂(D)‖`` for every mask (absolute value for scalar f)."""
        return _norm(self.f_values - self.values, norm)

    def members(self, mask: int) -> tuple[int, ...]:
        return members(mask)


def _norm(diff: np.ndarray, norm: str) -> np.ndarray:
    if norm == "l1":
        return np.abs(diff).sum(axis=-1)
    if norm == "linf":
        return np.abs(diff).max(axis=-1)
    if norm == "l2":
        return np.sqrt((diff * diff).sum(axis=-1))
    raise InvalidArgument.bad("norm", norm, "one of l1, l2, linf")


def check_deltas(deltas: Any, n: int, name: str = "deltas") -> np.ndarray:
    """Δ: one finite number ≥ 0 (uniform) or n of them (individual Δ_i)."""
    try:
        arr = np.array(deltas, dtype=float)
    except (TypeError, ValueError):
        raise InvalidArgument.bad(name, deltas, f"a number or a sequence of {n} numbers") from None
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise InvalidArgument.bad(name, deltas, f"a number or a sequence of {n} numbers (one per individual)")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise InvalidArgument.bad(name, deltas, "finite and >= 0")
    return arr


def _check_records(records: Any) -> np.ndarray:
    arr = np.asarray(records)
    if arr.ndim == 0:
        raise InvalidArgument.bad("records", records, "a sequence with one record per individual")
    n = arr.shape[0]
    if n > MAX_INDIVIDUALS:
        raise InvalidArgument.bad("records", f"{n} individuals",
                                  f"at most {MAX_INDIVIDUALS} individuals (the table has 2^n rows)")
    return arr


def _call(f: Callable, *args: Any, where: str) -> Any:
    try:
        return f(*args)
    except Exception as exc:  # user code: one clear line, cause chained
        msg = str(exc).splitlines()[0] if str(exc) else ""
        raise InvalidArgument(f"f raised {type(exc).__name__}" + (f": {msg}" if msg else "")
                              + f" on {where}") from exc


def _where(m: int) -> str:
    return "D = {" + ", ".join(str(i) for i in members(m)) + "}"


def _floats(out: Any, where: str) -> np.ndarray:
    try:
        return np.asarray(out, dtype=float)
    except (TypeError, ValueError):
        raise InvalidArgument(f"f returned {out!r} on {where}; f must return numbers") from None


def _evaluate(f: Callable, records: np.ndarray, centre: Any, batched: bool,
              dim: int | None = None) -> tuple[np.ndarray, bool]:
    """f on every subset, shape (2^n, d); row 0 is f̂(∅). ``dim`` is the output dimension when the
    caller knows it (it decides d when f is never called: the empty population with a centre)."""
    n = records.shape[0]
    size = 1 << n
    if batched:
        vals = _floats(_call(f, records, membership(n), where="the batch of all subsets"), "the batch")
        if vals.shape[:1] != (size,) or vals.ndim > 2:
            raise InvalidArgument.bad("f", f"batch output of shape {vals.shape}",
                                      f"an array of shape ({size},) or ({size}, d) from the batched f")
        scalar = vals.ndim == 1
        vals = vals.reshape(size, -1).copy()
    else:
        B = membership(n)
        outs = [None if m == 0 and centre is not None else
                _floats(_call(f, records[B[m]], where=_where(m)), _where(m)) for m in range(size)]
        probe = next((o for o in outs if o is not None), None)
        if probe is None:                       # only ∅, whose value is the centre
            probe = np.zeros(()) if dim is None and np.ndim(centre) == 0 else np.zeros(dim or np.size(centre))
        scalar = probe.ndim == 0
        d = 1 if scalar else int(probe.size)
        vals = np.full((size, d), np.nan)
        for m, v in enumerate(outs):
            if v is None:
                continue
            if v.shape != probe.shape:
                raise InvalidArgument(f"f returned an output of shape {v.shape} on {_where(m)} but "
                                      f"{probe.shape} elsewhere; f must have one output shape")
            vals[m] = v.reshape(-1)
    if centre is not None:
        try:
            c = np.array(centre, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            c = np.array([np.nan])
        if c.size == 1 and vals.shape[1] > 1:
            c = np.full(vals.shape[1], c[0])
        if c.size != vals.shape[1] or not np.all(np.isfinite(c)):
            raise InvalidArgument.bad("centre", centre, f"{vals.shape[1]} finite number(s), like f's output")
        vals[0] = c
    elif not np.all(np.isfinite(vals[0])):
        raise InvalidArgument(f"f(∅) = {vals[0].tolist()} is undefined; pass centre=c, the value of "
                              f"f̂(∅) (Cummings and Durfee 2020, Remark 3.2), e.g. the middle of the data domain")
    bad = ~np.all(np.isfinite(vals), axis=1)
    if bad.any():
        m = int(np.flatnonzero(bad)[0])
        raise InvalidArgument(f"f returned {vals[m].tolist()} on {_where(m)}; "
                              f"f must be finite on every non-empty database")
    return vals, scalar


def _fill(fv: np.ndarray, deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The DP of Theorem 3.3 on a (2^n, d) table of f (row 0 = f̂(∅)); coordinatewise clamp."""
    n = deltas.size
    values = np.empty_like(fv)
    lower = np.full_like(fv, -np.inf)
    upper = np.full_like(fv, np.inf)
    values[0] = fv[0]
    groups = by_size(n)
    for k in range(1, n + 1):
        g = groups[k]
        lo = np.full((g.size, fv.shape[1]), -np.inf)
        hi = np.full((g.size, fv.shape[1]), np.inf)
        for i in range(n):
            has = ((g >> i) & 1).astype(bool)
            parent = values[g[has] ^ (1 << i)]
            hi[has] = np.minimum(hi[has], parent + deltas[i])
            lo[has] = np.maximum(lo[has], parent - deltas[i])
        # np.minimum(np.maximum(.)) picks U if rounding ever makes L exceed U by an ulp
        values[g] = np.minimum(np.maximum(fv[g], lo), hi)
        lower[g], upper[g] = lo, hi
    return values, lower, upper


def spf_table(f: Callable, records: Any, deltas: Any, *, centre: Any = None,
              batched: bool = False) -> SubsetTable:
    """Preprocess f over every subset of the population ``records`` (Definition 3.1, Theorem 3.3).

    ``f(records_of_D)`` gets the records of D in increasing individual order (``records[mask]``)
    and returns a number or a fixed-length vector. With ``batched=True`` it is called once as
    ``f(records, B)`` with the boolean membership matrix ``B`` of shape (2^n, n) and returns
    shape (2^n,) or (2^n, d): much faster for n ≥ 14. ``deltas`` is Δ (uniform) or (Δ_0, …, Δ_{n−1}).
    ``centre`` is f̂(∅) when f(∅) is undefined (mean, median: Cummings and Durfee (2020) Remark 3.2); when given it
    replaces f(∅) everywhere.
    """
    recs = _check_records(records)
    ds = check_deltas(deltas, recs.shape[0])
    if not callable(f):
        raise InvalidArgument.bad("f", f, "a callable")
    fv, scalar = _evaluate(f, recs, centre, bool(batched))
    values, lower, upper = _fill(fv, ds)
    return SubsetTable(records=recs, deltas=ds, centre=fv[0].copy(), f_values=fv, values=values,
                       lower=lower, upper=upper, scalar=scalar)


def _check_ids(ids: Any, size: int, universe: int | None) -> np.ndarray:
    try:
        arr = np.asarray(ids)
        ok = arr.ndim == 1 and arr.size == size and (arr.size == 0 or np.issubdtype(arr.dtype, np.integer))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise InvalidArgument.bad("ids", ids, f"{size} integer identities, one per record of data")
    arr = arr.astype(np.int64)
    if arr.size and (arr.min() < 0 or (universe is not None and arr.max() >= universe)):
        raise InvalidArgument.bad("ids", ids.tolist() if hasattr(ids, "tolist") else ids,
                                  f"identities in 0..{(universe or 1) - 1}")
    if np.unique(arr).size != arr.size:
        raise InvalidArgument.bad("ids", ids, "distinct identities (a database is a set of individuals)")
    return arr


@dataclass(frozen=True, slots=True, eq=False)
class _IndividualModel:
    """Fields, claim and evaluation shared by :class:`GeneralSPF` and the 2-D :class:`~.two_d.TwoDimSPF`
    (each names its table builder in :meth:`_builder`).

    Two ways to say who is in the database (docs/math.md#individual-model, individual model):

    * **on the fly** (no ``population``): ``spf(data, ids)`` with ``data`` the records of the
      members and ``ids`` their identities; Δ_i = ``deltas[ids[k]]``. f̂(D) is computed by the
      general algorithm over the 2^|D| subsets of D, from D's own records: it depends only on D,
      so the claim holds whatever records the universe assigns. With a uniform Δ the identities
      do not matter and ``spf(data)`` treats every record as its own individual.
    * **fixed population**: individual i holds ``population[i]``; the table of all 2^n subsets is
      computed once. ``spf(data)`` maps records back to individuals by value (equal records to
      their holders in increasing index order, :func:`~.subsets.population_mask`);
      ``spf(data, ids)`` checks that ``data`` are those individuals' records.
    """

    f: Callable
    deltas: Any
    _: KW_ONLY
    centre: Any = None
    batched: bool = False
    population: Any = None
    table: Optional[SubsetTable] = field(init=False, repr=False)
    sensitivity: SensitivityBound = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not callable(self.f):
            raise InvalidArgument.bad("f", self.f, "a callable")
        self._setup(self._builder(), "l1")

    def _builder(self) -> Callable:
        raise NotImplementedError

    def _setup(self, build: Callable, norm: str) -> None:
        d = self.deltas
        uniform = np.ndim(d) == 0
        if self.population is not None:
            pop = check_data(self.population, "population")
            table = build(self.f, pop, d, centre=self.centre, batched=self.batched)
            ds = tuple(table.deltas.tolist())
            object.__setattr__(self, "population", pop)
            object.__setattr__(self, "table", table)
            bound = SensitivityBound(max(ds, default=0.0), individual=ds, norm=norm)
        else:
            ds = check_deltas(d, 1 if uniform else len(d))
            ds = float(ds[0]) if uniform else tuple(ds.tolist())
            object.__setattr__(self, "table", None)
            bound = (SensitivityBound(ds, norm=norm) if uniform
                     else SensitivityBound(max(ds, default=0.0), individual=ds, norm=norm))
        object.__setattr__(self, "deltas", ds)
        object.__setattr__(self, "sensitivity", bound)

    def _value(self, data: Any, ids: Any, build: Callable) -> Any:
        if self.table is not None:
            if ids is None:
                return self.table.value(population_mask(self.population, data))
            x = check_data(data)
            who = _check_ids(ids, x.size, self.table.n)
            if not np.array_equal(self.population[who], x):
                raise InvalidArgument("data must be the population records of ids "
                                      f"(population[ids] = {self.population[who].tolist()}, got {x.tolist()})")
            return self.table.value(who.tolist())
        x = check_data(data)
        if isinstance(self.deltas, tuple):
            if ids is None:
                raise InvalidArgument("individual Δ_i need identities: call spf(data, ids), or build "
                                      "the function with a population")
            deltas = np.asarray(self.deltas)[_check_ids(ids, x.size, len(self.deltas))]
        else:
            deltas = self.deltas
        return build(self.f, x, deltas, centre=self.centre, batched=self.batched).value(range(x.size))

    def at(self, subset: Iterable[int] | int) -> Any:
        """f̂ of a database of the fixed population, given as a set of individuals or a bitmask."""
        if self.table is None:
            raise InvalidArgument("at() needs a fixed population; call spf(data, ids) instead")
        return self.table.value(subset)


@dataclass(frozen=True, slots=True, eq=False)
class GeneralSPF(_IndividualModel):
    """The general preprocessed f (Definition 3.1) as a function of a dataset: ``spf(data[, ids])``.

    ``deltas`` is Δ (uniform) or (Δ_0, …, Δ_{N−1}) by identity; ``centre`` is f̂(∅) when f(∅) is
    undefined; ``batched`` as in :func:`spf_table`. Identities and records follow
    :class:`_IndividualModel`: on the fly with ``spf(data, ids)``, or a fixed ``population``.

    Claim (Lemma 3.5): ``|f̂(D ∪ {i}) − f̂(D)| ≤ Δ_i`` for every i and D ∌ i; ``sensitivity`` states
    it as a :class:`~dpaudit.claims.SensitivityBound`: ``individual = (Δ_i)`` with ``bound = max Δ_i``
    (the global add-remove sensitivity it implies), or just ``bound = Δ`` for a uniform Δ without a
    population (then f̂ of any multiset of records, for f symmetric in the records).
    """

    def _builder(self) -> Callable:
        return spf_table

    def __post_init__(self) -> None:
        _IndividualModel.__post_init__(self)
        if self.table is not None and not self.table.scalar:
            raise InvalidArgument.bad("f", "a vector-valued f", "real-valued (use TwoDimSPF for f into ℝ²)")

    @property
    def name(self) -> str:
        return f"spf-general({getattr(self.f, '__name__', 'f')})"

    def __call__(self, data: Any, ids: Any = None) -> float:
        out = self._value(data, ids, spf_table)
        if not isinstance(out, float):
            raise InvalidArgument.bad("f", "a vector-valued f", "real-valued (use TwoDimSPF for f into ℝ²)")
        return out
