"""The fork-based executor (dpaudit/execution/fork.py): same outputs whatever the worker count."""

import numpy as np
import pytest

import dpaudit
from dpaudit.errors import InvalidArgument, MechanismError
from dpaudit.execution.fork import ForkExecutor
from dpaudit.rng import root_sequence
from dpaudit.execution.base import InProcessExecutor, plan_batches
from dpaudit.spec import MechanismSpec


@pytest.fixture(autouse=True)
def _pool_allowed(fork_pool_here):
    """Every test here is about the fork pool itself (tests/conftest.py, ``fork_pool_here``;
    it skips where there is no fork start method)."""


def _spec(f):
    return MechanismSpec.from_function(f, epsilon=1.0)


def noisy_mean(data, rng):
    return float(data.mean() + rng.laplace())


def _tasks(n=900, batch=100):
    return plan_batches([0.25, 0.75], root_sequence(7), n, batch)


def test_reproducible_whatever_the_worker_count():
    spec = _spec(noisy_mean)
    ref = InProcessExecutor().run(spec, _tasks())
    for w in (1, 2, 3):
        with ForkExecutor(w) as ex:
            assert ex.run(spec, _tasks()) == ref


def test_closures_need_no_pickling_and_pool_is_rebuilt_per_spec():
    offset = 5.0
    spec_a = _spec(lambda d, rng: offset + rng.random())
    spec_b = _spec(lambda d, rng: -offset)
    with ForkExecutor(2) as ex:
        a = ex.run(spec_a, _tasks(300))
        b = ex.run(spec_b, _tasks(300))
    assert all(x >= 5.0 for batch in a for x in batch)
    assert all(x == -5.0 for batch in b for x in batch)


def test_mechanism_failure_in_a_worker_names_the_dataset():
    def boom(data, rng):
        raise ZeroDivisionError("division by zero")

    with ForkExecutor(2) as ex, pytest.raises(MechanismError) as err:
        ex.run(_spec(boom), _tasks(300))
    assert "raised ZeroDivisionError" in str(err.value)
    assert np.array_equal(err.value.dataset, [0.25, 0.75])


def test_batch_outputs_come_back_as_arrays():
    spec = MechanismSpec.from_function(lambda d, rng, size=None: rng.normal(size=size), epsilon=1.0)
    with ForkExecutor(2) as ex:
        out = ex.run(spec, _tasks(300))
    assert isinstance(out[0], np.ndarray) and sum(len(o) for o in out) == 300


def test_invalid_worker_count():
    with pytest.raises(InvalidArgument, match="workers must be None or an integer >= 1, got 0"):
        ForkExecutor(0)


def _count_setup(n=4_000):
    from dpaudit.estimators.events import Event
    from dpaudit.estimators.scores import Identity
    from dpaudit.execution.counting import CountUnit
    from dpaudit.outputs import OutputEncoder

    encoder, event = OutputEncoder(), Event(Identity(), "above", lo=0.5)
    encoder.encode(np.zeros(1), np.zeros(1))
    a, b = plan_batches([0.0, 1.0], root_sequence(3), n, 500), plan_batches([0.0], root_sequence(3), n, 500)
    return encoder, event, [CountUnit((x, y), paired=True) for x, y in zip(a, b)]


def test_counts_in_the_workers_equal_the_counts_of_the_outputs_drawn_here():
    from dpaudit.execution.counting import count_units

    spec = MechanismSpec.from_function(lambda d, rng, size=None: d.sum() + rng.laplace(size=size), epsilon=1.0)
    encoder, event, units = _count_setup()
    here = count_units(InProcessExecutor(), spec, encoder, event, units, keep=3)
    with ForkExecutor(2) as ex:
        there = ex.count(spec, encoder, event, units, keep=3)
    assert [(c.n, c.inside, c.joint) for c in there] == [(c.n, c.inside, c.joint) for c in here]
    assert all(np.array_equal(x, y) for c, d in zip(here, there) for x, y in zip(c.kept, d.kept))
    assert sum(c.inside[0] for c in here) > 0


