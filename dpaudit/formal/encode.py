"""Small z3 building blocks shared by the claim encodings.

Every helper returns a z3 term or formula over the reals (exact rational / real-algebraic
arithmetic, never floating point). The ℓ1 ball is written without ``abs``:
``‖p − c‖₁ ≤ r  ⇔  s·(p − c) ≤ r for every sign vector s ∈ {±1}^d``, because
``‖x‖₁ = max_s s·x``. Linear constraints solve much faster than nested ``If`` terms; the
equivalence is proved by the claim ``l1-ball-sign-encoding``.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Sequence, Union

import z3

__all__ = [
    "Num",
    "num",
    "reals",
    "point",
    "absolute",
    "maximum",
    "minimum",
    "l1_norm",
    "l1_ball",
    "l2_ball",
    "between",
]

Num = Union[int, Fraction, str, z3.ArithRef]


def num(x: Num) -> z3.ArithRef:
    """An exact real constant: ints, Fractions and strings such as ``"1/2"`` (never a float,
    whose binary value would silently differ from the decimal a reader sees)."""
    if isinstance(x, z3.ArithRef):
        return x
    if isinstance(x, bool) or isinstance(x, float):
        raise TypeError(f"exact constants only (int, Fraction or str), got {x!r}")
    if isinstance(x, Fraction):
        return z3.Q(x.numerator, x.denominator)
    return z3.RealVal(x)


def reals(prefix: str, n: int) -> list[z3.ArithRef]:
    """``n`` real constants named ``prefix0 … prefix{n−1}``."""
    return [z3.Real(f"{prefix}{i}") for i in range(n)]


def point(name: str, dim: int) -> list[z3.ArithRef]:
    """A point of ℝ^dim with coordinates named ``name_x, name_y, name_z`` (or ``name_0 …``)."""
    axes = "xyz" if dim <= 3 else [str(i) for i in range(dim)]
    return [z3.Real(f"{name}_{axes[i]}") for i in range(dim)]


def absolute(x: z3.ArithRef) -> z3.ArithRef:
    """|x| as ``If(x ≥ 0, x, −x)``."""
    return z3.If(x >= 0, x, -x)


def maximum(xs: Sequence[z3.ArithRef]) -> z3.ArithRef:
    """max of a non-empty list, as a chain of ``If``."""
    if not xs:
        raise ValueError("maximum of an empty list")
    m = xs[0]
    for x in xs[1:]:
        m = z3.If(x > m, x, m)
    return m


def minimum(xs: Sequence[z3.ArithRef]) -> z3.ArithRef:
    """min of a non-empty list, as a chain of ``If``."""
    if not xs:
        raise ValueError("minimum of an empty list")
    m = xs[0]
    for x in xs[1:]:
        m = z3.If(x < m, x, m)
    return m


def l1_norm(x: Sequence[z3.ArithRef]) -> z3.ArithRef:
    """‖x‖₁ = Σ|x_i| (with ``If`` terms; used where the norm itself is the subject)."""
    return z3.Sum([absolute(v) for v in x])


def l1_ball(p: Sequence[z3.ArithRef], c: Sequence[Num], r: Num) -> z3.BoolRef:
    """p ∈ B₁(c, r), i.e. ‖p − c‖₁ ≤ r, as the 2^d linear constraints s·(p − c) ≤ r."""
    if len(p) != len(c):
        raise ValueError("point and centre must have the same dimension")
    diffs = [pi - num(ci) for pi, ci in zip(p, c)]
    return z3.And([z3.Sum([s * d for s, d in zip(signs, diffs)]) <= num(r)
                   for signs in itertools.product((1, -1), repeat=len(diffs))])


def l2_ball(p: Sequence[z3.ArithRef], c: Sequence[Num], r: Num) -> z3.BoolRef:
    """p ∈ B₂(c, r), i.e. Σ(p_i − c_i)² ≤ r² (nonlinear real arithmetic)."""
    rr = num(r)
    return z3.Sum([(pi - num(ci)) * (pi - num(ci)) for pi, ci in zip(p, c)]) <= rr * rr


def between(lo: z3.ArithRef, x: z3.ArithRef, hi: z3.ArithRef) -> z3.BoolRef:
    """lo ≤ x ≤ hi."""
    return z3.And(lo <= x, x <= hi)


