-- a join over the partitions plan-time pruning keeps (one year's hash sub-partitions), no GROUP BY
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT count(*), sum(s_amount), max(s_qty), count(d_name) FROM pt_sales JOIN pt_dim ON s_store = d_store
 WHERE s_day BETWEEN '2025-02-01' AND '2025-03-01';
