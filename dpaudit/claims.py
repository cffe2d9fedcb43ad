"""Frozen privacy and sensitivity claims, neighbour relations and record domains.

A claim is what a mechanism promises; dpaudit tries to refute it.

* :class:`PureDP` ``(ε)``: for neighbours D ~ D' and every event S,
  ``P[M(D) ∈ S] ≤ e^ε P[M(D') ∈ S]`` (Dwork, McSherry, Nissim and Smith 2006).
* :class:`ApproxDP` ``(ε, δ)``: ``P[M(D) ∈ S] ≤ e^ε P[M(D') ∈ S] + δ`` (Dwork et al. 2006).
* :class:`SensitivityBound`: ``|f(D) − f(D')| ≤ Δ`` for neighbours, or per individual
  ``|f(D ∪ {i}) − f(D)| ≤ Δ_i`` (Cummings and Durfee (2020), individual sensitivity; docs/math.md#individual-model).

Every constructor validates its arguments and raises :class:`~dpaudit.errors.InvalidArgument`
naming the argument and its value.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from enum import Enum
from typing import Any, Union

from dpaudit.errors import InvalidArgument
# the checks of a claim's numbers live in dpaudit.validation; re-exported here, where users find them
from dpaudit.validation import check_confidence, check_delta, check_epsilon, check_size

__all__ = [
    "Neighbours",
    "Domain",
    "PureDP",
    "ApproxDP",
    "PrivacyClaim",
    "SensitivityBound",
    "privacy_claim",
    "check_epsilon",
    "check_delta",
    "check_size",
    "check_confidence",
    "ClaimNotion",
    "NOTIONS",
    "claim_notion",
]


class Neighbours(str, Enum):
    """Neighbour relations over datasets whose records lie in a :class:`Domain` (docs/math.md#neighbour-relations).

    ``ADD_REMOVE``: D' is D with one record added or removed.
    ``REPLACE``: D' is D with one record changed (same size; Hamming distance 1).
    ``LINF``: D is a vector of query answers; D' moves every coordinate by at most 1.
    ``L1``: D is a count vector; D' moves it by at most 1 in total (ℓ1 distance ≤ 1).
    """

    ADD_REMOVE = "add-remove"
    REPLACE = "replace"
    LINF = "linf"
    L1 = "l1"

    @property
    def description(self) -> str:
        return _NEIGHBOUR_TEXT[self]

    @classmethod
    def parse(cls, value: Union[str, "Neighbours"]) -> "Neighbours":
        """Accept a member or its name: ``"add-remove"`` (also ``add_remove``, ``addremove``),
        ``"replace"``, ``"linf"``, ``"l1"``."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            key = value.strip().lower().replace("_", "-")
            key = _ALIASES.get(key, key)
            for member in cls:
                if member.value == key:
                    return member
        allowed = ", ".join(m.value for m in cls)
        raise InvalidArgument.bad("neighbours", value, f"one of {allowed}")

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value


_ALIASES = {"addremove": "add-remove", "add/remove": "add-remove", "add-drop": "add-remove",
            "change-one": "replace", "replace-one": "replace", "l-inf": "linf", "linfty": "linf",
            # the names users speak (ClaimNotion): bounded DP fixes the size, unbounded does not
            "bounded": "replace", "bounded-dp": "replace", "unbounded": "add-remove",
            "unbounded-dp": "add-remove", "symmetric-distance": "add-remove"}

_NEIGHBOUR_TEXT = {
    Neighbours.ADD_REMOVE: "one record added or removed",
    Neighbours.REPLACE: "one record replaced",
    Neighbours.LINF: "every coordinate moved by at most 1",
    Neighbours.L1: "coordinates moved by at most 1 in total",
}


def _is_real(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


@dataclass(frozen=True, slots=True)
class Domain:
    """The closed interval [lo, hi] in which every record (or query answer) lies."""

    lo: float
    hi: float

    def __post_init__(self) -> None:
        for name in ("lo", "hi"):
            v = getattr(self, name)
            if not _is_real(v) or not math.isfinite(float(v)):
                raise InvalidArgument.bad(f"domain.{name}", v, "a finite number")
            object.__setattr__(self, name, float(v))
        if not self.lo < self.hi:
            raise InvalidArgument(f"domain must have lo < hi, got lo={self.lo!r}, hi={self.hi!r}")

    @classmethod
    def parse(cls, value: Any) -> "Domain":
        """Accept a Domain, a pair ``(lo, hi)``, or a string ``"LO:HI"`` (``"-10:10"`` works)."""
        if isinstance(value, Domain):
            return value
        if isinstance(value, str):
            parts = value.split(":")
            if len(parts) != 2:
                raise InvalidArgument.bad("domain", value, "of the form LO:HI, e.g. -10:10")
            try:
                lo, hi = float(parts[0]), float(parts[1])
            except ValueError:
                raise InvalidArgument.bad("domain", value, "two numbers LO:HI, e.g. -10:10") from None
            return cls(lo, hi)
        try:
            lo, hi = value
        except (TypeError, ValueError):
            raise InvalidArgument.bad("domain", value, "a pair (lo, hi) or a string LO:HI") from None
        return cls(lo, hi)

    @property
    def width(self) -> float:
        return self.hi - self.lo

    def contains(self, x: Any) -> bool:
        import numpy as np

        arr = np.asarray(x, dtype=float)
        return bool(np.all((arr >= self.lo) & (arr <= self.hi)))

    def __str__(self) -> str:
        return f"[{self.lo:g}, {self.hi:g}]"


@dataclass(frozen=True, slots=True)
class PureDP:
    """Pure ε-differential privacy: ``P[M(D) ∈ S] ≤ e^ε P[M(D') ∈ S]`` for all S and D ~ D'."""

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    @property
    def delta(self) -> float:
        return 0.0

    def __str__(self) -> str:
        return f"{self.epsilon:g}-DP"


@dataclass(frozen=True, slots=True)
class ApproxDP:
    """(ε, δ)-differential privacy: ``P[M(D) ∈ S] ≤ e^ε P[M(D') ∈ S] + δ`` for all S and D ~ D'."""

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))

    def __str__(self) -> str:
        return f"({self.epsilon:g}, {self.delta:g})-DP"


