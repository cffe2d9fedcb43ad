"""``dpaudit.check(...)``: the check pipeline from Python, the record ``dpaudit check`` writes.

The keywords are ``dpaudit check``'s flags (``call_timeout`` for ``--call-timeout``), read by
the same code (:func:`dpaudit.config.resolve_settings`, over the ``[tool.dpaudit]`` table of the
nearest pyproject.toml, as the command reads it), and the target runs through the same pipeline
(:func:`dpaudit.pipeline.run.run_target`) in this process: the result's ``to_record()`` is the
record ``dpaudit check TARGET --in-process`` writes for the same target and seed, replay stage
included (its timings aside).
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable, Mapping, Optional, Union

from dpaudit.errors import InvalidArgument
from dpaudit.pipeline.result import CheckResult

__all__ = ["check", "settings_for"]

#: keywords taken as flags with a value (the text ``dpaudit check`` would be given)
_VALUED = ("epsilon", "delta", "rho", "mu", "neighbours", "domain", "size", "samples",
           "confidence", "seed", "timeout", "call_timeout", "memory", "float", "sensitivity",
           "individual", "norm", "examples")
#: keywords that are switches, and the attribute (with its value when on) they set
_SWITCHES = {"replay": ("replay", True), "nonfinite": ("nonfinite", True)}


def _text(key: str, value: Any) -> Any:
    """A keyword's value as the command line would give it: numbers written exactly
    (:func:`dpaudit.reproduce.number`), a domain ``(lo, hi)`` as ``lo:hi``."""
    from dpaudit.reproduce import number

    if value is None or isinstance(value, str):
        return value
    if key == "domain":
        lo, hi = value
        return f"{number(lo)}:{number(hi)}"
    if key == "individual":
        return ",".join(number(v) for v in value)
    if isinstance(value, bool):
        raise InvalidArgument.bad(key, value, "a number or text, as its flag takes")
    if isinstance(value, (int, float)):
        return number(value)
    return value


def _namespace(target: str, options: dict) -> argparse.Namespace:
    """The flags of ``dpaudit check TARGET --in-process`` that ``options`` state."""
    args: dict[str, Any] = {"target": [target], "in_process": True}
    replay_stage = options.pop("replay_stage", True)
    early_stop = options.pop("early_stop", True)
    for key, value in options.items():
        if key in _VALUED:
            args[key] = _text(key, value)
        elif key in _SWITCHES:
            attr, on = _SWITCHES[key]
            args[attr] = on if value else None
        else:
            raise InvalidArgument(f"dpaudit.check() got an unknown keyword {key!r}: give the "
                                  f"flags of dpaudit check as keywords ({', '.join(_VALUED)}, "
                                  f"replay, nonfinite, replay_stage, early_stop)")
    args["replay_stage"] = bool(replay_stage)
    args["early_stop"] = bool(early_stop)
    return argparse.Namespace(**args)


def check(target: Union[str, Callable], *, progress: Union[bool, Callable[[dict], None]] = False,
          **options: Any) -> CheckResult:
    """Check ``target`` (``"FILE.py[:FUNCTION]"``, or a function) in this process, as
    ``dpaudit check TARGET --in-process`` does with the flags ``options`` state, and return the
    frozen :class:`~dpaudit.pipeline.result.CheckResult`: its ``verdict``, its ``result`` (the
    engine's own: an :class:`~dpaudit.results.AuditResult` for a sampled audit) and
    ``to_record()``. The stages are the command's: the replay stage, then the sampled audit
    (``replay_stage=False`` skips the first; ``replay=True`` runs the replay alone; ``rho=``/
    ``mu=`` audit a curve; ``sensitivity=B`` searches for a sensitivity violation).
    ``progress=True`` prints the command's progress line on stderr. A load or claim error raises
    (a :class:`~dpaudit.errors.DpauditError`); a mechanism that fails is an ERROR verdict."""
    from dpaudit.config import read_config, resolve_settings
    from dpaudit.pipeline.run import run_target
    from dpaudit.pipeline.target import open_function

    if not isinstance(target, str) and not callable(target):
        raise InvalidArgument.bad("target", target, "'FILE.py[:FUNCTION]' or a function")
    config, config_path = read_config()
    named = target if isinstance(target, str) else "function"
    settings = resolve_settings(_namespace(named, dict(options)), config, config_path)
    if callable(target):
        from dataclasses import replace

        settings = replace(settings, targets=(open_function(target, settings).name,))
    # the whole check keeps to ``timeout``, as the command's does (it was read and then not
    # passed on: a mechanism that hung kept dpaudit.check(..., timeout=5) waiting forever)
    deadline = None if settings.timeout is None else time.monotonic() + settings.timeout
    return run_target(target, settings, _progress(progress, settings), deadline)


def _progress(progress: Any, settings: Any) -> Any:
    if callable(progress):
        return progress
    from dpaudit.progress import Progress

    return Progress(quiet=not progress)


def settings_for(name: str, *, seed: Any, samples: Any = None, confidence: Any = 0.95,
                 timeout: Any = None, early_stop: Any = True, replay_stage: bool = False,
                 float_policy: Optional[str] = None, float_origin: str = "flag",
                 sensitivity: Optional[Mapping[str, Any]] = None) -> Any:
    """The :class:`~dpaudit.config.CheckSettings` of one in-memory target named ``name`` (the
    pytest fixture's, an audit of the suite), built as they are given: no pyproject.toml read,
    nothing validated (the engine validates what it is given, as when called directly), the
    defaults those of ``dpaudit check --in-process`` (confidence 0.95, the sandbox's limits
    unset: nothing runs in a sandbox). ``float_policy``: a float policy the caller stated
    (``float_origin`` says where). Nothing is imported: an in-memory audit runs in the state its
    caller left (the suite's records depend on it, :mod:`dpaudit.suite.run`). ``sensitivity``:
    ``{"bound": B}`` asks for the sensitivity search (:mod:`dpaudit.sensitivity.stage`)."""
    from dpaudit.config import CheckSettings

    origin = {} if float_policy is None else {"float": float_origin}
    return CheckSettings(targets=(name,), claim={}, samples=samples, confidence=confidence,
                         seed=seed, timeout=timeout, call_timeout=None, memory=None,
                         in_process=True, isolation="none", replay_stage=bool(replay_stage),
                         early_stop=bool(early_stop), float_policy=float_policy, origin=origin,
                         sensitivity=None if sensitivity is None else dict(sensitivity))
