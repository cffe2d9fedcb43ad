"""Cost of wide vector outputs: CPU-seconds and peak memory of a sampled audit against the width.

The mechanism releases a noisy histogram-like vector: ``round(sum(D) + Laplace(10))`` on each of
``width`` coordinates (integers, so the float-structure events have nothing to find), claimed
ε = 1 under add-remove neighbours over [0, 1] with 10 records. Its true ε is width/10, so every
row is REFUTED; what is measured is what the audit costs:

* fitted scores of vectors longer than 64 coordinates see the 64 that differ most on their
  fitting half (``dpaudit/estimators/selection.py``), so CPU grows linearly with the width;
* the sampler probes the width once and sizes batches, scoring and race samples in bytes
  (``dpaudit/auditing/sampler.py``), so memory is bounded whatever the budget.

Each row runs in a fresh process (its own CPU-seconds, imports excluded, and its own peak RSS),
early stopping off, 95%, seed 1.

Measured before these changes on the same machine, by ad-hoc runs of the same mechanism and audit:
at commit 64524ee, width 200 on 2·10⁴ samples took 22.6 CPU-s (ε_LB 1.456) and width 1,000
173.7 CPU-s (3.359); at commit 4067dff (coordinates screened, memory not yet bounded), width 2,000
peaked at 3.6 GB on 2·10⁵ samples and 2.0 GB on 2·10⁶.

    nice python benchmarks/wide_outputs.py
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import sys
import time
from typing import Optional

import numpy as np

from _record import emit, machine, save

ROWS = [(200, 20_000), (1_000, 20_000), (2_000, 200_000), (2_000, 2_000_000)]


class Wide:
    """The module docstring's mechanism for one width (picklable)."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.__name__ = f"wide{width}"

    def __call__(self, data, rng, size=None):
        n = 1 if size is None else size
        out = np.round(np.sum(data) + rng.laplace(scale=10.0, size=(n, self.width))) + 0.0
        return out if size is not None else out[0]


def _row(args: tuple) -> dict:
    width, samples = args
    import dpaudit
    import dpaudit.auditing.sampled  # noqa: F401  (import cost is not the audit's)
    import statsmodels.stats.proportion  # noqa: F401

    cpu0, t0 = time.process_time(), time.perf_counter()
    r = dpaudit.audit(Wide(width), epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=10,
                      samples=samples, confidence=0.95, seed=1, early_stop=False)
    return {"width": width, "samples": samples, "verdict": r.verdict.value,
            "epsilon_lb": r.epsilon_lower_bound, "cpu_seconds": round(time.process_time() - cpu0, 1),
            "wall_seconds": round(time.perf_counter() - t0, 1),
            "peak_memory_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.parse_args(argv)
    started, lines, rows = machine(), [], []
    emit(lines, f"{'width':>6} {'samples':>10} {'verdict':<9} {'eps_LB':>7} {'CPU-s':>7} {'peak MB':>8}")
    for width, samples in ROWS:
        with multiprocessing.get_context("fork").Pool(1, maxtasksperchild=1) as pool:
            row = pool.apply(_row, ((width, samples),))
        rows.append(row)
        emit(lines, f"{width:>6} {samples:>10} {row['verdict']:<9} {row['epsilon_lb']:>7.3f} "
                    f"{row['cpu_seconds']:>7.1f} {row['peak_memory_mb']:>8.0f}")
    save("wide_outputs", {"machine": started, "rows": rows}, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
