"""Samples to a refutation: dpaudit against an oracle that knows the optimal event in advance.

For each mechanism family and each scale error (the noise too narrow by 5%, 10%, 25% and 2×, so
the true ε, or μ, is the claimed one times 1.05, 1.1, 1.25 and 2), side by side in one run:

* **dpaudit**: the default audit (4·10⁶ samples with the batch form, 95% confidence, early
  stopping) of the claim, over ``SEEDS`` seeds. Point claims run :func:`dpaudit.audit` with
  ``float="off"`` (the oracle answers the logic question; a float64 porosity would refute the
  Laplace rows on its own), the μ-GDP claim :func:`dpaudit.curve_audit`. *Samples to refute* is
  the samples drawn up to and including the first look whose bound refutes the claim (None: no
  look did, within the budget); the median is over seeds (a seed that never refutes counts as
  infinite). ``dpaudit_median_samples_drawn`` is the median of what the run drew in all: a
  refutation may look on for a tighter bound, through the early looks only.
* **oracle**: Clopper-Pearson at the same α (one-sided, α/2 on each dataset's probability) on the
  optimal event, known in advance with no search, no selection split and no look: the smallest
  total sample count 2n (n per dataset) at which a single test on that event refutes with
  probability ≥ 1/2 (its median samples to refute), estimated from ``ORACLE_DRAWS`` binomial
  draws per n on a grid of ratio 1.03. The event is the best threshold (or atom) of the
  likelihood ratio for the worst pair, chosen by the same criterion on a grid. The same oracle at
  α/10 (``oracle_median_samples_at_look_alpha``: the error level of one early look,
  :data:`dpaudit.auditing.schedule.SPEND`) says how much of the gap the looks' α spending alone
  makes.

With ``--single-look`` a row also records ``single_look_samples``: the smallest budget, on a
grid of ratio 2^(1/4) from an eighth of the oracle at α/10 (at least 1,000 samples, the audit's
smallest; a pure-ε look counts paired outputs, which can need fewer samples than the oracle's
two marginal counts), at which one look alone (the audit with ``early_stop=False`` at confidence
1 − α/10, and for the curve audit with the early looks'
:data:`~dpaudit.curves.audit.EARLY_THRESHOLDS` thresholds) refutes in at least 3 of the 5 seeds.
So a row's ratio splits into three measured factors: the α spending (oracle at α/10 over oracle
at α), the look's own search and selection split (single look over oracle at α/10), and the
schedule (dpaudit's median over the single look: the looks before the refuting one, and how far
the refuting look's budget is above what was needed). Its audits are not in ``cpu_seconds``.

Each row also checks its bounds against the mechanism's true value (``true_value``: ε = 1 + error
for the pure rows, μ = 1 + error for the μ-GDP row, and for the (ε, δ₁) row the ε at which the
true Gaussian's δ_μ(ε) equals δ₁): ``sound`` is whether no seed's reported bound is above it.

Families: ``laplace`` (pure ε = 1, a sum plus Laplace noise, add-remove), ``gaussian_mu`` (1-GDP,
one value plus Gaussian noise, linf), ``gaussian_dp`` ((1, δ₁) with δ₁ = δ(1) of the σ = 1
Gaussian, the exact claim of the correct mechanism), ``randomized_response`` (pure ε = 1, one bit
kept with probability e^ε/(1 + e^ε)) and ``histogram`` (pure ε = 1, a 10-bin histogram of 5
records in [0, 1) with Laplace noise per bin, add-remove). The goal: dpaudit's median within 3×
the oracle's everywhere; the must-show rows are Laplace 10% (median ≤ 25,000) and Gaussian μ 10%
(median ≤ 50,000).

Run::

    nice -n 10 python benchmarks/oracle_gap.py                 # results/oracle_gap.json (+ .txt)
    nice -n 10 python benchmarks/oracle_gap.py --only laplace --errors 0.1
    nice -n 10 python benchmarks/oracle_gap.py --only histogram --merge   # replace those rows only

``--merge`` keeps the rows of the results file that this run does not redo (a family at a time
on a shared machine); the record's ``runs_merged`` lists the commands and dates that made it.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtri
from scipy.stats import laplace as laplace_law, norm

from _record import RESULTS, finish, header, machine, write_json

import dpaudit
from dpaudit.auditing.schedule import SPEND
from dpaudit.curves.audit import EARLY_THRESHOLDS
from dpaudit.curves.claims import gdp_delta_formula
from dpaudit.estimators.bounds import cp_lower, cp_upper

SEEDS = range(21)
ERRORS = (0.05, 0.10, 0.25, 1.0)
CONFIDENCE = 0.95
ORACLE_DRAWS = 400
#: the (ε, δ) claim of the Gaussian rows: the σ = 1 Gaussian's own δ at ε = 1
DP_EPSILON = 1.0
DP_DELTA = float(gdp_delta_formula(1.0, [DP_EPSILON])[0])


# ------------------------------------------------------------------------------- mechanisms

def laplace(err: float) -> Callable:
    b = 1.0 / (1.0 + err)

    @dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=1)
    def mech(data, rng, size=None):
        return data.sum() + rng.laplace(0.0, b, size=size)
    return mech


def gaussian(err: float, claim: dict) -> Callable:
    sigma = 1.0 / (1.0 + err)

    @dpaudit.mechanism(neighbours="linf", domain=(0, 1), size=1, **claim)
    def mech(data, rng, size=None):
        return data[0] + rng.normal(0.0, sigma, size=size)
    return mech


def randomized_response(err: float) -> Callable:
    keep = math.exp(1.0 + err) / (1.0 + math.exp(1.0 + err))

    @dpaudit.mechanism(epsilon=1.0, neighbours="linf", domain=(0, 1), size=1)
    def mech(data, rng, size=None):
        bit = int(data[0] >= 0.5)
        n = 1 if size is None else size
        out = np.where(rng.random(n) < keep, bit, 1 - bit).astype(np.int64)
        return out if size is not None else int(out[0])
    return mech


BINS = 10


def histogram(err: float) -> Callable:
    b = 1.0 / (1.0 + err)

    @dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=5)
    def mech(data, rng, size=None):
        counts = np.bincount(np.minimum((np.asarray(data) * BINS).astype(int), BINS - 1),
                             minlength=BINS).astype(float)
        n = 1 if size is None else size
        out = counts[None, :] + rng.laplace(0.0, b, size=(n, BINS))
        return out if size is not None else out[0]
    return mech


# ------------------------------------------------------------------------------- oracles

def _refutes(kind: str, x, y, n: int, alpha: float, claim: float) -> np.ndarray:
    p_lo = np.asarray(cp_lower(x, n, alpha / 2), dtype=float)
    q_hi = np.asarray(cp_upper(y, n, alpha / 2), dtype=float)
    if kind == "mu":
        with np.errstate(divide="ignore", invalid="ignore"):
            v = ndtri(p_lo) - ndtri(q_hi)
        return np.nan_to_num(v, nan=-np.inf) > claim
    if kind == "delta":
        return p_lo - math.exp(DP_EPSILON) * q_hi > DP_DELTA
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(p_lo, 1e-300) / q_hi) > claim


def _n_median(kind: str, p: float, q: float, alpha: float, claim: float) -> float:
    """The smallest n (per dataset) at which the expected counts refute (a quick screen:
    bisection on log n, the refutation at expected counts being monotone in n)."""
    ok = lambda n: bool(_refutes(kind, round(p * n), round(q * n), int(n), alpha, claim))  # noqa: E731
    lo, hi = 10, 10 ** 9
    if not ok(hi):
        return math.inf
    while hi / lo > 1.01 and hi - lo > 1:  # integer n: stop at adjacent n (lo = 10, hi = 11 looped)
        mid = max(lo + 1, min(hi - 1, int(math.sqrt(lo * hi))))
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return float(hi)


def oracle(kind: str, p: float, q: float, alpha: float, claim: float, seed: int = 0) -> float:
    """Median total samples (2n) of one Clopper-Pearson test on an event with probabilities
    ``p`` (D) and ``q`` (D′): the smallest n on a ratio-1.03 grid with P(refute) ≥ 1/2, from
    :data:`ORACLE_DRAWS` binomial draws (module docstring)."""
    start = _n_median(kind, p, q, alpha, claim)
    if not math.isfinite(start):
        return math.inf
    rng = np.random.default_rng(seed)
    for n in np.unique((start * np.geomspace(0.3, 4.0, 90)).astype(int)):
        n = max(1, int(n))
        x, y = rng.binomial(n, p, ORACLE_DRAWS), rng.binomial(n, q, ORACLE_DRAWS)
        if np.mean(_refutes(kind, x, y, n, alpha, claim)) >= 0.5:
            return 2.0 * n
    return math.inf


def best_event(kind: str, events: list[tuple[float, float]], alpha: float, claim: float) -> tuple:
    """The event (p, q) of smallest median-count n: the oracle's event, known in advance."""
    scored = [(_n_median(kind, p, q, alpha, claim), p, q) for p, q in events if p > q]
    return min(scored)


