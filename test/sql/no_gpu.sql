-- Without a GPU (no CUDA driver): pg_strom loads, says so, and runs the
-- device code on the CPU engine.
SELECT state, driver_version, gpus, message ~ '^CUDA driver not found: ' AS says_why
  FROM pgstrom.device_discovery();
SELECT count(*) FROM pgstrom.gpu_device_info;
SELECT count(*) FROM pgstrom_device_info();
SELECT pgstrom.active_engine();
SELECT DISTINCT engine FROM pgstrom.engine_selftest(10);
-- Forcing the GPU is a clear error with a hint.
\set VERBOSITY default
SET pg_strom.engine = 'gpu';
SELECT pgstrom.active_engine();
RESET pg_strom.engine;
SELECT * FROM pgstrom.engine_selftest(10, 'gpu');
SELECT * FROM pgstrom.device_code_build();
-- And the session still works.
SELECT pgstrom.active_engine();
