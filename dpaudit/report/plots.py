"""Plots for the HTML report, drawn with matplotlib (Agg-free SVG canvas) and inlined as SVG.

Two plots per audit record, from the data the auditor leaves in the record's ``details``:

* **output histograms** of M(D) and M(D′) on the validation split, with the chosen event shaded:
  where the two laws differ by more than e^ε is where the privacy claim breaks;
* **the bound against the event threshold**: the ε lower bound each candidate threshold would
  give, against the claimed ε, with the chosen threshold marked.

The key names are read through :func:`histogram_data` and :func:`curve_data`, which accept the
auditor's layout and a few obvious spellings; a record without such data simply has no plot.
SVG output is deterministic (fixed hash salt per plot, no date), so reports diff cleanly.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

import numpy as np

from dpaudit.report.formatting import num

__all__ = ["histogram_data", "curve_data", "record_svgs", "Histogram", "Curve"]


@dataclass(frozen=True, slots=True)
class Histogram:
    """Output frequencies under D and D′: ``edges`` (real outputs, len = len(p) + 1) or ``atoms``
    (discrete outputs); ``p``/``q`` are probabilities per bin or atom; ``event`` the shaded set."""

    p: np.ndarray
    q: np.ndarray
    edges: Optional[np.ndarray] = None
    atoms: Optional[tuple] = None
    event: Optional[tuple[float, float]] = None
    event_atoms: tuple = ()


@dataclass(frozen=True, slots=True)
class Curve:
    """ε lower bound (``bound``) per event threshold (``threshold``); ``chosen`` is the threshold used."""

    threshold: np.ndarray
    bound: np.ndarray
    chosen: Optional[float] = None


def _first(m: Mapping[str, Any], *keys: str) -> Any:
    for k in keys:
        if k in m and m[k] is not None:
            return m[k]
    return None


def _floats(x: Any) -> Optional[np.ndarray]:
    if not isinstance(x, (list, tuple)) or not x:
        return None
    vals = [num(v) for v in x]
    if any(v is None for v in vals):
        return None
    return np.asarray(vals, dtype=float)


def _normalise(c: np.ndarray) -> np.ndarray:
    s = c.sum()
    return c / s if s > 0 else c


def _event_interval(rec: Mapping[str, Any]) -> Optional[tuple[float, float]]:
    cx = rec.get("counterexample")
    ev = cx.get("event") if isinstance(cx, Mapping) else None
    if not isinstance(ev, Mapping):
        return None
    lo = num(_first(ev, "lo", "low", "lower", "a"))
    hi = num(_first(ev, "hi", "high", "upper", "b"))
    t = num(_first(ev, "threshold", "t"))
    if lo is None and hi is None and t is not None:
        side = str(ev.get("side", ev.get("direction", ">")))
        lo, hi = (t, math.inf) if side in (">", ">=", "above", "upper", "gt", "ge") else (-math.inf, t)
    if lo is None and hi is None:
        return None
    return (-math.inf if lo is None else lo, math.inf if hi is None else hi)


def _event_atoms(rec: Mapping[str, Any]) -> tuple:
    cx = rec.get("counterexample")
    ev = cx.get("event") if isinstance(cx, Mapping) else None
    atoms = ev.get("atoms") if isinstance(ev, Mapping) else None
    return tuple(num(a) for a in atoms if num(a) is not None) if isinstance(atoms, list) else ()


def histogram_data(rec: Mapping[str, Any]) -> Optional[Histogram]:
    """The output histograms of a record, or None when its details carry none."""
    det = rec.get("details")
    if not isinstance(det, Mapping):
        return None
    h = _first(det, "histogram", "histograms", "output_histogram")
    event = _event_interval(rec)
    if isinstance(h, Mapping):
        p = _floats(_first(h, "p", "d", "counts_d", "D"))
        q = _floats(_first(h, "q", "d_prime", "counts_d_prime", "D'", "neighbour"))
        if p is None or q is None or p.size != q.size:
            return None
        edges = _floats(_first(h, "edges", "bins"))
        atoms = _first(h, "atoms", "values", "categories")
        if edges is not None and edges.size == p.size + 1:
            return Histogram(_normalise(p), _normalise(q), edges=edges, event=event)
        if isinstance(atoms, (list, tuple)) and len(atoms) == p.size:
            return Histogram(_normalise(p), _normalise(q), atoms=tuple(atoms))
        return None
    s = _first(det, "samples", "outputs", "sample_outputs")
    if isinstance(s, Mapping):
        a = _floats(_first(s, "d", "D", "p"))
        b = _floats(_first(s, "d_prime", "D'", "neighbour", "q"))
        if a is None or b is None:
            return None
        both = np.concatenate([a, b])
        both = both[np.isfinite(both)]
        if both.size == 0:
            return None
        uniq = np.unique(both)
        if uniq.size <= 30:
            pa = np.array([(a == u).sum() for u in uniq], dtype=float)
            pb = np.array([(b == u).sum() for u in uniq], dtype=float)
            return Histogram(_normalise(pa), _normalise(pb), atoms=tuple(uniq.tolist()),
                             event_atoms=_event_atoms(rec))
        lo, hi = np.quantile(both, [0.005, 0.995])
        edges = np.linspace(lo, hi if hi > lo else lo + 1.0, 41)
        # fractions of *all* samples (the 1% in the far tails is left out of the picture, not
        # piled into the end bins), so the plotted densities are honest
        pa = np.histogram(a, edges)[0] / max(a.size, 1)
        pb = np.histogram(b, edges)[0] / max(b.size, 1)
        return Histogram(pa, pb, edges=edges, event=event)
    return None


def curve_data(rec: Mapping[str, Any]) -> Optional[Curve]:
    """The bound-against-threshold curve of a record, or None."""
    det = rec.get("details")
    if not isinstance(det, Mapping):
        return None
    c = _first(det, "bound_curve", "threshold_curve", "curve")
    if not isinstance(c, Mapping):
        return None
    t = _floats(_first(c, "threshold", "thresholds", "t"))
    b = _floats(_first(c, "epsilon_lower_bound", "epsilon_lb", "bound", "bounds", "eps"))
    if t is None or b is None or t.size != b.size or t.size < 2:
        return None
    return Curve(t, b, num(_first(c, "chosen", "selected", "chosen_threshold")))


def _svg(fig, salt: str) -> str:
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    text = buf.getvalue()
    text = text[text.index("<svg"):]                      # drop the XML declaration and DOCTYPE
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    return text.replace("<svg ", '<svg role="img" ', 1)


def _hist_axes(ax, h: Histogram, eps: Optional[float]) -> None:
    colours = ("#1f5fa8", "#d9822b")
    if h.edges is not None:
        centres = (h.edges[:-1] + h.edges[1:]) / 2
        widths = np.diff(h.edges)
        ax.step(h.edges[:-1], h.p / widths, where="post", color=colours[0], label="M(D)")
        ax.step(h.edges[:-1], h.q / widths, where="post", color=colours[1], label="M(D′)")
        ax.fill_between(centres, h.p / widths, step="mid", alpha=0.15, color=colours[0])
        if h.event is not None:
            lo = max(h.event[0], h.edges[0])
            hi = min(h.event[1], h.edges[-1])
            if hi > lo:
                ax.axvspan(lo, hi, color="#c0392b", alpha=0.08, label="event S")
        ax.set_xlabel("output")
        ax.set_ylabel("density")
    else:
        x = np.arange(len(h.p))
        marked = [i for i, a in enumerate(h.atoms or ()) if num(a) is not None and num(a) in h.event_atoms]
        for k, i in enumerate(marked):
            ax.axvspan(i - 0.5, i + 0.5, color="#c0392b", alpha=0.08, label="event S" if k == 0 else None)
        ax.bar(x - 0.2, h.p, width=0.4, color=colours[0], label="M(D)")
        ax.bar(x + 0.2, h.q, width=0.4, color=colours[1], label="M(D′)")
        # user outputs as labels: no mathtext ($...$ would be parsed), at most 10 characters
        labels = [str(a)[:10].replace("$", r"\$") for a in (h.atoms or ())]
        step = max(1, len(labels) // 12)
        ax.set_xticks(x[::step], labels[::step], rotation=45 if step > 1 or len(labels) > 6 else 0,
                      fontsize=7)
        ax.set_xlabel("output")
        ax.set_ylabel("probability")
    ax.set_title("outputs on D and D′ (validation split)", fontsize=9)
    ax.legend(fontsize=7, frameon=False)


def _curve_axes(ax, c: Curve, eps: Optional[float]) -> None:
    b = np.where(np.isfinite(c.bound), c.bound, np.nan)
    ax.plot(c.threshold, b, color="#1f5fa8", label="ε lower bound")
    if eps is not None:
        ax.axhline(eps, color="#c0392b", linestyle="--", linewidth=1, label=f"claimed ε = {eps:g}")
    if c.chosen is not None and np.isfinite(c.chosen):
        ax.axvline(c.chosen, color="#555555", linestyle=":", linewidth=1, label="chosen threshold")
    ax.set_xlabel("event threshold")
    ax.set_ylabel("ε lower bound")
    ax.set_title("bound against the event threshold", fontsize=9)
    ax.legend(fontsize=7, frameon=False)


def record_svgs(rec: Mapping[str, Any], salt: str) -> list[tuple[str, str]]:
    """``[(caption, inline svg)]`` for one record (empty when it has no plot data)."""
    h, c = histogram_data(rec), curve_data(rec)
    if h is None and c is None:
        return []
    from matplotlib.figure import Figure

    claim = rec.get("claim") if isinstance(rec.get("claim"), Mapping) else {}
    eps = num(claim.get("epsilon"))
    panels = [p for p in (h, c) if p is not None]
    fig = Figure(figsize=(4.4 * len(panels), 2.8), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    caption = []
    for ax, panel in zip(axes, panels):
        ax.tick_params(labelsize=7)
        if isinstance(panel, Histogram):
            _hist_axes(ax, panel, eps)
            caption.append("output histograms for D and D′")
        else:
            _curve_axes(ax, panel, eps)
            caption.append("ε lower bound against the event threshold")
    return [("; ".join(caption), _svg(fig, salt))]
