"""``dpaudit check FILE.py:f --sensitivity B``: the sensitivity search on third-party code.

The engine of the check pipeline (:mod:`dpaudit.pipeline`) when ``--sensitivity`` is given
(:class:`SensitivitySearch`). The flags are those of ``dpaudit check`` (``--neighbours``, ``--domain``, ``--size`` for datasets
of 0..N records, ``--seed``, ``--timeout``, ``--call-timeout``, ``--memory``, ``--isolation``, the
four report flags) plus ``--sensitivity B`` (the claimed bound Δ: ‖f(D) − f(D')‖ ≤ Δ for
neighbours D ~ D'), ``--individual D0,D1,...`` (individual sensitivities, docs/math.md#individual-model), ``--norm``
(``l1 | l2 | linf`` for vector outputs) and ``--examples N`` (pairs to try, default 1,000).

``f`` runs in the sandbox child like a mechanism: each evaluation is one call there, under the
per-call limit, and the whole search under ``--timeout``: the search stops trying pairs when what
is left of it is spent (before the sandbox's own limit, TIMEOUT_GRACE later), NOT REFUTED after
the pairs tried (REFUTED if it had found a counterexample), with a note naming the limit; a call
the sandbox's limit cuts makes it INCONCLUSIVE, never an ERROR. What ``f`` raises is the search's
ERROR verdict with that input (as in process); a crash, hang, per-call time-out or isolation trip
stops the search and is the target's ERROR verdict, naming the cause. The record is the search's own
(:meth:`dpaudit.sensitivity.SensitivityResult.to_record`), so the four report formats render it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from dpaudit.claims import Domain, Neighbours

if TYPE_CHECKING:
    from dpaudit.config import CheckSettings
    from dpaudit.execution.sandbox import SandboxExecutor

__all__ = ["check_sensitivity_of", "SensitivitySearch"]


def _claim(settings: CheckSettings, facts: Optional[Mapping[str, Any]], func: Optional[Callable]) -> dict:
    """neighbours, domain and size: flags over the ``@dpaudit.mechanism`` declaration over
    the defaults (add-remove, 0:1, 10)."""
    declared: dict[str, Any] = {}
    if facts is not None and facts.get("declaration"):
        declared = dict(facts["declaration"])
    elif func is not None:
        from dpaudit.spec import declaration_of

        decl = declaration_of(func)
        if decl is not None:
            declared = {"neighbours": decl.neighbours, "domain": decl.domain, "size": decl.size}
    pick = {k: settings.claim.get(k, declared.get(k)) for k in ("neighbours", "domain", "size")}
    return {"neighbours": Neighbours.parse(pick["neighbours"] or "add-remove"),
            "domain": Domain.parse(pick["domain"] if pick["domain"] is not None else (0.0, 1.0)),
            "size": 10 if pick["size"] is None else int(pick["size"])}


class SensitivitySearch:
    """The engine of ``--sensitivity B``: the search's record is the target's."""

    name = "sensitivity"

    @classmethod
    def wanted(cls, settings: Any, target: Any) -> bool:
        return settings.sensitivity is not None

    def flags(self, run: Any) -> list[str]:
        return _flags(run.settings, _claim(run.settings, run.target.facts, run.target.func))

    def run(self, run: Any) -> None:
        run.begin("sensitivity search")
        t = run.target
        keywords = getattr(t, "keywords", None)
        if keywords is not None and getattr(t, "mechanism", None) is not None:
            # an in-memory target with the search's own keywords (an audit of the suite): the
            # search as dpaudit.check_sensitivity runs it, with the run's seed and time limit
            from dpaudit.sensitivity import check_sensitivity

            run.outcomes[self.name] = check_sensitivity(
                t.mechanism, run.settings.sensitivity.get("bound"), seed=run.settings.seed,
                **({"timeout": run.left()} if run.left() is not None else {}), **keywords)
            return
        run.outcomes[self.name] = check_sensitivity_of(
            t.name, run.settings, t.executor, t.facts, t.func, run.left(), isolation=t.isolation)


def _flags(settings: CheckSettings, claim: Mapping[str, Any]) -> list[str]:
    from dpaudit.reproduce import sensitivity_flags

    s = settings.sensitivity or {}
    return sensitivity_flags(bound=s["bound"], neighbours=claim["neighbours"],
                             domain=claim["domain"], size=claim["size"], examples=s["examples"],
                             individual=s["individual"], norm=s["norm"])


def reproduce_line(name: str, settings: CheckSettings, claim: Mapping[str, Any]) -> str:
    """The command that reruns the search (:func:`dpaudit.reproduce.check_line`)."""
    from dpaudit.reproduce import check_line

    return check_line(name, _flags(settings, claim), seed=settings.seed, settings=settings)


def check_sensitivity_of(name: str, settings: CheckSettings, executor: Optional[SandboxExecutor],
                         facts: Optional[Mapping[str, Any]], func: Optional[Callable],
                         remaining: Optional[float], isolation: Optional[str] = None) -> Any:
    """Run the search on the target (in the sandbox when ``executor`` is given): its
    :class:`~dpaudit.sensitivity.result.SensitivityResult`, with its reproduce line and the
    ``isolation`` it ran under, or the record of a search the sandbox stopped."""
    from dpaudit.execution.described import remote_function
    from dpaudit.execution.sandbox import SandboxFailure
    from dpaudit.sensitivity import check_sensitivity

    s = settings.sensitivity
    claim = _claim(settings, facts, func)
    f = remote_function(executor, facts) if executor is not None else func
    reproduce = reproduce_line(name, settings, claim)
    t0 = time.monotonic()
    try:
        result = check_sensitivity(f, s["bound"], neighbours=claim["neighbours"],
                                   domain=claim["domain"], sizes=claim["size"],
                                   individual=s["individual"], norm=s["norm"],
                                   examples=s["examples"], seed=settings.seed, target=name,
                                   timeout=remaining, stated_timeout=settings.timeout)
    except SandboxFailure as exc:
        cut = exc.time_limit  # the run's own limit stopped a call: not the function's fault
        return {"kind": "sensitivity", "target": name, "verdict": "inconclusive" if cut else "error",
                "elapsed_s": time.monotonic() - t0, "reproduce": reproduce,
                "error": None if cut else exc.cause,
                "claim": {"bound": s["bound"], "individual": None if s["individual"] is None
                          else list(s["individual"]), "neighbours": claim["neighbours"].value,
                          "norm": s["norm"] or "l1"},
                "max_gap": None, "ratio": None, "counterexample": None, "tightest": None,
                "examples": 0, "seed": settings.seed, **_isolation(isolation),
                **({"details": {"timed_out": True, "note": _cut_note(settings, exc.cause)}}
                   if cut else {})}
    # the command reruns the whole search, counterexample included; built into the result
    from dataclasses import replace

    return replace(result, reproduce=reproduce, isolation=isolation)


def _cut_note(settings: CheckSettings, cause: str) -> str:
    """The note of a search whose call the sandbox's total limit stopped (its count is lost)."""
    limit = "the time limit" if settings.timeout is None else \
        f"the time limit (--timeout {settings.timeout:g} s)"
    return f"{limit} stopped a call under way ({cause}): nothing is known of the bound"


def _isolation(isolation: Optional[str]) -> dict:
    return {} if isolation is None else {"isolation": isolation}
