-- the rows of partitions whose columns lie elsewhere, joined (each partition's outer key reads its own column)
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT k, v, t, d_name FROM pt_drop JOIN pt_dim ON k = d_store WHERE v % 5 = 1;
