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

* :class:`~dpaudit.estimators.scores.PatternRatio`-style likelihood-ratio sets of patterns (:class:`JointPattern`);
* :class:`JointRatio`: the log-ratio of (pattern, bin of r_0), with quantile bins fitted per
  pattern, thresholded into likelihood-ratio-ordered unions of cells;
* :class:`RealGiven`: ``K ∈ S and r_k ≥ t`` / ``< t`` / ``∈ [lo, hi)`` for the few patterns S
  whose laws differ most (count z-score or Kolmogorov-Smirnov z of r_0 within the pattern), the
  patterns more likely under D, those more likely under D', and all of them (:data:`TOP_PATTERNS`);
* :class:`Column`: one column as it is: a length, or one position's element (per-position events);
* :class:`Members`: where every element is an integer among a few consecutive values (a list of
  the indices answered ⊤), a vector score (naive Bayes, logistic regression) on how often each
  value is an element: the set a tuple of indices stands for, scored as the bit vector a user
  could have returned instead (Lyu, Su and Li 2017: an SVT's output is the set of its ⊤ indices;
  positions alone see "the third ⊤ was query 7", not "query 7 was ⊤");
* presence (:mod:`dpaudit.estimators.presence`): "position j is released" (not None / NaN) and
  "the output holds the element v" (a released key, wherever it lands), alone and as unions: the
  events that see which keys a partition selection releases, where a key that only D holds is
  released with a probability that bounds δ from below; for vectors, where some coordinate is NaN.

The structure (the pattern/real split, :mod:`dpaudit.estimators.structure`) is fitted on the first
half of the selection split, like every fitted score; rows whose pattern was never seen then score
NaN and lie in no event. Everything is vectorised over rows.
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from typing import Iterator, Optional

import numpy as np

from dpaudit.estimators.floats import has_float_structure
from dpaudit.estimators.logistic import fit_logistic
from dpaudit.estimators.presence import presence_families
from dpaudit.estimators.scores import Score, fit_naive_bayes, log_ratio
from dpaudit.estimators.structure import Patterns, Structure, fit_pattern_counts, fit_structure

