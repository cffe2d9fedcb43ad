"""One-run (canary) audits of DP training: the reference trainers, the real loops, and the null
calibration (docs/training.md).

    python benchmarks/one_run.py [--quick] [--real] [--runs N]

Per trainer (``one_run.json``): m, the claim (the accountant's ε at δ = 1e-5), the verdict, ε_LB of
both tests (Steinke, Nasr & Jagielski 2023; f-DP, Mahloujifar, Melis & Chaudhuri 2025), μ_LB, the
ceiling (every guess right), jax_privacy's ``CanaryScoreAuditor`` on the same scores when it is
installed (``pip install 'dpaudit[jax]'``), and the CPU seconds of the audit (training included).
``--real`` adds the JAX (jax_privacy clipping) and Opacus loops of examples/training/.

Null calibration (``one_run_null.json``, rows ``{"kind", "audits", "refuted", "alpha"}``): the
engine's false refutations at α = 0.05 over N runs each (default 1,000) of score sets whose
canaries were never trained on (claim ε = 0: any refutation is false; the default family and one
pre-registered guesser), randomized response at ε = 1 with reversed scores (claim ε = 1), and the
correct reference trainer at its claim. Beside them, jax_privacy's ``epsilon_from_gdp`` on the same
null score sets (how often it reports ε > 0 and its mean), when installed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "training"))

from _record import emit, machine, save  # noqa: E402

from dpaudit.onerun import Guesser, OneRunSettings, audit_scores, run  # noqa: E402
from dpaudit.reference.dpsgd import BUGS, one_run_spec  # noqa: E402

ALPHA = 0.05
SEED = 20261122


def _peer():
    try:
        from peer import jax_privacy_peer
        import jax_privacy  # noqa: F401
    except ImportError:
        return None
    return jax_privacy_peer


def _row(spec, peer, seed: int) -> dict:
    t0 = time.process_time()
    r = run(spec, OneRunSettings(confidence=1 - ALPHA, seed=seed, peer=peer))
    cpu = time.process_time() - t0
    rec = r.to_record()
    b = rec["bounds"]
    return {"trainer": spec.name, "m": rec["canaries"], "claim_epsilon": rec["claim"]["epsilon"],
            "claim_source": rec["claim"].get("source"), "verdict": rec["verdict"], "error": rec["error"],
            "epsilon_lower_bound": rec["epsilon_lower_bound"],
            "steinke": None if b["steinke"] is None else b["steinke"]["epsilon_lower_bound"],
            "fdp": None if b["fdp"] is None else b["fdp"]["epsilon_lower_bound"],
            "mu": None if b["fdp"] is None else b["fdp"].get("mu_lower_bound"),
            "ceiling": rec["ceiling"], "ceiling_mu": None if b["fdp"] is None else b["fdp"].get("ceiling_mu"),
            "peer": rec["peer"], "cpu_s": round(cpu, 2), "train_s": rec["details"].get("train_s")}


def _null(runs: int, peer, lines: list) -> list:
    rows, peer_pos, peer_sum = [], 0, 0.0
    m = 1000
    for kind, guesser in (("one-run null scores, claim ε = 0, family", None),
                          ("one-run null scores, claim ε = 0, pre-registered guesser",
                           Guesser("score", 1, 100, 100))):
        refuted = 0
        for i in range(runs):
            rng = np.random.default_rng([SEED, 1, i])
            included = rng.random(m) < 0.5
            scores = rng.standard_normal(m)
            r = audit_scores(scores, included, epsilon=0.0, delta=0.0, confidence=1 - ALPHA, seed=i,
                             guesser=guesser, bounds=False)
            refuted += r.refuted
            if peer is not None and guesser is None:
                from jax_privacy.auditing import CanaryScoreAuditor

                e = float(CanaryScoreAuditor(scores[included], scores[~included]).epsilon_from_gdp(ALPHA, 1e-5))
                peer_pos += e > 0
                peer_sum += e
        rows.append({"kind": kind, "audits": runs, "refuted": refuted, "alpha": ALPHA})
        emit(lines, f"{kind}: {refuted}/{runs} refuted at α = {ALPHA}")
    refuted = 0
    eps = 1.0
    p = np.exp(eps) / (1 + np.exp(eps))
    for i in range(runs):
        rng = np.random.default_rng([SEED, 2, i])
        included = rng.random(m) < 0.5
        said_in = np.where(rng.random(m) < p, included, ~included)
        scores = np.where(said_in, -1.0, 1.0) + 0.01 * rng.standard_normal(m)
        refuted += audit_scores(scores, included, epsilon=eps, confidence=1 - ALPHA, seed=i, bounds=False).refuted
    kind = "one-run reversed randomized response at ε = 1, claim ε = 1"
    rows.append({"kind": kind, "audits": runs, "refuted": refuted, "alpha": ALPHA})
    emit(lines, f"{kind}: {refuted}/{runs} refuted at α = {ALPHA}")
    spec = one_run_spec(None, m=1000)
    refuted = 0
    for i in range(runs):
        refuted += run(spec, OneRunSettings(confidence=1 - ALPHA, seed=SEED + i)).refuted
    kind = "one-run correct numpy DP-SGD at its accountant's claim"
    rows.append({"kind": kind, "audits": runs, "refuted": refuted, "alpha": ALPHA})
    emit(lines, f"{kind}: {refuted}/{runs} refuted at α = {ALPHA}")
    if peer is not None:
        emit(lines, f"peer: jax_privacy epsilon_from_gdp on the same {runs} null score sets: ε > 0 in {peer_pos}, "
                    f"mean ε = {peer_sum / runs:.3f}")
    return rows, ({"epsilon_from_gdp_positive": peer_pos, "epsilon_from_gdp_mean": peer_sum / runs,
                   "audits": runs, "note": "jax_privacy 2.0.0 CanaryScoreAuditor.epsilon_from_gdp(0.05, 1e-5)"}
                  if peer is not None else None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--real", action="store_true", help="also the JAX and Opacus loops (optional extras)")
    ap.add_argument("--runs", type=int, default=1000)
    args = ap.parse_args()
    started = machine()
    peer = _peer()
    lines: list[str] = []
    m = 200 if args.quick else 1000
    specs = [one_run_spec(bug, m=m) for bug in (None,) + BUGS] + [one_run_spec(None, m=m, canaries="input")]
    if args.real:
        import jax_dpsgd
        import opacus_dpsgd

        specs += [jax_dpsgd.one_run_spec(None), jax_dpsgd.one_run_spec("mean-noise"), opacus_dpsgd.one_run_spec()]
    rows = []
    for spec in specs:
        row = _row(spec, peer, SEED)
        rows.append(row)
        peer_txt = "" if not row["peer"] else ", peer " + ", ".join(
            f"{k} {v:.3g}" for k, v in row["peer"].items() if isinstance(v, float))
        emit(lines, f"{row['trainer']}: m = {row['m']}, claim ε = {row['claim_epsilon']:.3f}, {row['verdict']}, "
                    f"ε ≥ {row['steinke']:.3f} (Steinke) / {row['fdp']:.3f} (f-DP), μ ≥ {row['mu']:.3f}, "
                    f"ceiling ε {row['ceiling']:.3f}{peer_txt}, {row['cpu_s']} CPU s")
    runs = 50 if args.quick else args.runs
    null_rows, peer_null = _null(runs, peer, lines)
    save("one_run", {"machine": started, "quick": args.quick, "alpha": ALPHA, "seed": SEED, "trainers": rows},
         lines)
    save("one_run_null", {"machine": started, "quick": args.quick, "rows": null_rows, "peer": peer_null},
         [ln for ln in lines if "refuted at" in ln or ln.startswith("peer")])


if __name__ == "__main__":
    main()
