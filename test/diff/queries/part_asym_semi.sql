-- partitions with EXISTS over a dimension, the partitions scanned (a semi join per partition)
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT s_day, s_store, s_qty FROM pt_sales s WHERE EXISTS (SELECT 1 FROM pt_dim d WHERE d.d_store = s.s_store AND d.d_region = 'west')
   AND (s_day < '2023-04-01' OR s_day >= '2025-11-01');
