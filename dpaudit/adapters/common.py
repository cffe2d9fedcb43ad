"""What every library adapter shares, in plain Python (no library needed to use or test it).

* :class:`LibrarySpec`: a :class:`~dpaudit.spec.MechanismSpec` that also records the library,
  its version, the claim as the library states it, and whether the library draws its own
  randomness (then a rerun from the seed gives other numbers; the bound stays valid).
* :func:`require`: import a library lazily, or fail with one line naming the install command.
* :func:`relation_for_metric` and :func:`claim_for_measure`: OpenDP's input metrics and output
  measures, by name, as dpaudit neighbour relations and (ε, δ) claims.
* :func:`zcdp_epsilon`: ρ-zCDP as (ε, δ)-DP at a stated δ (Canonne, Kamath and Steinke 2020).
"""

from __future__ import annotations

import importlib
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from dpaudit.claims import Neighbours, check_delta
from dpaudit.errors import InvalidArgument, UsageError
from dpaudit.spec import MechanismSpec

__all__ = ["LibrarySpec", "MissingLibrary", "TESTED_VERSIONS", "require", "library_version",
           "relation_for_metric", "claim_for_measure", "zcdp_epsilon", "make_spec"]

#: The versions the adapters were tested with (the ``dpaudit[libraries]`` extra pins them):
#: import name -> (distribution name, version).
TESTED_VERSIONS: Mapping[str, tuple[str, str]] = {
    "opendp": ("opendp", "0.16.0"),
    "diffprivlib": ("diffprivlib", "0.6.6"),
    "pydp": ("python-dp", "1.1.5"),
}


class MissingLibrary(UsageError):
    """A library adapter was used but its library is not installed."""

    def __init__(self, module: str) -> None:
        dist, version = TESTED_VERSIONS.get(module, (module, "?"))
        self.module = module
        super().__init__(f"{dist} is not installed: pip install 'dpaudit[libraries]' "
                         f"(tested with {dist} {version})")


def require(module: str) -> Any:
    """Import ``module`` (``opendp``, ``diffprivlib``, ``pydp``) or raise :class:`MissingLibrary`.
    Only a missing module counts as missing: a library that is present but broken (e.g. an
    incompatible dependency) raises its own ImportError with the cause."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module or (exc.name or "").split(".")[0] == module:
            raise MissingLibrary(module) from None
        raise


def checked(label: str, make: Callable[[], Any]) -> Any:
    """``make()``, the library validating a target's parameters; what it raises becomes one
    :class:`~dpaudit.errors.InvalidArgument` line naming the target (a ValueError from
    diffprivlib, a RuntimeError from python-dp's C++ core), as dpaudit's own checks read."""
    try:
        return make()
    except Exception as exc:  # noqa: BLE001 - the library's own validation, whatever its type
        text = str(exc).strip().splitlines()
        raise InvalidArgument(f"{label}: the library refused its parameters: {type(exc).__name__}"
                              + (f": {text[0][:300]}" if text else "")) from None


def library_version(module: str) -> str:
    """The installed version of the library's distribution (``"unknown"`` when unreadable)."""
    from importlib import metadata

    dist = TESTED_VERSIONS.get(module, (module, ""))[0]
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True, slots=True)
class LibrarySpec(MechanismSpec):
    """A mechanism of a DP library with the library's own claim.

    ``library``: ``{"name", "version", "claim", "notion", "own_randomness"}`` where ``claim`` is
    the claim as the library states it (e.g. ``"ρ-zCDP, ρ = 0.5, at d_in = 1 under
    SymmetricDistance"``), ``notion`` the neighbour notion it implies, and ``own_randomness`` is
    True when the library ignores dpaudit's generator (OpenDP, python-dp): the ε lower bound is
    still valid, but the numbers of a rerun with the same seed differ.
    """

    library: Mapping[str, Any] = field(default_factory=dict, compare=False)


