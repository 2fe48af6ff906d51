-- Device code built by NVRTC (the CUDA toolkit's or the pip wheel's) and
-- cached under the data directory: the first build compiles, later ones
-- read the cache.  Works without a GPU.  (On a GPU machine the GPU
-- service builds its GPU's architecture when it starts: sm_80 is not
-- ours, sm_90 may be built already.)
SELECT arch, from_cache, nvrtc_version IS NOT NULL AS has_nvrtc,
       cache_file ~ '/pg_strom/device_code/pg_strom-sm_80-[0-9a-f]{32}\.cubin$' AS in_data_dir
  FROM pgstrom.device_code_build('sm_80');
SELECT arch, from_cache, compile_ms FROM pgstrom.device_code_build('sm_80');
SELECT arch FROM pgstrom.device_code_build('sm_90');
SELECT arch, from_cache FROM pgstrom.device_code_build('sm_90');
-- Bad architecture names.
SELECT * FROM pgstrom.device_code_build('gpu9000');
SELECT * FROM pgstrom.device_code_build('sm_');
-- An NVRTC that cannot be found is a clear error, not a crash.
SET pg_strom.nvrtc_library = '/nonexistent/libnvrtc.so.13';
SELECT * FROM pgstrom.device_code_build('sm_86');
RESET pg_strom.nvrtc_library;
-- The cache still serves an architecture built before, without NVRTC.
SET pg_strom.nvrtc_library = '/nonexistent/libnvrtc.so.13';
SELECT arch, from_cache, nvrtc_version FROM pgstrom.device_code_build('sm_90');
RESET pg_strom.nvrtc_library;
