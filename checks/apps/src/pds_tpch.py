'''The program of checks/apps/pds.py (it lives beside its check, like the FFT kernel's C
source): a data-science workload after the Polars Decision Support (PDS) benchmarks (TPC-H
derived), as the mdx II paper ran it (Figure 11: queries 1 to 7 in pandas, Polars, DuckDB
and Dask).

Each library has its own implementation of Q1-Q7, written for it (pds_<library>.py, with
the substitution parameters of pds_params.py). Every query reads its Parquet files itself
(I/O included, as PDS does by default); decimals are read as float64.

The answers are checked against the specification: DuckDB runs the TPC-H SQL text of each
query (tpch-sql/q<N>.sql) on the same files, decimals kept exact, and that answer is printed
too; the parser (mdxbench.parsers.pds) compares each library's answer with it row by row.

    python pds_tpch.py --data DIR --library polars [--library ...] [--queries 1,2,...,7]

prints one JSON line with the libraries' versions, one per reference answer
({"reference": N, "seconds", "columns", "answer"}), then one per library and query
({"library", "query", "seconds", "answer"}). Answers are lists of rows; dates are ISO
strings, numbers are floats or integers, strings lose the padding of fixed-width columns.
'''
import argparse
import datetime as dt
import decimal
import importlib
import importlib.metadata as md
import json
import pathlib
import sys
import time

QUERIES = tuple(range(1, 8))
LIBRARIES = ('polars', 'duckdb', 'pandas', 'dask')
HERE = pathlib.Path(__file__).resolve().parent
SQL = HERE / 'tpch-sql'
TABLES = ('lineitem', 'orders', 'customer', 'supplier', 'nation', 'region', 'part', 'partsupp')


def _cell(v):
    if isinstance(v, (dt.datetime, dt.date)):
        return v.date().isoformat() if isinstance(v, dt.datetime) else v.isoformat()
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, str):
        return v.rstrip()
    if hasattr(v, 'item'):                      # numpy scalars
        return _cell(v.item())
    if hasattr(v, 'to_pydatetime'):             # pandas Timestamp
        return v.date().isoformat()
    return v


def rows(result):
    '''An answer as a list of lists of JSON values, whatever library produced it.'''
    if isinstance(result, list):                # DuckDB's fetchall()
        it = result
    elif hasattr(result, 'iter_rows'):          # Polars
        it = result.iter_rows()
    else:                                       # pandas, and Dask computed to pandas
        it = result.itertuples(index=False)
    return [[_cell(v) for v in row] for row in it]


def reference(data, q):
    '''The specification's SQL text of query ``q`` run by DuckDB on the Parquet files.'''
    import duckdb

    with duckdb.connect() as con:
        for t in TABLES:
            con.execute(f"create view {t} as select * from read_parquet('{data}/{t}.parquet')")
        cur = con.execute((SQL / f'q{q}.sql').read_text())
        return [d[0] for d in cur.description], cur.fetchall()


def implementation(library, q):
    mod = importlib.import_module(f'pds_{library}')
    return mod.query(q) if library == 'duckdb' else getattr(mod, f'q{q}')


def timed(fn, *args):
    t0 = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--data', required=True, type=pathlib.Path)
    ap.add_argument('--library', choices=LIBRARIES, action='append', required=True)
    ap.add_argument('--queries', default=','.join(map(str, QUERIES)))
    args = ap.parse_args(argv)
    queries = [int(q) for q in args.queries.split(',')]
    sys.path.insert(0, str(HERE))
    print(json.dumps({'pds_versions': {lib: md.version(lib) for lib in LIBRARIES}}), flush=True)
    for q in queries:
        (columns, answer), seconds = timed(reference, args.data, q)
        print(json.dumps({'reference': q, 'seconds': seconds, 'columns': columns,
                          'answer': rows(answer)}), flush=True)
    for lib in args.library:
        for q in queries:
            result, seconds = timed(implementation(lib, q), args.data)
            print(json.dumps({'library': lib, 'query': q, 'seconds': seconds,
                              'answer': rows(result)}), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
