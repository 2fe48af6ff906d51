-- LEFT JOIN: unmatched and NULL-key outer rows are NULL-extended
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT d.id, d.a2, b.bname FROM diff_types d LEFT JOIN dj_b b ON d.a2 % 50 = b.bk;
