-- a range only an empty partition and the default one hold: no row
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT s_day, s_qty FROM pt_sales WHERE s_day >= '2026-01-01' AND s_qty >= 0;
