"""The best bound any sampled auditor could reach on the structured suite's SVT pattern rows.

For a row whose target is 0.9 × its true ε, two questions decide whether a miss is dpaudit's:
does *some* pair and event reach the target with the suite's samples at all, and on which pair.
This script answers both for sparse vector with one threshold and an abort after c ⊤'s (Lyu, Su
and Li 2017, Alg 1 and Alg 4; ``SVT1-c1``, ``SVT1-c2``, ``SVT4-c1``, ``SVT4-c2``, and
``SVT1-first-index``, ``SVT1-indices-c2``, which release the same law through a bijection) by
exact computation, no sampling.

**Joint law under common random numbers.** dpaudit draws a pair's outputs on D and D' from one
seed, so both runs see the same threshold noise ρ ~ Lap(a) and query noise ν_i ~ Lap(b). Query i
is ⊤ on D iff ν_i ≥ t_i = T + ρ − q_i, on D' iff ν_i ≥ t'_i = T + ρ − q'_i, so given ρ the pair of
answers of query i has probabilities S_b(max(t, t')) (both ⊤), F_b(min(t, t')) (both ⊥) and
|F_b(t) − F_b(t')| (the one whose threshold is lower says ⊤), independently over i. The joint
probability of the output patterns (u, v) is the product over queries (an aborted position
marginalised) integrated over ρ on a grid of 4,001 points over ±40a (Lyu, Su and Li, proof of
Thm 2, for the factorisation given ρ).

**Ceiling.** For each candidate pair, the events are the unions of output patterns in likelihood-
ratio order (Neyman-Pearson: the most powerful events of each size), both directions; each gets
the bound dpaudit's validation would report (:func:`dpaudit.estimators.bounds.validated_bound`,
every method and α split) at *expected* counts: x = n·P_D(S), y = n·P_D'(S) and, for the paired
method, a = n·P(both in S), at 90%. The ceiling is the largest, with n the suite's validation
size (0.525 of the budget, per dataset) and with n the whole budget (an auditor that knew the pair
and the event and spent nothing on finding them). A bound at expected counts is the typical
validated bound, not a maximum over luck; from sample to sample it spreads by about the standard
error of ln(x/y) (coupled rows: √((x − a) + (y − a))/x), and Φ((ceiling − target)/sd) says how
often even that oracle would reach the target.

**No abort.** Without an abort the answers are independent given ρ, and on a pair whose first m
queries move up from level l₁ and the rest down from l₂ every pattern's probability depends only
on (k₁, k₂), its ⊤ counts in the two blocks. The joint law of ((k₁, k₂) on D, (k₁', k₂') on D')
is then a product of two trinomials given ρ (a moved-up query is ⊤ on both, on D' only, or on
neither; a moved-down one on both, on D only, or on neither), integrated over ρ as above: 4·6⁴
entries instead of 2^20. Patterns of one group share their ratio, so the likelihood-ratio-ordered
unions are unions of whole groups (:func:`grouped_law`).

Candidate pairs: the first m answers moved up and the rest down (m = 9, 8, 5: the worst patterns
of c = 1 and 2, and the half-and-half pairs; the mirror images are the same pairs read the other
way), the moved-up block at level l₁ and the other at l₂, both in {−9, −5, 0, 5, 9}; with no
abort m ∈ {3, …, 7} and l₁, l₂ ∈ {−9, −5, −3, 0, 3, 5, 9} (the true ε's worst pattern, 5 ⊥ at 9
and 5 ⊤ at −9, is among them, and the best pairs sit at m = 5 near 0), and then the best pair's
levels refined off the grid (Nelder-Mead over (l₁, l₂), ``refined``).

Run::

    nice python benchmarks/structured_ceilings.py       # about 15 minutes
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from functools import partial
from typing import Optional

import numpy as np
from scipy import optimize, stats

from _record import emit, machine, save

from dpaudit.estimators.bounds import SPLITS, Counts, validated_bound
from dpaudit.reference.controls import structured as sm

BUDGET = 20_000_000
VALIDATION_SHARE = 0.525  # 1 − search 0.125 − race 0.35 (dpaudit.auditing.sampled)
LEVELS = (-9.0, -5.0, 0.0, 5.0, 9.0)
MOVED_UP = (9, 8, 5)
NO_ABORT_LEVELS = (-9.0, -5.0, -3.0, 0.0, 3.0, 5.0, 9.0)
NO_ABORT_MOVED_UP = (3, 4, 5, 6, 7)
ALPHA = 0.1
TARGET_SHARE = 0.9


def _rows() -> dict:
    e = sm.EPS
    alg4 = (4 / e, 1 / (e - e / 4))
    return {"SVT1-c1": (sm._alg1_scales(1), 1), "SVT1-c2": (sm._alg1_scales(2), 2),
            "SVT4-c1": (alg4, 1), "SVT4-c2": (alg4, 2)}


def _no_abort_rows() -> dict:
    """Rows answering every query: (threshold scale a, query-noise scale b)."""
    return {"SVT1-no-abort": sm._alg1_scales(1), "SVT6-indices": (2 / sm.EPS, 2 / sm.EPS)}


#: rows with the law of another row (a bijection of its outputs)
SAME_LAW = {"SVT1-first-index": "SVT1-c1", "SVT1-indices-c2": "SVT1-c2"}


def patterns(n: int, c: int) -> list[tuple]:
    """Every answer pattern of n queries with an abort after c ⊤'s (1 ⊤, 0 ⊥)."""
    out: list[tuple] = []

    def rec(prefix: list, ones: int) -> None:
        if ones == c or len(prefix) == n:
            out.append(tuple(prefix))
            return
        for a in (0, 1):
            rec(prefix + [a], ones + a)

    rec([], 0)
    return out


