-- the inner relation reads the outer query's value: re-read on every rescan
-- expect: GpuJoin
-- set: pg_strom.enable_gpupreagg = off
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT x.k, (SELECT count(*) FROM diff_types d JOIN (SELECT bk FROM dj_b WHERE lo > x.k * 100) b ON d.a2 % 50 = b.bk) FROM (VALUES (1), (20), (-50)) x(k);
