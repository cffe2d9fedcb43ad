"""Events on the joint structure of outputs that mix a discrete and a real part.

An output such as ``(index, noisy value)`` or ``None``, a list of positive indices, or a vector
with sentinel codes (SVT3's −1000 "false", −2000 "aborted") is a pair (K, R): a discrete
*pattern* K — which positions hold which atom (an index, a sentinel, "absent") and which hold a
real value — and the real values R = (r_0, r_1, …) in order. Its law factors as
p(K, R) = p(K) · p(R | K), so by the Neyman-Pearson lemma the best events are level sets of

    ln p_D(K)/p_D'(K) + ln p_D(R | K)/p_D'(R | K)

(Neyman and Pearson 1933; DP-Sniper, Bichsel et al. 2021, Thm 1). Where the loss lives in a tail
of R given one pattern (SVT3 releasing (i, q_i + ν_i): Lyu, Su and Li 2017, Alg. 3, whose loss on
(i, v) grows to its supremum as v → −∞), binning R loses it; so the families here keep R real:

* :class:`PatternRatio`-style likelihood-ratio sets of patterns (:class:`JointPattern`);
* :class:`JointRatio`: the log-ratio of (pattern, bin of r_0), with quantile bins fitted per
  pattern, thresholded into likelihood-ratio-ordered unions of cells;
* :class:`RealGiven`: ``K ∈ S and r_k ≥ t`` / ``< t`` / ``∈ [lo, hi)`` for the few patterns S
  whose laws differ most (count z-score or Kolmogorov-Smirnov z of r_0 within the pattern), the
  patterns more likely under D, those more likely under D', and all of them (:data:`TOP_PATTERNS`);
* :class:`Column`: one column as it is: a length, or one position's element (per-position events).

The structure (which values of a column are atoms: those seen at least :func:`_is_atom` times, NaN
always) is fitted on the first half of the selection split, like every fitted score; rows whose
pattern was never seen then score NaN and lie in no event. Everything is vectorised over rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

import numpy as np

from dpaudit.estimators.floats import has_float_structure
from dpaudit.estimators.logistic import fit_logistic
from dpaudit.estimators.scores import _llr, _lookup, _rows, byte_counts, fit_naive_bayes

__all__ = ["Structure", "JointPattern", "JointRatio", "RealGiven", "Column", "Filled",
           "fit_structure", "joint_families", "mixed_families", "float_elements", "scores_of",
           "TOP_PATTERNS", "MAX_REALS"]

#: RealGiven families: the patterns whose laws differ most, this many (fewer when ``quick``)
TOP_PATTERNS = 3
#: real slots r_0, r_1, ... that get events of their own
MAX_REALS = 2
#: per-pattern bins of r_0 in JointRatio: about √n/2 per pattern, at most this many
MAX_BINS = 24
#: at most this many patterns get bins of their own in JointRatio (the most frequent)
MAX_BINNED = 32
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


def fit_structure(both: np.ndarray, forced: int = 0) -> Structure:
    """Atoms per column from pooled fitting rows; the first ``forced`` columns are all atoms."""
    return _fit_structure((both,), forced)


def _fit_structure(parts: tuple, forced: int = 0) -> Structure:
    """:func:`fit_structure` of the rows of ``parts`` stacked, one column at a time (the pooled
    rows are never copied whole)."""
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
class _Patterns:
    """The patterns seen at fitting time: their row keys (sorted), a row of each for the text,
    counts under D and D', and how many real values each has."""

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
            return _lookup(self._ikeys, self._iidx, self._int_keys(sig)), sig
        return _lookup(self.keys, np.arange(self.keys.size, dtype=float), _rows(sig)), sig

    def text(self, which: np.ndarray, limit: int = 4) -> str:
        shown = [self.structure.show(self.rows[i], self.sigs[i]) for i in which[:limit]]
        more = f", … ({which.size} in all)" if which.size > limit else ""
        return "{" + ", ".join(shown) + more + "}"


