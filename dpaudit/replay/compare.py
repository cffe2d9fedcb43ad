"""What one neighbouring pair shows: the record on D and the replay on D′ compared.

:func:`compare` reads two :class:`~dpaudit.replay.session.Run` s and the two outputs and says,
in this order:

1. **control flow**: whether the runs made the same noise calls (kind and call site) and the
   same operations on noisy values; the first index where they part is *data-dependent control
   flow*, with both call sites and the two runs' sequences around that index
   (:mod:`dpaudit.replay.sequences`);
2. **public parameters**: for each call made by both runs, its scale, size and other parameters
   (a primitive's declared sensitivity, ε, δ); one that differs is a *data-dependent noise scale*
   at that call site (a size that follows the dataset's size exactly is per-record randomness,
   a note); an operation that multiplies noise, or a noisy value, by a value that differs is one
   too (each noise scale finding carries the two runs' sequences around its call or operation);
   an operation that combines a noisy value with a value that differs and carries no noise is
   *data outside the noise*;
3. **inputs**: for each call, the input on D and on D′ (from the call's own argument, from the
   additions observed, or from the outputs when the noisy value is the output itself: with the
   noise frozen Δ output = Δ input for additive noise), and
   * for a declared primitive, ``‖Δ‖ > sensitivity`` (beyond a relative tolerance of
     :data:`RTOL` of the declared sensitivity, for the rounding of a correct computation) is an
     **accounting violation** at its call site;
   * for numpy noise, the ε (or μ) the call supports on the pair (:mod:`dpaudit.replay.accounting`),
     added up by composition; a total above the claim is a *note* (composition is an upper bound);
4. **the output**: with every noisy value frozen, an output that still differs while every
   draw's input was observed is the candidate of an *unnoised release*, which the audit then
   confirms on fresh noise (:mod:`dpaudit.replay.search`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from dpaudit.replay.accounting import (Composition, categorical_epsilon, compose, gaussian_mu,
                                       laplace_epsilon, norm_of)
from dpaudit.replay.generator import ACCOUNTED
from dpaudit.replay.result import VIOLATIONS
from dpaudit.replay.sequences import AROUND, add_call_sequences, control_flow, sequence
from dpaudit.replay.session import Call, Event, Run
from dpaudit.replay.sites import Site
from dpaudit.replay.values import Issue, flat_output, same, summary
from dpaudit.report.formatting import fmt_apart

__all__ = ["Issue", "CallRow", "PairReport", "compare", "RTOL", "summary", "same", "flat_output",
           "sequence", "AROUND"]

#: a declared sensitivity (or the claim) is exceeded when the excess is above RTOL of it
RTOL = 1e-9
ATOL = 1e-12


@dataclass(frozen=True)
class CallRow:
    """The accounting of one call on one pair (a row of the report)."""

    index: int
    source: str
    method: str
    site: Site
    distribution: Optional[str]
    scale: Any
    observed: Optional[str]
    input_d: Any
    input_d_prime: Any
    shift: Optional[float]
    norm: str
    sensitivity: Optional[float] = None
    epsilon: Optional[float] = None
    mu: Optional[float] = None
    ratio: Optional[float] = None
    absorbs: Optional[float] = None

    def to_record(self) -> dict:
        return {"index": self.index, "source": self.source, "method": self.method,
                "site": self.site.to_record(), "distribution": self.distribution,
                "scale": summary(self.scale), "input_observed": self.observed,
                "input_D": summary(self.input_d), "input_D_prime": summary(self.input_d_prime),
                "shift": self.shift, "norm": self.norm, "sensitivity": self.sensitivity,
                "epsilon_call": self.epsilon, "mu_call": self.mu, "ratio": self.ratio,
                "sensitivity_absorbed_at_claim": self.absorbs}


@dataclass
class PairReport:
    """Everything :func:`compare` found on one pair."""

    dataset: np.ndarray
    neighbour: np.ndarray
    label: str
    issues: list
    rows: list
    composition: Optional[Composition]
    score: float
    unnoised: list = field(default_factory=list)
    output_d: Any = None
    output_d_prime: Any = None
    diverged: bool = False

    def has(self, kind: str) -> bool:
        return any(i.kind == kind for i in self.issues)

    def violates(self) -> bool:
        """Whether the pair shows a violation (a declared sensitivity exceeded, an exact loss
        above the claim): what refutes the claim and stops the search."""
        return any(i.kind in VIOLATIONS for i in self.issues)


def _text(x: Any) -> str:
    s = summary(x)
    if isinstance(s, float):
        return f"{s:.6g}"
    if isinstance(s, dict) and "first" in s:
        return f"array{tuple(s['shape'])} starting {s['first'][:4]}"
    return str(s)


def _per_record(a: Call, b: Call, n_d: int, n_dp: int) -> bool:
    if n_d == n_dp:
        return False
    pa, pb = a.params.get("population"), b.params.get("population")
    if pa is not None and pb is not None and (pa, pb) == (n_d, n_dp):
        return True
    return bool(a.shape and b.shape and (a.shape[0], b.shape[0]) == (n_d, n_dp))


def _parameters(a: Call, b: Call, n_d: int, n_dp: int, issues: list, notes: list) -> None:
    diff = [k for k in sorted(set(a.params) | set(b.params))
            if not same(a.params.get(k), b.params.get(k))]
    if not diff:
        return
    if _per_record(a, b, n_d, n_dp) and set(diff) <= {"size", "population"}:
        notes.append(Issue("per_record_draws", b.site,
                           f"{b.method} at {b.site.short()} draws once per record ({n_d} on D, "
                           f"{n_dp} on D′): per-record randomness (subsampling, local noise), "
                           f"not a noise scale", {"D": n_d, "D_prime": n_dp}))
        return
    shown = {k: {"D": summary(a.params.get(k)), "D_prime": summary(b.params.get(k))} for k in diff}
    words = "; ".join(f"{k} {_text(a.params.get(k))} on D, {_text(b.params.get(k))} on D′" for k in diff)
    what = "declared calibration" if a.source != "numpy" else "noise parameters"
    issues.append(Issue("data_dependent_noise_scale", b.site,
                        f"data-dependent noise scale at {b.site.short()} ({b.method}): its {what} "
                        f"follow the data: {words}", {"call": b.index, "parameters": shown}))


_VERB = {"multiply": "multiplied", "divide": "divided", "true_divide": "divided",
         "negative": "negated", "positive": "kept"}


def _aligned(ca: np.ndarray, cb: np.ndarray, elems: np.ndarray, align: int,
             sizes: Optional[tuple]) -> tuple:
    """Per-record inputs of an add-remove pair (one row per record of D and of D′), the extra
    record's row left out of both; anything else is returned as it is."""
    if ca.ndim == 0 or cb.ndim == 0 or sizes is None or (ca.shape[0], cb.shape[0]) != tuple(sizes) \
            or abs(ca.shape[0] - cb.shape[0]) != 1 or ca.shape[1:] != cb.shape[1:] \
            or not 0 <= align < max(ca.shape[0], cb.shape[0]):
        return ca, cb, elems
    if ca.shape[0] > cb.shape[0]:
        if elems.shape != ca.shape:
            return ca, cb, elems
        return np.delete(ca, align, axis=0), cb, np.delete(elems, align, axis=0)
    return ca, np.delete(cb, align, axis=0), elems


