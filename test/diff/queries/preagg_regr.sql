-- GpuPreAgg: corr, covariances and regressions over finite values
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: work_mem = '64MB'
SELECT id % 5 AS g, corr(f8, a4), covar_pop(f8, a4), covar_samp(f8, a4), regr_count(f8, a4), regr_slope(f8, a4), regr_intercept(f8, a4), regr_r2(f8, a4), regr_sxx(f8, a4), regr_syy(f8, a4), regr_sxy(f8, a4), regr_avgx(f8, a4), regr_avgy(f8, a4) FROM diff_types WHERE f8 > -1e300 AND f8 < 1e300 GROUP BY id % 5;
