'''TPC-H Q1-Q7 in pandas, eager: each query reads the columns it needs from Parquet (I/O
included), decimals as float64 and dates as datetime64.'''
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pds_params import P


def _read(data, table, cols):
    t = pq.read_table(data / f'{table}.parquet', columns=cols)
    schema = pa.schema([pa.field(f.name, pa.float64()) if pa.types.is_decimal(f.type) else f
                        for f in t.schema])
    return t.cast(schema).to_pandas(date_as_object=False)


def _ts(d):
    return pd.Timestamp(d)


def _revenue(df):
    return df['l_extendedprice'] * (1 - df['l_discount'])


def q1(data):
    li = _read(data, 'lineitem', ['l_returnflag', 'l_linestatus', 'l_quantity',
                                  'l_extendedprice', 'l_discount', 'l_tax', 'l_shipdate'])
    li = li[li['l_shipdate'] <= _ts(P.q1_date)]
    li = li.assign(disc_price=_revenue(li))
    li = li.assign(charge=li['disc_price'] * (1 + li['l_tax']))
    out = li.groupby(['l_returnflag', 'l_linestatus'], as_index=False).agg(
        sum_qty=('l_quantity', 'sum'), sum_base_price=('l_extendedprice', 'sum'),
        sum_disc_price=('disc_price', 'sum'), sum_charge=('charge', 'sum'),
        avg_qty=('l_quantity', 'mean'), avg_price=('l_extendedprice', 'mean'),
        avg_disc=('l_discount', 'mean'), count_order=('l_quantity', 'size'))
    return out.sort_values(['l_returnflag', 'l_linestatus'])


def _region_suppliers(data, region, cols):
    r = _read(data, 'region', ['r_regionkey', 'r_name'])
    n = _read(data, 'nation', ['n_nationkey', 'n_name', 'n_regionkey'])
    n = n.merge(r[r['r_name'] == region], left_on='n_regionkey', right_on='r_regionkey')
    s = _read(data, 'supplier', cols)
    return s.merge(n, left_on='s_nationkey', right_on='n_nationkey')


def q2(data):
    s = _region_suppliers(data, P.q2_region, ['s_suppkey', 's_name', 's_address', 's_nationkey',
                                              's_phone', 's_acctbal', 's_comment'])
    ps = _read(data, 'partsupp', ['ps_partkey', 'ps_suppkey', 'ps_supplycost'])
    ps = ps.merge(s, left_on='ps_suppkey', right_on='s_suppkey')
    ps = ps[ps['ps_supplycost'] == ps.groupby('ps_partkey')['ps_supplycost'].transform('min')]
    p = _read(data, 'part', ['p_partkey', 'p_mfgr', 'p_size', 'p_type'])
    p = p[(p['p_size'] == P.q2_size) & p['p_type'].str.endswith(P.q2_type)]
    j = p.merge(ps, left_on='p_partkey', right_on='ps_partkey')
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
    r = j.groupby(['l_orderkey', 'o_orderdate', 'o_shippriority'], as_index=False)['revenue'].sum()
    r = r.sort_values(['revenue', 'o_orderdate'], ascending=[False, True]).head(10)
    return r[['l_orderkey', 'revenue', 'o_orderdate', 'o_shippriority']]


def q4(data):
    o = _read(data, 'orders', ['o_orderkey', 'o_orderdate', 'o_orderpriority'])
    li = _read(data, 'lineitem', ['l_orderkey', 'l_commitdate', 'l_receiptdate'])
    late = li.loc[li['l_commitdate'] < li['l_receiptdate'], 'l_orderkey'].unique()
    o = o[(o['o_orderdate'] >= _ts(P.q4_date)) & (o['o_orderdate'] < _ts(P.q4_end))]
    o = o[o['o_orderkey'].isin(late)]
    return (o.groupby('o_orderpriority', as_index=False).size()
            .rename(columns={'size': 'order_count'}).sort_values('o_orderpriority'))


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
    return (j.groupby('n_name', as_index=False)['revenue'].sum()
            .sort_values('revenue', ascending=False))


def q6(data):
    li = _read(data, 'lineitem', ['l_extendedprice', 'l_discount', 'l_quantity', 'l_shipdate'])
    sel = li[(li['l_shipdate'] >= _ts(P.q6_date)) & (li['l_shipdate'] < _ts(P.q6_end))
             & li['l_discount'].between(P.q6_discount_lo, P.q6_discount_hi)
             & (li['l_quantity'] < P.q6_quantity)]
    return pd.DataFrame({'revenue': [(sel['l_extendedprice'] * sel['l_discount']).sum()]})


def q7(data):
    n = _read(data, 'nation', ['n_nationkey', 'n_name'])
    n = n[n['n_name'].isin(P.q7_nations)]
    s = _read(data, 'supplier', ['s_suppkey', 's_nationkey']) \
        .merge(n, left_on='s_nationkey', right_on='n_nationkey') \
        .rename(columns={'n_name': 'supp_nation'})[['s_suppkey', 'supp_nation']]
    c = _read(data, 'customer', ['c_custkey', 'c_nationkey']) \
        .merge(n, left_on='c_nationkey', right_on='n_nationkey') \
        .rename(columns={'n_name': 'cust_nation'})[['c_custkey', 'cust_nation']]
    o = _read(data, 'orders', ['o_orderkey', 'o_custkey'])
    li = _read(data, 'lineitem', ['l_orderkey', 'l_suppkey', 'l_extendedprice', 'l_discount',
                                  'l_shipdate'])
    li = li[li['l_shipdate'].between(_ts(P.q7_first), _ts(P.q7_last))]
    j = li.merge(s, left_on='l_suppkey', right_on='s_suppkey') \
          .merge(o, left_on='l_orderkey', right_on='o_orderkey') \
          .merge(c, left_on='o_custkey', right_on='c_custkey')
    j = j[j['supp_nation'] != j['cust_nation']]
    j = j.assign(l_year=j['l_shipdate'].dt.year, volume=_revenue(j))
    return (j.groupby(['supp_nation', 'cust_nation', 'l_year'], as_index=False)['volume'].sum()
            .rename(columns={'volume': 'revenue'})
            .sort_values(['supp_nation', 'cust_nation', 'l_year']))
