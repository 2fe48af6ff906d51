-- text equality, LIKE with multibyte text, varchar and char(n)
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT id, t, vc, bc FROM diff_types
 WHERE t LIKE 'データ%' OR t LIKE '%ñ%' OR t = '' OR (vc LIKE 'v1_' AND bc = 'B1');
