-- TPC-H Q4's shape: a count per group of the inner rows an EXISTS over the
-- scanned table matched (GpuPreAgg over a RIGHT SEMI depth)
-- expect: GpuPreAgg
-- since: 18
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: max_parallel_workers_per_gather = 0
-- set: enable_nestloop = off
SELECT a.aname, count(*), sum(a.a8) FROM dj_a a WHERE EXISTS (SELECT 1 FROM diff_types d WHERE d.a4 % 3000 = a.ak AND d.f8 > 0) GROUP BY a.aname;
