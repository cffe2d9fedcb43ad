"""Why a structured-suite row misses its target: the audit with the worst pair fixed, and the
best bound any event of that pair could get from the suite's budget.

For each row of ``structured_suite.py`` (or the ``--only`` rows), three figures side by side:

* **suite**: the row's ε_LB in ``results/structured_suite.json`` (the pair search's work included);
* **pair fixed**: the same audit (90%, ``--samples``, early stopping off) of the mechanism on one
  record x ∈ [0, 1] that sets its input to D + x·(D' − D), with (D, D') the worst pair of the
  ground truth (``results/structured_truth.json``): x = 0 against x = 1 is then the only pair,
  so the bound measures the events and the budget, not the pair search. A row whose suite bound
  is far below this one loses in the pair search; one whose fixed-pair bound is still below its
  target loses in the events or the budget;
* **ceiling** (Alg 3 rows, c = 1): the largest ε_LB that *any* event of a pair (the best of
  :data:`ALG3_PAIRS`) could get from
  independent validation counts of the suite's validation size, n = 0.525 · samples / 2 per
  dataset, at 90%: the outputs (first ⊤ at k, value v) on a grid of v, their exact probabilities
  by integration over the threshold noise ρ (Lyu, Su and Li 2017, Alg 3), unions of cells in
  likelihood-ratio order (Neyman-Pearson: the best events of each size), the expected counts
  bounded by Clopper-Pearson (the ``marginal`` method of :mod:`dpaudit.estimators.bounds`). It
  is an upper end for events scored on independent counts; the paired bound of coupled samples
  can do better where D and D' move together.

Run::

    nice python benchmarks/structured_diagnose.py --only SVT3-c1 --only SVT6-indices
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Optional

import numpy as np

from _record import RESULTS, emit, machine, save

import structured_suite as ss
from dpaudit.reference.controls import structured as sm

#: validation share of the budget (1 − search 0.125 − race 0.35; dpaudit.auditing.sampled)
VALIDATION_SHARE = 0.525


class FixedPair:
    """A mechanism of one record x ∈ [0, 1]: ``func`` on D + x·(D' − D) (picklable)."""

    def __init__(self, func, d: np.ndarray, dp: np.ndarray) -> None:
        self.func, self.d, self.dp = func, np.asarray(d, float), np.asarray(dp, float)

    def __call__(self, data, rng, size=None):
        x = float(np.asarray(data, float).reshape(-1)[0])
        return self.func(self.d + x * (self.dp - self.d), rng, size)


def worst_pair(name: str, t: dict) -> Optional[tuple]:
    """(D, D') of the ground truth's worst pair, or None where it names none."""
    if "pair" in t:
        return np.array(t["pair"][0]), np.array(t["pair"][1])
    if name.startswith("SVT3"):  # every query below the threshold by far, moved up by one
        return np.full(10, -10.0), np.full(10, -9.0)
    if t.get("bot") is not None and t.get("top") is not None and t.get("pattern"):
        bot, top = list(t["bot"]), list(t["top"])
        d = np.array(bot + top, float)
        return d, d + np.r_[np.ones(len(bot)), -np.ones(len(top))]
    return None


def _nine_one(bot: float, top: float) -> tuple:
    """Nine queries at ``bot`` moved up, the last at ``top`` moved down."""
    d = np.r_[np.full(9, bot), top]
    return d, d + np.r_[np.ones(9), -1.0]


#: the pairs whose Alg 3 ceiling is computed (the best is recorded): the ground truth's (every
#: query far below, all moved up), and nine up / the last down at levels where the ⊤ is likely
ALG3_PAIRS = [(np.full(10, -10.0), np.full(10, -9.0))] + [
    _nine_one(b, t) for b, t in ((0.0, 0.0), (5.0, 5.0), (-5.0, -5.0), (0.0, -5.0), (5.0, 0.0))]


def alg3_ceiling(c: int, d: np.ndarray, dp: np.ndarray, n: float, alpha: float = 0.1) -> float:
    """The module docstring's ceiling for Alg 3 with c = 1 (outputs: ⊥…⊥ then (⊤ at k, value v),
    or all ⊥; v in cells of width 1 on [−300, 300], ρ on a grid of step 2a/100); NaN for c > 1."""
    from scipy import stats

    from dpaudit.estimators.bounds import SPLITS, Counts, validated_bound

    if c != 1:
        return math.nan
    e1 = sm.EPS / 2
    a, b = 1 / e1, c / (sm.EPS - e1)
    rho = np.linspace(-40 * a, 40 * a, 4001)
    w = stats.laplace.pdf(rho, scale=a) * (rho[1] - rho[0])
    edges = np.linspace(-300.0, 300.0, 601)

    def cells(q: np.ndarray) -> np.ndarray:
        out, alive = [], np.ones_like(rho)
        for k in range(q.size):
            # P[first ⊤ at k, v in the cell]: v ≥ T + ρ and earlier queries below T + ρ
            lo = np.maximum(edges[:-1, None], sm.T + rho[None, :])
            hi = np.maximum(edges[1:, None], lo)
            pv = stats.laplace.cdf(hi - q[k], scale=b) - stats.laplace.cdf(lo - q[k], scale=b)
            out.append(pv @ (alive * w))
            alive = alive * stats.laplace.cdf(sm.T + rho - q[k], scale=b)
        out.append(np.array([alive @ w]))
        return np.concatenate(out)

    p, q = cells(d), cells(dp)
    best = 0.0
    for x, y in ((p, q), (q, p)):
        r = np.log(np.maximum(x, 1e-300)) - np.log(np.maximum(y, 1e-300))
        o = np.argsort(-r)
        cx, cy = np.cumsum(x[o]), np.cumsum(y[o])
        for i in np.unique(np.geomspace(1, cx.size, 200).astype(int)) - 1:
            k1, k2 = int(round(cx[i] * n)), int(round(cy[i] * n))
            if k1 == 0:
                continue
            cnt = Counts(int(n), int(n), k1, k2)
            best = max(best, max(validated_bound("marginal", cnt, alpha, s).epsilon_lb
                                 for s in SPLITS["marginal"]))
    return best


def _row(args: tuple) -> dict:
    """One row in a fresh process (module docstring): the fixed-pair audit and the ceiling."""
    import dpaudit

    name, samples, seed = args
    case = next(c for c in ss.SUITE if c.name == name)
    t = ss.load_truth()[name]
    pair = worst_pair(name, t)
    c0 = time.process_time()
    r = dpaudit.audit(FixedPair(case.func, *pair), epsilon=case.epsilon, delta=case.delta,
                      neighbours="replace", domain=(0.0, 1.0), size=1, samples=samples,
                      confidence=0.9, seed=seed, early_stop=False)
    cpu = time.process_time() - c0
    ceiling, ceiling_pair = math.nan, None
    if name in ("SVT3-c1", "SVT3-index-value"):
        for cand in ALG3_PAIRS:
            v = alg3_ceiling(1, *cand, VALIDATION_SHARE * samples / 2)
            if math.isnan(ceiling) or v > ceiling:
                ceiling, ceiling_pair = v, [cand[0].tolist(), cand[1].tolist()]
    return {"mechanism": name, "true_epsilon": t["loss"], "target": 0.9 * t["loss"],
            "fixed_pair_epsilon_lb": r.epsilon_lower_bound,
            "fixed_pair_event": None if r.counterexample is None else r.counterexample.event.get("text"),
            "ceiling_independent_counts": None if math.isnan(ceiling) else ceiling,
            "ceiling_pair": ceiling_pair, "pair": [pair[0].tolist(), pair[1].tolist()],
            "cpu_seconds": round(cpu, 1), "samples": r.samples}


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=20_000_000)
    ap.add_argument("--seed", type=int, default=2017)
    ap.add_argument("--only", action="append", help="only this row (repeatable)")
    ap.add_argument("--jobs", type=int, default=1, help="rows audited at once (processes)")
    args = ap.parse_args(argv)

    truths = ss.load_truth()
    suite_file = RESULTS / "structured_suite.json"
    suite = ({r["mechanism"]: r for r in json.loads(suite_file.read_text())["rows"]}
             if suite_file.exists() else {})
    started, lines, rows = machine(), [], []
    emit(lines, f"{'row':<20} {'true ε':>8} {'target':>7} {'suite':>8} {'fixed':>8} {'ceiling':>8} "
                f"{'CPU-s':>6}  event of the fixed pair")
    work = [c.name for c in ss.SUITE if (not args.only or c.name in args.only)
            and worst_pair(c.name, truths[c.name]) is not None and math.isfinite(truths[c.name]["loss"])]
    import multiprocessing

    done = {}
    with multiprocessing.get_context("fork").Pool(args.jobs, maxtasksperchild=1) as pool:
        for row in pool.imap_unordered(_row, [(n, args.samples, args.seed) for n in work]):
            s = suite.get(row["mechanism"], {})
            row["suite_epsilon_lb"] = (s.get("epsilon_lb") if s.get("confidence") == 0.9
                                       else s.get("at_90", {}).get("epsilon_lb"))
            done[row["mechanism"]] = row
            fmt = lambda v: "    -   " if v is None else f"{v:8.4f}"  # noqa: E731
            emit(lines, f"{row['mechanism']:<20} {row['true_epsilon']:8.4f} {row['target']:7.4f} "
                        f"{fmt(row['suite_epsilon_lb'])} {fmt(row['fixed_pair_epsilon_lb'])} "
                        f"{fmt(row['ceiling_independent_counts'])} {row['cpu_seconds']:6.1f}  "
                        f"{row['fixed_pair_event']}")
    rows = [done[n] for n in work if n in done]
    save("structured_diagnose", {"machine": started, "samples": args.samples, "seed": args.seed,
                                 "confidence": 0.9, "rows": rows,
                                 "note": "suite: the row's bound at 90% in structured_suite.json "
                                         "(at_90 for the correct rows); fixed: the audit with the "
                                         "ground truth's worst pair fixed; ceiling: module docstring"},
         lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
