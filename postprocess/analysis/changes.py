'''Change points in each series' whole history, and what changed with them.

A *series* is one system, partition, environment, check (with its parameters) and perf
variable, in completion-time order. Detection, per series:

1. ruptures' ``KernelCPD`` with the linear kernel (least-squares changes of the mean,
   segmented exactly by PELT in ruptures' C code) on the series divided by its noise,
   with a penalty of ``penalty`` x ln(n). The noise is the mean square successive
   difference (von Neumann): run-to-run noise, bimodal or not, sets it in full, while a
   step moves it by one difference only — so a VM whose bandwidth flips between two
   modes gets a large noise and no stream of change points.
2. Each candidate is kept only where the segments either side differ in median by at
   least ``min_effect`` (relative) *and* a Mann-Whitney U test (scipy) finds them
   different at ``max_pvalue``; the weakest failing candidate is dropped and the others
   re-tested against their new neighbours, until all pass.

Each kept change point is then explained (:mod:`mdxbench.post.analysis.explain`); which
scan reads the history -- one table in memory, Parquet files in bounded memory, or a scan
kept between cycles -- is :func:`mdxbench.post.analysis.scan.find`'s choice.
'''
import math

import numpy as np
import polars as pl

from mdxbench.post.analysis import screen

#: series identity (environ included: HPL on OpenBLAS and on MKL are two series)
SERIES = ['system', 'partition', 'environ', 'check', 'perf_var', 'unit', 'better']

#: series longer than this are segmented in overlapping windows of this many runs (PELT's
#: worst case is quadratic in the runs): the scan stays near-linear on long series
WINDOW = 2000

#: defaults (chosen on generated histories, see ``mdxbench bench changes``)
PENALTY = 6.0
MIN_EFFECT = 0.03
MAX_PVALUE = 0.01
MIN_SIZE = 5

def noise(x):
    '''Run-to-run noise (standard deviation) from the mean square successive difference.'''
    d = np.diff(x)
    return math.sqrt(float(np.mean(d * d)) / 2) if len(d) else 0.0


def detect(x, penalty=PENALTY, min_effect=MIN_EFFECT, max_pvalue=MAX_PVALUE,
           min_size=MIN_SIZE):
    '''Change points of one series: a list of dicts ``index`` (first run of the new
    segment, 0-based), ``before``/``after`` (medians of the segments either side),
    ``effect`` (relative change of the median), ``pvalue`` (Mann-Whitney U), ``noise`` (the
    series' run-to-run noise relative to its median).'''
    x = np.asarray(x, dtype=float)
    n = len(x)
    if n < 2 * min_size:
        return []
    sigma, center = _scale(x)
    z = ((x - center) / sigma).reshape(-1, 1)
    return refine(x, segment(z, penalty * math.log(n), min_size), min_effect, max_pvalue,
                  (sigma, center))


def _scale(x):
    '''(noise, median) of ``x``; the noise at least a 1e-12 of the median.'''
    sigma = noise(x)
    center = float(np.median(x))
    return max(sigma, 1e-12 * max(abs(center), 1.0)), center


def refine(x, bkps, min_effect=MIN_EFFECT, max_pvalue=MAX_PVALUE, scale=None):
    '''The candidates ``bkps`` (first runs of new segments) of ``x`` that pass: each
    where the segments either side differ in median by ``min_effect`` and by a
    Mann-Whitney U test at ``max_pvalue``; the weakest failing one dropped and the others
    tested again against their new neighbours. The change points as :func:`detect`
    gives them.'''
    from scipy.stats import mannwhitneyu

    x = np.asarray(x, dtype=float)
    n = len(x)
    sigma, center = scale or _scale(x)
    bkps = list(bkps)
    while bkps:
        edges = [0] + bkps + [n]
        stats, worst = [], None
        for j in range(1, len(edges) - 1):
            a, b = x[edges[j - 1]:edges[j]], x[edges[j]:edges[j + 1]]
            ma, mb = float(np.median(a)), float(np.median(b))
            effect = (mb - ma) / abs(ma) if ma else math.inf
            p = float(mannwhitneyu(a, b, alternative='two-sided').pvalue)
            stats.append({'index': int(edges[j]), 'before': ma, 'after': mb, 'effect': effect,
                          'pvalue': p, 'noise': sigma / abs(center) if center else None})
            if abs(effect) < min_effect or p > max_pvalue:
                # the weakest: the smallest effect relative to the threshold, then p
                score = (min(abs(effect) / min_effect, 1.0), -p)
                if worst is None or score < worst[0]:
                    worst = (score, j - 1)
        if worst is None:
            return stats
        del bkps[worst[1]]
    return []


