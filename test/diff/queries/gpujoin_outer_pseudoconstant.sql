-- a WHERE clause over InitPlans only (pseudoconstant) above an outer join:
-- PostgreSQL evaluates it once in a gating Result; a GpuJoin must not
-- drop it (found by the sqlsmith soak: the join returned rows where the
-- clause was NULL), so the join stays on the CPU
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.gpu_tuple_cost = 0
SELECT n.id, n.price, s.s_suppkey
  FROM supplier s RIGHT JOIN diff_numeric n ON s.s_suppkey = n.g AND n.id > 0
 WHERE (SELECT ts FROM diff_wide ORDER BY id LIMIT 1 OFFSET 200000) IS NOT NULL
   AND n.id < 1000;
