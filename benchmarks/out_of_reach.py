"""Claims out of a run's reach: what the INCONCLUSIVE line says, and whether its budget is right.

A sampled audit whose validation could not show ε above the claim, whatever the outputs, is
INCONCLUSIVE and names about the budget that would bring the claim within reach
(:mod:`dpaudit.estimators.limits`, "Out of reach"). That budget is a necessary one: below it no
outcome refutes. This script measures how far it is from a sufficient one, on the mechanism that
leaks most, one that publishes its input (a sum of 5 records in [0, 1] plus Laplace noise of scale
0.01, add-remove), claimed at ε = 4 … 8 (point claims, ``float="off"``: the logic question) and
at μ = 4 and 6 (Gaussian DP, curve claims):

* at ``START`` samples, the verdict and the budget named (``needs``);
* at that budget, on ``SEEDS`` seeds, how many runs refute;
* for the curve claims, the same at three times the budget named.

And the control: a correct mechanism (Laplace of scale 1/ε) at each point claim, at ``START``
samples and at the budget named (it must never be refuted more than α allows: 0 of ``SEEDS`` here
is expected). Everything runs in process (:func:`dpaudit.audit`, :func:`dpaudit.curves.curve_audit`).

Run::

    nice -n 10 python benchmarks/out_of_reach.py        # results/out_of_reach.json (+ .txt)
"""

from __future__ import annotations

import time

import numpy as np

from _record import machine, save

import dpaudit
from dpaudit.curves import curve_audit

START = 2_000
SEEDS = range(3)
EPSILONS = (4.0, 5.0, 6.0, 7.0, 8.0)
MUS = (4.0, 6.0)


def publisher(eps: float):
    @dpaudit.mechanism(epsilon=eps, neighbours="add-remove", domain=(0, 1), size=5, float_events=False)
    def leak(data, rng, size=None):
        return data.sum() + rng.laplace(0, 0.01, size=size)
    return leak


def correct(eps: float):
    @dpaudit.mechanism(epsilon=eps, neighbours="add-remove", domain=(0, 1), size=5, float_events=False)
    def laplace(data, rng, size=None):
        return data.sum() + rng.laplace(0, 1.0 / eps, size=size)
    return laplace


def _needs(rec: dict) -> int | None:
    lim = rec["findings"]["logic"].get("limits") or {}
    reach = lim.get("out_of_reach") or {}
    return reach.get("needs_samples")


def point_row(eps: float) -> dict:
    first = dpaudit.audit(publisher(eps), samples=START, seed=0).to_record()
    needs = _needs(first)
    row = {"claim": f"epsilon={eps:g}", "verdict_at_start": first["verdict"], "needs": needs}
    if needs is not None:
        runs = [dpaudit.audit(publisher(eps), samples=needs, seed=s).to_record() for s in SEEDS]
        row["publisher_refuted_at_needs"] = sum(r["verdict"] == "refuted" for r in runs)
        row["publisher_bounds_at_needs"] = [r["epsilon_lower_bound"] for r in runs]
        ctl = [dpaudit.audit(correct(eps), samples=needs, seed=s).verdict.value for s in SEEDS]
        row["correct_verdicts_at_needs"] = ctl
    row["correct_verdict_at_start"] = dpaudit.audit(correct(eps), samples=START, seed=0).verdict.value
    return row


def curve_row(mu: float) -> dict:
    def leak(data, rng, size=None):
        return data[0] + rng.laplace(0, 0.01, size=size)

    kw = dict(mu=mu, neighbours="linf", domain=(0, 1), size=1)
    first = curve_audit(leak, samples=START, seed=0, **kw).to_record()
    text = str((first.get("details") or {}).get("out_of_reach") or "")
    needs = int(text.rsplit("--samples ", 1)[1].split()[0]) if "--samples " in text else None
    row = {"claim": f"mu={mu:g}", "verdict_at_start": first["verdict"], "needs": needs}
    if needs is not None:
        for factor in (1, 3):
            runs = [curve_audit(leak, samples=factor * needs, seed=s, **kw).verdict.value for s in SEEDS]
            row[f"publisher_refuted_at_{factor}x_needs"] = sum(v == "refuted" for v in runs)
    return row


def line(row: dict) -> str:
    parts = [f"{row['claim']:12s} at {START:,}: {row['verdict_at_start']:13s} needs {row['needs'] or '-':>8}"]
    for key in ("publisher_refuted_at_needs", "publisher_refuted_at_1x_needs", "publisher_refuted_at_3x_needs"):
        if key in row:
            parts.append(f"{key.replace('publisher_refuted_at_', 'publisher refuted at ').replace('_', ' ')}: "
                         f"{row[key]}/{len(SEEDS)}")
    if "correct_verdicts_at_needs" in row:
        parts.append(f"correct at start: {row['correct_verdict_at_start']}, at needs: "
                     f"{','.join(row['correct_verdicts_at_needs'])}")
    return "  ".join(parts)


def main() -> int:
    m = machine()
    t0 = time.process_time()
    rows = [point_row(e) for e in EPSILONS] + [curve_row(mu) for mu in MUS]
    lines = [line(r) for r in rows]
    for text in lines:
        print(text, flush=True)
    save("out_of_reach", {"machine": m, "start": START, "seeds": list(SEEDS), "rows": rows,
                          "cpu_seconds": round(time.process_time() - t0, 1)}, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
