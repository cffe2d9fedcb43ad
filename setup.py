"""Package list for setuptools (everything else is in pyproject.toml).

Only ``dpaudit`` is installed at top level. The repository keeps the reference mechanisms in
``mechanisms/`` at its top level, and installs them as ``dpaudit.reference`` through a
``package_dir`` mapping, so no generic ``mechanisms`` package lands in site-packages and a user's
own ``mechanisms/`` folder can never shadow (or be shadowed by) the reference mechanisms.
"""
from setuptools import find_packages, setup

REFERENCE = "dpaudit.reference"

setup(
    packages=find_packages(include=["dpaudit", "dpaudit.*"])
    + [REFERENCE] + [f"{REFERENCE}.{p}" for p in find_packages("mechanisms")],
    package_dir={REFERENCE: "mechanisms"},
)
