-- A GROUP BY with an aggregate over DISTINCT values, which has no partial
-- aggregation: its input rows exchanged between the processes by the
-- grouping keys (a GroupExchange), each process sorting its share and
-- aggregating its groups whole below the Gather (the rewrite that removes
-- the duplicates first is off here).
-- expect: Rows Exchanged
-- set: max_parallel_workers_per_gather = 2
-- set: parallel_setup_cost = 0
-- set: parallel_tuple_cost = 0
-- set: min_parallel_table_scan_size = 0
-- set: pg_strom.enable_distinct_grouping = off
-- set: pg_strom.debug_prefer_parallel_finalize = on
SELECT d_year, count(DISTINCT lo_custkey) AS customers, count(DISTINCT lo_suppkey) AS suppliers,
       count(*) AS n, sum(lo_revenue) AS revenue
  FROM lineorder, date1
 WHERE lo_orderdate = d_datekey
 GROUP BY d_year;
