-- partitions with NOT EXISTS over a dimension (an anti join per partition)
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT s_day, s_store, s_region FROM pt_sales s WHERE NOT EXISTS (SELECT 1 FROM pt_dim d WHERE d.d_store = s.s_store AND d.d_region <> 'east')
   AND s_day < '2023-05-01';
