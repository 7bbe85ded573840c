'''The records of a history kept as Parquet files, read a row group at a time: the latest
runs of each group in memory bounded by the groups and the runs kept of each, and the
whole history copied into one file, never held as one table (issue 45).

``mdxbench regress`` compares each series' latest runs with the runs before them (or
before a cut), ``mdxbench acceptance`` judges each node's latest run of each check: both
need a few runs per series, yet read the whole history as one table (a decade of 100,000
series is 365 M records; its table would not fit). Here a history's files
(:func:`mdxbench.post.store.source.files`: a Parquet export, Elasticsearch's local copy,
the perflogs' Parquet copy) are read a row group at a time, twice:

1. of each record only its group's keys, its time and its place (file, row group, row),
   the records the selection names (a Polars expression) kept; of each group the ``k``
   latest places, merged as the row groups come (never more than a few times the groups
   times ``k`` held);
2. the records at those places, every column, read back a row group at a time.

Records are taken as :func:`mdxbench.post.store.records.load` gives them: current names,
without a split's runs.

``mdxbench export`` copies the records into one Parquet file the same way
(:func:`copy`); ``references propose`` and ``accept``'s history read only the records they
select (:func:`select`: one system since a time, one partition's acceptance runs).
'''
import polars as pl

from mdxbench.post.store import records

#: the place of a record: file, row group, row (as the scan numbers them)
PLACE = ['_file', '_group', '_row']


def _normal(table):
    '''An Arrow table of records as :func:`records.load` gives them.'''
    return records.normal(pl.from_arrow(table))


def each(paths, columns=records.COLUMNS):
    '''(file number, row group, its records as :func:`records.load` gives them, of the
    ``columns`` the file has) of every row group of the Parquet files ``paths``.'''
    import pyarrow.parquet as pq

    for fi, p in enumerate(paths):
        with pq.ParquetFile(p) as f:
            names = [c for c in columns if c in f.schema_arrow.names]
            for g in range(f.metadata.num_row_groups):
                yield fi, g, _normal(f.read_row_group(g, columns=names))


def _merge(parts, key, k):
    d = pl.concat(parts, how='vertical_relaxed')
    return d.sort(['time', *PLACE], descending=True, nulls_last=True) \
        .group_by(key, maintain_order=True).head(k)


def places(paths, key, k, where=None, prepare=None):
    '''The places (:data:`PLACE`) of the ``k`` latest records of each group of the ``key``
    columns, of the records ``where`` selects (after ``prepare``, a function of a records
    table, made them: a filter, a column named anew), in the Parquet files ``paths``.'''
    acc, parts, held = None, [], 0
    for fi, g, d in each(paths, [c for c in records.COLUMNS if c != 'meta']):
        d = d.with_row_index('_row').with_columns(pl.lit(fi, pl.UInt32).alias('_file'),
                                                  pl.lit(g, pl.UInt32).alias('_group'))
        if prepare is not None:
            d = prepare(d)
        if where is not None:
            d = d.filter(where)
        if not d.height:
            continue
        parts.append(d.select(*key, 'time', *PLACE))
        held += d.height
        if held > 4 * (acc.height if acc is not None else 0) + 1_000_000:
            acc = _merge(([acc] if acc is not None else []) + parts, key, k)
            parts, held = [], acc.height
    if parts:
        acc = _merge(([acc] if acc is not None else []) + parts, key, k)
    if acc is None:
        return pl.DataFrame(schema={'_file': pl.UInt32, '_group': pl.UInt32, '_row': pl.UInt32})
    return acc.select(PLACE)


def at(paths, where):
    '''The records at the places ``where`` (a table of :data:`PLACE`), every column, read a
    row group at a time.'''
    import pyarrow.parquet as pq

    out = []
    for (fi, g), rows in where.sort(PLACE).group_by(['_file', '_group'], maintain_order=True):
        with pq.ParquetFile(paths[fi]) as f:
            names = [c for c in records.COLUMNS if c in f.schema_arrow.names]
            table = f.read_row_group(g, columns=names)
        # the rows as the first pass numbered them: of the records left once the split's
        # runs were dropped
        d = _normal(table).with_row_index('_row')
        out.append(d.join(rows.select('_row'), on='_row', how='semi').drop('_row'))
    if not out:
        return records.frame([])
    return pl.concat(out, how='diagonal_relaxed').select(records.COLUMNS)


def latest(paths, key, k, where=None, prepare=None):
    '''The ``k`` latest records of each group of the ``key`` columns (of those ``where``
    selects, after ``prepare``: :func:`places`) in the Parquet files ``paths``, every
    column: a records table.'''
    return at(paths, places(paths, key, k, where, prepare))


def select(paths, where=None, prepare=None):
    '''The records ``where`` selects (after ``prepare``: :func:`places`) in the Parquet
    files ``paths``, every column: a records table as large as the selection, not the
    history (one system's records since a time, one partition's acceptance runs).'''
    out = []
    for _, _, d in each(paths):
        if prepare is not None:
            d = prepare(d)
        if where is not None:
            d = d.filter(where)
        if d.height:
            out.append(d)
    if not out:
        return records.frame([])
    return pl.concat(out, how='diagonal_relaxed').select(records.COLUMNS)


def copy(paths, out):
    '''Write the records of the Parquet files ``paths`` into the Parquet file ``out``, a
    row group at a time (atomically: a reader never sees half a file); their number.'''
    import pathlib

    import pyarrow.parquet as pq

    out = pathlib.Path(out)
    tmp = out.with_name(out.name + '.tmp')
    schema = dict(records.schema(), time=pl.Datetime('us', 'UTC'))
    writer, n = None, 0
    try:
        for _, _, d in each(paths):
            table = d.select(pl.col(c).cast(t) for c, t in schema.items()).to_arrow()
            writer = writer or pq.ParquetWriter(str(tmp), table.schema)
            writer.write_table(table)
            n += d.height
        if writer is None:
            records.frame([]).write_parquet(tmp)
    finally:
        if writer is not None:
            writer.close()
    tmp.replace(out)
    return n
