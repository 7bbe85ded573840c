'''TPC-H Q1-Q7 in Dask DataFrame: lazy partitioned frames read from Parquet (I/O included),
decimals as float64, dates as Arrow dates; each query computes once, when its answer is
small (after the aggregation), and sorts that in pandas.'''
import dask.dataframe as dd
import pandas as pd

from pds_params import P


def _read(data, table, cols):
    df = dd.read_parquet(str(data / f'{table}.parquet'), columns=cols)
    types = {c: 'float64' for c, t in df.dtypes.items() if 'decimal' in str(t)}
    return df.astype(types) if types else df


def _ts(d):
    return d


def _revenue(df):
    return df['l_extendedprice'] * (1 - df['l_discount'])


def q1(data):
    li = _read(data, 'lineitem', ['l_returnflag', 'l_linestatus', 'l_quantity',
                                  'l_extendedprice', 'l_discount', 'l_tax', 'l_shipdate'])
    li = li[li['l_shipdate'] <= _ts(P.q1_date)]
    li = li.assign(disc_price=_revenue(li))
    li = li.assign(charge=li['disc_price'] * (1 + li['l_tax']))
    out = li.groupby(['l_returnflag', 'l_linestatus']).agg(
        sum_qty=('l_quantity', 'sum'), sum_base_price=('l_extendedprice', 'sum'),
        sum_disc_price=('disc_price', 'sum'), sum_charge=('charge', 'sum'),
        avg_qty=('l_quantity', 'mean'), avg_price=('l_extendedprice', 'mean'),
        avg_disc=('l_discount', 'mean'), count_order=('l_quantity', 'count')).compute()
    return out.reset_index().sort_values(['l_returnflag', 'l_linestatus'])


def _region_suppliers(data, region, cols):
    r = _read(data, 'region', ['r_regionkey', 'r_name'])
    n = _read(data, 'nation', ['n_nationkey', 'n_name', 'n_regionkey'])
    n = n.merge(r[r['r_name'] == region], left_on='n_regionkey', right_on='r_regionkey')
    return _read(data, 'supplier', cols).merge(n, left_on='s_nationkey', right_on='n_nationkey')


def q2(data):
    s = _region_suppliers(data, P.q2_region, ['s_suppkey', 's_name', 's_address', 's_nationkey',
                                              's_phone', 's_acctbal', 's_comment'])
    ps = _read(data, 'partsupp', ['ps_partkey', 'ps_suppkey', 'ps_supplycost']) \
        .merge(s, left_on='ps_suppkey', right_on='s_suppkey')
    cheapest = ps.groupby('ps_partkey')['ps_supplycost'].min().rename('min_cost').reset_index()
    ps = ps.merge(cheapest, on='ps_partkey')
    ps = ps[ps['ps_supplycost'] == ps['min_cost']]
    p = _read(data, 'part', ['p_partkey', 'p_mfgr', 'p_size', 'p_type'])
    p = p[(p['p_size'] == P.q2_size) & p['p_type'].str.endswith(P.q2_type)]
    j = p.merge(ps, left_on='p_partkey', right_on='ps_partkey').compute()
    j = j.sort_values(['s_acctbal', 'n_name', 's_name', 'p_partkey'],
                      ascending=[False, True, True, True])
    return j[['s_acctbal', 's_name', 'n_name', 'p_partkey', 'p_mfgr', 's_address', 's_phone',
              's_comment']].head(100)


def q3(data):
    c = _read(data, 'customer', ['c_custkey', 'c_mktsegment'])
    o = _read(data, 'orders', ['o_orderkey', 'o_custkey', 'o_orderdate', 'o_shippriority'])
    li = _read(data, 'lineitem', ['l_orderkey', 'l_extendedprice', 'l_discount', 'l_shipdate'])
    c = c[c['c_mktsegment'] == P.q3_segment]
    o = o[o['o_orderdate'] < _ts(P.q3_date)]
    li = li[li['l_shipdate'] > _ts(P.q3_date)]
    j = c.merge(o, left_on='c_custkey', right_on='o_custkey') \
         .merge(li, left_on='o_orderkey', right_on='l_orderkey')
    j = j.assign(revenue=_revenue(j))
    r = j.groupby(['l_orderkey', 'o_orderdate', 'o_shippriority'])['revenue'].sum()
    r = r.nlargest(10).compute().reset_index()
    r = r.sort_values(['revenue', 'o_orderdate'], ascending=[False, True])
    return r[['l_orderkey', 'revenue', 'o_orderdate', 'o_shippriority']]


