'''Change points of a history kept as Parquet files, in memory bounded by a chunk, not by
the history (:func:`mdxbench.post.analysis.scan.find` given file paths).

The history copy (:mod:`mdxbench.post.store.history`) and ``mdxbench export`` keep the
records as Parquet files. A year of nightly runs of 100,000 series is 36.5 M records;
held as one table with its provenance that is tens of GiB. The scan reads instead:

1. **Route** (all processes, a share of the files' row groups each): of each row group
   only the series keys, time and value, and the tags and parameters
   ``records.from_parquet`` leaves out or renames by; each record gets a series number, a
   64-bit hash of its keys (:func:`series_hash`; no table of the keys over the whole
   history), and its place (file, row group, row), and is appended to a temporary Arrow
   IPC file of its chunk (series number modulo the number of chunks, sized for about
   :data:`CHUNK_ROWS` records each). Arrow's IPC format is written as the batches come:
   a Parquet file per chunk cost three times as much to write here (0.047 s against
   0.016 s zstd-compressed for each row group of 182,500 records routed).
2. **Segment** (all processes, one chunk at a time each): the chunk sorted by series and
   time, each series segmented by :func:`~mdxbench.post.analysis.changes.detect_each`
   (which hands PELT only the series a bound does not prove quiet).
3. **Explain** (all processes, then this one): the records of the series that changed,
   read by place, with the provenance (``meta``) of the runs either side of each change
   point only.

A row group is read with PyArrow one at a time: Polars' streaming sinks (a partitioned or
a single Parquet sink) were measured to grow with the history here (1.1 GiB at 36.5 M
records against 0.5 GiB at 3.65 M), reading row groups one by one did not (0.33 against
0.30 GiB).
'''
import concurrent.futures
import json
import multiprocessing
import pathlib
import tempfile

import numpy as np
import polars as pl

from mdxbench.post.analysis.changes import SERIES, detect_each
from mdxbench.post.store import records

#: records per chunk: 2 M records of (series number, time, value) are about 48 MB, sorted
#: in a worker beside their copy
CHUNK_ROWS = 2_000_000

#: the columns :func:`~mdxbench.post.analysis.explain.explain` reads besides ``meta``
EXPLAIN = ['time', 'value', 'jobid', 'nodes']
#: what the changed series' runs are gathered with
EXPLAINED = ['_sid'] + EXPLAIN + ['meta']
#: the columns read of every record: series keys, what explains, and what
#: :func:`mdxbench.post.store.records.from_parquet` renames or leaves out by
READ = SERIES + EXPLAIN + ['tags', 'params']
#: the columns routing reads: those but what only explains
ROUTE = [c for c in READ if c not in ('jobid', 'nodes')]
#: what a kept chunk carries besides them for the site (:mod:`mdxbench.post.site.kept`):
#: each run's result, job, nodes and reference, so that the trend pages are written a
#: chunk at a time from the scan's own copy
SITE = {'result': pl.Utf8, 'jobid': pl.Utf8, 'nodes': pl.Utf8, 'ref': pl.Float64,
        'lower': pl.Float64, 'upper': pl.Float64}


def workers():
    '''Processes of the scan: the cores this process may use.'''
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else \
        (os.cpu_count() or 1)


def series_hash():
    '''A record's series number: a 64-bit hash of its series keys. Two of 100,000 series
    share one with a chance near 3e-10; :func:`scan` then fails, naming it, rather than
    merge them.'''
    return pl.struct(SERIES).hash(seed=7)


def files(source):
    '''The Parquet files of ``source``: a path, a directory (its ``*.parquet``, recursively)
    or a list of those.'''
    out = []
    for p in ([source] if isinstance(source, (str, pathlib.Path)) else source):
        p = pathlib.Path(p)
        out.extend(sorted(p.rglob('*.parquet')) if p.is_dir() else [p])
    return [str(p) for p in out]


def _present(path, names):
    import pyarrow.parquet as pq

    have = set(pq.read_schema(path).names)
    return [n for n in names if n in have]


