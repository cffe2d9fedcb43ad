"""Presence events: which positions or which keys an output releases.

A mechanism that releases only what its data holds (partition selection: the keys whose noisy
count passes a threshold, as DP SQL engines and aggregation pipelines do; a histogram over the keys
found in the data) leaks through WHICH keys appear. A key whose one record is the record D has and
D' lacks is released under D with some probability p and never under D', so for the event
S = "that key is released"

    P[M(D) ∈ S] − e^ε · P[M(D') ∈ S] = p,

and an (ε, δ) claim is refuted as soon as p > δ is shown (Korolova, Kenthapadi, Mishra and
Ntoulas 2009, §4, and Desfontaines, Voss, Gipson and Mandayam 2022, PoPETs, §3: the threshold is
what keeps p ≤ δ). The scores here are 0 or 1 per output, so their events are "released" (s ≥ 1)
and "not released" (s < 1):

* :class:`Released`: some position among ``columns`` holds a value, not a marker of absence (None
  or NaN: a vector with NaN for the keys not released, a list with None there; in a MIXED output
  a position past its end is absent too);
* :class:`Holds`: some element of the output equals one of ``values``, wherever it lands (a dict
  of released keys read as its items (k₁, c₁, k₂, c₂, …), a list of (key, count) pairs, a list of
  released keys), among all elements or among every second (third) one only: in the items of a
  dict the keys are elements 0, 2, 4, …, and a released count of 4 is not the key 4 there.

Each comes for the positions (values) whose presence differs most between D and D' on the fitting
rows (:data:`TOP_PRESENCE`, two-proportion z), and as the union of those more often present under
D, and of those more often present under D' (a pair whose D holds several keys D' lacks). A value
is a candidate only when it is an element of at least :data:`MIN_ROWS` fitting rows (a key
repeats exactly; a noisy real value almost never does). Chosen on the first half of the selection
rows and thresholded on the second, like every fitted score; a bound never depends on the choice,
since validation counts the chosen event on fresh samples.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

__all__ = ["Released", "Holds", "presence_families", "TOP_PRESENCE", "MIN_ROWS", "MAX_UNION"]

#: positions and values that get events of their own (2 when ``quick``)
TOP_PRESENCE = 4
#: a value is a candidate when it is an element of at least this many fitting rows (D's and D''s)
MIN_ROWS = 5
#: the unions hold at most this many positions or values (those whose presence differs most)
MAX_UNION = 64
#: a position or value joins a union when its presence differs by this many standard errors
UNION_Z = 2.0
#: rows read at a time when the elements of large samples are compared with the values
_BLOCK = 1 << 16
#: the element positions :class:`Holds` looks among: (stride, offset), every element first, then
#: every second one (the keys and the values of (key, value) items), then every third one
LAYOUTS = ((1, 0), (2, 0), (2, 1), (3, 0), (3, 1), (3, 2))


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 2**53 else f"{v:.6g}"


@dataclass(frozen=True, slots=True)
class Released:
    """s(y) = 1 when some position among ``columns`` of the encoded row holds a value (not NaN),
    else 0; ``elements`` are those positions as a user counts them (MIXED: column − 2)."""

    columns: tuple
    elements: tuple
    mixed: bool = True

    def __call__(self, y: np.ndarray) -> np.ndarray:
        if y.dtype.kind != "f":  # compact int8 rows hold no NaN: every position is released
            return np.ones(y.shape[0])
        cols = np.asarray(self.columns, dtype=np.intp)
        return (~np.isnan(y[:, cols])).any(axis=1).astype(float)

    def describe(self) -> str:
        absent = "None, NaN or past the end" if self.mixed else "NaN"
        where = "element" if self.mixed else "coordinate"
        if len(self.elements) == 1:
            return f"[{where} {self.elements[0]} is released (not {absent})]"
        shown = ", ".join(map(str, self.elements[:12])) + (", …" if len(self.elements) > 12 else "")
        return f"[some {where} of {{{shown}}} is released (not {absent})]"

    def to_record(self) -> dict:
        return {"kind": "released", "columns": list(self.columns), "elements": list(self.elements)}


@dataclass(frozen=True, slots=True)
class Holds:
    """s(y) = 1 when some element of the row among elements ``offset``, ``offset`` + ``stride``,
    … (columns from ``start``) equals one of ``values``, else 0: a key released wherever it lands
    among the elements (``stride`` 2: among the keys of (key, value) items)."""

    values: tuple
    start: int = 2
    stride: int = 1
    offset: int = 0

    def __call__(self, y: np.ndarray) -> np.ndarray:
        vals = np.asarray(self.values, dtype=float)
        out = np.zeros(y.shape[0])
        first = self.start + self.offset
        for i in range(0, y.shape[0], _BLOCK):
            el = y[i:i + _BLOCK, first::self.stride]
            out[i:i + el.shape[0]] = np.isin(el, vals).any(axis=1)
        return out

    def _where(self) -> str:
        if self.stride == 1:
            return ""
        k, s = self.offset, self.stride
        return f" among elements {k}, {k + s}, {k + 2 * s}, …"

    def describe(self) -> str:
        if len(self.values) == 1:
            return f"[the output holds the element {_fmt(self.values[0])}{self._where()}]"
        shown = ", ".join(map(_fmt, self.values[:12])) + (", …" if len(self.values) > 12 else "")
        return f"[the output holds an element of {{{shown}}}{self._where()}]"

    def to_record(self) -> dict:
        return {"kind": "holds", "values": [float(v) for v in self.values], "start": self.start,
                "stride": self.stride, "offset": self.offset}


# ---------------------------------------------------------------------------------------------
# fitting

def _z(cd: np.ndarray, cp: np.ndarray, nd: int, np_: int) -> np.ndarray:
    """Signed two-proportion z of counts ``cd`` of ``nd`` rows against ``cp`` of ``np_`` rows
    (positive: more often under D)."""
    fd, fp = cd / nd, cp / np_
    pooled = (cd + cp) / (nd + np_)
    return (fd - fp) / np.sqrt(pooled * (1 - pooled) * (1 / nd + 1 / np_) + 1e-300)


def _row_values(y: np.ndarray, first: int, stride: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The distinct finite values of the columns ``first``, ``first`` + ``stride``, … of the rows
    and in how many rows each is one of them."""
    el = np.asarray(y[:, first::stride], dtype=float)
    rows, cols = np.nonzero(np.isfinite(el))
    if rows.size == 0:
        return np.empty(0), np.empty(0, dtype=np.int64)
    v = el[rows, cols] + 0.0  # −0.0 and 0.0 are one element value (np.isin finds both)
    order = np.lexsort((rows, v))
    v, rows = v[order], rows[order]
    first = np.r_[True, (v[1:] != v[:-1]) | (rows[1:] != rows[:-1])]  # once per row
    return np.unique(v[first], return_counts=True)


