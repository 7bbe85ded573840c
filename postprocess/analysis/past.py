'''A kept chunk's past, sorted once: a nightly scan reads of a quiet series what is new,
not the runs it has already seen (issue 45).

A kept chunk (:mod:`mdxbench.post.analysis.scancopy`) holds one routed file per source file
and share. In a history partitioned by month (the local copy of Elasticsearch, the bench's
store) every file but the current month's is the same night after night, yet the scan read
and sorted every run of the chunk each night to screen each series' last segment: at a
decade (100,000 series x 3,650 runs), 1.3 s a chunk, 113 s a night. So the runs of the
chunk's files that end before ``cut`` (the first instant of the month of the newest run),
*the past*, are sorted once and kept beside them:

* ``past.runs``: their values and places (Arrow IPC, uncompressed: read through a memory
  map, and only the series that need them);
* ``past.parquet``: per series, where its runs start there and what the screen needs of
  them (:func:`figures`), and the site's summary of them (``chunkfiles.SUMMARY``);
* ``past.json``: the cut and the routed files it was made of (size, modification time);
  written last, and gone or stale means made again.

The other files, *the recent* runs (all at or after the cut), are read and sorted each
night: a series' runs are its past then its recent runs. A series with no change point
whose state is whole then needs nothing more where the incremental screen
(:func:`mdxbench.post.analysis.incremental.screen`: the largest single split of the whole
series, in its run-to-run noise) provably stays under its limit. The screen's split gain at
``t`` runs is ``C(t)² n / (t (n - t))`` with ``C`` the centred cumulative sum of all ``n``
runs. Cuts among the last :data:`TAIL` runs of the past and among the recent runs are
computed exactly (those past runs are kept). For a cut ``t`` deeper in the past, with ``p``
past runs of mean ``m0`` and their own centred sum ``C0``, ``C(t) = C0(t) - t d``, ``d``
the shift of the mean the recent runs make, and ``n / (n - t) <= p / (p - t)``; so the
gain is at most ``H(d) = max_t (C0(t) - t d)² p / (t (p - t))``, a maximum of convex
parabolas in ``d``, itself convex: on an interval of ``d`` at most its larger end. ``H``
is kept on a grid of shifts (:data:`GRID`, in units of the past's noise over ``sqrt(p)``);
a shift beyond it, a series with a change point, a state that does not match, or a bound
at or above the limit has its runs gathered and goes through the scan's exact code, as
before. The bound decides nothing: the change points are the same, a series is only spared
a read whose answer is known.
'''
import json
import os

import numpy as np
import polars as pl

from mdxbench.post.analysis import changes, chunked, chunkfiles

#: the past's layout; another is made again (1: its runs in several record batches)
VERSION = 2
RUNS, SERIES, META = 'past.runs', 'past.parquet', 'past.json'
#: the shifts of the mean at which each series' bound is kept, in units of its past's
#: run-to-run noise over sqrt(p): q recent runs beside p shift it by about sqrt(q / p) of
#: one (a month's 30 nights beside 365: 0.3; 8 beside 3,643: 0.05), finer near none
GRID = np.array([-2, -1, -.75, -.5, -.35, -.2, -.1, -.05, -.02, 0, .02, .05, .1, .2, .35,
                 .5, .75, 1, 2])
#: the last runs of each series' past kept as values: cuts among them are computed exactly
#: (the bound's weight p / (t (p - t)) overstates the true one most near the past's end;
#: past the last TAIL runs, a month's shift costs the bound about q / TAIL noise units)
TAIL = 64
#: bounds are compared with the limit less this share (rounding on the safe side)
MARGIN = 1e-6


def ranges(starts, ns):
    '''The positions ``starts[i] .. starts[i] + ns[i]`` of every ``i``, one after the other.'''
    starts, ns = np.asarray(starts, dtype=np.int64), np.asarray(ns, dtype=np.int64)
    total = int(ns.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    offset = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(ns) - ns, ns)
    return np.repeat(starts, ns) + offset


def align(every, keys, *columns):
    '''(whether each series number of ``every`` is among the sorted ``keys``, and each
    column of ``columns`` -- one value per key -- at ``every``'s series, 0 where absent).'''
    at = np.searchsorted(keys, every)
    has = at < len(keys)
    has[has] = keys[at[has]] == every[has]
    at = np.where(has, at, 0)
    return has, [np.where(has, col[at], 0) if len(col) else np.zeros(len(every), col.dtype)
                 for col in columns]