def _with_missing(df, names):
    '''A file written before a column existed reads it as null (as ``records.from_parquet``).'''
    return df.with_columns(pl.lit(None, dtype=SITE.get(n, pl.Utf8)).alias(n)
                           for n in names if n not in df.collect_schema().names())


def _records(table, where=None, names=READ):
    '''The records of an Arrow table of :data:`READ` columns as
    :func:`mdxbench.post.store.records.from_parquet` gives them (current names, no split
    runs), with a value, matching ``where`` (a Polars expression) when given; ``_at`` the
    place of each in ``table``, ``_sid`` its series number.'''
    d = _with_missing(pl.from_arrow(table), names).with_row_index('_at')
    d = records.nightly(records.with_current_names(d)).filter(pl.col('value').is_not_null())
    if where is not None:
        d = d.filter(where)
    return d.with_columns(series_hash().alias('_sid'))


def series_count(source, where=None):
    '''How many series the records of the Parquet files of ``source`` hold (of those
    ``where`` selects), as :func:`scan` tells them apart: their keys read a file at a time,
    streamed, only the series numbers kept.'''
    sids = []
    for p in files(source):
        lf = _with_missing(pl.scan_parquet(p).select(_present(p, ROUTE)), ROUTE)
        lf = records.nightly(records.with_current_names(lf)).filter(pl.col('value').is_not_null())
        if where is not None:
            lf = lf.filter(where)
        sids.append(lf.select(series_hash().alias('_sid')).unique().collect(engine='streaming'))
    return pl.concat(sids)['_sid'].n_unique() if sids else 0


#: a record's place in the history is one 64-bit number: its file, row group and row
FILE_BITS, GROUP_BITS, ROW_BITS = 16, 24, 24
ROW_MASK = (1 << ROW_BITS) - 1
GROUP_MASK = (1 << GROUP_BITS) - 1


def locator(fi, group):
    '''The place of each record of row group ``group`` of file ``fi`` (its row ``_at``)
    as one 64-bit number: file, row group and row in FILE_BITS, GROUP_BITS and ROW_BITS.'''
    return (pl.lit(fi, pl.UInt64) * 2 ** (GROUP_BITS + ROW_BITS)
            + pl.lit(group, pl.UInt64) * 2 ** ROW_BITS
            + pl.col('_at').cast(pl.UInt64)).alias('_loc')


def group_key(locs):
    '''The file and row group of places ``locs`` as one number (file << GROUP_BITS | group).'''
    return locs >> np.uint64(ROW_BITS)


def row_of(locs):
    return locs & np.uint64(ROW_MASK)


def file_and_group(key):
    '''(file, row group) of a :func:`group_key`.'''
    return int(key >> np.uint64(GROUP_BITS)), int(key & np.uint64(GROUP_MASK))


def _narrow(paths, fi, group, where, site=False, opened=None):
    '''(series number, time, value, place) of one row group's records; with ``site``,
    (those and the :data:`SITE` columns, each series' keys once). ``opened``: a dict
    where the files stay open between calls (closed by the caller).'''
    import pyarrow.parquet as pq

    names = ROUTE + list(SITE) if site else ROUTE
    if opened is None:
        with pq.ParquetFile(paths[fi]) as f:
            table = f.read_row_group(group, columns=_present(paths[fi], names))
    else:
        if fi not in opened:
            f = pq.ParquetFile(paths[fi])
            opened[fi] = (f, [n for n in names if n in f.schema_arrow.names])
        f, columns = opened[fi]
        table = f.read_row_group(group, columns=columns)
    d = _records(table, where, READ + list(SITE) if site else READ)
    out = d.select('_sid', 'time', 'value', locator(fi, group),
                   *([pl.col(c).cast(t) for c, t in SITE.items()] if site else []))
    if not site:
        return out
    return out, d.unique('_sid', keep='first').select('_sid', *SERIES)


