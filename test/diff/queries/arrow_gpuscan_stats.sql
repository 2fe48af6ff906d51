-- GpuScan over Arrow_Fdw with statistics hints: batches skipped by min/max,
-- the GPU filter on the rest, several slices per batch
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.enable_gpupreagg = off
-- set: pg_strom.chunk_rows = 300
SELECT count(*), sum(val), min(ymd), max(ymd) FROM arrow_sorted
 WHERE ymd BETWEEN 19940301 AND 19940430 AND val % 7 = 3;
