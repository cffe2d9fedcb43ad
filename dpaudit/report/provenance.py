"""What a record says about how far its verdict can be trusted, in words every format shares.

Two facts of a ``dpaudit check`` record that a reader must not miss:

* ``isolation``: what confined the audited code. When the sandbox was off (``--in-process``, a
  library target, ``--isolation none``) or reduced to a process of its own without Landlock
  (``--isolation process``, or a kernel without Landlock), :func:`isolation_off` says so: the
  verdict line, and every report format (JSON ``sandboxed: false``, HTML, Markdown, JUnit,
  SARIF) carry it.
* ``settings_from``: the settings taken from the checkout's pyproject.toml with
  ``--trust-config`` (``{"file": "pyproject.toml", "settings": {"samples": 1000, ...}}``), said
  on the verdict line and the reproduce line (:func:`settings_from_text`, :func:`reproduce_note`)
  so that a value chosen by the audited project never reads as if the user had passed it.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

__all__ = ["sandboxed", "isolation_off", "settings_from", "settings_from_text", "reproduce_note",
           "float_source", "computed_text"]


def sandboxed(rec: Mapping[str, Any]) -> Optional[bool]:
    """Whether the record's code ran in the full sandbox (Landlock); None when the record does
    not say (a suite audit, a result built by hand)."""
    iso = rec.get("isolation")
    if not isinstance(iso, str) or not iso:
        return None
    return iso.startswith("landlock")


def isolation_off(rec: Mapping[str, Any]) -> str:
    """``""`` when the record ran sandboxed (or does not say), else one sentence saying what the
    audited code could do: ``isolation off: the code ran in dpaudit's own process, without the
    sandbox (it could read the job's secrets and change this verdict)``."""
    if sandboxed(rec) is not False:
        return ""
    iso = " ".join(str(rec["isolation"]).split())[:160]
    if iso.startswith("none"):
        return ("isolation off: the code ran in dpaudit's own process, without the sandbox (it "
                "could read the job's secrets and change this verdict)")
    return (f"isolation off: {iso}, no file-system confinement (the code could read the "
            f"runner's files and reach the network)")


def settings_from(rec: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The file and the settings the record took from it (``("", {})`` when none)."""
    got = rec.get("settings_from")
    if not isinstance(got, Mapping) or not isinstance(got.get("settings"), Mapping):
        return "", {}
    return str(got.get("file") or "pyproject.toml"), {str(k): v for k, v in got["settings"].items()}


def _flag(key: str, value: Any) -> str:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        value = f"{value[0]:g}:{value[1]:g}" if all(isinstance(v, (int, float)) for v in value) \
            else ":".join(map(str, value))
    return f"--{key}={value}"


def settings_from_text(rec: Mapping[str, Any]) -> str:
    """``from pyproject.toml, taken with --trust-config: --samples=1000, --float=off`` (``""``
    when the record took nothing from a file)."""
    where, taken = settings_from(rec)
    if not taken:
        return ""
    return f"from {where}, taken with --trust-config: " + ", ".join(_flag(k, v) for k, v in taken.items())


def reproduce_note(rec: Mapping[str, Any]) -> str:
    """A shell comment for the end of the reproduce line naming the flags whose values came from
    the file (the line spells them out, so it reruns the run anywhere): ``  # --samples,
    --seed: from pyproject.toml``, and, where several targets shared the run's confidence, why
    this one's is not the run's: ``--confidence: this target's share of the run's 0.95 over 3
    targets (Bonferroni)``; ``""`` when neither."""
    where, taken = settings_from(rec)
    said = [", ".join(f"--{k}" for k in taken) + f": from {where}"] if taken else []
    family = rec.get("family")
    if isinstance(family, Mapping) and (family.get("targets") or 0) > 1:
        said.append(f"--confidence: this target's share of the run's {family['confidence']:.4g} "
                    f"over {family['targets']} targets (Bonferroni)")
    return "  # " + "; ".join(said) if said else ""


def float_source(rec: Mapping[str, Any]) -> str:
    """Where the record's float policy came from, as the verdict line says it: ``float = 'off'
    from pyproject.toml`` when the file set it, ``float='off' declared by the mechanism`` when
    its decorator did, else ``--float off``."""
    where, taken = settings_from(rec)
    policy = rec.get("float_policy") or "off"
    if "float" in taken:
        return f"float = {str(taken['float'])!r} from {where}"
    if rec.get("float_policy_from") == "declaration":
        return f"float={str(policy)!r} declared by the mechanism"
    return f"--float {policy}"


def computed_text(rec: Mapping[str, Any]) -> str:
    """``ε from meas.map(1.0) = 0.5, OpenDP's own map, recomputed by dpaudit from the file's
    OpenDP calls alone`` for a claim the source computed (``claim_computed``); ``""`` when none
    was (:mod:`dpaudit.execution.computed_claims`)."""
    got = rec.get("claim_computed")
    if not isinstance(got, Mapping) or not got:
        return ""
    symbol = {"epsilon": "ε", "delta": "δ", "rho": "ρ"}
    parts = [f"{symbol.get(str(k), str(k))} from {' '.join(str(v).split())[:120]}" for k, v in got.items()]
    return ", ".join(parts) + ": OpenDP's own map, recomputed by dpaudit from the file's OpenDP calls alone"
