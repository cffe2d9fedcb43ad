"""A linear score for vector outputs: ridge-regularised logistic regression on flag features.

DP-Sniper (Bichsel et al. 2021, §5) thresholds a classifier's estimate of P[D | y]; with a
logistic model that estimate is monotone in the linear score w·φ(y), so the event is
{w·φ(y) ≥ t}. Features φ per coordinate j (DP-Sniper's "flags" transform, found automatically):
one indicator per repeated value of the coordinate (the special codes of SVT outputs such as
-1000 for FALSE, or the bits of RAPPOR), plus the coordinate's other values, standardised, with
0 where the coordinate took a repeated value. Each coordinate thus costs a few parameters,
unlike a histogram per coordinate, so weak effects spread over many coordinates (a sum of noisy
answers) are still found.

The weights minimise the mean logistic loss + ``RIDGE``·|w|² (labels 1 for D, 0 for D') with
scipy's trust-region Newton method (``trust-exact``); the ridge term keeps the fit finite when the two samples separate perfectly.
Rows that repeat (bit vectors, SVT's codes) enter the sums once each with their counts under D and
D' (the same loss, summed in another order).
The fit runs with one BLAS thread (threadpoolctl): its matrices are small (≤ 40 000 rows, tens of
features), and the idle threads of a multi-threaded BLAS spin, costing CPU time for no speed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.special import expit
from threadpoolctl import ThreadpoolController

from dpaudit.estimators.compact import BYTE_VALUES, compact, row_keys

__all__ = ["Logistic", "fit_logistic", "RIDGE", "MAX_FLAGS"]

RIDGE = 1e-3
#: at most this many repeated values per coordinate get a flag
MAX_FLAGS = 4
#: rows scored at a time
_CHUNK = 1 << 13
#: the fit sums over distinct rows when each repeats this many times on average
REPEATS = 4
#: standardised values are held within ±this many standard deviations (a value 1e308 away from a
#: centre of −1e308 is +inf otherwise, +inf − inf in a score is NaN, and the fit's squared norms
#: overflow long before); any function of the output is a sound score
CLIP = 1e6


def _standardised(v: np.ndarray, centre: Any, scale: Any) -> np.ndarray:
    """(v − centre) / scale within ±:data:`CLIP` (±inf where v − centre overflows, then held)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.clip((v - centre) / scale, -CLIP, CLIP)


def _moments(v: np.ndarray) -> tuple[float, float]:
    """The mean and the standard deviation of the finite values ``v``, computed on ``v`` divided
    by a power of two near its largest magnitude (exact), so that neither overflows: the sum of
    a few values near ±1e308 is ±inf."""
    top = float(np.max(np.abs(v)))
    unit = math.ldexp(1.0, math.frexp(top)[1] - 1) if top > 0 else 1.0
    r = v / unit
    return float(r.mean()) * unit, float(r.std()) * unit


