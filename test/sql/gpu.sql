-- On a machine with a GPU: discovery, the view, NVRTC build for the
-- device's own architecture, and the GPU engine against the reference and
-- against the CPU engine.
SELECT state, driver_version IS NOT NULL AS has_driver, gpus > 0 AS has_gpus
  FROM pgstrom.device_discovery();
SELECT count(DISTINCT id) > 0 AS devices, count(*) > 40 AS properties
  FROM pgstrom.gpu_device_info;
SELECT value ~ '^NVIDIA ' AS nvidia FROM pgstrom.gpu_device_info WHERE id = 0 AND property = 'Device name';
SELECT value ~ '^sm_[0-9]+$' AS arch_ok FROM pgstrom_device_info() WHERE id = 0 AND property = 'GPU architecture';
SELECT pgstrom.active_engine();
SELECT count(*) > 0 AS built FROM pgstrom.device_code_build();
SELECT bool_and(from_cache) AS cached FROM pgstrom.device_code_build();
-- with the device code built, plans are priced for the GPU (a cache hit
-- also records which sources the code was built from, which is what the
-- planner asks)
SELECT pgstrom.planned_engine();
-- GPU results equal the reference and the CPU engine's, case by case.
SELECT engine, count(*) AS cases, bool_and(matches_reference) AS all_match
  FROM pgstrom.engine_selftest(3000000, 'gpu') GROUP BY engine;
SELECT count(*) AS disagreements
  FROM pgstrom.engine_selftest(100003, 'gpu') g
  JOIN pgstrom.engine_selftest(100003, 'cpu') c USING (data_type, constant, op, with_nulls)
 WHERE g.nmatched <> c.nmatched;
SELECT count(*), bool_and(matches_reference) FROM pgstrom.engine_selftest(0, 'gpu');
SET pg_strom.engine = 'cpu';
SELECT pgstrom.active_engine();
SET pg_strom.engine = 'gpu';
SELECT pgstrom.active_engine();
RESET pg_strom.engine;
-- Device programs: the GPU engine gives the CPU engine's results row by row.
CREATE TABLE gpu_dv AS
  SELECT x, (x * 7919 % 100000 - 50000) AS i4, (x * 1.25)::float8 AS f8,
         CASE WHEN x % 7 = 0 THEN NULL ELSE x % 2 = 0 END AS b
    FROM generate_series(1, 200000) x;
SELECT count(*) AS rows, count(*) FILTER (WHERE g.value IS DISTINCT FROM c.value) AS differing
  FROM pgstrom.device_eval('gpu_dv', 'i4 <> 0 AND f8 / i4 > 0.5 OR b IS NOT TRUE', 'gpu') g
  JOIN pgstrom.device_eval('gpu_dv', 'i4 <> 0 AND f8 / i4 > 0.5 OR b IS NOT TRUE', 'cpu') c USING (ctid);
SELECT * FROM pgstrom.device_eval('gpu_dv', 'i4 * 100000', 'gpu');
-- pg_strom.gpu_context_cost is charged only without the GPU service: with
-- it (the default) no process opens the GPU itself, so parallel and serial
-- GpuScans cost the same whatever the setting.  (The plans name the GPU
-- as GPU0 (...): the test runs on several GPU models.)
\pset format unaligned
CREATE TABLE gpu_ctx AS SELECT x FROM generate_series(1, 100000) x;
ANALYZE gpu_ctx;
SET pg_strom.gpu_setup_cost = 0;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET pg_strom.gpu_context_cost = 1e9;
SELECT * FROM explain_masked('SELECT * FROM gpu_ctx WHERE x % 3 = 0', 'COSTS OFF', '{gpu-number}');
SET pg_strom.gpu_context_cost = 0;
SELECT * FROM explain_masked('SELECT * FROM gpu_ctx WHERE x % 3 = 0', 'COSTS OFF', '{gpu-number}');
-- A new backend: the same (the service opened the GPU at server start).
\c
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 1e9;
SELECT * FROM explain_masked('SELECT * FROM gpu_ctx WHERE x % 3 = 0', 'COSTS OFF', '{gpu-number}');
SET pg_strom.gpu_context_cost = 0;
SELECT * FROM explain_masked('SELECT * FROM gpu_ctx WHERE x % 3 = 0', 'COSTS OFF', '{gpu-number}');
\pset format aligned
DROP TABLE gpu_ctx;
-- GPU preference: discovery's GPU is found in the PCIe tree (sysfs), and
-- with one GPU it takes every scan without asking the service to place
-- it, whatever pg_strom.manual_optimal_gpus prefers.
SELECT gpu, gpu_pcie LIKE 'pci%' AS in_pcie_tree, preferred
  FROM pgstrom.gpu_storage_distance(current_setting('data_directory'));
SET pg_strom.manual_optimal_gpus = '/=gpu7';
CREATE TABLE gpu_pref AS SELECT x FROM generate_series(1, 1000) x;
SELECT count(*) FROM gpu_pref WHERE x % 3 = 0;
SELECT scans_placed FROM pgstrom.gpu_service_engines WHERE engine = 'GPU0';
RESET pg_strom.manual_optimal_gpus;
DROP TABLE gpu_pref;
