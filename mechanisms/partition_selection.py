"""Partition selection by thresholding Laplace-noised counts, and a miscalibrated control.

Each record x lies in a partition, its key ``key(x)`` (here its integer part, ``int(x)``). For
every key present in the data, the count c_k of its records plus Laplace noise of scale 1/ε is
released when it exceeds the threshold

    T = 1 + ln(1/(2δ))/ε,

and keys absent from the data are never released (Korolova, Kenthapadi, Mishra and Ntoulas 2009,
"Releasing search queries and clicks privately", WWW, Alg. 1; Desfontaines, Voss, Gipson and
Mandayam 2022, "Differentially private partition selection", PoPETs 2022(1), §3, the
Laplace-thresholding mechanism). Under add-remove one record changes one count by 1: a key both
datasets hold costs ε (Laplace noise, the threshold test and the rounding are post-processing of
the noisy count), and a key only the larger dataset holds (count 1) is released with probability

    P[1 + Lap(1/ε) > T] = ½·exp(−ε(T − 1)) = δ,

so the release is (ε, δ)-DP. :func:`thresholded_counts` builds it; ``threshold_epsilon`` computes
T for another ε than the noise's: the control :func:`miscalibrated` takes T for 10ε with noise
still of scale 1/ε, T' = 1 + ln(1/(2δ))/(10ε), so a new key is released with probability
½·exp(−ε(T' − 1)) = ½·(2δ)^(1/10), 0.169 for (ε, δ) = (1, 10⁻⁵): its δ is about 17,000 times the
claim.

A released count is rounded to an integer (post-processing: it keeps the guarantee, and takes
away the low bits by which floating-point Laplace noise would tell counts apart, Mironov 2012).
No exact output law is given: these are audited by sampling only. The output is one of
``form``:

* ``"dict"``: ``{key: count}`` for the released keys (a dict whose keys vary between calls);
* ``"pairs"``: the list of ``(key, count)`` of the released keys, in key order;
* ``"nan"``: the vector of the counts of keys 0 … K − 1, NaN where a key is not released;
* ``"none"``: the same as a list, None where a key is not released.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional

import numpy as np

import dpaudit

__all__ = ["threshold", "release_probability", "thresholded_counts", "miscalibrated", "FORMS"]

FORMS = ("dict", "pairs", "nan", "none")


def threshold(epsilon: float, delta: float) -> float:
    """T = 1 + ln(1/(2δ))/ε: a key of count 1 passes it with probability δ (module docstring)."""
    if not (epsilon > 0 and 0 < delta < 0.5):
        raise ValueError(f"need ε > 0 and 0 < δ < ½, got ε = {epsilon!r}, δ = {delta!r}")
    return 1.0 + math.log(1.0 / (2.0 * delta)) / epsilon


def release_probability(count: float, t: float, epsilon: float) -> float:
    """P[count + Lap(1/ε) > t]: ½·exp(−ε(t − count)) for t ≥ count, else 1 − ½·exp(−ε(count − t))."""
    if t >= count:
        return 0.5 * math.exp(-epsilon * (t - count))
    return 1.0 - 0.5 * math.exp(-epsilon * (count - t))


def _release(keys: np.ndarray, noisy: np.ndarray, keep: np.ndarray, form: str, width: int) -> Any:
    """One output of ``form`` from the keys, their noisy counts and which are released."""
    ks, cs = keys[keep].tolist(), np.rint(noisy[keep]).tolist()
    if form == "dict":
        return dict(zip(ks, cs))
    if form == "pairs":
        return list(zip(ks, cs))
    out: list = [None] * width
    for k, c in zip(ks, cs):
        out[k] = c
    if form == "none":
        return out
    return np.array([math.nan if v is None else v for v in out])


def thresholded_counts(epsilon: float = 1.0, delta: float = 1e-5, *,
                       threshold_epsilon: Optional[float] = None, form: str = "dict",
                       domain: tuple = (0.0, 9.0), size: int = 10) -> Callable:
    """The thresholding partition selection (module docstring) as a ``@dpaudit.mechanism``
    declaring (ε, δ)-DP under add-remove on ``domain`` (keys ``int(x)``, 0 … ⌊hi⌋ for a domain
    of non-negative records), with a batch form: ``f(data, rng)`` gives one release,
    ``f(data, rng, size=k)`` a list of k. The threshold is T for ``threshold_epsilon`` (default
    ε), the noise of scale 1/ε."""
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    lo, hi = float(domain[0]), float(domain[1])
    if not (0 <= lo <= hi):
        raise ValueError(f"the keys int(x) are positions 0 … ⌊hi⌋: need 0 ≤ lo ≤ hi, got {domain!r}")
    width = int(math.floor(hi)) + 1
    t = threshold(threshold_epsilon if threshold_epsilon is not None else epsilon, delta)
    scale = 1.0 / epsilon

    @dpaudit.mechanism(epsilon=epsilon, delta=delta, neighbours="add-remove", domain=(lo, hi),
                       size=size)
    def partition_selection(data, rng, size=None):
        keys, counts = np.unique(np.trunc(np.asarray(data, dtype=float)).astype(np.int64),
                                 return_counts=True)
        k = 1 if size is None else int(size)
        noisy = counts + rng.laplace(scale=scale, size=(k, keys.size))
        keep = noisy > t
        out = [_release(keys, noisy[i], keep[i], form, width) for i in range(k)]
        return out[0] if size is None else out

    partition_selection.__doc__ = (f"Laplace-thresholding partition selection, ε = {epsilon:g}, "
                                   f"δ = {delta:g}, T = {t:.6g}, output {form!r}.")
    partition_selection.threshold = t
    return partition_selection


def miscalibrated(epsilon: float = 1.0, delta: float = 1e-5, *, form: str = "dict",
                  domain: tuple = (0.0, 9.0), size: int = 10) -> Callable:
    """The control: T computed for 10ε, noise of scale 1/ε, claiming (ε, δ) (module docstring);
    a new key is released with probability ½·(2δ)^(1/10)."""
    return thresholded_counts(epsilon, delta, threshold_epsilon=10 * epsilon, form=form,
                              domain=domain, size=size)
