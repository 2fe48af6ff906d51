-- inner rows the planner underestimates (a function scan: 1000 planned,
-- 200000 loaded) above pg_strom.gpu_join_memory_limit: on a GPU the node
-- joins on the CPU engine instead; the answer is the same
-- expect: GpuJoin
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.gpu_join_memory_limit = 1024
SELECT d.id, g.v FROM diff_types d JOIN (SELECT v, v::text AS s FROM generate_series(1, 200000) v) g ON d.id = g.v WHERE g.s LIKE '%7';
