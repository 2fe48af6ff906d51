-- Without a GPU (no CUDA driver): pg_strom loads, says so, and runs the
-- device code on the CPU engine.
SELECT state, driver_version, gpus, message ~ '^CUDA driver not found: ' AS says_why
  FROM pgstrom.device_discovery();
SELECT count(*) FROM pgstrom.gpu_device_info;
SELECT count(*) FROM pgstrom_device_info();
SELECT pgstrom.active_engine();
-- what the planner prices device nodes for: the CPU engine, in the backend
-- or in the GPU service
SELECT pgstrom.planned_engine();
SET pg_strom.cpu_engine_in_service = on;
SELECT pgstrom.planned_engine();
RESET pg_strom.cpu_engine_in_service;
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
-- pg_strom.gpu_context_cost is not charged on the CPU engine (no GPU to open).
CREATE TABLE nogpu_ctx AS SELECT x FROM generate_series(1, 10000) x;
ANALYZE nogpu_ctx;
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 1e9;
EXPLAIN (COSTS OFF) SELECT * FROM nogpu_ctx WHERE x % 3 = 0;
DROP TABLE nogpu_ctx;
