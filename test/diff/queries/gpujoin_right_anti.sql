-- NOT EXISTS with the larger relation scanned: a RIGHT ANTI join returns
-- the inner rows no scanned row matched (NULL keys included), after the
-- last chunk
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: max_parallel_workers_per_gather = 0
-- set: enable_nestloop = off
SELECT a.ak, a.a4, a.aname FROM dj_a a WHERE NOT EXISTS (SELECT 1 FROM diff_types d WHERE d.a4 % 3000 = a.ak AND d.a2 < 500);
