"""Hypothesis runs whose draws are a function of the seed only.

Hypothesis (6.131 and later) draws, now and then, a constant taken from the source text of every
"local" module in ``sys.modules`` (every imported module outside the standard library and
site-packages: dpaudit itself when installed editable, the audit files, the caller's script),
collected when a run first needs one. The pool of constants, and so every draw after the first
one taken from it, then depends on which modules the process happened to import and on their
source text, not on the seed: importing one more module of dicts, or editing a literal anywhere,
changed a seeded search's record.

:func:`seed_only` empties that pool while dpaudit's own hypothesis runs are in progress (the
exact and sampled pair searches, the replay and stability searches, the sensitivity search), so
a recorded seed reproduces their draws in any process. Hypothesis's fixed global constants (the
float limits, ±2^k and so on) stay: they are the same in every process. Outside these runs,
hypothesis keeps its usual behaviour (the user's own ``@given`` tests still see local constants).
On a hypothesis without the feature, nothing is changed.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator

__all__ = ["seed_only"]

_lock = threading.Lock()
_state: dict = {"depth": 0, "saved": None}


def _providers() -> Any:
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - hypothesis moved its internals
        return None
    if not (hasattr(providers, "_get_local_constants") and hasattr(providers, "Constants")):
        return None  # a hypothesis without local constants: its draws already depend on the seed only
    return providers


def _clear(providers: Any) -> None:
    """Drop the (global, local) constants hypothesis cached per choice kind: a pool cached
    before the switch (or during it) must not outlive it."""
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    inner = getattr(cache, "cache", None)
    if hasattr(inner, "clear"):
        inner.clear()


def _no_local_constants() -> Any:
    from hypothesis.internal.conjecture.providers import Constants

    return Constants()


@contextmanager
def seed_only() -> Iterator[None]:
    """While in this block, hypothesis draws no constants from local modules (module docstring).
    Re-entrant and safe for concurrent searches: the first to enter switches, the last to leave
    puts hypothesis's own collector back."""
    providers = _providers()
    if providers is None:
        yield
        return
    with _lock:
        if _state["depth"] == 0:
            _state["saved"] = providers._get_local_constants
            providers._get_local_constants = _no_local_constants
            _clear(providers)
        _state["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["depth"] -= 1
            if _state["depth"] == 0:
                providers._get_local_constants = _state["saved"]
                _state["saved"] = None
                _clear(providers)
