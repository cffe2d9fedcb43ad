"""The stability check: OpenDP's stability maps checked on neighbouring pairs, and what
``dpaudit check 'lib:FILE.py' --replay`` runs on an OpenDP target.

An OpenDP transformation T promises, through its stability map, that for every pair of inputs
d_in-close under its input metric, ``d_out(T(D), T(D′)) ≤ T.map(d_in)`` under its output metric
(the stability relation of the OpenDP programming framework: Gaboardi, Hay and Vadhan, "A
Programming Framework for OpenDP", 2020, Definition 2.3). A chain ``T_k ∘ … ∘ T_1`` maps d_in
through each part in turn. :func:`check_stability` searches neighbouring pairs at the distance of
the input metric (the relation's structured patterns, float-rounding patterns, then a hypothesis
search steered toward d_out / map(d_in)), evaluates each part on D and D′, measures the distance
of the outputs *exactly* (rationals, no rounding) and reports a ``sensitivity_exceeded``
violation where it exceeds

* the chain's map at d_in up to that part (``T_j ∘ … ∘ T_1``.map(d_in)), or
* the part's own map at the distance observed at its input (``T_j.map(d(o_{j−1}, o′_{j−1}))``,
  rounded up to the map's distance type),

and, for a chain ending in a measurement M, where ``M.map(d observed at its input)`` exceeds the
claim ``(M ∘ T).map(d_in)``. The float rounding of sums that Casacuberta, Shoemate, Vadhan and
Wagaman found in several libraries ("Widespread Underestimation of Sensitivity in Differentially
Private Libraries and How to Fix It", ACM CCS 2022) shows up here as a d_out above the map.

OpenDP's noise is drawn in native code from the operating system's generator: the gray-box replay
(:mod:`dpaudit.replay`) can neither see nor freeze it, so the check and says so (``no_noise_intercepted``, a limit). What it does see are
the transformations' outputs. The parts of a chain are read from what :func:`recording` notes
while chains are built (``make_chain_tt``, ``make_chain_mt``, ``make_chain_pm``, which
``Transformation.__rshift__`` calls: their parts and the ``file:line`` of the user's code), and
else from ``__opendp_dict__``, where OpenDP 0.16 keeps a chain's parts for serialisation.
Randomness: the pair search is deterministic from ``seed`` (patterns, then hypothesis seeded).

The package's modules, each importing only those listed before it:

* :mod:`~dpaudit.stability.metrics`: distances under OpenDP's metrics, exactly;
* :mod:`~dpaudit.stability.chains`: the parts of chains and the lines that built them;
* :mod:`~dpaudit.stability.checker`: a chain evaluated on pairs, within a budget;
* :mod:`~dpaudit.stability.pairs`: the patterns and the hypothesis search;
* :mod:`~dpaudit.stability.check`: :func:`check_stability`, :func:`check_pair`, the findings;
* :mod:`~dpaudit.stability.target`: an OpenDP target checked, stated as the record ``--replay``
  writes.
"""

from __future__ import annotations

from dpaudit.stability.chains import decompose, parts_of, recording
from dpaudit.stability.check import BUDGET, EXAMPLES, StabilityReport, check_pair, check_stability
from dpaudit.stability.metrics import metric_distance
from dpaudit.stability.target import check_measurement, check_target, opendp_of

__all__ = ["recording", "parts_of", "decompose", "metric_distance", "check_stability",
           "check_pair", "StabilityReport", "check_measurement", "check_target", "opendp_of",
           "BUDGET", "EXAMPLES"]
