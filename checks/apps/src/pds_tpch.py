'''The program of checks/apps/pds.py (it lives beside its check, like the FFT kernel's C
source): a data-science workload after the Polars Decision Support (PDS) benchmarks (TPC-H
derived), as the mdx II paper ran it with pandas, Polars, DuckDB and Dask.

Documented subset: Q1 (scan + group-by aggregation over lineitem), Q3 (three-table join,
group-by, top 10) and Q6 (selective scan + sum). Every query reads its Parquet files
itself (I/O included, as PDS does by default); TPC-H decimals are read as float64.

    python pds_tpch.py --data DIR --library polars [--queries 1,3,6]

prints one JSON line per query: library, query, seconds, rows, checksum (the sum of every
numeric cell of the answer), used to cross-check the libraries' answers.
'''
import argparse
import datetime as dt
import json
import pathlib
import sys
import time

QUERIES = (1, 3, 6)
LIBRARIES = ('polars', 'duckdb', 'pandas', 'dask')

D_Q1 = dt.date(1998, 9, 2)             # 1998-12-01 - 90 days
D_Q3 = dt.date(1995, 3, 15)
D_Q6_LO, D_Q6_HI = dt.date(1994, 1, 1), dt.date(1995, 1, 1)

# ------------------------------------------------------------------------------ polars


def _pl(data, table, cols):
    import polars as pl
    import polars.selectors as cs

    return (pl.scan_parquet(data / f'{table}.parquet').select(cols)
            .with_columns(cs.decimal().cast(pl.Float64)))


def polars_q1(data):
    import polars as pl

    li = _pl(data, 'lineitem', ['l_returnflag', 'l_linestatus', 'l_quantity', 'l_extendedprice',
                                'l_discount', 'l_tax', 'l_shipdate'])
    disc = pl.col('l_extendedprice') * (1 - pl.col('l_discount'))
    return (li.filter(pl.col('l_shipdate') <= D_Q1)
            .group_by('l_returnflag', 'l_linestatus')
            .agg(pl.col('l_quantity').sum().alias('sum_qty'),
                 pl.col('l_extendedprice').sum().alias('sum_base_price'),
                 disc.sum().alias('sum_disc_price'),
                 (disc * (1 + pl.col('l_tax'))).sum().alias('sum_charge'),
                 pl.col('l_quantity').mean().alias('avg_qty'),
                 pl.col('l_extendedprice').mean().alias('avg_price'),
                 pl.col('l_discount').mean().alias('avg_disc'),
                 pl.len().alias('count_order'))
            .sort('l_returnflag', 'l_linestatus').collect())


def polars_q3(data):
    import polars as pl

    c = _pl(data, 'customer', ['c_custkey', 'c_mktsegment']).filter(pl.col('c_mktsegment') == 'BUILDING')
    o = _pl(data, 'orders', ['o_orderkey', 'o_custkey', 'o_orderdate', 'o_shippriority']) \
        .filter(pl.col('o_orderdate') < D_Q3)
    li = _pl(data, 'lineitem', ['l_orderkey', 'l_extendedprice', 'l_discount', 'l_shipdate']) \
        .filter(pl.col('l_shipdate') > D_Q3)
    return (c.join(o, left_on='c_custkey', right_on='o_custkey')
            .join(li, left_on='o_orderkey', right_on='l_orderkey')
            .group_by('o_orderkey', 'o_orderdate', 'o_shippriority')
            .agg((pl.col('l_extendedprice') * (1 - pl.col('l_discount'))).sum().alias('revenue'))
            .sort(['revenue', 'o_orderdate'], descending=[True, False]).head(10)
            .select('o_orderkey', 'revenue', 'o_orderdate', 'o_shippriority').collect())


def polars_q6(data):
    import polars as pl

    li = _pl(data, 'lineitem', ['l_extendedprice', 'l_discount', 'l_quantity', 'l_shipdate'])
    return (li.filter((pl.col('l_shipdate') >= D_Q6_LO) & (pl.col('l_shipdate') < D_Q6_HI)
                      & pl.col('l_discount').is_between(0.05, 0.07) & (pl.col('l_quantity') < 24))
            .select((pl.col('l_extendedprice') * pl.col('l_discount')).sum().alias('revenue'))
            .collect())

# ------------------------------------------------------------------------------ duckdb


