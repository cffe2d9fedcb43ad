"""The Dask executor: the same numbers as every other executor, counts instead of outputs once the
event is fixed, recomputation when a worker dies, one-line errors.

Runs when ``distributed`` is installed (the ``test`` extra installs it, so CI runs these). Clusters
are small: threads in this process where the point is the numbers, two worker processes where a
worker must die.
"""

import os
import signal
import threading
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import dpaudit  # noqa: E402
from dpaudit.reproduce import RERUN_CHECK_CALLS  # noqa: E402
from dpaudit.execution.honesty import CHECKPOINT_CALLS, checkpoint_positions  # noqa: E402
from dpaudit.auditor import ESTIMATE_BATCH  # noqa: E402
from dpaudit.execution.honesty import form_samples  # noqa: E402
from dpaudit.errors import MechanismError, UsageError  # noqa: E402
from dpaudit.execution.base import InProcessExecutor, plan_batches  # noqa: E402
from dpaudit.execution.counting import CountUnit, count_units  # noqa: E402
from dpaudit.execution.dask import INSTALL_HINT, DaskExecutor  # noqa: E402
from dpaudit.execution.fork import ForkExecutor  # noqa: E402
from dpaudit.estimators.events import Event  # noqa: E402
from dpaudit.estimators.scores import Identity  # noqa: E402
from dpaudit.outputs import OutputEncoder  # noqa: E402
from dpaudit.reference.laplace import Laplace  # noqa: E402
from dpaudit.report.model import differences  # noqa: E402
from dpaudit.auditing import sampler as sampler_module  # noqa: E402
from dpaudit.auditing import estimate as estimate_module  # noqa: E402

SAMPLES = 400_000


@pytest.fixture(scope="module")
def threads2():
    with DaskExecutor.local(2, processes=False) as ex:
        yield ex


@pytest.fixture(scope="module")
def threads1():
    with DaskExecutor.local(1, processes=False) as ex:
        yield ex


def _record(spec, executor, seed=11, samples=SAMPLES):
    return dpaudit.audit(spec, samples=samples, seed=seed, executor=executor).to_record()


@pytest.mark.slow
def test_same_seed_same_record_in_process_fork_pool_and_dask_with_1_and_2_workers(threads1, threads2):
    spec = Laplace(epsilon=1.0).spec().idealised()
    base = _record(spec, InProcessExecutor())
    with ForkExecutor(2) as fork:
        others = {"fork pool": _record(spec, fork), "dask 1 worker": _record(spec, threads1),
                  "dask 2 workers": _record(spec, threads2)}
    for name, rec in others.items():  # bit for bit on one machine: no tolerance
        assert differences(base, rec, rel_tol=0.0, abs_tol=0.0) == [], name
    assert base["verdict"] == "not_refuted" and 0.9 * SAMPLES < base["samples"] <= SAMPLES


@pytest.mark.slow
def test_the_sandbox_and_dask_give_the_numbers_of_in_process_for_a_file(threads2):
    """A mechanism loaded from a file (its module travels to the workers by value)."""
    from dpaudit.execution.sandbox import SandboxExecutor
    from dpaudit.loader import load_mechanism

    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "laplace_sum.py")
    loaded = load_mechanism(path, None)
    spec = dpaudit.MechanismSpec.from_function(loaded.func, name=loaded.target)
    base = _record(spec, InProcessExecutor(), samples=200_000)
    with SandboxExecutor(path, None) as sandbox:
        boxed = _record(spec, sandbox, samples=200_000)
    assert differences(base, boxed, rel_tol=0.0, abs_tol=0.0) == []
    assert differences(base, _record(spec, threads2, samples=200_000), rel_tol=0.0, abs_tol=0.0) == []


def test_ctrl_c_cancels_the_outstanding_futures(threads2, monkeypatch):
    cancelled = []
    monkeypatch.setattr(threads2.client, "gather", lambda futures: (_ for _ in ()).throw(KeyboardInterrupt()))
    monkeypatch.setattr(threads2.client, "cancel", lambda futures: cancelled.extend(futures))
    tasks = plan_batches((0.0, 1.0), np.random.SeedSequence(2), 100)
    with pytest.raises(KeyboardInterrupt):
        threads2.run(Laplace(epsilon=1.0).spec(), tasks)
    assert len(cancelled) == 1


@pytest.mark.slow
def test_a_broken_mechanism_is_refuted_the_same_way_on_dask(threads2):
    spec = Laplace(epsilon=2.0).spec().with_claim(1.0, 0.0)  # noise for ε = 2, claimed ε = 1
    base, dask = _record(spec, InProcessExecutor(), seed=3), _record(spec, threads2, seed=3)
    assert base["verdict"] == "refuted" and differences(base, dask, rel_tol=0.0, abs_tol=0.0) == []


class Spy:
    """An executor that records how many draws came back as outputs and how many as counts."""

    def __init__(self, inner):
        self.inner, self.outputs, self.counted = inner, 0, 0
        self.batches_per_call = inner.batches_per_call

    def run(self, spec, tasks):
        self.outputs += sum(t.n for t in tasks)
        return self.inner.run(spec, tasks)

    def count(self, spec, encoder, event, units, keep=0):
        self.counted += sum(t.n for u in units for t in u.tasks)
        return self.inner.count(spec, encoder, event, units, keep)


