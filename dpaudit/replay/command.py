"""``dpaudit check FILE.py --replay``: the replay audit of one target, as a record.

The replay runs the mechanism in the process that records it (the recording generator, the
tracked values and the library patches live there), so it needs the function itself: in process
(``--in-process``, trusted code) it is audited here; from the sandbox, where only the child holds
the function, the record is an ERROR that says so, until the sandbox child can run the replay.
The claim is the target's, as ``dpaudit check`` resolves it (flags over ``[tool.dpaudit.targets]``
over the ``@dpaudit.mechanism`` declaration), and the seed is the run's.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from dpaudit.replay.audit import replay_audit
from dpaudit.replay.result import RECORD_KIND
from dpaudit.results import error_record

__all__ = ["check_replay_of"]

_CLAIM_KEYS = ("epsilon", "delta", "neighbours", "domain", "size")


def check_replay_of(target: str, name: str, settings: Any, func: Optional[Callable], *,
                    isolation: Optional[str] = None, nonfinite: bool = False) -> dict:
    """The replay record of ``func`` (named ``name``) under the target's claim; an ERROR record
    when the function is only in the sandbox (``func`` None) or the claim cannot be made."""
    if func is None:
        return error_record(RECORD_KIND, name, "the replay audit runs the mechanism in this "
                            "process: add --in-process (trusted code only) to audit it by replay")
    claim = {k: v for k, v in settings.claim_for(target, name).items() if k in _CLAIM_KEYS}
    try:
        result = replay_audit(func, seed=settings.seed, nonfinite=nonfinite, name=name, **claim)
    except Exception as exc:  # noqa: BLE001 - a claim that cannot be made is this target's ERROR
        return error_record(RECORD_KIND, name, f"{type(exc).__name__}: {exc}")
    rec = result.to_record()
    if isolation is not None:
        rec["isolation"] = isolation
    site = _first_site(rec)
    if site is not None:  # where a report (SARIF, HTML) points: the call site of the finding
        from dpaudit.report.model import relative_path

        rec["location"] = {"path": relative_path(str(site["path"])), "line": int(site["line"])}
    return rec


def _first_site(rec: dict) -> Optional[dict]:
    """The call site of the record's strongest finding (a violation first), if it has one."""
    order = ("violation", "finding", "limit", "note")
    found = [f for f in rec.get("findings") or [] if isinstance(f, dict) and
             isinstance(f.get("site"), dict) and f["site"].get("path") and f["site"].get("line")]
    found.sort(key=lambda f: order.index(f.get("severity")) if f.get("severity") in order else 9)
    return found[0]["site"] if found else None
