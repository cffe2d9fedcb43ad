"""What the float-structure events cost: the violation suite with them off and on, side by side.

Float-structure events (``dpaudit/estimators/floats.py``) join the candidate families of every
real-valued output by default, so each audit scores more candidates in its selection stage. Their
cost must stay small: the violation suite's wall time may grow by at most 15%.

Each row of ``benchmarks/violation_suite.py`` is audited twice in a row, float events off then on,
each in a fresh process with nothing else of this script running (``--jobs 1``), so that a load
that drifts during the run (a shared machine) falls on both halves of a row alike. Recorded per
row and in total: wall seconds of the audit and CPU-seconds (process time, imports excluded), and
the ratio on / off of the totals.

    nice python benchmarks/float_events_cost.py            # 2e6 samples a row (the suite's --quick)
    nice python benchmarks/float_events_cost.py --samples 20000000
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from typing import Optional

from _record import emit, machine, save
from violation_suite import SUITE, _worker


def _row(name: str, samples: int, seed: int, confidence: float, float_events: bool) -> dict:
    with multiprocessing.get_context("fork").Pool(1, maxtasksperchild=1) as pool:
        return pool.apply(_worker, ((name, samples, seed, confidence, float_events, False),))


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=2_000_000, help="samples per audit (default 2e6)")
    ap.add_argument("--seed", type=int, default=2021)
    ap.add_argument("--confidence", type=float, default=0.9)
    ap.add_argument("--only", action="append", help="only this mechanism (repeatable)")
    args = ap.parse_args(argv)
    cases = [c for c in SUITE if not args.only or c.name in args.only]
    started, t0 = machine(), time.perf_counter()
    lines: list[str] = []
    emit(lines, f"{'mechanism':<16} {'wall off':>8} {'wall on':>8} {'CPU off':>8} {'CPU on':>8}  "
                f"{'eps_LB off':>10} {'eps_LB on':>10}  target met (on)")
    rows = []
    for c in cases:
        off = _row(c.name, args.samples, args.seed, args.confidence, False)
        on = _row(c.name, args.samples, args.seed, args.confidence, True)
        rows.append({"mechanism": c.name, "off": off, "on": on})
        emit(lines, f"{c.name:<16} {off['seconds']:8.1f} {on['seconds']:8.1f} {off['cpu_seconds']:8.1f} "
                    f"{on['cpu_seconds']:8.1f}  {off['epsilon_lb'] or 0:10.4f} {on['epsilon_lb'] or 0:10.4f}  "
                    f"{'yes' if on['meets_target'] else 'no'}")
    tot = {k: {m: round(sum(r[k][m] for r in rows), 2) for m in ("seconds", "cpu_seconds")}
           for k in ("off", "on")}
    ratio = {m: round(tot["on"][m] / tot["off"][m], 3) for m in ("seconds", "cpu_seconds")}
    emit(lines, f"total: wall {tot['off']['seconds']:.1f} s off, {tot['on']['seconds']:.1f} s on "
                f"(x{ratio['seconds']:.3f}); CPU {tot['off']['cpu_seconds']:.1f} s off, "
                f"{tot['on']['cpu_seconds']:.1f} s on (x{ratio['cpu_seconds']:.3f}); target: wall x1.15 at most; "
                f"this run {time.perf_counter() - t0:.0f} s")
    record = {"benchmark": "float_events_cost", "machine": started,
              "samples_per_audit": args.samples, "seed": args.seed, "confidence": args.confidence,
              "totals": tot, "ratio_on_off": ratio, "target_wall_ratio": 1.15,
              "meets_target": ratio["seconds"] <= 1.15, "rows": rows}
    stem = "float_events_cost" if args.samples == 2_000_000 and not args.only else \
        f"float_events_cost_{args.samples:.0e}".replace("+", "") + ("_only" if args.only else "")
    save(stem, record, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
