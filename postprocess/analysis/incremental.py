'''What a new night can change: a series' change points are kept from the last scan unless
its new runs could move them (issue 33, item 2).

:func:`mdxbench.post.analysis.changes.detect` segments a whole series, and a full scan runs
it on every series every night, although one run per series is new. Given the change
points a scan found on a series' first runs, its change points with the new runs are the
same unless its last segment (from the last change point, the new runs included) now holds
a split that saves at least ``kappa`` times the penalty of the least-squares cost, in the
series' noise units: PELT keeps a split only where it saves more than the penalty, so a
last segment far under it stays whole and the earlier segments are not touched by the new
runs. Such a series is detected again from its first run.

This is a screen, not a proof: the penalty and the noise move a little with every run. On
the bench's generated histories (``mdxbench bench changes``' store) the screen with
``kappa = 0.5`` gave the full scan's change points in every series at every step tried,
and ``tests/unit/test_incremental.py`` checks that on generated histories with steps
before and after the last scan.
'''
import math

import numpy as np

from mdxbench.post.analysis import changes
from mdxbench.post.analysis.screen import batches, best_split, noise2

#: the share of the penalty a split of the last segment must save to have the series
#: detected again
KAPPA = 0.5
#: a change point with fewer runs after it than this is still placed by each new run: its
#: series is detected again
SETTLED = 3 * changes.MIN_SIZE


def split_gain(x, sigma, min_size=changes.MIN_SIZE):
    '''The largest least-squares cost one split of ``x`` saves, in units of ``sigma``
    squared, over the splits that leave ``min_size`` runs either side; 0 where there is
    none.'''
    x = np.asarray(x, dtype=float)
    m = len(x)
    if m < 2 * min_size or sigma <= 0:
        return 0.0
    c = np.cumsum(x - x.mean())[:-1]
    tau = np.arange(1, m)
    gain = c * c * m / (tau * (m - tau))
    return float(gain[min_size - 1:m - min_size].max() / sigma ** 2)


def _cost(x):
    return float(((x - x.mean()) ** 2).sum()) if len(x) else 0.0


def last_moves(x, cps, min_size=changes.MIN_SIZE):
    '''Whether the last change point of ``cps`` is no longer where the least-squares cost
    of its two segments is lowest, the new runs included (the earlier change points, whose
    segments the new runs do not touch, staying where they are).'''
    k = cps[-1]['index']
    lo = cps[-2]['index'] if len(cps) > 1 else 0
    n = len(x)
    best = min(range(max(lo + min_size, k - min_size), min(n - min_size, k + min_size) + 1),
               key=lambda j: (_cost(x[lo:j]) + _cost(x[j:n]), j != k), default=k)
    return best != k


def needs_detect(x, cps, penalty=changes.PENALTY, min_size=changes.MIN_SIZE, kappa=KAPPA):
    '''Whether the series ``x`` (all its runs, the new ones last) must be detected again,
    ``cps`` the change points found on its earlier runs: its last segment holds a split
    worth ``kappa`` of the penalty, or its last change point is not yet :data:`SETTLED`,
    or would move (:func:`last_moves`).'''
    x = np.asarray(x, dtype=float)
    start = cps[-1]['index'] if cps else 0
    if cps and (len(x) - start < SETTLED or last_moves(x, cps, min_size)):
        return True
    return split_gain(x[start:], changes.noise(x), min_size) >= \
        kappa * penalty * math.log(len(x))


def update(x, cps, kappa=KAPPA, **kw):
    '''(change points of ``x``, whether it was detected again) from ``cps``, those of its
    earlier runs. Kept change points are judged again on all the runs (their medians,
    effect and p-value are those of today's segments); one that no longer passes has the
    series detected again.'''
    penalty, min_size = kw.get('penalty', changes.PENALTY), kw.get('min_size', changes.MIN_SIZE)
    if needs_detect(x, cps, penalty, min_size, kappa):
        return changes.detect(x, **kw), True
    kept = [c['index'] for c in cps]
    now = changes.refine(x, kept, kw.get('min_effect', changes.MIN_EFFECT),
                         kw.get('max_pvalue', changes.MAX_PVALUE))
    if [c['index'] for c in now] != kept:
        return changes.detect(x, **kw), True
    return now, False


def screen(values, starts, ns, tails, penalty=changes.PENALTY, min_size=changes.MIN_SIZE,
           kappa=KAPPA):
    ''':func:`needs_detect`'s split test for many series at once, laid out in ``values``
    at ``starts``/``ns`` (NumPy arrays), each from its run ``tails`` (its last change point,
    or 0): whether the largest single split of each series' last segment saves ``kappa``
    of the penalty, in its noise units. No Python loop over the series.'''
    starts, ns, tails = (np.asarray(a, dtype=np.int64) for a in (starts, ns, tails))
    if not len(starts):
        return np.zeros(0, dtype=bool)
    # the last segment of each series: runs [start + tail, start + n); a series of no
    # noise is constant, and no split saves anything. A batch of series at a time
    out = np.zeros(len(ns), dtype=bool)
    for a, b in batches(ns):
        s, n, tail = starts[a:b], ns[a:b], tails[a:b]
        gain = best_split(values, s + tail, n - tail, np.sqrt(noise2(values, s, n)), min_size)
        out[a:b] = gain >= kappa * penalty * np.log(np.maximum(n, 2))
    return out
