-- float2 grouping: -0 and 0 are one group (the key itself not shown)
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT count(*), sum(id) FROM arrow_types GROUP BY f16;
