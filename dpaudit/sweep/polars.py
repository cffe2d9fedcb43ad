"""The Polars/Context API of OpenDP in the sweep: every private expression the library's ``.dp``
namespace offers (the public methods of ``opendp.extras.polars.DPExpr``, found by introspection),
in the two plans a query is written as — ``select(expr)`` and ``group_by(key).agg(dp.len(), expr)``
(the length that a private key release needs) — built with ``make_private_lazyframe`` over the
output measures of :class:`dpaudit.sweep.opendp.Descriptors` and the frame domains below, and
checked by sampling against ``map(1)`` as any measurement.

Records become a frame of two columns: ``x``, the record (f64), and ``g = 1 if x ≥ ½ else 0`` (i32),
the group key; the frame's domain states margins as the library asks for them
(``Margin(by=[], max_length=…)``, ``Margin(by=["g"], max_length=…, max_groups=2)``). A grouped
release is a dict ``{g: values}`` whose keys are the partitions released
(:func:`dpaudit.adapters.opendp.frame_values`): where the keys are selected privately they vary
from call to call and the audit reads them as a released-key set.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Iterator

import numpy as np

from dpaudit.sweep.grid import VALUES, Value, code_of, combinations, first_line
from dpaudit.sweep.result import Case, cpu_seconds

__all__ = ["expressions", "sweep_expressions", "frame_of", "PLANS"]

#: the plans a private expression is released in
PLANS = ("select", "group_by")
#: the largest frame the margins allow
MAX_LENGTH = 100


def expressions() -> Iterator[tuple[str, Callable]]:
    """``(name, method)`` of every public method of OpenDP's ``.dp`` expression namespace."""
    try:
        from opendp.extras.polars import DPExpr
    except ImportError:  # Polars is not installed: no expression to sweep
        return
    for name, fn in inspect.getmembers(DPExpr, inspect.isfunction):
        if not name.startswith("_"):
            yield name, fn


def frame_of(data: np.ndarray) -> Any:
    """dpaudit's records as the frame the plans read: ``x`` the record, ``g`` its group."""
    import polars as pl

    x = np.asarray(data, dtype=float).reshape(-1)
    return pl.LazyFrame({"x": x, "g": (x >= 0.5).astype(np.int32)},
                        schema={"x": pl.Float64, "g": pl.Int32})


FRAME_CODE = ('def frame_of(x):\n'
              '    return pl.LazyFrame({"x": [float(v) for v in x], "g": [int(v >= 0.5) for v in x]},\n'
              '                        schema={"x": pl.Float64, "g": pl.Int32})\n')


def _domain(dp: Any, plan: str) -> Value:
    base = ('dp.lazyframe_domain([dp.series_domain("x", dp.atom_domain(T="f64", nan=False)), '
            'dp.series_domain("g", dp.atom_domain(T="i32"))])')
    obj = dp.lazyframe_domain([dp.series_domain("x", dp.atom_domain(T="f64", nan=False)),
                               dp.series_domain("g", dp.atom_domain(T="i32"))])
    obj = dp.with_margin(obj, dp.polars.Margin(by=[], max_length=MAX_LENGTH))
    code = f"dp.with_margin({base}, dp.polars.Margin(by=[], max_length={MAX_LENGTH}))"
    if plan == "group_by":
        obj = dp.with_margin(obj, dp.polars.Margin(by=["g"], max_length=MAX_LENGTH, max_groups=2))
        code = f'dp.with_margin({code}, dp.polars.Margin(by=["g"], max_length={MAX_LENGTH}, max_groups=2))'
    return Value(obj, code)


def _candidates(p: inspect.Parameter) -> list[Value]:
    default = [] if p.default is inspect.Parameter.empty else [Value(p.default, code_of(p.default))]
    out = default + [v for v in VALUES.get(p.name, []) if not isinstance(v.obj, int) or isinstance(v.obj, bool)]
    seen, uniq = set(), []
    for v in out:
        if v.code not in seen:
            seen.add(v.code)
            uniq.append(v)
    return uniq


def sweep_expressions(sweeper: Any) -> Iterator[Case]:
    """The cases of every private expression, in every plan (module docstring)."""
    import polars as pl

    dp = sweeper.dp
    for name, fn in expressions():
        qual = f"opendp.extras.polars.DPExpr.{name}"
        if sweeper.only and not any(o in qual for o in sweeper.only):
            continue
        t0 = cpu_seconds()
        params = [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]
        choices = {p.name: _candidates(p) for p in params}
        missing = [k for k, v in choices.items() if not v]
        if missing:
            yield Case(qual, {}, verdict="skipped", seconds=cpu_seconds() - t0,
                       reason=f"no candidate value for parameter {missing[0]}")
            continue
        choices["plan"] = [Value(p, repr(p)) for p in PLANS]
        choices["output_measure"] = list(sweeper.desc.measures)
        choices["threshold"] = [Value(None, "None"), Value(5, "5")]
        built: dict = {}
        refusals: dict = {}
        for combo in combinations(choices, sweeper.attempts, sweeper.seed + sum(map(ord, qual))):
            kw = {k: v.obj for k, v in combo.items() if k not in ("plan", "output_measure", "threshold")}
            args = ", ".join(f"{k}={combo[k].code}" for k in kw)
            plan = combo["plan"].obj
            expr = getattr(pl.col("x").dp, name)(**kw)
            expr_code = f'pl.col("x").dp.{name}({args})'
            if plan == "select":
                query, qcode, keys = frame_of([0.0]).select(expr), f"frame_of([0.0]).select({expr_code})", None
            else:
                query = frame_of([0.0]).group_by("g").agg(dp.len(), expr)
                qcode, keys = f'frame_of([0.0]).group_by("g").agg(dp.len(), {expr_code})', ("g",)
            domain = _domain(dp, plan)
            measure = combo["output_measure"]
            threshold = combo["threshold"]
            try:
                m = dp.m.make_private_lazyframe(domain.obj, dp.symmetric_distance(), measure.obj, query,
                                                global_scale=1.0, threshold=threshold.obj)
            except Exception as exc:  # noqa: BLE001 - the library refuses the combination
                line = first_line(exc)
                refusals[line] = refusals.get(line, 0) + 1
                continue
            key = (plan, str(m.output_measure), threshold.code)
            if key not in built:
                code = (f"dp.m.make_private_lazyframe({domain.code}, dp.symmetric_distance(), {measure.code}, "
                        f"{qcode}, global_scale=1.0, threshold={threshold.code})")
                shown = {**{k: combo[k].code for k in kw}, "plan": combo["plan"].code,
                         "output_measure": measure.code, "threshold": threshold.code}
                built[key] = (m, shown, code, keys)
        if not built:
            top = max(refusals, key=refusals.get) if refusals else "nothing to try"
            yield Case(qual, {}, verdict="skipped", seconds=cpu_seconds() - t0,
                       reason=f"no plan was built; the library's most frequent refusal: {top}")
            continue
        for rank, (m, shown, code, keys) in enumerate(list(built.values())[: sweeper.cases]):
            case = Case(qual, shown, code=code, seconds=(cpu_seconds() - t0) if rank == 0 else 0.0,
                        details={"frame": "x = the record, g = 1 if x >= 0.5 else 0", "keys": keys})
            yield sweeper.check(case, m, convert=frame_of, keys=keys)
