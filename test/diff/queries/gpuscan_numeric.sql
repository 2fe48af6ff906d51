-- numeric arithmetic and comparisons on the device, exact (the SSB/TPC-H
-- revenue shape: price * (1 - discount))
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT id, price, disc FROM diff_numeric
 WHERE price * (1 - disc) > 500.25 AND disc BETWEEN 0.02 AND 0.07
   AND round(price, 1) <> trunc(price, 1);
