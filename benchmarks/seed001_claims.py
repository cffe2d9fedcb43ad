"""The claims of Chen, Pal and Golubchik (2016) evaluated numerically (mechanisms/claims/noise.py), as a recorded table.

Each claim is re-derived from scratch (closed-form sums, quadrature, exact order statistics,
exact privacy losses, LPs); the verdict (REFUTED with a counterexample, or NOT REFUTED, never
"proved") must agree with the one recorded in the module, else the exit status is 1.

    python benchmarks/seed001_claims.py            # all claims (about a second)
    python benchmarks/seed001_claims.py --quick    # the same (there is nothing to shorten)

Writes ``benchmarks/results/seed001_claims.{json,txt}``; the JSON records use the seed-claim keys
of the compliance report (``kind = "seed-claim"``).
"""

from __future__ import annotations

import argparse
import sys

from dpaudit.reference.claims import noise
from seed001_common import save


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    checks = [c.evaluate() for c in noise.claims()]
    lines = [f"{'claim':40s} {'verdict':13s} {'agrees':6s}  detail"]
    for c in checks:
        lines.append(f"{c.claim.id:40s} {c.evidence.verdict.label:13s} {'yes' if c.agrees else 'NO':6s}  "
                     f"{c.evidence.detail}")
    bad = [c.claim.id for c in checks if not c.agrees]
    lines.append(f"{len(checks)} claims: {sum(c.evidence.verdict.value == 'refuted' for c in checks)} refuted, "
                 f"{sum(c.evidence.verdict.value == 'not_refuted' for c in checks)} not refuted; "
                 f"disagreements with the recorded verdicts: {bad if bad else 'none'}")
    print("\n".join(lines))
    record = {"quick": args.quick, "claims": [c.to_record() for c in checks], "disagreements": bad}
    for p in save("claims", record, lines):
        print("wrote", p)
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
