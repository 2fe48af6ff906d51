-- CASE, GREATEST / LEAST, casts
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT id, a2, a4 FROM diff_types
 WHERE CASE WHEN a2 > 500 THEN a4 > 0 WHEN a2 < -500 THEN a4 < 0 ELSE b END
   AND greatest(a2::int8, a4, a8 % 1000) > least(a2, 10);
