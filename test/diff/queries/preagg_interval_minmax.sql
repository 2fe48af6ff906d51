-- min / max of interval and timetz on the device (the winning row's value
-- read back), NULLs, infinities, zones either side of UTC; each span
-- spelled one way here (see preagg_interval_key); with and without groups
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT g, min(iv), max(iv), min(tt), max(tt), min(iv - interval '2 days') FILTER (WHERE id % 3 = 0), max(tk)
  FROM diff_wide WHERE id % 7 <> 1 GROUP BY g;