def shift_events(law: Any, shift: float) -> list[tuple[float, float]]:
    """{y ≥ t} for a location family: p = P[shift + Z ≥ t], q = P[Z ≥ t], t on a grid."""
    return [(float(law.sf(t - shift)), float(law.sf(t))) for t in np.linspace(-3, 6, 91)]


# ------------------------------------------------------------------------------- runs

def samples_to_refute_point(r: Any, claim_eps: float) -> tuple:
    """(samples up to the first refuting look, samples the run drew) of a sampled audit."""
    rec = r.details.get("early_stop") if hasattr(r.details, "get") else None
    if rec is None:
        return (r.samples if r.refuted else None), r.samples
    used = 0
    for look in rec["looks"]:
        lb = (look.get("questions") or {}).get("logic")
        if lb is not None and lb > claim_eps:
            # the betting look refuted when its wealth first reached 1/α; it bet on after that
            # only to make the refutation strong (dpaudit.auditing.betting)
            at = look.get("refuted_at")
            return used + (at if at is not None else look["samples"]), r.samples
        used += look["samples"]
    return None, r.samples


def samples_to_refute_curve(r: Any) -> tuple:
    seq = r.details.get("sequential") if hasattr(r.details, "get") else None
    if seq is None:
        return (r.samples if r.refuted else None), r.samples
    used = 0
    for look in seq["looks"]:
        used += look["samples"]
        if look["refuted"]:
            return used, r.samples
    return None, r.samples


