-- hash partitions: groups whose rows lie in every partition
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT h_t, count(*), sum(h_v), count(h_v), max(h_k) FROM pt_hash WHERE h_k % 5 <> 1 GROUP BY h_t;
