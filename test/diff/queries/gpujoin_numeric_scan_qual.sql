-- numeric in a GpuJoin's scan quals: a product that may pass 38 digits
-- has no device fallback in a join's scan, so the scanned table's qual
-- stays on the host (the join on the device, the aggregate PostgreSQL's,
-- priced below a GpuPreAgg over the join scanning the other side);
-- numeric filters on the inner GpuScan run on the device
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT count(*), sum(t.a4), min(t.a8) FROM diff_types t JOIN diff_numeric n ON n.id = t.id
 WHERE (t.a8::numeric * 10000000000000000000000000 > 5000000000000000000000000000000000000000000 OR t.a2 < 0)
   AND (n.q > 1000 OR n.q IS NULL);
