-- an interval grouping key stays on the CPU ('1 mon' and '30 days' are one
-- group, shown as the value PostgreSQL met first; the rows here spell
-- each span one way): the aggregation runs
-- in PostgreSQL over a GpuScan
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT iv, count(*) FROM diff_wide WHERE id % 7 > 1 GROUP BY iv;
