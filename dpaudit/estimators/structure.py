"""The pattern/real split of outputs that mix a discrete and a real part, fitted on a sample.

A row y (a MIXED tuple or list, or a vector with sentinel codes) is split into a discrete
*pattern* K — which positions hold which atom (an index, a sentinel, "absent") and which hold a
real value — and its real values R = (r_0, r_1, …) in order, so that p(K, R) = p(K)·p(R | K)
(:mod:`dpaudit.estimators.joint` builds its events on this factorisation). A value is an atom
of its column when it repeats (:func:`_is_atom`), NaN always; the structure is fitted on the
first half of the selection split, like every fitted score, and a row whose pattern was never
seen gets no pattern id. :class:`Patterns` holds the fitted patterns with their counts under D
and D'; signatures are small integer codes matched as int64 keys. Everything is vectorised over
rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from dpaudit.estimators.scores import byte_counts, lookup, row_bytes

__all__ = ["Structure", "Patterns", "fit_structure", "fit_pattern_counts"]

_REAL, _ABSENT = -1.0, -2.0
#: rows signed at a time
_BLOCK = 1 << 13


def _is_atom(counts: np.ndarray, n: int, distinct: int) -> np.ndarray:
    """A value is an atom of its column when it repeats: seen ≥ max(3, n/1000) times, or when
    the column takes at most 16 values."""
    return (counts >= max(3.0, n / 1000.0)) | (distinct <= 16)


@dataclass(frozen=True, slots=True, eq=False)
class Structure:
    """How a row splits into a pattern and real values (module docstring). ``atoms[j]``: the
    sorted atoms of column j (None: every value of column j is an atom, e.g. a skeleton code);
    ``shown``: the first column of the elements (2 for MIXED rows, 0 for vectors)."""

    atoms: tuple
    shown: int
    reals_seen: bool = True  # some fitting value of some column is not an atom

    def signature(self, y: np.ndarray) -> np.ndarray:
        """The pattern of each row: per column its value (forced atoms), the index of its atom,
        −1 for a real value, −2 for NaN."""
        if self.atoms and all(a is not None and a.size <= 4 for a in self.atoms):
            return self._signature_few(np.asarray(y, dtype=float))
        out = np.empty(y.shape, dtype=self._code_type(y))
        for j, at in enumerate(self.atoms):
            v = y[:, j]
            if at is None:
                out[:, j] = v
                continue
            col = np.full(v.shape, _REAL)
            if 0 < at.size <= 4:  # a few atoms: compared one by one (no binary search)
                for i, a in enumerate(at):
                    col = np.where(v == a, float(i), col)
            elif at.size:
                i = np.clip(np.searchsorted(at, v), 0, at.size - 1)
                col = np.where(at[i] == v, i.astype(float), col)
            out[:, j] = np.where(np.isnan(v), _ABSENT, col)
        return out

    def _code_type(self, y: np.ndarray) -> np.dtype:
        """The smallest of int8, int16, int32 that holds every code of :meth:`signature` (the same
        numbers, in an eighth to a half of the memory of float codes), or float64 when a forced
        column holds values that are not such integers."""
        forced = [y[:, j] for j, at in enumerate(self.atoms) if at is None]
        most = max([a.size for a in self.atoms if a is not None] + [0])
        with np.errstate(invalid="ignore"):
            for t in (np.int8, np.int16, np.int32):
                if most <= np.iinfo(t).max and all(np.array_equal(v.astype(t), v) for v in forced):
                    return np.dtype(t)
        return np.dtype(float)

    def _signature_few(self, y: np.ndarray) -> np.ndarray:
        """:meth:`signature` when every column has at most 4 atoms: all columns at once, as int8
        codes (the same numbers), a block of rows at a time so the temporaries stay in cache."""
        at = np.full((4, len(self.atoms)), np.nan)  # NaN pads equal nothing
        for j, a in enumerate(self.atoms):
            at[: a.size, j] = a
        out = np.empty(y.shape, dtype=np.int8)
        real, absent = np.int8(_REAL), np.int8(_ABSENT)
        for r in range(0, y.shape[0], _BLOCK):
            blk = y[r:r + _BLOCK]
            o = np.full(blk.shape, real)
            for i in range(4):
                o = np.where(blk == at[i], np.int8(i), o)
            out[r:r + _BLOCK] = np.where(np.isnan(blk), absent, o)
        return out

    def reals(self, y: np.ndarray, sig: np.ndarray, k: int) -> np.ndarray:
        """r_0 .. r_{k−1} of each row (NaN where a row has fewer real values); a block of rows
        at a time, so the per-element temporaries stay small."""
        out = np.full((y.shape[0], k), np.nan)
        for r in range(0, y.shape[0], _BLOCK):
            blk = slice(r, r + _BLOCK)
            real = sig[blk] == _REAL
            rank = np.cumsum(real, axis=1, dtype=np.int16 if sig.shape[1] < 2**15 else np.int64)
            rows = np.arange(real.shape[0])
            yb = y[blk]
            for t in range(k):
                hit = real & (rank == t + 1)
                col = np.argmax(hit, axis=1)
                out[blk, t] = np.where(hit[rows, col], yb[rows, col], np.nan)
        return out

    def show(self, row: np.ndarray, sig: np.ndarray) -> str:
        """A pattern in words: ``(10, ·)``, ``(-1000, ·, -2000)``, ``None`` (· a real value)."""
        if self.shown:
            if row[1] == 0:
                return "None / empty"
            row, sig = row[self.shown:self.shown + int(row[1])], sig[self.shown:self.shown + int(row[1])]
        parts = ["·" if s == _REAL else f"{v:g}" for v, s in zip(row, sig) if s != _ABSENT]
        return "(" + ", ".join(parts) + ")"


def fit_structure(rows: np.ndarray | tuple, forced: int = 0) -> Structure:
    """Atoms per column from pooled fitting rows (module docstring); the first ``forced`` columns
    are all atoms. ``rows`` is one array of rows, or a tuple of arrays whose rows are pooled one
    column at a time (the pooled rows are never copied whole)."""
    parts = rows if isinstance(rows, tuple) else (rows,)
    atoms, reals = [], False
    for j in range(parts[0].shape[1]):
        if j < forced:
            atoms.append(None)
            continue
        if all(p.dtype == np.int8 for p in parts):  # one histogram, no sort; the same atoms
            vals, counts = byte_counts(*(p[:, j] for p in parts))
            vals, size = vals.astype(np.int8), sum(p.shape[0] for p in parts)
        else:
            v = np.concatenate([p[:, j] for p in parts])
            vals, counts = np.unique(v[~np.isnan(v)], return_counts=True)
            size = v.size
        atoms.append(vals[_is_atom(counts, size, vals.size)])
        reals = reals or atoms[-1].size < vals.size
    return Structure(tuple(atoms), forced, reals)


def _radix_of(atoms: tuple) -> Optional[np.ndarray]:
    """Π_{i<j} (atoms_i + 2) per column, when every column is coded and the product fits an int64."""
    if not atoms or any(a is None for a in atoms):
        return None
    mult, radix = 1, []
    for a in atoms:
        radix.append(mult)
        mult *= a.size + 2
    return np.asarray(radix, dtype=np.int64) if mult < 2**62 else None


def _sig_keys(sig: np.ndarray, radix: np.ndarray) -> np.ndarray:
    """A signature's rows as the mixed-radix integers Σ_j (s_j + 2)·radix_j."""
    key = np.zeros(sig.shape[0], dtype=np.int64)
    for j, m in enumerate(radix):
        key += (sig[:, j] - _ABSENT).astype(np.int64) * m
    return key


