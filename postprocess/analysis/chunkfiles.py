'''A kept chunk's files (the scan routes and keeps them: :mod:`mdxbench.post.analysis.chunked`,
:mod:`mdxbench.post.analysis.scancopy`; read through :mod:`mdxbench.post.analysis.kept`):
a chunk's runs (``<chunk>/<tag>.arrow``: series number, time, value, place, and the
columns the site draws, :data:`SITE`), its series' keys (``.keys``, gathered into
``keys.cache``), its series' summary for the site (``summary.parquet``: :data:`SUMMARY`)
and its latest month's runs (:data:`LATEST`). The one owner of these formats.'''
import json
import pathlib

import polars as pl

from mdxbench.post.analysis.changes import SERIES


#: what a kept chunk carries besides them for the site (:mod:`mdxbench.post.site.kept`):
#: each run's result, job, nodes and reference, so that the trend pages are written a
#: chunk at a time from the scan's own copy
SITE = {'result': pl.Utf8, 'jobid': pl.Utf8, 'nodes': pl.Utf8, 'ref': pl.Float64,
        'lower': pl.Float64, 'upper': pl.Float64}


#: a run's part of what its series' earlier runs are known by (the trend pages'): a 64-bit
#: hash of its time and value, summed (wrapping) over the runs, so that the sum is the same
#: in any order of the records and moves when any run's time or value does
RUN_HASH = pl.struct(pl.col('time'), pl.col('value')).hash(seed=11)


def month_of(t):
    '''The first instant of the month of ``t`` (UTC).'''
    import datetime as dt

    return dt.datetime(t.year, t.month, 1, tzinfo=dt.timezone.utc)


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
