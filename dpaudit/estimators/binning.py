"""Binning values against a few sorted breakpoints, faster than a binary search per value.

``np.searchsorted(b, v)`` with unsorted ``v`` costs a binary search per value, 30-90 ns each for
the tens of breakpoints of a coordinate's cells or an interval grid, more than sorting ``v``.
:class:`Binner` answers the same question by arithmetic: a uniform grid of K ≥ 16·|b| cells over
[b_0, b_last] tells, for the cell holding v, how many breakpoints lie surely below it (a lower
estimate, taken one grid cell to the left, so that rounding of (v − b_0)·K/(b_last − b_0) cannot
make it too large); a few vectorised steps move it up to the exact count, and every result is
checked (b[i−1] ≤ v < b[i] for ``side="right"``), the rare failures (NaN, values on the edge of
what rounding allows) falling back to the binary search. Rows are done in chunks that stay in
the processor's cache. The result equals ``np.searchsorted(b, v, side)`` element for element.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Binner"]

#: values binned at a time (a chunk's temporaries stay in the processor's cache)
_CHUNK = 1 << 14
#: at most this many correction steps (a finer grid is tried first, up to _MAX_CELLS cells;
#: breakpoints still crowded closer than that fall back to the binary search)
_MAX_STEPS = 2
_MAX_CELLS = 1 << 12


class Binner:
    """``Binner(b, side)(v) == np.searchsorted(b, v, side)`` for sorted float breakpoints ``b``
    (module docstring); breakpoints that are not finite, or too crowded, use the binary search."""

    __slots__ = ("b", "side", "lo", "scale", "cells", "start", "steps", "above", "below")

    def __init__(self, b: np.ndarray, side: str = "right") -> None:
        self.b = np.asarray(b)  # searched as given when the fast path does not apply
        b = np.asarray(b, dtype=float)
        self.side = side
        self.steps = 0
        if b.size < 2 or not np.isfinite(b).all() or not b[-1] > b[0]:
            return
        lo, hi = float(b[0]), float(b[-1])
        cells = max(256, 16 * b.size)
        while True:  # a finer grid until few breakpoints share a cell (then the checks are few)
            found = self._grid(b, lo, hi, cells)
            if found is not None or cells >= _MAX_CELLS:
                break
            cells *= 4
        if found is None:
            return
        width, scale, start, steps = found
        self.lo, self.scale, self.cells = lo, scale, cells
        self.start = start.astype(np.intp)
        self.above = np.r_[b, np.nan]       # b[i], and nothing at i = |b|
        self.below = np.r_[-np.inf, b]      # b[i − 1], and −∞ at i = 0
        self.steps = steps

    @staticmethod
    def _grid(b: np.ndarray, lo: float, hi: float, cells: int):
        """(width, scale, start, steps) of a grid of ``cells`` cells, or None when it is unusable
        (a range that overflows) or too coarse (more than :data:`_MAX_STEPS` corrections)."""
        with np.errstate(over="ignore"):
            width, scale = (hi - lo) / cells, cells / (hi - lo)
        if not (np.isfinite(width) and np.isfinite(scale) and width > 0):
            return None
        grid = np.arange(cells + 2, dtype=float)
        # value cell c (c = 0: below b_0, 1 + ⌊(v − lo)/width⌋ otherwise): breakpoints below the
        # left edge of cell c − 1, and how many more lie up to the right edge of cell c + 1
        with np.errstate(over="ignore", invalid="ignore"):  # edges past the largest double
            start = np.searchsorted(b, lo + (grid - 2) * width, side="left")
            upper = np.searchsorted(b, lo + (grid + 1) * width, side="right")
        steps = int((upper - start).max()) + 1
        return None if steps > _MAX_STEPS else (width, scale, start, steps)

    def __call__(self, v: np.ndarray) -> np.ndarray:
        v = np.asarray(v)
        if not self.steps or v.dtype != np.float64 or v.ndim != 1:
            return np.searchsorted(self.b, v, side=self.side)
        out = np.empty(v.shape, dtype=np.intp)
        right = self.side == "right"
        above, below, start = self.above, self.below, self.start
        b_float = above[:-1]
        with np.errstate(invalid="ignore", over="ignore"):  # huge values: +inf, clipped
            for i in range(0, v.size, _CHUNK):
                u = v[i:i + _CHUNK]
                x = u - self.lo
                x *= self.scale
                np.fmax(x, -1.0, out=x)         # NaN becomes −1 (and is caught by the check)
                np.fmin(x, self.cells, out=x)
                idx = start[x.astype(np.intp) + 1]
                for _ in range(self.steps):
                    idx += (above[idx] <= u) if right else (above[idx] < u)
                if right:
                    good = (below[idx] <= u) & ~(above[idx] <= u)
                else:
                    good = (below[idx] < u) & ~(above[idx] < u)
                if not good.all():
                    bad = ~good
                    idx[bad] = np.searchsorted(b_float, u[bad], side=self.side)
                out[i:i + _CHUNK] = idx
        return out
