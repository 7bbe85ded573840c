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
import pathlib
import tempfile

import numpy as np
import polars as pl

from mdxbench.post.analysis.changes import SERIES, detect_each
from mdxbench.post.analysis.chunkfiles import CHUNK_SCHEMA, KEYS, SITE, SUFFIX, read_chunk
from mdxbench.post.analysis.locators import (FILE_BITS, GROUP_BITS, ROW_BITS, by_row_group,
                                             file_and_group, locator, row_of)
from mdxbench.post.analysis.processes import Pool, shares, workers
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


def row_groups(paths):
    '''(file number, row group, records) of each row group of the files ``paths``.'''
    import pyarrow.parquet as pq

    out = []
    for fi, p in enumerate(paths):
        meta = pq.ParquetFile(p).metadata
        out.extend((fi, g, meta.row_group(g).num_rows) for g in range(meta.num_row_groups))
    return out


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