@dataclass(frozen=True, slots=True, eq=False)
class Logistic:
    """s(y) = w·φ(y) + b (module docstring)."""

    flags: tuple        # per coordinate: array of flagged values
    centre: np.ndarray  # per coordinate: mean of the other values
    scale: np.ndarray   # per coordinate: their standard deviation (1 when constant)
    weights: np.ndarray
    bias: float

    def features(self, y: np.ndarray) -> np.ndarray:
        cols = []
        for j, fl in enumerate(self.flags):
            v = y[:, j]
            is_flag = np.zeros(v.shape, dtype=bool)
            for f in fl:
                hit = np.isnan(v) if np.isnan(f) else v == f
                cols.append(hit.astype(float))
                is_flag |= hit
            # rare NaN and ±inf values: flags or nothing
            cols.append(np.where(is_flag | ~np.isfinite(v), 0.0,
                                 _standardised(v, self.centre[j], self.scale[j])))
        return np.column_stack(cols) if cols else np.zeros((y.shape[0], 0))

    def __call__(self, y: np.ndarray) -> np.ndarray:
        """w·φ(y) + b without building φ: a coordinate's term is its flag's weight where it holds a
        flagged value (NaN flags hold NaN), else its standardised value times its weight (0 for
        NaN and ±inf); rows in chunks, so the temporaries stay small."""
        y = compact(np.asarray(y))
        n, d = y.shape[0], len(self.flags)
        lin = np.zeros(d)
        nflags = max((len(f) for f in self.flags), default=0)
        vals = np.zeros((nflags, d))
        used = np.zeros((nflags, d), dtype=bool)   # slot f of coordinate j holds a flag
        nan = np.zeros((nflags, d), dtype=bool)    # ... and it is the NaN flag
        wflag = np.zeros((nflags, d))
        k = 0
        for j, fl in enumerate(self.flags):
            m = len(fl)
            vals[:m, j] = fl
            used[:m, j] = True
            nan[:m, j] = np.isnan(fl)
            wflag[:m, j] = self.weights[k: k + m]
            lin[j] = self.weights[k + m]
            k += m + 1
        if y.dtype == np.int8:  # one look-up per coordinate (dpaudit.estimators.compact)
            total = np.full(n, self.bias)
            for j in range(d):
                term = _standardised(BYTE_VALUES, self.centre[j], self.scale[j]) * lin[j]
                for f in range(nflags):
                    if used[f, j] and not nan[f, j]:
                        term = np.where(BYTE_VALUES == vals[f, j], wflag[f, j], term)
                total += np.take(term, y[:, j].view(np.uint8))
            return total
        y = np.asarray(y, dtype=float)
        out = np.empty(n)
        any_nan = nan.any(axis=1)
        with np.errstate(invalid="ignore"):
            for i in range(0, n, _CHUNK):
                blk = y[i: i + _CHUNK]
                term = np.where(np.isfinite(blk), _standardised(blk, self.centre, self.scale) * lin,
                                0.0)
                for f in range(nflags):
                    hit = blk == vals[f]  # NaN flags hold NaN, which equals nothing
                    if any_nan[f]:
                        hit = np.where(nan[f], np.isnan(blk), hit)
                    hit &= used[f]
                    term = np.where(hit, wflag[f], term)
                out[i: i + _CHUNK] = term.sum(axis=1)
        return out + self.bias

    def describe(self) -> str:
        return "logistic-regression score of the output vector"

    def to_record(self) -> dict:
        return {"kind": "logistic", "flags": [np.asarray(f).tolist() for f in self.flags],
                "centre": self.centre.tolist(), "scale": self.scale.tolist(),
                "weights": self.weights.tolist(), "bias": self.bias}


@lru_cache(maxsize=1)
def _threadpools() -> ThreadpoolController:
    """The process's thread pools (inspected once: the libraries are loaded by then)."""
    return ThreadpoolController()


def _flags(v: np.ndarray) -> np.ndarray:
    vals, counts = np.unique(v, return_counts=True)
    frequent = counts >= max(20, 0.01 * v.size)
    keep = vals[frequent][np.argsort(-counts[frequent], kind="stable")][:MAX_FLAGS]
    return np.sort(keep)


def fit_logistic(yd: np.ndarray, yp: np.ndarray, max_rows: int = 20_000) -> Logistic:
    """Fit the score on samples of D (label 1) and D' (label 0); at most ``max_rows`` of each
    (the first ones) enter the fit, which keeps it to a fraction of a second. The weights
    minimise the mean logistic loss + ``RIDGE``·|w|² (module docstring)."""
    yd, yp = yd[:max_rows], yp[:max_rows]
    both = np.concatenate([yd, yp]).astype(float)
    shell = _shell(both)
    x, ones, count = _design(shell, yd, yp, both)
    theta = _minimise(x, ones, count, both.shape[0])
    return Logistic(shell.flags, shell.centre, shell.scale, theta[:-1], float(theta[-1]))


def _shell(both: np.ndarray) -> Logistic:
    """The features φ of the fit, as a score without weights: per coordinate its flagged values
    (:func:`_flags`) and the mean and standard deviation of its other finite values (1 when
    constant)."""
    d = both.shape[1]
    flags, centre, scale = [], np.zeros(d), np.ones(d)
    for j in range(d):
        v = both[:, j]
        fl = _flags(v)
        rest = v[~np.isin(v, fl)] if fl.size else v
        rest = rest[np.isfinite(rest)]
        if rest.size:
            centre[j], sd = _moments(rest)
            scale[j] = sd if sd > 0 else 1.0
        flags.append(fl)
    return Logistic(tuple(flags), centre, scale, np.zeros(0), 0.0)


