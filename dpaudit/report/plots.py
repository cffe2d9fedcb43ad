"""Plots for the HTML report, drawn with matplotlib (Agg-free SVG canvas) and inlined as SVG.

One figure per finding, its panels chosen by the kind of event S that decided it, from the data
the auditor leaves in the record's ``details`` and counterexample:

* **thresholds and intervals on scalar outputs**: the output histograms of M(D) and M(D′) on the
  validation split with S shaded, and the ε lower bound each candidate threshold would give on
  the selection split (clipped at 0, against the claimed ε, the chosen threshold marked);
* **a coordinate of vector outputs**: the two datasets' histograms of that coordinate when the
  record carries its samples, else P[M(D) ∈ S] against P[M(D′) ∈ S] with their intervals;
* **score, joint and pattern events**: P[M(D) ∈ S] against P[M(D′) ∈ S] with their
  Clopper-Pearson intervals and the most the claim allows (e^ε · P′ + δ);
* **float-structure events (porosity)**: the share of outputs on D and on D′ in each named cell
  of S (binade × trailing zero mantissa bits), and the trailing zero bits of the outputs in
  those binades, computed from the samples' bit patterns.

Figures are 11 inches wide and scale to the report's content width. The key names are read
through :func:`histogram_data`, :func:`curve_data`, :func:`porosity_data` and
:func:`probabilities`, which accept the auditor's layout and a few obvious spellings; a record
without such data simply has no plot. SVG output is deterministic (fixed hash salt per plot, no
date), so reports diff cleanly.
"""

from __future__ import annotations

import functools
import io
import math
import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Optional

import numpy as np

from dpaudit.report.formatting import fmt, num

__all__ = ["histogram_data", "curve_data", "porosity_data", "probabilities", "record_svgs", "Histogram",
           "Curve", "Porosity", "Probabilities", "trailing_zeros", "cell_codes", "cell_label", "sensitivity_svgs", "curve_claim_svgs"]

#: the figure's width in inches (the report's content width, about 1,060 px at 96 px per inch)
WIDTH_IN = 11.0
HEIGHT_IN = 3.6
COLOURS = ("#1f5fa8", "#d9822b")
EVENT_COLOUR = "#c0392b"


@dataclass(frozen=True, slots=True)
class Histogram:
    """Output frequencies under D and D′: ``edges`` (real outputs, len = len(p) + 1) or ``atoms``
    (discrete outputs); ``p``/``q`` are probabilities per bin or atom; ``event`` the shaded set;
    ``label`` what is counted (``output``, ``coordinate 2``)."""

    p: np.ndarray
    q: np.ndarray
    edges: Optional[np.ndarray] = None
    atoms: Optional[tuple] = None
    event: Optional[tuple[float, float]] = None
    event_atoms: tuple = ()
    label: str = "output"
    #: which outputs these are (:func:`_where`)
    where: str = "validation split"


@dataclass(frozen=True, slots=True)
class Curve:
    """ε lower bound (``bound``) per event threshold (``threshold``); ``chosen`` is the threshold used."""

    threshold: np.ndarray
    bound: np.ndarray
    chosen: Optional[float] = None


@dataclass(frozen=True, slots=True)
class Probabilities:
    """P[M(D) ∈ S] = ``p`` and P[M(D′) ∈ S] = ``q`` with their intervals, and ``ceiling``, the
    most the claim allows for ``p`` given ``q``'s upper end (e^ε · q_hi + δ)."""

    p: float
    q: float
    p_interval: Optional[tuple[float, float]]
    q_interval: Optional[tuple[float, float]]
    ceiling: Optional[float]
    title: str
    #: the bound counted the pairs together (``paired``): it is not read off these two intervals
    paired: bool = False


@dataclass(frozen=True, slots=True)
class Porosity:
    """The outputs' float64 cells: ``labels`` of the named cells of S (at most 8), the share of
    outputs on D (``p``) and on D′ (``q``) in each, the share in all of S (``p_all``, ``q_all``);
    ``tz`` the trailing zero mantissa bits 0..52: among the ``n_p`` (``n_q``) outputs on D (D′)
    in S's binades, the share with each (``tz_p``, ``tz_q``)."""

    labels: tuple
    p: np.ndarray
    q: np.ndarray
    p_all: float
    q_all: float
    cells: int
    tz_p: np.ndarray
    tz_q: np.ndarray
    n_p: int = 0
    n_q: int = 0
    #: the validation outputs the record kept and the shares are of (the first few thousand a
    #: side: a cell none of them holds may still hold some of all the validation outputs)
    kept_p: int = 0
    kept_q: int = 0


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


