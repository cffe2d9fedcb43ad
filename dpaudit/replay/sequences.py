"""The two runs' sequences of noise calls and of operations on noisy values, side by side.

:func:`control_flow` finds the first call or operation where the record on D and the replay on
D′ part (*data-dependent control flow*); :func:`sequence` gives the two runs' entries around an
index (at most :data:`AROUND` on each side), which the control flow and noise scale issues carry
as ``values["sequence"]`` (:func:`add_call_sequences` for those about a call) and the reports
show side by side (:mod:`dpaudit.report.kinds.replay`).
"""

from __future__ import annotations

from typing import Any, Optional

from dpaudit.replay.session import Call, Event, Run
from dpaudit.replay.values import Issue, summary

__all__ = ["AROUND", "sequence", "control_flow", "add_call_sequences"]

#: entries of each run's sequence shown before and after the one where the runs part
AROUND = 5


def _short(x: Any, limit: int = 40) -> str:
    """A public parameter or an operand as short text (``1``, ``0.5``, ``(2,)``, ``array(10,)``)."""
    if isinstance(x, tuple) and not (x and x[0] == "digest"):
        text = "(" + ", ".join(_short(v, limit) for v in x) + ("," if len(x) == 1 else "") + ")"
    elif isinstance(x, tuple):
        text = f"array{tuple(x[1])}"
    else:
        s = summary(x, limit=4)
        if isinstance(s, float):
            text = f"{s:.6g}"
        elif isinstance(s, dict) and "shape" in s:
            text = f"array{tuple(s['shape'])}"
        elif isinstance(s, list):
            text = "[" + ", ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in s) + "]"
        else:
            text = str(s)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _call_entry(c: Call) -> dict:
    """One noise call of a run as a sequence shows it: its index, method, call site and its
    public parameters as short text (the distribution, then ``key value`` pairs; a scalar draw's
    empty size left out)."""
    parts = [c.distribution] if c.distribution and c.distribution != c.method else []
    for k, v in c.params.items():
        if v is None or (k == "size" and v == ()):
            continue
        parts.append(f"{k} {_short(v)}")
    return {"index": c.index, "method": c.method, "site": c.site.short(), "params": _cut(", ".join(parts))}


def _event_entry(e: Event) -> dict:
    """One operation on a noisy value as a sequence shows it: its index, numpy operation, site,
    the noise calls it involves and its operands that carry no noise, as short text."""
    calls = ", ".join(f"#{o + 1}" for o in e.origins)
    operands = ", ".join(_short(x) for x in e.operands)
    text = f"call{'s' if len(e.origins) > 1 else ''} {calls}" + (f" with {operands}" if operands else "")
    return {"index": None, "operation": e.ufunc, "site": e.site.short(), "params": _cut(text)}


def _cut(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def sequence(rec: Run, rep: Run, what: str, at: int) -> dict:
    """The two runs' noise calls (``what`` ``"calls"``) or operations on noisy values
    (``"operations"``) around index ``at``, where they part: ``{"of", "parted_at", "D",
    "D_prime", "before", "after_D", "after_D_prime"}``, at most :data:`AROUND` entries on each
    side of ``at`` per run, and how many were left out before the first shown and after the last
    (JSON-ready, a few hundred bytes)."""
    a_all, b_all = (rec.calls, rep.calls) if what == "calls" else (rec.events, rep.events)
    entry = _call_entry if what == "calls" else _event_entry
    lo = max(0, at - AROUND)

    def window(items: list) -> tuple[list, int]:
        shown = items[lo: at + AROUND + 1]
        out = []
        for i, x in enumerate(shown, start=lo):
            e = entry(x)
            e["index"] = i
            out.append(e)
        return out, max(0, len(items) - (at + AROUND + 1))

    d, after_d = window(a_all)
    dp, after_dp = window(b_all)
    return {"of": what, "parted_at": at, "D": d, "D_prime": dp, "before": lo,
            "after_D": after_d, "after_D_prime": after_dp}


def _label(c: Optional[Call]) -> str:
    return "no call" if c is None else f"{c.method} at {c.site.short()}"


def control_flow(rec: Run, rep: Run, issues: list) -> tuple[int, int]:
    """The first call and the first operation where the runs part (their counts when they
    do not), adding the data-dependent control flow issue with the two runs' sequences there."""
    d = rep.divergence
    n_calls = min(len(rec.calls), len(rep.calls))
    n_events = min(len(rec.events), len(rep.events))
    if d is None and len(rec.calls) != len(rep.calls):
        k = n_calls
        d_what, d_index = "call", k
    elif d is None and len(rec.events) != len(rep.events):
        d_what, d_index = "event", n_events
    elif d is not None:
        d_what, d_index = d.what, d.index
    else:
        return n_calls, n_events
    if d_what == "call":
        k = d_index
        a = rec.calls[k] if k < len(rec.calls) else None
        b = rep.calls[k] if k < len(rep.calls) else None
        site = b.site if b is not None else (a.site if a is not None else None)
        issues.append(Issue(
            "data_dependent_control_flow", site,
            f"data-dependent control flow: the noise calls part at call #{k + 1}: on D, {_label(a)}; "
            f"on D′, {_label(b)}",
            {"index": k, "D": None if a is None else {"method": a.method, "site": a.site.to_record()},
             "D_prime": None if b is None else {"method": b.method, "site": b.site.to_record()},
             "sequence": sequence(rec, rep, "calls", k)}))
        return k, 0 if k == 0 else _events_before(rec, rep, k)
    k = d_index
    a = rec.events[k] if k < len(rec.events) else None
    b = rep.events[k] if k < len(rep.events) else None
    site = b.site if b is not None else (a.site if a is not None else None)

    def lab(e: Optional[Event]) -> str:
        return "no operation" if e is None else f"{e.ufunc} at {e.site.short()}"

    issues.append(Issue(
        "data_dependent_control_flow", site,
        f"data-dependent control flow: the operations on noisy values part at operation #{k + 1}: "
        f"on D, {lab(a)}; on D′, {lab(b)}",
        {"index": k, "D": None if a is None else {"operation": a.ufunc, "site": a.site.to_record()},
         "D_prime": None if b is None else {"operation": b.ufunc, "site": b.site.to_record()},
         "sequence": sequence(rec, rep, "operations", k)}))
    return n_calls, k


def _events_before(rec: Run, rep: Run, k: int) -> int:
    """The operations both runs made on the draws before call ``k``."""
    n = 0
    for a, b in zip(rec.events, rep.events):
        if a.key != b.key or any(o >= k for o in a.origins):
            break
        n += 1
    return n


def add_call_sequences(rec: Run, rep: Run, issues: list) -> None:
    """Give each data-dependent noise scale issue about a call (its public parameters, or its
    input's shape, differ) the two runs' calls around it: the first issue of each call site."""
    sequenced: set = set()
    for i in issues:
        if i.kind == "data_dependent_noise_scale" and "sequence" not in i.values \
                and isinstance(i.values.get("call"), int) and i.site is not None and i.site.key not in sequenced:
            sequenced.add(i.site.key)
            i.values["sequence"] = sequence(rec, rep, "calls", i.values["call"])
