"""Configuration: flags > ``[tool.dpaudit]`` of the nearest pyproject.toml > defaults.

The home of :func:`read_config` (the ``[tool.dpaudit]`` table) and of :class:`CheckSettings`, the
validated settings of one ``dpaudit check`` run (:func:`resolve_settings`). The value parsers
every command shares (a number, an integer such as ``2e5`` or ``200_000``, seconds, a memory size,
the root seed) live in :mod:`dpaudit.validation` and are re-exported here; :func:`parse_domain`
and :func:`parse_neighbours` turn a flag into a claim's domain or relation. Every bad value raises
:class:`~dpaudit.errors.InvalidArgument` naming the flag or the pyproject key, so the command
prints one line and exits 3. Settings import no engine: the auditor's sample limits are
validation's (:data:`dpaudit.validation.MIN_SAMPLES`), and the default budget, which depends on
the mechanism, is the auditor's (:func:`dpaudit.auditor.default_samples`).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from dpaudit.claims import (NOTIONS, Domain, Neighbours, check_confidence, check_delta, check_epsilon,
                            claim_notion)
from dpaudit.errors import InvalidArgument, UsageError
# every check of a typed value lives in dpaudit.validation; its parsers are re-exported here
from dpaudit.validation import (DEFAULT_SEED, MAX_SECONDS, check_float_policy, parse_bound,
                                parse_choice, parse_integer, parse_interval, parse_memory,
                                parse_real, parse_samples, parse_seconds, parse_seed)

__all__ = ["CheckSettings", "resolve_settings", "read_config", "resolve_seed", "parse_seed",
           "parse_real", "parse_integer", "parse_seconds", "parse_domain", "parse_neighbours",
           "defaults", "claim_from_flags", "MAX_SECONDS"]


# -- values -------------------------------------------------------------------------------------

def parse_domain(name: str, raw: Any) -> Domain:
    """``LO:HI`` with finite LO < HI (``--domain=-10:10``; :func:`dpaudit.validation.parse_interval`)."""
    return Domain(*parse_interval(name, raw))


def parse_neighbours(name: str, raw: Any) -> Any:
    """A neighbour relation or one of its aliases (:meth:`Neighbours.parse`), or a notion users
    speak (:func:`dpaudit.claims.claim_notion`: ``bounded``, ``unbounded``,
    ``add-remove-public-size``, ``change-one``). A notion that audits the stated claim as it is
    comes back as its :class:`Neighbours`; one that changes it (group privacy) as the notion."""
    try:
        notion = claim_notion(raw)
    except InvalidArgument:
        allowed = ", ".join([m.value for m in Neighbours] + list(NOTIONS))
        raise InvalidArgument.bad(name, raw, f"one of {allowed}") from None
    return notion.relation if notion.group == 1 else notion


def defaults() -> dict[str, Any]:
    """The default run settings of ``dpaudit check`` (keys as in ``[tool.dpaudit]``)."""
    from dpaudit.execution.sandbox import DEFAULT_CALL_TIMEOUT, DEFAULT_MEMORY

    return {"seed": DEFAULT_SEED, "samples": None, "confidence": 0.95, "timeout": None,
            "call-timeout": DEFAULT_CALL_TIMEOUT, "memory": DEFAULT_MEMORY, "isolation": "strict",
            "float": None}


#: The largest ``--size`` (records per dataset): every dataset is built in dpaudit's process.
MAX_SIZE = 100_000


def _isolation(name: str, raw: Any) -> str:
    from dpaudit.execution.isolation import ISOLATION_LEVELS

    return parse_choice(name, raw, ISOLATION_LEVELS)


#: The run settings, as ``[tool.dpaudit]`` keys (``_`` and ``-`` are interchangeable there):
#: key -> (flag attribute, parser of (name, raw)).
_RUN_SETTINGS = {
    "seed": ("seed", parse_seed),
    "samples": ("samples", parse_samples),
    "confidence": ("confidence", lambda n, r: check_confidence(parse_real(n, r), n)),
    "timeout": ("timeout", parse_seconds),
    "call-timeout": ("call_timeout", parse_seconds),
    "memory": ("memory", lambda n, r: parse_memory(r, n)),
    "isolation": ("isolation", _isolation),
    "float": ("float", lambda n, r: check_float_policy(r, n)),
}


# -- pyproject.toml -----------------------------------------------------------------------------

def read_config(start: Optional[str] = None) -> tuple[dict[str, Any], Optional[str]]:
    """The ``[tool.dpaudit]`` table of the nearest ``pyproject.toml`` at or above ``start`` (the
    working folder), with its path; ``({}, None)`` when there is none. Keys are normalised to the
    flag spelling (``call_timeout`` → ``call-timeout``); sub-tables (``targets``) keep their keys.
    A file that does not parse is a UsageError."""
    folder = os.path.abspath(start or os.getcwd())
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate):
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            return {}, None
        folder = parent
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10: the same parser, as the tomli backport (a dependency)
        import tomli as tomllib
    try:
        with open(candidate, "rb") as fh:
            table = tomllib.load(fh).get("tool", {}).get("dpaudit", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:  # not UTF-8: not TOML
        raise UsageError(f"{candidate}: cannot read [tool.dpaudit]: {exc}") from None
    if not isinstance(table, dict):
        raise UsageError(f"{candidate}: [tool.dpaudit] must be a table")
    return {str(k).replace("_", "-"): v for k, v in table.items()}, candidate


def _where(config_path: Optional[str]) -> str:
    return os.path.relpath(config_path) if config_path else "pyproject.toml"


def resolve_seed(raw: Any, flag: str = "--seed", *, config: Optional[Mapping[str, Any]] = None,
                 config_path: Optional[str] = None, read: bool = True) -> tuple[int, str]:
    """The root seed and where it came from: ``raw`` (the flag's value) when given, else ``seed``
    of ``[tool.dpaudit]`` (read from the nearest pyproject.toml when ``config`` is None and
    ``read``), else :data:`~dpaudit.rng.DEFAULT_SEED`; origin is ``"flag"``, the pyproject's
    path or ``"default"``."""
    if raw is not None:
        return parse_seed(flag, raw), "flag"
    if config is None and read:
        config, config_path = read_config()
    if config and config.get("seed") is not None:
        where = _where(config_path)
        return parse_seed(f"{where} [tool.dpaudit] seed", config["seed"]), where
    return DEFAULT_SEED, "default"


# -- the settings of `dpaudit check` ------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class CheckSettings:
    """Everything one ``dpaudit check`` run needs, validated. ``claim`` holds only the claim fields
    given on the command line (they override the mechanism's declaration); ``origin`` says where
    each run setting came from (``"flag"``, ``"pyproject.toml"`` or ``"default"``)."""

    targets: tuple[str, ...]
    claim: Mapping[str, Any]
    samples: Optional[int]
    confidence: float
    seed: int
    timeout: Optional[float]
    call_timeout: Optional[float]
    memory: Optional[int]
    in_process: bool = False
    isolation: str = "strict"
    pass_env: tuple[str, ...] = ()
    sensitivity: Optional[Mapping[str, Any]] = None  # --sensitivity (dpaudit.sensitivity.stage)
    replay: Optional[Mapping[str, Any]] = None  # --replay (dpaudit.replay.command)
    #: the replay stage before a sampled audit (``--no-replay`` turns it off;
    #: :func:`dpaudit.replay.command.replay_stage`)
    replay_stage: bool = True
    executor: Optional[str] = None
    reports: Mapping[str, Optional[str]] = field(default_factory=dict)
    exit_zero: bool = False
    fail_on_inconclusive: bool = False
    quiet: bool = False
    origin: Mapping[str, str] = field(default_factory=dict)
    early_stop: bool = True
    #: the float policy of ``--float`` or ``[tool.dpaudit] float`` (None: the decorator's, else
    #: ``"error"``); a ``[tool.dpaudit.targets]`` table's ``float`` comes before the latter
    float_policy: Optional[str] = None
    target_claims: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    config_dir: Optional[str] = None
    config_path: Optional[str] = None
    #: --trust-config: settings that can weaken the audit were taken from the pyproject.toml
    trusted: bool = False

    @property
    def family(self) -> int:
        """How many targets share the run's family-wise confidence."""
        return max(1, len(self.targets))

    @property
    def sizes_by_default(self) -> bool:
        """Neither ``--samples`` nor ``--timeout``: a default budget too long for
        :data:`dpaudit.auditor.DEFAULT_FIT_SECONDS` is sized to it."""
        return self.samples is None and self.timeout is None

    @property
    def target_confidence(self) -> float:
        """The confidence each target is audited at: 1 − (1 − confidence)/targets (Bonferroni),
        so every bound of the run holds at once with probability ≥ ``confidence``."""
        return self.confidence if self.family == 1 else 1.0 - (1.0 - self.confidence) / self.family

    def claim_for(self, target: str, resolved: str = "") -> dict[str, Any]:
        """The claim fields of one target: its ``[tool.dpaudit.targets."FILE:FUNC"]`` table (a key
        without ``:FUNC`` covers the whole file), then the command-line flags over it; and the
        float policy: ``--float``, else the table's, else ``[tool.dpaudit] float`` (the
        decorator's comes after all of them, :meth:`MechanismSpec.from_function`)."""
        table = _match_target(self.target_claims, self.config_dir, target, resolved)
        claim = {**table, **self.claim}
        if self.float_policy is not None and (self.origin.get("float") == "flag" or "float" not in claim):
            claim["float"] = self.float_policy
        return claim


def claim_from_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The claim fields given as ``--epsilon``, ``--delta``, ``--neighbours``, ``--domain``,
    ``--size`` (validated; absent ones are left out)."""
    claim: dict[str, Any] = {}
    if getattr(args, "epsilon", None) is not None:
        claim["epsilon"] = check_epsilon(parse_real("--epsilon", args.epsilon), "--epsilon")
    if getattr(args, "delta", None) is not None:
        claim["delta"] = check_delta(parse_real("--delta", args.delta), "--delta")
    if getattr(args, "neighbours", None) is not None:
        claim["neighbours"] = parse_neighbours("--neighbours", args.neighbours)
    if getattr(args, "domain", None) is not None:
        claim["domain"] = parse_domain("--domain", args.domain)
    if getattr(args, "size", None) is not None:
        claim["size"] = parse_integer("--size", args.size, f"an integer in [1, {MAX_SIZE}]", 1,
                                      MAX_SIZE)
    for key in ("rho", "mu"):  # a claim stated as a curve (dpaudit.curves)
        if getattr(args, key, None) is not None:
            claim[key] = check_epsilon(parse_real(f"--{key}", getattr(args, key)), f"--{key}")
    if sum(claim.get(k) is not None for k in ("rho", "mu", "epsilon")) > 1:
        given = [f"--{k}" for k in ("epsilon", "rho", "mu") if claim.get(k) is not None]
        raise InvalidArgument(f"{' and '.join(given)} state two claims: give one")
    return claim


def _sensitivity_settings(args: argparse.Namespace) -> Optional[dict[str, Any]]:
    if getattr(args, "sensitivity", None) is None:
        for flag in ("individual", "norm", "examples"):
            if getattr(args, flag, None) is not None:
                raise InvalidArgument(f"--{flag} needs --sensitivity B")
        return None
    return parse_sensitivity_flags(args)


_NORMS = ("l1", "l2", "linf")


def parse_sensitivity_flags(args: argparse.Namespace) -> dict[str, Any]:
    """Validate ``--sensitivity``, ``--individual``, ``--norm`` and ``--examples``."""
    out: dict[str, Any] = {"bound": parse_bound("--sensitivity", args.sensitivity),
                           "individual": None, "norm": None, "examples": 1000}
    if getattr(args, "individual", None) is not None:
        parts = [p for p in str(args.individual).split(",") if p.strip()]
        if not parts:
            raise InvalidArgument.bad("--individual", args.individual, "numbers D0,D1,... >= 0")
        out["individual"] = tuple(parse_bound("--individual", p) for p in parts)
    if getattr(args, "norm", None) is not None:
        out["norm"] = parse_choice("--norm", args.norm, _NORMS, normalise=lambda s: s)
    if getattr(args, "examples", None) is not None:
        out["examples"] = parse_integer("--examples", args.examples, "an integer in [1, 10000000]",
                                        1, 10 ** 7)
    return out


def _replay_option(args: argparse.Namespace) -> Optional[dict[str, Any]]:
    """``--replay`` (with ``--nonfinite``): the replay audit alone. It runs where the mechanism
    runs (the sandbox child, or this process with ``--in-process``: the recording generator must
    live beside the function), and it does not combine with ``--sensitivity`` or
    ``--no-replay``."""
    if not getattr(args, "replay", False):
        if getattr(args, "nonfinite", False):
            raise InvalidArgument("--nonfinite needs --replay")
        return None
    if getattr(args, "sensitivity", None) is not None:
        raise UsageError("--replay and --sensitivity are two different audits: give one")
    if getattr(args, "replay_stage", True) is False:
        raise UsageError("--replay and --no-replay contradict each other: give one")
    return {"nonfinite": bool(getattr(args, "nonfinite", False))}


def _executor_option(args: argparse.Namespace) -> Optional[str]:
    """``--executor dask`` or ``--executor tcp://HOST:PORT``; refused for untrusted code (a Dask
    worker calls the mechanism without the sandbox), so it needs ``--in-process``."""
    value = getattr(args, "executor", None)
    if value is None:
        return None
    if value != "dask" and "://" not in value:
        raise UsageError(f"--executor must be 'dask' or a scheduler address such as tcp://HOST:8786, "
                         f"got {value!r}")
    if not getattr(args, "in_process", False):
        raise UsageError(f"--executor {value} runs the mechanism in Dask workers without the sandbox; "
                         "add --in-process to confirm the code is trusted")
    return value


def _read_by_run(targets: Any, config_path: Optional[str]) -> dict[str, str]:
    """``{real path: path as given}`` of the files a check run reads: each target's file
    (``FILE.py`` or ``FILE.py:FUNCTION``) and the pyproject.toml its settings come from."""
    read: dict[str, str] = {}
    for t in [*(targets or ()), config_path]:
        if not isinstance(t, str):
            continue
        t = t[len("lib:"):] if t.startswith("lib:") else t  # a lib:FILE.py[:NAME] target's file
        for path in (t, t.rpartition(":")[0]):
            if path and os.path.isfile(path):
                read.setdefault(os.path.realpath(path), path)
    return read


def reports_apart(reports: Mapping[str, Any], targets: Any,
                  config_path: Optional[str] = None) -> dict[str, Any]:
    """``reports`` less those whose path is a file the run reads (:func:`_read_by_run`), and less
    every format of a path two formats name: what an error may still be written to (a refused
    run must not overwrite the code it was given, nor write one of two formats it refused to
    write to one path: ``--json same.out --html same.out`` left HTML in same.out)."""
    read = _read_by_run(targets, config_path)
    keys = {fmt: os.path.realpath(os.fspath(path)) for fmt, path in reports.items() if path is not None}
    shared = {k for k in keys.values() if list(keys.values()).count(k) > 1}
    return {fmt: None if path is not None and (keys[fmt] in read or keys[fmt] in shared) else path
            for fmt, path in reports.items()}


def resolve_settings(args: argparse.Namespace, config: Optional[Mapping[str, Any]] = None,
                     config_path: Optional[str] = None) -> CheckSettings:
    """Validate the flags of ``dpaudit check`` and merge them over ``config`` (the
    ``[tool.dpaudit]`` table) over the defaults. Raises InvalidArgument naming the flag (or the
    pyproject key) and its value."""
    from dpaudit.report.registry import report_paths

    config = dict(config or {})
    where = _where(config_path)
    unknown = sorted(set(config) - set(_RUN_SETTINGS) - {"targets"})
    if unknown:  # a misspelt key (`sample = …`) would silently change nothing
        raise InvalidArgument.bad(f"{where} [tool.dpaudit] key", unknown[0],
                                  "one of " + ", ".join([*_RUN_SETTINGS, "targets"]))
    initial = defaults()
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    refused: dict[str, Any] = {}
    trusted = bool(getattr(args, "trust_config", False))
    for key, (attr, parse) in _RUN_SETTINGS.items():
        raw = getattr(args, attr, None)
        if raw is not None:
            values[key], origin[key] = parse(f"--{key}", raw), "flag"
        elif key in config:
            values[key], origin[key] = parse(f"{where} [tool.dpaudit] {key}", config[key]), where
            in_process = key == "isolation" and getattr(args, "in_process", False)
            if not trusted and not in_process and weakens(key, values[key]):
                refused[key] = config[key]  # (--in-process already runs it with none)
        else:
            values[key], origin[key] = initial[key], "default"
    if refused:  # named in the file's order
        refused = {k: refused[k] for k in config if k in refused}
        raise InvalidArgument(_refusal(f"{where} sets", refused, "under [tool.dpaudit]"))
    tables = target_tables(config.get("targets"), where)
    if not trusted:
        _refuse_tables(config.get("targets"), tables, where)
    targets = args.target if isinstance(args.target, (list, tuple)) else [args.target]
    targets = list(dict.fromkeys(targets))  # a target named twice is audited once (its confidence whole)
    if getattr(args, "in_process", False) and origin["isolation"] == "flag" and values["isolation"] != "none":
        raise InvalidArgument(f"--in-process runs the code without the sandbox: it contradicts "
                              f"--isolation {values['isolation']}")
    reports = report_paths(args)
    seen: dict[str, str] = {}
    for fmt, path in reports.items():
        if path is not None:
            key = os.path.realpath(os.fspath(path))
            if key in seen:  # the second format would overwrite the first
                raise InvalidArgument(f"--{seen[key]} and --{fmt} both write {path}")
            seen[key] = fmt
    reads = _read_by_run(targets, config_path)
    for key, fmt in seen.items():
        read = reads.get(key)
        if read is not None:  # the report would replace the code (or settings) under audit
            raise InvalidArgument(f"--{fmt} {reports[fmt]} would overwrite {read}, which this run "
                                  f"reads: give the report another path")
    return CheckSettings(
        target_claims=tables,
        config_dir=os.path.dirname(os.path.abspath(config_path)) if config_path else None,
        targets=tuple(targets),
        claim=claim_from_flags(args),
        samples=values["samples"],
        confidence=values["confidence"],
        seed=values["seed"],
        timeout=values["timeout"],
        call_timeout=values["call-timeout"],
        memory=values["memory"],
        in_process=bool(getattr(args, "in_process", False)) or values["isolation"] == "none",
        isolation="none" if getattr(args, "in_process", False) else values["isolation"],
        pass_env=tuple(getattr(args, "pass_env", None) or ()),
        sensitivity=_sensitivity_settings(args),
        replay=_replay_option(args),
        replay_stage=bool(getattr(args, "replay_stage", True)),
        executor=_executor_option(args),
        reports=reports,
        exit_zero=bool(getattr(args, "exit_zero", False)),
        fail_on_inconclusive=bool(getattr(args, "fail_on_inconclusive", False)),
        quiet=bool(getattr(args, "quiet", False)),
        origin=origin,
        early_stop=bool(getattr(args, "early_stop", True)),
        float_policy=values["float"],
        config_path=config_path,
        trusted=trusted,
    )


#: the value of a key that can only make the audit stricter: taken from any pyproject.toml
_STRICTEST = {"float": "error", "isolation": "strict"}


def weakens(key: str, value: Any) -> bool:
    """Whether a ``[tool.dpaudit]`` (or ``[tool.dpaudit.targets]``) setting can weaken the audit:
    such a key is taken from the file only with ``--trust-config``. The file read is the nearest
    pyproject.toml, which inside a third-party checkout is that project's own, so its authors
    would choose how their code is audited: the float policy (``"off"`` hides a porous float64
    implementation), the budget and the confidence (too few samples refute nothing), the seed (a
    seed tried until the audit passes), the time and sandbox limits and the isolation, and every
    claim field of a target (a larger ε, a narrower domain). Only a value that cannot weaken
    anything is taken without the flag (``float = "error"``, ``isolation = "strict"``)."""
    return key not in _STRICTEST or value != _STRICTEST[key]


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value).replace("'", "")


def _refusal(prefix: str, refused: Mapping[str, Any], suffix: str = "") -> str:
    """The one line refusing ``refused`` (key -> the file's value)."""
    said = ", ".join(f"{k} = {_shown(v)}" for k, v in refused.items())
    flags = ", ".join(f"--{k}" for k in refused)
    return (f"{prefix} {said}{' ' + suffix if suffix else ''}: the audited checkout may not weaken "
            f"the audit; give --trust-config to take {'them' if len(refused) > 1 else 'it'} from "
            f"the file, or state {'them' if len(refused) > 1 else 'it'} as "
            f"{'flags' if len(refused) > 1 else 'a flag'} ({flags})")


def _refuse_tables(raw: Any, tables: Mapping[str, Mapping[str, Any]], where: str) -> None:
    """InvalidArgument for the first ``[tool.dpaudit.targets."..."]`` table that sets a key
    (:func:`weakens`) without ``--trust-config``: its claim fields would override the mechanism's
    own declaration, and its ``float`` the float policy."""
    for target, table in (raw or {}).items():
        checked = tables.get(str(target), {})
        refused = {}
        for k, v in dict(table).items():
            key = str(k).replace("_", "-")
            if weakens(key, checked.get("float") if key == "float" else v):
                refused[key] = v
        if refused:
            raise InvalidArgument(_refusal(f'{where} [tool.dpaudit.targets."{target}"] sets', refused))


def settings_from_file(settings: "CheckSettings", target: str, resolved: str = "") -> dict[str, Any]:
    """The settings of one target that came from the pyproject.toml (taken with
    ``--trust-config``), keyed as flags are named (``samples``, ``seed``, ``float``, ``epsilon``,
    ...): what the verdict line, the reproduce line and the record say came from the file."""
    out: dict[str, Any] = {}
    for key in _RUN_SETTINGS:
        if settings.origin.get(key) not in (None, "flag", "default"):
            value = {"call-timeout": settings.call_timeout}.get(key, getattr(settings, key, None))
            out[key] = settings.float_policy if key == "float" else value
    table = _match_target(settings.target_claims, settings.config_dir, target, resolved)
    for key, value in table.items():
        if settings.claim.get(key) is None:
            out[key] = value
    if "float" in out and settings.origin.get("float") == "flag":
        del out["float"]  # the flag's float wins over the table's
    return {k: _plain(out[k]) for k in _SHOWN_ORDER if k in out}


#: the order the reproduce line spells settings in (:func:`dpaudit.reproduce.check_command`)
_SHOWN_ORDER = ("epsilon", "delta", "rho", "mu", "neighbours", "domain", "size", "samples",
                "confidence", "seed", "timeout", "call-timeout", "memory", "isolation", "float")


def _plain(value: Any) -> Any:
    """A setting as JSON holds it (a domain as ``[lo, hi]``, a relation by its name)."""
    if isinstance(value, Domain):
        return [value.lo, value.hi]
    return getattr(value, "value", value)


# -- per-target claims --------------------------------------------------------------------------

_CLAIM_KEYS = ("epsilon", "delta", "neighbours", "domain", "size", "float", "rho", "mu")


def target_tables(raw: Any, where: str = "pyproject.toml") -> dict[str, dict[str, Any]]:
    """The validated ``[tool.dpaudit.targets."FILE:FUNC"]`` tables: target → claim fields
    (``epsilon``, ``delta``, ``neighbours`` (a relation or a notion: ``bounded``,
    ``add-remove-public-size``, ...), ``domain`` (``"LO:HI"`` or ``[lo, hi]``), ``size``)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise InvalidArgument.bad(f"{where} [tool.dpaudit.targets]", raw, "a table of tables")
    out: dict[str, dict[str, Any]] = {}
    for target, table in raw.items():
        name = f'{where} [tool.dpaudit.targets."{target}"]'
        if not isinstance(table, Mapping):
            raise InvalidArgument.bad(name, table, "a table (epsilon = 1.0, neighbours = ...)")
        keys = {str(k).replace("_", "-"): v for k, v in table.items()}
        unknown = sorted(set(keys) - set(_CLAIM_KEYS) - {"neighbors"})
        if unknown:
            raise InvalidArgument.bad(f"{name} key", unknown[0], "one of " + ", ".join(_CLAIM_KEYS))
        if "neighbors" in keys:
            keys.setdefault("neighbours", keys.pop("neighbors"))
        fields = argparse.Namespace(**{k: keys.get(k) for k in _CLAIM_KEYS})
        if isinstance(fields.domain, (list, tuple)) and len(fields.domain) == 2:
            fields.domain = f"{fields.domain[0]}:{fields.domain[1]}"
        try:
            out[str(target)] = claim_from_flags(fields)
            if keys.get("float") is not None:
                out[str(target)]["float"] = check_float_policy(keys["float"], "float")
        except InvalidArgument as exc:
            raise InvalidArgument(f"{name}: {str(exc).replace('--', '')}") from None
    return out


def _match_target(tables: Mapping[str, Mapping[str, Any]], base: Optional[str], target: str,
                  resolved: str) -> dict[str, Any]:
    """The table of ``target`` (as given, or ``resolved`` as ``path:function``): an exact key
    first, then a key naming the same file (relative to ``base``, the pyproject's folder) and
    function, then one naming the file alone."""
    if not tables:
        return {}
    for key in (target, resolved):
        if key and key in tables:
            return dict(tables[key])

    def split(text: str, relative_to: Optional[str]) -> tuple[str, str]:
        path, _, func = text.partition(":") if not os.path.isabs(text) or ":" in text[2:] \
            else (text, "", "")
        root = relative_to or os.getcwd()
        return os.path.normpath(os.path.join(root, path)), func

    wanted = [split(t, None) for t in (target, resolved) if t]
    file_only = None
    for key, table in tables.items():
        kpath, kfunc = split(key, base)
        for path, func in wanted:
            if kpath == path and kfunc and kfunc == func:
                return dict(table)
            if kpath == path and not kfunc:
                file_only = dict(table)
    return file_only or {}

