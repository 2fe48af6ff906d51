-- date_part / date_trunc in a join qual run on the device when the unit
-- is one the device computes (no PostgreSQL fallback in a join)
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.enable_gpupreagg = off
SELECT t.id, a.ak FROM diff_types t JOIN dj_a a ON a.a4 = t.a4
 WHERE date_part('hour', t.ts) >= date_part('dow', a.ad) OR date_trunc('month', t.ts) < a.ad;
