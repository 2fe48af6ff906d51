-- A correlated aggregate sub-query decorrelated and its grouping
-- restricted to the keys the outer query can ask for (the parts of one
-- category: a semi-join below the grouping), kept whatever it costs
-- (debug_prefer_rewrites); TPC-H Q17's shape over SSB.
-- expect: GpuPreAgg|GpuJoin|GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.debug_prefer_rewrites = on
SELECT count(*) AS n, sum(lo_revenue) AS revenue
  FROM lineorder, part
 WHERE lo_partkey = p_partkey AND p_category = 'MFGR#12'
   AND lo_quantity < (SELECT 0.5 * avg(l2.lo_quantity) FROM lineorder l2 WHERE l2.lo_partkey = p_partkey);