_SQL = {
    1: '''select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty,
              sum(l_extendedprice) as sum_base_price,
              sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
              sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
              avg(l_quantity) as avg_qty, avg(l_extendedprice) as avg_price,
              avg(l_discount) as avg_disc, count(*) as count_order
          from read_parquet('{lineitem}') where l_shipdate <= date '1998-09-02'
          group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus''',
    3: '''select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue,
              o_orderdate, o_shippriority
          from read_parquet('{customer}'), read_parquet('{orders}'), read_parquet('{lineitem}')
          where c_mktsegment = 'BUILDING' and c_custkey = o_custkey and l_orderkey = o_orderkey
            and o_orderdate < date '1995-03-15' and l_shipdate > date '1995-03-15'
          group by l_orderkey, o_orderdate, o_shippriority
          order by revenue desc, o_orderdate limit 10''',
    6: '''select sum(l_extendedprice * l_discount) as revenue from read_parquet('{lineitem}')
          where l_shipdate >= date '1994-01-01' and l_shipdate < date '1995-01-01'
            and l_discount between 0.05 and 0.07 and l_quantity < 24''',
}


def _duckdb(q):
    def run(data):
        import duckdb

        files = {t: str(data / f'{t}.parquet') for t in ('lineitem', 'orders', 'customer')}
        with duckdb.connect() as con:
            return con.execute(_SQL[q].format(**files)).fetchall()

    return run

# ------------------------------------------------------------------------------ pandas


def _pd(data, table, cols):
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pq.read_table(data / f'{table}.parquet', columns=cols)
    schema = pa.schema([pa.field(f.name, pa.float64()) if pa.types.is_decimal(f.type) else f
                        for f in t.schema])
    return t.cast(schema).to_pandas()


def pandas_q1(data):
    li = _pd(data, 'lineitem', ['l_returnflag', 'l_linestatus', 'l_quantity', 'l_extendedprice',
                                'l_discount', 'l_tax', 'l_shipdate'])
    return _q1_frame(li[li['l_shipdate'] <= D_Q1])


def _q1_frame(li):
    li = li.assign(disc=li['l_extendedprice'] * (1 - li['l_discount']))
    li = li.assign(charge=li['disc'] * (1 + li['l_tax']))
    g = li.groupby(['l_returnflag', 'l_linestatus'])
    return g.agg(sum_qty=('l_quantity', 'sum'), sum_base_price=('l_extendedprice', 'sum'),
                 sum_disc_price=('disc', 'sum'), sum_charge=('charge', 'sum'),
                 avg_qty=('l_quantity', 'mean'), avg_price=('l_extendedprice', 'mean'),
                 avg_disc=('l_discount', 'mean'), count_order=('l_quantity', 'size')) \
        .reset_index().sort_values(['l_returnflag', 'l_linestatus'])


def pandas_q3(data):
    c = _pd(data, 'customer', ['c_custkey', 'c_mktsegment'])
    o = _pd(data, 'orders', ['o_orderkey', 'o_custkey', 'o_orderdate', 'o_shippriority'])
    li = _pd(data, 'lineitem', ['l_orderkey', 'l_extendedprice', 'l_discount', 'l_shipdate'])
    return _q3_frame(c, o, li)


def _q3_frame(c, o, li):
    c = c[c['c_mktsegment'] == 'BUILDING']
    o = o[o['o_orderdate'] < D_Q3]
    li = li[li['l_shipdate'] > D_Q3]
    j = c.merge(o, left_on='c_custkey', right_on='o_custkey') \
         .merge(li, left_on='o_orderkey', right_on='l_orderkey')
    j = j.assign(revenue=j['l_extendedprice'] * (1 - j['l_discount']))
    r = j.groupby(['o_orderkey', 'o_orderdate', 'o_shippriority'], as_index=False)['revenue'].sum()
    return r.sort_values(['revenue', 'o_orderdate'], ascending=[False, True]).head(10)[
        ['o_orderkey', 'revenue', 'o_orderdate', 'o_shippriority']]


def pandas_q6(data):
    li = _pd(data, 'lineitem', ['l_extendedprice', 'l_discount', 'l_quantity', 'l_shipdate'])
    return _q6_value(li)


def _q6_value(li):
    m = ((li['l_shipdate'] >= D_Q6_LO) & (li['l_shipdate'] < D_Q6_HI)
         & (li['l_discount'] >= 0.05) & (li['l_discount'] <= 0.07) & (li['l_quantity'] < 24))
    sel = li[m]
    return [(float((sel['l_extendedprice'] * sel['l_discount']).sum()),)]

# ------------------------------------------------------------------------------ dask


