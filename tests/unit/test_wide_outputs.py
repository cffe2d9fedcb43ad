"""Wide outputs (vectors of thousands of coordinates) are sampled within bounded memory: the
sampler probes the output width once (outside the budget, on a seed of its own) and sizes its
batches by bytes; scoring samples drawn ahead are capped in bytes, the rest drawn when scored
(the same outputs, so the same audit)."""

import numpy as np
import pytest

import dpaudit
from dpaudit.execution.base import BATCH_SIZE, InProcessExecutor
from dpaudit.outputs import OutputEncoder
from dpaudit.auditing import sampled as engine
from dpaudit.auditing import sampler as S


def _wide(width):
    def mech(data, rng, size=None):
        n = 1 if size is None else size
        y = np.sum(data) + rng.laplace(scale=4.0, size=(n, width))
        return y if size is not None else y[0]
    return mech


def _sampler(width):
    spec = dpaudit.MechanismSpec.from_function(_wide(width), epsilon=0.5, neighbours="add-remove",
                                               domain=(0, 1), size=3)
    return S.Sampler(spec, InProcessExecutor(), OutputEncoder(), 10**6)


def test_the_width_probe_sizes_batches_and_charges_nothing():
    narrow, wide = _sampler(20), _sampler(2000)
    assert narrow.probe_width(np.zeros(3), 1) == 20 and narrow.batch_size == BATCH_SIZE
    assert wide.probe_width(np.zeros(3), 1) == 2000
    assert wide.batch_size * 2000 * 8 <= S.BATCH_BYTES < 2 * wide.batch_size * 2000 * 8
    assert wide.rows_within(64 << 20) == (64 << 20) // 16000
    for s in (narrow, wide):  # nothing drawn on the budget, nothing coded by the audit's encoder
        assert s.used == 0 and s.encoder.schema is None


@pytest.mark.slow
def test_drawing_scoring_samples_ahead_or_when_scored_is_the_same_audit(monkeypatch):
    spec = dpaudit.MechanismSpec.from_function(_wide(6), epsilon=0.5, neighbours="add-remove",
                                               domain=(0, 1), size=3)
    runs = []
    for ahead in (engine.DRAW_AHEAD_BYTES, 0):
        monkeypatch.setattr(engine, "DRAW_AHEAD_BYTES", ahead)
        out = engine.run(spec, InProcessExecutor(), budget=200_000, confidence=0.9, seed=3)
        runs.append((out.bound.epsilon_lb, out.samples, out.candidate.pair.key))
    assert runs[0] == runs[1]
