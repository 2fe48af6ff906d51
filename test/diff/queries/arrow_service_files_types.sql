-- GpuPreAgg over a GpuJoin on an Arrow table whose fixed-width columns the
-- GPU service reads from the file itself (every native type, NULLs,
-- integer extremes; the CPU engine there without a GPU)
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: pg_strom.cpu_engine_in_service = on
SELECT d.name, count(*), count(t.i16), sum(t.i16), sum(t.i32), sum(t.i64), min(t.f32), max(t.f64),
       count(t.f64), min(t.i32), max(t.i64)
  FROM arrow_types t JOIN (SELECT * FROM arrow_dim WHERE k % 10 = 3) d ON t.id % 7 = d.k % 7 GROUP BY d.name;