#: a run's part of what its series' earlier runs are known by (the trend pages'): a 64-bit
#: hash of its time and value, summed (wrapping) over the runs, so that the sum is the same
#: in any order of the records and moves when any run's time or value does
RUN_HASH = pl.struct(pl.col('time'), pl.col('value')).hash(seed=11)


def month_of(t):
    '''The first instant of the month of ``t`` (UTC).'''
    import datetime as dt

    return dt.datetime(t.year, t.month, 1, tzinfo=dt.timezone.utc)


def latest_time(path):
    '''The latest ``time`` in the Parquet file ``path`` by its row groups' statistics
    (a datetime, UTC), or None where they have none.'''
    import datetime as dt

    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    names = [meta.schema.column(i).name for i in range(meta.num_columns)]
    if 'time' not in names:
        return None
    i, out = names.index('time'), None
    for g in range(meta.num_row_groups):
        st = meta.row_group(g).column(i).statistics
        if st is None or not st.has_min_max or not isinstance(st.max, dt.datetime):
            return None
        t = st.max if st.max.tzinfo else st.max.replace(tzinfo=dt.timezone.utc)
        out = t if out is None or t > out else out
    return out


#: what the site knows each series of a chunk by, kept beside its state
#: (``summary.parquet``; :mod:`mdxbench.post.site.kept`): its runs, first and last time, the
#: latest reference, and of its runs before ``cut`` (the month the site's latest runs
#: start) their number, the sum of their hashes and the last time
SUMMARY = ['_sid', 'n', 'first', 'last', 'ref', 'lower', 'upper', '_n0', '_h', '_t', 'cut']


def summarize(d, cut):
    ''':data:`SUMMARY` of the chunk ``d`` laid out by series, time and value (the
    columns ``_sid``, time, value, ref, lower, upper), ``cut`` a datetime.'''
    e = pl.col('time') < cut
    return d.group_by('_sid', maintain_order=True).agg(
        pl.len().alias('n'), pl.col('time').first().alias('first'),
        pl.col('time').last().alias('last'), *[pl.col(c).last() for c in ('ref', 'lower', 'upper')],
        e.sum().alias('_n0'), RUN_HASH.filter(e).sum().alias('_h'),
        pl.col('time').filter(e).max().alias('_t')).with_columns(
        pl.lit(cut, dtype=pl.Datetime('us', 'UTC')).alias('cut'))


#: a routed chunk's files: ``<chunk>/<tag>`` + this (Arrow IPC)
SUFFIX = '.arrow'
#: a kept chunk's series keys, per routed file: ``<chunk>/<tag>`` + this (Arrow IPC)
KEYS = '.keys'
#: a routed chunk's columns
CHUNK_SCHEMA = {'_sid': pl.UInt64, 'time': pl.Datetime('us', 'UTC'), 'value': pl.Float64,
                '_loc': pl.UInt64}


def route(task):
    '''Append each record of the task's row groups to the file of its chunk:
    ``<out>/<chunk>/<tag>.arrow``, its buffers compressed with ``compression`` (None,
    ``'zstd'``).'''
    import pyarrow as pa

    paths, groups, chunks, out, tag, where, compression, *site = task
    site = bool(site and site[0])
    options = pa.ipc.IpcWriteOptions(compression=compression)
    writers, keys, opened = {}, {}, {}
    try:
        for fi, group in groups:
            d = _narrow(paths, fi, group, where, site, opened)
            if site:
                d, k = d
                for (c,), part in k.with_columns((pl.col('_sid') % chunks).alias('_chunk')) \
                        .partition_by('_chunk', as_dict=True, include_key=False).items():
                    keys.setdefault(c, []).append(part)
            d = d.with_columns((pl.col('_sid') % chunks).alias('_chunk'))
            for (k,), part in d.partition_by('_chunk', as_dict=True,
                                             include_key=False).items():
                table = part.to_arrow()
                if k not in writers:
                    (pathlib.Path(out) / str(k)).mkdir(exist_ok=True)
                    writers[k] = pa.ipc.new_file(
                        str(pathlib.Path(out) / str(k) / f'{tag}{SUFFIX}'), table.schema,
                        options=options)
                writers[k].write_table(table)
    finally:
        for w in writers.values():
            w.close()
        for f, _ in opened.values():
            f.close()
    for c, parts in keys.items():
        pl.concat(parts).unique('_sid', keep='first').write_ipc(
            pathlib.Path(out) / str(c) / f'{tag}{KEYS}', compression='zstd')


