-- bench/tpch/forms/q10.sql - TPC-H Q10 in the forms docs/benchmark.md
-- compares ("Aggregation below joins"): as written, as the planner
-- rewrites it, grouped first by hand (with and without the aggregation
-- above the join), and with pg_strom off; each twice (warm-up, timed),
-- then EXPLAIN ANALYZE of three of them.  Run from the repository root on
-- a cluster holding TPC-H data (scripts/bench.sh tpch SF OUT ... leaves
-- one running; its settings are in $PGSTROM_VAR/.run/bench/env):
--     psql -d tpch -f bench/tpch/forms/q10.sql
\pset pager off
\timing on
\set v1 'select c_custkey, c_name, sum(e.revenue) as revenue, c_acctbal, n_name, c_address, c_phone, c_comment from customer, nation, (select o_custkey, sum(l_extendedprice * (1 - l_discount)) as revenue from orders, lineitem where l_orderkey = o_orderkey and o_orderdate >= date \'1993-10-01\' and o_orderdate < date \'1993-10-01\' + interval \'3\' month and l_returnflag = \'R\' group by o_custkey) e where c_custkey = e.o_custkey and c_nationkey = n_nationkey group by c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment order by revenue desc, c_custkey limit 20'
\set v2 'select c_custkey, c_name, e.revenue, c_acctbal, n_name, c_address, c_phone, c_comment from customer, nation, (select o_custkey, sum(l_extendedprice * (1 - l_discount)) as revenue from orders, lineitem where l_orderkey = o_orderkey and o_orderdate >= date \'1993-10-01\' and o_orderdate < date \'1993-10-01\' + interval \'3\' month and l_returnflag = \'R\' group by o_custkey) e where c_custkey = e.o_custkey and c_nationkey = n_nationkey order by revenue desc, c_custkey limit 20'
\echo === A: Q10 as written (eager off), pg_strom on
set pg_strom.enable_eager_aggregate = off;
\i bench/tpch/queries/q10.sql
\i bench/tpch/queries/q10.sql
\echo === B: Q10 rewritten (debug_prefer_rewrites), pg_strom on
set pg_strom.enable_eager_aggregate = on;
set pg_strom.debug_prefer_rewrites = on;
\i bench/tpch/queries/q10.sql
\i bench/tpch/queries/q10.sql
set pg_strom.debug_prefer_rewrites = off;
\echo === C: V1 (orders x lineitem grouped, outer GROUP BY), pg_strom on
:v1;
:v1;
\echo === D: V2 (orders x lineitem grouped, no outer aggregation), pg_strom on
:v2;
:v2;
\echo === E: pg_strom off: Q10, V2
set pg_strom.enabled = off;
\i bench/tpch/queries/q10.sql
:v2;
:v2;
set pg_strom.enabled = on;
\timing off
\echo === plans
set pg_strom.enable_eager_aggregate = off;
explain analyze select c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) as revenue, c_acctbal, n_name, c_address, c_phone, c_comment from customer, orders, lineitem, nation where c_custkey = o_custkey and l_orderkey = o_orderkey and o_orderdate >= date '1993-10-01' and o_orderdate < date '1993-10-01' + interval '3' month and l_returnflag = 'R' and c_nationkey = n_nationkey group by c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment order by revenue desc, c_custkey limit 20;
set pg_strom.enable_eager_aggregate = on;
set pg_strom.debug_prefer_rewrites = on;
explain analyze select c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) as revenue, c_acctbal, n_name, c_address, c_phone, c_comment from customer, orders, lineitem, nation where c_custkey = o_custkey and l_orderkey = o_orderkey and o_orderdate >= date '1993-10-01' and o_orderdate < date '1993-10-01' + interval '3' month and l_returnflag = 'R' and c_nationkey = n_nationkey group by c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment order by revenue desc, c_custkey limit 20;
set pg_strom.debug_prefer_rewrites = off;
explain analyze :v2;
set client_min_messages = debug1;
explain select c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) as revenue, c_acctbal, n_name, c_address, c_phone, c_comment from customer, orders, lineitem, nation where c_custkey = o_custkey and l_orderkey = o_orderkey and o_orderdate >= date '1993-10-01' and o_orderdate < date '1993-10-01' + interval '3' month and l_returnflag = 'R' and c_nationkey = n_nationkey group by c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment order by revenue desc, c_custkey limit 20;
