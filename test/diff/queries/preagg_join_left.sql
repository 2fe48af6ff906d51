-- GpuPreAgg over LEFT JOIN: unmatched rows group under NULL
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT b.bname, count(*), sum(d.a4) FROM diff_types d LEFT JOIN dj_b b ON d.a2 % 50 = b.bk GROUP BY b.bname;
