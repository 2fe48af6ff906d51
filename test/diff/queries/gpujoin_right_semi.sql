-- EXISTS with the larger relation scanned: a RIGHT SEMI join (PostgreSQL
-- 18) returns each inner row that some scanned row matched, once, after the
-- last chunk; NULL keys never match, duplicates return once each
-- expect: GpuJoin
-- since: 18
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: max_parallel_workers_per_gather = 0
-- set: enable_nestloop = off
SELECT a.ak, a.a4, a.aname FROM dj_a a WHERE EXISTS (SELECT 1 FROM diff_types d WHERE d.a4 % 3000 = a.ak AND d.a2 < 500);