__all__ = ["Structure", "JointPattern", "JointRatio", "RealGiven", "Column", "Filled", "Members",
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
#: Members: the elements are read as values when all are integers within this many consecutive
#: values (at least two of them)
MAX_MEMBER_VALUES = 64
#: rows counted at a time by member_counts
_MEMBER_BLOCK = 1 << 16


@dataclass(frozen=True, slots=True, eq=False)
class JointPattern:
    """s(y) = estimated ln p_D(K)/p_D'(K) of the row's pattern K."""

    patterns: Patterns
    llr: np.ndarray

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return self.of(self.patterns.ids(y)[0])

    def of(self, pid: np.ndarray) -> np.ndarray:
        """The score from the rows' pattern indices (:meth:`Patterns.ids`)."""
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

    patterns: Patterns
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

    patterns: Patterns
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


def _joint_ratio(pats: Patterns, fit_d: np.ndarray, fit_p: np.ndarray,
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
    return JointRatio(pats, tuple(edges), offset, log_ratio(cd, cp))


def _pattern_sets(pats: Patterns, fit_d: np.ndarray, fit_p: np.ndarray, top: int,
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
    llr = log_ratio(pats.cd, pats.cp)
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
    the families with real values are added, and only where atoms and reals mix, besides which
    coordinates are released where some are NaN (:mod:`~dpaudit.estimators.presence`)."""
    half = yd.shape[0] // 2
    fit_d, fit_p, ev_d, ev_p = yd[:half], yp[:half], yd[half:], yp[half:]
    if half == 0:
        return
    if vector:  # coordinates absent (NaN) in some outputs: which ones are released
        yield from presence_families(yd, yp, quick, start=0, values=False)
    structure = fit_structure((fit_d, fit_p), forced)
    if vector and not structure.reals_seen:
        return  # all atoms: the vector families see it already (spares signing every row)
    pats = fit_pattern_counts(fit_d, fit_p, structure)
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
        sc = JointPattern(pats, log_ratio(pats.cd, pats.cp))
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


def _signed(pats: Patterns, y: np.ndarray, slots: int) -> tuple:
    """(pattern indices, real values r_0 .. r_{slots−1}) of the rows ``y`` (None when no slots)."""
    pid, sig = pats.ids(y)
    return pid, (pats.structure.reals(y, sig, slots) if slots else None)


def scores_of(scores: list[Score], y: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
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


def _mean_gap(va: np.ndarray, vb: np.ndarray) -> float:
    """The standardised difference of the means of the finite values of ``va`` and ``vb``,
    computed on them divided by a power of two near their largest magnitude (exact), so that
    values near ±1e308 neither overflow the sums nor make inf − inf."""
    va, vb = va[np.isfinite(va)], vb[np.isfinite(vb)]
    if not (va.size and vb.size):
        return 0.0
    top = max(float(np.abs(va).max()), float(np.abs(vb).max()))
    unit = math.ldexp(1.0, math.frexp(top)[1] - 1) if top > 0 else 1.0
    a, b = va / unit, vb / unit
    return float(abs(a.mean() - b.mean()) / (np.sqrt(0.5 * (a.var() + b.var())) + 1e-300))


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
        gaps.append((-max(pres, _mean_gap(a[pa], b[pb])), j))
    for _, j in sorted(gaps)[:top]:
        yield Column(j, f"element {j - 2}")


@dataclass(frozen=True, slots=True, eq=False)
class Filled:
    """s(y) = inner(y with NaN replaced by ``fill[j]`` in column j): a vector score (naive Bayes,
    logistic regression) on MIXED rows, absent elements read as a value below all others."""

    inner: Score
    fill: np.ndarray

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return self.inner(np.where(np.isnan(y), self.fill, y))

    def describe(self) -> str:
        return self.inner.describe()

    def to_record(self) -> dict:
        return {**self.inner.to_record(), "absent_as": self.fill.tolist()}


def member_counts(y: np.ndarray, lo: int, width: int) -> np.ndarray:
    """c[i, k] = how many elements of MIXED row i (columns 2, 3, …) equal lo + k, as int8 (an
    element is one of at most :data:`~dpaudit.outputs.MAX_POSITIONS` columns); elements that are
    not such a value are not counted. A block of rows at a time."""
    n = y.shape[0]
    out = np.zeros((n, width), np.int8)
    for start in range(0, n, _MEMBER_BLOCK):
        el = np.asarray(y[start:start + _MEMBER_BLOCK, 2:], float)
        k = el - lo
        ok = np.isfinite(k) & (k >= 0) & (k < width) & (k == np.floor(k))
        rows, cols = np.nonzero(ok)
        counts = np.bincount(rows * width + k[rows, cols].astype(np.intp), minlength=el.shape[0] * width)
        out[start:start + el.shape[0]] = counts.reshape(el.shape[0], width)
    return out


def member_values(yd: np.ndarray, yp: np.ndarray) -> Optional[tuple[int, int]]:
    """(lo, width) when every finite element of the rows is an integer and they span at most
    :data:`MAX_MEMBER_VALUES` values (at least two), else None (module docstring, Members)."""
    lo, hi = np.inf, -np.inf
    for y in (yd, yp):
        for j in range(2, y.shape[1]):
            v = np.asarray(y[:, j], float)
            v = v[np.isfinite(v)]
            if v.size == 0:
                continue
            if not np.array_equal(v, np.floor(v)):
                return None
            lo, hi = min(lo, float(v.min())), max(hi, float(v.max()))
    if not np.isfinite(lo) or hi - lo + 1 > MAX_MEMBER_VALUES or hi == lo:
        return None
    return int(lo), int(hi - lo) + 1


@dataclass(frozen=True, slots=True, eq=False)
class Members:
    """s(y) = inner(c(y)), c(y)_k = how many elements of the row equal lo + k (module docstring)."""

    inner: Score
    lo: int
    width: int

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return self.inner(member_counts(y, self.lo, self.width))

    def describe(self) -> str:
        name = self.inner.describe().replace(" of the output vector", "")
        return (f"{name} of which values the output holds "
                f"(how often each of {self.lo}…{self.lo + self.width - 1} is an element)")

    def to_record(self) -> dict:
        return {**self.inner.to_record(), "members_of": [self.lo, self.lo + self.width - 1]}


def mixed_families(yd: np.ndarray, yp: np.ndarray, quick: bool) -> Iterator[tuple]:
    """Every family of MIXED rows (:mod:`dpaudit.outputs`): the joint families with the skeleton
    code and the length as atoms, the presence of positions and of values
    (:func:`~dpaudit.estimators.presence.presence_families`), naive Bayes and logistic regression
    on the rows with absent elements filled and, where the elements are a few integer values, on
    how often each is an element (:class:`Members`), and the columns (:func:`mixed_columns`)."""
    half = yd.shape[0] // 2
    fit_d, fit_p, ev_d, ev_p = yd[:half], yp[:half], yd[half:], yp[half:]
    if half:
        yield from joint_families(yd, yp, quick, forced=2)
        yield from presence_families(yd, yp, quick)
        # the smallest finite fitting value of each column, one column at a time (compacted
        # rows of integers only may hold no NaN and be of an integer type)
        lowest = np.array([min((float(v[np.isfinite(v)].astype(float, copy=False).min(initial=np.inf))
                                for v in (fit_d[:, j], fit_p[:, j])), default=np.inf)
                           for j in range(yd.shape[1])])
        fill = np.where(np.isfinite(lowest), lowest - 1.0, 0.0)
        fd, fp = np.where(np.isnan(fit_d), fill, fit_d), np.where(np.isnan(fit_p), fill, fit_p)
        scores = [Filled(fit(fd, fp), fill) for fit in (fit_naive_bayes, fit_logistic)]
        del fd, fp  # the filled copies are not held while the later families run
        values = member_values(fit_d, fit_p)
        if values is not None:
            md, mp = member_counts(fit_d, *values), member_counts(fit_p, *values)
            scores += [Members(fit(md, mp), *values) for fit in (fit_naive_bayes, fit_logistic)]
            del md, mp
        for sc in scores:
            yield sc, sc(ev_d), sc(ev_p), False
    for sc in mixed_columns(yd, yp, 2 if quick else 4):
        yield sc, sc(yd), sc(yp), True
