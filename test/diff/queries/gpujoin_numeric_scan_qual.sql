-- numeric in a GpuJoin's scan quals: values whose product passes 38 digits
-- send their chunk's quals to PostgreSQL (the join stays on the device);
-- numeric filters on the inner GpuScan likewise
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT count(*), sum(t.a4), min(t.a8) FROM diff_types t JOIN diff_numeric n ON n.id = t.id
 WHERE (t.a8::numeric * 10000000000000000000000000 > 5000000000000000000000000000000000000000000 OR t.a2 < 0)
   AND (n.q > 1000 OR n.q IS NULL);
