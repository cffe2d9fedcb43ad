"""Every check of a value a user gives dpaudit, in one place.

Two families, one rule each:

* ``check_*`` take a Python value (an argument of :func:`dpaudit.audit`, a field of a claim, a
  sandbox limit) and return it normalised (``float``, ``int``) or raise.
* ``parse_*`` take what a user typed (a flag or a ``[tool.dpaudit]`` value: ``"2e5"``,
  ``"200_000"``, ``"1.5GiB"``) and return the value, named ``name`` in the error.

Every refusal is an :class:`~dpaudit.errors.InvalidArgument` naming the argument, what it must
be and the value given (``epsilon must be a finite number > 0, got -1.0``), so a command prints one
line and exits 3. This module sits below everything but :mod:`dpaudit.errors`: the claims, the seed
helpers, the settings, the auditor and the sandbox all take their checks from here (and re-export
the names they always had). Parsers of claim objects stay with their types
(:meth:`dpaudit.claims.Neighbours.parse`, :meth:`dpaudit.claims.Domain.parse`,
:func:`dpaudit.claims.claim_notion`); the text of a ``LO:HI`` domain is read here
(:func:`parse_interval`).
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Optional, Sequence

from dpaudit.errors import InvalidArgument

__all__ = [
    "DEFAULT_SEED", "MIN_SAMPLES", "MAX_SAMPLES", "MAX_SECONDS", "MIN_MEMORY", "MAX_MEMORY",
    "check_epsilon", "check_delta", "check_size", "check_confidence", "check_seed",
    "check_generator", "check_samples", "check_seconds", "check_bound", "check_callable",
    "check_executor", "check_count", "check_records", "check_float_policy", "FLOAT_POLICIES",
    "parse_real", "parse_integer", "parse_seed", "parse_samples", "parse_seconds", "parse_memory",
    "parse_bound", "parse_interval", "parse_choice",
]

#: The seed used when none is given. It is always recorded in results, so runs can be rerun.
DEFAULT_SEED = 20261122
#: The smallest sample budget (mechanism calls) an audit takes.
MIN_SAMPLES = 1_000
#: The largest sample budget taken: 10¹⁵ draws is years of work on any cluster, and larger counts
#: overflow the samplers' integer arithmetic (numpy's Poisson draws above ~9·10¹⁸).
MAX_SAMPLES = 10 ** 15
#: The longest time limit taken, in seconds: the sandbox turns limits into CPU rlimits, which a
#: C long bounds.
MAX_SECONDS = 1e9
#: The smallest and largest memory limits of the sandbox, in bytes (an address-space rlimit is a
#: C long; no machine has a pebibyte).
MIN_MEMORY = 64 * 1024 ** 2
MAX_MEMORY = 1024 ** 5
#: What a float64 finding does to the verdict (docs/floating-point.md): ``error``, a porous
#: mechanism is REFUTED (the claim is about the code as it runs); ``warn``, a float-only
#: refutation is reported and the run passes; ``off``, only the logic question is asked.
FLOAT_POLICIES = ("error", "warn", "off")


def _is_real(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _is_integer(x: Any) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


# -- Python values --------------------------------------------------------------------------------

def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """ε must be a finite real number > 0 (a Python value: text such as ``"1"`` is refused and
    said to be text, which the bare requirement did not)."""
    if not _is_real(epsilon) or not math.isfinite(float(epsilon)) or float(epsilon) <= 0:
        bad = InvalidArgument.bad(name, epsilon, "a finite number > 0")
        if isinstance(epsilon, str):
            raise InvalidArgument(f"{bad} (text: give the number without quotes)")
        if isinstance(epsilon, (tuple, list)) and len(epsilon) == 2 and all(map(_is_real, epsilon)):
            # OpenDP's map of an approximate-DP measurement is the pair (ε, δ)
            raise InvalidArgument(f"{bad} (a pair (ε, δ), as an approximate-DP map gives: write "
                                  f"{name}=m.map(d_in)[0], delta=m.map(d_in)[1])")
        raise bad
    return float(epsilon)


def check_float_policy(policy: Any, name: str = "float") -> str:
    """The float policy: one of :data:`FLOAT_POLICIES` (a string, any case)."""
    value = policy.strip().lower() if isinstance(policy, str) else None
    if value not in FLOAT_POLICIES:
        raise InvalidArgument.bad(name, policy, " | ".join(FLOAT_POLICIES))
    return value


def check_delta(delta: Any, name: str = "delta") -> float:
    """δ must be a real number in [0, 1)."""
    if not _is_real(delta) or not (0.0 <= float(delta) < 1.0):
        raise InvalidArgument.bad(name, delta, "a number in [0, 1)")
    return float(delta)


def check_size(size: Any, name: str = "size") -> int:
    """Dataset sizes are integers ≥ 0."""
    if not _is_integer(size) or int(size) < 0:
        raise InvalidArgument.bad(name, size, "an integer >= 0")
    return int(size)


def check_confidence(confidence: Any, name: str = "confidence") -> float:
    """A confidence level is a real number strictly between 0 and 1."""
    if not _is_real(confidence) or not (0.0 < float(confidence) < 1.0):
        raise InvalidArgument.bad(name, confidence, "a number strictly between 0 and 1")
    return float(confidence)


def check_seed(seed: Any, name: str = "seed") -> int:
    """A seed is an integer ≥ 0 (``None`` means :data:`DEFAULT_SEED`)."""
    if seed is None:
        return DEFAULT_SEED
    if not _is_integer(seed) or int(seed) < 0:
        raise InvalidArgument.bad(name, seed, "an integer >= 0")
    return int(seed)


def check_generator(rng: Any, name: str = "rng") -> Any:
    """Samplers take an explicit ``numpy.random.Generator`` and never fall back to a global one."""
    import numpy as np

    if not isinstance(rng, np.random.Generator):
        raise InvalidArgument.bad(name, rng, "a numpy.random.Generator (numpy.random.default_rng(seed))")
    return rng


def check_samples(samples: Any, name: str = "samples") -> Optional[int]:
    """A sample budget: None (the default budget) or an integer in
    [:data:`MIN_SAMPLES`, :data:`MAX_SAMPLES`]."""
    if samples is None:
        return None
    if not _is_integer(samples) or int(samples) < MIN_SAMPLES:
        raise InvalidArgument.bad(name, samples, f"None or an integer >= {MIN_SAMPLES}")
    if int(samples) > MAX_SAMPLES:
        raise InvalidArgument.bad(name, samples, "at most 1e15")
    return int(samples)


def _positive_seconds(value: float) -> bool:
    return math.isfinite(value) and value > 0


def check_seconds(value: Any, name: str = "timeout") -> Optional[float]:
    """A time limit given in Python: None (no limit) or a finite number of seconds > 0."""
    if value is None:
        return None
    if not _is_real(value) or not _positive_seconds(float(value)):
        raise InvalidArgument.bad(name, value, "None or a finite number of seconds > 0")
    return float(value)


def check_bound(value: Any, name: str = "bound") -> float:
    """A sensitivity bound Δ: a finite real number ≥ 0."""
    if not _is_real(value) or not math.isfinite(float(value)) or float(value) < 0:
        raise InvalidArgument.bad(name, value, "a finite number >= 0")
    return float(value)


def check_callable(name: str, f: Any) -> None:
    """None or a callable (a ``progress`` hook, a ``log_prob``)."""
    if f is not None and not callable(f):
        raise InvalidArgument.bad(name, f, "None or a callable")


def check_executor(executor: Any, name: str = "executor") -> Any:
    """None or an object with ``run(spec, tasks)`` (:class:`dpaudit.execution.base.Executor`)."""
    if executor is not None and not callable(getattr(executor, "run", None)):
        raise InvalidArgument.bad(name, executor, "None or an object with run(spec, tasks)")
    return executor


def check_count(value: Any, name: str, minimum: int = 1) -> int:
    """An integer ≥ ``minimum`` (``examples``, a number of pairs to try)."""
    if not _is_integer(value) or int(value) < minimum:
        raise InvalidArgument.bad(name, value, f"an integer >= {minimum}")
    return int(value)


def check_records(size: Any, neighbours: Any) -> int:
    """The ``size`` of an audited claim: at least one record (the largest dataset under
    add-remove neighbours, the records per dataset under the others)."""
    if not _is_integer(size) or int(size) < 1:
        relation = getattr(neighbours, "value", neighbours)
        what = ("the largest dataset" if relation == "add-remove"
                else f"records per dataset under {relation}")
        raise InvalidArgument.bad("size", size, f"an integer >= 1 ({what})")
    return int(size)


# -- what users type ------------------------------------------------------------------------------

def parse_real(name: str, raw: Any) -> float:
    """A number from a float, an int or a string (``"1e-6"``, ``"1_000"``)."""
    if isinstance(raw, bool):
        raise InvalidArgument.bad(name, raw, "a number")
    if isinstance(raw, (int, float)):
        return float(raw)
    text = str(raw).strip().replace("_", "")
    try:
        value = float(text)
    except ValueError:
        raise InvalidArgument.bad(name, raw, "a number") from None
    if value == 0 and any(c in "123456789" for c in text.lower().split("e")[0]):
        # "1e-400" reads as 0.0: a claim of δ = 1e-400 silently became pure DP
        raise InvalidArgument.bad(name, raw, "a number a double can hold (this one underflows to 0; "
                                  "write 0 if 0 is meant)")
    return value


def parse_integer(name: str, raw: Any, requirement: str, minimum: int,
                  maximum: Optional[int] = None) -> int:
    """An integer in [``minimum``, ``maximum``] from ``200000``, ``200_000`` or ``2e5`` (a float
    with an integer value); ``requirement`` says what it must be in the error."""
    try:
        value = parse_real(name, raw)
    except InvalidArgument:
        raise InvalidArgument.bad(name, raw, requirement) from None
    if not math.isfinite(value) or value != int(value) or int(value) < minimum \
            or (maximum is not None and int(value) > maximum):
        raise InvalidArgument.bad(name, raw, requirement)
    return int(value)


def parse_seed(name: str, raw: Any) -> int:
    """The root seed: an integer >= 0 (``"7"``, ``7``, ``"1e3"``), named ``name`` in errors. The
    only parser of a seed typed by a user."""
    if isinstance(raw, str) and raw.strip().isdigit():  # exact, however many digits
        return int(raw.strip())
    if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0:
        return raw
    return parse_integer(name, raw, "an integer >= 0", 0)


def parse_samples(name: str, raw: Any) -> int:
    """A sample budget typed by a user: an integer in [:data:`MIN_SAMPLES`, :data:`MAX_SAMPLES`]."""
    value = parse_integer(name, raw, f"an integer >= {MIN_SAMPLES}", MIN_SAMPLES)
    if value > MAX_SAMPLES:
        raise InvalidArgument.bad(name, raw, "at most 1e15")
    return value


def parse_seconds(name: str, raw: Any) -> float:
    """A time limit typed by a user: a finite number of seconds > 0, at most :data:`MAX_SECONDS`."""
    value = parse_real(name, raw) if not isinstance(raw, str) or raw.strip() else math.nan
    if not _positive_seconds(value):
        raise InvalidArgument.bad(name, raw, "a number of seconds > 0")
    if value > MAX_SECONDS:
        raise InvalidArgument.bad(name, raw, "a number of seconds > 0 and at most 1e9 (31 years)")
    return value


_MEMORY_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024 ** 2, "mb": 1024 ** 2,
                 "mib": 1024 ** 2, "g": 1024 ** 3, "gb": 1024 ** 3, "gib": 1024 ** 3,
                 "t": 1024 ** 4, "tb": 1024 ** 4, "tib": 1024 ** 4}


def parse_memory(value: Any, name: str = "memory") -> int:
    """A memory size in bytes from ``2G``, ``512M``, ``1.5GiB``, ``2e9`` or an integer, from
    :data:`MIN_MEMORY` (64 MiB) to :data:`MAX_MEMORY` (1024 TiB)."""
    if isinstance(value, bool):
        raise InvalidArgument.bad(name, value, "a size such as 2G or 512M")
    if isinstance(value, (int, float)):
        number, unit = float(value), ""
    else:
        text = str(value).strip().lower().replace("_", "")
        i = len(text)
        while i > 0 and text[i - 1].isalpha():
            i -= 1
        number_text, unit = text[:i], text[i:]
        try:
            number = float(number_text)
        except ValueError:
            raise InvalidArgument.bad(name, value, "a size such as 2G or 512M") from None
        if unit not in _MEMORY_UNITS:
            raise InvalidArgument.bad(name, value, "a size such as 2G or 512M (units K, M, G, T)")
    size = number * _MEMORY_UNITS[unit]
    if not math.isfinite(size) or size < MIN_MEMORY:
        raise InvalidArgument.bad(name, value, "a size of at least 64M")
    if size > MAX_MEMORY:
        raise InvalidArgument.bad(name, value, "a size from 64M to 1024T")
    return int(size)


def parse_bound(name: str, raw: Any) -> float:
    """A sensitivity bound typed by a user (``--sensitivity 1.5``): a finite number >= 0."""
    try:
        value = float(str(raw).strip().replace("_", ""))
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise InvalidArgument.bad(name, raw, "a finite number >= 0")
    return value


def parse_interval(name: str, raw: Any) -> tuple[float, float]:
    """``LO:HI`` with finite LO < HI (``--domain=-10:10``), as ``(lo, hi)``."""
    text = str(raw).strip()
    lo, sep, hi = text.partition(":")
    if not sep:
        raise InvalidArgument.bad(name, raw, "LO:HI, e.g. --domain=-10:10")
    a, b = parse_real(f"{name} LO", lo), parse_real(f"{name} HI", hi)
    if not (math.isfinite(a) and math.isfinite(b)) or not a < b:
        raise InvalidArgument.bad(name, raw, "LO:HI with finite LO < HI, e.g. --domain=-10:10")
    return a, b


def parse_choice(name: str, raw: Any, choices: Sequence[str],
                 normalise: Callable[[str], str] = lambda s: s.strip().lower()) -> str:
    """One of ``choices`` (``--isolation strict``), compared after ``normalise``."""
    value = normalise(str(raw))
    if value not in choices:
        raise InvalidArgument.bad(name, raw, " | ".join(choices))
    return value
