-- float8 keys: NaN joins NaN, -0 joins 0
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT d.id, d.f8, a.ak FROM diff_types d JOIN dj_a a ON d.f8 = a.af;
