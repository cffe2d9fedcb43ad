"""Scores: maps from encoded outputs to one real number, so that every event is a level set.

An event is ``{y : s(y) ≥ t}``, ``{y : s(y) < t}`` or ``{y : lo ≤ s(y) < hi}`` for a score ``s``
(:mod:`dpaudit.estimators.events`). By the Neyman-Pearson lemma the most powerful events are the
level sets of the likelihood ratio p_D(y)/p_D'(y) (Neyman and Pearson 1933; DP-Sniper, Bichsel et
al. 2021, Thm 1), so the fitted scores below are estimates of that ratio, fitted on one half of
the selection split and thresholded on the other:

* :class:`Identity` / :class:`Coordinate`: the output (or one coordinate of a vector) itself;
* :class:`AtomRatio`: for discrete outputs, the estimated log-ratio of each atom
  (thresholding it gives DP-Sniper/StatDP's likelihood-ratio-ordered sets of atoms);
* :class:`PatternRatio`: the same for whole output vectors when they take few values (SVT);
* :class:`CellPatternRatio`: the same for vectors with real coordinates, each coordinate first
  reduced to its cell (a repeated value, or one of a few quantile bins of the others), so the
  joint law is seen where naive Bayes assumes independence (SVT3 releases a value that matters
  only together with the index of the query that crossed the threshold);
* :class:`NaiveBayes`: for vectors, Σ_j log-ratio of coordinate j (histogram per coordinate with
  atoms for repeated values), exact when the coordinates are independent (RAPPOR, noisy histograms).

Atoms and patterns never seen at fitting time score NaN and lie in no event. Log-ratios use a
prior of :data:`PRIOR` pseudo-counts per cell, which keeps rare cells from dominating.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Protocol

import numpy as np

from dpaudit.estimators.binning import Binner
from dpaudit.estimators.compact import BYTE_VALUES, compact, per_value, row_keys

__all__ = ["Identity", "Coordinate", "AtomRatio", "PatternRatio", "CellPatternRatio", "NaiveBayes",
           "OnColumns", "Discriminant", "Score", "fit_atoms", "fit_patterns", "fit_cell_patterns",
           "fit_naive_bayes", "fit_discriminant", "PRIOR", "log_ratio", "lookup", "row_bytes"]

#: pseudo-counts added to every cell of a fitted log-ratio
PRIOR = 1.0


def log_ratio(cd: np.ndarray, cp: np.ndarray) -> np.ndarray:
    """ln((c_D + PRIOR) / (c_D' + PRIOR)) per cell, from the counts ``cd`` under D and ``cp``
    under D' of equal-size samples: the fitted log-likelihood ratio of each cell."""
    return np.log((cd + PRIOR) / (cp + PRIOR))


class Score(Protocol):
    """What every score is: a map from encoded outputs to one real number each (module docstring),
    which says in words what it measures and records how to recompute it. The score classes of this
    module, :class:`~dpaudit.estimators.floats.FloatCellRatio`,
    :class:`~dpaudit.estimators.logistic.Logistic` and those of :mod:`dpaudit.estimators.joint`
    have these methods; an :class:`~dpaudit.estimators.events.Event` is a level set of one."""

    def __call__(self, y: np.ndarray) -> np.ndarray:
        """s(y) for each row (or value) of the encoded outputs ``y``: a float array of shape (n,),
        NaN where the output was never seen at fitting time (it lies in no event)."""
        ...

    def describe(self) -> str:
        """The score in words, as an event's text names it (``output``, ``output[2]``)."""
        ...

    def to_record(self) -> dict:
        """A JSON-ready dict: ``kind`` and the fitted numbers that recompute the score."""
        ...


@dataclass(frozen=True, slots=True)
class Identity:
    """s(y) = y, for real or integer scalar outputs."""

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return y

    def describe(self) -> str:
        return "output"

    def to_record(self) -> dict:
        return {"kind": "identity"}


@dataclass(frozen=True, slots=True)
class Coordinate:
    """s(y) = y[j] for vector outputs (``name``: the key of a dict output's coordinate j)."""

    j: int
    name: Any = None

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return y[:, self.j]

    def describe(self) -> str:
        return f"output[{self.j if self.name is None else repr(self.name)}]"

    def to_record(self) -> dict:
        return {"kind": "coordinate", "index": self.j,
                **({} if self.name is None else {"name": self.name})}


@dataclass(frozen=True, slots=True)
class IntBit:
    """s(y) = bit ``k`` of the integer output y (two's complement; NaN for a value that is not a
    finite integer): for integer outputs too many to list as atoms, a payload written into a bit
    of a noisy count is an event of probability 0 on one dataset that no threshold or interval
    of the value holds (chosen by :func:`dpaudit.estimators.floats.revealing_bits`)."""

    k: int

    def __call__(self, y: np.ndarray) -> np.ndarray:
        v = np.asarray(y, dtype=np.float64)
        ok = np.isfinite(v) & (np.abs(v) < 2.0 ** 63)
        bits = ((np.where(ok, v, 0.0).astype(np.int64) >> self.k) & 1).astype(np.float64)
        return np.where(ok, bits, np.nan)

    def describe(self) -> str:
        return f"bit {self.k} of the output as an integer (0 the last)"

    def to_record(self) -> dict:
        return {"kind": "integer-bit", "bit": self.k}


def lookup(keys: np.ndarray, values: np.ndarray, y: np.ndarray) -> np.ndarray:
    """values[k] where y == keys[k] (keys sorted), NaN where y is not a key."""
    if keys.size == 0:
        return np.full(y.shape[0], np.nan)
    i = np.clip(np.searchsorted(keys, y), 0, keys.size - 1)
    return np.where(keys[i] == y, values[i], np.nan)


@dataclass(frozen=True, slots=True, eq=False)
class AtomRatio:
    """s(y) = estimated ln(P[M(D) = y] / P[M(D') = y]) for each atom y seen at fitting time."""

    atoms: np.ndarray
    llr: np.ndarray

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return lookup(self.atoms, self.llr, y)

    def describe(self) -> str:
        return "estimated log-likelihood ratio of the output"

    def members(self, keep: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """The atoms whose score satisfies ``keep``."""
        return self.atoms[keep(self.llr)]

    def to_record(self) -> dict:
        return {"kind": "atom-ratio", "atoms": self.atoms.tolist(), "llr": self.llr.tolist()}


def row_bytes(y: np.ndarray) -> np.ndarray:
    """Each row of a 2-D float array as one sortable opaque value."""
    y = np.ascontiguousarray(y, dtype=float) + 0.0  # +0.0 turns -0.0 into 0.0
    return y.view(np.dtype((np.void, y.dtype.itemsize * y.shape[1]))).reshape(-1)


@dataclass(frozen=True, slots=True, eq=False)
class PatternRatio:
    """s(y) = estimated log-ratio of the whole output vector y (few distinct vectors).

    When the patterns are small integers, int8 rows (:func:`~dpaudit.estimators.compact.compact`)
    are matched as mixed-radix integers: coordinate j's value becomes its index among the
    patterns' values of that coordinate (or "unseen", which no pattern has)."""

    patterns: np.ndarray  # (k, d) float, in the sort order of their row view
    llr: np.ndarray
    _tables: Optional[tuple] = field(init=False, repr=False, default=None)  # (codes per column, mults)
    _keys: Optional[np.ndarray] = field(init=False, repr=False, default=None)
    _kllr: Optional[np.ndarray] = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        p = self.patterns
        if p.ndim != 2 or p.shape[0] == 0 or compact(p).dtype != np.int8:
            return
        tables, mults, mult = [], [], 1
        for j in range(p.shape[1]):
            vals = np.unique(p[:, j])
            code = np.searchsorted(vals, BYTE_VALUES)
            code = np.where(vals[np.minimum(code, vals.size - 1)] == BYTE_VALUES, code, vals.size)
            tables.append(code.astype(np.int64))
            mults.append(mult)
            mult *= vals.size + 1
            if mult >= 2**62:
                return
        object.__setattr__(self, "_tables", (tuple(tables), tuple(mults)))
        keys = self._int_keys(compact(p))
        order = np.argsort(keys, kind="stable")
        object.__setattr__(self, "_keys", keys[order])
        object.__setattr__(self, "_kllr", self.llr[order])

    def _int_keys(self, y: np.ndarray) -> np.ndarray:
        tables, mults = self._tables
        key = np.zeros(y.shape[0], dtype=np.int64)
        for j, (t, m) in enumerate(zip(tables, mults)):
            key += np.take(t, y[:, j].view(np.uint8)) * m
        return key

    def __call__(self, y: np.ndarray) -> np.ndarray:
        if self._tables is not None:
            c = compact(y)
            if c.dtype == np.int8:
                return lookup(self._keys, self._kllr, self._int_keys(c))
        return lookup(row_bytes(self.patterns), self.llr, row_bytes(y))

    def describe(self) -> str:
        return "estimated log-likelihood ratio of the output vector"

    def members(self, keep: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        return self.patterns[keep(self.llr)]

    def to_record(self) -> dict:
        return {"kind": "pattern-ratio", "patterns": self.patterns.tolist(), "llr": self.llr.tolist()}


#: a coordinate's cells build their :class:`~dpaudit.estimators.binning.Binner` (about half a
#: millisecond, which the binary searches it replaces repay after some 10⁴ values) only when first
#: asked for at least this many values at once: the many small samples of pair scoring, on vectors
#: of hundreds of coordinates, spent most of their time building Binners they hardly used
_BINNER_MIN = 1 << 14


@dataclass(frozen=True, slots=True, eq=False)
class _Cells:
    """A coordinate's cells: each repeated value (``atoms``, sorted) is a cell of its own, and the
    other values fall in the bins between the inner ``edges``: cell indices 0..size−1 (NaN in
    the last bin).

    One binary search per value: the breakpoints are the edges, every atom a and its successor
    a⁺ (the next double), so the piece [a, a⁺) holds a alone, and ``_map`` gives each piece's cell.
    """

    atoms: np.ndarray
    edges: np.ndarray
    _bounds: Optional[np.ndarray] = field(init=False, repr=False, default=None)
    _map: Optional[np.ndarray] = field(init=False, repr=False, default=None)
    _binner: Optional[Binner] = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        if self.atoms.size and not np.all(self.atoms < np.inf):  # +inf or NaN atoms: no successor
            return
        with np.errstate(over="ignore"):  # the successor of the largest double is +inf
            up = np.nextafter(self.atoms, np.inf)
        b = np.unique(np.concatenate([self.edges, self.atoms, up]))
        left = np.r_[-np.inf, b]  # piece i is [left[i], b[i]) (the last one [b[-1], ∞] and NaN)
        cell = np.searchsorted(self.edges, left, side="right") + self.atoms.size
        if self.atoms.size:
            i = np.clip(np.searchsorted(self.atoms, left), 0, self.atoms.size - 1)
            cell = np.where(self.atoms[i] == left, i, cell)
        object.__setattr__(self, "_bounds", b)
        object.__setattr__(self, "_map", cell.astype(np.intp))

    @property
    def size(self) -> int:
        return self.atoms.size + self.edges.size + 1

    def __call__(self, v: np.ndarray) -> np.ndarray:
        if v.dtype == np.int8:
            return per_value(self._cells, v)
        return self._cells(v)

    def _cells(self, v: np.ndarray) -> np.ndarray:
        if self._bounds is not None:
            if v.size < _BINNER_MIN:  # the binary search is cheaper than building the Binner
                return self._map[np.searchsorted(self._bounds, v, side="right")]
            if self._binner is None:
                object.__setattr__(self, "_binner", Binner(self._bounds, side="right"))
            return self._map[self._binner(v)]
        c = np.searchsorted(self.edges, v, side="right") + self.atoms.size
        if self.atoms.size:
            i = np.clip(np.searchsorted(self.atoms, v), 0, self.atoms.size - 1)
            c = np.where(self.atoms[i] == v, i, c)
        return c


def _cells_of(both: np.ndarray, max_bins: int) -> Optional[_Cells]:
    """Cells for a coordinate from its pooled fitting values (None when it is constant): values
    seen often are atoms, the rest go in about √n/4 quantile bins, at most ``max_bins``."""
    return _cells_from(np.unique(np.asarray(both, dtype=float), return_counts=True), max_bins)


def pooled_cells(yd: np.ndarray, yp: np.ndarray, max_bins: tuple) -> list:
    """Per column, its cells for each of ``max_bins`` from the pooled values of ``yd`` and ``yp``
    (:func:`fit_cell_patterns` and :func:`fit_naive_bayes` both start from them: the pooled
    column is sorted once for both, one column at a time)."""
    out = []
    for j in range(yd.shape[1]):
        if yd.dtype == yp.dtype == np.int8:
            uniq = byte_counts(yd[:, j], yp[:, j])
        else:
            uniq = np.unique(np.concatenate([yd[:, j], yp[:, j]]).astype(float), return_counts=True)
        out.append(tuple(_cells_from(uniq, b) for b in max_bins))
    return out


#: the byte codes 0..255 in the order of the int8 values they hold (−128 first)
_BYTE_ORDER = np.argsort(BYTE_VALUES, kind="stable")


def byte_counts(*cols: np.ndarray) -> tuple:
    """``np.unique(values, return_counts=True)`` of int8 columns pooled, as floats, from one
    256-bin histogram per column (no sort)."""
    h = sum(np.bincount(c.view(np.uint8), minlength=256) for c in cols)[_BYTE_ORDER]
    seen = h > 0
    return BYTE_VALUES[_BYTE_ORDER][seen], h[seen]


def _cells_from(uniq: tuple, max_bins: int) -> Optional[_Cells]:
    """:func:`_cells_of` from the pooled values' ``(distinct values, counts)``."""
    vals, counts = uniq
    n = int(counts.sum())
    if vals.size == 1:
        return None
    atom = np.ones(vals.size, dtype=bool) if vals.size <= 64 else counts >= max(20, 0.01 * n)
    atoms = vals[atom]
    # the other values, sorted (NaN, which equals no atom, among them): the quantiles of the
    # values themselves, found faster on a sorted array
    other = ~atom | np.isnan(vals)
    rest = np.repeat(vals[other], counts[other])
    if rest.size:
        nb = int(np.clip(np.sqrt(rest.size) / 4, 2, max_bins))
        edges = np.unique(np.quantile(rest, np.linspace(0, 1, nb + 1)[1:-1]))
    else:
        edges = np.empty(0)
    return _Cells(atoms, edges)


@dataclass(frozen=True, slots=True, eq=False)
class _CoordModel:
    cells: _Cells
    llr: np.ndarray        # one log-ratio per cell

    def __call__(self, v: np.ndarray) -> np.ndarray:
        return per_value(lambda u: self.llr[self.cells(u)], v)

    def to_record(self) -> dict:
        return {"atoms": self.cells.atoms.tolist(), "edges": self.cells.edges.tolist(),
                "llr": self.llr.tolist()}


def _radix(cells: tuple) -> Optional[tuple]:
    """The multipliers Π_{i<j} size_i of the mixed-radix pattern key (constant coordinates have
    one cell), or None when the number of patterns does not fit in an int64."""
    mult, out = 1, []
    for c in cells:
        out.append(mult)
        mult *= 1 if c is None else c.size
    return tuple(out) if mult < 2**62 else None


@dataclass(frozen=True, slots=True, eq=False)
class CellPatternRatio:
    """s(y) = estimated log-ratio of y's cell pattern: coordinate j of y replaced by its cell
    index under ``cells[j]`` (constant coordinates by 0), the resulting vector scored by
    ``inner``, a :class:`PatternRatio` over cell patterns."""

    cells: tuple
    inner: PatternRatio
    # the patterns as mixed-radix integers (sorted) and their log-ratios; None when the number of
    # possible patterns overflows an int64 (then patterns are matched as rows)
    _keys: Optional[np.ndarray] = field(init=False, repr=False, default=None)
    _llr: Optional[np.ndarray] = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        if _radix(self.cells) is None:
            return
        keys = self.key_of_codes(self.inner.patterns)
        order = np.argsort(keys, kind="stable")
        object.__setattr__(self, "_keys", keys[order])
        object.__setattr__(self, "_llr", self.inner.llr[order])

    def codes(self, y: np.ndarray) -> np.ndarray:
        cols = [np.zeros(y.shape[0]) if c is None else c(y[:, j]).astype(float)
                for j, c in enumerate(self.cells)]
        return np.column_stack(cols) if cols else np.zeros((y.shape[0], 0))

    def keys(self, y: np.ndarray) -> np.ndarray:
        """Each row's cell pattern as one integer Σ_j code_j · Π_{i<j} size_i (int64)."""
        y = compact(y)
        key = np.zeros(y.shape[0], dtype=np.int64)
        for j, (c, mult) in enumerate(zip(self.cells, _radix(self.cells))):
            if c is not None:
                key += per_value(lambda u: c(u) * mult, y[:, j])
        return key

    def key_of_codes(self, codes: np.ndarray) -> np.ndarray:
        """:meth:`keys` of rows already reduced to their cell codes."""
        codes = np.asarray(codes, dtype=np.int64)
        key = np.zeros(codes.shape[0], dtype=np.int64)
        for j, mult in enumerate(_radix(self.cells)):
            key += codes[:, j] * mult
        return key

    def __call__(self, y: np.ndarray) -> np.ndarray:
        if self._keys is None:
            return self.inner(self.codes(y))
        return lookup(self._keys, self._llr, self.keys(y))

    def describe(self) -> str:
        return "estimated log-likelihood ratio of the output vector's cell pattern"

    def to_record(self) -> dict:
        return {"kind": "cell-pattern-ratio",
                "cells": [None if c is None else {"atoms": c.atoms.tolist(), "edges": c.edges.tolist()}
                          for c in self.cells],
                "patterns": self.inner.patterns.tolist(), "llr": self.inner.llr.tolist()}


@dataclass(frozen=True, slots=True, eq=False)
class NaiveBayes:
    """s(y) = Σ_j ŝ_j(y_j), ŝ_j the estimated log-ratio of coordinate j's cell (atom or bin)."""

    coords: tuple

    def __call__(self, y: np.ndarray) -> np.ndarray:
        y = compact(y)
        total = np.zeros(y.shape[0])
        for j, m in enumerate(self.coords):
            if m is not None:
                total += m(y[:, j])
        return total

    def describe(self) -> str:
        return "naive-Bayes log-likelihood-ratio score of the output vector"

    def to_record(self) -> dict:
        return {"kind": "naive-bayes",
                "coordinates": [None if m is None else m.to_record() for m in self.coords]}


@dataclass(frozen=True, slots=True, eq=False)
class OnColumns:
    """s(y) = inner(y restricted to ``columns``): a score fitted on a few coordinates of a long
    vector, those chosen by screening its fitting rows (their marginal laws differ most)."""

    inner: Score
    columns: np.ndarray

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return self.inner(np.asarray(y)[:, self.columns])

    def describe(self) -> str:
        shown = ", ".join(str(int(j)) for j in self.columns[:8])
        more = ", …" if self.columns.size > 8 else ""
        return f"{self.inner.describe()}, on coordinates {shown}{more} ({self.columns.size} in all)"

    def to_record(self) -> dict:
        return {"kind": "on-columns", "columns": self.columns.tolist(), "score": self.inner.to_record()}


@dataclass(frozen=True, slots=True, eq=False)
class Discriminant:
    """s(y) = Σ_j w_j·(y_j − c_j): the linear discriminant of independent coordinates (Fisher's
    rule with a diagonal covariance, w_j = (μ_j − μ'_j)/σ_j², c_j the pooled mean; Bickel and
    Levina 2004 show it beats the full-covariance rule when coordinates outnumber samples). One
    pass over the rows, whatever the length: the score of a many-coordinate output whose every
    coordinate moves a little. Coordinates with no spread or non-finite values weigh nothing."""

    columns: np.ndarray   # the coordinates that weigh something (a NaN elsewhere changes nothing)
    weights: np.ndarray
    centre: np.ndarray

    def __call__(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y)
        out = np.empty(y.shape[0])
        rows = max(1, (1 << 16) // max(1, self.columns.size))
        for i in range(0, y.shape[0], rows):  # a block of rows at a time (no whole-sample temporary)
            out[i:i + rows] = (y[i:i + rows, self.columns] - self.centre) @ self.weights
        return out

    def describe(self) -> str:
        return "linear discriminant score of the output vector"

    def to_record(self) -> dict:
        return {"kind": "discriminant", "columns": self.columns.tolist(),
                "weights": self.weights.tolist(), "centre": self.centre.tolist()}


def fit_discriminant(stats_d: tuple, stats_p: tuple) -> Discriminant:
    """:class:`Discriminant` from per-column (mean, variance) of the fitting rows of D and D'."""
    (md, vd), (mp, vp) = stats_d[:2], stats_p[:2]
    var = 0.5 * (vd + vp)
    cols = np.flatnonzero(np.isfinite(md) & np.isfinite(mp) & np.isfinite(var) & (var > 0))
    return Discriminant(cols, (md[cols] - mp[cols]) / var[cols], 0.5 * (md[cols] + mp[cols]))


# ---------------------------------------------------------------------------------------------
# fitting

def fit_atoms(yd: np.ndarray, yp: np.ndarray) -> AtomRatio:
    """Per-atom log-ratios from equal-size samples of D and D'."""
    atoms, inv = np.unique(np.concatenate([yd, yp]), return_inverse=True)
    cd = np.bincount(inv[: yd.size], minlength=atoms.size).astype(float)
    cp = np.bincount(inv[yd.size:], minlength=atoms.size).astype(float)
    return AtomRatio(atoms, log_ratio(cd, cp))


def fit_patterns(yd: np.ndarray, yp: np.ndarray) -> PatternRatio:
    """Per-vector log-ratios from equal-size samples of D and D'."""
    both = np.concatenate([yd, yp])
    keys, first, inv = np.unique(row_keys(both), return_index=True, return_inverse=True)
    cd = np.bincount(inv[: yd.shape[0]], minlength=keys.size).astype(float)
    cp = np.bincount(inv[yd.shape[0]:], minlength=keys.size).astype(float)
    patterns = both[first] + 0.0
    order = np.argsort(row_bytes(patterns), kind="stable")  # int8 rows sort by bytes: float row order
    return PatternRatio(patterns[order], log_ratio(cd, cp)[order])


def _fit_coordinate(vd: np.ndarray, vp: np.ndarray, max_bins: int,
                    cells: Any = False) -> Optional[_CoordModel]:
    if cells is False:
        cells = _cells_of(np.concatenate([vd, vp]), max_bins)
    if cells is None:
        return None
    cd = np.bincount(cells(vd), minlength=cells.size).astype(float)
    cp = np.bincount(cells(vp), minlength=cells.size).astype(float)
    return _CoordModel(cells, log_ratio(cd, cp))


def fit_cell_patterns(yd: np.ndarray, yp: np.ndarray, max_bins: int = 16,
                      max_patterns: Optional[int] = None,
                      cells: Optional[tuple] = None) -> Optional[CellPatternRatio]:
    """Cells per coordinate from the pooled samples, then per-cell-pattern log-ratios; None when
    there are more than ``max_patterns`` distinct cell patterns (seen on a prefix when it can be)."""
    # one pooled column at a time (the pooled rows are never copied whole)
    if cells is None:
        cells = tuple(_cells_of(np.concatenate([yd[:, j], yp[:, j]]), max_bins) for j in range(yd.shape[1]))
    probe = CellPatternRatio(cells, PatternRatio(np.zeros((0, yd.shape[1])), np.zeros(0)))
    mult = _radix(cells)
    if mult is None or not cells:
        if max_patterns is not None and cells:  # too many patterns shows on a prefix already
            head = np.concatenate([probe.codes(yd[: 2 * max_patterns]), probe.codes(yp[: 2 * max_patterns])])
            if np.unique(row_keys(head)).size > max_patterns:
                return None
        sc = CellPatternRatio(cells, fit_patterns(probe.codes(yd), probe.codes(yp)))
        return None if max_patterns is not None and sc.inner.llr.size > max_patterns else sc
    # the same PatternRatio as fit_patterns on the code rows, counted on integer keys
    if max_patterns is not None:  # too many patterns shows on a prefix already
        m = 2 * max_patterns
        if np.unique(np.concatenate([probe.keys(yd[:m]), probe.keys(yp[:m])])).size > max_patterns:
            return None
    both_keys = np.concatenate([probe.keys(yd), probe.keys(yp)])
    keys, inv = np.unique(both_keys, return_inverse=True)
    if max_patterns is not None and keys.size > max_patterns:
        return None
    cd = np.bincount(inv[: yd.shape[0]], minlength=keys.size).astype(float)
    cp = np.bincount(inv[yd.shape[0]:], minlength=keys.size).astype(float)
    sizes = [1 if c is None else c.size for c in cells]
    codes = np.column_stack([(keys // m) % k for m, k in zip(mult, sizes)]).astype(float) + 0.0
    order = np.argsort(row_bytes(codes), kind="stable")  # the row order fit_patterns gives
    return CellPatternRatio(cells, PatternRatio(codes[order], log_ratio(cd, cp)[order]))


def fit_naive_bayes(yd: np.ndarray, yp: np.ndarray, max_bins: int = 32,
                    cells: Optional[tuple] = None) -> NaiveBayes:
    """Per-coordinate histogram log-ratios (constant coordinates are left out); ``cells``: the
    columns' cells (:func:`pooled_cells` at ``max_bins``), when computed already."""
    return NaiveBayes(tuple(_fit_coordinate(yd[:, j], yp[:, j], max_bins,
                                            False if cells is None else cells[j])
                            for j in range(yd.shape[1])))
