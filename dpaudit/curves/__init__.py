"""Privacy claims as curves, and the curve audit (docs/curves.md).

``curve_audit(f, rho=…)`` / ``mu=…`` / ``renyi=[(α, ε_α), …]`` / ``profile=δ(ε)``: a lower
confidence curve of the mechanism's privacy profile δ(ε), simultaneous over every ε, against the
curve the claim implies (:mod:`dpaudit.curves.claims`), with μ and ρ lower bounds
(:mod:`dpaudit.curves.band`) and a frozen :class:`CurveResult` (:mod:`dpaudit.curves.result`).
"""

from dpaudit.curves.audit import curve_audit
from dpaudit.curves.claims import GaussianDP, Profile, RenyiDP, ZCDP, curve_claim
from dpaudit.curves.result import CurveDetails, CurvePoint, CurveResult

__all__ = ["curve_audit", "CurveResult", "CurvePoint", "CurveDetails", "ZCDP", "GaussianDP",
           "RenyiDP", "Profile", "curve_claim"]
