"""pytest plugin (entry point ``pytest11``): ``pytest --dpaudit`` runs audit definitions.

Heavy imports happen lazily so merely having dpaudit installed costs pytest nothing.
"""

from __future__ import annotations


def pytest_addoption(parser):
    group = parser.getgroup("dpaudit", "differential-privacy audits (dpaudit)")
    group.addoption("--dpaudit", action="store_true", default=False,
                    help="collect audit definitions in audits/ as test items")
