-- GpuJoin in a correlated subquery: rescanned with new parameter values
-- expect: GpuJoin
-- set: pg_strom.enable_gpupreagg = off
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT x.k, (SELECT count(*) FROM diff_types d JOIN dj_b b ON d.a2 % 50 = b.bk WHERE d.a4 > x.k * 1000) FROM (VALUES (1), (20), (-50)) x(k);
