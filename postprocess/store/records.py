'''Stored results as one columnar table (Polars), from perflogs, from Elasticsearch, or
from a Parquet export: the input of regression tracking, acceptance and reports.'''
import json
import os
import pathlib
import re

from mdxbench import perflog
#: where ReFrame writes this site's perflogs: $MDXBENCH_PERFLOG_DIR or <state>/perflogs
from mdxbench.provenance import perflog_dir as default_perflog_dir

COLUMNS = ('time', 'system', 'partition', 'environ', 'check', 'perf_var', 'value', 'unit',
           'better', 'ref', 'lower', 'upper', 'result', 'jobid', 'nodes', 'tags', 'params',
           'meta')


def worse_sign():
    '''+1 where a larger value is worse (the check declared 'lower' better), -1 where a
    smaller one is ('higher'), null where the record declares no direction: such a record
    is never judged better or worse. No direction is ever inferred from a unit.'''
    import polars as pl

    return (pl.when(pl.col('better') == 'lower').then(pl.lit(1.0))
              .when(pl.col('better') == 'higher').then(pl.lit(-1.0))
              .otherwise(pl.lit(None, dtype=pl.Float64)))


def has_tag(tag):
    import polars as pl

    return pl.col('tags').fill_null('').str.split(',').list.contains(tag)


def _row(r):
    return {'time': r['completion_time'], 'system': r['system'], 'partition': r['partition'],
            'environ': r['environ'], 'check': series_name(r['display_name']),
            'perf_var': r['perf_var'],
            'value': r['perf_value'], 'unit': r['perf_unit'], 'better': r['perf_better'],
            'ref': r['perf_ref'], 'lower': r['perf_lower_thres'],
            'upper': r['perf_upper_thres'], 'result': r['perf_result'], 'jobid': r['jobid'],
            'nodes': node_names(r['nodelist'], r['meta']), 'tags': ','.join(r['meta'].get('tags') or []),
            'params': canonical_params(r['meta']), 'meta': json.dumps(r['meta'], sort_keys=True)}


def series_name(display_name):
    '''The check with its parameters, without ReFrame's own ``%.repeat_no=N`` (``reframe
    --repeat``): the repetitions of a case are runs of one series, not series of their own.'''
    return re.sub(r' %\.repeat_no=\d+', '', display_name)


def node_names(nodelist, meta):
    '''The job's nodes as the scheduler reported them, else the host its script ran on
    (``meta.job_host``: ReFrame's squeue backend may miss the nodes of a short job).'''
    nodes = ','.join(nodelist or [])
    host = meta.get('job_host')
    return nodes or (host if host and host != 'unknown' else '')


def canonical_params(meta):
    '''The check's parameters as the perflog records them (``meta.params``), as canonical
    JSON with string values; ``{}`` for lines written before that field existed.'''
    params = meta.get('params') or {}
    if isinstance(params, str):                 # Elasticsearch's flattened field: text
        params = json.loads(params)
    # ReFrame's own parameters (``.repeat_no``) are not the check's
    return json.dumps({k: str(v) for k, v in params.items() if not k.startswith('.')},
                      sort_keys=True)


def schema():
    import polars as pl

    return {'time': pl.Utf8, 'system': pl.Utf8, 'partition': pl.Utf8, 'environ': pl.Utf8,
            'check': pl.Utf8, 'perf_var': pl.Utf8, 'value': pl.Float64, 'unit': pl.Utf8,
            'better': pl.Utf8, 'ref': pl.Float64, 'lower': pl.Float64, 'upper': pl.Float64,
            'result': pl.Utf8, 'jobid': pl.Utf8,
            'nodes': pl.Utf8, 'tags': pl.Utf8, 'params': pl.Utf8, 'meta': pl.Utf8}


def frame(rows):
    import polars as pl

    sch = schema()
    df = pl.DataFrame(rows, schema=sch, orient='row') if rows else pl.DataFrame(schema=sch)
    return df.with_columns(pl.col('time').str.to_datetime(time_zone='UTC', strict=False))


def measured(df):
    '''Only the records with a value (failed runs have none).'''
    import polars as pl

    return df.filter(pl.col('value').is_not_null())


def iter_perflog_records(paths, errors=None, unfinished=None):
    '''Every record of the perflogs under paths; unreadable lines go to ``errors`` as
    "file:line: reason" (never silently dropped), a last line without its newline to
    ``unfinished`` as "file:line".'''
    for f in perflog_files(paths):
        with open(f, errors='replace') as fp:
            for n, line in enumerate(fp, 1):
                if not line.endswith('\n'):
                    # a last line without newline is still being written: not yet a
                    # record (mdxbench ingest reports it as unfinished and sends it later)
                    if unfinished is not None:
                        unfinished.append(f'{f}:{n}')
                    continue
                if perflog.is_header(line):
                    continue

                try:
                    yield from perflog.parse_line(line)
                except perflog.DryRunLine:
                    continue            # no measurement (reframe --dry-run)
                except perflog.PerflogError as err:
                    if errors is not None:
                        errors.append(f'{f}:{n}: {err}')


def perflog_files(paths):
    '''Perflog files under the given files or directories (``*.log`` and ReFrame's
    rotated ``*.log.hN``), in a stable order.'''
    out = []
    for p in map(pathlib.Path, paths):
        if p.is_dir():
            out += [f for f in p.rglob('*') if f.is_file() and
                    (f.suffix == '.log' or '.log.h' in f.name)]
        elif p.exists():
            out.append(p)
        else:
            raise FileNotFoundError(f'{p}: no such file or directory')

    return sorted(set(f.resolve() for f in out))


