"""Float-structure scores: events on the binary representation of real outputs.

A mechanism computed in floating point does not output a real number: it outputs a double, and
the set of doubles that f(D) + noise can produce may differ from the set that f(D') + noise can
produce (Mironov, "On significance of the least significant bits for differential privacy", CCS
2012, §3: the porous output of x + Laplace in double precision). An output then has probability
> 0 under D and exactly 0 under D', and no finite ε holds. Such events are invisible to
thresholds and intervals on the value; they are visible on the bits. The scores here map each
output (a float64) to an integer *cell* read from its IEEE-754 fields (on ``numpy`` uint64 views,
vectorised), and are fitted like :class:`~dpaudit.estimators.scores.AtomRatio`: the estimated
log-ratio of each cell, thresholded into a set of cells, chosen on the selection split and
counted on the validation split like every other event.

Cells (sign s, biased exponent e, 52-bit mantissa m of the double y):

``trailing``  (s, e, tz(m)): the binade and the number of trailing zero bits of the mantissa
              (capped at 52). tz = 0 says the last mantissa bit is 1; tz ≥ j says y lies on the
              ulp grid of the binade j above its own (the rounding grid of a coarser magnitude).
``lowbits``   (s, e, m mod 4): the binade and the last two mantissa bits.
``repeated``  the value itself (its canonical bits): exact atoms for values that repeat
              (clamped bounds, a snapping grid, constants).
``bit``       bit k of the mantissa (0 or 1; k counted from the last, 0 ≤ k < :data:`BIT_TOP`),
              for the few bits whose frequencies differ most between the datasets on the fitting
              sample (:func:`revealing_bits`). Trailing zeros see how a value was rounded; a
              bit in the middle of the mantissa is noise in any honest implementation, and a
              mechanism that writes data into it (a payload hidden in the low bits of a noisy
              value) has an event of probability 0 on one dataset. The top bits are the
              value's place in its binade; a bit set there from the data is a comb of
              intervals, which the logic's thresholds and intervals do not hold.
``signed``    +0.0, −0.0, or any other finite value (and the non-finite atoms): the only bits
              worth testing when every value lies on one grid (:func:`float_structure` says
              ``"special"``), fitted as two scores that keep one zero each
              (:meth:`FloatCellRatio.without`), so an event splits the signs of zero. There the binade and trailing zeros are functions of the value, so
              events on them are value events, the logic's to judge; the sign of a zero is not
              (0.0 == −0.0), nor is NaN or ±inf.

Non-finite outputs are atoms of the output space in every family: NaN (all NaN payloads are one
atom), +inf and −inf each have a cell of their own, so "NaN on D, a number on D'" is an event.

A vector output gets the ``trailing`` cells per coordinate (``coordinate=j`` reads column j), since
each released double of a vector is porous on its own; an event on coordinate j is named as such
("coordinate 2: outputs in [0.25, 0.5) whose last mantissa bit is 1"). Outputs with no float
structure worth testing get none (:func:`has_float_structure`: every value on one grid coarser than
its ulp, such as integers or a snapping grid): their bits say nothing the value does not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from dpaudit.estimators.scores import PRIOR, AtomRatio, fit_atoms

__all__ = ["FloatCells", "FloatCellRatio", "fit_float_cells", "has_float_structure", "float_structure",
           "FAMILIES", "revealing_bits", "BIT_TOP", "BIT_Z", "BITS_FITTED", "INT_BIT_TOP",
           "BIT_CONTEXT", "BIT_ROWS"]

#: the float-structure families fitted for real outputs by default. ``trailing`` is binade × low
#: mantissa bits in the form that matters for rounding (tz = j ⟺ the last j + 1 bits are 1 then j
#: zeros); ``lowbits`` (the last two bits as such) is available but adds little for its cost
FAMILIES = ("trailing", "repeated")

#: narrower IEEE-754 formats whose values, widened to doubles, still carry rounding marks
#: (:func:`float_structure`): name → significand precision P (bits, the implicit one included)
NARROW_FORMATS = {"float32": 24, "float16": 11}

#: mantissa bits below this one are screened for a ``bit`` family: all 52. The top bits are the
#: value's position in its binade, but a bit set from the data there is a comb of intervals in
#: every binade, which no threshold or interval of the logic holds (bit 49 = |D| mod 2 passed a
#: screen of the lower 48 as NOT REFUTED)
BIT_TOP = 52
#: a bit is screened in when its two frequencies differ by at least this many standard errors
#: (of the pooled frequency, on the fitting sample): 52 bits of pure noise pass it with
#: probability about 52 · 6e-5 = 0.003
BIT_Z = 4.0
#: at most this many ``bit`` families per coordinate (the largest differences)
BITS_FITTED = 2
#: the bits above bit k that, with the sign and binade, make a stratum of its screen
BIT_CONTEXT = 6
#: the screen reads at most this many fitting values a side (a payload bit's z grows as √n)
BIT_ROWS = 20_000
#: integer outputs: the bits screened (:class:`~dpaudit.estimators.scores.IntBit`); 2^53 is where
#: the encoded float64 values stop being exact integers
INT_BIT_TOP = 53

_MANT = np.uint64((1 << 52) - 1)
_CANON_NAN = np.float64(np.nan).view(np.uint64)
_NEG_ZERO = np.float64(-0.0).view(np.uint64)


def _bits(y: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(y, dtype=np.float64).view(np.uint64)


def _trailing_zeros(m: np.ndarray) -> np.ndarray:
    """Trailing zero bits of each 52-bit mantissa (52 for m = 0), vectorised: the lowest set bit
    m & −m is a power of two, exact as a float64, and its biased exponent minus 1023 is the count
    (m = 0 gives 0.0, exponent field 0, mapped to 52)."""
    low = (m & (~m + np.uint64(1))).astype(np.float64).view(np.int64)
    tz = (low >> 52) - 1023
    tz[tz < 0] = 52
    return tz


@dataclass(frozen=True, slots=True)
class FloatCells:
    """y ↦ its cell under ``family`` (module docstring), as a float64 array of integer codes
    (or of canonical bit patterns for ``repeated``, as uint64)."""

    family: str
    #: the mantissa bit of a ``bit`` family (0: the last)
    bit: int = 0

    def __call__(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, dtype=np.float64)
        if self.family == "signed":
            return self.index(y).astype(np.float64)
        if self.family == "repeated":
            bits = (y + 0.0).view(np.uint64)  # +0.0 turns −0.0 into 0.0
            return np.where(np.isnan(y), _CANON_NAN, bits)
        return self.index(y).astype(np.float64)

    @property
    def size(self) -> int:
        """Number of dense cell indices (finite cells, then NaN, +inf, −inf)."""
        if self.family == "signed":
            return 3 + 3  # +0.0, −0.0, any other finite value
        if self.family == "bit":
            return 2 + 3  # the bit is 0, it is 1
        return (1 << 12) * (64 if self.family == "trailing" else 4) + 3

    def index(self, y: np.ndarray) -> np.ndarray:
        """Dense cell index in 0..size−1 (``trailing`` and ``lowbits``): (2e + s)·W + low for a
        finite double (W = 64 or 4 low values), so the cells of y and −y are neighbours and the
        outputs of one audit span a short range of indices; NaN, +inf, −inf are the top three."""
        b = _bits(y)
        head = (b >> np.uint64(52)).astype(np.int64)  # s · 2^11 + e
        e = head & 0x7FF
        m = b & _MANT
        if self.family == "signed":
            cells = np.where((e == 0) & (m == 0), head >> 11, 2)  # +0.0: 0, −0.0: 1, else 2
        elif self.family == "bit":
            cells = ((m >> np.uint64(self.bit)) & np.uint64(1)).astype(np.int64)
        elif self.family == "trailing":
            cells = (2 * e + (head >> 11)) * 64 + _trailing_zeros(m)
        else:
            cells = (2 * e + (head >> 11)) * 4 + (m & np.uint64(3)).astype(np.int64)
        odd = e == 0x7FF  # NaN or ±inf
        if odd.any():
            top = self.size - 3
            cells[odd] = np.where(m[odd] != 0, top, np.where(head[odd] == 0x7FF, top + 1, top + 2))
        return cells

    # ------------------------------------------------------------------ words
    def describe_cell(self, cell) -> str:
        """One cell in words, e.g. ``outputs in [0.25, 0.5) whose last mantissa bit is 1``."""
        if self.family == "repeated":
            v = np.asarray([cell], dtype=np.uint64).view(np.float64)[0]
            return f"output = {_value(float(v))}" + (" (non-finite output)" if not math.isfinite(v) else "")
        c = int(cell)
        top = self.size - 3
        if c >= top:
            return f"output is {('NaN', '+inf', '−inf')[c - top]} (non-finite output)"
        if self.family == "signed":
            return ("outputs equal to +0.0", "outputs equal to −0.0", "nonzero finite outputs")[c]
        if self.family == "bit":
            return f"outputs whose mantissa bit {self.bit} (0 the last of 52) is {c}"
        k = 64 if self.family == "trailing" else 4
        head, low = divmod(c, k)
        e, sign = divmod(head, 2)
        where = _binade(sign, e)
        if self.family == "trailing":
            if e == 0 and low == 52:
                return f"outputs equal to {'−' if sign else '+'}0.0"
            if low == 0:
                return f"outputs in {where} whose last mantissa bit is 1"
            if low == 52:
                return f"outputs in {where} that are exact powers of two"
            return f"outputs in {where} with exactly {low} trailing zero mantissa bit{'' if low == 1 else 's'}"
        return f"outputs in {where} whose last two mantissa bits are {low:02b}"

    def is_zero(self, cell) -> bool:
        """Whether ``cell`` holds only +0.0 or only −0.0 (``trailing``: exponent 0, no mantissa)."""
        if self.family == "signed":
            return int(cell) in (0, 1)
        return self.family == "trailing" and int(cell) < 128 and int(cell) % 64 == 52  # (2·0 + s)·64 + 52

    def describe(self) -> str:
        return {"trailing": "binade and trailing zero bits of the output",
                "lowbits": "binade and last two mantissa bits of the output",
                "repeated": "the output's exact value",
                "signed": "sign of a zero output (and non-finite outputs)",
                "bit": f"mantissa bit {self.bit} of the output"}[self.family]


def _value(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+inf" if v > 0 else "−inf"
    return repr(v)


def _binade(sign: int, e: int) -> str:
    """The binade of biased exponent e as an interval, e.g. ``[0.25, 0.5)`` or ``(−1, −0.5]``."""
    if e == 0:
        lo, hi = 0.0, 2.0 ** -1022
        text = f"the subnormals [0, {hi:.6g})"
        return text if not sign else f"the negative subnormals (−{hi:.6g}, 0]"
    lo, hi = math.ldexp(1.0, e - 1023), math.ldexp(1.0, e - 1022) if e < 2046 else math.inf
    if sign:
        return f"({_num(-hi)}, {_num(-lo)}]"
    return f"[{_num(lo)}, {_num(hi)})"


def _num(x: float) -> str:
    return f"{x:.6g}".replace("-", "−")


@dataclass(frozen=True, slots=True, eq=False)
class FloatCellRatio:
    """s(y) = estimated ln(P[cell(y) | D] / P[cell(y) | D']) for cells seen at fitting time."""

    cells: FloatCells
    inner: AtomRatio
    table: Optional[np.ndarray] = None  # llr per cell index − offset + 1 (NaN: never seen, and at
    offset: int = 0                     # both ends for cells outside the fitted range); not repeated
    coordinate: Optional[int] = None    # vector outputs: the column scored
    name: Any = None                    # ... and its key, for dict outputs

    def __call__(self, y: np.ndarray) -> np.ndarray:
        if self.coordinate is not None:
            y = y[:, self.coordinate]
        if self.table is not None:
            i = self.cells.index(y) - (self.offset - 1)
            np.clip(i, 0, self.table.size - 1, out=i)
            return self.table[i]
        return self.inner(self.cells(y))

    def _where(self) -> str:
        return f"coordinate {self.coordinate if self.name is None else repr(self.name)}"

    def describe(self) -> str:
        where = "" if self.coordinate is None else f" ({self._where()})"
        return f"estimated log-likelihood ratio of the {self.cells.describe()}{where}"

    def members(self, keep: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        return self.inner.members(keep)

    def without(self, cells: Any) -> "FloatCellRatio":
        """The same score with ``cells`` left out of every event (their score is NaN, which no
        level set holds): a ``signed`` score keeps one zero, so that its events split +0.0 from
        −0.0 and never are the value zero itself (both signs), which is the logic's event."""
        drop = np.asarray(list(cells), dtype=float)
        keep = ~np.isin(self.inner.atoms, drop)
        table = None
        if self.table is not None:
            table = self.table.copy()
            for c in drop:
                i = int(c) - (self.offset - 1)
                if 0 <= i < table.size:
                    table[i] = np.nan
        return FloatCellRatio(self.cells, AtomRatio(self.inner.atoms[keep], self.inner.llr[keep]),
                              table, self.offset, self.coordinate, self.name)

    def text(self, members: np.ndarray, limit: int = 2) -> str:
        """The set of cells ``members`` in words: the first ``limit`` of them, then how many more
        (the event's shares of outputs on D and D′ are said with it, by the auditor)."""
        parts = [self.cells.describe_cell(c) for c in members[:limit]]
        rest = len(members) - limit
        more = f"; and {rest} more cell{'s' if rest > 1 else ''}" if rest > 0 else ""
        where = "" if self.coordinate is None else f"{self._where()}: "
        return where + "; ".join(parts) + more if parts else "∅"

    def to_record(self) -> dict:
        where = {} if self.coordinate is None else {"coordinate": self.coordinate}
        bit = {"bit": self.cells.bit} if self.cells.family == "bit" else {}
        return {"kind": "float-structure", "family": self.cells.family, **bit, **where,
                "cells": [int(c) if self.cells.family == "repeated" else float(c)
                          for c in self.inner.atoms.tolist()],
                "llr": self.inner.llr.tolist()}


def fit_float_cells(family: str, yd: np.ndarray, yp: np.ndarray,
                    coordinate: Optional[int] = None, name: Any = None, bit: int = 0) -> FloatCellRatio:
    """Per-cell log-ratios of ``family`` from equal-size samples of D and D' (counts by
    ``bincount`` over dense cell indices, so fitting and scoring are O(n)). With ``coordinate``,
    ``yd`` and ``yp`` are vector outputs (rows) and column ``coordinate`` is fitted; ``bit`` is
    the mantissa bit of the ``bit`` family."""
    cells = FloatCells(family, bit)
    if coordinate is not None:
        yd, yp = yd[:, coordinate], yp[:, coordinate]
    if family == "repeated":
        return FloatCellRatio(cells, fit_atoms(cells(yd), cells(yp)), coordinate=coordinate, name=name)
    id_, ip = cells.index(yd), cells.index(yp)
    lo = min((int(c.min()) for c in (id_, ip) if c.size), default=0)
    hi = max((int(c.max()) for c in (id_, ip) if c.size), default=lo)
    # counts over the cells between the smallest and largest seen (a few binades, not all 2^18)
    cd = np.bincount(id_ - lo, minlength=hi - lo + 1)
    cp = np.bincount(ip - lo, minlength=hi - lo + 1)
    seen = np.flatnonzero(cd + cp)
    llr = np.log((cd[seen] + PRIOR) / (cp[seen] + PRIOR))
    table = np.full(hi - lo + 3, np.nan)
    table[seen + 1] = llr
    return FloatCellRatio(cells, AtomRatio((seen + lo).astype(float), llr), table, lo, coordinate, name)


def revealing_bits(yd: np.ndarray, yp: np.ndarray, top: int = BITS_FITTED,
                   z: float = BIT_Z, integer: bool = False) -> list[int]:
    """The mantissa bits below :data:`BIT_TOP` (with ``integer``: the bits below
    :data:`INT_BIT_TOP` of the values as two's-complement integers) whose frequency of 1 differs
    between the finite values of ``yd`` and ``yp`` *given the bits above it*, by at least ``z``
    standard errors, the ``top`` largest first, no two within :data:`BIT_CONTEXT` bits. Chosen
    on the fitting sample only, like every event; at most :data:`BIT_ROWS` values a side are read.

    The test is Cochran-Mantel-Haenszel's (Mantel and Haenszel 1959): strata are the value's
    sign and binade (for integers its sign and bit length) and the :data:`BIT_CONTEXT` bits
    above bit k, and z = Σ_s (a_s − n1_s·m_s/N_s) / √(Σ_s n1_s·n2_s·m_s·(N_s − m_s)/(N_s²·(N_s − 1)))
    with a_s the ones among the n1_s values of ``yd`` in stratum s, m_s the ones of both and
    N_s = n1_s + n2_s. An honest value moved by the data moves its top bits, but within a
    stratum (a short interval of values) a lower bit is as often 1 on both sides; a bit written
    from the data is not (a Laplace at 100 against 101 gave unconditional z of 78 and 139 on bits
    47 and 48, which crowded out a payload bit of z 32)."""
    fd, fp = (np.asarray(y, dtype=np.float64).ravel() for y in (yd, yp))
    fd, fp = fd[np.isfinite(fd)][:BIT_ROWS], fp[np.isfinite(fp)][:BIT_ROWS]
    if integer:  # integers as two's complement (those too large for int64 say nothing here)
        fd, fp = fd[np.abs(fd) < 2.0 ** 63], fp[np.abs(fp) < 2.0 ** 63]
    if fd.size < 20 or fp.size < 20:
        return []
    if integer:
        ud, up, width = fd.astype(np.int64).view(np.uint64), fp.astype(np.int64).view(np.uint64), INT_BIT_TOP
        head_d, head_p = _int_head(fd), _int_head(fp)
    else:
        ud, up, width = _bits(fd), _bits(fp), BIT_TOP
        head_d, head_p = (ud >> np.uint64(52)).astype(np.int64), (up >> np.uint64(52)).astype(np.int64)
    stats = np.zeros(width)
    for k in range(width):
        ctx = min(BIT_CONTEXT, width - 1 - k)
        mask = np.uint64((1 << ctx) - 1)
        sd = (head_d << ctx) | ((ud >> np.uint64(k + 1)) & mask).astype(np.int64)
        sp = (head_p << ctx) | ((up >> np.uint64(k + 1)) & mask).astype(np.int64)
        bd = ((ud >> np.uint64(k)) & np.uint64(1)).astype(float)
        bp = ((up >> np.uint64(k)) & np.uint64(1)).astype(float)
        stats[k] = _mantel_haenszel(sd, sp, bd, bp)
    # the largest first, each at least BIT_CONTEXT bits from those taken: the bits a value moved
    # by the data carries are a run at the top (its strata too wide for its noise), and one slot
    # of theirs leaves the other to a payload lower down (bit 20 at 0.45 against 0.55, under a
    # Laplace at 100 against 101, ranked third behind bits 48 and 46)
    taken: list[int] = []
    for b in np.argsort(-stats, kind="stable"):
        if len(taken) >= top or stats[b] < z:
            break
        if all(abs(int(b) - t) >= BIT_CONTEXT for t in taken):
            taken.append(int(b))
    return taken


def _int_head(v: np.ndarray) -> np.ndarray:
    """An integer's sign and bit length, as one small integer (the strata's coarse part)."""
    mag = np.abs(v)
    length = np.where(mag >= 1, np.floor(np.log2(np.maximum(mag, 1))) + 1, 0).astype(np.int64)
    return length * 2 + (v < 0).astype(np.int64)


def _mantel_haenszel(sd: np.ndarray, sp: np.ndarray, bd: np.ndarray, bp: np.ndarray) -> float:
    """|z| of the Cochran-Mantel-Haenszel test that bit frequencies ``bd`` (strata ``sd``) and
    ``bp`` (strata ``sp``) agree within strata (:func:`revealing_bits`); 0 with no variance."""
    _, inv = np.unique(np.concatenate([sd, sp]), return_inverse=True)
    m = int(inv.max()) + 1
    idd, idp = inv[: sd.size], inv[sd.size:]
    n1 = np.bincount(idd, minlength=m).astype(float)
    n2 = np.bincount(idp, minlength=m).astype(float)
    a = np.bincount(idd, weights=bd, minlength=m)
    ones = a + np.bincount(idp, weights=bp, minlength=m)
    big = n1 + n2
    ok = (n1 > 0) & (n2 > 0) & (big > 1)
    if not ok.any():
        return 0.0
    n1, n2, a, ones, big = n1[ok], n2[ok], a[ok], ones[ok], big[ok]
    dev = float(np.sum(a - n1 * ones / big))
    var = float(np.sum(n1 * n2 * ones * (big - ones) / (big * big * (big - 1.0))))
    if var <= 0:
        return 0.0 if dev == 0 else math.inf
    return abs(dev) / math.sqrt(var)


def has_float_structure(*samples: np.ndarray, head: int = 4096) -> bool:
    """Whether real outputs have bits worth testing (:func:`float_structure` is not None)."""
    return float_structure(*samples, head=head) is not None


def float_structure(*samples: np.ndarray, head: int = 4096) -> Optional[str]:
    """What the bits of real outputs can show beyond their values, judged on the first ``head``
    values of each sample: ``"bits"`` when the values are not on a grid coarser than their ulps
    (rounding leaves its mark in the low bits: the trailing-zero cells are tested), ``"special"``
    when they are but some value is NaN, ±inf or −0.0 (equal to 0.0 as a number, a different
    double: a clamp or a product that keeps the sign of something private releases it in the
    sign bit; only those are tested, the ``signed`` cells), None otherwise.

    A nonzero double y = 2^(E−52)·M (E its unbiased exponent, M its odd-free significand with
    tz trailing zeros) is a multiple of its quantum q(y) = 2^(E−52+tz). With q the smallest
    quantum and 2^E_max ≤ max|y|, every value is an exact multiple of q; when E_max − log2 q ≤ 51,
    every value's ulp is below q, so the doubles are exactly the grid points k·q (integers, a
    snapping grid Λ·Z, outputs rounded to 2^-30·Z) and their bits carry no rounding of their own
    (snapping to Λ·Z is how Mironov 2012, Theorem 1, closes the porosity). Otherwise (some value uses all 53 bits
    at its magnitude) the low bits may differ between datasets, and the float events are tested.

    The same holds at a coarser precision P (:data:`NARROW_FORMATS`: float32, P = 24; float16,
    P = 11): values computed in float32 and returned widened to doubles use at most 24 of the 53
    bits, so they look like a grid to the rule above, yet float32 rounding leaves the same
    porous marks one level up (x + Laplace computed in float32). When every value has at most P
    significant bits (53 − tz), some value has exactly P (a computed value, not a short grid
    point) and E_max − log2 q ≥ P (some point of the grid k·q at the top is not representable
    at that precision: the values are not the points of one grid), the bits are tested too. Such
    values are exactly representable in that format; their float64 cells (binade, trailing
    zeros) are its cells shifted by 53 − P.
    """
    found_q, found_top, special = None, None, False
    most = 0
    for y in samples:
        b = _bits(np.asarray(y)[:head])
        e = ((b >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
        special = special or bool(np.any(e == 0x7FF) or np.any(b == _NEG_ZERO))
        finite = e != 0x7FF
        b, e = b[finite], e[finite]
        m = b & _MANT
        nz = (e != 0) | (m != 0)
        if not nz.any():
            continue
        e, m = np.maximum(e[nz], 1), m[nz]
        tz = _trailing_zeros(m)
        q = int((e + tz).min()) - 1075   # log2 of the smallest quantum
        top = int(e.max()) - 1023                         # E_max (an upper bound for subnormals)
        found_q = q if found_q is None else min(found_q, q)
        found_top = top if found_top is None else max(found_top, top)
        # significant bits of the normal values (a subnormal double is no narrow format's value)
        sig = np.where(e > 1, 53 - tz, 53)
        most = max(most, int(sig.max()))
    if found_q is not None and found_top - found_q >= 52:
        return "bits"
    if found_q is not None and any(most == p and found_top - found_q >= p
                                   for p in NARROW_FORMATS.values()):
        return "bits"
    return "special" if special else None
