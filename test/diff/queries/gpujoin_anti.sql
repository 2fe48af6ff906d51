-- NOT EXISTS (anti join); NULL keys never match so those rows stay
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT d.id, d.a2 FROM diff_types d WHERE NOT EXISTS (SELECT 1 FROM dj_b b WHERE b.bk = d.a2 % 50);
