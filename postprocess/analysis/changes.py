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

Each kept change point is then explained from the stored provenance of the runs either
side: the benchmark binary (Spack hash or Debian package), the toolchain, the benchmark's
version, the suite commit, the compute node's kernel, the node set, and the system events
recorded (``mdxbench event add``) between the last run before and the first run after.
Whether a change is a regression is what the check declared for the perf variable
(``better``); a series without a declaration gives ``no-direction``, never a guess.
'''
import json
import math

import numpy as np
import polars as pl

from mdxbench.post.store import events as events_store

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

#: provenance fields compared either side of a change point: name -> how to read a meta
PROVENANCE = {
    'binary': lambda m: _binary(m.get('binary')),
    'toolchain': lambda m: _binary(m.get('toolchain')),
    'bench_version': lambda m: m.get('bench_version'),
    'suite': lambda m: (m.get('suite_commit') or '')[:12] or None,
    'kernel': lambda m: m.get('node_kernel'),
}


def _binary(b):
    if isinstance(b, str):              # Elasticsearch's flattened field keeps JSON text
        try:
            b = json.loads(b)
        except ValueError:
            return b
    if not b:
        return None
    return (b.get('spack_spec', '') + ' ' + b.get('spack_hash', '')).strip() \
        or b.get('debian_package') or b.get('path') or b.get('source')


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

    from mdxbench.post.analysis import screen

    def pelt(part):
        return rpt.KernelCPD(kernel='linear', min_size=min_size, jump=1).fit(part) \
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
    from mdxbench.post.analysis import screen

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


def verdict(better, effect):
    if better not in ('higher', 'lower'):
        return 'no-direction'
    worse = effect < 0 if better == 'higher' else effect > 0
    return 'regression' if worse else 'improvement'


def _meta(row):
    m = row['meta']
    try:
        return json.loads(m) if isinstance(m, str) else (m or {})
    except ValueError:
        return {}


def explain(d, cp, events=(), context=3):
    '''Add to ``cp`` what changed with it: provenance of up to ``context`` runs either
    side (``changed``: field -> [before values, after values]; ``unchanged``), the
    events in between, the verdict, and a sentence for people.'''
    i, s0 = cp['row'], cp['series_start']
    before = d.slice(max(s0, i - context), i - max(s0, i - context)).to_dicts()
    after = d.slice(i, min(context, s0 + cp['series_n'] - i)).to_dicts()
    first = after[0]
    changed, unchanged = {}, []
    for name, get in PROVENANCE.items():
        b = sorted({str(get(_meta(r))) for r in before if get(_meta(r)) is not None})
        a = sorted({str(get(_meta(r))) for r in after if get(_meta(r)) is not None})
        if not b and not a:
            continue
        if b != a:
            changed[name] = [b, a]
        else:
            unchanged.append(name)
    # nodes: those of the first runs after that no earlier run of the series used (a
    # rotation over the same nodes is no change)
    seen = {n for r in d.slice(s0, i - s0)['nodes'].to_list() for n in (r or '').split(',') if n}
    new = sorted({n for r in after for n in (r['nodes'] or '').split(',') if n} - seen)
    if new:
        changed['new nodes'] = [sorted({n for r in before for n in (r['nodes'] or '').split(',')
                                        if n}), new]
    elif seen:
        unchanged.append('nodes')

    t_prev, t_first = before[-1]['time'], first['time']
    evs = [e for e in events
           if e['system'] == cp['system'] and e.get('partition') in (None, cp['partition'])
           and t_prev < e['_time'] <= t_first]
    v = verdict(cp['better'], cp['effect'])
    cp.update(run=cp['index'] + 1, jobid=first['jobid'], nodes=first['nodes'] or '',
              time=t_first.isoformat(),
              previous_time=t_prev.isoformat(), changed=changed, unchanged=unchanged,
              events=[{'time': e['time'], 'name': e['name'], 'note': e.get('note'),
                       'partition': e.get('partition')} for e in evs],
              verdict=v)
    cp['explanation'] = sentence(cp)
    return cp


def sentence(cp):
    '''``mdx2:vc16m32g BabelStreamOmp triad -22% (383 -> 298 GB/s) since 2026-10-03 run
    41; binary and suite unchanged; event 2026-10-02 "hypervisor kernel update"``.'''
    parts = [f"{cp['system']}:{cp['partition']} {cp['check']} {cp['perf_var']} "
             f"{cp['effect']:+.0%} ({cp['before']:.4g} \u2192 {cp['after']:.4g} {cp['unit']}) "
             f"since {cp['time'][:10]} run {cp['run']} (job {cp['jobid']})"]
    for name, (b, a) in cp['changed'].items():
        parts.append(f"{name} {', '.join(b) or '?'} \u2192 {', '.join(a) or '?'}")
    if cp['unchanged']:
        parts.append(' and '.join([', '.join(cp['unchanged'][:-1]), cp['unchanged'][-1]]
                                  if len(cp['unchanged']) > 1 else cp['unchanged'])
                     + ' unchanged')
    for e in cp['events']:
        parts.append(f"event {e['time'][:10]} \"{e['name']}\""
                     + (f" ({e['note']})" if e.get('note') else ''))
    if not cp['events']:
        parts.append('no recorded event')
    return '; '.join(parts)


SEVERITY = {'regression': 0, 'no-direction': 1, 'improvement': 2}


def find(source, events=(), since=None, nproc=None, **kw):
    '''Explained change points, regressions first, then by size of the change; only
    those whose first run is at or after ``since`` (a datetime) when given.

    ``source``: the records table, or Parquet files (a path, a directory, a list), which
    are scanned in bounded memory by ``nproc`` processes
    (:mod:`mdxbench.post.analysis.chunked`).'''
    import datetime as dt

    evs = events_store.timed(events)
    if isinstance(source, pl.DataFrame):
        d, cps = scan(source, **kw)
    else:
        from mdxbench.post.analysis import chunked

        d, cps = chunked.scan(source, nproc, events=evs, **kw)
    # a kept scan copy's come explained
    out = [cp if 'explanation' in cp else explain(d, cp, evs) for cp in cps]
    if since is not None:
        out = [cp for cp in out if dt.datetime.fromisoformat(cp['time']) >= since]
    out.sort(key=lambda c: (SEVERITY[c['verdict']], -abs(c['effect'])))
    for c in out:
        for k in ('row', 'series_start', '_sid'):
            c.pop(k, None)
    return out


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