def _event(rec: Mapping[str, Any]) -> Optional[Mapping[str, Any]]:
    cx = rec.get("counterexample")
    ev = cx.get("event") if isinstance(cx, Mapping) else None
    return ev if isinstance(ev, Mapping) else None


def _event_interval(rec: Mapping[str, Any]) -> Optional[tuple[float, float]]:
    ev = _event(rec)
    if ev is None or ev.get("kind") == "float-structure":
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
    ev = _event(rec)
    atoms = ev.get("atoms") if ev is not None else None
    return tuple(num(a) for a in atoms if num(a) is not None) if isinstance(atoms, list) else ()


def _coordinate(rec: Mapping[str, Any]) -> Optional[int]:
    ev = _event(rec)
    c = ev.get("coordinate") if ev is not None else None
    return int(c) if isinstance(c, int) and not isinstance(c, bool) and c >= 0 else None


def _coordinate_label(rec: Mapping[str, Any]) -> str:
    """``coordinate 'sum'`` for a dict output's key (as the event's text names it), else
    ``coordinate 1``."""
    ev = _event(rec) or {}
    name = ev.get("coordinate_name")
    return f"coordinate {name}" if isinstance(name, str) and name else f"coordinate {_coordinate(rec)}"


def _raw_samples(rec: Mapping[str, Any]) -> Optional[tuple[list, list]]:
    det = rec.get("details")
    if not isinstance(det, Mapping):
        return None
    s = _first(det, "samples", "outputs", "sample_outputs")
    if not isinstance(s, Mapping):
        return None
    a, b = _first(s, "d", "D", "p"), _first(s, "d_prime", "D'", "neighbour", "q")
    if not isinstance(a, list) or not isinstance(b, list) or not a or not b:
        return None
    return a, b


def _sample_arrays(rec: Mapping[str, Any]) -> Optional[tuple[np.ndarray, np.ndarray, str]]:
    """The samples of D and D′ as floats (a vector record's event coordinate when it names one)."""
    raw = _raw_samples(rec)
    if raw is None:
        return None
    a, b = raw
    coord = _coordinate(rec)
    if isinstance(a[0], list) or isinstance(b[0], list):
        if coord is None:
            return None
        try:
            a = [row[coord] for row in a]
            b = [row[coord] for row in b]
        except (IndexError, TypeError, KeyError):
            return None
        label = _coordinate_label(rec)
    else:
        label = "output"
    fa, fb = _floats(a), _floats(b)
    if fa is None or fb is None:
        return None
    return fa, fb, label


def _marked(h: Histogram) -> list[int]:
    """The discrete outputs of ``h`` that are in its event S (their positions): those it lists,
    or, for a threshold or an interval, those in [lo, hi) (``output < 0`` holds -2 and -1)."""
    values = [num(a) for a in (h.atoms or ())]
    if h.event_atoms:
        return [i for i, v in enumerate(values) if v is not None and v in h.event_atoms]
    if h.event is None:
        return []
    lo, hi = h.event
    return [i for i, v in enumerate(values) if v is not None and lo <= v < hi]


def _shaded(h: Histogram) -> bool:
    """Whether the histogram panel shades any of the event S (the caption says so only then)."""
    if h.edges is None:
        return bool(_marked(h))
    return h.event is not None and min(h.event[1], h.edges[-1]) > max(h.event[0], h.edges[0])


def _atom_labels(atoms: Any) -> list[str]:
    """Tick labels of discrete outputs: a number in 4 significant digits, or as many more as keep
    the labels apart (3.572e+86, not its first ten characters, 3.57177037; an integral value as
    an integer, -8 not -8.0, a zero without its sign); a text's first 10 characters (never
    mathtext: :func:`record_svgs` turns it off)."""
    labels: list[str] = []
    for digits in (4, 6, 9, 12, 17):
        labels = [fmt(a, digits) if num(a) is not None else str(a)[:10] for a in atoms]
        if len(set(labels)) == len(labels):
            break
    return labels


def _where(rec: Mapping[str, Any]) -> str:
    """Which outputs a record's plots show: its validation split, or the draws of the betting look
    that refuted (:mod:`dpaudit.auditing.betting`: each draw was bet on an event chosen before it)."""
    det = rec.get("details")
    betting = isinstance(det, Mapping) and det.get("bound_method") == "betting"
    return "draws of the betting look" if betting else "validation split"


def _at(rec: Mapping[str, Any], h: Histogram) -> Histogram:
    return replace(h, where=_where(rec))