def segment(z, pen, min_size=MIN_SIZE, window=WINDOW):
    '''Candidate change points of ``z`` (an n x 1 array in noise units): ruptures'
    ``KernelCPD`` (linear kernel, exact PELT) at penalty ``pen``. A series longer than
    ``window`` is cut into windows of ``window`` runs overlapping by half; each window keeps
    the candidates of its central half (the first and the last window their outer ends
    too), so every run is judged by one window with ``window / 4`` runs of context either
    side, and the cost grows linearly with the runs. A window the screen proves quiet
    (:func:`mdxbench.post.analysis.screen.quiet`) is not segmented: PELT would find
    nothing in it.'''
    import ruptures as rpt

    def pelt(part):
        # (ruptures' KernelCPD considers every run: its ``jump`` is set to 1 whatever given)
        return rpt.KernelCPD(kernel='linear', min_size=min_size).fit(part) \
            .predict(pen=pen)[:-1]

    n = len(z)
    if n <= window:
        return pelt(z)
    half, quarter, found = window // 2, window // 4, []
    starts = np.arange(0, n - window + half, half)
    starts = starts[:int(np.searchsorted(starts + window, n)) + 1]
    ns = np.minimum(starts + window, n) - starts
    calm = screen.quiet(z[:, 0], starts, ns, pen, min_size, scale=1.0)
    for a, m, still in zip(starts.tolist(), ns.tolist(), calm.tolist()):
        b = a + m
        lo = a if a == 0 else a + quarter
        hi = n if b == n else b - quarter
        for k in ([] if still else pelt(z[a:b])):
            # one change seen by two windows either side of their border is kept once
            if lo <= a + k < hi and (not found or a + k - found[-1] >= min_size):
                found.append(a + k)
    return [k for k in found if n - k >= min_size]


def series_index(df):
    '''(sorted records, one row per series with ``start`` and ``n``) without a loop over
    records: the values of series k are ``records['value'][start:start + n]``. Runs of one
    series at the same time are in order of value, as in the chunks of :func:`mdxbench.post.analysis.chunked.segment_part`.'''
    d = df.filter(pl.col('value').is_not_null()).sort(SERIES + ['time', 'value'],
                                                      nulls_last=True)
    d = d.with_row_index('_row')
    g = d.group_by(SERIES, maintain_order=True).agg(
        pl.col('_row').first().alias('start'), pl.len().alias('n'))
    return d, g


def detect_each(values, starts, ns, kw):
    '''(position of the series, its start, its length, change point) of each series laid
    out in ``values`` at ``starts``/``ns``. The series that provably have no change point
    (:func:`mdxbench.post.analysis.screen.quiet`, one of :data:`WINDOW` runs at most) are
    not segmented: the change points are the same, most series cost a few NumPy passes.'''
    starts, ns = np.asarray(starts, dtype=np.int64), np.asarray(ns, dtype=np.int64)
    # a series longer than a window is segmented in windows: not screened (nor its cost paid)
    short = np.flatnonzero(ns <= WINDOW)
    quiet = np.zeros(len(ns), dtype=bool)
    quiet[short] = screen.quiet_each(values, starts[short], ns[short],
                                     kw.get('penalty', PENALTY), kw.get('min_size', MIN_SIZE))
    for k in np.flatnonzero(~quiet):
        start, n = starts[k], ns[k]
        for cp in detect(values[start:start + n], **kw):
            yield k, int(start), int(n), cp


def scan(df, penalty=PENALTY, min_effect=MIN_EFFECT, max_pvalue=MAX_PVALUE,
         min_size=MIN_SIZE):
    '''Change points of every series of ``df`` (the records table, in memory): a list of
    dicts with the series keys, the detection figures, the run number and ``series_n``.'''
    d, g = series_index(df)
    kw = dict(penalty=penalty, min_effect=min_effect, max_pvalue=max_pvalue,
              min_size=min_size)
    keys = g.select(SERIES).to_dicts()
    return d, [dict(keys[k], **cp, row=start + cp['index'], series_n=n, series_start=start)
               for k, start, n, cp in detect_each(d['value'].to_numpy(), g['start'],
                                                     g['n'], kw)]


def tuning(penalty=None, min_effect=None, max_pvalue=None):
    '''The detector's keyword arguments a user set (None: the default stays).'''
    given = {'penalty': penalty, 'min_effect': min_effect, 'max_pvalue': max_pvalue}
    return {k: v for k, v in given.items() if v is not None}


def summary(df, cps):
    '''The machine-readable result of a scan: the change points, how many are regressions,
    and how many series were analysed (``df``: the records, or that number).'''
    return {'change_points': cps, 'regressions': regressions(cps),
            'series': df if isinstance(df, int) else df.select(SERIES).unique().height}


def regressions(cps):
    '''How many of the change points are regressions.'''
    return sum(c['verdict'] == 'regression' for c in cps)