def _operations(rec: Run, rep: Run, n_events: int, deltas: dict, observed: set, issues: list,
                align: Optional[int] = None) -> None:
    """Walk the operations on tracked values in order, with, per draw, whether data has reached
    it yet (``noisy``: an addition whose operand moves between the runs) and whether a noisy value
    has since been through anything but additions (``bent``: post-processing). An addition that
    moves is the draw's input, unless the value is bent (then data meets post-processed noise); a
    multiplication by a value that moves is a data-dependent noise scale; any other operation with
    an operand that moves is a noise scale on pure noise, data outside the noise on a noisy value.
    A primitive's output is noisy and bent from the start (data added to it is outside its
    declared noise)."""
    sizes = rep.sizes
    state: dict = {}
    sequenced: set = set()  # (kind, site) of the issues given their sequence: the first of each

    def st(origin: int) -> dict:
        if origin not in state:
            c = rec.calls[origin] if origin < len(rec.calls) else None
            declared = c is not None and c.source != "numpy"
            state[origin] = {"noisy": bool(c is not None and (c.has_input or declared)), "bent": declared}
        return state[origin]

    for at, (a, b) in enumerate(zip(rec.events[:n_events], rep.events[:n_events])):
        origin = a.origins[0]
        here = st(origin)
        for o in a.origins[1:]:
            other = st(o)
            here["noisy"] = here["noisy"] or other["noisy"]
            here["bent"] = here["bent"] or other["bent"] or other["noisy"]
        changed = [(x, y) for x, y in zip(a.operands, b.operands) if not same(x, y)]
        if a.kind == "add":
            observed.add(origin)
            if changed and here["noisy"] and here["bent"]:
                x, y = changed[0]
                issues.append(Issue(
                    "data_outside_noise", b.site,
                    f"data outside the noise at {b.site.short()}: a post-processed noisy value is "
                    f"{'increased' if a.ufunc == 'add' else 'decreased'} by a value that follows "
                    f"the data and carries no noise ({_text(x)} on D, {_text(y)} on D′)",
                    {"operation": a.ufunc, "D": summary(x), "D_prime": summary(y), "call": origin}))
                continue
            if changed:
                here["noisy"] = True
            _accumulate(rec, a, b, deltas, align, sizes)
            continue
        if not changed:
            if here["noisy"] and a.kind == "post":
                here["bent"] = True
            continue
        x, y = changed[0]
        values = {"operation": a.ufunc, "D": summary(x), "D_prime": summary(y), "call": origin}
        if (a.kind == "scale" or not here["noisy"]) and b.site.key not in sequenced:
            sequenced.add(b.site.key)
            values["sequence"] = sequence(rec, rep, "operations", at)
        if a.kind == "scale" and here["noisy"]:
            verb = _VERB.get(a.ufunc, a.ufunc)
            msg = (f"data-dependent noise scale at {b.site.short()}: a noisy value is {verb} by a "
                   f"value that follows the data ({_text(x)} on D, {_text(y)} on D′), so the noise "
                   f"it carries is rescaled by the data")
            issues.append(Issue("data_dependent_noise_scale", b.site, msg, values))
        elif a.kind == "scale" or not here["noisy"]:
            verb = f"{_VERB[a.ufunc]} by" if a.ufunc in _VERB else f"passed through {a.ufunc} with"
            msg = (f"data-dependent noise scale at {b.site.short()}: the noise of call #{origin + 1} "
                   f"is {verb} a value that follows the data ({_text(x)} on D, {_text(y)} on D′)")
            issues.append(Issue("data_dependent_noise_scale", b.site, msg, values))
        else:
            here["bent"] = True
            msg = (f"data outside the noise at {b.site.short()}: a noisy value meets a value that "
                   f"follows the data and carries no noise ({a.ufunc}: {_text(x)} on D, {_text(y)} on D′)")
            issues.append(Issue("data_outside_noise", b.site, msg, values))


