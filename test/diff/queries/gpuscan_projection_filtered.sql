-- GPU Projection: the device computes an output only for the rows its
-- filter passes (CASE WHEN <filter> THEN <expr> END), so a division by
-- zero in a row the filter removes (PostgreSQL never evaluates it) is not
-- raised, nor does it send the chunk to the CPU path
-- expect: GpuScan, GPU Projection
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.chunk_rows = 5000
SELECT id, 1000 / (a2 - 7) AS q, a2 FROM diff_types WHERE a2 <> 7;
