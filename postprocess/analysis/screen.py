'''Which series provably have no change point, told for many series at once.

Detection (:func:`mdxbench.post.analysis.changes.detect`) segments each series, divided by
its noise, with ruptures' exact PELT on the least-squares cost at a penalty ``beta`` per
change. PELT prunes nothing on a series without a change, so such a series costs it about
n²/2 evaluations: 0.4 ms at 365 runs, 40 s of CPU for 100,000 series, although about 99 %
of a nightly history's series have no change. This module proves, for all the series of a
chunk in a few NumPy passes, that PELT would return no change, so that only the others are
handed to it. The change points are the same: the screen decides nothing, it only skips a
call whose answer is known.

The proof. Let ``C`` be the series' centred cumulative sum (``C(0) = C(n) = 0``). Cutting
the series into segments ``[b_j, e_j)`` lowers the least-squares cost by
``Σ_j (C(e_j) - C(b_j))² / (e_j - b_j)`` (the between-segments sum of squares), and PELT
returns a segmentation with ``k`` changes only if that gain is more than ``k·beta``. So
the series has no change point if

* ``G1 <= beta``: the best single cut's gain, ``max_t C(t)² n / (t (n - t))`` over the cuts
  that leave ``min_size`` runs either side, computed exactly; and
* ``Q <= 2 beta / 3``: each segment's term is at most ``Q``, the largest
  ``(C(e) - C(b))² / (e - b)`` over intervals of at least ``min_size`` runs, so ``k >= 2``
  changes gain at most ``(k + 1) Q <= k beta``.

``Q`` itself is quadratic to compute; it is bounded instead, scale by scale: an interval of
``lo`` to ``hi`` runs spans at most ``hi + 1`` points of ``C``, so its term is at most
``R² / lo`` with ``R`` the largest range of ``C`` over ``hi + 1`` consecutive points of the
series, which a sparse table of ``C``'s maxima and minima (windows of 1, 2, 4, ... points)
gives in two look-ups per point. The scales grow by :data:`RATIO`; a series is followed to
longer intervals only while its whole range could still break the limit. Measured on the
bench's histories, the bound proves 97.9 % of the series quiet where the exact ``Q`` would
prove 98.5 %. A margin of :data:`MARGIN` keeps rounding on the safe side.

PELT segments a series longer than ``changes.WINDOW`` runs in windows, each centred on its
own mean; the proof is for the whole series, so such series are not screened as a whole
(:func:`mdxbench.post.analysis.changes.detect_each`): each of their windows is, already in
the series' noise units (``scale`` 1), before PELT is run on it
(:func:`mdxbench.post.analysis.changes.segment`).
'''
import numpy as np

#: each scale's longest interval over its shortest
RATIO = 1.25
#: the bounds are compared with (1 - MARGIN) of their limits
MARGIN = 1e-6
#: runs screened at once by :func:`quiet_each` (its arrays are some twenty times this many
#: numbers, 40 MiB; the whole of a scan's chunk at once was 300 MiB)
BATCH = 1 << 18


def _gather(values, starts, ns):
    '''(the runs of the series one after the other, the series of each run, where each
    series begins in them) of the series at ``starts``/``ns`` in ``values``: a view where
    they are already so laid out.'''
    values = np.asarray(values, dtype=float)
    seg = np.repeat(np.arange(len(ns)), ns)
    first = np.cumsum(ns) - ns
    if len(ns) and np.array_equal(starts, starts[0] + first):
        return values[starts[0]:starts[0] + len(seg)], seg, first
    return values[np.repeat(starts, ns) + (np.arange(len(seg)) - first[seg])], seg, first


def _per_series(ufunc, x, first):
    '''``ufunc.reduceat`` of ``x`` over the series beginning at ``first`` (an empty
    series gives the identity's stand-in, 0).'''
    out = ufunc.reduceat(np.append(x, 0.0), np.minimum(first, len(x)))
    out[np.diff(np.append(first, len(x))) == 0] = 0.0
    return out


def noise2(values, starts, ns):
    '''Per series laid out in ``values`` at ``starts``/``ns``: the square of its run-to-run
    noise (:func:`mdxbench.post.analysis.changes.noise`), half the mean square successive
    difference; 0 for a series of one run.'''
    ns = np.asarray(ns, dtype=np.int64)
    x, _, first = _gather(values, np.asarray(starts, dtype=np.int64), ns)
    d2 = np.zeros(len(x))
    d2[:-1] = np.diff(x) ** 2
    d2[(first + ns - 1)[ns > 0]] = 0.0           # no difference across two series
    return _per_series(np.add, d2, first) / np.maximum(ns - 1, 1) / 2


def _centred(values, starts, ns, scale):
    '''(each series' cumulative sum of ``(x - mean) / scale``: C(1) ... C(n), one series
    after the other; the series of each; where each series begins). A series whose scale
    is not a positive number adds zeros, and nothing to the others.'''
    x, seg, first = _gather(values, starts, ns)
    fine = (scale > 0) & np.isfinite(scale)
    mean = _per_series(np.add, x, first) / np.maximum(ns, 1)
    with np.errstate(invalid='ignore', divide='ignore'):
        z = np.where(fine[seg], (x - mean[seg]) / np.where(fine, scale, 1.0)[seg], 0.0)
    z[~np.isfinite(z)] = 0.0
    cs = np.cumsum(z)
    before = np.concatenate([[0.0], cs])[first]
    return cs - before[seg], seg, first


