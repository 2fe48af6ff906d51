-- the join qual overflows for some pair: both runs raise PostgreSQL's error
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- error: integer out of range
SELECT d.id, a.ak FROM diff_types d JOIN dj_a a ON d.id % 3000 = a.ak AND d.a4 * 100000 > a.a4;