PrivacyClaim = Union[PureDP, ApproxDP]


def privacy_claim(epsilon: Any, delta: Any = 0.0) -> PrivacyClaim:
    """:class:`PureDP` when δ = 0, else :class:`ApproxDP` (both validated)."""
    d = check_delta(delta)
    return PureDP(epsilon) if d == 0.0 else ApproxDP(epsilon, d)


@dataclass(frozen=True, slots=True)
class SensitivityBound:
    """A declared sensitivity: a global bound Δ, or individual bounds Δ_i (Cummings and Durfee (2020) §2).

    ``bound`` is Δ (global, over the neighbour relation); ``individual`` is the tuple (Δ_1, …, Δ_n)
    for individual sensitivity ``|f(D ∪ {i}) − f(D)| ≤ Δ_i`` (docs/math.md#individual-model). ``norm`` is how outputs
    in ℝ^d are compared: ``"l1"``, ``"l2"`` or ``"linf"`` (irrelevant for scalars).
    """

    bound: float
    individual: tuple[float, ...] | None = None
    norm: str = "l1"

    def __post_init__(self) -> None:
        b = self.bound
        if not _is_real(b) or not math.isfinite(float(b)) or float(b) < 0:
            raise InvalidArgument.bad("bound", b, "a finite number >= 0")
        object.__setattr__(self, "bound", float(b))
        if self.individual is not None:
            vals = tuple(self.individual)
            for k, v in enumerate(vals):
                if not _is_real(v) or not math.isfinite(float(v)) or float(v) < 0:
                    raise InvalidArgument.bad(f"individual[{k}]", v, "a finite number >= 0")
            object.__setattr__(self, "individual", tuple(float(v) for v in vals))
        if self.norm not in ("l1", "l2", "linf"):
            raise InvalidArgument.bad("norm", self.norm, "one of l1, l2, linf")


@dataclass(frozen=True, slots=True)
class ClaimNotion:
    """A privacy notion as users state it, and the claim dpaudit audits for it.

    ``relation`` is the neighbour relation audited; ``group`` how many steps of the stated
    relation one audited neighbour takes. With ``group = 2`` the audited claim is the group-privacy
    consequence of the stated (ε, δ): ``P[M(D) ∈ S] ≤ e^ε P[M(D'') ∈ S] + δ
    ≤ e^2ε P[M(D') ∈ S] + (1 + e^ε) δ`` for D ~ D'' ~ D' (Dwork and Roth 2014, Thm 2.2 for δ = 0;
    the same two-step chain for δ > 0), i.e. (2ε, (1 + e^ε) δ).
    """

    name: str
    relation: Neighbours
    group: int
    description: str

    def translate(self, epsilon: Any, delta: Any = 0.0) -> PrivacyClaim:
        """The claim audited under :attr:`relation` for a stated (ε, δ) under this notion."""
        eps, d = check_epsilon(epsilon), check_delta(delta)
        if self.group == 1:
            return privacy_claim(eps, d)
        return privacy_claim(2.0 * eps, min(d * (1.0 + math.exp(eps)), math.nextafter(1.0, 0.0)))

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.name


#: The notions users speak, by name (any :class:`Neighbours` name or alias works too, group 1).
NOTIONS = {
    "bounded": ClaimNotion("bounded", Neighbours.REPLACE, 1,
                           "bounded DP: the size n is public, one record is replaced"),
    "unbounded": ClaimNotion("unbounded", Neighbours.ADD_REMOVE, 1,
                             "unbounded DP: one record added or removed, the size is private"),
    "add-remove-public-size": ClaimNotion(
        "add-remove-public-size", Neighbours.REPLACE, 2,
        "add-remove DP with the size n public: datasets of one size are a removal and an "
        "addition apart, so the stated (ε, δ) gives (2ε, (1 + e^ε)δ) under replace"),
    "change-one": ClaimNotion("change-one", Neighbours.REPLACE, 1,
                              "change-one on a vector: one entry changed to any value of the domain"),
}
_NOTION_ALIASES = {"add-remove-known-size": "add-remove-public-size",
                   "add-remove-with-public-size": "add-remove-public-size",
                   "bounded-dp": "bounded", "unbounded-dp": "unbounded"}


def claim_notion(value: Union[str, Neighbours, ClaimNotion]) -> ClaimNotion:
    """A :class:`ClaimNotion` from its name (``"bounded"``, ``"unbounded"``,
    ``"add-remove-public-size"``, ``"change-one"``) or from any neighbour relation or alias
    (``"replace"``, ``Neighbours.L1``; then the claim is audited as stated)."""
    if isinstance(value, ClaimNotion):
        return value
    if isinstance(value, str):
        key = value.strip().lower().replace("_", "-").replace(" ", "-")
        key = _NOTION_ALIASES.get(key, key)
        if key in NOTIONS:
            return NOTIONS[key]
    try:
        relation = Neighbours.parse(value)
    except InvalidArgument:
        allowed = ", ".join([m.value for m in Neighbours] + list(NOTIONS))
        raise InvalidArgument.bad("neighbours", value, f"one of {allowed}") from None
    return ClaimNotion(relation.value, relation, 1, relation.description)

