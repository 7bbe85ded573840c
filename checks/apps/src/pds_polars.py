'''TPC-H Q1-Q7 in Polars, lazy: each query scans its Parquet files (I/O included) and
collects once. Decimals are read as float64, as in the other libraries.'''
import polars as pl
import polars.selectors as cs

from pds_params import P


def _scan(data, table):
    return pl.scan_parquet(data / f'{table}.parquet').with_columns(cs.decimal().cast(pl.Float64))


def _revenue():
    return pl.col('l_extendedprice') * (1 - pl.col('l_discount'))


def q1(data):
    li = _scan(data, 'lineitem').filter(pl.col('l_shipdate') <= P.q1_date)
    return (li.group_by('l_returnflag', 'l_linestatus')
            .agg(pl.col('l_quantity').sum().alias('sum_qty'),
                 pl.col('l_extendedprice').sum().alias('sum_base_price'),
                 _revenue().sum().alias('sum_disc_price'),
                 (_revenue() * (1 + pl.col('l_tax'))).sum().alias('sum_charge'),
                 pl.col('l_quantity').mean().alias('avg_qty'),
                 pl.col('l_extendedprice').mean().alias('avg_price'),
                 pl.col('l_discount').mean().alias('avg_disc'),
                 pl.len().alias('count_order'))
            .sort('l_returnflag', 'l_linestatus').collect())


def _region_suppliers(data, region):
    r = _scan(data, 'region').filter(pl.col('r_name') == region)
    n = _scan(data, 'nation').join(r, left_on='n_regionkey', right_on='r_regionkey')
    return _scan(data, 'supplier').join(n, left_on='s_nationkey', right_on='n_nationkey')


def q2(data):
    ps = _scan(data, 'partsupp').join(_region_suppliers(data, P.q2_region),
                                      left_on='ps_suppkey', right_on='s_suppkey')
    cheapest = ps.filter(pl.col('ps_supplycost')
                         == pl.col('ps_supplycost').min().over('ps_partkey'))
    part = _scan(data, 'part').filter((pl.col('p_size') == P.q2_size)
                                      & pl.col('p_type').str.ends_with(P.q2_type))
    return (part.join(cheapest, left_on='p_partkey', right_on='ps_partkey')
            .sort(['s_acctbal', 'n_name', 's_name', 'p_partkey'],
                  descending=[True, False, False, False])
            .select('s_acctbal', 's_name', 'n_name', 'p_partkey', 'p_mfgr', 's_address',
                    's_phone', 's_comment')
            .head(100).collect())


def q3(data):
    c = _scan(data, 'customer').filter(pl.col('c_mktsegment') == P.q3_segment)
    o = _scan(data, 'orders').filter(pl.col('o_orderdate') < P.q3_date)
    li = _scan(data, 'lineitem').filter(pl.col('l_shipdate') > P.q3_date)
    return (c.join(o, left_on='c_custkey', right_on='o_custkey')
            .join(li, left_on='o_orderkey', right_on='l_orderkey')
            .group_by('o_orderkey', 'o_orderdate', 'o_shippriority')
            .agg(_revenue().sum().alias('revenue'))
            .sort(['revenue', 'o_orderdate'], descending=[True, False]).head(10)
            .select(pl.col('o_orderkey').alias('l_orderkey'), 'revenue', 'o_orderdate',
                    'o_shippriority')
            .collect())


def q4(data):
    late = (_scan(data, 'lineitem').filter(pl.col('l_commitdate') < pl.col('l_receiptdate'))
            .select('l_orderkey'))
    o = _scan(data, 'orders').filter(pl.col('o_orderdate').is_between(
        P.q4_date, P.q4_end, closed='left'))
    return (o.join(late, left_on='o_orderkey', right_on='l_orderkey', how='semi')
            .group_by('o_orderpriority').agg(pl.len().alias('order_count'))
            .sort('o_orderpriority').collect())


def q5(data):
    s = _region_suppliers(data, P.q5_region)
    o = _scan(data, 'orders').filter(pl.col('o_orderdate').is_between(
        P.q5_date, P.q5_end, closed='left'))
    return (_scan(data, 'customer')
            .join(o, left_on='c_custkey', right_on='o_custkey')
            .join(_scan(data, 'lineitem'), left_on='o_orderkey', right_on='l_orderkey')
            .join(s, left_on=['l_suppkey', 'c_nationkey'], right_on=['s_suppkey', 's_nationkey'])
            .group_by('n_name').agg(_revenue().sum().alias('revenue'))
            .sort('revenue', descending=True).collect())


def q6(data):
    return (_scan(data, 'lineitem')
            .filter(pl.col('l_shipdate').is_between(P.q6_date, P.q6_end, closed='left'),
                    pl.col('l_discount').is_between(P.q6_discount_lo, P.q6_discount_hi),
                    pl.col('l_quantity') < P.q6_quantity)
            .select((pl.col('l_extendedprice') * pl.col('l_discount')).sum().alias('revenue'))
            .collect())


def q7(data):
    nations = _scan(data, 'nation').filter(pl.col('n_name').is_in(P.q7_nations)) \
        .select('n_nationkey', 'n_name')
    s = _scan(data, 'supplier').join(nations, left_on='s_nationkey', right_on='n_nationkey') \
        .select('s_suppkey', pl.col('n_name').alias('supp_nation'))
    c = _scan(data, 'customer').join(nations, left_on='c_nationkey', right_on='n_nationkey') \
        .select('c_custkey', pl.col('n_name').alias('cust_nation'))
    li = _scan(data, 'lineitem').filter(
        pl.col('l_shipdate').is_between(P.q7_first, P.q7_last))
    return (li.join(s, left_on='l_suppkey', right_on='s_suppkey')
            .join(_scan(data, 'orders'), left_on='l_orderkey', right_on='o_orderkey')
            .join(c, left_on='o_custkey', right_on='c_custkey')
            .filter(pl.col('supp_nation') != pl.col('cust_nation'))
            .group_by('supp_nation', 'cust_nation',
                      pl.col('l_shipdate').dt.year().alias('l_year'))
            .agg(_revenue().sum().alias('revenue'))
            .sort('supp_nation', 'cust_nation', 'l_year').collect())
