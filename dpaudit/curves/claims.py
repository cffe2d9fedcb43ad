"""Privacy claims stated as curves: each gives the claimed privacy profile δ_claim(ε) on a grid.

A mechanism M is (ε, δ)-DP for a whole curve δ(ε) when, for every ε ≥ 0, every pair of
neighbours D ~ D' (both orders) and every event S, ``P[M(D) ∈ S] ≤ e^ε P[M(D') ∈ S] + δ(ε)``.
The smallest such curve is the mechanism's *privacy profile* (the hockey-stick divergence
``sup_S P[M(D) ∈ S] − e^ε P[M(D') ∈ S]`` over the worst pair; Balle, Barthe and Gaboardi 2018).
The curve audit (:mod:`dpaudit.curves.audit`) refutes a claim when a lower confidence curve of the
mechanism's profile rises above the curve the claim *implies*. The claim types, and the curve each
one means:

:class:`GaussianDP` ``(μ)``
    μ-GDP (Dong, Roth and Su 2022, "Gaussian differential privacy", JRSS B) is *equivalent* to
    (ε, δ_μ(ε))-DP for every ε ≥ 0 with (their Cor. 2.13)

        δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2),

    so the claimed curve is exact: nothing is lost in the conversion. Computed by dp-accounting's
    ``GaussianPrivacyLoss(standard_deviation=1/μ, sensitivity=1).get_delta_for_epsilon`` (the
    Gaussian mechanism of sensitivity 1 and noise 1/μ is exactly μ-GDP) when dp-accounting is
    installed, else by the formula above (:func:`gdp_delta`; the two agree to 1e-15).
:class:`ZCDP` ``(ρ)``
    ρ-zCDP (Bun and Steinke 2016) bounds the Rényi divergences D_α(M(D) ‖ M(D')) ≤ αρ for every
    α > 1. That is *all* it says: it does not say the mechanism is Gaussian, so the curve it
    implies is the best conversion of these Rényi bounds to (ε, δ), not the Gaussian curve
    δ_μ with μ = √(2ρ) (which is the profile of the Gaussian mechanism of that ρ, and lies below:
    a mechanism can be ρ-zCDP and exceed the Gaussian curve). The conversion is (Canonne, Kamath
    and Steinke 2020, "The discrete Gaussian for differential privacy", arXiv:2004.00010v4,
    Prop. 12; also Asoodeh, Liao, Calmon, Kosut and Sankar 2021, arXiv:2001.05990, eq. 20)

        δ(ε) ≤ inf_{α > 1} exp((α − 1)(αρ − ε)) / α · (1 − 1/α)^(α − 1),

    taken together with the total-variation bound δ(ε) ≤ δ(0) = TV ≤ √(1 − e^(−D_α))
    (Bretagnolle and Huber 1979, with D_KL ≤ D_α), the infimum over the orders of :data:`ORDERS`
    (a finite grid: the curve is at least the infimum, so it errs on the claim's side). This is
    dp-accounting's ``rdp_privacy_accountant.compute_delta(orders, α·ρ, ε)``, used when
    installed; the fallback :func:`rdp_delta_formula` is the same formula (tested equal). It is
    also what OpenDP's ``make_zCDP_to_approxDP`` profile states: at ρ = 1/32, δ(0) = 0.1508
    while the Gaussian mechanism's own δ(0) is 0.0995 (the conversion's slack).
:class:`RenyiDP` ``([(α, ε_α), …])``
    (α, ε_α)-RDP at the listed orders (Mironov 2017): the same conversion, over the listed
    orders only (dp-accounting's ``compute_delta`` on them; fallback :func:`rdp_delta_formula`).
:class:`Profile` ``(δ(ε))``
    Any callable curve, taken as stated: an OpenDP ``PrivacyProfile`` (its ``.delta(epsilon)``),
    a dp-accounting ``PrivacyLossDistribution`` (its ``get_delta_for_epsilon``), or a plain
    function of ε. A profile is itself the claim: no conversion.

Every claim class has ``kind``, ``delta(eps)`` (an array of δ_claim, clipped to [0, 1]),
``text``, ``curve`` (which curve it means, in words) and ``to_record()``. :func:`curve_claim`
builds the one claim given by keyword.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

import numpy as np
from scipy.special import log_ndtr, ndtr

from dpaudit.errors import InvalidArgument

__all__ = ["ORDERS", "ZCDP", "GaussianDP", "RenyiDP", "Profile", "CurveClaim", "curve_claim",
           "gdp_delta", "gdp_delta_formula", "zcdp_delta", "rdp_delta", "rdp_delta_formula",
           "rho_for_delta", "binding_order", "default_grid", "check_grid", "has_dp_accounting"]

#: the Rényi orders over which a ρ-zCDP claim is converted: 100 in (1, 2], 400 geometric in
#: [2, 10⁴] (the optimal order for ρ-zCDP at ε is about (ε + ρ)/(2ρ): 10⁴ covers ρ ≥ 10⁻⁴ at
#: ε ≤ 2). At α ≤ 1.01 only the total-variation bound is used (as dp-accounting does).
ORDERS = np.unique(np.concatenate([np.linspace(1.01, 2.0, 100), np.geomspace(2.0, 1e4, 400)]))

#: the default grid ends where the claimed δ falls below this (:func:`default_grid`)
GRID_DELTA = 1e-6
#: ... with this many points, from ε = 0
GRID_POINTS = 41


def has_dp_accounting() -> bool:
    """Whether dp-accounting (``pip install dp-accounting``; the ``curves`` extra) is installed."""
    try:
        import dp_accounting  # noqa: F401
    except ImportError:
        return False
    return True


def _real(name: str, v: Any, *, positive: bool = True) -> float:
    if not isinstance(v, numbers.Real) or isinstance(v, bool) or not math.isfinite(float(v)) \
            or (positive and float(v) <= 0) or float(v) < 0:
        raise InvalidArgument.bad(name, v, "a finite number > 0" if positive else "a finite number >= 0")
    return float(v)


def _eps(eps: Any) -> np.ndarray:
    return np.atleast_1d(np.asarray(eps, dtype=float))


# ---------------------------------------------------------------------------------------------
# the curves

def gdp_delta_formula(mu: float, eps: Any) -> np.ndarray:
    """δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Dong, Roth and Su 2022, Cor. 2.13), the second
    term computed as exp(ε + ln Φ(·)) so that large ε neither overflows nor cancels to garbage."""
    e = _eps(eps)
    if mu <= 0:
        return np.zeros_like(e)
    with np.errstate(over="ignore"):
        d = ndtr(-e / mu + mu / 2) - np.exp(e + log_ndtr(-e / mu - mu / 2))
    return np.clip(d, 0.0, 1.0)


def gdp_delta(mu: float, eps: Any) -> np.ndarray:
    """The μ-GDP curve δ_μ(ε) (module docstring): dp-accounting's analytic Gaussian privacy loss
    when installed, else :func:`gdp_delta_formula`."""
    e = _eps(eps)
    if mu <= 0:
        return np.zeros_like(e)
    if has_dp_accounting():
        from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss

        loss = GaussianPrivacyLoss(standard_deviation=1.0 / mu, sensitivity=1.0)
        return np.clip(np.asarray([loss.get_delta_for_epsilon(float(x)) for x in e], dtype=float), 0.0, 1.0)
    return gdp_delta_formula(mu, e)


def rdp_delta_formula(orders: Any, rdp: Any, eps: Any) -> np.ndarray:
    """δ(ε) from Rényi bounds D_α ≤ r_α at the given orders (module docstring; Canonne, Kamath and
    Steinke 2020, Prop. 12, with √(1 − e^(−r_α)) ≥ TV): for each ε,

        ln δ = min over orders of min(½ ln(1 − e^(−r_α)), (α − 1)(r_α − ε + ln(1 − 1/α)) − ln α),

    the second term only where α > 1.01 (it is unstable as α → 1); δ ≤ 1. The same numbers as
    dp-accounting's ``compute_delta`` (vectorised over orders and ε)."""
    a = np.asarray(orders, dtype=float).reshape(-1, 1)
    r = np.asarray(rdp, dtype=float).reshape(-1, 1)
    e = _eps(eps).reshape(1, -1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        kl = np.where(r > 0, 0.5 * np.log1p(-np.exp(-r)), -np.inf)
        kl = np.broadcast_to(kl, (a.shape[0], e.shape[1]))
        cks = (a - 1.0) * (r - e + np.log1p(-1.0 / a)) - np.log(a)
        log_delta = np.where(a > 1.01, np.minimum(kl, cks), kl)
    return np.minimum(np.exp(np.min(log_delta, axis=0)), 1.0)


def rdp_delta(orders: Any, rdp: Any, eps: Any) -> np.ndarray:
    """δ(ε) from Rényi bounds: dp-accounting's ``compute_delta`` when installed, else
    :func:`rdp_delta_formula` (the same conversion)."""
    e = _eps(eps)
    if has_dp_accounting():
        from dp_accounting.rdp.rdp_privacy_accountant import compute_delta

        o, r = list(map(float, orders)), list(map(float, rdp))
        return np.asarray([compute_delta(o, r, float(x))[0] for x in e], dtype=float)
    return rdp_delta_formula(orders, rdp, e)


def binding_order(claim: Any, eps: float) -> Optional[float]:
    """The Rényi order α whose bound gives the claimed δ at ``eps`` (the argmin over orders of
    :func:`rdp_delta_formula`'s ln δ, the conversion bound of the Kullback-Leibler term taken as
    the order ``1``): the order at which a zCDP or RDP claim is tested there. None for a claim
    that is no Rényi bound (GDP, a profile)."""
    kind = getattr(claim, "kind", None)
    if kind == "zcdp":
        orders, rdp = ORDERS, ORDERS * float(claim.rho)
    elif kind == "rdp":
        orders = np.asarray([a for a, _ in claim.orders], dtype=float)
        rdp = np.asarray([e for _, e in claim.orders], dtype=float)
    else:
        return None
    e = float(eps)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        kl = np.where(rdp > 0, 0.5 * np.log1p(-np.exp(-rdp)), -np.inf)
        cks = (orders - 1.0) * (rdp - e + np.log1p(-1.0 / orders)) - np.log(orders)
        cks = np.where(orders > 1.01, cks, np.inf)
    i = int(np.nanargmin(cks))
    return 1.0 if float(np.nanmin(kl)) < float(cks[i]) else float(orders[i])


def zcdp_delta(rho: float, eps: Any) -> np.ndarray:
    """The curve a ρ-zCDP claim implies: :func:`rdp_delta` of r_α = αρ over :data:`ORDERS`."""
    return rdp_delta(ORDERS, ORDERS * float(rho), eps)


def rho_for_delta(eps: float, delta: float) -> float:
    """The smallest ρ whose implied curve reaches ``delta`` at ``eps`` (0 when ``delta`` ≤ 0): a
    mechanism with δ(ε) ≥ delta is ρ'-zCDP for no ρ' below it, since the implied curve increases
    with ρ. Solved by Brent's method on ρ (the implied δ is continuous and increasing in ρ)."""
    from scipy.optimize import brentq

    if not delta > 0:
        return 0.0
    if delta >= 1.0:
        return math.inf

    def f(r: float) -> float:
        return float(zcdp_delta(r, eps)[0]) - delta

    hi = 1.0
    while f(hi) < 0:
        hi *= 4.0
        if hi > 1e8:
            return math.inf
    lo = 1e-12
    if f(lo) >= 0:
        return 0.0
    return float(brentq(f, lo, hi, xtol=1e-10, rtol=1e-8))


# ---------------------------------------------------------------------------------------------
# the claim types

@dataclass(frozen=True, slots=True)
class GaussianDP:
    """μ-Gaussian DP (Dong, Roth and Su 2022): the exact curve δ_μ(ε) (module docstring)."""

    mu: float
    kind = "gdp"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", _real("mu", self.mu))

    def delta(self, eps: Any) -> np.ndarray:
        return gdp_delta(self.mu, eps)

    @property
    def text(self) -> str:
        return f"{self.mu:g}-GDP"

    @property
    def curve(self) -> str:
        return ("δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2): μ-GDP is equivalent to this curve "
                "(Dong, Roth and Su 2022, Cor. 2.13)")

    def to_record(self) -> dict:
        return {"type": self.kind, "mu": self.mu, "text": self.text, "curve": self.curve}


@dataclass(frozen=True, slots=True)
class ZCDP:
    """ρ-zero-concentrated DP (Bun and Steinke 2016): the curve its Rényi bounds imply."""

    rho: float
    kind = "zcdp"

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", _real("rho", self.rho))

    def delta(self, eps: Any) -> np.ndarray:
        return zcdp_delta(self.rho, eps)

    @property
    def text(self) -> str:
        return f"{self.rho:g}-zCDP"

    @property
    def curve(self) -> str:
        return ("inf over α > 1 of exp((α−1)(αρ−ε))/α·(1−1/α)^(α−1), and √(1−e^(−αρ)): the "
                "(ε, δ) curve every ρ-zCDP mechanism satisfies (Canonne, Kamath and Steinke 2020, "
                "Prop. 12), not the Gaussian mechanism's own curve at μ = √(2ρ)")

    def to_record(self) -> dict:
        return {"type": self.kind, "rho": self.rho, "text": self.text, "curve": self.curve}


@dataclass(frozen=True, slots=True)
class RenyiDP:
    """(α, ε_α)-Rényi DP at the listed orders (Mironov 2017): the curve they imply."""

    orders: tuple
    kind = "rdp"

    def __post_init__(self) -> None:
        try:
            pairs = [(a, e) for a, e in self.orders]
        except (TypeError, ValueError):
            raise InvalidArgument.bad("renyi", self.orders, "a list of (alpha, epsilon_alpha) pairs") from None
        if not pairs:
            raise InvalidArgument.bad("renyi", self.orders, "at least one (alpha, epsilon_alpha) pair")
        out = []
        for a, e in pairs:
            a, e = _real("renyi alpha", a), _real("renyi epsilon", e, positive=False)
            if not a > 1:
                raise InvalidArgument.bad("renyi alpha", a, "an order > 1")
            out.append((a, e))
        object.__setattr__(self, "orders", tuple(sorted(out)))

    def delta(self, eps: Any) -> np.ndarray:
        return rdp_delta([a for a, _ in self.orders], [e for _, e in self.orders], eps)

    @property
    def text(self) -> str:
        shown = ", ".join(f"({a:g}, {e:g})" for a, e in self.orders[:4])
        more = ", …" if len(self.orders) > 4 else ""
        return f"RDP at [{shown}{more}]"

    @property
    def curve(self) -> str:
        return ("min over the listed orders of exp((α−1)(ε_α−ε))/α·(1−1/α)^(α−1) and "
                "√(1−e^(−ε_α)) (Canonne, Kamath and Steinke 2020, Prop. 12)")

    def to_record(self) -> dict:
        return {"type": self.kind, "renyi": [list(p) for p in self.orders], "text": self.text,
                "curve": self.curve}


@dataclass(frozen=True, slots=True, eq=False)
class Profile:
    """A privacy profile δ(ε) given as it is: a callable, an OpenDP ``PrivacyProfile`` (its
    ``.delta``) or a dp-accounting ``PrivacyLossDistribution`` (its ``get_delta_for_epsilon``)."""

    source: Any
    name: str = ""
    fn: Callable[[float], Any] = field(init=False, repr=False, default=None)
    kind = "profile"

    def __post_init__(self) -> None:
        src = self.source
        if callable(getattr(src, "get_delta_for_epsilon", None)):
            fn, what = src.get_delta_for_epsilon, "PrivacyLossDistribution.get_delta_for_epsilon"
        elif callable(getattr(src, "delta", None)):
            fn, what = src.delta, f"{type(src).__name__}.delta"
        elif callable(src):
            fn, what = src, getattr(src, "__qualname__", getattr(src, "__name__", "profile"))
        else:
            raise InvalidArgument.bad("profile", src, "a callable δ(ε), an OpenDP PrivacyProfile "
                                      "or a dp-accounting PrivacyLossDistribution")
        object.__setattr__(self, "fn", fn)
        if not self.name:
            object.__setattr__(self, "name", str(what))

    def delta(self, eps: Any) -> np.ndarray:
        out = []
        for x in _eps(eps):
            try:
                v = float(np.asarray(self.fn(float(x))).reshape(-1)[0])
            except Exception as exc:  # noqa: BLE001 - the user's curve
                raise InvalidArgument(f"profile {self.name} raised at epsilon={float(x)!r}: "
                                      f"{type(exc).__name__}: {exc}") from None
            if math.isnan(v):
                raise InvalidArgument(f"profile {self.name} returned NaN at epsilon={float(x)!r}")
            out.append(v)
        return np.clip(np.asarray(out, dtype=float), 0.0, 1.0)

    @property
    def text(self) -> str:
        return f"profile δ(ε) of {self.name}"

    @property
    def curve(self) -> str:
        return "the stated profile itself (no conversion)"

    def to_record(self) -> dict:
        return {"type": self.kind, "profile": self.name, "text": self.text, "curve": self.curve}


CurveClaim = Union[ZCDP, GaussianDP, RenyiDP, Profile]


def curve_claim(*, rho: Any = None, mu: Any = None, renyi: Any = None, profile: Any = None) -> CurveClaim:
    """The one curve claim given: ``rho`` (ρ-zCDP), ``mu`` (μ-GDP), ``renyi`` (a list of
    (α, ε_α)) or ``profile`` (a callable δ(ε)); exactly one must be given."""
    given = {k: v for k, v in (("rho", rho), ("mu", mu), ("renyi", renyi), ("profile", profile))
             if v is not None}
    if len(given) != 1:
        raise InvalidArgument("give exactly one curve claim: rho=, mu=, renyi= or profile= "
                              f"(got {', '.join(given) or 'none'})")
    (key, value), = given.items()
    if key == "rho":
        return ZCDP(value)
    if key == "mu":
        return GaussianDP(value)
    if key == "renyi":
        return RenyiDP(tuple(value) if not isinstance(value, tuple) else value)
    return Profile(value)


# ---------------------------------------------------------------------------------------------
# the grid of ε

def check_grid(grid: Any) -> np.ndarray:
    """A grid of ε: finite numbers ≥ 0 (sorted, duplicates dropped), at least one."""
    try:
        g = np.asarray(list(grid), dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InvalidArgument.bad("grid", grid, "a list of epsilons >= 0") from None
    if g.size == 0 or not np.all(np.isfinite(g)) or np.any(g < 0):
        raise InvalidArgument.bad("grid", grid, "a non-empty list of finite epsilons >= 0")
    return np.unique(g)


def default_grid(claim: CurveClaim, points: int = GRID_POINTS, floor: float = GRID_DELTA) -> np.ndarray:
    """``points`` evenly spaced ε from 0 to where the claimed δ falls below ``floor`` (found by
    bisection; at least 1, at most 30): past it, no sample budget a run can afford would show a
    δ above the claim."""
    if float(claim.delta(0.0)[0]) <= floor:
        return np.linspace(0.0, 1.0, points)
    lo, hi = 0.0, 30.0
    if float(claim.delta(hi)[0]) > floor:
        return np.linspace(0.0, hi, points)
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if float(claim.delta(mid)[0]) > floor:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-3:
            break
    return np.linspace(0.0, max(1.0, hi), points)
