"""The one-call (scalar, no batch form) targets of ``benchmarks/call_overhead.py``, in a file of
their own so that the sandbox child imports them by path: a trivial Python function, an OpenDP
``make_laplace`` measurement invoked once a call, and diffprivlib's ``Laplace.randomise``, each
``f(data)`` drawing its own randomness (the libraries' own generators); and two mechanisms of
about 1 ms a call (a busy wait) for the time-limit demonstration: a correct Laplace sum and one
whose noise scale is halved."""

import time

import numpy as np

import dpaudit


def trivial(data):
    return 0.5


_OPENDP = None


def opendp_laplace(data):
    global _OPENDP
    if _OPENDP is None:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        _OPENDP = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
                                    scale=1.0)
    return _OPENDP(float(data[0]))


_DIFFPRIVLIB = None


def diffprivlib_laplace(data):
    global _DIFFPRIVLIB
    if _DIFFPRIVLIB is None:
        from diffprivlib.mechanisms import Laplace

        _DIFFPRIVLIB = Laplace(epsilon=1.0, sensitivity=1.0)
    return _DIFFPRIVLIB.randomise(float(data[0]))


#: the busy wait of the 1 ms targets (seconds)
SLOW_CALL = 0.001


def _busy(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=5)
def slow_laplace(data, rng):
    """ε = 1: the sum of records in [0, 1] (sensitivity 1) plus Laplace(1)."""
    _busy(SLOW_CALL)
    return float(np.sum(data) + rng.laplace(scale=1.0))


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=5)
def slow_laplace_halved(data, rng):
    """Claims ε = 1 with Laplace(1/2): it is 2-DP, not 1-DP."""
    _busy(SLOW_CALL)
    return float(np.sum(data) + rng.laplace(scale=0.5))


# -- an OpenDP Polars query: released at each call (its plan compiled each time) or resolved once

def _polars_query(data):
    import opendp.prelude as dp
    import polars as pl

    dp.enable_features("contrib")
    frame = pl.LazyFrame({"x": [float(v) for v in data]}, schema={"x": pl.Float64})
    ctx = dp.Context.compositor(data=frame, privacy_unit=dp.unit_of(contributions=1),
                                privacy_loss=dp.loss_of(epsilon=1.0), split_evenly_over=1,
                                margins=[dp.polars.Margin(max_length=100)])
    return ctx.query().select(pl.col("x").fill_null(0.0).dp.sum((0.0, 1.0)))


def polars_release(data):
    """The slow form: a query built and released at each call (OpenDP compiles its plan)."""
    return float(_polars_query(data).release().collect().item())


_RESOLVED = None


def polars_resolved(data):
    """The fast form: the query's measurement resolved once, invoked at each call."""
    global _RESOLVED
    import polars as pl

    if _RESOLVED is None:
        _RESOLVED = _polars_query([0.0]).resolve()
    frame = pl.LazyFrame({"x": [float(v) for v in data]}, schema={"x": pl.Float64})
    return float(_RESOLVED(frame).collect().item())
