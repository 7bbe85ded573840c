'''Stored results as one columnar table (Polars), from perflogs, from Elasticsearch, or
from a Parquet export: the input of regression tracking, acceptance and reports.'''
import json
import pathlib

from mdxbench import perflog
from mdxpost.ingest import perflog_files

COLUMNS = ('time', 'system', 'partition', 'environ', 'check', 'perf_var', 'value', 'unit',
           'ref', 'result', 'jobid', 'nodes', 'meta')

# units where a smaller value is better; all others: larger is better
LOWER_IS_BETTER = {'us', 'ms', 's', 'ns', 'seconds'}


def _row(r):
    return {'time': r['completion_time'], 'system': r['system'], 'partition': r['partition'],
            'environ': r['environ'], 'check': r['display_name'], 'perf_var': r['perf_var'],
            'value': r['perf_value'], 'unit': r['perf_unit'], 'ref': r['perf_ref'],
            'result': r['perf_result'], 'jobid': r['jobid'], 'nodes': ','.join(r['nodelist']),
            'meta': json.dumps(r['meta'], sort_keys=True)}


def frame(rows):
    import polars as pl

    schema = {'time': pl.Utf8, 'system': pl.Utf8, 'partition': pl.Utf8, 'environ': pl.Utf8,
              'check': pl.Utf8, 'perf_var': pl.Utf8, 'value': pl.Float64, 'unit': pl.Utf8,
              'ref': pl.Float64, 'result': pl.Utf8, 'jobid': pl.Utf8, 'nodes': pl.Utf8,
              'meta': pl.Utf8}
    df = pl.DataFrame(rows, schema=schema, orient='row') if rows else pl.DataFrame(schema=schema)
    return df.with_columns(pl.col('time').str.to_datetime(time_zone='UTC', strict=False))


def measured(df):
    '''Only the records with a value (failed runs have none).'''
    import polars as pl

    return df.filter(pl.col('value').is_not_null())


def iter_perflog_records(paths, errors=None):
    '''Every record of the perflogs under paths; unreadable lines go to ``errors`` as
    "file:line: reason" (never silently dropped).'''
    for f in perflog_files(paths):
        with open(f, errors='replace') as fp:
            for n, line in enumerate(fp, 1):
                if perflog.is_header(line) or not line.endswith('\n'):
                    # a last line without newline is still being written: not yet a
                    # record (mdxbench ingest reports it as unfinished and sends it later)
                    continue

                try:
                    yield from perflog.parse_line(line)
                except perflog.PerflogError as err:
                    if errors is not None:
                        errors.append(f'{f}:{n}: {err}')


def from_perflogs(paths, errors=None):
    return frame([_row(r) for r in iter_perflog_records(paths, errors)])


def from_elasticsearch(client, prefix, query=None):
    from elasticsearch import helpers

    rows = []
    for hit in helpers.scan(client, index=f'{prefix}-*', query={'query': query or {'match_all': {}}},
                            size=5000, preserve_order=False):
        d = hit['_source']
        rows.append({'time': d['@timestamp'], 'system': d['system'], 'partition': d['partition'],
                     'environ': d['environ'], 'check': d['display_name'],
                     'perf_var': d['perf_var'], 'value': d['perf_value'], 'unit': d['perf_unit'],
                     'ref': d.get('perf_ref'), 'result': d.get('perf_result'),
                     'jobid': d['jobid'], 'nodes': ','.join(d.get('nodelist') or []),
                     'meta': json.dumps(d.get('meta') or {}, sort_keys=True)})

    return frame(rows)


def from_parquet(path):
    import polars as pl

    return pl.read_parquet(path)


def load(source, client=None, prefix=None, errors=None):
    '''source: 'es', a .parquet file, or perflog files/directories (list).'''
    if source == 'es':
        return from_elasticsearch(client, prefix)

    if isinstance(source, (str, pathlib.Path)) and str(source).endswith('.parquet'):
        return from_parquet(source)

    return from_perflogs(source if isinstance(source, list) else [source], errors)
