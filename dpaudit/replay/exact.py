"""Exact privacy losses from the replay: where the release reveals each noised value.

Composition over noise calls is an upper bound on the privacy loss, never a lower bound (a sparse
vector, a report-noisy-max are private for reasons it does not see). One case is exact: when the
release *reveals* each noised value, i.e. some coordinates of the output are, on both runs, a
map ``y ↦ m·y`` (m ≠ 0, the same on D and D′) of one element ``y = x + Z`` of a draw, every
element of every draw is revealed so, and nothing else touched the noise. Then the output
determines the noised values through a data-independent injective map, and by the lemma of
docs/math.md#exact-losses-from-the-replay the loss on the pair is exactly that of the noised values
(the joint density factorises over independent draws):

* Laplace(b) with its input moved by Δ: ε = |Δ|/b per element, added up over the elements
  (Dwork and Roth 2014, Theorem 3.6, attained on the tail event {y ≥ max(x, x′)}); for δ > 0
  the exact profile of one element, δ(ε) = 1 − e^{(ε − a)/2} with a = |Δ|/b, and of several the
  tail event's 2^{−k}(1 − e^{ε − Σa});
* Gaussian(σ): μ = ‖Δ/σ‖₂ and the exact profile δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)
  (Balle and Wang 2018, Theorem 8): no finite ε at δ = 0.

Each part is the loss of a projection of the output (a post-processing), so their maximum is a
sound lower bound on ε at the claimed δ, and exact at δ = 0 with Laplace noise alone. The replay
shows the premise as follows (:func:`exact_issue`): the two runs made the same calls (numpy
``laplace``/``normal``/``standard_normal``, not a primitive, whose noise is only declared), with
the same parameters; every operation on noise was an addition or a multiplication by a value
that does not move (no comparison, no clip, no sum of noisy values, no second draw added); each
revealed coordinate equals m·(draw + input) numerically on the record; and (by the search) the
same holds on the pair with fresh noise. What it cannot see: noise taken out of numpy's
arithmetic (``float(z)``, ``np.asarray``) and branched on; such a draw is not revealed and the
pair is then not exact.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from dpaudit.replay.accounting import gdp_delta, gdp_epsilon, laplace_delta, laplace_epsilon_at
from dpaudit.replay.tracked import Noisy, NoisyScalar, trace_of
from dpaudit.replay.values import Issue, flat_output, same

__all__ = ["KIND", "layout", "exact_issue", "exact_loss", "loss_of", "revealed", "RTOL"]

#: the finding kind of an exact loss above the claim
KIND = "exact_loss_exceeded"
#: the claim is exceeded when the exact loss is above it by more than this share (rounding)
RTOL = 1e-9
ATOL = 1e-12
#: a revealed coordinate matches m·(draw + input) within this share of its magnitude
_MATCH = 1e-9
_METHODS = ("laplace", "normal", "standard_normal")
#: the pair's findings the premise allows: an accounting note, and a noise scale that follows the
#: data (its loss is then the exact profile of two laws of different scales)
_ALLOWED = ("composition_excess", "data_dependent_noise_scale")
#: the parameters of a draw that may differ between D and D′ (what else moves breaks the premise)
_MAY_MOVE = ("scale", "loc")
#: two scales this close (relative) are one scale, not a scale that follows the data
_SAME_SCALE = 1e-9


def layout(out: Any) -> Optional[tuple]:
    """Per coordinate of the flat output (:func:`~dpaudit.replay.values.flat_output`): ``(call,
    element, multiplier)`` where the coordinate is a tracked value linear in one element of one
    draw, else None; None for the whole when the output is not a flat tuple of numbers."""
    items: list = []

    def walk(x: Any) -> bool:
        if isinstance(x, (Noisy, NoisyScalar)):
            t = trace_of(x)
            size = int(np.size(x))
            if t is None or not t.linear or t.elems is None:
                items.extend([None] * size)
                return True
            elems = np.broadcast_to(np.asarray(t.elems), np.shape(x)).reshape(-1)
            mult = np.broadcast_to(np.asarray(t.mult, dtype=float), np.shape(x)).reshape(-1)
            items.extend((int(t.origin), int(e), float(m)) for e, m in zip(elems.tolist(), mult.tolist()))
            return True
        if isinstance(x, np.ndarray):
            items.extend([None] * int(x.size))
            return True
        if isinstance(x, (list, tuple)):
            return all(walk(v) for v in x)
        if isinstance(x, (bool, int, float, np.generic)):
            items.append(None)
            return True
        return False

    if not walk(out):
        return None
    flat = flat_output(out)
    if flat is None or flat.size != len(items):
        return None
    return tuple(items)


def _inputs(row: Any, size: int) -> Optional[tuple]:
    try:
        a = np.broadcast_to(np.asarray(row.input_d, dtype=float), (size,)) if np.ndim(row.input_d) == 0 \
            else np.asarray(row.input_d, dtype=float).reshape(-1)
        b = np.broadcast_to(np.asarray(row.input_d_prime, dtype=float), (size,)) \
            if np.ndim(row.input_d_prime) == 0 else np.asarray(row.input_d_prime, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        return None
    return (a, b) if a.shape == b.shape == (size,) else None


def exact_loss(parts: list, epsilon: float, delta: float) -> dict:
    """The loss of the revealed elements ``parts`` ((distribution, a) with a = |Δ|/b for
    Laplace, Δ/σ for Gaussian) at the claimed δ (module docstring): ``epsilon`` (a lower bound
    on ε at δ, exact when ``exact``), ``laplace`` (Σ a), ``mu``, ``elements``."""
    lap = [a for d, a in parts if d == "laplace" and a > 0]
    gau = [a for d, a in parts if d == "gaussian" and a != 0]
    total = float(sum(lap))
    mu = float(math.sqrt(sum(a * a for a in gau)))
    candidates = [0.0]
    if lap:
        candidates.append(laplace_epsilon_at(max(lap), delta))
        k = len(lap)
        if delta <= 0:
            candidates.append(total)
        elif k * math.log(2.0) + math.log(delta) < 0:
            candidates.append(max(0.0, total + math.log1p(-math.exp(k * math.log(2.0) + math.log(delta)))))
    if mu > 0:
        candidates.append(gdp_epsilon(mu, delta))
    eps = max(candidates)
    exact = (delta <= 0 and (not gau or not lap)) or len(lap) + len(gau) <= 1
    return {"epsilon": eps, "laplace": total, "mu": mu, "elements": len(lap) + len(gau),
            "exact": bool(exact),
            "delta_at_claim": max([laplace_delta(epsilon, a) for a in lap] + [gdp_delta(epsilon, mu) if mu else 0.0])}


def _scale_of(call: Any) -> np.ndarray:
    return np.broadcast_to(np.abs(np.asarray(call.scale, dtype=float)), call.shape).reshape(-1) \
        if np.ndim(call.scale) else np.full(call.size, abs(float(call.scale)))


def _loc_of(call: Any) -> np.ndarray:
    if not call.has_input:
        return np.zeros(call.size)
    return np.broadcast_to(np.asarray(call.input, dtype=float), call.shape).reshape(-1) \
        if np.ndim(call.input) else np.full(call.size, float(call.input))


def _unequal(e: dict) -> bool:
    """Whether a revealed element's two laws differ in scale (beyond rounding): its loss is
    then the exact profile of :mod:`dpaudit.replay.profiles`, not |Δ|/b."""
    s, s2 = e["law"][2], e["law_prime"][2]
    return not abs(s - s2) <= _SAME_SCALE * max(s, s2)


def loss_of(found: list, epsilon: float, delta: float) -> dict:
    """The loss of the revealed elements ``found`` (:func:`revealed`) at the claimed δ: the
    elements whose two laws have one scale by :func:`exact_loss`; each one whose scale follows
    the data by its exact profile (:func:`dpaudit.replay.profiles.profile_epsilon`, a projection
    of the release, so a lower bound), the larger of the two. Exact where one element is
    revealed, or where the loss is unbounded at δ = 0."""
    from dpaudit.replay.profiles import profile_delta, profile_epsilon

    equal = [e for e in found if not _unequal(e)]
    other = [e for e in found if _unequal(e)]
    loss = exact_loss([(e["distribution"], e["a"]) for e in equal], epsilon, delta)
    if not other:
        return loss
    eps = max([loss["epsilon"]] + [profile_epsilon(e["law"], e["law_prime"], delta) for e in other])
    at_claim = max([loss["delta_at_claim"]]
                   + [profile_delta(e["law"], e["law_prime"], epsilon) for e in other])
    return {**loss, "epsilon": eps, "delta_at_claim": at_claim, "elements": len(found),
            "exact": bool(len(found) == 1 or (math.isinf(eps) and delta <= 0)),
            "scale_follows_data": len(other)}


def exact_issue(rec: Any, rep: Any, report: Any, epsilon: float, delta: float) -> Optional[Issue]:
    """The ``exact_loss_exceeded`` violation of one pair when its release reveals every noised
    value and their exact loss exceeds the claim (module docstring), else None."""
    found = revealed(rec, rep, report)
    if found is None:
        return None
    loss = loss_of(found, epsilon, delta)
    eps = loss["epsilon"]
    if not eps > epsilon * (1 + RTOL) + ATOL:
        return None
    top = max(found, key=lambda e: (_unequal(e), abs(e["a"]) if e["a"] is not None else 0.0))
    site = rec.calls[top["call"]].site
    shown = [{"coordinate": e["coordinate"], "call": e["call"], "element": e["element"],
              "distribution": e["distribution"], "D": e["D"], "D_prime": e["D_prime"],
              "scale": e["scale"], "scale_prime": e["scale_prime"],
              "law": list(e["law"]), "law_prime": list(e["law_prime"]),
              "loss": None if e["a"] is None else abs(e["a"])} for e in found[:8]]
    if any(_unequal(e) for e in found):
        each = "the exact profile of two laws whose scale follows the data"
    else:
        each = "|Δ|/b" if all(e["distribution"] == "laplace" for e in found) else "the exact profile"
    claim = f"ε = {epsilon:g}" + (f", δ = {delta:g}" if delta else "")
    value = "unbounded: no finite ε" if math.isinf(eps) else f"ε = {eps:.6g}"
    word = "exactly" if loss["exact"] else "at least"
    scale = (f"scale {top['law'][2]:.6g} on D, {top['law_prime'][2]:.6g} on D′" if _unequal(top)
             else f"scale {top['scale']:.6g}")
    msg = (f"privacy loss above the claim at {site.short()} ({rec.calls[top['call']].method}): the "
           f"release reveals {'the' if len(found) == 1 else 'each of the ' + str(len(found))} noised "
           f"value{'' if len(found) == 1 else 's'} (input {top['D']:.6g} on D, {top['D_prime']:.6g} on D′, "
           f"{scale}), so the loss on this pair is {value if math.isinf(eps) else word + ' ' + value} ({each}; exact, no "
           f"sampling) > the claimed {claim}")
    values = {"epsilon_exact": eps, "exact": loss["exact"], "epsilon_laplace": loss["laplace"],
              "mu": loss["mu"], "elements": loss["elements"], "delta_at_claim": loss["delta_at_claim"],
              "epsilon_claimed": epsilon, "delta_claimed": delta, "call": top["call"],
              "method": rec.calls[top["call"]].method, "D": top["D"], "D_prime": top["D_prime"],
              "scale": top["scale"], "scale_prime": top["scale_prime"], "revealed": shown}
    return Issue(KIND, site, msg, values)


def revealed(rec: Any, rep: Any, report: Any) -> Optional[list]:
    """The revealed noised elements of one pair, each with its call, element, output coordinate,
    inputs on D and D′, scales, the law of its coordinate on each side (``law``, ``law_prime``:
    (distribution, centre, scale)) and, where the two laws have one scale, a = |Δ|/b (Laplace)
    or Δ/σ (Gaussian); None unless the pair shows the premise of the module docstring."""
    if report.diverged or any(i.kind not in _ALLOWED for i in report.issues):
        return None
    lay_a, lay_b = getattr(rec, "revealed", None), getattr(rep, "revealed", None)
    if lay_a is None or lay_b is None or len(lay_a) != len(lay_b) or not rec.calls \
            or len(rec.calls) != len(rep.calls):
        return None
    if any((x is None) != (y is None) or (x is not None and x[:2] != y[:2])
           for x, y in zip(lay_a, lay_b)):
        return None  # the two runs reveal different draws (or one does not)
    if rec.reuses or rep.reuses or rep.divergence is not None:
        return None
    for run in (rec, rep):
        if any(ev.kind not in ("add", "scale") for ev in run.events):
            return None
    for a, b in zip(rec.calls, rep.calls):
        if a.source != "numpy" or a.method not in _METHODS or b.fresh or a.key != b.key \
                or tuple(a.shape) != tuple(b.shape):
            return None
        if any(not same(a.params.get(k), b.params.get(k))
               for k in set(a.params) | set(b.params) if k not in _MAY_MOVE):
            return None  # a parameter other than the scale and the centre follows the data
    rows = {r.index: r for r in report.rows}
    out_a, out_b = flat_output(report.output_d), flat_output(report.output_d_prime)
    if out_a is None or out_b is None or out_a.size != len(lay_a) or out_b.size != len(lay_b):
        return None
    where: dict = {}
    for j, (item, other) in enumerate(zip(lay_a, lay_b)):
        if item is None:
            continue
        c, e, m = item
        m2 = other[2]
        if m == 0 or m2 == 0 or not (math.isfinite(m) and math.isfinite(m2)) or c >= len(rec.calls):
            continue
        where.setdefault((c, e), (j, m, m2))
    found = []
    for call, twin in zip(rec.calls, rep.calls):
        row = rows.get(call.index)
        if row is None or row.observed not in ("arithmetic", "argument"):
            return None
        io = _inputs(row, call.size)
        if io is None:
            return None
        ia, ib = io
        scale, scale2 = _scale_of(call), _scale_of(twin)
        raw, loc = np.asarray(call.value, dtype=float).reshape(-1), _loc_of(call)
        dist = "laplace" if call.method == "laplace" else "gaussian"
        for e in range(call.size):
            if (call.index, e) not in where:
                return None  # noise that is not revealed: what the code did with it is unseen
            j, m, m2 = where[(call.index, e)]
            s, s2 = float(scale[e]), float(scale2[e])
            if not all(math.isfinite(v) for v in (s, s2, ia[e], ib[e])) or not (s > 0 and s2 > 0):
                return None
            # the replay answers D′ with D's noised value y = draw − centre + input, so the
            # coordinate is m·y on D and m′·y on D′
            y = raw[e] - loc[e] + ia[e]
            for out, mm in ((out_a, m), (out_b, m2)):
                expected = mm * y
                size = abs(out[j]) + abs(mm) * (abs(raw[e]) + abs(loc[e]) + abs(ia[e]))
                if not abs(out[j] - expected) <= _MATCH * size + 1e-300:
                    return None  # the coordinate is not the noised value (rearranged, overwritten)
            law = (dist, float(m * ia[e]), float(abs(m) * s))
            law2 = (dist, float(m2 * ib[e]), float(abs(m2) * s2))
            one = m == m2 and s == s2
            a = (float(ib[e] - ia[e]) / s if one else (law2[1] - law[1]) / law[2])
            item = {"call": call.index, "element": e, "coordinate": j, "distribution": dist,
                    "D": float(ia[e]), "D_prime": float(ib[e]), "scale": s, "scale_prime": s2,
                    "law": law, "law_prime": law2, "a": abs(a) if dist == "laplace" else a}
            found.append(item)
    return found or None