def family(name: str, err: float) -> dict:
    """The mechanism, how to audit it, and its oracle event for one family and scale error."""
    alpha = 1.0 - CONFIDENCE
    s = 1.0 + err
    if name == "laplace":
        ev = best_event("eps", shift_events(laplace_law(scale=1 / s), 1.0), alpha, 1.0)
        return dict(mech=laplace(err), kind="eps", claim=1.0, event=ev, audit="point")
    if name == "histogram":  # one bin moves by 1: the Laplace scalar's events on that coordinate
        ev = best_event("eps", shift_events(laplace_law(scale=1 / s), 1.0), alpha, 1.0)
        return dict(mech=histogram(err), kind="eps", claim=1.0, event=ev, audit="point")
    if name == "randomized_response":
        keep = math.exp(s) / (1 + math.exp(s))
        ev = best_event("eps", [(keep, 1 - keep)], alpha, 1.0)
        return dict(mech=randomized_response(err), kind="eps", claim=1.0, event=ev, audit="point")
    if name == "gaussian_mu":
        ev = best_event("mu", shift_events(norm(scale=1 / s), 1.0), alpha, 1.0)
        return dict(mech=gaussian(err, {"mu": 1.0}), kind="mu", claim=1.0, event=ev, audit="curve")
    if name == "gaussian_dp":
        ev = best_event("delta", shift_events(norm(scale=1 / s), 1.0), alpha, DP_EPSILON)
        return dict(mech=gaussian(err, {"epsilon": DP_EPSILON, "delta": DP_DELTA}), kind="delta",
                    claim=DP_EPSILON, event=ev, audit="point")
    raise ValueError(name)


