-- list partitions (a NULL partition, a default one, multibyte keys) LEFT JOIN a dimension
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: enable_hashjoin = off
SELECT l_code, l_k, l_v, d_name FROM pt_list LEFT JOIN pt_dim ON l_k = d_store WHERE l_v % 7 = 1;
