'''The history as the site and the sensitivity read it, a chunk of series at a time
(issue 45): from the cycle's kept scan copy (:class:`Kept`;
:class:`mdxbench.post.analysis.scancopy.ScanCopy` keeps each run's time, value, result,
job, nodes and reference routed by series, each series' keys once), or from one records
table (:class:`Table`: a test's, a report's of a small export). Both answer the same
questions: how many series and runs, a few series' runs, the records of some checks (by
their places in the history's Parquet files), each series' values for its sensitivity.
Nothing here holds the kept history as one table: the memory is a chunk's.

This module is the kept history's front door: the formats of its files (a chunk's runs,
its series' keys, its summary and latest month: :mod:`mdxbench.post.analysis.chunked`;
the manifest: :mod:`mdxbench.post.analysis.scancopy`) are read through :class:`Kept` and
:class:`Chunk`, never opened by their readers (the site, the sensitivity, the commands).
'''
import datetime as dt
import pathlib

import polars as pl

from mdxbench.post.analysis import changes, chunked, chunkfiles, locators, processes
from mdxbench.post.analysis.scancopy import ScanCopy


#: the columns of a run that the site draws beside its time and value (the kept copy keeps
#: them for it)
SITE = chunkfiles.SITE
#: a run's identity inside its series (time and value), the trend pages' digests' unit
RUN_HASH = chunkfiles.RUN_HASH
#: the month a time falls in (the kept copy's latest month begins there)
month_of = chunkfiles.month_of
#: the number of a series as the kept copy routes it (a hash of its keys)
series_hash = chunked.series_hash
#: how many series Parquet files hold (read from their key columns only)
series_count = chunked.series_count
#: the processes that read the kept copy a chunk each: how many, and their pool
workers = processes.workers
Pool = processes.Pool


def chunk_of(keys, chunks):
    '''The chunk of each series key tuple of ``keys`` (as the scan routes it), as a dict.'''
    keys = list(keys)
    if not keys:
        return {}
    sids = pl.DataFrame([dict(zip(changes.SERIES, k)) for k in keys],
                        schema={k: pl.Utf8 for k in changes.SERIES}) \
        .select(chunked.series_hash())[:, 0].to_list()
    return {k: s % chunks for k, s in zip(keys, sids)}


def counts(keep, keys_of=chunkfiles.read_keys):
    '''Each series of the kept copy: a table of its keys, ``_sid`` and ``n`` (its runs at
    the last scan), read from the chunks' state and keys, not their runs.'''
    out = []
    for part in ScanCopy(keep).parts():
        state = part / 'state.parquet'
        if not state.exists():
            continue
        n = pl.read_parquet(state, columns=['_sid', 'n'])
        out.append(n.join(keys_of(part), on='_sid', how='left'))
    return pl.concat(out) if out else pl.DataFrame(
        schema={'_sid': pl.UInt64, 'n': pl.Int64, **{k: pl.Utf8 for k in changes.SERIES}})


def _select(keys, on):
    return pl.DataFrame([dict(zip(on, k)) for k in keys], schema={k: pl.Utf8 for k in on})


def series_records(keep, keys, columns=('time', 'value', *chunkfiles.SITE), on=None,
                   keys_of=chunkfiles.read_keys):
    '''The runs of the series ``keys`` (tuples of their keys ``on``, all of
    ``changes.SERIES`` by default) as the kept copy holds them, with their keys: read from
    their chunks only (every chunk where ``on`` is not every key), one at a time.'''
    copy = ScanCopy(keep)
    on = list(on or changes.SERIES)
    if on == changes.SERIES:
        want = {}
        for k, c in chunk_of(set(keys), copy.manifest.get('chunks') or 1).items():
            want.setdefault(c, []).append(k)
    else:
        want = {int(p.name): list(keys) for p in copy.parts()}
    out = []
    for c, ks in sorted(want.items()):
        part = copy.root / str(c)
        if not part.is_dir() or not ks:
            continue
        kt = keys_of(part).join(_select(ks, on), on=on, how='semi', nulls_equal=True)
        if not kt.height:
            continue
        d = chunkfiles.read_chunk(sorted(part.glob('*' + chunkfiles.SUFFIX)), ['_sid', *columns])
        out.append(d.filter(pl.col('_sid').is_in(kt['_sid'].to_list()))
                   .join(kt, on='_sid', how='left'))
    if not out:
        return None
    return pl.concat(out, how='vertical_relaxed').drop('_sid')


