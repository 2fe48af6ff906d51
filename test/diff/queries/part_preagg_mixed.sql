-- mixed leaves: a heap table, an Arrow file, a GPU store table and an Arrow table without rows
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT m_day, count(*), sum(m_v), min(m_k), max(m_f), avg(m_f) FROM pt_mixed GROUP BY m_day;
