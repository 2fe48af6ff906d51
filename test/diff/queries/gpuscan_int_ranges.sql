-- integer comparisons, BETWEEN, IN, arithmetic
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT id, a2, a4, a8 FROM diff_types
 WHERE (a4 BETWEEN -5000 AND 5000 OR a2 IN (1, 2, 3, -1000)) AND a8 % 3 <> 1;
