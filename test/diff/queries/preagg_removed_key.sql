-- GpuPreAgg over a join: a GROUP BY column PostgreSQL drops as redundant
-- (equal to a constant, as SSB Q2.3's p_brand1) stays in the target
-- outside the grouping keys; the device groups by it too (the same groups)
-- expect: GpuPreAgg
-- set: pg_strom.cpu_engine_in_service = on
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT a.aname, f.a2 % 10 AS k, count(*), sum(f.a4), min(f.d) FROM diff_types f JOIN dj_a a ON f.id % 3000 = a.ak WHERE a.aname = 'a3' GROUP BY a.aname, k;
