-- join-key hints: the inner relation's ymd range (one quarter) skips the
-- Arrow table's record batches outside it; GpuPreAgg over the GpuJoin
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT count(*), sum(s.val), min(s.ymd), max(s.ymd)
  FROM arrow_sorted s JOIN arrow_days d ON s.ymd = d.ymd
 WHERE d.quarter = 'Q3';