def q4(data):
    o = _read(data, 'orders', ['o_orderkey', 'o_orderdate', 'o_orderpriority'])
    li = _read(data, 'lineitem', ['l_orderkey', 'l_commitdate', 'l_receiptdate'])
    late = li[li['l_commitdate'] < li['l_receiptdate']][['l_orderkey']].drop_duplicates()
    o = o[(o['o_orderdate'] >= _ts(P.q4_date)) & (o['o_orderdate'] < _ts(P.q4_end))]
    o = o.merge(late, left_on='o_orderkey', right_on='l_orderkey')
    r = o.groupby('o_orderpriority').size().compute()
    return r.rename('order_count').reset_index().sort_values('o_orderpriority')


def q5(data):
    s = _region_suppliers(data, P.q5_region, ['s_suppkey', 's_nationkey'])
    c = _read(data, 'customer', ['c_custkey', 'c_nationkey'])
    o = _read(data, 'orders', ['o_orderkey', 'o_custkey', 'o_orderdate'])
    li = _read(data, 'lineitem', ['l_orderkey', 'l_suppkey', 'l_extendedprice', 'l_discount'])
    o = o[(o['o_orderdate'] >= _ts(P.q5_date)) & (o['o_orderdate'] < _ts(P.q5_end))]
    j = c.merge(o, left_on='c_custkey', right_on='o_custkey') \
         .merge(li, left_on='o_orderkey', right_on='l_orderkey') \
         .merge(s, left_on=['l_suppkey', 'c_nationkey'], right_on=['s_suppkey', 's_nationkey'])
    j = j.assign(revenue=_revenue(j))
    r = j.groupby('n_name')['revenue'].sum().compute()
    return r.reset_index().sort_values('revenue', ascending=False)


def q6(data):
    li = _read(data, 'lineitem', ['l_extendedprice', 'l_discount', 'l_quantity', 'l_shipdate'])
    sel = li[(li['l_shipdate'] >= _ts(P.q6_date)) & (li['l_shipdate'] < _ts(P.q6_end))
             & li['l_discount'].between(P.q6_discount_lo, P.q6_discount_hi)
             & (li['l_quantity'] < P.q6_quantity)]
    return pd.DataFrame({'revenue': [(sel['l_extendedprice'] * sel['l_discount']).sum().compute()]})


def q7(data):
    n = _read(data, 'nation', ['n_nationkey', 'n_name'])
    n = n[n['n_name'].isin(list(P.q7_nations))]
    s = _read(data, 'supplier', ['s_suppkey', 's_nationkey']) \
        .merge(n, left_on='s_nationkey', right_on='n_nationkey') \
        .rename(columns={'n_name': 'supp_nation'})[['s_suppkey', 'supp_nation']]
    c = _read(data, 'customer', ['c_custkey', 'c_nationkey']) \
        .merge(n, left_on='c_nationkey', right_on='n_nationkey') \
        .rename(columns={'n_name': 'cust_nation'})[['c_custkey', 'cust_nation']]
    o = _read(data, 'orders', ['o_orderkey', 'o_custkey'])
    li = _read(data, 'lineitem', ['l_orderkey', 'l_suppkey', 'l_extendedprice', 'l_discount',
                                  'l_shipdate'])
    li = li[(li['l_shipdate'] >= _ts(P.q7_first)) & (li['l_shipdate'] <= _ts(P.q7_last))]
    j = li.merge(s, left_on='l_suppkey', right_on='s_suppkey') \
          .merge(o, left_on='l_orderkey', right_on='o_orderkey') \
          .merge(c, left_on='o_custkey', right_on='c_custkey')
    j = j[j['supp_nation'] != j['cust_nation']]
    j = j.assign(l_year=j['l_shipdate'].dt.year, volume=_revenue(j))
    r = j.groupby(['supp_nation', 'cust_nation', 'l_year'])['volume'].sum().compute()
    return (r.rename('revenue').reset_index()
            .sort_values(['supp_nation', 'cust_nation', 'l_year']))
