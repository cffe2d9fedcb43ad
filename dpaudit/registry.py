"""One registry helper, one rule set: every registry of dpaudit is a :class:`Registry`.

dpaudit keeps four tables of things found by name: report formats
(:mod:`dpaudit.report.registry`), record kinds (:mod:`dpaudit.report.kinds`), neighbour relations
(:mod:`dpaudit.neighbours.registry`) and formal claims (:mod:`dpaudit.formal.registry`). Each is a
:class:`Registry`, so they share three rules:

1. **A name is registered once.** Registering another entry under a taken name raises
   :class:`DuplicateName` (an :class:`~dpaudit.errors.InvalidArgument`); registering the same
   entry again is a no-op (a module imported twice, an entry point naming a built-in). An entry
   the registry does not accept (``check``) raises :class:`NotAnEntry`, which is also a
   ``TypeError``.
2. **An unknown name is an InvalidArgument that helps.** :meth:`Registry.get` raises
   ``WHAT must be one of the valid names: a, b, c; got 'x' (did you mean 'y'?)``.
3. **Plugins load one way.** A registry with an entry-point ``group`` loads it once, in name
   order, on the first listing or on a lookup that misses; each object an entry point names is
   registered by :meth:`Registry.add`, under the same rules. A plugin that fails to load is
   skipped, so a third party's broken package never breaks a report.

How built-in entries get in is the only thing a registry decides, and it never imports its
registry back: the module that owns a registry imports its built-in members and adds them
(report formats, record kinds, relations), or, where entries are many decorated functions (formal
claims), a lower module holds the table and the decorator, and the registry module imports the
topic modules that use it. Either way the import graph has no cycle
(``tests/unit/test_architecture.py``).
"""

from __future__ import annotations

import difflib
from typing import Any, Callable, Generic, Iterator, Optional, TypeVar

from dpaudit.errors import InvalidArgument

__all__ = ["Registry", "DuplicateName", "NotAnEntry"]

T = TypeVar("T")


class DuplicateName(InvalidArgument):
    """Another entry is already registered under this name."""


class NotAnEntry(InvalidArgument, TypeError):
    """The object is not something this registry holds (a wrong type, a bad name)."""


def _equal(a: Any, b: Any) -> bool:
    return a is b or a == b


class Registry(Generic[T]):
    """Entries by name, in registration order (module docstring for the rules).

    ``what`` names an entry in messages (``"report format"``); ``name_of(entry)`` is the name an
    entry registers under; ``check(entry)`` raises :class:`NotAnEntry` for an object the registry
    does not accept; ``parse(name)`` turns what a caller looks up into a registered name (aliases;
    an InvalidArgument from it counts as an unknown name); ``same(a, b)`` says when registering
    ``b`` over ``a`` is the same entry again; ``group`` is the entry-point group of plugins.
    """

    def __init__(self, what: str, *, name_of: Callable[[T], str],
                 check: Optional[Callable[[Any], None]] = None,
                 parse: Optional[Callable[[Any], str]] = None,
                 same: Callable[[T, T], bool] = _equal,
                 group: Optional[str] = None) -> None:
        self.what = what
        self.group = group
        self._name_of = name_of
        self._check = check
        self._parse = parse
        self._same = same
        self._entries: dict[str, T] = {}
        self._plugins_loaded = group is None

    # ----------------------------------------------------------------- registering

    def add(self, entry: T) -> T:
        """Register ``entry`` under its name and return it (usable as a decorator)."""
        if self._check is not None:
            self._check(entry)
        name = self._name_of(entry)
        taken = self._entries.get(name)
        if taken is not None and not self._same(taken, entry):
            raise DuplicateName(f"{self.what} {name!r} is already registered{_holder(taken)}")
        if taken is None:
            self._entries[name] = entry
        return entry

    def load_plugins(self) -> None:
        """Register every object of the entry-point group, once, in name order."""
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        from importlib.metadata import entry_points

        for ep in sorted(entry_points(group=self.group), key=lambda e: e.name):
            try:
                self.add(ep.load())
            except Exception:  # noqa: BLE001 - a third party's broken plugin must not break dpaudit
                continue

    # ----------------------------------------------------------------- looking up

    def _key(self, name: Any) -> Optional[str]:
        if self._parse is None:
            return name if isinstance(name, str) else None
        try:
            return self._parse(name)
        except InvalidArgument:
            return None

    def find(self, name: Any) -> Optional[T]:
        """The entry called ``name``, or None (plugins are loaded before None is returned)."""
        key = self._key(name)
        if key is not None and key in self._entries:
            return self._entries[key]
        if not self._plugins_loaded:
            self.load_plugins()
            return self.find(name)
        return None

    def get(self, name: Any) -> T:
        """The entry called ``name``; :meth:`unknown` when there is none."""
        entry = self.find(name)
        if entry is None:
            raise self.unknown(name)
        return entry

    def unknown(self, name: Any) -> InvalidArgument:
        """The error for a name nobody registered: the valid names, and the closest one."""
        names = self.names()
        close = difflib.get_close_matches(str(name), names, n=1) if isinstance(name, str) else []
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return InvalidArgument(f"{self.what} must be one of the valid names: {', '.join(names)}; "
                               f"got {name!r}{hint}")

    def names(self) -> tuple[str, ...]:
        """Every registered name, in registration order (plugins loaded)."""
        self.load_plugins()
        return tuple(self._entries)

    def entries(self) -> tuple[T, ...]:
        """Every entry, in registration order (plugins loaded)."""
        self.load_plugins()
        return tuple(self._entries.values())

    def __contains__(self, name: Any) -> bool:
        return self.find(name) is not None

    def __iter__(self) -> Iterator[T]:
        return iter(self.entries())

    def __len__(self) -> int:
        return len(self.entries())

    def copy(self) -> "Registry[T]":
        """An independent registry with the same entries and rules (a test registers into a copy
        and leaves the original as found)."""
        out: Registry[T] = Registry(self.what, name_of=self._name_of, check=self._check,
                                    parse=self._parse, same=self._same, group=self.group)
        out._entries = dict(self._entries)
        out._plugins_loaded = self._plugins_loaded
        return out

    def __repr__(self) -> str:
        return f"Registry({self.what!r}, {list(self._entries)})"


def _holder(entry: Any) -> str:
    """Who holds a name, for the duplicate-name message (a class says which one)."""
    return f" by {entry.__module__}.{entry.__qualname__}" if isinstance(entry, type) else ""
