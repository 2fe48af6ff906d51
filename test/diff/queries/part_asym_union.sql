-- two joins with the same dimension in one query (UNION ALL): the later partitions take the first partition's inner rows and build; the dimension scanned against the hash partitions as inner
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: enable_hashjoin = off
-- set: enable_mergejoin = off
SELECT 'sales', d_name, s_qty::int8 FROM pt_sales JOIN pt_dim ON s_store = d_store WHERE s_day < '2023-02-01'
UNION ALL
SELECT 'hash', d_name, h_v FROM pt_hash JOIN pt_dim ON h_k % 50 = d_store WHERE h_v % 7 = 0;
