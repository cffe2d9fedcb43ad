"""The plugin is tested in throw-away projects with pytest's own ``pytester`` fixture (enabled
with ``-p pytester`` in pyproject.toml's addopts: pytest refuses ``pytest_plugins`` in a conftest
below the root, which broke collection of the whole suite).

``pytester.runpytest`` runs in this process and afterwards drops every module the inner run
imported; numpy (and extension modules like it) cannot be imported twice in one process, so the
heavy modules the plugin uses are imported here, once, before any inner run. (The lazy attributes
of the ``dpaudit`` package, cached on first use, would otherwise outlive the modules they came
from, and an inner run would see two MechanismSpec classes.)
"""

import dpaudit.auditor  # noqa: F401
import dpaudit.estimators.strength  # noqa: F401  (scipy.special, and numpy.fft through it)
import dpaudit.pipeline.run  # noqa: F401
import dpaudit.progress  # noqa: F401
import dpaudit.replay.audit  # noqa: F401
import dpaudit.report.html  # noqa: F401
import dpaudit.report.plots  # noqa: F401
import dpaudit.spec  # noqa: F401
import dpaudit.suite  # noqa: F401
import matplotlib.backends.backend_svg  # noqa: F401
import matplotlib.figure  # noqa: F401
import numpy  # noqa: F401
import numpy.fft  # noqa: F401
import scipy.special  # noqa: F401
import scipy.stats  # noqa: F401