def best_split(values, starts, ns, scale, min_size):
    '''Per series laid out in ``values`` at ``starts``/``ns``: the largest least-squares
    cost one split saves, in units of ``scale`` squared, over the splits that leave
    ``min_size`` runs either side (0 where there is none): ``max C(t)² n / (t (n - t))``.'''
    starts, ns = np.asarray(starts, dtype=np.int64), np.asarray(ns, dtype=np.int64)
    if not len(ns) or not ns.sum():
        return np.zeros(len(ns))
    return _split_gain(*_centred(values, starts, ns, np.asarray(scale, dtype=float)), ns,
                       min_size)


def _split_gain(c, seg, first, ns, min_size):
    t = np.arange(len(c)) - first[seg] + 1.0         # runs before the split
    n = ns[seg].astype(float)
    cut = (t >= min_size) & (n - t >= min_size)
    gain = np.zeros(len(c))
    gain[cut] = c[cut] ** 2 * n[cut] / (t[cut] * (n[cut] - t[cut]))
    return _per_series(np.maximum, gain, first)


def quiet(values, starts, ns, beta, min_size, scale=None):
    '''A boolean per series laid out in ``values`` at ``starts``/``ns``: True where PELT
    at penalty ``beta`` (one per series, or one for all) with segments of at least
    ``min_size`` runs provably finds no change point in the series divided by its
    run-to-run noise, as :func:`mdxbench.post.analysis.changes.detect` segments it; or
    divided by ``scale`` when given (1: the series is already in noise units, as a window
    of a long series is).'''
    starts, ns = np.asarray(starts, dtype=np.int64), np.asarray(ns, dtype=np.int64)
    s = len(ns)
    if s == 0:
        return np.zeros(0, dtype=bool)
    beta = np.broadcast_to(np.asarray(beta, dtype=float), (s,))
    x, _, first = _gather(values, starts, ns)
    top = _per_series(np.maximum, np.abs(x), first)
    if scale is None:
        sigma = np.sqrt(noise2(values, starts, ns))
        # where changes._scale floors the noise (a flat series) or a run is not finite,
        # PELT decides
        usable = (ns >= 2 * min_size) & np.isfinite(top) & \
            (sigma >= 1e-12 * np.maximum(top, 1.0))
    else:
        sigma = np.broadcast_to(np.asarray(scale, dtype=float), (s,))
        usable = (ns >= 2 * min_size) & np.isfinite(top) & (sigma > 0)
    sigma = np.where(usable, sigma, 0.0)
    within, seg, first = _centred(values, starts, ns, sigma)
    ok = usable & (_split_gain(within, seg, first, ns, min_size) <= beta * (1 - MARGIN))

    # C with its n + 1 points per series, C(0) = 0 first: series k's from origin[k]
    origin = first + np.arange(s)
    c = np.zeros(len(within) + s)
    c[np.arange(len(within)) + seg + 1] = within
    room = np.repeat(ns + 1, ns + 1) - (np.arange(len(c)) - np.repeat(origin, ns + 1))

    # every interval's term, bounded scale by scale: intervals of lo to hi runs span at
    # most hi + 1 points of C, whose range the sparse table of C's maxima and minima gives;
    # a series is followed while its whole range could still break the limit at lo
    limit = 2 * beta / 3 * (1 - MARGIN)
    whole = np.maximum.reduceat(c, origin) - np.minimum.reduceat(c, origin)
    high, low, level, lo = c, c, 1, min_size
    while np.any(ok & (ns >= lo) & (whole * whole / lo > limit)):
        hi = max(lo, int(lo * RATIO))
        width = hi + 1
        while level * 2 <= width:
            high = np.maximum(high[:-level], high[level:])
            low = np.minimum(low[:-level], low[level:])
            level *= 2
        # the range of the width points from each point that has them in its series
        span = len(c) - width + 1
        rng = np.zeros(len(c))
        if span > 0:
            np.subtract(np.maximum(high[:span], high[width - level:width - level + span]),
                        np.minimum(low[:span], low[width - level:width - level + span]),
                        out=rng[:span])
        rng[room < width] = 0.0
        r = np.maximum.reduceat(rng, origin)
        ok &= ~((ns >= lo) & (r * r / lo > limit))
        lo = hi + 1
    # a series of fewer than 2 min_size runs has no change point (changes.detect)
    return (ns < 2 * min_size) | ok


def batches(ns):
    '''(first, past the last) series of each batch of about :data:`BATCH` runs of the
    series of ``ns`` runs each: at least one series a batch.'''
    ends = np.cumsum(ns)
    a = 0
    while a < len(ns):
        b = max(a + 1, int(np.searchsorted(ends, ends[a] - ns[a] + BATCH, side='right')))
        yield a, b
        a = b


def quiet_each(values, starts, ns, penalty, min_size):
    ''':func:`quiet` at ``penalty`` x ln(n) for each series, :data:`BATCH` runs at a time.'''
    starts, ns = np.asarray(starts, dtype=np.int64), np.asarray(ns, dtype=np.int64)
    out = np.zeros(len(ns), dtype=bool)
    for a, b in batches(ns):
        out[a:b] = quiet(values, starts[a:b], ns[a:b],
                         penalty * np.log(np.maximum(ns[a:b], 2)), min_size)
    return out