@dataclass(frozen=True, slots=True, eq=False)
class _Coder:
    """Rows of integer codes as mixed-radix integers Σ_j c_j(s_j)·Π_{i<j} (|V_i| + 1), c_j(v) the
    index of v among the sorted values V_j of column j (|V_j| for a value not in V_j): distinct
    for distinct rows over V, so rows are matched and counted as int64s."""

    values: tuple
    mults: tuple

    @classmethod
    def of(cls, sig: np.ndarray) -> Optional["_Coder"]:
        """The coder over the values of ``sig``'s columns (None when the keys overflow an int64
        or a value is NaN)."""
        values, mults, mult = [], [], 1
        for j in range(sig.shape[1]):
            v = np.unique(sig[:, j])
            if v.dtype.kind == "f" and np.isnan(v).any():
                return None
            values.append(v)
            mults.append(mult)
            mult *= v.size + 1
            if mult >= 2**62:
                return None
        return cls(tuple(values), tuple(mults))

    def __call__(self, sig: np.ndarray) -> np.ndarray:
        key = np.zeros(sig.shape[0], dtype=np.int64)
        for j, (v, m) in enumerate(zip(self.values, self.mults)):
            col = sig[:, j]
            i = np.minimum(np.searchsorted(v, col), v.size - 1)
            key += np.where(v[i] == col, i, v.size) * m
        return key


