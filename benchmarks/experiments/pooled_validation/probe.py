"""Samples to refute under four look designs, side by side (see README.md in this folder).

Run from a worktree where ``pooled_validation.patch`` is applied (``run.sh`` makes one):
the designs are (schedule, pooling) = (ratio 4 at α/10 per look: the shipped one, off),
(ratio 4, on), (ratio 2 at 0.07·α per look, off), (ratio 2, on). Point rows of
``benchmarks/oracle_gap.py`` (its mechanisms, claims, seeds 0-4, default budget, 95%,
float="off"); the sample counts are deterministic for a seed, so CPU load does not change them.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

TREE = Path(sys.argv[1]).resolve()
sys.path[:0] = [str(TREE), str(TREE / "benchmarks")]

import dpaudit  # noqa: E402
import dpaudit.auditing.looks as looks  # noqa: E402
import dpaudit.auditing.sampled as sampled  # noqa: E402
import dpaudit.auditing.schedule as sched  # noqa: E402
import oracle_gap as og  # noqa: E402
from _record import finish, machine  # noqa: E402

assert dpaudit.__file__.startswith(str(TREE)), dpaudit.__file__
RATIO2 = (1 / 800, 1 / 400, 1 / 200, 1 / 100, 1 / 50, 1 / 25, 2 / 25)
DESIGNS = {"ratio4": (sched.LOOK_FRACTIONS, sched.SPEND), "ratio2": (RATIO2, 0.07)}
ROWS = [(f, e) for f in ("laplace", "randomized_response", "gaussian_dp", "histogram")
        for e in (0.05, 0.10, 0.25)]
_run, _schedule = sampled.run, sched.schedule


def use(design: str, pooled: bool) -> None:
    fractions, spend = DESIGNS[design]
    looks.schedule = lambda b, c, m=sched.MIN_LOOK: _schedule(b, c, m, fractions, spend)
    sampled.run = _run if pooled else (lambda *a, carried=None, **k: _run(*a, **k))


def main() -> None:
    started = machine()
    out = {"benchmark": "pooled_validation", "machine": started, "rows": []}
    for fam, err in ROWS:
        f = og.family(fam, err)
        row = {"family": fam, "scale_error": err}
        for design in DESIGNS:
            for pooled in (False, True):
                use(design, pooled)
                t0, to = time.process_time(), []
                for seed in og.SEEDS:
                    r = dpaudit.audit(f["mech"], confidence=og.CONFIDENCE, seed=seed, float="off")
                    n, _ = og.samples_to_refute_point(r, f["claim"])
                    to.append(float("inf") if n is None else n)
                key = f"{design}{'_pooled' if pooled else ''}"
                row[key] = statistics.median(to)
                row[key + "_cpu_s"] = round(time.process_time() - t0, 1)
        out["rows"].append(row)
        print(f"{fam:<20} {err:4.2f}  " + "  ".join(
            f"{k} {row[k]:>9,.0f}" for k in row if k not in ("family", "scale_error")
            and not k.endswith("cpu_s")), flush=True)
    out["machine"] = finish(started)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
