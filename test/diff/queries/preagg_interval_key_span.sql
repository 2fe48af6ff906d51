-- an interval grouping key merges spellings of one span ('2 mons' and
-- '60 days' are one group, as in PostgreSQL); the key itself is not shown,
-- since PostgreSQL shows whichever spelling it met first
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT count(*), sum(id), min(id), max(ts) FROM diff_wide GROUP BY iv;
