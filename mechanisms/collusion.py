"""The colluders' side of Chen, Pal and Golubchik (2016)'s count query: the remap and the collusion estimator (Chen, Pal and Golubchik (2016) §4.2.3, §5.3).

* :func:`round_to_count`: the seed's remap of a continuous release to a count (Chen, Pal and Golubchik (2016) §4.2.3): the
  nearest integer, optionally clamped to {0..n}.
* :func:`collusion_median`: k colluders pool their releases and take the sample median (Chen, Pal and Golubchik (2016) §5.3,
  Lemma 1). ``"low"`` is the order statistic X_(⌈k/2⌉), an MLE for Laplace and geometric noise
  for every k (any point of the median interval is one; docs/math.md#collusion-mle); ``"avg"`` is numpy's median.

Their expected losses (exact and as the seed states them) are in
:mod:`~dpaudit.reference.analysis.expected_loss`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpaudit.claims import check_size
from dpaudit.errors import InvalidArgument

__all__ = ["round_to_count", "collusion_median"]


# -- remap and estimator --------------------------------------------------------------------------
def round_to_count(y: Any, n: Any = None) -> np.ndarray:
    """Nearest integer to each release (Chen, Pal and Golubchik (2016) §4.2.3), clamped to {0..n} when ``n`` is given."""
    y = np.asarray(y, dtype=float)
    out = np.rint(y)
    if n is not None:
        out = np.clip(out, 0, check_size(n, "n"))
    return out.astype(np.int64)


def collusion_median(outputs: Any, axis: int = -1, convention: str = "low") -> np.ndarray:
    """The colluders' estimate: the sample median of k releases along ``axis`` (Chen, Pal and Golubchik (2016) Lemma 1).

    ``"low"``: X_(⌈k/2⌉) (an order statistic; an MLE for Laplace and geometric noise);
    ``"avg"``: the average of the two middle values for even k (``numpy.median``).
    """
    x = np.asarray(outputs)
    if x.ndim == 0 or x.shape[axis] == 0:
        raise InvalidArgument.bad("outputs", outputs, "a non-empty array of releases")
    if convention == "avg":
        return np.median(x, axis=axis)
    if convention != "low":
        raise InvalidArgument.bad("convention", convention, "'low' or 'avg'")
    j = (x.shape[axis] + 1) // 2 - 1
    return np.take(np.partition(x, j, axis=axis), j, axis=axis)
