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
* discrete outputs: likelihood-ratio-ordered sets of atoms (thresholds of :class:`AtomRatio`);
* vectors: whole-pattern ratios (few distinct vectors), a naive-Bayes score, and each coordinate.

Fitted scores are fitted on the first half of the selection split and thresholded on the second.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

import numpy as np

from dpaudit.estimators.bounds import SPLITS, projected_lb
from dpaudit.estimators.events import Event
from dpaudit.estimators.scores import (Coordinate, Identity, _rows, fit_atoms, fit_naive_bayes,
                                       fit_patterns)
from dpaudit.outputs import OutputSchema
from dpaudit.spec import OutputKind

__all__ = ["Choice", "choose_event", "THRESHOLDS", "INTERVAL_GRID"]

#: at most this many thresholds per score, and this many grid points for intervals
THRESHOLDS = 1500
INTERVAL_GRID = 120
#: vectors with at most this many coordinates also get per-coordinate events
MAX_COORDINATES = 32


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

def _thresholds(sd: np.ndarray, sp: np.ndarray, g: int) -> np.ndarray:
    u = np.unique(np.concatenate([sd, sp]))
    u = u[np.isfinite(u)]
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
    n = sd.size
    t = _thresholds(sd, sp, thresholds)
    if t.size == 0:
        return
    with np.errstate(invalid="ignore"):
        mn, mx = np.minimum(sd, sp), np.maximum(sd, sp)
    arrays = [np.sort(v) for v in (sd, sp, mn, mx)]
    valid = [int(np.count_nonzero(~np.isnan(v))) for v in (sd, sp, mn, mx)]
    ge_d, ge_p, ge_min = (_ge(arrays[i], valid[i], t) for i in range(3))
    nan_hi = np.full(t.size, np.inf)
    yield _Table("above", t, nan_hi, ge_d, ge_p, ge_min)
    lt_d = np.searchsorted(arrays[0][: valid[0]], t, side="left")
    lt_p = np.searchsorted(arrays[1][: valid[1]], t, side="left")
    lt_max = np.searchsorted(arrays[3][: valid[3]], t, side="left")
    yield _Table("below", np.full(t.size, -np.inf), t, lt_d, lt_p, lt_max)
    if not intervals:
        return
    g = _thresholds(sd, sp, grid)
    if g.size < 3:
        return
    ok = ~(np.isnan(mn) | np.isnan(mx))
    bmin = np.searchsorted(g, mn[ok], side="right")   # = b(min) + 1 in 0..G
    bmax = np.searchsorted(g, mx[ok], side="right")
    G = g.size
    h = np.zeros((G + 1, G + 1))
    np.add.at(h, (bmin, bmax), 1.0)
    s = np.cumsum(np.cumsum(h[::-1], axis=0)[::-1], axis=1)  # s[u, w] = Σ_{u'≥u, w'≤w} h
    i, j = np.triu_indices(G, k=1)
    gd, gp = _ge(arrays[0], valid[0], g), _ge(arrays[1], valid[1], g)
    yield _Table("interval", g[i], g[j], gd[i] - gd[j], gp[i] - gp[j], s[i + 1, j])
    del n


# ---------------------------------------------------------------------------------------------
# scoring the events of a table

@dataclass(slots=True)
class _Best:
    value: float = -np.inf
    found: Optional[tuple] = None


def _score_table(tab: _Table, n: int, n_val: float, alpha: float, delta: float,
                 methods: tuple, quick: bool, best: _Best, tag: Any) -> Optional[np.ndarray]:
    """Update ``best`` with the table's best (event, direction, method, split); return the
    projected bound per event for the best direction/method (for the curve). Both directions
    are projected in one vectorised call per (method, split)."""
    m = tab.x.size
    x = np.concatenate([tab.x, tab.y])
    y = np.concatenate([tab.y, tab.x])
    a = np.concatenate([tab.a, tab.a])
    best_curve, best_here = None, -np.inf
    for method in methods:
        for split in (SPLITS[method][:1] if quick else SPLITS[method]):
            v = projected_lb(method, n, x, y, a, n_val, alpha, split, delta)
            k = int(np.argmax(v))
            if v[k] > best_here:
                best_here = float(v[k])
                best_curve = v[:m] if k < m else v[m:]
            if v[k] > best.value:
                numerator, i = (0, k) if k < m else (1, k - m)
                best.value = float(v[k])
                best.found = (tag, tab.side, float(tab.lo[i]), float(tab.hi[i]), numerator,
                              method, split)
    return best_curve