def read_chunk(paths, columns=None):
    '''The records of a chunk's routed files ``paths`` as one table (in chunks: sorting
    gathers them); ``columns``: those only.'''
    if not paths:
        schema = dict(CHUNK_SCHEMA, **SITE)
        return pl.DataFrame(schema={c: schema[c] for c in columns or CHUNK_SCHEMA})
    return pl.concat([pl.read_ipc(p, columns=columns, memory_map=False) for p in paths],
                     rechunk=False)


#: a kept chunk's keys gathered from its routed files' ``.keys``: ``keys.cache`` (Arrow
#: IPC) and ``keys.json`` (the files it holds, with their sizes and modification times)
KEYS_CACHE, KEYS_META = 'keys.cache', 'keys.json'


def _keys_files(part):
    return {p.name: [p.stat().st_size, p.stat().st_mtime_ns]
            for p in pathlib.Path(part).glob('*' + KEYS)}


def _read_keys_files(paths):
    if not paths:
        return pl.DataFrame(schema={'_sid': pl.UInt64, **{k: pl.Utf8 for k in SERIES}})
    return pl.concat([pl.read_ipc(p, memory_map=False) for p in paths],
                     how='vertical_relaxed').unique('_sid', keep='first', maintain_order=True)


def keep_keys(part, fresh=None):
    '''Gather the kept chunk ``part``'s series keys into one file (by the scan, which owns
    the chunk): only the files new or routed again since are read and added. Keys of a
    series no longer routed may stay: every reader joins them to the series it has.
    ``fresh``: the ids of the source files the scan routed again (``<id>-<share>.keys``):
    then no file is looked at but the directory; else each one's size and modification
    time are.'''
    part = pathlib.Path(part)
    now = _keys_files(part) if fresh is None else \
        {p.name: None for p in part.glob('*' + KEYS)}
    try:
        held = json.loads((part / KEYS_META).read_text())
    except (OSError, ValueError):
        held = {}
    if fresh is None:
        new = sorted(n for n in now if n not in held or held[n] != now[n])
    else:
        new = sorted(n for n in now if n not in held or n.split('-')[0] in fresh)
    gone = [n for n in held if n not in now]
    cached = None
    if held:
        try:
            cached = pl.read_ipc(part / KEYS_CACHE, memory_map=False) if new or gone else True
        except (OSError, pl.exceptions.PolarsError):
            new = sorted(now)
    if cached is True:
        return                              # nothing new: the gathered keys hold
    parts = [cached] if cached is not None else []
    keys = pl.concat(parts + [_read_keys_files([part / n for n in new])],
                     how='vertical_relaxed').unique('_sid', keep='first', maintain_order=True)
    (part / KEYS_META).unlink(missing_ok=True)
    keys.write_ipc(part / KEYS_CACHE)
    tmp = part / (KEYS_META + '.tmp')
    tmp.write_text(json.dumps(_keys_files(part)))
    tmp.replace(part / KEYS_META)


def read_keys(part):
    '''Each series' keys (``_sid`` and :data:`SERIES`) of the kept chunk ``part``: its
    gathered keys where they hold every ``.keys`` file there (the scan gathers them each
    time it segments the chunk), else every file read.'''
    part = pathlib.Path(part)
    now = sorted(p.name for p in part.glob('*' + KEYS))
    try:
        if now and sorted(json.loads((part / KEYS_META).read_text())) == now:
            return pl.read_ipc(part / KEYS_CACHE, memory_map=False)
    except (OSError, ValueError, pl.exceptions.PolarsError):
        pass
    return _read_keys_files([part / n for n in now])


