"""Speed of the quantile EM and Duff samplers and of the median's smooth sensitivity at n = 10⁶.

Targets: one quantile-EM or Duff draw on n = 10⁶ sorted points in ≤ 1 s (the whole call:
clamp, sort, cell weights, log-sum-exp, the draw); the smooth sensitivity on n = 10⁶ in ≤ 2 s
(including the sort of unsorted data). Each figure is the median of ``repeats`` timed calls on one
core (time.perf_counter); the minimum is recorded too. Timings depend on machine load, which is
recorded with them.

Inputs for the smooth sensitivity: N(0, 1) (unsorted), uniform on [−10, 10] (its pruning is least
effective: the candidate values are close), points spaced geometrically toward both ends, and a
tie-heavy integer sample; β from 10⁻⁴ (the Laplace SS at ε = 0.5 and δ = 10⁻³ uses β ≈ 0.02) to 1.

Run: ``python benchmarks/speed_quantile_duff_ss.py`` or ``--quick`` (n = 10⁵, nothing saved).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from _record import emit, save

from dpaudit.rng import generator, root_sequence
from dpaudit.reference.duff import Duff
from dpaudit.reference.quantile import QuantileEM
from dpaudit.reference.analysis.smooth_sensitivity import median_smooth_sensitivity

LO, HI = -10.0, 10.0


def timed(f, repeats: int) -> tuple[float, float]:
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts), min(ts)


def inputs(n: int, rng: np.random.Generator) -> dict:
    half = n // 2
    geo = np.r_[LO + np.geomspace(1e-9, 10, half), HI - np.geomspace(1e-9, 10, n - half)]
    return {"normal": rng.normal(0.0, 1.0, n), "uniform": rng.uniform(LO, HI, n),
            "geometric ends": rng.permutation(geo), "integer ties": rng.integers(-5, 6, n).astype(float)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 10⁵, 2 repeats, nothing saved")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=20261122)
    a = ap.parse_args(argv)
    n, repeats = (100_000, 2) if a.quick else (a.n, a.repeats)
    rng = generator(root_sequence(a.seed))
    data = inputs(n, rng)
    lines: list[str] = []
    rows = []
    emit(lines, f"n = {n:,}, median of {repeats} calls (min in brackets), seed {a.seed}")
    emit(lines)
    emit(lines, "one draw on sorted points (target ≤ 1 s):")
    sorted_normal = np.sort(data["normal"])
    draw_ok = True
    for name, mech in (("quantile EM q=0.5 replace", QuantileEM(1.0, 0.5, LO, HI)),
                       ("quantile EM q=0.9 add-remove", QuantileEM(1.0, 0.9, LO, HI, "add-remove")),
                       ("Duff AVG", Duff(1.0, LO, HI, "avg")), ("Duff LOW", Duff(1.0, LO, HI, "low"))):
        g = generator(root_sequence(a.seed + 1))
        med, mn = timed(lambda: mech.sample(sorted_normal, g), repeats)
        batch, _ = timed(lambda: mech.sample(sorted_normal, g, 100_000), 1)
        draw_ok &= med <= 1.0
        emit(lines, f"  {name:30s}{med:8.3f} s [{mn:.3f}]   (10⁵ draws in one call: {batch:.3f} s)")
        rows.append({"what": "one draw", "mechanism": name, "median_s": med, "min_s": mn, "batch_1e5_s": batch})
    emit(lines)
    emit(lines, "smooth sensitivity, unsorted input, sort included (target ≤ 2 s):")
    ss_ok = True
    for rel in ("replace", "add-remove"):
        for name, d in data.items():
            for beta in (1e-4, 1e-2, 1.0):
                med, mn = timed(lambda: median_smooth_sensitivity(d, beta, LO, HI, rel), repeats)
                ss_ok &= med <= 2.0
                emit(lines, f"  {rel:11s}{name:16s}β = {beta:<8g}{med:8.3f} s [{mn:.3f}]")
                rows.append({"what": "smooth sensitivity", "neighbours": rel, "input": name, "beta": beta,
                             "median_s": med, "min_s": mn})
    emit(lines)
    emit(lines, f"one draw ≤ 1 s: {'yes' if draw_ok else 'NO'}; smooth sensitivity ≤ 2 s: {'yes' if ss_ok else 'NO'}")
    if not a.quick:
        save("speed_quantile_duff_ss", {"n": n, "repeats": repeats, "seed": a.seed, "rows": rows,
                                        "draw_ok": draw_ok, "smooth_sensitivity_ok": ss_ok}, lines)
    return 0 if draw_ok and ss_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
