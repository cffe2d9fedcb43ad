"""Every bound of ``benchmarks/results/curves.json`` against the true curve of its mechanism.

``benchmarks/curves.py`` audits mechanisms whose privacy curves are known exactly; this script
reads its record (no sampling) and checks that no reported lower bound is above the truth:

* the Gaussian rows (``calibrated``: σ = 1, μ = 1; ``mu_lower_bound``: the row's ``true_mu``;
  ``opendp``: scale 4, μ = 1/4; ``sigma_0.8``: μ = 1.25): μ_LB ≤ μ, ρ_LB ≤ μ²/2 (a μ-GDP
  Gaussian is exactly μ²/2-zCDP), δ_LB(0) and δ_LB at the reported ε at most
  δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Dong, Roth and Su 2022, Cor. 2.13); the σ × 0.8
  point audits' ε_LB at most the ε where δ_μ(ε) = 10⁻⁶, and their δ_LB at the claimed ε at most
  δ_μ there;
* the DP-SGD rows: δ_LB(0) and δ_LB at the reported ε at most dp-accounting's privacy-loss
  distribution of the step at the row's own σ (the σ = 0.5 row's true curve, not its claim).

A check is ``bound <= truth + 1e-12``. Writes ``results/curves_soundness.json`` and ``.txt``;
exits 1 if any check fails. Needs dp-accounting (the ``curves`` extra).

Run::

    python benchmarks/curves_soundness.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from scipy.optimize import brentq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._record import RESULTS, emit, save  # noqa: E402

from dpaudit.curves.claims import gdp_delta_formula  # noqa: E402


def delta_mu(mu: float, eps: float) -> float:
    return float(gdp_delta_formula(mu, [eps])[0])


def eps_at(mu: float, delta: float) -> float:
    """The ε at which the μ-GDP curve reaches ``delta`` (δ_μ decreases in ε)."""
    return float(brentq(lambda e: delta_mu(mu, e) - delta, 0.0, 60.0, xtol=1e-12))


def main() -> int:
    from dp_accounting.pld import privacy_loss_distribution as pld

    record = json.loads((RESULTS / "curves.json").read_text(encoding="utf-8"))
    checks: list[dict] = []
    lines: list[str] = []

    def check(label: str, bound, truth: float) -> None:
        if bound is None:
            return
        ok = bound <= truth + 1e-12
        checks.append({"check": label, "bound": bound, "truth": truth, "ok": ok})
        emit(lines, f"{'ok ' if ok else 'ABOVE'} {label}: {bound:.6g} <= {truth:.6g}")

    def gaussian(row: dict, mu: float, where: str) -> None:
        check(f"{where}: mu_LB", row.get("mu_lower_bound"), mu)
        check(f"{where}: rho_LB", row.get("rho_lower_bound"), mu * mu / 2)
        check(f"{where}: delta_LB(0)", row.get("delta_lower_bound_at_0"), delta_mu(mu, 0.0))
        eps = row.get("point_epsilon")
        if eps is not None and row.get("point_delta_lower_bound") is not None:
            check(f"{where}: delta_LB({eps:.4g})", row["point_delta_lower_bound"], delta_mu(mu, eps))

    for r in record["calibrated"]:
        gaussian(r, 1.0 / r["sigma"], f"calibrated {r['claim']}")
    for r in record["mu_lower_bound"]:
        gaussian(r, r["true_mu"], f"{r['mechanism']} {r['claim']}")
    for r in record["opendp"]["rows"]:
        gaussian(r, 0.25, f"opendp {r['claimed']}")
    mu = 1.25  # σ × 0.8 of the σ = 1 Gaussian
    for name, part in record["sigma_0.8"].items():
        for entry in part["curve_audit"]:
            if entry.get("example"):
                gaussian(entry["example"], mu, f"sigma x 0.8 {name} curve audit at {entry['samples']:,}")
        for pa in part["point_audit"]:
            where = f"sigma x 0.8 {name} point audit at {pa['samples_budget']:,}"
            check(f"{where}: eps_LB", pa["epsilon_lower_bound"], eps_at(mu, 1e-6))
            check(f"{where}: delta_LB", pa.get("delta_lower_bound"),
                  delta_mu(mu, part["point_claim"]["epsilon"]))
    for r in record["dp_sgd"]:
        true = pld.from_gaussian_mechanism(standard_deviation=r["sigma"], sensitivity=1.0,
                                           sampling_prob=r["q"])
        where = f"DP-SGD step sigma={r['sigma']}"
        check(f"{where}: delta_LB(0)", r["delta_lower_bound_at_0"], true.get_delta_for_epsilon(0.0))
        eps = r["point_epsilon"]
        check(f"{where}: delta_LB({eps:.4g})", r["point_delta_lower_bound"],
              true.get_delta_for_epsilon(eps))
    above = [c["check"] for c in checks if not c["ok"]]
    emit(lines, f"{len(checks)} checks, {len(above)} above the truth")
    save("curves_soundness", {"of": "curves.json", "curves_date": record["machine"]["date"],
                              "checks": checks, "above": above}, lines)
    return 1 if above else 0


if __name__ == "__main__":
    sys.exit(main())
