"""Entry-point plugins: record kinds and report formats that other distributions declare.

Each group is loaded once per process, in name order; a plugin that fails to import is skipped,
so a third party's broken package never breaks a report (its records render as generic ones, or
its format is simply absent).
"""

from __future__ import annotations

from typing import Any, Callable

_LOADED: set[str] = set()


def load_plugins(group: str, register: Callable[[Any], Any]) -> None:
    """``register(obj)`` for every object declared under the entry-point ``group``, once."""
    if group in _LOADED:
        return
    _LOADED.add(group)
    from importlib.metadata import entry_points

    for ep in sorted(entry_points(group=group), key=lambda e: e.name):
        try:
            register(ep.load())
        except Exception:  # noqa: BLE001 - a third party's broken plugin must not break a report
            continue