def _accumulate(rec: Run, a: Event, b: Event, deltas: dict, align: Optional[int],
                sizes: Optional[tuple]) -> None:
    """Add one addition's contributions (in the draw's units) to its draw's inputs on D and D′."""
    if a.contribution is None or b.contribution is None or a.elems is None:
        return
    ca, cb = np.asarray(a.contribution, dtype=float), np.asarray(b.contribution, dtype=float)
    elems = np.asarray(a.elems)
    if ca.shape != cb.shape and align is not None:
        ca, cb, elems = _aligned(ca, cb, elems, align, sizes)
    if ca.shape != cb.shape or elems.shape != ca.shape:
        return
    origin = a.origins[0]
    slot = deltas.setdefault(origin, {"a": _zeros(rec, origin), "b": _zeros(rec, origin)})
    at = elems.reshape(-1)
    if at.size and at.max() >= slot["a"].size:
        return
    np.add.at(slot["a"], at, ca.reshape(-1))
    np.add.at(slot["b"], at, cb.reshape(-1))


def _reuse(rec: Run, rep: Run, n_calls: int, n_events: int) -> Optional[tuple]:
    """The first reuse of a draw (an element added to two values) whose two inputs shift by
    different amounts between D and D′: (call, first operation, second operation), else None."""
    for origin, s1, s2 in rec.reuses:
        if origin >= n_calls or s2 >= n_events:
            continue
        shifts: dict = {}
        for s in {s1, s2}:
            a, b = rec.events[s], rep.events[s]
            if a.contribution is None or b.contribution is None or a.elems is None:
                continue
            ca, cb = np.asarray(a.contribution, dtype=float), np.asarray(b.contribution, dtype=float)
            if ca.shape != cb.shape or np.shape(a.elems) != ca.shape:
                continue
            d = _shift(ca.reshape(-1), cb.reshape(-1))
            for e, v in zip(np.asarray(a.elems).reshape(-1).tolist(), d.tolist()):
                shifts.setdefault(e, []).append(v)
        for values in shifts.values():
            if len(values) > 1:
                v = np.asarray(values)
                if np.isnan(v).any() or np.ptp(v) > 1e-9 * max(1.0, float(np.max(np.abs(v)))):
                    return origin, rec.events[s1], rec.events[s2]
    return None