#: what the landing page shows of each series' latest run
LATEST = ('time', 'value', 'ref', 'lower', 'upper', 'result')


def _last_runs(d, by):
    '''The last run (by time) of each group ``by`` of ``d``.'''
    return d.sort('time').group_by(by, maintain_order=True).last()


def _check_class(col='check'):
    return pl.col(col).str.split(' ').list.first()


class Table:
    '''The history as one records table (a test's, a history read from perflogs into
    memory): what :class:`Kept` reads a chunk at a time, from the table.'''

    def __init__(self, df):
        self.df = df.filter(pl.col('value').is_not_null())

    def nseries(self):
        return self.df.select(changes.SERIES).unique().height if self.df.height else 0

    def span(self):
        '''(records with a value, the first run's time, the last's).'''
        t = self.df['time']
        return self.df.height, (t.min() if len(t) else None), (t.max() if len(t) else None)

    def records_of(self, checks):
        '''The records of the check classes ``checks``, every column.'''
        return self.df.filter(_check_class().is_in(list(checks)))

    def series(self, keys, on=None):
        '''The runs of the series ``keys`` (tuples of their keys ``on``, all of
        ``changes.SERIES`` by default), with their keys.'''
        on = list(on or changes.SERIES)
        return self.df.join(_select(keys, on), on=on, how='semi', nulls_equal=True)

    def counts(self):
        '''Each series' keys and runs (``n``).'''
        return self.df.group_by(changes.SERIES).agg(pl.len().alias('n'))

    def latest(self):
        '''Each series' keys and its latest run (:data:`LATEST`), by its keys.'''
        return _last_runs(self.df.select([*changes.SERIES, *LATEST]), changes.SERIES) \
            .sort(changes.SERIES)

    def each_series(self, keys):
        '''(key tuple, its values in run order) of the series ``keys``.'''
        want = set(keys)
        d, g = changes.series_index(self.series(list(want)) if want else self.df.clear())
        values = d['value'].to_numpy()
        for key, s, n in zip(g.select(changes.SERIES).iter_rows(), g['start'], g['n']):
            yield key, values[s:s + n]



class Chunk:
    '''One kept chunk of series (a directory of the kept copy), as a worker that holds one
    chunk reads it: its series' keys, their runs, the summary and the latest month the
    scan kept for the site. Made from its path (:meth:`Kept.chunks`), so that a worker
    process is given the path alone.'''

    def __init__(self, path):
        self.path = pathlib.Path(path)
        #: its number among the kept copy's chunks
        self.number = int(self.path.name)

    def keys(self):
        '''Its series' keys, by ``_sid``.'''
        return chunkfiles.read_keys(self.path)

    def runs(self, columns, files=None):
        '''Its runs' ``columns`` (``_sid`` and any of ``time``, ``value``, :data:`SITE`,
        ``_loc``), from all its files or from those of the history's Parquet files whose
        ids are ``files``.'''
        paths = sorted(self.path.glob('*' + chunkfiles.SUFFIX))
        if files is not None:
            paths = [f for f in paths if f.name.split('-')[0] in files]
        return chunkfiles.read_chunk(paths, columns)

    def summary(self):
        '''Each series' summary at the last scan (a table), or None where there is none.'''
        path = self.path / 'summary.parquet'
        return pl.read_parquet(path) if path.exists() else None

    def latest_month(self, cut):
        '''The runs from ``cut`` on that the scan kept for the site, if kept for that cut;
        else None.'''
        return chunkfiles.read_latest(self.path, cut)