def joint_law(q: np.ndarray, qp: np.ndarray, a: float, b: float, c: int,
              grid: int = 4001, span: float = 40.0) -> tuple[list, np.ndarray]:
    """(patterns, P) with P[u, v] = P(M(D) = u, M(D') = v) under common random numbers (module
    docstring)."""
    rho = np.linspace(-span * a, span * a, grid)
    w = stats.laplace.pdf(rho, scale=a)
    w /= w.sum()
    t = sm.T + rho[None, :] - np.asarray(q, float)[:, None]
    tp = sm.T + rho[None, :] - np.asarray(qp, float)[:, None]
    F = lambda z: stats.laplace.cdf(z, scale=b)  # noqa: E731
    n = len(q)
    J = np.empty((n, 3, 3, grid))  # answer codes 0 ⊥, 1 ⊤, 2 aborted (marginalised)
    J[:, 1, 1], J[:, 0, 0] = 1 - F(np.maximum(t, tp)), F(np.minimum(t, tp))
    J[:, 1, 0], J[:, 0, 1] = np.maximum(0, F(tp) - F(t)), np.maximum(0, F(t) - F(tp))
    J[:, 0, 2], J[:, 1, 2], J[:, 2, 0], J[:, 2, 1] = F(t), 1 - F(t), F(tp), 1 - F(tp)
    J[:, 2, 2] = 1.0
    pats = patterns(n, c)
    idx = np.array([list(p) + [2] * (n - len(p)) for p in pats])
    P = np.empty((len(pats), len(pats)))
    for i, u in enumerate(idx):
        prod = np.ones((len(pats), grid))
        for k in range(n):
            prod *= J[k, u[k], idx[:, k]]
        P[i] = prod @ w
    return pats, P


def _block(m: int, t: np.ndarray, tp: np.ndarray, b: float, up: bool) -> np.ndarray:
    """M[k, k', g]: P(k of the m queries ⊤ on D and k' on D' | ρ_g) for thresholds t (D) and tp (D')
    of the query noise Lap(b); ``up``: tp ≤ t (D' says ⊤ whenever D does), else the reverse."""
    F = lambda z: stats.laplace.cdf(z, scale=b)  # noqa: E731
    lo, hi = (tp, t) if up else (t, tp)
    both, one, neither = 1 - F(hi), F(hi) - F(lo), F(lo)
    M = np.zeros((m + 1, m + 1, t.size))
    for i in range(m + 1):  # ⊤ on both
        for j in range(m + 1 - i):  # ⊤ on the side with the lower threshold only
            v = math.comb(m, i) * math.comb(m - i, j) * both ** i * one ** j * neither ** (m - i - j)
            M[(i, i + j) if up else (i + j, i)] += v
    return M


