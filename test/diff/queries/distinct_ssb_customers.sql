-- Aggregates over DISTINCT values (pg_strom.enable_distinct_grouping), kept
-- whatever it costs (debug_prefer_rewrites): the duplicates of lo_custkey
-- removed by a grouping by d_year and lo_custkey first, with count(*), a
-- sum and an avg computed per such group and combined above.  A device
-- node runs the grouping or the join.
-- expect: GpuPreAgg|GpuJoin|GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.debug_prefer_rewrites = on
SELECT d_year, count(DISTINCT lo_custkey) AS customers, count(*) AS n, sum(lo_revenue) AS revenue,
       avg(lo_quantity) AS q
  FROM lineorder, date1
 WHERE lo_orderdate = d_datekey
 GROUP BY d_year;
