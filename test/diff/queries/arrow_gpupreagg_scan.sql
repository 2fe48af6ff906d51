-- GpuPreAgg straight over an Arrow_Fdw table (no join), text keys read at
-- the group's row
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT dict, s, count(*), sum(i64), avg(f64), max(d32) FROM arrow_types GROUP BY dict, s;