def _zeros(run: Run, origin: int) -> np.ndarray:
    c = run.calls[origin] if origin < len(run.calls) else None
    return np.zeros(c.size if c is not None else 1)


def _declared_row(a: Call, b: Call, claim_eps: float, issues: list, declared_spent: list) -> CallRow:
    dec = a.declared or {}
    s = dec.get("sensitivity")
    norm = dec.get("norm") or "l1"
    try:
        xa = np.asarray(a.input, dtype=float)
        xb = np.asarray(b.input, dtype=float)
    except (TypeError, ValueError):
        return CallRow(a.index, a.source, a.method, a.site, a.distribution, None, "argument",
                       a.input, b.input, None, norm, s)
    if xa.shape != xb.shape:
        issues.append(Issue("data_dependent_noise_scale", b.site,
                            f"data-dependent noise scale at {b.site.short()} ({b.method}): its input "
                            f"has shape {xa.shape} on D and {xb.shape} on D′",
                            {"call": a.index, "D": list(xa.shape), "D_prime": list(xb.shape)}))
        return CallRow(a.index, a.source, a.method, a.site, a.distribution, None, "argument",
                       a.input, b.input, None, norm, s)
    with np.errstate(all="ignore"):
        shift = norm_of(xb - xa, norm)
    nan_d, nan_dp = bool(np.isnan(xa).any()), bool(np.isnan(xb).any())
    if nan_d and nan_dp and np.array_equal(np.isnan(xa), np.isnan(xb)):
        with np.errstate(all="ignore"):
            shift = norm_of(np.where(np.isnan(xa), 0.0, xb - xa), norm)
    ratio = None
    if s is not None:
        ratio = (0.0 if shift == 0 else math.inf) if s == 0 else (math.inf if math.isnan(shift) else shift / s)
        if math.isnan(shift) or shift > s * (1 + RTOL) + (ATOL if s == 0 else 0.0):
            excess = math.nan if math.isnan(shift) else shift - s
            nonfinite = " (a NaN input)" if math.isnan(shift) else ""
            issues.append(Issue(
                "sensitivity_exceeded", b.site,
                f"declared sensitivity exceeded at {b.site.short()} ({b.method}): "
                f"‖input(D) − input(D′)‖_{norm[1:]} = {shift:.6g}{nonfinite} > declared sensitivity "
                f"{s:.6g}{' (declared at ' + dec['at'] + ')' if dec.get('at') else ''} "
                f"(excess {excess:.6g}); input {_text(xa)} on D, {_text(xb)} on D′",
                {"call": a.index, "method": a.method, "shift": shift, "sensitivity": s,
                 "excess": excess, "norm": norm, "D": summary(xa), "D_prime": summary(xb),
                 "declared_at": dec.get("at")}))
    eps = dec.get("epsilon")
    spent = None
    if eps is not None:
        if shift == 0:
            spent = (0.0, 0.0)
        elif a.distribution == "laplace" and ratio is not None:
            spent = (eps * ratio, dec.get("delta") or 0.0)
        else:  # within the sensitivity up to the same rounding its check allows: what it declares
            within = ratio is None or ratio <= 1 + RTOL
            spent = (eps if within else math.inf, dec.get("delta") or 0.0)
        declared_spent.append(spent)
    return CallRow(a.index, a.source, a.method, a.site, a.distribution, None, "argument", xa, xb,
                   shift, norm, s, None if spent is None else spent[0], None, ratio,
                   None if eps is None or s is None or eps == 0 else s * claim_eps / eps)


