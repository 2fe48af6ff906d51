-- GpuPreAgg over an Arrow table: a text expression key (evaluated by
-- PostgreSQL at the representative row, which the Arrow reader carries),
-- a numeric(12,3) key and min() of a numeric expression
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT left(s, 2) AS p, dec, min(dec * 2), max(-dec), count(*) FROM arrow_types GROUP BY 1, 2;