FAMILIES = ("laplace", "gaussian_mu", "gaussian_dp", "randomized_response", "histogram")


def true_value(name: str, err: float) -> float:
    """The mechanism's true ε (μ for ``gaussian_mu``; for ``gaussian_dp`` the ε at which the
    μ = 1 + err Gaussian's δ_μ(ε) equals the claimed δ₁, δ_μ decreasing in ε): no sound lower
    bound is above it."""
    s = 1.0 + err
    if name != "gaussian_dp":
        return s
    return float(brentq(lambda e: float(gdp_delta_formula(s, [e])[0]) - DP_DELTA, 0.0, 50.0, xtol=1e-12))


def single_look(fam: dict, start: float) -> Optional[int]:
    """The smallest budget on a ratio-2^(1/4) grid from ``start`` (at least 1,000, the smallest
    the audit takes) at which one look at α/10 refutes in ≥ 3 of the 5 seeds (module docstring);
    None if none up to 64·start does."""
    confidence = 1.0 - SPEND * (1.0 - CONFIDENCE)
    for i in range(25):
        n = int(max(1000, start) * 2.0 ** (i / 4))
        hits = 0
        for seed in SEEDS:
            if fam["audit"] == "curve":
                r = dpaudit.curve_audit(fam["mech"], confidence=confidence, seed=seed, samples=n,
                                        early_stop=False, thresholds=EARLY_THRESHOLDS)
            else:
                r = dpaudit.audit(fam["mech"], confidence=confidence, seed=seed, samples=n,
                                  early_stop=False, float="off")
            hits += bool(r.refuted)
        if hits >= 3:
            return n
    return None


def run_row(name: str, err: float, look: bool = False) -> dict:
    fam = family(name, err)
    n_scr, p, q = fam["event"]
    oracle_samples = oracle(fam["kind"], p, q, 1.0 - CONFIDENCE, fam["claim"])
    at_look = oracle(fam["kind"], p, q, SPEND * (1.0 - CONFIDENCE), fam["claim"])
    truth = true_value(name, err)
    runs = []
    for seed in SEEDS:
        t0 = time.process_time()
        if fam["audit"] == "curve":
            r = dpaudit.curve_audit(fam["mech"], confidence=CONFIDENCE, seed=seed)
            to, drawn = samples_to_refute_curve(r)
            bound = r.mu_lower_bound
        else:
            r = dpaudit.audit(fam["mech"], confidence=CONFIDENCE, seed=seed, float="off")
            to, drawn = samples_to_refute_point(r, fam["claim"])
            bound = r.epsilon_lower_bound
        runs.append({"seed": seed, "verdict": r.verdict.value, "samples_to_refute": to,
                     "samples_drawn": drawn, "bound": bound,
                     "cpu_seconds": round(time.process_time() - t0, 3)})
    med = statistics.median([x["samples_to_refute"] if x["samples_to_refute"] is not None else math.inf
                             for x in runs])
    drawn = statistics.median(x["samples_drawn"] for x in runs)
    finite = math.isfinite(med) and math.isfinite(oracle_samples)
    bounds = [x["bound"] for x in runs if x["bound"] is not None]
    row = {"family": name, "scale_error": err, "claim": fam["kind"],
           "oracle_event": {"p": p, "q": q},
           "oracle_median_samples": oracle_samples if math.isfinite(oracle_samples) else None,
           "dpaudit_median_samples": med if math.isfinite(med) else None,
           "dpaudit_median_samples_drawn": drawn,
           "ratio": med / oracle_samples if finite else None,
           "oracle_median_samples_at_look_alpha": at_look if math.isfinite(at_look) else None,
           "single_look_samples": (single_look(fam, at_look / 8) if look and math.isfinite(at_look)
                                   else None),
           "true_value": truth, "largest_bound": max(bounds, default=None),
           "sound": all(b <= truth for b in bounds),
           "cpu_seconds": round(sum(x["cpu_seconds"] for x in runs), 2), "runs": runs}
    print(line(row), flush=True)
    return row


