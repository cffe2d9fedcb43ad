"""OpenDP measurements as dpaudit specs: ``target(measurement, d_in=1)``.

The claim is OpenDP's own privacy map at ``d_in``, read through the measurement's input metric
and output measure (:func:`dpaudit.adapters.common.relation_for_metric`,
:func:`~dpaudit.adapters.common.claim_for_measure`):

* input metric → relation: ``SymmetricDistance`` at d_in = 1 is one record added or removed,
  at d_in = 2 one record replaced; ``ChangeOneDistance``/``HammingDistance`` at 1 is one record
  replaced; ``AbsoluteDistance``, ``LInfDistance``, ``L1Distance`` at d are dpaudit's ``linf`` /
  ``l1`` moves scaled by d;
* output measure → claim: ``MaxDivergence`` ε = map(d_in); ``ZeroConcentratedDivergence``
  ρ = map(d_in), audited as (ε, δ) at the ``delta`` you state; ``Approximate(MaxDivergence)`` the
  map's (ε, δ); a privacy profile at ``delta``.

The record domain is the bounds of the input's atom domain (``atom_domain(bounds=(lo, hi))``),
the dataset size the domain's ``size`` when it has one. ``domain=`` states where the records
really lie: wider than the declared bounds models data that were never clamped (OpenDP trusts
its input domain and does not check membership when invoked). ``neighbours=`` audits map(d_in)
under another relation than the metric implies (a claim stated under the wrong neighbours).

Data are handed over as OpenDP expects them: a list of floats, of integers (records rounded to
the nearest integer; a per-record change keeps neighbours neighbours), of bools (x ≥ midpoint),
or one scalar. Randomness: OpenDP samples from the operating system's secure generator and
ignores dpaudit's (``library.own_randomness``); the bound stays valid, a rerun differs. k outputs
are drawn with one call of ``make_composition([m] * k)``, which invokes the same measurement k
times on the same input (independent draws of M(x)), about 4x faster than k Python calls.

The spec's function keeps the measurement and d_in (``__dpaudit_opendp__``), so that
``dpaudit check 'lib:FILE.py' --replay`` can check the stability maps of its chain
(:func:`dpaudit.stability.check_target`).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable, Optional

import numpy as np

from dpaudit.adapters.common import (LibrarySpec, claim_for_measure, make_spec, relation_for_metric,
                                     require, zcdp_epsilon)
from dpaudit.claims import Neighbours
from dpaudit.errors import InvalidArgument
from dpaudit.execution.base import check_time_limit, time_limit_in_force

__all__ = ["target", "CHUNK", "carrier_of", "input_converter"]

#: outputs drawn per composed call
CHUNK = 1_000
#: under an in-process time limit, the seconds a chunk of composed calls should take at most
LIMITED_CHUNK_SECONDS = 0.25


def carrier_of(atom: Any) -> str:
    return str(getattr(atom, "carrier_type", "f64"))


def input_converter(domain: Any, relation: Neighbours, scale: float) -> tuple[Callable, Any, Optional[int]]:
    """(data → OpenDP input, the record domain (lo, hi) declared, the declared size or None)."""
    vector = hasattr(domain, "element_domain")
    atom = domain.element_domain if vector else domain
    kind = carrier_of(atom)
    try:
        bounds = None if kind == "bool" else atom.bounds
    except Exception:  # an atom type without bounds
        bounds = None
    dom = (float(bounds[0]) / scale, float(bounds[1]) / scale) if bounds else None
    size = getattr(domain, "size", None) if vector else 1
    if kind == "bool":
        mid = 0.5 if dom is None else (dom[0] + dom[1]) / 2

        def to_bool(x: np.ndarray) -> Any:
            vals = [bool(v >= mid) for v in x]
            return vals if vector else vals[0]

        return to_bool, dom or (0.0, 1.0), size
    if kind.startswith(("i", "u")):
        if relation in (Neighbours.LINF, Neighbours.L1) and scale != int(scale):
            raise InvalidArgument(f"integer input {domain} needs an integer d_in, got {scale!r}")
        # ⌊x⌋ keeps |⌊x⌋ − ⌊x'⌋| ≤ 1 for |x − x'| ≤ 1 (linf); rint for whole records
        rnd = np.floor if relation is Neighbours.LINF else np.rint
        if relation is Neighbours.L1:
            raise InvalidArgument(f"integer vectors under L1Distance are not supported ({domain}): "
                                  "rounding would not keep the ℓ1 move within d_in")

        def to_int(x: np.ndarray) -> Any:
            vals = (rnd(x) * scale).astype(np.int64).tolist()
            return vals if vector else vals[0]

        return to_int, dom or ((0.0, 2.0) if relation is Neighbours.LINF else (0.0, 1.0)), size

    if not kind.startswith("f"):  # String records, tuples, …: dpaudit's records are numbers
        raise InvalidArgument(f"input records of type {kind} ({domain}) are not supported: dpaudit "
                              "makes numeric datasets (bool, integer or float records): build the "
                              "measurement on integer codes, e.g. categories [0, 1, 2] for "
                              "['a', 'b', 'c']")

    def to_float(x: np.ndarray) -> Any:
        vals = (x * scale).tolist()
        return vals if vector else vals[0]

    return to_float, dom or (0.0, 1.0), size


def _plain(v: Any, keys: Optional[tuple] = None) -> Any:
    """An output as dpaudit reads it: a list as a tuple; a Polars release (``OnceFrame``,
    ``DataFrame``) collected and read by :func:`frame_values`."""
    if isinstance(v, list):
        return tuple(v)
    if hasattr(v, "collect") and type(v).__name__ in ("OnceFrame", "LazyFrame"):
        v = v.collect()
    if type(v).__name__ == "DataFrame" and hasattr(v, "rows"):
        return frame_values(v, keys)
    return v


def frame_values(df: Any, keys: Optional[tuple] = None) -> Any:
    """A released Polars frame as plain values. Without ``keys``: one row as the tuple of its
    values (a single value as itself), several rows as a tuple of row tuples. With ``keys`` (the
    group columns of a ``group_by(...).agg(...)``): a dict ``{key: values}`` whose keys are the
    released partitions; when the partitions are selected privately their set varies from call to
    call, and dpaudit reads the dict as a released-key set with its values."""
    if not keys:
        if df.height == 1:
            row = df.row(0)
            return row[0] if len(row) == 1 else tuple(row)
        return tuple(tuple(r) for r in df.rows())
    names = list(df.columns)
    at = [names.index(k) for k in keys]
    rest = [i for i in range(len(names)) if i not in at]
    out = {}
    for r in df.rows():
        k = tuple(r[i] for i in at)
        v = tuple(r[i] for i in rest)
        out[k[0] if len(k) == 1 else k] = v[0] if len(v) == 1 else v
    return out


def _batch(measurement: Any, convert: Callable, keys: Optional[tuple] = None) -> Callable:
    """``f(data, rng, size=k)``: k independent draws of the measurement on ``data``."""
    import opendp.prelude as dp

    composed: dict[int, Any] = {}

    def draw(x: Any, k: int, limited: bool) -> list:
        if "frames" not in composed:
            # a Polars release (OnceFrame) from make_composition segfaults OpenDP 0.16 when
            # collected (benchmarks/results/opendp_sweep_drafts/): frames are drawn one call at a time
            composed["frames"] = hasattr(measurement(x), "collect")
        if composed["frames"] or (limited and k == 1):
            return _calls(x, k, limited)
        if k not in composed:
            try:
                composed[k] = dp.c.make_composition([measurement] * k)
            except Exception:  # a measure without composition: call it k times
                composed[k] = None
        m = composed[k]
        return list(m(x)) if m is not None else _calls(x, k, limited)

    def _calls(x: Any, k: int, limited: bool) -> list:
        out = []
        for _ in range(k):
            if limited:
                check_time_limit()
            out.append(measurement(x))
        return out

    def mechanism(data, rng, size=None):
        x = convert(np.asarray(data, dtype=float))
        if size is None:
            return _plain(measurement(x), keys)
        # under an in-process time limit (dpaudit.execution.base.time_limit) the limit is checked
        # between chunks, and the chunks start at one call and grow 4-fold while they take less
        # than LIMITED_CHUNK_SECONDS / 4 (shrinking when one took longer): a slow measurement is
        # cut within about one call, a fast one still composed 1,000 at a time. OpenDP draws
        # from its own generator: the chunking changes no stream of dpaudit's
        limited = time_limit_in_force() is not None
        out: list = []
        chunk = 1 if limited else CHUNK
        while len(out) < size:
            k = min(chunk, size - len(out))
            if limited:
                check_time_limit(data)
            started = time.monotonic()
            out += draw(x, k, limited)
            if limited:
                took = time.monotonic() - started
                if took < LIMITED_CHUNK_SECONDS / 4:
                    chunk = min(CHUNK, 4 * k)
                elif took > LIMITED_CHUNK_SECONDS:
                    chunk = max(1, k // 4)
        return [_plain(v, keys) for v in out]

    return mechanism


#: the δ of the placeholder point claim of a ρ-zCDP measurement stated as its curve (never audited)
CURVE_PLACEHOLDER_DELTA = 1e-6


def target(measurement: Any, *, d_in: Any = 1, delta: Optional[float] = None, size: Optional[int] = None,
           domain: Any = None, neighbours: Any = None, name: Optional[str] = None,
           convert: Optional[Callable] = None, keys: Optional[tuple] = None) -> LibrarySpec:
    """An OpenDP ``Measurement`` with its own claim, map(d_in), as a dpaudit spec.

    ``delta`` is the δ at which a ρ-zCDP or profile claim is audited as one (ε, δ) point; without
    it a ρ-zCDP measurement states its claim as its curve (``library["curve"]``), which
    :func:`dpaudit.curve_audit` audits over every ε and :func:`dpaudit.audit` refuses; ``size`` the number of
    records (default: the domain's size, else 10); ``domain`` where records lie (default: the atom
    bounds); ``neighbours`` audits the claim under another relation (a misuse to catch);
    ``convert`` turns dpaudit's records (a 1-D float array) into the measurement's input where
    the input domain is not a vector or an atom (a Polars ``LazyFrame``), and then ``domain`` and
    ``size`` say where the records lie and how many there are (default [0, 1] and 10); ``keys``
    names the group columns of a released Polars frame (:func:`frame_values`).
    """
    dp = require("opendp")
    if not isinstance(measurement, getattr(dp, "Measurement", ())):
        raise InvalidArgument.bad("measurement", measurement, "an opendp Measurement")
    relation, scale = relation_for_metric(measurement.input_metric, d_in)
    distance = measurement.map(d_in)
    curve = None
    if delta is None and "ZeroConcentrated" in str(measurement.output_measure):
        # ρ-zCDP with no δ to choose: the claim is its curve (dpaudit.curve_audit); the point
        # claim below is a placeholder that dpaudit.audit refuses to audit (LibrarySpec.curve)
        curve = {"rho": float(distance)}
        epsilon, dlt = zcdp_epsilon(float(distance), CURVE_PLACEHOLDER_DELTA), CURVE_PLACEHOLDER_DELTA
        text = f"ρ-zCDP, ρ = {float(distance)!r} ({measurement.output_measure}), stated as its curve"
    else:
        epsilon, dlt, text = claim_for_measure(measurement.output_measure, distance, delta)
    if convert is None:
        convert, dom, declared = input_converter(measurement.input_domain, relation, scale)
    else:
        dom, declared = (0.0, 1.0), None
    if relation in (Neighbours.LINF, Neighbours.L1) and not hasattr(measurement.input_domain, "element_domain"):
        declared = 1
    if declared is not None and size is not None and int(size) != int(declared):
        raise InvalidArgument(f"size={size} but the measurement's input domain holds {declared} records")
    n = int(declared) if declared is not None else (10 if size is None else size)
    if declared is not None and relation is Neighbours.ADD_REMOVE:
        raise InvalidArgument(f"the input domain has a fixed size {declared}: no two datasets in it "
                              f"are at symmetric distance 1; use d_in=2 (one record replaced)")
    chosen = relation if neighbours is None else neighbours
    label = name or f"{measurement.input_metric} >> {measurement.output_measure} at d_in={d_in}"
    func = _batch(measurement, convert, tuple(keys) if keys else None)
    # the measurement itself, for the stability check (dpaudit.stability.check_target: the
    # stability maps of its chain's transformations, checked on their outputs)
    func.__dpaudit_opendp__ = {"measurement": measurement, "d_in": d_in, "delta": delta}  # type: ignore[attr-defined]
    spec = make_spec("opendp", func, label=label, epsilon=epsilon, delta=dlt,
                     neighbours=chosen, domain=domain if domain is not None else dom, size=n,
                     claim_text=f"{text} at d_in = {d_in!r} under {measurement.input_metric}",
                     notion=relation.value, own_randomness=True)
    if curve is not None:
        spec = replace(spec, library={**spec.library, "curve": curve})
    return spec
