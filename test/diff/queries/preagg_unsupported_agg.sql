-- an aggregate the device does not reduce (min of text) keeps the aggregation on the CPU
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT a2 % 5, min(t) FROM diff_types WHERE a4 > 0 GROUP BY a2 % 5;
