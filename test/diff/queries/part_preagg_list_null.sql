-- list partitions with a NULL partition and a default one (a multibyte code): groups per code
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT l_code, count(*), sum(l_v), min(l_k), max(l_v) FROM pt_list GROUP BY l_code;
