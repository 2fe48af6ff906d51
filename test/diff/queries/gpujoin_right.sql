-- RIGHT JOIN: every inner row once, unmatched ones NULL-extended at the end
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: max_parallel_workers_per_gather = 0
SELECT d.id, a.ak, a.aname FROM diff_types d RIGHT JOIN dj_a a ON d.id = a.ak * 40;