def _dd(data, table, cols):
    import dask.dataframe as dd

    df = dd.read_parquet(str(data / f'{table}.parquet'), columns=cols)
    conv = {c: 'float64' for c, t in df.dtypes.items() if 'decimal' in str(t)}
    df = df.astype(conv) if conv else df
    for c, t in df.dtypes.items():
        if 'date' in str(t):
            df[c] = df[c].astype('datetime64[ns]')

    return df


def _ts(d):
    import pandas as pd

    return pd.Timestamp(d)


def dask_q1(data):
    li = _dd(data, 'lineitem', ['l_returnflag', 'l_linestatus', 'l_quantity', 'l_extendedprice',
                                'l_discount', 'l_tax', 'l_shipdate'])
    li = li[li['l_shipdate'] <= _ts(D_Q1)]
    li = li.assign(disc=li['l_extendedprice'] * (1 - li['l_discount']))
    li = li.assign(charge=li['disc'] * (1 + li['l_tax']))
    g = li.groupby(['l_returnflag', 'l_linestatus'])
    r = g.agg({'l_quantity': ['sum', 'mean', 'count'], 'l_extendedprice': ['sum', 'mean'],
               'disc': 'sum', 'charge': 'sum', 'l_discount': 'mean'}).compute()
    return r.sort_index().reset_index()


def dask_q3(data):
    c = _dd(data, 'customer', ['c_custkey', 'c_mktsegment'])
    o = _dd(data, 'orders', ['o_orderkey', 'o_custkey', 'o_orderdate', 'o_shippriority'])
    li = _dd(data, 'lineitem', ['l_orderkey', 'l_extendedprice', 'l_discount', 'l_shipdate'])
    c = c[c['c_mktsegment'] == 'BUILDING']
    o = o[o['o_orderdate'] < _ts(D_Q3)]
    li = li[li['l_shipdate'] > _ts(D_Q3)]
    j = c.merge(o, left_on='c_custkey', right_on='o_custkey') \
         .merge(li, left_on='o_orderkey', right_on='l_orderkey')
    j = j.assign(revenue=j['l_extendedprice'] * (1 - j['l_discount']))
    r = j.groupby(['o_orderkey', 'o_orderdate', 'o_shippriority'])['revenue'].sum().compute()
    r = r.reset_index().sort_values(['revenue', 'o_orderdate'], ascending=[False, True]).head(10)
    return r[['o_orderkey', 'revenue', 'o_orderdate', 'o_shippriority']]


def dask_q6(data):
    li = _dd(data, 'lineitem', ['l_extendedprice', 'l_discount', 'l_quantity', 'l_shipdate'])
    m = ((li['l_shipdate'] >= _ts(D_Q6_LO)) & (li['l_shipdate'] < _ts(D_Q6_HI))
         & (li['l_discount'] >= 0.05) & (li['l_discount'] <= 0.07) & (li['l_quantity'] < 24))
    sel = li[m]
    return [(float((sel['l_extendedprice'] * sel['l_discount']).sum().compute()),)]

# ------------------------------------------------------------------------------ runner


def _cells(result):
    '''Rows of an answer as tuples, whatever library produced it.'''
    if isinstance(result, list):
        return result

    if hasattr(result, 'iter_rows'):            # polars
        return list(result.iter_rows())

    return list(result.itertuples(index=False))  # pandas, and dask computed to pandas


def checksum(rows):
    '''Sum of every numeric cell (keys included), to compare answers across libraries.'''
    total = 0.0
    for row in rows:
        for v in row:
            if isinstance(v, bool):
                continue

            try:
                total += float(v)
            except (TypeError, ValueError):
                continue

    return total


def run(data, library, queries):
    data = pathlib.Path(data)
    for q in queries:
        fn = _duckdb(q) if library == 'duckdb' else globals()[f'{library}_q{q}']
        t0 = time.perf_counter()
        result = fn(data)
        seconds = time.perf_counter() - t0
        rows = _cells(result)
        yield {'library': library, 'query': q, 'seconds': seconds, 'rows': len(rows),
               'checksum': checksum(rows)}


def versions():
    import importlib.metadata as md

    return {lib: md.version(lib) for lib in LIBRARIES}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--data', required=True)
    ap.add_argument('--library', choices=LIBRARIES, action='append', required=True)
    ap.add_argument('--queries', default=','.join(map(str, QUERIES)))
    args = ap.parse_args(argv)
    queries = [int(q) for q in args.queries.split(',')]
    print(json.dumps({'pds_versions': versions()}), flush=True)
    for lib in args.library:
        for rec in run(args.data, lib, queries):
            print(json.dumps(rec), flush=True)

    return 0


if __name__ == '__main__':
    sys.exit(main())
