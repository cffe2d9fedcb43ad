"""The time probe before a sampled audit (dpaudit/auditing/estimate.py): a first probe that paid
a fresh sandbox child's start is made once more, warm, so a fast mechanism is not estimated at
hours (a child restarted after the replay stage found a hang was timed at 0.144 s a call).
Deterministic: a fake executor whose first run takes 0.2 s and the others nothing."""

import time

import dpaudit
from dpaudit.auditing.estimate import probe_estimate
from dpaudit.execution.base import InProcessExecutor
from dpaudit.spec import MechanismSpec


class _ColdStart:
    """Runs nothing; its first run takes ``cold`` seconds (a child booting), the others none."""

    def __init__(self, cold: float) -> None:
        self.cold, self.runs = cold, 0

    def run(self, spec, tasks):
        self.runs += 1
        if self.runs == 1:
            time.sleep(self.cold)
        return [[0.0] * t.n for t in tasks]


def _spec():
    return MechanismSpec(func=lambda d, r: 0.0, claim=dpaudit.PureDP(1.0), size=10)


def test_a_cold_first_probe_is_not_the_one_timed():
    ex = _ColdStart(0.2)
    info = probe_estimate(_spec(), ex, seed=1, budget=400_000, progress=None)
    assert ex.runs >= 2 and info["seconds_per_call"] < 0.05


def test_a_slow_mechanism_is_still_timed_slow():
    class Slow(_ColdStart):
        def run(self, spec, tasks):
            time.sleep(0.1)
            return super().run(spec, tasks)

    ex = Slow(0.0)
    info = probe_estimate(_spec(), ex, seed=1, budget=400_000, progress=None)
    assert ex.runs == 2 and info["seconds_per_call"] >= 0.1


def test_a_mechanism_that_fails_in_the_probe_is_not_called_again():
    """The probe's failure is the audit's ERROR, named with its dataset: no rerun check, no
    width probe, no look calls the mechanism to fail again (each failure of a hanging mechanism
    cost a per-call limit and a child's restart)."""
    calls = []

    def fails(data, rng):
        calls.append(len(data))
        raise ValueError("boom")

    r = dpaudit.audit(fails, epsilon=1.0, size=4, seed=3, samples=20_000,
                      executor=InProcessExecutor())  # calls counted in this process
    assert r.verdict is dpaudit.Verdict.ERROR and r.samples == 0
    assert r.error == "mechanism raised ValueError: boom on dataset [0.5, 0.5, 0.5, 0.5]", r.error
    assert calls == [4]
    assert r.to_record()["findings"]["logic"]["verdict"] == "error"
