-- hash partitions joined on an expression, grouped by a dimension's text
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT d_name, count(*), sum(h_v), count(h_v) FROM pt_hash JOIN pt_dim ON h_k % 50 = d_store GROUP BY d_name;
