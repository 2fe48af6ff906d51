-- numeric with NaN, infinities and values beyond 38 digits (chunks holding
-- those go to PostgreSQL), division, modulo and casts
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT id, q FROM diff_numeric
 WHERE (q / 3 > 1000 OR q % 7 = 0 OR q IS NULL OR q = 'NaN' OR q::float8 < -1e6)
   AND COALESCE(q, 0) <> 1.5 AND id % 5 <> 0;
