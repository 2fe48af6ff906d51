-- GpuPreAgg: float sums, averages and the variance family with NaN, infinities and -0
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: work_mem = '64MB'
SELECT b, sum(f8), avg(f8), avg(f4), stddev(f8), stddev_pop(f8), var_pop(f8), var_samp(f4), variance(f8), stddev_samp(f4) FROM diff_types GROUP BY b;
