"""The one neighbouring-pair type of dpaudit: two datasets, how they were found, and (for pairs
drawn by the hypothesis strategies) where they differ.

Every part of the harness that handles a candidate pair (patterns, pair search, refinement, the
sampled and the exact audit, the sensitivity search and its simplifier) uses :class:`Pair`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

__all__ = ["Pair"]


def _array(x: Any) -> np.ndarray:
    a = np.array(x, dtype=float)  # always a fresh copy: callers may mutate what they are given
    return a.reshape(-1) if a.ndim == 0 else a


def _as_key(a: np.ndarray) -> tuple:
    if a.ndim <= 1:
        return tuple(a.tolist())
    return tuple(tuple(r) for r in a.reshape(a.shape[0], -1).tolist())


@dataclass(frozen=True, slots=True, eq=False)
class Pair:
    """Neighbouring datasets (D, D') as float arrays (shape ``(n,)`` or ``(n, dim)``).

    ``label`` says how the pair was found (``"one above"``, ``"hypothesis search"``…);
    ``relation`` is the relation the pair was drawn under, when known. ``index``: for
    ``add-remove`` the position of the extra record in the larger dataset; for ``replace`` the
    position of the changed record. ``dataset_ids`` / ``neighbour_ids`` / ``individual`` are set
    in the individual model only (docs/math.md#individual-model). Equality and hashing use :attr:`key` (the values),
    not the label.
    """

    dataset: np.ndarray
    neighbour: np.ndarray
    label: str = ""
    relation: Any = None
    index: Optional[int] = None
    dataset_ids: Optional[np.ndarray] = None
    neighbour_ids: Optional[np.ndarray] = None
    individual: Optional[int] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "dataset", _array(self.dataset))
        object.__setattr__(self, "neighbour", _array(self.neighbour))

    @classmethod
    def of(cls, d: Any, d2: Any, label: str = "") -> "Pair":
        """A pair of flat (1-D) datasets."""
        return cls(np.asarray(d, dtype=float).reshape(-1), np.asarray(d2, dtype=float).reshape(-1), label)

    def swapped(self) -> "Pair":
        """The same pair in the other order (neighbour first)."""
        return Pair(self.neighbour, self.dataset, self.label, self.relation, self.index,
                    self.neighbour_ids, self.dataset_ids, self.individual)

    def relabelled(self, label: str) -> "Pair":
        return Pair(self.dataset, self.neighbour, label, self.relation, self.index,
                    self.dataset_ids, self.neighbour_ids, self.individual)

    @property
    def key(self) -> tuple:
        """Identity of the pair regardless of its label: the two datasets' values as tuples."""
        return (_as_key(self.dataset), _as_key(self.neighbour))

    @property
    def identical(self) -> bool:
        """True when both datasets hold the same values in the same order."""
        return self.dataset.shape == self.neighbour.shape and bool(np.array_equal(self.dataset, self.neighbour))

    @property
    def sizes(self) -> tuple[int, int]:
        return (len(self.dataset), len(self.neighbour))

    def tuples(self) -> tuple[tuple, tuple]:
        """(D, D') as tuples of floats, for records and reports."""
        return self.key

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Pair):
            return NotImplemented
        return self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        rel = "" if self.relation is None else f"{getattr(self.relation, 'value', self.relation)}, "
        extra = "" if self.individual is None else f", individual={self.individual}"
        idx = "" if self.index is None else f", index={self.index}"
        lab = f", label={self.label!r}" if self.label else ""
        return (f"Pair({rel}dataset={self.dataset.tolist()!r}, "
                f"neighbour={self.neighbour.tolist()!r}{idx}{extra}{lab})")
