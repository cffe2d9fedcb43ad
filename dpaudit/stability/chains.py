"""The parts of OpenDP chains: recorded while chains are built, else read from OpenDP.

:func:`recording` wraps OpenDP's chain combinators (``make_chain_tt``, ``make_chain_mt``,
``make_chain_pm``, which ``>>`` calls) so that every chain built inside it remembers its parts
(:class:`Built`) and the ``file:line`` of the user's code that built it; :func:`parts_of` reads
them back (or OpenDP's ``__opendp_dict__``, without a site), and :func:`decompose` flattens a
chain into its transformations (:class:`Part`, in the order they run) and its measurement.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

from dpaudit.replay.sites import Site, call_site, folder_of

__all__ = ["recording", "parts_of", "decompose", "label_of", "Built", "Part", "COMBINATORS",
           "ATTRIBUTE"]

#: the combinators whose results remember their parts
COMBINATORS = ("make_chain_tt", "make_chain_mt", "make_chain_pm")
#: the attribute under which a chain built while :func:`recording` keeps its parts
ATTRIBUTE = "_dpaudit_parts"


@dataclass(frozen=True)
class Built:
    """How a chain was built: the ``combinator``, its ``outer`` and ``inner`` parts, and the
    ``site`` (``file:line`` of the user's code) when it was built while :func:`recording`."""

    combinator: str
    outer: Any
    inner: Any
    site: Optional[Site] = None


def _skipped() -> tuple[str, ...]:
    """Folders that are never the user's code: OpenDP's, dpaudit's adapters' and this package's."""
    folders = [folder_of(__file__)]
    opendp = sys.modules.get("opendp")
    if opendp is not None:
        folders.append(folder_of(getattr(opendp, "__file__", None)))
    dpaudit_folder = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folders.append(folder_of(os.path.join(dpaudit_folder, "adapters", "opendp.py")))
    return tuple(f for f in folders if f)


def _recorder(name: str, original: Callable) -> Callable:
    @functools.wraps(original)
    def chain(outer: Any, inner: Any) -> Any:
        out = original(outer, inner)
        try:
            setattr(out, ATTRIBUTE, Built(name, outer, inner, call_site(skip=_skipped())))
        except (AttributeError, TypeError):  # an object that takes no attribute: its parts stay unknown
            pass
        return out

    chain.__dpaudit_recorder__ = True  # type: ignore[attr-defined]
    return chain


@contextmanager
def recording() -> Iterator[bool]:
    """While the block runs, every chain built by ``opendp.combinators.make_chain_tt``,
    ``make_chain_mt`` or ``make_chain_pm`` (``>>`` calls them) remembers its parts and the line
    of the user's code that built it; the originals are restored when the block ends, whatever
    happens. Yields False (and records nothing) when OpenDP is not installed."""
    try:
        combinators = importlib.import_module("opendp.combinators")
    except ImportError:
        yield False
        return
    saved = []
    for name in COMBINATORS:
        original = getattr(combinators, name, None)
        if original is None or getattr(original, "__dpaudit_recorder__", False):
            continue
        saved.append((name, original))
        setattr(combinators, name, _recorder(name, original))
    try:
        yield True
    finally:
        for name, original in reversed(saved):
            setattr(combinators, name, original)


def parts_of(obj: Any) -> Optional[Built]:
    """The parts of a chain: as recorded (with its site), else as OpenDP's ``__opendp_dict__``
    states them (no site); None for an object that is not a chain."""
    rec = getattr(obj, ATTRIBUTE, None)
    if isinstance(rec, Built):
        return rec
    d = getattr(obj, "__opendp_dict__", None)
    if isinstance(d, dict) and d.get("__function__") in COMBINATORS:
        kw = d.get("__kwargs__") or {}
        outer = next((kw[k] for k in ("transformation1", "measurement1", "postprocess1") if k in kw), None)
        inner = next((kw[k] for k in ("transformation0", "measurement0") if k in kw), None)
        if outer is not None and inner is not None:
            return Built(d["__function__"], outer, inner, None)
    return None


@dataclass(frozen=True)
class Part:
    """One transformation or measurement of a chain, its ``label`` and the ``site`` of the chain
    call that joined it (None when unknown)."""

    obj: Any
    label: str
    site: Optional[Site]


def label_of(obj: Any) -> str:
    """A part as reports name it: a chain's constructors joined by ``>>``, else its constructor
    with its short keyword arguments, else its type."""
    if parts_of(obj) is not None:  # a chain: its parts' constructors, in the order they run
        return " >> ".join(p.label.split("(")[0] for p in _flatten(obj, None))
    d = getattr(obj, "__opendp_dict__", None)
    if not isinstance(d, dict) or "__function__" not in d:
        return type(obj).__name__
    skip = {"input_domain", "input_metric", "output_domain", "output_metric", "function",
            "stability_map", "privacy_map"}
    shown = []
    for k, v in (d.get("__kwargs__") or {}).items():
        text = repr(v)
        if k not in skip and v is not None and len(text) <= 40:
            shown.append(f"{k}={text}")
    return f"{d['__function__']}({', '.join(shown)})"


def _flatten(obj: Any, site: Optional[Site]) -> list[Part]:
    b = parts_of(obj)
    if b is None:
        return [Part(obj, label_of(obj), site)]
    here = b.site or site
    if b.combinator == "make_chain_pm":  # post-processing after the measurement cannot cost privacy
        return _flatten(b.inner, here)
    return _flatten(b.inner, here) + _flatten(b.outer, here)


def decompose(obj: Any) -> tuple[list[Part], Optional[Part]]:
    """``(transformations, measurement)``: the parts of a Transformation or Measurement in the order
    they run (a measurement that is not a chain is its own only part)."""
    dp = importlib.import_module("opendp.mod")
    flat = _flatten(obj, None)
    if isinstance(obj, dp.Measurement):
        return flat[:-1], flat[-1]
    return flat, None
