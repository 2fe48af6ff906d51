-- PostgreSQL's own partition-wise aggregate beside ours (the grouping key holds the partition key)
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: enable_partitionwise_aggregate = on
SELECT s_day, count(*), sum(s_qty) FROM pt_sales WHERE s_store < 20 GROUP BY s_day;
