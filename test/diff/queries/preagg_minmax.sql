-- GpuPreAgg: min and max of every fixed-width type, NULL groups (b is NULL in 1 of 11)
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT b, min(a2), max(a2), min(a4), max(a4), min(a8), max(a8), min(f4), max(f4), min(f8), max(f8), min(d), max(d), min(tm), max(tm), min(ts), max(ts), min(tz), max(tz) FROM diff_types GROUP BY b;
