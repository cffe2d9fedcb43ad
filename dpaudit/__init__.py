"""dpaudit: a formally checked property-testing and audit harness for differential privacy.

Public API (everything in ``__all__``; imported lazily so ``import dpaudit`` and the CLI start fast)::

    import dpaudit

    @dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=10)
    def noisy_sum(data, rng):
        return float(data.sum() + rng.laplace(scale=1.0))

    result = dpaudit.audit(noisy_sum, seed=1)         # sampled ε lower bound, at a confidence
    print(result.verdict, result.epsilon_lower_bound)

Three kinds of evidence are kept apart: sampling and search REFUTE or do not; only a proof PROVES.
"""

import sys as _sys


def _drop_working_folder() -> None:
    """Under ``python -m dpaudit`` (or a module of it), take the working folder, which Python put
    first on the import path, off it before dpaudit imports anything: a checkout's ``jinja2.py``
    or ``typing.py`` would otherwise run inside dpaudit itself. (Only Python's start-up and
    ``runpy`` ran before this; nothing above it may import a module.)"""
    argv = list(getattr(_sys, "orig_argv", ()))  # ["python", ..., "-m", "dpaudit", ...]
    ran = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-m"] + \
        [a[2:] for a in argv if a.startswith("-m") and len(a) > 2]
    if _sys.argv[:1] != ["-m"] or not ran or ran[0].partition(".")[0] != "dpaudit":
        return  # imported, not run: the importer's import path is its own business
    import os

    first = _sys.path[0] if _sys.path else None
    if first is not None and os.path.realpath(first or os.curdir) == os.path.realpath(os.curdir):
        del _sys.path[0]


_drop_working_folder()

import importlib  # noqa: E402 - after the import path is safe
from typing import Any  # noqa: E402

__version__ = "0.1.0"

# name -> module that defines it. Each entry is re-exported as ``dpaudit.<name>``.
_EXPORTS: dict[str, str] = {
    # claims and specs
    "Neighbours": "dpaudit.claims",
    "Domain": "dpaudit.claims",
    "PureDP": "dpaudit.claims",
    "ApproxDP": "dpaudit.claims",
    "SensitivityBound": "dpaudit.claims",
    "privacy_claim": "dpaudit.claims",
    "MechanismSpec": "dpaudit.spec",
    "mechanism": "dpaudit.spec",
    "OutputKind": "dpaudit.spec",
    # results
    "Verdict": "dpaudit.results",
    "AuditResult": "dpaudit.results",
    "Counterexample": "dpaudit.results",
    "Interval": "dpaudit.results",
    # errors
    "DpauditError": "dpaudit.errors",
    "InvalidArgument": "dpaudit.errors",
    "UsageError": "dpaudit.errors",
    "LoadError": "dpaudit.errors",
    "MechanismError": "dpaudit.errors",
    # command line
    "ExitCode": "dpaudit.exitcodes",
    # third-party code: load by path, run sandboxed (dpaudit/loader.py, dpaudit/execution/sandbox.py)
    "load_mechanism": "dpaudit.loader",
    "SandboxExecutor": "dpaudit.execution.sandbox",
    # statistical and exact privacy audits (dpaudit/auditor.py)
    "check": "dpaudit.pipeline.api",
    "CheckResult": "dpaudit.pipeline.result",
    "audit": "dpaudit.auditor",
    "exact_audit": "dpaudit.auditor",
    "curve_audit": "dpaudit.curves",
    "replay_audit": "dpaudit.replay",
    "primitive": "dpaudit.replay",
    "ReplayResult": "dpaudit.replay",
    "CurveResult": "dpaudit.curves",
    # one-run canary audits of DP training (dpaudit/onerun/)
    "one_run_audit": "dpaudit.onerun",
    "OneRunResult": "dpaudit.onerun",
    # sensitivity search (dpaudit/sensitivity/)
    "check_sensitivity": "dpaudit.sensitivity",
    "SensitivityResult": "dpaudit.sensitivity",
    # the library sweep (dpaudit/sweep/): dpaudit.sweep("opendp")
    "sweep": "dpaudit.sweep",
    # formal claims (dpaudit/formal/)
    "verify": "dpaudit.formal",
    "FormalResult": "dpaudit.formal",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dpaudit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