def read_perflogs(paths, unfinished=None):
    '''(records, errors) of every perflog line under paths (default: the perflog
    directory); errors as "file:line: why"; lines still being written are added to
    ``unfinished`` (:func:`iter_perflog_records`).'''
    errors = []
    return list(iter_perflog_records(paths or [default_perflog_dir()], errors,
                                     unfinished)), errors


def completed_since(recs, since=None):
    '''The records (dicts) completed at or after the ISO time ``since`` (all without).'''
    return [r for r in recs if not since or r['completion_time'] >= since]


def from_perflogs(paths, errors=None):
    return nightly(with_current_names(
        frame([_row(r) for r in iter_perflog_records(paths, errors)])))


def es_fingerprint(client, prefix, system):
    '''What changes when a record of ``system`` is stored: its count and latest ingest time
    (one aggregation, no record read; by ingest time, so a late record counts).'''
    client.indices.refresh(index=f'{prefix}-*', allow_no_indices=True)
    r = client.search(index=f'{prefix}-*', size=0, query={'term': {'system': system}},
                      aggs={'ingested': {'max': {'field': 'ingested_at'}}},
                      track_total_hits=True, allow_no_indices=True)
    return ['es', r['hits']['total']['value'],
            (r.get('aggregations') or {}).get('ingested', {}).get('value')]


def perflog_fingerprint(paths):
    '''What changes when a perflog is written: each file's name, size and modification time.'''
    import hashlib

    h = hashlib.sha256()
    for f in sorted(str(f) for f in perflog_files(paths)):
        st = os.stat(f)
        h.update(f'{f}\0{st.st_size}\0{st.st_mtime_ns}\n'.encode())
    return ['perflogs', h.hexdigest()]


def from_parquet(path):
    '''A Parquet export; columns added since it was written are null (a record without
    ``better`` is never judged better or worse).'''
    import polars as pl

    return normal(pl.read_parquet(path))


def normal(df):
    '''Records read from Parquet as :func:`load` gives them: columns added since they were
    written null, a time written as text parsed, current names, no split runs.'''
    import polars as pl

    missing = {c: t for c, t in schema().items() if c not in df.columns}
    if missing:
        df = df.with_columns(pl.lit(None, dtype=t).alias(c) for c, t in missing.items())
    if df.schema['time'] == pl.Utf8:
        df = df.with_columns(pl.col('time').str.to_datetime(time_zone='UTC', strict=False))
    return nightly(with_current_names(df))


def source_of(paths=None, from_es=False, parquet=None):
    '''The ``source`` of :func:`load` from a command's options: Elasticsearch, a Parquet
    export, or perflog paths (default: the perflog directory).'''
    if from_es:
        return 'es'

    return parquet or [str(p) for p in (paths or [default_perflog_dir()])]


#: parameter values a check renamed, old -> new, so that a series goes on across the rename:
#: (parameter, old value): new value. `placement=same-node` was client and server in one
#: node, what `loopback` names now (2026-11-24); the old `two-nodes` stays what it was, a
#: pair whose hosts were not known, and is not renamed.
RENAMED_VALUES = {('placement', 'same-node'): 'loopback'}
#: performance variables renamed, old -> new: LINPACK's percentage of a peak taken at the
#: base clock, which turbo exceeds, is named for what it is (2026-11-25)
RENAMED_PERF_VARS = {'percent_peak': 'percent_nominal_peak'}


def nightly(df):
    '''The records of the series: without the runs of ``mdxbench incident split`` (tag
    ``split``: an old build measured beside the new one is no run of the series). A table
    read without its ``tags`` column is returned as it is.'''
    if 'tags' not in df.collect_schema().names():
        return df
    return df.filter(~has_tag(perflog.SPLIT_TAG))


def with_current_names(df):
    '''Records of renamed parameter values (``check`` and ``params``) and performance
    variables under their current names, as one series with the records written since.'''
    import polars as pl

    names = df.collect_schema().names()          # a table or a lazy one
    if 'perf_var' in names:
        df = df.with_columns(pl.col('perf_var').replace(RENAMED_PERF_VARS))
    if not {'check', 'params'} <= set(names):
        return df
    for (param, old), new in RENAMED_VALUES.items():
        if isinstance(df, pl.DataFrame) and not df['check'].str.contains(
                f' %{param}={old}', literal=True).any():
            continue        # nothing to rename: the string columns are not rewritten
        df = df.with_columns(
            pl.col('check').str.replace_all(f' %{param}={old}', f' %{param}={new}', literal=True),
            pl.col('params').str.replace_all(json.dumps({param: old})[1:-1],
                                             json.dumps({param: new})[1:-1], literal=True))
    return df


def load(source, errors=None):
    '''source: a .parquet file, or perflog files/directories (list).'''
    if isinstance(source, (str, pathlib.Path)) and str(source).endswith('.parquet'):
        return from_parquet(source)

    return from_perflogs(source if isinstance(source, list) else [source], errors)


def to_parquet(df, path):
    '''Write the table to a Parquet file (atomically: a reader never sees half a file).'''
    path = pathlib.Path(path)
    tmp = path.with_name(path.name + '.tmp')
    df.write_parquet(tmp)
    tmp.replace(path)
