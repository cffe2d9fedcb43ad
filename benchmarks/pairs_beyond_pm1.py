"""The level search's effect on the suites: the same rows with it on and off, side by side.

"off" is the auditor without the base-level patterns (``structured_pairs(..., levels=False)``)
and without the level search (``LEVEL_SHARE = 0``: the hypothesis search and the refinement get
its share back), i.e. the ``linf`` / ``l1`` pair search of 0/±1 patterns around the midpoint and
the domain's ends; "on" is the default. Both run the same code otherwise, in fresh processes
forked from this one (so the switch reaches every row), with the suite's own seed.

Each invocation adds one run to ``results/pairs_beyond_pm1.json`` (keyed by suite, switch and
samples), with the machine, date and load average, since the machine is shared::

    nice python benchmarks/pairs_beyond_pm1.py violation on --quick --only SVT6
    nice python benchmarks/pairs_beyond_pm1.py structured off --only SVT4-c1 --jobs 2
    nice python benchmarks/pairs_beyond_pm1.py threshold on     # the seeded threshold demo
"""

from __future__ import annotations

import functools
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _record import RESULTS, finish, machine

OUT = RESULTS / "pairs_beyond_pm1.json"


def _switch(on: bool) -> None:
    import dpaudit.auditing.sampled as engine
    from dpaudit.neighbours.patterns import structured_pairs

    if not on:
        engine.LEVEL_SHARE = 0.0
        engine.structured_pairs = functools.partial(structured_pairs, levels=False)


def _violation(argv: list) -> list:
    import violation_suite

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        violation_suite.main(argv + ["--out", str(out)])
        return json.loads(out.read_text())["rows"]


def _structured(argv: list) -> list:
    import structured_suite

    got: dict = {}
    structured_suite.save = lambda stem, record, lines: got.update(record)  # not its own files
    structured_suite.main(argv)
    return got["rows"]


def _threshold(argv: list) -> list:
    """out_i = [D_i + Lap(0.5) ≥ 3.3] for 3 answers under linf on [-10, 10]: exactly 6-DP, the
    threshold between the patterns' levels (tests/statistical/test_level_search_power.py)."""
    import dpaudit

    t_, b_, d_ = 3.3, 0.5, 3

    def thresholds(data, rng, size=None):
        m = 1 if size is None else size
        out = ((data + rng.laplace(scale=b_, size=(m, data.size))) >= t_).astype(np.int8)
        return out if size is not None else out[0]

    rows = []
    for samples in (1_000_000, 2_000_000):
        c0 = time.process_time()
        r = dpaudit.audit(thresholds, epsilon=1.0, neighbours="linf", domain=(-10, 10), size=d_,
                          samples=samples, confidence=0.9, seed=7, early_stop=False)
        cx = r.counterexample
        rows.append({"mechanism": "threshold-3.3-b0.5-d3", "true_epsilon": d_ / b_, "samples": samples,
                     "epsilon_lb": r.epsilon_lower_bound, "verdict": r.verdict.value,
                     "cpu_seconds": round(time.process_time() - c0, 2),
                     "pair": None if cx is None else [list(cx.dataset), list(cx.neighbour)],
                     "event": None if cx is None else cx.event.get("text")})
        print(rows[-1], flush=True)
    return rows


def main(argv: list) -> int:
    if len(argv) < 2 or argv[0] not in ("violation", "structured", "threshold") \
            or argv[1] not in ("on", "off"):
        print("usage: pairs_beyond_pm1.py violation|structured|threshold on|off [suite flags]",
              file=sys.stderr)
        return 3
    suite, on, rest = argv[0], argv[1] == "on", argv[2:]
    _switch(on)
    started = machine()
    rows = {"violation": _violation, "structured": _structured, "threshold": _threshold}[suite](rest)
    record = (json.loads(OUT.read_text()) if OUT.exists()
              else {"benchmark": "pairs_beyond_pm1", "runs": {}})
    key = f"{suite} levels={'on' if on else 'off'} {' '.join(rest)}".strip()
    record["runs"][key] = {"machine": finish(started), "rows": rows,
                           "command": "python benchmarks/pairs_beyond_pm1.py " + " ".join(argv)}
    OUT.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
