"""How the audited mechanism is run: one :class:`Executor` protocol and its implementations.

=====================  ==================================================================
module                 idea
=====================  ==================================================================
``base``               the contract: :class:`BatchTask`, :func:`plan_batches` (batch
                       boundaries and seeds depend only on the sample count), the
                       :class:`Executor` protocol and the in-process executor
``fork``               a fork pool over all cores for trusted code (:class:`ForkExecutor`)
``sandbox``            the parent side of the sandbox for third-party code
                       (:class:`SandboxExecutor`): limits, crash capture, isolation
``child``              the sandbox child's loop (imports the file, serves batches)
``wire``               the framing of the child's replies (size limit, malformed replies)
``shared_outputs``     numeric outputs passed back through shared memory, uncopied
``blas``               one OpenBLAS thread while dpaudit computes
=====================  ==================================================================

Every executor runs ``spec.call_batch(data, generator(task.seed), task.n)`` for the same tasks,
so the same seed gives the same numbers on every executor.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> module that defines it (imported lazily: the sandbox is not needed in process).
_EXPORTS = {
    "BATCH_SIZE": "dpaudit.execution.base",
    "BatchTask": "dpaudit.execution.base",
    "Executor": "dpaudit.execution.base",
    "InProcessExecutor": "dpaudit.execution.base",
    "plan_batches": "dpaudit.execution.base",
    "ForkExecutor": "dpaudit.execution.fork",
    "default_workers": "dpaudit.execution.fork",
    "SandboxExecutor": "dpaudit.execution.sandbox",
    "single_blas_thread": "dpaudit.execution.blas",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dpaudit.execution' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
