"""The stability check's former home, kept importable: :mod:`dpaudit.stability` is where it lives.

``from dpaudit.replay.opendp import check_stability`` (and every other name below) still works;
``replay_opendp`` and ``replay_target`` are the former names of
:func:`dpaudit.stability.check_measurement` and :func:`dpaudit.stability.check_target`.
"""

from __future__ import annotations

from dpaudit.stability import (BUDGET, EXAMPLES, StabilityReport, check_measurement, check_pair,
                               check_stability, check_target, decompose, metric_distance, opendp_of,
                               parts_of, recording)

#: the former name of :func:`dpaudit.stability.check_measurement`
replay_opendp = check_measurement
#: the former name of :func:`dpaudit.stability.check_target`
replay_target = check_target

__all__ = ["recording", "parts_of", "decompose", "metric_distance", "check_stability",
           "check_pair", "StabilityReport", "check_measurement", "check_target", "opendp_of",
           "replay_opendp", "replay_target", "BUDGET", "EXAMPLES"]
