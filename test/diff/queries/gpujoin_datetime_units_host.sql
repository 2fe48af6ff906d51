-- a unit spelled otherwise ('Hours') needs PostgreSQL's DecodeUnits: in
-- an inner join's qual it stays on the host, the join on the device
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.enable_gpupreagg = off
SELECT t.id, a.ak FROM diff_types t JOIN dj_a a ON a.a4 = t.a4
 WHERE date_part('Hours', t.ts) >= date_part('dow', a.ad) OR date_trunc('month', t.ts) < a.ad;
