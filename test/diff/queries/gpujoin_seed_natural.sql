-- PG-Strom's write-ups' query: NATURAL JOIN then GROUP BY cat (avg is a float aggregate)
-- expect: GpuJoin
-- set: pg_strom.enable_gpupreagg = off
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT cat, count(*), avg(ax) FROM t0 NATURAL JOIN t1 GROUP BY cat;
