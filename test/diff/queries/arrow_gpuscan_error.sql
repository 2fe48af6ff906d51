-- GpuScan over Arrow_Fdw: a division by zero in one row raises PostgreSQL's error
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- error: division by zero
SELECT id FROM arrow_types WHERE 100 / (i16 - 2) > 0;
