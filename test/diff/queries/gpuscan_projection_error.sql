-- GPU Projection: an overflow in an output expression of a row that passes
-- the filter raises PostgreSQL's error
-- (heap direct path off: its rows are projected by PostgreSQL, GPU
-- Projection runs for the blocks the buffer manager reads)
-- expect: GpuScan, GPU Projection
-- set: pg_strom.heap_direct = off
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- error: integer out of range
SELECT id, a4 * 1000 AS big FROM diff_types WHERE a2 > 500;