#: a kept chunk's runs from the cut on (the trend pages' latest month), sorted, with the
#: site's columns, written by the scan (:func:`keep_latest`); the cut in its metadata
LATEST = 'latest.arrow.site'


def keep_latest(part, runs, cut):
    '''Keep the runs ``runs`` (the chunk's, from ``cut`` on, sorted by series, time and
    value) for the site.'''
    import pyarrow as pa

    table = runs.select('_sid', 'time', 'value', *SITE).to_arrow()
    table = table.replace_schema_metadata({'cut': cut.isoformat()})
    tmp = pathlib.Path(part) / (LATEST + '.tmp')
    with pa.ipc.new_file(str(tmp), table.schema) as writer:
        writer.write_table(table)
    tmp.replace(pathlib.Path(part) / LATEST)


def read_latest(part, cut):
    '''The runs the scan kept for the site of the chunk ``part`` (:func:`keep_latest`) if
    kept for ``cut``, else None.'''
    import pyarrow as pa

    try:
        with pa.memory_map(str(pathlib.Path(part) / LATEST)) as source:
            table = pa.ipc.open_file(source).read_all()
    except (OSError, pa.ArrowInvalid):
        return None
    if (table.schema.metadata or {}).get(b'cut') != cut.isoformat().encode():
        return None
    return pl.from_arrow(table)


def segment_part(part, kw):
    '''Change points of one chunk: ``part`` a table or the directory of its routed files,
    with ``_sid``, time, value, ``_loc``; (series number, change point, the places of the
    series' runs in order) each.'''
    if not isinstance(part, pl.DataFrame):
        part = read_chunk(sorted(pathlib.Path(part).glob('*' + SUFFIX)))
    part, sids, starts, ns = laid_out(part)
    locs = part['_loc'].to_numpy()
    return [(int(sids[start]), cp, locs[start:start + n].copy())
            for _, start, n, cp in detect_each(part['value'].to_numpy(), starts, ns, kw)]


def laid_out(part):
    '''(the chunk ``part`` sorted by series, time and value, its series numbers, where
    each series starts, its runs): runs at the same time in value order, as
    changes.series_index lays them out.'''
    part = part.sort(['_sid', 'time', 'value'], nulls_last=True)
    sids = part['_sid'].to_numpy()
    starts = np.concatenate([[0], np.flatnonzero(np.diff(sids)) + 1]).astype(int) \
        if len(sids) else np.array([], dtype=int)
    return part, sids, starts, np.diff(np.concatenate([starts, [len(sids)]]))