def _families(yd: np.ndarray, yp: np.ndarray, schema: OutputSchema, quick: bool):
    """(score, sd, sp, intervals?) for every score family of the schema."""
    n = yd.shape[0]
    half = n // 2
    fit_d, fit_p, ev_d, ev_p = yd[:half], yp[:half], yd[half:], yp[half:]
    kind = schema.kind
    if kind is OutputKind.VECTOR:
        rows = np.unique(_rows(np.concatenate([fit_d, fit_p]))).size if half else 0
        if 0 < rows <= min(4000, max(2, half // 5)):
            sc = fit_patterns(fit_d, fit_p)
            yield sc, sc(ev_d), sc(ev_p), False
        if half:
            sc = fit_naive_bayes(fit_d, fit_p)
            yield sc, sc(ev_d), sc(ev_p), False
        if schema.length <= MAX_COORDINATES:
            for j in range(schema.length):
                sc = Coordinate(j)
                yield sc, sc(yd), sc(yp), not quick
        return
    if schema.ordered:
        sc = Identity()
        yield sc, yd, yp, True
        distinct = np.unique(np.concatenate([yd[: min(n, 5000)], yp[: min(n, 5000)]])).size
        if distinct > 256 or half == 0:
            return
    if half:
        sc = fit_atoms(fit_d, fit_p)
        yield sc, sc(ev_d), sc(ev_p), False


def choose_event(yd: np.ndarray, yp: np.ndarray, schema: OutputSchema, *, n_val: float,
                 alpha: float, delta: float = 0.0, paired: bool = True, quick: bool = False,
                 honest: bool = False) -> Optional[Choice]:
    """The best event for the selection samples ``yd``, ``yp`` (equal length; paired rows when
    ``paired``), or None when there are too few samples. ``n_val`` is the validation size per
    dataset, ``alpha`` the candidate's error level after the family-wise correction, ``delta`` the
    claimed δ. ``quick`` (pair scoring) tries one α split per method and no coordinate intervals.

    With ``honest``, the event is chosen on the first half of the rows and its projected bound is
    recomputed on the second half with no pessimism: an estimate free of the winner's curse of
    choosing among thousands of events, used to rank *pairs* against each other.
    """
    if not honest:
        return _choose(yd, yp, schema, n_val, alpha, delta, paired, quick)
    h = yd.shape[0] // 2
    c = _choose(yd[:h], yp[:h], schema, n_val, alpha, delta, paired, quick)
    if c is None:
        return None
    bd, bp = yd[h:], yp[h:]
    num, den = (bd, bp) if c.numerator == 0 else (bp, bd)
    inn, ind = c.event.contains(num), c.event.contains(den)
    v = projected_lb(c.method, num.shape[0], [np.count_nonzero(inn)], [np.count_nonzero(ind)],
                     [np.count_nonzero(inn & ind)], n_val, alpha, c.split, delta, pessimism=0.0)
    return Choice(c.event, c.numerator, c.method, c.split, float(v[0]), c.curve)


def _choose(yd: np.ndarray, yp: np.ndarray, schema: OutputSchema, n_val: float, alpha: float,
            delta: float, paired: bool, quick: bool) -> Optional[Choice]:
    n_all = yd.shape[0]
    if n_all < 4:
        return None
    if delta > 0:
        methods: tuple = ("marginal",)
    else:
        methods = ("ratio", "paired") if paired else ("ratio",)
        if not quick:
            methods = ("marginal",) + methods
    best = _Best()
    scores: list = []
    curves: dict = {}
    for sc, sd, sp, intervals in _families(yd, yp, schema, quick):
        tag = len(scores)
        scores.append(sc)
        # grids coarse enough that each step holds ~20 samples: fewer, sturdier events on small
        # samples, where the best of many fine events would mostly be the luckiest
        g = int(min(THRESHOLDS, max(16, sd.size // 20)))
        gi = int(min(INTERVAL_GRID, max(6, np.sqrt(sd.size) / 2)))
        for tab in _tables(sd, sp, g, gi, intervals):
            curve = _score_table(tab, sd.size, n_val, alpha, delta, methods, quick, best, tag)
            if isinstance(sc, Identity) and tab.side != "interval" and curve is not None:
                prev = curves.get("best", (-np.inf,))[0]
                if float(np.max(curve)) > prev:
                    t = tab.lo if tab.side == "above" else tab.hi
                    curves["best"] = (float(np.max(curve)), t, curve)
    if best.found is None or not np.isfinite(best.value):
        return None
    tag, side, lo, hi, numerator, method, split = best.found
    event = Event(scores[tag], side, None if side == "below" else lo, None if side == "above" else hi)
    curve = None
    if isinstance(scores[tag], Identity) and "best" in curves:
        _, t, v = curves["best"]
        keep = np.isfinite(v)
        chosen = lo if side == "above" else hi if side == "below" else None
        curve = {"threshold": t[keep].tolist(), "epsilon_lower_bound": v[keep].tolist(),
                 "chosen": chosen, "projected": True}
    return Choice(event, numerator, method, tuple(split), best.value, curve)
