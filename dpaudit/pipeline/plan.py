"""The plan of a check: which engine gives the target its verdict and which stages run around it,
chosen from the settings and the target's claim, once, before any call of the mechanism.

The engines, in the order they are asked (the first that ``wanted`` the target is its engine; the
sampled audit wants every target, so it is the default). Adding an engine is one module in the
engine's own folder with the :class:`~dpaudit.pipeline.stages.Engine` protocol and one line
here (docs/ARCHITECTURE.md, "To add X", with the curve engine as the worked example).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

__all__ = ["ENGINES", "Plan", "plan_for", "load"]

ENGINES: tuple[str, ...] = (
    "dpaudit.sensitivity.stage:SensitivitySearch",  # --sensitivity B
    "dpaudit.replay.stage:ReplayAudit",  # --replay
    "dpaudit.pipeline.stages:ExactAudit",  # an in-memory target asking for the exact audit
    "dpaudit.pipeline.stages:InMemoryCurve",  # an in-memory target's curve claim
    "dpaudit.curves.stage:CurveAudit",  # a claim stated as a privacy curve
    "dpaudit.pipeline.stages:SampledAudit",  # the default: the sampled audit
)


def load(path: str) -> Any:
    """The engine class an ENGINES entry (``"module:Class"``) names."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class Plan:
    """What will run for one target, in order: ``before`` stages, the ``engine``, ``after``
    stages. The stages take their own shares of the time limit (the replay stage:
    :data:`dpaudit.replay.command.STAGE_SHARE`; the fresh-process check's first calls:
    :data:`dpaudit.execution.honesty.FRESH_SHARE`)."""

    engine: Any
    before: tuple = ()
    after: tuple = ()

    @property
    def stages(self) -> tuple:
        return (*self.before, self.engine, *self.after)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(stage.name for stage in self.stages)


def plan_for(settings: Any, target: Any) -> Plan:
    """The plan for ``target`` under ``settings``: its engine (:data:`ENGINES`), and around the
    sampled audit the fresh-process check (sandboxed only: it needs fresh children of the
    audited code) and the replay stage (``--no-replay`` skips it)."""
    from dpaudit.pipeline.stages import FreshStart, FreshVerdict, SampledAudit

    engine = next(cls for cls in map(load, ENGINES) if cls.wanted(settings, target))()
    if not isinstance(engine, SampledAudit):
        return Plan(engine=engine)
    from dpaudit.replay.stage import ReplayStage

    fresh = target.fresh is not None
    before = (*((FreshStart(),) if fresh else ()), ReplayStage())
    return Plan(engine=engine, before=before, after=(FreshVerdict(),) if fresh else ())
