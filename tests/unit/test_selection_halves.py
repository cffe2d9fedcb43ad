"""Selection one half at a time: the rows of ``Sampler.draw_pair_rows`` are those of ``draw_pair``,
and ``choose_event_halves`` on a sampler's halves (held, or drawn again) makes the same choice as
``choose_event`` on the whole sample; re-drawn halves are charged nothing."""

import numpy as np
import pytest

import dpaudit
from dpaudit.estimators.selection import choose_event, choose_event_halves
from dpaudit.execution.base import InProcessExecutor
from dpaudit.neighbours.pair import Pair
from dpaudit.outputs import OutputEncoder
from dpaudit.auditing import sampler as S


def _vector(data, rng, size=None):
    n = 1 if size is None else size
    y = data[0] + rng.laplace(scale=2.0, size=(n, 6))
    y[:, 0] = np.round(y[:, 0])  # a coordinate with atoms
    return y if size is not None else y[0]


def _sampler(budget=10**7):
    spec = dpaudit.MechanismSpec.from_function(_vector, epsilon=0.5, neighbours="linf",
                                               domain=(-2, 2), size=1)
    return S.Sampler(spec, InProcessExecutor(), OutputEncoder(), budget)


PAIR = Pair(np.array([0.0]), np.array([1.0]))


@pytest.mark.parametrize("start,stop", [(0, 0), (0, 7), (3, 4), (1000, 2500), (2048, 4096), (0, 5001)])
def test_rows_are_those_of_the_whole_draw(start, stop):
    seed = np.random.SeedSequence(7)
    s = _sampler()
    s.batch_size = 1000
    yd, yp = s.draw_pair(PAIR, seed, 5001)
    used = s.used
    rd, rp = s.draw_pair_rows(PAIR, seed, 5001, start, stop)
    np.testing.assert_array_equal(rd, yd[start:stop])
    np.testing.assert_array_equal(rp, yp[start:stop])
    assert s.used - used == 2 * (stop - start)
    s.draw_pair_rows(PAIR, seed, 5001, start, stop, again=True)
    assert s.used - used == 2 * (stop - start)


@pytest.mark.slow
@pytest.mark.parametrize("hold", [0, 1 << 30])
def test_halves_choose_what_the_whole_sample_chooses(monkeypatch, hold):
    monkeypatch.setattr(S, "HOLD_BYTES", hold)
    seed, n = np.random.SeedSequence(11), 40_001
    whole = _sampler()
    yd, yp = whole.draw_pair(PAIR, seed, n)
    kw = dict(n_val=1e5, alpha=0.05, paired=True, folds=2)
    a = choose_event(yd, yp, whole.encoder.schema, honest=True, **kw)
    s = _sampler()
    s.draw_pair(PAIR, seed, 10)  # the encoder learns the schema
    used = s.used
    b = choose_event_halves(s.halves(PAIR, seed, n), s.encoder.schema, **kw)
    assert s.used - used == 2 * n  # the second look at half 0, when drawn again, is free
    assert (a.projected, a.numerator, a.method, a.split) == (b.projected, b.numerator, b.method, b.split)
    assert a.event.text() == b.event.text()
    np.testing.assert_array_equal(a.event.contains(yd), b.event.contains(yd))


@pytest.mark.parametrize("d", [3, 10])
def test_logistic_fit_on_distinct_rows_matches_the_row_by_row_fit(monkeypatch, d):
    # the same loss summed in another order: weights equal to the optimiser's tolerance
    from dpaudit.estimators import logistic as L

    r = np.random.default_rng(d)
    yd = (r.random((30_000, d)) < 0.35).astype(np.int8)
    yp = (r.random((30_000, d)) < 0.30).astype(np.int8)
    yd[:, -1] = np.where(r.random(30_000) < 0.1, -1, yd[:, -1])  # a third code in one column
    grouped = L.fit_logistic(yd, yp)
    monkeypatch.setattr(L, "REPEATS", 10**9)
    rowwise = L.fit_logistic(yd, yp)
    np.testing.assert_allclose(grouped.weights, rowwise.weights, rtol=0, atol=1e-7)
    assert abs(grouped.bias - rowwise.bias) < 1e-7
    np.testing.assert_allclose(grouped(yd), rowwise(yd), rtol=0, atol=1e-6)


@pytest.mark.parametrize("hold", [0, 1 << 30])
@pytest.mark.parametrize("n,order", [(5001, (0, 1, 0)), (4000, (0, 1, 0)), (5001, (1, 0, 1)), (3, (0, 1))])
def test_halves_are_the_rows_of_draw_pair_each_batch_charged_once(monkeypatch, hold, n, order):
    monkeypatch.setattr(S, "HOLD_BYTES", hold)
    seed = np.random.SeedSequence(5)
    s = _sampler()
    s.batch_size = 1000
    yd, yp = s.draw_pair(PAIR, seed, n)
    used = s.used
    get = s.halves(PAIR, seed, n)
    h = n // 2
    run, tasks = s.executor.run, []
    monkeypatch.setattr(s.executor, "run", lambda spec, group: (tasks.extend(group), run(spec, group))[1])
    for k, i in enumerate(order):
        if k == 2 and order[0] == 0:  # halves 0 then 1: every batch of the plan drawn once
            assert len(tasks) == 2 * -(-n // 1000)
        rd, rp = get(i)
        rows = slice(0, h) if i == 0 else slice(h, n)
        np.testing.assert_array_equal(rd, yd[rows])
        np.testing.assert_array_equal(rp, yp[rows])
    assert s.used - used == 2 * n