def interleave(a, a_starts, a_ns, b, b_starts, b_ns):
    '''Each series' runs of ``a`` then of ``b`` (arrays, the series at the starts and
    lengths given): (the runs, where each series starts in them).'''
    a_ns, b_ns = np.asarray(a_ns, dtype=np.int64), np.asarray(b_ns, dtype=np.int64)
    ns = a_ns + b_ns
    starts = np.cumsum(ns) - ns
    out = np.empty(int(ns.sum()), dtype=np.result_type(a.dtype, b.dtype))
    out[ranges(starts, a_ns)] = a[ranges(a_starts, a_ns)]
    out[ranges(starts + a_ns, b_ns)] = b[ranges(b_starts, b_ns)]
    return out, starts


def figures(values, starts, ns, min_size=changes.MIN_SIZE):
    '''Per series of a sorted past (``values`` laid out at ``starts``/``ns``, contiguous):
    ``sum``, ``ssd`` (the sum of its squared successive differences), ``bits`` (the
    wrapping sum of its values' bits, as the scan's state), ``tail`` (its last
    :data:`TAIL` values), ``unit`` (its noise over sqrt(p)) and ``h`` (the bound ``H`` at
    each shift of :data:`GRID` times ``unit``; 0 where no cut is left to bound).'''
    values = np.asarray(values, dtype=float)
    starts, ns = np.asarray(starts, dtype=np.int64), np.asarray(ns, dtype=np.int64)
    k = len(ns)
    seg = np.repeat(np.arange(k), ns)
    # (reduceat of no series is empty: the sums of a past of none)
    total = np.add.reduceat(values, starts)
    d2 = np.zeros(len(values))
    d2[:-1] = np.diff(values) ** 2
    d2[starts + ns - 1] = 0.0
    ssd = np.add.reduceat(d2, starts)
    bits = np.add.reduceat(values.view(np.uint64), starts, dtype=np.uint64)
    p = ns.astype(float)
    # (a series has a run at least: nothing here divides by zero)
    unit = np.sqrt(ssd / np.maximum(ns - 1, 1) / 2) / np.sqrt(p)
    cs = np.cumsum(values - (total / p)[seg])
    c0 = cs - np.concatenate([[0.0], cs])[starts][seg]
    t = (np.arange(len(values)) - starts[seg] + 1).astype(float)
    pp = p[seg]
    region = np.flatnonzero((t >= min_size) & (t <= pp - TAIL))
    h = np.zeros((k, len(GRID)))
    if len(region):
        # (C0 - t g u)^2 w = a + g (b + g c): three passes a shift, over the bounded cuts
        t, c0, pp, u = t[region], c0[region], pp[region], unit[seg[region]]
        w = pp / (t * (pp - t))
        a, b, c = c0 * c0 * w, -2 * c0 * t * u * w, (t * u) ** 2 * w
        has = np.unique(seg[region])
        at = np.searchsorted(seg[region], has)
        for j, g in enumerate(GRID):
            h[has, j] = np.maximum.reduceat(a + g * (b + g * c), at)
    last = ranges(starts + ns - np.minimum(ns, TAIL), np.minimum(ns, TAIL))
    tails = np.split(values[last], np.cumsum(np.minimum(ns, TAIL))[:-1]) if k else []
    return {'sum': total, 'ssd': ssd, 'bits': bits, 'unit': unit, 'h': list(h),
            'tail': [list(x) for x in tails]}


def _stamp(path):
    st = os.stat(path)
    return [st.st_size, st.st_mtime_ns]