def line(row: dict) -> str:
    """One row as a line of the text table."""
    inf = lambda v: math.inf if v is None else v  # noqa: E731
    verdict = {True: "sound", False: "NOT SOUND"}.get(row.get("sound"), "unchecked")
    return (f"{row['family']:<20} {row['scale_error']:>5.2f}"
            f"  oracle {inf(row['oracle_median_samples']):>10,.0f}"
            f"  dpaudit {inf(row['dpaudit_median_samples']):>12,.0f}  ratio {inf(row['ratio']):6.2f}"
            f"  oracle@alpha/10 {inf(row.get('oracle_median_samples_at_look_alpha')):>9,.0f}"
            f"  one look {inf(row.get('single_look_samples')):>9,.0f}"
            f"  bound {inf(row.get('largest_bound')):6.3f}"
            f" <= true {row.get('true_value', math.nan):6.3f}: {verdict}  cpu {row['cpu_seconds']:6.1f} s")


def _order(row: dict) -> tuple:
    return (FAMILIES.index(row["family"]), row["scale_error"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=FAMILIES)
    ap.add_argument("--errors", type=float, nargs="*", default=list(ERRORS))
    ap.add_argument("--out", default=str(RESULTS / "oracle_gap.json"))
    ap.add_argument("--single-look", action="store_true",
                    help="also find the smallest single look that refutes (module docstring)")
    ap.add_argument("--merge", action="store_true",
                    help="keep the rows of --out that this run does not redo (module docstring)")
    args = ap.parse_args(argv)
    started = machine()
    t0 = time.process_time()
    command = " ".join(sys.argv)
    old = json.loads(Path(args.out).read_text()) if args.merge and Path(args.out).exists() else {}
    rows = list(old.get("rows", []))
    merged = old.get("runs_merged") or ([{"command": old["command"], "date": old["machine"]["date"]}]
                                        if old else [])
    record = {"benchmark": "oracle_gap", "machine": started, "command": command,
              "confidence": CONFIDENCE, "seeds": list(SEEDS), "budget": "default",
              "gaussian_dp_claim": [DP_EPSILON, DP_DELTA], "rows": rows}
    if args.merge:
        record["runs_merged"] = merged + [{"command": command, "date": started["date"]}]
    for name in args.only or FAMILIES:
        for err in args.errors:
            row = run_row(name, err, args.single_look)
            rows[:] = sorted([r for r in rows if (r["family"], r["scale_error"]) != (name, err)] + [row],
                             key=_order)
            record["cpu_seconds"] = round(sum(r.get("cpu_seconds", 0.0) for r in rows), 1)
            write_json(args.out, record)  # after every row: nothing is lost
    record["machine"] = finish(started)
    record["cpu_seconds"] = round(sum(r.get("cpu_seconds", 0.0) for r in rows), 1)
    record["sound"] = all(r.get("sound", False) for r in rows)
    ratios = [r["ratio"] for r in rows if r["ratio"] is not None]
    record["within_3x"] = sum(1 for x in ratios if x <= 3.0)
    must = {("laplace", 0.10): 25_000, ("gaussian_mu", 0.10): 50_000}
    record["must_show"] = [{"family": f, "scale_error": e, "limit": lim,
                            "median": next(r["dpaudit_median_samples"] for r in rows
                                           if r["family"] == f and r["scale_error"] == e),
                            } for (f, e), lim in must.items()
                           if any(r["family"] == f and r["scale_error"] == e for r in rows)]
    for m in record["must_show"]:
        m["met"] = m["median"] is not None and m["median"] <= m["limit"]
    write_json(args.out, record)
    Path(args.out).with_suffix(".txt").write_text(
        "\n".join([header("oracle_gap", started), f"# {command}", *map(line, rows)]) + "\n",
        encoding="utf-8")
    print(json.dumps(record["must_show"]))
    print(f"{record['within_3x']} of {len(rows)} rows within 3x of the oracle; "
          f"every bound at most its true value: {record['sound']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
