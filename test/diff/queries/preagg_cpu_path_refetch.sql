-- GpuPreAgg: chunks whose device quals fail where PostgreSQL's do not
-- (a NULL ends PostgreSQL's AND, the device goes on to the division by
-- zero) take the CPU path, which reads the chunk's heap rows again by TID
-- (a GpuPreAgg does not copy the pages it reads)
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.chunk_rows = 5000
SELECT b, count(*), sum(a8), min(a2), max(id) FROM diff_types
 WHERE nullif(a4 % 10, 5) > -10 AND 100 / (a4 % 10 - 5) > 0 GROUP BY b;
