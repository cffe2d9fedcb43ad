"""Narrow alternatives in the honest selection (dpaudit.estimators.selection, NARROW): for each
score family and side, the best event whose count is at most 1/NARROW of the family's best is
re-projected beside it, so a rare strong event (one pattern at the top of a threshold score) can
win on the half that did not choose it."""

import numpy as np

from dpaudit.estimators import selection as S  # private: _choose and _shortlist, the honest selection's steps
from dpaudit.outputs import OutputEncoder

#: no-abort sparse vector (ρ ~ Lap(20), ν ~ Lap(40), T = 1) on five queries moved up from 5 and
#: five down from 0, bits of the ⊤ answers; D and D' from one seed
D = np.r_[np.full(5, 5.0), np.zeros(5)]
D_PRIME = D + np.r_[np.ones(5), -np.ones(5)]


def _bits(q, seed, n):
    rng = np.random.default_rng(seed)
    return ((q + rng.laplace(scale=40.0, size=(n, 10))) >= 1 + rng.laplace(scale=20.0, size=(n, 1))
            ).astype(np.int8)


def _choice_counts(c, yd, yp):
    num, den = (yd, yp) if c.numerator == 0 else (yp, yd)
    return int(c.event.contains(num).sum()), int(c.event.contains(den).sum())


def test_narrow_alternatives_are_rarer_than_their_familys_best():
    enc = OutputEncoder()
    n = 200_000
    yd, yp = enc.encode(_bits(D, 5, n), D), enc.encode(_bits(D_PRIME, 5, n), D_PRIME)
    best, narrow = S._choose(yd, yp, enc.schema, 1e6, 0.025, 0.0, True, False, True)
    assert narrow, "the threshold scores of a 10-bit vector have rarer events than their best"
    half = slice(n // 2, None)  # fitted scores are thresholded on the second half
    by_family, checked = {}, 0
    for c in best:
        by_family.setdefault((id(c.event.score), c.event.side), c)
    for alt in narrow:
        fam = by_family.get((id(alt.event.score), alt.event.side))
        if fam is None:  # the family's best is on the other side
            continue
        x_alt = _choice_counts(alt, yd[half], yp[half])[0]
        x_fam = _choice_counts(fam, yd[half], yp[half])[0]
        assert x_alt * S.NARROW <= x_fam, (alt.event.text(), fam.event.text())
        checked += 1
    assert checked >= 2
    # the short list carries both, in that order
    short = S._shortlist((best, narrow))
    assert short[:len(best[:S.HONEST_SHORTLIST])] == best[:S.HONEST_SHORTLIST]
    assert short[len(best[:S.HONEST_SHORTLIST]):] == narrow[:S.HONEST_NARROW]
