-- three-valued AND/OR/NOT, IS [NOT] NULL, IS [NOT] TRUE, COALESCE, NULLIF
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT id FROM diff_types
 WHERE (NOT (a2 > 0 AND b) IS NOT FALSE OR coalesce(a4, 0) = 0)
   AND nullif(a8, 0) IS NOT NULL AND (b IS NOT TRUE OR t IS NULL);