def _design(shell: Logistic, yd: np.ndarray, yp: np.ndarray, both: np.ndarray) -> tuple:
    """The fit's rows: (features, label-1 weights, counts). Rows that repeat (bits, codes) are
    fitted once each, weighted by how often each dataset gave them (``ones``: times from D,
    ``count``: times in all): the same loss, gradient and Hessian, summed in another order;
    otherwise every row with its label (``ones`` the labels, ``count`` None)."""
    m, d = both.shape
    if yd.dtype == yp.dtype == np.int8:  # small-integer rows as int64 keys (faster to sort)
        rows = row_keys(np.concatenate([yd, yp]))
    else:
        rows = np.ascontiguousarray(both) + 0.0
        rows = rows.view(np.dtype((np.void, rows.dtype.itemsize * d))).reshape(-1)
    distinct, inv = np.unique(rows, return_inverse=True)
    if distinct.size * REPEATS > m:
        return shell.features(both), np.r_[np.ones(yd.shape[0]), np.zeros(yp.shape[0])], None
    # the distinct rows in the order of their first occurrence (whatever the keys' order)
    inv = inv.reshape(-1)
    first = np.full(distinct.size, m, dtype=np.intp)
    np.minimum.at(first, inv, np.arange(m))
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    inv, first = rank[inv], first[order]
    x = shell.features(both[first])
    nd = yd.shape[0]
    ones = np.bincount(inv[:nd], minlength=distinct.size).astype(float)  # label 1 (D)
    count = ones + np.bincount(inv[nd:], minlength=distinct.size)
    return x, ones, count


def _minimise(x: np.ndarray, ones: np.ndarray, count: Any, m: int) -> np.ndarray:
    """θ = (w, b) minimising (1/m) Σ count·log(1 + e^z) − ones·z + ``RIDGE``·|w|², z = x·w + b
    (``count`` None: every row once), by scipy's ``trust-exact`` with the exact gradient and
    Hessian, on one BLAS thread (module docstring)."""
    # imported here, before the thread pools are inspected: scipy.optimize (with scipy.linalg and
    # scipy.fft) costs every `dpaudit check` about half a second, and most never fit a score
    from scipy import optimize
    from scipy.linalg.blas import dsyrk

    def loss(theta: np.ndarray):
        w, b = theta[:-1], theta[-1]
        z = x @ w + b
        p = expit(z)
        # log(1 + e^z) - t z, computed stably (summed over the distinct rows with their counts)
        if count is None:
            val = np.mean(np.logaddexp(0.0, z) - ones * z) + RIDGE * (w @ w)
            g = p - ones
            return val, np.r_[x.T @ g / m + 2 * RIDGE * w, g.mean()]
        val = (count @ np.logaddexp(0.0, z) - ones @ z) / m + RIDGE * (w @ w)
        g = count * p - ones
        return val, np.r_[x.T @ g / m + 2 * RIDGE * w, g.sum() / m]

    xb = np.column_stack([x, np.ones(x.shape[0])])
    ridge = np.full(xb.shape[1], 2 * RIDGE)
    ridge[-1] = 0.0
    # features that are 0 on every row (the "other values" of a coordinate that takes only its
    # flagged values, as RAPPOR's bits do) have 0 in every entry of Xᵀ D X: it is computed on the
    # other columns only
    live = np.flatnonzero(np.any(xb != 0, axis=0))
    xl = xb[:, live]

    def hess(theta: np.ndarray) -> np.ndarray:
        # Xᵀ diag(p(1 − p)) X / m as a symmetric rank-k update (BLAS syrk: half the work of a
        # general product), upper triangle mirrored
        p = expit(xb @ theta)
        v = p * (1 - p) if count is None else count * p * (1 - p)
        h = dsyrk(1.0 / m, xl * np.sqrt(v)[:, None], trans=1)
        full = np.zeros((xb.shape[1], xb.shape[1]))
        full[np.ix_(live, live)] = np.triu(h) + np.triu(h, 1).T
        return full + np.diag(ridge)

    theta0 = np.zeros(xb.shape[1])
    with _threadpools().limit(limits=1, user_api="blas"):
        res = optimize.minimize(loss, theta0, jac=True, hess=hess, method="trust-exact",
                                options={"maxiter": 30, "gtol": 1e-6})
    return res.x
