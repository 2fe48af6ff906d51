-- FULL JOIN with NULL keys on both sides
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: max_parallel_workers_per_gather = 0
SELECT d.id, d.a2, b.bk, b.bname FROM diff_types d FULL JOIN dj_b b ON d.a2 = b.bk * 100;