def grouped_law(m: int, l1: float, l2: float, a: float, b: float, n: int = 10,
                grid: int = 4001, span: float = 40.0) -> np.ndarray:
    """P[(k₁, k₂), (k₁', k₂')] for SVT with no abort on the pair "first m queries l₁ → l₁ + 1, the
    rest l₂ → l₂ − 1" under common random numbers (module docstring, "No abort")."""
    rho = np.linspace(-span * a, span * a, grid)
    w = stats.laplace.pdf(rho, scale=a)
    w /= w.sum()
    up = _block(m, sm.T + rho - l1, sm.T + rho - (l1 + 1), b, True)
    down = _block(n - m, sm.T + rho - l2, sm.T + rho - (l2 - 1), b, False)
    P = np.einsum("acg,bdg,g->abcd", up, down, w)
    k = up.shape[0] * down.shape[0]
    return P.reshape(k, k)


def _abort_law(m: int, l1: float, l2: float, a: float, b: float, c: int) -> np.ndarray:
    """:func:`joint_law` of the pair "first m queries l₁ → l₁ + 1, the rest l₂ → l₂ − 1"."""
    q = np.r_[np.full(m, l1), np.full(10 - m, l2)]
    return joint_law(q, q + np.r_[np.ones(m), -np.ones(10 - m)], a, b, c)[1]


def _pair_loss(P: np.ndarray) -> float:
    """max over outputs of |ln P_D − ln P_D'|: the pair's loss (its marginals are P's sums)."""
    return float(np.max(np.abs(np.log(P.sum(1)) - np.log(P.sum(0)))))