class _Clock:
    """A clock that moves half a millisecond at each reading."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += 0.0005
        return self.now


@pytest.mark.slow
def test_validation_returns_counts_so_outputs_stay_bounded_whatever_the_budget(threads2, monkeypatch):
    """With the selection phases capped at SELECTION_BASE draws, a 10x larger budget brings back no
    more outputs: the rest is validation, counted on the workers. With early stopping each look is
    an audit of its own, so the outputs are bounded by the number of looks times the cap."""
    monkeypatch.setattr(sampler_module, "SELECTION_BASE", 100_000)
    # the timing probe's clock reads half a millisecond a probe, whatever the machine's load: so
    # the probe is one batch (at 4 workers on 2 cores it timed the calls slow enough to be
    # refined, with 20,000 more outputs in the larger audit)
    monkeypatch.setattr(estimate_module, "time", _Clock())
    spec = Laplace(epsilon=1.0).spec().idealised()  # a model over the reals (float64 is porous)
    spy_small, spy_large, spy_looks = Spy(threads2), Spy(threads2), Spy(threads2)
    dpaudit.audit(spec, samples=200_000, seed=5, executor=spy_small, early_stop=False)
    rec = dpaudit.audit(spec, samples=2_000_000, seed=5, executor=spy_large, early_stop=False).to_record()
    assert spy_large.outputs == spy_small.outputs <= 0.5 * 100_000
    assert spy_large.counted > 1_900_000 - spy_large.outputs
    # the rerun check (dpaudit.reproduce.reruns_alike) draws its batch twice outside the budget, and
    # the output-width probe (Sampler.probe_width) one output, and the check that the batch form
    # releases the one-call form's law (dpaudit.execution.honesty.forms_differ) n outputs of each,
    # and the timing probe of the estimate (dpaudit.auditor, one batch: this audit is seconds long,
    # so the probe is not refined)
    n = form_samples(2_000_000)
    extra = 2 * RERUN_CHECK_CALLS + 1 + 2 * n + ESTIMATE_BATCH
    # and the checkpoints (dpaudit.execution.honesty.Checkpoints): their calls once at the start,
    # then again at each position of the run reached
    reached = sum(p <= rec["samples"] for p in checkpoint_positions(5, 2_000_000))
    extra += (1 + reached) * CHECKPOINT_CALLS
    assert rec["samples"] + extra == spy_large.outputs + spy_large.counted
    assert rec["verdict"] == "not_refuted"
    looks = dpaudit.audit(spec, samples=4_000_000, seed=5, executor=spy_looks).to_record()
    n_looks = 1 + len(looks["details"]["early_stop"]["budgets"])
    assert spy_looks.outputs <= n_looks * 0.5 * 100_000 < 0.1 * looks["samples"]


def _units(pair_seed=1, n=240_000, batch=20_000):
    d, dp = (0.0, 1.0, 1.0), (0.0, 1.0)
    ss = np.random.SeedSequence(pair_seed)
    a, b = plan_batches(d, ss, n, batch), plan_batches(dp, np.random.SeedSequence(pair_seed), n, batch)
    return [CountUnit((x, y), paired=True) for x, y in zip(a, b)]


def slow_sum(data, rng, size=None):
    """Laplace noise on the sum, slowly (so a worker can be killed mid-run)."""
    time.sleep(0.15)
    return data.sum() + rng.laplace(size=size)


@pytest.mark.slow
def test_a_killed_worker_has_its_batches_recomputed_with_the_same_seeds():
    spec = dpaudit.MechanismSpec.from_function(slow_sum, epsilon=1.0)
    encoder, event = OutputEncoder(), Event(Identity(), "above", lo=2.0)
    encoder.encode(np.zeros(1), np.zeros(1))
    units = _units()
    expected = count_units(InProcessExecutor(), spec, encoder, event, units)
    with DaskExecutor.local(2, processes=True, task_samples=20_000) as ex:
        pids = ex.client.run(os.getpid)
        box = {}
        worker = threading.Thread(target=lambda: box.setdefault("out", ex.count(spec, encoder, event, units)))
        worker.start()
        deadline = time.monotonic() + 60
        while not any(ex.client.processing().values()) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        victim = sorted(pids.values())[0]
        os.kill(victim, signal.SIGKILL)  # mid-run: its tasks are lost and run again elsewhere
        worker.join(120)
        assert not worker.is_alive()
        assert victim not in ex.client.run(os.getpid).values()
    assert box["out"] == expected
    assert sum(c.inside[0] for c in expected) > 0


def test_mechanism_errors_on_a_worker_are_mechanism_errors_here(threads2):
    def broken(data, rng, size=None):
        raise ZeroDivisionError("boom")

    spec = dpaudit.MechanismSpec.from_function(broken, epsilon=1.0)
    tasks = plan_batches((0.0, 1.0), np.random.SeedSequence(1), 10)
    with pytest.raises(MechanismError) as err:
        threads2.run(spec, tasks)
    with pytest.raises(MechanismError) as here:
        InProcessExecutor().run(spec, tasks)
    assert err.value.cause == here.value.cause and "ZeroDivisionError" in err.value.cause
    rec = dpaudit.audit(spec, samples=10_000, seed=1, executor=threads2).to_record()
    assert rec["verdict"] == "error" and "ZeroDivisionError" in rec["error"]


@pytest.mark.slow
def test_an_unreachable_scheduler_is_one_line():
    with pytest.raises(UsageError) as err:
        DaskExecutor.connect("tcp://127.0.0.1:9", timeout=1)
    assert str(err.value).startswith("cannot reach the Dask scheduler at tcp://127.0.0.1:9")
    assert "\n" not in str(err.value)


def test_without_distributed_the_error_says_how_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(UsageError, match=r"pip install 'dpaudit\[dask\]'") as err:
        DaskExecutor.local(1)
    assert str(err.value) == INSTALL_HINT