@dataclass
class _Spent:
    """What the accounted calls of one pair support, for :func:`compose`: the ε of each Laplace
    or categorical call, the μ of each Gaussian call, the (ε, δ) of each declared primitive."""

    laplace: list = field(default_factory=list)
    mus: list = field(default_factory=list)
    declared: list = field(default_factory=list)


def compare(rec: Run, rep: Run, out_d: Any, out_dp: Any, dataset: np.ndarray,
            neighbour: np.ndarray, label: str, epsilon: float, delta: float) -> PairReport:
    """Compare the record on ``dataset`` with the replay on ``neighbour`` (module docstring)."""
    issues: list = []
    notes: list = []
    n_calls, n_events = control_flow(rec, rep, issues)
    diverged = bool(issues)
    n_d, n_dp = len(dataset), len(neighbour)
    for a, b in zip(rec.calls[:n_calls], rep.calls[:n_calls]):
        _parameters(a, b, n_d, n_dp, issues, notes)
    deltas: dict = {}
    observed: set = set()
    _operations(rec, rep, n_events, deltas, observed, issues, rep.align)
    _reuse_issue(rec, rep, n_calls, n_events, issues)
    spent = _Spent()
    rows, unobserved = _call_rows(rec, rep, n_calls, deltas, observed, epsilon, issues, spent)
    add_call_sequences(rec, rep, issues)
    unnoised: list = []
    if not diverged:
        unnoised, unobserved = _output(out_d, out_dp, unobserved, epsilon, rows, spent)
    _unobserved(unobserved, diverged, rows, notes)
    comp = compose(spent.laplace, spent.mus, spent.declared, delta) \
        if (spent.laplace or spent.mus or spent.declared) else None
    _composition_note(comp, rows, issues, epsilon, delta, notes)
    _unaccounted_note(rec.calls[:n_calls], notes)
    return PairReport(dataset, neighbour, label, issues + notes, rows, comp,
                      _score(comp, rows, epsilon), unnoised, out_d, out_dp, diverged)


def _reuse_issue(rec: Run, rep: Run, n_calls: int, n_events: int, issues: list) -> None:
    """A draw added to two values whose difference follows the data (:func:`_reuse`)."""
    reuse = _reuse(rec, rep, n_calls, n_events)
    if reuse is None:
        return
    origin, e1, e2 = reuse
    c = rec.calls[origin]
    issues.append(Issue("noise_reuse", e2.site,
                        f"noise reused: the draw of call #{origin + 1} ({c.method} at {c.site.short()}) "
                        f"is added to two values (at {e1.site.short()} and {e2.site.short()}) whose "
                        f"difference follows the data: that difference is released without noise",
                        {"call": origin, "first": e1.site.to_record(), "again": e2.site.to_record()}))


def _call_rows(rec: Run, rep: Run, n_calls: int, deltas: dict, observed: set, epsilon: float,
               issues: list, spent: _Spent) -> tuple[list, list]:
    """A row for each call both runs made, with what it supports added to ``spent``; and the
    numpy calls of an accounted distribution whose input was not observed (no row yet)."""
    rows: list = []
    unobserved: list = []
    for a, b in zip(rec.calls[:n_calls], rep.calls[:n_calls]):
        if a.source != "numpy":
            rows.append(_declared_row(a, b, epsilon, issues, spent.declared))
            continue
        if a.distribution == "categorical" and a.has_input:
            e = categorical_epsilon(a.input, b.input)
            spent.laplace.append(e)
            rows.append(CallRow(a.index, a.source, a.method, a.site, "categorical", None, "argument",
                                a.input, b.input, None, "max log-ratio", epsilon=e))
            continue
        if a.distribution not in ACCOUNTED or b.fresh or tuple(a.shape) != tuple(b.shape):
            rows.append(CallRow(a.index, a.source, a.method, a.site, a.distribution, a.scale, None,
                                None, None, None, "-"))
            continue
        va, vb, how = _numpy_input(a, b, deltas.get(a.index), a.index in observed)
        if how is None or va is None:
            unobserved.append(a)
            continue
        shift = _shift(va, vb)
        _zero_scale(a, shift, va, vb, issues)
        rows.append(_numpy_row(a, shift, how, epsilon, spent.laplace, spent.mus, va, vb))
    return rows, unobserved


