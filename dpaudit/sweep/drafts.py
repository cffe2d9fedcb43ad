"""For every refutation: a reproduction that needs only the library, run in a fresh interpreter
where dpaudit cannot be imported (:func:`confirm`), and a Markdown draft of the upstream bug
report around it (:func:`draft`).

The reproduction of a stability map exceeded builds the object from its constructor's code,
evaluates it on the pair and measures the two outputs' distance under its output metric exactly
(fractions), then compares it with ``map(d_in)``. The reproduction of a privacy claim refuted
draws the measurement on D and on D′ (as often as the sweep's own estimates need to show the
excess, :func:`draws_for`: 10,000 to 200,000 times each), counts the event the audit chose, and states an ε lower
bound by Hoeffding's inequality at 99.9% on each count (weaker than the audit's Clopper–Pearson
bound, so it may fail to confirm a refutation close to the claim; the draft says which). A script
exits 1 when it reproduces the violation, 0 when it does not.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

from dpaudit.sweep.result import Case

__all__ = ["reproduction", "confirm", "draft", "write_drafts", "draws_for", "DRAWS", "MIN_DRAWS"]

#: draws per dataset in a privacy reproduction, at most
DRAWS = 200_000
#: draws per dataset in a privacy reproduction, at least
MIN_DRAWS = 10_000
#: the reproduction's confidence for both counts together (its Hoeffding slack)
_ALPHA = 0.001


def _slack(n: int) -> float:
    return math.sqrt(math.log(2 / _ALPHA) / (2 * n))


def draws_for(p: Any, q: Any, eps: Any, delta: Any = 0.0) -> int:
    """The draws per dataset a privacy reproduction takes: the least of MIN_DRAWS · 2^k (at most
    :data:`DRAWS`) at which the reproduction's bound, computed at the sweep's own estimates p ≥ q
    each moved against it by twice the slack, still exceeds ε:
    ln((p − δ − 2s) / (q + 2s)) > ε with s = sqrt(ln(2/α) / (2N)), α = 0.001 (Hoeffding 1963,
    Theorem 1, for each count). :data:`DRAWS` when p, q or ε are unknown or no such N exists. Fewer
    draws can only make the script say "not reproduced": what it prints is its own bound."""
    try:
        p, q, eps, delta = float(p), float(q), float(eps), float(delta or 0.0)
    except (TypeError, ValueError):
        return DRAWS
    if not all(math.isfinite(v) for v in (p, q, eps, delta)):
        return DRAWS
    p, q = max(p, q), min(p, q)
    n = MIN_DRAWS
    while n < DRAWS:
        s = 2 * _slack(n)
        if p - delta - s > 0 and math.log((p - delta - s) / (q + s)) > eps:
            return n
        n *= 2
    return DRAWS

_DISTANCE = '''
from collections import Counter
from fractions import Fraction
import math


def exact(v):
    return Fraction(v) if not isinstance(v, bool) else Fraction(int(v))


def distance(metric, a, b):
    """The distance of two outputs under an OpenDP metric, exactly (math.inf when unbounded)."""
    name = str(metric).split("(")[0]
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        a, b = [a], [b]
    a, b = list(a), list(b)
    if name in ("SymmetricDistance", "ChangeOneDistance"):
        ca, cb = Counter(a), Counter(b)
        d = sum(abs(ca[k] - cb[k]) for k in set(ca) | set(cb))
        return Fraction(d, 2) if name == "ChangeOneDistance" else Fraction(d)
    if name == "HammingDistance":
        return Fraction(sum(x != y for x, y in zip(a, b))) if len(a) == len(b) else math.inf
    if name == "DiscreteDistance":
        return Fraction(int(a != b))
    if len(a) != len(b):
        return math.inf
    diffs = [abs(exact(x) - exact(y)) for x, y in zip(a, b)]
    if name in ("AbsoluteDistance", "LInfDistance"):
        return max(diffs, default=Fraction(0))
    if name == "L1Distance":
        return sum(diffs, Fraction(0))
    if name == "L2Distance":
        return sum((d * d for d in diffs), Fraction(0)) ** 0.5
    raise SystemExit(f"no distance for {metric}")
'''


def _inputs(case: Case, obj: Any) -> Optional[tuple]:
    """The pair as OpenDP's inputs (the sweep's records converted as its checks converted them)."""
    import numpy as np

    from dpaudit.adapters.common import relation_for_metric
    from dpaudit.adapters.opendp import input_converter
    from dpaudit.stability.checker import default_d_in

    ev = case.evidence or {}
    if ev.get("dataset") is None:
        return None
    if "frame" in case.details:  # a Polars plan: the records go into frame_of (in the script)
        return ([float(v) for v in ev["dataset"]], [float(v) for v in ev["neighbour"]], 1)
    d_in = default_d_in(obj)
    relation, scale = relation_for_metric(obj.input_metric, d_in)
    convert = input_converter(obj.input_domain, relation, scale)[0]
    return (convert(np.asarray(ev["dataset"], dtype=float)), convert(np.asarray(ev["neighbour"], dtype=float)), d_in)


def reproduction(case: Case, obj: Any = None, library: str = "opendp") -> Optional[str]:
    """A Python script that shows ``case``'s refutation with ``library`` alone (None when the
    evidence cannot be written as one)."""
    ev = case.evidence or {}
    if library != "opendp" or case.code is None:
        return None
    head = "import opendp.prelude as dp\n"
    if "frame" in case.details:
        from dpaudit.sweep.polars import FRAME_CODE

        head += "import polars as pl\n\n" + FRAME_CODE
    features = '"contrib", "honest-but-curious"' if "make_user_" in case.code else '"contrib"'
    head += (f"\ndp.enable_features({features})\n"
             f"obj = {case.code}\n")
    if case.check == "stability" and obj is not None:
        pair = _inputs(case, obj)
        if pair is None:
            return None
        x, y, d_in = pair
        return (head + _DISTANCE + f"\nD = {x!r}\nD_prime = {y!r}\nd_in = {d_in!r}\n" + '''
# the parts of a chain, in the order they run (a single transformation is its own only part)
a, b = obj(D), obj(D_prime)
claim = obj.map(d_in)
d_out = distance(obj.output_metric, a, b)
print(f"map({d_in}) = {claim!r}; outputs {a!r} and {b!r}; d_out = {float(d_out)!r}")
if d_out > Fraction(claim):
    print("REPRODUCED: the output distance exceeds the stability map")
    raise SystemExit(1)
print("not reproduced")
''')
    if case.check == "privacy":
        rec = ev.get("event_record") or {}
        test = _event_code(rec)
        if test is None or ev.get("dataset") is None:
            return None
        pair = _inputs(case, obj) if obj is not None else None
        if pair is None:
            return None
        x, y, d_in = pair
        eps, delta = ev.get("claimed"), ev.get("delta") or 0.0
        frames = "frame_of(" if "frame" in case.details else "("
        n = draws_for(ev.get("p"), ev.get("q"), eps, delta)
        return (head + f"\nD = {frames}{x!r})\nD_prime = {frames}{y!r})\nd_in = {d_in!r}\nN = {n}\n\n"
                f"def event(out):\n    return {test}\n\n" + f'''import math

def release(x):
    out = obj(x)
    if hasattr(out, "collect"):  # a Polars release: its one value
        out = out.collect().row(0)[0]
    return out


p = sum(event(release(D)) for _ in range(N)) / N
q = sum(event(release(D_prime)) for _ in range(N)) / N
if p < q:
    p, q = q, p
slack = math.sqrt(math.log(2 / 0.001) / (2 * N))  # Hoeffding, 99.9% for both counts
p_lo, q_hi = max(p - slack, 0.0), min(q + slack, 1.0)
claim = obj.map(d_in)
eps, delta = {eps!r}, {delta!r}
lb = math.log((p_lo - delta) / q_hi) if p_lo > delta and q_hi > 0 else 0.0
print(f"claim {{claim!r}}; P[event | D] = {{p:.6f}}, P[event | D'] = {{q:.6f}}; eps >= {{lb:.4f}} at 99.9%")
if lb > eps:
    print("REPRODUCED: the privacy loss exceeds the claim")
    raise SystemExit(1)
print("not reproduced")
''')
    return None


def _event_code(rec: dict) -> Optional[str]:
    kind = rec.get("kind")
    if kind == "threshold" and rec.get("side") in ("above", "below"):
        op = ">=" if rec["side"] == "above" else "<"
        return f"out {op} {float(rec['threshold'])!r}"
    if kind == "interval" and "lo" in rec and "hi" in rec:
        return f"{float(rec['lo'])!r} <= out < {float(rec['hi'])!r}"
    if kind in ("atom", "atoms", "value") and "value" in rec:
        return f"out == {rec['value']!r}"
    return None


def run_alone(script: str, timeout: float = 300.0) -> tuple[Optional[bool], str]:
    """Run ``script`` in a fresh isolated interpreter (``python -I``) where importing dpaudit fails;
    (True when it reproduced, False when not, None when it failed) and its output."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(script)
        path = fh.name
    runner = ("import sys; sys.modules['dpaudit'] = None\n"
              f"exec(compile(open({path!r}).read(), {path!r}, 'exec'))")
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env["RUST_LIB_BACKTRACE"] = "0"
    try:
        done = subprocess.run([sys.executable, "-I", "-c", runner], capture_output=True, text=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    finally:
        os.unlink(path)
    text = (done.stdout + done.stderr).strip()[-2000:]
    if done.returncode == 1 and "REPRODUCED" in done.stdout:
        return True, text
    if done.returncode == 0:
        return False, text
    return None, text


def confirm(case: Case, library: str, obj: Any = None) -> None:
    """Write ``case``'s reproduction and run it against the library alone."""
    script = reproduction(case, obj, library)
    case.reproduction = script
    if script is None:
        case.confirmed = None
        case.details["reproduction"] = "the evidence cannot be written as a script of the library alone"
        return
    ok, out = run_alone(script)
    case.confirmed = ok
    case.details["reproduction_output"] = out


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")[:80]


def draft(case: Case, library: str, version: str) -> str:
    """The Markdown draft of an upstream bug report for a refuted case."""
    ev = case.evidence or {}
    name = case.constructor.rsplit(".", 1)[-1]
    what = ("stability map" if case.check == "stability" else "privacy map")
    lines = [f"# `{name}`: the {what} does not hold ({library} {version})", "",
             "## What happens", "",
             f"`{case.code}` declares `{case.claim}`."]
    if case.check == "stability":
        lines.append(f"On the neighbouring inputs D = `{ev.get('dataset')}` and D′ = `{ev.get('neighbour')}` "
                     f"({ev.get('relation')}, d_in = {ev.get('d_in')}), {ev.get('violation') or ''}")
    else:
        lines.append(f"Sampling it on D = `{ev.get('dataset')}` and D′ = `{ev.get('neighbour')}`, the event "
                     f"`{ev.get('event')}` has probabilities {ev.get('p')} and {ev.get('q')}: "
                     f"{ev.get('bound_name', 'ε_LB')} = {case.bound} at confidence {ev.get('confidence')}, "
                     f"above the declared {ev.get('claimed')}.")
    lines += ["", "## Reproduction (needs only the library)", "", "```python", (case.reproduction or "").rstrip(),
              "```", "",
              {True: "Run against the library alone: it reproduces the violation (exit 1).",
               False: "Run against the library alone, this script did NOT reproduce it: the sweep's "
                      "evidence stands on its own statistics; check before filing.",
               None: "This reproduction could not be run or written: check before filing."}[case.confirmed],
              "", "## Expected", "",
              f"The {what} should bound what the outputs show on every pair of d_in-close inputs.", ""]
    out = case.details.get("reproduction_output")
    if out:
        lines += ["## Output", "", "```text", out, "```", ""]
    return "\n".join(lines)


def write_drafts(cases: list, folder: os.PathLike, library: str, version: str) -> list[Path]:
    """One ``<constructor>_<k>.md`` draft per refuted case in ``folder``."""
    folder = Path(folder)
    paths = []
    for k, case in enumerate(c for c in cases if c.verdict == "refuted"):
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{_slug(case.constructor.rsplit('.', 1)[-1])}_{k}.md"
        path.write_text(draft(case, library, version), encoding="utf-8")
        paths.append(path)
    return paths
