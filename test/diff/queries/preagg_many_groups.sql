-- GpuPreAgg: one group per row (100,000 groups) and HAVING
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: work_mem = '64MB'
-- set: enable_seqscan = off
SELECT id, count(*), sum(a8) FROM diff_types GROUP BY id HAVING sum(a8) IS NOT NULL OR count(*) > 0;
