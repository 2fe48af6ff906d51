-- GpuPreAgg with a bytea grouping key (NULL and empty groups) and an
-- interval filter
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT b, count(*), sum(id), min(ts) FROM diff_wide WHERE iv > interval '-100 hours' GROUP BY b;
