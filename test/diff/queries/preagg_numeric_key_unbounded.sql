-- a numeric grouping key whose digits cannot be bounded (an unconstrained
-- column holding values beyond 38 digits) keeps the aggregation on the CPU,
-- over a GpuScan
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT q, count(*) FROM diff_numeric WHERE id % 100 < 5 GROUP BY q;
