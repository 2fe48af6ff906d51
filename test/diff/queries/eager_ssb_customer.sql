-- Aggregation below joins (pg_strom.enable_eager_aggregate), kept whatever
-- it costs (debug_prefer_rewrites): lineorder grouped first by the columns
-- the rest of the query reads (lo_custkey, lo_orderdate), then joined with
-- customer and date1; every aggregate kind over multibyte-free char(n) and
-- varchar group keys.  Either a device node runs the grouped sub-query or
-- the join.
-- expect: GpuPreAgg|GpuJoin|GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.debug_prefer_rewrites = on
SELECT c_custkey, c_name, c_city, sum(lo_revenue) AS revenue, count(*) AS n, count(lo_tax) AS taxed,
       avg(lo_quantity) AS q, min(lo_orderdate) AS first, max(lo_orderpriority) AS prio
  FROM lineorder, customer, date1
 WHERE lo_custkey = c_custkey AND lo_orderdate = d_datekey AND d_year = 1993
 GROUP BY c_custkey, c_name, c_city;