def ceiling(P: np.ndarray, n: float, alpha: float = ALPHA) -> tuple[float, Optional[dict]]:
    """The largest validated bound at expected counts over the likelihood-ratio-ordered unions of
    patterns, both directions, every method and split (module docstring)."""
    p, q = P.sum(1), P.sum(0)
    best: tuple[float, Optional[dict]] = (0.0, None)
    for direction, (num, den, both) in enumerate(((p, q, P), (q, p, P.T))):
        r = np.log(np.maximum(num, 1e-300)) - np.log(np.maximum(den, 1e-300))
        order = np.argsort(-r)
        for k in range(1, order.size + 1):
            s = order[:k]
            x, y, a = num[s].sum() * n, den[s].sum() * n, both[np.ix_(s, s)].sum() * n
            if x < 1:
                continue
            for m in ("marginal", "ratio", "paired"):
                counts = Counts(int(n), int(n), int(round(x)), int(round(y)),
                                int(round(a)) if m == "paired" else None,
                                n if m == "ratio" else None, n if m == "ratio" else None)
                for split in SPLITS[m]:
                    v = validated_bound(m, counts, alpha, split).epsilon_lb
                    if v > best[0]:
                        # the spread of the bound from sample to sample: the standard error of
                        # ln(x/y), coupled rows (paired) or independent counts
                        se = (math.sqrt(max(x - a, 0) + max(y - a, 0)) / x if m == "paired"
                              else math.sqrt(1 / x + 1 / max(y, 1)))
                        best = (v, {"method": m, "patterns": k, "direction": direction,
                                    "p": float(num[s].sum()), "q": float(den[s].sum()),
                                    "bound_sd": se})
    return best


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", help="only this row (repeatable)")
    args = ap.parse_args(argv)
    import json

    from _record import RESULTS

    truth = json.loads((RESULTS / "structured_truth.json").read_text())["rows"]
    suite_file = RESULTS / "structured_suite.json"
    suite = {}
    if suite_file.exists():
        for r in json.loads(suite_file.read_text())["rows"]:
            suite[r["mechanism"]] = r.get("at_90", {}).get("epsilon_lb") if r.get("confidence") != 0.9 \
                else r.get("epsilon_lb")
    started, lines, rows = machine(), [], []
    n_val, n_all = VALIDATION_SHARE * BUDGET / 2, BUDGET / 2
    emit(lines, f"{'row':<18} {'true ε':>7} {'target':>7} {'suite':>7} {'ceiling':>8} {'(all)':>7} "
                f"{'sd':>6} {'P(hit)':>5}  "
                f"best pair (moved up / down at levels), its event; best ceiling by the number moved up")
    laws = {name: (partial(_abort_law, a=a, b=b, c=c), MOVED_UP, LEVELS, False)
            for name, ((a, b), c) in _rows().items()}
    laws.update({name: (partial(grouped_law, a=a, b=b), NO_ABORT_MOVED_UP, NO_ABORT_LEVELS, True)
                 for name, (a, b) in _no_abort_rows().items()})
    for name, (law, moved_up, levels, no_abort) in laws.items():
        if args.only and name not in args.only and not any(SAME_LAW.get(o) == name for o in args.only):
            continue
        cands = []
        for m, l1, l2 in itertools.product(moved_up, levels, levels):
            P = law(m, l1, l2)
            v, how = ceiling(P, n_val)
            cands.append({"moved_up": m, "levels": [l1, l2], "pair_loss": _pair_loss(P), "ceiling": v,
                          "event": how})
        cands.sort(key=lambda d: -d["ceiling"])
        top = cands[0]
        if no_abort:
            m = top["moved_up"]
            r = optimize.minimize(lambda z: -ceiling(law(m, *z), n_val)[0], top["levels"],
                                  method="Nelder-Mead", options={"maxfev": 40, "xatol": 0.25})
            if -r.fun > top["ceiling"]:
                P = law(m, *r.x)
                top = {"moved_up": m, "levels": [float(v) for v in r.x], "refined": True,
                       "pair_loss": _pair_loss(P),
                       "ceiling": float(-r.fun), "event": ceiling(P, n_val)[1]}
        all_budget = ceiling(law(top["moved_up"], *top["levels"]), n_all)[0]
        per_m = {m: max(d["ceiling"] for d in cands if d["moved_up"] == m) for m in moved_up}
        sd = top["event"]["bound_sd"]
        for row in [name] + [k for k, v in SAME_LAW.items() if v == name]:
            t = truth[row]["loss"]
            # how often an auditor that knew the pair and the event would meet the target
            reach = float(stats.norm.cdf((top["ceiling"] - TARGET_SHARE * t) / sd))
            rec = {"mechanism": row, "true_epsilon": t, "target": TARGET_SHARE * t,
                   "suite_epsilon_lb_90": suite.get(row), "ceiling": top["ceiling"],
                   "ceiling_whole_budget": all_budget, "best_pair": top,
                   "best_ceiling_by_moved_up": per_m, "candidates": cands, "same_law_as": SAME_LAW.get(row),
                   "bound_sd": sd, "oracle_meets_target_probability": reach}
            rows.append(rec)
            fmt = lambda v: "   -   " if v is None else f"{v:7.4f}"  # noqa: E731
            ev = top["event"]
            emit(lines, f"{row:<18} {t:7.4f} {TARGET_SHARE * t:7.4f} {fmt(suite.get(row))} "
                        f"{top['ceiling']:8.4f} {all_budget:7.4f} {sd:6.4f} {reach:5.2f}  "
                        f"{top['moved_up']} up at "
                        f"{top['levels'][0]:.3g}, {10 - top['moved_up']} down at {top['levels'][1]:.3g}"
                        f"{' (refined)' if top.get('refined') else ''}; "
                        f"{ev['patterns']} {'group(s) of patterns' if no_abort else 'pattern(s)'}, p = {ev['p']:.4f}, {ev['method']}; "
                        f"by {'/'.join(map(str, per_m))} up: "
                        + "/".join(f"{v:.4f}" for v in per_m.values()))
    emit(lines)
    emit(lines, "ceiling: the largest validated bound at 90% at expected counts of n = 0.525·2e7/2 per "
                "dataset (the suite's validation size) over the candidate pairs and their likelihood-"
                "ratio-ordered pattern events; (all): the same on the best pair with n = 1e7 (every "
                "sample validates); sd: the bound's spread from sample to sample (the standard error "
                "of ln(x/y)); P(hit): how often that oracle's bound would reach the target, "
                "Φ((ceiling − target)/sd). A target above the ceiling is out of reach of any auditor that "
                "validates on the suite's share; above (all), of any auditor at this budget.")
    save("structured_ceilings", {"machine": started, "budget": BUDGET, "confidence": 1 - ALPHA,
                                 "validation_per_dataset": n_val, "rows": rows}, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