def histogram_data(rec: Mapping[str, Any]) -> Optional[Histogram]:
    """The output histograms of a record (of its event's coordinate for vector outputs), or None
    when its details carry none."""
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
            return _at(rec, Histogram(_normalise(p), _normalise(q), edges=edges, event=event))
        if isinstance(atoms, (list, tuple)) and len(atoms) == p.size:
            return _at(rec, Histogram(_normalise(p), _normalise(q), atoms=tuple(atoms), event=event))
        return None
    arrays = _sample_arrays(rec)
    if arrays is None:
        return None
    a, b, label = arrays
    both = np.concatenate([a, b])
    both = both[np.isfinite(both)]
    if both.size == 0:
        return None
    uniq = np.unique(both)
    if uniq.size <= 30:
        pa = np.array([(a == u).sum() for u in uniq], dtype=float)
        pb = np.array([(b == u).sum() for u in uniq], dtype=float)
        return _at(rec, Histogram(_normalise(pa), _normalise(pb), atoms=tuple(uniq.tolist()),
                                  event=event, event_atoms=_event_atoms(rec), label=label))
    lo, hi = np.quantile(both, [0.005, 0.995])
    edges = np.linspace(lo, hi if hi > lo else lo + 1.0, 61)
    # fractions of *all* samples (the 1% in the far tails is left out of the picture, not
    # piled into the end bins), so the plotted densities are honest
    pa = np.histogram(a, edges)[0] / max(a.size, 1)
    pb = np.histogram(b, edges)[0] / max(b.size, 1)
    return _at(rec, Histogram(pa, pb, edges=edges, event=event, label=label))


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


def _interval(x: Any) -> Optional[tuple[float, float]]:
    if isinstance(x, (list, tuple)) and len(x) == 2 and num(x[0]) is not None and num(x[1]) is not None:
        return (float(num(x[0])), float(num(x[1])))
    return None


def probabilities(rec: Mapping[str, Any]) -> Optional[Probabilities]:
    """P[M(D) ∈ S] and P[M(D′) ∈ S] of the counterexample with their intervals, or None."""
    cx = rec.get("counterexample")
    if not isinstance(cx, Mapping) or num(cx.get("p")) is None or num(cx.get("q")) is None:
        return None
    if not num(cx["p"]) and not num(cx["q"]):
        return None  # an empty event: nothing to draw
    claim = rec.get("claim") if isinstance(rec.get("claim"), Mapping) else {}
    eps, delta = num(claim.get("epsilon")), num(claim.get("delta")) or 0.0
    qi = _interval(cx.get("q_interval"))
    q_hi = qi[1] if qi else float(num(cx["q"]))
    ceiling = min(1.0, math.exp(eps) * q_hi + delta) if eps is not None and eps < 700 else None
    ev = _event(rec) or {}
    title = "the event S on D and on D′"
    if _coordinate(rec) is not None:
        title = f"the event S on {_coordinate_label(rec)}: D against D′"
    elif ev.get("kind") == "score":
        title = "the score event S: D against D′"
    details = rec.get("details") if isinstance(rec.get("details"), Mapping) else {}
    return Probabilities(float(num(cx["p"])), float(num(cx["q"])), _interval(cx.get("p_interval")), qi,
                         ceiling, title, details.get("bound_method") == "paired")


# -- float64 cells ----------------------------------------------------------------------------------

_MANT = np.uint64((1 << 52) - 1)


def trailing_zeros(y: np.ndarray) -> np.ndarray:
    """Trailing zero bits of each double's 52-bit mantissa (52 when it is 0)."""
    m = np.ascontiguousarray(y, dtype=np.float64).view(np.uint64) & _MANT
    low = (m & (~m + np.uint64(1))).astype(np.float64).view(np.int64)
    tz = (low >> 52) - 1023
    tz[tz < 0] = 52
    return tz


def cell_codes(y: np.ndarray) -> np.ndarray:
    """The float-structure cell of each double, as the auditor numbers them: (2e + s)·64 + tz
    (e the biased exponent, s the sign bit, tz the mantissa's trailing zero bits)."""
    b = np.ascontiguousarray(y, dtype=np.float64).view(np.uint64)
    head = (b >> np.uint64(52)).astype(np.int64)
    e = head & 0x7FF
    return (2 * e + (head >> 11)) * 64 + trailing_zeros(y)


def _binade_text(sign: int, e: int) -> str:
    if e == 0:
        return "subnormal"
    lo, hi = 2.0 ** (e - 1023), 2.0 ** (e - 1022)
    f = lambda v: f"{v:.3g}"  # noqa: E731
    return f"(−{f(hi)}, −{f(lo)}]" if sign else f"[{f(lo)}, {f(hi)})"