@dataclass(frozen=True, slots=True, eq=False)
class Patterns:
    """The patterns seen at fitting time (:func:`fit_pattern_counts`): their row keys (sorted), a
    row of each for the text, counts under D and D', and how many real values each has."""

    structure: Structure
    keys: np.ndarray
    rows: np.ndarray
    sigs: np.ndarray
    cd: np.ndarray
    cp: np.ndarray
    nreal: np.ndarray
    # when every column is coded (atom index, real or absent): a signature as the mixed-radix
    # integer Σ_j (s_j + 2)·Π_{i<j} (atoms_i + 2), the patterns' integers sorted, their indices
    _radix: Optional[np.ndarray] = field(init=False, repr=False, default=None)
    _ikeys: Optional[np.ndarray] = field(init=False, repr=False, default=None)
    _iidx: Optional[np.ndarray] = field(init=False, repr=False, default=None)
    _coder: Optional["_Coder"] = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        radix = _radix_of(self.structure.atoms)
        if radix is None:
            # integer signatures matched as mixed-radix integers over the patterns' values of each
            # column (no float copy of the signatures; the same indices as matching float rows)
            coder = _Coder.of(self.sigs)
            if coder is None:
                return
            object.__setattr__(self, "_coder", coder)
        else:
            object.__setattr__(self, "_radix", radix)
        ik = self._int_keys(self.sigs)
        order = np.argsort(ik, kind="stable")
        object.__setattr__(self, "_ikeys", ik[order])
        object.__setattr__(self, "_iidx", order.astype(float))

    def _int_keys(self, sig: np.ndarray) -> np.ndarray:
        return _sig_keys(sig, self._radix) if self._radix is not None else self._coder(sig)

    def ids(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(pattern index as float, NaN when unseen; the signature)."""
        sig = self.structure.signature(y)
        if self._radix is not None or (self._coder is not None and sig.dtype.kind == "i"):
            # the same indices, matched as integers rather than rows
            return lookup(self._ikeys, self._iidx, self._int_keys(sig)), sig
        return lookup(self.keys, np.arange(self.keys.size, dtype=float), row_bytes(sig)), sig

    def text(self, which: np.ndarray, limit: int = 4) -> str:
        """The patterns of indices ``which`` in words, at most ``limit`` of them shown."""
        shown = [self.structure.show(self.rows[i], self.sigs[i]) for i in which[:limit]]
        more = f", … ({which.size} in all)" if which.size > limit else ""
        return "{" + ", ".join(shown) + more + "}"


def fit_pattern_counts(fit_d: np.ndarray, fit_p: np.ndarray, structure: Structure) -> Patterns:
    """The patterns of the fitting rows with their counts under D (``fit_d``) and D' (``fit_p``),
    in the order of their signatures' float rows. Coded signatures are told apart as mixed-radix
    integers (then only the distinct patterns are sorted as rows); the fitting rows are never
    stacked whole."""
    sig = np.concatenate([structure.signature(fit_d), structure.signature(fit_p)])
    radix = _radix_of(structure.atoms)
    coder = _Coder.of(sig) if radix is None and sig.dtype.kind == "i" else None
    if radix is None and coder is None:
        keys, first, inv = np.unique(row_bytes(sig), return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
    else:  # distinct rows told apart as integers, then only the distinct ones sorted as rows
        ikeys = _sig_keys(sig, radix) if coder is None else coder(sig)
        _, first, inv = np.unique(ikeys, return_index=True, return_inverse=True)
        del ikeys
        order = np.argsort(row_bytes(sig[first]), kind="stable")  # the order of the rows' bytes
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        first, inv = first[order], rank[inv.reshape(-1)]
        keys = row_bytes(sig[first])
    nd = fit_d.shape[0]
    cd = np.bincount(inv[:nd], minlength=keys.size).astype(float)
    cp = np.bincount(inv[nd:], minlength=keys.size).astype(float)
    nreal = (sig[first] == _REAL).sum(axis=1)
    rows = np.where((first < nd)[:, None], fit_d[np.minimum(first, max(nd - 1, 0))],
                    fit_p[np.maximum(first - nd, 0)]) if first.size else fit_d[:0]
    return Patterns(structure, keys, rows, sig[first].astype(float), cd, cp, nreal)
