-- mixed leaves (heap, Arrow, GPU store, an empty Arrow file) joined with a dimension, grouped
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT holiday, count(*), sum(m_v), min(m_k), max(m_f) FROM pt_mixed JOIN pt_days ON m_day = day GROUP BY holiday;
