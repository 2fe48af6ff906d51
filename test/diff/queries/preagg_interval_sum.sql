-- sum / avg(interval) in GpuPreAgg: the fields summed exactly on the
-- device, +infinity counted, PostgreSQL's interval_avg_combine and final
-- functions over interval_avg_serialize's state
-- since: 17
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.chunk_rows = 7000
SELECT g, sum(iv), avg(iv), count(iv), count(*), sum(ts - '2024-01-01') FILTER (WHERE id % 3 = 0)
  FROM diff_wide WHERE iv > '-infinity' GROUP BY g;