def _fit_patterns(fit_d: np.ndarray, fit_p: np.ndarray, structure: Structure) -> _Patterns:
    """The patterns of the fitting rows, in the order of their signatures' float rows. Coded
    signatures are told apart as mixed-radix integers (then only the distinct patterns are
    sorted as rows); the fitting rows are never stacked whole."""
    sig = np.concatenate([structure.signature(fit_d), structure.signature(fit_p)])
    radix = _radix_of(structure.atoms)
    coder = _Coder.of(sig) if radix is None and sig.dtype.kind == "i" else None
    if radix is None and coder is None:
        keys, first, inv = np.unique(_rows(sig), return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
    else:  # distinct rows told apart as integers, then only the distinct ones sorted as rows
        ikeys = _sig_keys(sig, radix) if coder is None else coder(sig)
        _, first, inv = np.unique(ikeys, return_index=True, return_inverse=True)
        del ikeys
        order = np.argsort(_rows(sig[first]), kind="stable")  # the order of the rows' bytes
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        first, inv = first[order], rank[inv.reshape(-1)]
        keys = _rows(sig[first])
    nd = fit_d.shape[0]
    cd = np.bincount(inv[:nd], minlength=keys.size).astype(float)
    cp = np.bincount(inv[nd:], minlength=keys.size).astype(float)
    nreal = (sig[first] == _REAL).sum(axis=1)
    rows = np.where((first < nd)[:, None], fit_d[np.minimum(first, max(nd - 1, 0))],
                    fit_p[np.maximum(first - nd, 0)]) if first.size else fit_d[:0]
    return _Patterns(structure, keys, rows, sig[first].astype(float), cd, cp, nreal)


@dataclass(frozen=True, slots=True, eq=False)
class JointPattern:
    """s(y) = estimated ln p_D(K)/p_D'(K) of the row's pattern K."""

    patterns: _Patterns
    llr: np.ndarray

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return self.of(self.patterns.ids(y)[0])

    def of(self, pid: np.ndarray) -> np.ndarray:
        """The score from the rows' pattern indices (:meth:`_Patterns.ids`)."""
        ok = ~np.isnan(pid)
        out = np.full(pid.shape[0], np.nan)
        out[ok] = self.llr[pid[ok].astype(int)]
        return out

    def describe(self) -> str:
        return "estimated log-likelihood ratio of the output's pattern"

    def to_record(self) -> dict:
        p = self.patterns
        return {"kind": "joint-pattern", "llr": self.llr.tolist(),
                "patterns": [p.structure.show(r, s) for r, s in zip(p.rows, p.sigs)]}


@dataclass(frozen=True, slots=True, eq=False)
class JointRatio:
    """s(y) = estimated log-ratio of the cell (pattern K, bin of r_0 within K); the bins of a
    pattern are quantiles of its fitting values of r_0 (``edges[i]``; empty: one cell)."""

    patterns: _Patterns
    edges: tuple
    offset: np.ndarray
    llr: np.ndarray

    def cells(self, y: np.ndarray) -> np.ndarray:
        pid, sig = self.patterns.ids(y)
        return self.cells_of(pid, self.patterns.structure.reals(y, sig, 1)[:, 0])

    def cells_of(self, pid: np.ndarray, r0: np.ndarray) -> np.ndarray:
        """The cells from the rows' pattern indices and first real values r_0."""
        ok = ~np.isnan(pid)
        p = np.where(ok, pid, 0).astype(int)
        cell = self.offset[p].astype(float)
        for i, e in enumerate(self.edges):
            if e.size:
                m = ok & (p == i)
                cell[m] += np.searchsorted(e, r0[m], side="right")
        cell[~ok] = np.nan
        return cell

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return self._scored(self.cells(y))

    def of(self, pid: np.ndarray, reals: np.ndarray) -> np.ndarray:
        """The score from the rows' pattern indices and real values (:meth:`Structure.reals`)."""
        return self._scored(self.cells_of(pid, reals[:, 0]))

    def _scored(self, c: np.ndarray) -> np.ndarray:
        ok = ~np.isnan(c)
        out = np.full(c.shape[0], np.nan)
        out[ok] = self.llr[c[ok].astype(int)]
        return out

    def describe(self) -> str:
        return "estimated log-likelihood ratio of the output's pattern and real value"

    def to_record(self) -> dict:
        p = self.patterns
        return {"kind": "joint-ratio", "llr": self.llr.tolist(),
                "patterns": [p.structure.show(r, s) for r, s in zip(p.rows, p.sigs)],
                "edges": [e.tolist() for e in self.edges]}


@dataclass(frozen=True, slots=True, eq=False)
class RealGiven:
    """s(y) = r_k(y) when y's pattern is one of ``members``, NaN otherwise: thresholding it gives
    ``K ∈ S and r_k ≥ t`` (or ``< t``, or in an interval)."""

    patterns: _Patterns
    members: np.ndarray  # indices of the patterns in S
    k: int

    def __call__(self, y: np.ndarray) -> np.ndarray:
        pid, sig = self.patterns.ids(y)
        return self.of(pid, self.patterns.structure.reals(y, sig, self.k + 1))

    def of(self, pid: np.ndarray, reals: np.ndarray) -> np.ndarray:
        """The score from the rows' pattern indices and real values (computed once per family)."""
        inside = np.zeros(self.patterns.keys.size + 1, dtype=bool)
        inside[self.members] = True
        hit = inside[np.where(np.isnan(pid), -1, pid).astype(int)]
        return np.where(hit, reals[:, self.k], np.nan)

    def describe(self) -> str:
        nth = "the real value" if self.k == 0 else f"real value #{self.k + 1}"
        return f"{nth} of an output with pattern in {self.patterns.text(self.members)}"

    def to_record(self) -> dict:
        p = self.patterns
        return {"kind": "real-given-pattern", "slot": self.k,
                "patterns": [p.structure.show(p.rows[i], p.sigs[i]) for i in self.members]}


@dataclass(frozen=True, slots=True)
class Column:
    """s(y) = column j of the encoded rows (a MIXED output's length, or its element j)."""

    j: int
    name: str

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return y[:, self.j]

    def describe(self) -> str:
        return self.name

    def to_record(self) -> dict:
        return {"kind": "column", "index": self.j, "name": self.name}


# ---------------------------------------------------------------------------------------------
# fitting

def _ks_z(a: np.ndarray, b: np.ndarray) -> float:
    """Kolmogorov-Smirnov statistic of two samples, scaled by √(n m / (n + m))."""
    if a.size == 0 or b.size == 0:
        return 0.0
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    gap = np.abs(np.searchsorted(a, grid, side="right") / a.size
                 - np.searchsorted(b, grid, side="right") / b.size).max()
    return float(gap * np.sqrt(a.size * b.size / (a.size + b.size)))


def _joint_ratio(pats: _Patterns, fit_d: np.ndarray, fit_p: np.ndarray,
                 pid: Optional[np.ndarray] = None, r0: Optional[np.ndarray] = None) -> JointRatio:
    """The :class:`JointRatio` fitted on the fitting rows (D's, then D''s); ``pid`` and ``r0``,
    their pattern indices and first real values when computed already (the same numbers)."""
    if pid is None or r0 is None:
        both = np.concatenate([fit_d, fit_p])
        pid, sig = pats.ids(both)
        r0 = pats.structure.reals(both, sig, 1)[:, 0]
        del both, sig
    p = pid.astype(int)
    n_pat = pats.cd + pats.cp
    binned = set(np.argsort(-np.where(pats.nreal > 0, n_pat, -1), kind="stable")[:MAX_BINNED].tolist())
    edges = []
    for i in range(pats.keys.size):
        vals = r0[(p == i) & ~np.isnan(r0)] if i in binned and pats.nreal[i] and n_pat[i] >= 40 else None
        if vals is None or vals.size == 0:
            edges.append(np.empty(0))
            continue
        nb = int(np.clip(np.sqrt(vals.size) / 2, 2, MAX_BINS))
        edges.append(np.unique(np.quantile(vals, np.linspace(0, 1, nb + 1)[1:-1])))
    offset = np.concatenate([[0], np.cumsum([e.size + 1 for e in edges])])[:-1]
    shell = JointRatio(pats, tuple(edges), offset, np.zeros(0))
    c = shell.cells_of(pid, r0).astype(int)
    size = int(offset[-1] + edges[-1].size + 1)
    cd = np.bincount(c[: fit_d.shape[0]], minlength=size).astype(float)
    cp = np.bincount(c[fit_d.shape[0]:], minlength=size).astype(float)
    return JointRatio(pats, tuple(edges), offset, _llr(cd, cp))


def _pattern_sets(pats: _Patterns, fit_d: np.ndarray, fit_p: np.ndarray, top: int,
                  signed: Optional[tuple] = None) -> list:
    """The pattern sets S of the RealGiven families (module docstring), largest difference first;
    ``signed``: the fitting rows' (pattern indices, r_0) of D and of D' when computed already."""
    has = np.flatnonzero(pats.nreal > 0)
    if has.size == 0:
        return []
    nd, np_ = max(1, fit_d.shape[0]), max(1, fit_p.shape[0])
    fd, fp = pats.cd / nd, pats.cp / np_
    pooled = (pats.cd + pats.cp) / (nd + np_)
    z = np.abs(fd - fp) / np.sqrt(pooled * (1 - pooled) * (1 / nd + 1 / np_) + 1e-300)
    frequent = has[np.argsort(-(pats.cd + pats.cp)[has], kind="stable")][:MAX_BINNED]
    if frequent.size:
        if signed is None:
            idd, sd = pats.ids(fit_d)
            idp, sp = pats.ids(fit_p)
            signed = (idd, pats.structure.reals(fit_d, sd, 1)[:, 0],
                      idp, pats.structure.reals(fit_p, sp, 1)[:, 0])
        idd, rd, idp, rp = signed
        for i in frequent:
            a, b = rd[idd == i], rp[idp == i]
            z[i] = max(z[i], _ks_z(a[~np.isnan(a)], b[~np.isnan(b)]))
    ranked = has[np.argsort(-z[has], kind="stable")]
    sets = [np.array([i]) for i in ranked[:top]]
    llr = _llr(pats.cd, pats.cp)
    for part in (has[llr[has] > 0], has[llr[has] < 0], has):
        if part.size > 1 and not any(np.array_equal(part, s) for s in sets):
            sets.append(part)
    return sets


def joint_families(yd: np.ndarray, yp: np.ndarray, quick: bool, forced: int = 0,
                   vector: bool = False) -> Iterator[tuple]:
    """(score, sd, sp, intervals?) for the joint families (module docstring) of 2-D rows: the
    structure and the scores are fitted on the first half of the rows; the ratio scores are
    evaluated on the second half, the :class:`RealGiven` scores (a choice among a few sets, like
    choosing a coordinate) on all rows, as coordinates are; ``forced`` leading columns are
    atoms whatever their values (a MIXED skeleton code and length). ``vector``: rows of a
    fixed-length vector, whose whole-pattern ratios the vector families score already, so only
    the families with real values are added, and only where atoms and reals mix."""
    half = yd.shape[0] // 2
    fit_d, fit_p, ev_d, ev_p = yd[:half], yp[:half], yd[half:], yp[half:]
    if half == 0:
        return
    structure = _fit_structure((fit_d, fit_p), forced)
    if vector and not structure.reals_seen:
        return  # all atoms: the vector families see it already (spares signing every row)
    pats = _fit_patterns(fit_d, fit_p, structure)
    if pats.keys.size > max(2, fit_d.shape[0] // 5) and not pats.nreal.any():
        return  # too many patterns to estimate each one's ratio
    if vector and (pats.keys.size < 2 or not pats.nreal.any()):
        return  # all real or all atoms: the vector families see it already
    # each row signed once (the fitting rows once more, to fit the patterns): pattern indices
    # and real values of all the rows, one signature in memory at a time
    reals = bool(pats.nreal.any())
    slots = min(MAX_REALS, int(pats.nreal.max())) if reals else 0
    pid_d, r_d = _signed(pats, yd if reals else ev_d, slots)
    pid_p, r_p = _signed(pats, yp if reals else ev_p, slots)
    ev = half if reals else 0  # where the evaluation rows start in pid_d, pid_p
    if pats.keys.size > 1 and not vector:
        sc = JointPattern(pats, _llr(pats.cd, pats.cp))
        yield sc, sc.of(pid_d[ev:]), sc.of(pid_p[ev:]), False
    if not reals:
        return
    sc = _joint_ratio(pats, fit_d, fit_p, np.concatenate([pid_d[:half], pid_p[:half]]),
                      np.concatenate([r_d[:half, 0], r_p[:half, 0]]))
    yield sc, sc.of(pid_d[half:], r_d[half:]), sc.of(pid_p[half:], r_p[half:]), False
    signed = (pid_d[:half], r_d[:half, 0], pid_p[:half], r_p[:half, 0])
    for members in _pattern_sets(pats, fit_d, fit_p, 2 if quick else TOP_PATTERNS, signed):
        for k in range(min(slots, int(pats.nreal[members].min()))):
            sc = RealGiven(pats, members, k)
            yield sc, sc.of(pid_d, r_d), sc.of(pid_p, r_p), True


def _signed(pats: _Patterns, y: np.ndarray, slots: int) -> tuple:
    """(pattern indices, real values r_0 .. r_{slots−1}) of the rows ``y`` (None when no slots)."""
    pid, sig = pats.ids(y)
    return pid, (pats.structure.reals(y, sig, slots) if slots else None)


def scores_of(scores: list, y: np.ndarray) -> Iterator[tuple]:
    """``(i, scores[i](y))`` for every score, one at a time; the joint scores that share one set
    of patterns share one signature of the rows (the costly part of each; the same values)."""
    shared: dict = {}
    for i, sc in enumerate(scores):
        if isinstance(sc, (JointPattern, JointRatio, RealGiven)):
            shared.setdefault(id(sc.patterns), []).append(i)
        else:
            yield i, sc(y)
    for idx in shared.values():
        need = max(1 if isinstance(scores[i], JointRatio) else
                   scores[i].k + 1 if isinstance(scores[i], RealGiven) else 0 for i in idx)
        pid, reals = _signed(scores[idx[0]].patterns, y, need)
        for i in idx:
            sc = scores[i]
            yield i, (sc.of(pid) if isinstance(sc, JointPattern) else sc.of(pid, reals))


def float_elements(fit_d: np.ndarray, fit_p: np.ndarray) -> list[int]:
    """The element columns of MIXED rows whose present values have float structure
    (:func:`~dpaudit.estimators.floats.has_float_structure`; NaN marks an absent element here):
    they get the float-structure families, as a vector's coordinates do."""
    out = []
    for j in range(2, fit_d.shape[1]):
        a, b = fit_d[:, j], fit_p[:, j]
        a, b = a[~np.isnan(a)], b[~np.isnan(b)]
        if a.size + b.size and has_float_structure(a, b):
            out.append(j)
    return out


def mixed_columns(yd: np.ndarray, yp: np.ndarray, top: int) -> Iterator[Column]:
    """Column scores of MIXED rows: the length when it varies, and the ``top`` elements whose
    laws differ most (standardised difference of means or of presence, NaN = absent)."""
    if np.unique(np.concatenate([yd[:, 1], yp[:, 1]])).size > 1:
        yield Column(1, "length")
    gaps = []
    for j in range(2, yd.shape[1]):
        a, b = yd[:, j], yp[:, j]
        pa, pb = ~np.isnan(a), ~np.isnan(b)
        if not (pa.any() and pb.any()):
            continue
        pres = abs(pa.mean() - pb.mean()) / np.sqrt(0.5 * (pa.mean() + pb.mean()) + 1e-12)
        va, vb = a[pa], b[pb]
        sd = np.sqrt(0.5 * (va.var() + vb.var())) + 1e-300
        gaps.append((-max(pres, abs(va.mean() - vb.mean()) / sd), j))
    for _, j in sorted(gaps)[:top]:
        yield Column(j, f"element {j - 2}")


@dataclass(frozen=True, slots=True, eq=False)
class Filled:
    """s(y) = inner(y with NaN replaced by ``fill[j]`` in column j): a vector score (naive Bayes,
    logistic regression) on MIXED rows, absent elements read as a value below all others."""

    inner: Any
    fill: np.ndarray

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return self.inner(np.where(np.isnan(y), self.fill, y))

    def describe(self) -> str:
        return self.inner.describe()

    def to_record(self) -> dict:
        return {**self.inner.to_record(), "absent_as": self.fill.tolist()}


def mixed_families(yd: np.ndarray, yp: np.ndarray, quick: bool) -> Iterator[tuple]:
    """Every family of MIXED rows (:mod:`dpaudit.outputs`): the joint families with the skeleton
    code and the length as atoms, naive Bayes and logistic regression on the rows with absent
    elements filled, and the columns (:func:`mixed_columns`)."""
    half = yd.shape[0] // 2
    fit_d, fit_p, ev_d, ev_p = yd[:half], yp[:half], yd[half:], yp[half:]
    if half:
        yield from joint_families(yd, yp, quick, forced=2)
        # the smallest finite fitting value of each column, one column at a time
        lowest = np.array([min((float(v[np.isfinite(v)].min(initial=np.inf))
                                for v in (fit_d[:, j], fit_p[:, j])), default=np.inf)
                           for j in range(yd.shape[1])])
        fill = np.where(np.isfinite(lowest), lowest - 1.0, 0.0)
        fd, fp = np.where(np.isnan(fit_d), fill, fit_d), np.where(np.isnan(fit_p), fill, fit_p)
        scores = [Filled(fit(fd, fp), fill) for fit in (fit_naive_bayes, fit_logistic)]
        del fd, fp  # the filled copies are not held while the later families run
        for sc in scores:
            yield sc, sc(ev_d), sc(ev_p), False
    for sc in mixed_columns(yd, yp, 2 if quick else 4):
        yield sc, sc(yd), sc(yp), True