def test_a_failure_while_counting_in_a_worker_names_the_dataset():
    def boom(data, rng, size=None):
        raise ValueError("bad")

    encoder, event, units = _count_setup(1_000)
    with ForkExecutor(2) as ex, pytest.raises(MechanismError) as err:
        ex.count(MechanismSpec.from_function(boom, epsilon=1.0), encoder, event, units)
    assert "raised ValueError" in str(err.value)


def test_batches_made_as_consumed_are_the_planned_ones():
    """Seeds spawned in windows equal one spawn of them all (same children, same order)."""
    from dpaudit.execution import base

    at_once = root_sequence(5).spawn(2_601)
    lazily = list(base.iter_batches([1.0, 2.0], root_sequence(5), 2_600 * 7 + 3, 7))
    assert len(lazily) == 2_601 > base.SPAWN_WINDOW
    assert [t.n for t in lazily] == [7] * 2_600 + [3]
    assert all(a.spawn_key == b.seed.spawn_key and a.entropy == b.seed.entropy
               and np.array_equal(a.generate_state(4), b.seed.generate_state(4)) for a, b in zip(at_once, lazily))
    planned = plan_batches([1.0, 2.0], root_sequence(5), 2_600 * 7 + 3, 7)
    assert [(t.data, t.n, t.seed.spawn_key) for t in planned] == [(t.data, t.n, t.seed.spawn_key) for t in lazily]


def test_workers_take_default_signals_whatever_the_parent_installed():
    """``dpaudit check`` turns SIGTERM into KeyboardInterrupt in its own process; workers that
    inherited that handler printed a traceback when the pool was stopped and could be stopped
    inside the queue's lock, which hung ``close()``. Workers reset SIGTERM and ignore SIGINT."""
    import signal

    def to_interrupt(signum, frame):
        raise KeyboardInterrupt

    def dispositions(d, rng):
        return (float(signal.getsignal(signal.SIGTERM) == signal.SIG_DFL),
                float(signal.getsignal(signal.SIGINT) == signal.SIG_IGN))

    old = signal.signal(signal.SIGTERM, to_interrupt)
    try:
        with ForkExecutor(2) as ex:
            out = ex.run(_spec(dispositions), _tasks(300))
    finally:
        signal.signal(signal.SIGTERM, old)
    assert out and all(v == (1.0, 1.0) for batch in out for v in batch)


def test_a_worker_that_ends_its_process_is_an_error_not_a_hang():
    """``multiprocessing.Pool`` waits forever for a task whose worker died (``os._exit``); the
    executor names the dataset instead, and its next call runs on a fresh pool. ``sys.exit`` is
    a failure of one call like any other."""
    import os as _os

    def ends_process(d, rng):
        if d.size:
            _os._exit(3)
        return rng.random()

    def exits(d, rng):
        raise SystemExit(0)

    with ForkExecutor(2) as ex:
        with pytest.raises(MechanismError, match=r"exited without an answer \(os\._exit") as err:
            ex.run(_spec(ends_process), _tasks(300))
        assert err.value.dataset is not None
        assert len(ex.run(_spec(noisy_mean), _tasks(300))) == 3
        with pytest.raises(MechanismError, match=r"called sys\.exit\(0\)"):
            ex.run(_spec(exits), _tasks(300))


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def global_state_noise(data, rng, size=None):
    """Noise from numpy's global state, as a library without a random_state draws it."""
    return np.random.standard_normal(size)


def test_forked_workers_do_not_repeat_the_global_random_stream():
    # each worker starts from the parent's global state at the fork: without a reseed of its own
    # the 8,000 draws below held 5,000 distinct values (the workers repeated each other)
    from dpaudit.execution.base import BatchTask
    from dpaudit.execution.fork import ForkExecutor

    spec = dpaudit.MechanismSpec.from_function(global_state_noise)
    ex = ForkExecutor(workers=2)
    try:
        outs = ex.run(spec, [BatchTask((0.0,) * 10, np.random.SeedSequence(i), 1000) for i in range(8)])
    finally:
        ex.close()
    values = np.concatenate([np.asarray(o, dtype=float).ravel() for o in outs])
    assert values.size == 8000 and np.unique(values).size == 8000