class Kept:
    '''The history as the cycle's scan keeps it (``keep``: its directory), read a chunk
    of series at a time: no reader here holds the history as one table. Each chunk's
    keys and the series' counts are read once: open one after each scan.'''

    def __init__(self, keep):
        self.keep = pathlib.Path(keep)
        self.copy = ScanCopy(keep)
        self._keys, self._counts = {}, None

    def chunks(self):
        '''The kept chunks (:class:`Chunk`), in order.'''
        return [Chunk(p) for p in self.copy.parts()]

    def nchunks(self):
        '''How many chunks the series are routed to.'''
        return self.copy.manifest.get('chunks') or 1

    def last_scan(self):
        '''What the last scan said of itself (runs read, series routed and detected again,
        the earliest and latest run), as the scan copy's manifest keeps it.'''
        return self.copy.manifest['last']

    def last_time(self):
        '''The time of the newest run (a datetime), or None.'''
        return self.copy.latest()

    def files_since(self, cut):
        '''The ids of the history's Parquet files with runs from ``cut`` on (by their
        statistics; a file whose latest run is unknown is listed; every file where
        ``cut`` is None).'''
        return {f['id'] for f in self.copy.manifest.get('files', {}).values()
                if cut is None or not f.get('latest')
                or dt.datetime.fromisoformat(f['latest']) >= cut}

    def keys(self, part):
        '''The series keys of the kept chunk ``part`` (read once).'''
        if part.name not in self._keys:
            self._keys[part.name] = chunkfiles.read_keys(part)
        return self._keys[part.name]

    def nseries(self):
        return self.counts().height

    def span(self):
        last = self.copy.manifest.get('last', {})
        first = last.get('earliest')
        return (int(self.counts()['n'].sum()),
                dt.datetime.fromisoformat(first) if first else None, self.copy.latest())

    def counts(self):
        if self._counts is None:
            self._counts = counts(self.keep, self.keys).drop('_sid')
        return self._counts

    def series(self, keys, on=None):
        return series_records(self.keep, keys, on=on, keys_of=self.keys)

    def latest(self):
        '''Each series' keys and its latest run (:data:`LATEST`), by its keys: read a kept
        chunk at a time, its runs' columns only.'''
        out = []
        for part in self.copy.parts():
            d = chunkfiles.read_chunk(sorted(part.glob('*' + chunkfiles.SUFFIX)), ['_sid', *LATEST])
            if d.height:
                out.append(_last_runs(d, '_sid').join(self.keys(part), on='_sid', how='inner')
                           .select([*changes.SERIES, *LATEST]))
        if not out:
            return pl.DataFrame(schema={**{k: pl.Utf8 for k in changes.SERIES},
                                        'time': pl.Datetime('us', 'UTC'), 'value': pl.Float64,
                                        **{k: chunkfiles.SITE[k] for k in LATEST[2:]}})
        return pl.concat(out, how='vertical_relaxed').sort(changes.SERIES)

    def each_series(self, keys):
        chunks = self.copy.manifest.get('chunks') or 1
        by = {}
        for k, c in chunk_of(set(keys), chunks).items():
            by.setdefault(c, []).append(k)
        for c, ks in sorted(by.items()):
            d = series_records(self.keep, ks, ('time', 'value'), keys_of=self.keys)
            if d is None:
                continue
            d, g = changes.series_index(d)
            values = d['value'].to_numpy()
            for key, s, n in zip(g.select(changes.SERIES).iter_rows(), g['start'], g['n']):
                yield key, values[s:s + n]

    def records_of(self, checks):
        '''The records of the check classes ``checks``, every column, read by their
        places from the history's Parquet files (the few series a report draws).'''
        import numpy as np
        import pyarrow.parquet as pq

        from mdxbench.post.store import records

        numbers = self.copy.manifest.get('numbers') or []
        locs = []
        for part in self.copy.parts():
            kt = self.keys(part).filter(_check_class().is_in(list(checks)))
            if not kt.height:
                continue
            d = chunkfiles.read_chunk(sorted(part.glob('*' + chunkfiles.SUFFIX)), ['_sid', '_loc'])
            locs.append(d.filter(pl.col('_sid').is_in(kt['_sid'].to_list()))['_loc'].to_numpy())
        locs = np.unique(np.concatenate(locs)) if locs else np.zeros(0, dtype=np.uint64)
        out = []
        for key, rows in locators.by_row_group(locs):
            fi, g = locators.file_and_group(key)
            path = numbers[fi]
            with pq.ParquetFile(path) as f:
                names = [c for c in records.COLUMNS if c in f.schema_arrow.names]
                out.append(pl.from_arrow(f.read_row_group(g, columns=names).take(rows)))
        schema = records.schema()
        if not out:
            return records.frame([])
        df = pl.concat(out, how='diagonal_relaxed')
        df = df.with_columns(pl.lit(None, dtype=schema[c]).alias(c)
                             for c in records.COLUMNS if c not in df.columns)
        return records.nightly(records.with_current_names(df)) \
            .filter(pl.col('value').is_not_null())

