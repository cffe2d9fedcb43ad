"""What a replay audit costs on a mechanism too slow to sample: 1 s per call.

The target: a replay audit (search included) costs at most 200 calls of the mechanism at
the default budget, and a mechanism costing 1 s per call gets its replay verdict in under 5
minutes. Two mechanisms, each sleeping 1 s per call (a stand-in for a training step or an OpenDP
pipeline: wall time, not CPU), are audited with ``dpaudit check FILE --replay`` as a user runs
it (in the sandbox, default budget, a subprocess):

* ``slow_correct``: a clipped sum with Laplace noise of scale 1/ε: no finding, so the search
  spends the whole budget;
* ``slow_bug``: the same sum doubled before a ``@dpaudit.primitive`` that declares sensitivity 1:
  a violation, found by the structured patterns.

Beside each, what the default sampled audit would need: its default budget (4·10⁵ calls without a
batch form) at 1 s per call, in days. Recorded: wall seconds, the CPU seconds of dpaudit's
processes (the children's rusage: parent and sandbox child), calls, verdict.

Run::

    python benchmarks/replay_cost.py     # about 4 minutes; writes results/replay_cost.{json,txt}
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _record import ROOT, children_cpu_seconds, emit, machine, save

SECONDS_PER_CALL = 1.0
#: the targets: at most 200 calls, and a verdict in under 5 minutes at 1 s a call
MAX_CALLS = 200
MAX_SECONDS = 300.0

COMMON = '''
import time
import numpy as np
import dpaudit

@dpaudit.primitive(sensitivity=1.0, epsilon=1.0)
def laplace(value, rng):
    return value + rng.laplace(scale=1.0)
'''

FILES = {
    "slow_correct": COMMON + '''
@dpaudit.mechanism(epsilon=1.0, domain=(0, 1), size=10)
def mechanism(data, rng):
    time.sleep({s})                       # the cost of one call
    return laplace(float(np.clip(data, 0, 1).sum()), rng)
''',
    "slow_bug": COMMON + '''
@dpaudit.mechanism(epsilon=1.0, domain=(0, 1), size=10)
def mechanism(data, rng):
    time.sleep({s})
    return laplace(2.0 * float(np.clip(data, 0, 1).sum()), rng)   # sensitivity 2, declared 1
''',
}


def _run(name: str, folder: Path) -> dict:
    path = folder / f"{name}.py"
    path.write_text(FILES[name].replace("{s}", repr(SECONDS_PER_CALL)), encoding="utf-8")
    out = folder / f"{name}.json"
    cmd = [sys.executable, "-m", "dpaudit", "check", str(path), "--replay", "--json", str(out), "--quiet"]
    cpu0, t0 = children_cpu_seconds(), time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    wall, cpu = time.perf_counter() - t0, children_cpu_seconds() - cpu0
    rec = json.loads(out.read_text())["results"][0]
    kinds = [f["kind"] for f in rec.get("findings") or []]
    return {"file": name, "exit": proc.returncode, "verdict": rec["verdict"], "findings": kinds,
            "calls": rec.get("calls"), "pairs": rec.get("pairs"), "budget": rec.get("budget"),
            "wall_s": round(wall, 1), "cpu_s": round(cpu, 2), "ran_in": (rec.get("details") or {}).get("ran_in"),
            "sampled_default_calls": 400_000,
            "sampled_days_at_1s": round(400_000 * SECONDS_PER_CALL / 86_400, 1)}


def main() -> int:
    record = {"machine": machine(), "seconds_per_call": SECONDS_PER_CALL, "rows": []}
    lines: list[str] = []
    emit(lines, f"{'file':14s} {'verdict':12s} {'findings':28s} {'calls':>5s} {'wall s':>7s} "
                f"{'cpu s':>6s}  sampled audit at its default budget")
    with tempfile.TemporaryDirectory() as tmp:
        for name in FILES:
            row = _run(name, Path(tmp))
            record["rows"].append(row)
            emit(lines, f"{name:14s} {row['verdict']:12s} {','.join(row['findings'])[:28]:28s} "
                        f"{row['calls']:5d} {row['wall_s']:7.1f} {row['cpu_s']:6.2f}  "
                        f"{row['sampled_default_calls']:,} calls = {row['sampled_days_at_1s']} days")
    targets = {"max_calls": max(r["calls"] for r in record["rows"]),
               "within_200_calls": all(r["calls"] <= MAX_CALLS for r in record["rows"]),
               "max_wall_s": max(r["wall_s"] for r in record["rows"]),
               "under_5_minutes": all(r["wall_s"] < MAX_SECONDS for r in record["rows"]),
               "verdicts_right": [r["verdict"] for r in record["rows"]] == ["not_refuted", "refuted"]}
    record["targets"] = targets
    emit(lines)
    emit(lines, "targets: " + json.dumps(targets))
    save("replay_cost", record, lines)
    return 0 if targets["within_200_calls"] and targets["under_5_minutes"] and targets["verdicts_right"] else 1


if __name__ == "__main__":
    sys.exit(main())
