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
