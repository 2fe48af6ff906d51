-- min / max of interval and timetz without GROUP BY; an empty FILTER
-- gives NULL
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT min(iv), max(iv), min(tt), max(tt), max(iv) FILTER (WHERE id < 0), count(*) FROM diff_wide WHERE id % 7 <> 1;
