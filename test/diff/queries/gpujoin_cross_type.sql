-- int2 = int4 and int8 = int4 keys hash alike
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT d.id, a.ak, a.a8 FROM diff_types d JOIN dj_a a ON d.a8 % 500 = a.a8 AND d.a2 % 500 = a.ak;