def _ranked(z: np.ndarray, top: int) -> tuple[list, list, list]:
    """The ``top`` indices of the largest |z| (nonzero), and the unions: the indices with
    z ≥ UNION_Z (more often under D) and z ≤ −UNION_Z, each the MAX_UNION largest."""
    idx = np.flatnonzero(z != 0)
    if idx.size == 0:
        return [], [], []
    order = idx[np.argsort(-np.abs(z[idx]), kind="stable")]
    pos = order[z[order] >= UNION_Z][:MAX_UNION]
    neg = order[z[order] <= -UNION_Z][:MAX_UNION]
    return order[:top].tolist(), sorted(pos.tolist()), sorted(neg.tolist())


def _released(fit_d: np.ndarray, fit_p: np.ndarray, start: int, top: int,
              mixed: bool) -> list[Released]:
    if fit_d.dtype.kind != "f" or fit_p.dtype.kind != "f" or fit_d.shape[1] <= start:
        return []
    pd = (~np.isnan(fit_d[:, start:])).sum(axis=0).astype(float)
    pp = (~np.isnan(fit_p[:, start:])).sum(axis=0).astype(float)
    n = fit_d.shape[0]
    varies = ((pd > 0) & (pd < n)) | ((pp > 0) & (pp < n)) | (pd != pp)
    if not varies.any():
        return []
    single, pos, neg = _ranked(np.where(varies, _z(pd, pp, n, fit_p.shape[0]), 0.0), top)
    out, seen = [], set()
    for group in [[j] for j in single] + [pos, neg]:
        if group and tuple(group) not in seen:
            seen.add(tuple(group))
            out.append(Released(tuple(j + start for j in group), tuple(group), mixed))
    return out