class Past:
    '''The kept past of one chunk: ``series`` (its per-series frame, by series number),
    ``values`` and ``locs`` (the runs, memory-mapped or in memory), ``files`` (the routed
    files it was made of: their names and stamps), ``cut`` (it holds the runs before it).'''
    def __init__(self, series, values, locs, files, cut=None):
        self.series, self.values, self.locs, self.files = series, values, locs, files
        self.cut = cut

    @classmethod
    def empty(cls):
        # (the summary's own columns: every one of chunkfiles.SUMMARY but its cut)
        schema = dict(FRAME, **SUMMARY_SCHEMA)
        return cls(pl.DataFrame(schema=schema), np.zeros(0), np.zeros(0, dtype=np.uint64), {})

    @classmethod
    def load(cls, part, cut, present=None, fresh=None):
        '''The past kept in the chunk directory ``part`` if made at ``cut`` (any cut: None)
        of routed files that are all still there unchanged, else None. The scan that owns
        the chunk says which files are there (``present``, their names) and which of them it
        routed again (``fresh``, the ids of their source files: ``<id>-<share>.arrow``): no
        file is looked at then; else each one's size and modification time are.'''
        import datetime as dt

        import pyarrow as pa

        try:
            meta = json.loads((part / META).read_text())
        except (OSError, ValueError):
            return None
        if meta.get('version') != VERSION or \
                (cut is not None and meta.get('cut') != cut.isoformat()):
            return None
        if present is not None and fresh is not None:
            if any(name not in present or name.split('-')[0] in fresh
                   for name in meta['files']):
                return None
        else:
            for name, stamp in meta['files'].items():
                try:
                    if _stamp(part / name) != stamp:
                        return None
                except OSError:
                    return None
        try:
            table = pa.ipc.open_file(pa.memory_map(str(part / RUNS))).read_all()
            series = pl.read_parquet(part / SERIES)
        except (OSError, pa.ArrowInvalid):
            return None
        if table.num_rows != meta['rows']:
            return None

        def column(name):
            col = table.column(name)
            return col.chunk(0).to_numpy(zero_copy_only=True) if col.num_chunks == 1 else \
                col.to_numpy()
        return cls(series, column('value'), column('_loc'), meta['files'],
                   dt.datetime.fromisoformat(meta['cut']))

    @classmethod
    def make(cls, part, frame, files, cut):
        '''Sort the runs ``frame`` (the routed files ``files``' runs, all before ``cut``),
        keep them in ``part`` and return the past.'''
        for name in (META, RUNS, SERIES):
            (part / name).unlink(missing_ok=True)
        d, sids, starts, ns = chunked.laid_out(frame)
        if not d.height:
            return cls.empty()
        values = d['value'].to_numpy()
        series = pl.DataFrame({'_sid': sids[starts], 'start': starts.astype(np.int64),
                               **figures(values, starts, ns)}, schema_overrides=FRAME)
        # (by series number, as the scan searches it: sorted, whatever order a join keeps)
        series = series.join(chunkfiles.summarize(d, cut).drop('cut'), on='_sid').sort('_sid')
        return cls._keep(part, series, values, d['_loc'].to_numpy(),
                         {f.name: _stamp(f) for f in files}, cut)

    def extend(self, part, frame, files, cut):
        '''This past (made at an earlier cut) and the runs ``frame`` of the routed files
        ``files`` (all between its cut and ``cut``: the month that ended), kept in ``part``
        as the past at ``cut``: each series' runs are its old past's then the new ones,
        merged without sorting the old again; the same past :meth:`make` would make of all
        of them.'''
        d, sids, starts, ns = chunked.laid_out(frame)
        osids = self.series['_sid'].to_numpy()
        every = np.union1d(osids, sids[starts]).astype(np.uint64)
        _, (o_start, o_n) = align(every, osids, self.series['start'].to_numpy(),
                                  self.series['n'].to_numpy())
        _, (a_start, a_n) = align(every, sids[starts], starts, ns)
        values, at = interleave(np.asarray(self.values), o_start, o_n, d['value'].to_numpy(),
                                a_start, a_n)
        locs, _ = interleave(np.asarray(self.locs), o_start, o_n, d['_loc'].to_numpy(), a_start,
                             a_n)
        series = pl.DataFrame({'_sid': every, 'start': at,           # (int64 already)
                               **figures(values, at, o_n + a_n)}, schema_overrides=FRAME)
        # the summary of all the runs: the old past's and the new ones' (all before the cut)
        new = chunkfiles.summarize(d, cut).drop('cut')
        summary = merged(self.series.select(new.columns), new)
        series = series.join(summary, on='_sid').sort('_sid')
        kept = dict(self.files, **{f.name: _stamp(f) for f in files})
        for name in (META, RUNS, SERIES):
            (part / name).unlink(missing_ok=True)
        return self._keep(part, series, values, locs, kept, cut)

    @classmethod
    def _keep(cls, part, series, values, locs, files, cut):
        import pyarrow as pa

        # one record batch: a column of several would be copied whole to be read
        batch = pa.record_batch([pa.array(values), pa.array(locs)], names=['value', '_loc'])
        with pa.ipc.new_file(str(part / RUNS), batch.schema) as writer:
            writer.write_batch(batch)
        series.write_parquet(part / SERIES)
        tmp = part / (META + '.tmp')
        tmp.write_text(json.dumps({'version': VERSION, 'cut': cut.isoformat(),
                                   'rows': len(values), 'files': files}))
        tmp.replace(part / META)
        return cls(series, values, locs, files, cut)


