"""Shared test configuration.

Hypothesis runs derandomised in CI (fixed seed, no example database, no deadline), so a green run
is a green run; ``HYPOTHESIS_PROFILE=thorough`` searches much longer for local and nightly runs.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    max_examples=5_000,
    derandomize=False,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