def _value_z(fit_d: np.ndarray, fit_p: np.ndarray, first: int,
             stride: int) -> tuple[np.ndarray, np.ndarray]:
    """The candidate values among the columns ``first``, ``first`` + ``stride``, … (an element of
    at least MIN_ROWS fitting rows) and the z of their presence."""
    vd, cd = _row_values(fit_d, first, stride)
    vp, cp = _row_values(fit_p, first, stride)
    values = np.union1d(vd, vp)
    count_d = np.zeros(values.size)
    count_p = np.zeros(values.size)
    count_d[np.searchsorted(values, vd)] = cd
    count_p[np.searchsorted(values, vp)] = cp
    keep = (count_d + count_p) >= MIN_ROWS
    return values[keep], _z(count_d[keep], count_p[keep], fit_d.shape[0], fit_p.shape[0])


def _holds(fit_d: np.ndarray, fit_p: np.ndarray, start: int, top: int) -> list[Holds]:
    """The ``top`` (value, layout) whose presence differs most, and the unions of the values
    more often present under D, and under D', in the layout of the first."""
    width = fit_d.shape[1] - start
    found, cands = {}, []
    for stride, offset in LAYOUTS:
        if offset >= width or (stride > 1 and width <= stride):
            continue
        values, z = _value_z(fit_d, fit_p, start + offset, stride)
        found[(stride, offset)] = (values, z)
        cands += [(-abs(float(zk)), i, stride, offset) for i, zk in enumerate(z) if zk != 0]
    if not cands:
        return []
    cands.sort()
    out, seen = [], set()
    for _, i, stride, offset in cands[:top]:
        out.append(Holds((float(found[(stride, offset)][0][i]),), start, stride, offset))
        seen.add((out[-1].values, stride, offset))
    stride, offset = cands[0][2], cands[0][3]
    values, z = found[(stride, offset)]
    _, pos, neg = _ranked(z, top)
    for group in (pos, neg):
        key = (tuple(float(values[k]) for k in group), stride, offset)
        if group and key not in seen:
            seen.add(key)
            out.append(Holds(key[0], start, stride, offset))
    return out


def presence_families(yd: np.ndarray, yp: np.ndarray, quick: bool, start: int = 2,
                      values: bool = True) -> Iterator[tuple]:
    """``(score, sd, sp, False)`` for the presence families (module docstring) of the encoded rows
    ``yd``, ``yp``, whose elements are the columns from ``start`` (2 for MIXED rows, 0 for
    vectors): :class:`Released` where some position is absent (NaN) in some fitting row, and with
    ``values`` :class:`Holds` for the values that repeat. Fitted on the first half of the rows and
    evaluated on the second."""
    half = yd.shape[0] // 2
    if half == 0 or yd.ndim != 2:
        return
    fit_d, fit_p, ev_d, ev_p = yd[:half], yp[:half], yd[half:], yp[half:]
    top = 2 if quick else TOP_PRESENCE
    scores: list = _released(fit_d, fit_p, start, top, mixed=start > 0)
    if values:
        scores += _holds(fit_d, fit_p, start, top)
    for sc in scores:
        yield sc, sc(ev_d), sc(ev_p), False