#: the per-series frame's figure columns
FRAME = {'_sid': pl.UInt64, 'start': pl.Int64, 'sum': pl.Float64, 'ssd': pl.Float64,
         'bits': pl.UInt64, 'unit': pl.Float64, 'h': pl.List(pl.Float64),
         'tail': pl.List(pl.Float64)}
#: the site summary's columns' types (``chunkfiles.SUMMARY``)
SUMMARY_SCHEMA = {'_sid': pl.UInt64, 'n': pl.UInt32, 'first': pl.Datetime('us', 'UTC'),
                  'last': pl.Datetime('us', 'UTC'), 'ref': pl.Float64, 'lower': pl.Float64,
                  'upper': pl.Float64, '_n0': pl.UInt32, '_h': pl.UInt64,
                  '_t': pl.Datetime('us', 'UTC')}


def open_chunk(part, cut, columns, fresh=None):
    '''(the chunk's past, its recent runs as one table, unsorted) of the chunk directory
    ``part``: the kept past where it still holds and every other routed file's runs are at
    or after ``cut``; else the past made again of the files whose runs all end before the
    cut (none where a file of runs on both sides of the cut would interleave with it, or
    without a cut). ``fresh``: the ids of the source files the scan routed again
    (:meth:`Past.load`).'''
    paths = sorted(part.glob('*' + chunkfiles.SUFFIX))
    names = {p.name for p in paths}
    # without a cut (files without time statistics) no past is kept: one made at a cut
    # is not loaded, its files removed below
    past = Past.load(part, cut, names, fresh) if cut is not None else None
    if past is not None:
        recent = chunkfiles.read_chunk([p for p in paths if p.name not in past.files], columns)
        if not recent.height or recent['time'].min() >= cut:
            return past, recent
    older = Past.load(part, None, names, fresh) if past is None and cut is not None else None
    if older is not None and older.cut < cut:
        # a month ended: the old past and the runs of the files that ended before the cut
        # (all after the old one's), merged; the others recent
        rest = [p for p in paths if p.name not in older.files]
        frames = [chunkfiles.read_chunk([p], columns) for p in rest]
        ended = [i for i, f in enumerate(frames) if f.height and f['time'].max() < cut]
        if all(frames[i]['time'].min() >= older.cut for i in ended) and \
                all(f['time'].min() >= cut for i, f in enumerate(frames)
                    if i not in ended and f.height):
            grown = older.extend(part, pl.concat([frames[i] for i in ended])
                                 if ended else chunkfiles.read_chunk([], columns),
                                 [rest[i] for i in ended], cut)
            others = [f for i, f in enumerate(frames) if i not in ended]
            return grown, pl.concat(others) if others else chunkfiles.read_chunk([], columns)
    frames = [chunkfiles.read_chunk([p], columns) for p in paths]
    old = [i for i, f in enumerate(frames)
           if cut is not None and f.height and f['time'].max() < cut]
    if cut is None or any(f.height and f['time'].min() < cut
                          for i, f in enumerate(frames) if i not in old):
        old = []
    for name in (META, RUNS, SERIES):
        (part / name).unlink(missing_ok=True)
    past = Past.make(part, pl.concat([frames[i] for i in old]), [paths[i] for i in old], cut) \
        if old else Past.empty()
    rest = [f for i, f in enumerate(frames) if i not in old]
    recent = pl.concat(rest) if rest else chunkfiles.read_chunk([], columns)
    return past, recent


