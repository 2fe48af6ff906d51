-- ILIKE, lower / upper and || on the device: ASCII values there, values
-- with other characters (Ünïcødé, データベース) by PostgreSQL, row for row
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT id, t, vc FROM diff_types
 WHERE t ILIKE 'ITEM\_1%' OR lower(vc) || '!' = 'v7!' OR upper(t) LIKE 'ÜNÏC%' OR t || vc ILIKE '%5v5';
