-- Aggregation below joins, kept whatever it costs: count(*) alone groups
-- the largest table (lineorder) first, by the keys the joins read; the
-- join with supplier repeats no row, date1's condition filters groups.
-- expect: GpuPreAgg|GpuJoin|GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.debug_prefer_rewrites = on
SELECT s_region, d_year, count(*) AS n
  FROM lineorder, supplier, date1
 WHERE lo_suppkey = s_suppkey AND lo_orderdate = d_datekey AND d_weeknuminyear < 20
 GROUP BY s_region, d_year;