def quiet(series, recent, r_start, r_n, kappa, penalty, min_size=changes.MIN_SIZE):
    '''True for each series of the past frame ``series`` (its rows, each with its recent
    runs at ``r_start``/``r_n`` in ``recent``) whose last segment, the whole series, provably
    holds no split the incremental screen would call for: its largest single split saves
    less than ``kappa`` x ``penalty`` x ln(n) in its run-to-run noise (see the module).'''
    k = series.height
    if not k:
        return np.zeros(0, dtype=bool)
    p = series['n'].to_numpy().astype(np.int64)
    total, ssd, unit = (series[c].to_numpy() for c in ('sum', 'ssd', 'unit'))
    h = series['h'].explode(empty_as_null=False).to_numpy().reshape(k, len(GRID))
    a = np.minimum(p, TAIL)
    tail = series['tail'].explode(empty_as_null=False).to_numpy().astype(float)
    e, es = interleave(tail, np.cumsum(a) - a, a, np.asarray(recent, dtype=float), r_start, r_n)
    m = a + np.asarray(r_n, dtype=np.int64)
    n = p + np.asarray(r_n, dtype=np.int64)
    seg = np.repeat(np.arange(k), m)
    e_sum = np.add.reduceat(e, es)
    tail_sum = np.add.reduceat(tail, np.cumsum(a) - a)
    mean = (total - tail_sum + e_sum) / n
    # the cut after each of e's runs: t runs; C(t) = S(t) - t mean, centred before summing
    t = (p - a)[seg] + (np.arange(len(e)) - es[seg]) + 1.0
    z = np.cumsum(e - mean[seg])
    c = z - np.concatenate([[0.0], z])[es][seg] + ((total - tail_sum) - (p - a) * mean)[seg]
    nn = n[seg].astype(float)
    cut = (t >= min_size) & (nn - t >= min_size)
    with np.errstate(invalid='ignore', divide='ignore'):
        gain = np.where(cut, c * c * nn / (t * (nn - t)), 0.0)
        exact = np.maximum.reduceat(gain, es)
        # the noise of all runs: the past's squared differences, then those from its last run
        d2 = np.zeros(len(e))
        d2[1:] = np.diff(e) ** 2
        # (the tail's own, in ssd already, and the one across two series: a series of
        # the past has a run at least, so its first is in its tail)
        d2[(np.arange(len(e)) - es[seg]) < a[seg]] = 0.0
        noise2 = (ssd + np.add.reduceat(d2, es)) / np.maximum(n - 1, 1) / 2
        r = (mean - total / p) / unit
    deep = p - TAIL >= min_size                 # cuts deeper in the past, bounded by H
    inside = (unit > 0) & np.isfinite(r) & (np.abs(r) <= GRID[-1])
    j = np.clip(np.searchsorted(GRID, np.where(inside, r, 0.0), side='right') - 1, 0,
                len(GRID) - 2)
    rows = np.arange(k)
    bound = np.where(deep, np.maximum(h[rows, j], h[rows, j + 1]), 0.0)
    worst = np.maximum(exact, bound) * (1 + MARGIN)
    limit = kappa * penalty * np.log(np.maximum(n, 2)) * (1 - MARGIN)
    with np.errstate(invalid='ignore', divide='ignore'):
        ok = np.isfinite(worst) & np.isfinite(noise2) & (noise2 > 0) & \
            (worst / noise2 < limit)
    return ok & (inside | ~deep)


def merged(earlier, later):
    '''The site's summaries (``chunkfiles.SUMMARY`` but the cut) of the same cut of two parts of
    a chunk's runs, every run of ``earlier`` before every run of ``later``, as one summary
    of all of them (by series number).'''
    j = earlier.join(later, on='_sid', how='full', coalesce=True, suffix='_r').sort('_sid')
    seen = pl.col('n_r').is_not_null()
    # the runs' hashes summed as the scan sums them: wrapping at 64 bits
    h = np.add(j['_h'].fill_null(0).to_numpy(), j['_h_r'].fill_null(0).to_numpy(),
               dtype=np.uint64)
    return j.select(
        '_sid', (pl.col('n').fill_null(0) + pl.col('n_r').fill_null(0)).alias('n'),
        pl.coalesce('first', 'first_r').alias('first'),
        pl.coalesce('last_r', 'last').alias('last'),
        *[pl.when(seen).then(pl.col(f'{c}_r')).otherwise(pl.col(c)).alias(c)
          for c in ('ref', 'lower', 'upper')],
        (pl.col('_n0').fill_null(0) + pl.col('_n0_r').fill_null(0)).alias('_n0'),
        pl.Series('_h', h, dtype=pl.UInt64), pl.max_horizontal('_t', '_t_r').alias('_t'))


def summary(series, recent, cut):
    '''The site's summary (``chunkfiles.SUMMARY``) of every series of the past frame
    ``series`` and of the sorted recent runs ``recent`` (all at or after ``cut``), as
    ``chunkfiles.summarize`` gives it of all their runs.'''
    rs = chunkfiles.summarize(recent, cut).drop('cut')
    return merged(series.select(rs.columns), rs).with_columns(
        pl.lit(cut, dtype=pl.Datetime('us', 'UTC')).alias('cut'))