def shares(items, nproc, weight=lambda item: 1):
    '''``items`` in ``nproc`` contiguous shares of about equal weight.'''
    total = sum(weight(i) for i in items)
    shares, acc = [[] for _ in range(nproc)], 0
    for item in items:
        shares[min(nproc - 1, acc * nproc // max(total, 1))].append(item)
        acc += weight(item)
    return [s for s in shares if s]


def row_groups(paths):
    '''(file number, row group, records) of each row group of the files ``paths``.'''
    import pyarrow.parquet as pq

    out = []
    for fi, p in enumerate(paths):
        meta = pq.ParquetFile(p).metadata
        out.extend((fi, g, meta.row_group(g).num_rows) for g in range(meta.num_row_groups))
    return out


class Pool:
    '''``nproc`` spawned processes (Polars' threads do not survive a fork), or None for
    one.'''
    def __init__(self, nproc):
        self.nproc, self.pool = nproc, None

    def __enter__(self):
        if self.nproc > 1:
            self.pool = concurrent.futures.ProcessPoolExecutor(
                self.nproc, mp_context=multiprocessing.get_context('spawn'))
        return self.pool

    def __exit__(self, *exc):
        if self.pool:
            self.pool.shutdown()


def locate(paths, pool=None, nproc=1, chunk_rows=CHUNK_ROWS, where=None, **kw):
    '''(series number, change point, the places of the series' runs) of every series in
    the Parquet files ``paths``, of the records ``where`` selects (a Polars expression),
    routed and segmented by ``pool`` (or this process) in ``nproc`` shares. A history of
    one chunk is segmented in this process.'''
    groups = row_groups(paths)
    if len(paths) >= 2 ** FILE_BITS or any(g >= 2 ** GROUP_BITS or r >= 2 ** ROW_BITS
                                           for _, g, r in groups):
        raise ValueError('changes: more than 65,536 files, or a file of more than 16 M row '
                         'groups or rows per group: scan it as one table')
    total = sum(r for _, _, r in groups)
    if total <= chunk_rows:
        parts = [_narrow(paths, fi, g, where) for fi, g, _ in groups]
        return segment_part(pl.concat(parts, how='vertical_relaxed') if parts else
                            pl.DataFrame(schema=CHUNK_SCHEMA), kw)
    chunks = -(-total // chunk_rows)
    run = pool.map if pool else map
    work = shares([(fi, g) for fi, g, _ in groups], nproc,
                  weight=dict(((fi, g), r) for fi, g, r in groups).get)
    with tempfile.TemporaryDirectory(prefix='mdxbench-scan-') as tmp:
        list(run(route, [(paths, share, chunks, tmp, i, where, None)
                         for i, share in enumerate(work)]))
        parts = sorted(pathlib.Path(tmp).iterdir())
        return [f for got in run(segment_part, parts, [kw] * len(parts)) for f in got]


def _gather(task):
    '''The records at the places ``want`` (per (file, row group): the rows, and the rows
    whose ``meta`` is read; ``meta`` null on the others), read one row group at a time:
    (their :data:`EXPLAINED` columns with ``_keys``, a second hash of their series' keys;
    each series' keys once), or None when there are none. The first is written to the
    Arrow IPC file ``dest`` when given and its path returned in its place: a table sent
    back through the pool's pipe was held three times over while it arrived.'''
    import pyarrow as pa
    import pyarrow.parquet as pq

    paths, want, dest = task
    out, opened = [], {}
    try:
        for (fi, group), (rows, with_meta) in want:
            if fi not in opened:
                names = pq.read_schema(paths[fi]).names
                opened[fi] = (pq.ParquetFile(paths[fi]),
                              pq.ParquetFile(paths[fi], read_dictionary=['meta'])
                              if 'meta' in names else None,
                              [n for n in READ if n in names])
            f, f_meta, columns = opened[fi]
            # taken in Arrow, which copies them: a Polars filter would keep views into
            # the whole row group's strings alive
            table = f.read_row_group(group, columns=columns).take(pa.array(rows))
            d = _records(table).with_columns(pl.Series('_at', rows, dtype=pl.UInt32))
            if len(with_meta) and f_meta is not None:
                meta = f_meta.read_row_group(group, columns=['meta']).column('meta').take(
                    pa.array(with_meta))
                d = d.join(pl.DataFrame({'_at': pl.Series(with_meta, dtype=pl.UInt32),
                                         'meta': pl.from_arrow(meta).cast(pl.Utf8)}),
                           on='_at', how='left', maintain_order='left')
            else:
                d = d.with_columns(pl.lit(None, dtype=pl.Utf8).alias('meta'))
            out.append(d.drop('_at'))
    finally:
        for f, f_meta, _ in opened.values():
            f.close()
            if f_meta is not None:
                f_meta.close()
    if not out:
        return None
    table = pl.concat(out, how='vertical_relaxed', rechunk=True)
    # each series' keys once, and of its runs what explaining reads with a hash of their
    # keys (two series sharing a number differ in it): a string column costs 16 bytes a
    # run in Polars even where its text repeats
    keys = table.group_by('_sid').agg(pl.col(SERIES).first())
    table = table.select(*EXPLAINED, pl.struct(SERIES).hash(seed=13).alias('_keys'))
    if dest is not None:
        table.write_ipc(dest)
        table = dest
    return table, keys


def scan(source, nproc=None, chunk_rows=CHUNK_ROWS, context=3, where=None, **kw):
    '''As :func:`mdxbench.post.analysis.changes.scan` for the Parquet files of ``source``:
    (the runs of the series that changed, each series' in order, with what
    :func:`~mdxbench.post.analysis.explain.explain` reads and ``meta`` on the ``context``
    runs either side of each change point; the change points). ``where``
    (a Polars expression) selects the records scanned: ``pl.col('system') == 'mdx2'``.'''
    paths = files(source)
    nproc = nproc or workers()
    with Pool(nproc) as pool:
        found = locate(paths, pool, nproc, chunk_rows, where, **kw)
        if not found:
            return None, []
        return read_changed(paths, found, pool, nproc, context)


def by_row_group(locs):
    '''(:func:`group_key`, the rows) of the sorted places ``locs``, a row group at a time.'''
    groups = group_key(locs)
    cuts = np.flatnonzero(np.diff(groups)) + 1
    for part in np.split(locs, cuts) if len(locs) else ():
        yield group_key(part[0]), row_of(part)


def read_changed(paths, found, pool, nproc, context):
    '''(the runs of the series of ``found``, each series' in order, with time, value,
    job, nodes and ``meta`` on the ``context`` runs either side of each change point; the
    change points with their series keys and rows).'''
    # the places of the series' runs, and of the runs either side of each change point
    # whose meta is read, in NumPy (a Python set of 36.5 M / 100 places cost 100 MiB)
    series = {}
    near = []
    for sid, cp, locs in found:
        series.setdefault(sid, locs)
        i = cp['index']
        near.append(locs[max(0, i - context):i + context])
    every = np.unique(np.concatenate(list(series.values())).astype(np.uint64))
    with_meta = np.unique(np.concatenate(near).astype(np.uint64))
    want = []
    for key, rows in by_row_group(every):
        lo, hi = np.searchsorted(with_meta, [key << np.uint64(ROW_BITS),
                                             (key + np.uint64(1)) << np.uint64(ROW_BITS)])
        want.append((file_and_group(key), (rows, row_of(with_meta[lo:hi]))))
    with tempfile.TemporaryDirectory(prefix='mdxbench-explain-') as tmp:
        tasks = [(paths, share, f'{tmp}/{i}.arrow' if pool else None)
                 for i, share in enumerate(shares(want, nproc, lambda w: len(w[1][0])))]
        got = [g for g in (pool.map(_gather, tasks) if pool else map(_gather, tasks))
               if g is not None]
        parts = [pl.read_ipc(t, memory_map=False) if isinstance(t, str) else t for t, _ in got]
    # its runs laid out by series number, then time and value (as segment_part counts
    # them): sorting the keys' strings along with every run cost 200 MiB at 994 series
    d = pl.concat(parts, how='vertical_relaxed')
    del parts
    if (d.group_by('_sid').agg(pl.col('_keys').n_unique())['_keys'] > 1).any():
        raise RuntimeError(f'changes: two series share a series hash in {", ".join(paths)}: '
                           'scan them as one table (changes.find of a DataFrame)')
    d = d.drop('_keys').sort(['_sid', 'time', 'value'], nulls_last=True)
    g = pl.concat([k for _, k in got]).unique('_sid', keep='first')
    g = g.join(d.with_row_index('_row').group_by('_sid', maintain_order=True).agg(
        pl.col('_row').first().alias('start'), pl.len().alias('n')), on='_sid')
    series = {r['_sid']: r for r in g.iter_rows(named=True)}
    cps = []
    for sid, cp, locs in found:
        s0 = series[sid]['start']
        cps.append(dict({k: series[sid][k] for k in SERIES}, **cp, row=s0 + cp['index'],
                        series_n=len(locs), series_start=s0, _sid=sid))
    return d, cps
