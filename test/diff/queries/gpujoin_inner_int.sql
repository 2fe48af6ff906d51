-- INNER hash join on an int4 expression key, duplicates and NULLs
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT d.id, d.a4, a.ak, a.aname, d.t FROM diff_types d JOIN dj_a a ON d.id % 3000 = a.ak WHERE d.a2 > 0;
