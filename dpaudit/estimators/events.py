"""Events S of the output space: level sets of a score, with their human description.

``Event(score, side, lo, hi)`` is ``{y : s(y) ≥ lo}`` (side ``"above"``), ``{y : s(y) < hi}``
(``"below"``) or ``{y : lo ≤ s(y) < hi}`` (``"interval"``), where ``s`` is a score of
:mod:`dpaudit.estimators.scores`. Half-open ends make "above" and "below" at one threshold
complements of each other (up to unseen atoms, which lie in no event), and the same definition is
used when an event is chosen and when it is counted on the validation split.

:meth:`Event.to_record` is the ``event`` of a counterexample: a JSON-ready dict with ``kind``
(``threshold`` | ``interval`` | ``atoms`` | ``patterns`` | ``float-structure`` | ``score``), a
human ``text``, and the
numbers needed to recompute it: ``side`` and ``threshold`` (thresholds), ``lo`` and ``hi``
(intervals), ``atoms`` / ``patterns`` (sets), ``family``, ``cells`` (in words) and ``cell_codes``
(float-structure, :mod:`dpaudit.estimators.floats`; ``reason`` names why such an event can
separate D from D': ``porosity``), ``score`` (the fitted score model, for ``score``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from dpaudit.estimators.floats import FloatCellRatio
from dpaudit.estimators.scores import AtomRatio, Coordinate, Identity, PatternRatio, Score
from dpaudit.results import int_text

__all__ = ["Event"]

#: at most this many atoms or patterns are listed in an event's text
_MAX_LISTED = 12


def _num(x: float) -> str:
    return f"{x:.6g}"


@dataclass(frozen=True, slots=True, eq=False)
class Event:
    """A level set of ``score`` (module docstring)."""

    score: Score
    side: str
    lo: Optional[float] = None
    hi: Optional[float] = None

    def contains(self, y: np.ndarray) -> np.ndarray:
        """Boolean mask of the encoded outputs ``y`` that lie in the event."""
        return self.holds(self.score(y))

    def holds(self, s: np.ndarray) -> np.ndarray:
        """Boolean mask of the score values ``s`` (= ``score(y)``) that lie in the event: events of
        one score share a single evaluation of it."""
        with np.errstate(invalid="ignore"):
            if self.side == "above":
                return s >= self.lo
            if self.side == "below":
                return s < self.hi
            return (s >= self.lo) & (s < self.hi)

    def _keep(self) -> Callable[[np.ndarray], np.ndarray]:
        lo = -math.inf if self.lo is None else self.lo
        hi = math.inf if self.hi is None else self.hi
        return lambda v: (v >= lo) & (v < hi)

    def text(self, decode: Callable[[float], Any] = lambda v: v) -> str:
        """A one-line description, e.g. ``output ≥ 0.73`` or ``output ∈ {3, 4}``."""
        sc = self.score
        if isinstance(sc, FloatCellRatio):
            return sc.text(sc.members(self._keep()))
        if isinstance(sc, (AtomRatio, PatternRatio)):
            members = sc.members(self._keep())
            if isinstance(sc, AtomRatio):
                # numpy scalars as the Python values they hold (numpy 2 spells them np.float64(3.0))
                shown = [_repr(_plain(decode(a))) for a in members[:_MAX_LISTED]]
                what = "output"
            else:
                shown = [_vector(p) for p in members[:_MAX_LISTED]]
                what = "output vector"
            more = f", … ({len(members)} in all)" if len(members) > _MAX_LISTED else ""
            return f"{what} ∈ {{{', '.join(shown)}{more}}}"
        name = sc.describe()
        if self.side == "above":
            return f"{name} ≥ {_num(self.lo)}"
        if self.side == "below":
            return f"{name} < {_num(self.hi)}"
        return f"{_num(self.lo)} ≤ {name} < {_num(self.hi)}"

    def to_record(self, decode: Callable[[float], Any] = lambda v: v) -> dict:
        sc = self.score
        rec: dict = {"text": self.text(decode), "side": self.side}
        if isinstance(sc, (Identity, Coordinate)):
            rec["kind"] = "interval" if self.side == "interval" else "threshold"
            if isinstance(sc, Coordinate):
                rec["coordinate"] = sc.j
                if sc.name is not None:  # a dict output's key: what the text calls it
                    rec["coordinate_name"] = repr(sc.name)
            if self.side == "above":
                rec["threshold"] = self.lo
            elif self.side == "below":
                rec["threshold"] = self.hi
            else:
                rec["lo"], rec["hi"] = self.lo, self.hi
            if self.side != "interval" and isinstance(sc, Identity):
                # the same set as an interval, for plots: [t, inf) or (-inf, t)
                rec["lo"], rec["hi"] = ((self.lo, math.inf) if self.side == "above"
                                        else (-math.inf, self.hi))
        elif isinstance(sc, FloatCellRatio):
            rec["kind"] = "float-structure"
            rec["family"] = sc.cells.family
            if sc.coordinate is not None:
                rec["coordinate"] = sc.coordinate
                if sc.name is not None:
                    rec["coordinate_name"] = repr(sc.name)
            members = sc.members(self._keep())
            rec["cells"] = [sc.cells.describe_cell(c) for c in members[:_MAX_LISTED]]
            rec["cell_codes"] = ([int(c) for c in members] if sc.cells.family == "repeated"
                                 else [float(c) for c in members])
            # a zero of one sign only: the value 0 is the same, the sign bit is what differs
            signed_zero = bool(members.size) and all(sc.cells.is_zero(c) for c in members)
            rec["reason"] = ("signed-zero" if signed_zero else
                             "hidden-bit" if sc.cells.family == "bit" else "porosity")
            if sc.cells.family == "bit":
                rec["bit"] = sc.cells.bit
        elif isinstance(sc, AtomRatio):
            rec["kind"] = "atoms"
            # an int too long to write as text as the record's text for it: the event is kept in
            # the result, whose repr() raised on it through the Python API
            rec["atoms"] = [int_text(_plain(decode(a))) for a in sc.members(self._keep())]
        elif isinstance(sc, PatternRatio):
            rec["kind"] = "patterns"
            rec["patterns"] = sc.members(self._keep()).tolist()
        else:
            rec["kind"] = "score"
            rec["score_lo"], rec["score_hi"] = self.lo, self.hi
            rec["score"] = sc.to_record()
        return rec


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _repr(v: Any) -> str:
    """``repr(v)``; an int of more than 60 digits by its size and its last six digits (the same
    text whatever limit the process sets on writing ints as text: Python's default is 4,300
    digits, ``dpaudit check`` raises it)."""
    if type(v) is int and v.bit_length() > 200:
        return f"<an int of {v.bit_length()} bits, …{abs(v) % 10 ** 6:06d}>"
    try:
        return repr(v)
    except ValueError:
        return f"<{type(v).__name__}>"


def _vector(p: np.ndarray) -> str:
    vals = [int(v) if float(v).is_integer() else float(v) for v in p]
    return "(" + ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in vals) + ")"

