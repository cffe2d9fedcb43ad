"""The audit suite: define audits (:mod:`~dpaudit.suite.define`), run them
(:mod:`~dpaudit.suite.run`), and the ``dpaudit audit`` / ``dpaudit list`` commands
(:mod:`~dpaudit.suite.commands`, imported only by the command line).

An audit file is a plain module with an ``AUDITS`` list::

    # audits/laplace.py
    from dpaudit.suite import exact, sampled
    from dpaudit.reference.laplace import Laplace

    AUDITS = [
        sampled("laplace/sampled", lambda: Laplace(1.0).spec(), samples=200_000),
        exact("laplace/exact", lambda: Laplace(1.0).spec()),
    ]
"""

from dpaudit.suite.define import (DEFAULT_AUDIT_DIR, SUITE_CONFIDENCE, AuditDef, AuditKind, exact,
                                  formal, load_audits, load_file, sampled, seed_claim, sensitivity)
from dpaudit.suite.run import audit_seed, default_jobs, resolve_target, run_one, run_suite

__all__ = ["AuditKind", "AuditDef", "SUITE_CONFIDENCE", "DEFAULT_AUDIT_DIR", "sampled", "exact",
           "sensitivity", "formal", "seed_claim", "load_file", "load_audits", "audit_seed",
           "resolve_target", "run_one", "run_suite", "default_jobs"]
