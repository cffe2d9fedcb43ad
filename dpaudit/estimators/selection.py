"""Event selection on the selection split: pick the event, direction and bound method that promise
the largest ε lower bound on the validation split.

Given paired selection samples of M(D) and M(D') (row i of both from one seed when the design is
paired), every candidate event S (a level set of a score, :mod:`~dpaudit.estimators.events`) is
scored in both directions, (D, D') and (D', D), with the objective

    the ε_LB that S would get from ``n_val`` validation samples at the corrected level α,

computed by :func:`~dpaudit.estimators.bounds.projected_lb` for each bound method and α split.
This anticipates validation (Ding et al. 2018 pick the event with the smallest p-value on a
separate split; DP-Sniper, Bichsel et al. 2021 §5.2, threshold a classifier): a rare event with a
huge ratio loses to a likelier one when the validation budget could not confirm it, and there is
no minimum-probability floor, so where ε is large or infinite the bound keeps growing with the
budget. Events considered:

* scalars with ordered values: thresholds ``s ≥ t`` and ``s < t`` on up to :data:`THRESHOLDS`
  values (dense in both tails) and intervals ``lo ≤ s < hi`` on a coarser grid (both grids
  shrink with the sample: about 20 samples per threshold step);
* discrete outputs: likelihood-ratio-ordered sets of atoms (thresholds of :class:`~dpaudit.estimators.scores.AtomRatio`);
* real outputs, also: likelihood-ratio-ordered sets of float-structure cells (binade × trailing
  zero bits of the mantissa, repeated values; NaN and ±inf are cells of their own),
  which see the porous output sets of floating-point noise (:mod:`~dpaudit.estimators.floats`);
* vectors: whole-pattern ratios (few distinct vectors), cell-pattern ratios (real coordinates
  binned), a naive-Bayes score, a logistic-regression
  score on flag features (:mod:`~dpaudit.estimators.logistic`), and the coordinates whose
  marginal laws differ most (thresholds and intervals, and the float-structure cells of those
  that carry non-integer values);
* vectors, and tuples / lists of varying length or with None (``MIXED``): events on the joint
  structure, pattern of atoms × real values in an interval or tail, per-position and length
  events (:mod:`~dpaudit.estimators.joint`), and presence events, "position j is released" and
  "the output holds the key v" (:mod:`~dpaudit.estimators.presence`).

Fitted scores are fitted on the first half of the selection split and thresholded on the second.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Iterator, Mapping, Optional

import numpy as np

from dpaudit.estimators.binning import Binner
from dpaudit.estimators.bounds import SPLITS, projected_lb, projected_lbs
from dpaudit.estimators.events import Event
from dpaudit.estimators.floats import (FAMILIES as FLOAT_FAMILIES, fit_float_cells, float_structure,
                                       revealing_bits)
from dpaudit.estimators.joint import float_elements, joint_families, mixed_families, scores_of
from dpaudit.estimators.logistic import fit_logistic
from dpaudit.estimators.compact import BYTE_VALUES, row_keys
from dpaudit.estimators.scores import (Coordinate, Identity, IntBit, OnColumns, Score, fit_atoms,
                                       fit_cell_patterns, fit_discriminant, fit_naive_bayes,
                                       fit_patterns, pooled_cells)
from dpaudit.outputs import OutputSchema
from dpaudit.spec import OutputKind

__all__ = ["Choice", "threshold_grid", "choose_event", "choose_event_halves", "choose_events_halves",
           "LOGIC", "FLOAT", "QUESTION_FAMILIES", "score_families", "vector_families",
           "top_coordinates", "THRESHOLDS", "INTERVAL_GRID"]

#: the two questions an audit answers: is the claim right for the mechanism as a model over the
#: reals (events on values: thresholds, intervals, scores, joint events), and is its float64
#: implementation safe (float-structure events on the bits of real outputs: porosity, Mironov 2012)
LOGIC = "logic"
FLOAT = "float"
#: the ``floats`` argument of :func:`score_families` that gives each question its own families
QUESTION_FAMILIES = {LOGIC: False, FLOAT: "only"}

#: at most this many thresholds per score, and this many grid points for intervals
THRESHOLDS = 1500
INTERVAL_GRID = 120
#: vectors get per-coordinate events for the COORDINATE_FAMILIES coordinates whose laws differ
#: most; the fitted scores of vectors longer than MAX_COORDINATES (cell patterns, naive Bayes,
#: logistic regression, whole patterns, joint structure) see only the MAX_COORDINATES coordinates
#: that differ most on the fitting rows (a histogram of thousands of bins, one of which moves,
#: is scored on the bins that moved, and fitting stays linear in the length, not cubic)
MAX_COORDINATES = 64
COORDINATE_FAMILIES = 8
#: values per block when column statistics are summed a block of rows at a time
_STATS_BLOCK = 1 << 16
#: bins per coordinate of the cell-pattern and the naive-Bayes scores of vectors
CELL_PATTERN_BINS = 16
NAIVE_BAYES_BINS = 32
#: honest selection re-projects this many events per half (the best of each family and side)
#: on the other half, moved HONEST_Z standard errors the pessimistic way (a short list still
#: has a small winner's curse of its own)
HONEST_SHORTLIST = 24
HONEST_Z = 2.0
#: ... and this many narrow alternatives: the best event of a family and side whose count is at
#: most 1/NARROW of the count of that family's best (a single pattern of a threshold score where
#: the whole top of the score is a union of weaker ones). Under the selection's pessimism a rare
#: event with a high ratio loses to a likelier one on the choosing half even where the other half
#: would rank it first (no-abort SVT: its best pattern, p ≈ 3·10⁻⁴, re-projects at 0.181 and the
#: family's best at 0.170)
HONEST_NARROW = 8
NARROW = 4
#: ... and this many when scoring pairs (quick): there the value only ranks pairs for the race,
#: which re-measures them on fresh samples, so a rare strong event may show its promise
HONEST_Z_QUICK = 1.0


@dataclass(frozen=True, slots=True, eq=False)
class Choice:
    """The selected candidate: an event, which dataset is the numerator (0: D, 1: D'), the bound
    method and its α split, and the projected ε_LB. ``curve`` (identity thresholds only) holds the
    projected bound per threshold for the report's plot."""

    event: Event
    numerator: int
    method: str
    split: tuple
    projected: float
    curve: Optional[dict] = field(default=None)


# ---------------------------------------------------------------------------------------------
# thresholds and counts

def _distinct(sorted_d: np.ndarray, sorted_p: np.ndarray) -> np.ndarray:
    """The distinct finite values of two sorted arrays (the two sorted runs merged by a stable
    sort in linear time; equal to ``np.unique`` of both, less NaN and ±inf)."""
    u = np.sort(np.concatenate([sorted_d, sorted_p]), kind="stable")
    u = u[np.isfinite(u)]
    if u.size > 1:
        u = u[np.r_[True, u[1:] != u[:-1]]]
    return u


def threshold_grid(u: np.ndarray, g: int) -> np.ndarray:
    """At most ``g`` of the sorted distinct values ``u``: all when few, else evenly spread ranks
    plus geometrically dense ranks in both tails."""
    m = u.size
    if m <= g:
        return u
    k = g // 4
    tail = np.unique(np.geomspace(1, m / 2, k).astype(int))
    ranks = np.unique(np.concatenate([np.linspace(0, m - 1, g - 2 * tail.size).astype(int),
                                      tail, m - 1 - tail]))
    return u[ranks]


def _ge(sorted_s: np.ndarray, valid: int, t: np.ndarray) -> np.ndarray:
    """#{s ≥ t} for each t (NaNs, sorted last, never count)."""
    return valid - np.searchsorted(sorted_s[:valid], t, side="left")


@dataclass(frozen=True, slots=True)
class _Table:
    """Counts of one family of events: arrays over events of (x: # D in S, y: # D' in S,
    a: # pairs both in S), with the events' (lo, hi) and side."""

    side: str
    lo: np.ndarray
    hi: np.ndarray
    x: np.ndarray
    y: np.ndarray
    a: np.ndarray


def _tables(sd: np.ndarray, sp: np.ndarray, thresholds: int, grid: int,
            intervals: bool) -> Iterator[_Table]:
    if sd.dtype == np.int8 and sp.dtype == np.int8:
        yield from _byte_tables(sd, sp, thresholds, grid, intervals)
        return
    sorted_d, sorted_p = np.sort(sd), np.sort(sp)
    u = _distinct(sorted_d, sorted_p)
    t = threshold_grid(u, thresholds)
    if t.size == 0:
        return
    with np.errstate(invalid="ignore"):
        mn, mx = np.minimum(sd, sp), np.maximum(sd, sp)
    sorted_mx = np.sort(mx)
    valid_d, valid_p, valid_mx = (int(np.count_nonzero(~np.isnan(v)))
                                  for v in (sorted_d, sorted_p, sorted_mx))
    ge_d, ge_p = _ge(sorted_d, valid_d, t), _ge(sorted_p, valid_p, t)
    ge_max = _ge(sorted_mx, valid_mx, t)
    if valid_d == valid_p == valid_mx == sd.size:
        # no NaN: #{min ≥ t} = #{s_D ≥ t} + #{s_D' ≥ t} − #{max ≥ t} (inclusion-exclusion),
        # which spares sorting the minima
        ge_min = ge_d + ge_p - ge_max
    else:
        sorted_mn = np.sort(mn)
        ge_min = _ge(sorted_mn, int(np.count_nonzero(~np.isnan(sorted_mn))), t)
    nan_hi = np.full(t.size, np.inf)
    yield _Table("above", t, nan_hi, ge_d, ge_p, ge_min)
    lt_d = np.searchsorted(sorted_d[:valid_d], t, side="left")
    lt_p = np.searchsorted(sorted_p[:valid_p], t, side="left")
    lt_max = np.searchsorted(sorted_mx[:valid_mx], t, side="left")
    yield _Table("below", np.full(t.size, -np.inf), t, lt_d, lt_p, lt_max)
    if not intervals:
        return
    g = threshold_grid(u, grid)
    if g.size < 3:
        return
    if valid_d == valid_p == sd.size:  # no NaN: every pair counts
        both_real = (mn, mx)
    else:
        ok = ~(np.isnan(mn) | np.isnan(mx))
        both_real = (mn[ok], mx[ok])
    # = b(min) + 1 in 0..G (a Binner pays for building itself on large samples only)
    grid_bin = Binner(g, side="right") if mn.size >= 1 << 16 else partial(np.searchsorted, g, side="right")
    bmin = grid_bin(both_real[0])
    bmax = grid_bin(both_real[1])
    G = g.size
    h = np.bincount(bmin * (G + 1) + bmax, minlength=(G + 1) ** 2).reshape(G + 1, G + 1).astype(float)
    s = np.cumsum(np.cumsum(h[::-1], axis=0)[::-1], axis=1)  # s[u, w] = Σ_{u'≥u, w'≤w} h
    i, j = np.triu_indices(G, k=1)
    gd, gp = _ge(sorted_d, valid_d, g), _ge(sorted_p, valid_p, g)
    yield _Table("interval", g[i], g[j], gd[i] - gd[j], gp[i] - gp[j], s[i + 1, j])


def _byte_tables(sd: np.ndarray, sp: np.ndarray, thresholds: int, grid: int,
                 intervals: bool) -> Iterator[_Table]:
    """:func:`_tables` of int8 scores (a compact coordinate, :mod:`~dpaudit.estimators.compact`)
    in one pass: each value's code v + 128 orders the values, so #{s ≥ t} is a suffix sum of
    the 256-bin histogram, and the interval counts are histograms of the grid bins of the
    pairs' minimum and maximum. The same tables as sorting gives."""
    values = np.arange(-128, 128, dtype=np.int8)
    cd, cp = sd.view(np.uint8) ^ np.uint8(128), sp.view(np.uint8) ^ np.uint8(128)
    cmin, cmax = np.minimum(cd, cp), np.maximum(cd, cp)
    hist = [np.bincount(c, minlength=256) for c in (cd, cp, cmin, cmax)]
    u = values[(hist[0] + hist[1]) > 0]
    t = threshold_grid(u, thresholds)
    if t.size == 0:
        return
    suffix = [np.cumsum(h[::-1])[::-1] for h in hist]  # suffix[k][c] = #{code ≥ c}
    n = sd.size
    at = t.astype(np.intp) + 128
    ge_d, ge_p, ge_min, ge_max = (sx[at] for sx in suffix)
    yield _Table("above", t, np.full(t.size, np.inf), ge_d, ge_p, ge_min)
    yield _Table("below", np.full(t.size, -np.inf), t, n - ge_d, n - ge_p, n - ge_max)
    if not intervals:
        return
    g = threshold_grid(u, grid)
    if g.size < 3:
        return
    G = g.size
    bins = np.searchsorted(g, values, side="right")  # the grid bin of each code, as _tables
    h = np.bincount(np.take(bins, cmin) * (G + 1) + np.take(bins, cmax),
                    minlength=(G + 1) ** 2).reshape(G + 1, G + 1).astype(float)
    s = np.cumsum(np.cumsum(h[::-1], axis=0)[::-1], axis=1)
    i, j = np.triu_indices(G, k=1)
    gi = g.astype(np.intp) + 128
    gd, gp = suffix[0][gi], suffix[1][gi]
    yield _Table("interval", g[i], g[j], gd[i] - gd[j], gp[i] - gp[j], s[i + 1, j])


# ---------------------------------------------------------------------------------------------
# scoring the events of a table

def _score_tables(tabs: list, n: int, n_val: float, alpha: float, delta: float,
                  methods: tuple, quick: bool) -> list[tuple]:
    """For each table, its best (value, (side, lo, hi, numerator, method, split)) and the
    projected bound per event for the best direction/method (for the curve), and its best
    *narrow* alternative (value, found) or None: the best event whose numerator count is at most
    1/:data:`NARROW` of the best's (module docstring). The events of all the tables, in both
    directions, are projected in one vectorised call per (method, split)."""
    sizes = [t.x.size for t in tabs]
    ends = np.cumsum(sizes)
    total = int(ends[-1]) if sizes else 0
    fx, fy = np.concatenate([t.x for t in tabs]), np.concatenate([t.y for t in tabs])
    fa = np.concatenate([t.a for t in tabs])
    x, y, a = np.concatenate([fx, fy]), np.concatenate([fy, fx]), np.concatenate([fa, fa])
    best = [(-np.inf, None, None) for _ in tabs]
    where = [-1 for _ in tabs]  # the best's index into x (both directions)
    runs = []
    for method in methods:
        splits = SPLITS[method][:1] if quick else SPLITS[method]
        vs = projected_lbs(method, n, x, y, a, n_val, alpha, splits, delta)
        for split, v in zip(splits, vs):
            runs.append((method, split, v))
            for t, (tab, m, e) in enumerate(zip(tabs, sizes, ends)):
                if m == 0:
                    continue
                fwd, bwd = v[e - m: e], v[total + e - m: total + e]
                k = int(np.argmax(np.concatenate([fwd, bwd])))
                value = fwd[k] if k < m else bwd[k - m]
                if value > best[t][0]:
                    numerator, i = (0, k) if k < m else (1, k - m)
                    best[t] = (float(value), (tab.side, float(tab.lo[i]), float(tab.hi[i]), numerator,
                                              method, split), fwd if k < m else bwd)
                    where[t] = (e - m + i) + (total if numerator else 0)
    out = []
    for t, (tab, m, e) in enumerate(zip(tabs, sizes, ends)):
        narrow: Optional[tuple] = None
        if best[t][1] is not None and not quick:
            idx = np.r_[e - m: e, total + e - m: total + e]
            rare = idx[x[idx] * NARROW <= x[where[t]]]
            for method, split, v in runs:
                if rare.size == 0:
                    break
                k = int(rare[np.argmax(v[rare])])
                if np.isfinite(v[k]) and (narrow is None or v[k] > narrow[0]):
                    numerator = int(k >= total)
                    i = k - (total if numerator else 0) - (e - m)
                    narrow = (float(v[k]), (tab.side, float(tab.lo[i]), float(tab.hi[i]), numerator,
                                            method, split))
        out.append((*best[t], narrow))
    return out


def top_coordinates(yd: np.ndarray, yp: np.ndarray, top: int = COORDINATE_FAMILIES) -> list[int]:
    """The coordinates that get events of their own: the ``top`` whose marginal laws differ most
    between D and D' (standardised difference of means, or of the frequency of the coordinate's
    most common value, whichever is larger), in index order."""
    d = yd.shape[1]
    if d <= top:
        return list(range(d))
    mode = yd[0]
    return _ranked(_column_stats(yd, mode), _column_stats(yp, mode), top)


def _ranked(stats_d: tuple, stats_p: tuple, top: int) -> list[int]:
    """:func:`top_coordinates` from the columns' statistics (:func:`_column_stats`) of D and D'."""
    (md, vd, fd), (mp, vp, fp) = stats_d, stats_p
    sd = np.sqrt(0.5 * (vd + vp)) + 1e-300
    gap = np.abs(md - mp) / sd
    pooled = 0.5 * (fd + fp)
    gap = np.maximum(gap, np.abs(fd - fp) / np.sqrt(pooled * (1 - pooled) + 1e-12))
    return sorted(np.argsort(-gap, kind="stable")[:top].tolist())


def _column_stats(y: np.ndarray, mode: np.ndarray) -> tuple:
    """Per column: mean, variance, and the frequency of the value ``mode[j]``, summed a block of
    rows at a time (no temporary of the whole sample, and no Python loop over thousands of
    columns); for int8 rows from one 256-bin histogram per column (the same numbers as numpy's
    reductions over the rows, up to the rounding of the sums)."""
    if y.shape[0] == 0:
        return y.mean(axis=0), y.var(axis=0), (y == mode).mean(axis=0)
    if y.dtype != np.int8:  # a block of rows at a time: no temporary of the whole sample
        n, rows = y.shape[0], max(1, _STATS_BLOCK // max(1, y.shape[1]))
        blocks = [y[i:i + rows] for i in range(0, n, rows)]
        mean = sum(b.sum(axis=0) for b in blocks) / n
        var = sum(((b - mean) ** 2).sum(axis=0) for b in blocks) / n
        freq = sum(np.count_nonzero(b == mode, axis=0) for b in blocks) / n
        return mean, var, freq
    n = y.shape[0]
    h = np.stack([np.bincount(y[:, j].view(np.uint8), minlength=256) for j in range(y.shape[1])])
    h = h.astype(float)
    mean = h @ BYTE_VALUES / n
    var = np.einsum("jv,jv->j", h, (BYTE_VALUES[None, :] - mean[:, None]) ** 2) / n
    freq = h[np.arange(y.shape[1]), np.asarray(mode, dtype=np.int8).view(np.uint8)] / n
    return mean, var, freq


def _distinct_rows(a: np.ndarray, b: np.ndarray, few: int) -> int:
    """The number of distinct rows of ``a`` and ``b`` together, or a number above ``few`` when
    there are more (a prefix of the rows already shows it, which spares sorting all of them)."""
    head = np.unique(row_keys(np.concatenate([a[: 2 * few], b[: 2 * few]]))).size
    if head > few or (a.shape[0] <= 2 * few and b.shape[0] <= 2 * few):
        return head
    return np.unique(row_keys(np.concatenate([a, b]))).size


def score_families(yd: np.ndarray, yp: np.ndarray, schema: OutputSchema, quick: bool,
                   floats: Any = True) -> Iterator[tuple[Score, np.ndarray, np.ndarray, bool]]:
    """``(score, sd, sp, intervals)`` for every family of events the schema gets (module
    docstring): the score, its values on the rows of D and of D' that its events are thresholded
    on (the second half of ``yd`` / ``yp`` for a fitted score, all rows otherwise), and whether
    intervals are tried besides thresholds. ``quick``: the smaller set used to rank pairs;
    ``floats``: True, the float-structure families too; False, none of them (the logic
    question); ``"only"``, those alone (the float64 question, :data:`FLOAT`)."""
    logic = floats != "only"
    floats = bool(floats)
    n = yd.shape[0]
    half = n // 2
    fit_d, fit_p, ev_d, ev_p = yd[:half], yp[:half], yd[half:], yp[half:]
    kind = schema.kind
    if kind is OutputKind.MIXED:
        if logic:
            yield from mixed_families(yd, yp, quick)
        if floats and half:
            yield from _float_coordinate_families(fit_d, fit_p, ev_d, ev_p,
                                                  float_elements(fit_d, fit_p), quick, nan_absent=True)
        return
    if kind is OutputKind.VECTOR:
        if logic:
            yield from vector_families(yd, yp, quick)
        coordinates = top_coordinates(yd, yp)
        names = schema.names  # the keys of dict outputs, which events name coordinates by
        if logic:
            for j in coordinates:
                sc = Coordinate(j, None if names is None else names[j])
                yield sc, sc(yd), sc(yp), True
        if floats and half:
            yield from _float_coordinate_families(fit_d, fit_p, ev_d, ev_p, coordinates, quick, names)
        return
    if schema.ordered:
        sc = Identity()
        if logic:
            yield sc, yd, yp, True
        head = np.concatenate([yd[: min(n, 5000)], yp[: min(n, 5000)]])
        distinct = np.unique(head).size
        if floats and kind is OutputKind.REAL and half:
            yield from _float_families(fit_d, fit_p, ev_d, ev_p, distinct < 0.9 * head.size, quick)
        if distinct > 256 and kind is OutputKind.DISCRETE and half and logic:
            # integers too many for atoms: a bit of theirs that differs (a payload in a count)
            for bit in revealing_bits(fit_d, fit_p, integer=True):
                sc = IntBit(bit)
                yield sc, sc(ev_d), sc(ev_p), False
        if distinct > 256 or half == 0 or not logic:
            return
    if half and logic:
        sc = fit_atoms(fit_d, fit_p)
        yield sc, sc(ev_d), sc(ev_p), False


def vector_families(yd: np.ndarray, yp: np.ndarray,
                    quick: bool) -> Iterator[tuple[Score, np.ndarray, np.ndarray, bool]]:
    """The fitted score families of vector rows (:func:`score_families`): whole patterns when they
    are few, else cell patterns; naive Bayes, logistic regression, and the joint structure. Rows
    longer than :data:`MAX_COORDINATES` are fitted and scored on the coordinates that differ
    most on the fitting half (:class:`~dpaudit.estimators.scores.OnColumns`), chosen on rows the
    thresholds of these scores never see."""
    half = yd.shape[0] // 2
    if half == 0:
        return
    wrap = lambda sc: sc  # noqa: E731
    if yd.shape[1] > MAX_COORDINATES:
        # every coordinate moving a little (a sum released per bin) shows on all of them at once
        mode = yd[0]
        sd_, sp_ = _column_stats(yd[:half], mode), _column_stats(yp[:half], mode)
        sc = fit_discriminant(sd_, sp_)
        yield sc, sc(yd[half:]), sc(yp[half:]), False
        cols = np.asarray(_ranked(sd_, sp_, MAX_COORDINATES), dtype=np.intp)
        yd, yp = yd[:, cols], yp[:, cols]
        wrap = lambda sc: OnColumns(sc, cols)  # noqa: E731
    fit_d, fit_p, ev_d, ev_p = yd[:half], yp[:half], yd[half:], yp[half:]
    few = min(4000, max(2, half // 5))  # patterns few enough to estimate each one's ratio
    rows = _distinct_rows(fit_d, fit_p, few)
    # the cells of both cell fits, each pooled column sorted once
    cells = pooled_cells(fit_d, fit_p, (CELL_PATTERN_BINS, NAIVE_BAYES_BINS))
    if 0 < rows <= few:
        sc = fit_patterns(fit_d, fit_p)
        yield wrap(sc), sc(ev_d), sc(ev_p), False
    else:
        sc = fit_cell_patterns(fit_d, fit_p, CELL_PATTERN_BINS, max_patterns=few,
                               cells=tuple(c[0] for c in cells))
        if sc is not None and 0 < sc.inner.llr.size <= few:
            yield wrap(sc), sc(ev_d), sc(ev_p), False
    sc = fit_naive_bayes(fit_d, fit_p, NAIVE_BAYES_BINS, cells=tuple(c[1] for c in cells))
    yield wrap(sc), sc(ev_d), sc(ev_p), False
    sc = fit_logistic(fit_d, fit_p)
    yield wrap(sc), sc(ev_d), sc(ev_p), False
    for sc, sd, sp, intervals in joint_families(yd, yp, quick, vector=True):
        yield wrap(sc), sd, sp, intervals


def _float_families(fit_d, fit_p, ev_d, ev_p, repeats: bool, quick: bool,
                    coordinate: Optional[int] = None, name: Any = None, nan_absent: bool = False):
    """The float-structure families of real outputs (:mod:`~dpaudit.estimators.floats`): binade
    × trailing zero bits (binade × last two bits too, when listed and not ``quick``), and exact
    atoms of the values when some repeat, where rounding can leave its mark in the low bits;
    only the sign of a zero and the non-finite outputs (``signed``) where every value lies on one
    grid, whose other bits are functions of the value (events on them are the logic's); of column
    ``coordinate`` for vector outputs (``nan_absent``: NaN marks an absent element of a mixed
    output, :mod:`~dpaudit.outputs`, whose presence is the logic's to judge)."""
    yd, yp = (fit_d, fit_p) if coordinate is None else (fit_d[:, coordinate], fit_p[:, coordinate])
    if nan_absent:
        yd, yp = yd[~np.isnan(yd)], yp[~np.isnan(yp)]
        if not (yd.size and yp.size):  # present under one dataset only: its presence is the logic's
            return
    kind = float_structure(yd, yp)
    if kind is None:
        return
    families = FLOAT_FAMILIES if kind == "bits" else ("signed",)
    for family in families:
        if (family == "lowbits" and quick) or (family == "repeated" and not repeats):
            continue
        sc = fit_float_cells(family, fit_d, fit_p, coordinate, name)
        if nan_absent:  # an absent element is no NaN output: its presence is the logic's event
            sc = sc.without(sc.cells(np.array([np.nan])).tolist())
        # the signed cells: one zero per score (+0.0 is cell 0, −0.0 cell 1, the rest cell 2), so
        # that no event is "the output is zero" or "it is not", which are the value's
        for one in ([sc.without((1, 2)), sc.without((0, 2))] if family == "signed" else [sc]):
            yield one, one(ev_d), one(ev_p), False
    if kind == "bits":  # a mantissa bit whose frequency differs (a payload in the low bits)
        for bit in revealing_bits(yd, yp):
            sc = fit_float_cells("bit", fit_d, fit_p, coordinate, name, bit=bit)
            if nan_absent:
                sc = sc.without(sc.cells(np.array([np.nan])).tolist())
            yield sc, sc(ev_d), sc(ev_p), False


def _float_coordinate_families(fit_d, fit_p, ev_d, ev_p, coordinates: list[int], quick: bool,
                               names: Optional[tuple] = None, nan_absent: bool = False):
    """The float-structure families of the real coordinates among ``coordinates`` of vector
    outputs (:func:`_float_families` of each). Repeated values of a coordinate (codes, clamped
    ends) are left to the vector's own pattern and per-coordinate scores."""
    for j in coordinates:
        yield from _float_families(fit_d, fit_p, ev_d, ev_p, False, quick, coordinate=j,
                                   name=None if names is None else names[j], nan_absent=nan_absent)


def choose_event(yd: np.ndarray, yp: np.ndarray, schema: OutputSchema, *, n_val: float,
                 alpha: float, delta: float = 0.0, paired: bool = True, quick: bool = False,
                 honest: bool = False, folds: int = 1, floats: Any = True) -> Optional[Choice]:
    """The best event for the selection samples ``yd``, ``yp`` (equal length; paired rows when
    ``paired``), or None when there are too few samples. ``n_val`` is the validation size per
    dataset, ``alpha`` the candidate's error level after the family-wise correction, ``delta`` the
    claimed δ. ``quick`` (pair scoring) tries one α split per method and a coarser interval grid.

    With ``honest``, the best event of each (score family, side) is chosen on one half of the
    rows, and each is projected again on the other half with no pessimism; the best of these few
    is returned with that value, an estimate nearly free of the winner's curse of choosing among
    thousands of events. With ``folds=2`` both halves take a turn at choosing (two-fold
    cross-fitting). ``floats`` is :func:`score_families`'s: False leaves out the float-structure
    families (the logic question, an idealised real-valued mechanism), ``"only"`` keeps them
    alone (the float64 question).
    """
    if not honest:
        cands = _choose(yd, yp, schema, n_val, alpha, delta, paired, quick, floats)[0]
        return cands[0] if cands else None
    h = yd.shape[0] // 2
    parts = ((yd[:h], yp[:h]), (yd[h:], yp[h:]))
    return choose_event_halves(lambda i: parts[i], schema, n_val=n_val, alpha=alpha, delta=delta,
                               paired=paired, quick=quick, folds=folds, floats=floats)


def choose_event_halves(get: Callable[[int], tuple], schema: OutputSchema, *, n_val: float,
                        alpha: float, delta: float = 0.0, paired: bool = True, quick: bool = False,
                        folds: int = 1, floats: Any = True) -> Optional[Choice]:
    """:func:`choose_event` with ``honest``, the two halves of the sample given by ``get(0)`` and
    ``get(1)`` (each a pair ``(yd, yp)``) rather than held together: half 0 chooses, half 1
    re-projects; with ``folds=2`` half 1 then chooses and half 0 (asked for again) re-projects.
    At most one half is referenced here at a time, so a ``get`` that draws a large half afresh
    on the same seeds (:meth:`dpaudit.auditing.sampler.Sampler.halves`) keeps the peak memory to
    one half; the same choice as ``choose_event`` on the halves stacked. (One question of
    :func:`choose_events_halves`, whose families are ``floats``.)"""
    return choose_events_halves(get, schema, {"": (alpha, n_val)}, delta=delta, paired=paired,
                                quick=quick, folds=folds, families={"": floats})[""]


def choose_events_halves(get: Callable[[int], tuple], schema: OutputSchema,
                         asks: Mapping[str, tuple[float, float]], *, delta: float = 0.0,
                         paired: bool = True, quick: bool = False, folds: int = 1,
                         families: Mapping[str, Any] = QUESTION_FAMILIES) -> dict[str, Optional[Choice]]:
    """:func:`choose_event_halves` for each question of ``asks`` at once (``{question: (alpha,
    n_val)}``, questions :data:`LOGIC` and :data:`FLOAT`): the best event of the question's own
    families (``families[question]``, :func:`score_families`'s ``floats``), at its own level and
    validation size, from one pass over the halves. The families of the two questions are
    disjoint, so this costs what one choice among all the families costs."""
    best: dict[str, Optional[Choice]] = {q: None for q in asks}
    folds = max(1, min(2, folds))

    def shortlists(rows: tuple) -> dict:
        return {q: _shortlist(_choose(*rows, schema, n_val, alpha, delta, paired, quick, families[q]))
                for q, (alpha, n_val) in asks.items()}

    fit = get(0)
    short = shortlists(fit)
    del fit
    for k in range(folds):
        ev = get(1 - k)
        for q, (alpha, n_val) in asks.items():
            best[q] = _reproject(short[q], ev, n_val, alpha, delta, quick, best[q])
        if k + 1 < folds:
            short = shortlists(ev)
        del ev
    return best


def _shortlist(chosen: tuple) -> list:
    """The events re-projected on the other half: the :data:`HONEST_SHORTLIST` best of the
    families and sides, and the :data:`HONEST_NARROW` best narrow alternatives."""
    best, narrow = chosen
    return best[:HONEST_SHORTLIST] + narrow[:HONEST_NARROW]


def _reproject(short: list, ev: tuple, n_val: float, alpha: float, delta: float, quick: bool,
               best: Optional[Choice]) -> Optional[Choice]:
    """The best of ``best`` and the shortlist's events re-projected on the rows ``ev`` (moved
    HONEST_Z, or HONEST_Z_QUICK, standard errors the pessimistic way); ties keep the earlier."""
    bd, bp = ev
    # one evaluation of each score on (bd, bp), for all its events, then let go of (joint
    # scores on one set of patterns share one signature of the rows)
    by_score: dict = {}
    for i, c in enumerate(short):
        by_score.setdefault(id(c.event.score), []).append(i)
    groups = list(by_score.values())
    scores = [short[idx[0]].event.score for idx in groups]
    counts = [(0, 0, 0)] * len(short)
    for (g, sd), (_, sp) in zip(scores_of(scores, bd), scores_of(scores, bp)):
        for i in groups[g]:
            c = short[i]
            num, den = (sd, sp) if c.numerator == 0 else (sp, sd)
            inn, ind = c.event.holds(num), c.event.holds(den)
            counts[i] = (np.count_nonzero(inn), np.count_nonzero(ind), np.count_nonzero(inn & ind))
        del sd, sp
    # projected together, one call per (method, split): the same numbers, element by element
    value = [0.0] * len(short)
    by_method: dict = {}
    for i, c in enumerate(short):
        by_method.setdefault((c.method, tuple(c.split)), []).append(i)
    for (method, split), idx in by_method.items():
        x, y, a = (np.array([counts[i][k] for i in idx]) for k in range(3))
        v = projected_lb(method, bd.shape[0], x, y, a, n_val, alpha, split, delta,
                         pessimism=HONEST_Z_QUICK if quick else HONEST_Z)
        for i, vi in zip(idx, v):
            value[i] = float(vi)
    for c, v in zip(short, value):
        if best is None or v > best.projected:
            best = Choice(c.event, c.numerator, c.method, c.split, v, c.curve)
    return best


def _choose(yd: np.ndarray, yp: np.ndarray, schema: OutputSchema, n_val: float, alpha: float,
            delta: float, paired: bool, quick: bool, floats: Any = True
            ) -> tuple[list[Choice], list[Choice]]:
    """The best event of every (score family, side), best first, and the best narrow alternative
    of each (:data:`NARROW`), best first."""
    if yd.shape[0] < 4:
        return [], []
    if delta > 0:
        methods: tuple = ("marginal", "paired") if paired else ("marginal",)
    else:
        methods = ("ratio", "paired") if paired else ("ratio",)
        if not quick:
            methods = ("marginal",) + methods
    out: list[Choice] = []
    alt: list[Choice] = []
    for sc, sd, sp, intervals in score_families(yd, yp, schema, quick, floats):
        # grids coarse enough that each step holds ~20 samples: fewer, sturdier events on small
        # samples, where the best of many fine events would mostly be the luckiest
        g = int(min(THRESHOLDS, max(16, sd.size // 20)))
        gi = int(min(INTERVAL_GRID, max(6, np.sqrt(sd.size) / 2)))
        if quick:
            gi = max(6, gi // 2)
        tabs = list(_tables(sd, sp, g, gi, intervals))
        if not tabs:
            continue
        scored = _score_tables(tabs, sd.size, n_val, alpha, delta, methods, quick)
        for tab, (value, found, v, narrow) in zip(tabs, scored):
            if found is None or not np.isfinite(value):
                continue
            side, lo, hi, numerator, method, split = found
            event = Event(sc, side, None if side == "below" else lo, None if side == "above" else hi)
            curve = None
            if isinstance(sc, Identity) and side != "interval":
                t = tab.lo if side == "above" else tab.hi
                keep = np.isfinite(v)
                curve = {"threshold": t[keep].tolist(), "epsilon_lower_bound": v[keep].tolist(),
                         "chosen": lo if side == "above" else hi, "projected": True}
            out.append(Choice(event, numerator, method, tuple(split), value, curve))
            if narrow is not None:
                nvalue, (side, lo, hi, numerator, method, split) = narrow
                alt.append(Choice(Event(sc, side, None if side == "below" else lo,
                                        None if side == "above" else hi),
                                  numerator, method, tuple(split), nvalue))
    out.sort(key=lambda c: -c.projected)
    alt.sort(key=lambda c: -c.projected)
    return out, alt
