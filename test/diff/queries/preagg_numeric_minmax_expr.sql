-- min / max of bounded numeric expressions on the device (compared as
-- device numerics, the winning value read back with its display scale):
-- NaN above every number, NULL groups, negation, products, rounding
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT g, min(price * disc), max(price * disc), min(round(price, 1)), max(-price), min(disc + price),
       max(disc * 1000000000000000000000), min(price) FILTER (WHERE id % 3 = 0)
  FROM diff_numeric GROUP BY g;
