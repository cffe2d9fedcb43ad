"""Prefixes of a look's validation (dpaudit.auditing.validate, ``stages``) in the early looks too,
and a smaller first look: measured against the shipped schedule, not kept (README.md).

    nice -n 10 python benchmarks/experiments/staged_validation/run.py NAME EARLY FINAL [oracle_gap flags]

EARLY and FINAL are Python literals: the ((fraction, share of α), ...) prefixes of the early looks
and of the final look ("None": the shipped ones, none early and FINAL_STAGES last). ``--first``
adds a 1,000-sample first look (fraction 1/4000, MIN_LOOK 1,000). Runs ``oracle_gap.py`` on 11
seeds into /tmp/staged_NAME.json.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[2]))

import dpaudit.auditing.looks as L  # noqa: E402
import dpaudit.auditing.schedule as S  # noqa: E402
from dpaudit.auditing import sampled  # noqa: E402


def main() -> None:
    name, early, final = sys.argv[1], ast.literal_eval(sys.argv[2]), ast.literal_eval(sys.argv[3])
    rest = sys.argv[4:]
    if "--first" in rest:
        rest.remove("--first")
        S.LOOK_FRACTIONS = (1 / 4000,) + S.LOOK_FRACTIONS
        S.schedule.__defaults__ = (1000,)

    def look(self, j, budget, confidence, seed, timeout, progress):
        stages = (early or ()) if j >= 0 else (S.FINAL_STAGES if final is None else final)
        return sampled.run(self.spec, self.executor, budget=budget, confidence=confidence,
                           seed=seed, timeout=timeout, progress=progress,
                           questions=tuple(self.pending), stages=stages, stop=self.prefix_stops)

    L.PointLooks.look = look
    import oracle_gap

    oracle_gap.SEEDS = range(11)
    sys.argv = ["oracle_gap.py", "--out", f"/tmp/staged_{name}.json"] + rest
    oracle_gap.main()


if __name__ == "__main__":
    main()
