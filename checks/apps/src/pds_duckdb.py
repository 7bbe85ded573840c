'''TPC-H Q1-Q7 in DuckDB, as its users write them: SQL with explicit joins and CTEs straight
on the Parquet files (I/O included), decimals read as double as in the other libraries.
This is the implementation under test; the reference is the specification's text in
tpch-sql/ (run by pds_tpch.py on the original decimal columns).'''
import duckdb

from pds_params import P

_SQL = {
    1: '''
select l_returnflag, l_linestatus,
       sum(l_quantity) as sum_qty, sum(l_extendedprice) as sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
       avg(l_quantity) as avg_qty, avg(l_extendedprice) as avg_price,
       avg(l_discount) as avg_disc, count(*) as count_order
from {lineitem}
where l_shipdate <= $q1_date
group by all
order by all''',
    2: '''
with europe as (
    select s.*, n_name
    from {supplier} s
    join {nation} on s_nationkey = n_nationkey
    join {region} on n_regionkey = r_regionkey
    where r_name = $q2_region),
offers as (
    select ps.*, europe.*,
           min(ps_supplycost) over (partition by ps_partkey) as cheapest
    from {partsupp} ps join europe on ps_suppkey = s_suppkey)
select s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
from {part} join offers on p_partkey = ps_partkey
where p_size = $q2_size and suffix(p_type, $q2_type) and ps_supplycost = cheapest
order by s_acctbal desc, n_name, s_name, p_partkey
limit 100''',
    3: '''
select o_orderkey as l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue,
       o_orderdate, o_shippriority
from {customer}
join {orders} on c_custkey = o_custkey
join {lineitem} on l_orderkey = o_orderkey
where c_mktsegment = $q3_segment and o_orderdate < $q3_date and l_shipdate > $q3_date
group by o_orderkey, o_orderdate, o_shippriority
order by revenue desc, o_orderdate
limit 10''',
    4: '''
select o_orderpriority, count(*) as order_count
from {orders} semi join (
    select l_orderkey from {lineitem} where l_commitdate < l_receiptdate
) late on o_orderkey = l_orderkey
where o_orderdate >= $q4_date and o_orderdate < $q4_end
group by o_orderpriority
order by o_orderpriority''',
    5: '''
with asia as (
    select s_suppkey, s_nationkey, n_name
    from {supplier}
    join {nation} on s_nationkey = n_nationkey
    join {region} on n_regionkey = r_regionkey
    where r_name = $q5_region)
select n_name, sum(l_extendedprice * (1 - l_discount)) as revenue
from {customer}
join {orders} on c_custkey = o_custkey
join {lineitem} on l_orderkey = o_orderkey
join asia on l_suppkey = s_suppkey and c_nationkey = s_nationkey
where o_orderdate >= $q5_date and o_orderdate < $q5_end
group by n_name
order by revenue desc''',
    6: '''
select sum(l_extendedprice * l_discount) as revenue
from {lineitem}
where l_shipdate >= $q6_date and l_shipdate < $q6_end
  and l_discount between $q6_discount_lo and $q6_discount_hi and l_quantity < $q6_quantity''',
    7: '''
with nations as (select n_nationkey, n_name from {nation} where list_contains($q7_nations, n_name)),
shipping as (
    select sn.n_name as supp_nation, cn.n_name as cust_nation, year(l_shipdate) as l_year,
           l_extendedprice * (1 - l_discount) as volume
    from {lineitem}
    join {supplier} on l_suppkey = s_suppkey
    join {orders} on l_orderkey = o_orderkey
    join {customer} on o_custkey = c_custkey
    join nations sn on s_nationkey = sn.n_nationkey
    join nations cn on c_nationkey = cn.n_nationkey
    where sn.n_name <> cn.n_name and l_shipdate between $q7_first and $q7_last)
select supp_nation, cust_nation, l_year, sum(volume) as revenue
from shipping
group by all
order by all''',
}

TABLES = ('lineitem', 'orders', 'customer', 'supplier', 'nation', 'region', 'part', 'partsupp')


def _views(con, data):
    '''One view per table over its Parquet file, decimals as double.'''
    for t in TABLES:
        src = f"read_parquet('{data}/{t}.parquet')"
        cols = [f'"{name}"::double as "{name}"' if kind.startswith('DECIMAL') else f'"{name}"'
                for name, kind, *_ in con.execute(f'describe select * from {src}').fetchall()]
        con.execute(f'create view {t}_ as select {", ".join(cols)} from {src}')


def query(n):
    def run(data):
        sql = _SQL[n].format(**{t: f'{t}_' for t in TABLES})
        params = {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(P).items()
                  if k.startswith(f'q{n}_')}
        with duckdb.connect() as con:
            _views(con, data)
            return con.execute(sql, params).fetchall()

    return run
