-- EXISTS over the partitions
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT d_store, d_name FROM pt_dim d WHERE EXISTS (SELECT 1 FROM pt_sales s WHERE s.s_store = d.d_store AND s.s_qty = 19 AND s.s_day >= '2025-01-01');
