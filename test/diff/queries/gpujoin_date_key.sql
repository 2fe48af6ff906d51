-- date keys with an extra non-equality join qual
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT d.id, d.d, a.ak, a.aname FROM diff_types d JOIN dj_a a ON d.d = a.ad AND d.a4 > a.a4;
