-- a bytea grouping key that is an expression (empty and NULL values too),
-- evaluated by PostgreSQL at each group's representative row
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT substring(b FROM 2 FOR 2) AS b2, count(*), min(id) FROM diff_wide GROUP BY 1;
