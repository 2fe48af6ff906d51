-- GpuPreAgg: text and bpchar keys (NULL, empty, multibyte; bpchar ignores trailing blanks)
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT t, bc, count(*), sum(a4), max(id) FROM diff_types GROUP BY t, bc;
