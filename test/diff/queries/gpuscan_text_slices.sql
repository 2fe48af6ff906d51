-- substring / left / right / trims / split_part on the device (TPC-H
-- Q22's `substring(c_phone FROM 1 FOR 2) IN (...)` shape): UTF-8
-- characters, empty strings, NULLs
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT id, t, vc FROM diff_types
 WHERE substring(t FROM 1 FOR 4) IN ('item', 'データベ', 'Ünïc', '')
   AND (right(t, 1) IN ('1', '3', '5', '7', '9', '0', '2', '4', '6', '8', 'a', 'b', 'c', 'd', 'e', 'f', 'g')
        OR ltrim(vc, 'v') = '7' OR left(t, -3) = 'データベース')
   AND split_part(t, '_', 2) <> '42' AND btrim(t, 'i0') <> 'tem_1';
