-- EXISTS and IN (semi joins, which PG-Strom leaves on the CPU)
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: enable_hashagg = off
SELECT d.id, d.a2 FROM diff_types d WHERE EXISTS (SELECT 1 FROM dj_b b WHERE b.bk = d.a2 % 50 AND b.lo < d.a4);
