"""Hypothesis search for sensitivity violations, global and individual (Cummings and Durfee (2020)).

``dpaudit.check_sensitivity(f, bound, neighbours=..., domain=..., sizes=...)`` returns a frozen
:class:`SensitivityResult`: REFUTED with a shrunk, reproducible counterexample, NOT_REFUTED after
N examples (never "proved"), or ERROR when ``f`` fails on an in-domain input.
"""

from dpaudit.sensitivity.result import SensitivityExample, SensitivityResult
from dpaudit.sensitivity.search import PROFILES, Profile, check_sensitivity

__all__ = ["check_sensitivity", "SensitivityResult", "SensitivityExample", "Profile", "PROFILES"]