def _numpy_input(a: Call, b: Call, slot: Optional[dict], seen: bool) -> tuple:
    """A numpy draw's input on D and on D′ (the additions observed, ``slot``, plus the call's own
    argument) and how it was observed: "arithmetic", "argument", or None (not observed)."""
    va = None if slot is None else slot["a"]
    vb = None if slot is None else slot["b"]
    how = "arithmetic" if seen else None
    if a.has_input:
        with np.errstate(all="ignore"):
            la = np.broadcast_to(np.asarray(a.input, dtype=float), a.shape).reshape(-1)
            lb = np.broadcast_to(np.asarray(b.input, dtype=float), a.shape).reshape(-1)
        va = la if va is None else va + la
        vb = lb if vb is None else vb + lb
        how = "argument" if how is None else how
    return va, vb, how


def _output(out_d: Any, out_dp: Any, unobserved: list, epsilon: float, rows: list,
            spent: _Spent) -> tuple[list, list]:
    """With every noisy value frozen, what the outputs still show: where they differ and the
    unobserved calls fill the output, those calls' inputs (Δ output = Δ input for additive
    noise; their rows added); where they differ and no call is unobserved, the elements of an
    unnoised release ([-1]: the outputs as a whole). Returns (unnoised, calls still unobserved)."""
    fa, fb = flat_output(out_d), flat_output(out_dp)
    if fa is None or fb is None or fa.shape != fb.shape:
        return ([-1] if not same(out_d, out_dp) and not unobserved else []), unobserved
    differ = np.flatnonzero(~(np.isclose(fa, fb, rtol=0, atol=0) | (np.isnan(fa) & np.isnan(fb))))
    if not differ.size:
        return [], unobserved
    if not unobserved:
        return [int(i) for i in differ], unobserved
    if sum(c.size for c in unobserved) != fa.size:
        return [], unobserved
    at = 0
    for c in unobserved:
        xa, xb = fa[at:at + c.size], fb[at:at + c.size]
        at += c.size
        rows.append(_numpy_row(c, _shift(xa, xb), "output", epsilon, spent.laplace, spent.mus, xa, xb))
    return [], []


def _unobserved(unobserved: list, diverged: bool, rows: list, notes: list) -> None:
    """A row without accounting for each call whose input was not observed, and (runs that did not
    diverge) a note saying so."""
    for c in unobserved:
        rows.append(CallRow(c.index, c.source, c.method, c.site, c.distribution, c.scale, None,
                            None, None, None, "-"))
        if diverged:
            continue
        notes.append(Issue("input_not_observed", c.site,
                           f"the input of {c.method} at {c.site.short()} was not observed (its draw "
                           f"left numpy's arithmetic, and the output does not show it alone): that "
                           f"call is not accounted", {"call": c.index}))


def _composition_note(comp: Optional[Composition], rows: list, issues: list, epsilon: float,
                      delta: float, notes: list) -> None:
    """A note where composition over the accounted calls supports more than the claimed (ε, δ)
    and the pair shows no violation: composition is an upper bound, not an ε lower bound."""
    violated = any(i.kind in ("sensitivity_exceeded", "unnoised_release") for i in issues)
    if comp is None or violated or not (comp.epsilon > epsilon * (1 + RTOL) + ATOL
                                        or comp.delta > delta * (1 + RTOL) + 1e-15):
        return
    top = max((r for r in rows if r.epsilon is not None or r.mu is not None),
              key=lambda r: (r.epsilon or 0.0) + (r.mu or 0.0), default=None)
    k = sum(1 for r in rows if r.epsilon is not None or r.mu is not None)
    dtext = f", δ = {comp.delta:.3g}" if comp.delta > 0 else ""
    over = comp.epsilon > epsilon * (1 + RTOL) + ATOL
    claimed = (f"ε = {fmt_apart(epsilon, comp.epsilon)}" if over else
               f"δ = {delta:.3g} (at ε = {fmt_apart(epsilon, comp.epsilon)})")
    notes.append(Issue(
        "composition_excess", None if top is None else top.site,
        f"by composition over its {k} accounted noise call(s) the code's own noise supports "
        f"ε = {fmt_apart(comp.epsilon, epsilon)}{dtext} on this pair, above the claimed "
        f"{claimed}: an "
        f"accounting note, not an ε lower bound (composition is an upper bound; a sparse vector "
        f"or a report-noisy-max is private for reasons per-call composition does not see)",
        {"epsilon_supported": comp.epsilon, "delta_supported": comp.delta,
         "epsilon_claimed": epsilon, "delta_claimed": delta, "calls": k}))


