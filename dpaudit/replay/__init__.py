"""Record and replay at the noise boundary: a gray-box audit in a few hundred calls.

``dpaudit.replay.replay_audit(f, epsilon=…, neighbours=…, domain=…, size=…)`` runs ``f`` on a
dataset D with a recording generator as ``rng``, replays it on a neighbour D′ with every noise
draw frozen, and reports, with the ``file:line`` of the code that made the call:

* a declared sensitivity exceeded (``@dpaudit.replay.primitive``, diffprivlib mechanisms): REFUTED;
* data-dependent control flow, a data-dependent noise scale, data outside the noise, an unnoised
  release, noise reused: findings of their own (INCONCLUSIVE);
* the ε the code's own noise supports on the pair by composition, when above the claim: a note,
  never an ε lower bound.

The method, its formulas and its sources: docs/replay.md (Re:cord-play, Cebere et al., PETS 2026).
Names are imported on first use, so ``from dpaudit.replay import primitive`` in audited code costs
no import of the search (hypothesis, scipy).
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "replay_audit": "dpaudit.replay.audit",
    "replay_pair": "dpaudit.replay.audit",
    "primitive": "dpaudit.replay.primitive",
    "RecordingGenerator": "dpaudit.replay.generator",
    "ReplayResult": "dpaudit.replay.result",
    "ReplayFinding": "dpaudit.replay.result",
    "KINDS": "dpaudit.replay.result",
    "RECORD_KIND": "dpaudit.replay.result",
    "BUDGET": "dpaudit.replay.search",
    "Site": "dpaudit.replay.sites",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dpaudit.replay' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
