-- a join of every partition with a dimension, grouped, with parallel plans
-- made cheap: the partitions' nodes under a Parallel Append (each run
-- whole by one process) where the costs choose it
-- expect: GpuPreAgg|GpuJoin
-- set: max_parallel_workers_per_gather = 2
-- set: parallel_setup_cost = 0
-- set: parallel_tuple_cost = 0
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT holiday, count(*), sum(m_v), min(m_k), max(m_f) FROM pt_mixed JOIN pt_days ON m_day = day GROUP BY holiday;
