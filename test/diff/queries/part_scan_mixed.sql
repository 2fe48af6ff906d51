-- mixed leaves, scanned
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT m_k, m_day, m_v, m_f FROM pt_mixed WHERE m_f > 10.5 AND m_v % 3 = 0;