def _unaccounted_note(calls: list, notes: list) -> None:
    """A note naming the numpy draws of distributions with no per-call accounting."""
    unaccounted = [c for c in calls if c.source == "numpy"
                   and c.distribution not in ACCOUNTED and c.distribution != "categorical"]
    if not unaccounted:
        return
    sites = sorted({f"{c.method} at {c.site.short()}" for c in unaccounted})
    notes.append(Issue("unaccounted_noise", unaccounted[0].site,
                       f"{len(unaccounted)} draw(s) of distributions with no per-call accounting "
                       f"({', '.join(sites[:4])}{' …' if len(sites) > 4 else ''}): composition does "
                       f"not cover them; they are frozen and their parameters compared",
                       {"calls": [c.index for c in unaccounted]}))


def _score(comp: Optional[Composition], rows: list, epsilon: float) -> float:
    """How far the pair goes toward a violation: the largest of the composed ε over the claim and
    the calls' ratios Δ/sensitivity, at most 1e6 (NaN and inf as 1e6)."""
    ratios = [r.ratio for r in rows if r.ratio is not None]
    score = max([(comp.epsilon / epsilon) if comp is not None else 0.0] + ratios + [0.0])
    if math.isnan(score) or math.isinf(score):
        score = 1e6
    return min(score, 1e6)


def _zero_scale(c: Call, shift: np.ndarray, va: Any, vb: Any, issues: list) -> None:
    """Noise of scale 0 on an input that moves: the value is released as it is."""
    scale = np.abs(np.asarray(c.scale, dtype=float))
    flat = np.broadcast_to(scale, c.shape).reshape(-1) if scale.ndim and c.shape else \
        np.full(shift.size, float(scale))
    if flat.shape != shift.shape:
        return
    bad = np.flatnonzero((flat == 0) & (np.abs(np.nan_to_num(shift, nan=1.0)) > 0))
    if not bad.size:
        return
    j = int(bad[0])
    a = np.asarray(va, dtype=float).reshape(-1)[j]
    b = np.asarray(vb, dtype=float).reshape(-1)[j]
    issues.append(Issue("unnoised_release", c.site,
                        f"data released without noise at {c.site.short()}: {c.method} noise of scale 0 "
                        f"is added to an input that moves ({a:.6g} on D, {b:.6g} on D′, element {j})",
                        {"call": c.index, "element": j, "D": a, "D_prime": b, "scale": 0.0,
                         "elements": int(bad.size)}))


def _shift(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """b − a, with a NaN on both sides counted as no shift (NaN on one side stays NaN)."""
    with np.errstate(all="ignore"):
        d = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    both = np.isnan(a) & np.isnan(b)
    return np.where(both, 0.0, d)


def _numpy_row(c: Call, d: Any, how: str, claim_eps: float, laplace: list, mus: list,
               va: Any = None, vb: Any = None) -> CallRow:
    d = np.asarray(d, dtype=float).reshape(-1)
    scale = np.asarray(c.scale, dtype=float)
    flat_scale = np.broadcast_to(scale, c.shape).reshape(-1) if scale.ndim and c.shape else scale
    if c.distribution == "laplace":
        e = laplace_epsilon(d, flat_scale)
        laplace.append(e)
        shift = norm_of(d, "l1")
        absorbs = float(claim_eps * np.min(scale)) if scale.size else None
        return CallRow(c.index, c.source, c.method, c.site, "laplace", c.scale, how, _value(va), _value(vb),
                       shift, "l1", epsilon=e, absorbs=absorbs)
    mu = gaussian_mu(d, flat_scale)
    mus.append(mu)
    return CallRow(c.index, c.source, c.method, c.site, "gaussian", c.scale, how, _value(va), _value(vb),
                   norm_of(d, "l2"), "l2", mu=mu)


def _value(v: Any) -> Any:
    if v is None:
        return None
    a = np.asarray(v, dtype=float).reshape(-1)
    return a[0] if a.size == 1 else a
