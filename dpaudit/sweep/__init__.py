"""The library sweep: every public constructor of a DP library, found by introspection, built over a
grid of parameters, domains, metrics and measures, and checked against every map it declares
(docs/libraries.md, "Sweeping a library").

    import dpaudit

    result = dpaudit.sweep("opendp", seed=1)       # or "diffprivlib"
    print(result.table())
    result.refutations                             # each with its reproduction, run against the library alone

``dpaudit sweep opendp`` on the command line (:mod:`dpaudit.sweep.command`). The package's
modules: :mod:`~dpaudit.sweep.result` (cases, the table, the journal), :mod:`~dpaudit.sweep.grid`
(candidate values by parameter name and annotation), :mod:`~dpaudit.sweep.checks` (privacy by
sampling, stability by exact distances), :mod:`~dpaudit.sweep.opendp` and
:mod:`~dpaudit.sweep.polars` (OpenDP and its Polars API), :mod:`~dpaudit.sweep.diffprivlib`, and
:mod:`~dpaudit.sweep.drafts` (reproductions run against the library alone, bug-report drafts).
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any, Callable, Optional

from dpaudit.errors import InvalidArgument

__all__ = ["run", "LIBRARIES", "DEFAULTS"]

#: the libraries a sweep knows -> the module that sweeps it
LIBRARIES = {"opendp": "dpaudit.sweep.opendp", "diffprivlib": "dpaudit.sweep.diffprivlib"}

#: the defaults, sized so that a constructor costs at most 120 CPU seconds (benchmarks/opendp_sweep.py)
DEFAULTS = {"samples": 20_000, "budget": 200, "cases": 4, "attempts": 3_000, "confidence": 0.95,
            "timeout": 60.0}


def run(library: str, *, seed: int = 0, samples: Optional[int] = None, budget: Optional[int] = None,
        cases: Optional[int] = None, attempts: Optional[int] = None, confidence: Optional[float] = None,
        timeout: Optional[float] = None, only: Optional[list] = None, journal: Any = None,
        drafts: Any = None, progress: Optional[Callable[[Any], None]] = None) -> Any:
    """Sweep ``library`` (``"opendp"`` or ``"diffprivlib"``); return a
    :class:`~dpaudit.sweep.result.SweepResult`.

    ``samples`` per sampled check, ``budget`` evaluations per stability check, ``cases`` objects
    checked per constructor, ``attempts`` combinations tried per constructor, ``confidence`` the
    family-wise confidence of every sampled check together, ``timeout`` seconds per check,
    ``only`` substrings of the constructors to sweep (default: all), ``journal`` a file that gets
    each case as one JSON line as soon as it is known, ``drafts`` a folder for the bug-report
    drafts of the refutations, ``progress`` called with each case."""
    import importlib

    from dpaudit.adapters.common import library_version
    from dpaudit.rng import check_seed
    from dpaudit.sweep.drafts import write_drafts
    from dpaudit.sweep.result import Journal, SweepResult, cpu_seconds
    from dpaudit.validation import check_confidence, check_count

    if library not in LIBRARIES:
        raise InvalidArgument.bad("library", library, "one of " + ", ".join(LIBRARIES))
    settings = dict(DEFAULTS)
    given = {"samples": samples, "budget": budget, "cases": cases, "attempts": attempts,
             "confidence": confidence, "timeout": timeout}
    settings.update({k: v for k, v in given.items() if v is not None})
    for key in ("samples", "budget", "cases", "attempts"):
        settings[key] = check_count(settings[key], key)
    settings["confidence"] = check_confidence(settings["confidence"])
    if settings["timeout"] is not None and not float(settings["timeout"]) > 0:
        raise InvalidArgument.bad("timeout", settings["timeout"], "a number of seconds > 0")
    seed = check_seed(seed)
    if only is not None and (isinstance(only, str) or not all(isinstance(o, str) for o in only)):
        raise InvalidArgument.bad("only", only, "a list of constructor names (substrings)")
    module = importlib.import_module(LIBRARIES[library])
    sweeper = module.Sweeper(seed=seed, only=only, **settings)
    result = SweepResult(library=library, version=library_version(library), seed=seed,
                         settings={**settings, "case_confidence": sweeper.case_confidence})
    log = Journal(journal)
    t0 = cpu_seconds()
    for case in sweeper.run():
        result.cases.append(case)
        log.write(case)
        if progress is not None:
            progress(case)
    result.elapsed_s = cpu_seconds() - t0
    result.skipped_constructors = dict(sweeper.skipped_constructors)
    if drafts is not None:
        write_drafts(result.cases, drafts, library, result.version)
    return result


class _CallableModule(types.ModuleType):
    """``dpaudit.sweep(...)`` calls :func:`run` (the package is also where the sweep lives)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return run(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
#: ``dpaudit.sweep`` (the lazy export of dpaudit/__init__.py) is this callable package itself
sweep = sys.modules[__name__]
del os