def make_spec(module: str, func: Callable, *, label: str, epsilon: float, delta: float,
              neighbours: Any, domain: Any, size: int, claim_text: str, notion: str,
              own_randomness: bool) -> LibrarySpec:
    """A :class:`LibrarySpec` for ``func`` (``f(data, rng, size=k)``) of library ``module``.

    ``neighbours`` is a relation or a notion users speak (:func:`dpaudit.claims.claim_notion`:
    ``bounded``, ``unbounded``, ``add-remove-public-size``, ``change-one``); a notion whose
    neighbours are two steps of the audited relation audits the group-privacy claim it implies."""
    from dpaudit.claims import claim_notion

    version = library_version(module)
    dist = TESTED_VERSIONS.get(module, (module, ""))[0]
    notion_used = claim_notion(neighbours)
    audited = notion_used.translate(epsilon, delta)
    if notion_used.group > 1:
        claim_text += f"; audited as ({audited.epsilon!r}, {audited.delta!r}) under {notion_used.relation.value}"
    base = MechanismSpec.from_function(func, name=f"{dist} {version}: {label}", epsilon=audited.epsilon,
                                       delta=audited.delta, neighbours=notion_used.relation,
                                       domain=domain, size=size)
    fields = {f: getattr(base, f) for f in MechanismSpec.__dataclass_fields__}
    fields["source"] = None  # the adapter's closure is not where the user's target is defined
    info = {"name": dist, "version": version, "claim": claim_text, "notion": notion,
            "own_randomness": bool(own_randomness)}
    return LibrarySpec(**fields, library=info)


# -- OpenDP metrics and measures, by name -----------------------------------------------------------

def _metric_name(metric: Any) -> str:
    """``"SymmetricDistance"`` from ``SymmetricDistance()``, ``"AbsoluteDistance"`` from
    ``AbsoluteDistance(T=f64)`` (an OpenDP Metric, its ``str`` or its type name)."""
    text = str(getattr(metric, "type", None) or metric)
    # OpenDP names some types by their Rust path: opendp::metrics::LInfDistance<i32>
    return re.split(r"[(<]", text.strip(), maxsplit=1)[0].split("::")[-1]


def relation_for_metric(metric: Any, d_in: Any) -> tuple[Neighbours, float]:
    """The dpaudit relation that the input metric at distance ``d_in`` describes, and the factor
    by which a unit move of dpaudit's relation is scaled to reach ``d_in``.

    ==========================================  =====  ==============================================
    metric                                      d_in   relation
    ==========================================  =====  ==============================================
    SymmetricDistance, InsertDeleteDistance     1      add-remove (one record added or removed)
    SymmetricDistance, InsertDeleteDistance     2      replace (a change is a removal and an addition)
    ChangeOneDistance, HammingDistance          1      replace (one record changed; size unchanged)
    DiscreteDistance                            1      replace (a single record, any change)
    AbsoluteDistance, LInfDistance              d      linf, moves scaled by d
    L1Distance                                  d      l1, moves scaled by d
    ==========================================  =====  ==============================================

    (OpenDP's metric definitions: ``opendp.metrics`` module documentation.) Anything else is an
    InvalidArgument naming the metric.
    """
    name = _metric_name(metric)
    records = {"SymmetricDistance": {1: Neighbours.ADD_REMOVE, 2: Neighbours.REPLACE},
               "InsertDeleteDistance": {1: Neighbours.ADD_REMOVE, 2: Neighbours.REPLACE},
               "ChangeOneDistance": {1: Neighbours.REPLACE}, "HammingDistance": {1: Neighbours.REPLACE},
               "DiscreteDistance": {1: Neighbours.REPLACE}}
    if name in records:
        allowed = records[name]
        if isinstance(d_in, bool) or not isinstance(d_in, (int, float)) or d_in not in allowed:
            wanted = " or ".join(f"{k} ({v.description})" for k, v in allowed.items())
            raise InvalidArgument.bad("d_in", d_in, f"{wanted} under {name}")
        return allowed[int(d_in)], 1.0
    scaled = {"AbsoluteDistance": Neighbours.LINF, "LInfDistance": Neighbours.LINF, "L1Distance": Neighbours.L1}
    if name in scaled:
        if isinstance(d_in, bool) or not isinstance(d_in, (int, float)) or not (
                math.isfinite(float(d_in)) and float(d_in) > 0):
            raise InvalidArgument.bad("d_in", d_in, f"a finite distance > 0 under {name}")
        return scaled[name], float(d_in)
    raise InvalidArgument.bad("input metric", str(metric),
                              "one of SymmetricDistance, InsertDeleteDistance, ChangeOneDistance, "
                              "HammingDistance, DiscreteDistance, AbsoluteDistance, LInfDistance, "
                              "L1Distance (dpaudit has no relation for the others)")


