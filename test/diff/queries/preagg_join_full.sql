-- GpuPreAgg over FULL JOIN: unmatched inner rows are aggregated after the last chunk
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT b.bname, count(*), count(d.id), sum(d.a4) FROM diff_types d FULL JOIN dj_b b ON d.a2 = b.bk GROUP BY b.bname;
