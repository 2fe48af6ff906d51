-- must FAIL: expects GpuScan, but md5() has no device function
-- expect: GpuScan
SELECT id FROM diff_types WHERE md5(t) LIKE 'a%';