def claim_for_measure(measure: Any, distance: Any, delta: Optional[float]) -> tuple[float, float, str]:
    """``(ε, δ, text)``: the claim that an OpenDP privacy map's output ``distance`` makes under the
    output ``measure``, with ``text`` the claim as OpenDP states it.

    * MaxDivergence: ε-DP with ε = the distance.
    * ZeroConcentratedDivergence: ρ-zCDP with ρ = the distance, stated as (ε, δ)-DP at the given
      δ by :func:`zcdp_epsilon` (δ is required).
    * Approximate(MaxDivergence) / FixedSmoothedMaxDivergence: the map's (ε, δ) pair.
    * SmoothedMaxDivergence: a privacy profile; ε = profile.epsilon(δ) at the given δ.
    """
    name = _metric_name(measure)
    text = str(measure)
    if name == "MaxDivergence":
        return float(distance), 0.0, f"ε-DP, ε = {float(distance)!r} ({text})"
    if name == "ZeroConcentratedDivergence":
        if delta is None:
            raise InvalidArgument("a ρ-zCDP measurement needs delta= (the δ at which its (ε, δ) "
                                  "claim is audited)")
        rho = float(distance)
        eps = zcdp_epsilon(rho, delta)
        return eps, float(delta), f"ρ-zCDP, ρ = {rho!r} ({text}); as (ε, δ) = ({eps!r}, {delta!r})"
    if name == "Approximate" and "ZeroConcentrated" in text:
        # approximate zCDP (ρ, δ): ρ-zCDP except with probability δ, so (ε(δ′), δ + δ′)-DP
        if delta is None:
            raise InvalidArgument("an approximate-zCDP measurement needs delta= (the δ′ at which its "
                                  "ρ is stated as ε; the claim is then (ε(δ′), δ + δ′))")
        rho, d = (float(v) for v in distance)
        if rho == 0.0:
            return 0.0, d, f"approximate zCDP (ρ, δ) = (0.0, {d!r}) ({text}); as (ε, δ) = (0.0, {d!r})"
        eps = zcdp_epsilon(rho, delta)
        total = min(d + float(delta), 1.0)
        return eps, total, (f"approximate zCDP (ρ, δ) = ({rho!r}, {d!r}) ({text}); as (ε, δ) = "
                            f"({eps!r}, {total!r}) at δ′ = {delta!r}")
    if name in ("Approximate", "FixedSmoothedMaxDivergence"):
        eps, d = distance
        return float(eps), float(d), f"(ε, δ)-DP, (ε, δ) = ({float(eps)!r}, {float(d)!r}) ({text})"
    if name == "SmoothedMaxDivergence":
        if delta is None:
            raise InvalidArgument("a privacy-profile measurement needs delta= (the δ at which ε is read)")
        eps = float(distance.epsilon(delta))
        return eps, float(delta), f"privacy profile ({text}); ε({delta!r}) = {eps!r}"
    raise InvalidArgument.bad("output measure", text, "MaxDivergence, ZeroConcentratedDivergence, "
                              "Approximate(MaxDivergence) or SmoothedMaxDivergence")


def zcdp_epsilon(rho: Any, delta: Any) -> float:
    """The ε at which ρ-zCDP implies (ε, δ)-DP, by Canonne, Kamath and Steinke (2020), "The
    Discrete Gaussian for Differential Privacy", Proposition 12 (Corollary 13):

        δ = inf_{α>1} exp((α − 1)(αρ − ε)) / (α − 1) · (1 − 1/α)^α,  so
        ε(δ) = inf_{α>1}  αρ + ln(1 − 1/α) + (ln(1/δ) − ln α)/(α − 1).

    Never above Bun and Steinke's (2016, Prop. 1.3) ρ + 2√(ρ ln(1/δ)); the infimum is taken
    numerically over ln(α − 1) (scipy's bounded Brent) and then by a fine grid around it, so the
    result is within 1e-9 relative of the exact value and never below it.
    """
    from scipy.optimize import minimize_scalar

    if isinstance(rho, bool) or not isinstance(rho, (int, float)) or not (math.isfinite(rho) and rho > 0):
        raise InvalidArgument.bad("rho", rho, "a finite number > 0")
    d = check_delta(delta)
    if d <= 0.0:
        raise InvalidArgument.bad("delta", delta, "a number in (0, 1): pure DP does not follow from zCDP")
    rho, log_inv = float(rho), math.log(1.0 / d)

    def eps(t: float) -> float:  # t = ln(α − 1), so α > 1 for every real t
        a = 1.0 + math.exp(t)
        return a * rho + math.log1p(-1.0 / a) + (log_inv - math.log(a)) / (a - 1.0)

    best = minimize_scalar(eps, bounds=(-30.0, 30.0), method="bounded", options={"xatol": 1e-12})
    value = min(float(best.fun), rho + 2.0 * math.sqrt(rho * log_inv))
    return max(value, 0.0)