def cell_label(code: Any) -> str:
    """A cell code in a few words for an axis: ``[0.0156, 0.0312) tz 1``."""
    c = int(code)
    head, tz = divmod(c, 64)
    e, sign = divmod(head, 2)
    if e >= 0x7FF:
        return "non-finite"
    return f"{_binade_text(sign, e)} tz {tz}"


def porosity_data(rec: Mapping[str, Any]) -> Optional[Porosity]:
    """The named cells of a float-structure event measured on the record's samples, or None."""
    ev = _event(rec)
    if ev is None or ev.get("kind") != "float-structure" or ev.get("family", "trailing") not in ("trailing", "signed"):
        return None
    codes = _floats(ev.get("cell_codes"))
    raw = _raw_samples(rec)
    if codes is None or raw is None or isinstance(raw[0][0], list):
        return None
    a, b = _floats(raw[0]), _floats(raw[1])
    if a is None or b is None:
        return None
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if a.size == 0 or b.size == 0:
        return None
    wanted = np.unique(codes.astype(np.int64))
    if ev.get("family") == "signed":  # cell 0: +0.0, cell 1: −0.0
        signed = lambda y: np.where(y == 0, np.signbit(y).astype(np.int64), -1)  # noqa: E731
        ca, cb = signed(a), signed(b)
        pa = np.array([(ca == c).mean() for c in wanted])
        pb = np.array([(cb == c).mean() for c in wanted])
        names = {0: "+0.0", 1: "−0.0"}
        return Porosity(tuple(names.get(int(c), str(c)) for c in wanted), pa, pb, float(np.isin(ca, wanted).mean()),
                        float(np.isin(cb, wanted).mean()), int(wanted.size), np.zeros(0), np.zeros(0),
                        kept_p=int(a.size), kept_q=int(b.size))
    ca, cb = cell_codes(a), cell_codes(b)
    pa = np.array([(ca == c).mean() for c in wanted])
    pb = np.array([(cb == c).mean() for c in wanted])
    order = np.argsort(-(pa - pb), kind="stable")[:8]
    binades = np.unique(wanted // 64)
    in_a, in_b = np.isin(ca // 64, binades), np.isin(cb // 64, binades)
    tz_a = np.bincount(trailing_zeros(a[in_a]), minlength=53)[:53] / max(int(in_a.sum()), 1)
    tz_b = np.bincount(trailing_zeros(b[in_b]), minlength=53)[:53] / max(int(in_b.sum()), 1)
    return Porosity(tuple(cell_label(c) for c in wanted[order]), pa[order], pb[order],
                    float(np.isin(ca, wanted).mean()), float(np.isin(cb, wanted).mean()), int(wanted.size),
                    tz_a, tz_b, int(in_a.sum()), int(in_b.sum()), kept_p=int(a.size), kept_q=int(b.size))


# -- drawing ----------------------------------------------------------------------------------------

def _svg(fig, salt: str) -> str:
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]                      # drop the XML declaration and DOCTYPE
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    return text.replace("<svg ", '<svg role="img" ', 1)


def _style(ax) -> None:
    ax.tick_params(labelsize=9)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def _hist_axes(ax, h: Histogram, eps: Optional[float]) -> None:
    if h.edges is not None:
        centres = (h.edges[:-1] + h.edges[1:]) / 2
        widths = np.diff(h.edges)
        ax.step(h.edges[:-1], h.p / widths, where="post", color=COLOURS[0], linewidth=1.6, label="M(D)")
        ax.step(h.edges[:-1], h.q / widths, where="post", color=COLOURS[1], linewidth=1.6, label="M(D′)")
        ax.fill_between(centres, h.p / widths, step="mid", alpha=0.15, color=COLOURS[0])
        if _shaded(h):
            ax.axvspan(max(h.event[0], h.edges[0]), min(h.event[1], h.edges[-1]),
                       color=EVENT_COLOUR, alpha=0.10, label="event S")
        ax.set_xlabel(h.label, fontsize=10)
        ax.set_ylabel("density", fontsize=10)
    else:
        x = np.arange(len(h.p))
        marked = _marked(h)
        runs = [[i] for i in marked[:1]]  # neighbouring values in S, shaded as one span
        for i in marked[1:]:
            runs[-1].append(i) if i == runs[-1][-1] + 1 else runs.append([i])
        for k, run in enumerate(runs):
            ax.axvspan(run[0] - 0.5, run[-1] + 0.5, color=EVENT_COLOUR, alpha=0.10,
                       label="event S" if k == 0 else None)
        ax.bar(x - 0.2, h.p, width=0.4, color=COLOURS[0], label="M(D)")
        ax.bar(x + 0.2, h.q, width=0.4, color=COLOURS[1], label="M(D′)")
        labels = _atom_labels(h.atoms or ())
        step = max(1, len(labels) // 16)
        ax.set_xticks(x[::step], labels[::step], rotation=45 if step > 1 or len(labels) > 8 else 0,
                      fontsize=9)
        ax.set_xlabel(h.label, fontsize=10)
        ax.set_ylabel("probability", fontsize=10)
    ax.set_title(f"{'outputs' if h.label == 'output' else h.label} on D and D′ ({h.where})", fontsize=11)
    ax.legend(fontsize=9, frameon=False)


def _curve_axes(ax, c: Curve, eps: Optional[float]) -> None:
    b = np.where(np.isfinite(c.bound), np.maximum(c.bound, 0.0), np.nan)
    ax.plot(c.threshold, b, color=COLOURS[0], linewidth=1.6, label="ε lower bound (0: no evidence)")
    if eps is not None:
        ax.axhline(eps, color=EVENT_COLOUR, linestyle="--", linewidth=1.2, label=f"claimed ε = {eps:g}")
    if c.chosen is not None and np.isfinite(c.chosen):
        ax.axvline(c.chosen, color="#555555", linestyle=":", linewidth=1.2, label="chosen threshold")
    ax.set_ylim(bottom=0.0)
    ax.set_xlabel("event threshold", fontsize=10)
    ax.set_ylabel("ε lower bound", fontsize=10)
    ax.set_title("what each threshold would prove (selection split)", fontsize=11)
    # on a white box: the curve or the claimed line may cross the legend where no corner is free
    ax.legend(fontsize=9, frameon=True, framealpha=0.9, edgecolor="none")


def _pct(v: float) -> str:
    return "0" if v == 0 else f"{100 * v:.3g}%"


def _prob_axes(ax, pr: Probabilities, eps: Optional[float]) -> None:
    x = np.arange(2)
    vals = np.array([pr.p, pr.q])
    ax.bar(x, vals, width=0.5, color=COLOURS, alpha=0.85)
    for i, iv in enumerate((pr.p_interval, pr.q_interval)):
        if iv is not None:
            lo, hi = iv
            ax.errorbar([i], [vals[i]], yerr=[[max(vals[i] - lo, 0)], [max(hi - vals[i], 0)]], color="#222222",
                        capsize=8, linewidth=1.4)
        ax.annotate(_pct(vals[i]) + ("" if iv is None else f"\n[{_pct(iv[0])}, {_pct(iv[1])}]"),
                    (i, (iv[1] if iv else vals[i])), textcoords="offset points", xytext=(0, 6), ha="center",
                    fontsize=9)
    if pr.ceiling is not None:
        ax.hlines(pr.ceiling, -0.35, 0.35, color=EVENT_COLOUR, linestyle="--", linewidth=1.4,
                  label=f"most the claim allows on D (e^ε·P′ + δ = {_pct(pr.ceiling)})"
                  + ("\nat P′'s upper end; the bound counts the pairs together, so it can refute\n"
                     "where the two intervals overlap this line" if pr.paired else ""))
    top = max([pr.p, pr.q] + [iv[1] for iv in (pr.p_interval, pr.q_interval) if iv] + [pr.ceiling or 0])
    if pr.ceiling is not None:
        # a tall bar's labels fill the top: the legend goes where the bars are low
        ax.legend(fontsize=9, frameon=False, loc="upper right" if top < 0.6 else "center right")
    # room above the tallest bar for its two-line label (a bar at 100% wrote it over the title)
    ax.set_ylim(0, top * 1.35 if top > 0 else 1.0)
    if top * 1.35 > 1.0:
        ax.set_yticks([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_xticks(x, ["P[M(D) ∈ S]", "P[M(D′) ∈ S]"], fontsize=10)
    ax.set_xlim(-0.8, 1.8)
    ax.set_ylabel("probability (with its interval)", fontsize=10)
    ax.set_title(pr.title, fontsize=11)


def _cells_axes(ax, po: Porosity) -> None:
    labels = list(po.labels) + [f"all {po.cells} cells of S"]
    p = np.append(po.p, po.p_all)
    q = np.append(po.q, po.q_all)
    y = np.arange(len(labels))[::-1]
    ax.barh(y + 0.2, p, height=0.4, color=COLOURS[0], label="outputs on D")
    ax.barh(y - 0.2, q, height=0.4, color=COLOURS[1], label="outputs on D′")
    for yi, pv, qv in zip(y, p, q):
        ax.annotate(_pct(pv), (pv, yi + 0.2), textcoords="offset points", xytext=(3, -3), fontsize=8)
        # none of the kept outputs, not "never": the validation counts may hold a few (a chart
        # read "never" beside a table of 0.04%, 11 of 27,694)
        ax.annotate(_pct(qv) if qv else (f"0 of {po.kept_q:,} kept" if po.kept_q else "0"),
                    (qv, yi - 0.2), textcoords="offset points", xytext=(3, -3), fontsize=8)
    ax.set_yticks(y, [str(s) for s in labels], fontsize=8.5)
    ax.set_xlim(0, max(float(p.max()), float(q.max()), 1e-9) * 1.3)
    kept = f" (the first {min(po.kept_p, po.kept_q):,} a side)" if po.kept_p and po.kept_q else ""
    ax.set_xlabel(f"share of the validation outputs kept{kept}", fontsize=10)
    ax.set_title("float64 cells of S (binade, tz = trailing zero mantissa bits)" if po.tz_p.size
                 else "signed zeros on D and on D′", fontsize=11)
    ax.legend(fontsize=9, frameon=False, loc="upper right")


def _tz_axes(ax, po: Porosity) -> None:
    used = np.flatnonzero((po.tz_p + po.tz_q) > 0)
    hi = int(used.max()) + 1 if used.size else 53
    x = np.arange(hi)
    ax.bar(x - 0.2, po.tz_p[:hi], width=0.4, color=COLOURS[0], label=f"outputs on D ({po.n_p:,} there)")
    ax.bar(x + 0.2, po.tz_q[:hi], width=0.4, color=COLOURS[1], label=f"outputs on D′ ({po.n_q:,} there)")
    ax.set_xticks(x[:: max(1, math.ceil(hi / 9))])
    ax.set_xlabel("trailing zero bits of the 52-bit mantissa", fontsize=10)
    ax.set_ylabel("share of those outputs", fontsize=10)
    ax.set_title("trailing zero bits in S's binades", fontsize=11)  # fits the narrow panel
    ax.legend(fontsize=9, frameon=True, framealpha=0.9, edgecolor="none")


def _plain_text(draw: Callable) -> Callable:
    """``draw`` with no text of its plots read as mathtext: a label is the audited code's text (a
    dict key, a category, a claim's text), and ``$…$`` in it would be parsed (a key of 2,000
    nested braces raised RecursionError and the HTML report became an internal error)."""
    @functools.wraps(draw)
    def plain(*args: Any, **kwargs: Any) -> Any:
        import matplotlib

        with matplotlib.rc_context({"text.parse_math": False}):
            return draw(*args, **kwargs)

    return plain


@_plain_text
def record_svgs(rec: Mapping[str, Any], salt: str) -> list[tuple[str, str]]:
    """``[(caption, inline svg)]`` for one record or finding (empty when it has no plot data)."""
    claim = rec.get("claim") if isinstance(rec.get("claim"), Mapping) else {}
    eps = num(claim.get("epsilon"))
    ev = _event(rec) or {}
    panels: list = []
    caption: list[str] = []
    po = porosity_data(rec)
    if po is not None and po.tz_p.size == 0:  # signed zeros
        panels.append(po)
        caption.append("the share of outputs on D and on D′ that are +0.0 and −0.0: the two compare equal but "
                       "are different doubles, and the sign bit is released with the value")
    elif po is not None:
        panels += [po, ("tz", po)]
        caption += ["left: the share of outputs on D and on D′ in each float64 cell of the event S "
                    "(the cells that differ most, then all of S), among the validation outputs the "
                    "record kept; the counts of all of them are in the table",
                    "right: among the outputs of each dataset that fall in the binades of S, the share "
                    "whose mantissa ends in each number of zero bits: x + noise rounds to other doubles "
                    "than x′ + noise does (porosity, Mironov 2012)"]
    else:
        h = histogram_data(rec)
        c = curve_data(rec)
        pr = probabilities(rec)
        if h is not None:
            panels.append(h)
            caption.append(f"{'left: ' if (c is not None or pr is not None and not _plain(ev)) else ''}"
                           f"histograms of {'the outputs' if h.label == 'output' else h.label} on D and on D′ "
                           f"({h.where}), " + ("the event S shaded" if _shaded(h) else
                                                     "the event S not among the outputs shown"))
        if c is not None:
            panels.append(c)
            caption.append("right: the ε lower bound each candidate threshold would give on the selection "
                           "split (clipped at 0: a threshold without evidence proves nothing), against the "
                           "claimed ε; the dotted line marks the threshold chosen")
        elif pr is not None and (h is None or not _plain(ev)):
            weights = _score_weights(ev)
            panels.append(pr)
            caption.append(("right: " if h is not None else "left: " if weights is not None else "")
                           + f"P[M(D) ∈ S] and P[M(D′) ∈ S] on the {_where(rec)} with their "
                           "Clopper-Pearson intervals, and the most the claim allows on D "
                           "(e^ε times the upper end on D′, plus δ)")
            if weights is not None and h is None:
                panels.append(weights)
                caption.append("right: the weight the fitted score gives each coordinate of the output "
                               "(on standardised coordinates): the coordinates that tell D from D′")
    if not panels:
        return []
    from matplotlib.figure import Figure

    widths = [2 if isinstance(p, (Histogram, Porosity)) else 1.4 if isinstance(p, (Curve, ScoreWeights)) else 1
              for p in panels]
    height = (4.2 if po is not None and po.tz_p.size else 2.6 if po is not None
              else 3.0 if all(isinstance(p, Probabilities) for p in panels) else HEIGHT_IN)
    fig = Figure(figsize=(WIDTH_IN, height), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False, gridspec_kw={"width_ratios": widths})[0]
    for ax, panel in zip(axes, panels):
        _style(ax)
        if isinstance(panel, Histogram):
            _hist_axes(ax, panel, eps)
        elif isinstance(panel, Curve):
            _curve_axes(ax, panel, eps)
        elif isinstance(panel, Probabilities):
            _prob_axes(ax, panel, eps)
        elif isinstance(panel, Porosity):
            _cells_axes(ax, panel)
        elif isinstance(panel, ScoreWeights):
            _weights_axes(ax, panel)
        else:
            _tz_axes(ax, panel[1])
    text = "; ".join(caption)
    return [(text[0].upper() + text[1:] + ".", _svg(fig, salt))]


@dataclass(frozen=True, slots=True)
class ScoreWeights:
    """The weight per coordinate of a score event's fitted linear score (standardised inputs)."""

    weights: np.ndarray


def _score_weights(ev: Mapping[str, Any]) -> Optional[ScoreWeights]:
    score = ev.get("score") if ev.get("kind") == "score" else None
    w = _floats(score.get("weights")) if isinstance(score, Mapping) else None
    if w is None or w.size > 64 or not np.all(np.isfinite(w)):
        return None
    return ScoreWeights(w)


def _weights_axes(ax, sw: ScoreWeights) -> None:
    x = np.arange(sw.weights.size)
    ax.bar(x, sw.weights, color=[COLOURS[0] if v >= 0 else COLOURS[1] for v in sw.weights])
    ax.axhline(0, color="#555555", linewidth=0.8)
    ax.set_xticks(x[:: max(1, x.size // 16)])
    ax.set_xlabel("coordinate of the output vector", fontsize=10)
    ax.set_ylabel("weight in the score", fontsize=10)
    ax.set_title("what the score event looks at", fontsize=11)


def _plain(ev: Mapping[str, Any]) -> bool:
    """A threshold, interval or atoms event on the plotted output: the histogram shows it."""
    return ev.get("kind") in ("threshold", "interval", "atoms") and ev.get("coordinate") is None


@_plain_text
def sensitivity_svgs(rec: Mapping[str, Any], salt: str) -> list[tuple[str, str]]:
    """A sensitivity counterexample drawn: f(D) and f(D′) on the output axis with the band the
    declared bound allows around f(D′) (a scalar output), or per coordinate (a vector output)."""
    cx = rec.get("counterexample")
    if not isinstance(cx, Mapping):
        return []
    claim = rec.get("claim") if isinstance(rec.get("claim"), Mapping) else {}
    allowed = num(cx.get("allowed", claim.get("bound")))
    fd, fn = cx.get("f_dataset"), cx.get("f_neighbour")
    from matplotlib.figure import Figure

    if num(fd) is not None and num(fn) is not None and allowed is not None:
        a, b = float(num(fd)), float(num(fn))
        fig = Figure(figsize=(WIDTH_IN, 2.4), layout="constrained")
        ax = fig.subplots()
        _style(ax)
        ax.axvspan(b - allowed, b + allowed, color="#16a34a", alpha=0.15,
                   label=f"allowed for f(D): f(D′) ± {allowed:g} (the declared sensitivity)")
        ax.plot([a], [0], "o", color=COLOURS[0], markersize=11, label=f"f(D) = {a:g}")
        ax.plot([b], [0], "s", color=COLOURS[1], markersize=11, label=f"f(D′) = {b:g}")
        ax.annotate("", xy=(a, 0.35), xytext=(b, 0.35),
                    arrowprops={"arrowstyle": "<->", "color": EVENT_COLOUR, "linewidth": 1.6})
        ax.text((a + b) / 2, 0.45, f"gap {abs(a - b):g}", ha="center", fontsize=10, color=EVENT_COLOUR)
        span = max(abs(a - b), allowed) * 1.6 or 1.0
        mid = (a + b) / 2
        ax.set_xlim(mid - span, mid + span)
        ax.set_ylim(-0.6, 0.9)
        ax.set_yticks([])
        ax.spines["left"].set_visible(False)
        ax.set_xlabel("output of the function", fontsize=10)
        ax.set_title("the function on D and on its neighbour D′", fontsize=11)
        ax.legend(fontsize=9, frameon=False, loc="upper left")
        return [("f(D) and f(D′) on the output axis; the green band is where f(D) may lie if the declared "
                 "sensitivity held (f(D′) ± the bound).", _svg(fig, salt))]
    va, vb = _floats(fd if isinstance(fd, list) else None), _floats(fn if isinstance(fn, list) else None)
    if va is None or vb is None or va.size != vb.size or va.size > 40:
        return []
    fig = Figure(figsize=(WIDTH_IN, 3.0), layout="constrained")
    ax = fig.subplots()
    _style(ax)
    x = np.arange(va.size)
    ax.bar(x - 0.2, va, width=0.4, color=COLOURS[0], label="f(D)")
    ax.bar(x + 0.2, vb, width=0.4, color=COLOURS[1], label="f(D′)")
    ax.set_xticks(x)
    ax.set_xlabel("coordinate", fontsize=10)
    gap = num(cx.get("gap"))
    ax.set_title(f"the function on D and on D′ per coordinate (gap {gap:g} against the bound {allowed:g})"
                 if gap is not None and allowed is not None else "the function on D and on D′", fontsize=11)
    ax.legend(fontsize=9, frameon=False)
    return [("f(D) and f(D′) per coordinate of the output.", _svg(fig, salt))]


@_plain_text
def curve_claim_svgs(rec: Mapping[str, Any], salt: str) -> list[tuple[str, str]]:
    """A curve claim drawn: the claimed δ(ε) and the mechanism's lower confidence curve δ_LB(ε)
    over the record's grid (:mod:`dpaudit.curves`), the refuting point (or the closest approach)
    marked."""
    grid = rec.get("grid")
    if not isinstance(grid, Mapping):
        return []
    eps, claim, lower = (_floats(grid.get(k)) for k in ("epsilon", "delta_claim", "delta_lower_bound"))
    if eps is None or claim is None or lower is None or not (eps.size == claim.size == lower.size > 1):
        return []
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH_IN, 3.2), layout="constrained")
    ax = fig.subplots()
    _style(ax)
    text = (rec.get("claim") or {}).get("text", "the claim") if isinstance(rec.get("claim"), Mapping) else "the claim"
    ax.plot(eps, claim, color=COLOURS[1], linewidth=2, label=f"claimed δ(ε) ({text})")
    ax.plot(eps, np.maximum(lower, 0.0), color=COLOURS[0], linewidth=2,
            label="the mechanism's δ(ε), lower confidence curve")
    point = rec.get("refuting_point") or rec.get("point")
    if isinstance(point, Mapping) and num(point.get("epsilon")) is not None:
        e, lb = float(num(point.get("epsilon"))), num(point.get("delta_lower_bound"))
        if lb is not None:
            ax.plot([e], [max(0.0, float(lb))], "o", color=EVENT_COLOUR, markersize=9,
                    label="refuting point" if rec.get("verdict") == "refuted" else "closest approach")
    ax.set_xlabel("ε", fontsize=10)
    ax.set_ylabel("δ(ε)", fontsize=10)
    ax.set_ylim(bottom=0)
    ax.set_title("privacy profile: claimed against measured (lower bound)", fontsize=11)
    ax.legend(fontsize=9, frameon=False)
    return [("The claim's curve δ(ε) and a lower confidence curve of the mechanism's, holding at every "
             "ε at once (clipped at 0): where the measured curve rises above the claimed one, the "
             "claim is refuted.", _svg(fig, salt))]
