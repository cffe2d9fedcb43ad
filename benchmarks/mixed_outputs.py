"""Bounds on sparse-vector variants whose outputs mix an index and a value, or vary in length.

Two mechanisms of Lyu, Su and Li 2017 ("Understanding the sparse vector technique for differential
privacy"), N = 10 queries, threshold T = 1, claimed ε = 0.1, ``linf`` neighbours over [−10, 10]
as in the violation suite, each written in the encodings a user might choose:

* **SVT-index-value** (Alg. 3 with c = 1: ρ ~ Lap(20), ν_i ~ Lap(20)): the (index, noisy answer)
  of the first query with q_i + ν_i ≥ T + ρ, or nothing; as a tuple ``(i, v)`` / ``None``, a list
  ``[i, v]`` / ``[]``, and SVT3's coded vector (−1000 false, −2000 aborted). True ε = N/20 = 0.5:
  p(i, v) = f_ν(v − q_i) ∫_{−∞}^{v−T} f_ρ(r) Π_{j<i} F_ν(T + r − q_j) dr, each of its i factors
  moves by at most e^{1/20} when the queries move by 1, and all do in the limit v → −∞ at i = N
  on q' = q − 1 (benchmarks/statistical/test_encoding_invariance.py). The value is released on the
  grid 2^-30·Z, as the violation suite's real-valued rows are (raw doubles are porous: their
  float-structure events refute any claim, in every encoding).
* **SVT-list** (Alg. 6, no cut-off: ρ ~ Lap(20), ν_i ~ Lap(20)): the indices of every positive
  query, as a list of varying length, and as the 0/1 vector of the violation suite's SVT6. ε ≤ 0.5
  (each of the 10 factors of P(b) = ∫ f_ρ(r) Π_j F_ν or (1 − F_ν) moves by at most e^{1/20}); the
  exact loss of the pair each audit chose, max_b |ln P_D(b)/P_D'(b)| over the 1024 answers b by
  numerical integration over ρ, is recorded next to its bound (a lower end for the true ε).

Each is audited twice: over ``linf`` pairs of 10 queries in [−10, 10] (the pair search's work
included), and as a mechanism of one record x ∈ [0, 1] that sets the queries, so that the pair
x = 1 vs x = 0 is the worst one and the rows compare the events alone.

"before" rows are the same script run with the code before joint events (the commit given),
where tuples with ``None`` and lists of varying length are rejected as a type or length change:
there the only encodings audited are the coded vector and the 0/1 vector.

Run::

    python benchmarks/mixed_outputs.py                       # after: writes results/mixed_outputs.json
    python benchmarks/mixed_outputs.py --tag before          # run from a checkout of the older code
    python benchmarks/mixed_outputs.py --samples 20000000 --only "index-value, pair fixed"
                                                             # writes results/mixed_outputs_2e7.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

import numpy as np

from _record import RESULTS, emit, machine, save

N, T, SCALE, EPS = 10, 1.0, 20.0, 0.1


def _n(size):
    return 1 if size is None else int(size)


def _first(data, rng, n):
    rho = rng.laplace(scale=SCALE, size=(n, 1))
    m = data + rng.laplace(scale=SCALE, size=(n, data.size))
    above = m >= rho + T
    m = np.round(m * 2.0**30) / 2.0**30  # released on the grid 2^-30·Z: the mechanism over the reals
    idx = np.argmax(above, axis=1)
    return above.any(axis=1), idx, m[np.arange(n), idx], m, above


def iv_tuple(data, rng, size=None):
    has, idx, val, _, _ = _first(data, rng, _n(size))
    out = [(int(i), float(v)) if h else None for h, i, v in zip(has, idx, val)]
    return out if size is not None else out[0]


def iv_list(data, rng, size=None):
    has, idx, val, _, _ = _first(data, rng, _n(size))
    out = [[int(i), float(v)] if h else [] for h, i, v in zip(has, idx, val)]
    return out if size is not None else out[0]


def iv_coded(data, rng, size=None):
    _, _, _, m, above = _first(data, rng, _n(size))
    before = np.cumsum(above, axis=1) - above
    out = np.where(before >= 1, -2000.0, np.where(above, m, -1000.0))
    return out if size is not None else out[0]


def _above(data, rng, n):
    rho = rng.laplace(scale=SCALE, size=(n, 1))
    return data + rng.laplace(scale=SCALE, size=(n, data.size)) >= rho + T


def list_indices(data, rng, size=None):
    above = _above(data, rng, _n(size))
    out = [np.flatnonzero(a).tolist() for a in above]
    return out if size is not None else out[0]


def list_bits(data, rng, size=None):
    out = _above(data, rng, _n(size)).astype(np.int8)
    return out if size is not None else out[0]


def _iv_pair(x):
    """One record x ∈ [0, 1] sets the queries (x, …, x, 1 − x): the pair x = 1 vs x = 0 is
    (1, …, 1, 0) vs (0, …, 0, 1), so the audit measures the events, not the pair search."""
    x = float(x[0])
    return np.array([x] * (N - 1) + [1.0 - x])


def _list_pair(x):
    """One record x ∈ [0, 1] sets the queries (x, …, x, −x, …, −x) (five of each)."""
    x = float(x[0])
    return np.array([x] * (N // 2) + [-x] * (N // 2))


def iv_tuple_1(data, rng, size=None):
    return iv_tuple(_iv_pair(data), rng, size)


def iv_list_1(data, rng, size=None):
    return iv_list(_iv_pair(data), rng, size)


def iv_coded_1(data, rng, size=None):
    return iv_coded(_iv_pair(data), rng, size)


def list_indices_1(data, rng, size=None):
    return list_indices(_list_pair(data), rng, size)


def list_bits_1(data, rng, size=None):
    return list_bits(_list_pair(data), rng, size)


LINF = ("linf", (-10, 10), N)
ONE = ("replace", (0, 1), 1)
#: (mechanism, encoding, function, true ε (None: computed per pair), neighbours, domain, size)
ROWS = [("SVT-index-value", "tuple / None", iv_tuple, 0.5, *LINF),
        ("SVT-index-value", "list / []", iv_list, 0.5, *LINF),
        ("SVT-index-value", "coded vector (-1000, -2000)", iv_coded, 0.5, *LINF),
        ("SVT-list", "list of indices", list_indices, None, *LINF),
        ("SVT-list", "0/1 vector", list_bits, None, *LINF),
        # the same mechanisms on one record that fixes the pair: true ε 0.45 (9 of the 10 factors
        # of p(i, v) move by e^{1/20}, at i = N − 1 as v → −∞) and the exact loss of the pair
        ("SVT-index-value, pair fixed", "tuple / None", iv_tuple_1, 0.45, *ONE),
        ("SVT-index-value, pair fixed", "list / []", iv_list_1, 0.45, *ONE),
        ("SVT-index-value, pair fixed", "coded vector (-1000, -2000)", iv_coded_1, 0.45, *ONE),
        ("SVT-list, pair fixed", "list of indices", list_indices_1, None, *ONE),
        ("SVT-list, pair fixed", "0/1 vector", list_bits_1, None, *ONE)]


def list_loss(q: np.ndarray, qp: np.ndarray) -> float:
    """max_b |ln P_q(b) / P_q'(b)| over the 2^N answers b of SVT-list, by the rectangle rule over
    ρ on [−600, 600] (step 0.05; the Laplace(20) tails beyond hold e^{-30} ≈ 1e-13)."""
    from scipy.stats import laplace

    r = np.arange(-600.0, 600.0, 0.05)
    w = laplace.pdf(r, scale=SCALE) * 0.05
    bits = (np.arange(2 ** N)[:, None] >> np.arange(N)) & 1

    def probs(v):
        f = laplace.cdf(T + r[None, :] - np.asarray(v, float)[:, None], scale=SCALE)  # P[below]
        logp = np.zeros((2 ** N, r.size))
        for j in range(N):
            logp += np.where(bits[:, j:j + 1] == 1, np.log1p(-f[j]), np.log(f[j]))
        return np.exp(logp) @ w

    a, b = probs(q), probs(qp)
    return float(np.max(np.abs(np.log(a) - np.log(b))))


def run_row(name, encoding, func, true_eps, neighbours, domain, size, samples, seed,
            confidence) -> dict:
    import dpaudit

    t0, c0 = time.perf_counter(), time.process_time()
    r = dpaudit.audit(func, epsilon=EPS, neighbours=neighbours, domain=domain, size=size,
                      samples=samples, confidence=confidence, seed=seed, early_stop=False)
    cx = r.counterexample
    row = {"mechanism": name, "encoding": encoding, "claimed_epsilon": EPS,
           "epsilon_lb": r.epsilon_lower_bound, "verdict": r.verdict.value,
           "samples": r.samples, "seconds": round(time.perf_counter() - t0, 1),
           "cpu_seconds": round(time.process_time() - c0, 1),
           "output_kind": r.details.get("output_kind"),
           "pair": None if cx is None else [list(cx.dataset), list(cx.neighbour)],
           "event": None if cx is None else cx.event.get("text"),
           "error": None if r.error is None else str(r.error), "true_epsilon": true_eps}
    if name.startswith("SVT-list") and cx is not None:
        q, qp = np.asarray(cx.dataset), np.asarray(cx.neighbour)
        if size == 1:
            q, qp = _list_pair(q), _list_pair(qp)
        row["pair_exact_loss"] = round(list_loss(q, qp), 4)
        row["true_epsilon_interval"] = [row["pair_exact_loss"], 0.5]
    return row


def _code() -> dict:
    import dpaudit

    root = Path(dpaudit.__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        head = None
    return {"dpaudit_checkout": str(root), "dpaudit_commit": head}


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=2_000_000)
    ap.add_argument("--seed", type=int, default=2021)
    ap.add_argument("--confidence", type=float, default=0.9)
    ap.add_argument("--tag", default="after", choices=("after", "before"))
    ap.add_argument("--only", action="append", help="only rows whose mechanism contains this")
    args = ap.parse_args(argv)
    started, lines, rows = machine(**_code()), [], []
    emit(lines, f"{'mechanism':<28} {'encoding':<28} {'eps_LB':>7} {'true eps':>14} {'CPU-s':>6}  event")
    for name, encoding, func, true_eps, *claim in ROWS:
        if args.only and not any(o in name for o in args.only):
            continue
        row = run_row(name, encoding, func, true_eps, *claim, args.samples, args.seed,
                      args.confidence)
        rows.append(row)
        lb = "error" if row["error"] else f"{row['epsilon_lb']:.4f}"
        te = (f"{true_eps:g}" if true_eps is not None else
              "[{:.3f}, 0.5]".format(row["pair_exact_loss"]) if "pair_exact_loss" in row else "≤ 0.5")
        what = row["error"] if row["error"] else row["event"]
        emit(lines, f"{name:<28} {encoding:<28} {lb:>7} {te:>14} {row['cpu_seconds']:>6.1f}  {what}")
    suffix = "" if args.samples == 2_000_000 else f"_{args.samples:.0e}".replace("+0", "")
    stem = ("mixed_outputs" if args.tag == "after" else "mixed_outputs_before") + suffix
    record = {"machine": started, "benchmark": "mixed_outputs", "tag": args.tag,
              "samples": args.samples, "seed": args.seed, "confidence": args.confidence,
              "rows": rows}
    before = RESULTS / f"mixed_outputs_before{suffix}.json"
    if args.tag == "after" and before.exists():
        record["before"] = {"file": before.name,
                            "rows": [{k: r[k] for k in ("mechanism", "encoding", "epsilon_lb", "error")}
                                     for r in json.loads(before.read_text())["rows"]]}
    save(stem, record, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
